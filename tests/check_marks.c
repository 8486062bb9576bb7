/* check_marks.c -- several tokens at once (src/views/marks.c): combined rows and columns by hand, the
 * marked set (toggle, label, clamping, remapping between pieces and words) and the vector view's
 * projection of a combined A (attnvec_project_set) against the sum of the rows. */
#include "config.h"

#include <check.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/attnvec.h"
#include "views/marks.h"
#include "engine/model.h"
#include "analysis/words.h"
#include "testutil.h"

START_TEST(test_marks_sums)
{
	const float v[12] = {0.5f, 0.5f, 0, 0, 0.2f, 0.3f, 0.5f, 0, 0.1f, 0.1f, 0.1f, 0.7f};
	const int rows[2] = {0, 2}, cols[2] = {1, 3};
	float g[4], r[3];
	marks_given(v, 4, rows, 2, g);
	ck_assert_float_eq_tol(g[0], 0.6f, 1e-7f);
	ck_assert_float_eq_tol(g[1], 0.6f, 1e-7f);
	ck_assert_float_eq_tol(g[3], 0.7f, 1e-7f);
	marks_received(v, 3, 4, cols, 2, r);
	ck_assert_float_eq_tol(r[0], 0.5f, 1e-7f);
	ck_assert_float_eq_tol(r[1], 0.3f, 1e-7f);
	ck_assert_float_eq_tol(r[2], 0.8f, 1e-7f);
}
END_TEST

START_TEST(test_marks_set)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/tests/data/models/gpt2-mini", testutil_srcdir());
	struct err e = {{0}};
	struct model *m = NULL;
	struct trace *t = NULL;
	ck_assert_msg(model_open(dir, &m, &e) == 0, "%s", e.msg);
	ck_assert_msg(model_run(m, "The capybara was playing", NULL, NULL, &t, &e) == 0, "%s", e.msg);
	struct view_ctx ctx = {0};
	ctx.trace = t;
	char lab[128];
	ck_assert(marks_toggle(&ctx, 1));
	ck_assert(marks_toggle(&ctx, 3));
	ck_assert_str_eq(marks_label(&ctx, true, lab, sizeof lab), "cap + \xc2\xb7" "bara");
	ck_assert_str_eq(ctx.message, "combined: cap + \xc2\xb7" "bara");
	ck_assert(marks_toggle(&ctx, 1)); /* unmark */
	ck_assert_int_eq(ctx.n_marks, 1);
	ck_assert_int_eq(ctx.marks[0], 3);
	ck_assert(!marks_toggle(&ctx, t->n)); /* not a token */
	/* Pieces 1 and 3 are both in word 1 (capybara): one mark; back to pieces it is the first piece. */
	marks_toggle(&ctx, 1);
	struct trace *w = words_build(t);
	marks_remap(&ctx, t, w);
	ck_assert_int_eq(ctx.n_marks, 1);
	ck_assert_int_eq(ctx.marks[0], 1);
	marks_remap(&ctx, w, t);
	ck_assert_int_eq(ctx.marks[0], 1);
	/* A shorter trace drops marks past its end. */
	ctx.marks[ctx.n_marks++] = 5;
	ctx.trace = w;
	view_ctx_clamp(&ctx);
	ck_assert_int_eq(ctx.n_marks, 1);

	/* The combined A of the vector view: the sum of the rows, projected. */
	struct attnvec v;
	ck_assert_int_eq(attnvec_rows(t, 1, -1, ATTNVEC_KEEP, false, &v, &e), 0);
	struct attnvec_proj one, set;
	int a[2] = {2, 4};
	ck_assert_int_eq(attnvec_project(&v, 2, 0, &one), 0);
	ck_assert_int_eq(attnvec_project_set(&v, a, 1, 0, &set), 0);
	ck_assert(one.coef == set.coef && one.cos == set.cos);
	ck_assert_int_eq(attnvec_project_set(&v, a, 2, 0, &set), 0);
	double ab = 0, bb = 0;
	for (int j = 0; j < v.m; j++) {
		double sum = v.rows[2 * v.m + j] + v.rows[4 * v.m + j];
		ab += sum * v.rows[j];
		bb += (double)v.rows[j] * v.rows[j];
	}
	ck_assert_double_eq_tol(set.coef, ab / bb, 1e-6);
	attnvec_free(&v);
	trace_free(w);
	trace_free(t);
	model_close(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("marks");
	TCase *tc = tcase_create("marks");
	tcase_add_test(tc, test_marks_sums);
	tcase_add_test(tc, test_marks_set);
	suite_add_tcase(s, tc);
	return testutil_run_suite(s, false);
}
