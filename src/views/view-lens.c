/* view-lens.c -- the logit lens (L; --print lens): what a causal LM's output head reads from the residual
 * stream after each layer (nostalgebraist 2020; engine/lens.h). One row per residual stream, the
 * embedding output h0 at the top to the last hidden state at the bottom (the model's own prediction),
 * one column per position; each cell is the top token through the final norm and the head, coloured by
 * its probability. The selected token's column is framed and the selected row's cell is the cursor; a
 * panel under the table lists that cell's top 5. Only the cells on screen are projected onto the
 * vocabulary (one [vocab] row each, kept per text in the view's state); a long text scrolls sideways
 * with the selected token. A model without a causal head says why in one line. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw/chart.h"
#include "draw/tokstrip.h"
#include "engine/lens.h"
#include "engine/lmhead.h"
#include "views/anaview.h"
#include "views/view.h"

#define LENS_CELL_W 9  /* a column: a frame character, 7 of the token, a frame character */
#define LENS_BAR_W 20

struct lens_state {
	struct lens *lens;     /* the cells computed for the trace below */
	const struct trace *t; /* ... of generation gen */
	unsigned gen;
	int layer;             /* the selected row: 0 .. n_layers; -1 = the last (the model's own) */
	int col0;              /* first position shown */
};

static void *lens_create(struct view_ctx *ctx)
{
	(void)ctx;
	struct lens_state *s = calloc(1, sizeof *s);
	if (s)
		s->layer = -1;
	return s;
}

static void lens_destroy(void *state)
{
	struct lens_state *s = state;
	lens_free(s->lens);
	free(s);
}

/* The lens of the current trace (a new text drops the old cells); NULL with WHY when there is none. */
static struct lens *lens_ensure(struct lens_state *s, const struct view_ctx *ctx, char *why, size_t n)
{
	const struct trace *t = ctx->trace;
	if (s->lens && s->t == t && s->gen == ctx->trace_gen)
		return s->lens;
	lens_free(s->lens);
	s->lens = NULL;
	if (!ctx->model) {
		snprintf(why, n, "no model to read the residual stream with (a corpus aggregate or a synthetic trace)");
		return NULL;
	}
	if (lmhead_kind(ctx->model) != LMHEAD_CAUSAL) {
		snprintf(why, n, "no logit lens: %s", lmhead_kind(ctx->model) == LMHEAD_NONE ? lmhead_why(ctx->model)
			 : "the output head is a masked LM's (the lens reads a causal LM's)");
		return NULL;
	}
	if (t->source) {
		snprintf(why, n, "the logit lens is per token: w shows the tokens again");
		return NULL;
	}
	s->lens = lens_new(ctx->model, t);
	s->t = t;
	s->gen = ctx->trace_gen;
	if (!s->lens)
		snprintf(why, n, "out of memory");
	return s->lens;
}

static int lens_row(const struct lens_state *s, const struct trace *t)
{
	return s->layer < 0 || s->layer > t->n_layers ? t->n_layers : s->layer;
}

static void lens_row_name(const struct trace *t, int l, char *buf, size_t n)
{
	snprintf(buf, n, l == 0 ? "h0 emb" : l == t->n_layers ? "h%d out" : "h%d", l);
}

static void lens_draw(void *state, struct view_ctx *ctx, struct canvas *cv, struct rect area)
{
	struct lens_state *s = state;
	struct rect old;
	if (!anaview_begin(ctx, cv, area, &old))
		return;
	const struct trace *t = ctx->trace;
	const char *dot = anaview_dot(cv);
	char why[256], buf[256];
	int y = area.y, i = anaview_token(ctx), row = lens_row(s, t);
	canvas_printf(cv, area.x, y++, area.w, canvas_role(cv, ROLE_TITLE),
		      "logit lens %s each layer's top token (residual stream, final norm, head) %s colour: its probability",
		      dot, dot);
	struct lens *l = lens_ensure(s, ctx, why, sizeof why);
	if (!l) {
		canvas_text(cv, area.x, y, area.w, why, canvas_role(cv, ROLE_LABEL));
		canvas_clip(cv, old);
		return;
	}
	int label_w = snprintf(NULL, 0, "h%d out", t->n_layers) + 1;
	int cols = (area.w - label_w) / LENS_CELL_W;
	cols = cols < 1 ? 1 : cols > t->n ? t->n : cols;
	if (i < s->col0)
		s->col0 = i;
	if (i >= s->col0 + cols)
		s->col0 = i - cols + 1;
	if (s->col0 > t->n - cols)
		s->col0 = t->n - cols;
	s->col0 = s->col0 < 0 ? 0 : s->col0;
	/* the input tokens over their columns */
	for (int c = 0; c < cols; c++) {
		int p = s->col0 + c, x = area.x + label_w + c * LENS_CELL_W + 1;
		tokstrip_label(t, p, cv->pal->utf8, buf, sizeof buf);
		canvas_text(cv, x, y, LENS_CELL_W - 2, buf, canvas_role(cv, p == i ? ROLE_TOKEN_SEL : ROLE_KEY));
	}
	if (s->col0 > 0)
		canvas_put(cv, area.x + label_w - 1, y, canvas_glyph(cv, GLYPH_LEFT), canvas_role(cv, ROLE_DIM));
	if (s->col0 + cols < t->n)
		canvas_put(cv, area.x + label_w + cols * LENS_CELL_W, y, canvas_glyph(cv, GLYPH_RIGHT), canvas_role(cv, ROLE_DIM));
	y++;
	struct err e = {{0}};
	for (int layer = 0; layer <= t->n_layers && y < area.y + area.h; layer++, y++) {
		lens_row_name(t, layer, buf, sizeof buf);
		canvas_text(cv, area.x, y, label_w - 1, buf, canvas_role(cv, layer == row ? ROLE_LABEL_SEL : ROLE_LABEL));
		for (int c = 0; c < cols; c++) {
			int p = s->col0 + c, x = area.x + label_w + c * LENS_CELL_W;
			const int32_t *ids;
			const float *lp;
			if (lens_cell(l, layer, p, &ids, &lp, &e) < 0) {
				canvas_text(cv, area.x, y, area.w, e.msg, canvas_role(cv, ROLE_ERROR));
				canvas_clip(cv, old);
				return;
			}
			anaview_piece(ctx, ids[0], buf, sizeof buf);
			float prob = (float)exp((double)lp[0]);
			if (cv->pal->depth != DEPTH_MONO)
				canvas_heat_text(cv, x + 1, y, LENS_CELL_W - 2, prob, buf);
			else
				canvas_text(cv, x + 1, y, LENS_CELL_W - 2, buf, canvas_role(cv, ROLE_TEXT));
			if (p == i) { /* the selected token's column, and the cursor on the selected row */
				bool cur = layer == row;
				struct style st = canvas_role(cv, cur ? ROLE_CURSOR : ROLE_SELECTED);
				canvas_put(cv, x, y, canvas_glyph(cv, cur ? GLYPH_RIGHT : GLYPH_VLINE), st);
				canvas_put(cv, x + LENS_CELL_W - 1, y, canvas_glyph(cv, cur ? GLYPH_LEFT : GLYPH_VLINE), st);
			}
		}
	}
	/* the selected cell's top LENS_K */
	y++;
	const int32_t *ids;
	const float *lp;
	if (y < area.y + area.h && lens_cell(l, row, i, &ids, &lp, &e) == 0) {
		lens_row_name(t, row, buf, sizeof buf);
		char tok[256];
		tokstrip_label(t, i, cv->pal->utf8, tok, sizeof tok);
		canvas_printf(cv, area.x, y++, area.w, canvas_role(cv, ROLE_TEXT), "%s at token %d %s: %s", buf, i, tok,
			      row == t->n_layers ? "the head alone (this state carries the final norm): the model's own prediction"
			      : row == 0 ? "the embedding output through the final norm and the head"
			      : "the residual stream after this many layers, through the final norm and the head");
		for (int r = 0; r < LENS_K && y < area.y + area.h; r++, y++) {
			double prob = exp((double)lp[r]);
			int x = area.x + canvas_printf(cv, area.x, y, area.w, canvas_role(cv, ROLE_LABEL), "%2d. ", r + 1);
			chart_hbar(cv, x, y, LENS_BAR_W, prob, canvas_role(cv, ROLE_QUERY));
			x += LENS_BAR_W + 1;
			x += canvas_printf(cv, x, y, area.x + area.w - x, canvas_role(cv, ROLE_TEXT), "%6.2f%%  %8.4f  ", 100 * prob,
					   lp[r]);
			anaview_piece(ctx, ids[r], buf, sizeof buf);
			canvas_printf(cv, x, y, area.x + area.w - x, canvas_role(cv, ROLE_PANEL), "%s (%d)", buf, (int)ids[r]);
		}
	}
	if (y < area.y + area.h)
		canvas_printf(cv, area.x, y, area.w, canvas_role(cv, ROLE_DIM),
			      "up/down choose the layer %s , . choose the token (the prediction of the next one)", dot);
	canvas_clip(cv, old);
}

static int lens_height(void *state, struct view_ctx *ctx, const struct canvas *cv, int width)
{
	(void)state, (void)cv, (void)width;
	if (!ctx->model || lmhead_kind(ctx->model) != LMHEAD_CAUSAL)
		return 2; /* the title and why there is no lens */
	int layers = ctx->trace ? ctx->trace->n_layers + 1 : 1;
	return 2 + layers + 1 + 1 + LENS_K + 1;
}

static bool lens_act(void *state, struct view_ctx *ctx, enum action a, int count)
{
	struct lens_state *s = state;
	const struct trace *t = ctx->trace;
	if (!t)
		return false;
	int rep = count > 0 ? count : 1, row = lens_row(s, t);
	switch (a) {
	case ACT_UP: row -= rep; break;
	case ACT_DOWN: row += rep; break;
	case ACT_FIRST: row = count >= 0 ? count : 0; break;
	case ACT_LAST: row = count >= 0 ? count : t->n_layers; break;
	case ACT_LEFT: anaview_move_token(ctx, -rep); return true;
	case ACT_RIGHT: anaview_move_token(ctx, rep); return true;
	default: return false;
	}
	s->layer = row < 0 ? 0 : row > t->n_layers ? t->n_layers : row;
	return true;
}

static void lens_status(void *state, struct view_ctx *ctx, char *buf, size_t n)
{
	struct lens_state *s = state;
	const struct trace *t = ctx->trace;
	if (!t || t->n == 0) {
		buf[0] = 0;
		return;
	}
	int row = lens_row(s, t);
	snprintf(buf, n, "logit lens at h%d, token %d", row, anaview_token(ctx));
}

static const enum action lens_actions[] = {ACT_UP, ACT_DOWN, ACT_LEFT, ACT_RIGHT, ACT_FIRST, ACT_LAST, ACTION_NONE};
static const enum action lens_status_keys[] = {ACT_TOKEN_NEXT, ACT_TOKEN_PREV, ACT_HELP, ACT_BACK, ACTION_NONE};

const struct view view_lens = {
	.name = "lens",
	.title = "Logit lens",
	.open = ACT_VIEW_LENS,
	.actions = lens_actions,
	.status_keys = lens_status_keys,
	.create = lens_create,
	.destroy = lens_destroy,
	.draw = lens_draw,
	.height = lens_height,
	.act = lens_act,
	.status = lens_status,
};
