/* stats.c -- descriptive statistics over queries, keys and attention weights (see stats.h). */
#include "analysis/stats.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void stats_mean_std(const double *x, size_t n, double *mean, double *std)
{
	double m = 0, v = 0;
	for (size_t i = 0; i < n; i++)
		m += x[i];
	m = n ? m / n : 0;
	for (size_t i = 0; i < n; i++)
		v += (x[i] - m) * (x[i] - m);
	*mean = m;
	*std = n ? sqrt(v / n) : 0;
}

double stats_corr(const double *x, const double *y, size_t n)
{
	if (n < 2)
		return NAN;
	double mx, sx, my, sy, c = 0;
	stats_mean_std(x, n, &mx, &sx);
	stats_mean_std(y, n, &my, &sy);
	if (!(sx > 0) || !(sy > 0))
		return NAN;
	for (size_t i = 0; i < n; i++)
		c += (x[i] - mx) * (y[i] - my);
	return c / n / (sx * sy);
}

/* Mean and std of the floats X[count] in double (two passes, for accuracy); the std divides by
 * count − 1 with BESSEL (0 when count < 2), else by count. */
static void stats_block(const float *x, size_t count, bool bessel, double *mean, double *std)
{
	double m = 0, v = 0;
	for (size_t i = 0; i < count; i++)
		m += x[i];
	m = count ? m / count : 0;
	for (size_t i = 0; i < count; i++)
		v += (x[i] - m) * (x[i] - m);
	size_t div = bessel ? count - (count > 0) : count;
	*mean = m;
	*std = div ? sqrt(v / div) : 0;
}

void stats_qk_desc(const struct trace *t, int layer, bool skip_first, bool bessel, struct stats_qk_desc *out)
{
	int first = skip_first && t->n > 1 ? 1 : 0, d = t->head_dim;
	size_t count = (size_t)(t->n - first) * d;
	for (int h = 0; h < t->n_heads; h++) {
		stats_block(trace_q(t, layer, h) + (size_t)first * d, count, bessel, &out[h].q_mean, &out[h].q_std);
		stats_block(trace_k(t, layer, h) + (size_t)first * d, count, bessel, &out[h].k_mean, &out[h].k_std);
		out[h].count = count;
	}
}

/* Products of one query with a block of keys, 4 doubles a vector: the 8 lanes of two vectors are 8
 * keys, each summed over the depths in order from 0. A float times a float is exact in double, so a
 * fused multiply-add rounds as the multiply then add does: every product has the bits of the plain
 * loop "s += (double)q[i] * k[i]" on any path. */
typedef double dots_v4 __attribute__((vector_size(32)));

/* TO[x] = Q · key x for the NK keys of KT [d][ldk] (transposed, zero past NK; LDK a multiple of 8).
 * 32 keys at a time first: each sum waits on its previous addition, and eight chains side by side
 * hide that wait where two did not (a 25-token text's dots 4 times faster); a key's sum is the same
 * chain either way. */
static inline __attribute__((always_inline)) void dots_keys(const float *q, const double *kt, int d, int nk,
							    int ldk, double *to)
{
	int x = 0;
	for (; x + 32 <= ldk && x < nk; x += 32) {
		dots_v4 s[8] = {{0}};
		const double *k = kt + x;
		for (int i = 0; i < d; i++, k += ldk) {
			double qi = q[i];
#pragma GCC unroll 8
			for (int v = 0; v < 8; v++) {
				dots_v4 kv;
				memcpy(&kv, k + 4 * v, sizeof kv); /* unaligned loads */
				s[v] += qi * kv;
			}
		}
		double out[32];
		memcpy(out, s, sizeof s);
		for (int j = 0; j < 32 && x + j < nk; j++)
			to[x + j] = out[j];
	}
	for (; x < nk; x += 8) {
		dots_v4 s0 = {0, 0, 0, 0}, s1 = {0, 0, 0, 0};
		const double *k = kt + x;
		for (int i = 0; i < d; i++, k += ldk) {
			double qi = q[i];
			dots_v4 v0, v1;
			memcpy(&v0, k, sizeof v0); /* unaligned loads */
			memcpy(&v1, k + 4, sizeof v1);
			s0 += qi * v0;
			s1 += qi * v1;
		}
		double out[8];
		memcpy(out, &s0, sizeof s0);
		memcpy(out + 4, &s1, sizeof s1);
		for (int j = 0; j < 8 && x + j < nk; j++)
			to[x + j] = out[j];
	}
}

__attribute__((target("avx2,fma"))) static void dots_keys_avx2(const float *q, const double *kt, int d, int nk,
								int ldk, double *to)
{
	dots_keys(q, kt, d, nk, ldk, to);
}

static void dots_keys_generic(const float *q, const double *kt, int d, int nk, int ldk, double *to)
{
	dots_keys(q, kt, d, nk, ldk, to);
}

int stats_qk_dots(const struct trace *t, int layer, int query, enum stats_dots_keys keys, struct stats_dots *out,
		  struct err *e)
{
	memset(out, 0, sizeof *out);
	out->key_lo = out->key_hi = -1;
	if (query < 0 || query >= t->n)
		return err_set(e, "no token %d (the text has %d)", query, t->n);
	int H = t->n_heads, d = t->head_dim, lo, hi;
	int KV = t->n_kv_heads > 0 && t->n_kv_heads < H ? t->n_kv_heads : H, group = H / KV;
	trace_key_range(t, layer, query, &lo, &hi);
	int *key = malloc((size_t)(hi - lo + 1) * sizeof *key); /* [n_keys] the keys used */
	if (!key)
		return err_set(e, "out of memory");
	int nk = 0;
	for (int j = lo; j <= hi; j++)
		if (keys == STATS_DOTS_VISIBLE || (j != 0 && j != query))
			key[nk++] = j;
	out->n_keys = nk;
	if (nk > 0)
		out->key_lo = key[0], out->key_hi = key[nk - 1];
	out->n_same = (size_t)H * nk;
	out->n_diff = (size_t)H * (KV - 1) * nk;
	out->same = malloc((out->n_same ? out->n_same : 1) * sizeof *out->same);
	out->diff = malloc((out->n_diff ? out->n_diff : 1) * sizeof *out->diff);
	int ldk = (nk + 7) / 8 * 8;
	double *kt = malloc(((size_t)d * ldk + 1) * sizeof *kt); /* [d][ldk] one key head's keys */
	if (!out->same || !out->diff || !kt) {
		free(key);
		free(kt);
		stats_dots_free(out);
		return err_set(e, "out of memory");
	}
	void (*keys_fn)(const float *, const double *, int, int, int, double *) =
		__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? dots_keys_avx2 : dots_keys_generic;
	/* Key head by key head (its keys transposed once for every query head): same[h][x] for the head h
	 * reads, diff[h][the other key heads in order][x]. */
	for (int g = 0; g < KV; g++) {
		const float *k = trace_k(t, layer, g * group); /* key head g */
		for (int i = 0; i < d; i++) {
			for (int x = 0; x < nk; x++)
				kt[(size_t)i * ldk + x] = k[(size_t)key[x] * d + i];
			for (int x = nk; x < ldk; x++)
				kt[(size_t)i * ldk + x] = 0;
		}
		for (int h = 0; h < H; h++) {
			const float *q = trace_q(t, layer, h) + (size_t)query * d;
			int own = trace_kv_head(t, h);
			double *to = g == own ? out->same + (size_t)h * nk
					      : out->diff + ((size_t)h * (KV - 1) + (size_t)(g < own ? g : g - 1)) * nk;
			keys_fn(q, kt, d, nk, ldk, to);
		}
	}
	free(kt);
	free(key);
	return 0;
}

void stats_dots_free(struct stats_dots *d)
{
	free(d->same);
	free(d->diff);
	memset(d, 0, sizeof *d);
}

int stats_attn_groups(const struct trace *t, int layer, bool self_last, struct stats_groups *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	int n = t->n, H = t->n_heads, self_end = self_last ? n : n - 1; /* other tokens' self: 1 .. self_end-1 */
	size_t cap[STATS_GROUP_COUNT] = {
		(size_t)H * (n > 1 ? n - 1 : 0),
		(size_t)H * (self_end > 1 ? self_end - 1 : 0),
		(size_t)H * (n > 0 ? 1 : 0),
	};
	for (int g = 0; g < STATS_GROUP_COUNT; g++) {
		out->v[g] = malloc((cap[g] ? cap[g] : 1) * sizeof *out->v[g]);
		if (!out->v[g]) {
			stats_groups_free(out);
			return err_set(e, "out of memory");
		}
	}
	for (int h = 0; h < H; h++) {
		const float *a = trace_attn(t, layer, h);
		for (int j = 0; j < n - 1; j++)
			out->v[STATS_FINAL_PREV][out->n[STATS_FINAL_PREV]++] = a[(size_t)(n - 1) * n + j];
		for (int i = 1; i < self_end; i++)
			out->v[STATS_OTHER_SELF][out->n[STATS_OTHER_SELF]++] = a[(size_t)i * n + i];
		if (n > 0)
			out->v[STATS_FIRST_SELF][out->n[STATS_FIRST_SELF]++] = a[0];
	}
	return 0;
}

void stats_groups_free(struct stats_groups *g)
{
	for (int i = 0; i < STATS_GROUP_COUNT; i++)
		free(g->v[i]);
	memset(g, 0, sizeof *g);
}

const char *stats_group_name(enum stats_group g)
{
	static const char *const names[STATS_GROUP_COUNT] = {
		"last token -> earlier tokens",
		"self-attention, other tokens",
		"self-attention, first token",
	};
	return g >= 0 && g < STATS_GROUP_COUNT ? names[g] : "?";
}

size_t stats_histogram(const double *x, size_t n, double lo, double hi, int bins, int *count)
{
	size_t counted = 0;
	for (int b = 0; b < bins; b++)
		count[b] = 0;
	if (bins < 1 || !(hi > lo))
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!(x[i] >= lo && x[i] <= hi))
			continue;
		int b = (int)((x[i] - lo) / (hi - lo) * bins);
		if (b >= bins)
			b = bins - 1;
		if (b < 0)
			b = 0;
		count[b]++;
		counted++;
	}
	return counted;
}

/* Y[g] += Σ_i exp(-z²/2), z = (GRID[g] − X[i]) / H, term by term. */
static void kde_sum(const double *x, size_t n, const double *grid, size_t m, double h, double *y)
{
	for (size_t g = 0; g < m; g++)
		for (size_t i = 0; i < n; i++) {
			double z = (grid[g] - x[i]) / h;
			if (z > -40 && z < 40) /* exp(-800) is 0 in double: the sum is exact without it */
				y[g] += exp(-0.5 * z * z);
		}
}

/* Is GRID[m] evenly spaced and increasing (to rounding)? */
static bool kde_even(const double *grid, size_t m)
{
	if (m < 3)
		return false;
	double step = (grid[m - 1] - grid[0]) / (double)(m - 1);
	if (!(step > 0))
		return false;
	for (size_t g = 0; g < m; g++)
		if (fabs(grid[g] - (grid[0] + (double)g * step)) > 1e-9 * step)
			return false;
	return true;
}

/* The same sums on an evenly spaced grid with two exp() per value instead of one per grid point:
 * from the grid point nearest X[i], each step of δ = step/H multiplies the term by a ratio that
 * itself changes by the factor exp(−δ²) (exp(−(z+δ)²/2) = exp(−z²/2)·exp(−zδ − δ²/2)). The terms
 * fall away from the nearest point, so a walk stops where one leaves the normal range (below
 * DBL_MIN, where arithmetic turns slow and n such terms are far below any peak); the products
 * carry a relative rounding of about (steps)·1e-16. For long texts: 135,000 products on a
 * 160-point grid take 420 ms term by term. */
static void kde_sum_even(const double *x, size_t n, const double *grid, size_t m, double h, double *y)
{
	double step = (grid[m - 1] - grid[0]) / (double)(m - 1), d = step / h, q = exp(-d * d);
	for (size_t i = 0; i < n; i++) {
		double c = floor((x[i] - grid[0]) / step + 0.5);
		size_t k0 = c < 0 ? 0 : c > (double)(m - 1) ? m - 1 : (size_t)c;
		double z0 = (grid[k0] - x[i]) / h, e0 = z0 > -40 && z0 < 40 ? exp(-0.5 * z0 * z0) : 0;
		if (e0 < DBL_MIN)
			continue;
		y[k0] += e0;
		double e = e0, r = exp(-(z0 * d + 0.5 * d * d));
		for (size_t k = k0 + 1; k < m && e >= DBL_MIN; k++, r *= q)
			y[k] += (e *= r);
		e = e0, r = exp(z0 * d - 0.5 * d * d);
		for (size_t k = k0; k-- > 0 && e >= DBL_MIN; r *= q)
			y[k] += (e *= r);
	}
}

const char *stats_kde(const double *x, size_t n, const double *grid, size_t m, double *y, double *bandwidth)
{
	for (size_t g = 0; g < m; g++)
		y[g] = 0;
	if (bandwidth)
		*bandwidth = 0;
	if (n < 2)
		return "fewer than 2 values";
	double mean = 0, var = 0, lo = x[0], hi = x[0];
	for (size_t i = 0; i < n; i++)
		mean += x[i], lo = fmin(lo, x[i]), hi = fmax(hi, x[i]);
	mean /= n;
	if (!isfinite(mean))
		return "values not finite";
	if (lo == hi) /* not merely a variance rounded to 1e-34, where scipy draws nonsense */
		return "all values equal";
	for (size_t i = 0; i < n; i++)
		var += (x[i] - mean) * (x[i] - mean);
	var /= n - 1; /* gaussian_kde: np.cov, unbiased */
	double h = sqrt(var) * pow((double)n, -1.0 / 5), peak = 0; /* Scott: n^(-1/(d+4)), d = 1 */
	if (bandwidth)
		*bandwidth = h;
	if (kde_even(grid, m))
		kde_sum_even(x, n, grid, m, h, y);
	else
		kde_sum(x, n, grid, m, h, y);
	/* The normalising constant 1/(n·h·√(2π)) cancels in the scaling to peak 1, but is kept so that
	 * the values before scaling are the density. */
	for (size_t g = 0; g < m; g++) {
		y[g] /= n * h * 2.5066282746310002; /* √(2π) */
		peak = fmax(peak, y[g]);
	}
	if (peak > 0)
		for (size_t g = 0; g < m; g++)
			y[g] /= peak;
	return NULL;
}

void stats_linspace(double lo, double hi, size_t m, double *out)
{
	double step = m > 1 ? (hi - lo) / (double)(m - 1) : 0;
	for (size_t i = 0; i < m; i++)
		out[i] = lo + (double)i * step;
	if (m > 1)
		out[m - 1] = hi;
}

/* ---- AttentionViz normalisation ---- */

/* Per visible pair (i, j): |q_i|², |k'_j|², q_i·k'_j, where k' is the translated key. */
struct qk_pairs {
	size_t n;
	double *qq, *kk, *qk;  /* [n] */
	double *dist;          /* [n] scratch: distances for one c */
};

static void qk_distances(const struct qk_pairs *p, double c)
{
	double c2 = c * c;
	for (size_t i = 0; i < p->n; i++) {
		double d2 = c2 * p->qq[i] + p->kk[i] / c2 - 2 * p->qk[i];
		p->dist[i] = d2 > 0 ? sqrt(d2) : 0;
	}
}

static double qk_corr_at(const struct qk_pairs *p, double logc)
{
	qk_distances(p, exp(logc));
	double r = stats_corr(p->qk, p->dist, p->n);
	return isnan(r) ? 2 : r; /* worse than any real correlation */
}

/* The log c in [-6, 6] that minimises corr(q·k', distance): a coarse grid (the function need
 * not be unimodal), then golden-section search around the best grid point. */
static double qk_best_logc(const struct qk_pairs *p, double start)
{
	const double lo = -6, hi = 6, step = 0.05;
	double best = start, fbest = qk_corr_at(p, start);
	for (double u = lo; u <= hi + 1e-9; u += step) {
		double f = qk_corr_at(p, u);
		if (f < fbest)
			fbest = f, best = u;
	}
	const double g = (sqrt(5.0) - 1) / 2;
	double a = best - step, b = best + step;
	double x1 = b - g * (b - a), x2 = a + g * (b - a);
	double f1 = qk_corr_at(p, x1), f2 = qk_corr_at(p, x2);
	while (b - a > 1e-9) {
		if (f1 < f2) {
			b = x2, x2 = x1, f2 = f1;
			x1 = b - g * (b - a);
			f1 = qk_corr_at(p, x1);
		} else {
			a = x1, x1 = x2, f1 = f2;
			x2 = a + g * (b - a);
			f2 = qk_corr_at(p, x2);
		}
	}
	double u = (a + b) / 2;
	return qk_corr_at(p, u) <= fbest ? u : best;
}

/* Mean over queries of the distance to the key with the highest attention (first on a tie). */
static double qk_argmax_dist(const struct trace *t, const float *a, const float *q, const float *k, const double *shift,
			     double c)
{
	int n = t->n, d = t->head_dim;
	double total = 0;
	for (int i = 0; i < n; i++) {
		int best = 0;
		for (int j = 1; j < n; j++)
			if (a[(size_t)i * n + j] > a[(size_t)i * n + best])
				best = j;
		double s = 0;
		for (int x = 0; x < d; x++) {
			double diff = c * q[(size_t)i * d + x] - (k[(size_t)best * d + x] + shift[x]) / c;
			s += diff * diff;
		}
		total += sqrt(s);
	}
	return n ? total / n : 0;
}

static double mean_of(const double *x, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += x[i];
	return n ? s / n : 0;
}

int stats_qknorm(const struct trace *t, int layer, int head, enum qknorm_mode mode, struct qknorm *out,
		 float *q_out, float *k_out, struct err *e)
{
	memset(out, 0, sizeof *out);
	int n = t->n, d = t->head_dim;
	const float *q = trace_q(t, layer, head), *k = trace_k(t, layer, head), *a = trace_attn(t, layer, head);
	size_t np = 0;
	for (int i = 0; i < n; i++) {
		int lo, hi;
		trace_key_range(t, layer, i, &lo, &hi);
		np += (size_t)(hi - lo + 1);
	}
	double *zero = calloc((size_t)d, sizeof *zero), *shift = calloc((size_t)d, sizeof *shift);
	struct qk_pairs p = {.n = np};
	size_t cap = np ? np : 1;
	p.qq = malloc(cap * sizeof *p.qq);
	p.kk = malloc(cap * sizeof *p.kk);
	p.qk = malloc(cap * sizeof *p.qk);
	p.dist = malloc(cap * sizeof *p.dist);
	if (!zero || !shift || !p.qq || !p.kk || !p.qk || !p.dist) {
		free(zero), free(shift), free(p.qq), free(p.kk), free(p.qk), free(p.dist);
		return err_set(e, "out of memory");
	}
	/* The translation: mean q − mean k. */
	for (int i = 0; i < n; i++)
		for (int x = 0; x < d; x++)
			shift[x] += ((double)q[(size_t)i * d + x] - k[(size_t)i * d + x]) / n;

	/* Before: raw vectors. */
	for (int pass = 0; pass < 2; pass++) {
		const double *sh = pass ? shift : zero;
		size_t m = 0;
		for (int i = 0; i < n; i++) {
			int lo, hi;
			trace_key_range(t, layer, i, &lo, &hi);
			for (int j = lo; j <= hi; j++, m++) {
				double qq = 0, kk = 0, qk = 0;
				for (int x = 0; x < d; x++) {
					double qv = q[(size_t)i * d + x], kv = k[(size_t)j * d + x] + sh[x];
					qq += qv * qv, kk += kv * kv, qk += qv * kv;
				}
				p.qq[m] = qq, p.kk[m] = kk, p.qk[m] = qk;
			}
		}
		if (pass == 0) {
			qk_distances(&p, 1);
			out->corr_before = stats_corr(p.qk, p.dist, p.n);
			out->meandist_before = mean_of(p.dist, p.n);
			out->argmax_before = qk_argmax_dist(t, a, q, k, zero, 1);
		}
	}
	/* Mean norms of the queries, the raw keys and the translated keys. */
	double qn = 0, kn = 0, kn0 = 0;
	for (int i = 0; i < n; i++) {
		double sq = 0, sk = 0, sk0 = 0;
		for (int x = 0; x < d; x++) {
			double qv = q[(size_t)i * d + x], kv = k[(size_t)i * d + x];
			sq += qv * qv, sk0 += kv * kv, sk += (kv + shift[x]) * (kv + shift[x]);
		}
		qn += sqrt(sq), kn += sqrt(sk), kn0 += sqrt(sk0);
	}
	if (n > 0)
		qn /= n, kn /= n, kn0 /= n;
	out->qnorm_before = qn, out->knorm_before = kn0;
	/* c·qn = kn/c  =>  c = sqrt(kn/qn). */
	double c = qn > 0 && kn > 0 ? sqrt(kn / qn) : 1;
	if (mode == QKNORM_CORR && np >= 2)
		c = exp(qk_best_logc(&p, log(c)));
	out->c = c;
	out->qnorm_after = c * qn, out->knorm_after = kn / c;
	qk_distances(&p, c);
	out->corr_after = stats_corr(p.qk, p.dist, p.n);
	out->meandist_after = mean_of(p.dist, p.n);
	out->argmax_after = qk_argmax_dist(t, a, q, k, shift, c);
	for (int i = 0; i < n; i++)
		for (int x = 0; x < d; x++) {
			if (q_out)
				q_out[(size_t)i * d + x] = (float)(c * q[(size_t)i * d + x]);
			if (k_out)
				k_out[(size_t)i * d + x] = (float)((k[(size_t)i * d + x] + shift[x]) / c);
		}
	free(zero), free(shift), free(p.qq), free(p.kk), free(p.qk), free(p.dist);
	return 0;
}
