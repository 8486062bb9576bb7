/* tokstrip.c -- axis labels and the token strip (see tokstrip.h); the text is tokentext.c's. */
#include "config.h"

#include "draw/tokstrip.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tokstrip_label(const struct trace *t, int i, bool utf8, char *buf, size_t n)
{
	char text[256];
	bool cont;
	tokentext_text(t, i, text, sizeof text, &cont);
	snprintf(buf, n, "%s%s", cont ? (utf8 ? "\xc2\xb7" : "+") : "", text);
}

struct strip_item {
	char text[256];
	char id[16];
	int w;       /* column width: max of text and id */
	bool cont;
};

static struct strip_item *strip_items(const struct canvas *cv, const struct trace *t)
{
	struct strip_item *it = calloc(t->n ? (size_t)t->n : 1, sizeof *it);
	if (!it)
		return NULL;
	for (int i = 0; i < t->n; i++) {
		tokentext_text(t, i, it[i].text, sizeof it[i].text, &it[i].cont);
		snprintf(it[i].id, sizeof it[i].id, "%d", (int)t->ids[i]);
		int tw = canvas_text_width(cv, it[i].text), iw = (int)strlen(it[i].id);
		it[i].w = tw > iw ? tw : iw;
		if (it[i].w < 1)
			it[i].w = 1;
		if (it[i].w > 24)
			it[i].w = 24; /* a very long piece is cut with an ellipsis */
	}
	return it;
}

/* Assign each item a line and column; returns the number of lines. */
static int strip_layout(const struct strip_item *it, int n, int width, bool wrap, int *line, int *col)
{
	int l = 0, x = 0;
	for (int i = 0; i < n; i++) {
		int sep = i > 0 ? 1 : 0;
		if (wrap && x > 0 && x + sep + it[i].w > width) {
			l++;
			x = 0;
			sep = 0;
		}
		x += sep;
		line[i] = l;
		col[i] = x;
		x += it[i].w;
	}
	return n ? l + 1 : 1;
}

int tokstrip_rows(const struct canvas *cv, const struct trace *t, int width)
{
	struct strip_item *it = strip_items(cv, t);
	int *line = calloc(t->n ? (size_t)t->n : 1, sizeof *line), *col = calloc(t->n ? (size_t)t->n : 1, sizeof *col);
	int lines = 1;
	if (it && line && col)
		lines = strip_layout(it, t->n, width, true, line, col);
	free(it);
	free(line);
	free(col);
	return 2 * lines;
}

int tokstrip_draw(struct canvas *cv, struct rect r, const struct trace *t, int selected, bool wrap)
{
	return tokstrip_draw_heat(cv, r, t, selected, wrap, NULL);
}

int tokstrip_draw_heat(struct canvas *cv, struct rect r, const struct trace *t, int selected, bool wrap,
		       const struct tokstrip_heat *h)
{
	if (r.h < 1 || r.w < 1)
		return 0;
	struct strip_item *it = strip_items(cv, t);
	int *line = calloc(t->n ? (size_t)t->n : 1, sizeof *line), *col = calloc(t->n ? (size_t)t->n : 1, sizeof *col);
	if (!it || !line || !col) {
		free(it);
		free(line);
		free(col);
		return 0;
	}
	int lines = strip_layout(it, t->n, r.w, wrap, line, col);
	struct rect old = canvas_clip(cv, r);
	int shift = 0; /* horizontal scroll of the single line */
	if (!wrap && t->n > 0) {
		int total = col[t->n - 1] + it[t->n - 1].w;
		if (total > r.w && selected >= 0 && selected < t->n) {
			int right = col[selected] + it[selected].w;
			if (right > r.w - 2)
				shift = right - (r.w - 2);
			if (col[selected] - shift < 1)
				shift = col[selected] - 1;
			if (shift < 0)
				shift = 0;
		}
	}
	struct style text = canvas_role(cv, ROLE_TEXT), dim = canvas_role(cv, ROLE_DIM);
	struct style idst = canvas_role(cv, ROLE_TOKEN_ID), special = canvas_role(cv, ROLE_SPECIAL);
	struct style sel = canvas_role(cv, ROLE_TOKEN_SEL);
	for (int i = 0; i < t->n; i++) {
		int y = r.y + 2 * line[i], x = r.x + col[i] - shift;
		if (2 * line[i] >= r.h)
			break;
		if (i > 0 && it[i].cont && line[i] == line[i - 1]) {
			/* Join to the previous piece: fill from the end of its text up to this one. */
			int tw = canvas_text_width(cv, it[i - 1].text);
			int from = r.x + col[i - 1] - shift + (tw < it[i - 1].w ? tw : it[i - 1].w);
			for (int jx = from; jx < x; jx++)
				canvas_put(cv, jx, y, canvas_glyph(cv, GLYPH_JOIN), dim);
		}
		struct style ts = t->special[i] ? special : text, is = idst;
		if (i == selected) {
			ts = is = sel;
			canvas_fill(cv, (struct rect){x, y, it[i].w, 1}, ' ', sel);
			if (2 * line[i] + 1 < r.h)
				canvas_fill(cv, (struct rect){x, y + 1, it[i].w, 1}, ' ', sel);
		}
		bool shown = x + it[i].w > r.x && x < r.x + r.w; /* a colouring is computed for these only */
		float v = h && shown ? h->heat(h->arg, i) : NAN;
		if (i != selected && v == v)
			canvas_heat_text(cv, x, y, it[i].w, v, it[i].text);
		else
			canvas_text(cv, x, y, it[i].w, it[i].text, ts);
		if (h && shown && h->label)
			h->label(h->arg, i, it[i].id, sizeof it[i].id, it[i].w);
		if (2 * line[i] + 1 < r.h)
			canvas_text(cv, x, y + 1, it[i].w, it[i].id, is);
	}
	if (!wrap && t->n > 0) {
		/* Arrows at the edges say there are more tokens that way. */
		if (shift > 0)
			canvas_put(cv, r.x, r.y, canvas_glyph(cv, GLYPH_LEFT), dim);
		if (col[t->n - 1] + it[t->n - 1].w - shift > r.w)
			canvas_put(cv, r.x + r.w - 1, r.y, canvas_glyph(cv, GLYPH_RIGHT), dim);
	}
	canvas_clip(cv, old);
	free(it);
	free(line);
	free(col);
	int used = 2 * lines;
	return used < r.h ? used : r.h;
}

/* The names in the gutter of tokstrip_draw_encdec, and its width: the same under both stacks, so the strips
 * do not move when T switches. */
#define TOKSTRIP_SOURCE "source"
#define TOKSTRIP_TARGET "target"
static int tokstrip_gutter(const struct canvas *cv)
{
	const char *names[] = {TOKSTRIP_SOURCE, TOKSTRIP_TARGET, "columns", "rows", "rows+cols"};
	int g = 0;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (g < canvas_text_width(cv, names[i]))
			g = canvas_text_width(cv, names[i]);
	return g + 1;
}

/* tokstrip_draw_heat of T in R after GUTTER columns naming it: NAME (style NAME_ROLE) on the tokens' row,
 * NOTE dim under it. */
static int tokstrip_draw_named(struct canvas *cv, struct rect r, const struct trace *t, const char *name,
			       enum theme_role name_role, const char *note, int gutter, int selected, bool wrap,
			       const struct tokstrip_heat *h)
{
	if (r.h < 1 || gutter >= r.w)
		return 0;
	canvas_text(cv, r.x, r.y, gutter - 1, name, canvas_role(cv, name_role));
	if (r.h > 1)
		canvas_text(cv, r.x, r.y + 1, gutter - 1, note, canvas_role(cv, ROLE_DIM));
	return tokstrip_draw_heat(cv, (struct rect){r.x + gutter, r.y, r.w - gutter, r.h}, t, selected, wrap, h);
}

int tokstrip_draw_encdec(struct canvas *cv, struct rect r, const struct trace *t, bool cross, int selected, bool wrap,
			 const struct tokstrip_heat *h)
{
	int g = tokstrip_gutter(cv);
	int src_h = wrap ? tokstrip_rows(cv, t->encoder, r.w - g) : 2;
	if (src_h > r.h)
		src_h = r.h;
	int used = tokstrip_draw_named(cv, (struct rect){r.x, r.y, r.w, src_h}, t->encoder, TOKSTRIP_SOURCE,
				       cross ? ROLE_KEY : ROLE_LABEL, cross ? "columns" : "", g, -1, wrap, NULL);
	used += tokstrip_draw_named(cv, (struct rect){r.x, r.y + src_h, r.w, r.h - src_h}, t, TOKSTRIP_TARGET,
				    cross ? ROLE_QUERY : ROLE_LABEL, cross ? "rows" : "rows+cols", g, selected, wrap, h);
	return used;
}

int tokstrip_encdec_rows(const struct canvas *cv, const struct trace *t, int width)
{
	int g = tokstrip_gutter(cv);
	return tokstrip_rows(cv, t->encoder, width - g) + tokstrip_rows(cv, t, width - g);
}
