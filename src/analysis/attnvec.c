/* attnvec.c -- attention rows as vectors: PCA and projections (see attnvec.h). */
#include "analysis/attnvec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/pca.h"

void attnvec_free(struct attnvec *v)
{
	free(v->tok);
	free(v->rows);
	free(v->xy);
	memset(v, 0, sizeof *v);
}

int attnvec_rows(const struct trace *t, int layer, int head, enum attnvec_special special, bool unit,
		 struct attnvec *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	out->xy_norm = 1;
	int n = t->n, m = 0;
	bool hide_special = special != ATTNVEC_KEEP;
	out->tok = malloc((size_t)(n > 0 ? n : 1) * sizeof *out->tok);
	if (!out->tok)
		return err_set(e, "out of memory");
	for (int i = 0; i < n; i++)
		if (!hide_special || !t->special[i])
			out->tok[m++] = i;
	if (m == 0) {
		attnvec_free(out);
		return err_set(e, "no tokens left once special tokens are hidden");
	}
	out->m = m;
	out->rows = malloc((size_t)m * m * sizeof *out->rows);
	double *acc = calloc((size_t)m * m, sizeof *acc); /* [m][m] the heads' sum, in double */
	if (!out->rows || !acc) {
		free(acc);
		attnvec_free(out);
		return err_set(e, "out of memory");
	}
	/* Head by head: a compact trace (long texts) recomputes a head each time it is not among the
	 * last few asked for, so the heads are the outer loop. The sums add the heads in the same
	 * order as per cell. */
	int h0 = head < 0 ? 0 : head, h1 = head < 0 ? t->n_heads : head + 1;
	for (int h = h0; h < h1 && !trace_recompute_stopped(); h++) {
		const float *p = trace_attn(t, layer, h);
		for (int a = 0; a < m; a++)
			for (int b = 0; b < m; b++)
				acc[(size_t)a * m + b] += p[(size_t)out->tok[a] * n + out->tok[b]];
	}
	for (int a = 0; a < m; a++) {
		double sum = 0, sq = 0, *row = acc + (size_t)a * m;
		for (int b = 0; b < m; b++) {
			row[b] /= h1 - h0;
			sum += row[b];
		}
		if (special == ATTNVEC_DROP_RENORM && sum > 0)
			for (int b = 0; b < m; b++)
				row[b] /= sum;
		for (int b = 0; b < m; b++)
			sq += row[b] * row[b];
		for (int b = 0; b < m; b++)
			out->rows[(size_t)a * m + b] = (float)(unit && sq > 0 ? row[b] / sqrt(sq) : row[b]);
	}
	free(acc);
	return 0;
}

int attnvec_pca(struct attnvec *v, struct err *e)
{
	free(v->xy);
	v->xy_norm = 1;
	v->xy = malloc((size_t)v->m * 2 * sizeof *v->xy);
	if (!v->xy)
		return err_set(e, "out of memory");
	if (pca_2d(v->rows, v->m, v->m, v->xy, v->explained, e)) {
		free(v->xy);
		v->xy = NULL;
		return -1;
	}
	return 0;
}

void attnvec_scale_xy(struct attnvec *v)
{
	double ss = 0;
	for (int i = 0; v->xy && i < 2 * v->m; i++)
		ss += v->xy[i] * v->xy[i];
	if (!(ss > 0))
		return;
	v->xy_norm = sqrt(ss);
	for (int i = 0; i < 2 * v->m; i++)
		v->xy[i] /= v->xy_norm;
}

int attnvec_find(const struct attnvec *v, int tok)
{
	for (int i = 0; i < v->m; i++)
		if (v->tok[i] == tok)
			return i;
	return -1;
}

/* The rows of the K tokens TOKS summed into A[v->m]; -1 when one of them is not among the rows. */
static int attnvec_sum_rows(const struct attnvec *v, const int *toks, int k, double *a)
{
	for (int i = 0; i < v->m; i++)
		a[i] = 0;
	for (int j = 0; j < k; j++) {
		int r = attnvec_find(v, toks[j]);
		if (r < 0)
			return -1;
		for (int i = 0; i < v->m; i++)
			a[i] += v->rows[(size_t)r * v->m + i];
	}
	return k > 0 ? 0 : -1;
}

int attnvec_project(const struct attnvec *v, int tok_a, int tok_b, struct attnvec_proj *out)
{
	return attnvec_project_set(v, &tok_a, 1, tok_b, out);
}

int attnvec_project_set(const struct attnvec *v, const int *toks_a, int k, int tok_b, struct attnvec_proj *out)
{
	memset(out, 0, sizeof *out);
	int ib = attnvec_find(v, tok_b);
	double *a = malloc((size_t)(v->m > 0 ? v->m : 1) * sizeof *a);
	if (!a || ib < 0 || attnvec_sum_rows(v, toks_a, k, a) < 0) {
		free(a);
		return -1;
	}
	const float *b = v->rows + (size_t)ib * v->m;
	double ab = 0, aa = 0, bb = 0;
	for (int i = 0; i < v->m; i++) {
		ab += a[i] * b[i];
		aa += a[i] * a[i];
		bb += (double)b[i] * b[i];
	}
	free(a);
	out->norm_a = sqrt(aa);
	out->norm_b = sqrt(bb);
	out->coef = bb > 0 ? ab / bb : 0;
	out->cos = aa > 0 && bb > 0 ? ab / (out->norm_a * out->norm_b) : 0;
	double along = out->norm_b > 0 ? ab / out->norm_b : 0;   /* A's component along B */
	double perp2 = aa - along * along;                         /* |A⊥|² */
	out->b[0] = out->norm_b;
	out->a[0] = along;
	out->a[1] = perp2 > 0 ? sqrt(perp2) : 0;
	out->p[0] = along;
	return 0;
}

int attnvec_project_xy(const struct attnvec *v, int tok_a, int tok_b, struct attnvec_proj *out)
{
	return attnvec_project_xy_set(v, &tok_a, 1, tok_b, out);
}

int attnvec_project_xy_set(const struct attnvec *v, const int *toks_a, int na, int tok_b, struct attnvec_proj *out)
{
	memset(out, 0, sizeof *out);
	int ib = attnvec_find(v, tok_b);
	if (ib < 0 || !v->xy || na < 1)
		return -1;
	double xa[2] = {0, 0}; /* PCA is affine: the summed row's point is along the sum of the points */
	for (int j = 0; j < na; j++) {
		int ia = attnvec_find(v, toks_a[j]);
		if (ia < 0)
			return -1;
		xa[0] += v->xy[2 * ia], xa[1] += v->xy[2 * ia + 1];
	}
	double la = hypot(xa[0], xa[1]), lb = hypot(v->xy[2 * ib], v->xy[2 * ib + 1]);
	if (!(la > 0) || !(lb > 0))
		return -1;
	for (int k = 0; k < 2; k++) {
		out->a[k] = xa[k] / la;
		out->b[k] = v->xy[2 * ib + k] / lb;
	}
	out->coef = out->cos = out->a[0] * out->b[0] + out->a[1] * out->b[1];
	out->norm_a = out->norm_b = 1;
	for (int k = 0; k < 2; k++)
		out->p[k] = out->coef * out->b[k];
	return 0;
}
