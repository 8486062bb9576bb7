/* heatdata.c -- head selection, means, special-token removal, colour scales and pooling (see heatdata.h). */
#include "config.h"

#include "analysis/heatdata.h"
#include "trace/headsummary.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void heatmat_free(struct heatmat *m)
{
	if (!m)
		return;
	free(m->row_tok);
	free(m->col_tok);
	free(m->v);
	free(m->lo);
	free(m->hi);
	free(m->kept);
	memset(m, 0, sizeof *m);
}

/* Allocate OUT's arrays for K rows and columns; -1 on OOM. */
static int heatmat_alloc(int k, struct heatmat *out)
{
	size_t cap = k ? (size_t)k : 1;
	out->row_tok = malloc(cap * sizeof *out->row_tok);
	out->col_tok = malloc(cap * sizeof *out->col_tok);
	out->lo = malloc(cap * sizeof *out->lo);
	out->hi = malloc(cap * sizeof *out->hi);
	out->kept = malloc(cap * sizeof *out->kept);
	out->v = malloc((k ? (size_t)k * k : 1) * sizeof *out->v);
	if (!out->row_tok || !out->col_tok || !out->lo || !out->hi || !out->kept || !out->v)
		return -1;
	return 0;
}

/* The keys query I may see in LAYER, or in any layer for the mean over all layers. */
static void heatmat_range(const struct trace *t, int layer, enum heat_agg agg, int i, int *lo, int *hi)
{
	trace_key_range(t, layer, i, lo, hi);
	if (agg != HEAT_ALL_MEAN)
		return;
	for (int l = 0; l < t->n_layers; l++) {
		int a, b;
		trace_key_range(t, l, i, &a, &b);
		*lo = a < *lo ? a : *lo;
		*hi = b > *hi ? b : *hi;
	}
}

double heat_sink_share(const struct trace *t, int layer, int head, enum heat_agg agg, int row)
{
	if (!t->sinks || row < 0 || row >= t->n)
		return 0;
	int l0 = agg == HEAT_ALL_MEAN ? 0 : layer, l1 = agg == HEAT_ALL_MEAN ? t->n_layers : layer + 1;
	int h0 = agg == HEAT_HEAD ? head : 0, h1 = agg == HEAT_HEAD ? head + 1 : t->n_heads;
	double share = 0;
	for (int l = l0; l < l1; l++)
		for (int h = h0; h < h1; h++)
			share += trace_sink_share(t, trace_attn(t, l, h) + (size_t)row * t->n);
	return share / ((double)(l1 - l0) * (h1 - h0));
}

int heatmat_build(const struct trace *t, int layer, int head, enum heat_agg agg, bool hide_special,
		  struct heatmat *out)
{
	memset(out, 0, sizeof *out);
	int n = t->n;
	size_t nn = (size_t)n * n;
	if (agg == HEAT_HEAD && !hide_special) {
		/* The common case, and the one the grid draws 144 times: a plain copy. */
		out->rows = out->cols = n;
		if (heatmat_alloc(n, out)) {
			heatmat_free(out);
			return -1;
		}
		for (int i = 0; i < n; i++) {
			out->row_tok[i] = out->col_tok[i] = i;
			heatmat_range(t, layer, agg, i, &out->lo[i], &out->hi[i]);
			out->kept[i] = 1;
		}
		memcpy(out->v, trace_attn(t, layer, head), nn * sizeof *out->v);
		return 0;
	}
	/* Accumulate in double: the mean over 144 heads should not depend on summation order. */
	double *acc = calloc(nn ? nn : 1, sizeof *acc);
	int *keep = calloc(n ? (size_t)n : 1, sizeof *keep);
	if (!acc || !keep) {
		free(acc);
		free(keep);
		return -1;
	}
	int l0 = layer, l1 = layer + 1, h0 = head, h1 = head + 1;
	if (agg == HEAT_LAYER_MEAN)
		h0 = 0, h1 = t->n_heads;
	if (agg == HEAT_ALL_MEAN)
		l0 = 0, l1 = t->n_layers, h0 = 0, h1 = t->n_heads;
	for (int l = l0; l < l1 && !trace_recompute_stopped(); l++)
		for (int h = h0; h < h1; h++) {
			const float *a = trace_attn(t, l, h);
			for (size_t i = 0; i < nn; i++)
				acc[i] += a[i];
		}
	double count = (double)(l1 - l0) * (h1 - h0);

	int k = 0;
	for (int i = 0; i < n; i++)
		if (!(hide_special && t->special[i]))
			keep[k++] = i;
	out->rows = out->cols = k;
	if (heatmat_alloc(k, out)) {
		free(acc);
		free(keep);
		heatmat_free(out);
		return -1;
	}
	memcpy(out->row_tok, keep, (size_t)k * sizeof *keep);
	memcpy(out->col_tok, keep, (size_t)k * sizeof *keep);
	for (int r = 0; r < k; r++) {
		const double *src = acc + (size_t)keep[r] * n;
		double sum = 0;
		for (int c = 0; c < k; c++)
			sum += src[keep[c]];
		heatmat_range(t, layer, agg, keep[r], &out->lo[r], &out->hi[r]);
		out->kept[r] = hide_special ? (float)(sum / count) : 1.0f;
		/* Without hiding, a row is the mean of rows that each sum to 1; with hiding, it is
		 * renormalised over the keys that remain. */
		for (int c = 0; c < k; c++) {
			double v = src[keep[c]];
			v = hide_special ? (sum > 0 ? v / sum : 0) : v / count;
			out->v[(size_t)r * k + c] = (float)v;
		}
	}
	free(acc);
	free(keep);
	return 0;
}

int heatmat_build_cross(const struct trace *t, int layer, int head, enum heat_agg agg, bool hide_special,
			struct heatmat *out)
{
	memset(out, 0, sizeof *out);
	if (!t->cross_attn || !t->encoder)
		return -1;
	int n = t->n, nc = t->n_cross;
	const bool *src_special = t->encoder->special;
	size_t cells = (size_t)n * nc;
	double *acc = calloc(cells ? cells : 1, sizeof *acc); /* [n][n_cross] summed over the heads taken */
	int *rk = malloc((n ? (size_t)n : 1) * sizeof *rk), *ck = malloc((nc ? (size_t)nc : 1) * sizeof *ck);
	int big = n > nc ? n : nc;
	if (!acc || !rk || !ck || heatmat_alloc(big, out)) {
		free(acc);
		free(rk);
		free(ck);
		heatmat_free(out);
		return -1;
	}
	int l0 = agg == HEAT_ALL_MEAN ? 0 : layer, l1 = agg == HEAT_ALL_MEAN ? t->n_layers : layer + 1;
	int h0 = agg == HEAT_HEAD ? head : 0, h1 = agg == HEAT_HEAD ? head + 1 : t->n_heads;
	for (int l = l0; l < l1; l++)
		for (int h = h0; h < h1; h++) {
			const float *a = trace_cross_attn(t, l, h);
			for (size_t i = 0; i < cells; i++)
				acc[i] += a[i];
		}
	double count = (double)(l1 - l0) * (h1 - h0);
	int rows = 0, cols = 0;
	for (int i = 0; i < n; i++)
		if (!(hide_special && t->special[i]))
			rk[rows++] = i;
	for (int j = 0; j < nc; j++)
		if (!(hide_special && src_special[j]))
			ck[cols++] = j;
	out->rows = rows, out->cols = cols;
	memcpy(out->row_tok, rk, (size_t)rows * sizeof *rk);
	memcpy(out->col_tok, ck, (size_t)cols * sizeof *ck);
	for (int r = 0; r < rows; r++) {
		const double *src = acc + (size_t)rk[r] * nc;
		double sum = 0;
		for (int c = 0; c < cols; c++)
			sum += src[ck[c]];
		out->lo[r] = 0, out->hi[r] = nc - 1; /* cross-attention masks nothing */
		out->kept[r] = hide_special ? (float)(sum / count) : 1.0f;
		for (int c = 0; c < cols; c++) {
			double v = src[ck[c]];
			out->v[(size_t)r * cols + c] = (float)(hide_special ? (sum > 0 ? v / sum : 0) : v / count);
		}
	}
	free(acc);
	free(rk);
	free(ck);
	return 0;
}

bool heatmat_masked(const struct heatmat *m, int r, int c)
{
	int j = m->col_tok[c];
	return j < m->lo[r] || j > m->hi[r];
}

void heatmat_mask(const struct heatmat *m, float *x)
{
	for (int r = 0; r < m->rows; r++)
		for (int c = 0; c < m->cols; c++)
			if (heatmat_masked(m, r, c))
				x[(size_t)r * m->cols + c] = NAN;
}

int heatmat_find_row(const struct heatmat *m, int tok)
{
	for (int i = 0; i < m->rows; i++)
		if (m->row_tok[i] == tok)
			return i;
	return -1;
}

int heatmat_find_col(const struct heatmat *m, int tok)
{
	for (int i = 0; i < m->cols; i++)
		if (m->col_tok[i] == tok)
			return i;
	return -1;
}

void heatdata_scale_ends(enum heat_scale s, const char **lo, const char **hi)
{
	*lo = s == HEAT_LOG ? "1e-4" : s == HEAT_RANK ? "lowest" : "0";
	*hi = s == HEAT_RANK ? "highest" : "1";
}

const char *heatdata_scale_name(enum heat_scale s)
{
	switch (s) {
	case HEAT_LINEAR:
		return "linear";
	case HEAT_LOG:
		return "log";
	case HEAT_RANK:
		return "rank";
	default:
		return "?";
	}
}

struct ranked {
	float v;
	int col;
};

static int cmp_ranked(const void *a, const void *b)
{
	float x = ((const struct ranked *)a)->v, y = ((const struct ranked *)b)->v;
	return x < y ? -1 : x > y ? 1 : 0;
}

static void rank_row(const float *in, int cols, float *out, struct ranked *tmp)
{
	int m = 0;
	for (int c = 0; c < cols; c++) {
		if (in[c] == in[c])
			tmp[m++] = (struct ranked){in[c], c};
		else
			out[c] = NAN;
	}
	qsort(tmp, (size_t)m, sizeof *tmp, cmp_ranked);
	/* Ties share the mean of their ranks, so equal weights get equal colours. */
	for (int i = 0; i < m;) {
		int j = i;
		while (j + 1 < m && tmp[j + 1].v == tmp[i].v)
			j++;
		float r = m > 1 ? (float)(i + j) / 2.0f / (float)(m - 1) : 1.0f;
		for (int q = i; q <= j; q++)
			out[tmp[q].col] = r;
		i = j + 1;
	}
}

/* V's colour position on the linear or the log scale (not HEAT_RANK, which needs whole rows). */
static inline float scale_value(float v, enum heat_scale scale)
{
	if (v != v)
		return v;
	const float lf = log10f(HEAT_LOG_FLOOR);
	if (scale == HEAT_LOG)
		v = v <= HEAT_LOG_FLOOR ? 0.0f : (log10f(v) - lf) / -lf;
	return v < 0 ? 0 : v > 1 ? 1 : v;
}

void heatdata_scale(const float *in, int rows, int cols, enum heat_scale scale, float *out)
{
	size_t nn = (size_t)rows * cols;
	if (scale == HEAT_RANK) {
		struct ranked *idx = malloc((cols ? (size_t)cols : 1) * sizeof *idx);
		float *row = malloc((cols ? (size_t)cols : 1) * sizeof *row);
		if (!idx || !row) {
			free(idx);
			free(row);
			memmove(out, in, nn * sizeof *out); /* out of memory: fall back to linear */
			return;
		}
		for (int r = 0; r < rows; r++) {
			memcpy(row, in + (size_t)r * cols, (size_t)cols * sizeof *row);
			rank_row(row, cols, out + (size_t)r * cols, idx);
		}
		free(idx);
		free(row);
		return;
	}
	for (size_t i = 0; i < nn; i++)
		out[i] = scale_value(in[i], scale);
}

/* One output cell's pooling: the largest or the mean of the values added, NaN skipped (NaN when all
 * were), summed in double in the order added. */
struct pooled {
	enum heat_pool pool;
	double acc;
	int count;
};

static inline struct pooled pooled_start(enum heat_pool pool)
{
	return (struct pooled){pool, pool == HEAT_POOL_MAX ? -INFINITY : 0, 0};
}

static inline void pooled_add(struct pooled *p, float v)
{
	if (v != v)
		return;
	if (p->pool == HEAT_POOL_MAX)
		p->acc = v > p->acc ? v : p->acc;
	else
		p->acc += v;
	p->count++;
}

static inline float pooled_result(const struct pooled *p)
{
	if (!p->count)
		return NAN;
	return p->pool == HEAT_POOL_MAX ? (float)p->acc : (float)(p->acc / p->count);
}

int heatdata_bin_start(int i, int n, int out_n)
{
	return (int)((long long)i * n / out_n);
}

void heatdata_downsample(const float *in, int rows, int cols, float *out, int out_rows, int out_cols,
			 enum heat_pool pool)
{
	for (int i = 0; i < out_rows; i++) {
		int r0 = heatdata_bin_start(i, rows, out_rows), r1 = heatdata_bin_start(i + 1, rows, out_rows);
		if (r1 <= r0)
			r1 = r0 + 1;
		for (int j = 0; j < out_cols; j++) {
			int c0 = heatdata_bin_start(j, cols, out_cols), c1 = heatdata_bin_start(j + 1, cols, out_cols);
			if (c1 <= c0)
				c1 = c0 + 1;
			struct pooled p = pooled_start(pool);
			for (int r = r0; r < r1; r++)
				for (int c = c0; c < c1; c++)
					pooled_add(&p, in[(size_t)r * cols + c]);
			out[(size_t)i * out_cols + j] = pooled_result(&p);
		}
	}
}

/* The largest of X[0 .. N) that is not NaN (a NaN is never greater), -INFINITY when there is none. In
 * eight running maxima, which compilers turn into vector code: the grid pools every head's matrix. */
static float max_not_nan(const float *x, int n)
{
	float m[8] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY};
	int i = 0;
	for (; i + 8 <= n; i += 8)
		for (int k = 0; k < 8; k++)
			m[k] = x[i + k] > m[k] ? x[i + k] : m[k];
	for (; i < n; i++)
		m[0] = x[i] > m[0] ? x[i] : m[0];
	for (int k = 1; k < 8; k++)
		m[0] = m[k] > m[0] ? m[k] : m[0];
	return m[0];
}

/* One cell of a max-pooled thumbnail on the linear scale: the largest weight of rows R0 .. R1 and
 * columns C0 .. C1 that row sees, each clamped to [0, 1] and all but token SEL's row and column dimmed
 * to a quarter. Clamping and dimming never reorder two weights, so they apply to the largest ones of
 * the bright and the dimmed cells: the same float as scaling every cell, then taking the largest. */
static float thumb_max_linear(const struct trace *t, int layer, const float *a, int r0, int r1, int c0, int c1, int sel)
{
	int n = t->n;
	float bright = -INFINITY, dim = -INFINITY;
	for (int r = r0; r < r1; r++) {
		int lo, hi;
		trace_key_range(t, layer, r, &lo, &hi);
		int from = c0 > lo ? c0 : lo, to = c1 - 1 < hi ? c1 - 1 : hi;
		if (from > to)
			continue;
		const float *row = a + (size_t)r * n;
		float m;
		if (sel < 0 || r == sel) {
			m = max_not_nan(row + from, to - from + 1);
			bright = m > bright ? m : bright;
			continue;
		}
		if (sel >= from && sel <= to) {
			bright = row[sel] > bright ? row[sel] : bright;
			m = max_not_nan(row + from, sel - from);
			dim = m > dim ? m : dim;
			m = max_not_nan(row + sel + 1, to - sel);
		} else {
			m = max_not_nan(row + from, to - from + 1);
		}
		dim = m > dim ? m : dim;
	}
	float res = NAN;
	if (bright > -INFINITY)
		res = scale_value(bright, HEAT_LINEAR);
	if (dim > -INFINITY) {
		float d = scale_value(dim, HEAT_LINEAR) * 0.25f;
		res = res == res && res >= d ? res : d;
	}
	return res;
}

int heatdata_head_thumb(const struct trace *t, int layer, int head, enum heat_scale scale, int sel, float *out,
			int out_rows, int out_cols, enum heat_pool pool)
{
	int n = t->n;
	if (scale == HEAT_RANK)
		return -1;
	if (sel >= n)
		sel = -1;
	const float *a = trace_attn(t, layer, head);
	for (int i = 0; i < out_rows; i++) {
		int r0 = heatdata_bin_start(i, n, out_rows), r1 = heatdata_bin_start(i + 1, n, out_rows);
		if (r1 <= r0)
			r1 = r0 + 1;
		if (r1 > n)
			r1 = n; /* no rows at all (an empty text): every cell NaN */
		for (int j = 0; j < out_cols; j++) {
			int c0 = heatdata_bin_start(j, n, out_cols), c1 = heatdata_bin_start(j + 1, n, out_cols);
			if (c1 <= c0)
				c1 = c0 + 1;
			if (pool == HEAT_POOL_MAX && scale == HEAT_LINEAR) {
				out[(size_t)i * out_cols + j] = thumb_max_linear(t, layer, a, r0, r1, c0, c1, sel);
				continue;
			}
			struct pooled p = pooled_start(pool);
			for (int r = r0; r < r1; r++) {
				int lo, hi; /* the keys row R sees: the others are masked (NaN), which pooling skips */
				trace_key_range(t, layer, r, &lo, &hi);
				int from = c0 > lo ? c0 : lo, to = c1 - 1 < hi ? c1 - 1 : hi;
				for (int c = from; c <= to; c++) {
					float v = scale_value(a[(size_t)r * n + c], scale);
					if (sel >= 0 && r != sel && c != sel) /* the selected token's row and column stay bright */
						v *= 0.25f;
					pooled_add(&p, v);
				}
			}
			out[(size_t)i * out_cols + j] = pooled_result(&p);
		}
	}
	return 0;
}

void heatmat_diff(const struct heatmat *a, const struct heatmat *b, int matching, float *out)
{
	heatmat_diff_rect(a, b, matching, matching, out);
}

void heatmat_diff_rect(const struct heatmat *a, const struct heatmat *b, int rows_matching, int cols_matching,
		       float *out)
{
	for (int r = 0; r < a->rows; r++) {
		int rb = a->row_tok[r] < rows_matching ? heatmat_find_row(b, a->row_tok[r]) : -1;
		for (int c = 0; c < a->cols; c++) {
			size_t k = (size_t)r * a->cols + c;
			int cb = a->col_tok[c] < cols_matching ? heatmat_find_col(b, a->col_tok[c]) : -1;
			out[k] = rb >= 0 && cb >= 0 ? b->v[(size_t)rb * b->cols + cb] - a->v[k] : NAN;
		}
	}
}

void heatdata_diverging(const float *d, int n, float range, float *out)
{
	for (int i = 0; i < n; i++) {
		if (d[i] != d[i]) {
			out[i] = NAN;
			continue;
		}
		float x = range == 1 ? d[i] : d[i] / range; /* range 1: bit-identical to the fixed scale */
		out[i] = x >= 1 ? 1 : x <= -1 ? 0 : (x + 1) / 2;
	}
}

float heatdata_absmax(const float *d, size_t n)
{
	float m = 0;
	for (size_t i = 0; i < n; i++)
		if (fabsf(d[i]) > m) /* false for NaN */
			m = fabsf(d[i]);
	return m;
}

int heatdata_blocks(const struct trace *t, int layer, int head, bool hide, enum heat_pool pool, float *out)
{
	int side = headsummary_side(t, hide);
	const float *mx = headsummary_blocks(t, layer, head, hide, HEADSUM_MAX);
	const float *sum = headsummary_blocks(t, layer, head, hide, HEADSUM_SUM);
	const float *cnt = headsummary_blocks(t, layer, head, hide, HEADSUM_COUNT);
	for (size_t b = 0; b < (size_t)side * side; b++)
		out[b] = cnt[b] <= 0 ? NAN : pool == HEAT_POOL_MAX ? mx[b] : (float)((double)sum[b] / cnt[b]);
	return side;
}

int heatdata_block_of(const struct trace *t, bool hide, int side, int tok)
{
	if (tok < 0 || tok >= t->n || (hide && t->special[tok]) || side <= 0)
		return -1;
	int pos = 0, k = 0;
	for (int i = 0; i < t->n; i++) {
		pos += i < tok && !(hide && t->special[i]);
		k += !(hide && t->special[i]);
	}
	int b = 0; /* the last block starting at or before POS (headsummary_record's binning) */
	while (b + 1 < side && heatdata_bin_start(b + 1, k, side) <= pos)
		b++;
	return b;
}
