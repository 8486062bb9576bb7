/* relpos.h -- DeBERTa's disentangled attention: relative positions in log buckets, and the
 * content-to-position and position-to-content terms added to a head's scores, computed as
 * Hugging Face's DebertaV2 DisentangledSelfAttention does (transformers 4.31, float32). */
#ifndef ATTNSCOPE_RELPOS_H
#define ATTNSCOPE_RELPOS_H

#include <stdbool.h>

struct relpos {
	int span;           /* att_span: position_buckets, or max_relative_positions without buckets */
	int buckets;        /* position_buckets (0 = none: plain clipped distances) */
	int max_relative;   /* max_relative_positions (-1 in config.json = max_position_embeddings) */
	bool c2p, p2c;      /* which terms pos_att_type asks for */
	int scale_factor;   /* 1 + number of terms: scores are divided by sqrt(head_dim * this) */
};

/* The relative position of query I to key J (i - j, log-bucketed past buckets / 2). */
int relpos_bucket(const struct relpos *r, int i, int j);

/* Add the relative terms of one head to the scores S [I1 - I0][n] of its query rows I0 .. I1 - 1
 * (already q·k × SCALE): Q, K [n][d] the head's content queries and keys, PQ, PK [2 span][d] its
 * projections of the relative embeddings (rows STRIDE apart). SCALE is 1/sqrt(d × scale_factor). */
void relpos_add(const struct relpos *r, float *s, int i0, int i1, int n, int d, const float *q, const float *k,
		const float *pq, const float *pk, int stride, float scale);

#endif
