/* view-rollout.c -- attention rollout as a heatmap: row i shows how much position i after the
 * selected layer draws on each input token, through all layers up to it (rollout.h).
 *
 * Layer keys choose how deep the rollout goes; up/down move the selected token (the row whose
 * top sources the side panel lists). The colour scale and hiding special tokens are shared with
 * the other views: hidden tokens' rows and columns are dropped and each row renormalised. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/anaview.h"
#include "analysis/heatdata.h"
#include "analysis/rollout.h"
#include "draw/tokstrip.h"
#include "views/view.h"
#include "analysis/words.h"

#define RO_LABEL_MAX 12
#define RO_PANEL_W 30

struct rollout_state {
	bool valid;
	unsigned gen;
	const struct trace *t;
	float *all;          /* [n_layers][n][n] rollout through each layer */
	char error[128];
	int row0, page;      /* scrolling */
};

static void *rollout_create(struct view_ctx *ctx)
{
	(void)ctx;
	return calloc(1, sizeof(struct rollout_state));
}

static void rollout_destroy(void *state)
{
	struct rollout_state *s = state;
	free(s->all);
	free(s);
}

static bool rollout_ensure(struct rollout_state *s, const struct view_ctx *ctx)
{
	const struct trace *t = ctx->trace;
	if (s->valid && s->gen == ctx->trace_gen && s->t == t)
		return !s->error[0];
	free(s->all);
	s->valid = true, s->gen = ctx->trace_gen, s->t = t, s->error[0] = 0;
	s->all = malloc((size_t)t->n_layers * t->n * t->n * sizeof *s->all);
	struct err e = {{0}};
	if (!s->all)
		snprintf(s->error, sizeof s->error, "out of memory");
	else if (t->source ? words_rollout(t, s->all, &e) : rollout_compute(t, s->all, &e))
		snprintf(s->error, sizeof s->error, "%s", e.msg);
	return !s->error[0];
}

/* The tokens shown (all, or the non-special ones), into IDX; returns how many. */
static int rollout_tokens(const struct view_ctx *ctx, int *idx)
{
	const struct trace *t = ctx->trace;
	int m = 0;
	for (int i = 0; i < t->n; i++)
		if (!ctx->hide_special || !t->special[i])
			idx[m++] = i;
	return m;
}

/* The shown matrix V[m][m] (rows renormalised when specials are hidden). */
static void rollout_matrix(const struct rollout_state *s, const struct view_ctx *ctx, const int *idx, int m, float *v)
{
	const struct trace *t = ctx->trace;
	const float *r = s->all + (size_t)ctx->layer * t->n * t->n;
	for (int a = 0; a < m; a++) {
		double sum = 0;
		for (int b = 0; b < m; b++)
			sum += v[(size_t)a * m + b] = r[(size_t)idx[a] * t->n + idx[b]];
		if (ctx->hide_special && sum > 0)
			for (int b = 0; b < m; b++)
				v[(size_t)a * m + b] = (float)(v[(size_t)a * m + b] / sum);
	}
}

static void rollout_draw(void *state, struct view_ctx *ctx, struct canvas *cv, struct rect area)
{
	struct rollout_state *s = state;
	struct rect old;
	if (!anaview_begin(ctx, cv, area, &old) || anaview_failed(cv, area, old, rollout_ensure(s, ctx) ? NULL : s->error))
		return;
	const struct trace *t = ctx->trace;
	int *idx = malloc((size_t)t->n * sizeof *idx);
	int m = idx ? rollout_tokens(ctx, idx) : 0;
	float *v = m ? malloc((size_t)m * m * sizeof *v) : NULL, *pos = m ? malloc((size_t)m * m * sizeof *pos) : NULL;
	if (!v || !pos || m == 0) {
		canvas_text(cv, area.x, area.y, area.w, m ? "out of memory" : "no tokens to show", canvas_role(cv, ROLE_DIM));
		free(idx), free(v), free(pos);
		canvas_clip(cv, old);
		return;
	}
	rollout_matrix(s, ctx, idx, m, v);
	heatdata_scale(v, m, m, ctx->scale, pos);
	const char *dot = anaview_dot(cv);
	canvas_printf(cv, area.x, area.y, area.w, canvas_role(cv, ROLE_TITLE),
		      "attention rollout through layers 0-%d (heads averaged, 0.5%sA + 0.5%sI) %s %s scale%s", ctx->layer, dot,
		      dot, dot, heatdata_scale_name(ctx->scale), ctx->hide_special ? ", specials hidden" : "");
	/* Layout: labels, 2-column cells (1 in print when wide), panel on the right when it fits. */
	int qw = 3;
	char lab[256];
	for (int a = 0; a < m; a++) {
		tokstrip_label(t, idx[a], cv->pal->utf8, lab, sizeof lab);
		int w = canvas_text_width(cv, lab) + 1;
		if (w > qw)
			qw = w;
	}
	if (qw > RO_LABEL_MAX + 1)
		qw = RO_LABEL_MAX + 1;
	int cw = 2;
	int panel = area.w >= qw + cw * m + 2 + RO_PANEL_W ? RO_PANEL_W : 0;
	if (!panel && area.w < qw + cw * m)
		cw = 1;
	int vis_cols = (area.w - qw - (panel ? panel + 2 : 0)) / cw;
	if (vis_cols > m)
		vis_cols = m;
	if (vis_cols < 1)
		vis_cols = 1;
	int top = 2; /* title, key index row */
	int rows = ctx->print ? m : area.h - top - (panel ? 0 : 2);
	if (rows > m)
		rows = m;
	if (rows < 1)
		rows = 1;
	s->page = rows;
	int sel = ctx->token, sel_pos = -1;
	for (int a = 0; a < m; a++)
		if (idx[a] == sel)
			sel_pos = a;
	if (sel_pos >= 0) {
		if (sel_pos < s->row0)
			s->row0 = sel_pos;
		if (sel_pos >= s->row0 + rows)
			s->row0 = sel_pos - rows + 1;
	}
	if (s->row0 > m - rows)
		s->row0 = m - rows;
	if (s->row0 < 0 || ctx->print)
		s->row0 = 0;
	/* Column header: token indices every few columns (labels would not fit in 2 cells). */
	struct style lab_st = canvas_role(cv, ROLE_LABEL);
	for (int b = 0; b < vis_cols; b += (cw == 1 ? 5 : 3)) {
		char num[16];
		snprintf(num, sizeof num, "%d", idx[b]);
		canvas_text(cv, area.x + qw + b * cw, area.y + 1, -1, num, idx[b] == sel ? canvas_role(cv, ROLE_TOKEN_SEL) : lab_st);
	}
	for (int r = 0; r < rows; r++) {
		int a = s->row0 + r, y = area.y + top + r;
		tokstrip_label(t, idx[a], cv->pal->utf8, lab, sizeof lab);
		struct style st = idx[a] == sel ? canvas_role(cv, ROLE_TOKEN_SEL)
						: canvas_role(cv, t->special[idx[a]] ? ROLE_SPECIAL : ROLE_QUERY);
		canvas_text(cv, area.x, y, qw - 1, lab, st);
		for (int b = 0; b < vis_cols; b++)
			for (int k = 0; k < cw; k++)
				canvas_heat1(cv, area.x + qw + b * cw + k, y, pos[(size_t)a * m + b]);
	}
	/* Panel: the selected (or last) position's top sources. */
	int row = sel_pos >= 0 ? sel_pos : m - 1;
	int px = panel ? area.x + qw + vis_cols * cw + 2 : area.x, py = panel ? area.y + 1 : area.y + top + rows;
	int pw = panel ? area.x + area.w - px : area.w;
	int plines = panel ? (ctx->print ? 2 + m : area.h - 1) : 2;
	tokstrip_label(t, idx[row], cv->pal->utf8, lab, sizeof lab);
	canvas_printf(cv, px, py, pw, canvas_role(cv, ROLE_LABEL), "position %d %s draws on", idx[row], lab);
	int *order = malloc((size_t)m * sizeof *order);
	if (order) {
		for (int b = 0; b < m; b++)
			order[b] = b;
		/* Largest first (insertion sort: m is the token count). */
		for (int i = 1; i < m; i++) {
			int x = order[i], j = i;
			for (; j > 0 && v[(size_t)row * m + order[j - 1]] < v[(size_t)row * m + x]; j--)
				order[j] = order[j - 1];
			order[j] = x;
		}
		if (panel) {
			for (int i = 0; i < m && i + 1 < plines; i++) {
				char kl[256];
				tokstrip_label(t, idx[order[i]], cv->pal->utf8, kl, sizeof kl);
				canvas_printf(cv, px, py + 1 + i, pw, canvas_role(cv, ROLE_PANEL), "%2d. %.4f  %s", i + 1,
					      v[(size_t)row * m + order[i]], kl);
			}
		} else {
			int used = 0;
			for (int i = 0; i < m && used < pw; i++) {
				char kl[256], item[300];
				tokstrip_label(t, idx[order[i]], cv->pal->utf8, kl, sizeof kl);
				snprintf(item, sizeof item, "%s %.3f  ", kl, v[(size_t)row * m + order[i]]);
				used += canvas_text(cv, px + used, py + 1, pw - used, item, canvas_role(cv, ROLE_PANEL));
			}
		}
		free(order);
	}
	/* Legend: what rows and columns are, and the colour ramp. */
	int ly = area.y + top + rows + (panel ? 0 : 2);
	int lx = area.x + canvas_text(cv, area.x, ly, -1, "row: position after the layer; column: input token; 0 ",
				      canvas_role(cv, ROLE_DIM));
	for (int i = 0; i < 10; i++)
		canvas_heat1(cv, lx + i, ly, i / 9.0f);
	canvas_text(cv, lx + 11, ly, -1, "1", canvas_role(cv, ROLE_DIM));
	if (t->sinks) /* gpt-oss: rollout renormalises each layer's rows, so the sinks' share is dropped there */
		canvas_printf(cv, lx + 13, ly, area.x + area.w - lx - 13, canvas_role(cv, ROLE_DIM),
			      "sinks took %.1f%% of row %d in layer %d (dropped)",
			      100.0 * heat_sink_share(t, ctx->layer, 0, HEAT_LAYER_MEAN, idx[row]), idx[row], ctx->layer);
	free(idx), free(v), free(pos);
	canvas_clip(cv, old);
}

static int rollout_height(void *state, struct view_ctx *ctx, const struct canvas *cv, int width)
{
	(void)state, (void)cv, (void)width;
	const struct trace *t = ctx->trace;
	if (!t || t->n == 0)
		return 1;
	return 2 + t->n + 3;
}

static bool rollout_act(void *state, struct view_ctx *ctx, enum action a, int count)
{
	struct rollout_state *s = state;
	int rep = count > 0 ? count : 1, page = s->page > 1 ? s->page : 1;
	switch (a) {
	case ACT_PAGE_UP:
	case ACT_PAGE_DOWN:
		/* The draw keeps the selected row in sight: a page moves the token, not the rows. */
		anaview_move_token(ctx, a == ACT_PAGE_UP ? -rep * page : rep * page);
		return true;
	case ACT_LAYER_PREV:
	case ACT_LAYER_NEXT:
		return anaview_nav(ctx, a, count);
	default:
		return anaview_token_keys(ctx, a, count);
	}
}

static void rollout_status(void *state, struct view_ctx *ctx, char *buf, size_t n)
{
	(void)state;
	snprintf(buf, n, "rollout to layer %d", ctx->layer);
}

static const enum action rollout_actions[] = {
	ACT_UP, ACT_DOWN, ACT_PAGE_UP, ACT_PAGE_DOWN, ACT_LAYER_PREV, ACT_LAYER_NEXT, ACTION_NONE,
};
static const enum action rollout_status_keys[] = {ACT_LAYER_NEXT, ACT_LAYER_PREV, ACT_SCALE, ACT_HELP, ACT_BACK,
						  ACTION_NONE};

const struct view view_rollout = {
	.name = "rollout",
	.title = "Attention rollout",
	.open = ACT_VIEW_ROLLOUT,
	.actions = rollout_actions,
	.status_keys = rollout_status_keys,
	.create = rollout_create,
	.destroy = rollout_destroy,
	.draw = rollout_draw,
	.height = rollout_height,
	.act = rollout_act,
	.status = rollout_status,
};
