/* ablate.h -- head ablation: the model run again with chosen heads' outputs removed or averaged out.
 *
 * Zero-ablation sets a head's context (its d columns of the output projection's input) to 0 at every
 * position: what transformers' head_mask does on GPT-2/BERT for everything downstream. Mean-ablation
 * replaces those columns at every position by their mean over the text's positions in the clean run.
 * The ablated head's own attention pattern is still computed and kept in the trace; layers below the
 * first ablated head are the clean run's, bit for bit: copied from the clean trace (a full one), not
 * computed again, so a rerun costs the blocks from the first ablated layer up (a mean-ablation's
 * recording pass, needed only for a compact trace that keeps no probabilities, those up to the last
 * ablated layer; a full trace's probabilities and values give the means). An ablated run never reads nor keeps rows of
 * another run (model_run_reuse's prefix cache): its rows depend on the ablation and, under mean-ablation,
 * on every token of the text. The effect of an ablation is the mean over positions of KL(p_clean ||
 * p_ablated) in nats (every position's prediction, causal or masked LM); for a model without an output
 * head the Frobenius norm of the change of the last hidden state. */
#ifndef ATTNSCOPE_ABLATE_H
#define ATTNSCOPE_ABLATE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "engine/model.h"
#include "trace/trace.h"

enum ablate_mode { ABLATE_ZERO, ABLATE_MEAN };

struct ablation {
	enum ablate_mode mode;
	int n_layers, n_heads;
	unsigned char *mask; /* [n_layers][n_heads]: non-zero = ablated */
};

/* An empty ablation (zero mode, no head) for model shape IN; -1 when out of memory. */
int ablation_init(struct ablation *a, const struct model_info *in, struct err *e);
void ablation_free(struct ablation *a);
/* Mark the heads of LIST "L.H[,L.H...]" (layers and heads from 0); -1 with why on a bad list. */
int ablation_parse(struct ablation *a, const char *list, struct err *e);
/* "zero" / "mean" into *MODE; -1 for anything else. */
int ablation_parse_mode(const char *s, enum ablate_mode *mode);
const char *ablation_mode_name(enum ablate_mode mode);
int ablation_count(const struct ablation *a);
/* "L0H3, L1H2 (zero)" into BUF (shortened with "..." when it does not fit). */
void ablation_describe(const struct ablation *a, char *buf, size_t size);

/* Run M on the tokens of CLEAN (M's clean trace of the text) with the heads of A ablated, into a new
 * trace *OUT. Mean-ablation takes the heads' mean contexts from CLEAN's probabilities and values (a
 * compact trace: it runs the clean pass again to record them). -1 with
 * why ("cancelled" when CANCEL becomes non-zero). */
int model_run_ablated(const struct model *m, const struct trace *clean, const struct ablation *a,
		      const volatile int *cancel, struct trace **out, struct err *e);

/* The effect of an ablation: traces CLEAN and ABL of the same tokens. *EFFECT = mean over positions of
 * KL(p_clean || p_ablated) (nats, float64 over the whole vocabulary) with an output head, else the
 * Frobenius norm of the change of the last hidden state. CLEAN_LP, when not NULL, is [n][vocab] of the
 * clean rows' log-probabilities (ablation_clean_rows), so many ablations share them. */
int ablation_effect(const struct model *m, const struct trace *clean, const float *clean_lp, const struct trace *abl,
		    double *effect, struct err *e);
/* The [n][vocab] log-probabilities of CLEAN's rows (free them); NULL with why (no head: *E says so). */
float *ablation_clean_rows(const struct model *m, const struct trace *clean, struct err *e);

/* EFFECT [n_layers][n_heads]: each head ablated alone (MODE), its ablation_effect. PROGRESS, when not
 * NULL, is told after each head (DONE of TOTAL). Heads not reached when CANCEL stops it stay NAN and
 * -1 "cancelled" is returned. */
int ablation_effects(const struct model *m, const struct trace *clean, enum ablate_mode mode,
		     const volatile int *cancel, void (*progress)(void *ctx, int done, int total), void *ctx,
		     double *effect, struct err *e);

/* What ablation_effects_metric scores each head by: ablation_effect (KL, what --ablation-effect dumps), or
 * the change of the mean surprisal (nats, ablated - clean): -log p of each next token (causal head) or of
 * each token at its own position (masked LM), over the text. */
enum ablate_metric { ABLATE_KL, ABLATE_SURPRISAL };
/* ablation_effects by METRIC (ABLATE_SURPRISAL needs an output head: -1 with why otherwise). */
int ablation_effects_metric(const struct model *m, const struct trace *clean, enum ablate_mode mode,
			    enum ablate_metric metric, const volatile int *cancel,
			    void (*progress)(void *ctx, int done, int total), void *ctx, double *effect, struct err *e);

#endif
