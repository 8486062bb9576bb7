/* canvas.h -- a grid of character cells that views draw into, flushed to curses or to text.
 *
 * Each cell holds one Unicode code point (or 0 for the right half of a wide character), a
 * foreground and background colour already resolved by a palette, and attributes. Helpers draw
 * text (UTF-8, clipped, with ASCII fallbacks when the locale is not UTF-8), boxes, and heatmap
 * cells: two values per cell with '▀' (fg = upper, bg = lower), one value per cell as a coloured
 * blank, or a shade character in monochrome. The same canvas becomes the TUI frame, `--print`
 * output and golden test text, so all three show the same thing. */
#ifndef ATTNSCOPE_CANVAS_H
#define ATTNSCOPE_CANVAS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "draw/theme.h"

struct cell {
	uint32_t ch;     /* code point; 0 = covered by the wide character to the left */
	uint32_t fg, bg; /* COLOR_DEFAULT, palette index, or COLOR_RGB|rgb */
	uint16_t attr;   /* ATTR_* */
};

struct rect {
	int x, y, w, h;
};

/* A straight line between points in cell units (x across, y down; 0.5 is a cell's middle), for
 * pictures only: an SVG figure draws it, the terminal never does (canvas_line). */
struct canvas_line {
	float x0, y0, x1, y1;
	uint32_t rgb;    /* its exact colour */
	float opacity;   /* 0..1 */
};

/* A heatmap drawn in pixels over character cells, for terminals that show images (sixel, kitty):
 * ROWS x COLS value cells of BLOCK_W x BLOCK_H pixels each, from the top-left of cell AT.x, AT.y;
 * the cells under it are left blank. The terminal side (tui/graphics.c) or a picture turns it into
 * pixels (pixmap.h), so the view says only what each value cell shows. */
struct canvas_image {
	struct rect at;            /* character cells covered (the pixels may stop short of its edges) */
	int rows, cols;            /* value cells */
	int block_w, block_h;      /* pixels of one value cell */
	uint16_t *level;           /* [rows][cols] heat level 0..PALETTE_LEVELS-1, CANVAS_IMAGE_EMPTY = none */
	uint32_t rgb[PALETTE_LEVELS]; /* [level] its colour (0xrrggbb): the theme's exact ramp */
	int cur_row, cur_col;      /* the value cell outlined as the cursor; -1 for none */
	uint32_t cursor_rgb;
};
#define CANVAS_IMAGE_EMPTY 0xffffu

struct canvas {
	int w, h;
	struct cell *cells;         /* [h][w] */
	const struct palette *pal;  /* colours and glyph capabilities; not owned */
	struct rect clip;           /* drawing outside is discarded */
	bool vectors;               /* drawn for a picture (svg.h): views may add lines a character grid
	                             * cannot show (the head view's bertviz lines) */
	struct canvas_line *lines;  /* [n_lines] in drawing order */
	int n_lines, cap_lines;
	int px_w, px_h;             /* pixels of one character cell when the canvas may hold images
	                             * (pixel heatmaps on); 0 when it may not */
	struct canvas_image *images;/* [n_images], added by views while drawing; cleared with the canvas */
	int n_images, cap_images;
};

/* Glyphs with an ASCII stand-in for non-UTF-8 locales. */
enum glyph {
	GLYPH_HLINE, GLYPH_VLINE, GLYPH_TL, GLYPH_TR, GLYPH_BL, GLYPH_BR,
	GLYPH_ELLIPSIS, GLYPH_MIDDOT, GLYPH_UP, GLYPH_DOWN, GLYPH_LEFT, GLYPH_RIGHT,
	GLYPH_UPPER_HALF, GLYPH_LOWER_HALF, GLYPH_RETURN, GLYPH_TIMES, GLYPH_JOIN,
	GLYPH_COUNT
};

struct canvas *canvas_new(int w, int h, const struct palette *pal);
void canvas_free(struct canvas *cv);
/* Resize to W×H (contents become blank); -1 on OOM with the canvas unchanged. */
int canvas_resize(struct canvas *cv, int w, int h);

/* Blank every cell with STYLE's colours and reset the clip to the whole canvas. */
void canvas_clear(struct canvas *cv, struct style st);
/* Restrict drawing to R (intersected with the canvas); returns the previous clip. */
struct rect canvas_clip(struct canvas *cv, struct rect r);

static inline struct style canvas_role(const struct canvas *cv, enum theme_role r)
{
	return cv->pal->role[r];
}
static inline struct cell *canvas_at(struct canvas *cv, int x, int y)
{
	return &cv->cells[(size_t)y * cv->w + x];
}

uint32_t canvas_glyph(const struct canvas *cv, enum glyph g);

/* Put one code point (width 1 or 2) at (X,Y). Non-ASCII falls back to '?' without UTF-8. */
void canvas_put(struct canvas *cv, int x, int y, uint32_t ch, struct style st);
/* Fill R with CH. */
void canvas_fill(struct canvas *cv, struct rect r, uint32_t ch, struct style st);
/* Change only the attributes/colours of the cells in R (keeps glyphs). */
void canvas_restyle(struct canvas *cv, struct rect r, struct style st);

/* Draw UTF-8 TEXT at (X,Y) in at most MAXW columns (MAXW < 0: to the clip's edge); when it does
 * not fit, the last column shows an ellipsis. Control characters show as '?'. Returns columns used. */
int canvas_text(struct canvas *cv, int x, int y, int maxw, const char *text, struct style st);
/* Display width of UTF-8 TEXT (wide characters count 2; in a non-UTF-8 canvas, 1 per code point). */
int canvas_text_width(const struct canvas *cv, const char *text);
/* Like canvas_text with printf formatting. */
int canvas_printf(struct canvas *cv, int x, int y, int maxw, struct style st, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* Add a line for a picture (a canvas with vectors; nothing otherwise); -1 when out of memory. */
int canvas_line(struct canvas *cv, float x0, float y0, float x1, float y1, uint32_t rgb, float opacity);

/* Whether views may draw pixel images on this canvas (canvas_image). */
static inline bool canvas_has_pixels(const struct canvas *cv)
{
	return cv->px_w > 0 && cv->px_h > 0;
}
/* Add an image of ROWS x COLS value cells of BW x BH pixels at cell (X,Y), every cell empty and no
 * cursor; its colours are the exact heat ramp of cv->pal at the call. The cells it covers are
 * blanked. NULL without pixels or when out of memory. */
struct canvas_image *canvas_image(struct canvas *cv, int x, int y, int rows, int cols, int bw, int bh);
/* Set value cell (I,J) of IMG to position V of the heat ramp (NaN: empty). */
void canvas_image_set(struct canvas_image *img, int i, int j, float v);

/* Outline R with a box (line glyphs, or + - | without UTF-8). */
void canvas_box(struct canvas *cv, struct rect r, struct style st);

/* Heatmap cells. Values are in [0,1]; NaN means "nothing here" (terminal background). */
/* How many value rows one character row shows: 2 with half blocks (colour and UTF-8), else 1. */
int canvas_heat_rows(const struct canvas *cv);
/* One character holding two vertically stacked values (or, when canvas_heat_rows is 1, TOP only). */
void canvas_heat2(struct canvas *cv, int x, int y, float top, float bottom);
/* One character holding one value: a coloured blank, or a shade character in monochrome. */
void canvas_heat1(struct canvas *cv, int x, int y, float v);
/* Text readable over the heat colour of V (for numbers printed inside heatmap cells). */
void canvas_heat_text(struct canvas *cv, int x, int y, int maxw, float v, const char *text);

/* Write the canvas as text: without ANSI, glyphs only; with ANSI, SGR colour sequences for the
 * palette's depth. Trailing blanks of each line are dropped (when they carry no colour). */
void canvas_write(const struct canvas *cv, FILE *out, bool ansi);
/* Same, into a malloc'ed NUL-terminated string (for tests); NULL on OOM. */
char *canvas_to_string(const struct canvas *cv, bool ansi);
/* Same, with line y starting with ROW_PREFIX[y] (NULL: nothing) and the cells under the canvas's
 * images stepped over by cursor movements instead of written (pixout.h puts the images there). */
char *canvas_to_string_around(const struct canvas *cv, bool ansi, const char *const *row_prefix);

#endif
