/* lens.h -- the logit lens (nostalgebraist 2020): what a causal LM's output head reads from each
 * layer's residual stream.
 *
 * Cell (l, i), l = 0 .. n_layers (0 = the embedding output), is the top LENS_K of
 * log_softmax(head(final_norm(hidden_states[l][i]))), except l = n_layers, whose hidden state already
 * carries the final norm (the trace keeps it as transformers reports it: GPT-2's ln_f, Llama's and
 * Qwen3's norm) and goes through the head alone: that row is the model's own prediction. The trace
 * keeps every layer's residual stream (trace.h's hidden_states, in compact traces too), so nothing is
 * recorded for the lens; what costs is the vocabulary projection, done only for the cells asked for
 * (the explorer: those on screen), one [vocab] row at a time, each cell's top LENS_K kept per text. */
#ifndef ATTNSCOPE_LENS_H
#define ATTNSCOPE_LENS_H

#include <stdint.h>

#include "base/err.h"
#include "engine/model.h"
#include "trace/trace.h"

#define LENS_K 5 /* entries kept per cell (the shared cases' top-5) */

struct lens;
/* The lens of trace T made by M's model_run; NULL when out of memory. It needs a causal head:
 * lens_cell says why not. */
struct lens *lens_new(const struct model *m, const struct trace *t);
void lens_free(struct lens *l);
/* Cell (LAYER, I): its LENS_K ids and log-probabilities, best first (ties by the lower id), computed
 * once. -1 with why: no causal head, a trace of words, out of range, out of memory. */
int lens_cell(struct lens *l, int layer, int i, const int32_t **ids, const float **lp, struct err *e);

/* Direct logit attribution (as TransformerLens computes it, with a frozen final-norm scale) of every head
 * at position I (0 <= I < n - 1) to the token that actually follows, into OUT [n_layers][n_heads]:
 *   dla[l][h] = (o_lh(I) * rstd(I) * gamma) . (U[t] - mean_v U[v]) * the head's logit scale,
 * o_lh(I) the head's output (its context sum_j A[I][j] v_j times its v_dim rows of W_O, bias excluded;
 * Granite's residual multiplier included), centred over the hidden dimension first where the final norm
 * is a LayerNorm, rstd(I) the final norm's inverse denominator of the last residual stream at I (trace.h's
 * final_rstd), gamma its weight (Gemma: 1 + w), U the unembedding, t = ids[I + 1], the logit scale
 * Cohere's/Granite's; before Gemma's soft-capping. Linear in o, so the sum of this over every component
 * written to the residual (embeddings, heads, output biases, MLPs) plus beta . (U[t] - mean U) is the
 * logit of t minus the mean logit, exactly. -1 with why: no causal head, a model whose attention output
 * is normalised before the residual (Gemma 2/3, OLMo 2: not linear), no next token, no recorded scale. */
int lens_dla(const struct model *m, const struct trace *t, int i, double *out, struct err *e);

#endif
