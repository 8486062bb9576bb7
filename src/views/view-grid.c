/* view-grid.c -- the layer × head grid: every head's attention as a small heatmap thumbnail.
 *
 * Layers are rows, heads are columns. Thumbnails use half-block cells (two matrix rows per
 * character row) and shrink by max or mean pooling when the matrix is larger than the space a
 * head gets; when the heads do not fit, the grid scrolls to keep the selected head visible. The
 * selected head has a frame around it; a selected token keeps its row and column bright and dims
 * the rest of every thumbnail. Keys a query cannot see (causal masking, a layer's sliding window)
 * stay blank. Under grouped-query attention a row above the head numbers brackets the query heads
 * that read each key/value head ("kv0"); a windowed layer's label carries its window ("L0 w4"). A head
 * marked for ablation (B, E) has a cross in its thumbnail's corner and its layer's label the error colour.
 * An encoder-decoder's three stacks at once (ctx->all_stacks: T's fourth state, --print grid --stack all), as
 * bertviz's model view shows them: encoder self-attention, decoder self-attention and cross-attention one
 * under the other, each section titled, with its own layers x heads and thumbnails; the selected head is in
 * one section (ctx->trace, ctx->cross), and moving up from a section's first layer or down from its last
 * goes to the section before or after (ctx->want_stack: the explorer switches the stack the other views
 * read). The view scrolls to keep the selected head in sight. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ablate.h"
#include "draw/chart.h"
#include "trace/compare.h"
#include "trace/shapedesc.h"
#include "views/registry.h" /* view_heatmap, which it opens */

#define GRID_SECTIONS 3 /* an encoder-decoder's stacks: encoder, decoder self-attention, cross-attention */

/* Pooled thumbnails of one stack, computed once per head and reused while only the selection moves.
 * Valid for the key below; any change of it empties the cache. */
struct grid_cache {
	float **thumb;           /* [n_layers * n_heads] → [px_h][px_w] values, NULL = not computed */
	int n_thumb;
	struct thumb_key {
		unsigned trace_gen;
		int px_w, px_h, token;
		enum heat_scale scale;
		enum heat_pool pool;
		bool hide_special, diff_fixed;
	} key;
	float diff_range; /* comparing: the thumbnails' ±scale, the largest |B − A| over every head (1 on
	                   * the fixed scale, or when nothing changed); valid with the key */
};

struct grid_state {
	enum heat_pool pool;
	int zoom;        /* thumbnail width adjustment, in steps of 2 columns */
	int row0, col0;  /* first visible layer and head */
	int page_rows;   /* layers visible at the last draw, for page up/down */
	int px_w, px_h;  /* thumbnail resolution at the last draw, for the status */
	struct grid_cache c[GRID_SECTIONS]; /* [0]: the stack shown; with all_stacks each section's */
	int scroll;      /* all_stacks: the first row of the sections shown */
};

/* A stack the grid draws: a trace and whether it is read as cross-attention. */
struct grid_sec {
	const struct trace *t;
	bool cross;
	const char *name; /* the section's title; NULL for the one stack of a plain grid */
};

static void grid_forget(struct grid_cache *c)
{
	for (int i = 0; i < c->n_thumb; i++)
		free(c->thumb[i]);
	free(c->thumb);
	c->thumb = NULL;
	c->n_thumb = 0;
}

struct grid_layout {
	int label_w;          /* columns of the layer labels ("L11 ") */
	int tw, th;           /* thumbnail size in characters */
	int px_w, px_h;       /* thumbnail size in matrix cells */
	int block;            /* > 0: thumbnails are images (pixel heatmaps) of blocks this many pixels a side */
	int rows_fit, cols_fit;
	int top;              /* rows above the first thumbnail: title, kv heads (GQA), head numbers, frame */
};

static int digits(int v)
{
	int d = 1;
	while (v >= 10) {
		v /= 10;
		d++;
	}
	return d;
}

/* "L3", "L3 w4" for a layer with a sliding window, "L3 c8" for a chunked one (Llama 4), "L3 nope" for a
 * layer without positions (no rotary although the model has it: SmolLM3), into BUF; returns its width
 * in columns. */
/* Head H of layer L is marked for ablation (engine/ablate.h). */
static bool grid_ablated(const struct view_ctx *ctx, int l, int h)
{
	const struct ablation *a = ctx->ablation;
	return a && a->mask && l < a->n_layers && h < a->n_heads && a->mask[l * a->n_heads + h];
}

static int grid_layer_label(const struct trace *t, int layer, bool utf8, char *buf, size_t n)
{
	char win[32], chunk[32];
	shapedesc_window(t, layer, utf8, win, sizeof win);
	shapedesc_chunk(t, layer, chunk, sizeof chunk);
	const char *nope = shapedesc_nope(t, layer) ? "nope" : "";
	snprintf(buf, n, "L%d%s%s%s%s%s%s", layer, win[0] ? " " : "", win, chunk[0] ? " " : "", chunk, nope[0] ? " " : "",
		 nope);
	int w = 0;
	for (const char *p = buf; *p; p++)
		w += ((unsigned char)*p & 0xc0) != 0x80;
	return w;
}

/* HEIGHT < 0: as tall as needed. */
static struct grid_layout grid_layout(const struct grid_state *g, const struct trace *t, bool cross,
				      const struct canvas *cv, int width, int height)
{
	struct grid_layout lo;
	int n = t->n > 0 ? t->n : 1, rpc = canvas_heat_rows(cv);
	if (cross && t->n_cross > n) /* a thumbnail wide enough for the source's tokens */
		n = t->n_cross;
	lo.label_w = 1 + digits(t->n_layers - 1) + 1;
	for (int l = 0; l < t->n_layers; l++) {
		char lab[48];
		int w = grid_layer_label(t, l, cv->pal->utf8, lab, sizeof lab);
		if (w + 1 > lo.label_w)
			lo.label_w = w + 1;
	}
	int avail = width - lo.label_w - 1;
	int fit = t->n_heads > 0 ? avail / t->n_heads - 1 : avail;
	int base = fit < n ? fit : n;
	if (base < 2)
		base = 2;
	int tw = base + 2 * g->zoom, tw_max = 3 * n < 96 ? 3 * n : 96;
	if (tw_max < 2)
		tw_max = 2;
	if (tw > tw_max)
		tw = tw_max;
	if (tw > avail - 1)
		tw = avail - 1;
	if (tw < 2)
		tw = 2;
	lo.tw = tw;
	/* Character cells are about twice as tall as wide: tw columns by tw/2 rows looks square. */
	lo.th = (tw + 1) / 2;
	if (lo.th < 1)
		lo.th = 1;
	lo.px_w = tw;
	lo.px_h = lo.th * rpc;
	if (lo.px_h > n && tw <= n) {
		lo.px_h = n;
		lo.th = (n + rpc - 1) / rpc;
	}
	lo.block = 0;
	if (canvas_has_pixels(cv) && cv->pal->depth != DEPTH_MONO && (lo.px_w < n || lo.px_h < n)) {
		/* Pooled in cells: an image of the thumbnail's pixels shows more, square, up to every token. */
		int tw_px = tw * cv->px_w, th_px = lo.th * cv->px_h, side = tw_px < th_px ? tw_px : th_px;
		int res = n < side ? n : side;
		lo.block = side / res;
		lo.px_w = lo.px_h = res;
	}
	lo.top = shapedesc_gqa(t) ? 4 : 3;
	lo.cols_fit = avail / (tw + 1);
	if (lo.cols_fit < 1)
		lo.cols_fit = 1;
	if (lo.cols_fit > t->n_heads)
		lo.cols_fit = t->n_heads;
	lo.rows_fit = height < 0 ? t->n_layers : (height - lo.top) / (lo.th + 1);
	if (lo.rows_fit < 1)
		lo.rows_fit = 1;
	if (lo.rows_fit > t->n_layers)
		lo.rows_fit = t->n_layers;
	return lo;
}

static void *grid_create(struct view_ctx *ctx)
{
	struct grid_state *g = calloc(1, sizeof *g);
	if (g)
		g->pool = HEAT_POOL_MAX;
	return g;
}

static void grid_destroy(void *state)
{
	struct grid_state *g = state;
	for (int i = 0; i < GRID_SECTIONS; i++)
		grid_forget(&g->c[i]);
	free(state);
}

/* Make the cache match what is about to be drawn. */
/* The largest |B − A| over every head's matching rows (1 when nothing changed or out of memory):
 * one scale for all thumbnails, so that they compare with each other as they do on the ±1 scale. */
static float grid_diff_range(const struct view_ctx *ctx)
{
	const struct trace *t = ctx->trace;
	int rows = compare_rows(t, ctx->compare);
	float range = 0;
	for (int l = 0; l < t->n_layers; l++)
		for (int h = 0; h < t->n_heads; h++) {
			struct heatmat a, b;
			if (heatmat_build(t, l, h, HEAT_HEAD, ctx->hide_special, &a))
				return 1;
			if (heatmat_build(ctx->compare, l, h, HEAT_HEAD, ctx->hide_special, &b)) {
				heatmat_free(&a);
				return 1;
			}
			heatmat_diff(&a, &b, rows, a.v);
			heatmat_mask(&a, a.v);
			float m = heatdata_absmax(a.v, (size_t)a.rows * a.cols);
			if (m > range)
				range = m;
			heatmat_free(&a);
			heatmat_free(&b);
		}
	return range > 0 ? range : 1;
}

/* Make C, the cache of stack S whose selected token is TOKEN (-1: none), match what is about to be drawn. */
static void grid_cache_key(struct grid_state *g, struct grid_cache *c, const struct view_ctx *ctx,
			   const struct grid_sec *s, int token, const struct grid_layout *lo)
{
	struct thumb_key k;
	memset(&k, 0, sizeof k); /* padding too, for memcmp */
	k.trace_gen = ctx->trace_gen;
	k.px_w = lo->px_w;
	k.px_h = lo->px_h;
	k.token = token;
	k.scale = ctx->scale;
	k.pool = g->pool;
	k.hide_special = ctx->hide_special;
	k.diff_fixed = ctx->diff_fixed;
	int n = s->t->n_layers * s->t->n_heads;
	if (c->thumb && !memcmp(&k, &c->key, sizeof k) && c->n_thumb == n)
		return;
	grid_forget(c);
	c->key = k;
	c->diff_range = ctx->compare && !ctx->diff_fixed ? grid_diff_range(ctx) : 1;
	c->thumb = calloc((size_t)n, sizeof *c->thumb);
	c->n_thumb = c->thumb ? n : 0;
}

/* Scroll so the selected head is visible. */
static void grid_follow(struct grid_state *g, const struct view_ctx *ctx, const struct grid_layout *lo)
{
	if (ctx->layer < g->row0)
		g->row0 = ctx->layer;
	if (ctx->layer >= g->row0 + lo->rows_fit)
		g->row0 = ctx->layer - lo->rows_fit + 1;
	if (g->row0 > ctx->trace->n_layers - lo->rows_fit)
		g->row0 = ctx->trace->n_layers - lo->rows_fit;
	if (g->row0 < 0)
		g->row0 = 0;
	if (ctx->head < g->col0)
		g->col0 = ctx->head;
	if (ctx->head >= g->col0 + lo->cols_fit)
		g->col0 = ctx->head - lo->cols_fit + 1;
	if (g->col0 > ctx->trace->n_heads - lo->cols_fit)
		g->col0 = ctx->trace->n_heads - lo->cols_fit;
	if (g->col0 < 0)
		g->col0 = 0;
}

/* A compact trace (long texts): pool the blocks its forward pass recorded, as grid_pool pools the
 * matrix, instead of recomputing every head. */
static bool grid_pool_blocks(struct grid_state *g, struct view_ctx *ctx, const struct grid_layout *lo, int layer,
			     int head, float *px)
{
	const struct trace *t = ctx->trace; /* never in a section: a compact trace has no decoder */
	float *m = malloc((size_t)TRACE_THUMB * TRACE_THUMB * sizeof *m);
	if (!m)
		return false;
	int side = heatdata_blocks(t, layer, head, ctx->hide_special, g->pool, m);
	if (side == 0) {
		for (int i = 0; i < lo->px_w * lo->px_h; i++)
			px[i] = NAN;
		free(m);
		return true;
	}
	heatdata_scale(m, side, side, ctx->scale, m);
	int sel = heatdata_block_of(t, ctx->hide_special, side, ctx->token);
	if (sel >= 0) /* the selected token's block row and column stay bright */
		for (int r = 0; r < side; r++)
			for (int c = 0; c < side; c++)
				if (r != sel && c != sel)
					m[(size_t)r * side + c] *= 0.25f;
	heatdata_downsample(m, side, side, px, lo->px_h, lo->px_w, g->pool);
	free(m);
	return true;
}

/* Compute one head's pooled thumbnail of stack S, whose selected token is TOKEN, into PX[px_h][px_w] (C's
 * difference scale, CACHE's); false on OOM. */
static bool grid_pool(struct grid_state *g, struct view_ctx *ctx, const struct grid_layout *lo, const struct grid_sec *s,
		      const struct grid_cache *cache, int token, int layer, int head, float *px)
{
	const struct trace *t = s->t;
	bool cross = s->cross;
	if (t->thumb && !ctx->compare && !cross && !ctx->all_stacks)
		return grid_pool_blocks(g, ctx, lo, layer, head, px);
	if (!ctx->compare && !cross && !ctx->hide_special && /* the common case, in one pass */
	    heatdata_head_thumb(t, layer, head, ctx->scale, token, px, lo->px_h, lo->px_w, g->pool) == 0)
		return true;
	struct heatmat m;
	if ((cross ? heatmat_build_cross : heatmat_build)(t, layer, head, HEAT_HEAD, ctx->hide_special, &m))
		return false;
	heatmat_mask(&m, m.v);
	if (m.rows == 0) {
		heatmat_free(&m);
		for (int i = 0; i < lo->px_w * lo->px_h; i++)
			px[i] = NAN;
		return true;
	}
	if (ctx->compare && !cross) { /* the signed difference B − A on the diverging ramp */
		struct heatmat mb;
		if (heatmat_build(ctx->compare, layer, head, HEAT_HEAD, ctx->hide_special, &mb)) {
			heatmat_free(&m);
			return false;
		}
		heatmat_diff(&m, &mb, compare_rows(t, ctx->compare), m.v);
		heatmat_mask(&m, m.v);
		heatdata_diverging(m.v, m.rows * m.cols, cache->diff_range, m.v);
		heatmat_free(&mb);
		heatdata_downsample(m.v, m.rows, m.cols, px, lo->px_h, lo->px_w, g->pool);
		heatmat_free(&m);
		return true;
	}
	heatdata_scale(m.v, m.rows, m.cols, ctx->scale, m.v);
	int sel_r = token >= 0 ? heatmat_find_row(&m, token) : -1;
	int sel_c = token >= 0 && !cross ? heatmat_find_col(&m, token) : -1;
	if (sel_r >= 0) {
		/* Keep the selected token's row and column, dim the rest. */
		for (int r = 0; r < m.rows; r++)
			for (int c = 0; c < m.cols; c++)
				if (r != sel_r && c != sel_c)
					m.v[(size_t)r * m.cols + c] *= 0.25f;
	}
	heatdata_downsample(m.v, m.rows, m.cols, px, lo->px_h, lo->px_w, g->pool);
	heatmat_free(&m);
	return true;
}

/* Draw one head's thumbnail of stack S (cached in CACHE) with its top-left corner at (X,Y). */
static void grid_thumb(struct grid_state *g, struct view_ctx *ctx, struct canvas *cv, const struct grid_layout *lo,
		       const struct grid_sec *s, struct grid_cache *cache, int layer, int head, int x, int y)
{
	int idx = layer * s->t->n_heads + head;
	if (idx >= cache->n_thumb)
		return;
	if (!cache->thumb[idx]) {
		float *px = malloc((size_t)lo->px_w * lo->px_h * sizeof *px);
		if (!px || !grid_pool(g, ctx, lo, s, cache, cache->key.token, layer, head, px)) {
			free(px);
			return;
		}
		cache->thumb[idx] = px;
	}
	const float *px = cache->thumb[idx];
	int rpc = canvas_heat_rows(cv), ph = lo->px_h, pw = lo->px_w;
	const struct palette *pal = cv->pal;
	struct palette div;
	if (ctx->compare) {
		palette_diverging(pal, &div);
		cv->pal = &div;
	}
	struct canvas_image *img = lo->block ? canvas_image(cv, x, y, ph, pw, lo->block, lo->block) : NULL;
	if (img) {
		for (int r = 0; r < ph; r++)
			for (int c = 0; c < pw; c++)
				canvas_image_set(img, r, c, px[(size_t)r * pw + c]);
		cv->pal = pal;
		return;
	}
	for (int r = 0; r < lo->th; r++) {
		for (int c = 0; c < pw; c++) {
			int r0 = r * rpc, r1 = r0 + 1;
			float top = r0 < ph ? px[(size_t)r0 * pw + c] : NAN;
			float bottom = rpc == 2 && r1 < ph ? px[(size_t)r1 * pw + c] : NAN;
			canvas_heat2(cv, x + c, y + r, top, bottom);
		}
	}
	cv->pal = pal;
}

/* The key/value head row at Y: over each group of query heads sharing a key/value head (the visible
 * heads COL0..COL_END-1), a bracket "kv1" spanning the group's thumbnails. */
static void grid_kv_row(struct view_ctx *ctx, const struct trace *t, struct canvas *cv, const struct grid_layout *lo,
			int col0, int col_end, int ax, int y)
{
	int sel_kv = trace_kv_head(t, ctx->head);
	canvas_text(cv, ax, y, lo->label_w, "kv", canvas_role(cv, ROLE_DIM));
	for (int h = col0; h < col_end;) {
		int first, last;
		shapedesc_group(t, h, &first, &last);
		int a = h, b = last < col_end - 1 ? last : col_end - 1;
		int x0 = ax + lo->label_w + 1 + (a - col0) * (lo->tw + 1);
		int x1 = ax + lo->label_w + 1 + (b - col0) * (lo->tw + 1) + lo->tw - 1;
		int kv = trace_kv_head(t, h);
		struct style st = canvas_role(cv, kv == sel_kv ? ROLE_LABEL_SEL : ROLE_DIM);
		for (int x = x0; x <= x1; x++)
			canvas_put(cv, x, y, canvas_glyph(cv, GLYPH_HLINE), st);
		if (x1 > x0) {
			canvas_put(cv, x0, y, a == first ? (cv->pal->utf8 ? 0x256d : '+') : canvas_glyph(cv, GLYPH_HLINE), st);
			canvas_put(cv, x1, y, b == last ? (cv->pal->utf8 ? 0x256e : '+') : canvas_glyph(cv, GLYPH_HLINE), st);
		}
		char lab[16];
		snprintf(lab, sizeof lab, x1 - x0 + 1 >= 5 ? "kv%d" : "%d", kv);
		int lw = (int)strlen(lab), span = x1 - x0 + 1;
		if (lw > span)
			lw = span;
		canvas_text(cv, x0 + (span - lw) / 2, y, lw, lab, st);
		h = b + 1;
	}
}

/* Ends of a diverging scale ±RANGE as the legend writes them ("-0.0062", "+0.0062"). */
static void grid_diff_ends(float range, char *lo, char *hi, size_t n)
{
	snprintf(lo, n, "-%.2g", range);
	snprintf(hi, n, "+%.2g", range);
}

static void grid_legend(const struct grid_state *g, struct view_ctx *ctx, struct canvas *cv, int x, int y, int maxw)
{
	char label[48], right[24];
	if (ctx->compare) {
		char lo[24];
		grid_diff_ends(g->c[0].diff_range, lo, right, sizeof right);
		snprintf(label, sizeof label, "B - A %s", lo);
	} else {
		const char *lo, *hi;
		heatdata_scale_ends(ctx->scale, &lo, &hi);
		snprintf(label, sizeof label, "%s %s", heatdata_scale_name(ctx->scale), lo);
		snprintf(right, sizeof right, "%s", hi);
	}
	chart_colour_bar(cv, x, y, maxw, label, right, ctx->compare != NULL);
}

/* The head numbers and the thumbnails of stack S laid out by LO, its head numbers at row HY and its first layer
 * shown (ROW0) at Y0, the selected head framed when SELECTED; ALL: one of several sections, whose rows outside
 * AREA are not drawn (a thumbnail image is not clipped). */
static void grid_body(struct grid_state *g, struct view_ctx *ctx, struct canvas *cv, struct rect area,
		      const struct grid_layout *lo, const struct grid_sec *s, struct grid_cache *c, int hy, int y0,
		      int row0, int rows_end, bool selected, bool all)
{
	const struct trace *t = s->t;
	int cols_end = g->col0 + lo->cols_fit;
	/* Head numbers, under the key/value heads they read when heads share them. */
	if (shapedesc_gqa(t))
		grid_kv_row(ctx, t, cv, lo, g->col0, cols_end, area.x, hy - 1);
	for (int h = g->col0; h < cols_end; h++) {
		int x = area.x + lo->label_w + 1 + (h - g->col0) * (lo->tw + 1);
		char num[16];
		snprintf(num, sizeof num, "%d", h);
		int nw = (int)strlen(num);
		int nx = x + (lo->tw - nw) / 2;
		canvas_text(cv, nx, hy, nw, num, canvas_role(cv, selected && h == ctx->head ? ROLE_LABEL_SEL : ROLE_LABEL));
	}
	canvas_text(cv, area.x, hy, lo->label_w, "L\\H", canvas_role(cv, ROLE_DIM));
	if (g->col0 > 0)
		canvas_put(cv, area.x + lo->label_w, hy, canvas_glyph(cv, GLYPH_LEFT), canvas_role(cv, ROLE_DIM));
	if (cols_end < t->n_heads)
		canvas_put(cv, area.x + lo->label_w + 1 + lo->cols_fit * (lo->tw + 1), hy,
			   canvas_glyph(cv, GLYPH_RIGHT), canvas_role(cv, ROLE_DIM));
	bool marks = !all || (!s->cross && !t->encoder); /* ablation marks: the encoder's heads */
	for (int l = row0; l < rows_end; l++) {
		int y = y0 + (l - row0) * (lo->th + 1);
		if (all && (y < area.y || y + lo->th > area.y + area.h))
			continue;
		char lab[48];
		grid_layer_label(t, l, cv->pal->utf8, lab, sizeof lab);
		bool ablated = false; /* heads marked for ablation (B, E): the layer label and a corner mark */
		for (int h = 0; marks && ctx->ablation && ctx->ablation->mask && h < t->n_heads; h++)
			ablated = ablated || grid_ablated(ctx, l, h);
		canvas_text(cv, area.x, y + (lo->th - 1) / 2, lo->label_w - 1, lab,
			    canvas_role(cv, ablated ? ROLE_ERROR : selected && l == ctx->layer ? ROLE_LABEL_SEL : ROLE_LABEL));
		for (int h = g->col0; h < cols_end; h++) {
			int x = area.x + lo->label_w + 1 + (h - g->col0) * (lo->tw + 1);
			grid_thumb(g, ctx, cv, lo, s, c, l, h, x, y);
			if (marks && grid_ablated(ctx, l, h))
				canvas_put(cv, x, y, cv->pal->utf8 ? 0x2717 : 'x', canvas_role(cv, ROLE_ERROR));
		}
	}
	if (row0 > 0)
		canvas_put(cv, area.x, y0 - 1, canvas_glyph(cv, GLYPH_UP), canvas_role(cv, ROLE_DIM));
	if (rows_end < t->n_layers)
		canvas_put(cv, area.x, y0 + (rows_end - row0) * (lo->th + 1) - 1, canvas_glyph(cv, GLYPH_DOWN),
			   canvas_role(cv, ROLE_DIM));
	/* The frame around the selected head, in the gaps between thumbnails. */
	if (selected && ctx->layer >= row0 && ctx->layer < rows_end && ctx->head >= g->col0 && ctx->head < cols_end) {
		int x = area.x + lo->label_w + 1 + (ctx->head - g->col0) * (lo->tw + 1);
		int y = y0 + (ctx->layer - row0) * (lo->th + 1);
		canvas_box(cv, (struct rect){x - 1, y - 1, lo->tw + 2, lo->th + 2}, canvas_role(cv, ROLE_SELECTED));
	}
}

/* Whether CTX shows an encoder-decoder's three stacks as sections. */
static bool grid_all(const struct view_ctx *ctx)
{
	const struct trace *t = ctx->trace;
	return ctx->all_stacks && t && !t->source && (t->decoder || t->encoder);
}

/* The three stacks of CTX's encoder-decoder into SEC[GRID_SECTIONS]; returns the selected head's section. */
static int grid_sections(const struct view_ctx *ctx, bool utf8, struct grid_sec *sec)
{
	const struct trace *t = ctx->trace, *enc = t->encoder ? t->encoder : t, *dec = enc->decoder;
	sec[0] = (struct grid_sec){enc, false, "encoder self-attention"};
	sec[1] = (struct grid_sec){dec, false, "decoder self-attention (causal)"};
	sec[2] = (struct grid_sec){dec, true, utf8 ? "cross-attention: target rows \xc3\x97 source columns"
						   : "cross-attention: target rows x source columns"};
	return ctx->cross ? 2 : t->encoder ? 1 : 0;
}

/* Rows a section of stack S laid out by LO takes: its title, head numbers and layers. */
static int grid_section_rows(const struct grid_sec *s, const struct grid_layout *lo)
{
	return lo->top + s->t->n_layers * (lo->th + 1);
}

/* The three sections one under the other, a blank row between them, scrolled (SCROLL) to keep the selected
 * head in sight; the first section's title carries the colour legend. */
static void grid_draw_all(struct grid_state *g, struct view_ctx *ctx, struct canvas *cv, struct rect area)
{
	struct grid_sec sec[GRID_SECTIONS];
	struct grid_layout lo[GRID_SECTIONS];
	int sel = grid_sections(ctx, cv->pal->utf8, sec), off[GRID_SECTIONS], total = 0;
	for (int i = 0; i < GRID_SECTIONS; i++) {
		lo[i] = grid_layout(g, sec[i].t, sec[i].cross, cv, area.w, -1);
		off[i] = total;
		total += grid_section_rows(&sec[i], &lo[i]) + 1;
	}
	total--;
	const struct grid_layout *ls = &lo[sel];
	g->page_rows = ls->rows_fit;
	g->px_w = ls->px_w;
	g->px_h = ls->px_h;
	g->row0 = 0;
	if (ctx->head < g->col0) /* the selected head's column in sight; the other sections follow */
		g->col0 = ctx->head;
	if (ctx->head >= g->col0 + ls->cols_fit)
		g->col0 = ctx->head - ls->cols_fit + 1;
	if (g->col0 < 0)
		g->col0 = 0;
	int sel_y = off[sel] + ls->top + ctx->layer * (ls->th + 1); /* the selected thumbnail's first row */
	if (ctx->print)
		g->scroll = 0;
	else if (ctx->layer == 0 && off[sel] < g->scroll) /* a section's first layer: its title too */
		g->scroll = off[sel];
	else if (sel_y - 1 < g->scroll)
		g->scroll = sel_y - 1;
	if (!ctx->print && sel_y + ls->th + 1 > g->scroll + area.h)
		g->scroll = sel_y + ls->th + 1 - area.h;
	if (g->scroll > total - area.h)
		g->scroll = total - area.h;
	if (g->scroll < 0)
		g->scroll = 0;
	const char *dot = cv->pal->utf8 ? "\xc2\xb7" : "-";
	for (int i = 0; i < GRID_SECTIONS; i++) {
		const struct trace *t = sec[i].t;
		int y = area.y + off[i] - g->scroll, cols = sec[i].cross ? t->n_cross : t->n;
		grid_cache_key(g, &g->c[i], ctx, &sec[i], i == sel ? ctx->token : -1, &lo[i]);
		char title[256], heads[64], n[32];
		snprintf(n, sizeof n, sec[i].cross ? "%d %s %d" : "%d", t->n, cv->pal->utf8 ? "\xc3\x97" : "x", cols);
		snprintf(title, sizeof title, "%s %s %d layers %s %s %s %s tokens", sec[i].name, dot, t->n_layers,
			 cv->pal->utf8 ? "\xc3\x97" : "x", shapedesc_heads(t, heads, sizeof heads), dot, n);
		if (ctx->hide_special)
			snprintf(title + strlen(title), sizeof title - strlen(title), " (specials hidden)");
		struct style st = canvas_role(cv, i == sel ? ROLE_TITLE : ROLE_LABEL);
		int tw = y >= area.y ? canvas_text(cv, area.x, y, area.w, title, st) : 0;
		if (i == 0 && y >= area.y)
			grid_legend(g, ctx, cv, area.x + tw + 2, y, area.w - tw - 2);
		grid_body(g, ctx, cv, area, &lo[i], &sec[i], &g->c[i], y + lo[i].top - 2, y + lo[i].top, 0, t->n_layers,
			  i == sel, true);
	}
	if (g->scroll > 0)
		canvas_put(cv, area.x + area.w - 1, area.y, canvas_glyph(cv, GLYPH_UP), canvas_role(cv, ROLE_DIM));
	if (g->scroll + area.h < total)
		canvas_put(cv, area.x + area.w - 1, area.y + area.h - 1, canvas_glyph(cv, GLYPH_DOWN), canvas_role(cv, ROLE_DIM));
}

static void grid_draw(void *state, struct view_ctx *ctx, struct canvas *cv, struct rect area)
{
	struct grid_state *g = state;
	const struct trace *t = ctx->trace;
	struct rect old = canvas_clip(cv, area);
	if (!t || t->n == 0 || t->n_layers == 0 || t->n_heads == 0) {
		canvas_text(cv, area.x, area.y, area.w, t ? "no tokens" : "running the model…", canvas_role(cv, ROLE_DIM));
		canvas_clip(cv, old);
		return;
	}
	if (grid_all(ctx)) {
		grid_draw_all(g, ctx, cv, area);
		canvas_clip(cv, old);
		return;
	}
	struct grid_layout lo = grid_layout(g, t, ctx->cross, cv, area.w, ctx->print ? -1 : area.h);
	grid_follow(g, ctx, &lo);
	struct grid_sec one = {t, ctx->cross, NULL};
	grid_cache_key(g, &g->c[0], ctx, &one, ctx->token, &lo); /* before the title: it says the difference scale */
	g->page_rows = lo.rows_fit;
	g->px_w = lo.px_w;
	g->px_h = lo.px_h;

	int shown = ctx->hide_special ? 0 : t->n;
	if (ctx->hide_special)
		for (int i = 0; i < t->n; i++)
			shown += !t->special[i];
	bool shrunk = lo.px_w < shown || lo.px_h < shown;
	char title[256], heads[64];
	snprintf(title, sizeof title, "%d layers %s %s %s %d%s %s %s %s", t->n_layers,
		 cv->pal->utf8 ? "\xc3\x97" : "x", shapedesc_heads(t, heads, sizeof heads), cv->pal->utf8 ? "\xc2\xb7" : "-", shown,
		 ctx->hide_special ? " non-special" : "", t->source ? "words" : "tokens", cv->pal->utf8 ? "\xc2\xb7" : "-",
		 shrunk ? (g->pool == HEAT_POOL_MAX ? "thumbnails max-pooled" : "thumbnails mean-pooled")
			: "thumbnails at full resolution");
	if (t->thumb && !ctx->compare && shown > TRACE_THUMB) /* a compact trace: the colour scale saw blocks */
		snprintf(title + strlen(title), sizeof title - strlen(title), " from %d%s%d blocks", TRACE_THUMB,
			 cv->pal->utf8 ? "\xc3\x97" : "x", TRACE_THUMB);
	if (t->sinks && !ctx->compare && t->n > 0) { /* gpt-oss: rows sum to less than 1; where the rest went */
		double share = 0;
		for (int i = 0; i < t->n; i++)
			share += heat_sink_share(t, ctx->layer, ctx->head, HEAT_HEAD, i);
		snprintf(title + strlen(title), sizeof title - strlen(title), " %s sink takes %.1f%% of L%d H%d's rows",
			 cv->pal->utf8 ? "\xc2\xb7" : "-", 100.0 * share / t->n, ctx->layer, ctx->head);
	}
	if (ctx->compare) { /* the second text: what the thumbnails show, and the selected head's change */
		int rows = compare_rows(t, ctx->compare);
		char ends[48];
		snprintf(ends, sizeof ends, "ramp %s%.2g (%s)", cv->pal->utf8 ? "\xc2\xb1" : "+-", g->c[0].diff_range,
			 ctx->diff_fixed ? "fixed" : "largest change");
		snprintf(title + strlen(title), sizeof title - strlen(title), " %s B - A over %d %s rows %s L%d H%d changed %.3f %s %s",
			 cv->pal->utf8 ? "\xc2\xb7" : "-", rows, rows == t->n ? "matching" : "common-prefix",
			 cv->pal->utf8 ? "\xc2\xb7" : "-", ctx->layer, ctx->head, compare_tv(t, ctx->compare, ctx->layer, ctx->head),
			 cv->pal->utf8 ? "\xc2\xb7" : "-", ends);
	}
	if (ctx->cross) /* the thumbnails are decoder rows against encoder columns */
		snprintf(title + strlen(title), sizeof title - strlen(title), " %s cross-attention: target rows %s %d source columns",
			 cv->pal->utf8 ? "\xc2\xb7" : "-", cv->pal->utf8 ? "\xc3\x97" : "x", t->n_cross);
	int tw = canvas_text(cv, area.x, area.y, area.w, title, canvas_role(cv, ROLE_TITLE));
	grid_legend(g, ctx, cv, area.x + tw + 2, area.y, area.w - tw - 2);

	struct grid_sec sec = {t, ctx->cross, NULL};
	grid_body(g, ctx, cv, area, &lo, &sec, &g->c[0], area.y + lo.top - 2, area.y + lo.top, g->row0,
		  g->row0 + lo.rows_fit, true, false);
	canvas_clip(cv, old);
}

static int grid_height(void *state, struct view_ctx *ctx, const struct canvas *cv, int width)
{
	const struct trace *t = ctx->trace;
	if (!t || t->n == 0 || t->n_layers == 0 || t->n_heads == 0)
		return 1;
	if (grid_all(ctx)) { /* the three sections, a blank row between them */
		struct grid_sec sec[GRID_SECTIONS];
		int rows = -1;
		grid_sections(ctx, cv->pal->utf8, sec);
		for (int i = 0; i < GRID_SECTIONS; i++) {
			struct grid_layout lo = grid_layout(state, sec[i].t, sec[i].cross, cv, width, -1);
			rows += grid_section_rows(&sec[i], &lo) + 1;
		}
		return rows;
	}
	struct grid_layout lo = grid_layout(state, t, ctx->cross, cv, width, -1);
	return lo.top + t->n_layers * (lo.th + 1);
}

static int clampi(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static bool grid_act(void *state, struct view_ctx *ctx, enum action a, int count)
{
	struct grid_state *g = state;
	const struct trace *t = ctx->trace;
	int rep = count > 0 ? count : 1;
	if (!t)
		return a == ACT_POOL || a == ACT_ZOOM_IN || a == ACT_ZOOM_OUT;
	int L = t->n_layers, H = t->n_heads;
	int page = g->page_rows > 1 ? g->page_rows : 1;
	if (grid_all(ctx) && !ctx->print && (a == ACT_UP || a == ACT_DOWN || a == ACT_LAYER_PREV || a == ACT_LAYER_NEXT)) {
		/* Past a section's first or last layer: the section before or after (the explorer switches the stack). */
		struct grid_sec sec[GRID_SECTIONS];
		int s = grid_sections(ctx, false, sec), l = ctx->layer + (a == ACT_UP || a == ACT_LAYER_PREV ? -rep : rep);
		while (l < 0 && s > 0)
			l += sec[--s].t->n_layers;
		while (l >= sec[s].t->n_layers && s < GRID_SECTIONS - 1)
			l -= sec[s++].t->n_layers;
		ctx->layer = clampi(l, 0, sec[s].t->n_layers - 1);
		if (sec[s].t != t || sec[s].cross != ctx->cross)
			ctx->want_stack = 1 + s;
		return true;
	}
	switch (a) {
	case ACT_UP:
	case ACT_LAYER_PREV:
		ctx->layer = clampi(ctx->layer - rep, 0, L - 1);
		return true;
	case ACT_DOWN:
	case ACT_LAYER_NEXT:
		ctx->layer = clampi(ctx->layer + rep, 0, L - 1);
		return true;
	case ACT_LEFT:
		ctx->head = clampi(ctx->head - rep, 0, H - 1);
		return true;
	case ACT_RIGHT:
		ctx->head = clampi(ctx->head + rep, 0, H - 1);
		return true;
	case ACT_HEAD_PREV:
	case ACT_HEAD_NEXT: {
		/* Heads in reading order: past the last head of a layer comes the next layer. */
		int idx = ctx->layer * H + ctx->head + (a == ACT_HEAD_NEXT ? rep : -rep);
		idx = clampi(idx, 0, L * H - 1);
		ctx->layer = idx / H;
		ctx->head = idx % H;
		return true;
	}
	case ACT_PAGE_UP:
		ctx->layer = clampi(ctx->layer - page * rep, 0, L - 1);
		return true;
	case ACT_PAGE_DOWN:
		ctx->layer = clampi(ctx->layer + page * rep, 0, L - 1);
		return true;
	case ACT_FIRST:
		ctx->layer = count >= 0 ? clampi(count, 0, L - 1) : 0;
		if (count < 0)
			ctx->head = 0;
		return true;
	case ACT_LAST:
		ctx->layer = count >= 0 ? clampi(count, 0, L - 1) : L - 1;
		if (count < 0)
			ctx->head = H - 1;
		return true;
	case ACT_COLUMN:
		ctx->head = count >= 0 ? clampi(count, 0, H - 1) : 0;
		return true;
	case ACT_OPEN:
		ctx->push = &view_heatmap;
		return true;
	case ACT_POOL:
		g->pool = g->pool == HEAT_POOL_MAX ? HEAT_POOL_MEAN : HEAT_POOL_MAX;
		snprintf(ctx->message, sizeof ctx->message, "thumbnails shrink by %s",
			 g->pool == HEAT_POOL_MAX ? "max" : "mean");
		return true;
	case ACT_ZOOM_IN:
		if (g->zoom < 24)
			g->zoom++;
		return true;
	case ACT_ZOOM_OUT:
		if (g->zoom > -24)
			g->zoom--;
		return true;
	default:
		return false;
	}
}

static void grid_status(void *state, struct view_ctx *ctx, char *buf, size_t n)
{
	struct grid_state *g = state;
	snprintf(buf, n, "%s-pool", g->pool == HEAT_POOL_MAX ? "max" : "mean");
	if (ctx->compare && ctx->trace)
		snprintf(buf + strlen(buf), n - strlen(buf), ", changed %.3f",
			 compare_tv(ctx->trace, ctx->compare, ctx->layer, ctx->head));
}

static const enum action grid_actions[] = {
	ACT_UP, ACT_DOWN, ACT_LEFT, ACT_RIGHT, ACT_PAGE_UP, ACT_PAGE_DOWN, ACT_FIRST, ACT_LAST, ACT_COLUMN,
	ACT_OPEN, ACT_HEAD_PREV, ACT_HEAD_NEXT, ACT_LAYER_PREV, ACT_LAYER_NEXT, ACT_POOL, ACT_ZOOM_IN,
	ACT_ZOOM_OUT, ACTION_NONE,
};
static const enum action grid_status_keys[] = {ACT_OPEN, ACT_EDIT, ACT_HELP, ACT_BACK, ACTION_NONE};

const struct view view_grid = {
	.name = "grid",
	.title = "Grid view",
	.flags = VIEW_CROSS | VIEW_STACKS,
	.actions = grid_actions,
	.status_keys = grid_status_keys,
	.create = grid_create,
	.destroy = grid_destroy,
	.draw = grid_draw,
	.height = grid_height,
	.act = grid_act,
	.status = grid_status,
};
