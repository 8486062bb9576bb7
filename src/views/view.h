/* view.h -- what a view is: a set of callbacks over shared explorer state.
 *
 * Like tmux's window modes, each view (grid, heatmap, help, …) lives in its own file and exports
 * one `const struct view`, which the registry (registry.h) declares and lists. The UI owns a
 * stack of views; the top one draws into a canvas area and receives actions (never raw keys).
 * State every view shares — the trace, the selected layer, head and token, colour scale — lives
 * in struct view_ctx; a view's own state (cursor, scroll) is created by its `create` callback.
 * The same callbacks draw the TUI and `--print`. */
#ifndef ATTNSCOPE_VIEW_H
#define ATTNSCOPE_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "views/actions.h"
#include "draw/canvas.h"
#include "analysis/heatdata.h"
#include "trace/trace.h"

struct view;
struct aggregate;
struct model;
struct lmpred;
struct ablation;

#define VIEW_STACK_MAX 8
#define VIEW_MARKS_MAX 16

struct view_ctx {
	const struct trace *trace;    /* the current result; NULL until the first run finishes */
	const struct aggregate *agg;  /* a corpus aggregate shown instead of a trace (only views with
	                               * VIEW_AGGREGATE draw one: the head finder, …), or NULL */
	const struct trace *compare;  /* the second text's result (compare.h), NULL for none; trace_gen
	                               * changes whenever it does too */
	unsigned trace_gen;           /* changes whenever trace does (views cache by it, not by address) */
	const struct keymap *keys;    /* for help and status texts */
	int layer, head;              /* the selected head */
	int token;                    /* the selected token (index into trace), -1 for none */
	enum heat_scale scale;        /* colour scale of every heatmap */
	bool diff_fixed;              /* comparing: B − A on the fixed ±1 scale, not on ±(the largest
	                               * |B − A| in view), which makes small changes visible */
	bool hide_special;            /* drop special tokens and renormalise rows */
	bool qk_before_rotary;        /* Q/K views read queries and keys before rotary (and q/k norm)
	                               * instead of as the scores use them (rotary models only) */
	bool print;                   /* headless: draw at natural size, no scrolling */
	bool cross;                   /* trace is a decoder's and the views show its cross-attention (trace_cross_attn):
	                               * rows are its tokens (the target), columns its encoder's (the source); only
	                               * the views with VIEW_CROSS draw it, the others say so */
	bool all_stacks;              /* an encoder-decoder's three stacks at once (T's fourth state, --stack all): the
	                               * grid draws encoder self-attention, decoder self-attention and cross-attention
	                               * as sections; trace and cross are the selected head's section, as above */
	int want_stack;               /* set by the grid to move the selection to another section: 1 + the section (0
	                               * encoder, 1 decoder, 2 cross: the explorer's enum ui_stack); 0 = none (the
	                               * explorer applies and clears it) */
	bool pixels;                  /* heatmaps are drawn as images (the explorer's pixel heatmaps) */
	int marks[VIEW_MARKS_MAX];    /* tokens marked to be combined (marks.h), in marking order */
	int n_marks;
	const char *sort;             /* initial sort key of a table view (--sort), NULL = its default */
	const struct model *model;    /* the model that makes trace, for its output head (lmhead.h); NULL = none
	                               * (a synthetic source, an aggregate) */
	struct lmpred *pred;          /* trace's predictions, row by row as asked (view_predictions); owned */
	unsigned pred_gen;            /* the trace_gen pred belongs to */
	bool surprisal_strip;         /* the token strip coloured by surprisal (y) */
	/* Head ablation (B, E, O; engine/ablate.h). While heads are marked and their rerun is done, trace is the
	 * ablated run (as `--dump --ablate` gives it) and clean the run without ablation, else clean is NULL. */
	const struct ablation *ablation; /* the marked heads and mode (NULL: none can be marked) */
	const struct trace *clean;    /* the clean run beside an ablated trace, or NULL */
	struct lmpred *pred_clean;    /* clean's predictions (view_predictions_clean); owned */
	unsigned pred_clean_gen;
	/* The head finder's "ablation" column: each head zero- (or mean-) ablated alone, the change of mean
	 * surprisal; the explorer computes it in the background while a view asks (abl_effect_wanted). */
	const double *abl_effect;     /* [n_layers][n_heads], NaN for heads not done; NULL: no column */
	int abl_effect_done, abl_effect_total; /* progress: heads done of total */
	bool abl_effect_running;      /* still computing (Esc stops it) */
	bool abl_effect_wanted;       /* set by a view's draw: it shows the column */
	const char *abl_effect_note;  /* how the column was made or why it stopped ("" when running) */

	/* The view stack (the top is the view on screen). */
	const struct view *stack[VIEW_STACK_MAX];
	void *state[VIEW_STACK_MAX];
	int depth;

	/* Requests from a view's act(): open another view, close this one. */
	const struct view *push;
	bool pop;
	char message[160];            /* one-line feedback for the status bar, "" for none */
};

/* What a view can do besides drawing one text: bits of struct view's flags (as tmux's modes
 * carry theirs), so that every list of "the views that …" follows from the views themselves. */
enum view_flag {
	VIEW_AGGREGATE = 1 << 0,  /* draws a corpus aggregate (ctx->agg) too, and prints one */
	VIEW_CROSS = 1 << 1,      /* draws cross-attention (ctx->cross) */
	VIEW_CROSS_COMPARE = 1 << 2, /* draws what changed in cross-attention (ctx->cross with ctx->compare) */
	VIEW_STACKS = 1 << 3,     /* draws an encoder-decoder's three stacks at once (ctx->all_stacks) */
};

/* The trace whose tokens are the columns (keys) CTX's heatmaps show: the encoder's under cross-attention. */
static inline const struct trace *view_key_trace(const struct view_ctx *ctx)
{
	return ctx->cross && ctx->trace && ctx->trace->encoder ? ctx->trace->encoder : ctx->trace;
}

struct view {
	const char *name;                 /* "grid", "heatmap": also the --print name */
	const char *title;                /* for the help screen and man page: "Grid view" */
	unsigned flags;                   /* enum view_flag bits */
	const char *brief;                /* how the TUI's corpus message names a VIEW_AGGREGATE view that
	                                   * opens by a key ("Q/K geometry"); NULL for the others */
	const enum action *actions;       /* SCOPE_VIEW actions it handles, ACTION_NONE-terminated */
	const enum action *status_keys;   /* the few actions the status bar advertises */
	enum action open;                 /* the global action that opens it from anywhere, or ACTION_NONE */
	void *(*create)(struct view_ctx *ctx);
	void (*destroy)(void *state);
	/* Draw into AREA of CV. */
	void (*draw)(void *state, struct view_ctx *ctx, struct canvas *cv, struct rect area);
	/* Rows the view needs to show everything in WIDTH columns (for --print). */
	int (*height)(void *state, struct view_ctx *ctx, const struct canvas *cv, int width);
	/* Handle A repeated COUNT times (COUNT < 0: no count given). Returns false when A means
	 * nothing here. May set ctx->push / ctx->pop / ctx->message. */
	bool (*act)(void *state, struct view_ctx *ctx, enum action a, int count);
	/* A short view-specific status ("cell 0.1234"), "" for none. */
	void (*status)(void *state, struct view_ctx *ctx, char *buf, size_t n);
};

/* Push V on CTX's stack (creating its state); false when full or out of memory. */
bool view_push(struct view_ctx *ctx, const struct view *v);
/* Pop and destroy the top view. */
void view_pop(struct view_ctx *ctx);
/* Pop everything. */
void view_pop_all(struct view_ctx *ctx);
/* Open V (a view with an `open` action, registry_opened_by): pop back to it when it is already on
 * the stack, else push it (replacing the top view when that is another view with an `open`
 * action). False when V is NULL (or it cannot be opened). */
bool view_open(struct view_ctx *ctx, const struct view *v);

/* The output head's predictions for CTX's trace, made on first use per trace (rows computed as asked:
 * only the tokens shown are projected); NULL with why in WHY (WHYSZ bytes) when there are none: no
 * model, no head (lmhead_why), a trace of words, out of memory. */
struct lmpred *view_predictions(struct view_ctx *ctx, char *why, size_t whysz);
/* Free what view_predictions made (when the explorer or --print ends). */
void view_predictions_free(struct view_ctx *ctx);
/* The surprisal strip's colour of token I in 0..1 (its surprisal over ln(vocabulary size), at most 1;
 * NAN for none: token 0, a model without a causal head). ARG is the struct view_ctx. */
float view_surprisal_heat(void *arg, int i);
/* What the surprisal strip writes under token I in at most W columns: its surprisal in nats, "-" for none. */
void view_surprisal_label(void *arg, int i, char *buf, size_t n, int w);
/* Switch the surprisal strip (y) on or off, saying so in ctx->message; it stays off, saying why, for a
 * model without a causal head. */
void view_toggle_surprisal(struct view_ctx *ctx);

/* The clean run's predictions beside an ablated trace (ctx->clean), made on first use per trace; NULL when
 * there is no clean run shown (no head marked) or no predictions (WHY as view_predictions). */
struct lmpred *view_predictions_clean(struct view_ctx *ctx, char *why, size_t whysz);
/* Beside an ablated run: token I's surprisal, ablated - clean, into *DELTA (NAN for none), and whether the
 * top-1 prediction for it changed (causal: the prediction made at I - 1; a masked LM: at I). False when
 * no ablated run is shown or there are no predictions. */
bool view_ablation_change(struct view_ctx *ctx, int i, float *delta, bool *top1_changed);

/* Clamp the shared selection to the trace's shape (after a new trace arrives). */
void view_ctx_clamp(struct view_ctx *ctx);
/* Does view V handle the view-scoped action A? Global actions always count as handled. */
bool view_handles(const struct view *v, enum action a);

#endif
