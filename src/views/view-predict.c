/* view-predict.c -- the model's own predictions at the selected token (P; --print predict): the output
 * head's top 10 (lmhead.h) with their probabilities as bars, and how the token that is actually there
 * fares (a causal LM: the next token's probability, surprisal and rank; a masked LM: the token at the
 * position). A model without a head says why in one line. Only the selected position's row of the
 * vocabulary projection is computed (and kept with the text's predictions, view_predictions). With heads
 * ablated (B) the numbers are the ablated run's, and lines under them compare it with the clean run: the
 * top-1 before and after, and the change of the next token's surprisal. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw/chart.h"
#include "draw/tokstrip.h"
#include "engine/ablate.h"
#include "engine/lmhead.h"
#include "engine/model.h"
#include "views/anaview.h"
#include "views/view.h"

#define PR_BAR_W 24

/* The position shown: the selected token; with none, a masked LM's first special token inside the text
 * (its [MASK]), else the last token. */
static int predict_token(const struct view_ctx *ctx)
{
	const struct trace *t = ctx->trace;
	if (ctx->token >= 0 && ctx->token < t->n)
		return ctx->token;
	if (ctx->model && lmhead_kind(ctx->model) == LMHEAD_MASKED)
		for (int i = 1; i + 1 < t->n; i++)
			if (t->special[i])
				return i;
	return t->n - 1;
}

static void *predict_create(struct view_ctx *ctx)
{
	(void)ctx;
	return calloc(1, 1);
}

static void predict_destroy(void *state)
{
	free(state);
}

/* Under an ablation: the clean run's top-1 at row I against the ablated run's, and (causal) the change of
 * the next token's surprisal; returns the next free row. */
static int predict_ablation(struct view_ctx *ctx, struct canvas *cv, struct rect area, int y, int i, bool causal)
{
	char why[192], desc[128], pa[256], pc[256];
	struct lmpred *a = view_predictions(ctx, why, sizeof why), *c = view_predictions_clean(ctx, why, sizeof why);
	const int32_t *ia, *ic;
	const float *la, *lc;
	struct err e = {{0}};
	ablation_describe(ctx->ablation, desc, sizeof desc);
	if (!a || !c || lmpred_row(a, i, &ia, &la, NULL, &e) < 0 || lmpred_row(c, i, &ic, &lc, NULL, &e) < 0) {
		canvas_text(cv, area.x, y++, area.w, c ? e.msg : why, canvas_role(cv, ROLE_ERROR));
		return y;
	}
	anaview_piece(ctx, ia[0], pa, sizeof pa);
	anaview_piece(ctx, ic[0], pc, sizeof pc);
	canvas_printf(cv, area.x, y++, area.w, canvas_role(cv, ROLE_ERROR), "ablated %s: the numbers above are the ablated run's", desc);
	if (ia[0] != ic[0])
		canvas_printf(cv, area.x, y++, area.w, canvas_role(cv, ROLE_TEXT), "top-1 changed: clean %s (%d) %s ablated %s (%d)",
			      pc, (int)ic[0], cv->pal->utf8 ? "\xe2\x86\x92" : "->", pa, (int)ia[0]);
	else
		canvas_printf(cv, area.x, y++, area.w, canvas_role(cv, ROLE_TEXT), "top-1 unchanged: %s (%d)", pa, (int)ia[0]);
	if (causal && i + 1 < ctx->trace->n && y < area.y + area.h) {
		float sa = lmpred_surprisal(a, i + 1), sc = lmpred_surprisal(c, i + 1);
		canvas_printf(cv, area.x, y++, area.w, canvas_role(cv, ROLE_LABEL),
			      "surprisal change of token %d: %+.4f nats (ablated %.4f, clean %.4f)", i + 1, sa - sc, sa, sc);
	}
	return y;
}

static void predict_draw(void *state, struct view_ctx *ctx, struct canvas *cv, struct rect area)
{
	(void)state;
	struct rect old;
	if (!anaview_begin(ctx, cv, area, &old))
		return;
	const struct trace *t = ctx->trace;
	int i = predict_token(ctx), y = area.y;
	char lab[256], why[192];
	tokstrip_label(t, i, cv->pal->utf8, lab, sizeof lab);
	canvas_printf(cv, area.x, y++, area.w, canvas_role(cv, ROLE_TITLE), "predictions at token %d %s", i, lab);
	struct lmpred *p = view_predictions(ctx, why, sizeof why);
	const int32_t *ids;
	const float *lp;
	double lse;
	struct err e = {{0}};
	if (!p || lmpred_row(p, i, &ids, &lp, &lse, &e) < 0) {
		canvas_text(cv, area.x, y, area.w, p ? e.msg : why, canvas_role(cv, ROLE_LABEL));
		canvas_clip(cv, old);
		return;
	}
	bool causal = lmhead_kind(ctx->model) == LMHEAD_CAUSAL;
	canvas_printf(cv, area.x, y++, area.w, canvas_role(cv, ROLE_DIM), "%s %s %s", lmhead_why(ctx->model),
		      anaview_dot(cv), causal ? "what it predicts for the next token" : "what it puts at this position");
	y++;
	int k = lmpred_k(p);
	for (int r = 0; r < k && y < area.y + area.h; r++, y++) {
		char piece[256];
		anaview_piece(ctx, ids[r], piece, sizeof piece);
		double prob = exp((double)lp[r]);
		int x = area.x + canvas_printf(cv, area.x, y, area.w, canvas_role(cv, ROLE_LABEL), "%2d. ", r + 1);
		chart_hbar(cv, x, y, PR_BAR_W, prob, canvas_role(cv, ROLE_QUERY));
		x += PR_BAR_W + 1;
		x += canvas_printf(cv, x, y, area.x + area.w - x, canvas_role(cv, ROLE_TEXT), "%6.2f%%  %8.4f  ", 100 * prob,
				   lp[r]);
		canvas_printf(cv, x, y, area.x + area.w - x, canvas_role(cv, ROLE_PANEL), "%s (%d)", piece, (int)ids[r]);
	}
	y++;
	int32_t target;
	float tlp;
	int rank;
	if (lmpred_target(p, i, &target, &tlp, &rank, &e) == 0 && y < area.y + area.h) {
		char piece[256];
		if (target < 0) {
			canvas_text(cv, area.x, y++, area.w, "the last token: no next token to compare with", canvas_role(cv, ROLE_DIM));
		} else {
			anaview_piece(ctx, target, piece, sizeof piece);
			canvas_printf(cv, area.x, y++, area.w, canvas_role(cv, ROLE_TEXT),
				      "%s %s (%d): p %.4g%%, log p %.4f, rank %d", causal ? "actual next token" : "the token here",
				      piece, (int)target, 100 * exp((double)tlp), tlp, rank);
			if (causal && y < area.y + area.h)
				canvas_printf(cv, area.x, y++, area.w, canvas_role(cv, ROLE_LABEL),
					      "surprisal of token %d: %.4f nats (-log p)", i + 1, -tlp);
		}
	}
	if (ctx->clean && y < area.y + area.h) /* beside the clean run: what the ablation changed here */
		y = predict_ablation(ctx, cv, area, y, i, causal);
	if (y < area.y + area.h)
		canvas_printf(cv, area.x, y, area.w, canvas_role(cv, ROLE_DIM),
			      "log-probabilities are logit - logsumexp (%.4f) over %d entries %s , . choose the token",
			      lse, lmhead_vocab(ctx->model), anaview_dot(cv));
	canvas_clip(cv, old);
}

static int predict_height(void *state, struct view_ctx *ctx, const struct canvas *cv, int width)
{
	(void)state, (void)cv, (void)width, (void)ctx;
	return 3 + 10 + 4 + (ctx->clean ? 3 : 0);
}

static bool predict_act(void *state, struct view_ctx *ctx, enum action a, int count)
{
	(void)state;
	return anaview_token_keys(ctx, a, count);
}

static void predict_status(void *state, struct view_ctx *ctx, char *buf, size_t n)
{
	(void)state;
	if (ctx->trace)
		snprintf(buf, n, "predictions at token %d", predict_token(ctx));
	else
		buf[0] = 0;
}

static const enum action predict_actions[] = {ACT_UP, ACT_DOWN, ACTION_NONE};
static const enum action predict_status_keys[] = {ACT_TOKEN_NEXT, ACT_TOKEN_PREV, ACT_SURPRISAL, ACT_HELP, ACT_BACK,
						  ACTION_NONE};

const struct view view_predict = {
	.name = "predict",
	.title = "Predictions",
	.open = ACT_VIEW_PREDICT,
	.actions = predict_actions,
	.status_keys = predict_status_keys,
	.create = predict_create,
	.destroy = predict_destroy,
	.draw = predict_draw,
	.height = predict_height,
	.act = predict_act,
	.status = predict_status,
};
