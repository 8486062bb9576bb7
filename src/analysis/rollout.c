/* rollout.c -- attention rollout through the layers (see rollout.h). */
#include "analysis/rollout.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

int rollout_compute(const struct trace *t, float *out, struct err *e)
{
	int n = t->n, L = t->n_layers, H = t->n_heads;
	if (n <= 0 || L <= 0)
		return 0;
	size_t nn = (size_t)n * n;
	double *a = malloc(nn * sizeof *a);    /* [n][n] Â_l: heads averaged, residual added */
	double *r = malloc(nn * sizeof *r);    /* [n][n] R_(l-1) */
	double *nr = malloc(nn * sizeof *nr);  /* [n][n] R_l */
	if (!a || !r || !nr) {
		free(a), free(r), free(nr);
		return err_set(e, "out of memory");
	}
	for (int l = 0; l < L; l++) {
		if (trace_recompute_stopped()) {
			free(a), free(r), free(nr);
			return err_set(e, "stopped");
		}
		memset(a, 0, nn * sizeof *a);
		for (int h = 0; h < H; h++) {
			const float *p = trace_attn(t, l, h);
			for (size_t x = 0; x < nn; x++)
				a[x] += p[x];
		}
		for (int i = 0; i < n; i++) {
			double *row = a + (size_t)i * n, s = 0;
			for (int j = 0; j < n; j++) {
				row[j] = 0.5 * row[j] / H + (i == j ? 0.5 : 0);
				s += row[j];
			}
			for (int j = 0; j < n; j++)
				row[j] /= s; /* s >= 0.5: the identity term keeps it positive */
		}
		if (l == 0)
			memcpy(nr, a, nn * sizeof *nr);
		else
			cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, r, n, 0.0, nr, n);
		float *o = out + (size_t)l * nn;
		for (size_t x = 0; x < nn; x++)
			o[x] = (float)nr[x];
		double *tmp = r;
		r = nr, nr = tmp;
	}
	free(a), free(r), free(nr);
	return 0;
}
