/* aggregate.h -- per-head results over a corpus: mergeable accumulators of the head finder's scores,
 * the query/key statistics and the distributions of q·k products and attention weights.
 *
 * A corpus run adds one trace at a time and keeps nothing of it but these sums, so memory does not
 * grow with the number of texts. Each head's score (headscore.h, plus entropy_norm) is summarised
 * over the texts where it is defined by a count, a mean and M2 = Σ (x − mean)² (Welford's update).
 * Two aggregates of the same model combine with Chan et al.'s parallel formulas,
 *   n = na + nb,  δ = mean_b − mean_a,  mean = mean_a + δ·nb/n,  M2 = M2a + M2b + δ²·na·nb/n,
 * so shards merged in any grouping equal one run over all texts up to float rounding. The standard
 * deviation over texts is the sample one, sqrt(M2 / (n − 1)) (0 for one text).
 *
 * Beside the scores, with the samples the single-text views take by default (stats.h), so a corpus
 * of one text shows that text's numbers:
 *  - per head, the moments of its query and key activations over tokens × dimensions (the Q/K
 *    statistics view), the first token's apart from the others' so that either the notebook's
 *    "first token left out" or "every token" can be shown (std with or without Bessel's correction:
 *    both follow from M2); a text of one token has only a first token;
 *  - per layer, agghist.h histograms (with exact moments) of the last token's q·k products with
 *    keys of the same and of the other heads, for the notebook's keys (1 … n−2) and for every key
 *    it sees (the dots view), and of the attention-weight groups (the softmax view): the last
 *    token's weights on earlier tokens, the other tokens' self-attention with and without the last
 *    token, and the first token's self-attention. Queries and keys are those the scores use (after
 *    rotary, where the model has it). */
#ifndef ATTNSCOPE_AGGREGATE_H
#define ATTNSCOPE_AGGREGATE_H

#include <stdbool.h>
#include <stdint.h>

#include "corpus/agghist.h"
#include "corpus/aggsample.h"
#include "base/err.h"
#include "trace/headscore.h"
#include "trace/trace.h"

/* The scores kept per head: HS_COUNT pattern scores, then entropy_norm. */
#define AGG_ENTROPY_NORM HS_COUNT
#define AGG_SCORES (HS_COUNT + 1)
/* Scores a corpus run keeps: all but "changed", which needs a second text, and "sink" (the
 * aggregate files hold the scores they held before it), and cross-attention's (a corpus reads the
 * encoder's self-attention). */
static inline int aggregate_keeps(int k)
{
	return k != HS_CHANGED && k != HS_SINK && !headscore_cross_only(k);
}

struct agg_moment {
	uint64_t n;   /* texts where the score was defined (finite) */
	double mean;  /* their mean */
	double m2;    /* Σ (x − mean)² */
};

/* The model an aggregate was made with; merging needs them equal. */
struct agg_model {
	char name[256];    /* as the user gave it */
	char family[32];
	bool causal;
	int n_layers, n_heads, n_kv_heads, head_dim, hidden, max_positions;
};

/* Where the texts came from: one corpus file, or one shard K/N of it (K in 1..N). */
struct agg_source {
	char *file;
	int shard_k, shard_n;
	uint64_t texts;    /* texts this source contributed */
	bool partial;      /* the run was interrupted: not every text of the shard is in */
};

struct agg_counts {
	uint64_t lines;         /* lines read (of this shard) */
	uint64_t texts;         /* texts run through the model and aggregated */
	uint64_t tokens;        /* their tokens, specials included */
	uint64_t empty;         /* empty (or blank) lines skipped */
	uint64_t truncated;     /* texts cut to the model's max_positions */
	uint64_t failed;        /* lines skipped with an error (malformed JSON, invalid UTF-8) */
	uint64_t first_special; /* texts whose first token is special ([CLS], BOS) */
};

/* A head's query and key activations: moments of the first token's and of the other tokens'. */
struct agg_qk {
	struct agg_moment q_first, q_rest, k_first, k_rest;
};

/* The distributions kept per layer. */
enum agg_dist {
	AGG_DOTS_SAME,        /* the last query · same-head keys 1 … n−2 (notebook 004) */
	AGG_DOTS_DIFF,        /* … · other heads' keys 1 … n−2 */
	AGG_DOTS_SAME_EVERY,  /* the last query · every same-head key it sees */
	AGG_DOTS_DIFF_EVERY,  /* … · every other head's key it sees */
	AGG_FINAL_PREV,       /* a[n−1][j], j < n−1, every head */
	AGG_OTHER_SELF,       /* a[i][i], 1 <= i <= n−1 (notebook 004) */
	AGG_OTHER_SELF_NOLAST,/* a[i][i], 1 <= i < n−1 (attnscope's variant) */
	AGG_FIRST_SELF,       /* a[0][0] */
	AGG_DISTS
};
/* The name of distribution D in files ("dots_same", …). */
const char *aggregate_dist_name(enum agg_dist d);

struct aggregate {
	struct agg_model model;
	struct agg_counts c;
	struct agg_source *src;   /* [n_src] */
	int n_src;
	struct agg_moment *hs;    /* [n_layers * n_heads][AGG_SCORES], layer-major */
	struct headscore *scratch;/* [n_layers * n_heads] scores of the trace being added */
	struct agg_qk *qk;        /* [n_layers * n_heads] */
	struct agghist *dist;     /* [n_layers][AGG_DISTS] */
	struct aggsample sample;  /* the tokens of the joint Q/K PCA, with one head's vectors */
};

/* A new empty aggregate for model M whose token sample keeps the vectors of head (PCA_LAYER,
 * PCA_HEAD); NULL on OOM or a shape or head out of range. */
struct aggregate *aggregate_new(const struct agg_model *m, int pca_layer, int pca_head, struct err *e);
void aggregate_free(struct aggregate *a);

/* Record a source (FILE, shard K/N); -1 on OOM. */
int aggregate_add_source(struct aggregate *a, const char *file, int shard_k, int shard_n, uint64_t texts,
			 bool partial, struct err *e);
/* Add trace T of the text TEXT (and TEXT_B, may be NULL) on line LINE (0-based) of the corpus and
 * count it; -1 on OOM or a trace of another shape. */
int aggregate_add(struct aggregate *a, const struct trace *t, uint64_t line, const char *text, const char *text_b,
		  struct err *e);
/* Add SRC into DST: moments by Chan's formulas, histograms and counts summed, samples merged,
 * sources appended. -1 (DST unchanged) when the models or the samples' heads differ, or a source
 * (file and shard) is in both. */
int aggregate_merge(struct aggregate *dst, const struct aggregate *src, struct err *e);

/* Moments of one head's score K. */
static inline const struct agg_moment *aggregate_moment(const struct aggregate *a, int layer, int head, int k)
{
	return a->hs + ((size_t)layer * a->model.n_heads + head) * AGG_SCORES + k;
}
static inline const struct agg_qk *aggregate_qk(const struct aggregate *a, int layer, int head)
{
	return a->qk + (size_t)layer * a->model.n_heads + head;
}
static inline const struct agghist *aggregate_dist(const struct aggregate *a, int layer, enum agg_dist d)
{
	return a->dist + (size_t)layer * AGG_DISTS + d;
}
/* A head's query (KEYS false) or key moments over the tokens after the first, or over every token
 * (Chan's merge of the two) with FIRST. */
struct agg_moment aggregate_qk_moment(const struct agg_qk *s, bool keys, bool first);
void aggregate_moment_add(struct agg_moment *m, double x);
void aggregate_moment_merge(struct agg_moment *m, const struct agg_moment *other);
/* Sample standard deviation: sqrt(M2 / (n − 1)); 0 for n = 1, NaN for n = 0. */
double aggregate_moment_std(const struct agg_moment *m);
/* Population standard deviation: sqrt(M2 / n); NaN for n = 0. */
double aggregate_moment_pstd(const struct agg_moment *m);

/* The joint PCA of the sample's queries and keys (pca.h), the tokens taken in key order: ORDER[n]
 * receives the sample's token indices in that order, XY [2 n][2] the coordinates of the n queries,
 * then of the n keys, EXPLAINED the two axes' shares. -1 on OOM or when the sample is empty. */
int aggregate_pca(const struct aggregate *a, int *order, double *xy, double explained[2], struct err *e);

/* Per head, the mean scores (NaN where no text defined one) in MEAN and the standard deviations
 * in STD (may be NULL), both [n_layers * n_heads]; MEAN gets the head finder's label of the means,
 * "[CLS]"/"BOS" for "first" when most texts began with a special token. */
void aggregate_headscores(const struct aggregate *a, struct headscore *mean, struct headscore *std);

#endif
