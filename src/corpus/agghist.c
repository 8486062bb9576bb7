/* agghist.c -- histograms on power-of-two ranges that merge exactly (see agghist.h). */
#include "corpus/agghist.h"

#include <math.h>
#include <string.h>

#define HALF (AGGHIST_BINS / 2)
#define LOG2_BINS 8 /* AGGHIST_BINS = 2^8 */
_Static_assert(AGGHIST_BINS == 1 << LOG2_BINS, "AGGHIST_BINS is 2^LOG2_BINS");

void agghist_init(struct agghist *h)
{
	memset(h, 0, sizeof *h);
	h->exp = AGGHIST_MIN_EXP;
}

/* The smallest exponent e >= AGGHIST_MIN_EXP with −2^e <= X < 2^e. */
static int agghist_need(double x)
{
	if (x == 0)
		return AGGHIST_MIN_EXP;
	int k;
	double f = frexp(x, &k); /* x = f · 2^k, 0.5 <= |f| < 1 */
	int e = f == -0.5 ? k - 1 : k;
	return e < AGGHIST_MIN_EXP ? AGGHIST_MIN_EXP : e;
}

/* The bin of X, given SCALE = 1 / w = 2^(LOG2_BINS − 1 − exp): x · SCALE is x / w exactly (a power
 * of two, as ldexp scales). */
static int agghist_index_scaled(double x, double scale)
{
	double i = floor(x * scale) + HALF;
	return i < 0 ? 0 : i > AGGHIST_BINS - 1 ? AGGHIST_BINS - 1 : (int)i;
}

static double agghist_scale(const struct agghist *h)
{
	return ldexp(1, LOG2_BINS - 1 - h->exp);
}

static int agghist_index(const struct agghist *h, double x)
{
	return agghist_index_scaled(x, agghist_scale(h));
}

void agghist_raise(struct agghist *h, int exp)
{
	while (h->exp < exp) {
		uint64_t b[AGGHIST_BINS] = {0};
		for (int i = 0; i < AGGHIST_BINS; i++)
			b[i / 2 + AGGHIST_BINS / 4] += h->bin[i];
		memcpy(h->bin, b, sizeof b);
		h->exp++;
	}
}

/* Chan et al.'s merge of (NB, MEANB, M2B) into H's moments. */
static void agghist_moments(struct agghist *h, uint64_t nb, double meanb, double m2b)
{
	if (nb == 0)
		return;
	if (h->n == 0) {
		h->n = nb, h->mean = meanb, h->m2 = m2b;
		return;
	}
	double na = (double)h->n, n = na + (double)nb, d = meanb - h->mean;
	h->mean += d * (double)nb / n;
	h->m2 += m2b + d * d * na * (double)nb / n;
	h->n += nb;
}

static int agghist_binnable(double x)
{
	return isfinite(x) && fabs(x) < ldexp(1, AGGHIST_MAX_EXP);
}

void agghist_add(struct agghist *h, const double *x, size_t n)
{
	size_t m = 0;
	double sum = 0, lo = INFINITY, hi = -INFINITY;
	for (size_t i = 0; i < n; i++) {
		if (!agghist_binnable(x[i])) {
			h->unbinned++;
			continue;
		}
		m++;
		sum += x[i];
		/* glibc's fmin and fmax without the calls: the first argument on ties (-0 against +0) */
		lo = x[i] < lo ? x[i] : lo, hi = x[i] > hi ? x[i] : hi;
	}
	if (m == 0)
		return;
	/* The range the values need: the least and the greatest need the most (agghist_need grows with
	 * |x| on either side). Found after the loop, not in it: a call there, however rare, kept SUM in
	 * memory, and its additions waited on a store and a load each (corpus mode's hot loop). */
	int need = agghist_need(lo) > agghist_need(hi) ? agghist_need(lo) : agghist_need(hi);
	agghist_raise(h, need);
	double mean = sum / (double)m, m2 = 0, scale = agghist_scale(h);
	for (size_t i = 0; i < n; i++)
		if (agghist_binnable(x[i])) {
			m2 += (x[i] - mean) * (x[i] - mean);
			h->bin[agghist_index_scaled(x[i], scale)]++;
		}
	h->min = h->n ? fmin(h->min, lo) : lo;
	h->max = h->n ? fmax(h->max, hi) : hi;
	agghist_moments(h, m, mean, m2);
}

void agghist_merge(struct agghist *h, const struct agghist *o)
{
	h->unbinned += o->unbinned;
	if (o->n == 0)
		return;
	struct agghist b = *o;
	agghist_raise(&b, h->exp);
	agghist_raise(h, b.exp);
	for (int i = 0; i < AGGHIST_BINS; i++)
		h->bin[i] += b.bin[i];
	h->min = h->n ? fmin(h->min, o->min) : o->min;
	h->max = h->n ? fmax(h->max, o->max) : o->max;
	agghist_moments(h, o->n, o->mean, o->m2);
}

double agghist_width(const struct agghist *h)
{
	return ldexp(1, h->exp + 1 - LOG2_BINS);
}

double agghist_edge(const struct agghist *h, int i)
{
	return (i - HALF) * agghist_width(h);
}

double agghist_std(const struct agghist *h)
{
	return h->n ? sqrt(h->m2 / (double)h->n) : 0;
}

const char *agghist_check(const struct agghist *h)
{
	if (h->exp < AGGHIST_MIN_EXP || h->exp > AGGHIST_MAX_EXP)
		return "exp out of range";
	uint64_t sum = 0;
	int first = -1, last = -1;
	for (int i = 0; i < AGGHIST_BINS; i++) {
		if (h->bin[i] > h->n - sum)
			return "the bins hold more values than n";
		sum += h->bin[i];
		if (h->bin[i])
			last = i, first = first < 0 ? i : first;
	}
	if (sum != h->n)
		return "the bins do not add up to n";
	if (!isfinite(h->mean) || !isfinite(h->m2) || h->m2 < 0 || !isfinite(h->min) || !isfinite(h->max))
		return "mean, m2, min or max out of range";
	if (h->n == 0)
		return h->mean == 0 && h->m2 == 0 && h->min == 0 && h->max == 0 ? NULL : "moments of no values";
	if (h->min > h->max)
		return "min above max";
	if (agghist_index(h, h->min) != first || agghist_index(h, h->max) != last || agghist_need(h->min) > h->exp ||
	    agghist_need(h->max) > h->exp)
		return "min and max do not fall in the first and last occupied bins";
	return NULL;
}
