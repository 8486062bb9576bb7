/* words.c -- pieces merged into words, with Clark et al.'s convention (see words.h). */
#include "config.h"

#include "analysis/words.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/rollout.h"
#include "trace/tokentext.h"

int words_split(const struct trace *t, int *word_of)
{
	int nw = 0;
	for (int i = 0; i < t->n; i++) {
		char buf[256];
		bool cont = false;
		tokentext_text(t, i, buf, sizeof buf, &cont);
		/* tokentext_text never continues a special token or the piece after one */
		if (i == 0 || !cont || t->special[i])
			nw++;
		word_of[i] = nw - 1;
	}
	return nw;
}

void words_starts(const int *word_of, int n, int nw, int *word_start)
{
	for (int w = 0; w <= nw; w++)
		word_start[w] = n;
	for (int i = n - 1; i >= 0; i--)
		word_start[word_of[i]] = i;
}

void words_merge_rect(const float *a, int cols, const int *row_start, int nr, const int *col_of, int nc, float *out)
{
	memset(out, 0, (size_t)nr * nc * sizeof *out);
	for (int w = 0; w < nr; w++) {
		int lo = row_start[w], hi = row_start[w + 1];
		float *row = out + (size_t)w * nc;
		for (int p = lo; p < hi; p++)
			for (int q = 0; q < cols; q++)
				row[col_of[q]] += a[(size_t)p * cols + q];
		for (int v = 0; v < nc; v++)
			row[v] /= (float)(hi - lo);
	}
}

void words_merge(const float *a, int n, const int *word_of, const int *word_start, int nw, float *out)
{
	words_merge_rect(a, n, word_start, nw, word_of, nw, out);
}

void words_mean_rows(const float *x, int d, const int *word_start, int nw, float *out)
{
	for (int w = 0; w < nw; w++) {
		int lo = word_start[w], hi = word_start[w + 1];
		float *o = out + (size_t)w * d;
		memset(o, 0, (size_t)d * sizeof *o);
		for (int p = lo; p < hi; p++)
			for (int j = 0; j < d; j++)
				o[j] += x[(size_t)p * d + j];
		for (int j = 0; j < d; j++)
			o[j] /= (float)(hi - lo);
	}
}

/* Average every [n][d] block of SRC (BLOCKS of them) into the [nw][d] blocks of DST. */
static void words_mean_blocks(const float *src, float *dst, size_t blocks, int n, int d, const int *word_start, int nw)
{
	if (!src || !dst)
		return;
	for (size_t b = 0; b < blocks; b++)
		words_mean_rows(src + b * n * d, d, word_start, nw, dst + b * nw * d);
}

/* The readable text of word W: its pieces' texts joined. */
static char *words_text(const struct trace *t, const int *word_start, int w)
{
	size_t cap = 64, len = 0;
	char *s = malloc(cap);
	if (!s)
		return NULL;
	s[0] = 0;
	for (int p = word_start[w]; p < word_start[w + 1]; p++) {
		char buf[256];
		bool cont;
		tokentext_text(t, p, buf, sizeof buf, &cont);
		size_t k = strlen(buf);
		if (len + k + 1 > cap) {
			cap = 2 * (len + k + 1);
			char *grown = realloc(s, cap);
			if (!grown) {
				free(s);
				return NULL;
			}
			s = grown;
		}
		memcpy(s + len, buf, k + 1);
		len += k;
	}
	return s;
}

/* attn_fill of a compact trace of words: the pieces' head, recomputed, merged into words. */
static void words_fill(const struct trace *w, int layer, int head, float *out)
{
	const struct trace *t = w->source;
	words_merge(trace_attn(t, layer, head), t->n, w->word_of, w->word_start, w->n, out);
}

/* The words of T's own stack (an encoder-decoder's decoder and cross-attention: words_build). */
static struct trace *words_build_one(const struct trace *t)
{
	int n = t->n;
	int *word_of = malloc((n > 0 ? (size_t)n : 1) * sizeof *word_of);
	if (!word_of)
		return NULL;
	int nw = words_split(t, word_of);
	struct trace_shape shape = {t->n_layers, t->n_heads, t->n_kv_heads > 0 ? t->n_kv_heads : t->n_heads,
				    t->head_dim, t->hidden, nw, t->rotary && t->q_raw, trace_compact(t), trace_v_dim(t), false};
	struct trace *w = trace_new_shaped(&shape);
	int *word_start = malloc((size_t)(nw + 1) * sizeof *word_start);
	if (!w || !word_start) {
		free(word_of);
		free(word_start);
		trace_free(w);
		return NULL;
	}
	words_starts(word_of, n, nw, word_start);
	w->word_of = word_of;
	w->word_start = word_start;
	w->source = t;
	w->truncated = t->truncated;
	w->nonfinite_layer = t->nonfinite_layer;
	/* the neuron view's scores of a word's mean q and k take the model's terms too (ALiBi, NoPE) */
	if (trace_copy_model(w, t) < 0) {
		trace_free(w);
		return NULL;
	}
	for (int i = 0; i < nw; i++) {
		int p = word_start[i];
		w->tokens[i] = words_text(t, word_start, i);
		if (!w->tokens[i]) {
			trace_free(w);
			return NULL;
		}
		w->ids[i] = t->ids[p];
		w->type_ids[i] = t->type_ids[p];
		w->special[i] = t->special[p];
	}
	size_t lh = (size_t)t->n_layers * t->n_heads, lkv = (size_t)t->n_layers * w->n_kv_heads;
	if (w->attn) /* else merged from the pieces when a head is read */
		for (size_t b = 0; b < lh; b++)
			words_merge(t->attn + b * n * n, n, word_of, word_start, nw, w->attn + b * nw * nw);
	w->attn_fill = words_fill;
	words_mean_blocks(t->q, w->q, lh, n, t->head_dim, word_start, nw);
	words_mean_blocks(t->k, w->k, lkv, n, t->head_dim, word_start, nw);
	words_mean_blocks(t->v, w->v, lkv, n, trace_v_dim(t), word_start, nw);
	words_mean_blocks(t->q_raw, w->q_raw, lh, n, t->head_dim, word_start, nw);
	words_mean_blocks(t->k_raw, w->k_raw, lkv, n, t->head_dim, word_start, nw);
	words_mean_blocks(t->hidden_states, w->hidden_states, (size_t)t->n_layers + 1, n, t->hidden, word_start, nw);
	return w;
}

/* An encoder-decoder's extras of a trace of words W of pieces T: the context rows (T->context [n_layers][n][width])
 * averaged per word; NULL stays NULL. -1 when out of memory. */
static int words_context(struct trace *w, const struct trace *t, const float *ctx, float **out, int width)
{
	if (!ctx)
		return 0;
	*out = malloc(((size_t)t->n_layers * w->n * width + 1) * sizeof **out);
	if (!*out)
		return -1;
	words_mean_blocks(ctx, *out, (size_t)t->n_layers, t->n, width, w->word_start, w->n);
	return 0;
}

/* The decoder's words D (of pieces T->decoder) reading the encoder's words W (of pieces T): the cross-attention
 * merged as attention is -- target words down (a word's rows averaged), source words across (summed) --,
 * its queries and contexts averaged over a target word's pieces, its keys and values over a source word's
 * (the labels stay the pieces', read through ->source). -1 when out of memory. */
static int words_cross(struct trace *d, struct trace *w, const struct trace *t)
{
	const struct trace *p = t->decoder;
	size_t lh = (size_t)p->n_layers * p->n_heads;
	int width = p->n_heads * p->head_dim;
	if (trace_alloc_cross(d, w->n) < 0 || words_context(w, t, t->context, &w->context, t->n_heads * trace_v_dim(t)) < 0 ||
	    words_context(d, p, p->context, &d->context, width) < 0)
		return -1;
	for (size_t b = 0; b < lh; b++)
		words_merge_rect(p->cross_attn + b * p->n * p->n_cross, p->n_cross, d->word_start, d->n, w->word_of, w->n,
				 d->cross_attn + b * d->n * d->n_cross);
	words_mean_blocks(p->cross_q, d->cross_q, lh, p->n, p->head_dim, d->word_start, d->n);
	words_mean_blocks(p->cross_k, d->cross_k, lh, p->n_cross, p->head_dim, w->word_start, w->n);
	words_mean_blocks(p->cross_v, d->cross_v, lh, p->n_cross, p->head_dim, w->word_start, w->n);
	words_mean_blocks(p->cross_context, d->cross_context, (size_t)p->n_layers, p->n, width, d->word_start, d->n);
	return 0;
}

struct trace *words_build(const struct trace *t)
{
	struct trace *w = words_build_one(t);
	if (!w || !t->decoder)
		return w;
	/* an encoder-decoder: its decoder's words too, hung on the encoder's as the pieces' are */
	struct trace *d = words_build_one(t->decoder);
	if (!d) {
		trace_free(w);
		return NULL;
	}
	w->decoder = d;
	d->encoder = w;
	if (words_cross(d, w, t) < 0) {
		trace_free(w);
		return NULL;
	}
	return w;
}

int words_rollout(const struct trace *w, float *out, struct err *e)
{
	const struct trace *t = w->source;
	size_t nn = (size_t)t->n * t->n, ww = (size_t)w->n * w->n;
	float *pieces = malloc((size_t)t->n_layers * (nn ? nn : 1) * sizeof *pieces);
	if (!pieces)
		return err_set(e, "out of memory");
	if (rollout_compute(t, pieces, e)) {
		free(pieces);
		return -1;
	}
	for (int l = 0; l < t->n_layers; l++)
		words_merge(pieces + l * nn, t->n, w->word_of, w->word_start, w->n, out + l * ww);
	free(pieces);
	return 0;
}

int words_of_piece(const struct trace *w, int p)
{
	if (!w || !w->word_of || p < 0 || p >= w->source->n)
		return p;
	return w->word_of[p];
}

int words_first_piece(const struct trace *w, int i)
{
	if (!w || !w->word_start || i < 0 || i >= w->n)
		return i;
	return w->word_start[i];
}
