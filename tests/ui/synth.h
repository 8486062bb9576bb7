/* synth.h -- deterministic synthetic traces for UI tests: no model, known shapes and patterns. */
#ifndef ATTNSCOPE_TESTS_SYNTH_H
#define ATTNSCOPE_TESTS_SYNTH_H

#include <stdbool.h>

#include "trace.h"

enum synth_style {
	SYNTH_BERT,   /* [CLS] words [SEP] (b [SEP]); words over 5 bytes split into "##" pieces */
	SYNTH_GPT2,   /* causal; words after the first carry the byte-level space 'Ġ' */
};

/* A trace for TEXT (and TEXT_B, BERT only) with L layers of H heads. Head h follows pattern h % 4:
 * previous token, first token, self, broad. NULL on OOM. */
struct trace *synth_trace(const char *text, const char *text_b, int n_layers, int n_heads, enum synth_style style);

#endif
