/* registry.h -- every view: the objects the view files export and the list of them that the UI
 * and --print look views up in (by name, by the action that opens them).
 *
 * The registry sits above every view file (registry.c names them all) and below the TUI and the
 * command line, which find views here. View files that open another view by address (the grid
 * opening the heatmap) include this header for its declaration only. */
#ifndef ATTNSCOPE_REGISTRY_H
#define ATTNSCOPE_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "views/actions.h"
#include "views/view.h"

extern const struct view view_grid;
extern const struct view view_heatmap;
/* The '?' screen: the TUI opens it over any view; not in registry_views (it is neither opened
 * from the grid nor printed). */
extern const struct view view_help;
/* Write the KEY BINDINGS subsections of the man page (roff, one .SS per view): the keys of every
 * view, VIEWS (NULL-terminated: registry_views), and of the help screen (view-help.c). */
void view_write_roff(FILE *out, const struct view *const *views);
/* The analysis views (view-heads.c, …). */
extern const struct view view_heads;
extern const struct view view_qk;
extern const struct view view_rollout;
extern const struct view view_headview;
extern const struct view view_neuron;
extern const struct view view_vectors;
extern const struct view view_qkstats;
extern const struct view view_dots;
extern const struct view view_softmax;
extern const struct view view_predict;
extern const struct view view_lens;

/* Every view that can be opened from the grid or printed, NULL-terminated, in the order --help
 * and the man page list them. */
extern const struct view *const registry_views[];

/* The view in registry_views called NAME, or NULL. */
const struct view *registry_find(const char *name);
/* The view in registry_views whose `open` action is A, or NULL (always for ACTION_NONE). */
const struct view *registry_opened_by(enum action a);
/* Is NAME a view in registry_views with every bit of FLAGS (enum view_flag)? */
bool registry_has(const char *name, unsigned flags);
/* The names of the views in registry_views with every bit of FLAGS (0: all of them), in its order,
 * into BUF of N bytes (truncated to fit): joined by SEP, the last two by LAST ("heads, qk or
 * softmax"). For --help and the messages that say which views there are. Returns BUF. */
const char *registry_names(char *buf, size_t n, unsigned flags, const char *sep, const char *last);

#endif
