/* pixout.h -- a canvas's images (canvas.h) sent to a terminal as sixel or kitty graphics.
 *
 * The explorer places each image at its cell with absolute cursor moves (pixout_image); a stream
 * (--print --format sixel|kitty) writes the canvas as text with every image sent before the text
 * of its top line, after making room for it, and the text stepping over the image's cells. */
#ifndef ATTNSCOPE_PIXOUT_H
#define ATTNSCOPE_PIXOUT_H

#include <stdio.h>

#include "draw/canvas.h"

enum pixel_proto { PIXELS_NONE, PIXELS_SIXEL, PIXELS_KITTY };

/* Name of P ("sixel", "kitty", "cells"). */
const char *pixout_name(enum pixel_proto p);
/* Write IMG as an image in protocol P (kitty: image ID) at the cursor to OUT; -1 when out of memory. */
int pixout_image(const struct canvas_image *img, enum pixel_proto p, unsigned id, FILE *out);
/* The canvas as text with its images in protocol P (malloc'ed; NULL when out of memory). */
char *pixout_canvas(const struct canvas *cv, bool ansi, enum pixel_proto p);

#endif
