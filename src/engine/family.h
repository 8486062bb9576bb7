/* family.h -- a model family described as data (models/families/NAME.yaml): which config.json keys
 * give the shape, how the checkpoint names each weight, and the shape of a block (post-LN BERT,
 * pre-LN GPT-2, causal or not). Only the parser (family.c) reads a family's file; no C file
 * branches on a family's name: the engine, the analyses and the UI read the switches below.
 *
 * Adding a family:
 *  1. One YAML file, models/families/MODEL_TYPE.yaml (config.json's "model_type"), listed in
 *     dist_families_DATA of models/local.am: its switches, the config.json keys of
 *     each setting, defaults, tensor names, conditional and optional tensors, refused config
 *     values. A family whose block the existing switches express needs nothing more.
 *  2. A new switch (one more variant of an existing operation: a norm, a position scheme, a
 *     mask): one row in family.c's fam_rows and its field in struct family (an enum switch also
 *     has its enum here and its list of values in family.c); then the code that acts on it:
 *     model-config.c for config.json values, model.c for weights, forward.c for the arithmetic.
 *  3. The escape hatch, for a new operation or a block the switches cannot express (a
 *     mixture-of-experts MLP, say): one file of code under src/engine/ named after the block
 *     (src/engine/moe.c), chosen by the family file through a new value of the switch it
 *     replaces (mlp: moe), with its tensors as new roles in FAMILY_ROLES. The file binds its
 *     weights and computes the block; model.c and forward.c call it where they handle that switch
 *     (model_bind_mlp, fwd_mlp). The first such block is moe.c (moe.h says how it grows). */
#ifndef ATTNSCOPE_FAMILY_H
#define ATTNSCOPE_FAMILY_H

#include <limits.h>
#include <stdbool.h>

#include "base/err.h"
#include "tokenizer/tokenizer.h"

/* X-macro of weight roles: (enum suffix, YAML key). {L} in a tensor name stands for the layer index;
 * {H} for the head index, in the q/k norm gains of qk_norm each_head (one tensor per head); {E} for the
 * expert index, in the expert matrices of mlp moe with moe_experts each (moe.h). The output head's roles
 * (lm_head_*, mlm_*) are read by lmhead.c only, and a missing one means "no head", never an error. */
#define FAMILY_ROLES(X)                                                                                    \
	X(TOKEN_EMB, "token_embedding")                                                                    \
	X(POS_EMB, "position_embedding")                                                                   \
	X(TYPE_EMB, "type_embedding")                                                                      \
	X(EMB_LN_W, "embedding_ln_weight")                                                                 \
	X(EMB_LN_B, "embedding_ln_bias")                                                                   \
	X(LN1_W, "ln1_weight")                                                                             \
	X(LN1_B, "ln1_bias")                                                                               \
	X(Q_W, "q_weight")                                                                                 \
	X(Q_B, "q_bias")                                                                                   \
	X(K_W, "k_weight")                                                                                 \
	X(K_B, "k_bias")                                                                                   \
	X(V_W, "v_weight")                                                                                 \
	X(V_B, "v_bias")                                                                                   \
	X(QKV_W, "qkv_weight")                                                                             \
	X(QKV_B, "qkv_bias")                                                                               \
	X(ATTN_OUT_W, "attn_out_weight")                                                                   \
	X(ATTN_OUT_B, "attn_out_bias")                                                                     \
	X(LN2_W, "ln2_weight")                                                                             \
	X(LN2_B, "ln2_bias")                                                                               \
	X(MLP_UP_W, "mlp_up_weight")                                                                       \
	X(MLP_UP_B, "mlp_up_bias")                                                                         \
	X(MLP_DOWN_W, "mlp_down_weight")                                                                   \
	X(MLP_DOWN_B, "mlp_down_bias")                                                                     \
	X(FINAL_LN_W, "final_ln_weight")                                                                   \
	X(FINAL_LN_B, "final_ln_bias")                                                                     \
	X(MLP_GATE_W, "mlp_gate_weight")                                                                   \
	X(MLP_GATE_B, "mlp_gate_bias")                                                                     \
	X(MLP_GATE_UP_W, "mlp_gate_up_weight")                                                             \
	X(Q_NORM_W, "q_norm_weight")                                                                       \
	X(K_NORM_W, "k_norm_weight")                                                                       \
	X(POST_ATTN_LN_W, "post_attn_ln_weight")                                                           \
	X(POST_MLP_LN_W, "post_mlp_ln_weight")                                                             \
	X(EMB_PROJ_W, "embedding_proj_weight")                                                             \
	X(EMB_PROJ_B, "embedding_proj_bias")                                                               \
	X(REL_EMB, "relative_embedding")                                                                   \
	X(REL_LN_W, "relative_ln_weight")                                                                  \
	X(REL_LN_B, "relative_ln_bias")                                                                    \
	X(MOE_ROUTER_W, "moe_router_weight")                                                               \
	X(MOE_GATE_W, "moe_expert_gate_weight")                                                            \
	X(MOE_UP_W, "moe_expert_up_weight")                                                                \
	X(MOE_DOWN_W, "moe_expert_down_weight")                                                                    \
	X(Q_A_W, "q_a_weight")                                                                             \
	X(Q_A_NORM_W, "q_a_norm_weight")                                                                   \
	X(Q_B_W, "q_b_weight")                                                                             \
	X(KV_A_W, "kv_a_weight")                                                                           \
	X(KV_A_NORM_W, "kv_a_norm_weight")                                                                 \
	X(KV_B_W, "kv_b_weight")                                                                           \
	X(MOE_SCORE_BIAS, "moe_router_score_bias")                                                         \
	X(MOE_GATE_UP_W, "moe_expert_gate_up_weight")                                                      \
	X(MOE_SHARED_GATE_W, "moe_shared_gate_weight")                                                     \
	X(MOE_SHARED_UP_W, "moe_shared_up_weight")                                                         \
	X(MOE_SHARED_DOWN_W, "moe_shared_down_weight")                                                     \
	X(MOE_ROUTER_B, "moe_router_bias")                                                                 \
	X(MOE_GATE_UP_BLOCKS, "moe_expert_gate_up_blocks")                                                 \
	X(MOE_GATE_UP_SCALES, "moe_expert_gate_up_scales")                                                 \
	X(MOE_GATE_UP_B, "moe_expert_gate_up_bias")                                                        \
	X(MOE_DOWN_BLOCKS, "moe_expert_down_blocks")                                                       \
	X(MOE_DOWN_SCALES, "moe_expert_down_scales")                                                       \
	X(MOE_DOWN_B, "moe_expert_down_bias")                                                              \
	X(ATTN_SINKS, "attention_sinks")                                                                   \
	X(LM_HEAD_W, "lm_head_weight")                                                                     \
	X(LM_HEAD_B, "lm_head_bias")                                                                       \
	X(MLM_DENSE_W, "mlm_dense_weight")                                                                 \
	X(MLM_DENSE_B, "mlm_dense_bias")                                                                   \
	X(MLM_LN_W, "mlm_ln_weight")                                                                       \
	X(MLM_LN_B, "mlm_ln_bias")                                                                         \
	X(MLM_BIAS, "mlm_bias")                                                                            \
	/* encoder-decoder models (family encoder_decoder): the decoder's cross-attention and its norm, and */ \
	/* T5's relative position bias table [buckets][heads] of each stack's first layer */                 \
	X(XQ_W, "cross_q_weight")                                                                          \
	X(XQ_B, "cross_q_bias")                                                                            \
	X(XK_W, "cross_k_weight")                                                                          \
	X(XK_B, "cross_k_bias")                                                                            \
	X(XV_W, "cross_v_weight")                                                                          \
	X(XV_B, "cross_v_bias")                                                                            \
	X(XO_W, "cross_out_weight")                                                                        \
	X(XO_B, "cross_out_bias")                                                                          \
	X(XLN_W, "cross_ln_weight")                                                                        \
	X(XLN_B, "cross_ln_bias")                                                                          \
	X(REL_BIAS, "relative_bias")

enum family_role {
#define FAMILY_ROLE_ENUM(id, key) WEIGHT_##id,
	FAMILY_ROLES(FAMILY_ROLE_ENUM)
#undef FAMILY_ROLE_ENUM
	WEIGHT_COUNT
};

/* Shape values read from config.json, each from the first of several candidate keys. */
#define FAMILY_SETTINGS(X)                                                                                 \
	X(LAYERS, "layers")                                                                                \
	X(HEADS, "heads")                                                                                  \
	X(HIDDEN, "hidden")                                                                                \
	X(INTERMEDIATE, "intermediate")                                                                    \
	X(MAX_POSITIONS, "max_positions")                                                                  \
	X(VOCAB_SIZE, "vocab_size")                                                                        \
	X(TYPE_VOCAB_SIZE, "type_vocab_size")                                                              \
	X(LAYER_NORM_EPS, "layer_norm_eps")                                                                \
	X(ACTIVATION, "activation")                                                                        \
	X(SCALE_BY_INVERSE_LAYER, "scale_attn_by_inverse_layer_idx")                                       \
	X(SCALE_ATTN_WEIGHTS, "scale_attn_weights")                                                        \
	X(KV_HEADS, "kv_heads")                                                                            \
	X(HEAD_DIM, "head_dim")                                                                            \
	X(ROPE_THETA, "rope_theta")                                                                        \
	X(ROPE_LOCAL_THETA, "rope_local_theta")                                                            \
	X(ROTARY_FRACTION, "rotary_fraction")                                                              \
	X(ROPE_SCALING, "rope_scaling")                                                                    \
	X(SLIDING_WINDOW, "sliding_window")                                                                \
	X(GLOBAL_EVERY, "global_every")                                                                    \
	X(LAYER_TYPES, "layer_types")                                                                      \
	X(SOFTCAP, "attn_softcap")                                                                         \
	X(QUERY_SCALAR, "query_pre_attn_scalar")                                                           \
	X(PARALLEL_RESIDUAL, "parallel_residual")                                                          \
	X(ATTENTION_BIAS, "attention_bias")                                                                \
	X(MLP_BIAS, "mlp_bias")                                                                            \
	X(EMBEDDING_SIZE, "embedding_size")                                                                \
	X(PAD_TOKEN, "pad_token_id")                                                                       \
	X(POSITION_BUCKETS, "position_buckets")                                                            \
	X(MAX_RELATIVE, "max_relative_positions")                                                          \
	X(POS_ATT_TYPE, "pos_att_type")                                                                    \
	X(ATTENTION_TYPES, "attention_types")                                                              \
	X(ROTARY_DIM, "rotary_dim")                                                                        \
	X(CLIP_QKV, "clip_qkv")                                                                            \
	X(EMBEDDING_MULTIPLIER, "embedding_multiplier")                                                    \
	X(ATTENTION_MULTIPLIER, "attention_multiplier")                                                    \
	X(RESIDUAL_MULTIPLIER, "residual_multiplier")                                                      \
	X(NO_ROPE_LAYERS, "no_rope_layers")                                                                \
	X(NO_ROPE_INTERVAL, "no_rope_layer_interval")                                                      \
	X(USE_QK_NORM, "use_qk_norm")                                                                      \
	X(MULTI_QUERY, "multi_query")                                                                      \
	X(ATTENTION_CHUNK, "attention_chunk_size")                                                         \
	X(TEMPERATURE_TUNING, "attn_temperature_tuning")                                                   \
	X(FLOOR_SCALE, "floor_scale")                                                                      \
	X(TEMPERATURE_SCALE, "attn_scale")                                                                 \
	X(ALIBI, "alibi")                                                                                  \
	X(NEW_DECODER, "new_decoder_architecture")                                                         \
	X(PARALLEL_NORMS, "parallel_norms")                                                                \
	X(NUM_EXPERTS, "num_experts")                                                                      \
	X(EXPERTS_PER_TOKEN, "experts_per_token")                                                          \
	X(NORM_TOPK_PROB, "norm_topk_prob")                                                                \
	X(MOE_INTERMEDIATE, "moe_intermediate")                                                            \
	X(MOE_SPARSE_STEP, "moe_sparse_step")                                                              \
	X(MOE_DENSE_LAYERS, "moe_dense_layers")                                                                    \
	X(Q_LORA_RANK, "q_lora_rank")                                                                      \
	X(KV_LORA_RANK, "kv_lora_rank")                                                                    \
	X(QK_NOPE_DIM, "qk_nope_head_dim")                                                                 \
	X(QK_ROPE_DIM, "qk_rope_head_dim")                                                                 \
	X(V_HEAD_DIM, "v_head_dim")                                                                        \
	X(ROPE_INTERLEAVE, "rope_interleave")                                                              \
	X(MOE_GROUPS, "moe_groups")                                                                        \
	X(MOE_TOPK_GROUPS, "moe_topk_groups")                                                              \
	X(MOE_ROUTED_SCALE, "moe_routed_scale")                                                            \
	X(MOE_SHARED_EXPERTS, "moe_shared_experts")                                                        \
	X(MOE_FIRST_DENSE, "moe_first_dense")                                                              \
	X(SWIGLU_LIMIT, "swiglu_limit")                                                                    \
	X(QUANTIZATION, "quantization")                                                                    \
	X(MOE_LAYERS, "moe_layers")                                                                        \
	X(TIE_EMBEDDINGS, "tie_word_embeddings")                                                           \
	X(LOGIT_SOFTCAP, "final_logit_softcapping")                                                        \
	X(LOGIT_SCALE, "logit_scale")                                                                      \
	X(LOGIT_DIVISOR, "logits_scaling")                                                                 \
	X(MLM_ACTIVATION, "mlm_activation")                                                                \
	X(DEC_LAYERS, "decoder_layers")                                                                    \
	X(DEC_HEADS, "decoder_heads")                                                                      \
	X(DEC_INTERMEDIATE, "decoder_intermediate")                                                        \
	X(DEC_START, "decoder_start_token_id")                                                             \
	X(REL_BUCKETS, "relative_buckets")                                                                 \
	X(REL_MAX_DISTANCE, "relative_max_distance")                                                       \
	X(SCALE_EMBEDDING, "scale_embedding")                                                              \
	X(FF_PROJ, "feed_forward_proj")

enum family_setting {
#define FAMILY_SETTING_ENUM(id, key) SET_##id,
	FAMILY_SETTINGS(FAMILY_SETTING_ENUM)
#undef FAMILY_SETTING_ENUM
	SET_COUNT
};

#define FAMILY_MAX_ALTS 4

enum family_block { BLOCK_POST_LN, BLOCK_PRE_LN,
                    BLOCK_PARALLEL_ONE_NORM }; /* pre-LN with attention and MLP side by side on ONE norm of
                                                * x: x + attn(ln1 x) + mlp(ln1 x) (GPT-J, Phi, Cohere) */
enum family_linear { LINEAR_OUT_IN, LINEAR_IN_OUT }; /* torch Linear [out,in] vs GPT-2 Conv1D [in,out] */
enum family_norm { NORM_LAYER, NORM_RMS };           /* LayerNorm (mean and variance) or RMSNorm */
enum family_position { POS_LEARNED, POS_ROTARY, POS_RELATIVE, POS_ALIBI, /* a learned table added to the
                                                                 * embeddings, RoPE, DeBERTa's relative terms,
                                                                 * or ALiBi's per-head linear bias (BLOOM) */
                       POS_BUCKETS,   /* T5: none in the embeddings; the relative_bias table's bucketed bias
                                       * added to every layer's scores (trace.h pos_bias) */
                       POS_SINUSOID }; /* M2M100/NLLB: a sinusoid computed, not stored: row r = [sin(r f_i)] then
                                        * [cos(r f_i)], f_i = exp(-i ln(10000) / (E/2 - 1)), i < E/2, in float32;
                                        * the padding row zero (rows counted as position_offset and
                                        * positions_after_pad say) */
enum family_mlp { MLP_PLAIN, MLP_GATED,             /* down(act(up x)) or down(act(gate x) * up x) */
		  MLP_MOE };                          /* a mixture of experts (moe.c) on the layers that route,
						       * the gated MLP on the others */
enum family_qkv_layout { QKV_CONCAT, QKV_PER_HEAD, /* fused rows [q | k | v], or per head [q_h k_h v_h] */
                         QKV_GROUPED }; /* per key/value group g: its heads/kv_heads queries, then k_g, v_g
                                         * (Falcon: [q_0 .. q_{p-1} k v] per group; with one group it is
                                         * [q | k | v], with kv_heads = heads [q_h k_h v_h]) */
enum family_window { WINDOW_CAUSAL, WINDOW_CENTERED }; /* sliding window: the W keys up to the query, or
                                                       * the keys within W/2 on either side */
enum family_embed_scale { EMBED_SCALE_NONE, EMBED_SCALE_SQRT_HIDDEN }; /* Gemma: × sqrt(hidden) */
enum family_rope_style { ROPE_STYLE_HALF, ROPE_STYLE_INTERLEAVED }; /* rotary pairs (i, i + dim/2) as GPT-NeoX
                                                                    * and Llama, or (2i, 2i+1) as GPT-J */
enum family_qk_norm { QK_NORM_PER_HEAD, QK_NORM_WHOLE, /* q/k RMSNorm over each head's head_dim values
                                                          * (Qwen3), or over the whole projection (OLMo 2) */
                     QK_NORM_EACH_HEAD }; /* over each head's values with that head's own gain, one tensor
                                           * per head ({H} in its name), the family's norm kind, no bias
                                           * (StableLM's q_layernorm.norms.{H}: a LayerNorm) */

enum family_attention { ATTENTION_STANDARD, /* q, k, v projections of x (separate or fused) */
                        ATTENTION_MLA };     /* DeepSeek's multi-head latent attention (mla.c): q and k/v
                                              * through low-rank projections, q/k heads [nope | rope] with
                                              * one rope key shared by every head, v narrower than q/k */

/* How an encoder-decoder model's decoder input comes from the target's ids (its labels), as transformers
 * shifts them when given labels: the decoder start token then labels[:-1] (T5 _shift_right, BART
 * shift_tokens_right), or the last label (mBART's target-language code) then labels[:-1] (mBART's own
 * shift_tokens_right). */
enum family_shift { SHIFT_START, SHIFT_LAST_LABEL };

#define FAMILY_MAX_RULES 8

struct family {
	char name[32];
	char path[PATH_MAX];             /* the YAML file, for messages */
	char config_section[32];         /* read settings from this object of config.json first (a multimodal
	                                  * model's "text_config"); empty = the top level */
	enum tokenizer_kind tokenizer;
	bool causal;
	enum family_block block;
	enum family_linear linear;
	bool fused_qkv;                  /* one [hidden, 3*hidden] projection instead of three */
	int n_prefixes;
	char *prefixes[FAMILY_MAX_ALTS]; /* tried in order, e.g. "bert." then "" */
	int n_names[WEIGHT_COUNT];         /* 0 = the family has no such weight */
	char *names[WEIGHT_COUNT][FAMILY_MAX_ALTS];
	int n_keys[SET_COUNT];
	char *keys[SET_COUNT][FAMILY_MAX_ALTS]; /* candidate config.json keys */
	char *defaults[SET_COUNT];       /* textual default when no key is present (NULL = required) */
	int intermediate_per_hidden;     /* when intermediate is null/absent: this × hidden (0 = required) */

	/* Block composition (TransformerLens-style switches; the defaults are GPT-2/BERT's). */
	enum family_norm norm;
	float norm_offset;               /* RMSNorm scales by (offset + w): Gemma stores w - 1 */
	enum family_position position;
	enum family_mlp mlp;
	enum family_qkv_layout qkv_layout;
	enum family_embed_scale embed_scale; /* Gemma: embeddings × sqrt(hidden), rounded to float32 */
	enum family_window window;
	enum family_rope_style rope_style; /* how rotary pairs a head's dims (rope.h) */
	enum family_qk_norm qk_norm;     /* how q_norm_weight/k_norm_weight apply, when the family has them */
	enum family_attention attention; /* how q, k and v are computed from the block's input */
	int moe_router;                  /* mlp moe: enum moe_router (moe.h), how tokens pick experts */
	int moe_experts;                 /* mlp moe: enum moe_experts (moe.h), where the experts' weights are */
	int global_offset;               /* with global_every P: layer l is global when (l + offset) % P == 0 */
	bool rope_local_unscaled;        /* rope_scaling applies to global layers only (Gemma 3) */
	bool alibi_twice;                /* ALiBi counted twice, as transformers' Falcon (eager) adds it: before the
	                                  * 1/sqrt(d) scaling and again, divided by sqrt(d), in its causal mask, so
	                                  * the bias is 2/sqrt(d) · slope · j (BLOOM: once, unscaled) */
	int position_offset;             /* learned positions: token i reads row i + offset of the table (OPT: 2,
	                                  * fairseq's padding rows; the table has max_positions + offset rows) */
	bool positions_after_pad;        /* RoBERTa: position ids count from pad_token_id + 1; a pad token keeps
	                                  * pad_token_id (fairseq's make_positions) */
	bool final_norm_in_trace;        /* the last hidden state HF reports has the final norm applied (default);
	                                  * false: hidden_states stop before it (ModernBERT) */
	bool no_rope_empty_unset;        /* an empty no_rope_layers list means the key is unset (Llama4TextConfig:
	                                  * the interval rule); else it is an error (SmolLM3 indexes the list) */
	bool qk_l2_norm;                 /* with setting use_qk_norm: q and k of every rotary layer divided by their
	                                  * RMS over head_dim (no gain, eps layer_norm_eps) AFTER rotary (Llama 4's
	                                  * L2Norm); NoPE layers keep theirs */
	bool encoder_decoder;            /* an encoder and a decoder stack (T5, BART): the tensor names' {S} is
	                                  * "encoder" or "decoder" and {F} the index of a T5 block's feed-forward
	                                  * sublayer (1, or 2 after the decoder's cross-attention); the decoder's
	                                  * layers add cross-attention (cross_* roles) between self-attention and
	                                  * the MLP (model.c binds it, forward.c runs it) */
	enum family_shift shift;         /* encoder_decoder: the decoder input from the labels */
	bool optional[WEIGHT_COUNT];     /* roles whose tensor may be missing in some layer (identity there:
	                                  * ModernBERT's layer 0 has no attention norm) */
	bool weightless[WEIGHT_COUNT];   /* norm gains with no tensor although the norm is there: it normalises
	                                  * without gain or bias (OLMo's LayerNorms) */
	/* Tensor roles that exist only when a boolean setting is true (attention_bias: q_bias, ...). */
	int n_conditions;
	enum family_role cond_role[FAMILY_MAX_RULES * 2];
	enum family_setting cond_setting[FAMILY_MAX_RULES * 2];
	/* config.json values this engine cannot run exactly: key -> the refused JSON value as text. */
	int n_refusals;
	char *refuse_key[FAMILY_MAX_RULES], *refuse_value[FAMILY_MAX_RULES], *refuse_why[FAMILY_MAX_RULES];
};

/* Load DATADIR/models/families/MODEL_TYPE.yaml. */
int family_load(const char *model_type, struct family *f, struct err *e);
/* Load a family description from PATH. */
int family_load_file(const char *path, struct family *f, struct err *e);
void family_free(struct family *f);

const char *family_role_key(enum family_role role);
const char *family_setting_key(enum family_setting s);

#endif
