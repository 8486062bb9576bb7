/* marks.h -- several tokens at once: the marked tokens of view_ctx and their combined attention.
 *
 * In the heatmap, the head view and the vector view a key marks or unmarks the token under the
 * cursor. With tokens marked, those views show the set's combined attention: what they attend to
 * is the sum of their rows, who attends to them is the sum of their columns (each query's total
 * weight on the set). */
#ifndef ATTNSCOPE_MARKS_H
#define ATTNSCOPE_MARKS_H

#include <stdbool.h>
#include <stddef.h>

#include "views/view.h"

/* Mark TOK, or unmark it when marked; says what happened in ctx->message. False when the set is
 * full (VIEW_MARKS_MAX) or TOK is not a token. */
bool marks_toggle(struct view_ctx *ctx, int tok);
bool marks_has(const struct view_ctx *ctx, int tok);
/* The marked tokens as "capybara + was" into BUF ("" when none). */
const char *marks_label(const struct view_ctx *ctx, bool utf8, char *buf, size_t n);
/* Re-express the marks, tokens of FROM (pieces or words), in T: each token by its word in a trace
 * of words, each word by its first piece in a trace of pieces (words.h); duplicates dropped. */
void marks_remap(struct view_ctx *ctx, const struct trace *from, const struct trace *t);

/* GIVEN[c] = sum over the K rows ROWS of V[.][cols]: what those queries attend to together. */
void marks_given(const float *v, int cols, const int *rows, int k, float *given);
/* RECEIVED[r] = sum over the K columns COLS of V[rows][ncols]: each query's weight on the set. */
void marks_received(const float *v, int rows, int ncols, const int *cols, int k, float *received);

#endif
