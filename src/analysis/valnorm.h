/* valnorm.h -- value-weighted attention (Kobayashi et al. 2020, "Attention is not only a weight").
 *
 * A head's output at query i is Σ_j α_ij f_h(x_j) (+ the output bias), f_h(x_j) = v_j W_O,h: the
 * weight α_ij says how much of token j's transformed vector is taken, not how large that vector is.
 * ‖α_ij f_h(x_j)‖ = α_ij ‖f_h(x_j)‖ is the size of what head h moves from j to i; the forward pass
 * records ‖f_h(x_j)‖ (trace->vnorm). The weights are a derived trace that every view reads as it reads
 * α, applied in one place (the explorer's weight mode, --weights norm). */
#ifndef ATTNSCOPE_VALNORM_H
#define ATTNSCOPE_VALNORM_H

#include <stdbool.h>

#include "analysis/heatdata.h"
#include "base/err.h"
#include "trace/trace.h"

/* A trace whose attention is α_ij ‖f_h(x_j)‖: raw (RAW, what --dump writes) or each row divided by its
 * sum (the explorer: rows sum to 1 as α's do, so every view, score and rollout reads them as shares; a
 * sink (gpt-oss) moves no vector and gets none). It shares everything else with T, which must outlive
 * it (trace_free frees only its own). NULL with a one-line reason: a trace of words (the norms are the
 * pieces'), a compact trace (a long text keeps no n x n matrices), out of memory. */
struct trace *valnorm_build(const struct trace *t, bool raw, struct err *e);

/* The one weight transform of the views (the explorer's Y and Z keys): from T's α, the weights times
 * ‖f_h(x_j)‖ when NORM; with HIDE_SINK the sink dropped (a model with learned sinks: their share,
 * else the first token's column set to 0) and every row divided by its sum over the other keys
 * (the sink's own row, with nothing else to see, stays 0). Rows are shared out to 1 unless RAW (NORM
 * alone, for --dump). valnorm_build(T, RAW, E) is valnorm_derive(T, true, false, RAW, E). NULL with a
 * one-line reason, as valnorm_build. */
struct trace *valnorm_derive(const struct trace *t, bool norm, bool hide_sink, bool raw, struct err *e);

/* The raw weight ‖α_ij f_h(x_j)‖ of query I and key J of head HEAD of LAYER in a value-weighted trace
 * W (valnorm_build; either kind); NaN when W is not one. */
double valnorm_raw(const struct trace *w, int layer, int head, int i, int j);
/* The same for what a heatmap of AGG shows (one head, the mean of LAYER's heads, of every head). */
double valnorm_raw_agg(const struct trace *w, int layer, int head, enum heat_agg agg, int i, int j);

#endif
