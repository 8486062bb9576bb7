/* mla.c -- DeepSeek's multi-head latent attention: its weights and its q, k, v (see mla.h). The
 * arithmetic follows transformers' DeepseekV3Attention in float32 operation by operation. */
#include "engine/mla.h"

#include <string.h>

#include "engine/model-internal.h"

size_t mla_scratch(const struct model *m)
{
	const struct mla_shape *s = &m->arch.mla;
	/* q_a | kv_a | the normalised compressed kv | kv_b */
	return (size_t)s->q_rank + (size_t)(s->kv_rank + s->rope) + (size_t)s->kv_rank +
	       (size_t)m->info.n_heads * (size_t)(s->nope + s->v);
}

static void mla_linear(const struct model *m, const float *x, int n, int in, int out, const struct weight *w,
		       const float *b, float *y, int ldy)
{
	weight_linear(m->cache, x, n, in, out, w, m->fam.linear == LINEAR_OUT_IN, b, y, ldy);
}

void mla_project(const struct model *m, const struct layer_weights *w, const float *h, int n, float *scratch,
		 float *qkv, int ld)
{
	const struct mla_shape *s = &m->arch.mla;
	const struct mla_weights *x = &w->mla;
	int H = m->info.hidden, heads = m->info.n_heads, D = s->nope + s->rope, KVA = s->kv_rank + s->rope;
	int KVB = heads * (s->nope + s->v), QD = m->arch.q_dim, KD = m->arch.kv_dim;
	float *qa = scratch;                          /* [n][q_rank] */
	float *kva = qa + (size_t)n * s->q_rank;      /* [n][kv_rank + rope] */
	float *ckv = kva + (size_t)n * KVA;           /* [n][kv_rank] */
	float *kvb = ckv + (size_t)n * s->kv_rank;    /* [n][heads][nope + v] */
	if (s->q_rank > 0) {
		mla_linear(m, h, n, H, s->q_rank, &x->q_a_w, NULL, qa, s->q_rank);
		ops_rmsnorm(qa, qa, n, s->q_rank, s->q_rank, x->q_a_norm_w, 0.0f, MLA_NORM_EPS);
		mla_linear(m, qa, n, s->q_rank, heads * D, &x->q_b_w, NULL, qkv, ld);
	} else {
		mla_linear(m, h, n, H, heads * D, &w->q_w, w->q_b, qkv, ld);
	}
	mla_linear(m, h, n, H, KVA, &x->kv_a_w, NULL, kva, KVA);
	for (int i = 0; i < n; i++)
		memcpy(ckv + (size_t)i * s->kv_rank, kva + (size_t)i * KVA, (size_t)s->kv_rank * sizeof(float));
	ops_rmsnorm(ckv, ckv, n, s->kv_rank, s->kv_rank, x->kv_a_norm_w, 0.0f, MLA_NORM_EPS);
	mla_linear(m, ckv, n, s->kv_rank, KVB, &x->kv_b_w, NULL, kvb, KVB);
	for (int i = 0; i < n; i++) {
		const float *pe = kva + (size_t)i * KVA + s->kv_rank, *kv = kvb + (size_t)i * KVB;
		float *row = qkv + (size_t)i * ld;
		for (int hd = 0; hd < heads; hd++) {
			const float *kvh = kv + (size_t)hd * (s->nope + s->v);
			memcpy(row + QD + hd * D, kvh, (size_t)s->nope * sizeof(float));
			memcpy(row + QD + hd * D + s->nope, pe, (size_t)s->rope * sizeof(float));
			memcpy(row + QD + KD + hd * s->v, kvh + s->nope, (size_t)s->v * sizeof(float));
		}
	}
}

void mla_deinterleave(float *x, int n, int stride, int d)
{
	float tmp[MLA_MAX_ROPE];
	int half = d / 2;
	for (int p = 0; p < n; p++) {
		float *v = x + (size_t)p * stride;
		for (int i = 0; i < half; i++) {
			tmp[i] = v[2 * i];
			tmp[half + i] = v[2 * i + 1];
		}
		memcpy(v, tmp, (size_t)d * sizeof(float));
	}
}
