/* trace.c -- allocation and release of a trace (see trace.h). */
#include "trace.h"

#include <stdlib.h>

struct trace *trace_new(int n_layers, int n_heads, int head_dim, int hidden, int n)
{
	struct trace *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->n_layers = n_layers;
	t->n_heads = n_heads;
	t->head_dim = head_dim;
	t->hidden = hidden;
	t->n = n;
	t->nonfinite_layer = -1;
	size_t lh = (size_t)n_layers * n_heads;
	size_t nn = (size_t)n > 0 ? (size_t)n : 1;
	t->tokens = calloc(nn, sizeof *t->tokens);
	t->ids = calloc(nn, sizeof *t->ids);
	t->type_ids = calloc(nn, sizeof *t->type_ids);
	t->special = calloc(nn, sizeof *t->special);
	t->attn = calloc(lh * nn * nn, sizeof(float));
	t->q = calloc(lh * nn * head_dim, sizeof(float));
	t->k = calloc(lh * nn * head_dim, sizeof(float));
	t->v = calloc(lh * nn * head_dim, sizeof(float));
	t->hidden_states = calloc((size_t)(n_layers + 1) * nn * hidden, sizeof(float));
	if (!t->tokens || !t->ids || !t->type_ids || !t->special || !t->attn || !t->q || !t->k ||
	    !t->v || !t->hidden_states) {
		trace_free(t);
		return NULL;
	}
	return t;
}

void trace_free(struct trace *t)
{
	if (!t)
		return;
	if (t->tokens)
		for (int i = 0; i < t->n; i++)
			free(t->tokens[i]);
	free(t->tokens);
	free(t->ids);
	free(t->type_ids);
	free(t->special);
	free(t->attn);
	free(t->q);
	free(t->k);
	free(t->v);
	free(t->hidden_states);
	free(t);
}
