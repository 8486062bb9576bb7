/* compare.c -- what changed between the attention of two texts (see compare.h). */
#include "trace/compare.h"

#include <math.h>

int compare_prefix(const struct trace *a, const struct trace *b)
{
	int k = 0;
	while (k < a->n && k < b->n && a->ids[k] == b->ids[k])
		k++;
	return k;
}

int compare_rows(const struct trace *a, const struct trace *b)
{
	return a->n == b->n ? a->n : compare_prefix(a, b);
}

/* ½ Σ_j |A_ij − B_ij| averaged over the ROWS first rows of PA [.][NA] and PB [.][NB]. */
static double compare_rows_tv(const float *pa, int na, const float *pb, int nb, int rows)
{
	int cols = na > nb ? na : nb;
	double total = 0;
	for (int i = 0; i < rows; i++) {
		double row = 0;
		for (int j = 0; j < cols; j++) {
			double x = j < na ? pa[(size_t)i * na + j] : 0, y = j < nb ? pb[(size_t)i * nb + j] : 0;
			row += fabs(x - y);
		}
		total += row / 2;
	}
	return total / rows;
}

double compare_tv(const struct trace *a, const struct trace *b, int layer, int head)
{
	int rows = compare_rows(a, b);
	if (rows == 0 || layer >= a->n_layers || layer >= b->n_layers || head >= a->n_heads || head >= b->n_heads)
		return NAN;
	return compare_rows_tv(trace_attn(a, layer, head), a->n, trace_attn(b, layer, head), b->n, rows);
}

double compare_tv_cross(const struct trace *a, const struct trace *b, int layer, int head)
{
	int rows = compare_rows(a, b);
	if (rows == 0 || !a->cross_attn || !b->cross_attn || layer >= a->n_layers || layer >= b->n_layers ||
	    head >= a->n_heads || head >= b->n_heads)
		return NAN;
	return compare_rows_tv(trace_cross_attn(a, layer, head), a->n_cross, trace_cross_attn(b, layer, head), b->n_cross,
			       rows);
}
