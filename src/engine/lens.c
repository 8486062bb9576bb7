/* lens.c -- the logit lens over a trace's residual streams (see lens.h), on the output head of
 * lmhead.c (lmhead_logprobs applies the final norm first where asked). */
#include "config.h"

#include "engine/lens.h"

#include <stdbool.h>
#include <stdlib.h>

#include "engine/lmhead.h"

struct lens {
	const struct model *m;
	const struct trace *t;
	int vocab;
	bool *done;   /* [n_layers + 1][n] */
	int32_t *ids; /* [n_layers + 1][n][LENS_K] */
	float *lp;    /* [n_layers + 1][n][LENS_K] */
	float *row;   /* [vocab] one cell's log-probabilities, reused */
};

struct lens *lens_new(const struct model *m, const struct trace *t)
{
	struct lens *l = calloc(1, sizeof *l);
	if (!l)
		return NULL;
	size_t cells = (size_t)(t->n_layers + 1) * (t->n > 0 ? t->n : 1);
	l->m = m;
	l->t = t;
	l->vocab = lmhead_vocab(m);
	l->done = calloc(cells, sizeof *l->done);
	l->ids = calloc(cells * LENS_K, sizeof *l->ids);
	l->lp = calloc(cells * LENS_K, sizeof *l->lp);
	if (!l->done || !l->ids || !l->lp) {
		lens_free(l);
		return NULL;
	}
	return l;
}

void lens_free(struct lens *l)
{
	if (!l)
		return;
	free(l->done);
	free(l->ids);
	free(l->lp);
	free(l->row);
	free(l);
}

int lens_cell(struct lens *l, int layer, int i, const int32_t **ids, const float **lp, struct err *e)
{
	const struct trace *t = l->t;
	if (lmhead_kind(l->m) != LMHEAD_CAUSAL)
		return err_set(e, "%s", lmhead_kind(l->m) == LMHEAD_NONE ? lmhead_why(l->m)
				    : "the logit lens needs a causal LM's output head (this one is a masked LM's)");
	if (t->source || t->hidden != model_get_info(l->m)->hidden || !t->hidden_states)
		return err_set(e, "the logit lens needs the model's own trace of tokens");
	if (layer < 0 || layer > t->n_layers || i < 0 || i >= t->n)
		return err_set(e, "no lens cell at layer %d, token %d", layer, i);
	size_t c = (size_t)layer * t->n + i;
	if (!l->done[c]) {
		if (l->vocab < LENS_K)
			return err_set(e, "the vocabulary has fewer than %d entries", LENS_K);
		if (!l->row && !(l->row = malloc((size_t)l->vocab * sizeof *l->row)))
			return err_set(e, "out of memory");
		const float *x = trace_hidden(t, layer) + (size_t)i * t->hidden;
		/* the last hidden state carries the final norm already: applying it again is the lens's trap */
		if (lmhead_logprobs(l->m, x, layer < t->n_layers, l->row, NULL, e) < 0)
			return -1;
		lmhead_topk(l->row, l->vocab, LENS_K, l->ids + c * LENS_K, l->lp + c * LENS_K);
		l->done[c] = true;
	}
	*ids = l->ids + c * LENS_K;
	*lp = l->lp + c * LENS_K;
	return 0;
}
