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
 * labels that must avoid them), then bplot_flush to write the dots into the free cells.
 *
 * More points than cells (a corpus's 20,000 queries and keys, the tokens of a long text): one
 * marker per point would only show the last point drawn in each cell. bplot_density_add counts
 * the points of each kind per cell instead, and bplot_density_draw shades every counted cell by
 * how many fall in it (░ ▒ ▓ █ on a log scale up to the fullest cell; . : * # without UTF-8) in the
 * colour of the kind that has most of them (two thirds or more), else the "both" colour. Markers
 * and labels drawn after it (the selected token) go on top. */
#ifndef ATTNSCOPE_BRAILLE_H
#define ATTNSCOPE_BRAILLE_H

#include <stdbool.h>
#include <stdint.h>

#include "draw/canvas.h"

#define BPLOT_STYLES 8
#define BPLOT_KINDS 2  /* kinds of points a density plot tells apart (queries and keys) */
#define BPLOT_LEVELS 4 /* shades of a density cell */

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
	uint32_t *count;             /* [BPLOT_KINDS][r.h][r.w] points per cell, allocated by the first
	                              * bplot_density_add; NULL otherwise */
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
/* After counting N points with bplot_density_add: true when markers would hide most of them, so
 * that a density shows more: N is more than the plot's cells, or, from BPLOT_DENSE_MIN points on,
 * more than twice the cells that hold any point (on average a marker would stand for more than two
 * points). Fewer points keep their markers and labels, however close. */
#define BPLOT_DENSE_MIN 256
bool bplot_dense(const struct bplot *p, long n);
/* Count point (X, Y) of KIND (0 .. BPLOT_KINDS-1) in its cell. -1 on OOM (the first call allocates). */
int bplot_density_add(struct bplot *p, int kind, double x, double y);
/* Shade every counted cell that no marker or label holds yet (and take it): ST[kind] for a cell
 * with at least two thirds of its points of one kind, ST[BPLOT_KINDS] for the others. UPPER[l]
 * receives the largest count shade l stands for (levels may repeat a bound when counts are small).
 * Returns the largest count in a cell (0: nothing counted). */
long bplot_density_draw(struct bplot *p, struct canvas *cv, const struct style st[BPLOT_KINDS + 1],
			long upper[BPLOT_LEVELS]);
/* The glyph of shade LEVEL (0 .. BPLOT_LEVELS-1) on CV, for legends. */
uint32_t bplot_density_glyph(const struct canvas *cv, int level);
/* The shades' legend at (X, Y), at most W columns: "░ 1 ▒ ≤3 ▓ ≤12 █ ≤40 points per cell" from
 * bplot_density_draw's UPPER, a shade left out when its bound repeats the one before. Returns the
 * columns written. */
int bplot_density_legend(struct canvas *cv, int x, int y, int w, const long upper[BPLOT_LEVELS], struct style st);
/* Write the dots into the cells no marker or label holds. */
void bplot_flush(struct bplot *p, struct canvas *cv);

#endif
