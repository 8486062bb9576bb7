/* pca.h -- principal component analysis of row vectors down to two dimensions.
 *
 * The rows are centred, their covariance is formed in double precision and decomposed with
 * LAPACK's dsyevd (from OpenBLAS). The two leading eigenvectors are the axes; each axis's sign
 * is fixed so that its largest-magnitude component is positive (the first such component on a
 * tie), which makes the picture the same from run to run. Explained variance is each axis's
 * eigenvalue over the sum of all eigenvalues. */
#ifndef ATTNSCOPE_PCA_H
#define ATTNSCOPE_PCA_H

#include "base/err.h"

struct pca2 {
	int d;              /* dimension of the input rows */
	double *mean;       /* [d] the mean row that was subtracted */
	double *axis;       /* [2][d] unit principal axes, leading first; zero when d < 2 for the second */
	double var[2];      /* variance (population, /n) along each axis */
	double explained[2];/* var[k] / total variance; 0 when the rows do not vary */
	double total_var;   /* sum of all eigenvalues = trace of the covariance */
};

/* Fit the two leading axes to X[n][d] (row stride LDX floats, >= d). N >= 1, D >= 1.
 * -1 with a message on OOM or when LAPACK fails. Free with pca_free. */
int pca_fit(const float *x, int n, int d, int ldx, struct pca2 *p, struct err *e);
/* Coordinates of X[n][d] (stride LDX) on P's axes: OUT[n][2] = (x - mean) · axis. */
void pca_project(const struct pca2 *p, const float *x, int n, int ldx, double *out);
/* Coordinates of one vector on P's axes, without subtracting the mean (for drawing directions,
 * e.g. a projection vector whose tail sits at the origin). */
void pca_project_dir(const struct pca2 *p, const double *v, double out[2]);
void pca_free(struct pca2 *p);

/* Convenience: fit and project in one call. OUT[n][2]; EXPLAINED (may be NULL) gets two fractions. */
int pca_2d(const float *x, int n, int d, double *out, double explained[2], struct err *e);

#endif
