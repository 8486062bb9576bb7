/* view.c -- the view stack and the shared selection (see view.h); below every view, which is
 * why the list of every view is not here but in registry.c, above them. */
#include "config.h"

#include "views/view.h"

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
