/* stats.h -- descriptive statistics over a trace's queries, keys and attention weights.
 *
 * Pure functions, no terminal: per-head query/key descriptives; same-head vs different-head q·k
 * products for one query token; groups of attention weights (the final token's weights on the
 * tokens before it, the other tokens' self-attention, the first token's self-attention) pooled
 * over a layer's heads; histograms; and the AttentionViz normalisation of a head's queries and
 * keys, which moves and scales them without changing the attention they produce.
 *
 * Standard deviations are population ones (divide by n), as numpy's default. */
#ifndef ATTNSCOPE_STATS_H
#define ATTNSCOPE_STATS_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "trace.h"

/* Mean and population standard deviation of X[n] (both 0 when N is 0). */
void stats_mean_std(const double *x, size_t n, double *mean, double *std);
/* Pearson correlation of X[n] and Y[n]; NaN when either does not vary or N < 2. */
double stats_corr(const double *x, const double *y, size_t n);

/* Mean ± std of one head's query and key activations over tokens × dimensions. */
struct stats_qk_desc {
	double q_mean, q_std, k_mean, k_std;
};
/* OUT[n_heads] for LAYER of T. With SKIP_FIRST the first token is left out (it is often an
 * outlier: [CLS], or GPT-2's attention sink), unless it is the only token. */
void stats_qk_desc(const struct trace *t, int layer, bool skip_first, struct stats_qk_desc *out);

/* Raw (unscaled) q·k products of one query token against keys, within and across heads. */
struct stats_dots {
	double *same;  /* [n_same] q_h(query) · k_h(j) for every head h and key j (k_h: the key/value head h reads) */
	size_t n_same;
	double *diff;  /* [n_diff] q_h(query) · k_g(j) for every head h, key/value head g other than the one h
	                * reads, and key j: H·(H−1) pairs, or H·(KV−1) under grouped-query attention */
	size_t n_diff;
	int n_keys;    /* keys j used per pair of heads */
};
/* Keys are those the query may see (trace_key_range: causal masking, sliding windows) when
 * VISIBLE_ONLY, else all tokens. -1 on OOM
 * or a bad query index. Free with stats_dots_free. */
int stats_qk_dots(const struct trace *t, int layer, int query, bool visible_only, struct stats_dots *out,
		  struct err *e);
void stats_dots_free(struct stats_dots *d);

/* Groups of attention weights, pooled over the heads of one layer. */
enum stats_group {
	STATS_FINAL_PREV,  /* the last token's weights on every earlier token: a[n-1][j], j < n-1 */
	STATS_OTHER_SELF,  /* self-attention of the tokens between first and last: a[i][i], 0 < i < n-1 */
	STATS_FIRST_SELF,  /* the first token's self-attention a[0][0] (1 in a causal model) */
	STATS_GROUP_COUNT
};
struct stats_groups {
	double *v[STATS_GROUP_COUNT];  /* [n[g]] weights of group g, heads in order, then tokens */
	size_t n[STATS_GROUP_COUNT];
};
int stats_attn_groups(const struct trace *t, int layer, struct stats_groups *out, struct err *e);
void stats_groups_free(struct stats_groups *g);
const char *stats_group_name(enum stats_group g);

/* COUNT[bins] = how many of X[n] fall in each of BINS equal bins over [LO, HI]; a value equal to
 * HI counts in the last bin (as numpy.histogram). Values outside or NaN are not counted; the
 * return value is how many were counted. */
size_t stats_histogram(const double *x, size_t n, double lo, double hi, int bins, int *count);

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
