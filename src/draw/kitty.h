/* kitty.h -- pixels as a kitty graphics protocol image (kitty, Ghostty, WezTerm, Konsole).
 *
 * The image is sent as 32-bit RGBA in base64, in chunks of 4096 characters, and placed at the
 * cursor without moving it (C=1); the terminal keeps it under the id until it is deleted. Pixels
 * without colour are transparent. Colours are exact. */
#ifndef ATTNSCOPE_KITTY_H
#define ATTNSCOPE_KITTY_H

#include <stdio.h>

#include "draw/pixmap.h"

/* Write P as image ID (1 and up), shown at the cursor, to OUT; quiet (q=2: no replies). */
void kitty_write(const struct pixmap *p, unsigned id, FILE *out);
/* Delete every image this program placed (and free their data in the terminal). */
void kitty_delete_all(FILE *out);

#endif
