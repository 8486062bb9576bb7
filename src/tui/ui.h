/* ui.h -- the terminal explorer (curses), and the options it shares with headless rendering (print.h).
 *
 * ui_run opens the interactive explorer on a model: an input line (and, for pair models, a second
 * one; for an encoder-decoder the target line, its decoder's text), the token strip, the current view
 * and a status bar. The model runs on a worker thread as the user types. print.h draws one view of a
 * finished trace to a stream, as plain text or with ANSI colours, through the same code; struct
 * ui_options configures both. */
#ifndef ATTNSCOPE_UI_H
#define ATTNSCOPE_UI_H

#include <stdbool.h>

#include "base/err.h"
#include "analysis/heatdata.h"
#include "trace/trace.h"
#include "draw/pixout.h"
#include "tui/runner.h"
#include "tui/userconf.h"

struct model;
struct ablation;

/* How long the text must be still before the model reruns: a paste or a burst of typing
 * costs one run, not one per character. */
#define UI_DEBOUNCE_MS 60

enum ui_color {
	UI_COLOR_AUTO,    /* colour when the output is a terminal and NO_COLOR is unset */
	UI_COLOR_ALWAYS,  /* colour at the depth TERM/COLORTERM say (256 when they say none) */
	UI_COLOR_NEVER,   /* monochrome: attributes only; heatmaps as shade characters */
};

/* Which attention of an encoder-decoder model is shown (--stack): its encoder's self-attention (every
 * other model's only one), the decoder's causal self-attention, or the decoder's cross-attention. */
enum ui_stack { UI_STACK_ENCODER, UI_STACK_DECODER, UI_STACK_CROSS, UI_STACK_ALL /* the three as the grid's sections */ };

struct ui_options {
	const char *theme;        /* theme name or file; NULL = the config file's, else "viridis" */
	const char *config;       /* config file; NULL = $XDG_CONFIG_HOME/attnscope/config.yaml */
	enum ui_color color;
	int depth;                /* force a colour depth: -1 = detect, else an enum color_depth */
	int width;                /* --print: 0 = the terminal's width, or 80 when not a terminal */
	bool svg;                 /* --print --format svg: an SVG picture (draw/svg.h) instead of text */
	enum pixel_proto print_pixels; /* --print --format sixel|kitty: text with the heatmap as an image */
	enum userconf_pixels pixels; /* the explorer's pixel heatmaps (--pixels); UNSET: the config file's */
	int layer, head;          /* initial selection, -1 = first */
	int token;                /* initial selected token, -1 = none */
	int marks[16];            /* initially marked tokens, combined (--token A,B,…; VIEW_MARKS_MAX) */
	int n_marks;
	enum heat_scale scale;    /* initial colour scale */
	bool diff_fixed;          /* comparing: B − A on the fixed ±1 scale (--diff-scale fixed) */
	bool hide_special;        /* initially hide special tokens (renormalising rows) */
	bool before_rotary;       /* Q/K views initially show queries and keys before rotary */
	bool words;               /* merge pieces into words (words.h); --token then counts words */
	bool weights_norm;        /* initially value-weighted attention ‖α f(x)‖ (valnorm.h; --weights norm) */
	const char *compare;      /* a second text to compare with (--compare), NULL = none */
	const char *compare_target; /* the explorer's --compare-target: a second target for the same text (an
	                           * encoder-decoder's), NULL = none */
	enum heat_agg agg;        /* --print heatmap: one head, mean of the layer, mean of all */
	bool numbers;             /* --print heatmap: weights written in the cells */
	int stack;                /* --stack: an encoder-decoder's attention shown, enum ui_stack */
	const char *target;       /* the explorer's --target: an encoder-decoder's decoder text, the target line's
	                           * first (edited there), NULL = none */
	const char *sort;         /* --print heads: the score to sort by (a headscore name), NULL = none */
	const struct model *model; /* --print: the model that made the trace, for its output head (--print
	                           * predict); NULL = none */
	const struct trace *clean; /* --print --ablate: the clean run (the trace is the ablated one), or NULL */
	const struct ablation *ablation; /* ... the heads ablated (--ablate, --ablate-mode), or NULL */
	const double *abl_effect;  /* --print heads --ablation-effect: [n_layers][n_heads] the ablation column */
};

/* The interactive explorer on model M, starting with TEXT (and TEXT_B, may be NULL; an encoder-decoder's
 * second line is its target, starting with O->target instead). Returns 0 when the user quits, -1 with a
 * message when the terminal cannot be used. */
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

#endif
