/* lmhead.h -- the model's own output head: what it predicts from a hidden state.
 *
 * A causal LM's head is the unembedding (lm_head.weight, or the token embedding when the config ties
 * them) with the family's logit modifiers (Cohere's logit_scale, Granite's logits_scaling, Gemma 2/3's
 * final soft-capping); a masked LM's is BERT's/RoBERTa's transform (dense, activation, LayerNorm) then
 * the tied decoder and its bias. The family file names the tensors and settings (family.h's lm_head_*,
 * mlm_* roles); a model whose file or family has no head has kind LMHEAD_NONE and a one-line reason.
 *
 * Everything works one hidden row at a time: a [vocab] row of log-probabilities (logit minus the
 * logsumexp over the whole vocabulary, summed in float64) is the largest thing computed, so no
 * [tokens x vocab] matrix is ever held. struct lmpred caches, per text, the top-k and the surprisal
 * of the rows asked for (the explorer asks for the tokens it shows). */
#ifndef ATTNSCOPE_LMHEAD_H
#define ATTNSCOPE_LMHEAD_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "engine/model.h"
#include "trace/trace.h"

enum lmhead_kind {
	LMHEAD_NONE,   /* no head: lmhead_why says why */
	LMHEAD_CAUSAL, /* row t predicts token t + 1 */
	LMHEAD_MASKED  /* row t predicts token t itself (meant for [MASK] tokens) */
};

enum lmhead_kind lmhead_kind(const struct model *m);
/* One line: why there is no head, or what the head is ("tied to the token embedding, logits x 0.0625"). */
const char *lmhead_why(const struct model *m);
int lmhead_vocab(const struct model *m);

/* The log-probabilities LP [vocab] of hidden row X [hidden] through the head, and the logsumexp *LSE
 * they are relative to (both may be NULL but one). FINAL_NORM: X is a residual stream before the final
 * norm (the logit lens), which is applied first; false for the trace's last hidden state, which carries
 * it. -1 with why when the model has no head or memory runs out. */
int lmhead_logprobs(const struct model *m, const float *x, bool final_norm, float *lp, double *lse, struct err *e);

/* lmhead_logprobs for the N rows X [n][hidden] (last hidden states) in one matrix product over the
 * vocabulary: LP [n][vocab] and LSE [n] (either may be NULL). The logits are float32 sums here (within
 * ~1e-5 of lmhead_logprobs' float64 ones, as transformers' own are), [n][vocab] of them held at once:
 * for the many rows of a one-shot run (--ablation-effect), not for the explorer's worker, whose
 * forward pass it would share the GEMM library with. -1 with why (no head, out of memory). */
int lmhead_logprobs_rows(const struct model *m, const float *x, int n, float *lp, double *lse, struct err *e);

/* The K best entries of LP [vocab], best first, ties by the lower id (torch.topk's order in the cases). */
void lmhead_topk(const float *lp, int vocab, int k, int32_t *ids, float *best);

/* Per-text predictions of trace T (made by M's model_run), computed row by row on demand. */
struct lmpred;
struct lmpred *lmpred_new(const struct model *m, const struct trace *t, int k);
void lmpred_free(struct lmpred *p);
/* Row I's top-k (K of lmpred_new): ids and log-probabilities, best first; and its logsumexp. -1 with
 * why (no head, out of memory, a trace not of this model). Computed once per row. */
int lmpred_row(struct lmpred *p, int i, const int32_t **ids, const float **lp, double *lse, struct err *e);
/* The surprisal -log p (nats) of token I under the prediction at I - 1 (causal heads, 1 <= I < n),
 * computing row I - 1 when need be; NAN otherwise (a masked LM, token 0, no head). */
float lmpred_surprisal(struct lmpred *p, int i);
int lmpred_k(const struct lmpred *p);
/* Row I's target -- the token that actually follows (causal; -1 after the last token) or the token at I
 * (masked LM) -- into *ID, its log-probability *LP (NAN for none) and its rank *RANK in the whole row
 * (1 = the best, ties by the lower id; 0 for none). -1 with why as lmpred_row. */
int lmpred_target(struct lmpred *p, int i, int32_t *id, float *lp, int *rank, struct err *e);

#endif
