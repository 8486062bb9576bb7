/* registry.c -- the list of every view and the look-ups over it (see registry.h).
 *
 * Adding a view touches three places in the code and no others:
 *   1. its file, src/views/view-NAME.c (listed in src/views/local.am), exporting
 *      `const struct view view_NAME`: name, title, actions, callbacks, and its flags
 *      (VIEW_AGGREGATE when it draws a corpus aggregate, with `brief`, how the TUI's corpus
 *      message names it);
 *   2. its row in the action table (the X(...) list in src/views/actions.h, which actions.c
 *      expands): ACT_VIEW_NAME, the key that opens it from anywhere, set as the view's `open`
 *      (and rows for any new view-scoped action);
 *   3. its entry here: a row in registry_views and its declaration in registry.h.
 * What lists views follows from these: --print's names in `attnscope --help` and in its errors,
 * which views a corpus aggregate prints as (--help's corpus line, the errors of cli/main.c and
 * tui/print.c) and the TUI's "Over the corpus: …" line, opening a view by its key, the help
 * screen, the config file's action names. Then the documentation, which is not generated:
 * regenerate the man page's KEY BINDINGS (tests/ui/ui-driver --roff, into man/attnscope-keys.txt),
 * describe the view in man/attnscope-views.txt, run tools/merge-man-sections (tests/ui/man-keys.sh
 * fails until both are done), and name it where man/attnscope.1 and README list the views by hand
 * (the --print list; the corpus --print list and tests/corpus.sh's expected message for a
 * VIEW_AGGREGATE view). */
#include "config.h"

#include "views/registry.h"

#include <stdio.h>
#include <string.h>

const struct view *const registry_views[] = {
	&view_grid, &view_heatmap,
	/* The analysis views. */
	&view_heads, &view_qk, &view_rollout, &view_headview, &view_neuron, &view_vectors, &view_qkstats, &view_dots,
	&view_softmax,
	&view_predict, &view_lens, NULL,
};

const struct view *registry_find(const char *name)
{
	for (int i = 0; registry_views[i]; i++)
		if (!strcmp(registry_views[i]->name, name))
			return registry_views[i];
	return NULL;
}

const struct view *registry_opened_by(enum action a)
{
	for (int i = 0; registry_views[i] && a != ACTION_NONE; i++)
		if (registry_views[i]->open == a)
			return registry_views[i];
	return NULL;
}

bool registry_has(const char *name, unsigned flags)
{
	const struct view *v = registry_find(name);
	return v && (v->flags & flags) == flags;
}

const char *registry_names(char *buf, size_t n, unsigned flags, const char *sep, const char *last)
{
	int count = 0, k = 0;
	for (int i = 0; registry_views[i]; i++)
		count += (registry_views[i]->flags & flags) == flags;
	if (n)
		buf[0] = '\0';
	for (int i = 0; registry_views[i] && n; i++)
		if ((registry_views[i]->flags & flags) == flags) {
			size_t len = strlen(buf);
			snprintf(buf + len, n - len, "%s%s", k ? k == count - 1 ? last : sep : "", registry_views[i]->name);
			k++;
		}
	return buf;
}
