/* ablate.c -- head ablation (ablate.h): the spec, the ablated run through forward.c's one hook
 * (fwd_ablate_head), and the effect of an ablation on the model's predictions. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ablate.h"
#include "engine/lmhead.h"
#include "engine/model-internal.h"

int ablation_init(struct ablation *a, const struct model_info *in, struct err *e)
{
	a->mode = ABLATE_ZERO;
	a->n_layers = in->n_layers;
	a->n_heads = in->n_heads;
	a->mask = calloc((size_t)(in->n_layers > 0 ? in->n_layers : 1) * (in->n_heads > 0 ? in->n_heads : 1), 1);
	return a->mask ? 0 : err_set(e, "out of memory");
}

void ablation_free(struct ablation *a)
{
	free(a->mask);
	a->mask = NULL;
}

/* A number from 0 at *S up to the separator; -1 when there is none. */
static long ablate_number(const char **s)
{
	if (**s < '0' || **s > '9')
		return -1;
	char *end;
	errno = 0;
	long v = strtol(*s, &end, 10);
	if (errno || v > 1000000)
		return -1;
	*s = end;
	return v;
}

int ablation_parse(struct ablation *a, const char *list, struct err *e)
{
	const char *s = list;
	if (!*s)
		return err_set(e, "--ablate needs heads as LAYER.HEAD[,LAYER.HEAD...], e.g. 0.3,1.2");
	for (;;) {
		const char *at = s;
		long l = ablate_number(&s), h = -1;
		if (l >= 0 && *s == '.') {
			s++;
			h = ablate_number(&s);
		}
		if (l < 0 || h < 0 || (*s && *s != ','))
			return err_set(e, "--ablate: '%.*s' is not LAYER.HEAD (e.g. 0.3)", (int)strcspn(at, ","), at);
		if (l >= a->n_layers || h >= a->n_heads)
			return err_set(e, "--ablate: head %ld.%ld does not exist (the model has %d layers of %d heads)", l, h,
				       a->n_layers, a->n_heads);
		a->mask[l * a->n_heads + h] = 1;
		if (!*s)
			return 0;
		s++;
	}
}

int ablation_parse_mode(const char *s, enum ablate_mode *mode)
{
	if (strcmp(s, "zero") == 0)
		*mode = ABLATE_ZERO;
	else if (strcmp(s, "mean") == 0)
		*mode = ABLATE_MEAN;
	else
		return -1;
	return 0;
}

const char *ablation_mode_name(enum ablate_mode mode)
{
	return mode == ABLATE_MEAN ? "mean" : "zero";
}

int ablation_count(const struct ablation *a)
{
	int c = 0;
	for (int i = 0; a->mask && i < a->n_layers * a->n_heads; i++)
		c += a->mask[i] != 0;
	return c;
}

void ablation_describe(const struct ablation *a, char *buf, size_t size)
{
	size_t len = 0;
	char tail[16];
	snprintf(tail, sizeof tail, " (%s)", ablation_mode_name(a->mode));
	if (size == 0)
		return;
	buf[0] = '\0';
	for (int i = 0; a->mask && i < a->n_layers * a->n_heads; i++) {
		if (!a->mask[i])
			continue;
		char one[32];
		int w = snprintf(one, sizeof one, "%sL%dH%d", len ? ", " : "", i / a->n_heads, i % a->n_heads);
		if (len + (size_t)w + strlen(tail) + 4 >= size) {
			snprintf(buf + len, size - len, "%s...", len ? ", " : "");
			len = strlen(buf);
			break;
		}
		memcpy(buf + len, one, (size_t)w + 1);
		len += (size_t)w;
	}
	snprintf(buf + len, size - len, "%s", tail);
}

/* The marked heads' mean context over the positions of full clean trace C, [n_layers][n_heads][v_dim]:
 * mean_i sum_j P_ij v_j = sum_j (mean_i P_ij) v_j, from the trace's probabilities and values (what the
 * forward pass multiplied), in float64, instead of a recording pass. NULL when out of memory. */
static float *ablate_means(const struct trace *c, const struct ablation *a)
{
	int n = c->n, Dv = trace_v_dim(c);
	float *means = calloc((size_t)a->n_layers * a->n_heads * Dv, sizeof *means);
	double *w = malloc((size_t)(n > 0 ? n : 1) * sizeof *w), *acc = malloc((size_t)Dv * sizeof *acc);
	for (int k = 0; means && w && acc && k < a->n_layers * a->n_heads; k++) {
		if (!a->mask[k] || n == 0)
			continue;
		const float *p = trace_attn(c, k / a->n_heads, k % a->n_heads); /* [n][n] */
		const float *v = trace_v(c, k / a->n_heads, k % a->n_heads);    /* [n][Dv] */
		for (int j = 0; j < n; j++)
			w[j] = 0;
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++)
				w[j] += p[(size_t)i * n + j];
		for (int d = 0; d < Dv; d++)
			acc[d] = 0;
		for (int j = 0; j < n; j++)
			for (int d = 0; d < Dv; d++)
				acc[d] += w[j] * v[(size_t)j * Dv + d];
		for (int d = 0; d < Dv; d++)
			means[(size_t)k * Dv + d] = (float)(acc[d] / n);
	}
	if (!w || !acc) {
		free(means);
		means = NULL;
	}
	free(w);
	free(acc);
	return means;
}

int model_run_ablated(const struct model *m, const struct trace *clean, const struct ablation *a,
		      const volatile int *cancel, struct trace **out, struct err *e)
{
	*out = NULL;
	if (a->n_layers != m->info.n_layers || a->n_heads != m->info.n_heads || clean->n_layers != m->info.n_layers ||
	    clean->n_heads != m->info.n_heads)
		return err_set(e, "the ablation or the trace is not of this model");
	struct fwd_ablate ab = {a->mask, NULL, NULL, clean};
	float *means = NULL;
	if (a->mode == ABLATE_MEAN && clean->attn) { /* a full clean trace holds what the means are made of */
		if (!(means = ablate_means(clean, a)))
			return err_set(e, "out of memory");
		ab.means = means;
	} else if (a->mode == ABLATE_MEAN) { /* the clean pass once more, recording the marked heads' mean context */
		means = calloc((size_t)a->n_layers * a->n_heads * m->info.v_dim, sizeof *means);
		if (!means)
			return err_set(e, "out of memory");
		struct trace *rec = model_trace_like(m, clean, e);
		if (!rec) {
			free(means);
			return -1;
		}
		struct fwd_ablate r = {a->mask, NULL, means, clean};
		int rc = forward_run_ablated(m, rec, &r, cancel, e);
		trace_free(rec);
		if (rc < 0) {
			free(means);
			return -1;
		}
		ab.means = means;
	}
	struct trace *t = model_trace_like(m, clean, e);
	int rc = t ? forward_run_ablated(m, t, &ab, cancel, e) : -1;
	free(means);
	if (rc < 0) {
		trace_free(t);
		return -1;
	}
	*out = t;
	return 0;
}

float *ablation_clean_rows(const struct model *m, const struct trace *clean, struct err *e)
{
	int V = lmhead_vocab(m), n = clean->n;
	if (lmhead_kind(m) == LMHEAD_NONE) {
		err_set(e, "%s", lmhead_why(m));
		return NULL;
	}
	float *lp = malloc((size_t)(n > 0 ? n : 1) * V * sizeof *lp);
	if (!lp) {
		err_set(e, "out of memory for %d x %d log-probabilities", n, V);
		return NULL;
	}
	if (lmhead_logprobs_rows(m, trace_hidden(clean, clean->n_layers), n, lp, NULL, e) < 0) {
		free(lp);
		return NULL;
	}
	return lp;
}

int ablation_effect(const struct model *m, const struct trace *clean, const float *clean_lp, const struct trace *abl,
		    double *effect, struct err *e)
{
	int n = clean->n, H = clean->hidden;
	if (abl->n != n || abl->hidden != H)
		return err_set(e, "the ablated run is not of the clean run's tokens");
	const float *c_last = trace_hidden(clean, clean->n_layers), *a_last = trace_hidden(abl, abl->n_layers);
	if (lmhead_kind(m) == LMHEAD_NONE) {
		double s = 0;
		for (size_t i = 0; i < (size_t)n * H; i++) {
			double d = (double)a_last[i] - c_last[i];
			s += d * d;
		}
		*effect = sqrt(s);
		return 0;
	}
	int V = lmhead_vocab(m);
	float *own = clean_lp ? NULL : ablation_clean_rows(m, clean, e);
	float *pa = malloc((size_t)(n > 0 ? n : 1) * V * sizeof *pa);
	const float *pc = clean_lp ? clean_lp : own;
	int rc = !pc ? -1 : !pa ? err_set(e, "out of memory") : lmhead_logprobs_rows(m, a_last, n, pa, NULL, e);
	double sum = 0;
	for (int i = 0; rc == 0 && i < n; i++) {
		const float *c = pc + (size_t)i * V, *a = pa + (size_t)i * V;
		double kl = 0; /* KL(p_clean || p_ablated) = sum p_c (log p_c - log p_a) */
		for (int v = 0; v < V; v++)
			if (c[v] > -INFINITY) /* p_c = 0 adds nothing */
				kl += exp((double)c[v]) * ((double)c[v] - a[v]);
		sum += kl;
	}
	free(own);
	free(pa);
	if (rc == 0)
		*effect = n > 0 ? sum / n : 0;
	return rc;
}

/* The mean surprisal over the rows of LP [n][vocab] (log-probabilities of T's rows): a causal head's row i
 * scores token i + 1 (rows 0 .. n-2), a masked LM's row i the token at i; NAN for no row. */
static double ablate_mean_surprisal(const struct model *m, const struct trace *t, const float *lp)
{
	int V = lmhead_vocab(m), n = t->n;
	bool causal = lmhead_kind(m) == LMHEAD_CAUSAL;
	int rows = causal ? n - 1 : n;
	double s = 0;
	for (int i = 0; i < rows; i++)
		s -= lp[(size_t)i * V + t->ids[causal ? i + 1 : i]];
	return rows > 0 ? s / rows : NAN;
}

int ablation_effects_metric(const struct model *m, const struct trace *clean, enum ablate_mode mode,
			    enum ablate_metric metric, const volatile int *cancel,
			    void (*progress)(void *ctx, int done, int total), void *ctx, double *effect, struct err *e)
{
	struct ablation a;
	int L = m->info.n_layers, NH = m->info.n_heads, rc = 0, V = lmhead_vocab(m);
	for (int i = 0; i < L * NH; i++)
		effect[i] = NAN;
	if (metric == ABLATE_SURPRISAL && lmhead_kind(m) == LMHEAD_NONE)
		return err_set(e, "no surprisal: %s", lmhead_why(m));
	if (ablation_init(&a, &m->info, e) < 0)
		return -1;
	a.mode = mode;
	float *clean_lp = NULL, *lp = NULL;
	if (lmhead_kind(m) != LMHEAD_NONE && !(clean_lp = ablation_clean_rows(m, clean, e)))
		rc = -1;
	double clean_s = rc == 0 && metric == ABLATE_SURPRISAL ? ablate_mean_surprisal(m, clean, clean_lp) : 0;
	if (rc == 0 && metric == ABLATE_SURPRISAL &&
	    !(lp = malloc((size_t)(clean->n > 0 ? clean->n : 1) * V * sizeof *lp)))
		rc = err_set(e, "out of memory");
	for (int i = 0; rc == 0 && i < L * NH; i++) {
		struct trace *t = NULL;
		a.mask[i] = 1;
		rc = model_run_ablated(m, clean, &a, cancel, &t, e);
		a.mask[i] = 0;
		if (rc == 0 && metric == ABLATE_KL)
			rc = ablation_effect(m, clean, clean_lp, t, &effect[i], e);
		else if (rc == 0 && (rc = lmhead_logprobs_rows(m, trace_hidden(t, t->n_layers), t->n, lp, NULL, e)) == 0)
			effect[i] = ablate_mean_surprisal(m, t, lp) - clean_s;
		trace_free(t);
		if (rc == 0 && progress)
			progress(ctx, i + 1, L * NH);
	}
	free(lp);
	free(clean_lp);
	ablation_free(&a);
	return rc;
}

int ablation_effects(const struct model *m, const struct trace *clean, enum ablate_mode mode,
		     const volatile int *cancel, void (*progress)(void *ctx, int done, int total), void *ctx,
		     double *effect, struct err *e)
{
	return ablation_effects_metric(m, clean, mode, ABLATE_KL, cancel, progress, ctx, effect, e);
}
