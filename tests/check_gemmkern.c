/* check_gemmkern.c -- attnscope's own sgemm (src/engine/gemmkern.c) against its contract in
 * gemmkern.h, both layouts (op(B) = Bᵀ with B [n][k], or B [k][n]), with each kind of tiles the CPU
 * runs (AVX2's 4 x 24; AVX-512's 8 x 48 where the CPU has it: every test once per kind):
 *   - close to a sum in double, within a bound grown with k, over shapes on and around the kernel's
 *     tiles (4 x 24, 8 x 48) and blocks (96 or 128 rows, 192 columns, 256 depths), with strided and unaligned
 *     operands, alpha 1 or not, beta 0 (C not read), 1 or other; C outside its m x n untouched;
 *   - bit for bit the documented order: one chain of fmaf in depth order from 0, then alpha · sum
 *     (alpha ≠ 1), then + C (beta 1) or + beta · C (beta ≠ 0), each step rounded;
 *   - a row's bits do not depend on the other rows of the call, nor a column's on the other columns,
 *     nor a query's on zero probabilities past its keys;
 *   - a NaN or an infinity reaches the outputs that use it and no other (0 · inf is NaN: no zero is
 *     skipped);
 *   - from a packed copy of op(B) (gemmkern_pack), and of A too (gemmkern_pack_a), the very same
 *     bits, and a copy's part from a block of columns on (J0 · K floats in) the same bits as those
 *     columns alone.
 * Skipped on a CPU without AVX2 and FMA, and said so. Built with -ffp-contract=off (tests.am): the
 * scalar reference's alpha · sum + beta · C must stay two roundings. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/gemmkern.h"
#include "testutil.h"

/* A matrix of ROWS x COLS floats, LD apart, at P = BASE + an offset: the offset and every row's
 * padding past COLS hold FILL (NaN for operands: a read past the matrix shows in the result), the
 * buffer ends right after the last element (valgrind sees a read past it). */
struct mat {
	float *base, *p;
	size_t len; /* floats in BASE */
	int rows, cols, ld;
};

static uint64_t rng_state;

/* Uniform in [-1, 1): a 64-bit LCG's top 24 bits. */
static float rng_float(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (float)(int32_t)(rng_state >> 40 << 8) * 0x1p-31f;
}

static struct mat mat_new(int rows, int cols, int ld, int off, float fill)
{
	struct mat x = {.rows = rows, .cols = cols, .ld = ld};
	x.len = (size_t)off + (rows > 0 && cols > 0 ? (size_t)(rows - 1) * ld + cols : 0);
	x.base = malloc((x.len ? x.len : 1) * sizeof *x.base);
	ck_assert_ptr_nonnull(x.base);
	for (size_t i = 0; i < x.len; i++)
		x.base[i] = fill;
	x.p = x.base + off;
	for (int i = 0; i < rows; i++)
		for (int j = 0; j < cols; j++)
			x.p[(size_t)i * ld + j] = rng_float();
	return x;
}

static struct mat mat_copy(const struct mat *x)
{
	struct mat y = *x;
	y.base = malloc((x->len ? x->len : 1) * sizeof *y.base);
	ck_assert_ptr_nonnull(y.base);
	memcpy(y.base, x->base, x->len * sizeof *y.base);
	y.p = y.base + (x->p - x->base);
	return y;
}

static float *at(const struct mat *x, int i, int j)
{
	return x->p + (size_t)i * x->ld + j;
}

/* op(B)[d][j]. */
static float opb(bool trans_b, const struct mat *b, int d, int j)
{
	return trans_b ? *at(b, j, d) : *at(b, d, j);
}

/* op(B)ᵀ [n][k], contiguous: column j of op(B) as a row (the references' inner loops read it in order). */
static float *opb_columns(bool trans_b, const struct mat *b, int n, int k)
{
	float *bt = malloc(((size_t)n * k + 1) * sizeof *bt);
	ck_assert_ptr_nonnull(bt);
	for (int j = 0; j < n; j++)
		for (int d = 0; d < k; d++)
			bt[(size_t)j * k + d] = opb(trans_b, b, d, j);
	return bt;
}

static uint32_t bits_of(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

/* The operands of one call: A [m][k], B [n][k] or [k][n], C [m][n] pre-filled (NaN when beta is 0:
 * the contract does not read it). */
struct call {
	bool trans_b;
	int m, n, k;
	float alpha, beta;
	struct mat a, b, c, c0; /* C0: C before the call */
};

static struct call call_new(bool trans_b, int m, int n, int k, float alpha, float beta, int pad, int off, uint64_t seed)
{
	struct call t = {.trans_b = trans_b, .m = m, .n = n, .k = k, .alpha = alpha, .beta = beta};
	rng_state = seed;
	t.a = mat_new(m, k, k + pad % 5, off & 1, NAN);
	t.b = trans_b ? mat_new(n, k, k + pad % 7, off >> 1 & 1, NAN) : mat_new(k, n, n + pad % 7, off >> 1 & 1, NAN);
	t.c = mat_new(m, n, n + pad % 3, off >> 2 & 1, -1234.5f);
	if (beta == 0.0f)
		for (int i = 0; i < m; i++)
			for (int j = 0; j < n; j++)
				*at(&t.c, i, j) = NAN;
	t.c0 = mat_copy(&t.c);
	return t;
}

static void call_run(struct call *t)
{
	mark_point(); /* a crash in the kernel is reported "after this point" */
	gemmkern_sgemm(t->trans_b, t->m, t->n, t->k, t->alpha, t->a.p, t->a.ld, t->b.p, t->b.ld, t->beta, t->c.p,
		       t->c.ld);
}

static void call_free(struct call *t)
{
	free(t->a.base), free(t->b.base), free(t->c.base), free(t->c0.base);
}

static char *call_name(const struct call *t)
{
	return testutil_printf("%s m %d n %d k %d alpha %g beta %g lda %d ldb %d ldc %d offsets %d %d %d",
			       t->trans_b ? "B [n][k]" : "B [k][n]", t->m, t->n, t->k, (double)t->alpha, (double)t->beta,
			       t->a.ld, t->b.ld, t->c.ld, (int)(t->a.p - t->a.base), (int)(t->b.p - t->b.base),
			       (int)(t->c.p - t->c.base));
}

/* C's floats outside its m x n (the offset and the rows' padding) are as before the call. */
static void assert_outside_untouched(const struct call *t)
{
	size_t off = (size_t)(t->c.p - t->c.base);
	for (size_t e = 0; e < t->c.len; e++) {
		bool inside = e >= off && (int)((e - off) % t->c.ld) < t->n;
		if (!inside && bits_of(t->c.base[e]) != bits_of(t->c0.base[e])) {
			char *name = call_name(t);
			ck_abort_msg("%s: C's float %zu, outside the m x n result, changed", name, e);
		}
	}
}

static bool cpu_ok(const char *test)
{
	if (gemmkern_available())
		return true;
	printf("check_gemmkern: %s: this CPU has no AVX2 and FMA; the kernel is not used here, skipped\n", test);
	return false;
}

static const int ms[] = {1, 2, 3, 4, 5, 7, 8, 9, 13, 95, 96, 97, 100, 128, 129, 200};
static const int ns[] = {1, 5, 8, 23, 24, 25, 47, 48, 64, 100, 191, 192, 193, 400};
static const int ks[] = {0, 1, 7, 8, 9, 63, 64, 255, 256, 257, 300, 600};
#define COUNT(x) ((int)(sizeof(x) / sizeof(x)[0]))

/* Whether a large call's element (I, J) of M x N is compared with a reference (every element's would
 * take minutes under valgrind): in the first and last rows and columns, either side of the blocks'
 * edges (96 or 128 rows, 192 columns) and the panels' (24 columns), and every 7th row and 5th column (prime
 * to 4, 8 and 24: every place in a tile, a vector and a panel, in turn). */
static bool element_sampled(int i, int j, int m, int n)
{
	bool row = i < 5 || i >= m - 5 || i % 96 < 3 || i % 96 > 92 || i % 128 < 3 || i % 128 > 124 || i % 7 == 0;
	bool col = j < 3 || j >= n - 3 || j % 192 < 3 || j % 192 > 188 || j % 24 == 0 || j % 24 == 23 || j % 5 == 0;
	return row && col;
}

/* Every m with every n, each pair at one k, so that every m and every n meets every k (ks' index
 * 5·im + 7·in mod 12; the next smaller k for the few pairs past 6·10^6 products, which would take
 * minutes under valgrind); alpha, beta, padding and offsets turn with the pair. Each element against a
 * sum in double: a chain of k fused multiply-adds and two more roundings are off by at most
 * (k + 2) · 2^-24 · (|alpha| Σ|a b| + |beta c|); the bound allows twice that. Every element of a call
 * up to 10^6 products, element_sampled's of a larger one. */
START_TEST(test_against_double)
{
	if (!cpu_ok("against double"))
		return;
	bool trans_b = _i;
	static const float alphas[] = {1.0f, 0.125f}, betas[] = {0.0f, 1.0f, 0.5f};
	int calls = 0;
	for (int im = 0; im < COUNT(ms); im++)
		for (int in = 0; in < COUNT(ns); in++) {
			int v = im + in, kk = (5 * im + 7 * in + 3 * _i) % COUNT(ks);
			while (kk > 0 && (double)ms[im] * ns[in] * ks[kk] > 6e6) /* minutes under valgrind */
				kk--;
			int k = ks[kk];
			struct call t = call_new(trans_b, ms[im], ns[in], k, alphas[v % 2], betas[v / 2 % 3], 1 + v,
						 v * 5 + im, 1000u * (unsigned)im + (unsigned)in);
			call_run(&t);
			float *bt = opb_columns(trans_b, &t.b, t.n, k);
			bool every = (double)t.m * t.n * k <= 1e6;
			for (int i = 0; i < t.m; i++)
				for (int j = 0; j < t.n; j++) {
					if (!every && !element_sampled(i, j, t.m, t.n))
						continue;
					const float *ai = at(&t.a, i, 0), *bj = bt + (size_t)j * k;
					double sum = 0.0, mag = 0.0;
					for (int d = 0; d < k; d++) {
						double p = (double)ai[d] * bj[d];
						sum += p, mag += fabs(p);
					}
					double c0 = t.beta == 0.0f ? 0.0 : *at(&t.c0, i, j);
					double want = t.alpha * sum + t.beta * c0;
					double bound = (k + 3) * 0x1p-23 * (fabs(t.alpha) * mag + fabs(t.beta * c0)) + 0x1p-126;
					float got = *at(&t.c, i, j);
					if (!(fabs(got - want) <= bound)) {
						char *name = call_name(&t);
						ck_abort_msg("%s: C[%d][%d] = %a, the sum in double %a (bound %a)", name, i, j,
							     (double)got, want, bound);
					}
				}
			assert_outside_untouched(&t);
			free(bt);
			call_free(&t);
			calls++;
		}
	printf("check_gemmkern: %s: %d shapes against the sum in double\n", trans_b ? "B [n][k]" : "B [k][n]", calls);
}
END_TEST

/* C[i][j] as gemmkern.h orders it (BT: opb_columns): one chain of fmaf over the depths in order from 0, then alpha · sum
 * when alpha ≠ 1, then + C when beta is 1, + beta · C when beta is neither 0 nor 1. */
static float scalar_element(const struct call *t, const float *bt, int i, int j)
{
	const float *ai = at(&t->a, i, 0), *bj = bt + (size_t)j * t->k;
	float s = 0.0f;
	for (int d = 0; d < t->k; d++)
		s = fmaf(ai[d], bj[d], s);
	float v = t->alpha == 1.0f ? s : t->alpha * s;
	float c = *at(&t->c0, i, j);
	if (t->beta == 0.0f)
		return v;
	if (t->beta == 1.0f)
		return v + c;
	float bc = t->beta * c;
	return v + bc;
}

/* The first element (as i · n + j) of rows R0 .. R1 - 1, columns C0 .. C1 - 1 of T's C whose bits differ
 * from WANT's, or -1. */
static long first_difference(const struct call *t, const struct mat *want, int r0, int r1, int c0, int c1)
{
	for (int i = r0; i < r1; i++)
		if (memcmp(at(&t->c, i, c0), at(want, i, c0), (size_t)(c1 - c0) * sizeof(float)))
			for (int j = c0; j < c1; j++)
				if (bits_of(*at(&t->c, i, j)) != bits_of(*at(want, i, j)))
					return (long)i * t->n + j;
	return -1;
}

/* Shapes across the tiles' and blocks' edges (k 0, one depth, odd depths, two and three depth blocks);
 * 4 of the 16 alpha x beta pairs each, all 16 twice over the shapes. Alpha 0.3 and beta 0.7 are not
 * powers of 2: beta · C rounds, so a fused alpha · sum + beta · C would differ. Every element of a
 * call up to 10^6 products, element_sampled's of a larger one. */
START_TEST(test_summation_order)
{
	if (!cpu_ok("summation order"))
		return;
	bool trans_b = _i;
	static const int shapes[][3] = {{1, 1, 1}, {5, 23, 0}, {7, 25, 9}, {13, 47, 300},
					{97, 193, 257}, {4, 24, 600}, {100, 8, 64}, {9, 48, 63}};
	static const float alphas[] = {1.0f, 0.125f, 0.3f, -1.5f}, betas[] = {0.0f, 1.0f, 0.5f, 0.7f};
	for (int s = 0; s < COUNT(shapes); s++)
		for (int q = 0; q < 4; q++) {
			int ab = (4 * s + q + 5 * _i) % 16;
			struct call t = call_new(trans_b, shapes[s][0], shapes[s][1], shapes[s][2], alphas[ab % 4],
						 betas[ab / 4], s + q, s + q, 77u * (unsigned)s + (unsigned)q);
			call_run(&t);
			float *bt = opb_columns(trans_b, &t.b, t.n, t.k);
			bool every = (double)t.m * t.n * t.k <= 1e6;
			for (int i = 0; i < t.m; i++)
				for (int j = 0; j < t.n; j++) {
					if (!every && !element_sampled(i, j, t.m, t.n))
						continue;
					float want = scalar_element(&t, bt, i, j), got = *at(&t.c, i, j);
					if (bits_of(got) != bits_of(want)) {
						char *name = call_name(&t);
						ck_abort_msg("%s: C[%d][%d] = %a, the fmaf chain's %a", name, i, j, (double)got,
							     (double)want);
					}
				}
			free(bt);
			call_free(&t);
		}
}
END_TEST

/* Rows R0 .. R1 of T computed by a call of their own (C as before the call) equal the whole call's. */
static void assert_rows_alone(const struct call *t, int r0, int r1)
{
	struct mat c = mat_copy(&t->c0);
	mark_point();
	gemmkern_sgemm(t->trans_b, r1 - r0, t->n, t->k, t->alpha, at(&t->a, r0, 0), t->a.ld, t->b.p, t->b.ld, t->beta,
		       at(&c, r0, 0), c.ld);
	struct call part = *t;
	part.c = c;
	long e = first_difference(&part, &t->c, r0, r1, 0, t->n);
	if (e >= 0) {
		char *name = call_name(t);
		ck_abort_msg("%s: rows %d .. %d alone: C[%ld][%ld] = %a, in the whole call %a", name, r0, r1 - 1,
			     e / t->n, e % t->n, (double)c.p[e / t->n * c.ld + e % t->n],
			     (double)*at(&t->c, (int)(e / t->n), (int)(e % t->n)));
	}
	free(c.base);
}

/* 200 rows: blocks of 96 at 0, 96, 192 (AVX2) or of 128 at 0, 128 (AVX-512); tiles of 4 or 8. Two
 * depth blocks, a full and a partial panel. */
START_TEST(test_rows_independent)
{
	if (!cpu_ok("rows"))
		return;
	struct call t = call_new(_i, 200, 40, 300, 0.3f, 0.7f, 3, 5, 42);
	call_run(&t);
	static const int from[] = {1, 2, 3, 5, 94, 95, 96, 97, 98, 127, 128, 129, 150, 191, 192, 193, 199};
	for (int r = 0; r < COUNT(from); r++)
		assert_rows_alone(&t, from[r], t.m);
	static const int ranges[][2] = {{0, 1}, {3, 4}, {95, 96}, {96, 97}, {5, 9}, {90, 101}, {0, 97}, {7, 192}};
	for (int r = 0; r < COUNT(ranges); r++)
		assert_rows_alone(&t, ranges[r][0], ranges[r][1]);
	call_free(&t);
}
END_TEST

/* Columns J0 .. J1 of T computed by a call of their own (op(B) from column J0) equal the whole call's. */
static void assert_columns_alone(const struct call *t, int j0, int j1)
{
	struct mat c = mat_copy(&t->c0);
	const float *b = t->trans_b ? at(&t->b, j0, 0) : at(&t->b, 0, j0);
	mark_point();
	gemmkern_sgemm(t->trans_b, t->m, j1 - j0, t->k, t->alpha, t->a.p, t->a.ld, b, t->b.ld, t->beta, at(&c, 0, j0),
		       c.ld);
	struct call part = *t;
	part.c = c;
	long e = first_difference(&part, &t->c, 0, t->m, j0, j1);
	if (e >= 0) {
		char *name = call_name(t);
		ck_abort_msg("%s: columns %d .. %d alone: C[%ld][%ld] = %a, in the whole call %a", name, j0, j1 - 1,
			     e / t->n, e % t->n, (double)c.p[e / t->n * c.ld + e % t->n],
			     (double)*at(&t->c, (int)(e / t->n), (int)(e % t->n)));
	}
	free(c.base);
}

/* 400 columns: blocks of 192 at 0, 192, 384; panels of 24. */
START_TEST(test_columns_independent)
{
	if (!cpu_ok("columns"))
		return;
	struct call t = call_new(_i, 13, 400, 300, 0.125f, 1.0f, 4, 6, 43);
	call_run(&t);
	static const int from[] = {1, 7, 8, 23, 24, 25, 191, 192, 193, 300, 384, 385, 399};
	for (int r = 0; r < COUNT(from); r++)
		assert_columns_alone(&t, from[r], t.n);
	static const int ranges[][2] = {{0, 1}, {5, 6}, {20, 28}, {180, 210}, {0, 193}, {1, 399}};
	for (int r = 0; r < COUNT(ranges); r++)
		assert_columns_alone(&t, ranges[r][0], ranges[r][1]);
	call_free(&t);
}
END_TEST

/* With A zero past depth K1 (probabilities past a query's keys), depth K2 gives K1's bits, whatever
 * B holds past K1 (the values of keys not attended). */
START_TEST(test_keys_independent)
{
	if (!cpu_ok("keys"))
		return;
	static const int cases[][4] = {/* m, n, K1, K2 */ {20, 64, 37, 100}, {20, 64, 37, 300}, {9, 50, 250, 600}};
	for (int trans_b = 0; trans_b <= 1; trans_b++)
		for (int s = 0; s < COUNT(cases); s++) {
			int m = cases[s][0], n = cases[s][1], k1 = cases[s][2], k2 = cases[s][3];
			struct call t = call_new(trans_b, m, n, k2, 1.0f, 0.0f, s, s, 44u + (unsigned)s);
			for (int i = 0; i < m; i++)
				for (int d = k1; d < k2; d++)
					*at(&t.a, i, d) = 0.0f;
			call_run(&t);
			struct call t1 = t;
			t1.k = k1;
			t1.c = mat_copy(&t.c0);
			call_run(&t1);
			long e = first_difference(&t1, &t.c, 0, m, 0, n);
			if (e >= 0) {
				char *name = call_name(&t);
				ck_abort_msg("%s: zero past depth %d: C[%ld][%ld] = %a, with k %d %a", name, k1, e / n, e % n,
					     (double)t.c.p[e / n * t.c.ld + e % n], k1,
					     (double)t1.c.p[e / n * t1.c.ld + e % n]);
			}
			free(t1.c.base);
			call_free(&t);
		}
}
END_TEST

/* A NaN in A's row I0 (depth D0), an infinity in op(B)'s column J1 (depth D1) against a 0 in A's row
 * ZR, and with beta 1 a NaN in C0 at (CI, CJ): row I0 is NaN, C[ZR][J1] NaN (0 · inf: a zero is
 * multiplied, not skipped), column J1 infinite elsewhere, C[CI][CJ] NaN, all else finite. */
START_TEST(test_special_values)
{
	if (!cpu_ok("special values"))
		return;
	static const int cases[][10] = {/* m, n, k, i0, d0, j1, d1, ci, cj, zr */
					{13, 47, 300, 5, 260, 30, 3, 9, 46, 12},
					{13, 47, 300, 12, 0, 46, 299, 0, 0, 7},
					{100, 200, 64, 96, 63, 192, 0, 95, 191, 0},
					{4, 24, 9, 0, 8, 23, 8, 3, 0, 2}};
	for (int trans_b = 0; trans_b <= 1; trans_b++)
		for (int s = 0; s < COUNT(cases); s++) {
			const int *cs = cases[s];
			struct call t = call_new(trans_b, cs[0], cs[1], cs[2], s % 2 ? 1.0f : 0.125f, 1.0f, s, s, 45u + (unsigned)s);
			*at(&t.a, cs[3], cs[4]) = NAN;
			float inf = s % 2 ? -INFINITY : INFINITY;
			*(trans_b ? at(&t.b, cs[5], cs[6]) : at(&t.b, cs[6], cs[5])) = inf;
			*at(&t.a, cs[9], cs[6]) = 0.0f;
			*at(&t.c, cs[7], cs[8]) = NAN;
			free(t.c0.base);
			t.c0 = mat_copy(&t.c);
			call_run(&t);
			for (int i = 0; i < t.m; i++)
				for (int j = 0; j < t.n; j++) {
					float got = *at(&t.c, i, j);
					bool want_nan = i == cs[3] || (i == cs[7] && j == cs[8]) || (i == cs[9] && j == cs[5]),
					     want_inf = !want_nan && j == cs[5];
					if (want_nan ? !isnan(got) : want_inf ? !isinf(got) : !isfinite(got)) {
						char *name = call_name(&t);
						ck_abort_msg("%s: NaN in A[%d][%d], %g in op(B)[%d][%d], 0 in A[%d][%d], NaN in C[%d][%d]: "
							     "C[%d][%d] = %g, not %s",
							     name, cs[3], cs[4], (double)inf, cs[6], cs[5], cs[9], cs[6], cs[7], cs[8], i,
							     j, (double)got, want_nan ? "NaN" : want_inf ? "infinite" : "finite");
					}
				}
			call_free(&t);
		}
}
END_TEST

/* A packed copy of T's op(B) in a buffer of exactly gemmkern_packed_floats (ASan and valgrind see
 * a write or read past it), 32-byte aligned as gemmkern.h asks. */
static float *packed_copy(const struct call *t)
{
	size_t floats = gemmkern_packed_floats(t->n, t->k);
	void *p = NULL;
	ck_assert_int_eq(posix_memalign(&p, 32, (floats ? floats : 1) * sizeof(float)), 0);
	mark_point();
	gemmkern_pack(t->trans_b, t->n, t->k, t->b.p, t->b.ld, p);
	return p;
}

/* Columns J0 .. of T from the packed copy PK's part from J0 (and A from its packed copy APK when
 * not NULL) equal the unpacked whole call's (T->c, run before). */
static void assert_packed_columns(const struct call *t, const float *apk, const float *pk, int j0)
{
	struct mat c = mat_copy(&t->c0);
	mark_point();
	gemmkern_sgemm_packed(t->m, t->n - j0, t->k, t->alpha, t->a.p, t->a.ld, apk, pk + (size_t)j0 * t->k, t->beta, NULL,
			      at(&c, 0, j0), c.ld);
	struct call part = *t;
	part.c = c;
	long e = first_difference(&part, &t->c, 0, t->m, j0, t->n);
	if (e >= 0) {
		char *name = call_name(t);
		ck_abort_msg("%s: from the packed copy%s, columns %d on: C[%ld][%ld] = %a, from B %a", name,
			     apk ? " and packed A" : "", j0, e / t->n, e % t->n, (double)c.p[e / t->n * c.ld + e % t->n],
			     (double)*at(&t->c, (int)(e / t->n), (int)(e % t->n)));
	}
	if (j0 == 0) {
		part.c0 = t->c0;
		assert_outside_untouched(&part);
	}
	free(c.base);
}

/* Shapes on and around the panels (24), blocks (192 columns, 128 depths, 96 rows) and streaming (a
 * row or two). */
START_TEST(test_packed)
{
	if (!cpu_ok("packed"))
		return;
	static const int shapes[][3] = {/* m, n, k */ {1, 1, 1},	{2, 24, 128},	{3, 25, 129},	{5, 191, 257},
					{97, 193, 300}, {4, 400, 64},	{13, 384, 700}, {1, 768, 300},
					{2, 50, 1000},	{200, 30, 7},	{1, 200, 0}};
	static const float ab[][2] = {{1.0f, 0.0f}, {1.0f, 1.0f}, {0.5f, 0.75f}, {-2.0f, 0.0f}};
	for (int s = 0; s < COUNT(shapes); s++) {
		const int *sh = shapes[s];
		struct call t = call_new(_i, sh[0], sh[1], sh[2], ab[s % 4][0], ab[s % 4][1], s, s, 46u + (unsigned)s);
		call_run(&t);
		size_t a_floats = gemmkern_packed_a_floats(t.m, t.k); /* exactly: ASan sees a write past it */
		float *pk = packed_copy(&t), *apk = malloc((a_floats ? a_floats : 1) * sizeof *apk);
		ck_assert_ptr_nonnull(apk);
		gemmkern_pack_a(t.m, t.k, t.a.p, t.a.ld, apk);
		for (int j0 = 0; j0 < t.n; j0 += GEMMKERN_NC) {
			assert_packed_columns(&t, NULL, pk, j0);
			assert_packed_columns(&t, apk, pk, j0);
		}
		free(pk), free(apk);
		call_free(&t);
	}
}
END_TEST

/* A bias added as the sums are stored (BETA 0) gives the bits of C filled with the bias and BETA 1:
 * the linears' tiles rely on it (weights.c), on the tiles' path and on the streamed row or two. */
START_TEST(test_packed_bias)
{
	if (!cpu_ok("packed bias"))
		return;
	static const int shapes[][3] = {/* m, n, k */ {1, 30, 40}, {2, 200, 300}, {9, 100, 129}, {130, 400, 768}};
	for (int s = 0; s < COUNT(shapes); s++) {
		const int *sh = shapes[s];
		struct call t = call_new(_i, sh[0], sh[1], sh[2], s % 2 ? 0.5f : 1.0f, 1.0f, s, s, 91u + (unsigned)s);
		float *pk = packed_copy(&t), *bias = malloc((size_t)t.n * sizeof *bias);
		ck_assert_ptr_nonnull(bias);
		for (int j = 0; j < t.n; j++)
			bias[j] = rng_float();
		struct mat filled = mat_copy(&t.c), added = mat_copy(&t.c);
		for (int i = 0; i < t.m; i++)
			for (int j = 0; j < t.n; j++)
				*at(&filled, i, j) = bias[j], *at(&added, i, j) = NAN;
		mark_point();
		gemmkern_sgemm_packed(t.m, t.n, t.k, t.alpha, t.a.p, t.a.ld, NULL, pk, 1.0f, NULL, filled.p, filled.ld);
		gemmkern_sgemm_packed(t.m, t.n, t.k, t.alpha, t.a.p, t.a.ld, NULL, pk, 0.0f, bias, added.p, added.ld);
		for (int i = 0; i < t.m; i++)
			for (int j = 0; j < t.n; j++)
				assert_each(bits_of(*at(&added, i, j)) == bits_of(*at(&filled, i, j)),
					    "%d x %d x %d: C[%d][%d] = %a with the bias added, %a with it filled in", t.m,
					    t.n, t.k, i, j, (double)*at(&added, i, j), (double)*at(&filled, i, j));
		free(filled.base), free(added.base), free(pk), free(bias);
		call_free(&t);
	}
}
END_TEST

/* C's columns in heads (struct gemm_heads: q, k and v written straight into a trace's head-major
 * arrays): every element the bits of the same call into a plain C, from a column FIRST on (a tile of
 * a linear's columns), with α, β and a bias, on the tiles and on the streamed row or two; the columns
 * before FIRST and the floats between the heads (STRIDE past a head's rows) untouched. */
START_TEST(test_packed_heads)
{
	if (!cpu_ok("packed heads"))
		return;
	static const struct {
		int width, parts, col0[3], n; /* three parts: q, k, v of a fused product */
	} layouts[] = {{64, 3, {0, 192, 320}, 448}, {16, 3, {0, 32, 48}, 80}, {32, 1, {0}, 160}, {64, 2, {0, 384}, 768}};
	static const int rows[] = {1, 2, 13, 130}, depths[] = {5, 300};
	static const float ab[][2] = {{1.0f, 0.0f}, {0.5f, 0.75f}};
	for (int li = 0; li < COUNT(layouts); li++)
		for (int ri = 0; ri < COUNT(rows); ri++)
			for (int di = 0; di < COUNT(depths); di++) {
				int width = layouts[li].width, n = layouts[li].n, m = rows[ri], k = depths[di];
				float alpha = ab[(li + ri) % 2][0], beta = ab[(li + ri) % 2][1];
				size_t stride = (size_t)m * width + 7; /* a gap between heads, which must stay as it is */
				float *a = malloc((size_t)m * k * sizeof *a), *b = malloc((size_t)k * n * sizeof *b);
				float *bias = malloc((size_t)n * sizeof *bias), *plain = malloc((size_t)m * n * sizeof *plain);
				float *heads = malloc((size_t)n / width * stride * sizeof *heads);
				ck_assert(a && b && bias && plain && heads);
				for (size_t i = 0; i < (size_t)m * k; i++)
					a[i] = rng_float();
				for (size_t i = 0; i < (size_t)k * n; i++)
					b[i] = rng_float();
				for (int j = 0; j < n; j++)
					bias[j] = rng_float();
				struct gemm_heads h = {width, stride, layouts[li].parts, {0}, {NULL}, 0};
				for (int p = 0; p < h.parts; p++) {
					h.col0[p] = layouts[li].col0[p];
					h.base[p] = heads + (size_t)h.col0[p] / width * stride;
				}
				for (size_t i = 0; i < (size_t)n / width * stride; i++)
					heads[i] = NAN;
				for (int i = 0; i < m; i++) /* C's first values, the same in both */
					for (int j = 0; j < n; j++)
						plain[(size_t)i * n + j] = *gemm_heads_at(&h, i, j) = rng_float();
				float *pk = NULL;
				ck_assert_int_eq(posix_memalign((void **)&pk, 32, gemmkern_packed_floats(n, k) * sizeof(float)), 0);
				gemmkern_pack(false, n, k, b, n, pk);
				int first = n > GEMMKERN_NC ? GEMMKERN_NC : 0; /* the columns of a later tile */
				mark_point();
				gemmkern_sgemm_packed(m, n - first, k, alpha, a, k, NULL, pk + (size_t)first * k, beta, bias + first,
						      plain + first, n);
				struct gemm_heads call = h;
				call.first = first;
				gemmkern_sgemm_packed_heads(m, n - first, k, alpha, a, k, NULL, pk + (size_t)first * k, beta,
							    bias + first, &call);
				for (int i = 0; i < m; i++)
					for (int j = 0; j < n; j++)
						assert_each(bits_of(*gemm_heads_at(&h, i, j)) == bits_of(plain[(size_t)i * n + j]),
							    "heads of %d, %d x %d x %d from column %d: C[%d][%d] = %a, plain %a", width,
							    m, n, k, first, i, j, (double)*gemm_heads_at(&h, i, j),
							    (double)plain[(size_t)i * n + j]);
				for (int hd = 0; hd < n / width; hd++) /* the gaps */
					for (size_t g = (size_t)m * width; g < stride; g++)
						ck_assert_msg(isnan(heads[hd * stride + g]), "heads of %d, %d x %d x %d: gap written",
							      width, m, n, k);
				free(a), free(b), free(bias), free(plain), free(heads), free(pk);
			}
}
END_TEST

static int run_suite(void)
{
	Suite *s = suite_create("gemmkern");
	const struct {
		const char *name;
		const TTest *test;
		int layouts; /* 2: run for B [k][n] (_i 0) and B [n][k] (_i 1) */
	} cases[] = {{"double", test_against_double, 2},	{"order", test_summation_order, 2},
		     {"rows", test_rows_independent, 2},	{"columns", test_columns_independent, 2},
		     {"keys", test_keys_independent, 1},	{"specials", test_special_values, 1},
		     {"packed", test_packed, 2},		{"packed bias", test_packed_bias, 2},
		     {"packed heads", test_packed_heads, 1}};
	for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
		TCase *tc = tcase_create(cases[i].name);
		tcase_set_timeout(tc, 600); /* minutes under valgrind */
		tcase_add_loop_test(tc, cases[i].test, 0, cases[i].layouts);
		suite_add_tcase(s, tc);
	}
	return testutil_run_suite(s, false);
}

/* The documented order is one: each kind of tiles must give its bits, so the suite runs once per kind. */
int main(void)
{
	if (!gemmkern_available())
		return run_suite(); /* each test says it is skipped */
	int failed = 0;
	static const char *const kinds[] = {"avx2", "avx512"};
	for (int i = 0; i < COUNT(kinds); i++) {
		if (!gemmkern_use(kinds[i])) {
			printf("check_gemmkern: tiles %s: this CPU lacks them, skipped\n", kinds[i]);
			continue;
		}
		printf("check_gemmkern: tiles %s\n", gemmkern_version());
		fflush(stdout); /* before the forked tests write */
		failed |= run_suite() != EXIT_SUCCESS;
	}
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
