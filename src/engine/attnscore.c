/* attnscore.c -- a head's attention scores: scale, additive terms, soft-cap, masks, softmax, the one
 * pipeline every caller runs (see attnscore.h). */
#include "engine/attnscore.h"

#include "engine/gemm.h"
#include "engine/ops.h"
#include "engine/weights.h"

#include <string.h>

void attnscore_of_trace(struct attnscore *a, const struct trace *t, int layer, int head)
{
	*a = (struct attnscore){
		.t = t,
		.layer = layer,
		.n = t->n,
		.d = t->head_dim,
		.q = trace_q(t, layer, head),
		.k = trace_k(t, layer, head),
		.scale = t->score_scale[layer],
		.alibi = t->alibi ? t->alibi[head] : 0.0f,
		.alibi_scale = t->alibi ? t->alibi_scale : 0.0f,
		.softcap = t->softcap,
		.sink = t->sinks ? t->sinks + (size_t)layer * t->n_heads + head : NULL,
		.bias = t->pos_bias ? t->pos_bias + (size_t)head * t->n * t->n : NULL,
	};
}

/* Queries per block where the GEMM's sums depend neither on the rows nor on the keys (gemm_row_block
 * 1): any block gives the same bits, and blocks skip the products of keys no query of theirs sees
 * (at 512 tokens half of a causal model's scores and context). */
#define ATTNSCORE_FREE_BLOCK 64

int attnscore_block(const struct trace *t, int i, int *end)
{
	int blk = t->causal ? gemm_row_block() : 0;
	if (blk == 1)
		blk = ATTNSCORE_FREE_BLOCK;
	if (blk <= 1) {
		*end = t->n;
		return t->n;
	}
	*end = i - i % blk + blk < t->n ? i - i % blk + blk : t->n;
	return *end; /* causal: the block's last query sees the keys before it */
}

void attnscore_logits(const struct attnscore *a, int i0, int i1, float *s)
{
	int n = a->n, d = a->d;
	/* 1. scale */
	if (a->n_keys > 0) { /* cross-attention: every query with every encoder key */
		n = a->n_keys;
		if (i1 > i0)
			gemm(true, i1 - i0, n, d, a->scale, a->q + (size_t)i0 * d, d, a->k, d, 0.0f, s, n);
	}
	for (int i = a->n_keys > 0 ? i1 : i0; i < i1;) {
		int end, keys = attnscore_block(a->t, i, &end);
		end = end < i1 ? end : i1;
		float *si = s + (size_t)(i - i0) * n;
		gemm(true, end - i, keys, d, a->scale, a->q + (size_t)i * d, d, a->k, d, 0.0f, si, n);
		for (int r = 0; r < end - i && keys < n && a->visible_only; r++)
			memset(si + (size_t)r * n + keys, 0, (size_t)(n - keys) * sizeof *si);
		if (keys < n && !a->visible_only) /* the later keys: masked, but the neuron view shows their logits */
			gemm(true, end - i, n - keys, d, a->scale, a->q + (size_t)i * d, d, a->k + (size_t)keys * d, d, 0.0f,
			     si + keys, n);
		i = end;
	}
	if (i1 <= i0)
		return;
	int rows = i1 - i0;
	/* 2. additive terms */
	if (a->rel)
		relpos_add(a->rel, s, i0, i1, n, d, a->q, a->k, a->rel_q, a->rel_k, a->rel_stride, a->scale);
	if (a->bias) /* T5: the bucketed relative position bias, added to the product as a float32 sum */
		for (int r = 0; r < rows; r++)
			for (int j = 0; j < n; j++)
				s[(size_t)r * n + j] += a->bias[(size_t)(i0 + r) * a->n + j];
	if (a->alibi != 0) { /* ALiBi: slope · key position, rounded to float32 as HF's alibi tensor is, then added */
		float step = a->alibi_scale * a->alibi; /* exactly the slope when the scale is 1 (BLOOM) */
		for (int r = 0; r < rows; r++)
			for (int j = 0; j < n; j++)
				s[(size_t)r * n + j] += step * (float)j;
	}
	/* 3. soft-cap */
	if (a->softcap > 0)
		ops_softcap(s, (size_t)rows * n, a->softcap);
}

void attnscore_softmax(const struct attnscore *a, int i0, int i1, float *s)
{
	int n = a->n_keys > 0 ? a->n_keys : a->n;
	for (int i = i0; i < i1;) {
		int lo[OPS_SOFTMAX_ROWS], hi[OPS_SOFTMAX_ROWS], k = 0;
		for (; k < OPS_SOFTMAX_ROWS && i + k < i1; k++)
			if (a->n_keys > 0) /* cross-attention: no mask */
				lo[k] = 0, hi[k] = a->n_keys - 1;
			else
				trace_key_range(a->t, a->layer, i + k, &lo[k], &hi[k]); /* 4. masks */
		float *si = s + (size_t)(i - i0) * n;
		if (a->sink && a->n_keys == 0) /* 5. softmax, with the learned sink taking part and then dropped */
			for (int r = 0; r < k; r++)
				ops_softmax_range_sink(si + (size_t)r * n, n, lo[r], hi[r], *a->sink);
		else
			ops_softmax_rows(si, n, k, lo, hi); /* 5. softmax */
		i += k;
	}
}

void attnscore_probs(const struct attnscore *a, int i0, int i1, float *p)
{
	attnscore_logits(a, i0, i1, p);
	attnscore_softmax(a, i0, i1, p);
}

void attnscore_trace_fill(const struct trace *t, int layer, int head, float *out)
{
	struct attnscore a;
	attnscore_of_trace(&a, t, layer, head);
	if (t->blas_serial) /* OpenBLAS's sums depend on its thread count */
		weights_threads_begin();
	attnscore_probs(&a, 0, t->n, out);
	if (t->blas_serial)
		weights_threads_end();
}
