/* print.h -- headless rendering (`--print`): a view of a trace or of a corpus aggregate drawn to a
 * stream, and the setup it shares with the TUI (theme choice, locale, colour depth). */
#ifndef ATTNSCOPE_PRINT_H
#define ATTNSCOPE_PRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/err.h"
#include "draw/theme.h"
#include "trace/trace.h"
#include "tui/ui.h"
#include "tui/userconf.h"

struct aggregate;
struct view_ctx;

/* Defaults for every field of O, the options of --print and of the explorer (NULL theme, auto
 * colour, detect depth, selection -1, linear). */
void print_options_init(struct ui_options *o);
/* Load the theme O asks for, else CONF's, else "viridis". */
int print_load_theme(const struct ui_options *o, const struct userconf *conf, struct theme *th, struct err *e);
/* Adopt the environment's LC_CTYPE and say whether it is UTF-8. */
bool print_locale_utf8(void);
/* The colour depth for output to a terminal (IS_TTY) or not, following O's colour choice. */
enum color_depth print_depth(const struct ui_options *o, bool is_tty);

/* How a model is named on screen: a folder path by its last component ("bert-mini"). */
const char *print_model_label(const char *name, char *buf, size_t n);

/* Draw VIEW (a name in registry_views: "grid", "heatmap", …) of T to OUT: a header line, the
 * token strip and the view at its full size, WIDTH columns wide. With O->words, of the words of
 * T. */
int print_trace(const struct trace *t, const char *view, const struct ui_options *o, FILE *out, struct err *e);
/* The same comparing T with TB, the second text's trace (NULL: as print_trace): the views show what
 * changed (compare.h), the header and a second strip show TB. */
int print_compare(const struct trace *t, const struct trace *tb, const char *view, const struct ui_options *o,
		  FILE *out, struct err *e);

/* Draw VIEW of the corpus aggregate A to OUT (the views with VIEW_AGGREGATE have an aggregate
 * form): a header line (model, texts, tokens) and the view. */
int print_aggregate(const struct aggregate *a, const char *view, const struct ui_options *o, FILE *out,
		    struct err *e);

/* Save the view on top of LIVE (the explorer's context: its trace, selection and the view's own
 * state) as an SVG picture drawn as --print draws it, WIDTH columns wide, in TH's exact colours,
 * to the first free file name "attnscope-VIEW-LxHy[-N].svg" in the current folder; that name is
 * written to PATH (N bytes). Never overwrites a file. */
int print_export_svg(const struct view_ctx *live, const struct theme *th, int width, char *path, size_t n,
		     struct err *e);

/* Keys: every action with its default keys, one per line (for --help and the man page test). */
void print_keys(FILE *out);

/* For the benchmark: draw the grid view of T into a W×H canvas REPS times at the given depth and
 * turn it into the ANSI text a full repaint sends. COLD: as if every frame brought a new trace
 * (every thumbnail recomputed); otherwise thumbnails are reused as when moving the selection.
 * Returns the mean milliseconds per redraw, or -1 on error. */
double print_bench_grid_redraw(const struct trace *t, int w, int h, int reps, enum color_depth depth, bool cold);

#endif
