/* registry.c -- the list of every view and the look-ups over it (see registry.h).
 *
 * Adding a view touches three places and no others:
 *   1. its file, src/views/view-NAME.c, exporting `const struct view view_NAME` with its name,
 *      title, actions, callbacks and flags (VIEW_AGGREGATE when it draws a corpus aggregate;
 *      then also `brief`, how the corpus messages name it), listed in src/analysis-ui.am;
 *   2. its row in the action table (src/views/actions.c, with its enum in actions.h): the key
 *      that opens it, set as the view's `open`, and the rows of any new view-scoped actions;
 *   3. its entry here: the declaration in registry.h and a row in registry_views.
 * Everything that lists views follows from these: --print's names in `attnscope --help` and its
 * errors, the views a corpus aggregate prints as and the TUI's corpus message, the help screen
 * and the man page's KEY BINDINGS (tests/ui/ui-driver --roff > man/attnscope-keys.txt). */
#include "config.h"

#include "views/registry.h"

#include <stdio.h>
#include <string.h>

const struct view *const registry_views[] = {
	&view_grid, &view_heatmap,
	/* Analysis views (src/analysis-ui.am). */
	&view_heads, &view_qk, &view_rollout, &view_headview, &view_neuron, &view_vectors, &view_qkstats, &view_dots,
	&view_softmax, NULL,
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
