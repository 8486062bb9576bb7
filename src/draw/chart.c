/* chart.c -- bars, histogram columns and signed colour cells (see chart.h). */
#include "config.h"

#include "draw/chart.h"

#include <math.h>
#include <stdio.h>

/* Left-aligned eighth blocks ▏▎▍▌▋▊▉ and lower eighth blocks ▁▂▃▄▅▆▇, index 1..7. */
static const uint32_t left_eighth[8] = {' ', 0x258f, 0x258e, 0x258d, 0x258c, 0x258b, 0x258a, 0x2589};
static const uint32_t lower_eighth[8] = {' ', 0x2581, 0x2582, 0x2583, 0x2584, 0x2585, 0x2586, 0x2587};

void chart_hbar(struct canvas *cv, int x, int y, int w, double frac, struct style st)
{
	if (!(frac > 0))
		return;
	if (frac > 1)
		frac = 1;
	bool u8 = cv->pal->utf8;
	int eighths = (int)lround(frac * w * (u8 ? 8 : 1));
	int full = u8 ? eighths / 8 : eighths, rest = u8 ? eighths % 8 : 0;
	for (int i = 0; i < full; i++)
		canvas_put(cv, x + i, y, u8 ? 0x2588 : '#', st);
	if (rest)
		canvas_put(cv, x + full, y, left_eighth[rest], st);
}

void chart_vbar(struct canvas *cv, int x, int y, int w, int h, double frac, struct style st)
{
	if (!(frac > 0))
		return;
	if (frac > 1)
		frac = 1;
	bool u8 = cv->pal->utf8;
	int eighths = (int)lround(frac * h * (u8 ? 8 : 1));
	int full = u8 ? eighths / 8 : eighths, rest = u8 ? eighths % 8 : 0;
	for (int c = 0; c < w; c++) {
		for (int i = 0; i < full; i++)
			canvas_put(cv, x + c, y - i, u8 ? 0x2588 : '#', st);
		if (rest)
			canvas_put(cv, x + c, y - full, lower_eighth[rest], st);
	}
}

void chart_histogram(struct canvas *cv, struct rect r, const int *count, int bins, int maxcount, double lo, double hi,
		     struct style st)
{
	if (bins < 1 || r.w < bins || r.h < 3)
		return;
	if (maxcount <= 0)
		for (int b = 0; b < bins; b++)
			maxcount = count[b] > maxcount ? count[b] : maxcount;
	int bw = r.w / bins, h = r.h - 2; /* bars, a baseline, the labels */
	int base = r.y + h;
	for (int b = 0; b < bins; b++) {
		if (maxcount > 0)
			chart_vbar(cv, r.x + b * bw, base - 1, bw, h, (double)count[b] / maxcount, st);
		for (int c = 0; c < bw; c++)
			canvas_put(cv, r.x + b * bw + c, base, canvas_glyph(cv, GLYPH_HLINE), cv->pal->role[ROLE_DIM]);
	}
	char buf[32];
	snprintf(buf, sizeof buf, "%.3g", lo);
	canvas_text(cv, r.x, base + 1, -1, buf, cv->pal->role[ROLE_LABEL]);
	snprintf(buf, sizeof buf, "%.3g", hi);
	int w = canvas_text_width(cv, buf);
	canvas_text(cv, r.x + bins * bw - w, base + 1, w, buf, cv->pal->role[ROLE_LABEL]);
}

int chart_curve_points(const struct canvas *cv, struct rect r, int bins)
{
	if (bins < 1 || r.w < bins || r.h < 3)
		return 0;
	return r.w / bins * bins * (cv->pal->utf8 ? 2 : 1);
}

void chart_curve_grid(int m, double lo, double hi, double *x)
{
	for (int i = 0; i < m; i++)
		x[i] = lo + (i + 0.5) / m * (hi - lo);
}

/* Braille bit of dot column DX (0..1), dot row DY (0..3) of a cell. */
static uint8_t curve_bit(int dx, int dy)
{
	static const uint8_t bit[4][2] = {{0x01, 0x08}, {0x02, 0x10}, {0x04, 0x20}, {0x40, 0x80}};
	return bit[dy][dx];
}

/* One dot of the curve at dot (DX, DY) of the area at (X0, Y0): merged with the dots already in
 * that cell, a full bar's colour kept as the background. */
static void curve_dot(struct canvas *cv, int x0, int y0, int dx, int dy, struct style st)
{
	int x = x0 + dx / 2, y = y0 + dy / 4;
	struct rect c = cv->clip;
	if (x < c.x || y < c.y || x >= c.x + c.w || y >= c.y + c.h)
		return;
	struct cell *cell = canvas_at(cv, x, y);
	uint32_t prev = cell->ch;
	uint8_t bits = prev >= 0x2800 && prev <= 0x28ff ? (uint8_t)(prev - 0x2800) : 0;
	struct style s = st;
	if (prev == 0x2588 && cv->pal->depth != DEPTH_MONO)
		s.bg = cell->fg;
	else if (bits)
		s.bg = cell->bg;
	canvas_put(cv, x, y, 0x2800u + (bits | curve_bit(dx % 2, dy % 4)), s);
}

void chart_curve(struct canvas *cv, struct rect r, int bins, const double *y, int m, struct style st)
{
	if (m < 1 || m != chart_curve_points(cv, r, bins))
		return;
	int h = r.h - 2; /* the bar rows, as chart_histogram */
	bool u8 = cv->pal->utf8;
	int dh = h * (u8 ? 4 : 1), prev = -1;
	for (int i = 0; i < m; i++) {
		double v = y[i] < 0 ? 0 : y[i] > 1 ? 1 : y[i];
		if (v != v)
			continue;
		int d = (int)lround((1 - v) * (dh - 1)); /* dot row from the top */
		if (!u8) {
			canvas_put(cv, r.x + i, r.y + d, '*', st);
			continue;
		}
		/* Join a steep step to the previous column so the line stays unbroken. */
		int from = prev < 0 ? d : prev < d ? prev + 1 : prev > d ? prev - 1 : d;
		for (int k = from;; k += k < d ? 1 : -1) {
			curve_dot(cv, r.x, r.y, i, k, st);
			if (k == d)
				break;
		}
		prev = d;
	}
}

uint32_t chart_category(const struct canvas *cv, int i)
{
	/* Tableau 10: distinct hues that stay apart on dark and light backgrounds. */
	static const uint32_t rgb[10] = {0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f,
					 0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f, 0xbab0ac};
	if (cv->pal->depth == DEPTH_MONO)
		return COLOR_DEFAULT;
	return theme_nearest(rgb[(i % 10 + 10) % 10], cv->pal->depth);
}

/* Blend from the terminal-neutral grey towards blue (negative) or red (positive). */
static uint32_t signed_rgb(double v)
{
	double a = fabs(v);
	int r0 = 0x30, g0 = 0x30, b0 = 0x30;
	int r1 = v < 0 ? 0x3b : 0xe0, g1 = v < 0 ? 0x82 : 0x4a, b1 = v < 0 ? 0xf6 : 0x3a;
	int r = (int)lround(r0 + a * (r1 - r0)), g = (int)lround(g0 + a * (g1 - g0)), b = (int)lround(b0 + a * (b1 - b0));
	return (uint32_t)(r << 16 | g << 8 | b);
}

static double clamp1(double v)
{
	return v < -1 ? -1 : v > 1 ? 1 : v;
}

void chart_signed(struct canvas *cv, int x, int y, double v)
{
	if (v != v) {
		canvas_put(cv, x, y, ' ', cv->pal->role[ROLE_TEXT]);
		return;
	}
	v = clamp1(v);
	if (cv->pal->depth == DEPTH_MONO) {
		double a = fabs(v);
		char ch = a < 0.1 ? ' ' : a < 0.5 ? (v < 0 ? '-' : '+') : (v < 0 ? '=' : '#');
		canvas_put(cv, x, y, (uint32_t)ch, cv->pal->role[ROLE_TEXT]);
		return;
	}
	struct style st = {COLOR_DEFAULT, theme_nearest(signed_rgb(v), cv->pal->depth), 0};
	canvas_put(cv, x, y, ' ', st);
}

void chart_signed_text(struct canvas *cv, int x, int y, int maxw, double v, const char *text)
{
	struct style st = cv->pal->role[ROLE_TEXT];
	if (cv->pal->depth != DEPTH_MONO && v == v)
		st = (struct style){theme_nearest(0xffffff, cv->pal->depth),
				    theme_nearest(signed_rgb(clamp1(v)), cv->pal->depth), 0};
	canvas_text(cv, x, y, maxw, text, st);
}

double chart_nice_step(double span)
{
	if (!(span > 0))
		return 1;
	double raw = span / 4, p = pow(10, floor(log10(raw))), m = raw / p;
	return (m >= 5 ? 5 : m >= 2 ? 2 : 1) * p;
}

int chart_colour_bar(struct canvas *cv, int x, int y, int maxw, const char *left, const char *right, bool diverging)
{
	int lw = canvas_text_width(cv, left), rw = canvas_text_width(cv, right), ramp = 10;
	if (maxw < lw + ramp + 2 + rw)
		return 0;
	canvas_text(cv, x, y, lw, left, canvas_role(cv, ROLE_LABEL));
	const struct palette *pal = cv->pal;
	struct palette div;
	if (diverging) {
		palette_diverging(pal, &div);
		cv->pal = &div;
	}
	for (int i = 0; i < ramp; i++)
		canvas_heat1(cv, x + lw + 1 + i, y, (float)i / (ramp - 1));
	cv->pal = pal;
	canvas_text(cv, x + lw + 2 + ramp, y, rw, right, canvas_role(cv, ROLE_LABEL));
	return lw + ramp + 2 + rw;
}
