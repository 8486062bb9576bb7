/* view-softmax.c -- distributions of attention weights in one layer, pooled over its heads, in
 * three groups (stats.h), as notebook 004 takes them: the last token's weights on the tokens
 * before it, the self-attention of every token after the first (v: without the last token, as
 * attnscope took it), and the first token's self-attention (always 1 in a causal model, where the
 * first token sees only itself). One histogram per group over [0, 1] with its count, mean,
 * standard deviation and Gaussian kernel density curve. Layer keys change the layer.
 *
 * On a corpus aggregate (ctx->agg) each group pools every text's weights (the same groups per text);
 * the bins are the aggregate's (agghist.h), the count, mean and std exact, and there is no density
 * curve (it would need every value). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "views/aggview.h"
#include "views/anaview.h"
#include "draw/chart.h"
#include "analysis/stats.h"
#include "views/view.h"

#define SM_BINS 20
#define SM_HIST_ROWS 8     /* bars + baseline + labels */

struct softmax_state {
	bool no_last;      /* attnscope's variant: the last token's self-attention left out */
};

static void *softmax_create(struct view_ctx *ctx)
{
	(void)ctx;
	return calloc(1, sizeof(struct softmax_state));
}

static void softmax_destroy(void *state)
{
	free(state);
}

static void softmax_draw_agg(struct softmax_state *s, struct view_ctx *ctx, struct canvas *cv, struct rect area)
{
	const struct aggregate *a = ctx->agg;
	const char *dot = anaview_dot(cv), *ell = cv->pal->utf8 ? "\xe2\x80\xa6" : "-";
	canvas_printf(cv, area.x, area.y, area.w, canvas_role(cv, ROLE_TITLE),
		      "attention weight distributions %s layer %d %s pooled over %d heads %s %llu texts%s", dot, ctx->layer, dot,
		      a->model.n_heads, dot, (unsigned long long)a->c.texts, a->model.causal ? ", causal" : "");
	canvas_printf(cv, area.x, area.y + 1, area.w, canvas_role(cv, ROLE_LABEL),
		      "%s: per text of n tokens a[n-1][0%sn-2] %s a[i][i] for i = 1%s%s %s a[0][0], per head", s->no_last ? "attnscope" : "notebook 004",
		      ell, dot, ell, s->no_last ? "n-2 (the last token left out)" : "n-1 (the last token included)", dot);
	int per_row = area.w >= 3 * (SM_BINS * 1 + 2) + 4 ? 3 : 1;
	int cw = per_row == 3 ? (area.w - 4) / 3 : area.w;
	int bw = cw / SM_BINS > 2 ? 2 : cw / SM_BINS;
	if (bw < 1)
		bw = 1;
	const enum theme_role roles[STATS_GROUP_COUNT] = {ROLE_QUERY, ROLE_KEY, ROLE_SPECIAL};
	const enum agg_dist which[STATS_GROUP_COUNT] = {AGG_FINAL_PREV, s->no_last ? AGG_OTHER_SELF_NOLAST : AGG_OTHER_SELF,
							AGG_FIRST_SELF};
	for (int k = 0; k < STATS_GROUP_COUNT; k++) {
		const struct agghist *h = aggregate_dist(a, ctx->layer, which[k]);
		int x = area.x + (per_row == 3 ? k * (cw + 2) : 0);
		int y = area.y + 2 + (per_row == 3 ? 0 : k * (SM_HIST_ROWS + 4));
		canvas_text(cv, x, y, cw, stats_group_name((enum stats_group)k), canvas_role(cv, ROLE_LABEL));
		if (h->n == 0) {
			canvas_text(cv, x, y + 1, cw, "(none: too few tokens)", canvas_role(cv, ROLE_DIM));
			continue;
		}
		canvas_printf(cv, x, y + 1, cw, canvas_role(cv, ROLE_PANEL), "n %llu  mean %.4f  std %.4f", (unsigned long long)h->n,
			      h->mean, agghist_std(h));
		double lo, hi;
		uint64_t maxc;
		int cols = aggview_hist(cv, (struct rect){x, y + 3, SM_BINS * bw, SM_HIST_ROWS}, h, NULL, SM_BINS,
					canvas_role(cv, roles[k]), &lo, &hi, &maxc);
		canvas_printf(cv, x, y + 2, cw, canvas_role(cv, ROLE_DIM), "highest bar %llu %s bars %.3g wide",
			      (unsigned long long)maxc, dot, cols > 0 ? (hi - lo) / cols : 0);
	}
	canvas_text(cv, area.x, area.y + 2 + (per_row == 3 ? 1 : 3) * (SM_HIST_ROWS + 4) - 1, area.w,
		    "no density curves over a corpus (they need every value)", canvas_role(cv, ROLE_DIM));
}

static void softmax_draw(void *state, struct view_ctx *ctx, struct canvas *cv, struct rect area)
{
	struct softmax_state *s = state;
	struct rect old = canvas_clip(cv, area);
	if (ctx->agg) {
		softmax_draw_agg(s, ctx, cv, area);
		canvas_clip(cv, old);
		return;
	}
	if (!anaview_ready(ctx, cv, area)) {
		canvas_clip(cv, old);
		return;
	}
	const struct trace *t = ctx->trace;
	struct stats_groups g;
	struct err e = {{0}};
	if (stats_attn_groups(t, ctx->layer, !s->no_last, &g, &e)) {
		canvas_text(cv, area.x, area.y, area.w, e.msg, canvas_role(cv, ROLE_ERROR));
		canvas_clip(cv, old);
		return;
	}
	const char *dot = anaview_dot(cv), *ell = cv->pal->utf8 ? "\xe2\x80\xa6" : "-";
	int n = t->n, last = s->no_last ? n - 2 : n - 1;
	canvas_printf(cv, area.x, area.y, area.w, canvas_role(cv, ROLE_TITLE),
		      "attention weight distributions %s layer %d %s pooled over %d heads %s %d tokens%s", dot, ctx->layer, dot,
		      t->n_heads, dot, n, t->causal ? ", causal" : "");
	char self[48] = "none";
	if (last >= 1)
		snprintf(self, sizeof self, "a[i][i] for i = 1%s%d", ell, last);
	canvas_printf(cv, area.x, area.y + 1, area.w, canvas_role(cv, ROLE_LABEL),
		      "%s: a[%d][0%s%d] %s %s%s %s a[0][0], per head", s->no_last ? "attnscope" : "notebook 004", n - 1, ell,
		      n - 2, dot, self, s->no_last ? " (the last token left out)" : " (the last token included)", dot);
	/* Side by side when the width allows, else stacked. */
	int per_row = area.w >= 3 * (SM_BINS * 1 + 2) + 4 ? 3 : 1;
	int cw = per_row == 3 ? (area.w - 4) / 3 : area.w;
	int bw = cw / SM_BINS > 2 ? 2 : cw / SM_BINS;
	if (bw < 1)
		bw = 1;
	const enum theme_role roles[STATS_GROUP_COUNT] = {ROLE_QUERY, ROLE_KEY, ROLE_SPECIAL};
	for (int k = 0; k < STATS_GROUP_COUNT; k++) {
		int x = area.x + (per_row == 3 ? k * (cw + 2) : 0);
		int y = area.y + 2 + (per_row == 3 ? 0 : k * (SM_HIST_ROWS + 4));
		double mean, sd, h;
		int maxc;
		stats_mean_std(g.v[k], g.n[k], &mean, &sd);
		canvas_text(cv, x, y, cw, stats_group_name((enum stats_group)k), canvas_role(cv, ROLE_LABEL));
		if (g.n[k] == 0) {
			canvas_text(cv, x, y + 1, cw, "(none: too few tokens)", canvas_role(cv, ROLE_DIM));
			continue;
		}
		canvas_printf(cv, x, y + 1, cw, canvas_role(cv, ROLE_PANEL), "n %zu  mean %.4f  std %.4f", g.n[k], mean, sd);
		const char *why = anaview_hist_kde(cv, (struct rect){x, y + 3, SM_BINS * bw, SM_HIST_ROWS}, g.v[k], g.n[k], 0, 1,
						   SM_BINS, canvas_role(cv, roles[k]), canvas_role(cv, ROLE_TEXT), &maxc, &h);
		char line[96];
		if (why)
			snprintf(line, sizeof line, "highest bar %d %s no density: %s", maxc, dot, why);
		else
			snprintf(line, sizeof line, "highest bar %d %s KDE h %.3g", maxc, dot, h);
		if (why && canvas_text_width(cv, line) > cw)
			snprintf(line, sizeof line, "no density: %s", why); /* the reason matters more */
		canvas_text(cv, x, y + 2, cw, line, canvas_role(cv, ROLE_DIM));
	}
	stats_groups_free(&g);
	canvas_clip(cv, old);
}

static int softmax_height(void *state, struct view_ctx *ctx, const struct canvas *cv, int width)
{
	(void)state, (void)ctx, (void)cv;
	int per_row = width >= 3 * (SM_BINS + 2) + 4 ? 3 : 1;
	return 2 + (per_row == 3 ? 1 : 3) * (SM_HIST_ROWS + 4);
}

static bool softmax_act(void *state, struct view_ctx *ctx, enum action a, int count)
{
	struct softmax_state *s = state;
	if (a == ACT_VARIANT) {
		s->no_last = !s->no_last;
		snprintf(ctx->message, sizeof ctx->message, "self-attention %s the last token",
			 s->no_last ? "without (attnscope)" : "with (the notebook)");
		return true;
	}
	if (a == ACT_HEAD_PREV || a == ACT_HEAD_NEXT)
		return false; /* pooled over the heads: only the layer matters */
	return anaview_nav(ctx, a, count);
}

static void softmax_status(void *state, struct view_ctx *ctx, char *buf, size_t n)
{
	struct softmax_state *s = state;
	snprintf(buf, n, "layer %d, %s", ctx->layer, s->no_last ? "attnscope's groups" : "notebook groups");
}

static const enum action softmax_actions[] = {ACT_LAYER_PREV, ACT_LAYER_NEXT, ACT_VARIANT, ACTION_NONE};
static const enum action softmax_status_keys[] = {ACT_VARIANT, ACT_LAYER_NEXT, ACT_LAYER_PREV, ACT_HELP, ACT_BACK,
						  ACTION_NONE};

const struct view view_softmax = {
	.name = "softmax",
	.title = "Attention weight distributions",
	.flags = VIEW_AGGREGATE,
	.brief = "weight distributions",
	.open = ACT_VIEW_SOFTMAX,
	.actions = softmax_actions,
	.status_keys = softmax_status_keys,
	.create = softmax_create,
	.destroy = softmax_destroy,
	.draw = softmax_draw,
	.height = softmax_height,
	.act = softmax_act,
	.status = softmax_status,
};
