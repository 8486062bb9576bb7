/* view-vectors.c -- attention in vector space (attnvec.h).
 *
 * Top: each token's attention row for the selected layer (mean over its heads, or — with m — the
 * selected head's), reduced by PCA to two dimensions and drawn as labelled vectors from the
 * origin (the mean row). As notebook 000 (to_xy_coords): special tokens' rows and columns are
 * dropped and the rest left as they are, and the coordinates are divided by their Frobenius norm;
 * v switches to attnscope's variant, where specials stay unless hidden (s), and hiding them
 * renormalises the rows. z scales rows to unit length.
 *
 * Below: for every layer, a small plot of token A (the selected token) projected onto token B
 * (marked with b), so one sees at which layer A's attention starts to lean towards B's. As the
 * notebook: A's and B's points in the layer's PCA plane scaled to unit length, the projection
 * (a·b)b, on the PCA axes. attnscope's variant projects the rows themselves: B along the x axis,
 * A in the plane of the two, the projection (A·B/|B|²)B, with the coefficient and the cosine. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/anaview.h"
#include "analysis/attnvec.h"
#include "draw/braille.h"
#include "views/marks.h"
#include "draw/tokstrip.h"
#include "views/view.h"

#define VV_PLOT_ROWS 16   /* the PCA plot in --print */
#define VV_SMALL_W 28     /* one small multiple, with its gap */
#define VV_SMALL_H 6      /* rows of a small plot (plus one title row) */

struct vectors_state {
	bool head_only;    /* the selected head's rows instead of the layer mean */
	bool unit;         /* rows scaled to unit length */
	bool attnscope;    /* attnscope's variant: specials follow hide-special (renormalised), no norm */
	int b;             /* token B (trace index), -1 until chosen */
	/* Cache of the PCA plot. */
	bool valid;
	unsigned gen;
	const struct trace *t;
	int layer, head;
	bool c_head_only, c_unit;
	enum attnvec_special c_special;
	struct attnvec v;
	char error[128];
	/* Cache of the small multiples: one projection per layer. */
	struct vv_proj_key {
		unsigned gen;
		const struct trace *t;
		int a, b, head;         /* head -1: the layer mean */
		int marks[VIEW_MARKS_MAX], n_marks; /* A is these combined when there are any */
		bool unit;
		enum attnvec_special special;
	} pkey;
	struct attnvec_proj *proj;  /* [n_layers] */
	bool *proj_ok;              /* [n_layers] false when A or B is dropped */
	/* The notebook projects in each layer's PCA plane: every layer's coordinates (not its rows),
	 * kept while only A or B changes. */
	struct vv_proj_key plkey;   /* a = b = -1 */
	struct attnvec *planes;     /* [n_layers] */
	int n_planes;
};

static void *vectors_create(struct view_ctx *ctx)
{
	(void)ctx;
	struct vectors_state *s = calloc(1, sizeof *s);
	if (s)
		s->b = -1;
	return s;
}

static void vectors_destroy(void *state)
{
	struct vectors_state *s = state;
	attnvec_free(&s->v);
	free(s->proj);
	free(s->proj_ok);
	for (int l = 0; l < s->n_planes; l++)
		attnvec_free(&s->planes[l]);
	free(s->planes);
	free(s);
}

/* What happens to special tokens: dropped as they are (the notebook), else as hide-special says. */
static enum attnvec_special vectors_special(const struct vectors_state *s, const struct view_ctx *ctx)
{
	if (!s->attnscope)
		return ATTNVEC_DROP;
	return ctx->hide_special ? ATTNVEC_DROP_RENORM : ATTNVEC_KEEP;
}

static bool vectors_dropped(const struct vectors_state *s, const struct view_ctx *ctx, int i)
{
	return vectors_special(s, ctx) != ATTNVEC_KEEP && ctx->trace->special[i];
}

static bool vectors_ensure(struct vectors_state *s, const struct view_ctx *ctx)
{
	const struct trace *t = ctx->trace;
	enum attnvec_special sp = vectors_special(s, ctx);
	if (s->valid && s->gen == ctx->trace_gen && s->t == t && s->layer == ctx->layer &&
	    (!s->head_only || s->head == ctx->head) && s->c_head_only == s->head_only && s->c_unit == s->unit &&
	    s->c_special == sp)
		return !s->error[0];
	attnvec_free(&s->v);
	s->valid = true, s->gen = ctx->trace_gen, s->t = t, s->layer = ctx->layer, s->head = ctx->head;
	s->c_head_only = s->head_only, s->c_unit = s->unit, s->c_special = sp;
	s->error[0] = 0;
	struct err e = {{0}};
	if (attnvec_rows(t, ctx->layer, s->head_only ? ctx->head : -1, sp, s->unit, &s->v, &e) || attnvec_pca(&s->v, &e))
		snprintf(s->error, sizeof s->error, "%s", e.msg);
	else if (!s->attnscope)
		attnvec_scale_xy(&s->v);
	return !s->error[0];
}

/* Token B: the marked one, else the first kept token that is not A. */
static int vectors_b(const struct vectors_state *s, const struct view_ctx *ctx, int a)
{
	const struct trace *t = ctx->trace;
	if (s->b >= 0 && s->b < t->n && !vectors_dropped(s, ctx, s->b))
		return s->b;
	for (int i = 0; i < t->n; i++)
		if (i != a && !vectors_dropped(s, ctx, i))
			return i;
	return a;
}

/* Token A: the selected one, else the last kept token. */
static int vectors_a(const struct vectors_state *s, const struct view_ctx *ctx)
{
	const struct trace *t = ctx->trace;
	if (ctx->token >= 0 && ctx->token < t->n && !vectors_dropped(s, ctx, ctx->token))
		return ctx->token;
	for (int i = t->n - 1; i >= 0; i--)
		if (!vectors_dropped(s, ctx, i))
			return i;
	return 0;
}

static int vectors_small_rows(int n_layers, int width)
{
	int per = width / VV_SMALL_W;
	per = per < 1 ? 1 : per;
	return (n_layers + per - 1) / per;
}

/* Every layer's PCA coordinates for the notebook's projections (K with a = b = -1), unless the
 * cache holds them; a layer that fails has no rows (its projection is n/a). False on OOM. */
static bool vectors_planes(struct vectors_state *s, const struct trace *t, const struct vv_proj_key *k)
{
	if (s->planes && !memcmp(k, &s->plkey, sizeof *k))
		return true;
	for (int l = 0; l < s->n_planes; l++)
		attnvec_free(&s->planes[l]);
	free(s->planes);
	s->n_planes = 0;
	s->planes = calloc((size_t)t->n_layers, sizeof *s->planes);
	if (!s->planes)
		return false;
	s->n_planes = t->n_layers;
	for (int l = 0; l < t->n_layers; l++) {
		struct err e = {{0}};
		if (attnvec_rows(t, l, k->head, k->special, k->unit, &s->planes[l], &e) == 0 &&
		    attnvec_pca(&s->planes[l], &e) == 0) {
			free(s->planes[l].rows); /* the projection needs the coordinates only */
			s->planes[l].rows = NULL;
		} else {
			attnvec_free(&s->planes[l]);
		}
	}
	s->plkey = *k;
	return true;
}

/* Project A onto B in every layer, unless the cache already holds it; false on OOM. */
static bool vectors_projections(struct vectors_state *s, const struct view_ctx *ctx, int a, int b)
{
	const struct trace *t = ctx->trace;
	struct vv_proj_key k;
	memset(&k, 0, sizeof k); /* padding too, for memcmp */
	k.gen = ctx->trace_gen, k.t = t, k.a = a, k.b = b, k.head = s->head_only ? ctx->head : -1;
	k.unit = s->unit, k.special = vectors_special(s, ctx);
	memcpy(k.marks, ctx->marks, (size_t)ctx->n_marks * sizeof *k.marks);
	k.n_marks = ctx->n_marks;
	const int *as = k.n_marks ? k.marks : &k.a;
	int na = k.n_marks ? k.n_marks : 1;
	if (s->proj && !memcmp(&k, &s->pkey, sizeof k))
		return true;
	free(s->proj);
	free(s->proj_ok);
	s->proj = calloc((size_t)t->n_layers, sizeof *s->proj);
	s->proj_ok = calloc((size_t)t->n_layers, sizeof *s->proj_ok);
	if (!s->proj || !s->proj_ok) {
		free(s->proj), free(s->proj_ok);
		s->proj = NULL, s->proj_ok = NULL;
		return false;
	}
	struct vv_proj_key pk = k;
	pk.a = pk.b = -1;
	pk.n_marks = 0;
	memset(pk.marks, 0, sizeof pk.marks);
	if (!s->attnscope && !vectors_planes(s, t, &pk))
		return false;
	for (int l = 0; l < t->n_layers; l++) {
		if (!s->attnscope) {
			s->proj_ok[l] = attnvec_project_xy_set(&s->planes[l], as, na, b, &s->proj[l]) == 0;
			continue;
		}
		struct attnvec v;
		struct err e = {{0}};
		if (attnvec_rows(t, l, k.head, k.special, k.unit, &v, &e))
			continue;
		s->proj_ok[l] = attnvec_project_set(&v, as, na, b, &s->proj[l]) == 0;
		attnvec_free(&v);
	}
	s->pkey = k;
	return true;
}

/* One small multiple for LAYER at (X, Y). */
static void vectors_small(struct vectors_state *s, struct view_ctx *ctx, struct canvas *cv, int layer, int x, int y)
{
	struct attnvec_proj pr = s->proj[layer];
	struct style title = canvas_role(cv, layer == ctx->layer ? ROLE_LABEL_SEL : ROLE_LABEL);
	if (!s->proj_ok[layer]) {
		canvas_printf(cv, x, y, VV_SMALL_W - 2, title, "L%d: n/a", layer);
		return;
	}
	canvas_printf(cv, x, y, VV_SMALL_W - 2, title, "L%d coef %.2f cos %.2f", layer, pr.coef, pr.cos);
	struct bplot p;
	struct rect r = {x, y + 1, VV_SMALL_W - 2, VV_SMALL_H};
	if (!s->attnscope) {
		/* The notebook's frame: unit vectors on the PCA axes, limits ±1, equal scales. */
		if (bplot_init(&p, cv, r, -1, 1, -1, 1, true))
			return;
	} else {
		/* Equal scales with the origin near the lower left: the x range follows from the y range. */
		double ext = fmax(fmax(pr.norm_a, pr.norm_b), 1e-12), y0 = -0.1 * ext, y1 = 1.05 * ext;
		double x1 = y0 + (y1 - y0) * bplot_aspect(cv, r);
		if (x1 < ext)
			x1 = ext; /* a very flat plot: let the scales differ rather than cut B off */
		if (bplot_init(&p, cv, r, y0, x1, y0, y1, false))
			return;
	}
	p.style[1] = canvas_role(cv, ROLE_QUERY);
	p.style[2] = canvas_role(cv, ROLE_KEY);
	p.style[3] = canvas_role(cv, ROLE_SELECTED);
	bplot_axes(&p);
	bplot_line(&p, 0, 0, pr.b[0], pr.b[1], 2);
	bplot_line(&p, 0, 0, pr.a[0], pr.a[1], 1);
	bplot_line(&p, pr.a[0], pr.a[1], pr.p[0], pr.p[1], 0);   /* the drop from A to its projection */
	bplot_line(&p, 0, 0, pr.p[0], pr.p[1], 3);
	bplot_label(&p, cv, pr.a[0], pr.a[1], "A", canvas_role(cv, ROLE_QUERY));
	bplot_label(&p, cv, pr.b[0], pr.b[1], "B", canvas_role(cv, ROLE_KEY));
	bplot_flush(&p, cv);
	bplot_free(&p);
}

static void vectors_draw(void *state, struct view_ctx *ctx, struct canvas *cv, struct rect area)
{
	struct vectors_state *s = state;
	struct rect old;
	if (!anaview_begin(ctx, cv, area, &old) || anaview_failed(cv, area, old, vectors_ensure(s, ctx) ? NULL : s->error))
		return;
	const struct trace *t = ctx->trace;
	const struct attnvec *v = &s->v;
	const char *dot = anaview_dot(cv);
	int a = vectors_a(s, ctx), b = vectors_b(s, ctx, a);
	char la[256], lb[256], what[64];
	tokstrip_label(t, a, cv->pal->utf8, la, sizeof la);
	tokstrip_label(t, b, cv->pal->utf8, lb, sizeof lb);
	if (s->head_only)
		snprintf(what, sizeof what, "head %d", ctx->head);
	else
		snprintf(what, sizeof what, "mean of %d heads", t->n_heads);
	canvas_printf(cv, area.x, area.y, area.w, canvas_role(cv, ROLE_TITLE),
		      "attention rows as vectors %s layer %d, %s %s %s rows%s %s PCA (%.0f%% + %.0f%%)", dot, ctx->layer, what,
		      dot, s->unit ? "unit-length" : "raw", vectors_special(s, ctx) != ATTNVEC_KEEP ? ", specials dropped" : "",
		      dot, 100 * v->explained[0], 100 * v->explained[1]);
	if (s->attnscope)
		canvas_printf(cv, area.x, area.y + 1, area.w, canvas_role(cv, ROLE_LABEL),
			      "attnscope: %s %s xy as PCA gives them %s %d rows",
			      ctx->hide_special ? "specials dropped, rows renormalised (s)" : "every token (s hides specials)",
			      dot, dot, v->m);
	else
		canvas_printf(cv, area.x, area.y + 1, area.w, canvas_role(cv, ROLE_LABEL),
			      "notebook 000: specials dropped, rows not renormalised %s xy / Frobenius norm %.4g %s %d rows", dot,
			      v->xy_norm, dot, v->m);
	int small_rows = vectors_small_rows(t->n_layers, area.w);
	int small_h = small_rows * (VV_SMALL_H + 1) + 1;
	int ph = ctx->print ? VV_PLOT_ROWS : area.h - 3 - small_h - 1;
	if (ph < 4)
		ph = area.h - 4 > 4 ? area.h - 4 : 4, small_rows = 0; /* too small: the PCA plot only */
	double xmin = 0, xmax = 0, ymin = 0, ymax = 0;
	for (int i = 0; i < v->m; i++) {
		xmin = fmin(xmin, v->xy[2 * i]), xmax = fmax(xmax, v->xy[2 * i]);
		ymin = fmin(ymin, v->xy[2 * i + 1]), ymax = fmax(ymax, v->xy[2 * i + 1]);
	}
	struct bplot p;
	if (bplot_init(&p, cv, (struct rect){area.x, area.y + 2, area.w, ph}, xmin, xmax, ymin, ymax, true)) {
		canvas_clip(cv, old);
		return;
	}
	p.style[1] = canvas_role(cv, ROLE_DIM);
	p.style[2] = canvas_role(cv, ROLE_QUERY);
	p.style[3] = canvas_role(cv, ROLE_KEY);
	bplot_axes(&p);
	int ia = attnvec_find(v, a), ib = attnvec_find(v, b);
	if (ctx->n_marks) { /* A is the marked tokens combined: their points are drawn as A's */
		marks_label(ctx, cv->pal->utf8, la, sizeof la);
		ia = -1;
	}
	/* A long text's tips outnumber the cells: then they are a density (ordinary tokens and special
	 * ones apart), with no line from the origin but A's and B's. */
	for (int i = 0; i < v->m; i++)
		if (i != ia && i != ib && !marks_has(ctx, v->tok[i]) &&
		    bplot_density_add(&p, t->special[v->tok[i]] ? 1 : 0, v->xy[2 * i], v->xy[2 * i + 1]))
			break;
	bool dense = bplot_dense(&p, v->m);
	for (int i = 0; i < v->m && !dense; i++)
		if (i != ia && i != ib && !marks_has(ctx, v->tok[i]))
			bplot_line(&p, 0, 0, v->xy[2 * i], v->xy[2 * i + 1], 1);
	if (ib >= 0)
		bplot_line(&p, 0, 0, v->xy[2 * ib], v->xy[2 * ib + 1], 3);
	for (int i = 0; i < v->m; i++)
		if (i == ia || marks_has(ctx, v->tok[i]))
			bplot_line(&p, 0, 0, v->xy[2 * i], v->xy[2 * i + 1], 2);
	/* Every tip first (labels must not cover them), then labels: A and B before the rest so they are
	 * never crowded out. */
	for (int i = 0; i < v->m; i++) {
		bool is_a = i == ia || marks_has(ctx, v->tok[i]);
		if (dense && !is_a && i != ib)
			continue;
		struct style st = canvas_role(cv, is_a ? ROLE_TOKEN_SEL : i == ib ? ROLE_KEY
							 : t->special[v->tok[i]] ? ROLE_SPECIAL : ROLE_TEXT);
		bplot_marker(&p, cv, v->xy[2 * i], v->xy[2 * i + 1], is_a || i == ib ? 0x25cf : 0x2022,
			     is_a || i == ib ? 'o' : '.', st);
	}
	long upper[BPLOT_LEVELS];
	if (dense) {
		const struct style st[BPLOT_KINDS + 1] = {canvas_role(cv, ROLE_TEXT), canvas_role(cv, ROLE_SPECIAL),
							  canvas_role(cv, ROLE_LABEL)};
		bplot_density_draw(&p, cv, st, upper);
	}
	for (int k = 0; k < (dense ? 2 : 3); k++)
		for (int i = 0; i < v->m; i++) {
			bool is_a = i == ia || marks_has(ctx, v->tok[i]);
			if ((k == 0 && !is_a) || (k == 1 && (i != ib || is_a)) || (k == 2 && (is_a || i == ib)))
				continue;
			char lab[300], tl[256];
			tokstrip_label(t, v->tok[i], cv->pal->utf8, tl, sizeof tl);
			snprintf(lab, sizeof lab, "%s%s", k == 0 ? "A:" : k == 1 ? "B:" : "", tl);
			struct style st = canvas_role(cv, k == 0 ? ROLE_TOKEN_SEL : k == 1 ? ROLE_KEY
							: t->special[v->tok[i]] ? ROLE_SPECIAL : ROLE_TEXT);
			bplot_label(&p, cv, v->xy[2 * i], v->xy[2 * i + 1], lab, st);
		}
	bplot_flush(&p, cv);
	int y = area.y + 2 + ph;
	if (dense) { /* the shades, and what they replace */
		int x = area.x + canvas_text(cv, area.x, y, area.w, "tips of the other tokens as a density: ", canvas_role(cv, ROLE_DIM));
		x += bplot_density_legend(cv, x, y, area.w - (x - area.x), upper, canvas_role(cv, ROLE_DIM));
		canvas_printf(cv, x, y, area.w - (x - area.x), canvas_role(cv, ROLE_DIM), " %s vectors of A and B from the mean row",
			      dot);
	} else {
		canvas_printf(cv, area.x, y, area.w, canvas_role(cv, ROLE_DIM),
			      "vectors from the mean row %s %d of %d labels shown %s axes through the origin", dot,
			      p.labels_drawn, v->m, dot);
	}
	bplot_free(&p);
	if (small_rows > 0) {
		char anum[48];
		snprintf(anum, sizeof anum, ctx->n_marks ? "%d combined: rows summed" : "%d", ctx->n_marks ? ctx->n_marks : a);
		y++;
		if (s->attnscope)
			canvas_printf(cv, area.x, y, area.w, canvas_role(cv, ROLE_LABEL),
				      "A = %s (%s) onto B = %s (%d), every layer: B along x, projection (A%sB/|B|%s)B", la,
				      anum, lb, b, cv->pal->utf8 ? "\xc2\xb7" : ".", cv->pal->utf8 ? "\xc2\xb2" : "^2");
		else
			canvas_printf(cv, area.x, y, area.w, canvas_role(cv, ROLE_LABEL),
				      "A = %s (%s) onto B = %s (%d), every layer: A and B scaled to 1 in its PCA plane, "
				      "projection (A%sB)B", la, anum, lb, b, cv->pal->utf8 ? "\xc2\xb7" : ".");
		int per = area.w / VV_SMALL_W;
		per = per < 1 ? 1 : per;
		if (vectors_projections(s, ctx, a, b))
			for (int l = 0; l < t->n_layers; l++)
				vectors_small(s, ctx, cv, l, area.x + (l % per) * VV_SMALL_W, y + 1 + (l / per) * (VV_SMALL_H + 1));
	}
	canvas_clip(cv, old);
}

static int vectors_height(void *state, struct view_ctx *ctx, const struct canvas *cv, int width)
{
	(void)state, (void)cv;
	if (!ctx->trace)
		return 1;
	return 2 + VV_PLOT_ROWS + 2 + vectors_small_rows(ctx->trace->n_layers, width) * (VV_SMALL_H + 1);
}

static bool vectors_act(void *state, struct view_ctx *ctx, enum action a, int count)
{
	struct vectors_state *s = state;
	switch (a) {
	case ACT_MEAN_HEADS:
		s->head_only = !s->head_only;
		return true;
	case ACT_VARIANT:
		s->attnscope = !s->attnscope;
		snprintf(ctx->message, sizeof ctx->message, "%s",
			 s->attnscope ? "attnscope: specials as s says, renormalised when hidden"
				      : "notebook: specials dropped as they are, coordinates / Frobenius norm");
		return true;
	case ACT_NORMALISE:
		s->unit = !s->unit;
		snprintf(ctx->message, sizeof ctx->message, "rows %s", s->unit ? "scaled to unit length" : "as they are");
		return true;
	case ACT_MARK:
		if (ctx->trace && ctx->token >= 0) {
			s->b = ctx->token;
			snprintf(ctx->message, sizeof ctx->message, "B = token %d", s->b);
		} else {
			snprintf(ctx->message, sizeof ctx->message, "select a token first");
		}
		return true;
	case ACT_COMBINE:
		if (ctx->trace)
			marks_toggle(ctx, vectors_a(s, ctx));
		return true;
	default:
		return anaview_token_keys(ctx, a, count) || anaview_nav(ctx, a, count);
	}
}

static void vectors_status(void *state, struct view_ctx *ctx, char *buf, size_t n)
{
	struct vectors_state *s = state;
	buf[0] = 0;
	if (!ctx->trace || ctx->trace->n == 0)
		return;
	int a = vectors_a(s, ctx);
	snprintf(buf, n, "A %d B %d, %s", a, vectors_b(s, ctx, a), s->attnscope ? "attnscope" : "notebook");
}

static const enum action vectors_actions[] = {
	ACT_UP, ACT_DOWN, ACT_MARK, ACT_COMBINE, ACT_MEAN_HEADS, ACT_NORMALISE, ACT_VARIANT, ACT_HEAD_PREV, ACT_HEAD_NEXT,
	ACT_LAYER_PREV, ACT_LAYER_NEXT, ACTION_NONE,
};
static const enum action vectors_status_keys[] = {ACT_MARK, ACT_VARIANT, ACT_NORMALISE, ACT_MEAN_HEADS, ACT_HELP,
						  ACT_BACK, ACTION_NONE};

const struct view view_vectors = {
	.name = "vectors",
	.title = "Attention in vector space",
	.open = ACT_VIEW_VECTORS,
	.actions = vectors_actions,
	.status_keys = vectors_status_keys,
	.create = vectors_create,
	.destroy = vectors_destroy,
	.draw = vectors_draw,
	.height = vectors_height,
	.act = vectors_act,
	.status = vectors_status,
};
