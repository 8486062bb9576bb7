/* stats.h -- descriptive statistics over a trace's queries, keys and attention weights.
 *
 * Pure functions, no terminal: per-head query/key descriptives; same-head vs different-head q·k
 * products for one query token; groups of attention weights (the final token's weights on the
 * tokens before it, the other tokens' self-attention, the first token's self-attention) pooled
 * over a layer's heads; histograms and Gaussian kernel densities; and the AttentionViz
 * normalisation of a head's queries and keys, which moves and scales them without changing the
 * attention they produce.
 *
 * Each sample has the definition of notebook 004 (per-head query/key analysis of GPT-2, in
 * shared/seeds) and attnscope's own variant; tests/tools/ref_notebooks.py implements the notebook's
 * cells. Standard deviations are population ones (divide by n, numpy's default, which the notebook
 * uses on its numpy arrays) except where torch's std() is (Bessel's n − 1). */
#ifndef ATTNSCOPE_STATS_H
#define ATTNSCOPE_STATS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "trace/trace.h"

/* Mean and population standard deviation of X[n] (both 0 when N is 0). */
void stats_mean_std(const double *x, size_t n, double *mean, double *std);
/* Pearson correlation of X[n] and Y[n]; NaN when either does not vary or N < 2. */
double stats_corr(const double *x, const double *y, size_t n);

/* Mean ± std of one head's query and key activations over tokens × dimensions. */
struct stats_qk_desc {
	double q_mean, q_std, k_mean, k_std;
	size_t count;  /* values per mean: tokens used × head_dim */
};
/* OUT[n_heads] for LAYER of T. With SKIP_FIRST the first token is left out (it is often an
 * outlier: [CLS], or GPT-2's attention sink), unless it is the only token. With BESSEL the std
 * divides by count − 1, as torch's q[1:].std() in notebook 004 (0 when count < 2); else by count. */
void stats_qk_desc(const struct trace *t, int layer, bool skip_first, bool bessel, struct stats_qk_desc *out);

/* Raw (unscaled) q·k products of one query token against keys, within and across heads. Under
 * grouped-query attention "same head" is the key head the query head reads, "different" every
 * other key head. */
struct stats_dots {
	double *same;  /* [n_same] q_h(query) · k_h(j) for every head h and key j (k_h: the key/value head h reads) */
	size_t n_same;
	double *diff;  /* [n_diff] q_h(query) · k_g(j) for every head h, key/value head g other than the one h
	                * reads, and key j: H·(H−1) pairs, or H·(KV−1) under grouped-query attention */
	size_t n_diff;
	int n_keys;    /* keys j used per pair of heads */
	int key_lo, key_hi; /* the first and last key used (-1 when none) */
};
/* Which keys j the query is multiplied with. */
enum stats_dots_keys {
	STATS_DOTS_NOTEBOOK, /* those the query sees except the first token (the attention sink, whose
	                      * products swamp the rest) and the query itself: notebook 004's
	                      * Q[-1] @ K[1:-1].T, keys 1 … n−2 of the last token */
	STATS_DOTS_VISIBLE,  /* every key the query sees (trace_key_range) */
};
/* -1 on OOM or a bad query index. Free with stats_dots_free. */
int stats_qk_dots(const struct trace *t, int layer, int query, enum stats_dots_keys keys, struct stats_dots *out,
		  struct err *e);
void stats_dots_free(struct stats_dots *d);

/* Groups of attention weights, pooled over the heads of one layer. */
enum stats_group {
	STATS_FINAL_PREV,  /* the last token's weights on every earlier token: a[n-1][j], j < n-1 */
	STATS_OTHER_SELF,  /* self-attention of the tokens after the first: a[i][i], 0 < i <= n-1 (notebook
	                    * 004's diag(a[1:,1:])), or 0 < i < n-1 without the last (attnscope's) */
	STATS_FIRST_SELF,  /* the first token's self-attention a[0][0] (1 in a causal model) */
	STATS_GROUP_COUNT
};
struct stats_groups {
	double *v[STATS_GROUP_COUNT];  /* [n[g]] weights of group g, heads in order, then tokens */
	size_t n[STATS_GROUP_COUNT];
};
/* SELF_LAST: the last token's self-attention is in STATS_OTHER_SELF (the notebook's definition). */
int stats_attn_groups(const struct trace *t, int layer, bool self_last, struct stats_groups *out, struct err *e);
void stats_groups_free(struct stats_groups *g);
const char *stats_group_name(enum stats_group g);

/* COUNT[bins] = how many of X[n] fall in each of BINS equal bins over [LO, HI]; a value equal to
 * HI counts in the last bin (as numpy.histogram). Values outside or NaN are not counted; the
 * return value is how many were counted. */
size_t stats_histogram(const double *x, size_t n, double lo, double hi, int bins, int *count);

/* Gaussian kernel density of X[n] evaluated at GRID[m] into Y[m], each value divided by the
 * largest over the grid (so the curve peaks at 1, as notebook 004 scales its curves), exactly as
 * scipy.stats.gaussian_kde(x)(grid) / max: Scott's bandwidth h = s · n^(-1/5), s the sample
 * standard deviation (n − 1). *BANDWIDTH (may be NULL) receives h. Returns NULL, or why there is
 * no density ("fewer than 2 values", "all values equal", "values not finite") with Y all 0. */
const char *stats_kde(const double *x, size_t n, const double *grid, size_t m, double *y, double *bandwidth);
/* OUT[m] = M evenly spaced points from LO to HI inclusive, as numpy.linspace (one point: LO). */
void stats_linspace(double lo, double hi, size_t m, double *out);

/* The AttentionViz normalisation of one head's queries and keys.
 *   keys translated:  k' = k + (mean q − mean k)  — adds q·(mean q − mean k) to every score of a
 *                     query, the same for all its keys, so softmax (the attention) is unchanged;
 *   scaled:           q'' = c·q, k'' = k'/c       — leaves every q·k' unchanged.
 * The "dot product" and "distance" of a pair are q·k and |q − k| before, q''·k'' and |q'' − k''|
 * after, over the pairs a query can see (trace_key_range: j <= i in a causal model, within a sliding
 * window, else all). */
enum qknorm_mode {
	QKNORM_NORMS,  /* c equalises the mean norms: c·mean|q| = mean|k'|/c */
	QKNORM_CORR,   /* c minimises corr(dot product, distance): distance ranks keys best */
};
struct qknorm {
	double c;                  /* the scale */
	double corr_before, corr_after;        /* Pearson correlation of dot product with distance */
	double argmax_before, argmax_after;    /* mean distance from a query to its highest-attention key */
	double meandist_before, meandist_after;/* mean distance over all visible pairs */
	double qnorm_before, knorm_before;     /* mean |q|, mean |k| */
	double qnorm_after, knorm_after;       /* mean |q''|, mean |k''| */
};
/* Normalise head (LAYER, HEAD) of T. Q_OUT / K_OUT [n][head_dim] (each may be NULL) receive q''
 * and k''. -1 on OOM. */
int stats_qknorm(const struct trace *t, int layer, int head, enum qknorm_mode mode, struct qknorm *out,
		 float *q_out, float *k_out, struct err *e);

#endif
