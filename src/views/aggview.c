/* aggview.c -- drawing a corpus aggregate's shape and histograms (see aggview.h). */
#include "config.h"

#include "views/aggview.h"

#include <limits.h>
#include <string.h>

#include "draw/chart.h"

struct trace aggview_shape(const struct aggregate *a)
{
	struct trace t;
	memset(&t, 0, sizeof t);
	snprintf(t.model_name, sizeof t.model_name, "%s", a->model.name);
	snprintf(t.family, sizeof t.family, "%s", a->model.family);
	t.causal = a->model.causal;
	t.n_layers = a->model.n_layers;
	t.n_heads = a->model.n_heads;
	t.n_kv_heads = a->model.n_kv_heads;
	t.head_dim = a->model.head_dim;
	t.hidden = a->model.hidden;
	t.max_positions = a->model.max_positions;
	return t;
}

/* The first and last occupied bins of H, widened to cover those of O (when it holds values). */
static void aggview_span(const struct agghist *h, const struct agghist *o, int *first, int *last)
{
	*first = *last = -1;
	for (int k = 0; k < 2; k++) {
		const struct agghist *x = k ? o : h;
		if (!x)
			continue;
		for (int i = 0; i < AGGHIST_BINS; i++)
			if (x->bin[i]) {
				*last = i > *last ? i : *last;
				*first = *first < 0 || i < *first ? i : *first;
			}
	}
}

int aggview_hist(struct canvas *cv, struct rect r, const struct agghist *hist, const struct agghist *also, int maxbins,
		  struct style bars, double *lo, double *hi, uint64_t *maxcount)
{
	*lo = *hi = 0;
	*maxcount = 0;
	struct agghist hc = *hist, oc;
	const struct agghist *h = &hc, *o = NULL;
	if (also && also->n) { /* both on the wider range: then their bins line up */
		oc = *also;
		agghist_raise(&hc, oc.exp);
		agghist_raise(&oc, hc.exp);
		o = &oc;
	}
	int first, last;
	aggview_span(h, o, &first, &last);
	if (!h->n || first < 0 || maxbins < 1)
		return 0;
	int g = 1;
	while ((last / g - first / g + 1) > maxbins && g < AGGHIST_BINS)
		g *= 2;
	int b0 = first / g, cols = last / g - b0 + 1;
	uint64_t count[AGGHIST_BINS] = {0};
	for (int i = first; i <= last; i++)
		count[i / g - b0] += h->bin[i];
	for (int c = 0; c < cols; c++)
		*maxcount = count[c] > *maxcount ? count[c] : *maxcount;
	/* chart_histogram takes ints: scale the counts down together when they do not fit. */
	uint64_t div = *maxcount / INT_MAX + 1;
	int shown[AGGHIST_BINS];
	for (int c = 0; c < cols; c++)
		shown[c] = (int)(count[c] / div);
	*lo = agghist_edge(h, b0 * g);
	*hi = agghist_edge(h, (b0 + cols) * g);
	chart_histogram(cv, r, shown, cols, (int)(*maxcount / div), *lo, *hi, bars);
	return cols;
}
