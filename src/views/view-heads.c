/* view-heads.c -- the head finder: a table of every head's pattern scores, sortable by any of them.
 *
 * One row per head (layer, head), one column per score of headscore.h and the head's label in the
 * spirit of Clark et al. Columns that mean nothing for the model are left out: "next" for causal
 * models (always 0), duplicate-token and induction scores for bidirectional ones, and scores no
 * head has on this text (no [SEP], no punctuation). Weight scores
 * are shaded by value. Up/down move through the rows and select that head for every view; left/right
 * pick the column to sort by (the first position keeps layer/head order), r reverses the order,
 * Enter opens the head's heatmap. `--print heads --sort SCORE` prints the table sorted.
 * On a corpus aggregate (ctx->agg) each cell is the mean ± std of the score over the texts and the
 * label that of the means.
 * With a token selected on a causal LM with an output head, a last column "dla" gives each head's direct
 * logit attribution at that token to the token that follows (engine/lens.h: through the frozen final
 * norm, minus the vocabulary's mean), computed for the selected token only and sortable like the rest.
 * On a model with an output head, once ablation is in use (B, E or O pressed: ctx->ablation), a column
 * "ablation" gives each head's change of mean surprisal when it alone is ablated (engine/ablate.h): the
 * explorer computes it in the background while the view is open (ctx->abl_effect, the title counting the
 * heads, Esc stopping it); --print heads with --ablation-effect.
 * Under cross-attention (ctx->cross: an encoder-decoder's decoder, T or --stack cross) the rows are the
 * cross-attention heads and the columns cross-attention's scores (headscore.h: first, punct, entropy,
 * diagonal, monotonic, eos, max); the scores that mean nothing there (previous, same or repeated token,
 * distance) and the dla and ablation columns (of the decoder's self-attention heads) are left out. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/heatdata.h"
#include "corpus/aggregate.h"
#include "engine/ablate.h"
#include "engine/lens.h"
#include "engine/lmhead.h"
#include "views/anaview.h"
#include "draw/tokstrip.h"
#include "trace/headscore.h"
#include "views/registry.h" /* view_heatmap, which it opens */

#define HEADS_COL_W 10  /* a score column, including the space before it */
#define HEADS_AGG_COL_W 14 /* ... holding "mean±std" */
#define HEADS_DLA HS_COUNT /* the direct logit attribution column: not a headscore.h score (a corpus has none) */
#define HEADS_ABL (HS_COUNT + 1) /* the ablation column (ctx->abl_effect): neither */

struct heads_state {
	unsigned gen;            /* ctx->trace_gen the scores were computed for */
	const struct trace *t;   /* ... and the trace itself (a new one may reuse the generation 0) */
	const struct aggregate *agg; /* or the aggregate they came from */
	struct headscore *s;     /* [n_layers * n_heads] layer-major */
	struct headscore *sd;    /* [n_layers * n_heads] standard deviations (aggregate), else NULL */
	int n_heads;             /* heads per layer */
	bool causal;
	bool cross;              /* the scores are cross-attention's (ctx->cross) */
	int *order;              /* [n_layers * n_heads] indices into s, in display order */
	int n;
	int cols[HS_COUNT + 2];  /* the score kinds shown, in order (and HEADS_ABL, HEADS_DLA) */
	int n_cols;
	int sort;                /* index into cols, or -1 for layer/head order */
	bool ascending;
	int row0;                /* first row shown */
	int page;                /* rows shown at the last draw */
	const char *want_sort;   /* a sort score asked for before the first trace (--sort) */
	double *dla;             /* [n_layers * n_heads] direct logit attribution at dla_token, or NULL */
	int dla_token;           /* the token it is for; -1 = none computed */
	char dla_why[160];       /* why there is none at the selected token ("" = no token selected) */
	const double *abl;       /* ctx->abl_effect the columns were laid out with (NULL: no ablation column) */
	int abl_done;            /* its heads done when last sorted */
};

static const char *heads_name(int k)
{
	return k == HEADS_DLA ? "dla" : k == HEADS_ABL ? "ablation" : headscore_name((enum headscore_kind)k);
}

/* Score K of head I (index into s). */
static double heads_value(const struct heads_state *s, int i, int k)
{
	if (k == HEADS_ABL)
		return s->abl ? s->abl[i] : NAN;
	return k == HEADS_DLA ? s->dla ? s->dla[i] : NAN : s->s[i].s[k];
}

/* Sort IDX by the dla or ablation column K as headscore_sort sorts a score: largest first (or smallest), NaN
 * last, ties in layer/head order (an insertion sort: a model has at most a few thousand heads). */
static void heads_sort_dla(const struct heads_state *s, int *idx, int n, int k, bool ascending)
{
	for (int a = 1; a < n; a++) {
		int v = idx[a], b = a;
		double x = heads_value(s, v, k);
		while (b > 0) {
			double y = heads_value(s, idx[b - 1], k);
			bool before = !isnan(x) && (isnan(y) || (ascending ? x < y : x > y) || (x == y && v < idx[b - 1]));
			if (!before)
				break;
			idx[b] = idx[b - 1];
			b--;
		}
		idx[b] = v;
	}
}

static void heads_order(struct heads_state *s)
{
	for (int i = 0; i < s->n; i++)
		s->order[i] = i;
	if (s->sort >= 0 && (s->cols[s->sort] == HEADS_DLA || s->cols[s->sort] == HEADS_ABL))
		heads_sort_dla(s, s->order, s->n, s->cols[s->sort], s->ascending);
	else if (s->sort >= 0)
		headscore_sort(s->s, s->order, s->n, (enum headscore_kind)s->cols[s->sort], s->ascending);
	else if (s->ascending) /* reversed layer/head order */
		for (int i = 0; i < s->n / 2; i++) {
			int tmp = s->order[i];
			s->order[i] = s->order[s->n - 1 - i];
			s->order[s->n - 1 - i] = tmp;
		}
}

/* Drop the scores. */
static void heads_reset(struct heads_state *s)
{
	free(s->s), free(s->sd), free(s->order), free(s->dla);
	s->s = s->sd = NULL, s->order = NULL, s->n = 0, s->dla = NULL, s->dla_token = -1;
}

/* Scores of the trace or the aggregate into s->s (and s->sd); false on OOM. */
static bool heads_compute(struct heads_state *s, const struct view_ctx *ctx)
{
	const struct aggregate *a = ctx->agg;
	int layers = a ? a->model.n_layers : ctx->trace->n_layers;
	s->n_heads = a ? a->model.n_heads : ctx->trace->n_heads;
	s->causal = a ? a->model.causal : ctx->trace->causal;
	s->n = layers * s->n_heads;
	s->s = calloc((size_t)s->n, sizeof *s->s);
	s->sd = a ? calloc((size_t)s->n, sizeof *s->sd) : NULL;
	s->order = calloc((size_t)s->n, sizeof *s->order);
	if (!s->s || !s->order || (a && !s->sd))
		return false;
	s->cross = !a && ctx->cross;
	if (a)
		aggregate_headscores(a, s->s, s->sd);
	else if (s->cross ? headscore_cross_all(ctx->trace, s->s) : headscore_all(ctx->trace, s->s))
		return false;
	return true;
}

/* The dla column for the selected token: computed when the token changed, shown (last) while a token is
 * selected on a model with a causal head; the order follows when it is the sort column. */
static void heads_dla(struct heads_state *s, const struct view_ctx *ctx)
{
	const struct trace *t = ctx->trace;
	int want = ctx->agg || ctx->cross || !t || !ctx->model || lmhead_kind(ctx->model) != LMHEAD_CAUSAL || t->source ? -1 : ctx->token;
	if (want == s->dla_token && (want < 0 || s->dla || s->dla_why[0]))
		return;
	free(s->dla);
	s->dla = NULL;
	s->dla_why[0] = 0;
	s->dla_token = want;
	struct err e = {{0}};
	if (want >= 0 && (s->dla = malloc((size_t)s->n * sizeof *s->dla)) != NULL && lens_dla(ctx->model, t, want, s->dla, &e) < 0) {
		snprintf(s->dla_why, sizeof s->dla_why, "%s", e.msg);
		free(s->dla);
		s->dla = NULL;
	}
	int at = -1; /* the column, last while a token is selected */
	for (int c = 0; c < s->n_cols; c++)
		if (s->cols[c] == HEADS_DLA)
			at = c;
	if (want >= 0 && at < 0)
		s->cols[s->n_cols++] = HEADS_DLA;
	else if (want < 0 && at >= 0) {
		s->n_cols--;
		s->sort = s->sort == at ? -1 : s->sort;
	}
	heads_order(s);
}

/* Recompute the scores when the trace changed; false when there is nothing to show. */
static bool heads_ensure(struct heads_state *s, const struct view_ctx *ctx)
{
	const struct trace *t = ctx->trace;
	if (!ctx->agg && (!t || t->n == 0))
		return false;
	const double *abl = ctx->agg || ctx->cross ? NULL : ctx->abl_effect;
	if (s->s && s->gen == ctx->trace_gen && s->t == t && s->agg == ctx->agg && s->abl == abl &&
	    s->cross == (!ctx->agg && ctx->cross)) {
		heads_dla(s, ctx);
		if (abl && s->abl_done != ctx->abl_effect_done) { /* more heads of the ablation column are in */
			s->abl_done = ctx->abl_effect_done;
			heads_order(s);
		}
		return true;
	}
	int keep = s->sort >= 0 ? s->cols[s->sort] : -1;
	heads_reset(s);
	if (!heads_compute(s, ctx)) {
		heads_reset(s);
		return false;
	}
	bool comparing = ctx->compare && t && !ctx->agg; /* a corpus aggregate has no second text */
	if (comparing)
		headscore_changed(t, ctx->compare, s->s);
	s->n_cols = 0;
	if (comparing) /* comparing two texts: what changed comes first */
		s->cols[s->n_cols++] = HS_CHANGED;
	for (int k = 0; k < HS_COUNT; k++) {
		if (k == HS_CHANGED)
			continue;
		if (k == HS_NEXT && s->causal)
			continue;
		if ((k == HS_DUP || k == HS_INDUCTION) && !s->causal && !s->cross)
			continue;
		if (s->cross ? !headscore_for_cross(k) : headscore_cross_only(k))
			continue;
		bool any = false; /* a score undefined for every head (no [SEP] in the text): no column */
		for (int i = 0; i < s->n && !any; i++)
			any = !isnan(s->s[i].s[k]);
		if (any)
			s->cols[s->n_cols++] = k;
	}
	s->abl = abl;
	s->abl_done = ctx->abl_effect_done;
	if (abl)
		s->cols[s->n_cols++] = HEADS_ABL;
	s->dla_token = -1;
	if (s->want_sort) {
		keep = !strcmp(s->want_sort, "dla") ? HEADS_DLA : !strcmp(s->want_sort, "ablation") ? HEADS_ABL
			: headscore_by_name(s->want_sort);
		s->want_sort = NULL;
	}
	s->sort = -1;
	for (int c = 0; c < s->n_cols; c++)
		if (s->cols[c] == keep)
			s->sort = c;
	s->gen = ctx->trace_gen;
	s->t = t;
	s->agg = ctx->agg;
	int dla_sort = keep == HEADS_DLA; /* sorted by dla before: again once the column is back */
	heads_dla(s, ctx);
	if (dla_sort)
		for (int c = 0; c < s->n_cols; c++)
			if (s->cols[c] == HEADS_DLA)
				s->sort = c;
	heads_order(s);
	return true;
}

static void *heads_create(struct view_ctx *ctx)
{
	struct heads_state *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->sort = -1;
	s->want_sort = ctx->sort;
	s->dla_token = -1;
	return s;
}

static void heads_destroy(void *state)
{
	struct heads_state *s = state;
	heads_reset(s);
	free(s);
}

/* Display row of the selected head. */
static int heads_cursor(const struct heads_state *s, const struct view_ctx *ctx)
{
	int want = ctx->layer * s->n_heads + ctx->head;
	for (int i = 0; i < s->n; i++)
		if (s->order[i] == want)
			return i;
	return 0;
}

/* A cell: the score, or on an aggregate "mean±std" (PM the plus-minus sign); "-" when undefined. */
static void heads_format(int k, double v, double sd, const char *pm, char *buf, size_t n)
{
	const char *f = k == HS_DISTANCE ? "%.2f" : "%.3f";
	if (isnan(v)) {
		snprintf(buf, n, "-");
		return;
	}
	int w = snprintf(buf, n, f, v);
	if (pm && w >= 0 && (size_t)w < n) {
		snprintf(buf + w, n - (size_t)w, "%s", pm);
		w += (int)strlen(buf + w);
		if ((size_t)w < n)
			snprintf(buf + w, n - (size_t)w, k == HS_DISTANCE ? "%.2f" : "%.3f", isnan(sd) ? 0 : sd);
	}
}

/* Rows under the table that explain the columns. */
static int heads_footer_rows(const struct heads_state *s)
{
	return 1 + s->n_cols + 1;
}

static void heads_draw(void *state, struct view_ctx *ctx, struct canvas *cv, struct rect area)
{
	struct heads_state *s = state;
	struct rect old = canvas_clip(cv, area);
	if (!ctx->agg && !ctx->cross && !ctx->print && ctx->ablation && ctx->trace && !ctx->trace->source && ctx->model &&
	    lmhead_kind(ctx->model) != LMHEAD_NONE)
		ctx->abl_effect_wanted = true; /* ablation in use: the explorer computes the column meanwhile */
	if ((!ctx->agg && !anaview_ready(ctx, cv, area)) || !heads_ensure(s, ctx)) {
		canvas_clip(cv, old);
		return;
	}
	const char *dot = anaview_dot(cv), *pm = s->sd ? (cv->pal->utf8 ? "\xc2\xb1" : "+-") : NULL;
	int col_w = s->sd ? HEADS_AGG_COL_W : HEADS_COL_W;
	char title[256], over[64] = "";
	if (s->sd)
		snprintf(over, sizeof over, " %s mean %s std over %llu texts", dot, pm,
			 (unsigned long long)ctx->agg->c.texts);
	const struct trace *tr = ctx->trace;
	if (s->cross) { /* which source token eos reads */
		int end = headscore_cross_end(tr);
		char lab[32] = "none";
		if (end >= 0)
			tokstrip_label(tr->encoder, end, cv->pal->utf8, lab, sizeof lab);
		snprintf(over, sizeof over, " %s cross-attention %s source end token %s", dot, dot, lab);
	}
	if (!s->sd && !s->cross && tr && tr->sinks && tr->n > 0) { /* gpt-oss: the weight scores are shares of rows summing to < 1 */
		double share = 0;
		for (int i = 0; i < tr->n; i++)
			share += heat_sink_share(tr, ctx->layer, ctx->head, HEAT_HEAD, i);
		snprintf(over, sizeof over, " %s sink takes %.1f%% of L%d H%d's rows", dot, 100.0 * share / tr->n, ctx->layer,
			 ctx->head);
	}
	snprintf(title, sizeof title, "head finder %s %d heads%s %s sorted by %s%s", dot, s->n, over, dot,
		 s->sort >= 0 ? heads_name(s->cols[s->sort]) : "layer/head",
		 s->sort >= 0 ? (s->ascending ? ", smallest first" : ", largest first") : (s->ascending ? ", reversed" : ""));
	if (s->abl && ctx->abl_effect_running)
		snprintf(title + strlen(title), sizeof title - strlen(title), " %s ablation column: %d of %d heads (Esc stops)",
			 dot, ctx->abl_effect_done, ctx->abl_effect_total);
	canvas_text(cv, area.x, area.y, area.w, title, canvas_role(cv, ROLE_TITLE));

	int head_w = snprintf(NULL, 0, "L%d H%d", s->n / s->n_heads - 1, s->n_heads - 1) + 2;
	int y = area.y + 1;
	struct style lab = canvas_role(cv, ROLE_LABEL), sel = canvas_role(cv, ROLE_LABEL_SEL);
	canvas_text(cv, area.x + 2, y, head_w - 2, "head", s->sort < 0 ? sel : lab);
	for (int c = 0; c < s->n_cols; c++) {
		const char *name = heads_name(s->cols[c]);
		int w = (int)strlen(name);
		canvas_text(cv, area.x + head_w + c * col_w + col_w - w, y, w, name, c == s->sort ? sel : lab);
	}
	int label_x = area.x + head_w + s->n_cols * col_w + 2;
	canvas_text(cv, label_x, y, -1, "label", lab);

	int footer = heads_footer_rows(s);
	int rows = ctx->print ? s->n : area.h - 2 - footer;
	if (rows < 3 && !ctx->print)
		rows = area.h - 2, footer = 0; /* a small terminal: the table first */
	if (rows < 1)
		rows = 1;
	if (rows > s->n)
		rows = s->n;
	s->page = rows;
	int cur = heads_cursor(s, ctx);
	if (cur < s->row0)
		s->row0 = cur;
	if (cur >= s->row0 + rows)
		s->row0 = cur - rows + 1;
	if (s->row0 > s->n - rows)
		s->row0 = s->n - rows;
	if (s->row0 < 0 || ctx->print)
		s->row0 = 0;
	for (int r = 0; r < rows; r++) {
		int i = s->row0 + r, yy = y + 1 + r;
		const struct headscore *h = &s->s[s->order[i]];
		bool is_sel = h->layer == ctx->layer && h->head == ctx->head;
		char buf[64];
		snprintf(buf, sizeof buf, "L%d H%d", h->layer, h->head);
		if (is_sel)
			canvas_put(cv, area.x, yy, canvas_glyph(cv, GLYPH_RIGHT), canvas_role(cv, ROLE_SELECTED));
		canvas_text(cv, area.x + 2, yy, head_w - 2, buf, is_sel ? sel : canvas_role(cv, ROLE_TEXT));
		for (int c = 0; c < s->n_cols; c++) {
			int k = s->cols[c];
			double v = heads_value(s, s->order[i], k);
			heads_format(k, v, s->sd ? s->sd[s->order[i]].s[k] : NAN, pm, buf, sizeof buf);
			if (k == HEADS_ABL && !isnan(v))
				snprintf(buf, sizeof buf, "%+.3f", v);
			int w = canvas_text_width(cv, buf), x = area.x + head_w + c * col_w + col_w - w;
			bool weight = k != HS_ENTROPY && k != HS_DISTANCE && k != HEADS_DLA && k != HEADS_ABL;
			if (weight && !isnan(v) && cv->pal->depth != DEPTH_MONO)
				canvas_heat_text(cv, x, yy, w, (float)v, buf);
			else
				canvas_text(cv, x, yy, w, buf, canvas_role(cv, isnan(v) ? ROLE_DIM : ROLE_TEXT));
		}
		canvas_text(cv, label_x, yy, -1, h->label, canvas_role(cv, ROLE_PANEL));
	}
	if (s->row0 > 0)
		canvas_put(cv, area.x, y + 1, canvas_glyph(cv, GLYPH_UP), canvas_role(cv, ROLE_DIM));
	if (s->row0 + rows < s->n)
		canvas_put(cv, area.x, y + rows, canvas_glyph(cv, GLYPH_DOWN), canvas_role(cv, ROLE_DIM));

	/* What the columns mean. */
	if (footer > 0) {
		int fy = y + 1 + rows + 1;
		for (int c = 0; c < s->n_cols; c++, fy++) {
			int k = s->cols[c];
			if (k == HEADS_DLA)
				canvas_printf(cv, area.x + 2, fy, area.w - 2, canvas_role(cv, ROLE_DIM),
					      "%-10s %s", "dla", s->dla ? "direct logit attribution at the selected token to the next one "
					      "(frozen final norm, minus the vocabulary mean)" : s->dla_why);
			else if (k == HEADS_ABL)
				canvas_printf(cv, area.x + 2, fy, area.w - 2, canvas_role(cv, ROLE_DIM),
					      "%-10s change of mean surprisal (nats, ablated - clean) with the head alone %s-ablated "
					      "in the clean run%s%s", "ablation",
					      ctx->ablation ? ablation_mode_name(ctx->ablation->mode) : "zero",
					      ctx->abl_effect_note && ctx->abl_effect_note[0] ? ": " : "",
					      ctx->abl_effect_note ? ctx->abl_effect_note : "");
			else if (s->cross && (k == HS_FIRST || k == HS_PUNCT)) /* the keys are the source's tokens */
				canvas_printf(cv, area.x + 2, fy, area.w - 2, canvas_role(cv, ROLE_DIM), "%-10s attention to the source's %s",
					      headscore_name(k), k == HS_FIRST ? "first token" : "punctuation");
			else
				canvas_printf(cv, area.x + 2, fy, area.w - 2, canvas_role(cv, ROLE_DIM), "%-10s %s", headscore_name(k),
					      headscore_help(k));
		}
		canvas_text(cv, area.x + 2, fy, area.w - 2,
			    "label      the strongest weight score >= 0.5, else \"broad\" when entropy is >= 75% of its maximum",
			    canvas_role(cv, ROLE_DIM));
	}
	canvas_clip(cv, old);
}

static int heads_height(void *state, struct view_ctx *ctx, const struct canvas *cv, int width)
{
	(void)cv, (void)width;
	struct heads_state *s = state;
	if (!heads_ensure(s, ctx))
		return 1;
	return 2 + s->n + 1 + heads_footer_rows(s);
}

static bool heads_act(void *state, struct view_ctx *ctx, enum action a, int count)
{
	struct heads_state *s = state;
	if (!heads_ensure(s, ctx))
		return true;
	int rep = count > 0 ? count : 1, cur = heads_cursor(s, ctx), page = s->page > 1 ? s->page : 1;
	switch (a) {
	case ACT_UP: cur -= rep; break;
	case ACT_DOWN: cur += rep; break;
	case ACT_PAGE_UP: cur -= page * rep; break;
	case ACT_PAGE_DOWN: cur += page * rep; break;
	case ACT_FIRST: cur = count >= 0 ? count : 0; break;
	case ACT_LAST: cur = count >= 0 ? count : s->n - 1; break;
	case ACT_LEFT:
	case ACT_RIGHT: {
		/* Positions -1 (layer/head order), 0 .. n_cols-1, cycling. */
		int m = s->n_cols + 1, p = s->sort + 1;
		p = ((p + (a == ACT_RIGHT ? rep : -rep)) % m + m) % m;
		s->sort = p - 1;
		s->ascending = false;
		heads_order(s);
		snprintf(ctx->message, sizeof ctx->message, "sorted by %s",
			 s->sort >= 0 ? heads_name(s->cols[s->sort]) : "layer/head");
		return true;
	}
	case ACT_REVERSE:
		s->ascending = !s->ascending;
		heads_order(s);
		return true;
	case ACT_OPEN:
		if (ctx->agg)
			snprintf(ctx->message, sizeof ctx->message, "a corpus aggregate has no heatmap");
		else
			ctx->push = &view_heatmap;
		return true;
	default:
		return anaview_nav(ctx, a, count);
	}
	cur = cur < 0 ? 0 : cur >= s->n ? s->n - 1 : cur;
	const struct headscore *h = &s->s[s->order[cur]];
	ctx->layer = h->layer;
	ctx->head = h->head;
	return true;
}

static void heads_status(void *state, struct view_ctx *ctx, char *buf, size_t n)
{
	struct heads_state *s = state;
	buf[0] = 0;
	if (!heads_ensure(s, ctx))
		return;
	const struct headscore *h = &s->s[ctx->layer * s->n_heads + ctx->head];
	snprintf(buf, n, "L%d H%d %s", h->layer, h->head, h->label[0] ? h->label : "unlabelled");
}

static const enum action heads_actions[] = {
	ACT_UP, ACT_DOWN, ACT_PAGE_UP, ACT_PAGE_DOWN, ACT_FIRST, ACT_LAST, ACT_LEFT, ACT_RIGHT, ACT_REVERSE,
	ACT_OPEN, ACT_HEAD_PREV, ACT_HEAD_NEXT, ACT_LAYER_PREV, ACT_LAYER_NEXT, ACTION_NONE,
};
static const enum action heads_status_keys[] = {ACT_OPEN, ACT_REVERSE, ACT_HELP, ACT_BACK, ACTION_NONE};

const struct view view_heads = {
	.name = "heads",
	.title = "Head finder",
	.flags = VIEW_AGGREGATE | VIEW_CROSS,
	.brief = "head finder",
	.open = ACT_VIEW_HEADS,
	.actions = heads_actions,
	.status_keys = heads_status_keys,
	.create = heads_create,
	.destroy = heads_destroy,
	.draw = heads_draw,
	.height = heads_height,
	.act = heads_act,
	.status = heads_status,
};
