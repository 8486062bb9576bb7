/* sixel.h -- pixels as a DEC sixel image (the terminal draws it at the cursor).
 *
 * Sixel sends six pixel rows at a time: per band, for each colour in it, one character per column
 * whose six bits say which of the six pixels have that colour. Colours are registers set as RGB in
 * percent, so a channel comes back within 1 of its 8-bit value. Pixels without colour are left as
 * they are (P2 = 1), which lets the terminal's background show through a masked cell. */
#ifndef ATTNSCOPE_SIXEL_H
#define ATTNSCOPE_SIXEL_H

#include <stdio.h>

#include "draw/pixmap.h"

/* Write P as one sixel image (DCS ... ST) to OUT. */
void sixel_write(const struct pixmap *p, FILE *out);

#endif
