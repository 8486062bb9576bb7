/* view-help.c -- the '?' screen: every key of the view below it, from the action table.
 *
 * The help lists, for the view it was opened from, its own actions, the actions that work in
 * every view, the count prefix and the keys of the text input line — with the keys currently
 * bound (config overrides included). view_write_roff writes the same lists, with default keys,
 * as the KEY BINDINGS part of the man page. The screen needs only the view below it; the man page
 * needs every view, and is given them (registry_views) by its caller, as the help is below the
 * registry. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/registry.h"

struct help_state {
	int top;        /* first line shown */
	int page;       /* lines visible at the last draw */
	int n_lines;    /* lines at the last draw */
};

struct help_line {
	const char *heading;   /* a section heading, or NULL */
	enum action action;    /* else an action */
	bool count;            /* else the line about count prefixes */
};

#define HELP_LINES_MAX (ACTION_COUNT + 16)

static int help_lines(const struct view *v, struct help_line *out)
{
	int n = 0;
	static char heading[64];
	snprintf(heading, sizeof heading, "%s", v ? v->title : "View");
	out[n++] = (struct help_line){heading, ACTION_NONE, false};
	for (const enum action *p = v ? v->actions : NULL; p && *p != ACTION_NONE; p++)
		out[n++] = (struct help_line){NULL, *p, false};
	out[n++] = (struct help_line){NULL, ACTION_NONE, true};
	out[n++] = (struct help_line){"Everywhere", ACTION_NONE, false};
	for (int a = 1; a < ACTION_COUNT; a++)
		if (action_get((enum action)a)->scope == SCOPE_GLOBAL)
			out[n++] = (struct help_line){NULL, (enum action)a, false};
	out[n++] = (struct help_line){"Editing the text", ACTION_NONE, false};
	for (int a = 1; a < ACTION_COUNT; a++)
		if (action_get((enum action)a)->scope == SCOPE_EDIT)
			out[n++] = (struct help_line){NULL, (enum action)a, false};
	return n;
}

static void *help_create(struct view_ctx *ctx)
{
	return calloc(1, sizeof(struct help_state));
}

static void help_destroy(void *state)
{
	free(state);
}

static const struct view *help_target(const struct view_ctx *ctx)
{
	/* The view under the help screen (the help is on top while it draws and acts). */
	for (int i = ctx->depth - 1; i >= 0; i--)
		if (ctx->stack[i] != &view_help)
			return ctx->stack[i];
	return &view_grid;
}

static void help_draw(void *state, struct view_ctx *ctx, struct canvas *cv, struct rect area)
{
	struct help_state *h = state;
	struct help_line lines[HELP_LINES_MAX];
	int n = help_lines(help_target(ctx), lines);
	h->n_lines = n;
	h->page = area.h - 1;
	if (h->top > n - h->page)
		h->top = n - h->page;
	if (h->top < 0)
		h->top = 0;
	struct rect old = canvas_clip(cv, area);
	canvas_text(cv, area.x, area.y, area.w, "Keys (q or Esc closes, j/k scroll; a number before a key is a count)",
		    canvas_role(cv, ROLE_TITLE));
	int key_w = 20;
	for (int i = h->top, y = area.y + 1; i < n && y < area.y + area.h; i++, y++) {
		if (lines[i].heading) {
			canvas_text(cv, area.x, y, area.w, lines[i].heading, canvas_role(cv, ROLE_TITLE));
			continue;
		}
		if (lines[i].count) {
			canvas_text(cv, area.x + 2, y, key_w, "0-9", canvas_role(cv, ROLE_HELP_KEY));
			canvas_text(cv, area.x + 2 + key_w, y, area.w - 2 - key_w,
				    "count: repeat a move, or the row/column for g, G, |", canvas_role(cv, ROLE_TEXT));
			continue;
		}
		char keys[128];
		keymap_describe(ctx->keys, lines[i].action, keys, sizeof keys);
		canvas_text(cv, area.x + 2, y, key_w - 1, keys[0] ? keys : "(unbound)", canvas_role(cv, ROLE_HELP_KEY));
		canvas_text(cv, area.x + 2 + key_w, y, area.w - 2 - key_w, action_get(lines[i].action)->help,
			    canvas_role(cv, ROLE_TEXT));
	}
	if (h->top + h->page < n)
		canvas_put(cv, area.x + area.w - 1, area.y + area.h - 1, canvas_glyph(cv, GLYPH_DOWN),
			   canvas_role(cv, ROLE_DIM));
	canvas_clip(cv, old);
}

static int help_height(void *state, struct view_ctx *ctx, const struct canvas *cv, int width)
{
	struct help_line lines[HELP_LINES_MAX];
	return 1 + help_lines(help_target(ctx), lines);
}

static bool help_act(void *state, struct view_ctx *ctx, enum action a, int count)
{
	struct help_state *h = state;
	int rep = count > 0 ? count : 1, page = h->page > 1 ? h->page : 1;
	switch (a) {
	case ACT_UP:
		h->top -= rep;
		break;
	case ACT_DOWN:
		h->top += rep;
		break;
	case ACT_PAGE_UP:
		h->top -= page * rep;
		break;
	case ACT_PAGE_DOWN:
		h->top += page * rep;
		break;
	case ACT_FIRST:
		h->top = 0;
		break;
	case ACT_LAST:
		h->top = h->n_lines;
		break;
	case ACT_HELP:
		ctx->pop = true;
		break;
	default:
		return false;
	}
	if (h->top < 0)
		h->top = 0;
	return true;
}

static void help_status(void *state, struct view_ctx *ctx, char *buf, size_t n)
{
	snprintf(buf, n, "help for the %s", help_target(ctx)->name);
}

static const enum action help_actions[] = {
	ACT_UP, ACT_DOWN, ACT_PAGE_UP, ACT_PAGE_DOWN, ACT_FIRST, ACT_LAST, ACTION_NONE,
};
static const enum action help_status_keys[] = {ACT_BACK, ACTION_NONE};

const struct view view_help = {
	.name = "help",
	.title = "Help screen",
	.flags = VIEW_AGGREGATE, /* the keys, whatever the view below shows */
	.actions = help_actions,
	.status_keys = help_status_keys,
	.create = help_create,
	.destroy = help_destroy,
	.draw = help_draw,
	.height = help_height,
	.act = help_act,
	.status = help_status,
};

/* ---- man page ---- */

static void roff_escaped(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", out);
		else if (*s == '-')
			fputs("\\-", out);
		else
			fputc(*s, out);
	}
}

static void roff_action(FILE *out, const struct keymap *km, enum action a)
{
	int keys[16];
	int n = keymap_keys(km, a, keys, 16);
	fputs(".TP\n", out);
	for (int i = 0; i < n; i++) {
		char name[32];
		fputs(i ? "\\fR, \\fB" : "\\fB", out);
		roff_escaped(out, action_key_name(keys[i], name, sizeof name));
	}
	fputs("\\fR\n", out);
	const char *help = action_get(a)->help;
	/* Sentences start at a line start in roff; a leading dot or quote must be protected. */
	if (help[0] == '.' || help[0] == '\'')
		fputs("\\&", out);
	roff_escaped(out, help);
	fputs(" (\\fI", out);
	roff_escaped(out, action_get(a)->name);
	fputs("\\fR)\n", out);
}

void view_write_roff(FILE *out, const struct view *const *views)
{
	struct keymap km;
	keymap_init(&km);
	fputs(".\\\" Generated from the action table by `tests/ui/ui-driver --roff`; keep in sync.\n", out);
	fputs(".SS Everywhere\n", out);
	fputs("These keys work in every view.\n"
	      "A number typed before a key is a count: it repeats a movement, or names the row\n"
	      "(\\fBg\\fR, \\fBG\\fR) or column (\\fB|\\fR) to jump to.\n", out);
	for (int a = 1; a < ACTION_COUNT; a++)
		if (action_get((enum action)a)->scope == SCOPE_GLOBAL)
			roff_action(out, &km, (enum action)a);
	for (int i = 0; views[i]; i++) {
		fprintf(out, ".SS %s\n", views[i]->title);
		for (const enum action *p = views[i]->actions; *p != ACTION_NONE; p++)
			roff_action(out, &km, *p);
	}
	fprintf(out, ".SS %s\n", view_help.title);
	for (const enum action *p = view_help.actions; *p != ACTION_NONE; p++)
		roff_action(out, &km, *p);
	fputs(".SS Editing the text\n", out);
	fputs("While an input line has the focus,\nprintable keys insert text and these keys edit.\n", out);
	for (int a = 1; a < ACTION_COUNT; a++)
		if (action_get((enum action)a)->scope == SCOPE_EDIT)
			roff_action(out, &km, (enum action)a);
}
