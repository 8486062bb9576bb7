/* aggregate.c -- mergeable per-head accumulators of a corpus run (see aggregate.h). */
#include "aggregate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Shapes a saved file may claim; far above any real model, low enough that the arrays stay small. */
#define AGG_MAX_LAYERS 1024
#define AGG_MAX_HEADS 1024
#define AGG_MAX_CELLS ((size_t)1 << 18) /* layers × heads */

struct aggregate *aggregate_new(const struct agg_model *m, struct err *e)
{
	if (m->n_layers < 1 || m->n_layers > AGG_MAX_LAYERS || m->n_heads < 1 || m->n_heads > AGG_MAX_HEADS ||
	    (size_t)m->n_layers * m->n_heads > AGG_MAX_CELLS) {
		err_set(e, "a model of %d layers of %d heads is out of range", m->n_layers, m->n_heads);
		return NULL;
	}
	struct aggregate *a = calloc(1, sizeof *a);
	size_t cells = (size_t)m->n_layers * m->n_heads;
	if (a) {
		a->model = *m;
		a->hs = calloc(cells * AGG_SCORES, sizeof *a->hs);
		a->scratch = calloc(cells, sizeof *a->scratch);
	}
	if (!a || !a->hs || !a->scratch) {
		aggregate_free(a);
		err_set(e, "out of memory");
		return NULL;
	}
	return a;
}

void aggregate_free(struct aggregate *a)
{
	if (!a)
		return;
	for (int i = 0; i < a->n_src; i++)
		free(a->src[i].file);
	free(a->src);
	free(a->hs);
	free(a->scratch);
	free(a);
}

int aggregate_add_source(struct aggregate *a, const char *file, int shard_k, int shard_n, uint64_t texts,
			 bool partial, struct err *e)
{
	struct agg_source *grown = realloc(a->src, (size_t)(a->n_src + 1) * sizeof *grown);
	if (!grown)
		return err_set(e, "out of memory");
	a->src = grown;
	struct agg_source *s = &a->src[a->n_src];
	s->file = strdup(file);
	if (!s->file)
		return err_set(e, "out of memory");
	s->shard_k = shard_k;
	s->shard_n = shard_n;
	s->texts = texts;
	s->partial = partial;
	a->n_src++;
	return 0;
}

void aggregate_moment_add(struct agg_moment *m, double x)
{
	m->n++;
	double d = x - m->mean;
	m->mean += d / (double)m->n;
	m->m2 += d * (x - m->mean);
}

void aggregate_moment_merge(struct agg_moment *m, const struct agg_moment *o)
{
	if (o->n == 0)
		return;
	if (m->n == 0) {
		*m = *o;
		return;
	}
	double na = (double)m->n, nb = (double)o->n, n = na + nb, d = o->mean - m->mean;
	m->mean += d * nb / n;
	m->m2 += o->m2 + d * d * na * nb / n;
	m->n += o->n;
}

double aggregate_moment_std(const struct agg_moment *m)
{
	if (m->n == 0)
		return NAN;
	return m->n < 2 ? 0 : sqrt(m->m2 / (double)(m->n - 1));
}

int aggregate_add(struct aggregate *a, const struct trace *t, struct err *e)
{
	if (t->n_layers != a->model.n_layers || t->n_heads != a->model.n_heads)
		return err_set(e, "a trace of %d×%d heads does not fit an aggregate of %d×%d", t->n_layers, t->n_heads,
			       a->model.n_layers, a->model.n_heads);
	if (headscore_all(t, a->scratch) < 0)
		return err_set(e, "out of memory");
	size_t cells = (size_t)a->model.n_layers * a->model.n_heads;
	for (size_t c = 0; c < cells; c++) {
		struct agg_moment *m = a->hs + c * AGG_SCORES;
		for (int k = 0; k < HS_COUNT; k++)
			if (isfinite(a->scratch[c].s[k]))
				aggregate_moment_add(&m[k], a->scratch[c].s[k]);
		if (isfinite(a->scratch[c].entropy_norm))
			aggregate_moment_add(&m[AGG_ENTROPY_NORM], a->scratch[c].entropy_norm);
	}
	a->c.texts++;
	a->c.tokens += (uint64_t)t->n;
	a->c.truncated += t->truncated;
	a->c.first_special += t->n > 0 && t->special[0];
	return 0;
}

static bool aggregate_same_model(const struct agg_model *x, const struct agg_model *y)
{
	return !strcmp(x->name, y->name) && !strcmp(x->family, y->family) && x->causal == y->causal &&
	       x->n_layers == y->n_layers && x->n_heads == y->n_heads && x->n_kv_heads == y->n_kv_heads &&
	       x->head_dim == y->head_dim && x->hidden == y->hidden && x->max_positions == y->max_positions;
}

int aggregate_merge(struct aggregate *dst, const struct aggregate *src, struct err *e)
{
	if (!aggregate_same_model(&dst->model, &src->model))
		return err_set(e, "made with another model (%s, %d layers of %d heads; not %s, %d of %d)", src->model.name,
			       src->model.n_layers, src->model.n_heads, dst->model.name, dst->model.n_layers,
			       dst->model.n_heads);
	for (int i = 0; i < src->n_src; i++)
		for (int j = 0; j < dst->n_src; j++)
			if (!strcmp(src->src[i].file, dst->src[j].file) && src->src[i].shard_k == dst->src[j].shard_k &&
			    src->src[i].shard_n == dst->src[j].shard_n)
				return err_set(e, "shard %d/%d of %s is already in the aggregate", src->src[i].shard_k,
					       src->src[i].shard_n, src->src[i].file);
	int n_src = dst->n_src;
	for (int i = 0; i < src->n_src; i++) {
		const struct agg_source *s = &src->src[i];
		if (aggregate_add_source(dst, s->file, s->shard_k, s->shard_n, s->texts, s->partial, e) < 0) {
			while (dst->n_src > n_src)
				free(dst->src[--dst->n_src].file);
			return -1;
		}
	}
	size_t n = (size_t)dst->model.n_layers * dst->model.n_heads * AGG_SCORES;
	for (size_t i = 0; i < n; i++)
		aggregate_moment_merge(&dst->hs[i], &src->hs[i]);
	dst->c.lines += src->c.lines;
	dst->c.texts += src->c.texts;
	dst->c.tokens += src->c.tokens;
	dst->c.empty += src->c.empty;
	dst->c.truncated += src->c.truncated;
	dst->c.failed += src->c.failed;
	dst->c.first_special += src->c.first_special;
	return 0;
}

void aggregate_headscores(const struct aggregate *a, struct headscore *mean, struct headscore *std)
{
	bool first_special = a->c.first_special * 2 > a->c.texts;
	for (int l = 0; l < a->model.n_layers; l++)
		for (int h = 0; h < a->model.n_heads; h++) {
			size_t c = (size_t)l * a->model.n_heads + h;
			struct headscore *m = &mean[c];
			memset(m, 0, sizeof *m);
			m->layer = l, m->head = h;
			if (std)
				memset(&std[c], 0, sizeof std[c]), std[c].layer = l, std[c].head = h;
			for (int k = 0; k < AGG_SCORES; k++) {
				const struct agg_moment *mo = aggregate_moment(a, l, h, k);
				double mu = mo->n ? mo->mean : NAN, sd = aggregate_moment_std(mo);
				if (k == AGG_ENTROPY_NORM) {
					m->entropy_norm = mo->n ? mu : 0;
					if (std)
						std[c].entropy_norm = sd;
				} else {
					m->s[k] = mu;
					if (std)
						std[c].s[k] = sd;
				}
			}
			headscore_label(m, first_special, a->model.causal);
		}
}
