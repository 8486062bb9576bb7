/* view-dots.c -- same-head vs different-head q·k products in one layer (stats_qk_dots).
 *
 * The selected token's query (the last token's when none is selected) is multiplied with keys of
 * the same head (what attention uses) and of every other head of the layer (what it would be if
 * heads were mixed up). By default the keys are notebook 004's: those the query sees except the
 * first token, whose huge products (the attention sink) would swamp the rest, and the query
 * itself — keys 1 … n−2 of the last token; v switches to every key the query sees. The keys it
 * sees follow causal masking and the layer's sliding window. Two histograms on one x range, each
 * with count, mean, standard deviation and its Gaussian kernel density curve: in trained models
 * the same-head products usually spread much wider. Up/down move the query token, layer keys the
 * layer. Under grouped-query attention "other heads" are the other key/value heads, and a line
 * names the query heads that share each key head (their products with it are same-head
 * products). With rotary the products use queries and keys after rotary (what the scores use)
 * or, toggled, before.
 *
 * On a corpus aggregate (ctx->agg) the histograms pool every text's products, the query being each
 * text's last token (as for one text with no token selected); the bins are the aggregate's
 * (agghist.h), the count, mean and std exact, and there is no density curve (it would need every
 * value). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "views/aggview.h"
#include "views/anaview.h"
#include "draw/chart.h"
#include "trace/shapedesc.h"
#include "analysis/stats.h"
#include "draw/tokstrip.h"
#include "views/view.h"

#define DOTS_HIST_ROWS 10
#define DOTS_HEAD_ROWS 3    /* label, summary, density line */

struct dots_state {
	bool every_key;     /* attnscope's variant: every key the query sees */
};

static void *dots_create(struct view_ctx *ctx)
{
	(void)ctx;
	return calloc(1, sizeof(struct dots_state));
}

static void dots_destroy(void *state)
{
	free(state);
}

/* Columns per histogram, histogram bins and bin width for AREA: side by side or stacked. */
static void dots_layout(struct rect area, int *side, int *cw, int *bins, int *bw)
{
	*side = area.w >= 2 * 24 + 4;
	*cw = *side ? (area.w - 4) / 2 : area.w;
	*bins = *cw / 2 > 40 ? 40 : *cw / 2;
	if (*bins < 4)
		*bins = *cw >= 4 ? 4 : 1;
	*bw = *cw / *bins > 2 ? 2 : *cw / *bins;
	if (*bw < 1)
		*bw = 1;
}

static void dots_draw_agg(struct dots_state *s, struct view_ctx *ctx, struct canvas *cv, struct rect area)
{
	const struct aggregate *a = ctx->agg;
	struct trace shape = aggview_shape(a);
	const struct trace *t = &shape;
	const char *dot = anaview_dot(cv), *ell = cv->pal->utf8 ? "\xe2\x80\xa6" : "-";
	bool gqa = shapedesc_gqa(t);
	canvas_printf(cv, area.x, area.y, area.w, canvas_role(cv, ROLE_TITLE),
		      "q%sk products %s layer %d %s query: the last token of each of %llu texts %s same head vs other %sheads",
		      dot, dot, ctx->layer, dot, (unsigned long long)a->c.texts, dot, gqa ? "key " : "");
	if (s->every_key)
		canvas_text(cv, area.x, area.y + 1, area.w, "attnscope: every key the query sees", canvas_role(cv, ROLE_LABEL));
	else
		canvas_printf(cv, area.x, area.y + 1, area.w, canvas_role(cv, ROLE_LABEL),
			      "notebook 004: keys 1%sn-2 of each text = those it sees but the first token (the attention sink) "
			      "and itself", ell);
	int top = 2, side, cw, bins, bw;
	dots_layout(area, &side, &cw, &bins, &bw);
	const struct agghist *same = aggregate_dist(a, ctx->layer, s->every_key ? AGG_DOTS_SAME_EVERY : AGG_DOTS_SAME),
			     *diff = aggregate_dist(a, ctx->layer, s->every_key ? AGG_DOTS_DIFF_EVERY : AGG_DOTS_DIFF);
	for (int k = 0; k < 2; k++) {
		const struct agghist *h = k ? diff : same;
		int x = area.x + (side ? k * (cw + 4) : 0);
		int y = area.y + top + (side ? 0 : k * (DOTS_HEAD_ROWS + DOTS_HIST_ROWS + 1));
		const char *what = !k ? (gqa ? "same key head (q of h, the k it reads)" : "same head (what attention uses)")
				      : gqa ? "other key heads (k of kv g != kv(h))" : "different heads (q of h, k of g != h)";
		canvas_text(cv, x, y, cw, what, canvas_role(cv, ROLE_LABEL));
		if (h->n == 0) {
			canvas_text(cv, x, y + 1, cw, k && t->n_kv_heads < 2 ? "(none: the layer has one head)" : "(none: no keys left)",
				    canvas_role(cv, ROLE_DIM));
			continue;
		}
		canvas_printf(cv, x, y + 1, cw, canvas_role(cv, ROLE_PANEL), "n %llu  mean %.3f  std %.3f", (unsigned long long)h->n,
			      h->mean, agghist_std(h));
		double lo, hi;
		uint64_t maxc;
		int cols = aggview_hist(cv, (struct rect){x, y + DOTS_HEAD_ROWS, bins * bw, DOTS_HIST_ROWS}, h,
					k ? same : diff, bins, canvas_role(cv, k ? ROLE_KEY : ROLE_QUERY), &lo, &hi, &maxc);
		canvas_printf(cv, x, y + 2, cw, canvas_role(cv, ROLE_DIM), "min %.3g  max %.3g  bars %.3g wide", h->min, h->max,
			      cols > 0 ? (hi - lo) / cols : 0);
	}
	int bottom = top + (side ? DOTS_HEAD_ROWS + DOTS_HIST_ROWS : 2 * (DOTS_HEAD_ROWS + DOTS_HIST_ROWS) + 1);
	canvas_text(cv, area.x, area.y + bottom, area.w, "no density curves over a corpus (they need every value)",
		    canvas_role(cv, ROLE_DIM));
}

static void dots_draw(void *state, struct view_ctx *ctx, struct canvas *cv, struct rect area)
{
	struct dots_state *s = state;
	struct rect old = canvas_clip(cv, area);
	if (ctx->agg) {
		dots_draw_agg(s, ctx, cv, area);
		canvas_clip(cv, old);
		return;
	}
	if (!anaview_ready(ctx, cv, area)) {
		canvas_clip(cv, old);
		return;
	}
	struct trace tmp;
	const struct trace *t = shapedesc_qk_trace(ctx->trace, ctx->qk_before_rotary, &tmp);
	int qi = anaview_token(ctx);
	struct stats_dots d;
	struct err e = {{0}};
	if (stats_qk_dots(t, ctx->layer, qi, s->every_key ? STATS_DOTS_VISIBLE : STATS_DOTS_NOTEBOOK, &d, &e)) {
		canvas_text(cv, area.x, area.y, area.w, e.msg, canvas_role(cv, ROLE_ERROR));
		canvas_clip(cv, old);
		return;
	}
	char lab[256];
	tokstrip_label(t, qi, cv->pal->utf8, lab, sizeof lab);
	const char *dot = anaview_dot(cv), *ell = cv->pal->utf8 ? "\xe2\x80\xa6" : "-";
	char rot[48] = "";
	if (t->rotary)
		snprintf(rot, sizeof rot, " %s %s", dot, shapedesc_rotary_at(t, ctx->layer, ctx->qk_before_rotary));
	bool gqa = shapedesc_gqa(t);
	canvas_printf(cv, area.x, area.y, area.w, canvas_role(cv, ROLE_TITLE),
		      "q%sk products %s layer %d %s query %s (token %d) %s same head vs other %sheads%s", dot, dot,
		      ctx->layer, dot, lab, qi, dot, gqa ? "key " : "", rot);
	char keys[64];
	if (d.n_keys > 0)
		snprintf(keys, sizeof keys, "keys %d%s%d (%d keys)", d.key_lo, ell, d.key_hi, d.n_keys);
	else
		snprintf(keys, sizeof keys, "no keys");
	canvas_printf(cv, area.x, area.y + 1, area.w, canvas_role(cv, ROLE_LABEL), "%s: %s %s",
		      s->every_key ? "attnscope" : "notebook 004", keys,
		      s->every_key ? "= every key the query sees"
				   : "= those it sees but the first token (the attention sink) and itself");
	int top = 2;
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
		canvas_text(cv, area.x, area.y + 2, area.w, groups, canvas_role(cv, ROLE_DIM));
		top = 3;
	}
	/* One x range for both, so the spreads compare. */
	double lo = INFINITY, hi = -INFINITY;
	for (size_t i = 0; i < d.n_same; i++)
		lo = fmin(lo, d.same[i]), hi = fmax(hi, d.same[i]);
	for (size_t i = 0; i < d.n_diff; i++)
		lo = fmin(lo, d.diff[i]), hi = fmax(hi, d.diff[i]);
	if (!(lo <= hi))
		lo = 0, hi = 1;
	if (!(hi > lo))
		lo = lo - 1, hi = lo + 2;
	int side, cw, bins, bw;
	dots_layout(area, &side, &cw, &bins, &bw);
	for (int k = 0; k < 2; k++) {
		const double *v = k ? d.diff : d.same;
		size_t n = k ? d.n_diff : d.n_same;
		int x = area.x + (side ? k * (cw + 4) : 0);
		int y = area.y + top + (side ? 0 : k * (DOTS_HEAD_ROWS + DOTS_HIST_ROWS + 1));
		double mean, sd, h;
		stats_mean_std(v, n, &mean, &sd);
		const char *what = !k ? (gqa ? "same key head (q of h, the k it reads)" : "same head (what attention uses)")
				      : gqa ? "other key heads (k of kv g != kv(h))" : "different heads (q of h, k of g != h)";
		canvas_text(cv, x, y, cw, what, canvas_role(cv, ROLE_LABEL));
		if (n == 0) {
			canvas_text(cv, x, y + 1, cw,
				    d.n_keys == 0 ? "(none: no keys left)"
				    : gqa	  ? "(none: the layer has one key head)"
						  : "(none: the layer has one head)",
				    canvas_role(cv, ROLE_DIM));
			continue;
		}
		canvas_printf(cv, x, y + 1, cw, canvas_role(cv, ROLE_PANEL), "n %zu  mean %.3f  std %.3f", n, mean, sd);
		const char *why = anaview_hist_kde(cv, (struct rect){x, y + DOTS_HEAD_ROWS, bins * bw, DOTS_HIST_ROWS}, v, n,
						   lo, hi, bins, canvas_role(cv, k ? ROLE_KEY : ROLE_QUERY),
						   canvas_role(cv, ROLE_TEXT), NULL, &h);
		if (why)
			canvas_printf(cv, x, y + 2, cw, canvas_role(cv, ROLE_DIM), "no density: %s", why);
		else
			canvas_printf(cv, x, y + 2, cw, canvas_role(cv, ROLE_DIM), "curve: Gaussian KDE, Scott h %.3g", h);
	}
	stats_dots_free(&d);
	canvas_clip(cv, old);
}

static int dots_height(void *state, struct view_ctx *ctx, const struct canvas *cv, int width)
{
	(void)state, (void)cv;
	int one = DOTS_HEAD_ROWS + DOTS_HIST_ROWS, top = !ctx->agg && ctx->trace && shapedesc_gqa(ctx->trace) ? 3 : 2;
	return top + (width >= 2 * 24 + 4 ? one : 2 * one + 1) + (ctx->agg ? 1 : 0); /* the aggregate's footnote */
}

static bool dots_act(void *state, struct view_ctx *ctx, enum action a, int count)
{
	struct dots_state *s = state;
	int rep = count > 0 ? count : 1;
	switch (a) {
	case ACT_VARIANT:
		s->every_key = !s->every_key;
		snprintf(ctx->message, sizeof ctx->message, "%s", s->every_key ? "every key the query sees (attnscope)"
									: "the notebook's keys: not the first, not itself");
		return true;
	case ACT_UP:
	case ACT_DOWN:
		if (ctx->agg)
			snprintf(ctx->message, sizeof ctx->message, "over a corpus the query is each text's last token");
		else
			anaview_move_token(ctx, a == ACT_UP ? -rep : rep);
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
	struct dots_state *s = state;
	if (ctx->agg)
		snprintf(buf, n, "layer %d last queries, %s keys", ctx->layer, s->every_key ? "every" : "notebook");
	else
		snprintf(buf, n, "layer %d query %d, %s keys", ctx->layer, anaview_token(ctx), s->every_key ? "every" : "notebook");
}

static const enum action dots_actions[] = {ACT_UP, ACT_DOWN, ACT_LAYER_PREV, ACT_LAYER_NEXT, ACT_VARIANT, ACTION_NONE};
static const enum action dots_status_keys[] = {ACT_VARIANT, ACT_DOWN, ACT_LAYER_NEXT, ACT_HELP, ACT_BACK, ACTION_NONE};

const struct view view_dots = {
	.name = "dots",
	.title = "Same-head vs different-head products",
	.flags = VIEW_AGGREGATE,
	.brief = "products",
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
