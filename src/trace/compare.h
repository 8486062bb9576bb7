/* compare.h -- two texts side by side: how the attention of trace B differs from trace A's.
 *
 * Rows (queries) match by position: all of them when both texts have the same number of tokens
 * (a minimal pair: "too big" / "too small"), otherwise only their common prefix (the tokens with
 * the same ids from the start). Keys past either text count as weight 0. */
#ifndef ATTNSCOPE_COMPARE_H
#define ATTNSCOPE_COMPARE_H

#include <stdbool.h>

#include "trace/trace.h"

/* Tokens from the start with the same id in A and B. */
int compare_prefix(const struct trace *a, const struct trace *b);
/* The matching rows: A->n when A and B have as many tokens, else compare_prefix. */
int compare_rows(const struct trace *a, const struct trace *b);
/* Total variation between the matching rows of head LAYER/HEAD: the mean over them of
 * ½ Σ_j |A_ij − B_ij| (0 = the same attention, 1 = disjoint). NaN when no row matches. */
double compare_tv(const struct trace *a, const struct trace *b, int layer, int head);
/* The same for the cross-attention of two decoders' traces (rows: decoder tokens matched as above; columns:
 * their encoders' tokens, by position, keys past either source counting 0). NaN when no row matches. */
double compare_tv_cross(const struct trace *a, const struct trace *b, int layer, int head);

#endif
