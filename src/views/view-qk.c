/* view-qk.c -- query/key geometry of one head, as in AttentionViz: a joint PCA of the head's query
 * and key vectors drawn as a scatter, queries and keys with their own glyph and colour, each query
 * linked to the key it attends to most.
 *
 * z cycles the normalisation that leaves attention unchanged (stats_qknorm): off; keys translated
 * to the queries' centroid and both scaled by c so their mean norms match; or c chosen so distance
 * tracks dot product best. The panel shows c, the correlation between dot product and distance,
 * and the mean distance from a query to its highest-attention key, before and after. A selected
 * token's query, key and link are highlighted and labelled first. Under grouped-query attention the
 * keys are those of the key/value head the query head reads (the title names it and its group). For
 * rotary models the vectors are those the scores use (after rotary and q/k norm) or, toggled by the
 * rotary key, the projections before; the title says which.
 *
 * On a corpus aggregate (ctx->agg) the scatter is AttentionViz's main view: the joint PCA of the
 * queries and keys of a uniform sample of the corpus's tokens (aggregate.h), of the head the sample
 * keeps (--pca-head). Up/down walk through the sampled tokens (in the sample's random order); the
 * one chosen is highlighted and the line under the title shows the text it came from. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus/aggregate.h"
#include "views/anaview.h"
#include "draw/braille.h"
#include "analysis/pca.h"
#include "trace/shapedesc.h"
#include "analysis/stats.h"
#include "draw/tokstrip.h"
#include "views/registry.h" /* view_heatmap, which it opens */

#define QK_PLOT_ROWS 22   /* plot height in --print */
/* Rows above the plot (title, two lines of measures) and below (legend). */
#define QK_TOP 3
#define QK_BOTTOM 2
#define QK_GLYPH_Q 0x25cf /* ● */
#define QK_GLYPH_K 0x25c6 /* ◆ */

enum qk_mode { QK_RAW, QK_NORMS, QK_CORR, QK_MODES };

struct qk_state {
	enum qk_mode mode;
	/* Cache of what is drawn. */
	bool valid;
	unsigned gen;
	const struct trace *t;
	int layer, head;
	enum qk_mode c_mode;
	bool c_before;       /* before rotary */
	int n;
	double *xy;          /* [2n][2] PCA coordinates: queries 0..n-1, then keys */
	int *argmax;         /* [n] each query's highest-attention key */
	double explained[2];
	struct qknorm qn;
	char error[128];
	/* On an aggregate: the PCA of its sample, and the sampled token chosen (-1 none). */
	const struct aggregate *c_agg;
	int *order;          /* [n] sample token of point i */
	int sel;
	uint64_t sel_line;   /* the chosen token, found again in a newer aggregate's sample */
	int sel_token;
};

static void *qk_create(struct view_ctx *ctx)
{
	(void)ctx;
	return calloc(1, sizeof(struct qk_state));
}

static void qk_destroy(void *state)
{
	struct qk_state *s = state;
	free(s->xy);
	free(s->argmax);
	free(s->order);
	free(s);
}

/* The PCA of the aggregate's sample, once per aggregate (it does not change with the head). */
static bool qk_ensure_agg(struct qk_state *s, const struct view_ctx *ctx)
{
	const struct aggregate *a = ctx->agg;
	if (s->valid && s->c_agg == a && s->gen == ctx->trace_gen)
		return !s->error[0];
	free(s->xy), free(s->argmax), free(s->order);
	s->argmax = NULL;
	s->valid = true, s->c_agg = a, s->gen = ctx->trace_gen, s->t = NULL;
	s->error[0] = 0;
	s->n = a->sample.n;
	int was = s->sel;
	s->sel = -1;
	s->xy = malloc((size_t)(s->n > 0 ? 4 * s->n : 1) * sizeof *s->xy);
	s->order = malloc((size_t)(s->n > 0 ? s->n : 1) * sizeof *s->order);
	struct err e = {{0}};
	if (!s->xy || !s->order)
		snprintf(s->error, sizeof s->error, "out of memory");
	else if (aggregate_pca(a, s->order, s->xy, s->explained, &e) < 0)
		snprintf(s->error, sizeof s->error, "%s", e.msg);
	for (int i = 0; was >= 0 && !s->error[0] && i < s->n; i++) /* still sampled? (a run goes on) */
		if (a->sample.tok[s->order[i]].line == s->sel_line && a->sample.tok[s->order[i]].token == s->sel_token)
			s->sel = i;
	return !s->error[0];
}

/* The scatter's plot PR below the title lines, its bounds those of the N queries and N keys in S->xy
 * (and the origin); non-zero when it cannot be drawn. */
static int qk_plot_begin(const struct qk_state *s, const struct view_ctx *ctx, struct canvas *cv, struct rect area, int n,
			 struct bplot *p, struct rect *pr)
{
	int ph = ctx->print ? QK_PLOT_ROWS : area.h - QK_TOP - QK_BOTTOM;
	if (ph < 3)
		ph = 3;
	*pr = (struct rect){area.x, area.y + QK_TOP, area.w, ph};
	double xmin = 0, xmax = 0, ymin = 0, ymax = 0;
	for (int i = 0; i < 2 * n; i++) {
		xmin = fmin(xmin, s->xy[2 * i]), xmax = fmax(xmax, s->xy[2 * i]);
		ymin = fmin(ymin, s->xy[2 * i + 1]), ymax = fmax(ymax, s->xy[2 * i + 1]);
	}
	return bplot_init(p, cv, *pr, xmin, xmax, ymin, ymax, true);
}

/* Count the N queries and N keys of S->xy (queries first) per cell, except SKIP (-1 for none);
 * true when they are to be drawn as a density (bplot_dense). */
static bool qk_count(const struct qk_state *s, struct bplot *p, int n, int skip)
{
	for (int i = 0; i < n; i++)
		if (i != skip && (bplot_density_add(p, 0, s->xy[2 * i], s->xy[2 * i + 1]) ||
				  bplot_density_add(p, 1, s->xy[2 * (n + i)], s->xy[2 * (n + i) + 1])))
			return false; /* out of memory: markers need none */
	return bplot_dense(p, 2L * n);
}

/* The queries and keys qk_count counted: one marker each (keys first, so a query on the same cell
 * wins), or with DENSE every cell shaded by how many fall in it (UPPER: the shades' bounds, for
 * the legend). */
static void qk_points(const struct qk_state *s, struct bplot *p, struct canvas *cv, int n, int skip, bool dense,
		      long upper[BPLOT_LEVELS])
{
	struct style sq = canvas_role(cv, ROLE_QUERY), sk = canvas_role(cv, ROLE_KEY);
	if (dense) {
		const struct style st[BPLOT_KINDS + 1] = {sq, sk, canvas_role(cv, ROLE_LABEL)};
		bplot_density_draw(p, cv, st, upper);
		return;
	}
	for (int i = 0; i < n; i++)
		if (i != skip)
			bplot_marker(p, cv, s->xy[2 * (n + i)], s->xy[2 * (n + i) + 1], QK_GLYPH_K, 'x', sk);
	for (int i = 0; i < n; i++)
		if (i != skip)
			bplot_marker(p, cv, s->xy[2 * i], s->xy[2 * i + 1], QK_GLYPH_Q, 'o', sq);
}

/* The legend line at Y: the two kinds' glyphs (or, for a density, their colours and the shades). */
static int qk_legend(struct canvas *cv, int x, int y, int w, bool dense, const long upper[BPLOT_LEVELS])
{
	struct style sq = canvas_role(cv, ROLE_QUERY), sk = canvas_role(cv, ROLE_KEY), lab = canvas_role(cv, ROLE_LABEL);
	int x0 = x;
	if (dense) {
		uint32_t full = bplot_density_glyph(cv, BPLOT_LEVELS - 1);
		canvas_put(cv, x++, y, full, sq);
		x += canvas_text(cv, x, y, -1, " queries  ", lab);
		canvas_put(cv, x++, y, full, sk);
		x += canvas_text(cv, x, y, -1, " keys  ", lab);
		canvas_put(cv, x++, y, full, lab);
		x += canvas_text(cv, x, y, -1, " both  ", lab);
		x += bplot_density_legend(cv, x, y, w - (x - x0), upper, canvas_role(cv, ROLE_DIM));
		return x - x0 + 2; /* and a gap */
	}
	x += canvas_text(cv, x, y, -1, cv->pal->utf8 ? "\xe2\x97\x8f" : "o", sq);
	x += canvas_text(cv, x, y, -1, " query  ", lab);
	x += canvas_text(cv, x, y, -1, cv->pal->utf8 ? "\xe2\x97\x86" : "x", sk);
	x += canvas_text(cv, x, y, -1, " key  ", lab);
	return x - x0;
}

/* The joint PCA of a corpus's token sample. */
static void qk_draw_agg(struct qk_state *s, struct view_ctx *ctx, struct canvas *cv, struct rect area)
{
	const struct aggregate *a = ctx->agg;
	const struct aggsample *smp = &a->sample;
	const char *dot = anaview_dot(cv);
	if (!qk_ensure_agg(s, ctx)) {
		canvas_text(cv, area.x, area.y, area.w, s->error, canvas_role(cv, ROLE_ERROR));
		return;
	}
	int n = s->n, sel = s->sel;
	canvas_printf(cv, area.x, area.y, area.w, canvas_role(cv, ROLE_TITLE),
		      "query/key geometry %s layer %d head %d %s corpus sample: %d tokens of %llu texts %s joint PCA %.0f%% + %.0f%%",
		      dot, smp->layer, smp->head, dot, n, (unsigned long long)a->c.texts, dot, 100 * s->explained[0],
		      100 * s->explained[1]);
	canvas_printf(cv, area.x, area.y + 1, area.w, canvas_role(cv, ROLE_PANEL),
		      "AttentionViz: queries and keys of a uniform sample of <= %d tokens; this head only%s", smp->cap,
		      smp->layer != ctx->layer || smp->head != ctx->head ? " (--pca-head)" : "");
	if (sel >= 0 && sel < n) {
		const struct aggsample_tok *t = &smp->tok[s->order[sel]];
		canvas_printf(cv, area.x, area.y + 2, area.w, canvas_role(cv, ROLE_TOKEN_SEL), "%s (line %llu, token %d): %s%s%s",
			      t->piece, (unsigned long long)t->line + 1, t->token, t->text, t->text_b ? " | " : "",
			      t->text_b ? t->text_b : "");
	} else {
		canvas_text(cv, area.x, area.y + 2, area.w, "no sampled token chosen: up/down choose one, and its text shows here",
			    canvas_role(cv, ROLE_DIM));
	}
	struct bplot p;
	struct rect pr;
	if (qk_plot_begin(s, ctx, cv, area, n, &p, &pr))
		return;
	struct style ssel = canvas_role(cv, ROLE_TOKEN_SEL);
	bplot_axes(&p);
	long upper[BPLOT_LEVELS];
	bool dense = qk_count(s, &p, n, -1);
	qk_points(s, &p, cv, n, -1, dense, upper);
	if (sel >= 0 && sel < n) {
		const char *piece = smp->tok[s->order[sel]].piece;
		bplot_marker(&p, cv, s->xy[2 * (n + sel)], s->xy[2 * (n + sel) + 1], QK_GLYPH_K, 'x', ssel);
		bplot_marker(&p, cv, s->xy[2 * sel], s->xy[2 * sel + 1], QK_GLYPH_Q, 'o', ssel);
		bplot_label(&p, cv, s->xy[2 * sel], s->xy[2 * sel + 1], piece, ssel);
		bplot_label(&p, cv, s->xy[2 * (n + sel)], s->xy[2 * (n + sel) + 1], piece, ssel);
	}
	bplot_flush(&p, cv);
	int ly = pr.y + pr.h, x = area.x;
	x += qk_legend(cv, x, ly, area.w, dense, upper);
	canvas_printf(cv, x, ly, -1, canvas_role(cv, ROLE_DIM), "%s axes through the origin %s not normalised, no links over a corpus",
		      dot, dot);
	canvas_printf(cv, area.x, ly + 1, area.w, canvas_role(cv, ROLE_DIM),
		      "tokens sampled by a hash of (line, token): shards merge to the same sample");
	bplot_free(&p);
}

static bool qk_ensure(struct qk_state *s, const struct view_ctx *ctx)
{
	struct trace tmp;
	const struct trace *t = shapedesc_qk_trace(ctx->trace, ctx->qk_before_rotary, &tmp);
	if (s->valid && !s->c_agg && s->gen == ctx->trace_gen && s->t == ctx->trace && s->layer == ctx->layer &&
	    s->head == ctx->head && s->c_mode == s->mode && s->c_before == ctx->qk_before_rotary)
		return !s->error[0];
	free(s->xy);
	free(s->argmax);
	free(s->order);
	s->xy = NULL, s->argmax = NULL, s->order = NULL, s->c_agg = NULL;
	s->valid = true, s->gen = ctx->trace_gen, s->t = ctx->trace, s->layer = ctx->layer, s->head = ctx->head;
	s->c_mode = s->mode;
	s->c_before = ctx->qk_before_rotary;
	s->error[0] = 0;
	int n = t->n, d = t->head_dim;
	s->n = n;
	float *qk = malloc((size_t)2 * n * d * sizeof *qk); /* [2n][d] queries, then keys */
	s->xy = malloc((size_t)2 * n * 2 * sizeof *s->xy);
	s->argmax = malloc((size_t)n * sizeof *s->argmax);
	struct err e = {{0}};
	if (!qk || !s->xy || !s->argmax) {
		free(qk);
		snprintf(s->error, sizeof s->error, "out of memory");
		return false;
	}
	/* Always compute the measures (they are shown before/after); use the scaled vectors when on. */
	int rc = stats_qknorm(t, ctx->layer, ctx->head, s->mode == QK_CORR ? QKNORM_CORR : QKNORM_NORMS, &s->qn, qk,
			      qk + (size_t)n * d, &e);
	if (rc == 0 && s->mode == QK_RAW) {
		memcpy(qk, trace_q(t, ctx->layer, ctx->head), (size_t)n * d * sizeof *qk);
		memcpy(qk + (size_t)n * d, trace_k(t, ctx->layer, ctx->head), (size_t)n * d * sizeof *qk);
	}
	if (rc == 0)
		rc = pca_2d(qk, 2 * n, d, s->xy, s->explained, &e);
	free(qk);
	if (rc) {
		snprintf(s->error, sizeof s->error, "%s", e.msg);
		return false;
	}
	const float *a = trace_attn(t, ctx->layer, ctx->head);
	for (int i = 0; i < n; i++) {
		int best = 0;
		for (int j = 1; j < n; j++)
			if (a[(size_t)i * n + j] > a[(size_t)i * n + best])
				best = j;
		s->argmax[i] = best;
	}
	return true;
}

static const char *qk_mode_name(enum qk_mode m)
{
	return m == QK_RAW ? "no" : m == QK_NORMS ? "equal mean norms" : "distance tracks dot product";
}


static void qk_draw(void *state, struct view_ctx *ctx, struct canvas *cv, struct rect area)
{
	struct qk_state *s = state;
	struct rect old = canvas_clip(cv, area);
	if (ctx->agg) {
		qk_draw_agg(s, ctx, cv, area);
		canvas_clip(cv, old);
		return;
	}
	if (!anaview_ready(ctx, cv, area)) {
		canvas_clip(cv, old);
		return;
	}
	if (!qk_ensure(s, ctx)) {
		canvas_text(cv, area.x, area.y, area.w, s->error, canvas_role(cv, ROLE_ERROR));
		canvas_clip(cv, old);
		return;
	}
	const struct trace *t = ctx->trace;
	const char *dot = anaview_dot(cv), *arrow = cv->pal->utf8 ? "\xe2\x86\x92" : "->";
	int n = s->n, sel = ctx->token;
	char kv[96], rot[48] = "";
	shapedesc_kv(t, ctx->head, cv->pal->utf8, kv, sizeof kv);
	if (t->rotary)
		snprintf(rot, sizeof rot, "%s %s ", shapedesc_rotary_at(t, ctx->layer, ctx->qk_before_rotary), dot);
	canvas_printf(cv, area.x, area.y, area.w, canvas_role(cv, ROLE_TITLE),
		      "query/key geometry %s layer %d head %d%s%s %s %sjoint PCA %.0f%% + %.0f%% %s normalised: %s",
		      dot, ctx->layer, ctx->head, kv[0] ? ", " : "", kv, dot, rot, 100 * s->explained[0],
		      100 * s->explained[1], dot, qk_mode_name(s->mode));
	/* The measures compare raw with normalised vectors (equal mean norms while the plot is raw). */
	const struct qknorm *q = &s->qn;
	struct style panel = canvas_role(cv, ROLE_PANEL);
	char cb[16], ca[16]; /* a correlation is undefined when nothing varies (one token) */
	snprintf(cb, sizeof cb, isnan(q->corr_before) ? "n/a" : "%.3f", q->corr_before);
	snprintf(ca, sizeof ca, isnan(q->corr_after) ? "n/a" : "%.3f", q->corr_after);
	canvas_printf(cv, area.x, area.y + 1, area.w, panel,
		      "%s c = %.4f   corr(dot, distance) %s %s %s   mean |q| %.3f %s %.3f, |k| %.3f %s %.3f",
		      s->mode == QK_CORR ? "best-correlation" : "equal-norms", q->c, cb, arrow, ca, q->qnorm_before, arrow,
		      q->qnorm_after, q->knorm_before, arrow, q->knorm_after);
	canvas_printf(cv, area.x, area.y + 2, area.w, panel,
		      "query%sargmax-key distance %.3f %s %.3f   (mean over all pairs %.3f %s %.3f; ratio %.2f %s %.2f)", arrow,
		      q->argmax_before, arrow, q->argmax_after, q->meandist_before, arrow, q->meandist_after,
		      q->meandist_before > 0 ? q->argmax_before / q->meandist_before : 0, arrow,
		      q->meandist_after > 0 ? q->argmax_after / q->meandist_after : 0);

	struct bplot p;
	struct rect pr;
	if (qk_plot_begin(s, ctx, cv, area, n, &p, &pr)) {
		canvas_clip(cv, old);
		return;
	}
	struct style sq = canvas_role(cv, ROLE_QUERY), sk = canvas_role(cv, ROLE_KEY);
	struct style ssel = canvas_role(cv, ROLE_TOKEN_SEL);
	p.style[1] = canvas_role(cv, ROLE_DIM);
	p.style[2] = canvas_role(cv, ROLE_SELECTED);
	bplot_axes(&p);
	bool dense = qk_count(s, &p, n, sel); /* then a line per query would cover the plot: only the selected one's */
	for (int i = 0; i < n && !dense; i++) {
		int j = s->argmax[i];
		if (i != sel)
			bplot_line(&p, s->xy[2 * i], s->xy[2 * i + 1], s->xy[2 * (n + j)], s->xy[2 * (n + j) + 1], 1);
	}
	if (sel >= 0 && sel < n) {
		int j = s->argmax[sel];
		bplot_line(&p, s->xy[2 * sel], s->xy[2 * sel + 1], s->xy[2 * (n + j)], s->xy[2 * (n + j) + 1], 2);
	}
	/* The selected token's markers, the others' (or their density), then labels: the selected
	 * token's, then the others in token order (none over a density). */
	long upper[BPLOT_LEVELS];
	qk_points(s, &p, cv, n, sel, dense, upper);
	if (sel >= 0 && sel < n) {
		bplot_marker(&p, cv, s->xy[2 * (n + sel)], s->xy[2 * (n + sel) + 1], QK_GLYPH_K, 'x', ssel);
		bplot_marker(&p, cv, s->xy[2 * sel], s->xy[2 * sel + 1], QK_GLYPH_Q, 'o', ssel);
	}
	for (int pass = 0; pass < (dense ? 1 : 2); pass++)
		for (int i = 0; i < n; i++) {
			if ((pass == 0) != (i == sel))
				continue;
			char lab[256];
			tokstrip_label(t, i, cv->pal->utf8, lab, sizeof lab);
			bplot_label(&p, cv, s->xy[2 * i], s->xy[2 * i + 1], lab, i == sel ? ssel : sq);
			bplot_label(&p, cv, s->xy[2 * (n + i)], s->xy[2 * (n + i) + 1], lab, i == sel ? ssel : sk);
		}
	bplot_flush(&p, cv);
	int ly = pr.y + pr.h;
	int x = area.x;
	x += qk_legend(cv, x, ly, area.w, dense, upper);
	canvas_printf(cv, x, ly, -1, canvas_role(cv, ROLE_DIM),
		      "%s %squery to its highest-attention key %s axes through the origin: PC1 %s, PC2 %s",
		      cv->pal->utf8 ? "\xe2\xa0\xa4\xe2\xa0\xa4" : "..", dense ? "the selected " : "", dot, arrow,
		      cv->pal->utf8 ? "\xe2\x86\x91" : "up");
	char shown[96] = "";
	if (dense)
		snprintf(shown, sizeof shown, "%d points in %d cells: a density, labelled only for the selected token; ",
			 2 * n, p.r.w * p.r.h);
	else if (p.labels_drawn < 2 * n)
		snprintf(shown, sizeof shown, "%d of %d labels shown (the others would overlap)%s", p.labels_drawn, 2 * n,
			 sel >= 0 ? "; " : "");
	char kp[32] = "", kn[32] = "";
	if (ctx->keys) {
		keymap_describe(ctx->keys, ACT_TOKEN_PREV, kp, sizeof kp);
		keymap_describe(ctx->keys, ACT_TOKEN_NEXT, kn, sizeof kn);
	}
	canvas_printf(cv, area.x, ly + 1, area.w, canvas_role(cv, ROLE_DIM), "%s%s (%s and %s choose it)", shown,
		      sel >= 0 ? "the selected token is highlighted" : "no token selected", kp, kn);
	bplot_free(&p);
	canvas_clip(cv, old);
}

static int qk_height(void *state, struct view_ctx *ctx, const struct canvas *cv, int width)
{
	(void)state, (void)ctx, (void)cv, (void)width;
	return QK_TOP + QK_PLOT_ROWS + QK_BOTTOM;
}

static bool qk_act(void *state, struct view_ctx *ctx, enum action a, int count)
{
	struct qk_state *s = state;
	if (ctx->agg) {
		int n = ctx->agg->sample.n, rep = count > 0 ? count : 1;
		switch (a) {
		case ACT_UP:
		case ACT_DOWN:
			if (n > 0 && qk_ensure_agg(s, ctx) && s->n > 0) { /* from none, down starts at the first, up at the last */
				s->sel = s->sel < 0 ? (a == ACT_DOWN ? 0 : s->n - 1)
						    : ((s->sel + (a == ACT_DOWN ? rep : -rep)) % s->n + s->n) % s->n;
				s->sel_line = ctx->agg->sample.tok[s->order[s->sel]].line;
				s->sel_token = ctx->agg->sample.tok[s->order[s->sel]].token;
			}
			return true;
		case ACT_NORMALISE:
			snprintf(ctx->message, sizeof ctx->message, "no normalisation over a corpus sample");
			return true;
		case ACT_OPEN:
			snprintf(ctx->message, sizeof ctx->message, "a corpus aggregate has no heatmap");
			return true;
		default:
			return anaview_nav(ctx, a, count);
		}
	}
	switch (a) {
	case ACT_NORMALISE:
		s->mode = (enum qk_mode)((s->mode + (count > 0 ? count : 1)) % QK_MODES);
		snprintf(ctx->message, sizeof ctx->message, "normalisation: %s", qk_mode_name(s->mode));
		return true;
	case ACT_OPEN:
		ctx->push = &view_heatmap;
		return true;
	default:
		return anaview_token_keys(ctx, a, count) || anaview_nav(ctx, a, count);
	}
}

static void qk_status(void *state, struct view_ctx *ctx, char *buf, size_t n)
{
	struct qk_state *s = state;
	buf[0] = 0;
	if (ctx->agg) {
		snprintf(buf, n, "sample of L%d H%d, %d tokens", ctx->agg->sample.layer, ctx->agg->sample.head, ctx->agg->sample.n);
		return;
	}
	if (!ctx->trace || ctx->trace->n == 0 || !qk_ensure(s, ctx))
		return;
	if (s->mode == QK_RAW)
		snprintf(buf, n, "L%d H%d corr %.3f", ctx->layer, ctx->head, s->qn.corr_before);
	else
		snprintf(buf, n, "L%d H%d c=%.3f corr %.3f", ctx->layer, ctx->head, s->qn.c, s->qn.corr_after);
}

static const enum action qk_actions[] = {
	ACT_NORMALISE, ACT_UP, ACT_DOWN, ACT_OPEN, ACT_HEAD_PREV, ACT_HEAD_NEXT, ACT_LAYER_PREV, ACT_LAYER_NEXT, ACTION_NONE,
};
static const enum action qk_status_keys[] = {ACT_NORMALISE, ACT_HEAD_NEXT, ACT_LAYER_NEXT, ACT_HELP, ACT_BACK,
					     ACTION_NONE};

const struct view view_qk = {
	.name = "qk",
	.title = "Query/key geometry",
	.flags = VIEW_AGGREGATE,
	.brief = "Q/K geometry",
	.open = ACT_VIEW_QK,
	.actions = qk_actions,
	.status_keys = qk_status_keys,
	.create = qk_create,
	.destroy = qk_destroy,
	.draw = qk_draw,
	.height = qk_height,
	.act = qk_act,
	.status = qk_status,
};
