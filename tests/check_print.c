/* check_print.c -- golden tests of headless rendering (print_trace) for fixed synthetic traces:
 * plain text, monochrome shade characters, ASCII locale, 256-colour and truecolor ANSI.
 * Set ATTNSCOPE_UPDATE_GOLDEN=1 to rewrite tests/ui/golden/ after checking the new output by eye. */
#include <check.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw/canvas.h"
#include "tui/print.h"
#include "tui/ui.h"
#include "ui/synth.h"
#include "testutil.h"

static const char *golden_dir(void)
{
	static char dir[4096];
	const char *top = getenv("top_srcdir");
	snprintf(dir, sizeof dir, "%s/tests/ui/golden", top && *top ? top : SRCDIR);
	return dir;
}

static char *render(const struct trace *t, const char *view, const struct ui_options *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct err e = {{0}};
	int rc = print_trace(t, view, o, f, &e);
	fclose(f);
	ck_assert_msg(rc == 0, "print_trace: %s", e.msg);
	return buf;
}

static void golden(const char *name, const char *got)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/%s", golden_dir(), name);
	if (getenv("ATTNSCOPE_UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "w");
		ck_assert_ptr_nonnull(f);
		fputs(got, f);
		fclose(f);
		return;
	}
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "missing golden file %s", path);
	char *want = NULL;
	size_t cap = 0;
	ssize_t n = getdelim(&want, &cap, '\0', f);
	fclose(f);
	ck_assert_int_gt(n, 0);
	if (strcmp(want, got)) {
		/* Say where they part, to make a failure readable. */
		int line = 1;
		size_t i = 0;
		while (want[i] && want[i] == got[i])
			line += want[i++] == '\n';
		ck_abort_msg("%s differs from the golden file at line %d", name, line);
	}
	free(want);
}

static struct trace *bert(void)
{
	return synth_trace("The quick brown fox jumped over", NULL, 3, 4, SYNTH_BERT);
}

static void locale_utf8(bool on)
{
	setenv("LC_ALL", on ? "C.UTF-8" : "C", 1);
}

START_TEST(grid_plain)
{
	locale_utf8(true);
	struct trace *t = bert();
	struct ui_options o;
	print_options_init(&o);
	o.color = UI_COLOR_NEVER;
	o.width = 80;
	o.layer = 1;
	o.head = 2;
	char *s = render(t, "grid", &o);
	golden("grid-plain.txt", s);
	/* No line is wider than asked for. */
	struct palette p = {.utf8 = true};
	struct canvas probe = {.pal = &p};
	for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n"))
		ck_assert_int_le(canvas_text_width(&probe, line), 80);
	free(s);
	trace_free(t);
}
END_TEST

START_TEST(heatmap_plain)
{
	locale_utf8(true);
	struct trace *t = bert();
	struct ui_options o;
	print_options_init(&o);
	o.color = UI_COLOR_NEVER;
	o.width = 100;
	o.layer = 1;
	o.head = 2;
	o.token = 3;
	char *s = render(t, "heatmap", &o);
	golden("heatmap-plain.txt", s);
	free(s);
	o.width = 40; /* narrow: the panel goes under the matrix */
	s = render(t, "heatmap", &o);
	golden("heatmap-narrow.txt", s);
	free(s);
	trace_free(t);
}
END_TEST

START_TEST(ascii_locale)
{
	locale_utf8(false);
	struct trace *t = bert();
	struct ui_options o;
	print_options_init(&o);
	o.color = UI_COLOR_NEVER;
	o.width = 80;
	char *s = render(t, "grid", &o);
	for (const char *p = s; *p; p++)
		ck_assert_msg((unsigned char)*p < 0x80, "non-ASCII byte in ASCII output");
	golden("grid-ascii.txt", s);
	free(s);
	trace_free(t);
}
END_TEST

START_TEST(ansi_256_and_truecolor)
{
	locale_utf8(true);
	struct trace *t = bert();
	struct ui_options o;
	print_options_init(&o);
	o.color = UI_COLOR_ALWAYS;
	o.depth = DEPTH_256;
	o.width = 80;
	o.head = 1;
	char *s = render(t, "grid", &o);
	ck_assert_ptr_nonnull(strstr(s, "\xe2\x96\x80")); /* half blocks */
	ck_assert_ptr_nonnull(strstr(s, ";48;5;"));
	golden("grid-256.ansi", s);
	free(s);
	o.depth = DEPTH_TRUE;
	o.theme = "cividis";
	o.numbers = true;
	o.token = 2;
	s = render(t, "heatmap", &o);
	ck_assert_ptr_nonnull(strstr(s, ";48;2;"));
	golden("heatmap-true.ansi", s);
	free(s);
	trace_free(t);
}
END_TEST

START_TEST(gpt2_mean_log)
{
	locale_utf8(true);
	struct trace *t = synth_trace("Oh, this book? I enjoyed it.", NULL, 2, 4, SYNTH_GPT2);
	struct ui_options o;
	print_options_init(&o);
	o.color = UI_COLOR_NEVER;
	o.width = 90;
	o.layer = 1;
	o.agg = HEAT_LAYER_MEAN;
	o.scale = HEAT_LOG;
	char *s = render(t, "heatmap", &o);
	ck_assert_ptr_nonnull(strstr(s, "layer 1, mean of 4 heads"));
	golden("heatmap-gpt2-mean-log.txt", s);
	free(s);
	trace_free(t);
}
END_TEST

START_TEST(errors)
{
	struct trace *t = bert();
	struct ui_options o;
	print_options_init(&o);
	struct err e = {{0}};
	ck_assert_int_eq(print_trace(t, "scatter", &o, stdout, &e), -1);
	/* The message lists the views there are (more may come after these two). */
	ck_assert_msg(!strncmp(e.msg, "unknown view 'scatter' (grid, heatmap", 37), "%s", e.msg);
	o.layer = 3;
	ck_assert_int_eq(print_trace(t, "grid", &o, stdout, &e), -1);
	ck_assert_str_eq(e.msg, "no layer 3: the model has 3 layers of 4 heads and the text 9 tokens");
	o.layer = 0;
	o.theme = "no-such-theme";
	ck_assert_int_eq(print_trace(t, "grid", &o, stdout, &e), -1);
	ck_assert_ptr_nonnull(strstr(e.msg, "theme 'no-such-theme' not found"));
	trace_free(t);
}
END_TEST

START_TEST(redraw_benchmark_runs)
{
	struct trace *t = synth_trace("a b c d e f g h i j k l m n o p q r s t u v w x y z aa bb cc dd", NULL, 12, 12,
				      SYNTH_BERT);
	ck_assert(print_bench_grid_redraw(t, 100, 30, 3, DEPTH_256, true) > 0);
	ck_assert(print_bench_grid_redraw(t, 100, 30, 3, DEPTH_256, false) > 0);
	trace_free(t);
}
END_TEST

int main(void)
{
	setenv("XDG_CONFIG_HOME", "/nonexistent-attnscope-config", 1); /* no user config in tests */
	Suite *s = suite_create("print");
	TCase *tc = tcase_create("print");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, grid_plain);
	tcase_add_test(tc, heatmap_plain);
	tcase_add_test(tc, ascii_locale);
	tcase_add_test(tc, ansi_256_and_truecolor);
	tcase_add_test(tc, gpt2_mean_log);
	tcase_add_test(tc, errors);
	tcase_add_test(tc, redraw_benchmark_runs);
	suite_add_tcase(s, tc);
	return testutil_run_suite(s, true);
}
