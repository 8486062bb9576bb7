/* attnvec.h -- attention rows as vectors: each token's row of attention weights is a point in a
 * space with one axis per key token. Tokens that attend alike sit close; PCA shows the layout in
 * two dimensions, and projecting one token's row onto another's, layer by layer, shows where
 * (say) "it" comes to attend like "book".
 *
 * Rows are the mean over a layer's heads or one head's; special tokens can be dropped (their rows
 * and columns), the remaining rows left as they are (notebook 000, attention in vector space:
 * attn[:, 1:-1, 1:-1]) or renormalised to sum 1; rows can be scaled to unit length; the PCA
 * coordinates can be divided by their Frobenius norm (the notebook's to_xy_coords(norm=True)). */
#ifndef ATTNSCOPE_ATTNVEC_H
#define ATTNSCOPE_ATTNVEC_H

#include <stdbool.h>

#include "base/err.h"
#include "trace/trace.h"

struct attnvec {
	int m;               /* rows (tokens) kept */
	int *tok;            /* [m] trace index of each kept token */
	float *rows;         /* [m][m] the rows, over the kept keys */
	double *xy;          /* [m][2] centred PCA coordinates (after attnvec_pca), else NULL */
	double explained[2]; /* share of the variance on each PCA axis */
	double xy_norm;      /* what xy was divided by (attnvec_scale_xy), 1 until then */
};

/* What happens to special tokens ([CLS], [SEP]). */
enum attnvec_special {
	ATTNVEC_KEEP,        /* every row and column */
	ATTNVEC_DROP,        /* their rows and columns dropped, the rest as they are (notebook 000) */
	ATTNVEC_DROP_RENORM, /* dropped, each remaining row renormalised to sum 1 (hide-special) */
};

/* The rows of LAYER: HEAD < 0 for the mean over the layer's heads. -1 on OOM or when every
 * token is dropped. Free with attnvec_free. */
int attnvec_rows(const struct trace *t, int layer, int head, enum attnvec_special special, bool unit,
		 struct attnvec *out, struct err *e);
/* PCA of the rows to two dimensions (fills xy and explained). */
int attnvec_pca(struct attnvec *v, struct err *e);
/* Divide the PCA coordinates by their Frobenius norm √(Σ x² + y²), as notebook 000 does; nothing
 * when they are all 0. */
void attnvec_scale_xy(struct attnvec *v);
void attnvec_free(struct attnvec *v);
/* Position of trace token TOK among the kept rows, -1 when dropped. */
int attnvec_find(const struct attnvec *v, int tok);

/* Token A's row projected onto token B's. */
struct attnvec_proj {
	double coef;        /* A·B / |B|²: the projection is coef · B */
	double cos;         /* cosine of the angle between A and B (0 when either is zero) */
	double norm_a, norm_b;
	/* Exact 2-D coordinates in the plane of A and B: x along B, y along the part of A orthogonal
	 * to B (so B = (|B|, 0), A = (A·B/|B|, |A⊥|), the projection = (A·B/|B|, 0)). */
	double a[2], b[2], p[2];
};
/* -1 when A or B is not among the rows. */
int attnvec_project(const struct attnvec *v, int tok_a, int tok_b, struct attnvec_proj *out);
/* The same with A the sum of the rows of the NA tokens TOKS_A (several tokens combined). */
int attnvec_project_set(const struct attnvec *v, const int *toks_a, int na, int tok_b, struct attnvec_proj *out);
/* Notebook 000's projection, in the plane of the PCA coordinates (after attnvec_pca): A's and B's
 * points scaled to unit length, a and b, and the projection (a·b/|b|²)b; coef = cos = a·b, both
 * norms 1, and a, b, p stay on the PCA axes (b is not turned onto x). -1 when A or B is not among
 * the rows or sits at the origin. */
int attnvec_project_xy(const struct attnvec *v, int tok_a, int tok_b, struct attnvec_proj *out);
/* The same with A the sum of the NA points of TOKS_A (the direction of their summed rows, the
 * coordinates being centred: of the mean row of the set less the mean row of all). */
int attnvec_project_xy_set(const struct attnvec *v, const int *toks_a, int na, int tok_b, struct attnvec_proj *out);

#endif
