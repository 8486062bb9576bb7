/* agghist.h -- a histogram of unbounded values that merges exactly, whatever order values come in.
 *
 * AGGHIST_BINS equal bins cover [−R, R) with R = 2^exp the smallest power of two (at least
 * 2^AGGHIST_MIN_EXP) such that every finite value seen lies in [−R, R). Bin i holds the values x
 * with floor(x / w) = i − AGGHIST_BINS/2, w = 2R / AGGHIST_BINS: x / w is exact (w is a power of two),
 * so the bin never depends on rounding. When a value needs a larger R the range doubles and bins
 * merge in pairs (bin i goes to i/2 + AGGHIST_BINS/4), which is exactly the histogram the larger
 * range would have given from the start. So the bins depend only on the set of values: two
 * histograms merge by raising both to the larger range and adding counts, and shards merged in
 * any grouping equal one run. Beside the counts the exact moments (n, mean, M2, Chan's merge) and
 * the extremes are kept; values that are not finite, or so large that R would pass 2^AGGHIST_MAX_EXP,
 * are only counted. */
#ifndef ATTNSCOPE_AGGHIST_H
#define ATTNSCOPE_AGGHIST_H

#include <stddef.h>
#include <stdint.h>

#define AGGHIST_BINS 256
#define AGGHIST_MIN_EXP (-30)
#define AGGHIST_MAX_EXP 1000  /* below DBL_MAX's exponent, so R and the moments stay finite */

struct agghist {
	uint64_t n;        /* finite values */
	double mean, m2;   /* their mean and Σ (x − mean)² */
	double min, max;   /* their extremes (0 when n is 0) */
	uint64_t unbinned; /* NaN, infinite or |x| >= 2^AGGHIST_MAX_EXP: counted, not binned, not in the moments */
	int exp;           /* R = 2^exp */
	uint64_t bin[AGGHIST_BINS];
};

/* An empty histogram (R = 2^AGGHIST_MIN_EXP). */
void agghist_init(struct agghist *h);
/* Add the values X[n]: their moments are formed in two passes and merged in as one block, so a
 * histogram of one block has exactly the mean and M2 of that block's two-pass computation. */
void agghist_add(struct agghist *h, const double *x, size_t n);
/* Add O into H. */
void agghist_merge(struct agghist *h, const struct agghist *o);
/* Raise H's range to 2^EXP (no change when it is already as large). */
void agghist_raise(struct agghist *h, int exp);
/* The lower edge of bin I and the bin width. */
double agghist_edge(const struct agghist *h, int i);
double agghist_width(const struct agghist *h);
/* Population standard deviation sqrt(M2 / n) (0 when n is 0). */
double agghist_std(const struct agghist *h);
/* Check a histogram read from a file: counts summing to n, exp in range, occupied bins within
 * [min, max]; NULL when it holds, else why. */
const char *agghist_check(const struct agghist *h);

#endif
