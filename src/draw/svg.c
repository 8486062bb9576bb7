/* svg.c -- a drawn canvas as an SVG document (see svg.h). */
#include "config.h"

#include "draw/svg.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/utf8.h"

#define SVG_FONT_SIZE 15 /* px: a monospace font's advance is about 0.6 em = 9 px, the column width */
#define SVG_BASELINE 14  /* px below a row's top */

/* What the terminal's own colours stand for: the theme says which kind of background it is made for. */
static uint32_t svg_default(const struct canvas *cv, bool fg)
{
	bool light = cv->pal->light;
	return fg ? (light ? 0x1c1c1c : 0xe4e4e4) : (light ? 0xffffff : 0x121212);
}

static uint32_t svg_rgb(const struct canvas *cv, uint32_t c, bool fg)
{
	if (c == COLOR_DEFAULT)
		return svg_default(cv, fg);
	if (COLOR_IS_RGB(c))
		return c & 0xffffff;
	return theme_index_rgb((int)(c & 0xff));
}

/* A cell's colours as drawn: reverse swaps them. BG_SET says whether the background is the
 * terminal's (nothing to draw: the picture's background is). */
static void svg_colours(const struct canvas *cv, const struct cell *c, uint32_t *fg, uint32_t *bg, bool *bg_set)
{
	uint32_t f = c->fg, b = c->bg;
	if (c->attr & ATTR_REVERSE) {
		uint32_t t = f;
		f = b == COLOR_DEFAULT ? COLOR_RGB | svg_default(cv, false) : b;
		b = t == COLOR_DEFAULT ? COLOR_RGB | svg_default(cv, true) : t;
	}
	*fg = svg_rgb(cv, f, true);
	*bg = svg_rgb(cv, b, false);
	*bg_set = b != COLOR_DEFAULT;
}

/* Box-drawing glyphs drawn as lines from the cell's centre: bit 0 left, 1 right, 2 up, 3 down
 * (rounded corners as square ones); 0 for any other code point. */
static int svg_box_arms(uint32_t ch)
{
	switch (ch) {
	case 0x2500: return 1 | 2;         /* ─ */
	case 0x2502: return 4 | 8;         /* │ */
	case 0x250c: case 0x256d: return 2 | 8; /* ┌ ╭ */
	case 0x2510: case 0x256e: return 1 | 8; /* ┐ ╮ */
	case 0x2514: case 0x2570: return 2 | 4; /* └ ╰ */
	case 0x2518: case 0x256f: return 1 | 4; /* ┘ ╯ */
	case 0x251c: return 2 | 4 | 8;     /* ├ */
	case 0x2524: return 1 | 4 | 8;     /* ┤ */
	case 0x252c: return 1 | 2 | 8;     /* ┬ */
	case 0x2534: return 1 | 2 | 4;     /* ┴ */
	case 0x253c: return 1 | 2 | 4 | 8; /* ┼ */
	default: return 0;
	}
}

/* Block glyphs as a rectangle inside the cell, in eighths: x0, x1 across (of 8), y0, y1 down (of
 * 8), and the opacity of the foreground (shades). False for other code points. */
static bool svg_block(uint32_t ch, int *x0, int *x1, int *y0, int *y1, double *opacity)
{
	*x0 = 0, *x1 = 8, *y0 = 0, *y1 = 8, *opacity = 1;
	if (ch == 0x2580) { /* ▀ upper half */
		*y1 = 4;
		return true;
	}
	if (ch >= 0x2581 && ch <= 0x2588) { /* ▁ … █: lower eighths */
		*y0 = 8 - (int)(ch - 0x2580);
		return true;
	}
	if (ch >= 0x2589 && ch <= 0x258f) { /* ▉ … ▏: left eighths */
		*x1 = 8 - (int)(ch - 0x2588);
		return true;
	}
	if (ch >= 0x2591 && ch <= 0x2593) { /* ░ ▒ ▓ */
		*opacity = 0.25 * (double)(ch - 0x2590);
		return true;
	}
	if (ch == 0x2590) { /* ▐ right half */
		*x0 = 4;
		return true;
	}
	if (ch == 0x2594) { /* ▔ upper eighth */
		*y1 = 1;
		return true;
	}
	return false;
}

static bool svg_braille(uint32_t ch)
{
	return ch > 0x2800 && ch <= 0x28ff;
}

/* A cell that the text runs carry: a glyph that is neither blank, nor drawn as a shape. */
static bool svg_is_text(uint32_t ch)
{
	int x0, x1, y0, y1;
	double op;
	return ch != 0 && ch != ' ' && ch != 0x2800 && !svg_braille(ch) && !svg_box_arms(ch) &&
	       !svg_block(ch, &x0, &x1, &y0, &y1, &op);
}

/* CH as XML character data: markup escaped, code points XML 1.0 forbids as U+FFFD. */
static void svg_xml_char(FILE *out, uint32_t ch)
{
	switch (ch) {
	case '&': fputs("&amp;", out); return;
	case '<': fputs("&lt;", out); return;
	case '>': fputs("&gt;", out); return;
	case '"': fputs("&quot;", out); return;
	default: break;
	}
	if ((ch < 0x20 && ch != '\t') || ch == 0xfffe || ch == 0xffff || (ch >= 0xd800 && ch <= 0xdfff) || ch > 0x10ffff)
		ch = 0xfffd;
	char buf[4];
	int n = utf8_encode(ch, buf);
	fwrite(buf, 1, (size_t)n, out);
}

static void svg_backgrounds(const struct canvas *cv, FILE *out, int y)
{
	for (int x = 0; x < cv->w;) {
		uint32_t fg, bg;
		bool set;
		svg_colours(cv, &cv->cells[(size_t)y * cv->w + x], &fg, &bg, &set);
		int end = x + 1;
		while (set && end < cv->w) { /* a run of one colour is one rectangle */
			uint32_t f2, b2;
			bool s2;
			svg_colours(cv, &cv->cells[(size_t)y * cv->w + end], &f2, &b2, &s2);
			if (!s2 || b2 != bg)
				break;
			end++;
		}
		if (set)
			fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#%06x\"/>\n", x * SVG_CELL_W,
				y * SVG_CELL_H, (end - x) * SVG_CELL_W, SVG_CELL_H, bg);
		x = end;
	}
}

/* Blocks, box lines and braille dots of row Y. */
static void svg_shapes(const struct canvas *cv, FILE *out, int y)
{
	for (int x = 0; x < cv->w; x++) {
		const struct cell *c = &cv->cells[(size_t)y * cv->w + x];
		uint32_t fg, bg;
		bool set;
		svg_colours(cv, c, &fg, &bg, &set);
		double px = x * SVG_CELL_W, py = y * SVG_CELL_H;
		int x0, x1, y0, y1, arms = svg_box_arms(c->ch);
		double op;
		if (svg_block(c->ch, &x0, &x1, &y0, &y1, &op)) {
			fprintf(out, "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"#%06x\"", px + x0 * SVG_CELL_W / 8.0,
				py + y0 * SVG_CELL_H / 8.0, (x1 - x0) * SVG_CELL_W / 8.0, (y1 - y0) * SVG_CELL_H / 8.0, fg);
			if (op < 1)
				fprintf(out, " fill-opacity=\"%g\"", op);
			fputs("/>\n", out);
		} else if (arms) {
			double cx = px + SVG_CELL_W / 2.0, cy = py + SVG_CELL_H / 2.0;
			fprintf(out, "<path stroke=\"#%06x\" stroke-width=\"1\" d=\"", fg);
			if (arms & 1)
				fprintf(out, "M%g %gH%g", px, cy, cx);
			if (arms & 2)
				fprintf(out, "M%g %gH%g", cx, cy, px + SVG_CELL_W);
			if (arms & 4)
				fprintf(out, "M%g %gV%g", cx, py, cy);
			if (arms & 8)
				fprintf(out, "M%g %gV%g", cx, cy, py + SVG_CELL_H);
			fputs("\"/>\n", out);
		} else if (svg_braille(c->ch)) {
			/* Dots 1-3 and 7 down the left column, 4-6 and 8 down the right (bits 0-7). */
			static const int col[8] = {0, 0, 0, 1, 1, 1, 0, 1}, row[8] = {0, 1, 2, 0, 1, 2, 3, 3};
			unsigned bits = c->ch - 0x2800;
			fprintf(out, "<g fill=\"#%06x\">", fg);
			for (int b = 0; b < 8; b++)
				if (bits & (1u << b))
					fprintf(out, "<circle cx=\"%g\" cy=\"%g\" r=\"1.1\"/>", px + 2.5 + 4 * col[b],
						py + 2.75 + 4.25 * row[b]);
			fputs("</g>\n", out);
		}
	}
}

/* Row Y's text: runs of cells of one style, words apart, each character at its column. */
static void svg_text(const struct canvas *cv, FILE *out, int y)
{
	for (int x = 0; x < cv->w;) {
		const struct cell *c = &cv->cells[(size_t)y * cv->w + x];
		if (!svg_is_text(c->ch)) {
			x++;
			continue;
		}
		uint32_t fg, bg;
		bool set;
		svg_colours(cv, c, &fg, &bg, &set);
		int end = x;
		for (;;) { /* the run: text cells of the same colour and attributes, wide characters' tails */
			end++;
			if (end >= cv->w)
				break;
			const struct cell *d = &cv->cells[(size_t)y * cv->w + end];
			if (d->ch == 0)
				continue;
			uint32_t f2, b2;
			bool s2;
			svg_colours(cv, d, &f2, &b2, &s2);
			if (!svg_is_text(d->ch) || f2 != fg || (d->attr & ~ATTR_REVERSE) != (c->attr & ~ATTR_REVERSE))
				break;
		}
		fputs("<text x=\"", out);
		for (int i = x, first = 1; i < end; i++)
			if (cv->cells[(size_t)y * cv->w + i].ch) {
				fprintf(out, first ? "%d" : " %d", i * SVG_CELL_W);
				first = 0;
			}
		fprintf(out, "\" y=\"%d\" fill=\"#%06x\"", y * SVG_CELL_H + SVG_BASELINE, fg);
		if (c->attr & ATTR_BOLD)
			fputs(" font-weight=\"bold\"", out);
		if (c->attr & ATTR_UNDERLINE)
			fputs(" text-decoration=\"underline\"", out);
		if (c->attr & ATTR_DIM)
			fputs(" fill-opacity=\"0.6\"", out);
		fputc('>', out);
		for (int i = x; i < end; i++)
			if (cv->cells[(size_t)y * cv->w + i].ch)
				svg_xml_char(out, cv->cells[(size_t)y * cv->w + i].ch);
		fputs("</text>\n", out);
		x = end;
	}
}

int svg_write(const struct canvas *cv, FILE *out)
{
	int w = cv->w * SVG_CELL_W, h = cv->h * SVG_CELL_H;
	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"font-family=\"monospace\" font-size=\"%d\">\n"
		"<rect width=\"%d\" height=\"%d\" fill=\"#%06x\"/>\n",
		w, h, w, h, SVG_FONT_SIZE, w, h, svg_default(cv, false));
	/* Backgrounds of every row first: a row's glyphs may reach into the next. */
	for (int y = 0; y < cv->h; y++)
		svg_backgrounds(cv, out, y);
	for (int y = 0; y < cv->h; y++) {
		svg_shapes(cv, out, y);
		svg_text(cv, out, y);
	}
	/* Lines only a picture shows (canvas_line), over the cells. */
	for (int i = 0; i < cv->n_lines; i++) {
		const struct canvas_line *l = &cv->lines[i];
		fprintf(out, "<path d=\"M%.2f %.2fL%.2f %.2f\" stroke=\"#%06x\" stroke-opacity=\"%.3f\" stroke-width=\"2\"/>\n",
			l->x0 * SVG_CELL_W, l->y0 * SVG_CELL_H, l->x1 * SVG_CELL_W, l->y1 * SVG_CELL_H, l->rgb, l->opacity);
	}
	fputs("</svg>\n", out);
	return fflush(out) || ferror(out) ? -1 : 0;
}
