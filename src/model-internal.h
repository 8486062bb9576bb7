/* model-internal.h -- the loaded model as the forward pass sees it (private to model.c, forward.c). */
#ifndef ATTNSCOPE_MODEL_INTERNAL_H
#define ATTNSCOPE_MODEL_INTERNAL_H

#include "family.h"
#include "model.h"
#include "safetensors.h"
#include "tokenizer.h"

enum activation { ACT_GELU_ERF, ACT_GELU_TANH, ACT_RELU };

/* One block's weights. "in→out" linears are applied as y = x·W + b whatever the storage layout;
 * the family's linear_layout says whether W is stored [out, in] or [in, out]. NULL bias = none. */
struct layer_weights {
	const float *ln1_w, *ln1_b;   /* [hidden] */
	const float *q_w, *k_w, *v_w; /* hidden→hidden each (separate projections) */
	const float *q_b, *k_b, *v_b; /* [hidden] */
	const float *qkv_w;           /* hidden→3*hidden (fused: q | k | v columns) */
	const float *qkv_b;           /* [3*hidden] */
	const float *out_w, *out_b;   /* hidden→hidden, [hidden] */
	const float *ln2_w, *ln2_b;   /* [hidden] */
	const float *up_w, *up_b;     /* hidden→intermediate, [intermediate] */
	const float *down_w, *down_b; /* intermediate→hidden, [hidden] */
};

struct model {
	struct model_info info;
	struct family fam;
	struct st_set st;            /* the mapped files; float pointers below may point into them */
	struct tokenizer *tok;
	double ln_eps;
	enum activation act;
	bool scale_attn_weights;     /* divide scores by sqrt(head_dim) */
	bool scale_by_inverse_layer; /* GPT-2 option: also divide by (layer + 1) */
	int type_vocab;              /* rows of the token-type table (0 = none) */

	const float *tok_emb;        /* [vocab_size][hidden] */
	const float *pos_emb;        /* [max_positions][hidden] */
	const float *type_emb;       /* [type_vocab][hidden] or NULL */
	const float *emb_ln_w, *emb_ln_b;     /* [hidden] or NULL */
	const float *final_ln_w, *final_ln_b; /* [hidden] or NULL */
	struct layer_weights *layers;         /* [n_layers] */

	float **owned;               /* buffers converted from F16/BF16 or copied from unaligned F32 */
	int n_owned, cap_owned;
	size_t bytes_converted;      /* how much of the model had to be copied (reported by the benchmark) */
};

/* The forward pass over token ids (forward.c). Fills T's attention, q, k, v and hidden states. */
int forward_run(const struct model *m, struct trace *t, const volatile int *cancel, struct err *e);

/* Bytes of weights converted or copied at load time (0 for aligned F32 files). */
size_t model_bytes_converted(const struct model *m);

#endif
