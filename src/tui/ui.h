/* ui.h -- the terminal explorer (curses) and headless rendering of its views.
 *
 * ui_run opens the interactive explorer on a model: an input line (and, for pair models, a second
 * one), the token strip, the current view and a status bar. The model runs on a worker thread as
 * the user types. ui_print draws one view of a finished trace to a stream, as plain text or with
 * ANSI colours, through the same code. */
#ifndef ATTNSCOPE_UI_H
#define ATTNSCOPE_UI_H

#include <stdbool.h>
#include <stdio.h>

#include "base/err.h"
#include "analysis/heatdata.h"
#include "draw/theme.h"
#include "trace/trace.h"
#include "tui/runner.h"

struct model;

/* How long the text must be still before the model reruns: a paste or a burst of typing
 * costs one run, not one per character. */
#define UI_DEBOUNCE_MS 60

enum ui_color {
	UI_COLOR_AUTO,    /* colour when the output is a terminal and NO_COLOR is unset */
	UI_COLOR_ALWAYS,  /* colour at the depth TERM/COLORTERM say (256 when they say none) */
	UI_COLOR_NEVER,   /* monochrome: attributes only; heatmaps as shade characters */
};

struct ui_options {
	const char *theme;        /* theme name or file; NULL = the config file's, else "viridis" */
	const char *config;       /* config file; NULL = $XDG_CONFIG_HOME/attnscope/config.yaml */
	enum ui_color color;
	int depth;                /* force a colour depth: -1 = detect, else an enum color_depth */
	int width;                /* ui_print: 0 = the terminal's width, or 80 when not a terminal */
	int layer, head;          /* initial selection, -1 = first */
	int token;                /* initial selected token, -1 = none */
	int marks[16];            /* initially marked tokens, combined (--token A,B,…; VIEW_MARKS_MAX) */
	int n_marks;
	enum heat_scale scale;    /* initial colour scale */
	bool hide_special;        /* initially hide special tokens (renormalising rows) */
	bool before_rotary;       /* Q/K views initially show queries and keys before rotary */
	bool words;               /* merge pieces into words (words.h); --token then counts words */
	const char *compare;      /* a second text to compare with (--compare), NULL = none */
	enum heat_agg agg;        /* ui_print heatmap: one head, mean of the layer, mean of all */
	bool numbers;             /* ui_print heatmap: weights written in the cells */
	const char *sort;         /* ui_print heads: the score to sort by (a headscore name), NULL = none */
};

/* Defaults for every field (NULL theme, auto colour, detect depth, selection -1, linear). */
void ui_options_init(struct ui_options *o);

/* The interactive explorer on model M, starting with TEXT (and TEXT_B, may be NULL). Returns 0
 * when the user quits, -1 with a message when the terminal cannot be used. */
int ui_run(struct model *m, const char *text, const char *text_b, const struct ui_options *o, struct err *e);
/* The same on any trace source (ui_run wraps the model in one). */
int ui_run_source(const struct ui_source *src, const char *text, const char *text_b, const struct ui_options *o,
		  struct err *e);

/* The explorer on a corpus aggregate: AGG (owned from now on; may be NULL) or, when RUN is not
 * NULL, the aggregate of a corpus run of model M going on in the background (corpusbg.h), its
 * progress in the status bar and its snapshots shown as they come; the first Ctrl-C stops it,
 * keeping what is done. SRC runs the texts the user types (the same model, or a source that says
 * there is none). *OUT receives the aggregate shown at the end (the caller frees it). 0 when the
 * user quits, -1 with a message. */
struct aggregate;
struct corpusrun_opts;
int ui_run_corpus(const struct ui_source *src, struct aggregate *agg, const struct model *m,
		  const struct corpusrun_opts *run, const struct ui_options *o, struct aggregate **out, struct err *e);

/* Draw VIEW ("grid" or "heatmap") of T to OUT: a header line, the token strip and the view at its
 * full size, WIDTH columns wide. With O->words, of the words of T. */
int ui_print(const struct trace *t, const char *view, const struct ui_options *o, FILE *out, struct err *e);
/* The same comparing T with TB, the second text's trace (NULL: as ui_print): the views show what
 * changed (compare.h), the header and a second strip show TB. */
int ui_print_compare(const struct trace *t, const struct trace *tb, const char *view, const struct ui_options *o,
		     FILE *out, struct err *e);

/* Draw VIEW of the corpus aggregate A to OUT (heads, qkstats, dots and softmax have an aggregate
 * form): a header line
 * (model, texts, tokens) and the view. */
struct aggregate;
int ui_print_aggregate(const struct aggregate *a, const char *view, const struct ui_options *o, FILE *out,
		       struct err *e);

/* Keys: every action with its default keys, one per line (for --help and the man page test). */
void ui_print_keys(FILE *out);

/* For the benchmark: draw the grid view of T into a W×H canvas REPS times at the given depth and
 * turn it into the ANSI text a full repaint sends. COLD: as if every frame brought a new trace
 * (every thumbnail recomputed); otherwise thumbnails are reused as when moving the selection.
 * Returns the mean milliseconds per redraw, or -1 on error. */
double ui_bench_grid_redraw(const struct trace *t, int w, int h, int reps, enum color_depth depth, bool cold);

#endif
