/* pixmap.c -- a canvas image as indexed pixels (see pixmap.h). */
#include "config.h"

#include "draw/pixmap.h"

#include <stdlib.h>
#include <string.h>

/* Paint the ring of width T just outside value cell (I,J) in colour C (clipped to the image):
 * outside, so the cell's own colour stays whole under the cursor. */
static void pixmap_ring(struct pixmap *p, const struct canvas_image *img, int i, int j, int t, uint16_t c)
{
	int x0 = j * img->block_w - t, x1 = (j + 1) * img->block_w + t; /* [x0, x1) */
	int y0 = i * img->block_h - t, y1 = (i + 1) * img->block_h + t;
	for (int y = y0; y < y1; y++) {
		if (y < 0 || y >= p->h)
			continue;
		bool edge_row = y < y0 + t || y >= y1 - t;
		for (int x = x0; x < x1; x++) {
			if (x < 0 || x >= p->w)
				continue;
			if (edge_row || x < x0 + t || x >= x1 - t)
				p->px[(size_t)y * p->w + x] = c;
		}
	}
}

int pixmap_render(const struct canvas_image *img, struct pixmap *p)
{
	memset(p, 0, sizeof *p);
	p->w = img->cols * img->block_w;
	p->h = img->rows * img->block_h;
	p->px = malloc((size_t)p->w * p->h * sizeof *p->px);
	if (!p->px)
		return -1;
	/* The levels used, numbered from the lowest. */
	uint16_t index[PALETTE_LEVELS];
	bool used[PALETTE_LEVELS] = {false};
	for (size_t k = 0; k < (size_t)img->rows * img->cols; k++)
		if (img->level[k] != CANVAS_IMAGE_EMPTY)
			used[img->level[k]] = true;
	for (int l = 0; l < PALETTE_LEVELS; l++)
		if (used[l]) {
			index[l] = (uint16_t)p->n_colours;
			p->rgb[p->n_colours++] = img->rgb[l];
		}
	for (int i = 0; i < img->rows; i++)
		for (int j = 0; j < img->cols; j++) {
			uint16_t lv = img->level[(size_t)i * img->cols + j], c = lv == CANVAS_IMAGE_EMPTY ? PIXMAP_NONE : index[lv];
			for (int y = i * img->block_h; y < (i + 1) * img->block_h; y++)
				for (int x = j * img->block_w; x < (j + 1) * img->block_w; x++)
					p->px[(size_t)y * p->w + x] = c;
		}
	if (img->cur_row >= 0 && img->cur_col >= 0) {
		/* The cursor's colour takes a register of its own while one is free (a full ramp uses
		 * all 256: then it takes the end of the ramp farthest from its own colour). */
		uint16_t c;
		int k;
		for (k = 0; k < p->n_colours && p->rgb[k] != img->cursor_rgb; k++)
			;
		if (k < p->n_colours || p->n_colours < PIXMAP_COLOURS) {
			if (k == p->n_colours)
				p->rgb[p->n_colours++] = img->cursor_rgb;
			c = (uint16_t)k;
		} else {
			c = 0; /* the ramp's low end: the cursor outline shows against the high cells */
		}
		int t = img->block_w < 8 ? 1 : 2;
		pixmap_ring(p, img, img->cur_row, img->cur_col, t, c);
	}
	return 0;
}

void pixmap_free(struct pixmap *p)
{
	free(p->px);
	p->px = NULL;
}
