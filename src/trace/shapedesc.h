/* shapedesc.h -- a trace's attention shape in words, for titles, status lines and --print headers:
 * query heads and the key/value heads they share (grouped-query attention), a layer's sliding
 * window, and whether queries and keys are shown before or after rotary. */
#ifndef ATTNSCOPE_SHAPEDESC_H
#define ATTNSCOPE_SHAPEDESC_H

#include <stdbool.h>
#include <stddef.h>

#include "trace/trace.h"

/* Does T share key/value heads between query heads (GQA or MQA)? */
bool shapedesc_gqa(const struct trace *t);
/* "12 heads", or "6 q heads / 3 kv heads" under GQA. Returns BUF. */
const char *shapedesc_heads(const struct trace *t, char *buf, size_t n);
/* Query heads sharing HEAD's key/value head: FIRST..LAST (HEAD itself without GQA). */
void shapedesc_group(const struct trace *t, int head, int *first, int *last);
/* "kv head 1 (shared by heads 2-3)" under GQA, "" otherwise. Returns BUF. */
const char *shapedesc_kv(const struct trace *t, int head, bool utf8, char *buf, size_t n);
/* A windowed layer's mark: "w4" (a causal query sees 4 keys: itself and 3 before), "w±64"
 * (bidirectional local attention), "" for a layer without a window. Returns BUF. */
const char *shapedesc_window(const struct trace *t, int layer, bool utf8, char *buf, size_t n);
/* A chunked layer's mark (Llama 4): "c8" (a query sees the keys of its own chunk of 8 tokens, up to
 * itself), "" for a layer without chunks. Returns BUF. */
const char *shapedesc_chunk(const struct trace *t, int layer, char *buf, size_t n);
/* Does any layer of T have a window? */
bool shapedesc_windowed(const struct trace *t);
/* A head's ALiBi term (BLOOM: its scores get + slope · key position): "ALiBi slope 0.25", or "" when
 * the model has no ALiBi. HEAD < 0: just "ALiBi" (a layer's or the model's mean). Returns BUF. */
const char *shapedesc_alibi(const struct trace *t, int head, char *buf, size_t n);
/* Which queries and keys a Q/K view reads: "after rotary" (what the scores use), "before rotary"
 * (the projections), or "" when the model has no rotary; " (interleaved)" follows when the rotary
 * pairs neighbouring dims (GPT-J, Cohere). Returns a static string. */
const char *shapedesc_rotary(const struct trace *t, bool before);
/* The experts TOKEN went to in LAYER's mixture of experts, best first with their weights as applied:
 * "experts 3 (0.62), 1 (0.38)"; "" when the layer is dense, the model routes nothing, or T is
 * derived from another (words) and keeps no routing. Returns BUF. */
const char *shapedesc_experts(const struct trace *t, int layer, int token, char *buf, size_t n);
/* Is LAYER of T one without positions (a NoPE layer: the model has rotary, that layer does not)? */
bool shapedesc_nope(const struct trace *t, int layer);
/* shapedesc_rotary for the q/k of LAYER: on a NoPE layer "no rotary (NoPE layer)", since the q/k the
 * scores use are the projections there. Returns a static string. */
const char *shapedesc_rotary_at(const struct trace *t, int layer, bool before);
/* T as the Q/K views should read it: T itself, or (BEFORE and the model has rotary) a shallow copy
 * in TMP whose q/k are the projections before rotary and q/k norm. Attention weights are the
 * model's either way. */
const struct trace *shapedesc_qk_trace(const struct trace *t, bool before, struct trace *tmp);

#endif
