/* view-softmax.c -- distributions of attention weights in one layer, pooled over its heads, in
 * three groups (stats.h): the last token's weights on the tokens before it, the self-attention of
 * the tokens in between, and the first token's self-attention (always 1 in a causal model, where
 * the first token sees only itself). One histogram per group over [0, 1] with its count, mean and
 * standard deviation. Layer keys change the layer. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "anaview.h"
#include "chart.h"
#include "stats.h"
#include "view.h"

#define SM_BINS 20
#define SM_HIST_ROWS 8     /* bars + baseline + labels */

static void *softmax_create(struct view_ctx *ctx)
{
	(void)ctx;
	return calloc(1, 1);
}

static void softmax_destroy(void *state)
{
	free(state);
}

static void softmax_draw(void *state, struct view_ctx *ctx, struct canvas *cv, struct rect area)
{
	(void)state;
	struct rect old = canvas_clip(cv, area);
	if (!anaview_ready(ctx, cv, area)) {
		canvas_clip(cv, old);
		return;
	}
	const struct trace *t = ctx->trace;
	struct stats_groups g;
	struct err e = {{0}};
	if (stats_attn_groups(t, ctx->layer, false, &g, &e)) {
		canvas_text(cv, area.x, area.y, area.w, e.msg, canvas_role(cv, ROLE_ERROR));
		canvas_clip(cv, old);
		return;
	}
	const char *dot = anaview_dot(cv);
	canvas_printf(cv, area.x, area.y, area.w, canvas_role(cv, ROLE_TITLE),
		      "attention weight distributions %s layer %d %s pooled over %d heads %s %d tokens%s", dot, ctx->layer, dot,
		      t->n_heads, dot, t->n, t->causal ? ", causal" : "");
	/* Side by side when the width allows, else stacked. */
	int per_row = area.w >= 3 * (SM_BINS * 1 + 2) + 4 ? 3 : 1;
	int cw = per_row == 3 ? (area.w - 4) / 3 : area.w;
	int bw = cw / SM_BINS > 2 ? 2 : cw / SM_BINS;
	if (bw < 1)
		bw = 1;
	const enum theme_role roles[STATS_GROUP_COUNT] = {ROLE_QUERY, ROLE_KEY, ROLE_SPECIAL};
	for (int k = 0; k < STATS_GROUP_COUNT; k++) {
		int x = area.x + (per_row == 3 ? k * (cw + 2) : 0);
		int y = area.y + 1 + (per_row == 3 ? 0 : k * (SM_HIST_ROWS + 4));
		double mean, sd;
		stats_mean_std(g.v[k], g.n[k], &mean, &sd);
		canvas_text(cv, x, y, cw, stats_group_name((enum stats_group)k), canvas_role(cv, ROLE_LABEL));
		if (g.n[k] == 0) {
			canvas_text(cv, x, y + 1, cw, "(none: too few tokens)", canvas_role(cv, ROLE_DIM));
			continue;
		}
		canvas_printf(cv, x, y + 1, cw, canvas_role(cv, ROLE_PANEL), "n %zu  mean %.4f  std %.4f", g.n[k], mean, sd);
		int count[SM_BINS], maxc = 0;
		stats_histogram(g.v[k], g.n[k], 0, 1, SM_BINS, count);
		for (int b = 0; b < SM_BINS; b++)
			maxc = count[b] > maxc ? count[b] : maxc;
		canvas_printf(cv, x, y + 2, cw, canvas_role(cv, ROLE_DIM), "highest bar %d", maxc);
		chart_histogram(cv, (struct rect){x, y + 3, SM_BINS * bw, SM_HIST_ROWS}, count, SM_BINS, maxc, 0, 1,
				canvas_role(cv, roles[k]));
	}
	stats_groups_free(&g);
	canvas_clip(cv, old);
}

static int softmax_height(void *state, struct view_ctx *ctx, const struct canvas *cv, int width)
{
	(void)state, (void)ctx, (void)cv;
	int per_row = width >= 3 * (SM_BINS + 2) + 4 ? 3 : 1;
	return 1 + (per_row == 3 ? 1 : 3) * (SM_HIST_ROWS + 4);
}

static bool softmax_act(void *state, struct view_ctx *ctx, enum action a, int count)
{
	(void)state;
	if (a == ACT_HEAD_PREV || a == ACT_HEAD_NEXT)
		return false; /* pooled over the heads: only the layer matters */
	return anaview_nav(ctx, a, count);
}

static void softmax_status(void *state, struct view_ctx *ctx, char *buf, size_t n)
{
	(void)state;
	snprintf(buf, n, "layer %d", ctx->layer);
}

static const enum action softmax_actions[] = {ACT_LAYER_PREV, ACT_LAYER_NEXT, ACTION_NONE};
static const enum action softmax_status_keys[] = {ACT_LAYER_NEXT, ACT_LAYER_PREV, ACT_HELP, ACT_BACK, ACTION_NONE};

const struct view view_softmax = {
	.name = "softmax",
	.title = "Attention weight distributions",
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
