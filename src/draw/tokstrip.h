/* tokstrip.h -- how tokens look on screen: the token strip and the labels views put on axes.
 *
 * The text of each token is tokentext.h's. The strip shows each token above its id; pieces of
 * one word are joined by '·' ('+' in ASCII), words are separated by a space; special tokens and
 * the selected token are styled by the theme. */
#ifndef ATTNSCOPE_TOKSTRIP_H
#define ATTNSCOPE_TOKSTRIP_H

#include <stdbool.h>
#include <stddef.h>

#include "draw/canvas.h"
#include "trace/tokentext.h"
#include "trace/trace.h"

/* A label for axes: tokentext_text, prefixed with '·' when it continues a word ('+' without UTF-8). */
void tokstrip_label(const struct trace *t, int i, bool utf8, char *buf, size_t n);

/* Draw the strip in R: two rows per line (tokens, then ids). With WRAP, lines wrap and as many
 * rows as needed are used (up to R.h); otherwise one line scrolls to keep SELECTED (-1: none)
 * visible. Returns the rows used. */
int tokstrip_draw(struct canvas *cv, struct rect r, const struct trace *t, int selected, bool wrap);
/* Rows tokstrip_draw needs for T in WIDTH columns when wrapping. */
int tokstrip_rows(const struct canvas *cv, const struct trace *t, int width);

#endif
