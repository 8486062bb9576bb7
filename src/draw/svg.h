/* svg.h -- a drawn canvas as a standalone SVG picture, for figures in papers (--print VIEW --format svg
 * and the explorer's export key).
 *
 * Every view draws into the cell canvas; this writes that canvas as vector graphics instead of
 * terminal text, so a figure shows exactly what the screen shows, in the theme's exact 24-bit
 * colours and without a terminal's palette in between:
 *  - a cell's background (heatmap cells, selections) is a rectangle of its exact colour;
 *  - block glyphs are rectangles too: the half blocks of two stacked heatmap values (▀ ▄), full and
 *    partial blocks of bars (▁…█, ▏…▉) and the density shades (░ ▒ ▓ as the foreground colour at
 *    25, 50, 75 % opacity);
 *  - braille dots (lines in the scatters) are small circles;
 *  - everything else is text (searchable, selectable), in runs of one style with each character's
 *    x given, so that a run keeps to the grid whatever the reader's monospace font;
 *  - the font is the generic family "monospace"; bold, underline and dim are SVG attributes;
 *  - lines a view adds for pictures (canvas_line: the head view's bertviz lines) are paths over it.
 * The output depends only on the canvas: the same picture gives the same bytes. */
#ifndef ATTNSCOPE_SVG_H
#define ATTNSCOPE_SVG_H

#include <stdio.h>

#include "draw/canvas.h"

#define SVG_CELL_W 9  /* user units (px) per column */
#define SVG_CELL_H 18 /* per row */

/* Write CV (drawn with a DEPTH_TRUE palette, so that its colours are exact) to OUT as an SVG
 * document. The terminal's default colours, which a canvas leaves to the terminal, become the
 * theme's background kind: light text on near-black for dark themes, dark on white for light ones
 * (CV->pal->light). Returns 0, or -1 when writing failed. */
int svg_write(const struct canvas *cv, FILE *out);

#endif
