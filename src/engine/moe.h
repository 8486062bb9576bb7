/* moe.h -- the mixture-of-experts MLP (family "mlp: moe"; family.h's point 3, the escape hatch):
 * which layers route, how the router picks experts, where each expert's weights are, and the block's
 * float32 arithmetic in Hugging Face's order. model.c binds a MoE layer's weights through moe_bind
 * (from model_bind_mlp), forward.c runs it through moe_forward (from fwd_mlp); dense layers of a MoE
 * model keep the ordinary gated MLP (mlp_gate/up/down_weight, intermediate_size).
 *
 * A new router or expert layout is one more value of the enums below (and its family.c name), a case
 * in moe.c, and its fields here; the per-layer data (struct moe_block) grows a member per new tensor.
 * Private to the engine. */
#ifndef ATTNSCOPE_MOE_H
#define ATTNSCOPE_MOE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "engine/hfconfig.h"
#include "engine/mxfp4.h"
#include "engine/weights.h"

struct model;

/* How a token's router logits become its experts and their weights. */
enum moe_router {
	MOE_ROUTER_SOFTMAX_TOPK, /* softmax over all experts in float32, the top-k of it (ties as torch.topk:
	                          * the lower expert first), renormalised to sum 1 when norm_topk_prob
	                          * (Mixtral always; OLMoE false; Qwen3-MoE from config.json) */
	MOE_ROUTER_SIGMOID_GROUPS, /* DeepSeek-V3 (DeepseekV3TopkRouter): the sigmoid of the logits plus the
	                            * layer's score bias (e_score_correction_bias) chooses: experts in
	                            * n_group groups, each scored by the sum of its two best, the topk_group
	                            * best groups kept (the others' choices become 0, as transformers'
	                            * masked_fill), the top-k experts among all, in increasing expert order;
	                            * weights: their sigmoid (without the bias), ÷ their sum + 1e-20 with
	                            * norm_topk_prob, × routed_scaling_factor */
	MOE_ROUTER_TOPK_SOFTMAX, /* gpt-oss: the router Linear with its bias, torch.topk of the logits, then a
	                          * float32 softmax over those k (the lower expert first among equal logits) */
	MOE_ROUTER_SIGMOID_INPUT, /* Llama 4: the top-k of the logits themselves, each weighted by the sigmoid of
	                           * its logit, and the weight scales the expert's INPUT (x · w), not its output */
};

/* Where the experts' matrices are. */
enum moe_experts {
	MOE_EXPERTS_EACH, /* one tensor per expert and projection, {E} in the name (Mixtral's
	                   * block_sparse_moe.experts.{E}.w1/w3/w2, OLMoE's and Qwen3-MoE's
	                   * mlp.experts.{E}.gate_proj/up_proj/down_proj) */
	MOE_EXPERTS_FUSED_MXFP4, /* gpt-oss: all experts in one MXFP4 pair per projection (mxfp4.h), as shipped
	                          * (quantization_config quant_method "mxfp4"): gate_up [E][2I][H], its rows
	                          * interleaving gate (even) and up (odd), and down [E][H][I], each with a bias
	                          * ([E][2I], [E][H]); the expert is the clamped SwiGLU
	                          * down((clamp(up, ±limit) + 1) · g · σ(1.702 g)), g = min(gate, limit) */
	MOE_EXPERTS_FUSED, /* every expert in one 3-D tensor per projection, stored in→out whatever the family's
	                    * linear layout (bmm operands): gate and up side by side [E][hidden][2 inter] (gate
	                    * first), down [E][inter][hidden] (Llama 4's experts.gate_up_proj, down_proj) */
};

/* One expert: a gated MLP, down(act(gate x) · up x), hidden → inter → hidden. */
struct moe_expert {
	struct weight gate_w, up_w, down_w; /* H→I, H→I, I→H (the family's linear layout); moe_experts fused:
	                                     * down_w I→H stored [I][H], gate_w and up_w unused */
	struct weight gate_up_w;            /* moe_experts fused: H→2I [gate | up], stored [H][2I] */
};

/* One MoE layer's weights. */
struct moe_block {
	struct weight router_w;      /* H→n_experts: the router ("gate") Linear (its bias: router_b) */
	struct moe_expert *experts;  /* [n_experts] */
	const float *score_bias;     /* [n_experts] the router's choice bias (sigmoid_groups), bound by model.c */
	struct moe_expert shared;    /* the shared experts as one gated MLP, shared_inter wide, added to every
	                              * token's output (DeepSeek-V3's mlp.shared_experts); absent when no weight */
	/* moe_experts fused_mxfp4 (gpt-oss); experts NULL then */
	float *router_b;             /* [n_experts] the router's bias (owned: converted at load) */
	struct mxfp4 gate_up, down;  /* [E][2I][H] and [E][H][I] in the mapping */
	float *gate_up_b, *down_b;   /* [E][2I], [E][H] (owned) */
};

/* The MoE settings of a model (config.json through the family), the same for every MoE layer. */
struct moe_config {
	enum moe_router router;
	enum moe_experts layout;
	int n_experts;      /* routed experts per MoE layer; 0 = the model has no MoE */
	int top_k;          /* experts per token */
	int inter;          /* an expert's intermediate width (moe_intermediate_size, or intermediate_size) */
	bool norm_topk;     /* renormalise the k weights to sum 1 */
	int n_group, topk_group; /* sigmoid_groups: experts in n_group groups, topk_group of them kept */
	float routed_scale; /* sigmoid_groups: the weights × routed_scaling_factor (float32, as torch) */
	int shared_inter;   /* the shared experts' width (moe_intermediate × n_shared_experts; Llama 4: the
	                     * experts' own); 0 = none */
	float swiglu_limit; /* fused_mxfp4: the clamp of gate (above) and up (both sides) */
	bool *layer_moe;    /* [n_layers] true where the layer routes: every decoder_sparse_step-th layer
	                     * ((l + 1) % step == 0; step 1 = all; Llama 4's interleave_moe_layer_step),
	                     * or exactly those moe_layers lists (Llama 4), except mlp_only_layers and
	                     * DeepSeek's first_k_dense_replace */
	struct moe_block *blocks; /* [n_layers] bound weights (experts NULL on dense layers) */
};

/* Read the MoE settings of config.json C into M->moe (after the shape: info.n_layers); nothing for a
 * family whose mlp is not moe. */
int moe_config_read(struct model *m, const struct hfconfig *c, struct err *e);

/* Whether layer L of M routes. */
bool moe_layer(const struct model *m, int l);

/* How model.c binds one in→out linear of a role (INDEX for {E} in its name, else -1), its shape
 * checked, as every other weight: handed to moe_bind so that moe.c calls nothing of model.c (the
 * engine's files call each other one way, tests/layers.sh). */
typedef int (*moe_bind_fn)(struct model *m, enum family_role role, int layer, int index, int64_t in, int64_t out,
			   struct weight *w, struct err *e);

/* How model.c finds the tensor of a role of LAYER whatever its dtype and shape (moe.c checks them); a
 * missing one is an error naming it. */
typedef int (*moe_tensor_fn)(struct model *m, enum family_role role, int layer, const struct st_tensor **t,
			     struct err *e);

/* Bind MoE layer L's router and experts with BIND (linear weights) and TENSOR (the others). */
int moe_bind(struct model *m, int l, moe_bind_fn bind, moe_tensor_fn tensor, struct err *e);

/* True when some expert matrix spans several tiles (the forward pass then shares the work itself). */
bool moe_tiled(const struct model *m);

/* MoE layer L on H [n][hidden] into OUT [n][hidden]; each token's experts in TOPK [n][top_k] (in
 * torch.topk's order) and their weights as applied in WEIGHTS [n][top_k]. Only the experts some token
 * chose are read. -1 when out of memory (OUT is NaN then, which the trace reports). */
int moe_forward(const struct model *m, int l, const float *h, int n, float *out, int32_t *topk, float *weights);

/* Bytes of the mapped file one expert of layer L reads (all its matrices), 0 on a dense layer. */
size_t moe_expert_bytes(const struct model *m, int l);

void moe_free(struct model *m);

#endif
