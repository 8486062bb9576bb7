/* vecmath-tanhf.c -- glibc 2.36's tanhf, 8 floats at a time on AVX2, bit for bit (see vecmath.h).
 *
 * glibc's s_tanhf.c is fdlibm's: by |x|, below 2^-55 x·(1 + x); below 1 −t/(t + 2) with
 * t = expm1f(−2|x|); below 22 1 − 2/(t + 2) with t = expm1f(2|x|); above ±1; the sign put back.
 * Its expm1f (s_expm1f.c, fdlibm's) reduces x to r = x − k·ln2 in two parts, hi − lo, approximates
 * expm1 on r by a rational in r²/2, and rebuilds 2^k·(1 + expm1(r)) − 1 in one of five ways by k,
 * the larger ones by adding k to the exponent bits. Every step is one float SSE operation in
 * libm.so (read from its disassembly); here each is the same operation on 8 lanes, no FMA. */
#include "config.h"

#include "engine/vecmath.h"

#ifdef VECMATH_AVX2
#include <stdint.h>

__attribute__((target("avx2"))) static inline __m256i vecmath_tanhf_below(__m256i abs_bits, uint32_t bound) /* |x| < the float with these bits */
{
	return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)bound), abs_bits);
}

__attribute__((target("avx2"))) static inline __m256 vecmath_tanhf_ps(__m256i mask)
{
	return _mm256_castsi256_ps(mask);
}

/* expm1f of the arguments tanhf gives it: 0 (lanes tanhf does not need), −2 < x <= −2^-54 and
 * 2 <= x < 44. So not its overflow, NaN and x < −27·ln2 paths, nor k = 1 (0.5·ln2 < x <= 1.5·ln2). */
__attribute__((target("avx2"), always_inline)) static inline __m256 vecmath_tanhf_expm1f8(__m256 x)
{
	const __m256 one = _mm256_set1_ps(1.0f), half = _mm256_set1_ps(0.5f);
	const __m256i abs_bits = _mm256_and_si256(_mm256_castps_si256(x), _mm256_set1_epi32(0x7fffffff));
	const __m256i negative = _mm256_srai_epi32(_mm256_castps_si256(x), 31);

	/* k: x/ln2 ± 0.5 truncated; ±1 for |x| <= 1.5·ln2 (0x3f851591); 0 for |x| <= 0.5·ln2 (0x3eb17218) */
	__m256 signed_half = _mm256_blendv_ps(half, _mm256_set1_ps(-0.5f), vecmath_tanhf_ps(negative));
	__m256i k = _mm256_cvttps_epi32(_mm256_add_ps(signed_half, _mm256_mul_ps(_mm256_set1_ps(0x1.715476p+0f), x)));
	k = _mm256_blendv_epi8(k, _mm256_or_si256(negative, _mm256_set1_epi32(1)), vecmath_tanhf_below(abs_bits, 0x3f851592));
	k = _mm256_andnot_si256(vecmath_tanhf_below(abs_bits, 0x3eb17219), k);

	/* r = hi − lo with hi = x − k·ln2_hi, lo = k·ln2_lo; c what r lost. k = 0 and ±1 give glibc's
	 * hi = x, lo = 0 and hi = x ∓ ln2_hi, lo = ±ln2_lo exactly (the products are exact). */
	__m256 t = _mm256_cvtepi32_ps(k);
	__m256 hi = _mm256_sub_ps(x, _mm256_mul_ps(t, _mm256_set1_ps(0x1.62e3p-1f)));
	__m256 lo = _mm256_mul_ps(t, _mm256_set1_ps(0x1.2fefa2p-17f));
	__m256 r = _mm256_sub_ps(hi, lo);
	__m256 c = _mm256_sub_ps(_mm256_sub_ps(hi, r), lo);

	/* hxs = r·r/2, r1 = 1 + hxs·(Q1 + hxs·(Q2 + ... Q5)), t = 3 − r1·r/2,
	 * e = hxs·((r1 − t)/(6 − r·t)) */
	__m256 hfx = _mm256_mul_ps(r, half);
	__m256 hxs = _mm256_mul_ps(r, hfx);
	__m256 r1 = _mm256_set1_ps(-0x1.afdb76p-23f);
	r1 = _mm256_add_ps(_mm256_set1_ps(0x1.0cfca8p-18f), _mm256_mul_ps(hxs, r1));
	r1 = _mm256_add_ps(_mm256_set1_ps(-0x1.4ce19ap-14f), _mm256_mul_ps(hxs, r1));
	r1 = _mm256_add_ps(_mm256_set1_ps(0x1.a01a02p-10f), _mm256_mul_ps(hxs, r1));
	r1 = _mm256_add_ps(_mm256_set1_ps(-0x1.111112p-5f), _mm256_mul_ps(hxs, r1));
	r1 = _mm256_add_ps(one, _mm256_mul_ps(hxs, r1));
	__m256 tt = _mm256_sub_ps(_mm256_set1_ps(3.0f), _mm256_mul_ps(r1, hfx));
	__m256 e = _mm256_mul_ps(hxs, _mm256_div_ps(_mm256_sub_ps(r1, tt),
						     _mm256_sub_ps(_mm256_set1_ps(6.0f), _mm256_mul_ps(r, tt))));

	/* k = 0: r − (r·e − hxs) */
	__m256 y = _mm256_sub_ps(r, _mm256_sub_ps(_mm256_mul_ps(r, e), hxs));
	/* k ≠ 0: e = (r·(e − c) − c) − hxs, then by k */
	e = _mm256_sub_ps(_mm256_sub_ps(_mm256_mul_ps(r, _mm256_sub_ps(e, c)), c), hxs);
	const __m256i exponent = _mm256_slli_epi32(k, 23);
	/* The four ways by k, every one computed and the lanes chosen by mask: no branch, so that
	 * vecmath_tanhf8_pair's two vectors run side by side in one stretch of code (a GELU's vectors
	 * need most of the ways anyway). */
	__m256i minus_one = _mm256_cmpeq_epi32(k, _mm256_set1_epi32(-1)); /* 0.5·(r − e) − 0.5 */
	__m256 m = _mm256_sub_ps(_mm256_mul_ps(_mm256_sub_ps(r, e), half), half);
	y = _mm256_blendv_ps(y, m, vecmath_tanhf_ps(minus_one));
	__m256i far = _mm256_or_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(-1), k),
				      _mm256_cmpgt_epi32(k, _mm256_set1_epi32(56)));
	__m256 f = _mm256_sub_ps(one, _mm256_sub_ps(e, r)); /* k <= −2 or k > 56: (1 − (e − r))·2^k − 1 */
	f = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(f), exponent));
	y = _mm256_blendv_ps(y, _mm256_sub_ps(f, one), vecmath_tanhf_ps(far));
	__m256i low = _mm256_and_si256(_mm256_cmpgt_epi32(k, _mm256_set1_epi32(1)),
				       _mm256_cmpgt_epi32(_mm256_set1_epi32(23), k));
	__m256i one_less = _mm256_sub_epi32(_mm256_set1_epi32(0x3f800000), /* 2 <= k <= 22: ((1 − 2^-k) − (e − r))·2^k */
					    _mm256_srlv_epi32(_mm256_set1_epi32(0x1000000), k));
	__m256 l = _mm256_sub_ps(_mm256_castsi256_ps(one_less), _mm256_sub_ps(e, r));
	l = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(l), exponent));
	y = _mm256_blendv_ps(y, l, vecmath_tanhf_ps(low));
	__m256i high = _mm256_and_si256(_mm256_cmpgt_epi32(k, _mm256_set1_epi32(22)),
					_mm256_cmpgt_epi32(_mm256_set1_epi32(57), k));
	/* 23 <= k <= 56: ((r − (e + 2^-k)) + 1)·2^k */
	__m256i two_to_minus_k = _mm256_slli_epi32(_mm256_sub_epi32(_mm256_set1_epi32(0x7f), k), 23);
	__m256 h = _mm256_sub_ps(r, _mm256_add_ps(e, _mm256_castsi256_ps(two_to_minus_k)));
	h = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(_mm256_add_ps(h, one)), exponent));
	y = _mm256_blendv_ps(y, h, vecmath_tanhf_ps(high));
	/* |x| < 2^-25: x itself */
	return _mm256_blendv_ps(y, x, vecmath_tanhf_ps(vecmath_tanhf_below(abs_bits, 0x33000000)));
}

/* tanhf on lanes with 2^-55 <= |x| < 22 (ABS_BITS |x|'s bits): below 1 −t/(t + 2), t = expm1f(−2|x|);
 * above 1 − 2/(t + 2), t = expm1f(2|x|); ± by x's sign. Lanes outside the range (MIDDLE false): any value. */
__attribute__((target("avx2"), always_inline)) static inline __m256 vecmath_tanhf8_middle(__m256 x, __m256i abs_bits,
											   __m256i middle)
{
	const __m256 one = _mm256_set1_ps(1.0f), two = _mm256_set1_ps(2.0f);
	const __m256 ax = _mm256_castsi256_ps(abs_bits);
	const __m256 sign = _mm256_castsi256_ps(_mm256_andnot_si256(abs_bits, _mm256_castps_si256(x)));
	__m256 above_one = vecmath_tanhf_ps(_mm256_cmpgt_epi32(abs_bits, _mm256_set1_epi32(0x3f7fffff)));
	__m256 arg = _mm256_blendv_ps(_mm256_mul_ps(ax, _mm256_set1_ps(-2.0f)), _mm256_add_ps(ax, ax), above_one);
	__m256 t = vecmath_tanhf_expm1f8(_mm256_and_ps(arg, vecmath_tanhf_ps(middle))); /* others: expm1f(0) */
	/* one division for both: −t or 2 over t + 2 (each lane divides what glibc's does) */
	__m256 q = _mm256_div_ps(_mm256_blendv_ps(_mm256_xor_ps(t, _mm256_set1_ps(-0.0f)), two, above_one),
				 _mm256_add_ps(t, two));
	return _mm256_xor_ps(_mm256_blendv_ps(q, _mm256_sub_ps(one, q), above_one), sign);
}

/* tanhf's ranges of |x|, each computed only when a lane falls in it, the lanes then chosen by mask. */
__attribute__((target("avx2"))) __m256 vecmath_tanhf8(__m256 x)
{
	const __m256 one = _mm256_set1_ps(1.0f);
	const __m256i abs_bits = _mm256_and_si256(_mm256_castps_si256(x), _mm256_set1_epi32(0x7fffffff));
	const __m256 sign = _mm256_castsi256_ps(_mm256_andnot_si256(abs_bits, _mm256_castps_si256(x)));
	__m256 y;

	/* |x| < 2^-55, ±0 too: x·(1 + x), sign included */
	__m256i tiny = vecmath_tanhf_below(abs_bits, 0x24000000);
	if (!_mm256_testz_si256(tiny, tiny))
		y = _mm256_mul_ps(_mm256_add_ps(one, x), x);
	else
		y = _mm256_setzero_ps();

	__m256i middle = _mm256_andnot_si256(tiny, vecmath_tanhf_below(abs_bits, 0x41b00000));
	if (!_mm256_testz_si256(middle, middle))
		y = _mm256_blendv_ps(y, vecmath_tanhf8_middle(x, abs_bits, middle), vecmath_tanhf_ps(middle));

	/* |x| >= 22: ±(1 − 1e-30), 1 in float; inf and NaN: 1/x ± 1 */
	__m256i big = _mm256_cmpgt_epi32(abs_bits, _mm256_set1_epi32(0x41afffff));
	if (!_mm256_testz_si256(big, big)) {
		__m256 unit = _mm256_or_ps(one, sign);
		__m256i nonfinite = _mm256_cmpgt_epi32(abs_bits, _mm256_set1_epi32(0x7f7fffff));
		unit = _mm256_blendv_ps(unit, _mm256_add_ps(_mm256_div_ps(one, x), unit), vecmath_tanhf_ps(nonfinite));
		y = _mm256_blendv_ps(y, unit, vecmath_tanhf_ps(big));
	}
	return y;
}

__attribute__((target("avx2"))) void vecmath_tanhf8_pair(__m256 *x0, __m256 *x1)
{
	const __m256i abs0 = _mm256_and_si256(_mm256_castps_si256(*x0), _mm256_set1_epi32(0x7fffffff));
	const __m256i abs1 = _mm256_and_si256(_mm256_castps_si256(*x1), _mm256_set1_epi32(0x7fffffff));
	/* every lane of both in the middle range (2^-55 <= |x| < 22): the usual case, both vectors' chains
	 * side by side with no branch between them */
	__m256i out0 = _mm256_or_si256(vecmath_tanhf_below(abs0, 0x24000000),
				       _mm256_cmpgt_epi32(abs0, _mm256_set1_epi32(0x41afffff)));
	__m256i out1 = _mm256_or_si256(vecmath_tanhf_below(abs1, 0x24000000),
				       _mm256_cmpgt_epi32(abs1, _mm256_set1_epi32(0x41afffff)));
	__m256i out = _mm256_or_si256(out0, out1);
	if (!_mm256_testz_si256(out, out)) {
		*x0 = vecmath_tanhf8(*x0);
		*x1 = vecmath_tanhf8(*x1);
		return;
	}
	const __m256i all = _mm256_set1_epi32(-1);
	*x0 = vecmath_tanhf8_middle(*x0, abs0, all);
	*x1 = vecmath_tanhf8_middle(*x1, abs1, all);
}
#endif

#ifdef VECMATH_AVX2
/* The same operations on 16 lanes (AVX-512), for vecmath_tanhf8_pair16. The 8-lane code is built for
 * "avx2" alone, which has no FMA to fuse its products and sums into; "avx512f" has, so no contraction
 * here (each operation rounded on its own, as glibc's). */
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")

__attribute__((target("avx512f"), always_inline)) static inline __m512 vecmath_tanhf_expm1f16(__m512 x)
{
	const __m512 one = _mm512_set1_ps(1.0f), half = _mm512_set1_ps(0.5f);
	const __m512i abs_bits = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff));
	const __mmask16 negative = _mm512_cmplt_epi32_mask(_mm512_castps_si512(x), _mm512_setzero_si512());
	__m512 signed_half = _mm512_mask_blend_ps(negative, half, _mm512_set1_ps(-0.5f));
	__m512i k = _mm512_cvttps_epi32(_mm512_add_ps(signed_half, _mm512_mul_ps(_mm512_set1_ps(0x1.715476p+0f), x)));
	__m512i unit_k = _mm512_or_si512(_mm512_srai_epi32(_mm512_castps_si512(x), 31), _mm512_set1_epi32(1));
	k = _mm512_mask_blend_epi32(_mm512_cmplt_epi32_mask(abs_bits, _mm512_set1_epi32(0x3f851592)), k, unit_k);
	k = _mm512_maskz_mov_epi32(_mm512_cmpge_epi32_mask(abs_bits, _mm512_set1_epi32(0x3eb17219)), k);

	__m512 t = _mm512_cvtepi32_ps(k);
	__m512 hi = _mm512_sub_ps(x, _mm512_mul_ps(t, _mm512_set1_ps(0x1.62e3p-1f)));
	__m512 lo = _mm512_mul_ps(t, _mm512_set1_ps(0x1.2fefa2p-17f));
	__m512 r = _mm512_sub_ps(hi, lo);
	__m512 c = _mm512_sub_ps(_mm512_sub_ps(hi, r), lo);

	__m512 hfx = _mm512_mul_ps(r, half);
	__m512 hxs = _mm512_mul_ps(r, hfx);
	__m512 r1 = _mm512_set1_ps(-0x1.afdb76p-23f);
	r1 = _mm512_add_ps(_mm512_set1_ps(0x1.0cfca8p-18f), _mm512_mul_ps(hxs, r1));
	r1 = _mm512_add_ps(_mm512_set1_ps(-0x1.4ce19ap-14f), _mm512_mul_ps(hxs, r1));
	r1 = _mm512_add_ps(_mm512_set1_ps(0x1.a01a02p-10f), _mm512_mul_ps(hxs, r1));
	r1 = _mm512_add_ps(_mm512_set1_ps(-0x1.111112p-5f), _mm512_mul_ps(hxs, r1));
	r1 = _mm512_add_ps(one, _mm512_mul_ps(hxs, r1));
	__m512 tt = _mm512_sub_ps(_mm512_set1_ps(3.0f), _mm512_mul_ps(r1, hfx));
	__m512 e = _mm512_mul_ps(hxs, _mm512_div_ps(_mm512_sub_ps(r1, tt),
						     _mm512_sub_ps(_mm512_set1_ps(6.0f), _mm512_mul_ps(r, tt))));

	__m512 y = _mm512_sub_ps(r, _mm512_sub_ps(_mm512_mul_ps(r, e), hxs));
	e = _mm512_sub_ps(_mm512_sub_ps(_mm512_mul_ps(r, _mm512_sub_ps(e, c)), c), hxs);
	const __m512i exponent = _mm512_slli_epi32(k, 23);
	__m512 m = _mm512_sub_ps(_mm512_mul_ps(_mm512_sub_ps(r, e), half), half);
	y = _mm512_mask_blend_ps(_mm512_cmpeq_epi32_mask(k, _mm512_set1_epi32(-1)), y, m);
	__mmask16 far = _mm512_cmplt_epi32_mask(k, _mm512_set1_epi32(-1)) | _mm512_cmpgt_epi32_mask(k, _mm512_set1_epi32(56));
	__m512 f = _mm512_sub_ps(one, _mm512_sub_ps(e, r));
	f = _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(f), exponent));
	y = _mm512_mask_blend_ps(far, y, _mm512_sub_ps(f, one));
	__mmask16 low = _mm512_cmpgt_epi32_mask(k, _mm512_set1_epi32(1)) & _mm512_cmplt_epi32_mask(k, _mm512_set1_epi32(23));
	__m512i one_less = _mm512_sub_epi32(_mm512_set1_epi32(0x3f800000), _mm512_srlv_epi32(_mm512_set1_epi32(0x1000000), k));
	__m512 l = _mm512_sub_ps(_mm512_castsi512_ps(one_less), _mm512_sub_ps(e, r));
	l = _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(l), exponent));
	y = _mm512_mask_blend_ps(low, y, l);
	__mmask16 high = _mm512_cmpgt_epi32_mask(k, _mm512_set1_epi32(22)) & _mm512_cmplt_epi32_mask(k, _mm512_set1_epi32(57));
	__m512i two_to_minus_k = _mm512_slli_epi32(_mm512_sub_epi32(_mm512_set1_epi32(0x7f), k), 23);
	__m512 h = _mm512_sub_ps(r, _mm512_add_ps(e, _mm512_castsi512_ps(two_to_minus_k)));
	h = _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(_mm512_add_ps(h, one)), exponent));
	y = _mm512_mask_blend_ps(high, y, h);
	return _mm512_mask_blend_ps(_mm512_cmplt_epi32_mask(abs_bits, _mm512_set1_epi32(0x33000000)), y, x);
}

/* vecmath_tanhf8_middle on 16 lanes, every one in the middle range */
__attribute__((target("avx512f"), always_inline)) static inline __m512 vecmath_tanhf16_middle(__m512 x, __m512i abs_bits)
{
	const __m512 one = _mm512_set1_ps(1.0f), two = _mm512_set1_ps(2.0f);
	const __m512 ax = _mm512_castsi512_ps(abs_bits);
	const __m512i sign = _mm512_andnot_si512(abs_bits, _mm512_castps_si512(x));
	__mmask16 above_one = _mm512_cmpgt_epi32_mask(abs_bits, _mm512_set1_epi32(0x3f7fffff));
	__m512 arg = _mm512_mask_blend_ps(above_one, _mm512_mul_ps(ax, _mm512_set1_ps(-2.0f)), _mm512_add_ps(ax, ax));
	__m512 t = vecmath_tanhf_expm1f16(arg);
	__m512 minus_t = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(t), _mm512_set1_epi32((int)0x80000000)));
	__m512 q = _mm512_div_ps(_mm512_mask_blend_ps(above_one, minus_t, two), _mm512_add_ps(t, two));
	__m512 y = _mm512_mask_blend_ps(above_one, q, _mm512_sub_ps(one, q));
	return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(y), sign));
}

/* Two 8-lane vectors as one of 16 lanes (X0 the low half), and back. */
__attribute__((target("avx512f"), always_inline)) static inline __m512 vecmath_join16(__m256 x0, __m256 x1)
{
	return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(x0)), _mm256_castps_pd(x1), 1));
}

__attribute__((target("avx512f"), always_inline)) static inline void vecmath_split16(__m512 y, __m256 *x0, __m256 *x1)
{
	*x0 = _mm512_castps512_ps256(y);
	*x1 = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(y), 1));
}

/* The lanes whose |x| (ABS_BITS) lies outside vecmath_tanhf16_middle's range. */
__attribute__((target("avx512f"), always_inline)) static inline __mmask16 vecmath_tanhf16_outside(__m512i abs_bits)
{
	return _mm512_cmplt_epi32_mask(abs_bits, _mm512_set1_epi32(0x24000000)) |
	       _mm512_cmpgt_epi32_mask(abs_bits, _mm512_set1_epi32(0x41afffff));
}

__attribute__((target("avx512f,avx2"))) void vecmath_tanhf8_pair16(__m256 *x0, __m256 *x1)
{
	__m512 x = vecmath_join16(*x0, *x1);
	const __m512i abs_bits = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff));
	if (vecmath_tanhf16_outside(abs_bits)) {
		vecmath_tanhf8_pair(x0, x1); /* a lane outside the middle range: the 8-lane code's branches */
		return;
	}
	vecmath_split16(vecmath_tanhf16_middle(x, abs_bits), x0, x1);
}

/* vecmath_tanhf8_pair16 on two pairs at once: the two 16-lane chains side by side (one alone waits on
 * its own divisions): the activation stage of a gpt2-sized forward 20.3-21.3 -> 15.1-15.4 ms at 512
 * tokens, 4.6-4.7 -> 3.8-4.0 at 128, interleaved. */
__attribute__((target("avx512f,avx2"))) void vecmath_tanhf8_quad16(__m256 *x0, __m256 *x1, __m256 *x2, __m256 *x3)
{
	__m512 a = vecmath_join16(*x0, *x1), b = vecmath_join16(*x2, *x3);
	const __m512i abs_a = _mm512_and_si512(_mm512_castps_si512(a), _mm512_set1_epi32(0x7fffffff));
	const __m512i abs_b = _mm512_and_si512(_mm512_castps_si512(b), _mm512_set1_epi32(0x7fffffff));
	if (vecmath_tanhf16_outside(abs_a) | vecmath_tanhf16_outside(abs_b)) {
		vecmath_tanhf8_pair16(x0, x1); /* a lane outside the middle range: pair by pair */
		vecmath_tanhf8_pair16(x2, x3);
		return;
	}
	__m512 ya = vecmath_tanhf16_middle(a, abs_a), yb = vecmath_tanhf16_middle(b, abs_b);
	vecmath_split16(ya, x0, x1);
	vecmath_split16(yb, x2, x3);
}
#pragma GCC pop_options
#endif
