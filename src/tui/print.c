/* print.c -- headless rendering (`--print`): a view of one trace drawn into a canvas and written out
 * as plain text or ANSI, plus the setup it shares with the TUI and a redraw benchmark. */
#include "config.h"

#include "tui/print.h"

#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "views/actions.h"
#include "corpus/aggregate.h"
#include "draw/canvas.h"
#include "draw/pixout.h"
#include "draw/svg.h"
#include "tui/graphics.h"
#include "views/marks.h"
#include "trace/shapedesc.h"
#include "draw/tokstrip.h"
#include "views/registry.h"
#include "analysis/words.h"
#include "analysis/valnorm.h"

void print_options_init(struct ui_options *o)
{
	memset(o, 0, sizeof *o);
	o->color = UI_COLOR_AUTO;
	o->depth = -1;
	o->layer = o->head = o->token = -1;
	o->scale = HEAT_LINEAR;
	o->agg = HEAT_HEAD;
}

int print_load_theme(const struct ui_options *o, const struct userconf *conf, struct theme *th, struct err *e)
{
	const char *name = o->theme ? o->theme : conf && conf->theme[0] ? conf->theme : "viridis";
	return theme_load(name, th, e);
}

bool print_locale_utf8(void)
{
	setlocale(LC_CTYPE, "");
	const char *cs = nl_langinfo(CODESET);
	return cs && (!strcmp(cs, "UTF-8") || !strcmp(cs, "utf8"));
}

static const char *env(const char *name)
{
	return getenv(name);
}

enum color_depth print_depth(const struct ui_options *o, bool is_tty)
{
	if (o->depth >= DEPTH_MONO && o->depth <= DEPTH_TRUE)
		return (enum color_depth)o->depth;
	if (o->color == UI_COLOR_NEVER)
		return DEPTH_MONO;
	enum color_depth d = theme_detect_depth(env);
	if (o->color == UI_COLOR_ALWAYS) {
		/* An explicit request beats NO_COLOR and a TERM that says nothing. */
		if (d == DEPTH_MONO) {
			const char *ct = getenv("COLORTERM");
			d = ct && (!strcmp(ct, "truecolor") || !strcmp(ct, "24bit")) ? DEPTH_TRUE : DEPTH_256;
		}
		return d;
	}
	return is_tty ? d : DEPTH_MONO;
}

static int output_width(const struct ui_options *o, FILE *out)
{
	if (o->width > 0)
		return o->width < 20 ? 20 : o->width;
	struct winsize ws;
	if (isatty(fileno(out)) && ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return 80;
}

const char *print_model_label(const char *name, char *buf, size_t n)
{
	snprintf(buf, n, "%s", name);
	size_t len = strlen(buf);
	while (len > 1 && buf[len - 1] == '/')
		buf[--len] = 0;
	const char *slash = strrchr(buf, '/');
	return slash && slash[1] ? slash + 1 : buf;
}

static void print_header(struct canvas *cv, const struct trace *t, const struct view_ctx *ctx, const char *view)
{
	const char *dot = cv->pal->utf8 ? " \xc2\xb7 " : " - ";
	char label[256];
	char heads[64] = "", kv[16] = "";
	if (shapedesc_gqa(t)) { /* grouped-query attention: the shape and the selected head's kv head */
		shapedesc_heads(t, heads, sizeof heads);
		snprintf(heads + strlen(heads), sizeof heads - strlen(heads), "%s", dot);
		snprintf(kv, sizeof kv, " (kv %d)", trace_kv_head(t, ctx->head));
	}
	char marked[200] = "", lab[160];
	if (ctx->n_marks)
		snprintf(marked, sizeof marked, "%scombined: %s", dot, marks_label(ctx, cv->pal->utf8, lab, sizeof lab));
	char weights[64] = ""; /* --weights norm: say so where every line of the picture is described */
	if (trace_weights_norm(t))
		snprintf(weights, sizeof weights, "%sweights %s", dot, cv->pal->utf8 ? "\xe2\x80\x96\xce\xb1\xc2\xb7" "f(x)\xe2\x80\x96" : "|a.f(x)|");
	char stack[96] = ""; /* an encoder-decoder's decoder: which of its attentions */
	if (t->encoder)
		snprintf(stack, sizeof stack, "%s%s", ctx->cross ? "cross-attention: target rows " : "decoder self-attention",
			 ctx->cross ? (cv->pal->utf8 ? "\xc3\x97 source columns" : "x source columns") : "");
	if (ctx->all_stacks) /* --stack all: the grid's three sections */
		snprintf(stack, sizeof stack, "encoder, decoder and cross-attention");
	if (stack[0])
		snprintf(stack + strlen(stack), sizeof stack - strlen(stack), "%s", dot);
	canvas_printf(cv, 0, 0, cv->w, canvas_role(cv, ROLE_TITLE), "%s%s%s%s%s%s%d %s%s%s%s%slayer %d head %d%s%s%s",
		      t->model_name[0] ? print_model_label(t->model_name, label, sizeof label) : "(model)", dot, t->family[0] ? t->family : "?", dot, stack, heads, t->n,
		      t->source ? "words" : "tokens", t->truncated ? " (truncated)" : "", dot, view, dot, ctx->layer, ctx->head, kv,
		      marked, weights);
}

/* The header of an aggregate: model, family, texts and tokens, view. */
static void print_agg_header(struct canvas *cv, const struct aggregate *a, const char *view)
{
	const char *dot = cv->pal->utf8 ? " \xc2\xb7 " : " - ";
	char label[256];
	bool partial = false;
	for (int i = 0; i < a->n_src; i++)
		partial |= a->src[i].partial;
	canvas_printf(cv, 0, 0, cv->w, canvas_role(cv, ROLE_TITLE), "%s%s%s%scorpus: %llu texts, %llu tokens%s%s%s",
		      print_model_label(a->model.name, label, sizeof label), dot, a->model.family, dot,
		      (unsigned long long)a->c.texts, (unsigned long long)a->c.tokens, partial ? " (interrupted)" : "", dot,
		      view);
}

/* What print_trace and print_aggregate share: the view, the user's config and the palette. */
struct print_setup {
	const struct view *v;
	struct userconf *conf;
	struct palette pal;
};

static int print_setup(const char *view_name, const struct ui_options *o, FILE *out, struct print_setup *p,
		       struct err *e)
{
	p->conf = NULL;
	p->v = registry_find(view_name);
	if (!p->v) {
		char names[128];
		return err_set(e, "unknown view '%s' (%s)", view_name, registry_names(names, sizeof names, 0, ", ", ", "));
	}
	p->conf = malloc(sizeof *p->conf);
	if (!p->conf)
		return err_set(e, "out of memory");
	struct theme th;
	if (userconf_load(o->config, p->conf, e) || print_load_theme(o, p->conf, &th, e)) {
		free(p->conf);
		p->conf = NULL;
		return -1;
	}
	/* A picture has exact colours and every glyph, whatever the terminal and locale. */
	if (o->svg)
		theme_resolve(&th, DEPTH_TRUE, true, &p->pal);
	else if (o->print_pixels != PIXELS_NONE) /* the images' exact colours, the text's too */
		theme_resolve(&th, DEPTH_TRUE, print_locale_utf8(), &p->pal);
	else
		theme_resolve(&th, print_depth(o, isatty(fileno(out))), print_locale_utf8(), &p->pal);
	return 0;
}

static void print_ctx_init(struct view_ctx *ctx, const struct ui_options *o, const struct print_setup *p)
{
	memset(ctx, 0, sizeof *ctx);
	ctx->keys = &p->conf->keys;
	ctx->layer = o->layer >= 0 ? o->layer : 0;
	ctx->head = o->head >= 0 ? o->head : 0;
	ctx->token = o->token;
	_Static_assert(sizeof o->marks == sizeof ctx->marks, "ui_options.marks holds VIEW_MARKS_MAX tokens");
	memcpy(ctx->marks, o->marks, sizeof ctx->marks);
	ctx->n_marks = o->n_marks;
	ctx->scale = o->scale;
	ctx->diff_fixed = o->diff_fixed;
	ctx->hide_special = o->hide_special;
	ctx->qk_before_rotary = o->before_rotary;
	ctx->print = true;
	ctx->sort = o->sort;
	ctx->model = o->model;
	ctx->clean = o->clean;
	ctx->ablation = o->ablation;
	ctx->abl_effect = o->abl_effect;
}

/* The top view of CTX (V) drawn at its natural size, WIDTH columns, in PAL under a header line and
 * (with a trace) the token strip, and the second text's strip when comparing; VECTORS: for a picture
 * (canvas.vectors); PX_W x PX_H: the pixels of a cell when the heatmap may be an image, else 0.
 * NULL on OOM. */
static struct canvas *print_canvas(struct view_ctx *ctx, const struct view *v, const struct palette *pal, int width,
				   bool vectors, int px_w, int px_h)
{
	const struct trace *t = ctx->trace, *tb = ctx->compare;
	void *state = ctx->state[ctx->depth - 1];
	struct canvas probe = {.w = width, .h = 1, .pal = pal, .vectors = vectors, .px_w = px_w, .px_h = px_h};
	int strip_h = t ? tokstrip_rows(&probe, t, width) : -1, strip_b = t && tb ? 1 + tokstrip_rows(&probe, tb, width) : 0;
	if (t && t->encoder) /* an encoder-decoder's decoder: the source's strip above the target's */
		strip_h = tokstrip_encdec_rows(&probe, t, width);
	int view_h = v->height(state, ctx, &probe, width);
	int height = 1 + 1 + strip_h + strip_b + 1 + view_h;
	struct canvas *cv = canvas_new(width, height, pal);
	if (!cv)
		return NULL;
	cv->vectors = vectors;
	cv->px_w = px_w, cv->px_h = px_h;
	canvas_clear(cv, canvas_role(cv, ROLE_TEXT));
	if (t) {
		print_header(cv, t, ctx, v->name);
		if (t->encoder)
			tokstrip_draw_encdec(cv, (struct rect){0, 2, width, strip_h}, t, ctx->cross, ctx->token, true, NULL);
		else
			tokstrip_draw(cv, (struct rect){0, 2, width, strip_h}, t, ctx->token, true);
	} else {
		print_agg_header(cv, ctx->agg, v->name);
	}
	if (strip_b) { /* the second text under the first, with how they line up */
		canvas_printf(cv, 0, 2 + strip_h, width, canvas_role(cv, ROLE_LABEL), "compared with (B, %d %s; %s):", tb->n,
			      tb->source ? "words" : "tokens", tb->n == t->n ? "same length, B - A shown"
			      : "different lengths, side by side");
		tokstrip_draw(cv, (struct rect){0, 3 + strip_h, width, strip_b - 1}, tb, -1, true);
	}
	v->draw(state, ctx, cv, (struct rect){0, 3 + strip_h + strip_b, width, view_h});
	return cv;
}

/* Draw the top view of CTX (print_canvas) and write it out as text or SVG. */
static int print_draw(struct view_ctx *ctx, const struct print_setup *p, const struct ui_options *o, FILE *out,
		      struct err *e)
{
	int px_w = 0, px_h = 0;
	if (o->print_pixels != PIXELS_NONE) /* the terminal's cell size, when it is one that says */
		graphics_cell_size(fileno(out), &px_w, &px_h);
	struct canvas *cv = print_canvas(ctx, p->v, &p->pal, output_width(o, out), o->svg, px_w, px_h);
	if (!cv)
		return err_set(e, "out of memory");
	if (o->svg) {
		svg_write(cv, out);
	} else if (o->print_pixels != PIXELS_NONE) {
		char *s = pixout_canvas(cv, true, o->print_pixels);
		if (!s) {
			canvas_free(cv);
			return err_set(e, "out of memory");
		}
		fputs(s, out);
		free(s);
	} else {
		canvas_write(cv, out, p->pal.depth != DEPTH_MONO);
	}
	canvas_free(cv);
	if (fflush(out) || ferror(out))
		return err_set(e, "write error");
	return 0;
}

int print_export_svg(const struct view_ctx *live, const struct theme *th, int width, char *path, size_t n,
		     struct err *e)
{
	if (live->depth < 1 || !(live->trace || live->agg))
		return err_set(e, "nothing to save yet");
	/* The first free name: the view, its layer and head, a number when taken. */
	const struct view *v = live->stack[live->depth - 1];
	for (int i = 1;; i++) {
		if (i > 999)
			return err_set(e, "no free file name like %s in this folder", path);
		snprintf(path, n, i == 1 ? "attnscope-%s-L%dH%d.svg" : "attnscope-%s-L%dH%d-%d.svg", v->name, live->layer,
			 live->head, i);
		if (access(path, F_OK) != 0)
			break;
	}
	struct palette pal;
	theme_resolve(th, DEPTH_TRUE, true, &pal);
	struct view_ctx ctx = *live; /* the view's own state, drawn whole as --print draws it */
	ctx.print = true;
	ctx.message[0] = 0;
	if (ctx.pred_gen != ctx.trace_gen) /* stale: the picture makes (and frees) its own, never the explorer's */
		ctx.pred = NULL;
	struct canvas *cv = print_canvas(&ctx, v, &pal, width, true, 0, 0);
	if (ctx.pred != live->pred) /* made for the picture alone (the explorer had none yet) */
		view_predictions_free(&ctx);
	if (!cv)
		return err_set(e, "out of memory");
	FILE *f = fopen(path, "wx");
	int rc = 0;
	if (!f)
		rc = err_set(e, "%s: %s", path, strerror(errno));
	else if (svg_write(cv, f) || fclose(f))
		rc = err_set(e, "%s: write error", path);
	canvas_free(cv);
	return rc;
}

static int print_view(const struct trace *t, const struct trace *tb, const char *view_name,
		      const struct ui_options *o, FILE *out, struct err *e)
{
	struct print_setup p;
	if (print_setup(view_name, o, out, &p, e) < 0)
		return -1;
	const struct view *v = p.v;
	struct view_ctx ctx;
	print_ctx_init(&ctx, o, &p);
	ctx.trace = t;
	ctx.compare = tb;
	ctx.cross = o->stack == UI_STACK_CROSS;
	ctx.all_stacks = o->stack == UI_STACK_ALL;
	if (ctx.all_stacks && !(v->flags & VIEW_STACKS)) {
		char names[128];
		free(p.conf);
		return err_set(e, "--print %s cannot show the three stacks at once (%s can)", view_name,
			       registry_names(names, sizeof names, VIEW_STACKS, ", ", " and "));
	}
	if (ctx.cross && !(v->flags & VIEW_CROSS)) {
		char names[128];
		free(p.conf);
		return err_set(e, "--print %s cannot show cross-attention (%s can)", view_name,
			       registry_names(names, sizeof names, VIEW_CROSS, ", ", " and "));
	}
	if (ctx.cross && tb && !(v->flags & VIEW_CROSS_COMPARE)) {
		char names[128];
		free(p.conf);
		return err_set(e, "--print %s cannot show what changed in cross-attention (%s can)", view_name,
			       registry_names(names, sizeof names, VIEW_CROSS_COMPARE, ", ", " and "));
	}
	if (o->layer >= t->n_layers || o->head >= t->n_heads || o->token >= t->n) {
		free(p.conf);
		return err_set(e, "no %s %d: the model has %d layers of %d heads and the %s %d tokens",
			       o->layer >= t->n_layers ? "layer" : o->head >= t->n_heads ? "head" : "token",
			       o->layer >= t->n_layers ? o->layer : o->head >= t->n_heads ? o->head : o->token,
			       t->n_layers, t->n_heads, t->encoder ? "decoder's input" : "text", t->n);
	}
	for (int i = 0; i < o->n_marks; i++)
		if (o->marks[i] >= t->n) {
			free(p.conf);
			return err_set(e, "no token %d: the %s has %d %s", o->marks[i], t->encoder ? "decoder's input" : "text", t->n,
				       t->source ? "words" : "tokens");
		}
	view_ctx_clamp(&ctx);
	if (!view_push(&ctx, v)) {
		free(p.conf);
		return err_set(e, "out of memory");
	}
	/* Initial toggles go through the view's own actions, as keys would. */
	if (o->agg == HEAT_LAYER_MEAN)
		v->act(ctx.state[0], &ctx, ACT_MEAN_HEADS, -1);
	else if (o->agg == HEAT_ALL_MEAN)
		v->act(ctx.state[0], &ctx, ACT_MEAN_LAYERS, -1);
	if (o->numbers)
		v->act(ctx.state[0], &ctx, ACT_NUMBERS, -1);
	int rc = print_draw(&ctx, &p, o, out, e);
	view_pop_all(&ctx);
	view_predictions_free(&ctx);
	free(p.conf);
	return rc;
}

int print_trace(const struct trace *t, const char *view_name, const struct ui_options *o, FILE *out, struct err *e)
{
	return print_compare(t, NULL, view_name, o, out, e);
}

int print_compare(const struct trace *t, const struct trace *tb, const char *view_name, const struct ui_options *o,
		  FILE *out, struct err *e)
{
	if (o->stack == UI_STACK_ALL) { /* the grid's three sections, from the encoder's trace */
		if (!t->decoder)
			return err_set(e, "--stack all: %s is not an encoder-decoder model", t->model_name);
		if (tb || o->words || o->weights_norm)
			return err_set(e, "--stack all shows one text's tokens and weights: not with --compare, --words or --weights norm");
		return print_view(t, NULL, view_name, o, out, e);
	}
	if (o->stack != UI_STACK_ENCODER) { /* an encoder-decoder's decoder, its trace as any other */
		if (!t->decoder)
			return err_set(e, "--stack %s: %s is not an encoder-decoder model", o->stack == UI_STACK_CROSS ? "cross" : "decoder",
				       t->model_name);
		if (o->weights_norm)
			return err_set(e, "--stack %s shows the decoder's weights as they are: not with --weights norm",
				       o->stack == UI_STACK_CROSS ? "cross" : "decoder");
		if (tb && !tb->decoder)
			return err_set(e, "--compare: the second run has no decoder");
		if (!o->words) /* --compare, --compare-target: B's decoder beside A's */
			return print_view(t->decoder, tb ? tb->decoder : NULL, view_name, o, out, e);
		/* the decoder's words, their cross-attention to the source's */
		struct trace *w = words_build(t), *wb = tb ? words_build(tb) : NULL;
		int rc = !w || (tb && !wb) ? err_set(e, "out of memory")
			 : print_view(w->decoder, wb ? wb->decoder : NULL, view_name, o, out, e);
		trace_free(w);
		trace_free(wb);
		return rc;
	}
	struct trace *nt = NULL, *ntb = NULL; /* --weights norm: what the explorer's Y shows, rows shared out to 1 */
	if (o->weights_norm && (!(nt = valnorm_build(t, false, e)) || (tb && !(ntb = valnorm_build(tb, false, e))))) {
		trace_free(nt);
		return -1;
	}
	const struct trace *ta = nt ? nt : t, *tba = ntb ? ntb : tb;
	int rc;
	if (!o->words) {
		rc = print_view(ta, tba, view_name, o, out, e);
	} else {
		struct trace *w = words_build(ta), *wb = tb ? words_build(tba) : NULL;
		rc = !w || (tb && !wb) ? err_set(e, "out of memory") : print_view(w, wb, view_name, o, out, e);
		trace_free(w);
		trace_free(wb);
	}
	trace_free(nt);
	trace_free(ntb);
	return rc;
}

int print_aggregate(const struct aggregate *a, const char *view_name, const struct ui_options *o, FILE *out,
		    struct err *e)
{
	char names[128];
	if (!registry_has(view_name, VIEW_AGGREGATE))
		return err_set(e, "--print %s needs one text; a corpus aggregate prints as %s", view_name,
			       registry_names(names, sizeof names, VIEW_AGGREGATE, ", ", " or "));
	if (o->layer >= a->model.n_layers || o->head >= a->model.n_heads)
		return err_set(e, "no %s %d: the model has %d layers of %d heads", o->layer >= a->model.n_layers ? "layer" : "head",
			       o->layer >= a->model.n_layers ? o->layer : o->head, a->model.n_layers, a->model.n_heads);
	if (a->c.texts == 0)
		return err_set(e, "the aggregate holds no text");
	struct print_setup p;
	if (print_setup(view_name, o, out, &p, e) < 0)
		return -1;
	struct view_ctx ctx;
	print_ctx_init(&ctx, o, &p);
	ctx.agg = a;
	ctx.token = -1;
	int rc = view_push(&ctx, p.v) ? print_draw(&ctx, &p, o, out, e) : err_set(e, "out of memory");
	view_pop_all(&ctx);
	free(p.conf);
	return rc;
}

void print_keys(FILE *out)
{
	actions_print_all(out);
}

double print_bench_grid_redraw(const struct trace *t, int w, int h, int reps, enum color_depth depth, bool cold)
{
	struct theme th;
	struct err e;
	/* A fixed two-stop theme: the benchmark must not depend on installed files. */
	if (theme_load_string("bench", "ramp: ['#440154', '#fde725']\n", &th, &e))
		return -1;
	struct palette pal;
	theme_resolve(&th, depth, true, &pal);
	struct keymap km;
	keymap_init(&km);
	struct view_ctx ctx = {0};
	ctx.trace = t;
	ctx.keys = &km;
	ctx.token = -1;
	struct canvas *cv = canvas_new(w, h, &pal);
	if (!cv || !view_push(&ctx, &view_grid)) {
		canvas_free(cv);
		return -1;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	size_t bytes = 0;
	for (int i = 0; i < reps; i++) {
		if (cold)
			ctx.trace_gen++;
		canvas_clear(cv, canvas_role(cv, ROLE_TEXT));
		view_grid.draw(ctx.state[0], &ctx, cv, (struct rect){0, 0, w, h});
		char *s = canvas_to_string(cv, true); /* what a full repaint sends to the terminal */
		bytes += s ? strlen(s) : 0;
		free(s);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	view_pop_all(&ctx);
	canvas_free(cv);
	if (reps <= 0 || !bytes)
		return -1;
	return ((double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6) / reps;
}
