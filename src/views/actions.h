/* actions.h -- the named actions views receive, their default keys, and key rebinding.
 *
 * One X-macro table lists every action with its context, default keys and help text. The same
 * table feeds the key map, the help screen ('?'), `actions_print_all` (for --help and the man page
 * check) and key overrides from the config file. Views never see raw keys, only actions. */
#ifndef ATTNSCOPE_ACTIONS_H
#define ATTNSCOPE_ACTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/err.h"

/* Where an action applies: any view, a view that lists it, or the text input line. */
enum action_scope { SCOPE_GLOBAL, SCOPE_VIEW, SCOPE_EDIT };

/* X(id, name, scope, default keys (space separated), help) */
#define ACTIONS(X)                                                                                   \
	X(ACT_BACK, "back", SCOPE_GLOBAL, "q Esc", "close this view; quit from the grid")            \
	X(ACT_QUIT, "quit", SCOPE_GLOBAL, "Q C-c", "quit at once (a corpus run going on: stop it first, keeping what is done)") \
	X(ACT_HELP, "help", SCOPE_GLOBAL, "? F1", "show the keys of the current view")               \
	X(ACT_EDIT, "edit", SCOPE_GLOBAL, "i e Tab", "edit the text (the model reruns as you type)") \
	X(ACT_EDIT_PAIR, "edit-pair", SCOPE_GLOBAL, "p", "edit the second line: a pair model's second sentence, an encoder-decoder's target")   \
	X(ACT_REDRAW, "redraw", SCOPE_GLOBAL, "C-l", "redraw the whole screen")                      \
	X(ACT_TOKEN_PREV, "token-prev", SCOPE_GLOBAL, ",", "select the previous token")              \
	X(ACT_TOKEN_NEXT, "token-next", SCOPE_GLOBAL, ".", "select the next token")                  \
	X(ACT_TOKEN_CLEAR, "token-clear", SCOPE_GLOBAL, "x", "clear the token selection and the marks")            \
	X(ACT_SCALE, "scale", SCOPE_GLOBAL, "c", "colour scale: linear, log, rank (comparing: B - A to the largest change or to 1)")                  \
	X(ACT_SPECIAL, "hide-special", SCOPE_GLOBAL, "s", "hide special tokens and renormalise rows") \
	X(ACT_WORDS, "words", SCOPE_GLOBAL, "w", "merge pieces into words: attention to a word summed, from a word averaged") \
	X(ACT_SINK, "hide-sink", SCOPE_GLOBAL, "Z", "hide the sink (the first token, or the learned sink) and renormalise rows") \
	X(ACT_WEIGHTS, "weights", SCOPE_GLOBAL, "Y", "weights of every view: attention, or value-weighted ||a.f(x)|| (the size of what each key moves; rows shared out to 1)") \
	X(ACT_COMPARE, "compare", SCOPE_GLOBAL, "C", "compare with a second text (an encoder-decoder's decoder shown: a second target): edit it (views show what changed)") \
	X(ACT_SAVE_SVG, "save-svg", SCOPE_GLOBAL, "S", "save the view as an SVG picture (attnscope-VIEW-LxHy.svg here)") \
	X(ACT_PIXELS, "pixels", SCOPE_GLOBAL, "I", "pixel heatmaps on or off: the heatmap as a sixel or kitty image (asks the terminal once)") \
	X(ACT_ROTARY, "rotary", SCOPE_GLOBAL, "o", "Q/K views: queries and keys before or after rotary") \
	X(ACT_CORPUS, "corpus", SCOPE_GLOBAL, "a", "corpus mode: show the corpus aggregate or the text typed") \
	X(ACT_VIEW_HEADS, "view-heads", SCOPE_GLOBAL, "F", "head finder: every head's pattern scores, sortable") \
	X(ACT_VIEW_QK, "view-qk", SCOPE_GLOBAL, "K", "query/key geometry of the selected head (joint PCA)") \
	X(ACT_VIEW_ROLLOUT, "view-rollout", SCOPE_GLOBAL, "R", "attention rollout through the layers up to the selected one") \
	X(ACT_VIEW_HEADVIEW, "view-headview", SCOPE_GLOBAL, "V", "head view: the selected token's attention, one bar per head") \
	X(ACT_VIEW_NEURON, "view-neuron", SCOPE_GLOBAL, "N", "neuron view: query, keys, their products and scores of the selected head") \
	X(ACT_VIEW_VECTORS, "view-vectors", SCOPE_GLOBAL, "A", "attention rows as vectors (PCA) and projections across layers") \
	X(ACT_VIEW_QKSTATS, "view-qkstats", SCOPE_GLOBAL, "D", "per-head query/key mean and spread of the layer") \
	X(ACT_VIEW_DOTS, "view-dots", SCOPE_GLOBAL, "X", "same-head vs different-head query-key product histograms") \
	X(ACT_VIEW_SOFTMAX, "view-softmax", SCOPE_GLOBAL, "W", "distributions of the layer's attention weights") \
	X(ACT_VIEW_PREDICT, "view-predict", SCOPE_GLOBAL, "P", "predictions: the output head's top tokens at the selected token") \
	X(ACT_VIEW_LENS, "view-lens", SCOPE_GLOBAL, "L", "logit lens: the top token of each layer's residual stream at every position") \
	X(ACT_SURPRISAL, "surprisal", SCOPE_GLOBAL, "y", "colour the token strip by surprisal (causal models)") \
	X(ACT_ABLATE, "ablate", SCOPE_GLOBAL, "B", "mark or unmark the selected head for ablation: the model reruns without it, and views show that run") \
	X(ACT_ABLATE_LAYER, "ablate-layer", SCOPE_GLOBAL, "E", "mark every head of the selected layer for ablation, or unmark them all") \
	X(ACT_STACK, "stack", SCOPE_GLOBAL, "T", "encoder-decoder models: show the encoder's self-attention, the decoder's, the cross-attention (target rows, source columns) or all three (the grid's sections)") \
	X(ACT_ABLATE_MODE, "ablate-mode", SCOPE_GLOBAL, "O", "ablation mode: zero, then mean (each position gets the head's mean over the text), then no head marked") \
	X(ACT_UP, "up", SCOPE_VIEW, "k Up", "move up (a count repeats)")                             \
	X(ACT_DOWN, "down", SCOPE_VIEW, "j Down", "move down (a count repeats)")                     \
	X(ACT_LEFT, "left", SCOPE_VIEW, "h Left", "move left (a count repeats)")                     \
	X(ACT_RIGHT, "right", SCOPE_VIEW, "l Right", "move right (a count repeats)")                 \
	X(ACT_PAGE_UP, "page-up", SCOPE_VIEW, "PageUp C-b", "up one page")                           \
	X(ACT_PAGE_DOWN, "page-down", SCOPE_VIEW, "PageDown C-f", "down one page")                   \
	X(ACT_FIRST, "first", SCOPE_VIEW, "g Home", "go to the first row, or row N with a count")    \
	X(ACT_LAST, "last", SCOPE_VIEW, "G End", "go to the last row, or row N with a count")        \
	X(ACT_COLUMN, "column", SCOPE_VIEW, "|", "go to column N (the count)")                       \
	X(ACT_OPEN, "open", SCOPE_VIEW, "Enter", "open the selected head's heatmap")                 \
	X(ACT_HEAD_PREV, "head-prev", SCOPE_VIEW, "[", "previous head")                              \
	X(ACT_HEAD_NEXT, "head-next", SCOPE_VIEW, "]", "next head")                                  \
	X(ACT_LAYER_PREV, "layer-prev", SCOPE_VIEW, "{", "previous layer")                           \
	X(ACT_LAYER_NEXT, "layer-next", SCOPE_VIEW, "}", "next layer")                               \
	X(ACT_MEAN_HEADS, "mean-heads", SCOPE_VIEW, "m", "toggle the mean over the layer's heads")   \
	X(ACT_MEAN_LAYERS, "mean-layers", SCOPE_VIEW, "M", "toggle the mean over all layers and heads") \
	X(ACT_NUMBERS, "numbers", SCOPE_VIEW, "n", "toggle numbers in the cells")                    \
	X(ACT_POOL, "pool", SCOPE_VIEW, "d", "shrink thumbnails (heatmap: zoomed cells) by max or by mean")                  \
	X(ACT_ZOOM_IN, "zoom-in", SCOPE_VIEW, "+ =", "larger thumbnails; heatmap: zoom in (fewer tokens per cell)")                            \
	X(ACT_ZOOM_OUT, "zoom-out", SCOPE_VIEW, "-", "smaller thumbnails; heatmap: zoom out (a block of tokens per cell)")                           \
	X(ACT_REVERSE, "reverse", SCOPE_VIEW, "r", "reverse the sort order, or given/received attention") \
	X(ACT_NORMALISE, "normalise", SCOPE_VIEW, "z", "cycle the normalisation of the vectors") \
	X(ACT_TOGGLE, "toggle", SCOPE_VIEW, "t", "switch the selected head off or on, or leave out the first token") \
	X(ACT_MARK, "mark", SCOPE_VIEW, "b", "mark the selected token as B, the token A is projected onto") \
	X(ACT_COMBINE, "combine", SCOPE_VIEW, "Space", "mark or unmark the token under the cursor: marked tokens' attention is combined") \
	X(ACT_VARIANT, "variant", SCOPE_VIEW, "v", "switch between the notebook's definition and attnscope's variant") \
	X(ACT_ED_LEFT, "edit-left", SCOPE_EDIT, "Left C-b", "cursor one character left")             \
	X(ACT_ED_RIGHT, "edit-right", SCOPE_EDIT, "Right C-f", "cursor one character right")         \
	X(ACT_ED_HOME, "edit-home", SCOPE_EDIT, "Home C-a", "cursor to the start")                   \
	X(ACT_ED_END, "edit-end", SCOPE_EDIT, "End C-e", "cursor to the end")                        \
	X(ACT_ED_BACKSPACE, "edit-backspace", SCOPE_EDIT, "Backspace C-h", "delete before the cursor") \
	X(ACT_ED_DELETE, "edit-delete", SCOPE_EDIT, "Delete C-d", "delete under the cursor")         \
	X(ACT_ED_KILL_START, "edit-kill-start", SCOPE_EDIT, "C-u", "delete to the start")            \
	X(ACT_ED_KILL_END, "edit-kill-end", SCOPE_EDIT, "C-k", "delete to the end")                  \
	X(ACT_ED_KILL_WORD, "edit-kill-word", SCOPE_EDIT, "C-w", "delete the word before the cursor") \
	X(ACT_ED_DONE, "edit-done", SCOPE_EDIT, "Enter Esc", "stop editing, back to the view")       \
	X(ACT_ED_NEXT_FIELD, "edit-next-field", SCOPE_EDIT, "Tab", "next input field, then the view") \
	X(ACT_ED_PREV_FIELD, "edit-prev-field", SCOPE_EDIT, "S-Tab", "previous input field")         \
	X(ACT_ED_QUIT, "edit-quit", SCOPE_EDIT, "C-c", "quit at once")

enum action {
	ACTION_NONE,
#define ACTION_ENUM(id, name, scope, keys, help) id,
	ACTIONS(ACTION_ENUM)
#undef ACTION_ENUM
	ACTION_COUNT
};

struct action_info {
	const char *name;
	enum action_scope scope;
	const char *keys; /* default keys, space separated key names */
	const char *help;
};

/* Keys: a Unicode code point is itself, Ctrl-A..Ctrl-Z are 1..26, and special keys live above
 * Unicode. */
enum {
	KEY_SPECIAL_BASE = 0x110000,
	K_UP = KEY_SPECIAL_BASE, K_DOWN, K_LEFT, K_RIGHT, K_HOME, K_END, K_PAGE_UP, K_PAGE_DOWN,
	K_INSERT, K_DELETE, K_BACKSPACE, K_ENTER, K_ESC, K_TAB, K_BACKTAB,
	K_F1, K_F2, K_F3, K_F4, K_F5, K_F6, K_F7, K_F8, K_F9, K_F10, K_F11, K_F12,
	K_RESIZE, /* the terminal changed size (not bindable) */
	K_LAST
};
#define KEY_CTRL(c) ((c) & 0x1f)

const struct action_info *action_get(enum action a);
/* The action called NAME, or ACTION_NONE. */
enum action action_by_name(const char *name);

/* Parse a key name ("j", "Down", "C-u", "PageDown", "S-Tab", "F1", "Space", "é") into *KEY. */
int action_key_parse(const char *name, int *key, struct err *e);
/* The canonical name of KEY (as action_key_parse reads it) into BUF. */
const char *action_key_name(int key, char *buf, size_t n);

#define KEYMAP_MAX 256

struct keymap {
	struct keymap_entry {
		int key;
		enum action action;
	} entry[KEYMAP_MAX];  /* [n] in binding order */
	int n;
};

/* Bind every action's default keys. */
void keymap_init(struct keymap *km);
/* Replace the keys of ACTION by KEYS[n] (a key taken from another action of the same scope
 * group — view or edit — is unbound there). -1 when the map is full. */
int keymap_bind(struct keymap *km, enum action a, const int *keys, int n, struct err *e);
/* The action KEY means while editing text (EDITING) or in a view. ACTION_NONE when unbound. */
enum action keymap_lookup(const struct keymap *km, int key, bool editing);
/* The keys bound to A (at most MAX) in binding order; returns how many. */
int keymap_keys(const struct keymap *km, enum action a, int *keys, int max);
/* The keys of A as "j, Down" into BUF. */
const char *keymap_describe(const struct keymap *km, enum action a, char *buf, size_t n);

/* Every action with its default keys, one per line: "NAME<TAB>KEY, KEY<TAB>HELP". */
void actions_print_all(FILE *out);

#endif
