/* ui.c -- the interactive explorer: curses setup, the event loop, input lines, frame layout.
 *
 * One loop owns input, redraw and resize (like htop). It poll()s the terminal and a pipe the
 * model worker writes to when a result is ready, so typing never waits for the model. Keys are
 * turned into actions through the key map: while an input line has the focus they edit text,
 * otherwise they go to the view on top of the stack. Every frame is drawn into a canvas and only
 * the cells that differ from the previous frame are handed to curses. */
#include "config.h"

#include "tui/ui.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/utf8.h"
#include "views/actions.h"
#include "corpus/aggregate.h"
#include "views/aggview.h"
#include "draw/canvas.h"
#include "corpus/corpusbg.h"
#include "tui/lineedit.h"
#include "analysis/valnorm.h"
#include "views/marks.h"
#include "tui/graphics.h"
#include "tui/print.h"
#include "base/progress.h"
#include "tui/runner.h"
#include "trace/shapedesc.h"
#include "draw/tokstrip.h"
#include "tui/userconf.h"
#include "views/registry.h"
#include "analysis/words.h"
#include "engine/lmhead.h"
#include "engine/ablate.h"
#include "tui/abljob.h"

#define UI_MIN_W 40
#define UI_MIN_H 12
#define UI_BATCH 512        /* keys read in one go (a paste arrives as one batch) */

enum focus { FOCUS_VIEW, FOCUS_TEXT, FOCUS_PAIR, FOCUS_COMPARE };

/* Both texts run on the same model through the same runner code, one run at a time: each runner
 * calls the source through this lock (the engine need not allow two runs at once). */
struct ui_locked_source {
	struct ui_source src;           /* what the runners call */
	const struct ui_source *inner;  /* the real source */
	pthread_mutex_t lock;
	volatile int waiting;           /* runners waiting for the lock (the ablation column lets them first) */
};

struct ui {
	const struct ui_source *src;
	struct runner *runner;
	int wake[2];                /* the worker writes to [1]; poll() watches [0] */
	struct userconf conf;
	struct theme theme;
	struct palette pal;
	struct view_ctx ctx;
	struct trace *trace;        /* owned; ctx.trace points here, or to words */
	struct trace *words;        /* owned: the words of trace while they are shown (ACT_WORDS), else NULL */
	bool show_words;
	struct trace *norm, *norm_b; /* owned: value-weighted weights of trace, trace_b while shown (ACT_WEIGHTS,
	                              * valnorm.h; words are then merged from them), else NULL */
	bool show_norm;
	bool norm_wait;             /* Y is on and the traces shown lack value norms: their rerun is under way */
	bool hide_sink;             /* the sink hidden, rows renormalised (ACT_SINK; the same derived traces) */
	int stack;                  /* enum ui_stack: an encoder-decoder's attention the views read (ACT_STACK) */
	int section;                /* under UI_STACK_ALL: the selected head's stack, the one the views read */
	/* The second text (ACT_COMPARE, --compare): its own runner over the same model. */
	struct ui_locked_source locked;
	struct runner *runner_b;
	struct trace *trace_b, *words_b; /* owned; ctx.compare points to one of them, or NULL */
	struct lineedit compare;
	bool compare_target;        /* an encoder-decoder's compare line is a second target for the same text (C pressed
	                             * under the decoder's stacks, --compare-target), not a second text */
	struct lineedit text, pair; /* pair: the second line, a pair's second sentence or an encoder-decoder's target */
	enum focus focus;
	int count;                  /* count prefix being typed, -1 for none */
	struct canvas *cv, *prev;   /* this frame and what curses already has */
	bool direct_color;          /* curses takes RGB values as colour numbers */
	SCREEN *screen;             /* the curses screen, NULL before setup */
	char run_error[ERR_MSG_MAX];
	bool quit;
	/* Corpus mode: the aggregate (owned; the newest snapshot while the run goes on) and the run. */
	struct aggregate *agg;
	struct corpusbg *bg;
	bool show_agg;          /* the views show agg rather than the typed text */
	bool bg_reported;       /* the run's end was said */
	/* Heads a compact trace recomputed in the current burst (ui_on_recompute). */
	int recomputed;
	double recompute_start, recompute_last;
	bool recompute_shown;   /* the status line was written around the canvas: repaint all */
	char recompute_what[96]; /* what was done when Esc stopped it */
	/* Pixel heatmaps (graphics.h): what the terminal takes, and what was sent. */
	struct graphics gfx;
	enum userconf_pixels pixels_mode; /* the setting: off, auto (ask), or a protocol used without asking */
	/* Head ablation (B, E, O): the marks, per model for as long as the explorer runs (texts edited keep
	 * them); the ablated rerun of trace for them, which the views show; the head finder's column. */
	struct ablation abl;        /* mask NULL until a mark is made (a model with heads to mark) */
	struct trace *abl_trace;    /* owned: trace rerun with the marked heads ablated, or NULL */
	unsigned clean_gen;         /* counts the clean traces taken (what the column is cached by) */
	struct abljob *job;         /* the column being computed, or NULL */
	double *abl_effect;         /* [n_layers][n_heads] the column's values (NaN: not done) */
	unsigned abl_effect_gen;    /* the clean_gen it is of (0: none) */
	enum ablate_mode abl_effect_mode; /* ... and the mode */
	bool abl_effect_stopped;    /* Esc stopped it: not started again until the head finder closes */
	char abl_effect_note[96];
};

/* ---- curses output ---- */

#define UI_MAX_ROWS 1024 /* lines of the screen used (a taller terminal shows blank lines below) */

/* A palette colour as curses numbers it (-1: the terminal's default). */
static int curses_color(uint32_t c)
{
	return c == COLOR_DEFAULT ? -1 : (int)(c & 255);
}

/* In direct-colour mode curses numbers colours by their RGB value. */
static int curses_rgb(uint32_t c)
{
	if (c == COLOR_DEFAULT)
		return -1;
	return COLOR_IS_RGB(c) ? (int)(c & 0xffffff) : (int)theme_index_rgb((int)c);
}

static int curses_pair(const struct ui *u, uint32_t fg, uint32_t bg)
{
	if (u->pal.depth == DEPTH_MONO || (fg == COLOR_DEFAULT && bg == COLOR_DEFAULT))
		return 0;
	/* alloc_pair reuses a pair for the same colours; a screen holds far fewer pairs than
	 * COLOR_PAIRS, so the recycling of old pairs never touches cells still shown. */
	int p = u->direct_color ? alloc_pair(curses_rgb(fg), curses_rgb(bg))
				: alloc_pair(curses_color(fg), curses_color(bg));
	return p < 0 ? 0 : p;
}

static void ui_flush(struct ui *u, bool *row_dirty)
{
	struct canvas *cv = u->cv, *prev = u->prev;
	for (int y = 0; y < cv->h; y++) {
		for (int x = 0; x < cv->w; x++) {
			const struct cell *c = canvas_at(cv, x, y);
			struct cell *p = canvas_at(prev, x, y);
			if (c->ch == p->ch && c->fg == p->fg && c->bg == p->bg && c->attr == p->attr)
				continue;
			*p = *c;
			row_dirty[y] = true;
			if (c->ch == 0)
				continue; /* right half of a wide character */
			attr_t a = A_NORMAL;
			if (c->attr & ATTR_BOLD)
				a |= A_BOLD;
			if (c->attr & ATTR_DIM)
				a |= A_DIM;
			if (c->attr & ATTR_UNDERLINE)
				a |= A_UNDERLINE;
			if (c->attr & ATTR_REVERSE)
				a |= A_REVERSE;
			int pair = curses_pair(u, c->fg, c->bg);
			wchar_t wc[2] = {(wchar_t)c->ch, 0};
			cchar_t cc;
			setcchar(&cc, wc, a, 0, &pair);
			mvadd_wch(y, x, &cc);
		}
	}
}

/* ---- pixel heatmaps ---- */

static void ui_invalidate(struct ui *u);

/* Before the frame goes out: the lines where a sixel image was and no longer is (or moved from)
 * are repainted in full (curses believes they hold the blanks it wrote). Kitty images are deleted
 * by graphics_send. */
static void ui_graphics_before(struct ui *u)
{
	if (u->gfx.on != PIXELS_SIXEL)
		return;
	for (int i = 0; i < u->gfx.n_sent; i++) {
		struct rect r = u->gfx.sent[i].at;
		bool kept = false;
		for (int k = 0; k < u->cv->n_images; k++) {
			struct rect n = u->cv->images[k].at;
			kept |= n.x == r.x && n.y == r.y && n.w == r.w && n.h == r.h;
		}
		if (!kept && r.y < LINES)
			wredrawln(stdscr, r.y, r.y + r.h <= LINES ? r.h : LINES - r.y);
	}
}

/* The cell size and protocol a setting gives, asking the terminal when it says auto (once). */
static void ui_graphics_ask(struct ui *u)
{
	unsigned char kept[64];
	int n_kept = 0;
	graphics_detect(&u->gfx, STDIN_FILENO, STDOUT_FILENO, GRAPHICS_TIMEOUT_MS, kept, &n_kept, (int)sizeof kept);
	for (int i = n_kept - 1; i >= 0; i--) /* keys typed while we waited */
		ungetch(kept[i]);
}

/* Turn pixel heatmaps on (with what the setting or the terminal gives) or off; says why not. */
static void ui_toggle_pixels(struct ui *u, bool quiet)
{
	struct graphics *g = &u->gfx;
	char *msg = u->ctx.message;
	size_t n = sizeof u->ctx.message;
	if (g->on != PIXELS_NONE) {
		graphics_clear(g, STDOUT_FILENO);
		g->on = PIXELS_NONE;
		idcok(stdscr, TRUE);
		ui_invalidate(u);
		clearok(curscr, TRUE); /* wipe the pixels */
		snprintf(msg, n, "heatmaps in character cells");
		return;
	}
	enum pixel_proto want = u->pixels_mode == USERCONF_PIXELS_SIXEL ? PIXELS_SIXEL
			      : u->pixels_mode == USERCONF_PIXELS_KITTY ? PIXELS_KITTY : PIXELS_NONE;
	if (want == PIXELS_NONE) {
		ui_graphics_ask(u);
		want = g->available;
	} else if (!g->asked) {
		graphics_cell_size(STDOUT_FILENO, &g->px_w, &g->px_h);
	}
	if (u->pal.depth == DEPTH_MONO) {
		if (!quiet)
			snprintf(msg, n, "pixel heatmaps need colour");
		return;
	}
	if (want == PIXELS_NONE) {
		if (quiet)
			return;
		if (!g->answered)
			snprintf(msg, n, "the terminal did not answer within %d ms: heatmaps stay in character cells", GRAPHICS_TIMEOUT_MS);
		else if (getenv("TMUX"))
			snprintf(msg, n, "tmux does not draw sixel here (tmux 3.4 built with sixel does): character cells");
		else
			snprintf(msg, n, "the terminal draws neither sixel nor kitty graphics: character cells");
		return;
	}
	g->on = want;
	idcok(stdscr, FALSE); /* curses must not shift a line's cells sideways: the pixels would not follow */
	ui_invalidate(u);
	snprintf(msg, n, "pixel heatmaps on: %s graphics, cells of %dx%d pixels", pixout_name(want), g->px_w, g->px_h);
}

/* Make the next flush send every cell (after a resize or C-l). */
static void ui_invalidate(struct ui *u)
{
	for (int y = 0; y < u->prev->h; y++)
		for (int x = 0; x < u->prev->w; x++)
			*canvas_at(u->prev, x, y) = (struct cell){0xffffffffu, 0, 0, 0xffff};
}

/* ---- heads of a long text recomputed ---- */

/* After each head a compact trace recomputes on this thread (trace_on_recompute). A view that
 * reads every head of a long text (rollout, the vectors, the head view) recomputes them all before
 * it can draw: 144 heads of gpt2 at 1,024 tokens took 7 s, 512 of Llama-3.2-1B at 4,096 minutes.
 * Meanwhile the bottom line counts them, straight to the terminal (the frame is not drawn yet),
 * and Ctrl-C quits: the terminal is raw, and the computation cannot be left half-way. */
static void ui_on_recompute(void *arg, const struct trace *t)
{
	struct ui *u = arg;
	double now = progress_now();
	if (now - u->recompute_last > 0.5) { /* a new burst */
		u->recomputed = 0;
		u->recompute_start = now;
	}
	u->recomputed++;
	u->recompute_last = now;
	if (now - u->recompute_start < 0.3)
		return;
	char line[200], took[32];
	progress_duration(took, sizeof took, now - u->recompute_start);
	snprintf(line, sizeof line, " recomputing the heads of this %d-token text: %d done in %s (%.2f s each); Esc stops, Ctrl-C quits ",
		 t->n, u->recomputed, took, (now - u->recompute_start) / u->recomputed);
	attron(A_REVERSE);
	mvaddnstr(LINES - 1, 0, line, COLS);
	attroff(A_REVERSE);
	clrtoeol();
	refresh();
	u->recompute_shown = true;
	/* keys typed meanwhile wait for the loop, except Ctrl-C */
	int keys[64], n = 0, ch;
	while (n < 64 && (ch = getch()) != ERR) {
		if (ch == 3) {
			endwin();
			fprintf(stderr, "attnscope: stopped while recomputing the heads of a %d-token text\n", t->n);
			_exit(130);
		}
		if (ch == 27) { /* ui_render closes the view once it has run out */
			trace_stop_recompute(true);
			snprintf(u->recompute_what, sizeof u->recompute_what, "%d heads of the %d-token text recomputed in %s",
				 u->recomputed, t->n, took);
			continue;
		}
		keys[n++] = ch;
	}
	while (n > 0)
		ungetch(keys[--n]);
}

/* Esc stopped a view's recomputation: what it computed meanwhile is not the model's, so the view
 * closes (or, in the grid, the comparison of every head ends), and the status line says so. */
static void ui_submit_compare(struct ui *u);

static void ui_recompute_stopped(struct ui *u)
{
	struct view_ctx *ctx = &u->ctx;
	const char *name = ctx->stack[ctx->depth - 1]->name;
	if (ctx->depth > 1) {
		view_pop(ctx);
	} else if (ctx->compare) {
		lineedit_set(&u->compare, "");
		ui_submit_compare(u);
		name = "comparison";
	} else {
		ctx->trace_gen++; /* the view stays: what it cached is made again */
	}
	trace_stop_recompute(false);
	snprintf(ctx->message, sizeof ctx->message, "stopped the %s: %s", name, u->recompute_what);
}

/* ---- frame ---- */

static int cp_width(uint32_t cp, void *ctx)
{
	const struct canvas *cv = ctx;
	char u[8];
	u[utf8_encode(cp, u)] = 0;
	return canvas_text_width(cv, u);
}

/* The name of the first key bound to A into BUF ("" when unbound). */
static const char *ui_first_key(const struct ui *u, enum action a, char *buf, size_t n)
{
	int k[1];
	buf[0] = 0;
	if (keymap_keys(u->ctx.keys, a, k, 1) == 1)
		action_key_name(k[0], buf, n);
	return buf;
}

/* "Over the corpus: head finder h, Q/K geometry x, …." into LINE of N bytes: the views that draw
 * a corpus aggregate and open by a key, each with its first key. */
static void ui_corpus_views(const struct ui *u, char *line, size_t n)
{
	snprintf(line, n, "Over the corpus:");
	for (int i = 0, k = 0; registry_views[i]; i++) {
		const struct view *v = registry_views[i];
		if (!(v->flags & VIEW_AGGREGATE) || v->open == ACTION_NONE)
			continue;
		char key[32];
		size_t len = strlen(line);
		snprintf(line + len, n - len, "%s %s %s", k++ ? "," : "", v->brief, ui_first_key(u, v->open, key, sizeof key));
	}
	size_t len = strlen(line);
	snprintf(line + len, n - len, ".");
}

/* Draw an input line; returns the cursor column when focused, else -1. */
static int ui_draw_input(struct ui *u, int y, const char *label, const char *hint, struct lineedit *le, bool focused)
{
	struct canvas *cv = u->cv;
	struct style lab = canvas_role(cv, ROLE_INPUT_LABEL), in = canvas_role(cv, ROLE_INPUT);
	if (focused)
		lab.attr |= ATTR_REVERSE;
	int lw = canvas_text(cv, 0, y, 6, label, lab);
	canvas_fill(cv, (struct rect){lw, y, cv->w - lw, 1}, ' ', in);
	int x0 = lw + 1, w = cv->w - x0;
	int cursor = lineedit_view(le, w - 1, cp_width, cv);
	/* Skip the columns scrolled off to the left, then draw what fits. */
	int col = 0;
	size_t i = 0;
	while (i < le->len && col < le->scroll) {
		uint32_t cp;
		i += (size_t)utf8_next(le->buf + i, le->len - i, &cp);
		col += cp_width(cp, cv);
	}
	canvas_text(cv, x0, y, w, le->buf + i, in);
	if (le->scroll > 0)
		canvas_put(cv, lw, y, canvas_glyph(cv, GLYPH_LEFT), canvas_role(cv, ROLE_DIM));
	if (!focused && !le->len)
		canvas_text(cv, x0, y, w, hint, canvas_role(cv, ROLE_DIM));
	return focused ? x0 + cursor : -1;
}

/* The second input line is shown: a pair model's second sentence or an encoder-decoder's target. */
static bool ui_second_line(const struct ui *u)
{
	return u->src->supports_pairs || u->src->target_line;
}

static bool ui_corpus_running(struct ui *u)
{
	char none[2];
	return u->bg && corpusbg_progress(u->bg, none, sizeof none, 1);
}

static void ui_draw_status(struct ui *u, int y)
{
	struct canvas *cv = u->cv;
	struct style st = canvas_role(cv, ROLE_STATUS), key = canvas_role(cv, ROLE_STATUS_KEY);
	canvas_fill(cv, (struct rect){0, y, cv->w, 1}, ' ', st);
	const struct view *v = u->ctx.stack[u->ctx.depth - 1];
	void *vs = u->ctx.state[u->ctx.depth - 1];
	const char *bar = cv->pal->utf8 ? " \xe2\x94\x82 " : " | ";
	char left[512], vstat[128] = "";
	if (v->status)
		v->status(vs, &u->ctx, vstat, sizeof vstat);
	const struct trace *t = u->ctx.agg ? NULL : u->ctx.trace;
	char ntok[96] = "-";
	if (u->ctx.agg)
		snprintf(ntok, sizeof ntok, "corpus %llu texts", (unsigned long long)u->ctx.agg->c.texts);
	else if (t)
		snprintf(ntok, sizeof ntok, "%d %s%s%s%s%s%s", t->n, t->source ? "words" : "tok", t->truncated ? " (cut)" : "",
			 trace_weights_norm(t) ? bar : "", trace_weights_norm(t) ? (cv->pal->utf8 ? "\xe2\x80\x96\xce\xb1" "f\xe2\x80\x96" : "|af|") : "",
			 trace_sink_hidden(t) ? bar : "", trace_sink_hidden(t) ? "no sink" : "");
	if (t && (t->decoder || t->encoder || (t->source && t->source->decoder))) /* an encoder-decoder: which stack */
		snprintf(ntok + strlen(ntok), sizeof ntok - strlen(ntok), " (%s%s)", u->stack == UI_STACK_ALL ? "all stacks: " : "",
			 !t->encoder ? "encoder"
			 : u->ctx.cross ? (cv->pal->utf8 ? "cross-attention: target rows \xc3\x97 source columns"
				 : "cross-attention: target rows x source columns") : "decoder self-attention");
	char label[256];
	const char *base = print_model_label(u->src->name, label, sizeof label);
	/* Under grouped-query attention: the shape, and the key/value head the selected head reads. */
	char heads[64] = "", kv[16] = "";
	if (t && shapedesc_gqa(t)) {
		shapedesc_heads(t, heads, sizeof heads);
		snprintf(heads + strlen(heads), sizeof heads - strlen(heads), "%s", bar);
		snprintf(kv, sizeof kv, " kv%d", trace_kv_head(t, u->ctx.head));
	}
	char marked[200] = "";
	if (t && u->ctx.n_marks) {
		char lab[160];
		snprintf(marked, sizeof marked, "%s%s", bar, marks_label(&u->ctx, cv->pal->utf8, lab, sizeof lab));
	}
	if (t && ablation_count(&u->abl) > 0) { /* which run the numbers are of */
		char desc[128];
		ablation_describe(&u->abl, desc, sizeof desc);
		snprintf(marked + strlen(marked), sizeof marked - strlen(marked), "%s%s: %s", bar,
			 u->ctx.clean ? "ablated" : "ablating", desc);
	}
	snprintf(left, sizeof left, " %s%s%s%s%sL%d H%d%s%s%s%s%s%s", base, bar, heads, ntok, bar, u->ctx.layer, u->ctx.head,
		 kv, bar, v->name, vstat[0] ? bar : "", vstat, marked);
	int x = canvas_text(cv, 0, y, cv->w, left, st);
	/* Then, in priority order: a message, the run state, the pending count. */
	const char *msg = NULL;
	struct style ms = st;
	if (u->ctx.message[0])
		msg = u->ctx.message;
	else if (u->run_error[0])
		msg = u->run_error, ms = canvas_role(cv, ROLE_ERROR);
	else if (runner_busy(u->runner) || runner_busy(u->runner_b))
		msg = "running…";
	char progress[160];
	int room_p = cv->w - x - 4; /* the bar only when there is room: the rate and time left first */
	if (!msg && u->bg && corpusbg_progress(u->bg, progress, sizeof progress, room_p < 72 ? room_p : 72))
		msg = progress; /* the corpus run: lines done, rate, time left */
	char count[32];
	if (u->count >= 0) {
		snprintf(count, sizeof count, "count %d", u->count);
		msg = count;
	}
	/* Keys at the right: the view's main actions, or the editing keys. */
	char keys[256] = "";
	if (u->focus != FOCUS_VIEW) {
		char k1[64], k2[64], k3[64];
		snprintf(keys, sizeof keys, "%s done  %s next  %s clear ",
			 keymap_describe(u->ctx.keys, ACT_ED_DONE, k1, sizeof k1),
			 keymap_describe(u->ctx.keys, ACT_ED_NEXT_FIELD, k2, sizeof k2),
			 keymap_describe(u->ctx.keys, ACT_ED_KILL_START, k3, sizeof k3));
	} else {
		/* As many of the view's main keys as fit next to the rest. */
		int room = cv->w - x - 2 - (msg ? canvas_text_width(cv, msg) + 2 : 0);
		for (const enum action *a = v->status_keys; a && *a != ACTION_NONE; a++) {
			char kn[32], item[64];
			if (!ui_first_key(u, *a, kn, sizeof kn)[0])
				continue;
			const char *verb = *a == ACT_BACK && u->ctx.depth == 1 ? "quit" : action_get(*a)->name;
			snprintf(item, sizeof item, "%s %s  ", kn, verb);
			if (canvas_text_width(cv, keys) + canvas_text_width(cv, item) > room)
				break;
			snprintf(keys + strlen(keys), sizeof keys - strlen(keys), "%s", item);
		}
	}
	int kw = canvas_text_width(cv, keys);
	if (msg && canvas_text_width(cv, msg) + 2 + kw > cv->w - x - 2) {
		keys[0] = 0; /* the message matters more than the key hints */
		kw = 0;
	}
	int room = cv->w - x - kw - 2;
	if (msg && room > 4)
		canvas_text(cv, x + 2, y, room, msg, ms);
	if (kw < cv->w - x - 1)
		canvas_text(cv, cv->w - kw, y, kw, keys, key);
}

/* Draw the whole frame; returns where the terminal cursor goes (x < 0: hidden). */
static void ui_draw(struct ui *u, int *cx, int *cy)
{
	struct canvas *cv = u->cv;
	canvas_clear(cv, canvas_role(cv, ROLE_TEXT));
	*cx = *cy = -1;
	if (cv->w < UI_MIN_W || cv->h < UI_MIN_H) {
		char msg[128];
		snprintf(msg, sizeof msg, "attnscope needs at least %dx%d (now %dx%d)", UI_MIN_W, UI_MIN_H, cv->w, cv->h);
		int lines = 1 + (canvas_text_width(cv, msg) > cv->w);
		int y = cv->h / 2 - lines / 2;
		if (lines == 1) {
			canvas_text(cv, (cv->w - canvas_text_width(cv, msg)) / 2, y, cv->w, msg, canvas_role(cv, ROLE_ERROR));
		} else {
			canvas_text(cv, 0, y, cv->w, "attnscope: terminal", canvas_role(cv, ROLE_ERROR));
			snprintf(msg, sizeof msg, "too small %dx%d", cv->w, cv->h);
			canvas_text(cv, 0, y + 1, cv->w, msg, canvas_role(cv, ROLE_ERROR));
			snprintf(msg, sizeof msg, "need %dx%d", UI_MIN_W, UI_MIN_H);
			canvas_text(cv, 0, y + 2, cv->w, msg, canvas_role(cv, ROLE_ERROR));
		}
		return;
	}
	int y = 0;
	char hint[96], k[64];
	snprintf(hint, sizeof hint, "(press %s to type)", ui_first_key(u, ACT_EDIT, k, sizeof k));
	int c = ui_draw_input(u, y, "text", hint, &u->text, u->focus == FOCUS_TEXT);
	if (c >= 0)
		*cx = c, *cy = y;
	y++;
	if (ui_second_line(u)) {
		if (u->src->target_line)
			snprintf(hint, sizeof hint, "(the decoder's text: press %s; empty, it reads its start token alone)",
				 ui_first_key(u, ACT_EDIT_PAIR, k, sizeof k));
		else
			snprintf(hint, sizeof hint, "(optional second sentence: press %s)",
				 ui_first_key(u, ACT_EDIT_PAIR, k, sizeof k));
		c = ui_draw_input(u, y, u->src->target_line ? "target" : "pair", hint, &u->pair, u->focus == FOCUS_PAIR);
		if (c >= 0)
			*cx = c, *cy = y;
		y++;
	}
	if (u->compare.len || u->focus == FOCUS_COMPARE) {
		snprintf(hint, sizeof hint, u->compare_target ? "(a second target for the same text)"
							  : "(a second text to compare with)");
		c = ui_draw_input(u, y, u->compare_target ? "vs tgt" : "vs", hint, &u->compare, u->focus == FOCUS_COMPARE);
		if (c >= 0)
			*cx = c, *cy = y;
		y++;
	}
	if (u->ctx.agg) {
		char line[256], ka[32];
		snprintf(line, sizeof line, "corpus aggregate of %llu texts%s %s %s shows the text typed instead",
			 (unsigned long long)u->ctx.agg->c.texts, ui_corpus_running(u) ? " so far" : "",
			 cv->pal->utf8 ? "\xc2\xb7" : "-", ui_first_key(u, ACT_CORPUS, ka, sizeof ka));
		canvas_text(cv, 0, y, cv->w, line, canvas_role(cv, ROLE_LABEL));
	} else if (u->ctx.trace && u->ctx.trace->encoder) { /* the decoder shown: the source above the target */
		struct tokstrip_heat sh = {view_surprisal_heat, view_surprisal_label, &u->ctx};
		tokstrip_draw_encdec(cv, (struct rect){0, y, cv->w, 4}, u->ctx.trace, u->ctx.cross, u->ctx.token, false,
				     u->ctx.surprisal_strip ? &sh : NULL);
		y += 2;
	} else if (u->ctx.trace) {
		struct tokstrip_heat sh = {view_surprisal_heat, view_surprisal_label, &u->ctx};
		tokstrip_draw_heat(cv, (struct rect){0, y, cv->w, 2}, u->ctx.trace, u->ctx.token, false,
				   u->ctx.surprisal_strip && !u->ctx.trace->source ? &sh : NULL);
	}
	y += 2;
	if (u->ctx.compare) { /* the second text's tokens under the first's */
		tokstrip_draw(cv, (struct rect){0, y, cv->w, 2}, u->ctx.compare, -1, false);
		y += 2;
	}
	/* A rule between the strip and the view. */
	canvas_fill(cv, (struct rect){0, y, cv->w, 1}, canvas_glyph(cv, GLYPH_HLINE), canvas_role(cv, ROLE_DIM));
	if (u->ctx.surprisal_strip && u->ctx.trace && !u->ctx.agg) { /* say that the strip shows surprisal */
		char note[160], ky[32];
		if (u->ctx.clean) /* beside the clean run: what the ablation changed */
			snprintf(note, sizeof note, " surprisal change (%s): ablated - clean nats under each token, * top-1 "
				 "changed, colour |change| 0 to ln V = %.1f ", ui_first_key(u, ACT_SURPRISAL, ky, sizeof ky),
				 log((double)lmhead_vocab(u->ctx.model)));
		else
			snprintf(note, sizeof note, " surprisal strip (%s): nats under each token, colour 0 to ln V = %.1f ",
				 ui_first_key(u, ACT_SURPRISAL, ky, sizeof ky), log((double)lmhead_vocab(u->ctx.model)));
		canvas_text(cv, 2, y, cv->w - 2, note, canvas_role(cv, ROLE_LABEL));
	}
	y++;
	const struct view *v = u->ctx.stack[u->ctx.depth - 1];
	if (u->ctx.agg && !(v->flags & VIEW_AGGREGATE)) { /* a view of one text, with the corpus shown */
		char kv[2][32], line[320];
		snprintf(line, sizeof line, "The %s view needs one text: %s shows the text typed (%s to type one).",
			 v->name, ui_first_key(u, ACT_CORPUS, kv[0], sizeof kv[0]), ui_first_key(u, ACT_EDIT, kv[1], sizeof kv[1]));
		canvas_text(cv, 0, y, cv->w, line, canvas_role(cv, ROLE_LABEL));
		ui_corpus_views(u, line, sizeof line);
		canvas_text(cv, 0, y + 1, cv->w, line, canvas_role(cv, ROLE_DIM));
	} else if (u->ctx.cross && !(v->flags & VIEW_CROSS)) { /* its numbers would be the decoder's, not cross */
		char sk[32], names[96], line[320];
		snprintf(line, sizeof line, "The %s view cannot show cross-attention: the %s can (%s: the next stack).", v->name,
			 registry_names(names, sizeof names, VIEW_CROSS, ", ", " and "), ui_first_key(u, ACT_STACK, sk, sizeof sk));
		canvas_text(cv, 0, y, cv->w, line, canvas_role(cv, ROLE_LABEL));
	} else if (u->ctx.cross && u->ctx.compare && !(v->flags & VIEW_CROSS_COMPARE)) { /* B - A would be the decoder's */
		char names[96], line[320];
		snprintf(line, sizeof line, "The %s view cannot show what changed in cross-attention: the %s can.", v->name,
			 registry_names(names, sizeof names, VIEW_CROSS_COMPARE, ", ", " and "));
		canvas_text(cv, 0, y, cv->w, line, canvas_role(cv, ROLE_LABEL));
	} else {
		v->draw(u->ctx.state[u->ctx.depth - 1], &u->ctx, cv, (struct rect){0, y, cv->w, cv->h - 1 - y});
	}
	ui_draw_status(u, cv->h - 1);
}

static void ui_render(struct ui *u)
{
	int w = COLS, h = LINES < UI_MAX_ROWS ? LINES : UI_MAX_ROWS;
	if (w != u->cv->w || h != u->cv->h) {
		canvas_resize(u->cv, w, h);
		canvas_resize(u->prev, w, h);
		if (u->gfx.on != PIXELS_NONE) { /* a new font size changes the cells' pixels too */
			int pw, ph;
			if (graphics_cell_size(STDOUT_FILENO, &pw, &ph))
				u->gfx.px_w = pw, u->gfx.px_h = ph;
		}
		ui_invalidate(u);
	}
	int cx, cy;
	u->cv->px_w = u->gfx.on != PIXELS_NONE ? u->gfx.px_w : 0;
	u->cv->px_h = u->gfx.on != PIXELS_NONE ? u->gfx.px_h : 0;
	u->ctx.pixels = u->gfx.on != PIXELS_NONE && u->pal.depth != DEPTH_MONO;
	ui_draw(u, &cx, &cy);
	if (trace_recompute_stopped()) {
		ui_recompute_stopped(u);
		ui_draw(u, &cx, &cy);
	}
	if (u->recompute_shown) { /* the progress line went around the canvas */
		u->recompute_shown = false;
		ui_invalidate(u);
	}
	ui_graphics_before(u);
	bool row_dirty[UI_MAX_ROWS] = {false}; /* the canvas never has more (ui_render) */
	ui_flush(u, row_dirty);
	if (cx >= 0 && cx < w) {
		curs_set(1);
		move(cy, cx);
	} else {
		curs_set(0);
		move(h - 1, w - 1);
	}
	wnoutrefresh(stdscr);
	doupdate();
	graphics_send(&u->gfx, u->cv, row_dirty, STDOUT_FILENO);
}

/* ---- input ---- */

static int ui_key(int rc, wint_t wch)
{
	if (rc == KEY_CODE_YES) {
		switch (wch) {
		case KEY_UP: return K_UP;
		case KEY_DOWN: return K_DOWN;
		case KEY_LEFT: return K_LEFT;
		case KEY_RIGHT: return K_RIGHT;
		case KEY_HOME: return K_HOME;
		case KEY_END: return K_END;
		case KEY_PPAGE: return K_PAGE_UP;
		case KEY_NPAGE: return K_PAGE_DOWN;
		case KEY_IC: return K_INSERT;
		case KEY_DC: return K_DELETE;
		case KEY_BACKSPACE: return K_BACKSPACE;
		case KEY_ENTER: return K_ENTER;
		case KEY_BTAB: return K_BACKTAB;
		case KEY_RESIZE: return K_RESIZE;
		default:
			if (wch >= KEY_F(1) && wch <= KEY_F(12))
				return K_F1 + (int)(wch - KEY_F(1));
			return -1;
		}
	}
	switch (wch) {
	case '\t': return K_TAB;
	case '\r':
	case '\n': return K_ENTER;
	case 27: return K_ESC;
	case 127: return K_BACKSPACE;
	default: return (int)wch;
	}
}

static void ui_submit(struct ui *u)
{
	const char *b = ui_second_line(u) && u->pair.len ? u->pair.buf : NULL;
	runner_submit(u->runner, u->text.buf, b);
}

/* Run the second text (with the same pair text or target), or the text with the second target, or, when the
 * line is empty, stop comparing. */
static void ui_submit_compare(struct ui *u)
{
	if (u->compare.len && u->compare_target) {
		runner_submit(u->runner_b, u->text.buf, u->compare.buf);
		return;
	}
	if (u->compare.len) {
		const char *b = ui_second_line(u) && u->pair.len ? u->pair.buf : NULL;
		runner_submit(u->runner_b, u->compare.buf, b);
		return;
	}
	u->compare_target = false;
	u->ctx.compare = NULL;
	trace_free(u->words_b);
	trace_free(u->norm_b); /* before the trace it reads */
	trace_free(u->trace_b);
	u->words_b = u->norm_b = u->trace_b = NULL;
	u->ctx.trace_gen++;
}

/* Input line LE changed: rerun what depends on it. */
static void ui_changed(struct ui *u, struct lineedit *le)
{
	if (le == &u->compare) {
		ui_submit_compare(u);
		return;
	}
	ui_submit(u);
	/* the second text shares the pair (or target); the second target shares the text */
	if (u->compare.len && le == (u->compare_target ? &u->text : &u->pair))
		ui_submit_compare(u);
}

static int ui_locked_run(void *ctx, const char *text, const char *text_b, const volatile int *cancel,
			 struct trace **out, struct err *e)
{
	struct ui_locked_source *l = ctx;
	__atomic_add_fetch(&l->waiting, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&l->lock);
	__atomic_sub_fetch(&l->waiting, 1, __ATOMIC_SEQ_CST);
	int rc = l->inner->run(l->inner->ctx, text, text_b, cancel, out, e);
	pthread_mutex_unlock(&l->lock);
	return rc;
}

/* The runner's ablated rerun (runner_set_ablate_fn), through the same lock as every run. */
static int ui_locked_ablate(void *ctx, const struct trace *clean, const struct ablation *a, const volatile int *cancel,
			    struct trace **out, struct err *e)
{
	struct ui *u = ctx;
	__atomic_add_fetch(&u->locked.waiting, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&u->locked.lock);
	__atomic_sub_fetch(&u->locked.waiting, 1, __ATOMIC_SEQ_CST);
	int rc = model_run_ablated(u->ctx.model, clean, a, cancel, out, e);
	pthread_mutex_unlock(&u->locked.lock);
	return rc;
}

/* T has every head's matrix but no value norms: the source skipped them while Y was off. */
static bool ui_lacks_value_norms(const struct trace *t)
{
	return t && t->attn && !t->vnorm;
}

/* Point the views at u->trace, or at its words when they are shown (built anew). */
static void ui_show_trace(struct ui *u)
{
	trace_free(u->words);
	trace_free(u->words_b);
	u->words = u->words_b = NULL;
	trace_free(u->norm); /* after the words, which read it */
	trace_free(u->norm_b);
	u->norm = u->norm_b = NULL;
	/* With heads marked and their rerun done, the views show it (as --dump --ablate does), the clean run
	 * beside it for what changed. */
	const struct trace *run = u->abl_trace && ablation_count(&u->abl) > 0 ? u->abl_trace : u->trace;
	u->ctx.clean = run != u->trace ? u->trace : NULL;
	/* Y's rerun not back yet: α meanwhile (the status bar says ‖αf‖ only over value-weighted weights) */
	bool waiting = u->norm_wait && (ui_lacks_value_norms(run) || ui_lacks_value_norms(u->trace_b));
	bool norm = u->show_norm && !waiting;
	if ((norm || u->hide_sink) && u->trace) { /* a long text's compact trace: back to α, saying why */
		struct err e = {{0}};
		if (!(u->norm = valnorm_derive(run, norm, u->hide_sink, false, &e)) ||
		    (u->trace_b && !(u->norm_b = valnorm_derive(u->trace_b, norm, u->hide_sink, false, &e)))) {
			trace_free(u->norm);
			u->norm = NULL;
			u->show_norm = u->hide_sink = false;
			snprintf(u->ctx.message, sizeof u->ctx.message, "weights: attention α (%s)", e.msg);
		} else if (norm && u->norm_wait) {
			snprintf(u->ctx.message, sizeof u->ctx.message, "weights: ‖α·f(x)‖, rows shared out to 1");
		}
	}
	if (!waiting)
		u->norm_wait = false;
	const struct trace *ta = u->norm ? u->norm : run, *tb = u->norm_b ? u->norm_b : u->trace_b;
	if (u->show_words && u->trace) {
		u->words = words_build(ta);
		u->words_b = u->trace_b ? words_build(tb) : NULL;
		if (!u->words || (u->trace_b && !u->words_b))
			snprintf(u->ctx.message, sizeof u->ctx.message, "out of memory merging words");
	}
	u->ctx.trace = u->words ? u->words : ta;
	u->ctx.compare = u->words_b ? u->words_b : tb;
	int stack = u->stack == UI_STACK_ALL ? u->section : u->stack; /* all three: the selected head's */
	if (stack != UI_STACK_ENCODER && run && run->decoder) { /* the decoder's own trace (its words: words.h) */
		u->ctx.trace = u->words && u->words->decoder ? u->words->decoder : run->decoder;
		/* the second text's decoder, run on the same target: what changed there */
		const struct trace *b = u->words_b ? u->words_b : tb;
		u->ctx.compare = b ? b->decoder : NULL;
	}
	u->ctx.cross = stack == UI_STACK_CROSS && u->ctx.trace && u->ctx.trace->encoder;
	u->ctx.all_stacks = u->stack == UI_STACK_ALL && run && run->decoder;
	u->ctx.trace_gen++;
	view_ctx_clamp(&u->ctx);
}

/* A new clean run T and its ablated rerun ABL (or NULL). The column's job reads the old one: it stops. */
static void ui_new_trace(struct ui *u, struct trace *t, struct trace *abl)
{
	struct trace *old = u->trace, *old_abl = u->abl_trace;
	abljob_free(u->job);
	u->job = NULL;
	u->trace = t;
	u->abl_trace = abl;
	if (ui_lacks_value_norms(t) || ui_lacks_value_norms(abl))
		u->norm_wait = false; /* the rerun Y asked for came back without them: say so (ui_show_trace) */
	u->clean_gen++;
	ui_show_trace(u);
	trace_free(old_abl);
	trace_free(old);
}

/* The ablated rerun ABL of the current trace (the marks changed), or NULL: show the clean run. */
static void ui_new_ablated(struct ui *u, struct trace *abl)
{
	struct trace *old = u->abl_trace;
	u->abl_trace = abl;
	ui_show_trace(u);
	trace_free(old);
}

/* The marks changed (B, E, O): rerun the ablation (only it when the text's run is done), or show the clean
 * run when no head is marked. */
static void ui_ablation_changed(struct ui *u)
{
	char desc[128];
	runner_set_ablation(u->runner, &u->abl);
	if (ablation_count(&u->abl) == 0) {
		if (u->abl_trace)
			ui_new_ablated(u, NULL);
		snprintf(u->ctx.message, sizeof u->ctx.message, "no head ablated: the views show the clean run");
		if (u->trace && !runner_busy(u->runner))
			return;
	}
	if (!u->trace || runner_busy(u->runner))
		ui_submit(u); /* the run going on may have read the marks before: again, with these */
	else if (ablation_count(&u->abl) > 0)
		runner_submit_ablation(u->runner, u->trace);
	if (ablation_count(&u->abl) > 0) {
		ablation_describe(&u->abl, desc, sizeof desc);
		snprintf(u->ctx.message, sizeof u->ctx.message, "ablating %s", desc);
	}
}

/* B, E, O: mark or unmark the selected head or layer, or change the mode. */
static void ui_ablate(struct ui *u, enum action a)
{
	struct view_ctx *ctx = &u->ctx;
	const struct trace *t = u->trace;
	if (!ctx->model || !t || ctx->agg) {
		snprintf(ctx->message, sizeof ctx->message, "ablation needs a model and a text%s",
			 ctx->agg ? " (a shows the text typed)" : "");
		return;
	}
	struct err e = {{0}};
	if (!u->abl.mask) {
		if (ablation_init(&u->abl, model_get_info(ctx->model), &e) < 0) {
			snprintf(ctx->message, sizeof ctx->message, "%s", e.msg);
			return;
		}
		runner_set_ablate_fn(u->runner, ui_locked_ablate, u);
		ctx->ablation = &u->abl;
	}
	int H = u->abl.n_heads, l = ctx->layer, h = ctx->head;
	if (l < 0 || l >= u->abl.n_layers || h < 0 || h >= H)
		return;
	if (a == ACT_ABLATE) {
		u->abl.mask[l * H + h] = !u->abl.mask[l * H + h];
	} else if (a == ACT_ABLATE_LAYER) {
		bool all = true;
		for (int k = 0; k < H; k++)
			all = all && u->abl.mask[l * H + k];
		memset(u->abl.mask + (size_t)l * H, !all, (size_t)H);
	} else if (u->abl.mode == ABLATE_ZERO) { /* O: zero -> mean -> nothing marked (zero) */
		u->abl.mode = ABLATE_MEAN;
	} else {
		u->abl.mode = ABLATE_ZERO;
		if (ablation_count(&u->abl) > 0) {
			memset(u->abl.mask, 0, (size_t)u->abl.n_layers * H);
			ui_ablation_changed(u);
			snprintf(ctx->message, sizeof ctx->message, "no head ablated (mode zero): the views show the clean run");
			return;
		}
	}
	if (a == ACT_ABLATE_MODE && ablation_count(&u->abl) == 0) {
		snprintf(ctx->message, sizeof ctx->message, "ablation mode: %s (B marks a head; F: each head's ablation)",
			 ablation_mode_name(u->abl.mode));
		return;
	}
	ui_ablation_changed(u);
}

/* The head finder's ablation column: started when a view asks for it and it is not there for this run and
 * mode, its values copied while it runs, said when it ends. */
static void ui_abl_effect(struct ui *u)
{
	struct view_ctx *ctx = &u->ctx;
	bool want = ctx->abl_effect_wanted && u->trace && ctx->model && !ctx->agg;
	enum ablate_mode mode = u->abl.mask ? u->abl.mode : ABLATE_ZERO;
	if (!ctx->abl_effect_wanted) {
		u->abl_effect_stopped = false; /* the head finder closed: F computes it again */
		if (u->job && ctx->abl_effect_running) { /* ... from the start: no run for a column not shown */
			abljob_free(u->job);
			u->job = NULL;
			u->abl_effect_gen = 0;
			ctx->abl_effect_running = false;
		}
	}
	bool current = u->abl_effect_gen == u->clean_gen && u->abl_effect_mode == mode;
	if (!current && u->job) {
		abljob_free(u->job);
		u->job = NULL;
	}
	if (want && !current && !u->abl_effect_stopped) {
		int heads = u->trace->n_layers * u->trace->n_heads;
		double *eff = realloc(u->abl_effect, (size_t)(heads > 0 ? heads : 1) * sizeof *eff);
		struct err e = {{0}};
		if (eff) {
			u->abl_effect = eff;
			for (int i = 0; i < heads; i++)
				eff[i] = NAN;
			u->job = abljob_start(ctx->model, u->trace, mode, &u->locked.lock, &u->locked.waiting, u->wake[1], &e);
		}
		u->abl_effect_gen = u->clean_gen;
		u->abl_effect_mode = mode;
		u->abl_effect_note[0] = 0;
		current = true;
		if (!u->job)
			snprintf(u->abl_effect_note, sizeof u->abl_effect_note, "%s", eff ? e.msg : "out of memory");
	}
	ctx->abl_effect = current ? u->abl_effect : NULL;
	ctx->abl_effect_note = u->abl_effect_note;
	if (u->job) {
		bool was = ctx->abl_effect_running;
		ctx->abl_effect_running = abljob_poll(u->job, u->abl_effect, &ctx->abl_effect_done, &ctx->abl_effect_total);
		if (was && !ctx->abl_effect_running) { /* it ended: done, or why not */
			const char *why = abljob_error(u->job);
			snprintf(u->abl_effect_note, sizeof u->abl_effect_note, "%s", why);
			if (why[0])
				snprintf(ctx->message, sizeof ctx->message, "ablation column: %s", why);
		}
	} else {
		ctx->abl_effect_running = false;
	}
}

/* Esc while the column is computed: stop it, keeping the heads done. */
static bool ui_abl_effect_stop(struct ui *u)
{
	struct view_ctx *ctx = &u->ctx;
	if (!u->job || !ctx->abl_effect_running)
		return false;
	abljob_free(u->job);
	u->job = NULL;
	u->abl_effect_stopped = true;
	ctx->abl_effect_running = false;
	int done = 0;
	for (int i = 0; i < ctx->abl_effect_total; i++)
		done += !isnan(u->abl_effect[i]);
	snprintf(u->abl_effect_note, sizeof u->abl_effect_note, "stopped (Esc) after %d of %d heads", done,
		 ctx->abl_effect_total);
	snprintf(ctx->message, sizeof ctx->message, "ablation column %s", u->abl_effect_note);
	return true;
}

static void ui_new_compare(struct ui *u, struct trace *t)
{
	struct trace *old = u->trace_b;
	u->trace_b = u->compare.len ? t : NULL; /* a late result after the line was cleared: dropped */
	if (!u->trace_b)
		trace_free(t);
	if (ui_lacks_value_norms(u->trace_b))
		u->norm_wait = false;
	ui_show_trace(u);
	trace_free(old);
}

/* Switch between pieces and words, keeping the selected token (a word selects its first piece). */
static void ui_toggle_words(struct ui *u)
{
	struct view_ctx *ctx = &u->ctx;
	int piece = words_first_piece(ctx->trace, ctx->token);
	/* the pieces shown: the decoder's under T (decoder or cross-attention: its rows) */
	const struct trace *pieces = u->stack != UI_STACK_ENCODER && u->trace && u->trace->decoder ? u->trace->decoder : u->trace;
	marks_remap(ctx, ctx->trace, pieces); /* to pieces, */
	u->show_words = !u->show_words;
	ui_show_trace(u);
	marks_remap(ctx, pieces, ctx->trace); /* then to what is shown */
	ctx->token = words_of_piece(ctx->trace, piece);
	view_ctx_clamp(ctx);
	if (!ctx->message[0])
		snprintf(ctx->message, sizeof ctx->message, "%s", u->show_words
			 ? "words: attention to a word summed over its pieces, from a word averaged"
			 : "pieces (tokens as the model sees them)");
}

/* Switch every view's weights between α and ‖α·f(x)‖ (valnorm.h); the tokens stay as they are. */
static void ui_toggle_weights(struct ui *u)
{
	struct view_ctx *ctx = &u->ctx;
	if (!u->trace) {
		snprintf(ctx->message, sizeof ctx->message, "no text yet");
		return;
	}
	u->show_norm = !u->show_norm;
	u->norm_wait = false;
	if (u->src->keep_value_norms) { /* the source computes value norms only while they are shown */
		u->src->keep_value_norms(u->src->ctx, u->show_norm);
		if (u->show_norm && (ui_lacks_value_norms(u->trace) || ui_lacks_value_norms(u->abl_trace) ||
				     ui_lacks_value_norms(u->trace_b))) {
			u->norm_wait = true; /* the text (and the second one) again, with them */
			ui_submit(u);
			if (u->compare.len)
				ui_submit_compare(u);
		}
	}
	ui_show_trace(u);
	if (!ctx->message[0])
		snprintf(ctx->message, sizeof ctx->message, "%s", u->norm_wait
			 ? "weights: ‖α·f(x)‖ once the run computing the value norms is done"
			 : u->show_norm ? "weights: ‖α·f(x)‖, rows shared out to 1"
			 : "weights: attention α");
}

/* Hide the sink (the first token's column, or a learned sink's share) and renormalise every row, or
 * show it again; said in the status bar while on (never renormalised silently). */
static void ui_toggle_sink(struct ui *u)
{
	struct view_ctx *ctx = &u->ctx;
	if (!u->trace) {
		snprintf(ctx->message, sizeof ctx->message, "no text yet");
		return;
	}
	u->hide_sink = !u->hide_sink;
	ui_show_trace(u);
	if (!ctx->message[0])
		snprintf(ctx->message, sizeof ctx->message, "%s", !u->hide_sink ? "sink shown"
			 : u->trace->sinks ? "learned sink hidden, rows renormalised"
					   : "first token hidden, rows renormalised");
}

static void ui_select_token(struct ui *u, int dir)
{
	const struct trace *t = u->ctx.trace;
	if (!t || t->n == 0)
		return;
	int tok = u->ctx.token;
	for (int step = 0; step < t->n; step++) {
		if (tok < 0)
			tok = dir > 0 ? 0 : t->n - 1;
		else
			tok += dir;
		if (tok < 0 || tok >= t->n)
			return; /* at the end: stay */
		if (!(u->ctx.hide_special && t->special[tok]))
			break;
	}
	u->ctx.token = tok;
}

static void ui_edit(struct ui *u, struct lineedit *le, enum action a)
{
	bool changed = false;
	switch (a) {
	case ACT_ED_LEFT: lineedit_left(le); break;
	case ACT_ED_RIGHT: lineedit_right(le); break;
	case ACT_ED_HOME: lineedit_home(le); break;
	case ACT_ED_END: lineedit_end(le); break;
	case ACT_ED_BACKSPACE: changed = lineedit_backspace(le); break;
	case ACT_ED_DELETE: changed = lineedit_delete(le); break;
	case ACT_ED_KILL_START: changed = lineedit_kill_start(le); break;
	case ACT_ED_KILL_END: changed = lineedit_kill_end(le); break;
	case ACT_ED_KILL_WORD: changed = lineedit_kill_word(le); break;
	case ACT_ED_DONE: u->focus = FOCUS_VIEW; break;
	case ACT_ED_NEXT_FIELD:
		u->focus = u->focus == FOCUS_TEXT && ui_second_line(u) ? FOCUS_PAIR
			   : u->focus != FOCUS_COMPARE && u->compare.len ? FOCUS_COMPARE : FOCUS_VIEW;
		break;
	case ACT_ED_PREV_FIELD:
		u->focus = u->focus == FOCUS_PAIR ? FOCUS_TEXT
			   : u->focus == FOCUS_COMPARE ? (ui_second_line(u) ? FOCUS_PAIR : FOCUS_TEXT) : FOCUS_VIEW;
		break;
	case ACT_ED_QUIT: u->quit = true; break;
	default: break;
	}
	if (changed)
		ui_changed(u, le);
}

/* Point the views at the aggregate (when shown) or at the text. */
static void ui_show_corpus(struct ui *u)
{
	u->ctx.agg = u->show_agg ? u->agg : NULL;
	u->ctx.trace_gen++;
	view_ctx_clamp(&u->ctx);
}

static void ui_toggle_corpus(struct ui *u)
{
	if (!u->agg) {
		snprintf(u->ctx.message, sizeof u->ctx.message, "%s", u->bg ? "no corpus text is done yet" : "not in corpus mode");
		return;
	}
	u->show_agg = !u->show_agg;
	ui_show_corpus(u);
	snprintf(u->ctx.message, sizeof u->ctx.message, "%s", u->show_agg ? "the corpus aggregate" : "the text typed");
}

/* A newer aggregate from the corpus run (owned from now on). */
static void ui_new_agg(struct ui *u, struct aggregate *a)
{
	aggregate_free(u->agg);
	u->agg = a;
	ui_show_corpus(u);
}

/* Show the next stack of an encoder-decoder model: encoder, decoder self-attention, cross-attention, all three. */
static void ui_next_stack(struct ui *u)
{
	struct view_ctx *ctx = &u->ctx;
	if (!u->trace || !u->trace->decoder) {
		snprintf(ctx->message, sizeof ctx->message, "%s", u->trace ? "not an encoder-decoder model: one stack only"
			 : "no text yet");
		return;
	}
	if (u->stack == UI_STACK_ENCODER && (u->show_norm || u->hide_sink || ablation_count(&u->abl) > 0)) {
		snprintf(ctx->message, sizeof ctx->message, "the decoder is shown as it is: turn off weights, "
			 "the hidden sink and ablation first");
		return;
	}
	u->section = u->stack; /* entering all three: the selection stays where it was */
	u->stack = (u->stack + 1) % 4;
	if (u->stack != UI_STACK_CROSS) { /* marks and the selection are tokens of the stack left (the decoder's rows
					   * stay cross-attention's) */
		ctx->n_marks = 0;
		ctx->token = -1;
	}
	ui_show_trace(u);
	char views[96]; /* the views that show cross-attention */
	registry_names(views, sizeof views, VIEW_CROSS, ", ", " and ");
	if (u->stack == UI_STACK_ALL) {
		snprintf(ctx->message, sizeof ctx->message, "all three stacks: the grid's sections; the other views read the selected head's");
		return;
	}
	snprintf(ctx->message, sizeof ctx->message, "%s%s%s", u->stack == UI_STACK_ENCODER ? "encoder self-attention"
		 : u->stack == UI_STACK_DECODER ? "decoder self-attention (causal)"
		 : "cross-attention: target rows, source columns (", u->stack == UI_STACK_CROSS ? views : "",
		 u->stack == UI_STACK_CROSS ? ")" : "");
}

/* Keys that change the encoder's trace or how it is read, with the decoder shown: refused in one line. */
static bool ui_stack_refuses(struct ui *u, enum action a)
{
	if (u->stack == UI_STACK_ENCODER || !(a == ACT_WEIGHTS || a == ACT_SINK ||
					      a == ACT_ABLATE || a == ACT_ABLATE_LAYER || a == ACT_ABLATE_MODE))
		return false;
	char k[32];
	snprintf(u->ctx.message, sizeof u->ctx.message, "the encoder's only: %s shows it again",
		 ui_first_key(u, ACT_STACK, k, sizeof k));
	return true;
}

static void ui_global(struct ui *u, enum action a)
{
	struct view_ctx *ctx = &u->ctx;
	if (ui_stack_refuses(u, a))
		return;
	switch (a) {
	case ACT_STACK:
		ui_next_stack(u);
		break;
	case ACT_BACK:
		if (ctx->depth <= 1)
			u->quit = true;
		else
			view_pop(ctx);
		break;
	case ACT_QUIT:
		if (ui_corpus_running(u)) { /* first stop the corpus run */
			corpusbg_stop(u->bg);
			snprintf(ctx->message, sizeof ctx->message, "stopping the corpus run: the texts done are kept");
			break;
		}
		u->quit = true;
		break;
	case ACT_CORPUS:
		ui_toggle_corpus(u);
		break;
	case ACT_HELP:
		if (ctx->stack[ctx->depth - 1] == &view_help)
			view_pop(ctx);
		else
			view_push(ctx, &view_help);
		break;
	case ACT_EDIT:
		u->focus = FOCUS_TEXT;
		break;
	case ACT_EDIT_PAIR:
		if (ui_second_line(u))
			u->focus = FOCUS_PAIR;
		else
			snprintf(ctx->message, sizeof ctx->message, "this model takes one text (no pair)");
		break;
	case ACT_REDRAW:
		clearok(curscr, TRUE);
		ui_invalidate(u);
		break;
	case ACT_TOKEN_PREV:
		ui_select_token(u, -1);
		break;
	case ACT_TOKEN_NEXT:
		ui_select_token(u, +1);
		break;
	case ACT_TOKEN_CLEAR:
		ctx->token = -1;
		ctx->n_marks = 0;
		break;
	case ACT_SCALE:
		if (ctx->compare) { /* a signed difference has no log or rank scale: its range switches instead */
			ctx->diff_fixed = !ctx->diff_fixed;
			snprintf(ctx->message, sizeof ctx->message, "B - A %s", ctx->diff_fixed ? "on the fixed scale -1 to +1"
				 : "scaled to the largest change");
			break;
		}
		ctx->scale = (enum heat_scale)((ctx->scale + 1) % HEAT_SCALE_COUNT);
		snprintf(ctx->message, sizeof ctx->message, "colour scale: %s", heatdata_scale_name(ctx->scale));
		break;
	case ACT_ROTARY:
		if (!ctx->trace || !ctx->trace->rotary) {
			snprintf(ctx->message, sizeof ctx->message, "this model has no rotary embedding");
			break;
		}
		ctx->qk_before_rotary = !ctx->qk_before_rotary;
		snprintf(ctx->message, sizeof ctx->message, "queries and keys %s%s",
			 shapedesc_rotary(ctx->trace, ctx->qk_before_rotary),
			 ctx->qk_before_rotary ? " (not what the scores use)" : " (what the scores use)");
		break;
	case ACT_WORDS:
		ui_toggle_words(u);
		break;
	case ACT_WEIGHTS:
		ui_toggle_weights(u);
		break;
	case ACT_SINK:
		ui_toggle_sink(u);
		break;
	case ACT_SAVE_SVG: { /* the whole view, as --print --format svg draws it, at the screen's width */
		char path[128];
		struct err e = {{0}};
		if (print_export_svg(ctx, &u->theme, u->cv ? u->cv->w : 80, path, sizeof path, &e))
			snprintf(ctx->message, sizeof ctx->message, "not saved: %s", e.msg);
		else
			snprintf(ctx->message, sizeof ctx->message, "saved %s", path);
		break;
	}
	case ACT_PIXELS:
		ui_toggle_pixels(u, false);
		break;
	case ACT_COMPARE:
		/* under the decoder's stacks an encoder-decoder compares two targets of the text */
		if (!u->compare.len)
			u->compare_target = u->src->target_line &&
					    (u->stack == UI_STACK_ALL ? u->section : u->stack) != UI_STACK_ENCODER;
		u->focus = FOCUS_COMPARE;
		break;
	case ACT_SURPRISAL:
		view_toggle_surprisal(ctx);
		break;
	case ACT_ABLATE:
	case ACT_ABLATE_LAYER:
	case ACT_ABLATE_MODE:
		ui_ablate(u, a);
		break;
	case ACT_SPECIAL:
		ctx->hide_special = !ctx->hide_special;
		snprintf(ctx->message, sizeof ctx->message, "special tokens %s",
			 ctx->hide_special ? "hidden, rows renormalised" : "shown");
		if (ctx->hide_special && ctx->token >= 0 && ctx->trace && ctx->trace->special[ctx->token])
			ctx->token = -1;
		break;
	default:
		/* The analysis views open from anywhere by their own key. */
		view_open(ctx, registry_opened_by(a));
		break;
	}
}

static void ui_view_key(struct ui *u, int key)
{
	struct view_ctx *ctx = &u->ctx;
	enum action a = keymap_lookup(ctx->keys, key, false);
	if (a == ACTION_NONE && key >= '0' && key <= '9') {
		if (u->count < 0)
			u->count = 0;
		if (u->count < 100000)
			u->count = u->count * 10 + (key - '0');
		return;
	}
	int count = u->count;
	u->count = -1;
	if (a == ACTION_NONE) {
		char name[32];
		snprintf(ctx->message, sizeof ctx->message, "%s: no action here (? shows the keys)",
			 action_key_name(key, name, sizeof name));
		return;
	}
	const struct view *v = ctx->stack[ctx->depth - 1];
	void *vs = ctx->state[ctx->depth - 1];
	const struct action_info *ai = action_get(a);
	ctx->push = NULL;
	ctx->pop = false;
	if (ai->scope == SCOPE_GLOBAL && !(a == ACT_HELP && v == &view_help)) {
		ui_global(u, a);
	} else if (!view_handles(v, a) || !v->act(vs, ctx, a, count)) {
		snprintf(ctx->message, sizeof ctx->message, "%s: not in the %s view", ai->name, v->name);
	}
	if (ctx->want_stack > 0) { /* the grid moved the selection to another of its sections */
		u->section = ctx->want_stack - 1;
		ctx->want_stack = 0;
		ctx->n_marks = 0; /* marks and the selected token are tokens of the stack left */
		ctx->token = -1;
		ui_show_trace(u);
	}
	if (ctx->pop)
		view_pop(ctx);
	if (ctx->push && !view_push(ctx, ctx->push))
		snprintf(ctx->message, sizeof ctx->message, "cannot open the %s view", ctx->push->name);
	ctx->push = NULL;
	ctx->pop = false;
	if (ctx->depth == 0)
		u->quit = true;
}

/* Handle a batch of keys read together. */
static void ui_keys(struct ui *u, const int *keys, int n)
{
	for (int i = 0; i < n && !u->quit; i++) {
		int key = keys[i];
		if (key == K_RESIZE)
			continue; /* ui_render notices the new size */
		u->ctx.message[0] = 0;
		if (u->focus == FOCUS_VIEW && key == K_ESC && ui_abl_effect_stop(u))
			continue; /* Esc stops the ablation column first; the next one closes the view */
		if (u->focus == FOCUS_VIEW) {
			ui_view_key(u, key);
			continue;
		}
		struct lineedit *le = u->focus == FOCUS_PAIR ? &u->pair : u->focus == FOCUS_COMPARE ? &u->compare : &u->text;
		/* Enter inside a batch with more keys after it is part of a paste: keep editing. */
		if (key == K_ENTER && i + 1 < n)
			key = ' ';
		enum action a = keymap_lookup(u->ctx.keys, key, true);
		if (a != ACTION_NONE) {
			ui_edit(u, le, a);
		} else if (key >= ' ' && key < KEY_SPECIAL_BASE) {
			if (lineedit_insert(le, (uint32_t)key))
				ui_changed(u, le);
		}
	}
}

/* ---- setup ---- */

static enum color_depth ui_curses_depth(enum color_depth want, bool *direct)
{
	*direct = false;
	if (want == DEPTH_MONO || !has_colors() || start_color() == ERR)
		return DEPTH_MONO;
	use_default_colors();
	enum color_depth have = COLORS >= 0x1000000 ? DEPTH_TRUE : COLORS >= 256 ? DEPTH_256 : COLORS >= 16 ? DEPTH_16
			      : COLORS >= 8 ? DEPTH_8 : DEPTH_MONO;
	enum color_depth d = want < have ? want : have;
	*direct = d == DEPTH_TRUE;
	return d;
}

static int ui_setup(struct ui *u, const struct ui_source *src, const char *text, const char *text_b,
		    const struct ui_options *o, struct err *e)
{
	u->src = src;
	u->ctx.model = o->model;
	u->count = -1;
	u->wake[0] = u->wake[1] = -1;
	if (userconf_load(o->config, &u->conf, e))
		return -1;
	if (print_load_theme(o, &u->conf, &u->theme, e))
		return -1;
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return err_set(e, "the explorer needs a terminal (use --print for text output)");
	bool utf8 = print_locale_utf8();
	enum color_depth want = print_depth(o, true);
	/* With truecolor asked for, use the terminal description with direct colour when one is
	 * installed (xterm-direct, tmux-direct); curses knows no other way to send 24-bit colour. */
	const char *term = getenv("TERM");
	SCREEN *scr = NULL;
	if (want == DEPTH_TRUE && term && !strstr(term, "direct")) {
		const char *direct = !strncmp(term, "xterm", 5) ? "xterm-direct" : !strncmp(term, "tmux", 4) ? "tmux-direct"
												      : NULL;
		if (direct)
			scr = newterm(direct, stdout, stdin); /* NULL when not installed */
	}
	if (!scr)
		scr = newterm(NULL, stdout, stdin);
	if (!scr)
		return err_set(e, "cannot use the terminal '%s'", term ? term : "(TERM unset)");
	set_term(scr);
	u->screen = scr;
	trace_on_recompute(ui_on_recompute, u);
	/* Without cursor addressing (TERM=dumb, an Emacs shell buffer) curses can only send a
	 * stream of text past: refuse, and point to the modes that print. */
	const char *cup = tigetstr("cup");
	if (!cup || cup == (char *)-1)
		return err_set(e, "the terminal '%s' cannot move the cursor; use --print or --dump", term ? term : "");
	raw();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	enum color_depth depth = ui_curses_depth(want, &u->direct_color);
	theme_resolve(&u->theme, depth, utf8, &u->pal);
	u->cv = canvas_new(COLS, LINES, &u->pal);
	u->prev = canvas_new(COLS, LINES, &u->pal);
	if (!u->cv || !u->prev)
		return err_set(e, "out of memory");
	ui_invalidate(u);
	if (pipe(u->wake))
		return err_set(e, "pipe: %s", strerror(errno));
	fcntl(u->wake[0], F_SETFL, O_NONBLOCK);
	fcntl(u->wake[1], F_SETFL, O_NONBLOCK);
	u->locked.inner = src;
	u->locked.src = *src;
	u->locked.src.ctx = &u->locked;
	u->locked.src.run = ui_locked_run;
	pthread_mutex_init(&u->locked.lock, NULL);
	u->runner = runner_new(&u->locked.src, UI_DEBOUNCE_MS, u->wake[1]);
	u->runner_b = runner_new(&u->locked.src, UI_DEBOUNCE_MS, u->wake[1]);
	if (!u->runner || !u->runner_b)
		return err_set(e, "cannot start the model thread");

	lineedit_set(&u->text, text ? text : "");
	lineedit_set(&u->pair, text_b ? text_b : "");
	lineedit_set(&u->compare, o->compare_target ? o->compare_target : o->compare ? o->compare : "");
	u->compare_target = o->compare_target != NULL;
	u->ctx.keys = &u->conf.keys;
	u->ctx.layer = o->layer > 0 ? o->layer : 0;
	u->ctx.head = o->head > 0 ? o->head : 0;
	u->ctx.token = o->token;
	memcpy(u->ctx.marks, o->marks, sizeof u->ctx.marks);
	u->ctx.n_marks = o->n_marks;
	u->ctx.scale = o->scale;
	u->ctx.diff_fixed = o->diff_fixed;
	u->ctx.hide_special = o->hide_special;
	u->ctx.qk_before_rotary = o->before_rotary;
	u->pixels_mode = o->pixels != USERCONF_PIXELS_UNSET ? o->pixels : u->conf.pixels;
	if (u->pixels_mode >= USERCONF_PIXELS_AUTO)
		ui_toggle_pixels(u, true);
	u->show_words = o->words;
	u->show_norm = o->weights_norm;
	u->stack = o->stack;
	u->section = UI_STACK_ENCODER;
	if (!view_push(&u->ctx, &view_grid))
		return err_set(e, "out of memory");
	u->focus = u->text.len ? FOCUS_VIEW : FOCUS_TEXT;
	ui_submit(u);
	if (u->compare.len)
		ui_submit_compare(u);
	return 0;
}

static void ui_teardown(struct ui *u)
{
	abljob_free(u->job); /* first: it holds the model's lock, which the runners may wait for */
	u->job = NULL;
	runner_free(u->runner);
	runner_free(u->runner_b);
	if (u->locked.inner)
		pthread_mutex_destroy(&u->locked.lock);
	view_pop_all(&u->ctx);
	view_predictions_free(&u->ctx);
	trace_on_recompute(NULL, NULL);
	if (u->screen) {
		graphics_clear(&u->gfx, STDOUT_FILENO);
		endwin();
		delscreen(u->screen);
	}
	graphics_free(&u->gfx);
	canvas_free(u->cv);
	canvas_free(u->prev);
	corpusbg_free(u->bg);
	aggregate_free(u->agg);
	trace_free(u->words);
	trace_free(u->norm);
	trace_free(u->abl_trace);
	trace_free(u->trace);
	free(u->abl_effect);
	ablation_free(&u->abl);
	trace_free(u->words_b);
	trace_free(u->norm_b);
	trace_free(u->trace_b);
	if (u->wake[0] >= 0)
		close(u->wake[0]);
	if (u->wake[1] >= 0)
		close(u->wake[1]);
}

/* The event loop, until the user quits. */
static void ui_loop(struct ui *u)
{
	bool dirty = true;
	int keys[UI_BATCH];
	while (!u->quit) {
		if (dirty) {
			u->ctx.abl_effect_wanted = false; /* a view that shows the column says so again as it draws */
			ui_render(u);
			bool had = u->ctx.abl_effect != NULL;
			ui_abl_effect(u);
			if (u->ctx.abl_effect_wanted && !had && u->ctx.abl_effect)
				ui_render(u); /* the column just started: show it */
		}
		dirty = false;
		struct pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {u->wake[0], POLLIN, 0}};
		/* Wake up now and then while the model runs, to keep "running…" honest. */
		int rc = poll(fds, 2, runner_busy(u->runner) || runner_busy(u->runner_b) || ui_corpus_running(u) || u->job ? 100 : 1000);
		if (rc < 0 && errno != EINTR)
			break;
		if (fds[1].revents & POLLIN) {
			char buf[64];
			while (read(u->wake[0], buf, sizeof buf) > 0)
				;
		}
		struct trace *t = NULL, *abl = NULL;
		struct err re = {{0}};
		bool abl_only = false;
		if (runner_take_pair(u->runner, &t, &abl, &abl_only, &re)) {
			if (abl_only) { /* the marks' rerun of the trace shown */
				ui_new_ablated(u, abl);
				if (re.msg[0])
					snprintf(u->ctx.message, sizeof u->ctx.message, "%s", re.msg);
				else if (abl && !strncmp(u->ctx.message, "ablating ", 9)) /* done: the status bar says it */
					u->ctx.message[0] = 0;
			} else if (t) {
				ui_new_trace(u, t, abl);
				u->run_error[0] = 0;
				if (re.msg[0]) /* the text ran, its ablated rerun did not */
					snprintf(u->ctx.message, sizeof u->ctx.message, "%s", re.msg);
			} else {
				snprintf(u->run_error, sizeof u->run_error, "%s", re.msg);
			}
			dirty = true;
		}
		if (u->job || u->ctx.abl_effect_wanted) { /* the ablation column's progress */
			int before = u->ctx.abl_effect_done;
			bool running = u->ctx.abl_effect_running;
			ui_abl_effect(u);
			dirty = dirty || before != u->ctx.abl_effect_done || running != u->ctx.abl_effect_running;
		}
		struct aggregate *snap = u->bg ? corpusbg_take(u->bg) : NULL;
		if (snap) {
			ui_new_agg(u, snap);
			dirty = true;
		}
		if (u->bg && !u->bg_reported && !ui_corpus_running(u)) { /* the run ended: say how */
			bool cancelled;
			u->bg_reported = true;
			if (corpusbg_result(u->bg, &cancelled, &re) < 0)
				snprintf(u->run_error, sizeof u->run_error, "corpus: %s", re.msg);
			else if (u->agg)
				snprintf(u->ctx.message, sizeof u->ctx.message, "corpus run %s: %llu texts, %llu lines",
					 cancelled ? "stopped" : "done", (unsigned long long)u->agg->c.texts,
					 (unsigned long long)u->agg->c.lines);
			dirty = true;
		}
		if (runner_take(u->runner_b, &t, &re)) {
			if (t)
				ui_new_compare(u, t);
			else
				snprintf(u->run_error, sizeof u->run_error, "second text: %s", re.msg);
			dirty = true;
		}
		/* Read every key that is waiting (also after EINTR: a resize arrives as KEY_RESIZE). */
		int n = 0;
		wint_t wch;
		int got;
		while (n < UI_BATCH && (got = get_wch(&wch)) != ERR) {
			int k = ui_key(got, wch);
			if (k >= 0)
				keys[n++] = k;
		}
		if (n) {
			ui_keys(u, keys, n);
			dirty = true;
		}
		if (rc == 0 || (fds[0].revents & (POLLHUP | POLLERR)))
			dirty = true; /* timeouts refresh the status; a hangup ends below */
		if (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL))
			break;
	}
}

int ui_run_source(const struct ui_source *src, const char *text, const char *text_b, const struct ui_options *o,
		  struct err *e)
{
	struct ui *u = calloc(1, sizeof *u);
	if (!u)
		return err_set(e, "out of memory");
	if (ui_setup(u, src, text, text_b, o, e)) {
		ui_teardown(u);
		free(u);
		return -1;
	}
	ui_loop(u);
	ui_teardown(u);
	free(u);
	return 0;
}

int ui_run_corpus(const struct ui_source *src, struct aggregate *agg, const struct model *m,
		  const struct corpusrun_opts *run, const struct ui_options *o, struct aggregate **out, struct err *e)
{
	*out = NULL;
	struct ui *u = calloc(1, sizeof *u);
	if (!u) {
		aggregate_free(agg);
		return err_set(e, "out of memory");
	}
	u->agg = agg;
	u->show_agg = true;
	int rc = ui_setup(u, src, NULL, NULL, o, e);
	u->ctx.model = m; /* the texts typed run on it: its output head predicts for them */
	if (rc == 0 && run && !u->agg) { /* an empty aggregate until the first texts are in */
		struct agg_model am;
		struct err ignored = {{0}};
		corpusrun_agg_model(m, &am);
		u->agg = aggregate_new(&am, run->pca_layer, run->pca_head, &ignored); /* NULL: the run will say why */
	}
	if (rc == 0 && run && corpusbg_start(m, run, u->wake[1], &u->bg, e) < 0)
		rc = -1;
	if (rc == 0) {
		u->focus = FOCUS_VIEW;
		ui_show_corpus(u);
		view_push(&u->ctx, &view_heads); /* the head finder first: the corpus's main table */
		ui_loop(u);
		if (u->bg) { /* a run still going stops; its final aggregate (with its source) is the result */
			corpusbg_finish(u->bg);
			struct aggregate *last = corpusbg_take(u->bg);
			if (last) {
				aggregate_free(u->agg);
				u->agg = last;
			}
		}
		*out = u->agg;
		u->agg = NULL;
	}
	ui_teardown(u);
	free(u);
	return rc;
}
