/* trace.h -- the immutable result of one forward pass: tokens and everything every head computed.
 * Everything downstream (analysis, views, export) reads a trace; nothing downstream reruns the model. */
#ifndef ATTNSCOPE_TRACE_H
#define ATTNSCOPE_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tokenizer/tokenizer.h"

struct headscore;
struct trace_cache;

struct trace {
	char model_name[256];  /* what the user asked for, e.g. "demo-bert" or a folder */
	char family[32];       /* "bert", "gpt2" */
	bool causal;           /* true when keys after the query are masked (attention exactly 0 there) */
	int n_layers, n_heads, head_dim, hidden;
	int n_kv_heads;        /* key/value heads: n_heads, or fewer with grouped-query attention (GQA/MQA);
	                        * query head h reads kv head h / (n_heads / n_kv_heads) */
	int v_dim;             /* a value's (and a head's context's) width: head_dim, except under DeepSeek's
	                        * latent attention, whose v is narrower than q/k; 0 = head_dim (read it with
	                        * trace_v_dim) */
	int max_positions;
	bool rotary;           /* q/k are transformed after projection (rotary embedding, q/k norm):
	                        * q_raw/k_raw hold the projections, q/k what the scores use */
	bool rotary_interleaved; /* the rotary pairs dims (2i, 2i+1) (GPT-J, Cohere), not (i, i + dim/2) */

	int n;                 /* number of tokens */
	char **tokens;         /* [n] vocabulary strings as HF convert_ids_to_tokens gives them */
	enum tokenizer_pieces pieces; /* how those strings are written (tokentext.h reads them); UNKNOWN
	                        * (a trace made by hand): guessed from the strings */
	int32_t *ids;          /* [n] */
	int32_t *type_ids;     /* [n] token_type_ids (all 0 for GPT-2) */
	bool *special;         /* [n] added special tokens */
	bool truncated;        /* the text was cut to max_positions */
	int nonfinite_layer;   /* first layer whose output held NaN/Inf (0 = embeddings), -1 = none */

	float *attn;           /* [n_layers][n_heads][n][n] softmax probabilities, row = query; NULL in a compact
	                        * trace (long texts): read a head with trace_attn, which recomputes it */
	float *q;              /* [n_layers][n_heads][n][head_dim] query as the scores use it (after bias and,
	                        * where the model has them, q norm and rotary), before the score scaling */
	float *k;              /* [n_layers][n_kv_heads][n][head_dim] likewise; read it with trace_k */
	float *v;              /* [n_layers][n_kv_heads][n][v_dim]; an attention-only trace's last layer: NaN
	                        * where v is a linear of its own (trace_attention_only) */
	float *q_raw;          /* [n_layers][n_heads][n][head_dim] the projection before rotary/q norm; NULL
	                        * unless rotary (then read it with trace_q_raw) */
	float *k_raw;          /* [n_layers][n_kv_heads][n][head_dim] likewise */
	int *win_before;       /* [n_layers] a windowed layer's query i sees keys from i - win_before on
	                        * (sliding-window attention); -1 = no limit. Read with trace_key_range. */
	int *win_after;        /* [n_layers] ... up to i + win_after (bidirectional local attention); -1 = none */
	float *score_scale;    /* [n_layers] a head's scores are q·k times this (1/sqrt(head_dim) unless the model
	                        * scales otherwise: query_pre_attn_scalar, GPT-2's 1/(layer+1), DeBERTa's 1/sqrt(3d)) */
	float softcap;         /* scores then pass through softcap · tanh(score / softcap) (Gemma 2); 0 = none */
	bool relative_terms;   /* the scores also hold terms not computed from q and k (DeBERTa's relative ones) */
	float *alibi;          /* [n_heads] ALiBi slopes: head h's scores get + alibi_scale · alibi[h] · j for key j
	                        * (BLOOM), after the scaling; NULL = none (trace_free frees it) */
	float alibi_scale;     /* with alibi: 1 (BLOOM), or 2/sqrt(head_dim) where transformers' eager Falcon adds
	                        * the bias before the scaling and again, scaled, in its mask */
	bool *nope;            /* [n_layers] true where the layer has no rotary although the model has (SmolLM3's NoPE
	                        * layers): q/k there are the projections, position-free; NULL = none (trace_free
	                        * frees it) */
	float *sinks;          /* [n_layers][n_heads] learned attention sinks (gpt-oss): each row's softmax also runs
	                        * over this logit, whose column is then dropped, so a row sums to 1 minus the sink's
	                        * share (trace_sink_share); NULL = none (trace_free frees it) */
	int *chunk;            /* [n_layers] chunked attention (Llama 4): query i of a layer with chunk C > 0 sees
	                        * only the keys of its own chunk, from i - i % C on; 0 = none. NULL = no layer
	                        * has chunks (trace_free frees it). Read with trace_key_range. */
	float *hidden_states;  /* [n_layers + 1][n][hidden]; 0 = embeddings output. NULL in an attention-only trace
	                        * (corpus mode's, engine/model.h's model_prepare) */
	float *vnorm;          /* [n_layers][n_heads][n] ‖f_h(x_j)‖ = ‖v_j W_O,h‖ (Kobayashi et al. 2020): the size of
	                        * what head h moves from token j, v_j (kv head under GQA, no bias added) times the
	                        * rows of the output projection its context feeds, output bias excluded; a model's
	                        * trace only (forward.c), zeros in one made by hand. Read with trace_vnorm. */
	const struct trace *weights_of; /* a trace of transformed weights (analysis/valnorm.h) shares every array
	                        * but attn/cache/scores/thumb with this α trace, which outlives it; NULL otherwise */
	bool value_weighted;   /* ... its attn is ‖α_ij f_h(x_j)‖ (Kobayashi et al. 2020), not α */
	bool sink_hidden;      /* ... the sink (the first token's column, or the learned sink's share) is dropped
	                        * and each row renormalised over the other keys */
	float *final_rstd;     /* [n] 1 / the final norm's denominator of each position's last residual stream (the
	                        * one before the final norm that hidden_states[n_layers] carries): 1 / sqrt(variance +
	                        * eps) for a LayerNorm, 1 / sqrt(mean square + eps) for an RMSNorm -- the frozen scale
	                        * of direct logit attribution (engine/lens.h); 0 = not recorded */
	/* A mixture-of-experts model's routing (Mixtral, OLMoE, Qwen3-MoE); NULL/0 otherwise, and in a trace
	 * of words (trace_free frees them). */
	int moe_k;             /* experts each token goes to in a routing layer (top-k) */
	bool *moe_layer;       /* [n_layers] true where the layer routes; a dense layer's rows hold -1 and 0 */
	int32_t *moe_topk;     /* [n_layers][n][moe_k] the experts chosen, in torch.topk's order (best first) */
	float *moe_weights;    /* [n_layers][n][moe_k] their weights as applied to the experts' outputs */

	/* An encoder-decoder model (T5, BART, ...): this trace is the ENCODER's, read by every view as any other
	 * model's (attn = encoder self-attention, tokens = the source text); DECODER is the decoder's own trace,
	 * built the same way (tokens = the decoder input: the target's ids shifted right behind the decoder
	 * start token, causal self-attention in attn/q/k/v, hidden_states [n_dec_layers + 1][n][hidden]) plus
	 * the cross-attention below. NULL/0 for every other model and in a trace of words. */
	struct trace *decoder; /* owned: trace_free frees it */
	const struct trace *encoder; /* in a decoder's trace: the encoder's trace (not owned; it owns this one) */
	int32_t *labels;       /* [n] decoder: the target's ids (transformers' labels); ids are them shifted right */
	float *pos_bias;       /* [n_heads][n][n] T5's relative position bias of the stack (bidirectional buckets in
	                        * the encoder, causal ones in the decoder, without the causal mask): the scores'
	                        * additive term in every layer (attnscore.h step 2); NULL = none */
	int32_t *pos_buckets;  /* [n][n] its bucket of query i and key j; NULL = none */
	float *context;        /* [n_layers][n][n_heads * v_dim] encoder-decoder only: each layer's attention output
	                        * before the output projection (heads side by side); NULL elsewhere */
	int n_cross;           /* decoder: the encoder's token count, the cross-attention's keys */
	float *cross_attn;     /* [n_layers][n_heads][n][n_cross] decoder: cross-attention probabilities, row = decoder
	                        * query, column = encoder token (no mask, no bias) */
	float *cross_q;        /* [n_layers][n_heads][n][head_dim] decoder: cross-attention queries, before the scale */
	float *cross_k;        /* [n_layers][n_heads][n_cross][head_dim] keys: projections of the encoder's output */
	float *cross_v;        /* [n_layers][n_heads][n_cross][head_dim] values, likewise */
	float *cross_context;  /* [n_layers][n][n_heads * head_dim] the cross-attention output before its projection */

	/* A compact trace keeps no n x n matrices (32 layers x 32 heads x 4096^2 floats would be 68 GB):
	 * trace_attn recomputes the head it is asked for with attn_fill into a cache of the last
	 * TRACE_ATTN_SLOTS heads, and the forward pass records what the grid and the head finder read of
	 * every head. A model's trace recomputes from q, k and the score terms above with the forward
	 * pass's own score pipeline (engine/attnscore.c's attnscore_trace_fill); a trace of words merges
	 * its pieces' recomputed head (analysis/words.c). */
	struct trace_cache *cache; /* NULL in a full trace */
	bool blas_serial;      /* the forward pass ran its sgemms on one OpenBLAS thread (our own threads
	                        * took the heads): recomputed heads do too, for the same bits */
	void (*attn_fill)(const struct trace *t, int layer, int head, float *out /* [n][n] */); /* must be set */
	struct headscore *scores;  /* [n_layers * n_heads] recorded head-finder scores, or NULL (headscore.h) */
	float *thumb;          /* [n_layers * n_heads][2][3][TRACE_THUMB^2] recorded block summaries, or NULL:
	                        * for specials shown [0] and hidden [1] (rows renormalised as heatmat_build does),
	                        * the max, sum and count of the visible cells of each block (headsummary.h) */

	/* A trace of words (words.c) merged from the pieces of SOURCE; NULL/0 in a trace of pieces. */
	const struct trace *source; /* the trace of pieces (not owned: it outlives this one) */
	int *word_of;          /* [source->n] the word each piece belongs to */
	int *word_start;       /* [n + 1] word w is pieces word_start[w] .. word_start[w + 1] - 1 */
};

/* Heads a compact trace keeps recomputed: a pointer from trace_attn stays valid until this many
 * other heads of the same trace have been asked for (so two at once are always safe). The cache is
 * locked, but that count covers every thread: threads sharing a compact trace must not hold its
 * pointers across each other's requests (none do: each corpus worker owns its trace, and the
 * views read theirs from the UI thread). */
#define TRACE_ATTN_SLOTS 4
#define TRACE_THUMB 64 /* blocks per side of a compact trace's recorded thumbnails */

const float *trace_attn_cached(const struct trace *t, int layer, int head);
/* On this thread, call HOOK(ARG, trace) after each head a compact trace recomputes (NULL: none). A
 * view that reads every head of a long text recomputes them all, for seconds or minutes: the
 * explorer shows the count meanwhile. */
void trace_on_recompute(void (*hook)(void *arg, const struct trace *t), void *arg);
/* The user stopped such a view (STOP true), until it is called with false: on this thread, a head
 * a compact trace does not hold is no longer recomputed: trace_attn returns some other finite
 * values at once, and the loops over every head (rollout, means, vectors) end early. Whatever was
 * computed meanwhile must be thrown away: the explorer closes the view. */
void trace_stop_recompute(bool stop);
bool trace_recompute_stopped(void);
/* Head HEAD of LAYER: [n][n] probabilities, row = query. In a compact trace the memory belongs to the
 * cache (see TRACE_ATTN_SLOTS), whose memory is allocated with the trace: this never fails. */
static inline const float *trace_attn(const struct trace *t, int layer, int head)
{
	if (!t->attn)
		return trace_attn_cached(t, layer, head);
	return t->attn + ((size_t)layer * t->n_heads + head) * (size_t)t->n * t->n;
}
static inline bool trace_compact(const struct trace *t)
{
	return t->attn == NULL && t->cache != NULL;
}
/* The key/value head that query head HEAD reads. */
static inline int trace_kv_head(const struct trace *t, int head)
{
	return t->n_kv_heads > 0 && t->n_kv_heads < t->n_heads ? head / (t->n_heads / t->n_kv_heads) : head;
}
static inline const float *trace_q(const struct trace *t, int layer, int head)
{
	return t->q + ((size_t)layer * t->n_heads + head) * (size_t)t->n * t->head_dim;
}
/* The key that query head HEAD reads (shared by the heads of a group under GQA). */
static inline const float *trace_k(const struct trace *t, int layer, int head)
{
	return t->k + ((size_t)layer * t->n_kv_heads + trace_kv_head(t, head)) * (size_t)t->n * t->head_dim;
}
/* The width of a value vector (a trace made by hand may leave v_dim 0: then head_dim). */
static inline int trace_v_dim(const struct trace *t)
{
	return t->v_dim > 0 ? t->v_dim : t->head_dim;
}
static inline const float *trace_v(const struct trace *t, int layer, int head)
{
	return t->v + ((size_t)layer * t->n_kv_heads + trace_kv_head(t, head)) * (size_t)t->n * trace_v_dim(t);
}
/* Query/key before rotary and q/k norm (the same as trace_q/trace_k when the model has neither). */
static inline const float *trace_q_raw(const struct trace *t, int layer, int head)
{
	if (!t->q_raw)
		return trace_q(t, layer, head);
	return t->q_raw + ((size_t)layer * t->n_heads + head) * (size_t)t->n * t->head_dim;
}
static inline const float *trace_k_raw(const struct trace *t, int layer, int head)
{
	if (!t->k_raw)
		return trace_k(t, layer, head);
	return t->k_raw + ((size_t)layer * t->n_kv_heads + trace_kv_head(t, head)) * (size_t)t->n * t->head_dim;
}
/* The keys LO..HI (inclusive) that query I of LAYER may attend to: causal masking, sliding windows and
 * chunks (the masks of the score pipeline, engine/attnscore.h, and of the views that mark masked keys). */
static inline void trace_key_range(const struct trace *t, int layer, int i, int *lo, int *hi)
{
	int before = t->win_before ? t->win_before[layer] : -1, after = t->win_after ? t->win_after[layer] : -1;
	*lo = before < 0 || i - before < 0 ? 0 : i - before;
	*hi = t->causal ? i : after < 0 || i + after > t->n - 1 ? t->n - 1 : i + after;
	int chunk = t->chunk ? t->chunk[layer] : 0;
	if (chunk > 0 && i - i % chunk > *lo) /* keys j <= i with j / C == i / C */
		*lo = i - i % chunk;
}
/* The share of query I's attention that head HEAD of LAYER gives its learned sink: 1 minus the row's sum
 * (ROW, trace_attn's row I); 0 for a model without sinks, whose rows sum to 1. */
static inline float trace_sink_share(const struct trace *t, const float *row)
{
	if (!t->sinks)
		return 0.0f;
	double s = 0;
	for (int j = 0; j < t->n; j++)
		s += row[j];
	return s < 1 ? (float)(1 - s) : 0.0f;
}
/* ‖f_h(x_j)‖ of every token j of head HEAD of LAYER: [n]. */
static inline const float *trace_vnorm(const struct trace *t, int layer, int head)
{
	return t->vnorm + ((size_t)layer * t->n_heads + head) * (size_t)t->n;
}
/* Whether T's attention is value-weighted (analysis/valnorm.h), itself or the pieces of its words. */
static inline bool trace_weights_norm(const struct trace *t)
{
	return t && (t->value_weighted || (t->source && t->source->value_weighted));
}
/* Whether T's sink is hidden, rows renormalised (analysis/valnorm.h), itself or the pieces of its words. */
static inline bool trace_sink_hidden(const struct trace *t)
{
	return t && (t->sink_hidden || (t->source && t->source->sink_hidden));
}
/* Cross-attention of a decoder's trace: head HEAD of LAYER, [n][n_cross] probabilities, row = decoder query. */
static inline const float *trace_cross_attn(const struct trace *t, int layer, int head)
{
	return t->cross_attn + ((size_t)layer * t->n_heads + head) * (size_t)t->n * t->n_cross;
}
/* Allocate the cross-attention arrays of a decoder's trace for N_CROSS encoder tokens; -1 on OOM. */
int trace_alloc_cross(struct trace *t, int n_cross);
static inline const float *trace_hidden(const struct trace *t, int layer)
{
	return t->hidden_states + (size_t)layer * t->n * t->hidden;
}

/* Allocate a zeroed trace with room for N tokens of a model of the given shape (one key/value head
 * per query head, no rotary, no windows); NULL on OOM. */
struct trace *trace_new(int n_layers, int n_heads, int head_dim, int hidden, int n);

struct trace_shape {
	int n_layers, n_heads, n_kv_heads, head_dim, hidden, n;
	bool rotary;  /* allocate q_raw/k_raw */
	bool compact; /* no attn: set attn_fill (and, for a model's trace, the recorded summaries) */
	int v_dim;    /* width of v; 0 = head_dim (every family but DeepSeek's latent attention) */
	bool written; /* the caller writes every element of attn (every key of every row), q, k, v, q_raw,
		       * k_raw and hidden_states before anything reads them (a forward pass does): those start
		       * undefined (tracemem_alloc), not zeroed; the other arrays are zeros either way */
};
/* The same for any shape: N_KV_HEADS must divide N_HEADS. */
struct trace *trace_new_shaped(const struct trace_shape *s);

/* The bytes of n x n matrices a full trace may hold before a model's trace goes compact: the
 * environment's ATTNSCOPE_TRACE_BUDGET (bytes, or with a k, M or G suffix), else TRACE_BUDGET_DEFAULT. */
#define TRACE_BUDGET_DEFAULT (512.0 * 1024 * 1024)
double trace_budget(void);

/* Free what T would hold of the residual stream -- hidden states, each layer's context, MoE routing --
 * leaving it attention-only (those fields NULL): a forward pass into it stops at the last layer's
 * attention weights, and computes that layer's values only where a fused projection gives them anyway
 * (NaN otherwise) (engine/model.h's model_prepare, for corpus mode). */
void trace_attention_only(struct trace *t);

/* Copy into DST (of SRC's shape) what SRC says of its model rather than of its tokens: name, family,
 * how pieces are written, causality, rotary style, positions, score scale, soft-cap, relative terms,
 * NoPE layers, ALiBi slopes and attention sinks (not the windows and chunks, which count tokens). A trace
 * derived from another (a trace of words) calls it, so a field added here reaches every such trace. -1 when
 * out of memory. */
int trace_copy_model(struct trace *dst, const struct trace *src);

/* Free the trace and everything it owns (NULL is fine). */
void trace_free(struct trace *t);

#endif
