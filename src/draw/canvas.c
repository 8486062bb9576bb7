/* canvas.c -- the cell grid views draw into, and its plain/ANSI text output (see canvas.h). */
#include "config.h"

#include "draw/canvas.h"
#include "base/utf8.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

struct canvas *canvas_new(int w, int h, const struct palette *pal)
{
	struct canvas *cv = calloc(1, sizeof *cv);
	if (!cv)
		return NULL;
	cv->pal = pal;
	if (canvas_resize(cv, w, h)) {
		free(cv);
		return NULL;
	}
	return cv;
}

void canvas_free(struct canvas *cv)
{
	if (!cv)
		return;
	free(cv->cells);
	free(cv->lines);
	for (int i = 0; i < cv->n_images; i++)
		free(cv->images[i].level);
	free(cv->images);
	free(cv);
}

int canvas_resize(struct canvas *cv, int w, int h)
{
	if (w < 1)
		w = 1;
	if (h < 1)
		h = 1;
	struct cell *cells = calloc((size_t)w * h, sizeof *cells);
	if (!cells)
		return -1;
	free(cv->cells);
	cv->cells = cells;
	cv->w = w;
	cv->h = h;
	canvas_clear(cv, (struct style){COLOR_DEFAULT, COLOR_DEFAULT, 0});
	return 0;
}

void canvas_clear(struct canvas *cv, struct style st)
{
	cv->clip = (struct rect){0, 0, cv->w, cv->h};
	cv->n_lines = 0;
	for (int i = 0; i < cv->n_images; i++)
		free(cv->images[i].level);
	cv->n_images = 0;
	for (size_t i = 0; i < (size_t)cv->w * cv->h; i++)
		cv->cells[i] = (struct cell){' ', st.fg, st.bg, st.attr};
}

struct rect canvas_clip(struct canvas *cv, struct rect r)
{
	struct rect old = cv->clip;
	int x0 = r.x > 0 ? r.x : 0, y0 = r.y > 0 ? r.y : 0;
	int x1 = r.x + r.w < cv->w ? r.x + r.w : cv->w;
	int y1 = r.y + r.h < cv->h ? r.y + r.h : cv->h;
	cv->clip = (struct rect){x0, y0, x1 > x0 ? x1 - x0 : 0, y1 > y0 ? y1 - y0 : 0};
	return old;
}

static bool inside(const struct canvas *cv, int x, int y)
{
	return x >= cv->clip.x && y >= cv->clip.y && x < cv->clip.x + cv->clip.w && y < cv->clip.y + cv->clip.h;
}

uint32_t canvas_glyph(const struct canvas *cv, enum glyph g)
{
	static const uint32_t uni[GLYPH_COUNT] = {
		0x2500, 0x2502, 0x250c, 0x2510, 0x2514, 0x2518, 0x2026, 0x00b7,
		0x25b2, 0x25bc, 0x25c0, 0x25b6, 0x2580, 0x2584, 0x21b5, 0x00d7, 0x00b7,
	};
	static const char ascii[GLYPH_COUNT] = {
		'-', '|', '+', '+', '+', '+', '~', '.', '^', 'v', '<', '>', '#', '_', '$', 'x', '+',
	};
	if ((int)g < 0 || g >= GLYPH_COUNT)
		return '?';
	return cv->pal->utf8 ? uni[g] : (uint32_t)ascii[g];
}

static int char_width(const struct canvas *cv, uint32_t ch)
{
	if (ch < 0x20 || (ch >= 0x7f && ch < 0xa0))
		return 1; /* shown as '?' */
	if (!cv->pal->utf8 || ch < 0x7f)
		return 1;
	int w = utf8proc_charwidth((utf8proc_int32_t)ch);
	return w < 0 ? 1 : w > 2 ? 2 : w;
}

/* When a cell that is half of a wide character is overwritten, blank the other half. */
static void break_wide(struct canvas *cv, int x, int y)
{
	struct cell *c = canvas_at(cv, x, y);
	if (c->ch == 0 && x > 0)
		canvas_at(cv, x - 1, y)->ch = ' ';
	if (x + 1 < cv->w && canvas_at(cv, x + 1, y)->ch == 0)
		canvas_at(cv, x + 1, y)->ch = ' ';
}

/* Without UTF-8: the ASCII look-alike of common punctuation and line glyphs, else '?'. */
static uint32_t ascii_fallback(uint32_t ch)
{
	static const struct {
		uint32_t from;
		char to;
	} map[] = {
		{0x2026, '~'}, {0x00d7, 'x'}, {0x00b7, '.'}, {0x2192, '>'}, {0x2190, '<'}, {0x2191, '^'},
		{0x2193, 'v'}, {0x2500, '-'}, {0x2502, '|'}, {0x250c, '+'}, {0x2510, '+'}, {0x2514, '+'},
		{0x2518, '+'}, {0x2018, '\''}, {0x2019, '\''}, {0x201c, '"'}, {0x201d, '"'}, {0x2013, '-'},
		{0x2014, '-'}, {0x00a0, ' '},
	};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (map[i].from == ch)
			return (uint32_t)map[i].to;
	return '?';
}

void canvas_put(struct canvas *cv, int x, int y, uint32_t ch, struct style st)
{
	if (!inside(cv, x, y))
		return;
	if (ch > 0x7e && !cv->pal->utf8 && ch <= 0x10ffff && !(ch >= 0x7f && ch < 0xa0))
		ch = ascii_fallback(ch);
	if (ch < 0x20 || (ch >= 0x7f && ch < 0xa0) || (ch > 0x7e && !cv->pal->utf8) || ch > 0x10ffff)
		ch = '?';
	int w = char_width(cv, ch);
	if (w == 2 && !inside(cv, x + 1, y))
		ch = ' ', w = 1;
	break_wide(cv, x, y);
	*canvas_at(cv, x, y) = (struct cell){ch, st.fg, st.bg, st.attr};
	if (w == 2) {
		break_wide(cv, x + 1, y);
		*canvas_at(cv, x + 1, y) = (struct cell){0, st.fg, st.bg, st.attr};
	}
}

void canvas_fill(struct canvas *cv, struct rect r, uint32_t ch, struct style st)
{
	for (int y = r.y; y < r.y + r.h; y++)
		for (int x = r.x; x < r.x + r.w; x++)
			canvas_put(cv, x, y, ch, st);
}

void canvas_restyle(struct canvas *cv, struct rect r, struct style st)
{
	for (int y = r.y; y < r.y + r.h; y++) {
		for (int x = r.x; x < r.x + r.w; x++) {
			if (!inside(cv, x, y))
				continue;
			struct cell *c = canvas_at(cv, x, y);
			c->fg = st.fg;
			c->bg = st.bg;
			c->attr = st.attr;
		}
	}
}

int canvas_text_width(const struct canvas *cv, const char *text)
{
	int w = 0;
	size_t n = strlen(text);
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		i += (size_t)utf8_next(text + i, n - i, &cp);
		if (cv->pal->utf8 && cp >= 0xa0 && utf8proc_charwidth((utf8proc_int32_t)cp) == 0)
			continue; /* combining marks are dropped when drawn */
		w += char_width(cv, cp);
	}
	return w;
}

int canvas_text(struct canvas *cv, int x, int y, int maxw, const char *text, struct style st)
{
	if (maxw < 0)
		maxw = cv->clip.x + cv->clip.w - x;
	if (maxw <= 0)
		return 0;
	int total = canvas_text_width(cv, text);
	int room = total <= maxw ? maxw : maxw - 1; /* leave one column for the ellipsis */
	int col = 0;
	size_t n = strlen(text);
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		i += (size_t)utf8_next(text + i, n - i, &cp);
		if (cv->pal->utf8 && cp >= 0xa0 && utf8proc_charwidth((utf8proc_int32_t)cp) == 0)
			continue;
		int w = char_width(cv, cp);
		if (col + w > room)
			break;
		canvas_put(cv, x + col, y, cp, st);
		col += w;
	}
	if (total > maxw) {
		canvas_put(cv, x + col, y, canvas_glyph(cv, GLYPH_ELLIPSIS), st);
		col++;
	}
	return col;
}

int canvas_printf(struct canvas *cv, int x, int y, int maxw, struct style st, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return canvas_text(cv, x, y, maxw, buf, st);
}

void canvas_box(struct canvas *cv, struct rect r, struct style st)
{
	if (r.w < 2 || r.h < 2)
		return;
	int x1 = r.x + r.w - 1, y1 = r.y + r.h - 1;
	for (int x = r.x + 1; x < x1; x++) {
		canvas_put(cv, x, r.y, canvas_glyph(cv, GLYPH_HLINE), st);
		canvas_put(cv, x, y1, canvas_glyph(cv, GLYPH_HLINE), st);
	}
	for (int y = r.y + 1; y < y1; y++) {
		canvas_put(cv, r.x, y, canvas_glyph(cv, GLYPH_VLINE), st);
		canvas_put(cv, x1, y, canvas_glyph(cv, GLYPH_VLINE), st);
	}
	canvas_put(cv, r.x, r.y, canvas_glyph(cv, GLYPH_TL), st);
	canvas_put(cv, x1, r.y, canvas_glyph(cv, GLYPH_TR), st);
	canvas_put(cv, r.x, y1, canvas_glyph(cv, GLYPH_BL), st);
	canvas_put(cv, x1, y1, canvas_glyph(cv, GLYPH_BR), st);
}

int canvas_heat_rows(const struct canvas *cv)
{
	return cv->pal->depth != DEPTH_MONO && cv->pal->utf8 ? 2 : 1;
}

static uint32_t heat(const struct canvas *cv, float v)
{
	return cv->pal->heat[palette_level(v)];
}

void canvas_heat1(struct canvas *cv, int x, int y, float v)
{
	if (cv->pal->depth == DEPTH_MONO) {
		char ch = v != v ? ' ' : cv->pal->diverging ? palette_shade_diverging(v) : palette_shade(v);
		canvas_put(cv, x, y, (uint32_t)ch, cv->pal->role[ROLE_TEXT]);
		return;
	}
	struct style st = {COLOR_DEFAULT, v == v ? heat(cv, v) : COLOR_DEFAULT, 0};
	canvas_put(cv, x, y, ' ', st);
}

void canvas_heat2(struct canvas *cv, int x, int y, float top, float bottom)
{
	if (canvas_heat_rows(cv) == 1) {
		canvas_heat1(cv, x, y, top);
		return;
	}
	bool has_top = top == top, has_bottom = bottom == bottom;
	if (has_top && has_bottom) {
		canvas_put(cv, x, y, 0x2580, (struct style){heat(cv, top), heat(cv, bottom), 0});
	} else if (has_top) {
		canvas_put(cv, x, y, 0x2580, (struct style){heat(cv, top), COLOR_DEFAULT, 0});
	} else if (has_bottom) {
		canvas_put(cv, x, y, 0x2584, (struct style){heat(cv, bottom), COLOR_DEFAULT, 0});
	} else {
		canvas_put(cv, x, y, ' ', (struct style){COLOR_DEFAULT, COLOR_DEFAULT, 0});
	}
}

void canvas_heat_text(struct canvas *cv, int x, int y, int maxw, float v, const char *text)
{
	struct style st = cv->pal->role[ROLE_TEXT];
	if (cv->pal->depth != DEPTH_MONO) {
		int l = palette_level(v);
		st = (struct style){cv->pal->heat_text[l], cv->pal->heat[l], 0};
	}
	canvas_text(cv, x, y, maxw, text, st);
}

/* ---- text output ---- */

struct outbuf {
	char *s;
	size_t len, cap;
	bool oom;
};

static void out_add(struct outbuf *o, const char *s, size_t n)
{
	if (o->oom)
		return;
	if (o->len + n + 1 > o->cap) {
		size_t cap = o->cap ? o->cap : 4096;
		while (o->len + n + 1 > cap)
			cap *= 2;
		char *ns = realloc(o->s, cap);
		if (!ns) {
			o->oom = true;
			return;
		}
		o->s = ns;
		o->cap = cap;
	}
	memcpy(o->s + o->len, s, n);
	o->len += n;
	o->s[o->len] = 0;
}

static void out_str(struct outbuf *o, const char *s)
{
	out_add(o, s, strlen(s));
}

static void sgr_color(struct outbuf *o, uint32_t c, bool bg, enum color_depth depth)
{
	char buf[32];
	if (c == COLOR_DEFAULT)
		return;
	if (COLOR_IS_RGB(c))
		snprintf(buf, sizeof buf, ";%d;2;%u;%u;%u", bg ? 48 : 38, c >> 16 & 255, c >> 8 & 255, c & 255);
	else if (c < 8)
		snprintf(buf, sizeof buf, ";%u", (bg ? 40 : 30) + c);
	else if (c < 16 && depth == DEPTH_16)
		snprintf(buf, sizeof buf, ";%u", (bg ? 100 : 90) + c - 8);
	else
		snprintf(buf, sizeof buf, ";%d;5;%u", bg ? 48 : 38, c & 255);
	out_str(o, buf);
}

static void sgr(struct outbuf *o, const struct cell *c, enum color_depth depth)
{
	out_str(o, "\033[0");
	if (c->attr & ATTR_BOLD)
		out_str(o, ";1");
	if (c->attr & ATTR_DIM)
		out_str(o, ";2");
	if (c->attr & ATTR_UNDERLINE)
		out_str(o, ";4");
	if (c->attr & ATTR_REVERSE)
		out_str(o, ";7");
	sgr_color(o, c->fg, false, depth);
	sgr_color(o, c->bg, true, depth);
	out_str(o, "m");
}

static bool blank(const struct cell *c, bool ansi)
{
	if (c->ch != ' ')
		return false;
	if (!ansi)
		return true;
	return c->bg == COLOR_DEFAULT && !(c->attr & (ATTR_REVERSE | ATTR_UNDERLINE));
}

static bool same_style(const struct cell *a, const struct cell *b)
{
	return a->fg == b->fg && a->bg == b->bg && a->attr == b->attr;
}

/* Whether cell (X,Y) lies under one of the canvas's images. */
static bool under_image(const struct canvas *cv, int x, int y)
{
	for (int i = 0; i < cv->n_images; i++) {
		struct rect r = cv->images[i].at;
		if (x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h)
			return true;
	}
	return false;
}

/* The canvas as lines of text; with ROW_PREFIX, line y starts with ROW_PREFIX[y] (when not NULL)
 * and cells under an image are stepped over with cursor movements, so that the text written
 * after an image leaves its pixels alone. */
static void render(const struct canvas *cv, struct outbuf *o, bool ansi, const char *const *row_prefix)
{
	for (int y = 0; y < cv->h; y++) {
		const struct cell *row = cv->cells + (size_t)y * cv->w;
		if (row_prefix && row_prefix[y])
			out_str(o, row_prefix[y]);
		int end = cv->w;
		while (end > 0 && blank(&row[end - 1], ansi) && !(row_prefix && under_image(cv, end - 1, y)))
			end--;
		while (row_prefix && end > 0 && under_image(cv, end - 1, y)) /* nothing to write after the image */
			end--;
		/* Lines start in the default style: no escape sequence until a cell differs from it. */
		const struct cell plain = {' ', COLOR_DEFAULT, COLOR_DEFAULT, 0};
		const struct cell *cur = &plain;
		for (int x = 0; x < end; x++) {
			const struct cell *c = &row[x];
			if (row_prefix && under_image(cv, x, y)) {
				int n = 1;
				while (x + n < end && under_image(cv, x + n, y))
					n++;
				char mv[24];
				snprintf(mv, sizeof mv, "\033[%dC", n);
				out_str(o, mv);
				x += n - 1;
				continue;
			}
			if (c->ch == 0)
				continue;
			if (ansi && !same_style(cur, c)) {
				sgr(o, c, cv->pal->depth);
				cur = c;
			}
			char buf[8];
			out_add(o, buf, (size_t)utf8_encode(c->ch, buf));
		}
		if (ansi && cur != &plain)
			out_str(o, "\033[0m");
		out_str(o, "\n");
	}
}

char *canvas_to_string_around(const struct canvas *cv, bool ansi, const char *const *row_prefix)
{
	struct outbuf o = {0};
	out_str(&o, "");
	render(cv, &o, ansi, row_prefix);
	if (o.oom) {
		free(o.s);
		return NULL;
	}
	return o.s;
}

char *canvas_to_string(const struct canvas *cv, bool ansi)
{
	struct outbuf o = {0};
	out_str(&o, "");
	render(cv, &o, ansi, NULL);
	if (o.oom) {
		free(o.s);
		return NULL;
	}
	return o.s;
}

void canvas_write(const struct canvas *cv, FILE *out, bool ansi)
{
	char *s = canvas_to_string(cv, ansi);
	if (s)
		fputs(s, out);
	free(s);
}

int canvas_line(struct canvas *cv, float x0, float y0, float x1, float y1, uint32_t rgb, float opacity)
{
	if (!cv->vectors)
		return 0;
	if (cv->n_lines == cv->cap_lines) {
		int cap = cv->cap_lines ? 2 * cv->cap_lines : 256;
		struct canvas_line *l = realloc(cv->lines, (size_t)cap * sizeof *l);
		if (!l)
			return -1;
		cv->lines = l;
		cv->cap_lines = cap;
	}
	cv->lines[cv->n_lines++] = (struct canvas_line){x0, y0, x1, y1, rgb & 0xffffff, opacity};
	return 0;
}

/* ---- pixel images ---- */

/* A palette colour as 0xrrggbb (an index through the xterm table; the terminal's own colour as
 * black or white by the theme's kind). */
static uint32_t canvas_rgb(const struct canvas *cv, uint32_t c, bool fg)
{
	if (c == COLOR_DEFAULT)
		return (fg != cv->pal->light) ? 0xe4e4e4 : 0x121212;
	if (COLOR_IS_RGB(c))
		return c & 0xffffff;
	return theme_index_rgb((int)(c & 0xff));
}

struct canvas_image *canvas_image(struct canvas *cv, int x, int y, int rows, int cols, int bw, int bh)
{
	if (!canvas_has_pixels(cv) || rows < 1 || cols < 1 || bw < 1 || bh < 1)
		return NULL;
	if (cv->n_images == cv->cap_images) {
		int cap = cv->cap_images ? 2 * cv->cap_images : 8;
		struct canvas_image *im = realloc(cv->images, (size_t)cap * sizeof *im);
		if (!im)
			return NULL;
		cv->images = im;
		cv->cap_images = cap;
	}
	uint16_t *level = malloc((size_t)rows * cols * sizeof *level);
	if (!level)
		return NULL;
	for (size_t k = 0; k < (size_t)rows * cols; k++)
		level[k] = CANVAS_IMAGE_EMPTY;
	struct canvas_image *img = &cv->images[cv->n_images++];
	int cw = (cols * bw + cv->px_w - 1) / cv->px_w, ch = (rows * bh + cv->px_h - 1) / cv->px_h;
	*img = (struct canvas_image){{x, y, cw, ch}, rows, cols, bw, bh, level, {0}, -1, -1, 0};
	memcpy(img->rgb, cv->pal->heat_rgb, sizeof img->rgb); /* exact: a terminal with images has 24-bit colour */
	struct style cur = cv->pal->role[ROLE_CURSOR];
	img->cursor_rgb = cur.bg != COLOR_DEFAULT ? canvas_rgb(cv, cur.bg, false) : canvas_rgb(cv, cur.fg, true);
	canvas_fill(cv, img->at, ' ', (struct style){COLOR_DEFAULT, COLOR_DEFAULT, 0});
	return img;
}

void canvas_image_set(struct canvas_image *img, int i, int j, float v)
{
	if (i < 0 || j < 0 || i >= img->rows || j >= img->cols)
		return;
	img->level[(size_t)i * img->cols + j] = v == v ? (uint16_t)palette_level(v) : CANVAS_IMAGE_EMPTY;
}
