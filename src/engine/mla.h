/* mla.h -- DeepSeek's multi-head latent attention (family attention: mla; DeepSeek-V2/V3/R1), the
 * block no switch of the standard q/k/v projections expresses:
 *   q  = q_b(RMSNorm(q_a x))          (or one q_proj x when q_lora_rank is null: DeepSeek-V2-Lite)
 *        per head [q_nope (nope) | q_pe (rope)]
 *   c  = kv_a x = [compressed (kv_rank) | k_pe (rope)]   k_pe: ONE rope key shared by every head
 *   kv = kv_b(RMSNorm(compressed)) per head [k_nope (nope) | v (v_dim)]
 *   k  = [k_nope | k_pe] per head; v narrower than q/k
 * Rotary turns the rope dims of q and k only (arch rope_offset = nope), first de-interleaved where the
 * weights pair them (2i, 2i+1) (rope_interleave); the scores then go through attnscore.c as every
 * family's. Called where the q/k/v projections are computed (fwd_project). */
#ifndef ATTNSCOPE_MLA_H
#define ATTNSCOPE_MLA_H

#include <stddef.h>

#include "base/err.h"
#include "engine/weights.h"

struct model;
struct layer_weights;

#define MLA_MAX_ROPE 1024 /* qk_rope_head_dim at most (DeepSeek-V2/V3: 64) */
/* DeepseekV3Attention builds q_a_layernorm and kv_a_layernorm without passing rms_norm_eps: they keep
 * DeepseekV3RMSNorm's default. */
#define MLA_NORM_EPS 1e-6

/* The shape config.json gives (q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim,
 * v_head_dim); a q/k head is nope + rope wide. */
struct mla_shape {
	int q_rank;   /* 0: q = q_proj x, no low-rank query */
	int kv_rank;
	int nope, rope;
	int v;
};

/* One layer's latent-attention weights (q_proj, when q_rank is 0, is the layer's q_w), bound by model.c
 * (model_bind_attention) as every other weight. */
struct mla_weights {
	struct weight q_a_w;     /* H→q_rank */
	const float *q_a_norm_w; /* [q_rank] */
	struct weight q_b_w;     /* q_rank→heads × (nope + rope) */
	struct weight kv_a_w;    /* H→kv_rank + rope */
	const float *kv_a_norm_w; /* [kv_rank] */
	struct weight kv_b_w;    /* kv_rank→heads × (nope + v) */
};

/* Floats of scratch one row of mla_project needs. */
size_t mla_scratch(const struct model *m);

/* Layer weights W on H [n][hidden]: q, k (nope | rope, the rope key copied to every head) and v of every
 * head into QKV [n][ld], as the standard projections lay them out: q heads × (nope + rope) | k the same |
 * v heads × v_dim. SCRATCH holds n × mla_scratch floats. */
void mla_project(const struct model *m, const struct layer_weights *w, const float *h, int n, float *scratch,
		 float *qkv, int ld);

/* The D-wide rows of X [n][stride] de-interleaved in place: (x0, x1, x2, x3, ...) → (x0, x2, ..., x1, x3, ...),
 * as HF's apply_rotary_pos_emb_interleave reorders the rope dims before turning them rotate-half style. */
void mla_deinterleave(float *x, int n, int stride, int d);

#endif
