/* aggsample.c -- the mergeable uniform token sample (see aggsample.h). */
#include "corpus/aggsample.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int aggsample_cap(int dim)
{
	size_t cap = AGGSAMPLE_FLOATS / (2 * (size_t)(dim > 0 ? dim : 1));
	return cap < AGGSAMPLE_MAX ? (int)cap : AGGSAMPLE_MAX;
}

int aggsample_init(struct aggsample *s, int layer, int head, int dim, struct err *e)
{
	memset(s, 0, sizeof *s);
	s->layer = layer, s->head = head, s->dim = dim;
	s->cap = aggsample_cap(dim);
	size_t cap = s->cap > 0 ? (size_t)s->cap : 1, rows = s->cap > 0 ? (size_t)s->cap * (size_t)dim : 1;
	s->tok = calloc(cap, sizeof *s->tok);
	s->slot = malloc(cap * sizeof *s->slot);
	s->q = malloc(rows * sizeof *s->q); /* nothing to keep when a vector exceeds the budget */
	s->k = malloc(rows * sizeof *s->k);
	if (!s->tok || !s->slot || !s->q || !s->k) {
		aggsample_free(s);
		return err_set(e, "out of memory for a sample of %d tokens", aggsample_cap(dim));
	}
	return 0;
}

static void aggsample_tok_free(struct aggsample_tok *t)
{
	free(t->piece);
	free(t->text);
	free(t->text_b);
	t->piece = t->text = t->text_b = NULL;
}

void aggsample_free(struct aggsample *s)
{
	for (int i = 0; s->tok && i < s->n; i++)
		aggsample_tok_free(&s->tok[i]);
	free(s->tok);
	free(s->slot);
	free(s->q);
	free(s->k);
	memset(s, 0, sizeof *s);
}

/* splitmix64's finaliser: a bijection that spreads every input bit over the output. */
static uint64_t aggsample_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

uint64_t aggsample_key(uint64_t line, int token)
{
	return aggsample_mix(aggsample_mix(line) ^ (uint64_t)(uint32_t)token);
}

/* Does token A come before B in (key, line, token) order? */
static bool aggsample_before(const struct aggsample_tok *a, const struct aggsample_tok *b)
{
	if (a->key != b->key)
		return a->key < b->key;
	if (a->line != b->line)
		return a->line < b->line;
	return a->token < b->token;
}

static void aggsample_swap(struct aggsample *s, int i, int j)
{
	struct aggsample_tok t = s->tok[i];
	s->tok[i] = s->tok[j];
	s->tok[j] = t;
	int x = s->slot[i];
	s->slot[i] = s->slot[j];
	s->slot[j] = x;
}

/* Sift entry I down the max-heap of the first N entries. */
static void aggsample_down(struct aggsample *s, int i, int n)
{
	for (;;) {
		int big = i, l = 2 * i + 1, r = l + 1;
		if (l < n && aggsample_before(&s->tok[big], &s->tok[l]))
			big = l;
		if (r < n && aggsample_before(&s->tok[big], &s->tok[r]))
			big = r;
		if (big == i)
			return;
		aggsample_swap(s, i, big);
		i = big;
	}
}

static void aggsample_up(struct aggsample *s, int i)
{
	while (i > 0 && aggsample_before(&s->tok[(i - 1) / 2], &s->tok[i])) {
		aggsample_swap(s, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void aggsample_heapify(struct aggsample *s)
{
	for (int i = s->n / 2 - 1; i >= 0; i--)
		aggsample_down(s, i, s->n);
	s->sorted = false;
}

void aggsample_sort(struct aggsample *s)
{
	if (s->sorted)
		return;
	for (int end = s->n - 1; end > 0; end--) { /* heapsort: the largest goes last */
		aggsample_swap(s, 0, end);
		aggsample_down(s, 0, end);
	}
	s->sorted = true;
}

struct aggsample_place {
	uint64_t key, line;
	int token, index;
};

static int aggsample_cmp(const void *x, const void *y)
{
	const struct aggsample_place *a = x, *b = y;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return (a->token > b->token) - (a->token < b->token);
}

int aggsample_order(const struct aggsample *s, int *order, struct err *e)
{
	struct aggsample_place *p = malloc((size_t)(s->n > 0 ? s->n : 1) * sizeof *p);
	if (!p)
		return err_set(e, "out of memory");
	for (int i = 0; i < s->n; i++)
		p[i] = (struct aggsample_place){s->tok[i].key, s->tok[i].line, s->tok[i].token, i};
	qsort(p, (size_t)s->n, sizeof *p, aggsample_cmp);
	for (int i = 0; i < s->n; i++)
		order[i] = p[i].index;
	free(p);
	return 0;
}

/* A copy of at most AGGSAMPLE_TEXT_MAX bytes of S, not cutting a UTF-8 character; NULL for NULL.
 * *OK is cleared on OOM. */
static char *aggsample_cut(const char *s, bool *ok)
{
	if (!s)
		return NULL;
	size_t n = strlen(s);
	if (n > AGGSAMPLE_TEXT_MAX) {
		n = AGGSAMPLE_TEXT_MAX;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	char *c = malloc(n + 1);
	if (!c) {
		*ok = false;
		return NULL;
	}
	memcpy(c, s, n);
	c[n] = 0;
	return c;
}

int aggsample_offer(struct aggsample *s, uint64_t key, uint64_t line, int token, const char *piece, const char *text,
		    const char *text_b, const float *q, const float *k, struct err *e)
{
	struct aggsample_tok t = {.key = key, .line = line, .token = token};
	if (s->cap < 1)
		return 0;
	if (s->sorted)
		aggsample_heapify(s);
	if (s->n == s->cap && !aggsample_before(&t, &s->tok[0]))
		return 0; /* not among the CAP smallest */
	bool ok = true;
	t.piece = aggsample_cut(piece ? piece : "", &ok);
	t.text = aggsample_cut(text ? text : "", &ok);
	t.text_b = aggsample_cut(text_b, &ok);
	if (!ok) {
		aggsample_tok_free(&t);
		return err_set(e, "out of memory");
	}
	int i, row;
	if (s->n < s->cap) {
		i = s->n++;
		row = i;
	} else { /* replace the largest, at the top */
		i = 0;
		row = s->slot[0];
		aggsample_tok_free(&s->tok[0]);
	}
	s->tok[i] = t;
	s->slot[i] = row;
	memcpy(s->q + (size_t)row * s->dim, q, (size_t)s->dim * sizeof *q);
	memcpy(s->k + (size_t)row * s->dim, k, (size_t)s->dim * sizeof *k);
	if (i == 0 && s->n == s->cap)
		aggsample_down(s, 0, s->n);
	else
		aggsample_up(s, i);
	return 0;
}

bool aggsample_finite(const float *x, int n)
{
	for (int i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return false;
	return true;
}

int aggsample_add(struct aggsample *s, const struct trace *t, uint64_t line, const char *text, const char *text_b,
		  struct err *e)
{
	if (s->layer >= t->n_layers || s->head >= t->n_heads || s->dim != t->head_dim)
		return err_set(e, "the sample's head L%d H%d (size %d) is not in the model", s->layer, s->head, s->dim);
	const float *q = trace_q(t, s->layer, s->head), *k = trace_k(t, s->layer, s->head);
	for (int i = 0; i < t->n; i++)
		if (aggsample_finite(q + (size_t)i * s->dim, s->dim) && aggsample_finite(k + (size_t)i * s->dim, s->dim) &&
		    aggsample_offer(s, aggsample_key(line, i), line, i, t->tokens[i], text, text_b, q + (size_t)i * s->dim,
				    k + (size_t)i * s->dim, e) < 0)
			return -1;
	return 0;
}

int aggsample_merge(struct aggsample *s, const struct aggsample *o, struct err *e)
{
	if (o->layer != s->layer || o->head != s->head || o->dim != s->dim)
		return err_set(e, "its token sample holds layer %d head %d, not layer %d head %d (--pca-head)", o->layer,
			       o->head, s->layer, s->head);
	for (int i = 0; i < o->n; i++) {
		const struct aggsample_tok *t = &o->tok[i];
		if (aggsample_offer(s, t->key, t->line, t->token, t->piece, t->text, t->text_b, aggsample_q(o, i),
				    aggsample_k(o, i), e) < 0)
			return -1;
	}
	return 0;
}
