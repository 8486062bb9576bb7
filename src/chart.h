/* chart.h -- small chart pieces for the analysis views: horizontal bars and vertical histogram
 * columns in eighths of a cell (block elements; '#' without UTF-8), and a signed colour strip
 * (blue for negative, red for positive; '-' '=' / '+' '#' in monochrome). */
#ifndef ATTNSCOPE_CHART_H
#define ATTNSCOPE_CHART_H

#include "canvas.h"

/* A bar of FRAC (0..1) of W cells from (X, Y) rightwards. */
void chart_hbar(struct canvas *cv, int x, int y, int w, double frac, struct style st);
/* A column of FRAC (0..1) of H cells rising from the bottom row Y of column X, W cells wide. */
void chart_vbar(struct canvas *cv, int x, int y, int w, int h, double frac, struct style st);
/* One cell coloured for V in [-1, 1] (clamped; NaN blank). */
void chart_signed(struct canvas *cv, int x, int y, double v);
/* Text readable over chart_signed's colour for V. */
void chart_signed_text(struct canvas *cv, int x, int y, int maxw, double v, const char *text);

/* A round number of "ticks": the largest of 1, 2, 5 × 10^k not above X / 4 (for axis labels). */
double chart_nice_step(double span);

#endif
