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
/* A colouring of the strip (the explorer's surprisal strip): HEAT(ARG, i) in 0..1 colours token i's text
 * (NAN: not coloured) and LABEL(ARG, i, BUF, N, W) writes what stands under it, in at most W columns,
 * instead of its id. Both are called only for the tokens on screen. */
struct tokstrip_heat {
	float (*heat)(void *arg, int i);
	void (*label)(void *arg, int i, char *buf, size_t n, int w);
	void *arg;
};
/* tokstrip_draw with the colouring H (NULL: none). */
int tokstrip_draw_heat(struct canvas *cv, struct rect r, const struct trace *t, int selected, bool wrap,
		       const struct tokstrip_heat *h);
/* An encoder-decoder's decoder trace T (T->encoder set): the source's strip (the encoder's tokens) above the
 * target's (T's, the decoder input), each named in a gutter with which tokens are the rows and which the
 * columns: under CROSS (cross-attention) target rows and source columns, else (the decoder's self-attention)
 * target rows and columns. SELECTED and H are the target's. Returns the rows used. */
int tokstrip_draw_encdec(struct canvas *cv, struct rect r, const struct trace *t, bool cross, int selected, bool wrap,
			 const struct tokstrip_heat *h);
/* Rows tokstrip_draw_encdec needs for T in WIDTH columns when wrapping. */
int tokstrip_encdec_rows(const struct canvas *cv, const struct trace *t, int width);
/* Rows tokstrip_draw needs for T in WIDTH columns when wrapping. */
int tokstrip_rows(const struct canvas *cv, const struct trace *t, int width);

#endif
