/* tokstrip.h -- how tokens look on screen: the token strip and the labels views put on axes.
 *
 * Vocabulary strings are turned back into readable text: GPT-2's byte-level alphabet is decoded
 * ('Ġ' is a space, other bytes become the UTF-8 they encode), WordPiece's "##" and BPE's missing
 * leading space mark a piece that continues the previous word. SentencePiece-style pieces
 * (Llama 2, Mistral, Gemma) are read the same way with '▁' as the space, and their byte-fallback
 * pieces (<0xE6><0x9D><0xB1>) show the character they encode on the first of them. Spaces other
 * than the one starting a word are shown as '␣'. The strip shows each token above
 * its id; pieces of one word are joined by '·' ('+' in ASCII), words are separated by a space; special tokens
 * and the selected token are styled by the theme. */
#ifndef ATTNSCOPE_TOKSTRIP_H
#define ATTNSCOPE_TOKSTRIP_H

#include <stdbool.h>
#include <stddef.h>

#include "draw/canvas.h"
#include "trace/trace.h"

/* Readable text of token I of T into BUF (no "##", no 'Ġ'); *CONT is set when the token continues
 * the previous word. Newlines and tabs become visible glyphs ('↵', '→'); undecodable bytes <xx>. */
void tokstrip_text(const struct trace *t, int i, char *buf, size_t n, bool *cont);
/* A label for axes: the text, prefixed with '·' when it continues a word ('+' without UTF-8). */
void tokstrip_label(const struct trace *t, int i, bool utf8, char *buf, size_t n);

/* Draw the strip in R: two rows per line (tokens, then ids). With WRAP, lines wrap and as many
 * rows as needed are used (up to R.h); otherwise one line scrolls to keep SELECTED (-1: none)
 * visible. Returns the rows used. */
int tokstrip_draw(struct canvas *cv, struct rect r, const struct trace *t, int selected, bool wrap);
/* Rows tokstrip_draw needs for T in WIDTH columns when wrapping. */
int tokstrip_rows(const struct canvas *cv, const struct trace *t, int width);

#endif
