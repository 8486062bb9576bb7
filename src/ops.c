/* ops.c -- element-wise and row-wise operations of a transformer block (see ops.h). */
#include "ops.h"

#include <math.h>
#include <string.h>

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

void ops_activation(enum activation act, float *x, size_t count)
{
	for (size_t i = 0; i < count; i++)
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

void ops_softmax_range(float *row, int n, int lo, int hi)
{
	float mx = row[lo];
	for (int j = lo + 1; j <= hi; j++)
		mx = row[j] > mx ? row[j] : mx;
	float sum = 0;
	for (int j = lo; j <= hi; j++) {
		row[j] = expf(row[j] - mx);
		sum += row[j];
	}
	float inv = 1.0f / sum;
	for (int j = lo; j <= hi; j++)
		row[j] *= inv;
	for (int j = 0; j < lo; j++)
		row[j] = 0.0f;
	for (int j = hi + 1; j < n; j++)
		row[j] = 0.0f;
}

void ops_add(float *x, const float *y, size_t count)
{
	for (size_t i = 0; i < count; i++)
		x[i] += y[i];
}
