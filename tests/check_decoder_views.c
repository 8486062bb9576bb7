/* check_decoder_views.c -- the views on decoder-shaped synthetic traces: grouped-query attention
 * (query heads sharing key/value heads), sliding windows, rotary (q/k before and after) and a BOS
 * attention sink. Heatmap data masks the keys a query cannot see and says how much weight hiding
 * BOS left; the head finder's "first" counts only queries that can see token 0 and labels a sink
 * BOS; same- vs different-head products pair heads by key head and respect the window; --print
 * names the shape and the rotary stage. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/headscore.h"
#include "analysis/heatdata.h"
#include "analysis/stats.h"
#include "tui/print.h"
#include "tui/ui.h"
#include "ui/synth.h"
#include "testutil.h"

#define TEXT "the cat sat on the mat and the dog sat on the log"

static struct trace *decoder(int kv, int window, bool rotary)
{
	struct synth_decoder d = {kv, window, rotary};
	struct trace *t = synth_decoder_trace(TEXT, 2, 4, &d);
	ck_assert_ptr_nonnull(t);
	return t;
}

static char *render(const struct trace *t, const char *view, bool before_rotary, int head, int token)
{
	struct ui_options o;
	print_options_init(&o);
	o.color = UI_COLOR_NEVER;
	o.width = 160;
	o.head = head;
	o.token = token;
	o.before_rotary = before_rotary;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct err e = {{0}};
	ck_assert_msg(print_trace(t, view, &o, f, &e) == 0, "print_trace %s: %s", view, e.msg);
	fclose(f);
	return buf;
}

START_TEST(window_masks_cells)
{
	struct trace *t = decoder(2, 3, true);
	struct heatmat m;
	ck_assert_int_eq(heatmat_build(t, 1, 3, HEAT_HEAD, false, &m), 0);
	float *x = malloc((size_t)m.rows * m.cols * sizeof *x);
	memcpy(x, m.v, (size_t)m.rows * m.cols * sizeof *x);
	heatmat_mask(&m, x);
	heatdata_scale(x, m.rows, m.cols, HEAT_RANK, x);
	for (int r = 0; r < m.rows; r++)
		for (int c = 0; c < m.cols; c++) {
			bool visible = c <= r && c >= r - 2;
			ck_assert_msg(heatmat_masked(&m, r, c) == !visible, "cell %d,%d", r, c);
			float v = x[(size_t)r * m.cols + c];
			ck_assert_msg(visible ? v >= 0 && v <= 1 : isnan(v), "cell %d,%d colour %g", r, c, v);
		}
	/* A row seeing 3 keys ranks them 0, 0.5, 1 whatever the masked zeros. */
	float lo = 2, hi = -1;
	for (int c = 5; c <= 7; c++)
		lo = fminf(lo, x[7 * m.cols + c]), hi = fmaxf(hi, x[7 * m.cols + c]);
	ck_assert_float_eq(lo, 0.0f);
	ck_assert_float_eq(hi, 1.0f);
	free(x);
	heatmat_free(&m);
	trace_free(t);
}
END_TEST

START_TEST(hiding_bos_says_what_was_left)
{
	struct trace *t = decoder(2, 0, false);
	const float *a = trace_attn(t, 0, 1); /* head 1: a BOS sink */
	struct heatmat m;
	ck_assert_int_eq(heatmat_build(t, 0, 1, HEAT_HEAD, true, &m), 0);
	ck_assert_int_eq(m.rows, t->n - 1);
	for (int r = 0; r < m.rows; r++) {
		int i = m.row_tok[r];
		ck_assert_float_eq_tol(m.kept[r], 1.0f - a[(size_t)i * t->n], 1e-6f);
		double sum = 0;
		for (int c = 0; c < m.cols; c++)
			sum += m.v[(size_t)r * m.cols + c];
		ck_assert_double_eq_tol(sum, 1.0, 1e-5);
	}
	ck_assert_float_lt(m.kept[m.rows - 1], 0.5f); /* the sink took most of it */
	heatmat_free(&m);
	char *s = render(t, "heatmap", false, 1, 5);
	ck_assert_msg(!strstr(s, "row kept"), "%s", s);
	free(s);
	trace_free(t);
}
END_TEST

START_TEST(first_score_and_bos_label)
{
	struct trace *t = decoder(2, 0, false);
	struct headscore *hs = calloc((size_t)t->n_layers * t->n_heads, sizeof *hs);
	ck_assert_int_eq(headscore_all(t, hs), 0);
	ck_assert_str_eq(hs[1].label, "BOS");
	free(hs);
	trace_free(t);

	/* With a window of 3, only queries 0..2 see token 0: "first" is their mean, not diluted by
	 * the zeros of queries that cannot see it. */
	t = decoder(2, 3, false);
	hs = calloc((size_t)t->n_layers * t->n_heads, sizeof *hs);
	ck_assert_int_eq(headscore_all(t, hs), 0);
	const float *a = trace_attn(t, 0, 1);
	double want = ((double)a[0] + a[(size_t)1 * t->n] + a[(size_t)2 * t->n]) / 3;
	ck_assert_double_eq_tol(hs[1].s[HS_FIRST], want, 1e-9);
	/* entropy_norm: a row seeing 3 keys is normalised by ln 3, not ln(i + 1). */
	ck_assert_double_le(hs[3].entropy_norm, 1.0 + 1e-9);
	free(hs);
	trace_free(t);
}
END_TEST

START_TEST(dots_pair_key_heads_and_window)
{
	struct trace *t = decoder(2, 3, false); /* 4 query heads, 2 key heads */
	struct stats_dots d;
	struct err e = {{0}};
	int qi = t->n - 1;
	ck_assert_int_eq(stats_qk_dots(t, 1, qi, STATS_DOTS_VISIBLE, &d, &e), 0);
	ck_assert_int_eq(d.n_keys, 3);
	ck_assert_uint_eq(d.n_same, 4 * 3);
	ck_assert_uint_eq(d.n_diff, 4 * 1 * 3); /* one other key head, not three other query heads */
	/* Head 2 reads key head 1; its "different" products are with key head 0 (query head 0's). */
	const float *q = trace_q(t, 1, 2) + (size_t)qi * t->head_dim, *k0 = trace_k(t, 1, 0), *k1 = trace_k(t, 1, 2);
	for (int j = 0; j < 3; j++) {
		double same = 0, diff = 0;
		for (int x = 0; x < t->head_dim; x++) {
			same += (double)q[x] * k1[(size_t)(qi - 2 + j) * t->head_dim + x];
			diff += (double)q[x] * k0[(size_t)(qi - 2 + j) * t->head_dim + x];
		}
		ck_assert_double_eq_tol(d.same[2 * 3 + j], same, 1e-9);
		ck_assert_double_eq_tol(d.diff[2 * 3 + j], diff, 1e-9);
	}
	stats_dots_free(&d);
	trace_free(t);
}
END_TEST

START_TEST(print_names_the_shape)
{
	struct trace *t = decoder(2, 3, true);
	char *s = render(t, "grid", false, 3, -1);
	ck_assert_msg(strstr(s, "synthetic-llama · llama · 4 q heads / 2 kv heads · ") && strstr(s, "head 3 (kv 1)\n"),
		      "%s", s);
	ck_assert_msg(strstr(s, "kv0") && strstr(s, "kv1") && strstr(s, "\nL0 w3 ") && strstr(s, "\nL1 w3 "), "%s", s);
	free(s);
	s = render(t, "heatmap", false, 3, -1);
	ck_assert_msg(strstr(s, "layer 0 head 3, kv head 1 (shared by heads 2\xe2\x80\x93" "3), window 3"), "%s", s);
	free(s);
	const char *views[] = {"qk", "neuron", "qkstats", "dots"};
	for (int v = 0; v < 4; v++) {
		char *after = render(t, views[v], false, 2, 6), *before = render(t, views[v], true, 2, 6);
		ck_assert_msg(strstr(after, "after rotary") && !strstr(after, "before rotary"), "%s", after);
		ck_assert_msg(strstr(before, "before rotary"), "%s", before);
		ck_assert_msg(strcmp(after, before), "%s: the same before and after rotary", views[v]);
		free(after);
		free(before);
	}
	trace_free(t);

	/* Without GQA, windows or rotary: none of it. */
	t = decoder(0, 0, false);
	s = render(t, "grid", false, 0, -1);
	ck_assert_msg(!strstr(s, "kv") && !strstr(s, " w3") && strstr(s, "4 heads"), "%s", s);
	free(s);
	s = render(t, "qk", true, 0, -1);
	ck_assert_msg(!strstr(s, "rotary"), "%s", s);
	free(s);
	trace_free(t);
}
END_TEST

int main(void)
{
	setenv("XDG_CONFIG_HOME", "/nonexistent-attnscope-config", 1);
	setenv("LC_ALL", "C.UTF-8", 1);
	Suite *s = suite_create("decoder-views");
	TCase *tc = tcase_create("decoder-views");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, window_masks_cells);
	tcase_add_test(tc, hiding_bos_says_what_was_left);
	tcase_add_test(tc, first_score_and_bos_label);
	tcase_add_test(tc, dots_pair_key_heads_and_window);
	tcase_add_test(tc, print_names_the_shape);
	suite_add_tcase(s, tc);
	return testutil_run_suite(s, true);
}
