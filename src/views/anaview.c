/* anaview.c -- shared pieces of the analysis views (see anaview.h). */
#include "config.h"

#include "views/anaview.h"

#include <stdio.h>
#include <stdlib.h>

#include "views/aggview.h"
#include "draw/chart.h"
#include "analysis/stats.h"
#include "draw/tokstrip.h"
#include "engine/model.h"

static int clampi(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

bool anaview_ready(const struct view_ctx *ctx, struct canvas *cv, struct rect area)
{
	const struct trace *t = ctx->trace;
	if (t && t->n > 0 && t->n_layers > 0 && t->n_heads > 0)
		return true;
	canvas_text(cv, area.x, area.y, area.w, t ? "no tokens to analyse" : "running the model\xe2\x80\xa6",
		    canvas_role(cv, ROLE_DIM));
	return false;
}

bool anaview_begin(const struct view_ctx *ctx, struct canvas *cv, struct rect area, struct rect *old)
{
	*old = canvas_clip(cv, area);
	if (anaview_ready(ctx, cv, area))
		return true;
	canvas_clip(cv, *old);
	return false;
}

bool anaview_failed(struct canvas *cv, struct rect area, struct rect old, const char *error)
{
	if (!error)
		return false;
	canvas_text(cv, area.x, area.y, area.w, error, canvas_role(cv, ROLE_ERROR));
	canvas_clip(cv, old);
	return true;
}

static bool nav_action(enum action a)
{
	return a == ACT_HEAD_PREV || a == ACT_HEAD_NEXT || a == ACT_LAYER_PREV || a == ACT_LAYER_NEXT;
}

bool anaview_nav(struct view_ctx *ctx, enum action a, int count)
{
	if (!ctx->agg || !nav_action(a))
		return anaview_nav_shape(ctx, ctx->trace, a, count);
	struct trace shape = aggview_shape(ctx->agg); /* an aggregate's views move over its model's heads */
	return anaview_nav_shape(ctx, &shape, a, count);
}

bool anaview_nav_shape(struct view_ctx *ctx, const struct trace *t, enum action a, int count)
{
	int rep = count > 0 ? count : 1;
	if (!nav_action(a))
		return false;
	if (!t)
		return true;
	if (a == ACT_LAYER_PREV || a == ACT_LAYER_NEXT) {
		ctx->layer = clampi(ctx->layer + (a == ACT_LAYER_NEXT ? rep : -rep), 0, t->n_layers - 1);
	} else {
		int idx = ctx->layer * t->n_heads + ctx->head + (a == ACT_HEAD_NEXT ? rep : -rep);
		idx = clampi(idx, 0, t->n_layers * t->n_heads - 1);
		ctx->layer = idx / t->n_heads;
		ctx->head = idx % t->n_heads;
	}
	return true;
}

bool anaview_token_keys(struct view_ctx *ctx, enum action a, int count)
{
	int rep = count > 0 ? count : 1;
	if (a != ACT_UP && a != ACT_DOWN)
		return false;
	anaview_move_token(ctx, a == ACT_UP ? -rep : rep);
	return true;
}

bool anaview_scroll_keys(enum action a, int count, int *row0, int page)
{
	int rep = count > 0 ? count : 1;
	if (a != ACT_PAGE_UP && a != ACT_PAGE_DOWN)
		return false;
	*row0 += (a == ACT_PAGE_UP ? -page : page) * rep;
	return true;
}

void anaview_move_token(struct view_ctx *ctx, int delta)
{
	const struct trace *t = ctx->trace;
	if (!t || t->n == 0)
		return;
	int cur = ctx->token >= 0 ? ctx->token : t->n - 1;
	ctx->token = clampi(ctx->token >= 0 ? cur + delta : cur, 0, t->n - 1);
}

int anaview_token(const struct view_ctx *ctx)
{
	const struct trace *t = ctx->trace;
	if (!t || t->n == 0)
		return -1;
	return ctx->token >= 0 && ctx->token < t->n ? ctx->token : t->n - 1;
}

const char *anaview_hist_kde(struct canvas *cv, struct rect r, const double *x, size_t n, double lo, double hi,
			     int bins, struct style bars, struct style curve, int *maxcount, double *bandwidth)
{
	int *count = calloc((size_t)(bins > 0 ? bins : 1), sizeof *count), maxc = 0;
	int m = chart_curve_points(cv, r, bins);
	double *grid = malloc((size_t)(m > 0 ? m : 1) * sizeof *grid), *y = malloc((size_t)(m > 0 ? m : 1) * sizeof *y);
	const char *why = "out of memory";
	*bandwidth = 0;
	if (count && grid && y) {
		stats_histogram(x, n, lo, hi, bins, count);
		for (int b = 0; b < bins; b++)
			maxc = count[b] > maxc ? count[b] : maxc;
		chart_histogram(cv, r, count, bins, maxc, lo, hi, bars);
		chart_curve_grid(m, lo, hi, grid);
		why = stats_kde(x, n, grid, (size_t)m, y, bandwidth);
		if (!why)
			chart_curve(cv, r, bins, y, m, curve);
	}
	if (maxcount)
		*maxcount = maxc;
	free(count), free(grid), free(y);
	return why;
}

const char *anaview_dot(const struct canvas *cv)
{
	return cv->pal->utf8 ? "\xc2\xb7" : "-";
}

/* A two-token trace lets tokstrip_label see whether the piece starts a word. */
void anaview_piece(const struct view_ctx *ctx, int32_t id, char *buf, size_t n)
{
	const char *piece = ctx->model ? tokenizer_id_to_token(model_get_tokenizer(ctx->model), id) : NULL;
	if (!piece) {
		snprintf(buf, n, "<%d>", (int)id);
		return;
	}
	enum tokenizer_pieces style = ctx->trace->pieces;
	char *tokens[2] = {style == TOKENIZER_PIECES_SENTENCEPIECE ? "\xe2\x96\x81" "a" : "a", (char *)piece};
	bool special[2] = {false, false};
	int32_t ids[2] = {0, id};
	struct trace two = {.n = 2, .tokens = tokens, .special = special, .ids = ids, .pieces = style};
	tokstrip_label(&two, 1, true, buf, n);
}
