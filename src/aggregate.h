/* aggregate.h -- per-head results over a corpus: mergeable accumulators of the head finder's scores.
 *
 * A corpus run adds one trace at a time and keeps nothing of it but these sums, so memory does not
 * grow with the number of texts. Each head's score (headscore.h, plus entropy_norm) is summarised
 * over the texts where it is defined by a count, a mean and M2 = Σ (x − mean)² (Welford's update).
 * Two aggregates of the same model combine with Chan et al.'s parallel formulas,
 *   n = na + nb,  δ = mean_b − mean_a,  mean = mean_a + δ·nb/n,  M2 = M2a + M2b + δ²·na·nb/n,
 * so shards merged in any grouping equal one run over all texts up to float rounding. The standard
 * deviation over texts is the sample one, sqrt(M2 / (n − 1)) (0 for one text). */
#ifndef ATTNSCOPE_AGGREGATE_H
#define ATTNSCOPE_AGGREGATE_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "headscore.h"
#include "trace.h"

/* The scores kept per head: HS_COUNT pattern scores, then entropy_norm. */
#define AGG_ENTROPY_NORM HS_COUNT
#define AGG_SCORES (HS_COUNT + 1)
/* Scores a corpus run keeps: all but "changed", which needs a second text. */
static inline int aggregate_keeps(int k)
{
	return k != HS_CHANGED;
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

struct aggregate {
	struct agg_model model;
	struct agg_counts c;
	struct agg_source *src;   /* [n_src] */
	int n_src;
	struct agg_moment *hs;    /* [n_layers * n_heads][AGG_SCORES], layer-major */
	struct headscore *scratch;/* [n_layers * n_heads] scores of the trace being added */
};

/* A new empty aggregate for model M; NULL on OOM or a shape out of range. */
struct aggregate *aggregate_new(const struct agg_model *m, struct err *e);
void aggregate_free(struct aggregate *a);

/* Record a source (FILE, shard K/N); -1 on OOM. */
int aggregate_add_source(struct aggregate *a, const char *file, int shard_k, int shard_n, uint64_t texts,
			 bool partial, struct err *e);
/* Add the head scores of trace T (one text) and count it; -1 on OOM or a trace of another shape. */
int aggregate_add(struct aggregate *a, const struct trace *t, struct err *e);
/* Add SRC into DST: moments by Chan's formulas, counts summed, sources appended. -1 when the models
 * differ or a source (file and shard) is in both. */
int aggregate_merge(struct aggregate *dst, const struct aggregate *src, struct err *e);

/* Moments of one head's score K. */
static inline const struct agg_moment *aggregate_moment(const struct aggregate *a, int layer, int head, int k)
{
	return a->hs + ((size_t)layer * a->model.n_heads + head) * AGG_SCORES + k;
}
void aggregate_moment_add(struct agg_moment *m, double x);
void aggregate_moment_merge(struct agg_moment *m, const struct agg_moment *other);
/* Sample standard deviation: sqrt(M2 / (n − 1)); 0 for n = 1, NaN for n = 0. */
double aggregate_moment_std(const struct agg_moment *m);

/* Per head, the mean scores (NaN where no text defined one) in MEAN and the standard deviations
 * in STD (may be NULL), both [n_layers * n_heads]; MEAN gets the head finder's label of the means,
 * "[CLS]"/"BOS" for "first" when most texts began with a special token. */
void aggregate_headscores(const struct aggregate *a, struct headscore *mean, struct headscore *std);

#endif
