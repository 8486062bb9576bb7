/* attnscore.h -- a head's attention scores, computed in one place. The forward pass (forward.c), the
 * recompute of a compact trace's head (attnscore_trace_fill) and the neuron view all run this
 * pipeline, so a term of the scores is written once and no caller can miss it.
 *
 * For query rows I0 .. I1 - 1 of one head, in float32 and in this order (Hugging Face's eager
 * attention):
 *   1. scale      s[i][j] = SCALE · q_i·k_j (one gemm)
 *   2. additive   + DeBERTa's relative terms (relpos.c), when REL is set; + BIAS[i][j], T5's relative
 *                 position bias (the trace's pos_bias); + ALIBI_SCALE · ALIBI · j for key j
 *                 (BLOOM's linear bias: baddbmm(alibi, q, kᵀ, alpha = SCALE) adds it to the scaled product,
 *                 ALIBI_SCALE 1; Falcon's eager path adds it before the 1/√d and again as A/√d in its mask:
 *                 ALIBI_SCALE 2/√d)
 *   3. soft-cap   s → SOFTCAP · tanh(s / SOFTCAP), when SOFTCAP > 0 (Gemma 2)
 *   4. masks      only keys trace_key_range(T, LAYER, i) gives stay (causal, sliding window,
 *                 centred window); the others become exactly 0. Cross-attention (N_KEYS set): none
 *   5. softmax    over the keys left, and the head's learned sink logit when it has one (gpt-oss):
 *                 its column is dropped after the softmax, so the row sums to less than 1 (never
 *                 renormalised; trace_sink_share gives the missing share)
 * Steps 1-3 are the logits (attnscore_logits: what the neuron view shows, for masked keys too),
 * steps 4-5 attnscore_softmax; attnscore_probs runs both. The forward pass calls the two halves
 * apart to time them as its FWD_SCORES and FWD_SOFTMAX stages.
 *
 * A new term is one field of struct attnscore plus a few lines in one place of attnscore.c: an
 * additive one (ALiBi's per-head slopes, T5's bucketed bias) at step 2 of attnscore_logits; a logit
 * that takes part in the softmax and is then dropped (a learned sink) in attnscore_softmax. A mask
 * that is a range of keys per query (a chunk) belongs beside the windows in trace_key_range, which
 * the views read too. Where the field's value comes from: attnscore_of_trace, when the trace holds
 * it (as it holds the soft-cap: one trace field, set in model.c), so that a compact trace's
 * recompute and the neuron view get the term too; else the forward pass alone (as DeBERTa's
 * relative embeddings), and then the model's traces must stay full (model.c) and the neuron view
 * says the term is not shown. */
#ifndef ATTNSCOPE_ATTNSCORE_H
#define ATTNSCOPE_ATTNSCORE_H

#include "engine/relpos.h"
#include "trace/trace.h"

/* The terms one head's scores take. */
struct attnscore {
	const struct trace *t;  /* the head's trace: its masks (trace_key_range of LAYER) */
	int layer;
	int n, d;               /* tokens (queries and keys), head dimension */
	const float *q;         /* [n][d] the head's queries as the scores use them, before the scale */
	const float *k;         /* [n][d] the keys it reads */
	float scale;            /* step 1: q·k times this (the trace's score_scale of LAYER) */
	/* step 2: DeBERTa's content-to-position and position-to-content terms; REL NULL = none */
	const struct relpos *rel;
	const float *rel_q;     /* [2 span][rel_stride] the head's query projection of the relative embeddings */
	const float *rel_k;     /* [2 span][rel_stride] its key projection */
	int rel_stride;
	float alibi;            /* step 2: the head's ALiBi slope (the trace's alibi[head]); 0 = none */
	float alibi_scale;      /* step 2: the bias is alibi_scale · alibi · j (the trace's alibi_scale) */
	float softcap;          /* step 3: 0 = none */
	const float *sink;      /* step 5: the head's sink logit (the trace's sinks[layer][head]); NULL = none */
	const float *bias;      /* step 2: [n][n] T5's relative position bias of the head (the trace's pos_bias),
	                         * added to the scaled product; NULL = none */
	int n_keys;             /* cross-attention (an encoder-decoder's decoder): K holds this many keys (the
	                         * encoder's tokens), every query sees all of them (no mask, no blocks) and S's
	                         * rows are n_keys long; 0 = self-attention (n keys) */
	bool visible_only;      /* the forward pass: keys after a block's last query (attnscore_block) get 0,
				 * not their logits (masked: the softmax makes them 0) */
};

/* The terms of head HEAD of LAYER that trace T holds: its q and k (as trace_q/trace_k give them, so a
 * trace whose q/k are the projections before rotary gives those), scale, soft-cap and masks. No
 * relative terms: a trace holds no relative embeddings. */
void attnscore_of_trace(struct attnscore *a, const struct trace *t, int layer, int head);

/* Steps 1-3 for query rows I0 .. I1 - 1 into S [I1 - I0][n], row = query, every key. */
void attnscore_logits(const struct attnscore *a, int i0, int i1, float *s);

/* The queries I .. *END - 1 whose products are computed together, and the keys 0 .. return - 1 they
 * are computed with (the logits and the context). All of them at once, but for a causal model:
 * blocks of queries from the text's first, each with the keys up to its last query (the later ones
 * masked). Where the GEMM library's sums depend on the numbers of rows and columns (gemm_row_block
 * > 1: OpenBLAS) the blocks are that many queries, so that a query's numbers do not depend on the
 * text's length nor on where a run reusing earlier tokens starts (model_run_reuse); where they do
 * not (a row block of 1), 64 queries: the same bits, without the products of keys the block's
 * queries do not see. */
int attnscore_block(const struct trace *t, int i, int *end);

/* Steps 4-5 in place on S [I1 - I0][n], the logits of query rows I0 .. I1 - 1. */
void attnscore_softmax(const struct attnscore *a, int i0, int i1, float *s);

/* Steps 1-5: the probabilities of query rows I0 .. I1 - 1 into P [I1 - I0][n]. */
void attnscore_probs(const struct attnscore *a, int i0, int i1, float *p);

/* attn_fill of a model's compact trace: LAYER/HEAD's probabilities into OUT [n][n] from the trace's
 * own terms, the same to the bit as the forward pass computed them (on one OpenBLAS thread when the
 * forward pass's were). Its model's scores hold no relative terms (model.c keeps those traces full). */
void attnscore_trace_fill(const struct trace *t, int layer, int head, float *out);

#endif
