/* lens.c -- the logit lens over a trace's residual streams (see lens.h), on the output head of
 * lmhead.c (lmhead_logprobs applies the final norm first where asked). */
#include "config.h"

#include "engine/lens.h"

#include <stdbool.h>
#include <stdlib.h>

#include "engine/lmhead.h"
#include "engine/model-internal.h"

#define LENS_ROWS 256 /* matrix rows read at a time */

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

/* G [cols of the context] = W_O . W for layer L's output projection (stored [H][ctx] or [ctx][H]). */
static void lens_project(const struct model *m, const struct weight *wo, const double *w, double *g, float *buf)
{
	bool out_in = m->fam.linear == LINEAR_OUT_IN; /* rows = hidden, cols = context */
	int64_t ctx = out_in ? wo->cols : wo->rows, H = out_in ? wo->rows : wo->cols;
	for (int64_t c = 0; c < ctx; c++)
		g[c] = 0;
	for (int64_t r0 = 0; r0 < wo->rows; r0 += LENS_ROWS) {
		int64_t nr = wo->rows - r0 < LENS_ROWS ? wo->rows - r0 : LENS_ROWS;
		weight_rows(wo, r0, nr, buf);
		for (int64_t r = 0; r < nr; r++) {
			const float *row = buf + (size_t)r * wo->cols;
			if (out_in) {
				for (int64_t c = 0; c < ctx; c++)
					g[c] += (double)row[c] * w[r0 + r];
			} else {
				double s = 0;
				for (int64_t k = 0; k < H; k++)
					s += (double)row[k] * w[k];
				g[r0 + r] = s;
			}
		}
	}
}

int lens_dla(const struct model *m, const struct trace *t, int i, double *out, struct err *e)
{
	const struct lm_head *hd = &m->lm;
	if (hd->kind != LMHEAD_CAUSAL)
		return err_set(e, "direct logit attribution needs a causal LM's output head: %s",
			       hd->kind == LMHEAD_NONE ? hd->why : "this one is a masked LM's");
	if (t->source || t->hidden != m->info.hidden || t->n_layers != m->info.n_layers)
		return err_set(e, "direct logit attribution needs the model's own trace of tokens");
	if (i < 0 || i >= t->n - 1)
		return err_set(e, "direct logit attribution at token %d: it needs a next token (tokens 0..%d)", i, t->n - 2);
	if (!t->final_rstd || !(t->final_rstd[i] > 0))
		return err_set(e, "direct logit attribution: the trace has no final-norm scale");
	for (int l = 0; l < t->n_layers; l++) {
		if (m->layers[l].post_attn.w)
			return err_set(e, "direct logit attribution is not linear here: the attention output is normalised "
					  "before the residual");
		if (!weight_present(&m->layers[l].out_w))
			return err_set(e, "direct logit attribution: layer %d has no output projection to read", l);
	}
	int H = m->info.hidden, nh = t->n_heads, D = trace_v_dim(t), n = t->n;
	int64_t V = hd->unembed.rows;
	int32_t target = t->ids[i + 1];
	if (target < 0 || target >= V)
		return err_set(e, "direct logit attribution: token %d's id %d is outside the head's vocabulary", i + 1, target);
	int64_t wide = H > nh * D ? H : nh * D, maxc = hd->unembed.cols > wide ? hd->unembed.cols : wide;
	double *w = calloc((size_t)H, sizeof *w), *g = calloc((size_t)wide, sizeof *g);
	float *buf = malloc((size_t)LENS_ROWS * maxc * sizeof *buf);
	if (!w || !g || !buf) {
		free(w), free(g), free(buf);
		return err_set(e, "out of memory");
	}
	/* the direction U[t] - mean_v U[v], through the frozen final norm */
	for (int64_t r0 = 0; r0 < V; r0 += LENS_ROWS) {
		int64_t nr = V - r0 < LENS_ROWS ? V - r0 : LENS_ROWS;
		weight_rows(&hd->unembed, r0, nr, buf);
		for (int64_t r = 0; r < nr; r++)
			for (int k = 0; k < H; k++)
				w[k] -= buf[(size_t)r * H + k];
	}
	weight_rows(&hd->unembed, target, 1, buf);
	const struct norm_weights *fn = &m->final_ln;
	double scale = hd->scale / hd->divisor * (fn->w ? t->final_rstd[i] : 1.0), mean = 0;
	if (m->arch.residual_scale > 0)
		scale *= m->arch.residual_scale;
	for (int k = 0; k < H; k++) {
		double gamma = !fn->w ? 1.0 : m->fam.norm == NORM_RMS ? m->fam.norm_offset + fn->w[k] : fn->w[k];
		w[k] = (w[k] / (double)V + buf[k]) * gamma * scale;
		mean += w[k] / H;
	}
	if (fn->w && m->fam.norm != NORM_RMS) /* a LayerNorm subtracts the mean: (o - mean o) . w = o . (w - mean w) */
		for (int k = 0; k < H; k++)
			w[k] -= mean;
	for (int l = 0; l < t->n_layers; l++) {
		lens_project(m, &m->layers[l].out_w, w, g, buf);
		for (int h = 0; h < nh; h++) {
			const float *a = trace_attn(t, l, h) + (size_t)i * n, *v = trace_v(t, l, h);
			double s = 0;
			for (int c = 0; c < D; c++) {
				double ctx = 0;
				for (int j = 0; j <= i || (!t->causal && j < n); j++)
					ctx += (double)a[j] * v[(size_t)j * D + c];
				s += ctx * g[(size_t)h * D + c];
			}
			out[(size_t)l * nh + h] = s;
		}
	}
	free(w), free(g), free(buf);
	return 0;
}
