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

double compare_tv(const struct trace *a, const struct trace *b, int layer, int head)
{
	int rows = compare_rows(a, b), cols = a->n > b->n ? a->n : b->n;
	if (rows == 0 || layer >= a->n_layers || layer >= b->n_layers || head >= a->n_heads || head >= b->n_heads)
		return NAN;
	const float *pa = trace_attn(a, layer, head), *pb = trace_attn(b, layer, head);
	double total = 0;
	for (int i = 0; i < rows; i++) {
		double row = 0;
		for (int j = 0; j < cols; j++) {
			double x = j < a->n ? pa[(size_t)i * a->n + j] : 0, y = j < b->n ? pb[(size_t)i * b->n + j] : 0;
			row += fabs(x - y);
		}
		total += row / 2;
	}
	return total / rows;
}
