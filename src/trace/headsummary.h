/* headsummary.h -- what a compact trace (long texts) keeps of each head's probabilities.
 *
 * The forward pass hands every head's [n][n] probabilities to headsummary_record before dropping
 * them: it stores the head finder's scores (headscore_head) and, for the grid, the max, sum and
 * count of the visible cells of TRACE_THUMB x TRACE_THUMB blocks, with specials shown and with
 * specials hidden (rows renormalised as heatmat_build does). heatdata_blocks turns them back into
 * the block matrix the grid pools. */
#ifndef ATTNSCOPE_HEADSUMMARY_H
#define ATTNSCOPE_HEADSUMMARY_H

#include "trace/trace.h"

enum { HEADSUM_MAX, HEADSUM_SUM, HEADSUM_COUNT, HEADSUM_KINDS };

/* Allocate T's scores and thumbnails (for T's token count and shape); -1 on OOM. */
int headsummary_alloc(struct trace *t);
/* Record LAYER/HEAD from its probabilities P[n][n]; T's tokens, ids and specials must be set. Heads
 * may be recorded from several threads at once (each writes only its own). -1 on OOM, when the
 * head's scores are NaN and its blocks empty. */
int headsummary_record(struct trace *t, int layer, int head, const float *p);
/* Blocks per side of the recorded thumbnails: the tokens shown, at most TRACE_THUMB. */
int headsummary_side(const struct trace *t, bool hide);
/* The recorded blocks of LAYER/HEAD with specials hidden (HIDE) or not: KIND (HEADSUM_*) as
 * [side][side], side = headsummary_side(T, HIDE). */
const float *headsummary_blocks(const struct trace *t, int layer, int head, bool hide, int kind);

#endif
