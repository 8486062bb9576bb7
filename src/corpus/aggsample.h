/* aggsample.h -- a uniform sample of a corpus's tokens that merges exactly: the joint Q/K PCA's data.
 *
 * Every token of the corpus gets a pseudo-random 64-bit key, a hash of its text's line number in
 * the corpus file (0-based, the same in every shard) and its index in the text; the sample keeps
 * the CAP tokens with the smallest keys (ties: the lower line, then token). That is a uniform
 * sample without replacement, and it is a function of the set of tokens only: two samples merge
 * by keeping the CAP smallest of both, so shards merged in any grouping equal one run, token for
 * token, and so does the PCA computed from it.
 *
 * What a sampled token keeps: its line and index, its piece, its text (and text_b; each cut to
 * AGGSAMPLE_TEXT_MAX bytes at a character boundary) so that a view can show the sentence it came
 * from, and the query and key vectors of ONE head (layer L, head H, chosen for the run): keeping
 * every head's would take layers × heads times as much (737 MB for bert-base). The vectors of a
 * sample fit a fixed budget, AGGSAMPLE_FLOATS floats (10 MiB), so CAP is min(20000, budget /
 * (2 · head_dim)): 20,000 tokens up to head_dim 64, 10,240 at 128. Memory is bounded by the
 * sample, not by the corpus: at most about 10 MiB of vectors and 2 × 300 bytes of text a token. */
#ifndef ATTNSCOPE_AGGSAMPLE_H
#define ATTNSCOPE_AGGSAMPLE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "trace/trace.h"

#define AGGSAMPLE_MAX 20000
#define AGGSAMPLE_FLOATS ((size_t)10 << 18) /* 10 MiB of float32 */
#define AGGSAMPLE_TEXT_MAX 300

struct aggsample_tok {
	uint64_t key;
	uint64_t line;     /* 0-based line of the corpus file */
	int token;         /* index in the text's trace */
	char *piece;       /* the token's string */
	char *text, *text_b;/* the text it came from (text_b NULL unless a pair), cut */
};

struct aggsample {
	int layer, head;   /* whose queries and keys are kept */
	int dim;           /* head_dim */
	int cap;           /* tokens kept at most */
	int n;             /* tokens kept */
	struct aggsample_tok *tok; /* [cap] a max-heap on (key, line, token) while adding; ascending after
	                            * aggsample_sort (offering again restores the heap) */
	int *slot;         /* [cap] the row of q and k holding tok[i]'s vectors */
	float *q, *k;      /* [cap][dim] */
	bool sorted;
};

/* The capacity for head size DIM: min(AGGSAMPLE_MAX, AGGSAMPLE_FLOATS / (2 DIM)). */
int aggsample_cap(int dim);
/* An empty sample of head (LAYER, HEAD) for vectors of DIM floats. -1 on OOM. */
int aggsample_init(struct aggsample *s, int layer, int head, int dim, struct err *e);
void aggsample_free(struct aggsample *s);
/* The key of token TOKEN of the text on line LINE. */
uint64_t aggsample_key(uint64_t line, int token);
/* Are X[n] all finite? */
bool aggsample_finite(const float *x, int n);
/* Offer every token of T, the text(s) TEXT / TEXT_B on line LINE: those whose query and key are
 * finite (a model gone NaN leaves them out). -1 on OOM. */
int aggsample_add(struct aggsample *s, const struct trace *t, uint64_t line, const char *text, const char *text_b,
		  struct err *e);
/* Offer one token with its vectors Q and K (copied) and strings (copied, TEXT and TEXT_B cut).
 * -1 on OOM. */
int aggsample_offer(struct aggsample *s, uint64_t key, uint64_t line, int token, const char *piece, const char *text,
		    const char *text_b, const float *q, const float *k, struct err *e);
/* Offer every token of O (same head and size) to S. -1 when the heads differ, or on OOM. */
int aggsample_merge(struct aggsample *s, const struct aggsample *o, struct err *e);
/* Put the tokens in ascending (key, line, token) order. */
void aggsample_sort(struct aggsample *s);
/* ORDER[n] = the indices of the tokens in that order, without moving them. -1 on OOM. */
int aggsample_order(const struct aggsample *s, int *order, struct err *e);
/* The query and key vectors of tok[i]. */
static inline const float *aggsample_q(const struct aggsample *s, int i)
{
	return s->q + (size_t)s->slot[i] * s->dim;
}
static inline const float *aggsample_k(const struct aggsample *s, int i)
{
	return s->k + (size_t)s->slot[i] * s->dim;
}

#endif
