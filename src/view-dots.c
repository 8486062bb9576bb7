/* view-dots.c -- same-head vs different-head q·k products in one layer (stats_qk_dots).
 *
 * The selected token's query (the last token's when none is selected) is multiplied with the keys
 * it can see — the tokens up to itself in a causal model, all tokens otherwise — of the same head
 * (what attention uses) and of every other head of the layer (what it would be if heads were
 * mixed up). Two histograms on one x range, each with count, mean and standard deviation: in
 * trained models the same-head products usually spread much wider. Up/down move the query token,
 * layer keys the layer. The keys it sees follow causal masking and the layer's sliding window.
 * Under grouped-query attention "other heads" are the other key/value heads, and a line names the
 * query heads that share each key head (their products with it are same-head products). With
 * rotary the products use queries and keys after rotary (what the scores use) or, toggled, before. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "anaview.h"
#include "chart.h"
#include "shapedesc.h"
#include "stats.h"
#include "tokstrip.h"
#include "view.h"

#define DOTS_HIST_ROWS 10

static void *dots_create(struct view_ctx *ctx)
{
	(void)ctx;
	return calloc(1, 1);
}

static void dots_destroy(void *state)
{
	free(state);
}

static void dots_draw(void *state, struct view_ctx *ctx, struct canvas *cv, struct rect area)
{
	(void)state;
	struct rect old = canvas_clip(cv, area);
	if (!anaview_ready(ctx, cv, area)) {
		canvas_clip(cv, old);
		return;
	}
	struct trace tmp;
	const struct trace *t = shapedesc_qk_trace(ctx->trace, ctx->qk_before_rotary, &tmp);
	int qi = anaview_token(ctx), klo, khi;
	trace_key_range(t, ctx->layer, qi, &klo, &khi);
	struct stats_dots d;
	struct err e = {{0}};
	if (stats_qk_dots(t, ctx->layer, qi, true, &d, &e)) {
		canvas_text(cv, area.x, area.y, area.w, e.msg, canvas_role(cv, ROLE_ERROR));
		canvas_clip(cv, old);
		return;
	}
	char lab[256];
	tokstrip_label(t, qi, cv->pal->utf8, lab, sizeof lab);
	const char *dot = anaview_dot(cv);
	char keys[64], rot[48] = "";
	if (!t->causal && klo == 0 && khi == t->n - 1)
		snprintf(keys, sizeof keys, "every key");
	else
		snprintf(keys, sizeof keys, "the keys it sees (%d%s%d)", klo, cv->pal->utf8 ? "\xe2\x80\x93" : "-", khi);
	if (t->rotary)
		snprintf(rot, sizeof rot, " %s %s", dot, shapedesc_rotary(t, ctx->qk_before_rotary));
	bool gqa = shapedesc_gqa(t);
	canvas_printf(cv, area.x, area.y, area.w, canvas_role(cv, ROLE_TITLE),
		      "q%sk products %s layer %d %s query %s (token %d) against %s %s same head vs other %sheads%s", dot, dot,
		      ctx->layer, dot, lab, qi, keys, dot, gqa ? "key " : "", rot);
	int top = 1;
	if (gqa) {
		/* Which query heads share each key head. */
		char groups[256];
		int used = snprintf(groups, sizeof groups, "%d query heads read %d key head%s:", t->n_heads, t->n_kv_heads,
				t->n_kv_heads == 1 ? "" : "s");
		for (int g = 0; g < t->n_kv_heads && used < (int)sizeof groups; g++) {
			int a, b;
			shapedesc_group(t, g * (t->n_heads / t->n_kv_heads), &a, &b);
			used += snprintf(groups + used, sizeof groups - (size_t)used, "%s %d%s%d %s kv%d", g ? "," : "", a,
					 cv->pal->utf8 ? "\xe2\x80\x93" : "-", b, cv->pal->utf8 ? "\xe2\x86\x92" : "->", g);
		}
		canvas_text(cv, area.x, area.y + 1, area.w, groups, canvas_role(cv, ROLE_DIM));
		top = 2;
	}
	/* One x range for both, so the spreads compare. */
	double lo = INFINITY, hi = -INFINITY;
	for (size_t i = 0; i < d.n_same; i++)
		lo = fmin(lo, d.same[i]), hi = fmax(hi, d.same[i]);
	for (size_t i = 0; i < d.n_diff; i++)
		lo = fmin(lo, d.diff[i]), hi = fmax(hi, d.diff[i]);
	if (!(hi > lo))
		lo = lo - 1, hi = lo + 2;
	int side = area.w >= 2 * 24 + 4;
	int cw = side ? (area.w - 4) / 2 : area.w;
	int bins = cw / 2 > 40 ? 40 : cw / 2;
	if (bins < 4)
		bins = cw >= 4 ? 4 : 1;
	int bw = cw / bins > 2 ? 2 : cw / bins;
	if (bw < 1)
		bw = 1;
	int *count = calloc((size_t)bins, sizeof *count);
	for (int k = 0; k < 2 && count; k++) {
		const double *v = k ? d.diff : d.same;
		size_t n = k ? d.n_diff : d.n_same;
		int x = area.x + (side ? k * (cw + 4) : 0), y = area.y + top + (side ? 0 : k * (DOTS_HIST_ROWS + 3));
		double mean, sd;
		stats_mean_std(v, n, &mean, &sd);
		const char *what = !k ? (gqa ? "same key head (q of h, the k it reads)" : "same head (what attention uses)")
				      : gqa ? "other key heads (k of kv g != kv(h))" : "different heads (q of h, k of g != h)";
		canvas_text(cv, x, y, cw, what, canvas_role(cv, ROLE_LABEL));
		if (n == 0) {
			canvas_text(cv, x, y + 1, cw, gqa ? "(none: the layer has one key head)" : "(none: the layer has one head)",
				    canvas_role(cv, ROLE_DIM));
			continue;
		}
		canvas_printf(cv, x, y + 1, cw, canvas_role(cv, ROLE_PANEL), "n %zu  mean %.3f  std %.3f", n, mean, sd);
		stats_histogram(v, n, lo, hi, bins, count);
		chart_histogram(cv, (struct rect){x, y + 2, bins * bw, DOTS_HIST_ROWS}, count, bins, 0, lo, hi,
				canvas_role(cv, k ? ROLE_KEY : ROLE_QUERY));
	}
	free(count);
	stats_dots_free(&d);
	canvas_clip(cv, old);
}

static int dots_height(void *state, struct view_ctx *ctx, const struct canvas *cv, int width)
{
	(void)state, (void)cv;
	int extra = ctx->trace && shapedesc_gqa(ctx->trace) ? 1 : 0;
	return extra + (width >= 2 * 24 + 4 ? 3 + DOTS_HIST_ROWS : 2 * (DOTS_HIST_ROWS + 3) + 1);
}

static bool dots_act(void *state, struct view_ctx *ctx, enum action a, int count)
{
	(void)state;
	int rep = count > 0 ? count : 1;
	switch (a) {
	case ACT_UP:
		anaview_move_token(ctx, -rep);
		return true;
	case ACT_DOWN:
		anaview_move_token(ctx, rep);
		return true;
	case ACT_HEAD_PREV:
	case ACT_HEAD_NEXT:
		return false; /* every head of the layer is in the picture */
	default:
		return anaview_nav(ctx, a, count);
	}
}

static void dots_status(void *state, struct view_ctx *ctx, char *buf, size_t n)
{
	(void)state;
	snprintf(buf, n, "layer %d query %d", ctx->layer, anaview_token(ctx));
}

static const enum action dots_actions[] = {ACT_UP, ACT_DOWN, ACT_LAYER_PREV, ACT_LAYER_NEXT, ACTION_NONE};
static const enum action dots_status_keys[] = {ACT_DOWN, ACT_LAYER_NEXT, ACT_HELP, ACT_BACK, ACTION_NONE};

const struct view view_dots = {
	.name = "dots",
	.title = "Same-head vs different-head products",
	.open = ACT_VIEW_DOTS,
	.actions = dots_actions,
	.status_keys = dots_status_keys,
	.create = dots_create,
	.destroy = dots_destroy,
	.draw = dots_draw,
	.height = dots_height,
	.act = dots_act,
	.status = dots_status,
};
