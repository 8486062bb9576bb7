/* rope.h -- rotary position embeddings: the inverse frequencies of a config (rope_theta, partial
 * rotary, rope_scaling types linear / dynamic / llama3 / yarn) and the cos/sin tables for a text,
 * computed in float32 in the order Hugging Face's modeling_rope_utils and rotary classes use. */
#ifndef ATTNSCOPE_ROPE_H
#define ATTNSCOPE_ROPE_H

#include <stdbool.h>

#include "base/err.h"

enum rope_type { ROPE_DEFAULT, ROPE_LINEAR, ROPE_DYNAMIC, ROPE_LLAMA3, ROPE_YARN };

struct rope {
	enum rope_type type;
	int dim;             /* rotated dimensions (head_dim × partial rotary fraction), even */
	double base;         /* rope_theta */
	double factor;       /* rope_scaling factor (1 = none) */
	int max_positions;   /* config max_position_embeddings (dynamic: the length past which it rescales) */
	float attn_factor;   /* cos and sin are multiplied by it (yarn's attention scaling; 1 otherwise) */
	bool interleaved;    /* pairs (2i, 2i+1), GPT-J's rotate_every_two, instead of (i, i + dim/2); set by
	                      * the caller after rope_init (the family's rope_style) */
	float *inv_freq;     /* [dim / 2] for texts up to max_positions */
};

/* Describe the rotary embedding of DIM dims with base THETA. SCALING_JSON is config.json's
 * rope_scaling object (a json_t *, or NULL for none); an unknown or malformed type is an error
 * naming it. CONFIG_PATH is used in messages. */
int rope_init(struct rope *r, int dim, double theta, int max_positions, const void *scaling_json,
	      const char *config_path, struct err *e);
void rope_free(struct rope *r);

/* The longest text the rope is meant for (dynamic scaling extends max_positions by its factor). */
int rope_max_length(const struct rope *r);

/* cos/sin tables for positions 0..N-1: COS and SIN [n][dim / 2] (the halves HF concatenates are
 * equal). Dynamic scaling recomputes the frequencies for N past max_positions, as HF does. */
int rope_tables(const struct rope *r, int n, float *cos_out, float *sin_out, struct err *e);

/* Rotate X [n][stride] in place on its first DIM dims, with the tables of rope_tables: pair i is
 * dims (i, i + dim/2) (rotate-half, GPT-NeoX and Llama) or, when R->interleaved, dims (2i, 2i+1)
 * (GPT-J's rotate_every_two, Cohere); either way it turns by angle i of the tables. */
void rope_apply(const struct rope *r, float *x, int n, int stride, const float *cos_t, const float *sin_t);

#endif
