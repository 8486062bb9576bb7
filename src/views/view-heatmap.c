/* view-heatmap.c -- one head's attention matrix in full: queries down the left, keys along the top.
 *
 * Each matrix cell is a coloured block (or a shade character in monochrome), optionally with the
 * weight written in it. A cell cursor moves over the matrix; its row is the selected token. A side
 * panel (or, on narrow terminals, two lines below) gives the exact weight under the cursor, the
 * row's top keys and the column sum. Toggles: mean over the layer's heads, mean over all layers,
 * numbers in cells; the colour scale and hiding special tokens are shared with the other views.
 * Keys a query cannot see (causal masking, a sliding window) are blank and take no rank; the title
 * names the key/value head a query head reads (GQA) and the layer's window; with specials hidden the
 * panel says how much of the row's weight was left to renormalise (little, under a BOS sink) and
 * ranks only the keys the query may see. A long text's matrix zooms out: each cell then shows the
 * max (or mean) of a block of zoom x zoom token pairs, the title names the zoom and the pooling, and
 * the cursor still stands on one token pair, whose exact weight the panel and status give. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "views/anaview.h"
#include "analysis/valnorm.h"
#include "trace/compare.h"
#include "views/marks.h"
#include "trace/shapedesc.h"
#include "draw/chart.h"
#include "draw/tokstrip.h"
#include "views/view.h"

#define HM_LABEL_MAX 12     /* columns of a query label */
#define HM_VLABEL_MAX 8     /* rows of a vertical key label */
#define HM_PANEL_W 30

struct heatmap_state {
	enum heat_agg agg;
	bool numbers;
	int cur_row, cur_col;   /* cursor as token indices into the trace */
	int row0, col0;         /* first visible matrix row and column (positions in m) */
	int page_rows;          /* matrix rows visible at the last draw */
	int zoom;               /* token pairs per cell side: 1, 2, 4, ... (1 = one cell per pair) */
	bool recentre;          /* the zoom changed: put the cursor in the middle at the next draw */
	enum heat_pool pool;    /* how a zoomed cell aggregates its block */
	/* The matrix shown, rebuilt when what it depends on changes. */
	unsigned c_gen;         /* ctx->trace_gen the cache was built for */
	int c_layer, c_head;
	enum heat_agg c_agg;
	bool c_hide;
	enum heat_scale c_scale;
	bool valid;
	struct heatmat m;
	float *pos;             /* [m.rows][m.cols] colour positions of m.v under the scale */
	/* Comparing two texts (ctx->compare) of the same length: m.v holds B − A, pos its place on
	 * the diverging ramp, va and vb the two weights. Of different lengths: OTHER draws B beside. */
	bool diff;
	float diff_range;       /* the ramp's ends ±diff_range: the largest |B − A| shown, or 1 (fixed) */
	bool c_fixed;           /* ctx->diff_fixed the cache was built for */
	float *va, *vb;         /* [m.rows][m.cols] */
	struct heatmap_state *other;
};

struct hm_layout {
	int qw;           /* columns of the query labels, including a space */
	int cw;           /* columns per matrix cell */
	int label_h;      /* rows of key labels */
	bool vertical;    /* key labels written downwards */
	int panel_w;      /* side panel width (0: the panel goes below) */
	int below;        /* rows below the matrix for the panel */
	int vis_rows, vis_cols;
	int mx, my;       /* matrix origin, relative to the area */
};

static void *heatmap_create(struct view_ctx *ctx)
{
	struct heatmap_state *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->agg = HEAT_HEAD;
	s->zoom = 1;
	s->pool = HEAT_POOL_MAX;
	s->cur_row = ctx->token >= 0 ? ctx->token : 0;
	s->cur_col = s->cur_row;
	return s;
}

static void heatmap_destroy(void *state)
{
	struct heatmap_state *s = state;
	if (!s)
		return;
	heatmat_free(&s->m);
	free(s->pos);
	free(s->va);
	free(s->vb);
	heatmap_destroy(s->other);
	free(s);
}

/* Turn s->m (text A) into B − A of the same-length text B: keep both weights, diverging positions.
 * False on OOM. */
static bool hm_diff(struct heatmap_state *s, struct view_ctx *ctx)
{
	struct heatmat mb;
	size_t cells = (size_t)s->m.rows * s->m.cols;
	if ((ctx->cross ? heatmat_build_cross : heatmat_build)(ctx->compare, ctx->layer, ctx->head, s->agg, ctx->hide_special,
							       &mb))
		return false;
	s->va = malloc((cells ? cells : 1) * sizeof *s->va);
	s->vb = malloc((cells ? cells : 1) * sizeof *s->vb);
	if (!s->va || !s->vb) {
		heatmat_free(&mb);
		return false;
	}
	memcpy(s->va, s->m.v, cells * sizeof *s->va);
	if (ctx->cross) /* decoder rows matched as texts are, the sources' columns by position */
		heatmat_diff_rect(&s->m, &mb, compare_rows(ctx->trace, ctx->compare),
				  compare_rows(ctx->trace->encoder, ctx->compare->encoder), s->m.v);
	else
		heatmat_diff(&s->m, &mb, compare_rows(ctx->trace, ctx->compare), s->m.v);
	for (size_t k = 0; k < cells; k++)
		s->vb[k] = s->va[k] + s->m.v[k];
	heatmat_free(&mb);
	memcpy(s->pos, s->m.v, cells * sizeof *s->pos);
	heatmat_mask(&s->m, s->pos);
	float largest = heatdata_absmax(s->pos, cells);
	s->diff_range = ctx->diff_fixed || largest <= 0 ? 1 : largest;
	heatdata_diverging(s->pos, (int)cells, s->diff_range, s->pos);
	s->diff = true;
	return true;
}

/* Two texts are drawn side by side, not as B - A, when their lengths differ: the rows' (the target's under
 * cross-attention) or, under cross-attention, the columns' (the sources'). */
static bool hm_side_by_side_needed(const struct view_ctx *ctx)
{
	const struct trace *t = ctx->trace, *b = ctx->compare;
	return b->n != t->n || (ctx->cross && b->encoder && t->encoder && b->encoder->n != t->encoder->n);
}

/* Make s->m and s->pos match the context; false when there is nothing to show. */
static bool hm_ensure(struct heatmap_state *s, struct view_ctx *ctx)
{
	const struct trace *t = ctx->trace;
	if (!t || t->n == 0)
		return false;
	if (s->valid && s->c_gen == ctx->trace_gen && s->c_layer == ctx->layer && s->c_head == ctx->head && s->c_agg == s->agg &&
	    s->c_hide == ctx->hide_special && s->c_scale == ctx->scale && s->c_fixed == ctx->diff_fixed)
		return s->m.rows > 0;
	heatmat_free(&s->m);
	free(s->pos);
	free(s->va);
	free(s->vb);
	s->pos = s->va = s->vb = NULL;
	s->valid = s->diff = false;
	if ((ctx->cross ? heatmat_build_cross : heatmat_build)(t, ctx->layer, ctx->head, s->agg, ctx->hide_special, &s->m))
		return false;
	s->pos = malloc((s->m.rows ? (size_t)s->m.rows * s->m.cols : 1) * sizeof *s->pos);
	if (!s->pos) {
		heatmat_free(&s->m);
		return false;
	}
	memcpy(s->pos, s->m.v, (size_t)s->m.rows * s->m.cols * sizeof *s->pos);
	heatmat_mask(&s->m, s->pos);
	heatdata_scale(s->pos, s->m.rows, s->m.cols, ctx->scale, s->pos);
	if (ctx->compare && !hm_side_by_side_needed(ctx) && !hm_diff(s, ctx)) {
		heatmat_free(&s->m);
		return false;
	}
	s->c_gen = ctx->trace_gen;
	s->c_layer = ctx->layer;
	s->c_head = ctx->head;
	s->c_agg = s->agg;
	s->c_hide = ctx->hide_special;
	s->c_scale = ctx->scale;
	s->c_fixed = ctx->diff_fixed;
	s->valid = true;
	return s->m.rows > 0;
}

/* The cursor as positions in m (moving it off hidden tokens). */
static void hm_cursor(struct heatmap_state *s, struct view_ctx *ctx, int *r, int *c)
{
	if (ctx->token >= 0)
		s->cur_row = ctx->token;
	*r = heatmat_find_row(&s->m, s->cur_row);
	*c = heatmat_find_col(&s->m, s->cur_col);
	if (*r < 0) { /* hidden or gone: the nearest shown token */
		*r = 0;
		for (int i = 0; i < s->m.rows; i++)
			if (s->m.row_tok[i] <= s->cur_row)
				*r = i;
	}
	if (*c < 0) {
		*c = 0;
		for (int i = 0; i < s->m.cols; i++)
			if (s->m.col_tok[i] <= s->cur_col)
				*c = i;
	}
}

/* Cells along a side of N rows (or columns) at zoom Z. */
static int hm_cells(int n, int z)
{
	return (n + z - 1) / z;
}

/* Cell (I,J) of X[m.rows][m.cols] (m.v or pos) at the zoom: the value itself at zoom 1, else the
 * max or mean of its block over the keys the queries may see (NaN when it has none). */
static float hm_block(const struct heatmap_state *s, const float *x, int i, int j)
{
	int z = s->zoom, rows = s->m.rows, cols = s->m.cols;
	if (z == 1)
		return x[(size_t)i * cols + j];
	double acc = s->pool == HEAT_POOL_MAX ? -INFINITY : 0;
	int count = 0;
	for (int r = i * z; r < (i + 1) * z && r < rows; r++)
		for (int c = j * z; c < (j + 1) * z && c < cols; c++) {
			size_t k = (size_t)r * cols + c;
			if (s->pos[k] != s->pos[k]) /* masked */
				continue;
			acc = s->pool == HEAT_POOL_MAX ? (x[k] > acc ? x[k] : acc) : acc + x[k];
			count++;
		}
	return count ? (float)(s->pool == HEAT_POOL_MAX ? acc : acc / count) : NAN;
}

static struct hm_layout hm_layout_at(struct heatmap_state *s, struct view_ctx *ctx, const struct canvas *cv,
				     int width, int height);

/* The layout; --print zooms out until every column fits the width. */
static struct hm_layout hm_layout(struct heatmap_state *s, struct view_ctx *ctx, const struct canvas *cv,
				  int width, int height)
{
	struct hm_layout lo = hm_layout_at(s, ctx, cv, width, height);
	while (ctx->print && !s->numbers && lo.vis_cols < hm_cells(s->m.cols, s->zoom) && s->zoom < s->m.cols) {
		s->zoom *= 2;
		lo = hm_layout_at(s, ctx, cv, width, height);
	}
	return lo;
}

static struct hm_layout hm_layout_at(struct heatmap_state *s, struct view_ctx *ctx, const struct canvas *cv,
				     int width, int height)
{
	struct hm_layout lo;
	const struct trace *t = ctx->trace;
	int maxlab = 1, z = s->zoom, rows = hm_cells(s->m.rows, z), cols = hm_cells(s->m.cols, z);
	for (int i = 0; i < s->m.rows && z == 1; i++) {
		char lab[256];
		tokstrip_label(t, s->m.row_tok[i], cv->pal->utf8, lab, sizeof lab);
		int w = canvas_text_width(cv, lab);
		if (w > maxlab)
			maxlab = w;
	}
	if (z > 1) /* zoomed: a cell is labelled with the index of its first token */
		maxlab = snprintf(NULL, 0, "%d", t->n);
	lo.qw = (maxlab < HM_LABEL_MAX ? maxlab : HM_LABEL_MAX) + 1;
	if (lo.qw < 3)
		lo.qw = 3;
	lo.cw = s->numbers ? 4 : 2;
	lo.panel_w = width >= lo.qw + lo.cw * (cols < 8 ? cols : 8) + 1 + HM_PANEL_W ? HM_PANEL_W : 0;
	lo.below = lo.panel_w ? 0 : 2;
	int avail = width - lo.qw - (lo.panel_w ? lo.panel_w + 1 : 0);
	if (ctx->print && !s->numbers && avail / lo.cw < cols)
		lo.cw = 1; /* print everything rather than cut columns */
	lo.vis_cols = avail / lo.cw;
	if (lo.vis_cols > cols)
		lo.vis_cols = cols;
	if (lo.vis_cols < 1)
		lo.vis_cols = 1;
	lo.vertical = maxlab > lo.cw;
	lo.label_h = lo.vertical ? (maxlab < HM_VLABEL_MAX ? maxlab : HM_VLABEL_MAX) : 1;
	if (height >= 0) {
		/* Leave at least 3 matrix rows on a small terminal. */
		int room = height - 1 - lo.below - 3;
		if (lo.label_h > room)
			lo.label_h = room > 1 ? room : 1;
	}
	lo.mx = lo.qw;
	lo.my = 1 + lo.label_h;
	lo.vis_rows = height >= 0 ? height - lo.my - lo.below : rows;
	if (lo.vis_rows > rows)
		lo.vis_rows = rows;
	if (lo.vis_rows < 1)
		lo.vis_rows = 1;
	return lo;
}

static void hm_title(struct heatmap_state *s, struct view_ctx *ctx, char *buf, size_t n, bool utf8)
{
	const struct trace *t = ctx->trace;
	const char *dot = utf8 ? "\xc2\xb7" : "-";
	char what[160], kv[96], win[32], wtext[80] = "", alibi[48];
	shapedesc_window(t, ctx->layer, utf8, win, sizeof win);
	if (win[0] && s->agg != HEAT_ALL_MEAN)
		snprintf(wtext, sizeof wtext, ", window %s", win + 1);
	if (shapedesc_chunk(t, ctx->layer, win, sizeof win)[0] && s->agg != HEAT_ALL_MEAN) /* Llama 4 */
		snprintf(wtext + strlen(wtext), sizeof wtext - strlen(wtext), ", chunks of %s", win + 1);
	if (shapedesc_alibi(t, s->agg == HEAT_HEAD ? ctx->head : -1, alibi, sizeof alibi)[0])
		snprintf(wtext + strlen(wtext), sizeof wtext - strlen(wtext), ", %s", alibi);
	shapedesc_kv(t, ctx->head, utf8, kv, sizeof kv);
	if (s->agg == HEAT_HEAD)
		snprintf(what, sizeof what, "layer %d head %d%s%s%s", ctx->layer, ctx->head, kv[0] ? ", " : "", kv, wtext);
	else if (s->agg == HEAT_LAYER_MEAN)
		snprintf(what, sizeof what, "layer %d, mean of %d heads%s", ctx->layer, t->n_heads, wtext);
	else
		snprintf(what, sizeof what, "mean of all %d heads in %d layers", t->n_layers * t->n_heads, t->n_layers);
	char scale[80];
	if (s->diff) /* the ends of the diverging ramp: the largest change shown, or the fixed ±1 */
		snprintf(scale, sizeof scale, "B - A (second text minus first) on %s%.2g%s", utf8 ? "\xc2\xb1" : "+-",
			 s->diff_range, ctx->diff_fixed ? " (fixed)" : " (largest change)");
	else
		snprintf(scale, sizeof scale, "%s scale", heatdata_scale_name(ctx->scale));
	if (ctx->cross) /* rows and columns are different texts */
		snprintf(buf, n, "cross-attention %s %s target rows %s source columns %s %s", what, dot,
			 utf8 ? "\xc3\x97" : "x", dot, scale);
	else
		snprintf(buf, n, "%s %s queries %s, keys %s %s %s", what, dot, utf8 ? "\xe2\x86\x93" : "down",
			 utf8 ? "\xe2\x86\x92" : "across", dot, scale);
	if (ctx->hide_special)
		snprintf(buf + strlen(buf), n - strlen(buf), ", specials hidden (rows renormalised)");
	if (s->zoom > 1)
		snprintf(buf + strlen(buf), n - strlen(buf), " %s zoom 1:%d (cell = %s of %d%s%d)", dot, s->zoom,
			 s->pool == HEAT_POOL_MAX ? "max" : "mean", s->zoom, utf8 ? "\xc3\x97" : "x", s->zoom);
}

/* The colour bar after the title, when it fits: the scale's ends, or B − A's. CV's palette is
 * already the diverging one when comparing. */
static void hm_colour_bar(const struct heatmap_state *s, const struct view_ctx *ctx, struct canvas *cv, int x, int y,
			  int maxw)
{
	char lo[32], hi[32];
	if (s->diff) {
		snprintf(lo, sizeof lo, "-%.2g", s->diff_range);
		snprintf(hi, sizeof hi, "+%.2g", s->diff_range);
	} else {
		const char *l, *h;
		heatdata_scale_ends(ctx->scale, &l, &h);
		snprintf(lo, sizeof lo, "%s", l);
		snprintf(hi, sizeof hi, "%s", h);
	}
	chart_colour_bar(cv, x, y, maxw, lo, hi, false);
}

/* A token label: selected, under the cursor, marked (underlined), special or NORMAL. */
static struct style token_style(const struct canvas *cv, const struct view_ctx *ctx, int tok, int cursor,
				enum theme_role normal)
{
	struct style st = canvas_role(cv, tok == ctx->token ? ROLE_TOKEN_SEL : tok == cursor ? ROLE_LABEL_SEL
					  : ctx->trace->special[tok] ? ROLE_SPECIAL : normal);
	if (marks_has(ctx, tok))
		st.attr |= ATTR_UNDERLINE | ATTR_BOLD;
	return st;
}

/* A key's label: as token_style, but under cross-attention a key is a source token (nothing selects it). */
static struct style key_style(const struct canvas *cv, const struct view_ctx *ctx, int tok, int cursor)
{
	if (!ctx->cross)
		return token_style(cv, ctx, tok, cursor, ROLE_KEY);
	return canvas_role(cv, tok == cursor ? ROLE_LABEL_SEL : view_key_trace(ctx)->special[tok] ? ROLE_SPECIAL : ROLE_KEY);
}

static void hm_key_label(struct canvas *cv, const struct hm_layout *lo, int x, int y, const char *lab,
			 struct style st)
{
	if (!lo->vertical) {
		canvas_text(cv, x, y + lo->label_h - 1, lo->cw, lab, st);
		return;
	}
	/* One character per row, downwards; an ellipsis when it is longer than the rows. */
	int total = 0;
	size_t n = strlen(lab);
	for (size_t i = 0; i < n; total++) {
		uint32_t cp;
		i += (size_t)utf8_next(lab + i, n - i, &cp);
	}
	int row = 0;
	for (size_t i = 0; i < n && row < lo->label_h;) {
		uint32_t cp;
		i += (size_t)utf8_next(lab + i, n - i, &cp);
		if (row == lo->label_h - 1 && total > lo->label_h)
			cp = canvas_glyph(cv, GLYPH_ELLIPSIS);
		canvas_put(cv, x, y + row, cp, st);
		row++;
	}
}

static void hm_format(float p, char *buf, size_t n)
{
	if (p <= -0.005f) /* a difference B − A */
		snprintf(buf, n, p <= -0.995f ? "-1." : "-%02d", (int)(-p * 100 + 0.5f));
	else if (p < 0)
		snprintf(buf, n, ".00");
	else if (p >= 0.995f)
		snprintf(buf, n, "1.0");
	else
		snprintf(buf, n, ".%02d", (int)(p * 100 + 0.5f));
}

struct ranked_key {
	float p;
	int tok;
};

static int cmp_ranked_key(const void *a, const void *b)
{
	const struct ranked_key *x = a, *y = b;
	if (x->p != y->p)
		return x->p < y->p ? 1 : -1;
	return x->tok - y->tok;
}

/* Rank RK[NK] and write "N. weight  token" lines from *LINE on (up to LINES). */
static void hm_ranked(struct canvas *cv, const struct trace *t, int x, int y, int w, int *line, int lines,
		      struct ranked_key *rk, int nk, struct style st)
{
	qsort(rk, (size_t)nk, sizeof *rk, cmp_ranked_key);
	for (int j = 0; j < nk && *line < lines; j++, (*line)++) {
		char kl[256], buf[300];
		tokstrip_label(t, rk[j].tok, cv->pal->utf8, kl, sizeof kl);
		snprintf(buf, sizeof buf, "%2d. %.6f  %s", j + 1, rk[j].p, kl);
		canvas_text(cv, x, y + *line, w, buf, st);
	}
}

/* The marked tokens shown in M, as row (COLS false) or column positions into IDX; how many. */
static int hm_marked(const struct view_ctx *ctx, const struct heatmat *m, bool cols, int *idx)
{
	int k = 0;
	for (int i = 0; i < ctx->n_marks; i++) {
		int pos = cols ? heatmat_find_col(m, ctx->marks[i]) : heatmat_find_row(m, ctx->marks[i]);
		if (pos >= 0)
			idx[k++] = pos;
	}
	return k;
}

/* Panel lines for the marked tokens' combined attention (0 when none are marked). */
static int hm_combined_lines(const struct view_ctx *ctx, const struct heatmat *m)
{
	if (ctx->cross) /* the marks are target tokens: rows only (no source column is theirs) */
		return ctx->n_marks ? 2 + m->cols : 0;
	return ctx->n_marks ? 4 + m->cols + m->rows : 0;
}

/* The marked tokens' combined attention from *LINE on: the sum of their rows (what they attend
 * to) and of their columns (who attends to them), each ranked. */
static void hm_combined(struct view_ctx *ctx, const struct heatmat *m, struct canvas *cv, int x, int y, int w,
			int *line, int lines)
{
	struct style st = canvas_role(cv, ROLE_PANEL), lab = canvas_role(cv, ROLE_LABEL);
	int idx[VIEW_MARKS_MAX], n = m->rows > m->cols ? m->rows : m->cols;
	float *sum = malloc((size_t)n * sizeof *sum);
	struct ranked_key *rk = malloc((size_t)n * sizeof *rk);
	char names[160], buf[256];
	if (!sum || !rk) {
		free(sum);
		free(rk);
		return;
	}
	marks_label(ctx, cv->pal->utf8, names, sizeof names);
	int k = hm_marked(ctx, m, false, idx);
	snprintf(buf, sizeof buf, "%s attend to (sum of %d rows)", names, k);
	if (*line < lines)
		canvas_text(cv, x, y + (*line)++, w, buf, lab);
	marks_given(m->v, m->cols, idx, k, sum);
	for (int j = 0; j < m->cols; j++)
		rk[j] = (struct ranked_key){sum[j], m->col_tok[j]};
	hm_ranked(cv, view_key_trace(ctx), x, y, w, line, lines, rk, k ? m->cols : 0, st);
	(*line)++;
	if (ctx->cross) { /* the columns are the source's: who attends to the marks is a decoder stack's question */
		free(sum);
		free(rk);
		return;
	}
	k = hm_marked(ctx, m, true, idx);
	snprintf(buf, sizeof buf, "who attends to %s (sum of %d columns)", names, k);
	if (*line < lines)
		canvas_text(cv, x, y + (*line)++, w, buf, lab);
	marks_received(m->v, m->rows, m->cols, idx, k, sum);
	for (int i = 0; i < m->rows; i++)
		rk[i] = (struct ranked_key){sum[i], m->row_tok[i]};
	hm_ranked(cv, ctx->trace, x, y, w, line, lines, rk, k ? m->rows : 0, st);
	(*line)++;
	free(sum);
	free(rk);
}

/* The panel: cursor cell, column sum, top keys of the row. LINES rows from (X,Y), or two lines
 * when COMPACT. */
/* 1 when the panel says which experts the query token went to (a routing layer of a mixture of
 * experts), else 0. */
static int hm_experts_lines(const struct view_ctx *ctx)
{
	char ex[8];
	return shapedesc_experts(ctx->trace, ctx->layer, 0, ex, sizeof ex)[0] != 0;
}

static void hm_panel(struct heatmap_state *s, struct view_ctx *ctx, struct canvas *cv, int x, int y, int w, int lines,
		     int r, int c, bool compact)
{
	const struct trace *t = ctx->trace;
	const struct heatmat *m = &s->m;
	struct style st = canvas_role(cv, ROLE_PANEL), lab = canvas_role(cv, ROLE_LABEL);
	char q[256], k[256], buf[1024], weight[64], kept[64] = "";
	tokstrip_label(t, m->row_tok[r], cv->pal->utf8, q, sizeof q);
	tokstrip_label(view_key_trace(ctx), m->col_tok[c], cv->pal->utf8, k, sizeof k);
	float p = m->v[(size_t)r * m->cols + c];
	if (heatmat_masked(m, r, c))
		snprintf(weight, sizeof weight, "masked (key not visible)");
	else
		snprintf(weight, sizeof weight, s->diff ? "%+.6f" : "%.6f", p);
	if (ctx->hide_special)
		snprintf(kept, sizeof kept, "row kept %.1f%% before renormalising", 100.0 * m->kept[r]);
	char sink[64] = ""; /* learned sinks (gpt-oss): the row sums to less than 1; say where the rest went */
	if (t->sinks && !s->diff)
		snprintf(sink, sizeof sink, "sink took %.1f%% of this row",
			 100.0 * heat_sink_share(t, ctx->layer, ctx->head, s->agg, m->row_tok[r]));
	char raw[96] = ""; /* value-weighted (valnorm.h): the cell is a share of its row; the size itself */
	if (t->value_weighted && !s->diff && !heatmat_masked(m, r, c))
		snprintf(raw, sizeof raw, "%s %.6g", cv->pal->utf8 ? "\xe2\x80\x96\xce\xb1\xc2\xb7" "f\xe2\x80\x96" : "|a.f|",
			 valnorm_raw_agg(t, ctx->layer, ctx->head, s->agg, m->row_tok[r], m->col_tok[c]));
	double colsum = 0;
	for (int i = 0; i < m->rows; i++)
		colsum += m->v[(size_t)i * m->cols + c];
	struct ranked_key *rk = malloc((size_t)m->cols * sizeof *rk);
	if (!rk)
		return;
	int nk = 0; /* the keys the query may see */
	for (int j = 0; j < m->cols; j++)
		if (!heatmat_masked(m, r, j))
			rk[nk++] = (struct ranked_key){m->v[(size_t)r * m->cols + j], m->col_tok[j]};
	const char *arrow = cv->pal->utf8 ? "\xe2\x86\x92" : "->";
	if (compact) {
		snprintf(buf, sizeof buf, "%s %s %s = %s%s%s  column sum %.4f%s%s%s%s", q, arrow, k, weight, raw[0] ? "  " : "",
			 raw, colsum, kept[0] ? "  " : "", kept, sink[0] ? "  " : "", sink);
		canvas_text(cv, x, y, w, buf, st);
		qsort(rk, (size_t)nk, sizeof *rk, cmp_ranked_key);
		if (lines > 1) {
			int used = canvas_text(cv, x, y + 1, w, "top:", lab);
			for (int j = 0; j < nk && used < w; j++) {
				char kl[256];
				tokstrip_label(view_key_trace(ctx), rk[j].tok, cv->pal->utf8, kl, sizeof kl);
				snprintf(buf, sizeof buf, " %s %.2f", kl, rk[j].p);
				used += canvas_text(cv, x + used, y + 1, w - used, buf, st);
			}
		}
		free(rk);
		return;
	}
	int line = 0;
#define PANEL_LINE(style, ...)                                                  \
	do {                                                                    \
		if (line < lines) {                                             \
			snprintf(buf, sizeof buf, __VA_ARGS__);                 \
			canvas_text(cv, x, y + line, w, buf, style);            \
		}                                                               \
		line++;                                                         \
	} while (0)
	PANEL_LINE(lab, "query %d  %s", m->row_tok[r], q);
	if (hm_experts_lines(ctx)) { /* where its MLP sent the query token */
		char ex[160];
		PANEL_LINE(st, "%s", shapedesc_experts(t, ctx->layer, m->row_tok[r], ex, sizeof ex));
	}
	PANEL_LINE(lab, "key   %d  %s", m->col_tok[c], k);
	PANEL_LINE(st, "%s %s", s->diff ? "B - A     " : "weight    ", weight);
	if (s->diff && lines > 4)
		PANEL_LINE(st, "A %.6f  B %.6f", s->va[(size_t)r * m->cols + c], s->vb[(size_t)r * m->cols + c]);
	if (raw[0])
		PANEL_LINE(st, "%s", raw);
	PANEL_LINE(st, "column sum %.6f", colsum);
	if (kept[0])
		PANEL_LINE(st, "%s", kept);
	if (sink[0])
		PANEL_LINE(st, "%s", sink);
	line++;
	if (ctx->n_marks)
		hm_combined(ctx, m, cv, x, y, w, &line, lines);
	PANEL_LINE(lab, s->diff ? "keys gaining most in B for %s" : "top keys of %s", q);
	hm_ranked(cv, view_key_trace(ctx), x, y, w, &line, lines, rk, nk, st);
#undef PANEL_LINE
	free(rk);
}

static void heatmap_draw_one(struct heatmap_state *s, struct view_ctx *ctx, struct canvas *cv, struct rect area);

/* Texts of different lengths: A and B side by side, rows aligned from the first token (their
 * common prefix first), each in its own state. */
static bool hm_side_by_side(struct heatmap_state *s, struct view_ctx *ctx)
{
	if (!ctx->compare || !ctx->trace || !hm_side_by_side_needed(ctx))
		return false;
	if (!s->other)
		s->other = heatmap_create(ctx);
	return s->other != NULL;
}

/* The contexts of the two sides: A without the comparison, B as the trace. */
static void hm_sides(const struct view_ctx *ctx, struct view_ctx *a, struct view_ctx *b)
{
	*a = *ctx;
	a->compare = NULL;
	*b = *a;
	b->trace = ctx->compare;
	b->n_marks = 0;
	if (b->token >= b->trace->n)
		b->token = b->trace->n - 1;
}

static void heatmap_draw(void *state, struct view_ctx *ctx, struct canvas *cv, struct rect area)
{
	struct heatmap_state *s = state;
	if (hm_side_by_side(s, ctx)) {
		struct view_ctx a, b;
		hm_sides(ctx, &a, &b);
		s->other->agg = s->agg, s->other->numbers = s->numbers;
		int wa = (area.w - 1) / 2;
		/* under cross-attention, sources of different lengths are what puts them side by side */
		bool src = ctx->cross && ctx->trace->encoder && ctx->compare->n == ctx->trace->n;
		const struct trace *ta = src ? ctx->trace->encoder : ctx->trace, *tb = src ? ctx->compare->encoder : ctx->compare;
		canvas_printf(cv, area.x, area.y, area.w, canvas_role(cv, ROLE_LABEL),
			      "A (%d %stokens) and B (%d %stokens) side by side %s common prefix %d tokens", ta->n, src ? "source " : "",
			      tb->n, src ? "source " : "", cv->pal->utf8 ? "\xc2\xb7" : "-", compare_prefix(ta, tb));
		struct rect ra = {area.x, area.y + 1, wa, area.h - 1}, rb = {area.x + wa + 1, area.y + 1, area.w - wa - 1, area.h - 1};
		heatmap_draw_one(s, &a, cv, ra);
		heatmap_draw_one(s->other, &b, cv, rb);
		ctx->token = a.token;
		return;
	}
	heatmap_draw_one(s, ctx, cv, area);
}

/* ---- pixels: the whole matrix as an image (terminals with sixel or kitty graphics) ---- */

/* Pixel heatmaps: on a canvas that holds images, in colour, without numbers in the cells. */
static bool hm_pixels(const struct heatmap_state *s, const struct canvas *cv)
{
	return canvas_has_pixels(cv) && cv->pal->depth != DEPTH_MONO && !s->numbers;
}

/* How the matrix fits AVAIL_W x AVAIL_H cells (AVAIL_H < 0: as tall as it is wide) in pixels:
 * the zoom that pools it down to the pixels there are (1 when each token pair gets its own), the
 * value cells, the block side in pixels (at most a text row, so a short text looks as in cells)
 * and the cells the image covers. */
struct hm_pix {
	int zoom, rows, cols, block, w, h;
};

static struct hm_pix hm_pix_fit(const struct heatmap_state *s, const struct canvas *cv, int avail_w, int avail_h)
{
	struct hm_pix f;
	long aw = (long)(avail_w > 1 ? avail_w : 1) * cv->px_w;
	long ah = avail_h < 0 ? aw : (long)(avail_h > 1 ? avail_h : 1) * cv->px_h;
	f.zoom = 1;
	while ((hm_cells(s->m.cols, f.zoom) > aw || hm_cells(s->m.rows, f.zoom) > ah) && f.zoom < s->m.cols)
		f.zoom *= 2;
	f.rows = hm_cells(s->m.rows, f.zoom), f.cols = hm_cells(s->m.cols, f.zoom);
	long b = aw / f.cols < ah / f.rows ? aw / f.cols : ah / f.rows;
	f.block = b > cv->px_h ? cv->px_h : b < 1 ? 1 : (int)b;
	f.w = (f.cols * f.block + cv->px_w - 1) / cv->px_w;
	f.h = (f.rows * f.block + cv->px_h - 1) / cv->px_h;
	return f;
}

/* The layout in pixels: query labels, the image under a row of key ticks, the panel beside or below. */
static struct hm_layout hm_pix_layout(struct heatmap_state *s, struct view_ctx *ctx, const struct canvas *cv,
				      int width, int height, struct hm_pix *f)
{
	int saved = s->zoom;
	s->zoom = 1;
	struct hm_layout lo = hm_layout_at(s, ctx, cv, width, height);
	s->zoom = saved;
	lo.label_h = 1, lo.vertical = false, lo.my = 2;
	lo.panel_w = width >= lo.qw + 16 + 1 + HM_PANEL_W ? HM_PANEL_W : 0;
	lo.below = lo.panel_w ? 0 : 2;
	*f = hm_pix_fit(s, cv, width - lo.qw - (lo.panel_w ? lo.panel_w + 2 : 0), height < 0 ? -1 : height - lo.my - lo.below);
	lo.vis_rows = f->h, lo.vis_cols = f->w, lo.cw = 1;
	return lo;
}

/* The token label of value row or column I at zoom Z: the token's text when a cell is one token and
 * the text is wanted, else its index. */
static void hm_pix_label(const struct view_ctx *ctx, const struct canvas *cv, int tok, bool text, char *buf, size_t n)
{
	if (text)
		tokstrip_label(ctx->trace, tok, cv->pal->utf8, buf, n);
	else
		snprintf(buf, n, "%d", tok);
}

static void hm_draw_pixels(struct heatmap_state *s, struct view_ctx *ctx, struct canvas *cv, struct rect area)
{
	const struct heatmat *m = &s->m;
	struct hm_pix f;
	struct hm_layout lo = hm_pix_layout(s, ctx, cv, area.w, ctx->print ? -1 : area.h, &f);
	int user_zoom = s->zoom;
	s->zoom = f.zoom; /* the image's own zoom, for the blocks and the title */
	int r, c;
	hm_cursor(s, ctx, &r, &c);
	int cr = r / f.zoom, cc = c / f.zoom;
	s->page_rows = f.rows;
	char title[256];
	hm_title(s, ctx, title, sizeof title, cv->pal->utf8);
	int tw = canvas_text(cv, area.x, area.y, area.w, title, canvas_role(cv, ROLE_TITLE));
	hm_colour_bar(s, ctx, cv, area.x + tw + 2, area.y, area.w - tw - 2);

	struct canvas_image *img = canvas_image(cv, area.x + lo.qw, area.y + lo.my, f.rows, f.cols, f.block, f.block);
	if (!img) {
		canvas_text(cv, area.x, area.y + lo.my, area.w, "out of memory for the image", canvas_role(cv, ROLE_ERROR));
		s->zoom = user_zoom;
		return;
	}
	for (int i = 0; i < f.rows; i++)
		for (int j = 0; j < f.cols; j++)
			canvas_image_set(img, i, j, hm_block(s, s->pos, i, j));
	if (!ctx->print)
		img->cur_row = cr, img->cur_col = cc;
	/* Query labels: each text row names the first token it shows (the cursor's when it shows it). */
	int tok_r = m->row_tok[r], tok_c = m->col_tok[c];
	for (int y = 0; y < img->at.h; y++) {
		int v0 = y * cv->px_h / f.block, v1 = ((y + 1) * cv->px_h - 1) / f.block;
		if (v0 >= f.rows)
			break;
		if (v1 >= f.rows)
			v1 = f.rows - 1;
		int v = !ctx->print && cr >= v0 && cr <= v1 ? cr : v0, tok = v == cr && !ctx->print ? tok_r : m->row_tok[v * f.zoom];
		char lab[256];
		hm_pix_label(ctx, cv, tok, (f.zoom == 1 && v0 == v1) || tok == tok_r, lab, sizeof lab);
		canvas_text(cv, area.x, area.y + lo.my + y, lo.qw - 1, lab, token_style(cv, ctx, tok, tok_r, ROLE_QUERY));
	}
	/* Key ticks: an index every few columns, as far apart as the numbers need; the cursor's column marked. */
	int digits = snprintf(NULL, 0, "%d", ctx->trace->n), step = 1;
	static const int steps[] = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000};
	for (size_t k = 0; k < sizeof steps / sizeof *steps && (long)steps[k] * f.block < (long)(digits + 1) * cv->px_w; k++)
		step = k + 1 < sizeof steps / sizeof *steps ? steps[k + 1] : steps[k];
	for (int j = 0; j < f.cols; j += step) {
		char lab[32];
		int tok = m->col_tok[j * f.zoom];
		snprintf(lab, sizeof lab, "%d", tok);
		canvas_text(cv, area.x + lo.qw + j * f.block / cv->px_w, area.y + 1, digits, lab,
			    key_style(cv, ctx, tok, -1));
	}
	if (!ctx->print)
		canvas_put(cv, area.x + lo.qw + (cc * f.block + f.block / 2) / cv->px_w, area.y + 1,
			   canvas_glyph(cv, GLYPH_DOWN), canvas_role(cv, ROLE_CURSOR));
	(void)tok_c;
	if (lo.panel_w) {
		int px = area.x + lo.qw + img->at.w + 2;
		int lines = ctx->print ? 6 + (ctx->hide_special ? 1 : 0) + s->diff + hm_experts_lines(ctx) + m->cols +
					 hm_combined_lines(ctx, m)
				       : area.h - 1;
		hm_panel(s, ctx, cv, px, area.y + 1, area.x + area.w - px, lines, r, c, false);
	} else {
		hm_panel(s, ctx, cv, area.x, area.y + lo.my + img->at.h, area.w, lo.below, r, c, true);
	}
	s->zoom = user_zoom;
}

static void heatmap_draw_one(struct heatmap_state *s, struct view_ctx *ctx, struct canvas *cv, struct rect area)
{
	struct rect old = canvas_clip(cv, area);
	if (!hm_ensure(s, ctx)) {
		canvas_text(cv, area.x, area.y, area.w, ctx->trace ? "no tokens to show" : "running the model…",
			    canvas_role(cv, ROLE_DIM));
		canvas_clip(cv, old);
		return;
	}
	const struct palette *pal = cv->pal;
	struct palette div;
	if (s->diff) { /* B − A on the theme's diverging ramp, in cells and in pixels */
		palette_diverging(pal, &div);
		cv->pal = &div;
	}
	if (hm_pixels(s, cv)) {
		hm_draw_pixels(s, ctx, cv, area);
		cv->pal = pal;
		canvas_clip(cv, old);
		return;
	}
	const struct trace *t = ctx->trace;
	const struct heatmat *m = &s->m;
	struct hm_layout lo = hm_layout(s, ctx, cv, area.w, ctx->print ? -1 : area.h);
	s->page_rows = lo.vis_rows;
	int r, c, z = s->zoom, rows = hm_cells(m->rows, z), cols = hm_cells(m->cols, z);
	hm_cursor(s, ctx, &r, &c);
	int cr = r / z, cc = c / z; /* the cell of the cursor */
	if (s->recentre) {
		s->row0 = cr - lo.vis_rows / 2;
		s->col0 = cc - lo.vis_cols / 2;
		s->recentre = false;
	}
	/* Scroll to keep the cursor visible. */
	if (cr < s->row0)
		s->row0 = cr;
	if (cr >= s->row0 + lo.vis_rows)
		s->row0 = cr - lo.vis_rows + 1;
	if (cc < s->col0)
		s->col0 = cc;
	if (cc >= s->col0 + lo.vis_cols)
		s->col0 = cc - lo.vis_cols + 1;
	if (s->row0 > rows - lo.vis_rows)
		s->row0 = rows - lo.vis_rows;
	if (s->col0 > cols - lo.vis_cols)
		s->col0 = cols - lo.vis_cols;
	if (s->row0 < 0)
		s->row0 = 0;
	if (s->col0 < 0)
		s->col0 = 0;
	if (ctx->print)
		s->row0 = 0;

	char title[256];
	hm_title(s, ctx, title, sizeof title, cv->pal->utf8);
	int tw = canvas_text(cv, area.x, area.y, area.w, title, canvas_role(cv, ROLE_TITLE));
	hm_colour_bar(s, ctx, cv, area.x + tw + 2, area.y, area.w - tw - 2);

	int cur_tok_r = m->row_tok[r], cur_tok_c = m->col_tok[c];
	for (int j = s->col0; j < s->col0 + lo.vis_cols && j < cols; j++) {
		char lab[256];
		int tok = m->col_tok[j * z];
		if (z > 1)
			snprintf(lab, sizeof lab, "%d", tok);
		else
			tokstrip_label(view_key_trace(ctx), tok, cv->pal->utf8, lab, sizeof lab);
		hm_key_label(cv, &lo, area.x + lo.mx + (j - s->col0) * lo.cw, area.y + 1, lab,
			     key_style(cv, ctx, tok, cur_tok_c));
	}
	struct style cursor = canvas_role(cv, ROLE_CURSOR);
	for (int i = s->row0; i < s->row0 + lo.vis_rows && i < rows; i++) {
		int y = area.y + lo.my + (i - s->row0);
		char lab[256];
		int tok = m->row_tok[i * z];
		if (z > 1)
			snprintf(lab, sizeof lab, "%d", tok);
		else
			tokstrip_label(t, tok, cv->pal->utf8, lab, sizeof lab);
		canvas_text(cv, area.x, y, lo.qw - 1, lab, token_style(cv, ctx, tok, cur_tok_r, ROLE_QUERY));
		for (int j = s->col0; j < s->col0 + lo.vis_cols && j < cols; j++) {
			int x = area.x + lo.mx + (j - s->col0) * lo.cw;
			float p = hm_block(s, m->v, i, j), v = hm_block(s, s->pos, i, j);
			bool is_cursor = i == cr && j == cc && !ctx->print;
			char num[8];
			if (s->numbers) {
				hm_format(p, num, sizeof num);
				if (v != v) /* masked: no number */
					num[0] = 0;
				canvas_fill(cv, (struct rect){x, y, lo.cw, 1}, ' ',
					    is_cursor ? cursor : (struct style){COLOR_DEFAULT, COLOR_DEFAULT, 0});
				if (is_cursor)
					canvas_text(cv, x + lo.cw - 3, y, 3, num, cursor);
				else {
					for (int k = 0; k < lo.cw; k++)
						canvas_heat1(cv, x + k, y, cv->pal->depth == DEPTH_MONO && v == v ? (s->diff ? 0.5f : 0) : v);
					if (v == v)
						canvas_heat_text(cv, x + lo.cw - 3, y, 3, v, num);
				}
			} else if (is_cursor) {
				canvas_put(cv, x, y, '[', cursor);
				if (lo.cw > 1)
					canvas_put(cv, x + 1, y, ']', cursor);
			} else {
				for (int k = 0; k < lo.cw; k++)
					canvas_heat1(cv, x + k, y, v);
			}
		}
	}
	/* More rows or columns than shown: arrows in the corner of the label areas. */
	struct style dim = canvas_role(cv, ROLE_DIM);
	if (s->col0 > 0)
		canvas_put(cv, area.x + lo.mx - 1, area.y + lo.my - 1, canvas_glyph(cv, GLYPH_LEFT), dim);
	if (s->col0 + lo.vis_cols < cols)
		canvas_put(cv, area.x + lo.mx + lo.vis_cols * lo.cw, area.y + lo.my - 1, canvas_glyph(cv, GLYPH_RIGHT), dim);
	if (s->row0 > 0)
		canvas_put(cv, area.x + lo.qw - 1, area.y + lo.my, canvas_glyph(cv, GLYPH_UP), dim);
	if (s->row0 + lo.vis_rows < rows)
		canvas_put(cv, area.x + lo.qw - 1, area.y + lo.my + lo.vis_rows - 1, canvas_glyph(cv, GLYPH_DOWN), dim);

	if (lo.panel_w) {
		int px = area.x + lo.mx + lo.vis_cols * lo.cw + 2;
		int lines = ctx->print ? 6 + (ctx->hide_special ? 1 : 0) + s->diff + hm_experts_lines(ctx) + m->cols +
					 hm_combined_lines(ctx, m)
				       : area.h - 1;
		hm_panel(s, ctx, cv, px, area.y + 1, area.x + area.w - px, lines, r, c, false);
	} else {
		hm_panel(s, ctx, cv, area.x, area.y + lo.my + lo.vis_rows, area.w, lo.below, r, c, true);
	}
	cv->pal = pal;
	canvas_clip(cv, old);
}

static int heatmap_height_one(struct heatmap_state *s, struct view_ctx *ctx, const struct canvas *cv, int width);

static int heatmap_height(void *state, struct view_ctx *ctx, const struct canvas *cv, int width)
{
	struct heatmap_state *s = state;
	if (hm_side_by_side(s, ctx)) {
		struct view_ctx a, b;
		hm_sides(ctx, &a, &b);
		s->other->agg = s->agg, s->other->numbers = s->numbers;
		int ha = heatmap_height_one(s, &a, cv, (width - 1) / 2), hb = heatmap_height_one(s->other, &b, cv, width - 1 - (width - 1) / 2);
		return 1 + (ha > hb ? ha : hb);
	}
	return heatmap_height_one(s, ctx, cv, width);
}

static int heatmap_height_one(struct heatmap_state *s, struct view_ctx *ctx, const struct canvas *cv, int width)
{
	if (!hm_ensure(s, ctx))
		return 1;
	struct hm_pix f;
	struct hm_layout lo = hm_pixels(s, cv) ? hm_pix_layout(s, ctx, cv, width, -1, &f) : hm_layout(s, ctx, cv, width, -1);
	int h = lo.my + lo.vis_rows + lo.below;
	int panel = lo.panel_w ? 1 + 6 + (ctx->hide_special ? 1 : 0) + s->diff + hm_experts_lines(ctx) + s->m.cols +
				 (ctx->trace->value_weighted && !s->diff) +
				 hm_combined_lines(ctx, &s->m)
				: 0;
	return h > panel ? h : panel;
}

/* Space: mark or unmark the query under the cursor. */
static bool heatmap_combine(struct heatmap_state *s, struct view_ctx *ctx)
{
	if (!hm_ensure(s, ctx))
		return true;
	int r, c;
	hm_cursor(s, ctx, &r, &c);
	marks_toggle(ctx, s->m.row_tok[r]);
	return true;
}

static int clampi(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static bool heatmap_act(void *state, struct view_ctx *ctx, enum action a, int count)
{
	struct heatmap_state *s = state;
	const struct trace *t = ctx->trace;
	int rep = count > 0 ? count : 1;
	switch (a) {
	case ACT_MEAN_HEADS:
		s->agg = s->agg == HEAT_LAYER_MEAN ? HEAT_HEAD : HEAT_LAYER_MEAN;
		return true;
	case ACT_MEAN_LAYERS:
		s->agg = s->agg == HEAT_ALL_MEAN ? HEAT_HEAD : HEAT_ALL_MEAN;
		return true;
	case ACT_NUMBERS:
		s->numbers = !s->numbers;
		return true;
	case ACT_POOL:
		s->pool = s->pool == HEAT_POOL_MAX ? HEAT_POOL_MEAN : HEAT_POOL_MAX;
		return true;
	case ACT_ZOOM_IN:
	case ACT_ZOOM_OUT:
		if (ctx->pixels && !s->numbers) { /* the image fits the whole matrix; its zoom is its own */
			snprintf(ctx->message, sizeof ctx->message, "pixel heatmaps show the whole matrix (zoom works in character cells: I)");
			return true;
		}
		if (a == ACT_ZOOM_IN && s->zoom > 1)
			s->zoom /= 2, s->recentre = true;
		else if (a == ACT_ZOOM_OUT && t && s->zoom < t->n) /* up to the whole matrix in one cell */
			s->zoom *= 2, s->recentre = true;
		return true;
	case ACT_COMBINE:
		return heatmap_combine(s, ctx);
	case ACT_HEAD_PREV:
	case ACT_HEAD_NEXT:
	case ACT_LAYER_PREV:
	case ACT_LAYER_NEXT:
		/* Over the text's heads, also while a corpus aggregate is shown (not anaview_nav). */
		return anaview_nav_shape(ctx, t, a, count);
	default:
		break;
	}
	if (!hm_ensure(s, ctx))
		return a == ACT_UP || a == ACT_DOWN || a == ACT_LEFT || a == ACT_RIGHT || a == ACT_PAGE_UP ||
		       a == ACT_PAGE_DOWN || a == ACT_FIRST || a == ACT_LAST || a == ACT_COLUMN;
	int r, c, rows = s->m.rows, cols = s->m.cols, page = s->page_rows > 1 ? s->page_rows : 1;
	int step = rep * s->zoom; /* one cell: ZOOM tokens */
	hm_cursor(s, ctx, &r, &c);
	switch (a) {
	case ACT_UP:
		r -= step;
		break;
	case ACT_DOWN:
		r += step;
		break;
	case ACT_LEFT:
		c -= step;
		break;
	case ACT_RIGHT:
		c += step;
		break;
	case ACT_PAGE_UP:
		r -= page * step;
		break;
	case ACT_PAGE_DOWN:
		r += page * step;
		break;
	case ACT_FIRST:
		r = count >= 0 ? count : 0;
		break;
	case ACT_LAST:
		r = count >= 0 ? count : rows - 1;
		break;
	case ACT_COLUMN:
		c = count >= 0 ? count : 0;
		break;
	default:
		return false;
	}
	r = clampi(r, 0, rows - 1);
	c = clampi(c, 0, cols - 1);
	s->cur_row = s->m.row_tok[r];
	s->cur_col = s->m.col_tok[c];
	ctx->token = s->cur_row;
	return true;
}

static void heatmap_status(void *state, struct view_ctx *ctx, char *buf, size_t n)
{
	struct heatmap_state *s = state;
	buf[0] = 0;
	if (!hm_ensure(s, ctx))
		return;
	int r, c;
	hm_cursor(s, ctx, &r, &c);
	if (heatmat_masked(&s->m, r, c))
		snprintf(buf, n, "q%d k%d masked", s->m.row_tok[r], s->m.col_tok[c]);
	else
		snprintf(buf, n, "q%d k%d = %.6f", s->m.row_tok[r], s->m.col_tok[c], s->m.v[(size_t)r * s->m.cols + c]);
}

static const enum action heatmap_actions[] = {
	ACT_UP, ACT_DOWN, ACT_LEFT, ACT_RIGHT, ACT_PAGE_UP, ACT_PAGE_DOWN, ACT_FIRST, ACT_LAST, ACT_COLUMN,
	ACT_HEAD_PREV, ACT_HEAD_NEXT, ACT_LAYER_PREV, ACT_LAYER_NEXT, ACT_MEAN_HEADS, ACT_MEAN_LAYERS,
	ACT_NUMBERS, ACT_COMBINE, ACT_ZOOM_IN, ACT_ZOOM_OUT, ACT_POOL, ACTION_NONE,
};
static const enum action heatmap_status_keys[] = {ACT_HEAD_NEXT, ACT_LAYER_NEXT, ACT_SCALE, ACT_HELP, ACT_BACK,
						  ACTION_NONE};

const struct view view_heatmap = {
	.name = "heatmap",
	.title = "Heatmap view",
	.flags = VIEW_CROSS | VIEW_CROSS_COMPARE,
	.actions = heatmap_actions,
	.status_keys = heatmap_status_keys,
	.create = heatmap_create,
	.destroy = heatmap_destroy,
	.draw = heatmap_draw,
	.height = heatmap_height,
	.act = heatmap_act,
	.status = heatmap_status,
};
