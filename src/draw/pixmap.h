/* pixmap.h -- a canvas image (canvas.h) as pixels: the value cells as blocks of one colour each.
 *
 * A heatmap has at most PALETTE_LEVELS colours plus the cursor's, so the pixels are indices into a
 * small palette (what sixel needs: no quantisation) and any encoder can expand them to RGB. */
#ifndef ATTNSCOPE_PIXMAP_H
#define ATTNSCOPE_PIXMAP_H

#include <stdint.h>

#include "draw/canvas.h"

#define PIXMAP_NONE 0xffffu /* a pixel with no colour: the terminal's background shows */
#define PIXMAP_COLOURS 256  /* what sixel terminals give an image (xterm, foot, mlterm, WezTerm) */

struct pixmap {
	int w, h;
	uint16_t *px;                 /* [h][w] index into rgb, or PIXMAP_NONE */
	uint32_t rgb[PIXMAP_COLOURS]; /* [n_colours] 0xrrggbb */
	int n_colours;
};

/* Render IMG (its value cells as blocks, the cursor as an outline around its cell) into P, whose
 * pixels are malloc'ed; -1 when out of memory. Colours are numbered in order of heat level, so the
 * same image gives the same pixmap. */
int pixmap_render(const struct canvas_image *img, struct pixmap *p);
void pixmap_free(struct pixmap *p);

#endif
