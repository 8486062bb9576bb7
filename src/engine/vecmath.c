/* vecmath.c -- glibc 2.36's expf and erff, 8 floats at a time on AVX2, bit for bit (see vecmath.h). */
#include "config.h"

#include "engine/vecmath.h"

#ifdef VECMATH_AVX2
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define VECMATH_RUN 256 /* values whose lanes vecmath_erff_n gathers by range before computing them */
#define VECMATH_ERFF_MIDDLE 0x3f580000 /* erff's ranges start at |x| = 0.84375 ... */
#define VECMATH_ERFF_OUTER 0x3fa00000  /* ... and 1.25 (the floats' bits) */

/* expf (glibc's e_expf.c; the ARM optimized-routines algorithm): with N = 32,
 *   z = x·N/ln2 rounded to an integer k by adding 1.5·2^52, r = x·N/ln2 − k,
 *   exp(x) = 2^(k/N) · 2^(r/N), 2^(k/N) from the table and the exponent bits, 2^(r/N) a cubic in r.
 * The table holds the bits of 2^(i/32) less i << 47, so that adding k << 47 makes 2^(k/32)'s. */
static const uint64_t vecmath_exp2_table[32] = {
	0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51, 0x3fef72b83c7d517b,
	0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1, 0x3fef06fe0a31b715, 0x3feef1a7373aa9cb,
	0x3feedea64c123422, 0x3feece086061892d, 0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429,
	0x3feea47eb03a5585, 0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
	0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d, 0x3feee89f995ad3ad,
	0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069, 0x3fef5818dcfba487, 0x3fef7c97337b9b5f,
	0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
};

/* exp of 4 doubles that are floats with |x| < 88 (glibc's main path), rounded to float; the four
 * products-and-sums fused as __expf_fma fuses them. */
__attribute__((target("avx2,fma"))) static __m128 vecmath_expf4(__m256d xd)
{
	const __m256d inv_ln2_n = _mm256_set1_pd(0x1.71547652b82fep+5); /* 32/ln 2 */
	const __m256d shift = _mm256_set1_pd(0x1.8p+52);
	const __m256d c0 = _mm256_set1_pd(0x1.c6af84b912394p-20), c1 = _mm256_set1_pd(0x1.ebfce50fac4f3p-13),
		      c2 = _mm256_set1_pd(0x1.62e42ff0c52d6p-6);
	__m256d z = _mm256_fmadd_pd(inv_ln2_n, xd, shift);
	__m256i ki = _mm256_castpd_si256(z);
	__m256d kd = _mm256_sub_pd(z, shift);
	__m256d r = _mm256_fmsub_pd(inv_ln2_n, xd, kd);
	__m256i index = _mm256_and_si256(ki, _mm256_set1_epi64x(31));
	__m256i t = _mm256_i64gather_epi64((const long long *)vecmath_exp2_table, index, 8);
	__m256d s = _mm256_castsi256_pd(_mm256_add_epi64(t, _mm256_slli_epi64(ki, 47)));
	__m256d p = _mm256_fmadd_pd(c0, r, c1);
	__m256d r2 = _mm256_mul_pd(r, r);
	__m256d y = _mm256_fmadd_pd(r, c2, _mm256_set1_pd(1.0));
	y = _mm256_fmadd_pd(p, r2, y);
	return _mm256_cvtpd_ps(_mm256_mul_pd(y, s));
}

/* expf of 8 floats whose |x| < 88: glibc's main path only (erff's arguments stay in it). */
__attribute__((target("avx2,fma"))) static __m256 vecmath_expf8_main(__m256 x)
{
	__m128 lo = vecmath_expf4(_mm256_cvtps_pd(_mm256_castps256_ps128(x)));
	__m128 hi = vecmath_expf4(_mm256_cvtps_pd(_mm256_extractf128_ps(x, 1)));
	return _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1);
}

__attribute__((target("avx2,fma"))) static inline __m256 vecmath_expf8_inline(__m256 x)
{
	__m256 y = vecmath_expf8_main(x);
	__m256i bits = _mm256_castps_si256(x);
	__m256i abs_bits = _mm256_and_si256(bits, _mm256_set1_epi32(0x7fffffff));
	/* |x| >= 88 or NaN: glibc's slow path (any lane; as rare as inputs that far out) */
	__m256i far = _mm256_cmpgt_epi32(abs_bits, _mm256_set1_epi32(0x42afffff));
	if (_mm256_testz_si256(far, far))
		return y;
	/* in glibc's order: -inf 0; inf and NaN x + x; overflow inf; underflow 0; below log(0x1p-149)
	 * 0x1.4p-75f squared, 0x1p-149; otherwise the main path */
	const __m256 over = _mm256_cmp_ps(x, _mm256_set1_ps(0x1.62e42ep6f), _CMP_GT_OQ);
	const __m256 under = _mm256_cmp_ps(x, _mm256_set1_ps(-0x1.9fe368p6f), _CMP_LT_OQ);
	const __m256 may_under = _mm256_cmp_ps(x, _mm256_set1_ps(-0x1.9d1d9ep6f), _CMP_LT_OQ);
	y = _mm256_blendv_ps(y, _mm256_set1_ps(0x1p-149f), may_under);
	y = _mm256_blendv_ps(y, _mm256_setzero_ps(), under);
	y = _mm256_blendv_ps(y, _mm256_set1_ps(__builtin_inff()), over);
	__m256i nonfinite = _mm256_cmpgt_epi32(abs_bits, _mm256_set1_epi32(0x7f7fffff));
	y = _mm256_blendv_ps(y, _mm256_add_ps(x, x), _mm256_castsi256_ps(nonfinite)); /* -inf + -inf = -inf, below */
	__m256i minus_inf = _mm256_cmpeq_epi32(bits, _mm256_set1_epi32((int)0xff800000));
	return _mm256_blendv_ps(y, _mm256_setzero_ps(), _mm256_castsi256_ps(minus_inf));
}

__attribute__((target("avx2,fma"))) __m256 vecmath_expf8(__m256 x)
{
	return vecmath_expf8_inline(x);
}

/* vecmath_expf4's operations on 8 doubles, the table read from registers: the 32 entries as two
 * 16-entry lookups (bits 0-3 of the index), chosen by bit 4. AVX2 gathers them from memory. */
__attribute__((target("avx512f,fma"))) static __m256 vecmath_expf8d(__m512d xd, __m512i t0, __m512i t1, __m512i t2,
								  __m512i t3)
{
	const __m512d inv_ln2_n = _mm512_set1_pd(0x1.71547652b82fep+5);
	const __m512d shift = _mm512_set1_pd(0x1.8p+52);
	const __m512d c0 = _mm512_set1_pd(0x1.c6af84b912394p-20), c1 = _mm512_set1_pd(0x1.ebfce50fac4f3p-13),
		      c2 = _mm512_set1_pd(0x1.62e42ff0c52d6p-6);
	__m512d z = _mm512_fmadd_pd(inv_ln2_n, xd, shift);
	__m512i ki = _mm512_castpd_si512(z);
	__m512d kd = _mm512_sub_pd(z, shift);
	__m512d r = _mm512_fmsub_pd(inv_ln2_n, xd, kd);
	__m512i low = _mm512_permutex2var_epi64(t0, ki, t1), high = _mm512_permutex2var_epi64(t2, ki, t3);
	__m512i t = _mm512_mask_blend_epi64(_mm512_test_epi64_mask(ki, _mm512_set1_epi64(16)), low, high);
	__m512d s = _mm512_castsi512_pd(_mm512_add_epi64(t, _mm512_slli_epi64(ki, 47)));
	__m512d p = _mm512_fmadd_pd(c0, r, c1);
	__m512d r2 = _mm512_mul_pd(r, r);
	__m512d y = _mm512_fmadd_pd(r, c2, _mm512_set1_pd(1.0));
	y = _mm512_fmadd_pd(p, r2, y);
	return _mm512_cvtpd_ps(_mm512_mul_pd(y, s));
}

/* vecmath_expf_shifted_n 16 at a time: a vector with a lane outside glibc's main path (|x| >= 88, NaN)
 * goes through vecmath_expf8 in halves, the last values through vecmath_expf_shifted_n. */
__attribute__((target("avx512f,avx2,fma"))) void vecmath_expf_shifted_n16(float *x, size_t count, float shift)
{
	const __m512i t0 = _mm512_loadu_si512(vecmath_exp2_table), t1 = _mm512_loadu_si512(vecmath_exp2_table + 8),
		      t2 = _mm512_loadu_si512(vecmath_exp2_table + 16), t3 = _mm512_loadu_si512(vecmath_exp2_table + 24);
	const __m512 m = _mm512_set1_ps(shift);
	size_t j = 0;
	for (; j + 16 <= count; j += 16) {
		__m512 v = _mm512_sub_ps(_mm512_loadu_ps(x + j), m);
		__m512i abs_bits = _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(0x7fffffff));
		if (_mm512_cmpgt_epi32_mask(abs_bits, _mm512_set1_epi32(0x42afffff))) {
			_mm256_storeu_ps(x + j, vecmath_expf8_inline(_mm512_castps512_ps256(v)));
			_mm256_storeu_ps(x + j + 8, vecmath_expf8_inline(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))));
			continue;
		}
		__m256 lo = vecmath_expf8d(_mm512_cvtps_pd(_mm512_castps512_ps256(v)), t0, t1, t2, t3);
		__m256 hi = vecmath_expf8d(_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))),
					   t0, t1, t2, t3);
		_mm256_storeu_ps(x + j, lo);
		_mm256_storeu_ps(x + j + 8, hi);
	}
	if (j < count)
		vecmath_expf_shifted_n(x + j, count - j, shift);
}

__attribute__((target("avx2,fma"))) void vecmath_expf_shifted_n(float *x, size_t count, float shift)
{
	__m256 m = _mm256_set1_ps(shift);
	size_t j = 0;
	for (; j + 8 <= count; j += 8)
		_mm256_storeu_ps(x + j, vecmath_expf8_inline(_mm256_sub_ps(_mm256_loadu_ps(x + j), m)));
	if (j < count) { /* the last ones through a buffer, by the same function */
		float buf[8] = {0};
		memcpy(buf, x + j, (count - j) * sizeof *buf);
		_mm256_storeu_ps(buf, vecmath_expf8_inline(_mm256_sub_ps(_mm256_loadu_ps(buf), m)));
		memcpy(x + j, buf, (count - j) * sizeof *buf);
	}
}

/* A + S·(B + S·(C ...)): Horner's rule over N coefficients from the highest, each step a product and
 * then a sum rounded apart (this function's target has no FMA). */
__attribute__((target("avx2"))) static inline __m256 vecmath_horner(__m256 s, const float *coef, int n)
{
	__m256 acc = _mm256_set1_ps(coef[n - 1]);
#pragma GCC unroll 8
	for (int i = n - 2; i >= 0; i--)
		acc = _mm256_add_ps(_mm256_set1_ps(coef[i]), _mm256_mul_ps(s, acc));
	return acc;
}

/* erff's coefficients (s_erff.c), lowest first. pp, qq: |x| < 0.84375, in x²; pa, qa: |x| < 1.25,
 * in |x| − 1; ra, sa: |x| < 1/0.35, in 1/x²; rb, sb: |x| < 6, in 1/x². The qq.. sb lists start with
 * the 1 of "one + z·(...)". */
static const float vecmath_pp[] = {0.12837916612625122f, -0.32504209876060486f, -0.028481749817728996f,
				   -0.005770270247012377f, -2.3763017452438362e-05f};
static const float vecmath_qq[] = {1.0f, 0.3979172110557556f, 0.06502225250005722f, 0.0050813062116503716f,
				   0.0001324947370449081f, -3.9602282413397916e-06f};
static const float vecmath_pa[] = {-0.0023621185682713985f, 0.41485610604286194f, -0.3722078800201416f,
				   0.31834661960601807f,    -0.11089469492435455f, 0.03547830507159233f,
				   -0.002166375517845154f};
static const float vecmath_qa[] = {1.0f, 0.10642088204622269f, 0.5403979420661926f, 0.07182865589857101f,
				   0.12617121636867523f, 0.01363708358258009f, 0.011984500102698803f};
static const float vecmath_ra[] = {-0.009864944033324718f, -0.6938585638999939f, -10.558626174926758f,
				   -62.37533187866211f,     -162.39666748046875f, -184.60508728027344f,
				   -81.28743743896484f,     -9.814329147338867f};
static const float vecmath_sa[] = {1.0f,		 19.65127182006836f, 137.6577606201172f,
				   434.5658874511719f,	 645.3872680664062f, 429.0081481933594f,
				   108.63500213623047f, 6.570249557495117f, -0.06042441353201866f};
static const float vecmath_rb[] = {-0.009864943102002144f, -0.7992832660675049f, -17.75795555114746f,
				   -160.63638305664062f,   -637.5664672851562f,  -1025.0950927734375f,
				   -483.5191955566406f};
static const float vecmath_sb[] = {1.0f,	       30.33806037902832f, 325.7925109863281f, 1536.7296142578125f,
				   3199.858154296875f, 2553.05029296875f,  474.5285339355469f, -22.44095230102539f};
#define VECMATH_COUNT(a) ((int)(sizeof(a) / sizeof(a)[0]))

__attribute__((target("avx2"))) static inline __m256i vecmath_below(__m256i abs_bits, uint32_t bound) /* |x| < the float with these bits */
{
	return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)bound), abs_bits);
}

/* erff on |x| < 0.84375: x + x·(pp(z)/qq(z)), z = x²; below 2^-28 x + efx·x; below 2^-119
 * 0.0625·(16·x + efx16·x) (glibc's scaling; fdlibm's is by 8). Other lanes: any value. */
__attribute__((target("avx2"))) static inline __m256 vecmath_erff8_small(__m256 x, __m256i abs_bits)
{
	__m256 z = _mm256_mul_ps(x, x);
	__m256 r = vecmath_horner(z, vecmath_pp, VECMATH_COUNT(vecmath_pp));
	__m256 s = vecmath_horner(z, vecmath_qq, VECMATH_COUNT(vecmath_qq));
	__m256 y = _mm256_add_ps(x, _mm256_mul_ps(x, _mm256_div_ps(r, s)));
	__m256i linear = vecmath_below(abs_bits, 0x31800000);
	if (_mm256_testz_si256(linear, linear)) /* no lane below 2^-28 (a GELU's inputs but its zeros): the
						   rest skipped, as erff16_small does; one core, values of
						   N(0, 0.3²): 0.81-0.94 -> 0.70-0.76 ns each, of N(0, 1.02²)
						   (the bench's mix of ranges) 1.60-1.68 -> 1.52-1.56 */
		return y;
	y = _mm256_blendv_ps(y, _mm256_add_ps(x, _mm256_mul_ps(_mm256_set1_ps(0.12837916612625122f), x)),
			     _mm256_castsi256_ps(linear));
	__m256 tiny = _mm256_mul_ps(_mm256_set1_ps(0.0625f), _mm256_add_ps(_mm256_mul_ps(_mm256_set1_ps(16.0f), x),
									      _mm256_mul_ps(_mm256_set1_ps(2.0540666580200195f), x)));
	return _mm256_blendv_ps(y, tiny, _mm256_castsi256_ps(vecmath_below(abs_bits, 0x04000000)));
}

/* erff on 0.84375 <= |x| < 1.25: ±(erx + pa(s)/qa(s)), s = |x| − 1 (x < 0: −erx − P/Q, the
 * negation of erx + P/Q exactly). Other lanes: any value. */
__attribute__((target("avx2"))) static inline __m256 vecmath_erff8_middle(__m256 x, __m256i abs_bits)
{
	__m256 ax = _mm256_castsi256_ps(abs_bits);
	__m256 sign = _mm256_castsi256_ps(_mm256_andnot_si256(abs_bits, _mm256_castps_si256(x)));
	__m256 s = _mm256_sub_ps(ax, _mm256_set1_ps(1.0f));
	__m256 q = _mm256_div_ps(vecmath_horner(s, vecmath_pa, VECMATH_COUNT(vecmath_pa)),
				 vecmath_horner(s, vecmath_qa, VECMATH_COUNT(vecmath_qa)));
	return _mm256_xor_ps(_mm256_add_ps(_mm256_set1_ps(0.8450629115104675f), q), sign);
}

/* erff on 1.25 <= |x|: below 6 ±(1 − exp(−z² − 0.5625)·exp((z − |x|)(z + |x|) + R/S)/|x|), z = |x|
 * with its last 12 bits cleared, R/S in s = 1/x² by ra/sa below 1/0.35 and by rb/sb above (each
 * computed only when a lane needs it); from 6 ±(1 − 1e-30), 1 in float; inf and NaN
 * (1 − 2·signbit) + 1/x. Other lanes: any value. */
__attribute__((target("avx2"))) static __m256 vecmath_erff8_outer(__m256 x, __m256i abs_bits)
{
	const __m256 one = _mm256_set1_ps(1.0f);
	const __m256 ax = _mm256_castsi256_ps(abs_bits);
	const __m256 sign = _mm256_castsi256_ps(_mm256_andnot_si256(abs_bits, _mm256_castps_si256(x)));
	__m256i below6 = vecmath_below(abs_bits, 0x40c00000);
	__m256 y = _mm256_setzero_ps();
	if (!_mm256_testz_si256(below6, below6)) {
		__m256 s = _mm256_div_ps(one, _mm256_mul_ps(ax, ax));
		__m256i near = vecmath_below(abs_bits, 0x4036db6e), far = _mm256_andnot_si256(near, below6);
		__m256 r_over_s = _mm256_setzero_ps();
		if (!_mm256_testz_si256(near, below6))
			r_over_s = _mm256_div_ps(vecmath_horner(s, vecmath_ra, VECMATH_COUNT(vecmath_ra)),
						 vecmath_horner(s, vecmath_sa, VECMATH_COUNT(vecmath_sa)));
		if (!_mm256_testz_si256(far, far))
			r_over_s = _mm256_blendv_ps(
				r_over_s,
				_mm256_div_ps(vecmath_horner(s, vecmath_rb, VECMATH_COUNT(vecmath_rb)),
					      vecmath_horner(s, vecmath_sb, VECMATH_COUNT(vecmath_sb))),
				_mm256_castsi256_ps(far));
		__m256 z = _mm256_castsi256_ps(_mm256_and_si256(abs_bits, _mm256_set1_epi32((int)0xfffff000)));
		__m256 a = _mm256_sub_ps(_mm256_mul_ps(_mm256_xor_ps(z, _mm256_set1_ps(-0.0f)), z), _mm256_set1_ps(0.5625f));
		__m256 b = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(z, ax), _mm256_add_ps(z, ax)), r_over_s);
		/* lanes from 6 up get 0 as both arguments: glibc's main path, not its slow one */
		a = _mm256_and_ps(a, _mm256_castsi256_ps(below6));
		b = _mm256_and_ps(b, _mm256_castsi256_ps(below6));
		__m256 r_over_x = _mm256_div_ps(_mm256_mul_ps(vecmath_expf8_main(a), vecmath_expf8_main(b)), ax);
		y = _mm256_blendv_ps(_mm256_sub_ps(one, r_over_x), _mm256_sub_ps(r_over_x, one),
				     _mm256_castsi256_ps(_mm256_srai_epi32(_mm256_castps_si256(x), 31)));
	}
	if (!_mm256_testc_si256(below6, _mm256_set1_epi32(-1))) { /* some lane from 6 up */
		__m256 unit = _mm256_or_ps(one, sign);
		__m256i nonfinite = _mm256_cmpgt_epi32(abs_bits, _mm256_set1_epi32(0x7f7fffff));
		unit = _mm256_blendv_ps(unit, _mm256_add_ps(unit, _mm256_div_ps(one, x)), _mm256_castsi256_ps(nonfinite));
		y = _mm256_blendv_ps(unit, y, _mm256_castsi256_ps(below6));
	}
	return y;
}

__attribute__((target("avx2"))) static inline __m256i vecmath_abs_bits(__m256 x)
{
	return _mm256_and_si256(_mm256_castps_si256(x), _mm256_set1_epi32(0x7fffffff));
}

/* The three ranges, each computed only when a lane falls in it, the lanes then chosen by mask. */
__attribute__((target("avx2"))) __m256 vecmath_erff8(__m256 x)
{
	const __m256i abs_bits = vecmath_abs_bits(x);
	__m256i small = vecmath_below(abs_bits, VECMATH_ERFF_MIDDLE);
	__m256i below_outer = vecmath_below(abs_bits, VECMATH_ERFF_OUTER);
	__m256i middle = _mm256_andnot_si256(small, below_outer);
	__m256 y = _mm256_setzero_ps();
	if (!_mm256_testz_si256(small, small))
		y = vecmath_erff8_small(x, abs_bits);
	if (!_mm256_testz_si256(middle, middle))
		y = _mm256_blendv_ps(y, vecmath_erff8_middle(x, abs_bits), _mm256_castsi256_ps(middle));
	if (!_mm256_testc_si256(below_outer, _mm256_set1_epi32(-1)))
		y = _mm256_blendv_ps(vecmath_erff8_outer(x, abs_bits), y, _mm256_castsi256_ps(below_outer));
	return y;
}

/* The lanes whose |x| (ABS_BITS) is below the float with bits BOUND, one bit each. */
__attribute__((target("avx2"))) static inline unsigned vecmath_lanes_below(__m256i abs_bits, uint32_t bound)
{
	return (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(vecmath_below(abs_bits, bound)));
}

/* The lanes of one range gathered from a run of values, 8 to a vector. */
struct vecmath_pending {
	float x[VECMATH_RUN + 8];   /* the lanes' inputs (8 past the last: a whole vector is stored) */
	int32_t at[VECMATH_RUN + 8]; /* and their places in the run */
	int n;
};

/* For each 8-bit lane mask, the set lanes' numbers first (one per byte, from the lowest): the
 * permutation that packs those lanes to the front of a vector. */
static uint64_t vecmath_pack_order[256];

__attribute__((constructor)) static void vecmath_pack_order_init(void)
{
	for (unsigned mask = 0; mask < 256; mask++) {
		uint64_t order = 0;
		int n = 0;
		for (int k = 0; k < 8; k++)
			if (mask >> k & 1)
				order |= (uint64_t)k << (8 * n++);
		vecmath_pack_order[mask] = order;
	}
}

/* Appends the lanes of XV set in MASK (a movemask) to P, packed to the front of one vector store
 * (lane by lane this took a tenth of the GELU's time); AT0 is XV's place in the run. */
__attribute__((target("avx2"))) static inline void vecmath_pend(struct vecmath_pending *p, __m256 xv, unsigned mask,
								  int at0)
{
	__m256i order = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)vecmath_pack_order[mask]));
	__m256i at = _mm256_add_epi32(_mm256_set1_epi32(at0), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
	_mm256_storeu_ps(p->x + p->n, _mm256_permutevar8x32_ps(xv, order));
	_mm256_storeu_si256((__m256i *)(void *)(p->at + p->n), _mm256_permutevar8x32_epi32(at, order));
	p->n += __builtin_popcount(mask);
}

/* Runs RANGE on P's lanes 8 at a time (the last vector filled with its first lane's input) and
 * stores each result at its place in Y. */
__attribute__((target("avx2"))) static void vecmath_flush(struct vecmath_pending *p, float *y,
							   __m256 (*range)(__m256 x, __m256i abs_bits))
{
	for (int i = p->n; i < p->n + 8 && p->n > 0; i++)
		p->x[i] = p->x[0];
	for (int i = 0; i < p->n; i += 8) {
		__m256 x = _mm256_loadu_ps(p->x + i);
		float out[8];
		_mm256_storeu_ps(out, range(x, vecmath_abs_bits(x)));
		for (int k = 0; k < 8 && i + k < p->n; k++)
			y[p->at[i + k]] = out[k];
	}
	p->n = 0;
}

/* Runs of VECMATH_RUN values: every vector through the small range's code (most GELU inputs are
 * there), the others' lanes gathered by range and computed 8 at a time, so that the costly outer
 * range runs once per 8 such values, not once per vector that holds one (erff8's blend). */
__attribute__((target("avx2"))) void vecmath_erff_n(const float *x, float *y, size_t count)
{
	struct vecmath_pending middle, outer; /* not zeroed: 4 KB a call of 256 values, a twentieth of its time */
	middle.n = outer.n = 0;
	for (size_t run = 0; run < count; run += VECMATH_RUN) {
		size_t len = count - run < VECMATH_RUN ? count - run : VECMATH_RUN, i = 0;
		/* two vectors a step: their small ranges' Horner chains interleave (one alone waits on its
		 * products' latency) */
		for (; i + 16 <= len; i += 16) {
			__m256 x0 = _mm256_loadu_ps(x + run + i), x1 = _mm256_loadu_ps(x + run + i + 8);
			__m256i abs0 = vecmath_abs_bits(x0), abs1 = vecmath_abs_bits(x1);
			unsigned small0 = vecmath_lanes_below(abs0, VECMATH_ERFF_MIDDLE);
			unsigned small1 = vecmath_lanes_below(abs1, VECMATH_ERFF_MIDDLE);
			unsigned below0 = vecmath_lanes_below(abs0, VECMATH_ERFF_OUTER);
			unsigned below1 = vecmath_lanes_below(abs1, VECMATH_ERFF_OUTER);
			vecmath_pend(&middle, x0, below0 & ~small0, (int)i);
			vecmath_pend(&middle, x1, below1 & ~small1, (int)i + 8);
			vecmath_pend(&outer, x0, 0xffu & ~below0, (int)i);
			vecmath_pend(&outer, x1, 0xffu & ~below1, (int)i + 8);
			if (!(small0 | small1))
				continue;
			_mm256_storeu_ps(y + run + i, vecmath_erff8_small(x0, abs0));
			_mm256_storeu_ps(y + run + i + 8, vecmath_erff8_small(x1, abs1));
		}
		for (; i < len; i += 8) {
			bool whole = i + 8 <= len;
			float v[8] = {0};
			if (!whole)
				memcpy(v, x + run + i, (len - i) * sizeof *v);
			const float *in = whole ? x + run + i : v;
			__m256 xv = _mm256_loadu_ps(in);
			__m256i abs_bits = vecmath_abs_bits(xv);
			unsigned lanes = whole ? 0xffu : (1u << (len - i)) - 1;
			unsigned small_mask = vecmath_lanes_below(abs_bits, VECMATH_ERFF_MIDDLE) & lanes;
			unsigned below_mask = vecmath_lanes_below(abs_bits, VECMATH_ERFF_OUTER) & lanes;
			/* unconditionally (an empty mask appends nothing): where a few lanes in a hundred fall
			 * outside the small range, a test per vector went either way at random */
			vecmath_pend(&middle, xv, below_mask & ~small_mask, (int)i);
			vecmath_pend(&outer, xv, lanes & ~below_mask, (int)i);
			if (!small_mask)
				continue;
			/* every lane written, the others' overwritten by the flushes below (Y may be X: their
			 * inputs are in the pending lists already) */
			__m256 yv = vecmath_erff8_small(xv, abs_bits);
			if (whole)
				_mm256_storeu_ps(y + run + i, yv);
			else {
				float out[8];
				_mm256_storeu_ps(out, yv);
				memcpy(y + run + i, out, (len - i) * sizeof *out);
			}
		}
		vecmath_flush(&middle, y + run, vecmath_erff8_middle);
		vecmath_flush(&outer, y + run, vecmath_erff8_outer);
	}
}

/* ---- erff 16 lanes at a time on AVX-512: the functions above on 16 lanes, the same bits ---- */
/* "avx512f" has FMA to fuse a product and a sum into (the 8-lane code's "avx2" has not): no
 * contraction here, each operation rounded on its own as glibc's. */
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")

__attribute__((target("avx512f"), always_inline)) static inline __m512 vecmath_horner16(__m512 s, const float *coef, int n)
{
	__m512 acc = _mm512_set1_ps(coef[n - 1]);
#pragma GCC unroll 8
	for (int i = n - 2; i >= 0; i--)
		acc = _mm512_add_ps(_mm512_set1_ps(coef[i]), _mm512_mul_ps(s, acc));
	return acc;
}

__attribute__((target("avx512f"), always_inline)) static inline __mmask16 vecmath_below16(__m512i abs_bits, uint32_t bound)
{
	return _mm512_cmplt_epi32_mask(abs_bits, _mm512_set1_epi32((int)bound));
}

__attribute__((target("avx512f"), always_inline)) static inline __m512i vecmath_abs_bits16(__m512 x)
{
	return _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff));
}

/* vecmath_erff8_small's operations */
__attribute__((target("avx512f"), always_inline)) static inline __m512 vecmath_erff16_small(__m512 x, __m512i abs_bits)
{
	__m512 z = _mm512_mul_ps(x, x);
	__m512 r = vecmath_horner16(z, vecmath_pp, VECMATH_COUNT(vecmath_pp));
	__m512 s = vecmath_horner16(z, vecmath_qq, VECMATH_COUNT(vecmath_qq));
	__m512 y = _mm512_add_ps(x, _mm512_mul_ps(x, _mm512_div_ps(r, s)));
	__mmask16 linear = vecmath_below16(abs_bits, 0x31800000);
	if (linear) { /* below 2^-28: as rare as such inputs */
		y = _mm512_mask_blend_ps(linear, y, _mm512_add_ps(x, _mm512_mul_ps(_mm512_set1_ps(0.12837916612625122f), x)));
		__m512 tiny = _mm512_mul_ps(_mm512_set1_ps(0.0625f), _mm512_add_ps(_mm512_mul_ps(_mm512_set1_ps(16.0f), x),
										      _mm512_mul_ps(_mm512_set1_ps(2.0540666580200195f), x)));
		y = _mm512_mask_blend_ps(vecmath_below16(abs_bits, 0x04000000), y, tiny);
	}
	return y;
}

/* vecmath_erff8_middle's */
__attribute__((target("avx512f"))) static __m512 vecmath_erff16_middle(__m512 x, __m512i abs_bits)
{
	__m512 ax = _mm512_castsi512_ps(abs_bits);
	__m512i sign = _mm512_andnot_si512(abs_bits, _mm512_castps_si512(x));
	__m512 s = _mm512_sub_ps(ax, _mm512_set1_ps(1.0f));
	__m512 q = _mm512_div_ps(vecmath_horner16(s, vecmath_pa, VECMATH_COUNT(vecmath_pa)),
				 vecmath_horner16(s, vecmath_qa, VECMATH_COUNT(vecmath_qa)));
	return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(_mm512_add_ps(_mm512_set1_ps(0.8450629115104675f), q)), sign));
}

/* vecmath_erff8_outer's, its two expf by vecmath_expf8d on each half (the table in T) */
__attribute__((target("avx512f,fma"))) static __m512 vecmath_expf16_main(__m512 x, const __m512i *t)
{
	__m256 lo = vecmath_expf8d(_mm512_cvtps_pd(_mm512_castps512_ps256(x)), t[0], t[1], t[2], t[3]);
	__m256 hi = vecmath_expf8d(_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1))), t[0], t[1],
				   t[2], t[3]);
	return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(lo)), _mm256_castps_pd(hi), 1));
}

__attribute__((target("avx512f,fma"))) static __m512 vecmath_erff16_outer(__m512 x, __m512i abs_bits, const __m512i *t)
{
	const __m512 one = _mm512_set1_ps(1.0f);
	const __m512 ax = _mm512_castsi512_ps(abs_bits);
	const __m512i sign = _mm512_andnot_si512(abs_bits, _mm512_castps_si512(x));
	__mmask16 below6 = vecmath_below16(abs_bits, 0x40c00000);
	__m512 y = _mm512_setzero_ps();
	if (below6) {
		__m512 s = _mm512_div_ps(one, _mm512_mul_ps(ax, ax));
		__mmask16 near = vecmath_below16(abs_bits, 0x4036db6e), far = below6 & ~near;
		__m512 r_over_s = _mm512_setzero_ps();
		if (near & below6)
			r_over_s = _mm512_div_ps(vecmath_horner16(s, vecmath_ra, VECMATH_COUNT(vecmath_ra)),
						 vecmath_horner16(s, vecmath_sa, VECMATH_COUNT(vecmath_sa)));
		if (far)
			r_over_s = _mm512_mask_blend_ps(far, r_over_s,
							_mm512_div_ps(vecmath_horner16(s, vecmath_rb, VECMATH_COUNT(vecmath_rb)),
								      vecmath_horner16(s, vecmath_sb, VECMATH_COUNT(vecmath_sb))));
		__m512 z = _mm512_castsi512_ps(_mm512_and_si512(abs_bits, _mm512_set1_epi32((int)0xfffff000)));
		__m512 minus_z = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(z), _mm512_set1_epi32((int)0x80000000)));
		__m512 a = _mm512_sub_ps(_mm512_mul_ps(minus_z, z), _mm512_set1_ps(0.5625f));
		__m512 b = _mm512_add_ps(_mm512_mul_ps(_mm512_sub_ps(z, ax), _mm512_add_ps(z, ax)), r_over_s);
		a = _mm512_maskz_mov_ps(below6, a); /* lanes from 6 up: 0, glibc's main path */
		b = _mm512_maskz_mov_ps(below6, b);
		__m512 r_over_x = _mm512_div_ps(_mm512_mul_ps(vecmath_expf16_main(a, t), vecmath_expf16_main(b, t)), ax);
		__mmask16 negative = _mm512_cmplt_epi32_mask(_mm512_castps_si512(x), _mm512_setzero_si512());
		y = _mm512_mask_blend_ps(negative, _mm512_sub_ps(one, r_over_x), _mm512_sub_ps(r_over_x, one));
	}
	if (below6 != 0xffff) { /* some lane from 6 up */
		__m512 unit = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(one), sign));
		__mmask16 nonfinite = _mm512_cmpgt_epi32_mask(abs_bits, _mm512_set1_epi32(0x7f7fffff));
		unit = _mm512_mask_blend_ps(nonfinite, unit, _mm512_add_ps(unit, _mm512_div_ps(one, x)));
		y = _mm512_mask_blend_ps(below6, unit, y);
	}
	return y;
}

/* vecmath_pending's 16 lanes wide */
struct vecmath_pending16 {
	float x[VECMATH_RUN + 16];
	int32_t at[VECMATH_RUN + 16];
	int n;
};

/* The lanes of XV set in MASK appended to P (AT0: XV's place in the run). */
__attribute__((target("avx512f"), always_inline)) static inline void vecmath_pend16(struct vecmath_pending16 *p, __m512 xv,
										     __mmask16 mask, int at0)
{
	__m512i at = _mm512_add_epi32(_mm512_set1_epi32(at0),
				      _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
	_mm512_storeu_ps(p->x + p->n, _mm512_maskz_compress_ps(mask, xv));
	_mm512_storeu_si512(p->at + p->n, _mm512_maskz_compress_epi32(mask, at));
	p->n += __builtin_popcount(mask);
}

/* P's lanes through MIDDLE (or, without it, the outer range) 16 at a time, each result to its place in Y
 * (the places are distinct). */
__attribute__((target("avx512f,fma"))) static void vecmath_flush16(struct vecmath_pending16 *p, float *y, bool middle,
								    const __m512i *t)
{
	for (int i = p->n; i < p->n + 16 && p->n > 0; i++)
		p->x[i] = p->x[0];
	for (int i = 0; i < p->n; i += 16) {
		__m512 x = _mm512_loadu_ps(p->x + i);
		__m512i abs_bits = vecmath_abs_bits16(x);
		__m512 out = middle ? vecmath_erff16_middle(x, abs_bits) : vecmath_erff16_outer(x, abs_bits, t);
		__mmask16 lanes = p->n - i >= 16 ? 0xffff : (__mmask16)((1u << (p->n - i)) - 1);
		/* scattered by one instruction (lane by lane, a third of this function's time) */
		_mm512_mask_i32scatter_ps(y, lanes, _mm512_loadu_si512(p->at + i), out, 4);
	}
	p->n = 0;
}

/* vecmath_erff_n 16 at a time: every vector through the small range's code, the others' lanes
 * compressed by range and computed 16 at a time; the last COUNT % 16 values by vecmath_erff_n. */
__attribute__((target("avx512f,avx2,fma"))) void vecmath_erff_n16(const float *x, float *y, size_t count)
{
	const __m512i t[4] = {_mm512_loadu_si512(vecmath_exp2_table), _mm512_loadu_si512(vecmath_exp2_table + 8),
			      _mm512_loadu_si512(vecmath_exp2_table + 16), _mm512_loadu_si512(vecmath_exp2_table + 24)};
	struct vecmath_pending16 middle, outer;
	middle.n = outer.n = 0;
	size_t whole = count / 16 * 16;
	for (size_t run = 0; run < whole; run += VECMATH_RUN) {
		size_t len = whole - run < VECMATH_RUN ? whole - run : VECMATH_RUN;
		for (size_t i = 0; i < len; i += 16) {
			__m512 xv = _mm512_loadu_ps(x + run + i);
			__m512i abs_bits = vecmath_abs_bits16(xv);
			__mmask16 small = vecmath_below16(abs_bits, VECMATH_ERFF_MIDDLE);
			__mmask16 below = vecmath_below16(abs_bits, VECMATH_ERFF_OUTER);
			vecmath_pend16(&middle, xv, below & ~small, (int)i);
			vecmath_pend16(&outer, xv, (__mmask16)~below, (int)i);
			if (small) /* every lane written; the others' overwritten by the flushes (Y may be X) */
				_mm512_storeu_ps(y + run + i, vecmath_erff16_small(xv, abs_bits));
		}
		vecmath_flush16(&middle, y + run, true, t);
		vecmath_flush16(&outer, y + run, false, t);
	}
	if (whole < count)
		vecmath_erff_n(x + whole, y + whole, count - whole);
}
#pragma GCC pop_options

#endif
