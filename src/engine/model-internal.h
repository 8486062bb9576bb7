/* model-internal.h -- the loaded model as the forward pass sees it (private to model.c,
 * model-config.c and forward.c). */
#ifndef ATTNSCOPE_MODEL_INTERNAL_H
#define ATTNSCOPE_MODEL_INTERNAL_H

#include "engine/family.h"
#include "engine/fwdstages.h"
#include "engine/hfconfig.h"
#include "engine/mla.h"
#include "engine/model.h"
#include "engine/moe.h"
#include "engine/ops.h"
#include "engine/prefix.h"
#include "engine/relpos.h"
#include "engine/rope.h"
#include "engine/safetensors.h"
#include "tokenizer/tokenizer.h"
#include "engine/weights.h"

/* A normalisation layer: LayerNorm (with or without bias) or RMSNorm scaled by (offset + w). */
struct norm_weights {
	const float *w; /* [dim] or NULL when the model has no such norm */
	const float *b; /* [dim] or NULL */
};

/* One block's weights. "in→out" linears are applied as y = x·W + b whatever the storage layout;
 * the family's linear_layout says whether W is stored [out, in] or [in, out]. NULL bias = none.
 * Matrices stay where the file has them (struct weight: F32, F16 or BF16 in the mapping, used by
 * tile or from the float32 cache); vectors (norms, biases) are float32, converted at load if need be.
 * Widths: H = hidden, QD = heads × head_dim, KD = kv_heads × head_dim, I = intermediate. */
struct layer_weights {
	struct norm_weights ln1;      /* before attention (pre-LN) or after it (post-LN BERT) */
	struct weight q_w, k_w, v_w;  /* H→QD, H→KD, H→KD (separate projections) */
	const float *q_b, *k_b, *v_b; /* [QD], [KD], [KD] */
	struct weight qkv_w;          /* H→QD+2KD fused (family qkv_layout) */
	const float *qkv_b;           /* [QD+2KD] */
	const float *q_norm_w;        /* [head_dim] per-head RMSNorm of q before rotary (Qwen3, Gemma 3);
	                               * [QD] with family qk_norm whole (OLMo 2) or each_head (StableLM:
	                               * head h's gain at h × head_dim) */
	const float *k_norm_w;        /* [head_dim], or [KD] (kv head g's gain at g × head_dim) */
	struct weight out_w;          /* QD→H */
	const float *out_b;           /* [H] */
	const float *sinks;           /* [heads] learned sink logits (gpt-oss: self_attn.sinks), or NULL */
	struct norm_weights post_attn; /* Gemma 2/3: normalises the attention output before the residual */
	struct norm_weights ln2;      /* before the MLP (pre-LN) or after it (post-LN) */
	struct weight up_w;           /* H→I */
	const float *up_b;            /* [I] */
	struct weight gate_w;         /* H→I gated MLP: down(act(gate x) * up x) */
	const float *gate_b;          /* [I] */
	struct weight gate_up_w;      /* H→2I fused [gate | up] (Phi-3) */
	struct weight down_w;         /* I→H */
	const float *down_b;          /* [H] */
	struct norm_weights post_mlp; /* Gemma 2/3: normalises the MLP output before the residual */
	/* a MoE layer (family mlp moe) has none of the MLP matrices above: its router and experts are in
	 * model.moe.blocks[layer] (moe.h) */
	struct mla_weights mla;       /* family attention mla: the latent attention's projections (mla.h) */
	/* an encoder-decoder model's decoder layer: cross-attention (queries from the decoder, keys and values
	 * from the encoder's last hidden state) between self-attention and the MLP; absent elsewhere */
	struct norm_weights xln;      /* before it (pre-LN) or after it (post-LN) */
	struct weight xq_w, xk_w, xv_w; /* H→QD, H→QD, H→QD */
	const float *xq_b, *xk_b, *xv_b; /* [QD] */
	struct weight xo_w;           /* QD→H */
	const float *xo_b;            /* [H] */
};

/* The output head (lmhead.c): bound at model_open, never an error there (a missing or odd head is
 * kind none with its reason). logits = softcap(((unembed · h) + bias) · scale / divisor). */
struct lm_head {
	int kind;                     /* enum lmhead_kind */
	char why[192];                /* kind none: why; else what the head is */
	struct weight unembed;        /* [vocab][hidden]: lm_head.weight, or the token embedding (tied) */
	struct weight bias;           /* [1][vocab] lm_head.bias or the MLM decoder's bias, or absent. The head's
	                               * vectors are read from the mapping at each use: converting a vocabulary's
	                               * F16 bias at load would cost more than a small model's other vectors */
	double scale, divisor;        /* Cohere's logit_scale (else 1), Granite's logits_scaling (else 1) */
	double softcap;               /* Gemma 2/3: cap · tanh(logit / cap); 0 = none */
	struct weight dense_w;        /* MLM transform: H→H dense, activation, LayerNorm (absent for causal) */
	struct weight dense_b;        /* [1][H] */
	struct weight ln_w, ln_b;     /* [1][H] its LayerNorm */
	enum activation act;          /* the transform's (BERT: hidden_act; RoBERTa: always erf GELU) */
};

/* The block as config.json and the family describe it. */
struct arch {
	int n_kv_heads;            /* key/value heads (GQA/MQA when fewer than the heads) */
	int q_dim, kv_dim;         /* heads × head_dim, kv_heads × head_dim */
	int v_dim, ctx_dim;        /* kv_heads × a value's width, heads × it (the context the output projection
	                            * reads): kv_dim and q_dim, except under latent attention (v_head_dim) */
	struct mla_shape mla;      /* family attention mla: its ranks and head parts */
	int rope_offset;           /* rotary turns a head's dims from this one on (latent attention: after the
	                            * nope dims); 0 elsewhere */
	bool rope_deinterleave;    /* those dims are de-interleaved first (latent attention's rope_interleave) */
	bool parallel_residual;    /* GPT-NeoX: x + attn(ln1 x) + mlp(ln2 x) */
	float embed_scale;         /* embeddings multiplied by it (Gemma: sqrt(hidden) in float32); 0 = none */
	float attn_scale;          /* scores multiplied by it (1/sqrt(head_dim), query_pre_attn_scalar^-0.5) */
	float softcap;             /* scores -> softcap * tanh(scores / softcap) before the mask; 0 = none */
	float residual_scale;      /* both residual branches multiplied by it before they are added (Granite);
	                            * 0 = none */
	float clip_qkv;            /* q, k, v clamped to [-clip_qkv, clip_qkv] after the projections (OLMo); 0 = none */
	bool rotary;               /* rotary position embeddings instead of a learned table */
	struct rope rope_global;   /* the rotary embedding of full-attention layers */
	struct rope rope_local;    /* ... of sliding-window layers (Gemma 3, ModernBERT: their own base) */
	int window;                /* sliding window W (0 = none) */
	bool *layer_sliding;       /* [n_layers] true where the layer uses the window */
	bool *layer_nope;          /* [n_layers] true where the layer applies no rotary (SmolLM3's NoPE layers:
	                            * q and k are the projections there); NULL = rotary on every layer */
	int chunk;                 /* chunked attention (Llama 4): a query sees the keys of its own chunk of
	                            * this many tokens (0 = none) ... */
	bool *layer_chunked;       /* [n_layers] ... on the layers marked true; NULL = no chunks */
	bool qk_l2;                /* family qk_l2_norm and config use_qk_norm: q, k of the rotary layers divided
	                            * by their RMS after rotary (Llama 4) */
	bool temperature;          /* attention temperature tuning on the NoPE layers (Llama 4): q of position p
	                            * × (log(floor((p + 1) / floor_scale) + 1) · temperature_scale + 1) */
	float floor_scale, temperature_scale;
};

struct model {
	struct model_info info;
	struct family fam;
	struct arch arch;
	struct st_set st;            /* the mapped files; float pointers below may point into them */
	struct tokenizer *tok;
	double ln_eps;
	enum activation act;
	bool scale_attn_weights;     /* divide scores by sqrt(head_dim) */
	bool scale_by_inverse_layer; /* GPT-2 option: also divide by (layer + 1) */
	int type_vocab;              /* rows of the token-type table (0 = none) */
	bool cond_on[SET_COUNT];     /* boolean settings that switch conditional tensor roles on */

	int pos_rows;                /* rows of the learned position table (config max_position_embeddings) */
	int pad_id;                  /* RoBERTa: the padding id its positions count from (positions_after_pad) */
	int embed_dim;               /* E: width of the embedding tables (ELECTRA: embedding_size; else hidden) */
	struct weight tok_emb;       /* [vocab_size][E]: only the rows of a text's ids are read */
	struct weight pos_emb;       /* [pos_rows][E] or absent (rotary) */
	struct weight type_emb;      /* [type_vocab][E] or absent */
	struct norm_weights emb_ln;  /* [E] or NULL */
	struct weight emb_proj_w;    /* E→hidden when E differs (ELECTRA's embeddings_project), or absent */
	const float *emb_proj_b;     /* [hidden] */
	struct relpos relpos;        /* DeBERTa: relative-position terms (family position: relative) */
	struct weight rel_emb;       /* [2 span][hidden] relative position embeddings, or absent */
	struct norm_weights rel_ln;  /* [hidden] their LayerNorm (norm_rel_ebd layer_norm) */
	struct norm_weights final_ln; /* [hidden] or NULL */
	const float *ones;           /* [ones_dim] gain of the weightless norms (family weightless), or NULL */
	int64_t ones_dim;
	struct layer_weights *layers; /* [n_layers] */
	struct lm_head lm;           /* the output head (lmhead.c) */
	struct moe_config moe;       /* family mlp moe: the experts' settings and weights (moe.h); else zero */

	/* Encoder-decoder models (family encoder_decoder): this model is the encoder stack; DEC is the decoder
	 * stack as a model of its own, a copy of this struct that shares the mapping, tokenizer, cache and
	 * token embeddings but has its own layers (with cross-attention), norms, positions, relative bias and
	 * causal mask (model_open builds it; model_close frees only the copy). */
	struct model *dec;           /* NULL for every other model, and in the decoder stack itself */
	bool is_decoder;             /* this is the decoder stack: its layers have cross-attention */
	int stack;                   /* while binding: 0 the encoder's tensors, 1 the decoder's ({S}, {F}) */
	int dec_layers;              /* num_decoder_layers (the decoder stack's info.n_layers) */
	int dec_start;               /* decoder_start_token_id */
	struct weight rel_bias;      /* [rel_buckets][heads] T5's relative position bias of this stack, or absent */
	int rel_buckets, rel_max_distance;

	struct wcache *cache;        /* whole matrices converted to float32, within a budget (default 0) */
	float **owned;               /* vectors converted from F16/BF16 or copied from unaligned F32 */
	int n_owned, cap_owned;
	size_t bytes_converted;      /* how much of the model was converted at load (vectors only) */
	bool own_threads;            /* matrices span several tiles: the forward pass shares tiles and heads
				      * between its own threads, OpenBLAS single-threaded (tiny models keep
				      * OpenBLAS's threading, whose rounding their reference cases pin, but for
				      * a causal model reusing tokens on OpenBLAS: model_open) */
	struct prefix_cache *prefix; /* causal models: the last trace of model_run_reuse (NULL otherwise) */
	int reuse_block;             /* with PREFIX: the reused tokens are a multiple of this (gemm_row_block) */
	struct fwd_stages *stages;   /* when set, forward_run adds its time per stage there (the benchmark) */
	bool value_norms;            /* runs record ‖f_h(x_j)‖ (trace->vnorm; model_keep_value_norms) */
	pthread_t prefault;          /* faults the weights in, in the order the forward uses them, then
				      * moves them to huge pages if model_promote_weights asked */
	bool prefault_running;
	volatile int prefault_stop;
	pthread_mutex_t prefault_lock; /* guards the three below */
	bool prefault_idle;          /* no background thread will look at promote_wanted any more */
	bool promote_wanted, promote_started;
	size_t pack_budget;          /* bytes of packed copies allowed (weight_packed_budget, when asked) */
	size_t packed_bytes;         /* bytes of packed copies made (atomic) */
	double promote_seconds;      /* the background thread's time packing and promoting (once done) */
};

/* Read config.json's shape and block settings into M->info and M->arch (model-config.c). */
int model_config_read(struct model *m, const struct hfconfig *c, struct err *e);
void model_config_free(struct model *m);
/* The activation named by setting S (gelu, gelu_new, relu, silu, ...) into *OUT; -1 with why otherwise. */
int model_config_activation(struct model *m, const struct hfconfig *c, enum family_setting s, enum activation *out,
			    struct err *e);

/* Bind the output head from the family's lm_head_* / mlm_* roles and C's settings into M->lm (lmhead.c).
 * Fails only when out of memory; a model without a usable head gets kind none and the reason. */
int lmhead_bind(struct model *m, const struct hfconfig *c, struct err *e);
/* The forward pass over token ids (forward.c). Fills T's attention, q, k, v and hidden states. */
int forward_run(const struct model *m, struct trace *t, const volatile int *cancel, struct err *e);
/* The same for the NB texts T[nb] at once: their rows stacked for every matrix product (the weights
 * are read once for all of them), attention text by text; each trace gets what forward_run gives. */
int forward_run_batch(const struct model *m, struct trace **t, int nb, const volatile int *cancel, struct err *e);

/* A new trace of M for SRC's tokens (ids, types, pieces), checked, before any forward pass; NULL with
 * why. */
struct trace *model_trace_like(const struct model *m, const struct trace *src, struct err *e);

/* Heads of an ablated run (ablate.h): MASK [n_layers][n_heads] non-zero for each; their context
 * (the d columns of the output projection's input) is set to 0 at every row, or to MEANS
 * [n_layers][n_heads][v_dim] when not NULL; with RECORD set instead, the pass is a clean one that
 * stores each marked head's context mean over the rows there (what a mean-ablation replaces it by). */
struct fwd_ablate {
	const unsigned char *mask;
	const float *means;
	float *record;
	const struct trace *clean; /* a full clean trace of the same tokens (or NULL): the blocks below the first
	                            * marked head are copied from it, not computed again */
};
/* forward_run with the heads of AB ablated (every row computed). */
int forward_run_ablated(const struct model *m, struct trace *t, const struct fwd_ablate *ab, const volatile int *cancel,
			struct err *e);

/* The same for a causal model whose first R0 tokens' rows (attention, q, k, v, hidden states,
 * nonfinite_layer) T holds already (prefix_fill): only tokens R0 .. n-1 are computed, with the same
 * sums a whole run does for them. */
int forward_run_from(const struct model *m, struct trace *t, int r0, const volatile int *cancel, struct err *e);

/* Whether the rotary angles of positions 0 .. R0-1 are the same at N tokens as at LEN_A and LEN_B
 * tokens (dynamic NTK scaling changes them past max_positions). */
bool forward_rope_reusable(const struct model *m, int n, int r0, int len_a, int len_b);

/* Ask for huge pages under T's large arrays before they are first written: a fresh 150 MB
 * attention array (bert-base, 512 tokens) otherwise takes 37,000 page faults. Advice only. */
void forward_advise(const struct trace *t);

/* Run only layer LAYER of T's tokens on the given input X_IN [n][hidden] (a reference's hidden state:
 * "teacher forcing", to check each layer's math apart from the rounding earlier layers pass on). */
int forward_layer(const struct model *m, struct trace *t, int layer, const float *x_in, struct err *e);

/* Bytes of weights converted or copied at load time (0 for aligned F32 files; only norms and biases
 * otherwise: matrices are used from the mapping). */
size_t model_bytes_converted(const struct model *m);

/* Bytes of matrices the float32 cache holds now (ATTNSCOPE_WEIGHT_CACHE bounds it). */
size_t model_bytes_cached(const struct model *m);

/* Replace the cache's budget (dropping what it holds): for tests and the benchmark. */
int model_set_cache_budget(struct model *m, size_t bytes);

/* Bytes of the weights model_promote_weights moved to huge pages (the benchmark prints them). */
size_t model_bytes_promoted(const struct model *m);

/* Bytes of packed copies of the weights model_promote_weights made (weights.h), and the seconds
 * its background thread took (after model_wait_prefault). */
size_t model_bytes_packed(const struct model *m);
double model_promote_seconds(const struct model *m);

/* Wait for the background prefault of the weights to finish (the benchmark times it). */
void model_wait_prefault(struct model *m);

#endif
