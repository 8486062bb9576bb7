/* valnorm.c -- value-weighted attention: the derived trace of α_ij ‖f_h(x_j)‖ (see valnorm.h). */
#include "analysis/valnorm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct trace *valnorm_derive(const struct trace *t, bool norm, bool hide_sink, bool raw, struct err *e)
{
	const char *what = norm ? "value-weighted attention" : "hiding the sink";
	if (t->source) {
		err_set(e, "%s is computed on the pieces, before merging words", what);
		return NULL;
	}
	if (!t->attn) {
		err_set(e, "%s needs every head's matrix: %d tokens keep none (a long text; raise ATTNSCOPE_TRACE_BUDGET)",
			what, t->n);
		return NULL;
	}
	if (norm && !t->vnorm) {
		err_set(e, "%s: this run kept no value norms", what);
		return NULL;
	}
	size_t n = (size_t)t->n, lh = (size_t)t->n_layers * t->n_heads;
	struct trace *w = malloc(sizeof *w);
	size_t cells = lh * n * n;
	float *a = malloc((cells > 0 ? cells : 1) * sizeof *a); /* [n_layers][n_heads][n][n] */
	if (!w || !a) {
		free(w);
		free(a);
		err_set(e, "out of memory for %s", what);
		return NULL;
	}
	*w = *t;
	w->attn = a;
	w->cache = NULL;
	w->scores = NULL; /* the recorded summaries are α's: the views compute the new ones */
	w->thumb = NULL;
	/* a learned sink moves no vector, and a hidden one is gone: rows carry no missing share */
	if (norm || hide_sink)
		w->sinks = NULL;
	w->weights_of = t;
	w->value_weighted = norm;
	w->sink_hidden = hide_sink;
	size_t first = hide_sink && !t->sinks ? 1 : 0; /* the keys kept: from the second on, without learned sinks */
	for (size_t b = 0; b < lh; b++) {
		const float *al = t->attn + b * n * n, *f = norm ? t->vnorm + b * n : NULL;
		float *o = a + b * n * n;
		for (size_t i = 0; i < n; i++) {
			double sum = 0;
			for (size_t j = 0; j < n; j++) {
				o[i * n + j] = j < first ? 0.0f : norm ? al[i * n + j] * f[j] : al[i * n + j];
				sum += o[i * n + j];
			}
			if (raw)
				continue;
			for (size_t j = 0; j < n; j++) /* a row with nothing to move stays 0 */
				o[i * n + j] = sum > 0 ? (float)(o[i * n + j] / sum) : 0.0f;
		}
	}
	return w;
}

struct trace *valnorm_build(const struct trace *t, bool raw, struct err *e)
{
	return valnorm_derive(t, true, false, raw, e);
}

double valnorm_raw(const struct trace *w, int layer, int head, int i, int j)
{
	const struct trace *t = w->weights_of;
	if (!t || !w->value_weighted || i < 0 || j < 0 || i >= t->n || j >= t->n)
		return NAN;
	return (double)trace_attn(t, layer, head)[(size_t)i * t->n + j] * trace_vnorm(t, layer, head)[j];
}

double valnorm_raw_agg(const struct trace *w, int layer, int head, enum heat_agg agg, int i, int j)
{
	if (agg == HEAT_HEAD)
		return valnorm_raw(w, layer, head, i, j);
	int l0 = agg == HEAT_ALL_MEAN ? 0 : layer, l1 = agg == HEAT_ALL_MEAN ? w->n_layers - 1 : layer;
	double sum = 0;
	for (int l = l0; l <= l1; l++)
		for (int h = 0; h < w->n_heads; h++)
			sum += valnorm_raw(w, l, h, i, j);
	return sum / ((double)(l1 - l0 + 1) * w->n_heads);
}
