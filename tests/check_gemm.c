/* check_gemm.c -- the GEMM library choice (src/engine/gemmtune.c): measuring picks the faster
 * library per class, the cache file is written and read back, and a file for another machine or a
 * corrupt one is refused with a reason, never read. The process-wide choice (gemm.c) is driven through
 * the binary in tests/cli.sh (--version --verbose). */
#include "config.h"

#include <cblas.h>
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/gemm.h"
#include "engine/gemmtune.h"
#include "testutil.h"
#include "testutil.h"

static enum gemm_lib fast_lib; /* the library test_run makes fastest: the others compute three times */

/* Every "library" is OpenBLAS; all but FAST_LIB compute the product three times. Only at most 32 rows
 * and 32 depths are computed, all the columns (libraries are timed on tiles of their own widths):
 * what is measured is which library is fastest, and the measurement's real shapes (gigaflops)
 * would take minutes under valgrind. */
static void test_run(enum gemm_lib lib, bool trans_b, int m, int n, int k, const float *a, const float *b, float *c)
{
	m = m < 32 ? m : 32;
	k = k < 32 ? k : 32;
	for (int i = 0; i < (lib == fast_lib ? 1 : 3); i++)
		cblas_sgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a, k, b,
			    trans_b ? k : n, 0.0f, c, n);
}

static char *dir; /* a scratch folder of the test that made it (testutil_tmpdir), removed at its end */

static void tmp_setup(void)
{
	dir = testutil_tmpdir("gemm");
}

static void tmp_remove(void)
{
	testutil_rmtree(dir);
	free(dir);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

START_TEST(test_classes)
{
	ck_assert_int_eq(gemmtune_class(true, 64), gemmtune_class(true, 128));
	ck_assert_int_ne(gemmtune_class(true, 128), gemmtune_class(true, 129));
	ck_assert_int_ne(gemmtune_class(true, 1024), gemmtune_class(true, 1025));
	ck_assert_int_eq(gemmtune_class(true, 768), gemmtune_class(false, 768)); /* not by layout: gemmtune.h */
	for (int c = 0; c < GEMM_CLASSES; c++)
		ck_assert_str_ne(gemmtune_class_name(c), "?");
}
END_TEST

START_TEST(test_measure_save_load)
{
	struct gemm_tune t, back;
	char key[512], why[300], path[4096];
	tmp_setup();
	gemmtune_key("test ISA", "test kernel", key, sizeof key);
	ck_assert_ptr_nonnull(strstr(key, "test ISA"));
	ck_assert_ptr_nonnull(strstr(key, "attnscope test kernel"));
	ck_assert_ptr_null(strchr(key, '\n'));
	unsigned all = (1u << GEMM_LIBS) - 1;
	for (int fast = 0; fast < GEMM_LIBS; fast++) { /* the fastest library wins every class */
		fast_lib = (enum gemm_lib)fast;
		memset(&t, 0, sizeof t);
		snprintf(t.key, sizeof t.key, "%s", key);
		gemmtune_measure(&t, test_run, all);
		for (int c = 0; c < GEMM_CLASSES; c++) {
			ck_assert_int_eq(t.lib[c], fast);
			for (int l = 0; l < GEMM_LIBS; l++)
				ck_assert(l == fast || gemmtune_rate(&t, c, (enum gemm_lib)fast) > gemmtune_rate(&t, c, (enum gemm_lib)l));
		}
	}
	/* a library not available is neither timed nor chosen, however fast it would be; OpenBLAS always is */
	fast_lib = GEMM_LIB_OWN;
	memset(&t, 0, sizeof t);
	gemmtune_measure(&t, test_run, 1u << GEMM_LIB_DNNL);
	for (int c = 0; c < GEMM_CLASSES; c++) {
		ck_assert_int_ne(t.lib[c], GEMM_LIB_OWN);
		ck_assert(gemmtune_rate(&t, c, GEMM_LIB_OWN) == 0);
		ck_assert(gemmtune_rate(&t, c, GEMM_LIB_OPENBLAS) > 0 && gemmtune_rate(&t, c, GEMM_LIB_DNNL) > 0);
	}
	/* attnscope's kernel keeps a class unless another library is more than 10 % faster (25 % for a
	 * head's scores, class 0) */
	struct gemm_tune r;
	memset(&r, 0, sizeof r);
	for (int s = 0; s < GEMM_SIZES; s++) {
		r.rate[0][GEMM_LIB_OPENBLAS][s] = 100, r.rate[0][GEMM_LIB_OWN][s] = 81; /* 23 % faster: kept */
		r.rate[1][GEMM_LIB_DNNL][s] = 100, r.rate[1][GEMM_LIB_OWN][s] = 90;     /* 11 % faster: taken */
		r.rate[1][GEMM_LIB_OPENBLAS][s] = 95;
		r.rate[2][GEMM_LIB_OPENBLAS][s] = 100, r.rate[2][GEMM_LIB_DNNL][s] = 120; /* no kernel: the fastest */
	}
	r.rate[0][GEMM_LIB_DNNL][0] = 500; /* one size unmeasured: not a candidate */
	ck_assert_int_eq(gemmtune_choose(&r, 0), GEMM_LIB_OWN);
	ck_assert_int_eq(gemmtune_choose(&r, 1), GEMM_LIB_DNNL);
	ck_assert_int_eq(gemmtune_choose(&r, 2), GEMM_LIB_DNNL);
	for (int s = 0; s < GEMM_SIZES; s++)
		r.rate[0][GEMM_LIB_OWN][s] = 79; /* 27 % faster: taken */
	ck_assert_int_eq(gemmtune_choose(&r, 0), GEMM_LIB_OPENBLAS);
	for (int s = 0; s < GEMM_SIZES; s++)
		r.rate[1][GEMM_LIB_OWN][s] = 92; /* 8.7 % faster: kept, in another class too */
	ck_assert_int_eq(gemmtune_choose(&r, 1), GEMM_LIB_OWN);
	snprintf(t.key, sizeof t.key, "%s", key);
	snprintf(path, sizeof path, "%s/sub/dir/gemm", dir);
	ck_assert_int_eq(gemmtune_load(path, key, &back, why, sizeof why), 1); /* none yet */
	ck_assert_int_eq(gemmtune_save(path, &t, why, sizeof why), 0);       /* folders made */
	ck_assert_int_eq(gemmtune_load(path, key, &back, why, sizeof why), 0);
	ck_assert_str_eq(back.key, key);
	for (int c = 0; c < GEMM_CLASSES; c++) {
		ck_assert_int_eq(back.lib[c], t.lib[c]);
		for (int l = 0; l < GEMM_LIBS; l++)
			for (int s = 0; s < GEMM_SIZES; s++)
				/* written with 2 decimals, read back into a float: its rounding too (the stand-in
				 * libraries' rates reach 10^5 GFLOP/s, where a float's step is 0.0078) */
				ck_assert_float_eq_tol(back.rate[c][l][s], t.rate[c][l][s],
						       0.005 + fabsf(t.rate[c][l][s]) * 0x1p-23f);
	}
	/* another machine's or library's file */
	char other[600];
	snprintf(other, sizeof other, "%s but another", key);
	ck_assert_int_eq(gemmtune_load(path, other, &back, why, sizeof why), -1);
	ck_assert_ptr_nonnull(strstr(why, "another CPU or library"));
	tmp_remove();
}
END_TEST

START_TEST(test_corrupt)
{
	static const char *const bad[] = {
		"",
		"\x7f" "ELF binary\n",
		"attnscope-gemm 3\nkey K\n",
		"attnscope-gemm 2\n",
		"attnscope-gemm 2\nkey K\n", /* no classes */
		"attnscope-gemm 2\nkey K\nclass 0 openblas 1 2 3 4 5 6 7 8 9 10 11 12\n", /* classes missing */
		"attnscope-gemm 2\nkey K\nclass 3 openblas 1 2 3 4 5 6 7 8 9 10 11 12\n",
		"attnscope-gemm 2\nkey K\nclass 0 blis 1 2 3 4 5 6 7 8 9 10 11 12\n",
		"attnscope-gemm 2\nkey K\nclass 0 dnnl 1 2 3 x 5 6 7 8 9 10 11 12\n",
		"attnscope-gemm 2\nkey K\nclass 0 dnnl 1 2 3 -4 5 6 7 8 9 10 11 12\n",
		"attnscope-gemm 2\nkey K\nclass 0 dnnl 1 2 3 4 5 6 7 8\n", /* version 1's two libraries */
		"attnscope-gemm 2\nkey K\nclass 0 dnnl 1 2 3 4 5 6 7 8 9 10 11 12 13\n",
		"attnscope-gemm 2\nkey K\nclass 0 attnscope 1 2 3 4 5 6 7 8 9 10 11 12\n"
		"class 0 attnscope 1 2 3 4 5 6 7 8 9 10 11 12\n",
	};
	char path[4096], why[300];
	struct gemm_tune t;
	tmp_setup();
	snprintf(path, sizeof path, "%s/gemm", dir);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		write_file(path, bad[i]);
		*why = 0;
		ck_assert_msg(gemmtune_load(path, "K", &t, why, sizeof why) == -1, "file %zu read", i);
		ck_assert_msg(*why, "file %zu: no reason", i);
	}
	/* the same lines whole: read */
	write_file(path, "attnscope-gemm 2\nkey K\n"
			 "class 0 dnnl 1 2 3 4 5 6 7 8 9 10 11 12\nclass 1 openblas 1 2 3 4 5 6 7 8 9 10 11 12\n"
			 "class 2 attnscope 1 2 3 4 5 6 7 8 9 10 11 12\n");
	ck_assert_int_eq(gemmtune_load(path, "K", &t, why, sizeof why), 0);
	ck_assert_int_eq(t.lib[0], GEMM_LIB_DNNL);
	ck_assert_int_eq(t.lib[1], GEMM_LIB_OPENBLAS);
	ck_assert_int_eq(t.lib[2], GEMM_LIB_OWN);
	ck_assert_float_eq(t.rate[2][1][3], 8.0f);
	ck_assert_float_eq(t.rate[2][2][0], 9.0f);
	/* version 1's file (two libraries): not an error, measured again quietly */
	write_file(path, "attnscope-gemm 1\nkey K\nclass 0 dnnl 1 2 3 4 5 6 7 8\n");
	ck_assert_int_eq(gemmtune_load(path, "K", &t, why, sizeof why), 1);
	ck_assert_str_eq(why, "an older format");
	/* a folder where the file should be: refused, not read */
	ck_assert_int_eq(gemmtune_load(dir, "K", &t, why, sizeof why), -1);
	tmp_remove();
}
END_TEST

START_TEST(test_path)
{
	char p[4096];
	setenv("ATTNSCOPE_GEMM_CACHE", "/x/y", 1);
	gemmtune_path(p, sizeof p);
	ck_assert_str_eq(p, "/x/y");
	unsetenv("ATTNSCOPE_GEMM_CACHE");
	setenv("XDG_CACHE_HOME", "/c", 1);
	gemmtune_path(p, sizeof p);
	ck_assert_str_eq(p, "/c/attnscope/gemm");
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", "/h", 1);
	gemmtune_path(p, sizeof p);
	ck_assert_str_eq(p, "/h/.cache/attnscope/gemm");
}
END_TEST

/* The process's own choice: described, and its classes' products agree with OpenBLAS's within
 * rounding whichever library each runs on. */
START_TEST(test_process_choice)
{
	char buf[4096];
	size_t len = gemm_describe(buf, sizeof buf);
	ck_assert_uint_lt(len, sizeof buf);
	ck_assert_ptr_nonnull(strstr(buf, "cache file"));
	for (int c = 0; c < GEMM_CLASSES; c++)
		ck_assert_ptr_nonnull(strstr(buf, gemmtune_class_name(c)));
	static const int ks[] = {64, 768, 3072};
	for (int tb = 0; tb < 2; tb++)
		for (int ki = 0; ki < 3; ki++)
			for (int m = 1; m <= 90; m += 89) {
				int k = ks[ki], n = 70;
				float *a = malloc(sizeof(float) * (size_t)m * k), *b = malloc(sizeof(float) * (size_t)k * n);
				float *c = malloc(sizeof(float) * (size_t)m * n), *r = malloc(sizeof(float) * (size_t)m * n);
				for (int i = 0; i < m * k; i++)
					a[i] = (float)(i % 13) / 13.0f - 0.5f;
				for (int i = 0; i < k * n; i++)
					b[i] = (float)(i % 11) / 11.0f - 0.5f;
				for (int i = 0; i < m * n; i++)
					c[i] = r[i] = (float)(i % 5); /* beta 1 */
				gemm(tb, m, n, k, 0.5f, a, k, b, tb ? k : n, 1.0f, c, n);
				cblas_sgemm(CblasRowMajor, CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, 0.5f, a, k, b,
					    tb ? k : n, 1.0f, r, n);
				for (int i = 0; i < m * n; i++)
					assert_each(fabsf(c[i] - r[i]) <= 1e-4f * (1 + fabsf(r[i])), "k %d m %d: %g vs %g", k, m,
						    c[i], r[i]);
				free(a);
				free(b);
				free(c);
				free(r);
			}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("gemm");
	TCase *tc = tcase_create("choice");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_classes);
	tcase_add_test(tc, test_measure_save_load);
	tcase_add_test(tc, test_corrupt);
	tcase_add_test(tc, test_path);
	tcase_add_test(tc, test_process_choice);
	suite_add_tcase(s, tc);
	return testutil_run_suite(s, false);
}
