/* view-headview.c -- the head view (after bertviz): for the selected token, the attention it gives
 * to every token — or, reversed, receives from every token — as one coloured bar per head of the
 * layer, side by side, plus the mean over the heads that are switched on.
 *
 * Up/down move the selected token, [ and ] pick a head, t switches the picked head off or on,
 * r swaps given and received, layer keys change the layer. Hidden special tokens are dropped and
 * each head's row renormalised (only for "given": a column has no sum to keep).
 * Under cross-attention (ctx->cross, VIEW_CROSS) the selected token is a target (decoder) token and the bars
 * are its cross-attention row over the source (encoder) tokens, which the rows list; in the picture the
 * target tokens are the left column, the source tokens the right one. What a source token receives has
 * no selected token to start from there: r says so. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/anaview.h"
#include "draw/chart.h"
#include "views/marks.h"
#include "draw/tokstrip.h"
#include "views/view.h"

#define HV_LABEL_MAX 14
#define HV_BAR_MAX 12
#define HV_HEADS_MAX 256   /* heads the on/off switches cover */

struct headview_state {
	bool received;              /* show attention the token receives instead of gives */
	bool off[HV_HEADS_MAX];     /* [n_heads] heads switched off */
	int row0, page;
};

static void *headview_create(struct view_ctx *ctx)
{
	(void)ctx;
	return calloc(1, sizeof(struct headview_state));
}

static void headview_destroy(void *state)
{
	free(state);
}

static bool hv_head_on(const struct headview_state *s, int h)
{
	return h >= HV_HEADS_MAX || !s->off[h];
}

/* Shown as received: never under cross-attention, whose keys are another text's tokens. */
static bool hv_received(const struct headview_state *s, const struct view_ctx *ctx)
{
	return s->received && !ctx->cross;
}

/* The trace whose tokens the bars (rows) are: the keys when given (the source's under cross-attention),
 * the queries when received. */
static const struct trace *hv_rows(const struct headview_state *s, const struct view_ctx *ctx)
{
	return hv_received(s, ctx) ? ctx->trace : view_key_trace(ctx);
}

/* Add to W[nk] head H's weights between token SEL and every token of hv_rows (nk of them), as shown:
 * given, SEL's row (renormalised without the specials when they are hidden); received, SEL's column. */
static void hv_add_weights(const struct headview_state *s, const struct view_ctx *ctx, int h, int sel, double *w)
{
	const struct trace *t = ctx->trace, *kt = view_key_trace(ctx);
	const float *a = ctx->cross ? trace_cross_attn(t, ctx->layer, h) : trace_attn(t, ctx->layer, h);
	int n = kt->n; /* a row's width: the keys */
	double sum = 0;
	if (!hv_received(s, ctx) && ctx->hide_special)
		for (int k = 0; k < n; k++)
			if (!kt->special[k])
				sum += a[(size_t)sel * n + k];
	for (int j = 0; j < n; j++) {
		if (hv_received(s, ctx))
			w[j] += a[(size_t)j * n + sel];
		else if (ctx->hide_special)
			w[j] += sum > 0 ? a[(size_t)sel * n + j] / sum : 0;
		else
			w[j] += a[(size_t)sel * n + j];
	}
}

/* Every shown head's weights [H][nk] between the selected token SEL, or the marked tokens when there
 * are any (marks.h: given, the sum of their rows; received, the weight on the set), and each token of
 * hv_rows (nk of them); NULL when out of memory. Head by head: a compact trace (long texts) recomputes a head each time
 * it is not among the last few read, so the rows drawn must not read the heads in turn. */
static double *hv_weights(const struct headview_state *s, const struct view_ctx *ctx, int sel)
{
	const struct trace *t = ctx->trace;
	int nk = hv_rows(s, ctx)->n;
	double *w = calloc((size_t)t->n_heads * (nk > 0 ? nk : 1), sizeof *w);
	for (int h = 0; w && h < t->n_heads; h++) {
		if (h < HV_HEADS_MAX && s->off[h])
			continue;
		if (!ctx->n_marks)
			hv_add_weights(s, ctx, h, sel, w + (size_t)h * nk);
		for (int i = 0; i < ctx->n_marks; i++)
			hv_add_weights(s, ctx, h, ctx->marks[i], w + (size_t)h * nk);
	}
	return w;
}

/* The head view for a picture (canvas.vectors, an SVG figure): bertviz's own drawing. The tokens in
 * two columns, the attending side left and the attended right (under cross-attention the target's
 * tokens left, the source's right); for every head switched on, a line from i to j in the head's colour
 * whose opacity is the weight: the selected (or marked) token's lines, or every token's when none is
 * selected. */
static void hv_draw_lines(struct headview_state *s, struct view_ctx *ctx, struct canvas *cv, struct rect area)
{
	const struct trace *t = ctx->trace, *kt = view_key_trace(ctx);
	int n = t->n, nk = kt->n, H = t->n_heads, qw = 3;
	bool received = hv_received(s, ctx);
	char lab[256];
	for (int side = 0; side < 2; side++)
		for (int j = 0; j < (side ? nk : n); j++) {
			tokstrip_label(side ? kt : t, j, cv->pal->utf8, lab, sizeof lab);
			int w = canvas_text_width(cv, lab) + 1;
			qw = w > qw ? w : qw;
		}
	qw = qw > HV_LABEL_MAX + 1 ? HV_LABEL_MAX + 1 : qw;
	int gap = area.w - 2 * qw;
	gap = gap > 40 ? 40 : gap < 8 ? 8 : gap;
	int rx = area.x + qw + gap, y0 = area.y + 2;
	bool all = ctx->token < 0 && !ctx->n_marks;
	int sel = anaview_token(ctx), on = 0;
	for (int h = 0; h < H; h++)
		on += hv_head_on(s, h);
	char what[300] = "every token's attention";
	if (!all) {
		if (ctx->n_marks)
			marks_label(ctx, cv->pal->utf8, lab, sizeof lab);
		else
			tokstrip_label(t, sel, cv->pal->utf8, lab, sizeof lab);
		snprintf(what, sizeof what, "attention %s %s", received ? "received by" : "given by", lab);
	}
	canvas_printf(cv, area.x, area.y, area.w, canvas_role(cv, ROLE_TITLE),
		      "head view %s layer %d %s %s%s %s %d of %d heads, line opacity = weight", anaview_dot(cv), ctx->layer,
		      anaview_dot(cv), ctx->cross ? "cross-" : "", what, anaview_dot(cv), on, H);
	if (ctx->cross) /* which column is which text */
		snprintf(what, sizeof what, "target %s source", cv->pal->utf8 ? "\xe2\x86\x92" : "->");
	for (int h = 0, x = area.x; h < H && x < area.x + area.w; h++) { /* the heads' colours */
		char hd[16];
		snprintf(hd, sizeof hd, "%sH%d ", hv_head_on(s, h) ? "" : "-", h);
		struct style st = canvas_role(cv, hv_head_on(s, h) ? ROLE_LABEL : ROLE_DIM);
		if (hv_head_on(s, h) && chart_category(cv, h) != COLOR_DEFAULT)
			st.fg = chart_category(cv, h);
		x += canvas_text(cv, x, area.y + 1, area.x + area.w - x, hd, st);
		if (ctx->cross && h == H - 1 && x < area.x + area.w)
			canvas_text(cv, x + 1, area.y + 1, area.x + area.w - x - 1, what, canvas_role(cv, ROLE_DIM));
	}
	int row[n > 0 ? n : 1], krow[nk > 0 ? nk : 1]; /* each token's row in the left / right column, -1 when hidden */
	for (int side = 0; side < 2; side++)
		for (int j = 0, r = 0; j < (side ? nk : n); j++) {
			const struct trace *st = side ? kt : t;
			int *rows = side ? krow : row;
			rows[j] = ctx->hide_special && st->special[j] ? -1 : r++;
			if (rows[j] < 0)
				continue;
			tokstrip_label(st, j, cv->pal->utf8, lab, sizeof lab);
			bool hl = !all && st == t && (j == sel || marks_has(ctx, j));
			struct style sty = canvas_role(cv, hl ? ROLE_TOKEN_SEL : st->special[j] ? ROLE_SPECIAL : side ? ROLE_KEY : ROLE_QUERY);
			int w = canvas_text_width(cv, lab);
			if (side)
				canvas_text(cv, rx, y0 + rows[j], qw - 1, lab, sty);
			else
				canvas_text(cv, area.x + qw - 1 - (w < qw - 1 ? w : qw - 1), y0 + rows[j], qw - 1, lab, sty);
		}
	struct headview_state given = *s; /* every token's lines: each row as it gives */
	given.received = false;
	for (int i = 0; i < n; i++) { /* one token's lines at a time: i attends (given), or is attended */
		if ((received && !all ? krow[i] : row[i]) < 0 || (!all && i != sel))
			continue;
		double *wt = hv_weights(all ? &given : s, ctx, i);
		int nw = received && !all ? n : nk; /* the tokens wt holds */
		for (int h = 0; h < H && wt; h++) {
			if (!hv_head_on(s, h))
				continue;
			uint32_t rgb = chart_category(cv, h);
			for (int j = 0; j < nw; j++) {
				double w = wt[(size_t)h * nw + j];
				int from = received && !all ? j : i, to = received && !all ? i : j; /* left: a query, right: a key */
				if (row[from] < 0 || krow[to] < 0 || !(w > 0.005))
					continue;
				if (canvas_line(cv, (float)(area.x + qw) - 0.5f, (float)(y0 + row[from]) + 0.5f, (float)rx - 0.5f,
						(float)(y0 + krow[to]) + 0.5f, rgb, (float)(w > 1 ? 1 : w)) < 0)
					break;
			}
		}
		free(wt);
	}
}

static void headview_draw(void *state, struct view_ctx *ctx, struct canvas *cv, struct rect area)
{
	struct headview_state *s = state;
	struct rect old;
	if (!anaview_begin(ctx, cv, area, &old))
		return;
	if (cv->vectors) {
		hv_draw_lines(s, ctx, cv, area);
		canvas_clip(cv, old);
		return;
	}
	const struct trace *t = ctx->trace, *rt = hv_rows(s, ctx); /* rt: the tokens the bars are */
	int n = rt->n, H = t->n_heads, sel = anaview_token(ctx);
	bool received = hv_received(s, ctx);
	char lab[256], sel_lab[256], which[32];
	tokstrip_label(t, sel, cv->pal->utf8, sel_lab, sizeof sel_lab);
	snprintf(which, sizeof which, "token %d", sel);
	if (ctx->n_marks) { /* the marked tokens, combined */
		marks_label(ctx, cv->pal->utf8, sel_lab, sizeof sel_lab);
		snprintf(which, sizeof which, "%d tokens combined", ctx->n_marks);
	}
	const char *dot = anaview_dot(cv);
	double *wt = hv_weights(s, ctx, sel);
	if (anaview_failed(cv, area, old, wt ? NULL : "out of memory"))
		return;
	int on = 0;
	for (int h = 0; h < H; h++)
		on += hv_head_on(s, h);
	canvas_printf(cv, area.x, area.y, area.w, canvas_role(cv, ROLE_TITLE),
		      "head view %s layer %d %s %sattention %s %s (%s)%s %s %d of %d heads on%s", dot, ctx->layer, dot,
		      ctx->cross ? "cross-" : "", received ? "received by" : "given by", sel_lab, which,
		      ctx->cross ? " to the source's tokens" : "", dot, on, H,
		      ctx->hide_special && !received ? ", specials hidden (renormalised)" : "");
	int qw = 3;
	for (int j = 0; j < n; j++) {
		tokstrip_label(rt, j, cv->pal->utf8, lab, sizeof lab);
		int w = canvas_text_width(cv, lab) + 1;
		qw = w > qw ? w : qw;
	}
	qw = qw > HV_LABEL_MAX + 1 ? HV_LABEL_MAX + 1 : qw;
	/* H head columns and a mean column, each bw wide plus a gap. */
	int bw = (area.w - qw) / (H + 1) - 1;
	bw = bw > HV_BAR_MAX ? HV_BAR_MAX : bw < 2 ? 2 : bw;
	struct style lab_st = canvas_role(cv, ROLE_LABEL);
	int y = area.y + 1;
	for (int h = 0; h <= H; h++) {
		int x = area.x + qw + h * (bw + 1);
		char hd[16];
		if (h == H)
			snprintf(hd, sizeof hd, "mean");
		else
			snprintf(hd, sizeof hd, "%sH%d", hv_head_on(s, h) ? "" : "-", h);
		struct style st = h == ctx->head ? canvas_role(cv, ROLE_LABEL_SEL) : lab_st;
		if (h < H && h != ctx->head && hv_head_on(s, h))
			st.fg = chart_category(cv, h) == COLOR_DEFAULT ? st.fg : chart_category(cv, h);
		if (h < H && !hv_head_on(s, h) && h != ctx->head)
			st = canvas_role(cv, ROLE_DIM);
		canvas_text(cv, x, y, bw, hd, st);
	}
	int rows = ctx->print ? n : area.h - 3;
	rows = rows > n ? n : rows < 1 ? 1 : rows;
	s->page = rows;
	if (ctx->print)
		s->row0 = 0;
	if (s->row0 > n - rows)
		s->row0 = n - rows;
	if (s->row0 < 0)
		s->row0 = 0;
	int r = 0;
	for (int j = s->row0; j < n && r < rows; j++) {
		if (ctx->hide_special && rt->special[j])
			continue;
		int yy = y + 1 + r++;
		tokstrip_label(rt, j, cv->pal->utf8, lab, sizeof lab);
		struct style st = j == sel && rt == t ? canvas_role(cv, ROLE_TOKEN_SEL) /* the source's: none selected */
					   : canvas_role(cv, rt->special[j] ? ROLE_SPECIAL : received ? ROLE_QUERY : ROLE_KEY);
		if (rt == t && marks_has(ctx, j))
			st.attr |= ATTR_UNDERLINE | ATTR_BOLD;
		canvas_text(cv, area.x, yy, qw - 1, lab, st);
		double mean = 0;
		for (int h = 0; h < H; h++) {
			if (!hv_head_on(s, h))
				continue;
			double w = wt[(size_t)h * n + j];
			mean += w;
			struct style bs = {chart_category(cv, h), COLOR_DEFAULT, 0};
			if (h == ctx->head && cv->pal->depth == DEPTH_MONO)
				bs.attr = ATTR_BOLD;
			chart_hbar(cv, area.x + qw + h * (bw + 1), yy, bw, w, bs);
		}
		if (on)
			chart_hbar(cv, area.x + qw + H * (bw + 1), yy, bw, mean / on, canvas_role(cv, ROLE_TEXT));
	}
	if (s->row0 > 0)
		canvas_put(cv, area.x + qw - 1, y + 1, canvas_glyph(cv, GLYPH_UP), canvas_role(cv, ROLE_DIM));
	if (s->row0 + rows < n && !ctx->print)
		canvas_put(cv, area.x + qw - 1, y + rows, canvas_glyph(cv, GLYPH_DOWN), canvas_role(cv, ROLE_DIM));
	/* The picked head's weights in numbers, for the record. */
	double wsel = hv_head_on(s, ctx->head) ? 0 : NAN;
	int best = -1;
	for (int j = 0; j < n && !isnan(wsel); j++) {
		if (ctx->hide_special && rt->special[j])
			continue;
		double w = wt[(size_t)ctx->head * n + j];
		if (best < 0 || w > wsel)
			wsel = w, best = j;
	}
	if (best >= 0) {
		tokstrip_label(rt, best, cv->pal->utf8, lab, sizeof lab);
		canvas_printf(cv, area.x, y + 1 + rows, area.w, canvas_role(cv, ROLE_DIM),
			      "bar = weight, full width = 1%s %s head %d's largest: %s %.4f",
			      ctx->n_marks > 1 && !received ? " (sums of rows may pass it)" : "", dot, ctx->head, lab, wsel);
	}
	free(wt);
	canvas_clip(cv, old);
}

static int headview_height(void *state, struct view_ctx *ctx, const struct canvas *cv, int width)
{
	(void)cv, (void)width;
	return ctx->trace ? 3 + hv_rows(state, ctx)->n : 1;
}

static bool headview_act(void *state, struct view_ctx *ctx, enum action a, int count)
{
	struct headview_state *s = state;
	int rep = count > 0 ? count : 1;
	/* Up/down move the token; page keys scroll the list under it. */
	if (anaview_token_keys(ctx, a, count) || anaview_scroll_keys(a, count, &s->row0, s->page))
		return true;
	switch (a) {
	case ACT_COMBINE:
		if (ctx->trace)
			marks_toggle(ctx, anaview_token(ctx));
		return true;
	case ACT_REVERSE:
		if (ctx->cross) { /* the selection is a target token: what a source token receives has none */
			snprintf(ctx->message, sizeof ctx->message, "cross-attention: given by target tokens only");
			return true;
		}
		s->received = !s->received;
		snprintf(ctx->message, sizeof ctx->message, "attention %s the selected token",
			 s->received ? "received by" : "given by");
		return true;
	case ACT_TOGGLE:
		if (ctx->head < HV_HEADS_MAX) {
			s->off[ctx->head] = !s->off[ctx->head];
			snprintf(ctx->message, sizeof ctx->message, "head %d %s", ctx->head, s->off[ctx->head] ? "off" : "on");
		}
		return true;
	case ACT_HEAD_PREV:
	case ACT_HEAD_NEXT:
		/* Within the layer: the head view shows one layer. */
		if (ctx->trace) {
			int h = ctx->head + (a == ACT_HEAD_NEXT ? rep : -rep);
			ctx->head = h < 0 ? 0 : h >= ctx->trace->n_heads ? ctx->trace->n_heads - 1 : h;
		}
		return true;
	default:
		return anaview_nav(ctx, a, count);
	}
}

static void headview_status(void *state, struct view_ctx *ctx, char *buf, size_t n)
{
	struct headview_state *s = state;
	snprintf(buf, n, "L%d H%d%s", ctx->layer, ctx->head, hv_head_on(s, ctx->head) ? "" : " (off)");
}

static const enum action headview_actions[] = {
	ACT_UP, ACT_DOWN, ACT_PAGE_UP, ACT_PAGE_DOWN, ACT_HEAD_PREV, ACT_HEAD_NEXT, ACT_TOGGLE, ACT_REVERSE,
	ACT_LAYER_PREV, ACT_LAYER_NEXT, ACT_COMBINE, ACTION_NONE,
};
static const enum action headview_status_keys[] = {ACT_TOGGLE, ACT_REVERSE, ACT_LAYER_NEXT, ACT_HELP, ACT_BACK,
						   ACTION_NONE};

const struct view view_headview = {
	.name = "headview",
	.title = "Head view",
	.flags = VIEW_CROSS,
	.open = ACT_VIEW_HEADVIEW,
	.actions = headview_actions,
	.status_keys = headview_status_keys,
	.create = headview_create,
	.destroy = headview_destroy,
	.draw = headview_draw,
	.height = headview_height,
	.act = headview_act,
	.status = headview_status,
};
