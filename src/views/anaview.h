/* anaview.h -- pieces the analysis views share: the "no trace yet" message and a draw's opening,
 * moving the selected head, layer and token (the keys that do it), the selected token with a
 * fallback, and a histogram with its kernel density curve. */
#ifndef ATTNSCOPE_ANAVIEW_H
#define ATTNSCOPE_ANAVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "views/view.h"

/* False (after writing why in AREA) when there is no trace or no token to analyse. */
bool anaview_ready(const struct view_ctx *ctx, struct canvas *cv, struct rect area);
/* A draw's opening: clip to AREA (*OLD receives the clip to put back) and check anaview_ready;
 * false, with the clip put back, when there is nothing to draw. */
bool anaview_begin(const struct view_ctx *ctx, struct canvas *cv, struct rect area, struct rect *old);
/* When ERROR is not NULL (a view's cache could not be built): write it on AREA's first line, put
 * back the clip OLD and return true, for the draw to return. */
bool anaview_failed(struct canvas *cv, struct rect area, struct rect old, const char *error);
/* Handle head-prev/next (through all heads of all layers) and layer-prev/next; false for others. */
bool anaview_nav(struct view_ctx *ctx, enum action a, int count);
/* The same over the heads and layers of SHAPE (NULL: nothing to move), whatever ctx->agg is. */
bool anaview_nav_shape(struct view_ctx *ctx, const struct trace *shape, enum action a, int count);
/* Up/down move the selected token COUNT times (at least once); false for other actions. */
bool anaview_token_keys(struct view_ctx *ctx, enum action a, int count);
/* Page up/down in a list that scrolls under the selected token: *ROW0 moves by PAGE rows COUNT
 * times (at least once; the draw clamps it); false for other actions. */
bool anaview_scroll_keys(enum action a, int count, int *row0, int page);
/* Move the selected token by DELTA (up/down in token-following views), clamped; from "none" it
 * starts at the last token. */
void anaview_move_token(struct view_ctx *ctx, int delta);
/* The selected token, or the last one when none is selected. */
int anaview_token(const struct view_ctx *ctx);
/* A histogram of X[n] over [LO, HI] in BINS bins in R (chart_histogram, the highest bar full
 * height; MAXCOUNT receives its count, may be NULL) in BARS, with X's Gaussian kernel density
 * (stats_kde: scipy's gaussian_kde, Scott's bandwidth, peak 1) evaluated on the plotted grid and
 * drawn over it in CURVE. Returns NULL with *BANDWIDTH set, or why there is no density. */
const char *anaview_hist_kde(struct canvas *cv, struct rect r, const double *x, size_t n, double lo, double hi,
			     int bins, struct style bars, struct style curve, int *maxcount, double *bandwidth);
/* Vocabulary entry ID of ctx->model as the token strip writes a token: readable, with '·' when it
 * continues a word; "<ID>" when the tokenizer has no such entry. */
void anaview_piece(const struct view_ctx *ctx, int32_t id, char *buf, size_t n);
/* The middle dot (or '-') for titles. */
const char *anaview_dot(const struct canvas *cv);

#endif
