/* heatdata.h -- turning attention into the numbers a heatmap paints.
 *
 * Pure functions over a trace, with no terminal in sight: pick a head or a mean over heads or
 * layers, drop special tokens and renormalise rows, map probabilities to [0,1] colour positions
 * (linear, log or per-row rank), and shrink a matrix to a thumbnail by max or mean pooling. */
#ifndef ATTNSCOPE_HEATDATA_H
#define ATTNSCOPE_HEATDATA_H

#include <stdbool.h>

#include "trace/trace.h"

enum heat_agg {
	HEAT_HEAD,        /* one head */
	HEAT_LAYER_MEAN,  /* mean over the heads of one layer */
	HEAT_ALL_MEAN,    /* mean over every head of every layer */
};

enum heat_scale {
	HEAT_LINEAR,  /* p as is */
	HEAT_LOG,     /* log10 p from HEAT_LOG_FLOOR (→ 0) to 1 (→ 1) */
	HEAT_RANK,    /* rank of p within its row, 0 = smallest, 1 = largest */
	HEAT_SCALE_COUNT
};
#define HEAT_LOG_FLOOR 1e-4f

enum heat_pool { HEAT_POOL_MAX, HEAT_POOL_MEAN };

/* The matrix a heatmap shows, after aggregation and optional removal of special tokens. */
struct heatmat {
	int rows, cols;   /* queries, keys shown */
	int *row_tok;     /* [rows] token index (into the trace) of each row */
	int *col_tok;     /* [cols] token index of each column */
	float *v;         /* [rows][cols] attention probabilities */
	int *lo, *hi;     /* [rows] the keys (token indices, inclusive) the row's query may see under causal
	                   * masking and sliding windows (for the mean over all layers: in any layer);
	                   * the other cells are masked (their weight is exactly 0, by construction) */
	float *kept;      /* [rows] the share of the row's weight on the shown keys before renormalising:
	                   * 1 unless specials are hidden (a BOS attention sink can leave very little) */
};

/* The share of query ROW's attention that went to the learned sinks (gpt-oss) in the head, layer mean or
 * overall mean AGG of T: 1 minus the row's sum, averaged over the heads taken; 0 without sinks. Views
 * showing a row say it, since such rows sum to less than 1 and are never renormalised. */
double heat_sink_share(const struct trace *t, int layer, int head, enum heat_agg agg, int row);

/* Build OUT (free with heatmat_free) for LAYER/HEAD of T. With HIDE_SPECIAL, rows and columns of
 * special tokens are dropped and each remaining row is divided by its new sum, so rows still sum
 * to 1 (a row whose remaining weights are all 0 stays 0). -1 on OOM. */
int heatmat_build(const struct trace *t, int layer, int head, enum heat_agg agg, bool hide_special,
		  struct heatmat *out);
void heatmat_free(struct heatmat *m);
/* The same for the cross-attention of a decoder's trace T (trace_cross_attn): rows are T's tokens (the
 * target), columns the encoder's (T->encoder, the source), nothing masked; with HIDE_SPECIAL each side's
 * special tokens are dropped and rows renormalised. -1 on OOM or when T has no cross-attention. */
int heatmat_build_cross(const struct trace *t, int layer, int head, enum heat_agg agg, bool hide_special,
			struct heatmat *out);
/* Is cell (R, C) of M masked (a key its query cannot see)? */
bool heatmat_masked(const struct heatmat *m, int r, int c);
/* Set the masked cells of X[m->rows][m->cols] (values laid out like m->v) to NaN, so colour scales
 * skip them, pooling ignores them and heatmaps draw them as blank. */
void heatmat_mask(const struct heatmat *m, float *x);
/* The position of token TOK among the rows (or columns) of M, -1 when hidden. */
int heatmat_find_row(const struct heatmat *m, int tok);
int heatmat_find_col(const struct heatmat *m, int tok);

/* The signed difference B − A of two matrices of one head in two texts, laid out like A, into
 * OUT[a->rows][a->cols] (may be a->v): cells whose query and key are both among the first
 * MATCHING tokens (compare_rows) and shown in B get B − A, the rest NaN. */
void heatmat_diff(const struct heatmat *a, const struct heatmat *b, int matching, float *out);
/* The same where rows and columns are different texts (cross-attention: decoder rows, encoder columns): rows
 * below ROWS_MATCHING and columns below COLS_MATCHING are compared. */
void heatmat_diff_rect(const struct heatmat *a, const struct heatmat *b, int rows_matching, int cols_matching,
		       float *out);
/* Differences D[n] to positions on a diverging ramp scaled to ±RANGE (> 0): (d / RANGE + 1) / 2,
 * clamped to [0, 1]; NaN stays NaN. RANGE 1 is the fixed scale of weights in [0, 1]. */
void heatdata_diverging(const float *d, int n, float range, float *out);
/* The largest |D[i]| over the N values that are not NaN (0 when there are none): the symmetric
 * scale of a difference map, so that changes of 0.006 are seen and not drawn as background. */
float heatdata_absmax(const float *d, size_t n);

/* Map IN[rows][cols] to colour positions OUT (may equal IN except for HEAT_RANK). NaN stays NaN. */
void heatdata_scale(const float *in, int rows, int cols, enum heat_scale scale, float *out);
const char *heatdata_scale_name(enum heat_scale s);
/* What the two ends of scale S's colour ramp stand for ("0" and "1"; log: "1e-4" and "1"; rank:
 * "lowest" and "highest"), for colour bars. */
void heatdata_scale_ends(enum heat_scale s, const char **lo, const char **hi);

/* Pool IN[rows][cols] into OUT[out_rows][out_cols]. Output cell (i,j) covers input rows
 * floor(i*rows/out_rows) .. floor((i+1)*rows/out_rows)-1 (at least one row, so a larger output
 * repeats cells) and likewise for columns. NaN inputs are ignored; an all-NaN block gives NaN. */
void heatdata_downsample(const float *in, int rows, int cols, float *out, int out_rows, int out_cols,
			 enum heat_pool pool);
/* Head LAYER/HEAD's thumbnail OUT[out_rows][out_cols] straight from T's attention: the same floats as
 * heatmat_build (HEAT_HEAD, no token hidden), heatmat_mask, heatdata_scale, dimming all but token SEL's
 * row and column to a quarter (SEL -1: none) and heatdata_downsample, in one pass over the keys each
 * row sees (the grid pools 144 heads for every new trace). -1 for HEAT_RANK, which needs whole rows. */
int heatdata_head_thumb(const struct trace *t, int layer, int head, enum heat_scale scale, int sel, float *out,
			int out_rows, int out_cols, enum heat_pool pool);
/* First input index covered by output index I of OUT_N bins over N inputs. */
int heatdata_bin_start(int i, int n, int out_n);

/* A compact trace's recorded blocks of LAYER/HEAD (headsummary.h), specials hidden or not, as the
 * matrix the grid pools: OUT[side][side] the max (POOL max) or the mean of each block's visible
 * cells, NaN where it has none. Returns side (headsummary_side). The blocks are single tokens when
 * the text has at most TRACE_THUMB tokens shown, so pooling them equals pooling heatmat_build's. */
int heatdata_blocks(const struct trace *t, int layer, int head, bool hide, enum heat_pool pool, float *out);
/* The block holding token TOK (-1 when hidden) among the SIDE blocks of heatdata_blocks. */
int heatdata_block_of(const struct trace *t, bool hide, int side, int tok);

#endif
