/* prefix.c -- the kept tokens of a causal model's last run (see prefix.h). */
#include "engine/prefix.h"
#include "engine/weights.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int prefix_init(struct prefix_cache *c, size_t budget)
{
	memset(c, 0, sizeof *c);
	c->budget = budget;
	return pthread_mutex_init(&c->lock, NULL) == 0 ? 0 : -1;
}

static void prefix_clear(struct prefix_cache *c)
{
	free(c->ids);
	free(c->type_ids);
	free(c->nonfinite);
	free(c->off);
	free(c->rows);
	c->ids = c->type_ids = NULL;
	c->nonfinite = NULL;
	c->off = NULL;
	c->rows = NULL;
	c->n = c->cap = 0;
	c->rows_cap = 0;
}

void prefix_free(struct prefix_cache *c)
{
	prefix_clear(c);
	pthread_mutex_destroy(&c->lock);
}

static bool prefix_same_shape(const struct prefix_cache *c, const struct trace *t)
{
	return c->n_layers == t->n_layers && c->n_heads == t->n_heads && c->n_kv_heads == t->n_kv_heads &&
	       c->head_dim == t->head_dim && c->v_dim == trace_v_dim(t) && c->hidden == t->hidden && c->raw == (t->q_raw != NULL) &&
	       c->vnorm == (t->vnorm != NULL);
}

int prefix_shared(const struct prefix_cache *c, const struct trace *t)
{
	if (c->n == 0 || !t->attn || !prefix_same_shape(c, t)) /* a compact trace keeps no attention rows */
		return 0;
	int r = 0, most = c->n < t->n ? c->n : t->n - 1;
	while (r < most && c->ids[r] == t->ids[r] && c->type_ids[r] == t->type_ids[r])
		r++;
	return r;
}

/* Floats in token I's block: per layer and head its attention row (keys 0 .. I), its query (and
 * the query before rotary) and value-vector norm, per key/value head its key (and before rotary) and value, its
 * hidden state of every layer and its final norm's scale. */
static size_t prefix_block(const struct trace *t, int i)
{
	size_t L = t->n_layers, D = t->head_dim, raw = t->q_raw ? 1 : 0;
	return L * t->n_heads * ((size_t)i + 1 + (1 + raw) * D + (t->vnorm ? 1 : 0)) +
	       L * t->n_kv_heads * ((1 + raw) * D + (size_t)trace_v_dim(t)) + (L + 1) * t->hidden + 1 +
	       (t->moe_topk ? 2 * L * (size_t)t->moe_k : 0);
}

/* Copy token I's rows between T and the block at B: into the block (TO_BLOCK) or out of it. */
static void prefix_move(const struct trace *t, int i, float *b, bool to_block)
{
	size_t D = t->head_dim, dbytes = D * sizeof(float), row = (size_t)i, Dv = (size_t)trace_v_dim(t);
#define PREFIX_MOVE(ptr, bytes)                                                                                     \
	do {                                                                                                       \
		if (to_block)                                                                                      \
			memcpy(b, (ptr), (bytes));                                                                 \
		else                                                                                               \
			memcpy((void *)(ptr), b, (bytes));                                                         \
		b += (bytes) / sizeof(float);                                                                      \
	} while (0)
	for (int l = 0; l < t->n_layers; l++) {
		for (int h = 0; h < t->n_heads; h++) {
			float *attn_row = (float *)trace_attn(t, l, h) + row * t->n;
			PREFIX_MOVE(attn_row, (row + 1) * sizeof(float)); /* causal: keys 0 .. i */
			if (!to_block) /* the later keys' zeros: the new trace's arrays start undefined */
				memset(attn_row + row + 1, 0, (t->n - row - 1) * sizeof(float));
			PREFIX_MOVE(trace_q(t, l, h) + row * D, dbytes);
			if (t->q_raw)
				PREFIX_MOVE(trace_q_raw(t, l, h) + row * D, dbytes);
			if (t->vnorm)
				PREFIX_MOVE(trace_vnorm(t, l, h) + row, sizeof(float));
		}
		for (int g = 0; g < t->n_kv_heads; g++) {
			int h = g * (t->n_heads / t->n_kv_heads); /* a query head reading kv head g */
			PREFIX_MOVE(trace_k(t, l, h) + row * D, dbytes);
			PREFIX_MOVE(trace_v(t, l, h) + row * Dv, Dv * sizeof(float));
			if (t->k_raw)
				PREFIX_MOVE(trace_k_raw(t, l, h) + row * D, dbytes);
		}
	}
	for (int l = 0; l <= t->n_layers; l++)
		PREFIX_MOVE(trace_hidden(t, l) + row * t->hidden, t->hidden * sizeof(float));
	PREFIX_MOVE(t->final_rstd + row, sizeof(float));
	for (int l = 0; t->moe_topk && l < t->n_layers; l++) { /* a MoE model's routing (expert ids are 4 bytes too) */
		size_t at = ((size_t)l * t->n + row) * t->moe_k, kbytes = (size_t)t->moe_k * sizeof(float);
		PREFIX_MOVE(t->moe_topk + at, kbytes);
		PREFIX_MOVE(t->moe_weights + at, kbytes);
	}
#undef PREFIX_MOVE
}

struct prefix_fill_job {
	const struct prefix_cache *c;
	struct trace *t;
};

static void prefix_fill_row(void *ctx, int i, float *scratch)
{
	const struct prefix_fill_job *j = ctx;
	(void)scratch;
	prefix_move(j->t, i, j->c->rows + j->c->off[i], false);
}

/* The rows are copied by the engine's threads together (each row to its own places): alone, one
 * thread copied 29 MB while the other waited, a third of the time of one more word at the end of a
 * 128-token gpt2 text. */
void prefix_fill(const struct prefix_cache *c, struct trace *t, int r)
{
	struct prefix_fill_job j = {c, t};
	if (weights_parallel(r, 0, prefix_fill_row, &j) < 0) /* asks no scratch: never fails */
		for (int i = 0; i < r; i++)
			prefix_fill_row(&j, i, NULL);
	int worst = -1;
	for (int i = 0; i < r; i++)
		if (c->nonfinite[i] >= 0 && (worst < 0 || c->nonfinite[i] < worst))
			worst = c->nonfinite[i];
	t->nonfinite_layer = worst;
}

/* Grow the arrays to N tokens and FLOATS of rows; -1 when out of memory (nothing changed then). */
static int prefix_reserve(struct prefix_cache *c, int n, size_t floats)
{
	if (n > c->cap) {
		int cap = n > 2 * c->cap ? n : 2 * c->cap;
		int32_t *ids = realloc(c->ids, cap * sizeof *ids);
		if (ids)
			c->ids = ids;
		int32_t *types = realloc(c->type_ids, cap * sizeof *types);
		if (types)
			c->type_ids = types;
		int *nf = realloc(c->nonfinite, cap * sizeof *nf);
		if (nf)
			c->nonfinite = nf;
		size_t *off = realloc(c->off, (cap + 1) * sizeof *off);
		if (off)
			c->off = off;
		if (!ids || !types || !nf || !off)
			return -1;
		c->cap = cap;
	}
	if (floats > c->rows_cap) {
		size_t cap = floats > 2 * c->rows_cap ? floats : 2 * c->rows_cap;
		if (cap * sizeof(float) > c->budget)
			cap = floats;
		float *rows = realloc(c->rows, cap * sizeof *rows);
		if (!rows)
			return -1;
		c->rows = rows;
		c->rows_cap = cap;
	}
	return 0;
}

/* The first layer whose hidden state of token I holds NaN/Inf, or -1. */
static int prefix_token_nonfinite(const struct trace *t, int i)
{
	for (int l = 0; l <= t->n_layers; l++) {
		const float *x = trace_hidden(t, l) + (size_t)i * t->hidden;
		for (int j = 0; j < t->hidden; j++)
			if (!isfinite(x[j]))
				return l;
	}
	return -1;
}

void prefix_keep(struct prefix_cache *c, const struct trace *t, int r)
{
	if (!t->attn) { /* a compact trace (long texts): nothing to keep */
		prefix_clear(c);
		return;
	}
	if (!prefix_same_shape(c, t)) {
		prefix_clear(c);
		c->n_layers = t->n_layers;
		c->n_heads = t->n_heads;
		c->n_kv_heads = t->n_kv_heads;
		c->head_dim = t->head_dim;
		c->v_dim = trace_v_dim(t);
		c->hidden = t->hidden;
		c->raw = t->q_raw != NULL;
		c->vnorm = t->vnorm != NULL;
		r = 0;
	}
	if (r > c->n)
		r = c->n;
	c->n = r; /* the kept tokens past R belonged to another text */
	size_t floats = r ? c->off[r] : 0;
	for (int i = r; i < t->n; i++)
		floats += prefix_block(t, i);
	if (floats * sizeof(float) > c->budget || prefix_reserve(c, t->n, floats) < 0) {
		prefix_clear(c);
		return;
	}
	c->off[0] = 0;
	if (r == 0 || t->n < c->len_min)
		c->len_min = t->n;
	if (r == 0 || t->n > c->len_max)
		c->len_max = t->n;
	for (int i = r; i < t->n; i++) {
		c->ids[i] = t->ids[i];
		c->type_ids[i] = t->type_ids[i];
		c->nonfinite[i] = t->nonfinite_layer < 0 ? -1 : prefix_token_nonfinite(t, i);
		prefix_move(t, i, c->rows + c->off[i], true);
		c->off[i + 1] = c->off[i] + prefix_block(t, i);
	}
	c->n = t->n;
}
