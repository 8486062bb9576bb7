/* prefix.h -- the tokens of a causal model's last run, kept so that the explorer's next run can
 * start where the texts differ: typing at the end of a text changes only its last tokens, and a
 * causal model's earlier rows (attention, q, k, v, hidden states) do not depend on later tokens.
 *
 * The rows are kept token by token (each token's block holds its rows of every layer and head),
 * so keeping a run that reused R tokens copies only its new tokens, and a shorter text drops the
 * blocks past its end. Private to the engine. */
#ifndef ATTNSCOPE_PREFIX_H
#define ATTNSCOPE_PREFIX_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

struct prefix_cache {
	pthread_mutex_t lock;   /* held for a whole run: one run at a time reads and replaces the rows */
	size_t budget;          /* bytes of rows it may keep */
	int n, cap;             /* tokens kept; room for CAP in the arrays below */
	int32_t *ids, *type_ids; /* [cap] */
	int *nonfinite;         /* [cap] first layer whose hidden state of the token held NaN/Inf, or -1 */
	size_t *off;            /* [cap + 1] token i's block is rows[off[i] .. off[i + 1]) */
	float *rows;            /* the blocks, ROWS_CAP floats of room */
	size_t rows_cap;
	/* the shape the rows are for (a change empties the cache) */
	int n_layers, n_heads, n_kv_heads, head_dim, hidden;
	int v_dim;              /* the width of v (trace_v_dim) */
	bool raw;
	bool vnorm;             /* the value norms are kept too (trace->vnorm) */
	int len_min, len_max;   /* the shortest and longest run whose tokens are kept (rotary scaling may
				 * depend on the length: forward_rope_reusable) */
	int reused;             /* tokens the latest run took from here (tests, benchmark) */
};

int prefix_init(struct prefix_cache *c, size_t budget);
void prefix_free(struct prefix_cache *c);

/* How many leading tokens of T (ids and token types) are kept, leaving at least T's last token to
 * compute; 0 when none. Call with the lock held. */
int prefix_shared(const struct prefix_cache *c, const struct trace *t);

/* Fill T's rows of its first R tokens (R from prefix_shared) from the kept ones: attention rows (the
 * keys after each row's token set to 0), q, k, v (and before rotary), hidden states; T's
 * nonfinite_layer from theirs. Every element of those rows is written. */
void prefix_fill(const struct prefix_cache *c, struct trace *t, int r);

/* Keep T's tokens: the first R are kept already (prefix_fill's R), the others are copied. Past the
 * budget, or short of memory, nothing is kept. Call with the lock held. */
void prefix_keep(struct prefix_cache *c, const struct trace *t, int r);

#endif
