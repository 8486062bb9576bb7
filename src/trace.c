/* trace.c -- allocation and release of a trace (see trace.h). */
#include "trace.h"

#include <math.h>
#include <stdlib.h>

struct trace *trace_new_shaped(const struct trace_shape *s)
{
	if (s->n_kv_heads < 1 || s->n_heads % s->n_kv_heads)
		return NULL;
	struct trace *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->n_layers = s->n_layers;
	t->n_heads = s->n_heads;
	t->n_kv_heads = s->n_kv_heads;
	t->head_dim = s->head_dim;
	t->hidden = s->hidden;
	t->n = s->n;
	t->rotary = s->rotary;
	t->nonfinite_layer = -1;
	size_t lh = (size_t)s->n_layers * s->n_heads, lkv = (size_t)s->n_layers * s->n_kv_heads;
	size_t nn = (size_t)s->n > 0 ? (size_t)s->n : 1;
	t->tokens = calloc(nn, sizeof *t->tokens);
	t->ids = calloc(nn, sizeof *t->ids);
	t->type_ids = calloc(nn, sizeof *t->type_ids);
	t->special = calloc(nn, sizeof *t->special);
	t->attn = calloc(lh * nn * nn, sizeof(float));
	t->q = calloc(lh * nn * s->head_dim, sizeof(float));
	t->k = calloc(lkv * nn * s->head_dim, sizeof(float));
	t->v = calloc(lkv * nn * s->head_dim, sizeof(float));
	t->hidden_states = calloc((size_t)(s->n_layers + 1) * nn * s->hidden, sizeof(float));
	t->win_before = malloc((s->n_layers > 0 ? s->n_layers : 1) * sizeof *t->win_before);
	t->win_after = malloc((s->n_layers > 0 ? s->n_layers : 1) * sizeof *t->win_after);
	t->score_scale = malloc((s->n_layers > 0 ? s->n_layers : 1) * sizeof *t->score_scale);
	bool raw_ok = true;
	if (s->rotary) {
		t->q_raw = calloc(lh * nn * s->head_dim, sizeof(float));
		t->k_raw = calloc(lkv * nn * s->head_dim, sizeof(float));
		raw_ok = t->q_raw && t->k_raw;
	}
	if (!t->tokens || !t->ids || !t->type_ids || !t->special || !t->attn || !t->q || !t->k || !t->v ||
	    !t->hidden_states || !t->win_before || !t->win_after || !t->score_scale || !raw_ok) {
		trace_free(t);
		return NULL;
	}
	for (int l = 0; l < s->n_layers; l++) {
		t->win_before[l] = t->win_after[l] = -1;
		t->score_scale[l] = (float)(1 / sqrt((double)(s->head_dim > 0 ? s->head_dim : 1)));
	}
	return t;
}

struct trace *trace_new(int n_layers, int n_heads, int head_dim, int hidden, int n)
{
	struct trace_shape s = {n_layers, n_heads, n_heads, head_dim, hidden, n, false};
	return trace_new_shaped(&s);
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
	free(t->q_raw);
	free(t->k_raw);
	free(t->win_before);
	free(t->win_after);
	free(t->score_scale);
	free(t->hidden_states);
	free(t->word_of);
	free(t->word_start);
	free(t);
}
