/* braille.c -- scatter plots with braille-dot lines, marker glyphs and non-colliding labels (see braille.h). */
#include "config.h"

#include "draw/braille.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bit of the braille dot at column DX (0..1), row DY (0..3) of a cell. */
static const uint8_t braille_bit[4][2] = {{0x01, 0x08}, {0x02, 0x10}, {0x04, 0x20}, {0x40, 0x80}};

int bplot_init(struct bplot *p, const struct canvas *cv, struct rect r, double xmin, double xmax, double ymin,
	       double ymax, bool equal)
{
	memset(p, 0, sizeof *p);
	if (r.w < 1 || r.h < 1)
		r.w = r.h = 1;
	p->r = r;
	p->braille = cv->pal->utf8;
	p->dw = r.w * (p->braille ? 2 : 1);
	p->dh = r.h * (p->braille ? 4 : 1);
	size_t cells = (size_t)r.w * r.h;
	p->dots = calloc(cells, 1);
	p->dot_style = malloc(cells);
	p->axis = calloc(cells, 1);
	p->taken = calloc(cells, 1);
	if (!p->dots || !p->dot_style || !p->axis || !p->taken) {
		bplot_free(p);
		return -1;
	}
	memset(p->dot_style, -1, cells);
	for (int i = 0; i < BPLOT_STYLES; i++)
		p->style[i] = canvas_role(cv, ROLE_DIM);
	/* The origin is always in view: the axes go through it. */
	if (!(xmin <= 0))
		xmin = 0;
	if (!(xmax >= 0))
		xmax = 0;
	if (!(ymin <= 0))
		ymin = 0;
	if (!(ymax >= 0))
		ymax = 0;
	double xs = xmax - xmin, ys = ymax - ymin;
	if (!(xs > 0))
		xmin -= 1, xmax += 1, xs = 2;
	if (!(ys > 0))
		ymin -= 1, ymax += 1, ys = 2;
	xmin -= 0.05 * xs, xmax += 0.05 * xs, ymin -= 0.05 * ys, ymax += 0.05 * ys;
	if (equal) {
		/* Braille dots are about square; ASCII cells are about twice as tall as wide. */
		double aspect = p->braille ? 1.0 : 2.0; /* height of a dot in widths */
		double ux = (xmax - xmin) / p->dw, uy = (ymax - ymin) / (p->dh * aspect);
		if (ux > uy) {
			double grow = (ux * p->dh * aspect - (ymax - ymin)) / 2;
			ymin -= grow, ymax += grow;
		} else {
			double grow = (uy * p->dw - (xmax - xmin)) / 2;
			xmin -= grow, xmax += grow;
		}
	}
	p->xmin = xmin, p->xmax = xmax, p->ymin = ymin, p->ymax = ymax;
	return 0;
}

double bplot_aspect(const struct canvas *cv, struct rect r)
{
	if (r.w < 1 || r.h < 1)
		return 1;
	return cv->pal->utf8 ? (2.0 * r.w) / (4.0 * r.h) : (double)r.w / (2.0 * r.h);
}

void bplot_free(struct bplot *p)
{
	free(p->dots);
	free(p->dot_style);
	free(p->axis);
	free(p->taken);
	free(p->count);
	p->dots = NULL, p->axis = p->taken = NULL, p->dot_style = NULL, p->count = NULL;
}

/* Data to dot coordinates (not clipped); y grows downwards on screen. */
static void to_dot(const struct bplot *p, double x, double y, double *dx, double *dy)
{
	*dx = (x - p->xmin) / (p->xmax - p->xmin) * p->dw;
	*dy = (p->ymax - y) / (p->ymax - p->ymin) * p->dh;
}

bool bplot_cell(const struct bplot *p, double x, double y, int *cx, int *cy)
{
	double dx, dy;
	to_dot(p, x, y, &dx, &dy);
	if (!(dx >= 0 && dx < p->dw && dy >= 0 && dy < p->dh))
		return false;
	*cx = (int)dx / (p->braille ? 2 : 1);
	*cy = (int)dy / (p->braille ? 4 : 1);
	return true;
}

static void set_dot(struct bplot *p, int dx, int dy, int s)
{
	if (dx < 0 || dy < 0 || dx >= p->dw || dy >= p->dh)
		return;
	int cx = p->braille ? dx / 2 : dx, cy = p->braille ? dy / 4 : dy;
	size_t c = (size_t)cy * p->r.w + cx;
	p->dots[c] |= p->braille ? braille_bit[dy % 4][dx % 2] : 1;
	p->dot_style[c] = (int8_t)s;
}

void bplot_line(struct bplot *p, double x0, double y0, double x1, double y1, int s)
{
	double ax, ay, bx, by;
	to_dot(p, x0, y0, &ax, &ay);
	to_dot(p, x1, y1, &bx, &by);
	double len = fmax(fabs(bx - ax), fabs(by - ay));
	int steps = len < 1 ? 1 : (int)ceil(len);
	if (steps > 4 * (p->dw + p->dh))
		steps = 4 * (p->dw + p->dh); /* far outside the plot: the visible part is what counts */
	for (int i = 0; i <= steps; i++) {
		double f = (double)i / steps;
		set_dot(p, (int)floor(ax + f * (bx - ax)), (int)floor(ay + f * (by - ay)), s);
	}
}

void bplot_axes(struct bplot *p)
{
	double ox, oy;
	to_dot(p, 0, 0, &ox, &oy);
	int cx = (int)ox, cy = (int)oy;
	if (p->braille) {
		for (int x = 0; x < p->dw; x++)
			set_dot(p, x, cy, 0);
		for (int y = 0; y < p->dh; y++)
			set_dot(p, cx, y, 0);
		return;
	}
	for (int x = 0; x < p->r.w && cy >= 0 && cy < p->r.h; x++)
		p->axis[(size_t)cy * p->r.w + x] |= 1;
	for (int y = 0; y < p->r.h && cx >= 0 && cx < p->r.w; y++)
		p->axis[(size_t)y * p->r.w + cx] |= 2;
}

void bplot_marker(struct bplot *p, struct canvas *cv, double x, double y, uint32_t glyph, char ascii,
		  struct style st)
{
	int cx, cy;
	if (!bplot_cell(p, x, y, &cx, &cy))
		return;
	canvas_put(cv, p->r.x + cx, p->r.y + cy, cv->pal->utf8 ? glyph : (uint32_t)ascii, st);
	p->taken[(size_t)cy * p->r.w + cx] = 1;
}

static bool span_free(const struct bplot *p, int x, int y, int w)
{
	if (y < 0 || y >= p->r.h || x < 0 || x + w > p->r.w)
		return false;
	for (int i = 0; i < w; i++)
		if (p->taken[(size_t)y * p->r.w + x + i])
			return false;
	return true;
}

bool bplot_label(struct bplot *p, struct canvas *cv, double x, double y, const char *text, struct style st)
{
	int cx, cy, w = canvas_text_width(cv, text);
	if (w < 1 || !bplot_cell(p, x, y, &cx, &cy)) {
		p->labels_dropped++;
		return false;
	}
	/* Candidate spots: right, left, above, below (centred), then the four diagonals. */
	const int spots[8][2] = {
		{cx + 1, cy}, {cx - w, cy}, {cx - w / 2, cy - 1}, {cx - w / 2, cy + 1},
		{cx + 1, cy - 1}, {cx + 1, cy + 1}, {cx - w, cy - 1}, {cx - w, cy + 1},
	};
	for (int i = 0; i < 8; i++) {
		int lx = spots[i][0], ly = spots[i][1];
		if (!span_free(p, lx, ly, w))
			continue;
		canvas_text(cv, p->r.x + lx, p->r.y + ly, w, text, st);
		memset(p->taken + (size_t)ly * p->r.w + lx, 1, (size_t)w);
		p->labels_drawn++;
		return true;
	}
	p->labels_dropped++;
	return false;
}

bool bplot_dense(const struct bplot *p, long n)
{
	size_t cells = (size_t)p->r.w * p->r.h;
	if (n > (long)cells)
		return true;
	if (n < BPLOT_DENSE_MIN) /* a few points: their labels say more than shades would */
		return false;
	long occupied = 0;
	for (size_t c = 0; p->count && c < cells; c++) {
		long sum = 0;
		for (int k = 0; k < BPLOT_KINDS; k++)
			sum += p->count[k * cells + c];
		occupied += sum > 0;
	}
	return p->count && n > 2 * occupied;
}

int bplot_density_add(struct bplot *p, int kind, double x, double y)
{
	size_t cells = (size_t)p->r.w * p->r.h;
	if (!p->count && !(p->count = calloc(BPLOT_KINDS * cells, sizeof *p->count)))
		return -1;
	int cx, cy;
	if (kind >= 0 && kind < BPLOT_KINDS && bplot_cell(p, x, y, &cx, &cy))
		p->count[kind * cells + (size_t)cy * p->r.w + cx]++;
	return 0;
}

uint32_t bplot_density_glyph(const struct canvas *cv, int level)
{
	static const uint32_t shade[BPLOT_LEVELS] = {0x2591, 0x2592, 0x2593, 0x2588}; /* ░ ▒ ▓ █ */
	static const char ascii[BPLOT_LEVELS] = {'.', ':', '*', '#'};
	level = level < 0 ? 0 : level >= BPLOT_LEVELS ? BPLOT_LEVELS - 1 : level;
	return cv->pal->utf8 ? shade[level] : (uint32_t)ascii[level];
}

long bplot_density_draw(struct bplot *p, struct canvas *cv, const struct style st[BPLOT_KINDS + 1],
			long upper[BPLOT_LEVELS])
{
	size_t cells = (size_t)p->r.w * p->r.h;
	long max = 0;
	for (size_t c = 0; p->count && c < cells; c++) {
		long sum = 0;
		for (int k = 0; k < BPLOT_KINDS; k++)
			sum += p->count[k * cells + c];
		if (sum > max)
			max = sum;
	}
	/* Log scale: shade l covers counts up to max^((l+1)/LEVELS), so 1 point is always the lightest
	 * and the fullest cell the darkest. */
	for (int l = 0; l < BPLOT_LEVELS; l++) {
		upper[l] = l == BPLOT_LEVELS - 1 ? max : (long)floor(pow((double)max, (double)(l + 1) / BPLOT_LEVELS));
		if (upper[l] < 1)
			upper[l] = 1;
	}
	for (size_t c = 0; max > 0 && c < cells; c++) {
		long sum = 0, most = 0;
		int kind = 0;
		for (int k = 0; k < BPLOT_KINDS; k++) {
			long n = p->count[k * cells + c];
			sum += n;
			if (n > most)
				most = n, kind = k;
		}
		if (sum == 0 || p->taken[c])
			continue;
		int level = 0;
		while (level < BPLOT_LEVELS - 1 && sum > upper[level])
			level++;
		struct style s = 3 * most >= 2 * sum ? st[kind] : st[BPLOT_KINDS];
		canvas_put(cv, p->r.x + (int)(c % p->r.w), p->r.y + (int)(c / p->r.w), bplot_density_glyph(cv, level), s);
		p->taken[c] = 1;
	}
	return max;
}

int bplot_density_legend(struct canvas *cv, int x, int y, int w, const long upper[BPLOT_LEVELS], struct style st)
{
	int x0 = x;
	for (int l = 0; l < BPLOT_LEVELS; l++) {
		if (l > 0 && upper[l] == upper[l - 1])
			continue;
		char num[32];
		snprintf(num, sizeof num, upper[l] == 1 ? " 1 " : cv->pal->utf8 ? " \xe2\x89\xa4%ld " : " <=%ld ", upper[l]);
		if (x - x0 + 1 + canvas_text_width(cv, num) > w)
			return x - x0;
		canvas_put(cv, x++, y, bplot_density_glyph(cv, l), st);
		x += canvas_text(cv, x, y, w - (x - x0), num, st);
	}
	x += canvas_text(cv, x, y, w - (x - x0), "points per cell", st);
	return x - x0;
}

void bplot_flush(struct bplot *p, struct canvas *cv)
{
	for (int y = 0; y < p->r.h; y++)
		for (int x = 0; x < p->r.w; x++) {
			size_t c = (size_t)y * p->r.w + x;
			if (p->taken[c])
				continue;
			int s = p->dot_style[c] >= 0 ? p->dot_style[c] : 0;
			if (p->braille) {
				if (p->dots[c])
					canvas_put(cv, p->r.x + x, p->r.y + y, 0x2800u + p->dots[c], p->style[s]);
			} else if (p->dots[c] && p->dot_style[c] > 0) {
				canvas_put(cv, p->r.x + x, p->r.y + y, '.', p->style[s]);
			} else if (p->axis[c]) {
				char ch = p->axis[c] == 3 ? '+' : p->axis[c] == 1 ? '-' : '|';
				canvas_put(cv, p->r.x + x, p->r.y + y, (uint32_t)ch, p->style[0]);
			}
		}
}
