/* trace.h -- the immutable result of one forward pass: tokens and everything every head computed.
 * Everything downstream (analysis, views, export) reads a trace; nothing downstream reruns the model. */
#ifndef ATTNSCOPE_TRACE_H
#define ATTNSCOPE_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct trace {
	char model_name[256];  /* what the user asked for, e.g. "demo-bert" or a folder */
	char family[32];       /* "bert", "gpt2" */
	bool causal;           /* true when keys after the query are masked (attention exactly 0 there) */
	int n_layers, n_heads, head_dim, hidden;
	int max_positions;

	int n;                 /* number of tokens */
	char **tokens;         /* [n] vocabulary strings as HF convert_ids_to_tokens gives them */
	int32_t *ids;          /* [n] */
	int32_t *type_ids;     /* [n] token_type_ids (all 0 for GPT-2) */
	bool *special;         /* [n] added special tokens */
	bool truncated;        /* the text was cut to max_positions */
	int nonfinite_layer;   /* first layer whose output held NaN/Inf (0 = embeddings), -1 = none */

	float *attn;           /* [n_layers][n_heads][n][n] softmax probabilities, row = query */
	float *q;              /* [n_layers][n_heads][n][head_dim] query after bias, before 1/sqrt(d) */
	float *k;              /* [n_layers][n_heads][n][head_dim] */
	float *v;              /* [n_layers][n_heads][n][head_dim] */
	float *hidden_states;  /* [n_layers + 1][n][hidden]; 0 = embeddings output */
};

static inline const float *trace_attn(const struct trace *t, int layer, int head)
{
	return t->attn + ((size_t)layer * t->n_heads + head) * (size_t)t->n * t->n;
}
static inline const float *trace_q(const struct trace *t, int layer, int head)
{
	return t->q + ((size_t)layer * t->n_heads + head) * (size_t)t->n * t->head_dim;
}
static inline const float *trace_k(const struct trace *t, int layer, int head)
{
	return t->k + ((size_t)layer * t->n_heads + head) * (size_t)t->n * t->head_dim;
}
static inline const float *trace_v(const struct trace *t, int layer, int head)
{
	return t->v + ((size_t)layer * t->n_heads + head) * (size_t)t->n * t->head_dim;
}
static inline const float *trace_hidden(const struct trace *t, int layer)
{
	return t->hidden_states + (size_t)layer * t->n * t->hidden;
}

/* Allocate a zeroed trace with room for N tokens of a model of the given shape; NULL on OOM. */
struct trace *trace_new(int n_layers, int n_heads, int head_dim, int hidden, int n);
/* Free the trace and everything it owns (NULL is fine). */
void trace_free(struct trace *t);

#endif
