/* refcase.h -- read a reference case (JSON written by the Hugging Face code or by our own reference
 * script: text, tokens, ids, attentions, q, k, v, hidden_states) and compare a trace against it. */
#ifndef ATTNSCOPE_REFCASE_H
#define ATTNSCOPE_REFCASE_H

#include <stdbool.h>
#include <stdint.h>

#include "trace/trace.h"

struct refcase {
	void *root;           /* json_t * */
	const char *text;     /* borrowed from root */
	const char *text_b;   /* NULL when absent */
	int n;
	int32_t *ids;         /* [n] */
	int32_t *type_ids;    /* [n], 0 when absent */
	/* encoder-decoder cases: the target text and the decoder's labels (the target's ids); NULL/0 otherwise */
	const char *target;
	int n_labels;
	int32_t *labels;      /* [n_labels] */
};

/* Max differences of an encoder-decoder case's decoder object against a decoder's trace; -1 = absent. */
struct refdiff_decoder {
	bool ids_equal, tokens_equal, labels_equal;
	char first_mismatch[256];
	double attn, cross_attn, q, k, v, cross_q, cross_k, cross_v, context, cross_context, hidden;
	double pos_bias;      /* T5: the decoder's position_bias; -1 elsewhere */
	double enc_context, enc_pos_bias; /* the encoder's context and (T5) position_bias, from the top level */
	int bucket_mismatches; /* position_buckets cells that differ (encoder and decoder), -1 = none in the case */
};

/* Max absolute differences between a trace and a case; -1 when the case lacks that quantity. */
struct refdiff {
	bool tokens_equal, ids_equal;
	char first_mismatch[256];
	double attn, q, k, v, hidden;
	double q_raw, k_raw; /* before rotary / q-k norm, when the case has q_rot and k_rot; else -1 */
	/* A MoE model's routing, when both the case (moe_topk, moe_weights) and the trace have it; else -1:
	 * the (layer, token, slot) cells with another expert (a dense layer on one side only counts its
	 * tokens), and the largest difference of the weights where the experts agree. */
	int moe_topk_mismatches;
	double moe_weights;
};

/* Compare the decoder object of encoder-decoder case C with DEC (the encoder trace's decoder) and the
 * encoder-only extras (context, position_bias) with ENC. */
void refcase_compare_decoder(const struct refcase *c, const struct trace *enc, const struct trace *dec,
			     struct refdiff_decoder *d);

int refcase_load(const char *path, struct refcase *c, char *msg, size_t msgsz);
void refcase_free(struct refcase *c);
void refcase_compare(const struct refcase *c, const struct trace *t, struct refdiff *d);
/* The case's hidden_states[LAYER] (COUNT = n × hidden floats) into OUT; -1 when absent or misshaped. */
int refcase_hidden(const struct refcase *c, int layer, float *out, size_t count);
/* Differences of layer LAYER alone (attention, q and k as the scores use them); the rest -1. */
void refcase_compare_layer(const struct refcase *c, const struct trace *t, int layer, struct refdiff *d);

#endif
