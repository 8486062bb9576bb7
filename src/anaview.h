/* anaview.h -- pieces the analysis views share: the "no trace yet" message, moving the selected
 * head, layer and token, and the selected token with a fallback. */
#ifndef ATTNSCOPE_ANAVIEW_H
#define ATTNSCOPE_ANAVIEW_H

#include <stdbool.h>

#include "view.h"

/* False (after writing why in AREA) when there is no trace or no token to analyse. */
bool anaview_ready(const struct view_ctx *ctx, struct canvas *cv, struct rect area);
/* Handle head-prev/next (through all heads of all layers) and layer-prev/next; false for others. */
bool anaview_nav(struct view_ctx *ctx, enum action a, int count);
/* Move the selected token by DELTA (up/down in token-following views), clamped; from "none" it
 * starts at the last token. */
void anaview_move_token(struct view_ctx *ctx, int delta);
/* The selected token, or the last one when none is selected. */
int anaview_token(const struct view_ctx *ctx);
/* The middle dot (or '-') for titles. */
const char *anaview_dot(const struct canvas *cv);

#endif
