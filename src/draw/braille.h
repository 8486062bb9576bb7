/* braille.h -- a scatter-plot surface on a canvas.
 *
 * Lines (axes through the origin, vectors, links between points) are drawn with braille dots,
 * 2 × 4 per character cell, which makes the dots roughly square, so one unit is as long across as
 * down when the plot keeps equal scales. Points are marker glyphs in the cell that holds them, and
 * labels are text placed beside their point only where no marker or other label already is: a
 * label that finds no free spot is left out rather than drawn over another. Without UTF-8 (no
 * braille), each cell is one dot and lines use '.', the axes '-', '|' and '+'.
 *
 * Use: bplot_init, any number of bplot_line / bplot_marker / bplot_label (markers before the
 * labels that must avoid them), then bplot_flush to write the dots into the free cells. */
#ifndef ATTNSCOPE_BRAILLE_H
#define ATTNSCOPE_BRAILLE_H

#include <stdbool.h>
#include <stdint.h>

#include "draw/canvas.h"

#define BPLOT_STYLES 8

struct bplot {
	struct rect r;               /* the plot's character cells on the canvas */
	double xmin, xmax, ymin, ymax; /* data range shown (contains the origin) */
	int dw, dh;                  /* dots across and down: 2·w × 4·h with braille, else w × h */
	bool braille;
	uint8_t *dots;               /* [r.h][r.w] braille bit masks (bit i = dot i+1 of U+2800) */
	int8_t *dot_style;           /* [r.h][r.w] style of the last line through the cell, -1 none */
	uint8_t *axis;               /* [r.h][r.w] ASCII mode: bit 1 horizontal axis, bit 2 vertical */
	uint8_t *taken;              /* [r.h][r.w] 1 when a marker or a label holds the cell */
	struct style style[BPLOT_STYLES]; /* line styles, set by the caller (0: the axes) */
	int labels_drawn, labels_dropped;
};

/* Prepare a plot of the data range [XMIN,XMAX] × [YMIN,YMAX] (widened to contain 0 and padded
 * by 5%) in R. With EQUAL, one unit has the same length across and down (the narrower range is
 * widened). -1 on OOM. */
int bplot_init(struct bplot *p, const struct canvas *cv, struct rect r, double xmin, double xmax, double ymin,
	       double ymax, bool equal);
void bplot_free(struct bplot *p);
/* Width over height, in data units, of a plot in R whose scales are equal (dots are about square;
 * ASCII cells about twice as tall as wide). */
double bplot_aspect(const struct canvas *cv, struct rect r);

/* The cell holding data point (X, Y); false when outside the plot. */
bool bplot_cell(const struct bplot *p, double x, double y, int *cx, int *cy);
/* Axes through the origin, in style 0. */
void bplot_axes(struct bplot *p);
/* A straight line of dots from (X0,Y0) to (X1,Y1) in style S, clipped to the plot. */
void bplot_line(struct bplot *p, double x0, double y0, double x1, double y1, int s);
/* A marker glyph (ASCII stand-in when the canvas has no UTF-8) at the point's cell. */
void bplot_marker(struct bplot *p, struct canvas *cv, double x, double y, uint32_t glyph, char ascii,
		  struct style st);
/* TEXT beside point (X, Y): right of it, else left, above, below, or diagonally, in the first
 * spot whose cells are all free. Returns false (and draws nothing) when none is. */
bool bplot_label(struct bplot *p, struct canvas *cv, double x, double y, const char *text, struct style st);
/* Write the dots into the cells no marker or label holds. */
void bplot_flush(struct bplot *p, struct canvas *cv);

#endif
