/* model.h -- a loaded transformer: resolve a name or folder, map the weights, run the forward pass.
 *
 * A model owns its config, family description, memory-mapped weights and tokenizer. It is immutable
 * after model_open, so model_run may be called from a worker thread while the UI reads old traces. */
#ifndef ATTNSCOPE_MODEL_H
#define ATTNSCOPE_MODEL_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "trace/trace.h"

struct model;

struct model_info {
	char name[256];         /* as the user gave it ("demo-bert", "gpt2", a path) */
	char dir[PATH_MAX];     /* the resolved folder */
	char family[32];        /* "bert", "gpt2" (the family description's name) */
	bool causal;            /* decoder-only: attention masked above the diagonal */
	bool supports_pairs;    /* the tokenizer builds [CLS] a [SEP] b [SEP] with token_type_ids */
	int n_layers, n_heads, head_dim, hidden, intermediate;
	int n_kv_heads;         /* key/value heads: n_heads, or fewer (grouped-query / multi-query attention) */
	int v_dim;              /* a value's width: head_dim, except under latent attention (DeepSeek) */
	bool rotary;            /* rotary position embeddings: the trace also holds q/k before rotation */
	int max_positions, vocab_size;
	bool encoder_decoder;   /* an encoder and a decoder stack (T5, BART, ...): a run's trace is the encoder's,
	                         * its decoder member the decoder's with the cross-attention (trace.h) */
	int n_decoder_layers;   /* encoder_decoder: the decoder's layers (n_layers counts the encoder's) */
	int decoder_start;      /* encoder_decoder: the decoder start token's id */
};

/* Resolve NAME_OR_DIR (a folder, or a name looked up in the Hugging Face cache and attnscope's
 * model directories), read config.json, the family description, the safetensors weights
 * (memory-mapped) and the tokenizer. Never touches the network. */
int model_open(const char *name_or_dir, struct model **out, struct err *e);
void model_close(struct model *m);

/* For a session that runs the model again and again (the explorer, a corpus run): in the
 * background, give each F32 layer matrix whose products run on attnscope's kernel a packed copy in its
 * order (weights.h: the calls skip packing it, the same bits), within ATTNSCOPE_PACKED_WEIGHTS (by
 * default half the available memory); copy the other weights to huge pages where the kernel mapped
 * the model file in 4 KB pages (st_promote, hugemap.h). After a pause to read, a forward pass then
 * no longer waits on page-table walks: one more word on a 128-token gpt2 text took 25 ms instead of
 * 100 to 300. A one-shot run (--dump) does not ask: the copy would cost it more than it saves.
 * Nothing happens with ATTNSCOPE_PREFAULT=0. */
void model_promote_weights(struct model *m);
/* The same made now by the engine's threads, returning once they are done: for a corpus run, whose
 * workers keep every core busy from the start; in the background at low priority the copies came
 * late, and the products meanwhile packed their weights again in every call (200 texts of 25 tokens
 * on the bert-base shape: 5 % more CPU time). Made first: about 0.1 s on that shape. */
void model_promote_weights_now(struct model *m);

const struct model_info *model_get_info(const struct model *m);
/* From now on, runs record each head's value-vector norms ‖f_h(x_j)‖ (trace->vnorm, for the value-weighted
 * attention of analysis/valnorm.h): the products of one more output projection per layer, which a run
 * that will not show them does without (then trace->vnorm is NULL). Call it before the runs, not while
 * one goes on; a long text's compact trace keeps none either way. */
void model_keep_value_norms(struct model *m, bool on);
const struct tokenizer *model_get_tokenizer(const struct model *m);
/* An mBART or NLLB model's source and target languages, codes as "en_XX" or "deu_Latn" (NULL keeps
 * one; tokenizer_set_langs); -1 with why for an unknown code or a tokenizer without language codes.
 * Before the runs, not while one goes on. */
int model_set_langs(struct model *m, const char *src, const char *tgt, struct err *e);

/* Tokenize TEXT (and TEXT_B when not NULL), truncating to max_positions, and run the forward
 * pass capturing every head into a new trace (*OUT, free with trace_free). When CANCEL is not
 * NULL and becomes non-zero, the run stops early and returns -1 with message "cancelled". */
int model_run(const struct model *m, const char *text, const char *text_b, const volatile int *cancel,
	      struct trace **out, struct err *e);

/* model_run for an encoder-decoder model (info.encoder_decoder): TEXT through the encoder, TARGET's ids
 * (transformers' labels, the tokenizer's ids for TARGET) shifted right through the decoder, teacher-forced
 * as transformers runs it when given labels; TARGET NULL (and model_run) runs the decoder on the decoder
 * start token alone. Any other model with a TARGET: -1 with why. */
int model_run_target(const struct model *m, const char *text, const char *target, const volatile int *cancel,
		     struct trace **out, struct err *e);
/* The same from ids: the encoder's N IDS and the decoder's N_LABELS LABELS (shifted as above). */
int model_run_ids_target(const struct model *m, const int32_t *ids, int n, const int32_t *labels, int n_labels,
			 const volatile int *cancel, struct trace **out, struct err *e);

/* model_run for the explorer, which runs text after text as the user types: a causal model keeps
 * its last trace (within a memory budget) and, when the new text's tokens begin with the same
 * ones, copies their rows and computes only the tokens after them. The result is that of
 * model_run, bit for bit (the computed rows get the same sums: the reused tokens are a multiple of
 * gemm_row_block, 12 with OpenBLAS on Zen, and such a model's passes run OpenBLAS single-threaded).
 * One such run at a time per model (they take turns); encoders, MoE models on OpenBLAS, and every
 * model where the GEMM library's sums could not be made the same (gemm_row_block 0) run everything,
 * as model_run. */
int model_run_reuse(const struct model *m, const char *text, const char *text_b, const volatile int *cancel,
		    struct trace **out, struct err *e);

/* Several texts in one forward pass (corpus mode): model_prepare tokenizes TEXT (and TEXT_B) into
 * a checked trace that holds no results yet; model_forward_batch runs NB such traces together,
 * their tokens' rows stacked in every matrix product so the weights are read once for all (at ~25
 * tokens a text, reading them dominates). Each trace gets what model_run gives but the value norms
 * (trace->vnorm NULL: corpus aggregates do not use them); -1 with why (then
 * the traces hold no complete result). With ATTENTION_ONLY the traces keep no hidden states,
 * context or routing either, and the pass computes every layer's queries, keys and probabilities
 * and every layer's values but the last's, the same bits as without, and stops there: the last
 * block's values (where v is a linear of its own; NaN in the trace), context, output projection and
 * MLP (7 % of bert-base's arithmetic at 25 tokens) are not run. An encoder-decoder's
 * decoder cannot then run on such a trace; a batch takes traces all of one kind. */
int model_prepare(const struct model *m, const char *text, const char *text_b, bool attention_only,
		  struct trace **out, struct err *e);
int model_forward_batch(const struct model *m, struct trace **t, int nb, const volatile int *cancel, struct err *e);

/* Run the forward pass on ready-made token ids (N of them, TYPE_IDS may be NULL for all 0).
 * Tokens in the trace are the vocabulary's strings for the ids. */
int model_run_ids(const struct model *m, const int32_t *ids, const int32_t *type_ids, int n,
		  const volatile int *cancel, struct trace **out, struct err *e);

#endif
