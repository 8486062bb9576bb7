/* attnscore.c -- a head's attention scores: scale, additive terms, soft-cap, masks, softmax, the one
 * pipeline every caller runs (see attnscore.h). */
#include "engine/attnscore.h"

#include "engine/gemm.h"
#include "engine/ops.h"
#include "engine/weights.h"

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
	};
}

void attnscore_logits(const struct attnscore *a, int i0, int i1, float *s)
{
	int n = a->n, d = a->d, rows = i1 - i0;
	if (rows <= 0)
		return;
	/* 1. scale */
	gemm(true, rows, n, d, a->scale, a->q + (size_t)i0 * d, d, a->k, d, 0.0f, s, n);
	/* 2. additive terms */
	if (a->rel)
		relpos_add(a->rel, s, i0, i1, n, d, a->q, a->k, a->rel_q, a->rel_k, a->rel_stride, a->scale);
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
	for (int i = i0; i < i1; i++) {
		int lo, hi;
		trace_key_range(a->t, a->layer, i, &lo, &hi); /* 4. masks */
		ops_softmax_range(s + (size_t)(i - i0) * a->n, a->n, lo, hi); /* 5. softmax */
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
