/* ops.c -- element-wise and row-wise operations of a transformer block (see ops.h). */
#include "config.h"

#include "engine/ops.h"

#include "engine/gemm.h"

#include <math.h>
#include <string.h>

#if (defined(__x86_64__) || defined(__i386__)) && defined(HAVE_LIBMVEC)
#include <immintrin.h>
#define OPS_AVX512 1
/* glibc's libmvec: 16 lanes at a time, within 4 ulp of expf/erff/tanhf (measured 3, 4 and 4 over
 * softmax's and GELU's ranges). A softmax or GELU takes 7 times less time with them. */
__attribute__((target("avx512f"))) __m512 _ZGVeN16v_expf(__m512 x);
__attribute__((target("avx512f"))) __m512 _ZGVeN16v_erff(__m512 x);
__attribute__((target("avx512f"))) __m512 _ZGVeN16v_tanhf(__m512 x);

/* Only alongside oneDNN's AVX-512 products (gemm_avx512 says why). */
static bool ops_avx512(void)
{
	static int has = -1;
	if (has < 0) {
		__builtin_cpu_init();
		has = __builtin_cpu_supports("avx512f") && gemm_avx512();
	}
	return has;
}
#endif

void ops_layernorm(const float *x, float *y, int n, int d, const float *g, const float *b, double eps)
{
	for (int i = 0; i < n; i++) {
		const float *xi = x + (size_t)i * d;
		float *yi = y + (size_t)i * d;
		double mean = 0, var = 0; /* double: the exact mean/variance torch's float32 reductions approximate */
		for (int j = 0; j < d; j++)
			mean += xi[j];
		mean /= d;
		for (int j = 0; j < d; j++)
			var += (xi[j] - mean) * (xi[j] - mean);
		var /= d;
		double inv = 1.0 / sqrt(var + eps);
		for (int j = 0; j < d; j++)
			yi[j] = (float)((xi[j] - mean) * inv) * g[j] + (b ? b[j] : 0.0f);
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

#ifdef OPS_AVX512
/* ACT of the first COUNT - COUNT % 16 values of X, 16 at a time, in ops_act1's order of operations;
 * returns how many were done. */
__attribute__((target("avx512f"))) static size_t ops_activation16(enum activation act, float *x, size_t count)
{
	const __m512 half = _mm512_set1_ps(0.5f), one = _mm512_set1_ps(1.0f), r2 = _mm512_set1_ps((float)M_SQRT1_2);
	const __m512 k0 = _mm512_set1_ps(0.7978845608028654f), k1 = _mm512_set1_ps(0.044715f);
	size_t i = 0;
	if (act == ACT_GELU_ERF) {
		for (; i + 16 <= count; i += 16) {
			__m512 v = _mm512_loadu_ps(x + i);
			__m512 e = _ZGVeN16v_erff(_mm512_mul_ps(v, r2));
			_mm512_storeu_ps(x + i, _mm512_mul_ps(_mm512_mul_ps(half, v), _mm512_add_ps(one, e)));
		}
	} else if (act == ACT_GELU_TANH) {
		for (; i + 16 <= count; i += 16) {
			__m512 v = _mm512_loadu_ps(x + i);
			__m512 cube = _mm512_mul_ps(_mm512_mul_ps(v, v), v);
			__m512 th = _ZGVeN16v_tanhf(_mm512_mul_ps(k0, _mm512_add_ps(v, _mm512_mul_ps(k1, cube))));
			_mm512_storeu_ps(x + i, _mm512_mul_ps(_mm512_mul_ps(half, v), _mm512_add_ps(one, th)));
		}
	}
	return i;
}
#endif

void ops_activation(enum activation act, float *x, size_t count)
{
	size_t i = 0;
#ifdef OPS_AVX512
	if (ops_avx512())
		i = ops_activation16(act, x, count);
#endif
	for (; i < count; i++)
		x[i] = ops_act1(act, x[i]);
}

void ops_gated(enum activation act, const float *gate, const float *up, int n, int count, int stride, float *out)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < count; j++)
			out[(size_t)i * count + j] =
				ops_act1(act, gate[(size_t)i * stride + j]) * up[(size_t)i * stride + j];
}

void ops_softcap(float *s, size_t count, float cap)
{
	for (size_t i = 0; i < count; i++)
		s[i] = tanhf(s[i] / cap) * cap;
}

#ifdef OPS_AVX512
/* ops_softmax_range's exponentials and sum, 16 lanes at a time (the lanes' sums added at the end). */
__attribute__((target("avx512f"))) static float ops_exp_sum16(float *x, int count, float mx)
{
	__m512 m = _mm512_set1_ps(mx), acc = _mm512_setzero_ps();
	int j = 0;
	for (; j + 16 <= count; j += 16) {
		__m512 e = _ZGVeN16v_expf(_mm512_sub_ps(_mm512_loadu_ps(x + j), m));
		_mm512_storeu_ps(x + j, e);
		acc = _mm512_add_ps(acc, e);
	}
	float sum = _mm512_reduce_add_ps(acc);
	for (; j < count; j++) {
		x[j] = expf(x[j] - mx);
		sum += x[j];
	}
	return sum;
}
#endif

/* The exponentials row[lo..hi] divided by SUM (one reciprocal, as torch multiplies), and the keys
 * outside the range 0. */
static void ops_softmax_finish(float *row, int n, int lo, int hi, float sum)
{
	float inv = 1.0f / sum;
	for (int j = lo; j <= hi; j++)
		row[j] *= inv;
	for (int j = 0; j < lo; j++)
		row[j] = 0.0f;
	for (int j = hi + 1; j < n; j++)
		row[j] = 0.0f;
}

void ops_softmax_range(float *row, int n, int lo, int hi)
{
#ifdef OPS_AVX512
	if (ops_avx512() && hi - lo + 1 >= 16) {
		float mx = row[lo];
		for (int j = lo + 1; j <= hi; j++)
			mx = row[j] > mx ? row[j] : mx;
		float inv = 1.0f / ops_exp_sum16(row + lo, hi - lo + 1, mx);
		for (int j = lo; j <= hi; j++)
			row[j] *= inv;
		memset(row, 0, (size_t)lo * sizeof *row);
		memset(row + hi + 1, 0, (size_t)(n - hi - 1) * sizeof *row);
		return;
	}
#endif
	float mx = row[lo];
	for (int j = lo + 1; j <= hi; j++)
		mx = row[j] > mx ? row[j] : mx;
	float sum = 0;
	for (int j = lo; j <= hi; j++) {
		row[j] = expf(row[j] - mx);
		sum += row[j];
	}
	ops_softmax_finish(row, n, lo, hi, sum);
}

void ops_softmax_range_sink(float *row, int n, int lo, int hi, float sink)
{
	float mx = sink;
	for (int j = lo; j <= hi; j++)
		mx = row[j] > mx ? row[j] : mx;
	/* combined_logits - max, then softmax of that: its max is 0, so each value is exp(x - max) */
	float s0 = sink - mx, sum = 0;
	for (int j = lo; j <= hi; j++) {
		row[j] = expf(row[j] - mx);
		sum += row[j];
	}
	sum += expf(s0);
	ops_softmax_finish(row, n, lo, hi, sum);
}

void ops_add(float *x, const float *y, size_t count)
{
	for (size_t i = 0; i < count; i++)
		x[i] += y[i];
}
