/* check_heatdata.c -- heatmap numbers: head selection and means, hiding special tokens with row
 * renormalisation, colour scales, and max/mean pooling for thumbnails, against direct computation. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/heatdata.h"
#include "ui/synth.h"
#include "testutil.h"

START_TEST(pooling_math)
{
	const float m[16] = {
		1, 2, 3, 4,
		5, 6, 7, 8,
		9, 10, 11, 12,
		13, 14, 15, 16,
	};
	float out[4];
	heatdata_downsample(m, 4, 4, out, 2, 2, HEAT_POOL_MAX);
	ck_assert_float_eq(out[0], 6);
	ck_assert_float_eq(out[1], 8);
	ck_assert_float_eq(out[2], 14);
	ck_assert_float_eq(out[3], 16);
	heatdata_downsample(m, 4, 4, out, 2, 2, HEAT_POOL_MEAN);
	ck_assert_float_eq(out[0], (1 + 2 + 5 + 6) / 4.0f);
	ck_assert_float_eq(out[3], (11 + 12 + 15 + 16) / 4.0f);
	/* 5 into 2 bins: rows 0-1 and 2-4 (floor(i*5/2)). */
	ck_assert_int_eq(heatdata_bin_start(0, 5, 2), 0);
	ck_assert_int_eq(heatdata_bin_start(1, 5, 2), 2);
	ck_assert_int_eq(heatdata_bin_start(2, 5, 2), 5);
	const float col[5] = {1, 3, 2, 10, 0};
	float o2[2];
	heatdata_downsample(col, 5, 1, o2, 2, 1, HEAT_POOL_MEAN);
	ck_assert_float_eq(o2[0], 2);
	ck_assert_float_eq(o2[1], 4);
	/* NaN is skipped; an all-NaN block stays NaN. */
	const float nan4[4] = {NAN, 1, NAN, NAN};
	heatdata_downsample(nan4, 2, 2, out, 1, 2, HEAT_POOL_MEAN);
	ck_assert(isnan(out[0]));
	ck_assert_float_eq(out[1], 1);
	/* A larger output repeats cells. */
	const float two[2] = {7, 9};
	float up[4];
	heatdata_downsample(two, 1, 2, up, 1, 4, HEAT_POOL_MAX);
	ck_assert_float_eq(up[0], 7);
	ck_assert_float_eq(up[1], 7);
	ck_assert_float_eq(up[2], 9);
	ck_assert_float_eq(up[3], 9);
}
END_TEST

START_TEST(head_and_means)
{
	struct trace *t = synth_trace("the cat sat on the mat", NULL, 3, 4, SYNTH_BERT);
	int n = t->n;
	struct heatmat m;
	ck_assert_int_eq(heatmat_build(t, 2, 3, HEAT_HEAD, false, &m), 0);
	ck_assert_int_eq(m.rows, n);
	ck_assert_int_eq(memcmp(m.v, trace_attn(t, 2, 3), sizeof(float) * n * n), 0);
	heatmat_free(&m);

	ck_assert_int_eq(heatmat_build(t, 1, 0, HEAT_LAYER_MEAN, false, &m), 0);
	for (int i = 0; i < n * n; i++) {
		double s = 0;
		for (int h = 0; h < 4; h++)
			s += trace_attn(t, 1, h)[i];
		ck_assert_double_eq_tol(m.v[i], s / 4, 1e-7);
	}
	heatmat_free(&m);

	ck_assert_int_eq(heatmat_build(t, 0, 0, HEAT_ALL_MEAN, false, &m), 0);
	for (int i = 0; i < n * n; i++) {
		double s = 0;
		for (int l = 0; l < 3; l++)
			for (int h = 0; h < 4; h++)
				s += trace_attn(t, l, h)[i];
		ck_assert_double_eq_tol(m.v[i], s / 12, 1e-7);
	}
	heatmat_free(&m);
	trace_free(t);
}
END_TEST

START_TEST(hide_special_renormalises)
{
	struct trace *t = synth_trace("a bb ccc", NULL, 1, 4, SYNTH_BERT); /* [CLS] a bb ccc [SEP] */
	int n = t->n;
	ck_assert_int_eq(n, 5);
	struct heatmat m;
	ck_assert_int_eq(heatmat_build(t, 0, 1, HEAT_HEAD, true, &m), 0); /* head 1 attends to [CLS] */
	ck_assert_int_eq(m.rows, 3);
	ck_assert_int_eq(m.cols, 3);
	ck_assert_int_eq(m.row_tok[0], 1);
	ck_assert_int_eq(m.col_tok[2], 3);
	ck_assert_int_eq(heatmat_find_row(&m, 0), -1);
	ck_assert_int_eq(heatmat_find_col(&m, 2), 1);
	const float *a = trace_attn(t, 0, 1);
	for (int r = 0; r < 3; r++) {
		double rowsum = 0, kept = 0;
		for (int c = 0; c < 3; c++)
			kept += a[m.row_tok[r] * n + m.col_tok[c]];
		for (int c = 0; c < 3; c++) {
			float expect = (float)(a[m.row_tok[r] * n + m.col_tok[c]] / kept);
			ck_assert_float_eq_tol(m.v[r * 3 + c], expect, 1e-6f);
			rowsum += m.v[r * 3 + c];
		}
		ck_assert_double_eq_tol(rowsum, 1.0, 1e-6);
	}
	heatmat_free(&m);
	trace_free(t);
}
END_TEST

START_TEST(scales)
{
	const float in[6] = {0, 1e-5f, 1e-2f, 1, 0.5f, NAN};
	float out[6];
	heatdata_scale(in, 1, 6, HEAT_LINEAR, out);
	ck_assert_float_eq(out[2], 1e-2f);
	ck_assert(isnan(out[5]));
	heatdata_scale(in, 1, 6, HEAT_LOG, out);
	ck_assert_float_eq(out[0], 0);
	ck_assert_float_eq(out[1], 0);                 /* below the 1e-4 floor */
	ck_assert_float_eq_tol(out[2], 0.5f, 1e-6f);   /* 1e-2 is halfway between 1e-4 and 1 */
	ck_assert_float_eq(out[3], 1);
	/* Rank within each row; ties share their mean rank; NaN stays out. */
	const float r[8] = {0.1f, 0.7f, 0.1f, 0.1f, /* row 2: */ 3, 1, 2, NAN};
	float ro[8];
	heatdata_scale(r, 2, 4, HEAT_RANK, ro);
	ck_assert_float_eq_tol(ro[0], 1.0f / 3, 1e-6f); /* ranks 0,1,2 → mean 1 of 3 */
	ck_assert_float_eq(ro[1], 1);
	ck_assert_float_eq(ro[0], ro[2]);
	ck_assert_float_eq(ro[4], 1);
	ck_assert_float_eq(ro[5], 0);
	ck_assert_float_eq(ro[6], 0.5f);
	ck_assert(isnan(ro[7]));
	ck_assert_str_eq(heatdata_scale_name(HEAT_RANK), "rank");
}
END_TEST

/* The grid's one-pass thumbnail (heatdata_head_thumb) against the passes it replaces: build, mask,
 * scale, dim all but the selected token's row and column, pool; the same floats, NaN where they are. */
static void thumb_by_passes(const struct trace *t, int l, int h, enum heat_scale scale, int sel, float *out, int rows,
			    int cols, enum heat_pool pool)
{
	struct heatmat m;
	ck_assert_int_eq(heatmat_build(t, l, h, HEAT_HEAD, false, &m), 0);
	heatmat_mask(&m, m.v);
	heatdata_scale(m.v, m.rows, m.cols, scale, m.v);
	int sel_r = sel >= 0 ? heatmat_find_row(&m, sel) : -1, sel_c = sel >= 0 ? heatmat_find_col(&m, sel) : -1;
	for (int r = 0; sel_r >= 0 && r < m.rows; r++)
		for (int c = 0; c < m.cols; c++)
			if (r != sel_r && c != sel_c)
				m.v[(size_t)r * m.cols + c] *= 0.25f;
	heatdata_downsample(m.v, m.rows, m.cols, out, rows, cols, pool);
	heatmat_free(&m);
}

START_TEST(thumb_in_one_pass)
{
	static const int sizes[][2] = {{4, 8}, {7, 3}, {40, 30}, {1, 1}, {0, 0}};
	for (int style = 0; style < 2; style++) {
		struct trace *t = synth_trace("the quick brown fox jumps over the lazy dog while the cat sleeps", NULL, 2, 3,
					      style ? SYNTH_GPT2 : SYNTH_BERT);
		int n = t->n;
		float *w = (float *)trace_attn(t, 1, 2);
		w[(size_t)(n - 1) * n + 1] = NAN; /* a NaN the pooling skips, weights the scales clamp */
		w[(size_t)(n - 2) * n] = 1.5f;
		w[(size_t)(n - 1) * n + 2] = -0.5f;
		for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
			int rows = sizes[z][0] ? sizes[z][0] : n, cols = sizes[z][1] ? sizes[z][1] : n;
			float *a = malloc((size_t)rows * cols * sizeof *a), *b = malloc((size_t)rows * cols * sizeof *b);
			for (int scale = HEAT_LINEAR; scale <= HEAT_LOG; scale++)
				for (int pool = HEAT_POOL_MAX; pool <= HEAT_POOL_MEAN; pool++)
					for (int sel = -1; sel <= n + 1; sel += 4) {
						ck_assert_int_eq(heatdata_head_thumb(t, 1, 2, scale, sel, a, rows, cols, pool), 0);
						thumb_by_passes(t, 1, 2, scale, sel, b, rows, cols, pool);
						for (int i = 0; i < rows * cols; i++)
							assert_each(isnan(a[i]) ? isnan(b[i]) : a[i] == b[i],
								    "style %d %dx%d scale %d pool %d sel %d cell %d: %.9g vs %.9g",
								    style, rows, cols, scale, pool, sel, i, a[i], b[i]);
					}
			free(a);
			free(b);
		}
		ck_assert_int_eq(heatdata_head_thumb(t, 0, 0, HEAT_RANK, -1, NULL, 1, 1, HEAT_POOL_MAX), -1);
		trace_free(t);
	}
}
END_TEST

/* Cross-attention (issue 21): rows are the decoder's tokens, columns the encoder's; means and hidden specials
 * (each side's own) against direct computation from rows made to sum to 1. */
START_TEST(cross_rows_and_columns)
{
	struct trace *enc = synth_trace("the cat sat on the mat", NULL, 2, 3, SYNTH_BERT);
	struct trace *dec = trace_new(2, 3, 4, 12, 3);
	ck_assert_ptr_nonnull(enc);
	ck_assert_ptr_nonnull(dec);
	int nc = enc->n, n = dec->n;
	ck_assert_int_eq(trace_alloc_cross(dec, nc), 0);
	dec->encoder = enc;
	dec->special[0] = true; /* the decoder start token */
	for (int l = 0; l < 2; l++)
		for (int h = 0; h < 3; h++)
			for (int i = 0; i < n; i++) {
				float *row = (float *)trace_cross_attn(dec, l, h) + (size_t)i * nc;
				double s = 0;
				for (int j = 0; j < nc; j++)
					s += row[j] = (float)(1 + ((l * 7 + h * 5 + i * 3 + j) % 5));
				for (int j = 0; j < nc; j++)
					row[j] = (float)(row[j] / s);
			}
	struct heatmat m;
	ck_assert_int_eq(heatmat_build_cross(dec, 1, 2, HEAT_HEAD, false, &m), 0);
	ck_assert_int_eq(m.rows, n);
	ck_assert_int_eq(m.cols, nc);
	ck_assert_int_eq(memcmp(m.v, trace_cross_attn(dec, 1, 2), sizeof(float) * n * nc), 0);
	ck_assert(!heatmat_masked(&m, 0, nc - 1)); /* every target token sees every source token */
	heatmat_free(&m);
	ck_assert_int_eq(heatmat_build_cross(dec, 1, 0, HEAT_LAYER_MEAN, false, &m), 0);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < nc; j++) {
			double want = 0;
			for (int h = 0; h < 3; h++)
				want += trace_cross_attn(dec, 1, h)[(size_t)i * nc + j] / 3.0;
			ck_assert_double_eq_tol(m.v[(size_t)i * nc + j], want, 1e-6);
		}
	heatmat_free(&m);
	ck_assert_int_eq(heatmat_build_cross(dec, 0, 1, HEAT_HEAD, true, &m), 0);
	int src_kept = 0;
	for (int j = 0; j < nc; j++)
		src_kept += !enc->special[j];
	ck_assert_int_eq(m.rows, n - 1);
	ck_assert_int_eq(m.cols, src_kept);
	ck_assert_int_eq(m.row_tok[0], 1);
	for (int r = 0; r < m.rows; r++) {
		double s = 0;
		for (int c = 0; c < m.cols; c++) {
			ck_assert(!enc->special[m.col_tok[c]]);
			s += m.v[(size_t)r * m.cols + c];
		}
		ck_assert_double_eq_tol(s, 1, 1e-6);
		ck_assert(m.kept[r] < 1);
	}
	heatmat_free(&m);
	dec->encoder = NULL;
	trace_free(dec);
	trace_free(enc);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("heatdata");
	TCase *tc = tcase_create("heatdata");
	tcase_add_test(tc, pooling_math);
	tcase_add_test(tc, head_and_means);
	tcase_add_test(tc, hide_special_renormalises);
	tcase_add_test(tc, scales);
	tcase_add_test(tc, thumb_in_one_pass);
	tcase_add_test(tc, cross_rows_and_columns);
	suite_add_tcase(s, tc);
	return testutil_run_suite(s, false);
}
