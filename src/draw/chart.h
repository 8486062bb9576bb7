/* chart.h -- small chart pieces for the analysis views: horizontal bars and vertical histogram
 * columns in eighths of a cell (block elements; '#' without UTF-8), and a signed colour strip
 * (blue for negative, red for positive; '-' '=' / '+' '#' in monochrome). */
#ifndef ATTNSCOPE_CHART_H
#define ATTNSCOPE_CHART_H

#include "draw/canvas.h"

/* A bar of FRAC (0..1) of W cells from (X, Y) rightwards, rounded to eighths (nothing below 1/16 cell). */
void chart_hbar(struct canvas *cv, int x, int y, int w, double frac, struct style st);
/* A column of FRAC (0..1) of H cells rising from the bottom row Y of column X, W cells wide. */
void chart_vbar(struct canvas *cv, int x, int y, int w, int h, double frac, struct style st);
/* One cell coloured for V in [-1, 1] (clamped; NaN blank). */
void chart_signed(struct canvas *cv, int x, int y, double v);
/* Text readable over chart_signed's colour for V. */
void chart_signed_text(struct canvas *cv, int x, int y, int maxw, double v, const char *text);

/* A histogram of COUNT[bins] in R: one column group per bin, heights relative to MAXCOUNT (the
 * largest count when 0), the bottom row of R holding the x labels LO and HI (printf "%.3g"). */
void chart_histogram(struct canvas *cv, struct rect r, const int *count, int bins, int maxcount, double lo, double hi,
		     struct style st);

/* A curve over a histogram drawn by chart_histogram in R with BINS bins: one point per braille
 * dot column of the bars (per cell without UTF-8). chart_curve_points says how many; X[m] from
 * chart_curve_grid are their positions on [LO, HI] (each dot column's centre), where the caller
 * evaluates Y[m] in 0..1 (the bars' scale, 1 = full height) for chart_curve. The curve's dots
 * replace the bar glyph in the cells they cross (keeping a full bar's colour behind them), so
 * both stay readable; without UTF-8 each point is a '*' in its cell. */
int chart_curve_points(const struct canvas *cv, struct rect r, int bins);
void chart_curve_grid(int m, double lo, double hi, double *x);
void chart_curve(struct canvas *cv, struct rect r, int bins, const double *y, int m, struct style st);

/* A colour bar at (X, Y) in at most MAXW columns: "LEFT ▇▇▇▇▇▇▇▇▇▇ RIGHT", the heatmap ramp (or
 * with DIVERGING the ramp of signed differences) from 0 to 1 in ten cells. Nothing when it does
 * not fit. Returns the columns used. */
int chart_colour_bar(struct canvas *cv, int x, int y, int maxw, const char *left, const char *right, bool diverging);

/* A foreground colour for category I (heads in the head view), repeating after 10; the terminal's
 * default colour in monochrome. */
uint32_t chart_category(const struct canvas *cv, int i);

/* A round number of "ticks": the largest of 1, 2, 5 × 10^k not above X / 4 (for axis labels). */
double chart_nice_step(double span);

#endif
