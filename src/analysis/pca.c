/* pca.c -- principal component analysis to two dimensions with LAPACK's dsyevd (see pca.h). */
#include "analysis/pca.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* LAPACK's symmetric eigensolver (divide and conquer), as OpenBLAS exports it. Eigenvalues come
 * out ascending in W; with JOBZ 'V' the eigenvectors overwrite A (column-major, one per column).
 * The two trailing lengths are the hidden CHARACTER arguments of the gfortran calling convention. */
extern void dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w,
		    double *work, const int *lwork, int *iwork, const int *liwork, int *info, size_t jobz_len,
		    size_t uplo_len);

void pca_free(struct pca2 *p)
{
	if (!p)
		return;
	free(p->mean);
	free(p->axis);
	p->mean = p->axis = NULL;
}

/* Flip AXIS[d] so that its largest-magnitude component (the first on a tie) is positive. */
static void pca_fix_sign(double *axis, int d)
{
	int best = 0;
	for (int j = 1; j < d; j++)
		if (fabs(axis[j]) > fabs(axis[best]))
			best = j;
	if (axis[best] < 0)
		for (int j = 0; j < d; j++)
			axis[j] = -axis[j];
}

int pca_fit(const float *x, int n, int d, int ldx, struct pca2 *p, struct err *e)
{
	memset(p, 0, sizeof *p);
	if (n < 1 || d < 1)
		return err_set(e, "PCA needs at least one row of one dimension");
	p->d = d;
	p->mean = calloc((size_t)d, sizeof *p->mean);
	p->axis = calloc((size_t)2 * d, sizeof *p->axis);
	double *cov = calloc((size_t)d * d, sizeof *cov);   /* [d][d], symmetric */
	double *w = calloc((size_t)d, sizeof *w);           /* [d] eigenvalues, ascending */
	double *row = calloc((size_t)d, sizeof *row);       /* [d] one centred row */
	if (!p->mean || !p->axis || !cov || !w || !row) {
		free(cov), free(w), free(row);
		pca_free(p);
		return err_set(e, "out of memory");
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < d; j++)
			p->mean[j] += x[(size_t)i * ldx + j];
	for (int j = 0; j < d; j++)
		p->mean[j] /= n;
	/* Covariance (population, /n); the upper triangle is enough for dsyevd, but fill both. */
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < d; j++)
			row[j] = x[(size_t)i * ldx + j] - p->mean[j];
		for (int a = 0; a < d; a++)
			for (int b = a; b < d; b++)
				cov[(size_t)a * d + b] += row[a] * row[b];
	}
	for (int a = 0; a < d; a++)
		for (int b = a; b < d; b++) {
			cov[(size_t)a * d + b] /= n;
			cov[(size_t)b * d + a] = cov[(size_t)a * d + b];
		}
	for (int a = 0; a < d; a++)
		p->total_var += cov[(size_t)a * d + a];

	/* Workspace query, then the decomposition. */
	int info = 0, lwork = -1, liwork = -1, iwq = 0;
	double wq = 0;
	dsyevd_("V", "U", &d, cov, &d, w, &wq, &lwork, &iwq, &liwork, &info, 1, 1);
	lwork = info == 0 ? (int)wq : 0;
	liwork = info == 0 ? iwq : 0;
	double *work = lwork > 0 ? malloc((size_t)lwork * sizeof *work) : NULL;
	int *iwork = liwork > 0 ? malloc((size_t)liwork * sizeof *iwork) : NULL;
	if (info != 0 || !work || !iwork) {
		free(work), free(iwork), free(cov), free(w), free(row);
		pca_free(p);
		return info != 0 ? err_set(e, "LAPACK dsyevd workspace query failed (info %d)", info)
				 : err_set(e, "out of memory");
	}
	dsyevd_("V", "U", &d, cov, &d, w, work, &lwork, iwork, &liwork, &info, 1, 1);
	free(work);
	free(iwork);
	if (info != 0) {
		free(cov), free(w), free(row);
		pca_free(p);
		return err_set(e, "LAPACK dsyevd failed (info %d)", info);
	}
	/* Column c of the column-major result is row c of our row-major buffer. */
	for (int k = 0; k < 2 && k < d; k++) {
		int c = d - 1 - k;
		memcpy(p->axis + (size_t)k * d, cov + (size_t)c * d, d * sizeof(double));
		pca_fix_sign(p->axis + (size_t)k * d, d);
		p->var[k] = w[c] > 0 ? w[c] : 0; /* rounding can leave tiny negatives */
		p->explained[k] = p->total_var > 0 ? p->var[k] / p->total_var : 0;
	}
	free(cov), free(w), free(row);
	return 0;
}

void pca_project(const struct pca2 *p, const float *x, int n, int ldx, double *out)
{
	for (int i = 0; i < n; i++) {
		double s0 = 0, s1 = 0;
		for (int j = 0; j < p->d; j++) {
			double c = x[(size_t)i * ldx + j] - p->mean[j];
			s0 += c * p->axis[j];
			s1 += c * p->axis[p->d + j];
		}
		out[2 * i] = s0;
		out[2 * i + 1] = s1;
	}
}

void pca_project_dir(const struct pca2 *p, const double *v, double out[2])
{
	double s0 = 0, s1 = 0;
	for (int j = 0; j < p->d; j++) {
		s0 += v[j] * p->axis[j];
		s1 += v[j] * p->axis[p->d + j];
	}
	out[0] = s0;
	out[1] = s1;
}

int pca_2d(const float *x, int n, int d, double *out, double explained[2], struct err *e)
{
	struct pca2 p;
	if (pca_fit(x, n, d, d, &p, e))
		return -1;
	pca_project(&p, x, n, d, out);
	if (explained) {
		explained[0] = p.explained[0];
		explained[1] = p.explained[1];
	}
	pca_free(&p);
	return 0;
}
