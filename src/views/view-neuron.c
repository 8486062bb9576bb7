/* view-neuron.c -- the neuron view (after bertviz): how one head turns the selected query token's
 * vector and each key vector into an attention weight.
 *
 * The query vector q is a strip of coloured cells (blue negative, red positive); below it, one row
 * per key token: its key vector k, the element-wise product q×k (whose sum is the score), the
 * score as the model computes it from q and k up to the softmax (the logits of the score pipeline,
 * engine/attnscore.h: the trace's score_scale, soft-capping) and the softmax weight the model
 * computed, as a number and a bar. Cells carry their values when the head dimension leaves room.
 * Up/down move the query token; [ ] and { } pick the head and layer. Keys the query cannot see
 * (causal masking, the layer's sliding window) are marked as masked, their scores still shown. All
 * keys are shown (hiding special tokens would change the softmax the weights come from). Under
 * grouped-query attention the keys are those of the key/value head the query head reads (the title
 * names it and the heads sharing it). For rotary models q and k are those the scores use (after
 * rotary and q/k norm) or, toggled, the projections before rotary, whose products are not the
 * scores the weights come from; the title says which. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/anaview.h"
#include "draw/chart.h"
#include "engine/attnscore.h"
#include "trace/shapedesc.h"
#include "draw/tokstrip.h"
#include "views/view.h"

#define NV_LABEL_MAX 12
#define NV_NUM_W 6      /* a strip cell holding its value: "-1.23 " */
#define NV_SCORE_W 9
#define NV_WEIGHT_W 16

struct neuron_state {
	int row0, page;
};

static void *neuron_create(struct view_ctx *ctx)
{
	(void)ctx;
	return calloc(1, sizeof(struct neuron_state));
}

static void neuron_destroy(void *state)
{
	free(state);
}

/* Draw VALS[d] scaled by 1/MAX as a strip of D cells (W columns each, the value written when W
 * allows), at most MAXW columns; returns the columns used. */
static int nv_strip(struct canvas *cv, int x, int y, const double *vals, int d, double max, int w, int maxw)
{
	int used = 0;
	for (int i = 0; i < d; i++) {
		if (used + w > maxw) {
			canvas_put(cv, x + used - 1, y, canvas_glyph(cv, GLYPH_ELLIPSIS), canvas_role(cv, ROLE_DIM));
			break;
		}
		double v = max > 0 ? vals[i] / max : 0, a = fabs(vals[i]);
		bool numbers = w >= NV_NUM_W;
		/* In monochrome the number alone says it: no shade characters beside it. */
		if (!numbers || cv->pal->depth != DEPTH_MONO)
			for (int k = 0; k < w; k++)
				chart_signed(cv, x + used + k, y, v);
		if (numbers) {
			char num[16];
			snprintf(num, sizeof num, a < 9.995 ? "%+.2f" : a < 99.95 ? "%+.1f" : "%+.0f", vals[i]);
			chart_signed_text(cv, x + used, y, w - 1, v, num);
		}
		used += w;
	}
	return used;
}

static void neuron_draw(void *state, struct view_ctx *ctx, struct canvas *cv, struct rect area)
{
	struct neuron_state *s = state;
	struct rect old;
	if (!anaview_begin(ctx, cv, area, &old))
		return;
	struct trace tmp;
	const struct trace *t = shapedesc_qk_trace(ctx->trace, ctx->qk_before_rotary, &tmp);
	int n = t->n, d = t->head_dim, qi = anaview_token(ctx), klo, khi;
	trace_key_range(t, ctx->layer, qi, &klo, &khi);
	const float *q = trace_q(t, ctx->layer, ctx->head) + (size_t)qi * d;
	const float *k = trace_k(t, ctx->layer, ctx->head), *a = trace_attn(t, ctx->layer, ctx->head);
	double *qv = malloc((size_t)d * sizeof *qv), *kv = malloc((size_t)d * sizeof *kv), *pv = malloc((size_t)d * sizeof *pv);
	float *score = malloc((size_t)(n > 0 ? n : 1) * sizeof *score); /* [n] the query's logits, every key */
	if (!qv || !kv || !pv || !score) {
		free(qv), free(kv), free(pv), free(score);
		canvas_clip(cv, old);
		return;
	}
	/* The score as the model computes it from q and k (those shown: before rotary when toggled), up to
	 * the softmax: the pipeline's logits with the terms the trace holds (no relative terms). */
	struct attnscore terms;
	attnscore_of_trace(&terms, t, ctx->layer, ctx->head);
	attnscore_logits(&terms, qi, qi + 1, score);
	/* Colour scales: one for q and the keys, one for the products. */
	double vmax = 0, pmax = 0;
	for (int x = 0; x < d; x++) {
		qv[x] = q[x];
		vmax = fmax(vmax, fabs(q[x]));
	}
	for (int j = 0; j < n; j++)
		for (int x = 0; x < d; x++) {
			vmax = fmax(vmax, fabs(k[(size_t)j * d + x]));
			pmax = fmax(pmax, fabs((double)q[x] * k[(size_t)j * d + x]));
		}
	char lab[256];
	tokstrip_label(t, qi, cv->pal->utf8, lab, sizeof lab);
	const char *dot = anaview_dot(cv);
	char kvd[96], rot[64] = "", alibi[48], alibi_title[56] = "";
	shapedesc_kv(t, ctx->head, cv->pal->utf8, kvd, sizeof kvd);
	if (shapedesc_alibi(t, ctx->head, alibi, sizeof alibi)[0]) /* the scores below include its bias */
		snprintf(alibi_title, sizeof alibi_title, " %s %s", dot, alibi);
	if (t->rotary)
		snprintf(rot, sizeof rot, " %s q, k %s%s", dot, shapedesc_rotary_at(t, ctx->layer, ctx->qk_before_rotary),
			 ctx->qk_before_rotary && !shapedesc_nope(t, ctx->layer) ? " (not the scores)" : "");
	char experts[160], ex[168] = ""; /* a mixture of experts: where this layer's MLP sent the query token */
	if (shapedesc_experts(t, ctx->layer, qi, experts, sizeof experts)[0])
		snprintf(ex, sizeof ex, " %s %s", dot, experts);
	canvas_printf(cv, area.x, area.y, area.w, canvas_role(cv, ROLE_TITLE),
		      "neuron view %s layer %d head %d%s%s %s query %s (token %d)%s %s d = %d%s%s", dot, ctx->layer,
		      ctx->head, kvd[0] ? ", " : "", kvd, dot, lab, qi, ex, dot, d, alibi_title, rot);
	int qw = 4;
	for (int j = 0; j < n; j++) {
		tokstrip_label(t, j, cv->pal->utf8, lab, sizeof lab);
		int w = canvas_text_width(cv, lab) + 1;
		qw = w > qw ? w : qw;
	}
	qw = qw > NV_LABEL_MAX + 1 ? NV_LABEL_MAX + 1 : qw;
	/* Two strips share what the labels, score and weight leave. */
	int strip_room = (area.w - qw - NV_SCORE_W - NV_WEIGHT_W - 2) / 2;
	int cw = d * NV_NUM_W <= strip_room ? NV_NUM_W : d * 2 <= strip_room ? 2 : 1;
	int sw = d * cw < strip_room ? d * cw : strip_room;
	if (sw < 1)
		sw = 1;
	int kx = area.x + qw, px = kx + sw + 1, sx = px + sw + 1, wx = sx + NV_SCORE_W;
	struct style lab_st = canvas_role(cv, ROLE_LABEL);
	canvas_text(cv, area.x, area.y + 1, qw - 1, "q", canvas_role(cv, ROLE_QUERY));
	nv_strip(cv, kx, area.y + 1, qv, d, vmax, cw, sw);
	double qn = 0;
	for (int x = 0; x < d; x++)
		qn += qv[x] * qv[x];
	char how[160];
	int used = snprintf(how, sizeof how, "score = q%sk %s %.4g", cv->pal->utf8 ? "\xc2\xb7" : ".",
			    cv->pal->utf8 ? "\xc3\x97" : "x", terms.scale);
	if (terms.alibi != 0 && used < (int)sizeof how) /* ALiBi: the score column includes slope · key position */
		used += snprintf(how + used, sizeof how - (size_t)used, " + %.4g %s key position", terms.alibi_scale * terms.alibi,
				 cv->pal->utf8 ? "\xc3\x97" : "x");
	if (terms.bias && used < (int)sizeof how) /* T5: the score column includes the bucketed position bias */
		used += snprintf(how + used, sizeof how - (size_t)used, " + position bias");
	if (terms.softcap > 0 && used < (int)sizeof how)
		used += snprintf(how + used, sizeof how - (size_t)used, ", then %g tanh(/%g)", terms.softcap, terms.softcap);
	if (t->relative_terms && used < (int)sizeof how)
		snprintf(how + used, sizeof how - (size_t)used, " + relative terms (not shown)");
	canvas_printf(cv, px, area.y + 1, -1, canvas_role(cv, ROLE_DIM), "|q| %.3f   colour: -%.2f blue .. +%.2f red   %s",
		      sqrt(qn), vmax, vmax, how);
	int y = area.y + 2;
	canvas_text(cv, area.x, y, qw - 1, "key", lab_st);
	canvas_text(cv, kx, y, sw, "k", lab_st);
	canvas_text(cv, px, y, sw, cv->pal->utf8 ? "q\xc3\x97k" : "q*k", lab_st);
	canvas_text(cv, sx, y, NV_SCORE_W, "score", lab_st);
	canvas_text(cv, wx, y, NV_WEIGHT_W, "weight", lab_st);
	int rows = ctx->print ? n : area.h - 4;
	rows = rows > n ? n : rows < 1 ? 1 : rows;
	s->page = rows;
	if (s->row0 > n - rows)
		s->row0 = n - rows;
	if (s->row0 < 0 || ctx->print)
		s->row0 = 0;
	for (int r = 0; r < rows; r++) {
		int j = s->row0 + r, yy = y + 1 + r;
		tokstrip_label(t, j, cv->pal->utf8, lab, sizeof lab);
		struct style st = j == qi ? canvas_role(cv, ROLE_TOKEN_SEL) : canvas_role(cv, t->special[j] ? ROLE_SPECIAL : ROLE_KEY);
		canvas_text(cv, area.x, yy, qw - 1, lab, st);
		for (int x = 0; x < d; x++) {
			kv[x] = k[(size_t)j * d + x];
			pv[x] = qv[x] * kv[x];
		}
		nv_strip(cv, kx, yy, kv, d, vmax, cw, sw);
		nv_strip(cv, px, yy, pv, d, pmax, cw, sw);
		bool masked = j < klo || j > khi;
		canvas_printf(cv, sx, yy, NV_SCORE_W - 1, canvas_role(cv, masked ? ROLE_DIM : ROLE_TEXT), "%8.3f", score[j]);
		if (masked) {
			canvas_text(cv, wx, yy, NV_WEIGHT_W, "masked", canvas_role(cv, ROLE_DIM));
			continue;
		}
		double w = a[(size_t)qi * n + j];
		canvas_printf(cv, wx, yy, 7, canvas_role(cv, ROLE_TEXT), "%.4f", w);
		chart_hbar(cv, wx + 7, yy, NV_WEIGHT_W - 7, w, canvas_role(cv, ROLE_QUERY));
	}
	if (s->row0 + rows < n && !ctx->print)
		canvas_put(cv, area.x + qw - 1, y + rows, canvas_glyph(cv, GLYPH_DOWN), canvas_role(cv, ROLE_DIM));
	if (s->row0 > 0)
		canvas_put(cv, area.x + qw - 1, y + 1, canvas_glyph(cv, GLYPH_UP), canvas_role(cv, ROLE_DIM));
	free(qv), free(kv), free(pv), free(score);
	canvas_clip(cv, old);
}

static int neuron_height(void *state, struct view_ctx *ctx, const struct canvas *cv, int width)
{
	(void)state, (void)cv, (void)width;
	return ctx->trace ? 3 + ctx->trace->n : 1;
}

static bool neuron_act(void *state, struct view_ctx *ctx, enum action a, int count)
{
	struct neuron_state *s = state;
	/* Up/down move the query token; page keys scroll the keys under it. */
	return anaview_token_keys(ctx, a, count) || anaview_scroll_keys(a, count, &s->row0, s->page) ||
	       anaview_nav(ctx, a, count);
}

static void neuron_status(void *state, struct view_ctx *ctx, char *buf, size_t n)
{
	(void)state;
	snprintf(buf, n, "L%d H%d query %d", ctx->layer, ctx->head, anaview_token(ctx));
}

static const enum action neuron_actions[] = {
	ACT_UP, ACT_DOWN, ACT_PAGE_UP, ACT_PAGE_DOWN, ACT_HEAD_PREV, ACT_HEAD_NEXT, ACT_LAYER_PREV, ACT_LAYER_NEXT,
	ACTION_NONE,
};
static const enum action neuron_status_keys[] = {ACT_DOWN, ACT_HEAD_NEXT, ACT_LAYER_NEXT, ACT_HELP, ACT_BACK,
						 ACTION_NONE};

const struct view view_neuron = {
	.name = "neuron",
	.title = "Neuron view",
	.open = ACT_VIEW_NEURON,
	.actions = neuron_actions,
	.status_keys = neuron_status_keys,
	.create = neuron_create,
	.destroy = neuron_destroy,
	.draw = neuron_draw,
	.height = neuron_height,
	.act = neuron_act,
	.status = neuron_status,
};
