/* aggview.h -- pieces the analysis views share when they show a corpus aggregate (ctx->agg)
 * instead of one text: the model's shape as a trace without tokens, and a histogram of an agghist. */
#ifndef ATTNSCOPE_AGGVIEW_H
#define ATTNSCOPE_AGGVIEW_H

#include "corpus/aggregate.h"
#include "draw/canvas.h"
#include "trace/trace.h"

/* A trace holding only A's shape (layers, heads, key/value heads, head size, causal; no tokens,
 * no arrays), for the shape helpers (shapedesc.h, trace_kv_head). */
struct trace aggview_shape(const struct aggregate *a);

/* Draw H's counts in R as chart_histogram does, in at most MAXBINS columns: the bins from the
 * first occupied to the last, grouped by the smallest power of two that fits (so every column is
 * a whole number of H's bins and the picture is exact). ALSO (may be NULL) is another histogram
 * whose occupied bins the x range covers too, so that two drawn side by side share one axis.
 * *LO and *HI receive the x range drawn, *MAXCOUNT the highest column's count. Returns the number
 * of columns drawn: 0 (nothing drawn) when H holds no value. */
int aggview_hist(struct canvas *cv, struct rect r, const struct agghist *h, const struct agghist *also, int maxbins,
		  struct style bars, double *lo, double *hi, uint64_t *maxcount);

#endif
