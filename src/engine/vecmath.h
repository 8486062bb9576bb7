/* vecmath.h -- glibc 2.36's scalar expf, erff and tanhf, 8 floats at a time on AVX2, bit for bit.
 *
 * The activations and the softmax on a CPU with AVX2 and FMA but no AVX-512 run these: the GELU of
 * a 128-token bert-base forward was 16 % of it in scalar erff, gpt2's tanh GELU a quarter. They give
 * the scalar functions' bits, not only their accuracy: check_analysis's q.k dots sit within a few
 * ulp-sized nudges of their 1e-5 tolerance, and every vector erff/tanhf tried before (libmvec's,
 * within 4 ulp) moved them past it. So each function repeats glibc 2.36's algorithm operation for
 * operation, every branch computed and the lanes' results chosen by mask:
 *   expf  -- sysdeps/ieee754/flt-32/e_expf.c as built for its FMA variant __expf_fma, the one glibc's
 *            ifunc picks on such a CPU: a 32-entry table of 2^(i/32), a cubic in double, fused;
 *   erff  -- sysdeps/ieee754/flt-32/s_erff.c (fdlibm's float erf): rational fits in float on four
 *            ranges of |x|, the outer ones through two expf;
 *   tanhf -- sysdeps/ieee754/flt-32/s_tanhf.c through s_expm1f.c (fdlibm's), in float.
 * tests/check_vecmath.c compares them with libm's over the float range (every float with
 * ATTNSCOPE_VECMATH_ALL=1). A glibc with other algorithms (2.41's correctly rounded erff and tanhf)
 * leaves these as accurate as before but no longer the scalar path's bits; the test then says so.
 *
 * The caller checks the CPU (__builtin_cpu_supports "avx2" and "fma"). expf is built for "avx2,fma",
 * its fusions written out as glibc's compiler made them; the float functions for "avx2" alone, so
 * that the compiler cannot fuse a product and a sum that glibc rounds apart. */
#ifndef ENGINE_VECMATH_H
#define ENGINE_VECMATH_H

#if defined(__x86_64__)
#include <immintrin.h>

#define VECMATH_AVX2 1
__attribute__((target("avx2,fma"))) __m256 vecmath_expf8(__m256 x);
__attribute__((target("avx2"))) __m256 vecmath_erff8(__m256 x);
#include <stddef.h>
/* X[j] = expf(X[j] - SHIFT) for the COUNT values from X (the softmax's exponentials). */
__attribute__((target("avx2,fma"))) void vecmath_expf_shifted_n(float *x, size_t count, float shift);
/* The same, 16 at a time on AVX-512 (the caller checks "avx512f"): the same bits. */
__attribute__((target("avx512f,avx2,fma"))) void vecmath_expf_shifted_n16(float *x, size_t count, float shift);
__attribute__((target("avx2"))) void vecmath_erff_n(const float *x, float *y, size_t count);
/* The same, 16 at a time on AVX-512 (the caller checks "avx512f"): the same bits. */
__attribute__((target("avx512f,avx2,fma"))) void vecmath_erff_n16(const float *x, float *y, size_t count);
__attribute__((target("avx2"))) __m256 vecmath_tanhf8(__m256 x);
/* tanhf of two vectors at once, in place: their chains side by side (one alone waits on its own
 * products and divisions). */
__attribute__((target("avx2"))) void vecmath_tanhf8_pair(__m256 *x0, __m256 *x1);
/* The same as one vector of 16 lanes on AVX-512 (the caller checks "avx512f"): the same bits. */
__attribute__((target("avx512f,avx2"))) void vecmath_tanhf8_pair16(__m256 *x0, __m256 *x1);
/* Two such pairs at once, their chains side by side: the same bits. */
__attribute__((target("avx512f,avx2"))) void vecmath_tanhf8_quad16(__m256 *x0, __m256 *x1, __m256 *x2, __m256 *x3);
#endif

#endif
