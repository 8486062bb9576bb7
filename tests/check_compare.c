/* check_compare.c -- two texts side by side (src/trace/compare.c and the pieces the views use): matching
 * rows, total variation by hand, the head finder's "changed" score, B − A heatmaps and the
 * diverging ramp of every bundled theme. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trace/compare.h"
#include "trace/headscore.h"
#include "analysis/heatdata.h"
#include "draw/theme.h"
#include "testutil.h"

/* A 1-layer, 1-head trace of N tokens with ids IDS and attention ATTN[n][n]. */
static struct trace *mk(int n, const int *ids, const float *attn)
{
	struct trace *t = trace_new(1, 1, 2, 2, n);
	ck_assert_ptr_nonnull(t);
	for (int i = 0; i < n; i++) {
		t->ids[i] = ids[i];
		t->tokens[i] = strdup("x");
	}
	memcpy(t->attn, attn, (size_t)n * n * sizeof *attn);
	return t;
}

START_TEST(test_compare_tv)
{
	const int ia[3] = {1, 2, 3}, ib[3] = {1, 2, 4}, ic[2] = {1, 5};
	const float a[9] = {1, 0, 0, 0.5f, 0.5f, 0, 0.2f, 0.3f, 0.5f};
	const float b[9] = {1, 0, 0, 0.5f, 0.5f, 0, 0.6f, 0.3f, 0.1f};
	const float c[4] = {1, 0, 0.5f, 0.5f};
	struct trace *ta = mk(3, ia, a), *tb = mk(3, ib, b), *tc = mk(2, ic, c);
	ck_assert_int_eq(compare_prefix(ta, tb), 2);
	ck_assert_int_eq(compare_rows(ta, tb), 3);  /* same length: every row */
	ck_assert_int_eq(compare_rows(ta, tc), 1);  /* else the common prefix */
	/* rows 0 and 1 equal, row 2 moves 0.4: TV = (0 + 0 + 0.4) / 3 */
	ck_assert_double_eq_tol(compare_tv(ta, tb, 0, 0), 0.4 / 3, 1e-7);
	ck_assert_double_eq_tol(compare_tv(ta, ta, 0, 0), 0, 1e-12);
	ck_assert_double_eq_tol(compare_tv(ta, tc, 0, 0), 0, 1e-12);
	struct headscore hs[1];
	ck_assert_int_eq(headscore_all(ta, hs), 0);
	ck_assert(isnan(hs[0].s[HS_CHANGED]));
	headscore_changed(ta, tb, hs);
	ck_assert_double_eq_tol(hs[0].s[HS_CHANGED], 0.4 / 3, 1e-7);
	ck_assert_int_eq(headscore_by_name("changed"), HS_CHANGED);

	/* The heatmap's B − A, and a cell with no match (different lengths) is NaN. */
	struct heatmat ma, mb, mc;
	ck_assert_int_eq(heatmat_build(ta, 0, 0, HEAT_HEAD, false, &ma), 0);
	ck_assert_int_eq(heatmat_build(tb, 0, 0, HEAT_HEAD, false, &mb), 0);
	ck_assert_int_eq(heatmat_build(tc, 0, 0, HEAT_HEAD, false, &mc), 0);
	float d[9], pos[9];
	heatmat_diff(&ma, &mb, 3, d);
	ck_assert_float_eq_tol(d[6], 0.4f, 1e-7f);
	ck_assert_float_eq_tol(d[8], -0.4f, 1e-7f);
	heatdata_diverging(d, 9, 1, pos);
	ck_assert_float_eq_tol(pos[6], 0.7f, 1e-7f);
	ck_assert_float_eq_tol(pos[0], 0.5f, 1e-7f);
	/* Scaled to the largest change: ±0.4 reach the ends of the ramp, larger values are clamped. */
	ck_assert_float_eq_tol(heatdata_absmax(d, 9), 0.4f, 1e-7f);
	heatdata_diverging(d, 9, heatdata_absmax(d, 9), pos);
	ck_assert_float_eq_tol(pos[6], 1.0f, 1e-6f);
	ck_assert_float_eq_tol(pos[8], 0.0f, 1e-6f);
	ck_assert_float_eq_tol(pos[0], 0.5f, 1e-7f);
	heatdata_diverging(d, 9, 0.1f, pos);
	ck_assert(pos[6] == 1.0f && pos[8] == 0.0f);
	const float dn[3] = {NAN, -0.2f, 0.1f}; /* unmatched cells do not count */
	ck_assert_float_eq(heatdata_absmax(dn, 3), 0.2f);
	ck_assert_float_eq(heatdata_absmax(dn, 1), 0);
	heatmat_diff(&ma, &mc, compare_rows(ta, tc), d);
	ck_assert_float_eq(d[0], 0);
	ck_assert(isnan(d[4]) && isnan(d[1]));
	heatmat_free(&ma);
	heatmat_free(&mb);
	heatmat_free(&mc);
	trace_free(ta);
	trace_free(tb);
	trace_free(tc);
}
END_TEST

/* Every bundled theme has a diverging ramp whose ends differ and whose middle is neither end; in
 * monochrome the signs read as '-'/'=' and '+'/'#', no change as blank. */
START_TEST(test_compare_diverging)
{
	static const char *const themes[] = {"viridis", "cividis", "grayscale", "light"};
	for (size_t i = 0; i < sizeof themes / sizeof *themes; i++) {
		struct theme th;
		struct err e = {{0}};
		ck_assert_msg(theme_load(themes[i], &th, &e) == 0, "%s", e.msg);
		ck_assert_msg(th.n_diverging >= 3, "%s has no diverging ramp", themes[i]);
		struct palette pal, div;
		theme_resolve(&th, DEPTH_TRUE, true, &pal);
		palette_diverging(&pal, &div);
		uint32_t lo = div.heat[0], mid = div.heat[PALETTE_LEVELS / 2], hi = div.heat[PALETTE_LEVELS - 1];
		ck_assert_msg(lo != hi && mid != lo && mid != hi, "%s: diverging ramp %06x %06x %06x", themes[i], lo, mid, hi);
		ck_assert(div.diverging && !pal.diverging);
		ck_assert_msg(pal.heat[PALETTE_LEVELS / 2] != mid, "%s: no change looks like half the weight", themes[i]);
	}
	ck_assert_int_eq(palette_shade_diverging(0.5f), ' ');
	ck_assert_int_eq(palette_shade_diverging(0.0f), '=');
	ck_assert_int_eq(palette_shade_diverging(0.45f), '-');
	ck_assert_int_eq(palette_shade_diverging(0.55f), '+');
	ck_assert_int_eq(palette_shade_diverging(1.0f), '#');
}
END_TEST

int main(void)
{
	Suite *s = suite_create("compare");
	TCase *tc = tcase_create("compare");
	tcase_add_test(tc, test_compare_tv);
	tcase_add_test(tc, test_compare_diverging);
	suite_add_tcase(s, tc);
	return testutil_run_suite(s, false);
}
