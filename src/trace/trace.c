/* trace.c -- allocation and release of a trace, and the cache of a compact trace's recomputed heads
 * (see trace.h). */
#include "trace/trace.h"
#include "trace/tracemem.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The heads a compact trace recomputed last, least recently used first out; locked, so that reads
 * from several threads never corrupt it (trace.h says how long a pointer lives). */
struct trace_cache {
	pthread_mutex_t lock;
	unsigned long clock;
	struct {
		int layer, head;     /* -1 when empty */
		unsigned long used;  /* clock at the last request */
		float *p;            /* [n][n] */
	} slot[TRACE_ATTN_SLOTS];
};

static void trace_cache_free(struct trace_cache *c);

/* The slots are allocated up front (pages are only touched when a head fills them), so reading a
 * head never fails. */
static struct trace_cache *trace_cache_new(size_t nn)
{
	struct trace_cache *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	for (int i = 0; i < TRACE_ATTN_SLOTS; i++) {
		c->slot[i].layer = c->slot[i].head = -1;
		if (!(c->slot[i].p = malloc(nn * sizeof(float)))) {
			trace_cache_free(c);
			return NULL;
		}
	}
	return c;
}

static void trace_cache_free(struct trace_cache *c)
{
	if (!c)
		return;
	for (int i = 0; i < TRACE_ATTN_SLOTS; i++)
		free(c->slot[i].p);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static _Thread_local void (*recompute_hook)(void *arg, const struct trace *t);
static _Thread_local void *recompute_arg;

static _Thread_local bool recompute_stopped;

void trace_on_recompute(void (*hook)(void *arg, const struct trace *t), void *arg)
{
	recompute_hook = hook;
	recompute_arg = arg;
}

void trace_stop_recompute(bool stop)
{
	recompute_stopped = stop;
}

bool trace_recompute_stopped(void)
{
	return recompute_stopped;
}

const float *trace_attn_cached(const struct trace *t, int layer, int head)
{
	struct trace_cache *c = t->cache;
	pthread_mutex_lock(&c->lock);
	int hit = -1, old = 0;
	for (int i = 0; i < TRACE_ATTN_SLOTS; i++) {
		if (c->slot[i].layer == layer && c->slot[i].head == head)
			hit = i;
		if (c->slot[i].used < c->slot[old].used)
			old = i;
	}
	bool filled = hit < 0;
	if (filled) {
		/* Fill the least recently used slot (the same size for every head of the trace). */
		hit = old;
		c->slot[hit].layer = c->slot[hit].head = -1;
		if (recompute_stopped) { /* the caller will throw its result away: finite, not this head */
			c->slot[hit].used = ++c->clock;
			const float *junk = c->slot[hit].p;
			pthread_mutex_unlock(&c->lock);
			return junk;
		}
		t->attn_fill(t, layer, head, c->slot[hit].p);
		c->slot[hit].layer = layer;
		c->slot[hit].head = head;
	}
	c->slot[hit].used = ++c->clock;
	const float *p = c->slot[hit].p;
	pthread_mutex_unlock(&c->lock);
	if (filled && recompute_hook)
		recompute_hook(recompute_arg, t);
	return p;
}

double trace_budget(void)
{
	const char *s = getenv("ATTNSCOPE_TRACE_BUDGET");
	if (!s || !*s)
		return TRACE_BUDGET_DEFAULT;
	char *end;
	double v = strtod(s, &end);
	double unit = *end == 'k' || *end == 'K' ? 1024.0 : *end == 'M' ? 1024.0 * 1024 : *end == 'G' ? 1024.0 * 1024 * 1024 : 1;
	if (unit > 1)
		end++;
	if (end == s || *end || !(v >= 0)) /* not a number: the default, rather than no budget at all */
		return TRACE_BUDGET_DEFAULT;
	return v * unit;
}

/* Bytes of a trace's large arrays (from tracemem: trace_new_shaped and trace_free use these alone). */
struct trace_big {
	size_t attn, q, k, v, hidden;
};

static struct trace_big trace_big_bytes(const struct trace *t)
{
	size_t lh = (size_t)t->n_layers * t->n_heads, lkv = (size_t)t->n_layers * t->n_kv_heads;
	size_t nn = t->n > 0 ? (size_t)t->n : 1, f = sizeof(float);
	return (struct trace_big){lh * nn * nn * f, lh * nn * t->head_dim * f, lkv * nn * t->head_dim * f,
				  lkv * nn * t->v_dim * f, (size_t)(t->n_layers + 1) * nn * t->hidden * f};
}

struct trace *trace_new_shaped(const struct trace_shape *s)
{
	if (s->n_kv_heads < 1 || s->n_heads % s->n_kv_heads)
		return NULL;
	struct trace *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->n_layers = s->n_layers;
	t->n_heads = s->n_heads;
	t->n_kv_heads = s->n_kv_heads;
	t->head_dim = s->head_dim;
	t->v_dim = s->v_dim > 0 ? s->v_dim : s->head_dim;
	t->hidden = s->hidden;
	t->n = s->n;
	t->rotary = s->rotary;
	t->nonfinite_layer = -1;
	size_t lh = (size_t)s->n_layers * s->n_heads;
	size_t nn = (size_t)s->n > 0 ? (size_t)s->n : 1;
	t->tokens = calloc(nn, sizeof *t->tokens);
	t->ids = calloc(nn, sizeof *t->ids);
	t->type_ids = calloc(nn, sizeof *t->type_ids);
	t->special = calloc(nn, sizeof *t->special);
	struct trace_big big = trace_big_bytes(t);
	void *(*big_alloc)(size_t) = s->written ? tracemem_alloc : tracemem_calloc;
	if (s->compact)
		t->cache = trace_cache_new(nn * nn);
	else
		t->attn = big_alloc(big.attn);
	t->q = big_alloc(big.q);
	t->k = big_alloc(big.k);
	t->v = big_alloc(big.v);
	t->hidden_states = big_alloc(big.hidden);
	t->vnorm = calloc(lh * nn, sizeof(float));
	t->final_rstd = calloc(nn, sizeof(float));
	t->win_before = malloc((s->n_layers > 0 ? s->n_layers : 1) * sizeof *t->win_before);
	t->win_after = malloc((s->n_layers > 0 ? s->n_layers : 1) * sizeof *t->win_after);
	t->score_scale = malloc((s->n_layers > 0 ? s->n_layers : 1) * sizeof *t->score_scale);
	bool raw_ok = true;
	if (s->rotary) {
		t->q_raw = big_alloc(big.q);
		t->k_raw = big_alloc(big.k);
		raw_ok = t->q_raw && t->k_raw;
	}
	if (!t->tokens || !t->ids || !t->type_ids || !t->special || (!t->attn && !t->cache) || !t->q || !t->k || !t->v ||
	    !t->hidden_states || !t->vnorm || !t->final_rstd || !t->win_before || !t->win_after || !t->score_scale ||
	    !raw_ok) {
		trace_free(t);
		return NULL;
	}
	for (int l = 0; l < s->n_layers; l++) {
		t->win_before[l] = t->win_after[l] = -1;
		t->score_scale[l] = (float)(1 / sqrt((double)(s->head_dim > 0 ? s->head_dim : 1)));
	}
	return t;
}

void trace_attention_only(struct trace *t)
{
	tracemem_free(t->hidden_states, trace_big_bytes(t).hidden);
	free(t->context);
	free(t->moe_topk);
	free(t->moe_weights);
	free(t->moe_layer);
	t->hidden_states = t->context = t->moe_weights = NULL;
	t->moe_topk = NULL;
	t->moe_layer = NULL;
	t->moe_k = 0;
}

struct trace *trace_new(int n_layers, int n_heads, int head_dim, int hidden, int n)
{
	struct trace_shape s = {n_layers, n_heads, n_heads, head_dim, hidden, n, false, false, 0, false};
	return trace_new_shaped(&s);
}

/* A copy of N elements of SIZE bytes, or NULL for a NULL SRC; *OK turns false when out of memory. */
static void *trace_dup(const void *src, size_t n, size_t size, bool *ok)
{
	if (!src)
		return NULL;
	void *d = malloc(n * size);
	if (d)
		memcpy(d, src, n * size);
	else
		*ok = false;
	return d;
}

int trace_copy_model(struct trace *dst, const struct trace *src)
{
	memcpy(dst->model_name, src->model_name, sizeof dst->model_name);
	memcpy(dst->family, src->family, sizeof dst->family);
	dst->pieces = src->pieces;
	dst->causal = src->causal;
	dst->rotary_interleaved = src->rotary_interleaved;
	dst->max_positions = src->max_positions;
	memcpy(dst->score_scale, src->score_scale, (size_t)src->n_layers * sizeof *dst->score_scale);
	dst->softcap = src->softcap;
	dst->relative_terms = src->relative_terms;
	bool ok = true;
	dst->nope = trace_dup(src->nope, (size_t)src->n_layers, sizeof *src->nope, &ok);
	dst->alibi = trace_dup(src->alibi, (size_t)src->n_heads, sizeof *src->alibi, &ok);
	dst->alibi_scale = src->alibi_scale;
	dst->sinks = trace_dup(src->sinks, (size_t)src->n_layers * src->n_heads, sizeof *src->sinks, &ok);
	return ok ? 0 : -1;
}

void trace_free(struct trace *t)
{
	if (!t)
		return;
	if (t->weights_of) { /* the rest is the α trace's */
		free(t->attn);
		trace_cache_free(t->cache);
		free(t->scores);
		free(t->thumb);
		free(t);
		return;
	}
	if (t->tokens)
		for (int i = 0; i < t->n; i++)
			free(t->tokens[i]);
	free(t->tokens);
	free(t->ids);
	free(t->type_ids);
	free(t->special);
	struct trace_big big = trace_big_bytes(t);
	tracemem_free(t->attn, big.attn);
	trace_cache_free(t->cache);
	free(t->scores);
	free(t->thumb);
	tracemem_free(t->q, big.q);
	tracemem_free(t->k, big.k);
	tracemem_free(t->v, big.v);
	tracemem_free(t->q_raw, big.q);
	tracemem_free(t->k_raw, big.k);
	free(t->win_before);
	free(t->win_after);
	free(t->score_scale);
	free(t->alibi);
	free(t->nope);
	free(t->chunk);
	free(t->moe_layer);
	free(t->moe_topk);
	free(t->moe_weights);
	free(t->sinks);
	tracemem_free(t->hidden_states, big.hidden);
	free(t->vnorm);
	free(t->final_rstd);
	free(t->word_of);
	free(t->word_start);
	trace_free(t->decoder);
	free(t->labels);
	free(t->pos_bias);
	free(t->pos_buckets);
	free(t->context);
	free(t->cross_attn);
	free(t->cross_q);
	free(t->cross_k);
	free(t->cross_v);
	free(t->cross_context);
	free(t);
}

int trace_alloc_cross(struct trace *t, int n_cross)
{
	size_t lh = (size_t)t->n_layers * t->n_heads, n = (size_t)t->n, d = (size_t)t->head_dim, nc = (size_t)n_cross;
	t->n_cross = n_cross;
	t->cross_attn = calloc(lh * n * nc + 1, sizeof(float));
	t->cross_q = calloc(lh * n * d + 1, sizeof(float));
	t->cross_k = calloc(lh * nc * d + 1, sizeof(float));
	t->cross_v = calloc(lh * nc * d + 1, sizeof(float));
	t->cross_context = calloc((size_t)t->n_layers * n * t->n_heads * d + 1, sizeof(float));
	return t->cross_attn && t->cross_q && t->cross_k && t->cross_v && t->cross_context ? 0 : -1;
}
