/* aggfile.h -- an aggregate as a file: `--save`, `--load`, `--dump json` of a corpus run, `merge`.
 *
 * Format "attnscope-aggregate" version 2, JSON (doubles with 17 significant digits, so a loaded
 * aggregate is bit-identical to the saved one):
 *   {"format": "attnscope-aggregate", "version": 1,
 *    "model": {"name", "family", "causal", "layers", "heads", "kv_heads", "head_dim", "hidden",
 *              "max_positions"},
 *    "sources": [{"file", "shard": [K, N], "texts", "partial"}, …],   (one per corpus run merged in)
 *    "counts": {"lines", "texts", "tokens", "empty", "truncated", "failed", "first_special"},
 *    "partial": true when some source was interrupted,
 *    "scores": ["prev", …, "induction", "entropy_norm"],
 *    "heads": [{"layer", "head", "label",
 *               "prev": {"n", "mean", "std", "m2"}, …,
 *               "qk": {"q_mean", "q_std", "k_mean", "k_std",
 *                      "q_first": {"n", "mean", "m2"}, "q_rest", "k_first", "k_rest"}}, …],
 *                                                                (layer-major, every head)
 *    "layers": [{"layer", "dots_same": {"n", "mean", "std", "m2", "min", "max", "unbinned", "exp",
 *                                       "first_bin", "bins": [count, …]}, …}, …],
 *                                                      (every layer, every enum agg_dist by name)
 *    "sample": {"layer", "head", "dim", "cap",
 *               "texts": [{"line", "text", "text_b"}, …],          (increasing lines)
 *               "tokens": [{"line", "token", "piece", "q", "k"}, …]}} (key order)
 * n, mean and m2 are the accumulators (aggregate.h); std (sample, over texts; null when n is 0)
 * and label (of the means) are derived for readers and ignored when loading. A score no text
 * defined has n 0 and mean null. The qk figures q_mean … k_std are the notebook's (first token left
 * out, Bessel's std), derived and ignored when loading. A histogram's "bins" are its counts from
 * bin first_bin on (agghist.h: bin i covers [(i − 128)·w, (i − 127)·w), w = 2^(exp − 7)), up to the
 * last occupied one; "std" is the population one (sqrt(m2 / n)), derived. The sample's vectors "q"
 * and "k" are base64 of little-endian float32 (b64.h); a token's key is recomputed from its line
 * and position (aggsample.h), its text looked up by line. Version 1 files (before the query/key
 * statistics, distributions and sample) are refused with a message saying so. */
#ifndef ATTNSCOPE_AGGFILE_H
#define ATTNSCOPE_AGGFILE_H

#include <stdio.h>

#include "corpus/aggregate.h"
#include "base/err.h"

#define AGGFILE_FORMAT "attnscope-aggregate"
#define AGGFILE_VERSION 2

/* Write A to OUT; -1 on a write error. */
int aggfile_write(const struct aggregate *a, FILE *out, struct err *e);
/* Write A as CSV to OUT: a header, then one row per head and score:
 *   layer,head,score,n,mean,std        (mean and std empty when no text defined the score) */
int aggfile_write_csv(const struct aggregate *a, FILE *out, struct err *e);
/* Write A to PATH (through a temporary file renamed into place); -1 with "PATH: why". */
int aggfile_save(const struct aggregate *a, const char *path, struct err *e);
/* Parse TEXT[0..len) into a new aggregate; -1 with why (E does not name a file). */
int aggfile_parse(const char *text, size_t len, struct aggregate **out, struct err *e);
/* Read PATH (at most JSONCAP_MAX_FILE bytes); -1 with "PATH: why". */
int aggfile_load(const char *path, struct aggregate **out, struct err *e);

#endif
