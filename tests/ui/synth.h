/* synth.h -- deterministic synthetic traces for UI tests: no model, known shapes and patterns. */
#ifndef ATTNSCOPE_TESTS_SYNTH_H
#define ATTNSCOPE_TESTS_SYNTH_H

#include <stdbool.h>

#include "trace/trace.h"

enum synth_style {
	SYNTH_BERT,   /* [CLS] words [SEP] (b [SEP]); words over 5 bytes split into "##" pieces */
	SYNTH_GPT2,   /* causal; words after the first carry the byte-level space 'Ġ' */
};

/* A trace for TEXT (and TEXT_B, BERT only) with L layers of H heads. Head h follows pattern h % 4:
 * previous token, first token, self, broad. NULL on OOM. */
struct trace *synth_trace(const char *text, const char *text_b, int n_layers, int n_heads, enum synth_style style);

/* A decoder like Llama/Mistral: "<s>" (special, BOS) then words as "▁word" pieces, causal, with
 * N_KV_HEADS key/value heads shared by groups of query heads, a sliding WINDOW of keys in every
 * layer (0 = none), and with ROTARY q_raw/k_raw holding the projections and q/k their rotation by
 * position (pairs of dimensions turned by pos·θ, so position 0 is unchanged). Head patterns as
 * synth_trace's, restricted to the keys a query may see, with "first" a BOS attention sink. */
struct synth_decoder {
	int n_kv_heads;
	int window;
	bool rotary;
};
struct trace *synth_decoder_trace(const char *text, int n_layers, int n_heads, const struct synth_decoder *d);

#endif
