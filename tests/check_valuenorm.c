/* check_valuenorm.c -- the weight transform of the views (src/analysis/valnorm.c) on hand-made traces,
 * and the value norms' rows through a causal model's kept prefix (src/engine/prefix.c): the numbers
 * against the cases-lm are tests/valuenorm.sh's. Here: ‖α f‖ raw and shared out per row, the sink
 * hidden (the first token's column, or a learned sink's share), both at once, the refusals (a trace of
 * words, a compact trace, norms asked of a run without them), and a prefix keeping and giving back each
 * token's norms. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/valnorm.h"
#include "analysis/words.h"
#include "engine/prefix.h"
#include "testutil.h"

/* A trace of 2 layers × 2 heads over 4 tokens: causal-looking rows A (each row i spreads its weight
 * over keys 0..i) and norms F[l][h][j] = 1 + l + h + j. */
static struct trace *vn_trace(bool sinks)
{
	struct trace *t = trace_new(2, 2, 2, 4, 4);
	ck_assert_ptr_nonnull(t);
	t->causal = true;
	for (int l = 0; l < 2; l++)
		for (int h = 0; h < 2; h++) {
			float *a = (float *)trace_attn(t, l, h), *f = (float *)trace_vnorm(t, l, h);
			for (int j = 0; j < 4; j++)
				f[j] = (float)(1 + l + h + j);
			for (int i = 0; i < 4; i++)
				for (int j = 0; j <= i; j++) /* a row sums to 1, or to 0.8 with a learned sink */
					a[i * 4 + j] = (sinks ? 0.8f : 1.0f) * (float)(j + 1) / (float)((i + 1) * (i + 2) / 2);
		}
	for (int i = 0; i < 4; i++) {
		t->tokens[i] = strdup(i ? "Ġw" : "A");
		t->ids[i] = 10 + i;
	}
	if (sinks) {
		t->sinks = calloc(4, sizeof *t->sinks);
		ck_assert_ptr_nonnull(t->sinks);
	}
	return t;
}

static double vn_row_sum(const float *a, int i, int n)
{
	double s = 0;
	for (int j = 0; j < n; j++)
		s += a[i * n + j];
	return s;
}

START_TEST(test_valnorm_weights)
{
	struct trace *t = vn_trace(false);
	struct err e = {{0}};
	struct trace *raw = valnorm_derive(t, true, false, true, &e), *sh = valnorm_build(t, false, &e);
	ck_assert_msg(raw && sh, "%s", e.msg);
	ck_assert(raw->value_weighted && !raw->sink_hidden && trace_weights_norm(sh) && raw->weights_of == t);
	for (int l = 0; l < 2; l++)
		for (int h = 0; h < 2; h++) {
			const float *a = trace_attn(t, l, h), *r = trace_attn(raw, l, h), *s = trace_attn(sh, l, h);
			for (int i = 0; i < 4; i++) {
				double sum = 0;
				for (int j = 0; j < 4; j++) {
					double want = (double)a[i * 4 + j] * (1 + l + h + j); /* α_ij ‖f_h(x_j)‖ */
					ck_assert_double_eq_tol(r[i * 4 + j], want, 1e-6);
					ck_assert_double_eq_tol(valnorm_raw(sh, l, h, i, j), want, 1e-6);
					sum += want;
				}
				for (int j = 0; j < 4; j++) /* shared out: the row's sum */
					ck_assert_double_eq_tol(s[i * 4 + j], (double)a[i * 4 + j] * (1 + l + h + j) / sum, 1e-6);
				ck_assert_double_eq_tol(vn_row_sum(s, i, 4), 1.0, 1e-6);
			}
		}
	/* the mean over a layer's heads, as a heatmap of the mean shows it */
	ck_assert_double_eq_tol(valnorm_raw_agg(sh, 1, 0, HEAT_LAYER_MEAN, 3, 2),
				(valnorm_raw(sh, 1, 0, 3, 2) + valnorm_raw(sh, 1, 1, 3, 2)) / 2, 1e-9);
	ck_assert(isnan(valnorm_raw(t, 0, 0, 1, 1))); /* not a value-weighted trace */
	trace_free(raw);
	trace_free(sh);
	trace_free(t);
}
END_TEST

START_TEST(test_valnorm_hide_sink)
{
	struct err e = {{0}};
	for (int learned = 0; learned < 2; learned++) {
		struct trace *t = vn_trace(learned);
		for (int norm = 0; norm < 2; norm++) {
			struct trace *w = valnorm_derive(t, norm, true, false, &e);
			ck_assert_msg(w, "%s", e.msg);
			ck_assert(trace_sink_hidden(w) && w->sinks == NULL && w->value_weighted == norm);
			const float *a = trace_attn(t, 1, 1), *s = trace_attn(w, 1, 1);
			for (int i = 0; i < 4; i++) {
				int first = learned ? 0 : 1; /* a learned sink: every key kept, its share dropped */
				double sum = 0;
				for (int j = first; j < 4; j++)
					sum += (double)a[i * 4 + j] * (norm ? 3 + j : 1);
				if (!learned)
					ck_assert_float_eq(s[i * 4], 0.0f);
				for (int j = first; j < 4; j++)
					ck_assert_double_eq_tol(s[i * 4 + j], sum > 0 ? a[i * 4 + j] * (norm ? 3 + j : 1) / sum : 0, 1e-6);
				/* renormalised to 1, but the first token's own row, which sees only the sink */
				ck_assert_double_eq_tol(vn_row_sum(s, i, 4), !learned && i == 0 ? 0.0 : 1.0, 1e-6);
			}
			trace_free(w);
		}
		trace_free(t);
	}
}
END_TEST

START_TEST(test_valnorm_refusals)
{
	struct err e = {{0}};
	struct trace *t = vn_trace(false);
	struct trace *w = words_build(t); /* A Ġw Ġw Ġw: four words */
	ck_assert_ptr_nonnull(w);
	ck_assert_ptr_null(valnorm_build(w, false, &e));
	ck_assert_msg(strstr(e.msg, "on the pieces"), "%s", e.msg);
	/* a trace of words over the weights says so too */
	struct trace *n = valnorm_build(t, false, &e), *wn = words_build(n);
	ck_assert(trace_weights_norm(wn) && !trace_sink_hidden(wn));
	trace_free(wn);
	trace_free(n);
	trace_free(w);
	float *keep = t->vnorm; /* a run that did not keep norms (--dump without --weights norm, a corpus) */
	t->vnorm = NULL;
	ck_assert_ptr_null(valnorm_derive(t, true, true, false, &e));
	ck_assert_msg(strstr(e.msg, "kept no value norms"), "%s", e.msg);
	struct trace *hs = valnorm_derive(t, false, true, false, &e); /* hiding the sink needs none */
	ck_assert_msg(hs, "%s", e.msg);
	trace_free(hs);
	t->vnorm = keep;
	trace_free(t);
	struct trace_shape s = {1, 1, 1, 2, 4, 3, false, true, 0, false}; /* compact: no n x n matrices */
	struct trace *c = trace_new_shaped(&s);
	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_null(valnorm_build(c, true, &e));
	ck_assert_msg(strstr(e.msg, "needs every head's matrix"), "%s", e.msg);
	trace_free(c);
}
END_TEST

/* A causal model's kept tokens give their norms back with the rest of their rows. */
START_TEST(test_valnorm_prefix)
{
	struct prefix_cache c;
	ck_assert_int_eq(prefix_init(&c, 1 << 20), 0);
	struct trace *a = vn_trace(false), *b = vn_trace(false);
	prefix_keep(&c, a, 0);
	memset(b->vnorm, 0, 2 * 2 * 4 * sizeof *b->vnorm);
	b->ids[3] = 99; /* the same first three tokens */
	int r = prefix_shared(&c, b);
	ck_assert_int_eq(r, 3);
	prefix_fill(&c, b, r);
	for (int l = 0; l < 2; l++)
		for (int h = 0; h < 2; h++)
			for (int j = 0; j < 4; j++)
				ck_assert_float_eq(trace_vnorm(b, l, h)[j], j < r ? trace_vnorm(a, l, h)[j] : 0.0f);
	prefix_free(&c);
	trace_free(a);
	trace_free(b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("valuenorm");
	TCase *tc = tcase_create("valuenorm");
	tcase_add_test(tc, test_valnorm_weights);
	tcase_add_test(tc, test_valnorm_hide_sink);
	tcase_add_test(tc, test_valnorm_refusals);
	tcase_add_test(tc, test_valnorm_prefix);
	suite_add_tcase(s, tc);
	return testutil_run_suite(s, false);
}
