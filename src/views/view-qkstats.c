/* view-qkstats.c -- per-head query/key descriptives of one layer (stats_qk_desc).
 *
 * For every head, the mean ± standard deviation of its query activations and of its key
 * activations (over tokens × dimensions) as error bars on one shared axis through 0; below, two
 * scatters across the heads: query mean against key mean, and query std against key std, each
 * point labelled with its head. As notebook 004 (q[1:].mean(), q[1:].std() in torch): the first
 * token is left out — t puts it back in; it is often an outlier ([CLS], or the token a GPT-2 head
 * parks its attention on) — and the std has Bessel's correction (n − 1) — v switches to the
 * population std (n), attnscope's variant. Layer keys change the layer; the selected head is
 * highlighted. Under grouped-query attention each key/value head's bar comes once, after the query
 * heads that share it ("kv1 k"), and the scatters pair each query head with it. For rotary models
 * the vectors are those the scores use or, toggled, the projections before rotary.
 *
 * On a corpus aggregate (ctx->agg) the means and standard deviations are over every token of every
 * text (aggregate.h keeps the first tokens' moments apart, so t works there too), with the queries
 * and keys the scores use. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/aggview.h"
#include "views/anaview.h"
#include "draw/braille.h"
#include "trace/shapedesc.h"
#include "analysis/stats.h"
#include "views/view.h"

#define QS_SCATTER_ROWS 10
#define QS_LABEL_W 6        /* "H11 q " */
#define QS_NUM_W 18         /* "+0.123 ± 1.234" */

struct qkstats_state {
	bool keep_first;    /* include the first token */
	bool population;    /* attnscope's variant: divide by n, not n − 1 */
};

static void *qkstats_create(struct view_ctx *ctx)
{
	(void)ctx;
	return calloc(1, sizeof(struct qkstats_state));
}

static void qkstats_destroy(void *state)
{
	free(state);
}

/* Column of value V on an axis from LO to HI over W columns. */
static int qs_col(double v, double lo, double hi, int w)
{
	int c = (int)floor((v - lo) / (hi - lo) * (w - 1) + 0.5);
	return c < 0 ? 0 : c >= w ? w - 1 : c;
}

static void qkstats_scatter(struct canvas *cv, struct rect r, const struct stats_qk_desc *d, int H, int sel, bool means,
			    const char *title)
{
	canvas_text(cv, r.x, r.y, r.w, title, canvas_role(cv, ROLE_LABEL));
	double xmin = 0, xmax = 0, ymin = 0, ymax = 0;
	for (int h = 0; h < H; h++) {
		double x = means ? d[h].q_mean : d[h].q_std, y = means ? d[h].k_mean : d[h].k_std;
		xmin = fmin(xmin, x), xmax = fmax(xmax, x), ymin = fmin(ymin, y), ymax = fmax(ymax, y);
	}
	struct bplot p;
	if (bplot_init(&p, cv, (struct rect){r.x, r.y + 1, r.w, r.h - 2}, xmin, xmax, ymin, ymax, false))
		return;
	bplot_axes(&p);
	for (int h = 0; h < H; h++)
		bplot_marker(&p, cv, means ? d[h].q_mean : d[h].q_std, means ? d[h].k_mean : d[h].k_std, 0x25cf, 'o',
			     canvas_role(cv, h == sel ? ROLE_TOKEN_SEL : ROLE_QUERY));
	for (int pass = 0; pass < 2; pass++)
		for (int h = 0; h < H; h++) {
			if ((pass == 0) != (h == sel))
				continue;
			char lab[16];
			snprintf(lab, sizeof lab, "H%d", h);
			bplot_label(&p, cv, means ? d[h].q_mean : d[h].q_std, means ? d[h].k_mean : d[h].k_std, lab,
				    canvas_role(cv, h == sel ? ROLE_TOKEN_SEL : ROLE_LABEL));
		}
	bplot_flush(&p, cv);
	canvas_printf(cv, r.x, r.y + r.h - 1, r.w, canvas_role(cv, ROLE_DIM), "x query %.3g..%.3g, y key %.3g..%.3g", p.xmin,
		      p.xmax, p.ymin, p.ymax);
	bplot_free(&p);
}

/* The descriptives of LAYER's heads over the corpus of A, as stats_qk_desc gives them for a text. */
static void qkstats_from_agg(const struct aggregate *a, int layer, const struct qkstats_state *s,
			     struct stats_qk_desc *d)
{
	for (int h = 0; h < a->model.n_heads; h++) {
		struct agg_moment q = aggregate_qk_moment(aggregate_qk(a, layer, h), false, s->keep_first),
				  k = aggregate_qk_moment(aggregate_qk(a, layer, h), true, s->keep_first);
		d[h].q_mean = q.n ? q.mean : 0;
		d[h].k_mean = k.n ? k.mean : 0;
		d[h].q_std = q.n ? (s->population ? aggregate_moment_pstd(&q) : aggregate_moment_std(&q)) : 0;
		d[h].k_std = k.n ? (s->population ? aggregate_moment_pstd(&k) : aggregate_moment_std(&k)) : 0;
		d[h].count = (size_t)q.n;
	}
}

static void qkstats_draw(void *state, struct view_ctx *ctx, struct canvas *cv, struct rect area)
{
	struct qkstats_state *s = state;
	struct rect old = canvas_clip(cv, area);
	const struct aggregate *agg = ctx->agg;
	if (!agg && !anaview_ready(ctx, cv, area)) {
		canvas_clip(cv, old);
		return;
	}
	struct trace tmp;
	const struct trace *t = agg ? (tmp = aggview_shape(agg), &tmp) : shapedesc_qk_trace(ctx->trace, ctx->qk_before_rotary, &tmp);
	int H = t->n_heads;
	struct stats_qk_desc *d = calloc((size_t)H, sizeof *d);
	if (!d) {
		canvas_clip(cv, old);
		return;
	}
	if (agg)
		qkstats_from_agg(agg, ctx->layer, s, d);
	else
		stats_qk_desc(t, ctx->layer, !s->keep_first, !s->population, d);
	const char *dot = anaview_dot(cv), *times = cv->pal->utf8 ? "\xc3\x97" : "x";
	char rot[48] = "";
	if (t->rotary)
		snprintf(rot, sizeof rot, " %s %s", dot, shapedesc_rotary_at(t, ctx->layer, ctx->qk_before_rotary));
	bool keep_first = s->keep_first || (!agg && t->n < 2);
	canvas_printf(cv, area.x, area.y, area.w, canvas_role(cv, ROLE_TITLE),
		      "query/key statistics %s layer %d %s mean %s std over tokens %s dimensions %s first token %s%s", dot,
		      ctx->layer, dot, cv->pal->utf8 ? "\xc2\xb1" : "+-", times, dot, keep_first ? "included" : "left out",
		      rot);
	const char *how = s->population ? "attnscope" : "notebook 004",
		   *div = s->population ? "n, the population's" : "n-1, Bessel (torch's std())";
	if (agg)
		canvas_printf(cv, area.x, area.y + 1, area.w, canvas_role(cv, ROLE_LABEL),
			      "%s: std over %s %s n %zu per mean: %s of %llu texts %s %d dims (as the scores use them)",
			      how, div, dot, d[0].count, keep_first ? "every token" : "the tokens after the first",
			      (unsigned long long)agg->c.texts, times, t->head_dim);
	else
		canvas_printf(cv, area.x, area.y + 1, area.w, canvas_role(cv, ROLE_LABEL),
			      "%s: std over %s %s n %zu per mean: tokens %d%s%d %s %d dims", how, div, dot, d[0].count,
			      keep_first ? 0 : 1, cv->pal->utf8 ? "\xe2\x80\xa6" : "-", t->n - 1, times, t->head_dim);
	/* Error bars on one axis through 0. */
	double lo = 0, hi = 0;
	for (int h = 0; h < H; h++) {
		lo = fmin(lo, fmin(d[h].q_mean - d[h].q_std, d[h].k_mean - d[h].k_std));
		hi = fmax(hi, fmax(d[h].q_mean + d[h].q_std, d[h].k_mean + d[h].k_std));
	}
	if (!(hi > lo))
		hi = lo + 1;
	int bw = area.w - QS_LABEL_W - QS_NUM_W - 1;
	if (bw < 10)
		bw = 10;
	int zero = qs_col(0, lo, hi, bw), y = area.y + 2;
	canvas_printf(cv, area.x + QS_LABEL_W, y, bw, canvas_role(cv, ROLE_DIM), "%.3g", lo);
	char buf[64];
	snprintf(buf, sizeof buf, "%.3g", hi);
	canvas_text(cv, area.x + QS_LABEL_W + bw - (int)strlen(buf), y, -1, buf, canvas_role(cv, ROLE_DIM));
	canvas_put(cv, area.x + QS_LABEL_W + zero, y, '0', canvas_role(cv, ROLE_DIM));
	y++;
	for (int h = 0; h < H; h++)
		for (int k = 0; k < 2; k++, y++) {
			int first, last;
			shapedesc_group(t, h, &first, &last);
			if (k && h != last) { /* a shared key head's bar comes once, after its group */
				y--;
				continue;
			}
			double mean = k ? d[h].k_mean : d[h].q_mean, sd = k ? d[h].k_std : d[h].q_std;
			struct style st = canvas_role(cv, k ? ROLE_KEY : ROLE_QUERY);
			if (k && first != last)
				snprintf(buf, sizeof buf, "kv%d k", trace_kv_head(t, h));
			else
				snprintf(buf, sizeof buf, "H%d %s", h, k ? "k" : "q");
			bool sel = k ? trace_kv_head(t, ctx->head) == trace_kv_head(t, h) : h == ctx->head;
			canvas_text(cv, area.x, y, QS_LABEL_W - 1, buf,
				    sel ? canvas_role(cv, ROLE_LABEL_SEL) : canvas_role(cv, ROLE_LABEL));
			int x0 = area.x + QS_LABEL_W;
			canvas_put(cv, x0 + zero, y, canvas_glyph(cv, GLYPH_VLINE), canvas_role(cv, ROLE_DIM));
			int a = qs_col(mean - sd, lo, hi, bw), b = qs_col(mean + sd, lo, hi, bw), m = qs_col(mean, lo, hi, bw);
			for (int c = a; c <= b; c++)
				canvas_put(cv, x0 + c, y, canvas_glyph(cv, GLYPH_HLINE), st);
			canvas_put(cv, x0 + a, y, cv->pal->utf8 ? 0x251c : '|', st);
			canvas_put(cv, x0 + b, y, cv->pal->utf8 ? 0x2524 : '|', st);
			canvas_put(cv, x0 + m, y, k ? (cv->pal->utf8 ? 0x25c6 : 'x') : (cv->pal->utf8 ? 0x25cf : 'o'), st);
			canvas_printf(cv, x0 + bw + 1, y, QS_NUM_W, canvas_role(cv, ROLE_PANEL), "%+.3f %s %.3f", mean,
				      cv->pal->utf8 ? "\xc2\xb1" : "+-", sd);
		}
	/* The two scatters side by side (stacked when narrow). */
	y++;
	int side = area.w >= 60;
	int sw = side ? (area.w - 2) / 2 : area.w;
	qkstats_scatter(cv, (struct rect){area.x, y, sw, QS_SCATTER_ROWS}, d, H, ctx->head, true,
			"query mean vs key mean, per head");
	qkstats_scatter(cv, (struct rect){area.x + (side ? sw + 2 : 0), y + (side ? 0 : QS_SCATTER_ROWS + 1), sw,
					  QS_SCATTER_ROWS},
			d, H, ctx->head, false, "query std vs key std, per head");
	free(d);
	canvas_clip(cv, old);
}

static int qkstats_height(void *state, struct view_ctx *ctx, const struct canvas *cv, int width)
{
	(void)state, (void)cv;
	struct trace shape;
	const struct trace *t = ctx->agg ? (shape = aggview_shape(ctx->agg), &shape) : ctx->trace;
	int H = t ? t->n_heads : 0, K = t ? (shapedesc_gqa(t) ? t->n_kv_heads : H) : 0;
	return 3 + H + K + 1 + (width >= 60 ? 1 : 2) * (QS_SCATTER_ROWS + 1);
}

static bool qkstats_act(void *state, struct view_ctx *ctx, enum action a, int count)
{
	struct qkstats_state *s = state;
	if (a == ACT_TOGGLE) {
		s->keep_first = !s->keep_first;
		snprintf(ctx->message, sizeof ctx->message, "first token %s", s->keep_first ? "included" : "left out");
		return true;
	}
	if (a == ACT_VARIANT) {
		s->population = !s->population;
		snprintf(ctx->message, sizeof ctx->message, "std %s", s->population ? "of the population (n, attnscope)"
									  : "with Bessel's correction (n - 1, the notebook)");
		return true;
	}
	return anaview_nav(ctx, a, count);
}

static void qkstats_status(void *state, struct view_ctx *ctx, char *buf, size_t n)
{
	struct qkstats_state *s = state;
	snprintf(buf, n, "layer %d, first token %s, std /%s", ctx->layer, s->keep_first ? "in" : "out",
		 s->population ? "n" : "(n-1)");
}

static const enum action qkstats_actions[] = {ACT_TOGGLE, ACT_VARIANT, ACT_HEAD_PREV, ACT_HEAD_NEXT, ACT_LAYER_PREV, ACT_LAYER_NEXT,
					      ACTION_NONE};
static const enum action qkstats_status_keys[] = {ACT_TOGGLE, ACT_VARIANT, ACT_LAYER_NEXT, ACT_HELP, ACT_BACK, ACTION_NONE};

const struct view view_qkstats = {
	.name = "qkstats",
	.title = "Query/key statistics",
	.flags = VIEW_AGGREGATE,
	.brief = "Q/K statistics",
	.open = ACT_VIEW_QKSTATS,
	.actions = qkstats_actions,
	.status_keys = qkstats_status_keys,
	.create = qkstats_create,
	.destroy = qkstats_destroy,
	.draw = qkstats_draw,
	.height = qkstats_height,
	.act = qkstats_act,
	.status = qkstats_status,
};
