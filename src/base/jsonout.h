/* jsonout.h -- writing JSON by hand: strings, and the "model" object that opens both a trace's dump
 * (--dump json) and a saved corpus aggregate, so the two files describe a model the same way. */
#ifndef ATTNSCOPE_JSONOUT_H
#define ATTNSCOPE_JSONOUT_H

#include <stdbool.h>
#include <stdio.h>

/* S as a JSON string, quotes included: '"', '\\' and control characters escaped, valid UTF-8 kept as
 * is, each byte of an ill-formed sequence written as U+FFFD (so the output is always valid JSON). */
void jsonout_string(FILE *out, const char *s);

/* The shape every "model" object starts with. */
struct jsonout_model {
	const char *name, *family;
	bool causal;
	int layers, heads, kv_heads, head_dim, hidden, max_positions;
};

/* {"name": ..., "family": ..., "causal": ..., ..., "max_positions": N -- left open for the caller's
 * own fields and its closing brace. */
void jsonout_model(FILE *out, const struct jsonout_model *m);

#endif
