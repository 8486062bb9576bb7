/* ops.c -- element-wise and row-wise operations of a transformer block (see ops.h). */
#include "config.h"

#include "engine/ops.h"

#include "engine/gemm.h"

#include <math.h>
#include <string.h>

#include "engine/vecmath.h"

#ifdef VECMATH_AVX2
#include <immintrin.h>
#include <stdlib.h>
#define OPS_VECTOR 1
/* AVX2 and FMA: the exponentials (softmax, SiLU), both GELUs and tanh soft-capping 8 at a time
 * through vecmath*.c, glibc's expf, erff and tanhf bit for bit, so that every number is the scalar
 * path's (the softmax's sum in the scalar order too).
 * AVX-512 with oneDNN's products: glibc's libmvec, expf/erff/tanhf 16 lanes at a time within 4 ulp
 * of the scalar functions, 7 times faster; measured with those products together. */
#ifdef HAVE_LIBMVEC
__attribute__((target("avx512f"))) __m512 _ZGVeN16v_expf(__m512 x);
__attribute__((target("avx512f"))) __m512 _ZGVeN16v_erff(__m512 x);
__attribute__((target("avx512f"))) __m512 _ZGVeN16v_tanhf(__m512 x);
#endif

enum ops_path { OPS_SCALAR, OPS_AVX2, OPS_AVX512 };
static _Atomic int ops_chosen = -1; /* enum ops_path, -1 before the first call */
/* OPS_AVX2 on a CPU with AVX-512: the softmax's exponentials, the erf GELU's erff and the tanh GELU's
 * tanhf 16 at a time, the same bits. Interleaved: the softmax of a 512-token bert-base forward
 * 18.1-18.4 -> 14.6-15.5 ms (the table read from registers, not gathered); the activation of a
 * gpt2-sized one 6.5-6.8 -> 5.3-5.5 ms at 128 tokens, 28.6-28.8 -> 24.5-24.8 at 512; of a bert-base
 * one 4.6-4.7 -> 3.9-4.0 ms at 128, 18.8-19.1 -> 15.7-16.3 at 512. ATTNSCOPE_VECTOR_MATH=avx2 keeps
 * them 8 wide (the benchmark's AVX2 path). */
static bool ops_exact16;

void ops_vector_math_choose(void)
{
	const char *env = getenv("ATTNSCOPE_VECTOR_MATH");
	__builtin_cpu_init();
	ops_exact16 = __builtin_cpu_supports("avx512f") && !(env && strcmp(env, "avx2") == 0);
	if (env && strcmp(env, "off") == 0)
		ops_chosen = OPS_SCALAR;
#ifdef HAVE_LIBMVEC
	else if (__builtin_cpu_supports("avx512f") && gemm_avx512()) /* only with oneDNN's products (gemm_avx512) */
		ops_chosen = OPS_AVX512;
#endif
	else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		ops_chosen = OPS_AVX2;
	else
		ops_chosen = OPS_SCALAR;
}

static enum ops_path ops_path(void)
{
	if (ops_chosen < 0)
		ops_vector_math_choose();
	return (enum ops_path)ops_chosen;
}

const char *ops_vector_math(void)
{
	static const char *const names[] = {"none (scalar libm)", "AVX2 (glibc's expf, erff, tanhf bit for bit)", "AVX-512 (libmvec)"};
	if (ops_path() == OPS_AVX2 && ops_exact16)
		return "AVX2 (glibc's expf, erff, tanhf bit for bit; the softmax's expf and the GELUs' erff and tanhf 16 at a "
		       "time on AVX-512, the same bits)";
	return names[ops_path()];
}
#else
void ops_vector_math_choose(void)
{
}

const char *ops_vector_math(void)
{
	return "none (scalar libm)";
}
#endif

/* The mean and variance of K (at most 4) rows of D values, in double (the exact moments torch's
 * float32 reductions approximate), each sum index by index from 0; four rows' additions side by
 * side, since one row's waited 3 cycles on each (a norm took 4 ns per value). */
static void ops_moments(const float *const row[], int k, int d, double mean[], double var[])
{
	for (int r = 0; r < k; r++)
		mean[r] = var[r] = 0;
	if (k == 4) {
		for (int j = 0; j < d; j++) {
			mean[0] += row[0][j];
			mean[1] += row[1][j];
			mean[2] += row[2][j];
			mean[3] += row[3][j];
		}
	} else {
		for (int r = 0; r < k; r++)
			for (int j = 0; j < d; j++)
				mean[r] += row[r][j];
	}
	for (int r = 0; r < k; r++)
		mean[r] /= d;
	if (k == 4) {
		for (int j = 0; j < d; j++) {
			var[0] += (row[0][j] - mean[0]) * (row[0][j] - mean[0]);
			var[1] += (row[1][j] - mean[1]) * (row[1][j] - mean[1]);
			var[2] += (row[2][j] - mean[2]) * (row[2][j] - mean[2]);
			var[3] += (row[3][j] - mean[3]) * (row[3][j] - mean[3]);
		}
	} else {
		for (int r = 0; r < k; r++)
			for (int j = 0; j < d; j++)
				var[r] += (row[r][j] - mean[r]) * (row[r][j] - mean[r]);
	}
	for (int r = 0; r < k; r++)
		var[r] /= d;
}

/* Y[j] = (float)((X[j] - MEAN) · INV) · G[j] + (B ? B[j] : 0) for J0 <= J < D. */
static void ops_layernorm_apply(const float *x, float *y, int j0, int d, const float *g, const float *b, double mean,
				double inv)
{
	for (int j = j0; j < d; j++)
		y[j] = (float)((x[j] - mean) * inv) * g[j] + (b ? b[j] : 0.0f);
}

#ifdef OPS_VECTOR
/* The same for J < D, 4 at a time: the same operations in the same precisions as the scalar loop
 * (no FMA in this target to fuse them). */
__attribute__((target("avx2"))) static void ops_layernorm_apply4(const float *x, float *y, int d, const float *g,
								    const float *b, double mean, double inv)
{
	__m256d m = _mm256_set1_pd(mean), s = _mm256_set1_pd(inv);
	int j = 0;
	for (; j + 4 <= d; j += 4) {
		__m128 v = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(x + j)), m), s));
		v = _mm_add_ps(_mm_mul_ps(v, _mm_loadu_ps(g + j)), b ? _mm_loadu_ps(b + j) : _mm_setzero_ps());
		_mm_storeu_ps(y + j, v);
	}
	ops_layernorm_apply(x, y, j, d, g, b, mean, inv);
}
#endif

void ops_layernorm(const float *x, float *y, int n, int d, const float *g, const float *b, double eps)
{
	for (int i0 = 0; i0 < n; i0 += 4) {
		int k = n - i0 < 4 ? n - i0 : 4;
		const float *row[4];
		double mean[4], var[4];
		for (int r = 0; r < k; r++)
			row[r] = x + (size_t)(i0 + r) * d;
		ops_moments(row, k, d, mean, var);
		for (int r = 0; r < k; r++) {
			const float *xi = row[r];
			float *yi = y + (size_t)(i0 + r) * d;
			double inv = 1.0 / sqrt(var[r] + eps);
#ifdef OPS_VECTOR
			if (ops_path() != OPS_SCALAR) {
				ops_layernorm_apply4(xi, yi, d, g, b, mean[r], inv);
				continue;
			}
#endif
			ops_layernorm_apply(xi, yi, 0, d, g, b, mean[r], inv);
		}
	}
}

void ops_rmsnorm(const float *x, float *y, int n, int d, int stride, const float *g, float offset, double eps)
{
	for (int i = 0; i < n; i++) {
		const float *xi = x + (size_t)i * stride;
		float *yi = y + (size_t)i * stride;
		/* float32 as torch's vectorised mean sums: 8 lanes side by side, then the lanes, then the tail.
		 * Matching its rounding matters: deep models amplify a one-ulp difference layer by layer. */
		float lane[8] = {0}, ms = 0;
		int j = 0;
		for (; j + 8 <= d; j += 8)
			for (int k = 0; k < 8; k++)
				lane[k] += xi[j + k] * xi[j + k];
		for (int k = 0; k < 8; k++)
			ms += lane[k];
		for (; j < d; j++)
			ms += xi[j] * xi[j];
		float inv = 1.0f / sqrtf(ms / (float)d + (float)eps);
		for (j = 0; j < d; j++)
			yi[j] = (xi[j] * inv) * (offset + g[j]);
	}
}

static inline float ops_act1(enum activation act, float v)
{
	switch (act) {
	case ACT_GELU_ERF:
		return 0.5f * v * (1.0f + erff(v * (float)M_SQRT1_2));
	case ACT_GELU_TANH: { /* torch's operation order: kappa * (x * x * x), then sqrt(2/pi) * (x + that) */
		float cube = v * v * v;
		return 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * cube)));
	}
	case ACT_RELU:
		return v > 0 ? v : 0;
	case ACT_SILU:
		return v / (1.0f + expf(-v));
	}
	return v;
}

#if defined(OPS_VECTOR) && defined(HAVE_LIBMVEC)
/* ACT of 16 values in ops_act1's order of operations, for the GELUs (the AVX-512 path as measured
 * with oneDNN's products; the other activations stay scalar there). */
__attribute__((target("avx512f"))) static inline __m512 ops_gelu16(enum activation act, __m512 v)
{
	const __m512 half = _mm512_set1_ps(0.5f), one = _mm512_set1_ps(1.0f);
	if (act == ACT_GELU_ERF) {
		__m512 e = _ZGVeN16v_erff(_mm512_mul_ps(v, _mm512_set1_ps((float)M_SQRT1_2)));
		return _mm512_mul_ps(_mm512_mul_ps(half, v), _mm512_add_ps(one, e));
	}
	__m512 cube = _mm512_mul_ps(_mm512_mul_ps(v, v), v);
	__m512 u = _mm512_add_ps(v, _mm512_mul_ps(_mm512_set1_ps(0.044715f), cube));
	__m512 th = _ZGVeN16v_tanhf(_mm512_mul_ps(_mm512_set1_ps(0.7978845608028654f), u));
	return _mm512_mul_ps(_mm512_mul_ps(half, v), _mm512_add_ps(one, th));
}

/* GELU ACT of the first COUNT - COUNT % 16 values of X in place, 16 at a time; returns how many were
 * done. */
__attribute__((target("avx512f"))) static size_t ops_gelu_run16(enum activation act, float *x, size_t count)
{
	size_t i = 0;
	for (; i + 16 <= count; i += 16)
		_mm512_storeu_ps(x + i, ops_gelu16(act, _mm512_loadu_ps(x + i)));
	return i;
}
#endif

#ifdef OPS_VECTOR
/* The activations AVX2 runs, 8 values in ops_act1's order of operations with vecmath.c's functions
 * (ReLU: max with 0, as v > 0 ? v : 0, NaN included). Only "avx2" as the target, not "fma": the
 * compiler may then not fuse a product and a sum the scalar code rounds apart. */
static bool ops_act8_runs(enum activation act)
{
	return act == ACT_SILU || act == ACT_RELU || act == ACT_GELU_TANH;
}

/* The tanh GELU, 0.5·v·(1 + tanh(√(2/π)·(v + 0.044715·v³))), in two halves around the tanh: its
 * argument, and the GELU from V and the tanh TH. */
__attribute__((target("avx2"))) static inline __m256 ops_gelu_tanh_arg(__m256 v)
{
	__m256 cube = _mm256_mul_ps(_mm256_mul_ps(v, v), v);
	__m256 u = _mm256_add_ps(v, _mm256_mul_ps(_mm256_set1_ps(0.044715f), cube));
	return _mm256_mul_ps(_mm256_set1_ps(0.7978845608028654f), u);
}

__attribute__((target("avx2"))) static inline __m256 ops_gelu_tanh_from(__m256 v, __m256 th)
{
	return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), v), _mm256_add_ps(_mm256_set1_ps(1.0f), th));
}

__attribute__((target("avx2"))) static inline __m256 ops_act8(enum activation act, __m256 v)
{
	const __m256 one = _mm256_set1_ps(1.0f);
	switch (act) {
	case ACT_RELU:
		return _mm256_max_ps(v, _mm256_setzero_ps());
	case ACT_SILU:
		return _mm256_div_ps(v, _mm256_add_ps(one, vecmath_expf8(_mm256_sub_ps(_mm256_setzero_ps(), v))));
	case ACT_GELU_TANH:
		return ops_gelu_tanh_from(v, vecmath_tanhf8(ops_gelu_tanh_arg(v)));
	default:
		return v; /* not reached: ops_act8_runs */
	}
}

/* The erf GELU of COUNT values of X into OUT (times UP when UP is not NULL): erff by vecmath_erff_n,
 * 256 at a time, the rest in ops_act1's order of operations, 8 at a time (in scalar code these two
 * loops took a quarter of the GELU's time). */
__attribute__((target("avx2"))) static void ops_gelu_erf_run(const float *x, const float *up, float *out,
								size_t count)
{
	float e[256];
	const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f), rsqrt2 = _mm256_set1_ps((float)M_SQRT1_2);
	for (size_t at = 0; at < count; at += 256) {
		size_t len = count - at < 256 ? count - at : 256, i = 0;
		for (; i + 8 <= len; i += 8)
			_mm256_storeu_ps(e + i, _mm256_mul_ps(_mm256_loadu_ps(x + at + i), rsqrt2));
		for (; i < len; i++)
			e[i] = x[at + i] * (float)M_SQRT1_2;
		if (ops_exact16)
			vecmath_erff_n16(e, e, len);
		else
			vecmath_erff_n(e, e, len);
		for (i = 0; i + 8 <= len; i += 8) { /* (0.5 · x) · (1 + erf), then · up: the scalar order */
			__m256 g = _mm256_mul_ps(_mm256_mul_ps(half, _mm256_loadu_ps(x + at + i)),
						 _mm256_add_ps(one, _mm256_loadu_ps(e + i)));
			_mm256_storeu_ps(out + at + i, up ? _mm256_mul_ps(g, _mm256_loadu_ps(up + at + i)) : g);
		}
		for (; i < len; i++) {
			float g = 0.5f * x[at + i] * (1.0f + e[i]);
			out[at + i] = up ? g * up[at + i] : g;
		}
	}
}

/* ACT of the COUNT values of X into OUT (times UP when UP is not NULL), 8 at a time, the last ones
 * too (through a buffer): a value's result does not depend on where a range of them starts (a run
 * reusing a text's first tokens computes the others in ranges shifted from a whole run's). */
__attribute__((target("avx2"))) static void ops_act_run8(enum activation act, const float *x, const float *up,
							 float *out, size_t count)
{
	size_t i = 0;
	for (; act == ACT_GELU_TANH && ops_exact16 && i + 32 <= count; i += 32) { /* four vectors a step on AVX-512 */
		__m256 v[4], u[4];
		for (int q = 0; q < 4; q++)
			v[q] = _mm256_loadu_ps(x + i + 8 * q), u[q] = ops_gelu_tanh_arg(v[q]);
		vecmath_tanhf8_quad16(&u[0], &u[1], &u[2], &u[3]);
		for (int q = 0; q < 4; q++) {
			__m256 y = ops_gelu_tanh_from(v[q], u[q]);
			_mm256_storeu_ps(out + i + 8 * q, up ? _mm256_mul_ps(y, _mm256_loadu_ps(up + i + 8 * q)) : y);
		}
	}
	for (; act == ACT_GELU_TANH && i + 16 <= count; i += 16) { /* two vectors a step: vecmath_tanhf8_pair */
		__m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
		__m256 u0 = ops_gelu_tanh_arg(v0), u1 = ops_gelu_tanh_arg(v1);
		if (ops_exact16)
			vecmath_tanhf8_pair16(&u0, &u1);
		else
			vecmath_tanhf8_pair(&u0, &u1);
		__m256 y0 = ops_gelu_tanh_from(v0, u0), y1 = ops_gelu_tanh_from(v1, u1);
		_mm256_storeu_ps(out + i, up ? _mm256_mul_ps(y0, _mm256_loadu_ps(up + i)) : y0);
		_mm256_storeu_ps(out + i + 8, up ? _mm256_mul_ps(y1, _mm256_loadu_ps(up + i + 8)) : y1);
	}
	for (; i + 8 <= count; i += 8) {
		__m256 y = ops_act8(act, _mm256_loadu_ps(x + i));
		_mm256_storeu_ps(out + i, up ? _mm256_mul_ps(y, _mm256_loadu_ps(up + i)) : y);
	}
	if (i < count) {
		float buf[8] = {0};
		memcpy(buf, x + i, (count - i) * sizeof *buf);
		_mm256_storeu_ps(buf, ops_act8(act, _mm256_loadu_ps(buf)));
		for (size_t k = 0; k < count - i; k++)
			out[i + k] = up ? buf[k] * up[i + k] : buf[k];
	}
}
#endif

/* OUT[i] = act(X[i]) (· UP[i] when UP is not NULL) for COUNT values; OUT may be X. */
static void ops_act_run(enum activation act, const float *x, const float *up, float *out, size_t count)
{
	size_t i = 0;
#ifdef OPS_VECTOR
	enum ops_path p = ops_path();
#ifdef HAVE_LIBMVEC
	if (p == OPS_AVX512 && !up && out == x && (act == ACT_GELU_ERF || act == ACT_GELU_TANH))
		i = ops_gelu_run16(act, out, count);
#endif
	if (p == OPS_AVX2 && ops_act8_runs(act)) {
		ops_act_run8(act, x, up, out, count);
		return;
	}
	if (p == OPS_AVX2 && act == ACT_GELU_ERF) {
		ops_gelu_erf_run(x, up, out, count);
		return;
	}
#endif
	for (; i < count; i++)
		out[i] = up ? ops_act1(act, x[i]) * up[i] : ops_act1(act, x[i]);
}

void ops_activation(enum activation act, float *x, size_t count)
{
	ops_act_run(act, x, NULL, x, count);
}

void ops_gated(enum activation act, const float *gate, const float *up, int n, int count, int stride, float *out)
{
	for (int i = 0; i < n; i++)
		ops_act_run(act, gate + (size_t)i * stride, up + (size_t)i * stride, out + (size_t)i * count, (size_t)count);
}

#ifdef OPS_VECTOR
/* tanh(S[i] / CAP) · CAP for the first COUNT - COUNT % 8 values; returns how many were done. */
__attribute__((target("avx2"))) static size_t ops_softcap_run8(float *s, size_t count, float cap)
{
	size_t i = 0;
	__m256 c = _mm256_set1_ps(cap);
	for (; i + 8 <= count; i += 8)
		_mm256_storeu_ps(s + i, _mm256_mul_ps(vecmath_tanhf8(_mm256_div_ps(_mm256_loadu_ps(s + i), c)), c));
	return i;
}
#endif

void ops_softcap(float *s, size_t count, float cap)
{
	size_t i = 0;
#ifdef OPS_VECTOR
	if (ops_path() == OPS_AVX2)
		i = ops_softcap_run8(s, count, cap);
#endif
	for (; i < count; i++)
		s[i] = tanhf(s[i] / cap) * cap;
}

#if defined(OPS_VECTOR) && defined(HAVE_LIBMVEC)
/* exp(X[j] - MX) in place for COUNT values, 16 lanes at a time. */
__attribute__((target("avx512f"))) static void ops_exp16(float *x, int count, float mx)
{
	__m512 m = _mm512_set1_ps(mx);
	int j = 0;
	for (; j + 16 <= count; j += 16)
		_mm512_storeu_ps(x + j, _ZGVeN16v_expf(_mm512_sub_ps(_mm512_loadu_ps(x + j), m)));
	for (; j < count; j++)
		x[j] = expf(x[j] - mx);
}

#endif

#ifdef OPS_VECTOR
/* The largest of X[0..COUNT-1] (COUNT >= 1), four vectors at a time. A NaN among them makes the
 * whole softmax NaN whatever the max, so only the numbers' max matters, and ±0 give the same
 * exponentials whichever of them is subtracted. */
__attribute__((target("avx2"))) static float ops_max8(const float *x, int count)
{
	float mx = x[0];
	int j = 0;
	if (count >= 32) {
		__m256 m0 = _mm256_loadu_ps(x), m1 = m0, m2 = m0, m3 = m0;
		for (; j + 32 <= count; j += 32) {
			m0 = _mm256_max_ps(m0, _mm256_loadu_ps(x + j));
			m1 = _mm256_max_ps(m1, _mm256_loadu_ps(x + j + 8));
			m2 = _mm256_max_ps(m2, _mm256_loadu_ps(x + j + 16));
			m3 = _mm256_max_ps(m3, _mm256_loadu_ps(x + j + 24));
		}
		__m256 m = _mm256_max_ps(_mm256_max_ps(m0, m1), _mm256_max_ps(m2, m3));
		__m128 four = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
		__m128 two = _mm_max_ps(four, _mm_movehl_ps(four, four));
		mx = _mm_cvtss_f32(_mm_max_ss(two, _mm_shuffle_ps(two, two, 1)));
	}
	for (; j < count; j++)
		mx = x[j] > mx ? x[j] : mx;
	return mx;
}

/* ROW[j] *= INV for the COUNT values from ROW. */
__attribute__((target("avx2"))) static void ops_scale8(float *row, int count, float inv)
{
	__m256 s = _mm256_set1_ps(inv);
	int j = 0;
	for (; j + 8 <= count; j += 8)
		_mm256_storeu_ps(row + j, _mm256_mul_ps(_mm256_loadu_ps(row + j), s));
	for (; j < count; j++)
		row[j] *= inv;
}
#endif

/* The largest of ROW[LO..HI] (HI >= LO). */
static float ops_row_max(const float *row, int lo, int hi)
{
#ifdef OPS_VECTOR
	if (ops_path() != OPS_SCALAR)
		return ops_max8(row + lo, hi - lo + 1);
#endif
	float mx = row[lo];
	for (int j = lo + 1; j <= hi; j++)
		mx = row[j] > mx ? row[j] : mx;
	return mx;
}

/* exp(ROW[j] - MX) in place for J = LO..HI. WIDE: the AVX-512 path may run (the plain softmax, as
 * measured with oneDNN's products; not the one with a sink). */
static void ops_exp_shifted(float *row, int lo, int hi, float mx, bool wide)
{
#if defined(OPS_VECTOR) && defined(HAVE_LIBMVEC)
	if (ops_path() == OPS_AVX512 && wide) {
		ops_exp16(row + lo, hi - lo + 1, mx);
		return;
	}
#else
	(void)wide;
#endif
#ifdef OPS_VECTOR
	if (ops_path() == OPS_AVX2 && ops_exact16) {
		vecmath_expf_shifted_n16(row + lo, (size_t)(hi - lo + 1), mx);
		return;
	}
	if (ops_path() == OPS_AVX2) {
		vecmath_expf_shifted_n(row + lo, (size_t)(hi - lo + 1), mx);
		return;
	}
#endif
	for (int j = lo; j <= hi; j++)
		row[j] = expf(row[j] - mx);
}

/* SUM[r] += ROW[r][LO[r]] + ... + ROW[r][HI[r]] for R < K (at most 4), index by index as the scalar
 * code always added them, so that the softmax's one reciprocal rounds alike on every path. One
 * row's additions wait 3 cycles each on the last; four rows' run side by side (a 512-key row's sum
 * was 1.2 of its 3.2 ns per key on AVX2). */
static void ops_sums_in_order(float *const row[], const int lo[], const int hi[], int k, float sum[])
{
	int common = hi[0] - lo[0] + 1;
	for (int r = 0; r < k; r++)
		common = hi[r] - lo[r] + 1 < common ? hi[r] - lo[r] + 1 : common;
	int j = 0;
	if (k == 4)
		for (; j < common; j++) {
			sum[0] += row[0][lo[0] + j];
			sum[1] += row[1][lo[1] + j];
			sum[2] += row[2][lo[2] + j];
			sum[3] += row[3][lo[3] + j];
		}
	for (int r = 0; r < k; r++)
		for (int i = lo[r] + j; i <= hi[r]; i++)
			sum[r] += row[r][i];
}

#ifdef OPS_VECTOR
/* The same for 8 rows at once, one row a lane: COUNT values of each (a multiple of 8) from LO[q],
 * 8 x 8 blocks transposed in registers and added vector after vector in index order, so each
 * lane makes its row's additions in the scalar order (the same bits) while 8 rows' wait on their
 * last together. */
__attribute__((target("avx2"))) static void ops_sums8(float *const row[8], const int lo[8], int count, float sum[8])
{
	__m256 acc = _mm256_loadu_ps(sum);
	for (int j = 0; j < count; j += 8) {
		__m256 r[8], t[8], u[8];
#pragma GCC unroll 16
		for (int q = 0; q < 8; q++)
			r[q] = _mm256_loadu_ps(row[q] + lo[q] + j);
#pragma GCC unroll 16
		for (int q = 0; q < 8; q += 2)
			t[q] = _mm256_unpacklo_ps(r[q], r[q + 1]), t[q + 1] = _mm256_unpackhi_ps(r[q], r[q + 1]);
#pragma GCC unroll 16
		for (int g = 0; g < 8; g += 4) { /* u[g + c]: rows g .. g+3 of values c and 4 + c */
			u[g] = _mm256_shuffle_ps(t[g], t[g + 2], 0x44), u[g + 1] = _mm256_shuffle_ps(t[g], t[g + 2], 0xee);
			u[g + 2] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0x44), u[g + 3] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0xee);
		}
#pragma GCC unroll 16
		for (int c = 0; c < 4; c++) /* value c of the 8 rows, then (below) value 4 + c */
			acc = _mm256_add_ps(acc, _mm256_permute2f128_ps(u[c], u[4 + c], 0x20));
#pragma GCC unroll 16
		for (int c = 0; c < 4; c++)
			acc = _mm256_add_ps(acc, _mm256_permute2f128_ps(u[c], u[4 + c], 0x31));
	}
	_mm256_storeu_ps(sum, acc);
}

/* The same for 16 rows, 16 x 16 blocks, on AVX-512: each value a quarter of the shuffles AVX2's 8
 * rows take per value, and a quarter of the waits. */
__attribute__((target("avx512f"))) static void ops_sums16(float *const row[16], const int lo[16], int count, float sum[16])
{
	__m512 acc = _mm512_loadu_ps(sum);
	for (int j = 0; j < count; j += 16) {
		__m512 r[16], t[16], v[4][4];
#pragma GCC unroll 16
		for (int q = 0; q < 16; q++)
			r[q] = _mm512_loadu_ps(row[q] + lo[q] + j);
#pragma GCC unroll 16
		for (int q = 0; q < 16; q += 2)
			t[q] = _mm512_unpacklo_ps(r[q], r[q + 1]), t[q + 1] = _mm512_unpackhi_ps(r[q], r[q + 1]);
#pragma GCC unroll 16
		for (int g = 0; g < 4; g++) { /* v[g][c], 128-bit lane L: rows 4g .. 4g+3 of value 4L + c */
			v[g][0] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0x44);
			v[g][1] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0xee);
			v[g][2] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
			v[g][3] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xee);
		}
		__m512 val[16]; /* val[4L + c]: value 4L + c of the 16 rows (lane G: v[G][c]'s lane L) */
#pragma GCC unroll 16
		for (int c = 0; c < 4; c++) {
			__m512 x0 = _mm512_shuffle_f32x4(v[0][c], v[1][c], 0x44), x1 = _mm512_shuffle_f32x4(v[0][c], v[1][c], 0xee);
			__m512 x2 = _mm512_shuffle_f32x4(v[2][c], v[3][c], 0x44), x3 = _mm512_shuffle_f32x4(v[2][c], v[3][c], 0xee);
			val[c] = _mm512_shuffle_f32x4(x0, x2, 0x88), val[4 + c] = _mm512_shuffle_f32x4(x0, x2, 0xdd);
			val[8 + c] = _mm512_shuffle_f32x4(x1, x3, 0x88), val[12 + c] = _mm512_shuffle_f32x4(x1, x3, 0xdd);
		}
#pragma GCC unroll 16
		for (int e = 0; e < 16; e++)
			acc = _mm512_add_ps(acc, val[e]);
	}
	_mm512_storeu_ps(sum, acc);
}
#endif

/* SUM[r] = the in-order sums of K rows (as ops_sums_in_order): on the vector paths 16 rows (AVX-512)
 * or 8 at a time a lane each over the values all of them have, then the rest of each row four rows
 * at a time. The softmax of 12 heads of 512 x 512 keys on one core of an AVX-512 Xeon, four rows'
 * sums at once -> these: 0.78 -> 0.68 ns a value; its AVX2 path 0.98 -> 0.93 (the blocks' loops
 * unrolled by #pragma: rolled, their arrays went through memory and the AVX2 path ran 4 % slower). */
static void ops_sums_rows(float *const row[], const int lo[], const int hi[], int k, float sum[])
{
	int from[OPS_SOFTMAX_ROWS], r = 0;
	for (int q = 0; q < k; q++)
		sum[q] = 0, from[q] = lo[q];
#ifdef OPS_VECTOR
	int width = ops_path() == OPS_SCALAR ? 0 : ops_exact16 ? 16 : 8;
	for (; width && r + width <= k; r += width) {
		int common = hi[r] - lo[r] + 1;
		for (int q = r; q < r + width; q++)
			common = hi[q] - lo[q] + 1 < common ? hi[q] - lo[q] + 1 : common;
		common = common > 0 ? common / width * width : 0;
		if (common > 0 && width == 16)
			ops_sums16(row + r, lo + r, common, sum + r);
		else if (common > 0)
			ops_sums8(row + r, lo + r, common, sum + r);
		for (int q = r; q < r + width; q++)
			from[q] += common;
	}
	r = 0;
#endif
	for (; r < k; r += 4)
		ops_sums_in_order(row + r, from + r, hi + r, k - r < 4 ? k - r : 4, sum + r);
}

/* exp(ROW[j] - MX) in place for J = LO..HI; their sum (a softmax's, index by index on every path:
 * the AVX-512 path's 16 lanes summed apart changed the reciprocal, and so a third of the
 * probabilities by an ulp, against the scalar path's). WIDE: as ops_exp_shifted. */
static float ops_exp_sum(float *row, int lo, int hi, float mx, bool wide)
{
	float sum = 0;
	ops_exp_shifted(row, lo, hi, mx, wide);
	ops_sums_in_order(&row, &lo, &hi, 1, &sum);
	return sum;
}

/* The exponentials row[lo..hi] divided by SUM (one reciprocal, as torch multiplies), and the keys
 * outside the range 0. */
static void ops_softmax_finish(float *row, int n, int lo, int hi, float sum)
{
	float inv = 1.0f / sum;
#ifdef OPS_VECTOR
	if (ops_path() != OPS_SCALAR && hi >= lo)
		ops_scale8(row + lo, hi - lo + 1, inv);
	else
#endif
		for (int j = lo; j <= hi; j++)
			row[j] *= inv;
	memset(row, 0, (size_t)lo * sizeof *row);
	memset(row + hi + 1, 0, (size_t)(n - hi - 1) * sizeof *row);
}

void ops_softmax_range(float *row, int n, int lo, int hi)
{
	float mx = ops_row_max(row, lo, hi);
	ops_softmax_finish(row, n, lo, hi, ops_exp_sum(row, lo, hi, mx, true));
}

void ops_softmax_rows(float *s, int n, int rows, const int *lo, const int *hi)
{
	for (int r0 = 0; r0 < rows; r0 += OPS_SOFTMAX_ROWS) {
		int k = rows - r0 < OPS_SOFTMAX_ROWS ? rows - r0 : OPS_SOFTMAX_ROWS;
		float *row[OPS_SOFTMAX_ROWS], sum[OPS_SOFTMAX_ROWS];
		for (int r = 0; r < k; r++)
			row[r] = s + (size_t)(r0 + r) * n;
		for (int r = 0; r < k; r++)
			ops_exp_shifted(row[r], lo[r0 + r], hi[r0 + r], ops_row_max(row[r], lo[r0 + r], hi[r0 + r]), true);
		ops_sums_rows(row, lo + r0, hi + r0, k, sum);
		for (int r = 0; r < k; r++)
			ops_softmax_finish(row[r], n, lo[r0 + r], hi[r0 + r], sum[r]);
	}
}

void ops_softmax_range_sink(float *row, int n, int lo, int hi, float sink)
{
	float mx = sink;
	for (int j = lo; j <= hi; j++)
		mx = row[j] > mx ? row[j] : mx;
	/* combined_logits - max, then softmax of that: its max is 0, so each value is exp(x - max) */
	float sum = ops_exp_sum(row, lo, hi, mx, false) + expf(sink - mx);
	ops_softmax_finish(row, n, lo, hi, sum);
}

#ifdef OPS_VECTOR
__attribute__((target("avx2"))) static bool ops_copy_finite8(float *dst, const float *x, size_t count)
{
	const __m256i ones = _mm256_set1_epi32(0x7f800000); /* an exponent of all ones: infinite or NaN */
	__m256i bad = _mm256_setzero_si256();
	size_t i = 0;
	for (; i + 8 <= count; i += 8) {
		__m256 v = _mm256_loadu_ps(x + i);
		if (dst)
			_mm256_storeu_ps(dst + i, v);
		bad = _mm256_or_si256(bad, _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(v), ones), ones));
	}
	bool finite = _mm256_testz_si256(bad, bad);
	for (; i < count; i++) {
		if (dst)
			dst[i] = x[i];
		finite &= isfinite(x[i]) != 0;
	}
	return finite;
}
#endif

bool ops_copy_finite(float *dst, const float *x, size_t count)
{
#ifdef OPS_VECTOR
	if (ops_path() != OPS_SCALAR)
		return ops_copy_finite8(dst, x, count);
#endif
	bool finite = true;
	for (size_t i = 0; i < count; i++) {
		if (dst)
			dst[i] = x[i];
		finite &= isfinite(x[i]) != 0;
	}
	return finite;
}

#ifdef OPS_VECTOR
/* ops_add 8 floats at a time (the same additions: the compiler left the plain loop a float at a
 * time, X and Y being possibly the same array). */
__attribute__((target("avx2"))) static void ops_add8(float *x, const float *y, size_t count)
{
	size_t i = 0;
	for (; i + 32 <= count; i += 32)
		for (int v = 0; v < 32; v += 8)
			_mm256_storeu_ps(x + i + v, _mm256_add_ps(_mm256_loadu_ps(x + i + v), _mm256_loadu_ps(y + i + v)));
	for (; i + 8 <= count; i += 8)
		_mm256_storeu_ps(x + i, _mm256_add_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
	for (; i < count; i++)
		x[i] += y[i];
}
#endif

void ops_add(float *x, const float *y, size_t count)
{
#ifdef OPS_VECTOR
	if (ops_path() != OPS_SCALAR) {
		ops_add8(x, y, count);
		return;
	}
#endif
	for (size_t i = 0; i < count; i++)
		x[i] += y[i];
}
