/* aggregate.c -- mergeable per-head accumulators of a corpus run (see aggregate.h). */
#include "corpus/aggregate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/pca.h"
#include "analysis/stats.h"

/* Shapes a saved file may claim; far above any real model, low enough that the arrays stay small. */
#define AGG_MAX_LAYERS 1024
#define AGG_MAX_HEADS 1024
#define AGG_MAX_CELLS ((size_t)1 << 18) /* layers × heads */

struct aggregate *aggregate_new(const struct agg_model *m, int pca_layer, int pca_head, struct err *e)
{
	if (m->n_layers < 1 || m->n_layers > AGG_MAX_LAYERS || m->n_heads < 1 || m->n_heads > AGG_MAX_HEADS ||
	    (size_t)m->n_layers * m->n_heads > AGG_MAX_CELLS) {
		err_set(e, "a model of %d layers of %d heads is out of range", m->n_layers, m->n_heads);
		return NULL;
	}
	if (pca_layer < 0 || pca_layer >= m->n_layers || pca_head < 0 || pca_head >= m->n_heads) {
		err_set(e, "no head L%d H%d for the Q/K PCA sample: the model has %d layers of %d heads", pca_layer,
			pca_head, m->n_layers, m->n_heads);
		return NULL;
	}
	struct aggregate *a = calloc(1, sizeof *a);
	size_t cells = (size_t)m->n_layers * m->n_heads;
	if (a) {
		a->model = *m;
		a->hs = calloc(cells * AGG_SCORES, sizeof *a->hs);
		a->scratch = calloc(cells, sizeof *a->scratch);
		a->qk = calloc(cells, sizeof *a->qk);
		a->dist = malloc((size_t)m->n_layers * AGG_DISTS * sizeof *a->dist);
	}
	if (!a || !a->hs || !a->scratch || !a->qk || !a->dist ||
	    aggsample_init(&a->sample, pca_layer, pca_head, m->head_dim, e) < 0) {
		aggregate_free(a);
		err_set(e, "out of memory");
		return NULL;
	}
	for (size_t i = 0; i < (size_t)m->n_layers * AGG_DISTS; i++)
		agghist_init(&a->dist[i]);
	return a;
}

const char *aggregate_dist_name(enum agg_dist d)
{
	static const char *const names[AGG_DISTS] = {
		"dots_same", "dots_diff", "dots_same_every", "dots_diff_every",
		"final_prev", "other_self", "other_self_no_last", "first_self",
	};
	return d >= 0 && d < AGG_DISTS ? names[d] : "?";
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
	free(a->qk);
	free(a->dist);
	aggsample_free(&a->sample);
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

double aggregate_moment_pstd(const struct agg_moment *m)
{
	return m->n == 0 ? NAN : sqrt(m->m2 / (double)m->n);
}

struct agg_moment aggregate_qk_moment(const struct agg_qk *s, bool keys, bool first)
{
	struct agg_moment m = keys ? s->k_rest : s->q_rest;
	if (first)
		aggregate_moment_merge(&m, keys ? &s->k_first : &s->q_first);
	return m;
}

#define AGG_CHAINS 8 /* arrays whose moments aggregate_blocks computes side by side */

typedef double agg_v4 __attribute__((vector_size(32)));

/* OUT[c] = the sum of A[c][0 .. COUNT), or with MEAN of (A[c][i] − MEAN[c])², for the AGG_CHAINS arrays
 * side by side, each in four lanes: lane l adds the values i ≡ l (mod 4) in order, the lanes then
 * added as (l0 + l1) + (l2 + l3), the last COUNT mod 4 values after them in order. The same
 * operations on either path (no product fused into a sum: neither target has FMA), so the same
 * bits; 8 arrays' vectors side by side keep both adders busy (each sum waits on its previous
 * addition). One value at a time (8 chains of scalar sums), the query/key moments were 1.21 % of
 * the samples of a 1,000-text bert-base corpus run on an AVX-512 Xeon; four to a vector, 0.46 %. */
static inline __attribute__((always_inline)) void agg_lanes(const float *const *a, size_t count, const double *mean,
							    double *out)
{
	agg_v4 s[AGG_CHAINS] = {{0}};
	size_t i = 0;
	for (; i + 4 <= count; i += 4)
#pragma GCC unroll 8
		for (int c = 0; c < AGG_CHAINS; c++) {
			agg_v4 v = {a[c][i], a[c][i + 1], a[c][i + 2], a[c][i + 3]};
			if (mean) {
				v -= mean[c];
				v *= v;
			}
			s[c] += v;
		}
	for (int c = 0; c < AGG_CHAINS; c++) {
		double t = (s[c][0] + s[c][1]) + (s[c][2] + s[c][3]);
		for (size_t j = i; j < count; j++) {
			double d = mean ? a[c][j] - mean[c] : a[c][j];
			t += mean ? d * d : d;
		}
		out[c] = t;
	}
}

__attribute__((target("avx2"))) static void agg_lanes_avx2(const float *const *a, size_t count, const double *mean,
							    double *out)
{
	agg_lanes(a, count, mean, out);
}

static void agg_lanes_generic(const float *const *a, size_t count, const double *mean, double *out)
{
	agg_lanes(a, count, mean, out);
}

/* The moments of the first USED arrays X[c][count], each as one block in two passes (as stats.h's
 * descriptives: the mean, then the squares about it), merged into M[c]; the unused slots repeat
 * the last array, their results dropped. */
static void aggregate_blocks(struct agg_moment *const *m, const float *const *x, int used, size_t count)
{
	if (count == 0 || used < 1)
		return;
	void (*lanes)(const float *const *, size_t, const double *, double *) =
		__builtin_cpu_supports("avx2") ? agg_lanes_avx2 : agg_lanes_generic;
	const float *a[AGG_CHAINS];
	double sum[AGG_CHAINS], m2[AGG_CHAINS], mean[AGG_CHAINS];
	for (int c = 0; c < AGG_CHAINS; c++)
		a[c] = x[c < used ? c : used - 1];
	lanes(a, count, NULL, sum);
	for (int c = 0; c < AGG_CHAINS; c++)
		mean[c] = sum[c] / (double)count;
	lanes(a, count, mean, m2);
	for (int c = 0; c < used; c++)
		aggregate_moment_merge(m[c], &(struct agg_moment){.n = count, .mean = mean[c], .m2 = m2[c]});
}

/* Query/key moments of every head of T: the first token's and the others', four heads at a time. */
static void aggregate_add_qk(struct aggregate *a, const struct trace *t)
{
	size_t d = (size_t)t->head_dim, rest = t->n > 1 ? (size_t)(t->n - 1) * d : 0;
	if (t->n < 1)
		return;
	for (int l = 0; l < t->n_layers; l++)
		for (int h0 = 0; h0 < t->n_heads; h0 += AGG_CHAINS / 2) {
			struct agg_moment *first[AGG_CHAINS], *others[AGG_CHAINS];
			const float *x_first[AGG_CHAINS], *x_others[AGG_CHAINS];
			int used = 0;
			for (int h = h0; h < t->n_heads && h < h0 + AGG_CHAINS / 2; h++) {
				struct agg_qk *s = a->qk + (size_t)l * t->n_heads + h;
				const float *q = trace_q(t, l, h), *k = trace_k(t, l, h);
				first[used] = &s->q_first, others[used] = &s->q_rest, x_first[used] = q, x_others[used++] = q + d;
				first[used] = &s->k_first, others[used] = &s->k_rest, x_first[used] = k, x_others[used++] = k + d;
			}
			aggregate_blocks(first, x_first, used, d);
			aggregate_blocks(others, x_others, used, rest);
		}
}

/* Keep, in place and in order, the products of X[n] (blocks of D's n_keys keys key_lo, key_lo + 1,
 * …, one block per pair of heads) whose key is neither the first token nor QUERY; returns how many. */
static size_t aggregate_notebook_keys(double *x, size_t n, const struct stats_dots *d, int query)
{
	size_t kept = 0;
	for (size_t i = 0; d->n_keys > 0 && i < n; i++) {
		int j = d->key_lo + (int)(i % (size_t)d->n_keys);
		if (j != 0 && j != query)
			x[kept++] = x[i];
	}
	return kept;
}

/* The distributions of every layer of T: the samples of stats_qk_dots (the last query) and
 * stats_attn_groups. -1 on OOM. */
static int aggregate_add_dists(struct aggregate *a, const struct trace *t, struct err *e)
{
	if (t->n < 1)
		return 0;
	for (int l = 0; l < t->n_layers; l++) {
		struct agghist *hl = a->dist + (size_t)l * AGG_DISTS;
		struct stats_dots d;
		int query = t->n - 1;
		if (stats_qk_dots(t, l, query, STATS_DOTS_VISIBLE, &d, e) < 0)
			return -1;
		agghist_add(&hl[AGG_DOTS_SAME_EVERY], d.same, d.n_same);
		agghist_add(&hl[AGG_DOTS_DIFF_EVERY], d.diff, d.n_diff);
		/* The notebook's keys are these but the first token and the query itself: the same
		 * products in the same order as stats_qk_dots(STATS_DOTS_NOTEBOOK) gives, computed once. */
		agghist_add(&hl[AGG_DOTS_SAME], d.same, aggregate_notebook_keys(d.same, d.n_same, &d, query));
		agghist_add(&hl[AGG_DOTS_DIFF], d.diff, aggregate_notebook_keys(d.diff, d.n_diff, &d, query));
		stats_dots_free(&d);
		for (int last = 0; last < 2; last++) {
			struct stats_groups g;
			if (stats_attn_groups(t, l, last, &g, e) < 0)
				return -1;
			if (last) {
				agghist_add(&hl[AGG_FINAL_PREV], g.v[STATS_FINAL_PREV], g.n[STATS_FINAL_PREV]);
				agghist_add(&hl[AGG_OTHER_SELF], g.v[STATS_OTHER_SELF], g.n[STATS_OTHER_SELF]);
				agghist_add(&hl[AGG_FIRST_SELF], g.v[STATS_FIRST_SELF], g.n[STATS_FIRST_SELF]);
			} else {
				agghist_add(&hl[AGG_OTHER_SELF_NOLAST], g.v[STATS_OTHER_SELF], g.n[STATS_OTHER_SELF]);
			}
			stats_groups_free(&g);
		}
	}
	return 0;
}

int aggregate_add(struct aggregate *a, const struct trace *t, uint64_t line, const char *text, const char *text_b,
		  struct err *e)
{
	if (t->n_layers != a->model.n_layers || t->n_heads != a->model.n_heads)
		return err_set(e, "a trace of %d×%d heads does not fit an aggregate of %d×%d", t->n_layers, t->n_heads,
			       a->model.n_layers, a->model.n_heads);
	if (t->head_dim != a->model.head_dim)
		return err_set(e, "a trace of head size %d does not fit an aggregate of head size %d", t->head_dim,
			       a->model.head_dim);
	if (headscore_all(t, a->scratch) < 0 || aggregate_add_dists(a, t, e) < 0 ||
	    aggsample_add(&a->sample, t, line, text, text_b, e) < 0)
		return err_set(e, "out of memory");
	aggregate_add_qk(a, t);
	size_t cells = (size_t)a->model.n_layers * a->model.n_heads;
	for (size_t c = 0; c < cells; c++) {
		struct agg_moment *m = a->hs + c * AGG_SCORES;
		for (int k = 0; k < HS_COUNT; k++)
			if (aggregate_keeps(k) && isfinite(a->scratch[c].s[k]))
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
	if (src->sample.layer != dst->sample.layer || src->sample.head != dst->sample.head)
		return err_set(e, "its token sample holds layer %d head %d, not layer %d head %d (--pca-head)",
			       src->sample.layer, src->sample.head, dst->sample.layer, dst->sample.head);
	if (aggsample_merge(&dst->sample, &src->sample, e) < 0)
		return -1;
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
	for (size_t i = 0; i < (size_t)dst->model.n_layers * dst->model.n_heads; i++) {
		struct agg_qk *x = &dst->qk[i];
		const struct agg_qk *y = &src->qk[i];
		aggregate_moment_merge(&x->q_first, &y->q_first);
		aggregate_moment_merge(&x->q_rest, &y->q_rest);
		aggregate_moment_merge(&x->k_first, &y->k_first);
		aggregate_moment_merge(&x->k_rest, &y->k_rest);
	}
	for (size_t i = 0; i < (size_t)dst->model.n_layers * AGG_DISTS; i++)
		agghist_merge(&dst->dist[i], &src->dist[i]);
	dst->c.lines += src->c.lines;
	dst->c.texts += src->c.texts;
	dst->c.tokens += src->c.tokens;
	dst->c.empty += src->c.empty;
	dst->c.truncated += src->c.truncated;
	dst->c.failed += src->c.failed;
	dst->c.first_special += src->c.first_special;
	return 0;
}

int aggregate_pca(const struct aggregate *a, int *order, double *xy, double explained[2], struct err *e)
{
	const struct aggsample *s = &a->sample;
	if (s->n < 1)
		return err_set(e, "the token sample is empty");
	if (aggsample_order(s, order, e) < 0)
		return -1;
	size_t d = (size_t)s->dim;
	float *x = malloc(2 * (size_t)s->n * d * sizeof *x); /* [2n][d] queries, then keys */
	if (!x)
		return err_set(e, "out of memory");
	for (int i = 0; i < s->n; i++) {
		memcpy(x + (size_t)i * d, aggsample_q(s, order[i]), d * sizeof *x);
		memcpy(x + ((size_t)s->n + i) * d, aggsample_k(s, order[i]), d * sizeof *x);
	}
	int rc = pca_2d(x, 2 * s->n, s->dim, xy, explained, e);
	free(x);
	return rc;
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
