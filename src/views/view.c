/* view.c -- the view stack and the shared selection (see view.h); below every view, which is
 * why the list of every view is not here but in registry.c, above them. */
#include "config.h"

#include "views/view.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/lmhead.h"

bool view_push(struct view_ctx *ctx, const struct view *v)
{
	if (ctx->depth >= VIEW_STACK_MAX)
		return false;
	void *st = v->create ? v->create(ctx) : NULL;
	if (v->create && !st)
		return false;
	ctx->stack[ctx->depth] = v;
	ctx->state[ctx->depth] = st;
	ctx->depth++;
	return true;
}

void view_pop(struct view_ctx *ctx)
{
	if (ctx->depth <= 0)
		return;
	ctx->depth--;
	if (ctx->stack[ctx->depth]->destroy)
		ctx->stack[ctx->depth]->destroy(ctx->state[ctx->depth]);
	ctx->stack[ctx->depth] = NULL;
	ctx->state[ctx->depth] = NULL;
}

void view_pop_all(struct view_ctx *ctx)
{
	while (ctx->depth > 0)
		view_pop(ctx);
}

bool view_open(struct view_ctx *ctx, const struct view *v)
{
	if (!v)
		return false;
	for (int i = 0; i < ctx->depth; i++)
		if (ctx->stack[i] == v) {
			while (ctx->depth > i + 1)
				view_pop(ctx);
			return true;
		}
	/* Analysis views are siblings: one replaces another, so q goes back to where they were
	 * opened from and the stack does not fill up. */
	if (ctx->depth > 1 && ctx->stack[ctx->depth - 1]->open != ACTION_NONE)
		view_pop(ctx);
	return view_push(ctx, v);
}

void view_ctx_clamp(struct view_ctx *ctx)
{
	const struct trace *t = ctx->trace;
	if (!t)
		return;
	if (ctx->layer >= t->n_layers)
		ctx->layer = t->n_layers - 1;
	if (ctx->layer < 0)
		ctx->layer = 0;
	if (ctx->head >= t->n_heads)
		ctx->head = t->n_heads - 1;
	if (ctx->head < 0)
		ctx->head = 0;
	if (ctx->token >= t->n)
		ctx->token = t->n - 1;
	if (ctx->token < -1)
		ctx->token = -1;
	int k = 0;
	for (int i = 0; i < ctx->n_marks; i++)
		if (ctx->marks[i] >= 0 && ctx->marks[i] < t->n)
			ctx->marks[k++] = ctx->marks[i];
	ctx->n_marks = k;
}

bool view_handles(const struct view *v, enum action a)
{
	const struct action_info *ai = action_get(a);
	if (!ai)
		return false;
	if (ai->scope == SCOPE_GLOBAL)
		return true;
	for (const enum action *p = v->actions; p && *p != ACTION_NONE; p++)
		if (*p == a)
			return true;
	return false;
}

struct lmpred *view_predictions(struct view_ctx *ctx, char *why, size_t whysz)
{
	const struct trace *t = ctx->trace;
	if (ctx->pred && ctx->pred_gen == ctx->trace_gen)
		return ctx->pred;
	view_predictions_free(ctx);
	if (!ctx->model || !t) {
		snprintf(why, whysz, "no model to predict with (a corpus aggregate or a synthetic trace)");
		return NULL;
	}
	if (lmhead_kind(ctx->model) == LMHEAD_NONE) {
		snprintf(why, whysz, "%s", lmhead_why(ctx->model));
		return NULL;
	}
	if (t->source) {
		snprintf(why, whysz, "predictions are per token: w shows the tokens again");
		return NULL;
	}
	ctx->pred = lmpred_new(ctx->model, t, 10);
	ctx->pred_gen = ctx->trace_gen;
	if (!ctx->pred)
		snprintf(why, whysz, "out of memory");
	return ctx->pred;
}

void view_predictions_free(struct view_ctx *ctx)
{
	lmpred_free(ctx->pred);
	ctx->pred = NULL;
	lmpred_free(ctx->pred_clean);
	ctx->pred_clean = NULL;
}

struct lmpred *view_predictions_clean(struct view_ctx *ctx, char *why, size_t whysz)
{
	if (!ctx->clean || !view_predictions(ctx, why, whysz))
		return NULL;
	if (ctx->pred_clean && ctx->pred_clean_gen == ctx->trace_gen)
		return ctx->pred_clean;
	lmpred_free(ctx->pred_clean);
	ctx->pred_clean = lmpred_new(ctx->model, ctx->clean, 10);
	ctx->pred_clean_gen = ctx->trace_gen;
	if (!ctx->pred_clean)
		snprintf(why, whysz, "out of memory");
	return ctx->pred_clean;
}

bool view_ablation_change(struct view_ctx *ctx, int i, float *delta, bool *top1_changed)
{
	char why[160];
	struct lmpred *pa = ctx->clean ? view_predictions(ctx, why, sizeof why) : NULL;
	struct lmpred *pc = pa ? view_predictions_clean(ctx, why, sizeof why) : NULL;
	*delta = NAN;
	*top1_changed = false;
	if (!pc || i < 0 || i >= ctx->trace->n)
		return false;
	bool causal = lmhead_kind(ctx->model) == LMHEAD_CAUSAL;
	int row = causal ? i - 1 : i;
	if (causal)
		*delta = lmpred_surprisal(pa, i) - lmpred_surprisal(pc, i);
	const int32_t *ia, *ic;
	const float *lp;
	struct err e = {{0}};
	if (row >= 0 && lmpred_row(pa, row, &ia, &lp, NULL, &e) == 0 && lmpred_row(pc, row, &ic, &lp, NULL, &e) == 0)
		*top1_changed = ia[0] != ic[0];
	return true;
}

float view_surprisal_heat(void *arg, int i)
{
	struct view_ctx *ctx = arg;
	char why[160];
	struct lmpred *p = view_predictions(ctx, why, sizeof why);
	if (!p || lmhead_kind(ctx->model) != LMHEAD_CAUSAL)
		return NAN;
	float s = lmpred_surprisal(p, i), d;
	bool changed;
	if (view_ablation_change(ctx, i, &d, &changed)) /* beside an ablated run: the size of the change */
		s = fabsf(d);
	double top = log((double)lmhead_vocab(ctx->model));
	return isnan(s) ? NAN : s >= top ? 1.0f : s <= 0 ? 0.0f : (float)(s / top);
}

void view_surprisal_label(void *arg, int i, char *buf, size_t n, int w)
{
	struct view_ctx *ctx = arg;
	char why[160];
	struct lmpred *p = view_predictions(ctx, why, sizeof why);
	float s = p ? lmpred_surprisal(p, i) : NAN, d;
	bool changed;
	if (p && view_ablation_change(ctx, i, &d, &changed)) { /* the change, "*" where the top-1 changed */
		if (isnan(d))
			snprintf(buf, n, "%s", changed ? "*" : "-");
		else {
			char num[32];
			snprintf(num, sizeof num, "%+.1f", d);
			if ((int)strlen(num) + changed > w) /* a narrow token: whole nats */
				snprintf(num, sizeof num, "%+.0f", d);
			snprintf(buf, n, "%s%s", num, changed ? "*" : "");
		}
		return;
	}
	if (isnan(s))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, w >= 4 || s < 9.95f ? "%.1f" : "%.0f", s);
}

void view_toggle_surprisal(struct view_ctx *ctx)
{
	char why[160];
	if (ctx->surprisal_strip) {
		ctx->surprisal_strip = false;
		snprintf(ctx->message, sizeof ctx->message, "token strip: ids");
	} else if (!view_predictions(ctx, why, sizeof why)) {
		snprintf(ctx->message, sizeof ctx->message, "no surprisal: %s", why);
	} else if (lmhead_kind(ctx->model) != LMHEAD_CAUSAL) {
		snprintf(ctx->message, sizeof ctx->message, "no surprisal: a masked LM predicts each token from both sides "
			 "(P shows its predictions)");
	} else {
		ctx->surprisal_strip = true;
		snprintf(ctx->message, sizeof ctx->message, ctx->clean ? "token strip: the change of each token's surprisal "
			 "under the ablation, nats (y: ids again)" : "token strip: surprisal of each token in nats (y: ids again)");
	}
}
