/* mxfp4.c -- MXFP4 weights decoded by tiles from the mapping (mxfp4.h), as transformers'
 * convert_moe_packed_tensors decodes them: a lookup of the 16 E2M1 codes, the low nibble first, then
 * ldexp by the block's scale minus 127. */
#include "engine/mxfp4.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/gemm.h"
#include "engine/weights.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define MXFP4_X86 1
#endif

/* The E2M1 values of the 16 codes: sign bit 3, then exponent and mantissa. */
static const float mxfp4_lut[16] = {+0.0f, +0.5f, +1.0f, +1.5f, +2.0f, +3.0f, +4.0f, +6.0f,
				    -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

static void mxfp4_shape_str(const int64_t *shape, int ndim, char *out, size_t n)
{
	size_t used = (size_t)snprintf(out, n, "[");
	for (int i = 0; i < ndim && used < n; i++)
		used += (size_t)snprintf(out + used, n - used, "%s%lld", i ? ", " : "", (long long)shape[i]);
	if (used < n)
		snprintf(out + used, n - used, "]");
}

/* T must be U8 of shape WANT [NDIM]. */
static int mxfp4_expect(const struct st_tensor *t, const int64_t *want, int ndim, struct err *e)
{
	char have[96], need[96];
	bool ok = t->ndim == ndim;
	for (int i = 0; ok && i < ndim; i++)
		ok = t->shape[i] == want[i];
	if (t->dtype != ST_U8)
		return err_set(e, "%s: MXFP4 tensor '%s' has dtype %s; expected U8", t->file, t->name, t->dtype_name);
	if (ok)
		return 0;
	mxfp4_shape_str(t->shape, t->ndim, have, sizeof have);
	mxfp4_shape_str(want, ndim, need, sizeof need);
	return err_set(e, "%s: MXFP4 tensor '%s' has shape %s, expected %s from config.json", t->file, t->name, have, need);
}

int mxfp4_bind(const struct st_tensor *blocks, const struct st_tensor *scales, int64_t experts, int64_t rows,
	       int64_t cols, struct mxfp4 *out, struct err *e)
{
	if (cols <= 0 || cols % MXFP4_BLOCK)
		return err_set(e, "%s: MXFP4 tensor '%s': its rows of %lld values are not whole blocks of %d", blocks->file,
			       blocks->name, (long long)cols, MXFP4_BLOCK);
	int64_t g = cols / MXFP4_BLOCK;
	const int64_t bshape[4] = {experts, rows, g, MXFP4_BLOCK / 2}, sshape[3] = {experts, rows, g};
	if (mxfp4_expect(blocks, bshape, 4, e) < 0 || mxfp4_expect(scales, sshape, 3, e) < 0)
		return -1;
	*out = (struct mxfp4){blocks->data, scales->data, experts, rows, cols};
	return 0;
}

size_t mxfp4_expert_bytes(const struct mxfp4 *w)
{
	return (size_t)w->rows * (size_t)w->cols / 2 + (size_t)w->rows * (size_t)(w->cols / MXFP4_BLOCK);
}

void mxfp4_rows(const struct mxfp4 *w, int64_t expert, int64_t r0, int64_t nr, float *dst)
{
	int64_t g = w->cols / MXFP4_BLOCK;
	for (int64_t r = 0; r < nr; r++) {
		size_t row = (size_t)(expert * w->rows + r0 + r); /* the row's first block */
		const uint8_t *blk = w->blocks + row * (size_t)g * (MXFP4_BLOCK / 2), *sc = w->scales + row * (size_t)g;
		float *d = dst + (size_t)r * w->cols;
		for (int64_t b = 0; b < g; b++) {
			int shift = (int)sc[b] - 127;
			const uint8_t *bb = blk + b * (MXFP4_BLOCK / 2);
			float *db = d + b * MXFP4_BLOCK;
			if (shift >= -126 && shift <= 127) { /* 2^shift a normal float: the product is ldexp's result,
			                                       * at a third of the cost */
				float f = ldexpf(1.0f, shift);
				for (int i = 0; i < MXFP4_BLOCK / 2; i++) {
					db[2 * i] = mxfp4_lut[bb[i] & 0x0F] * f;
					db[2 * i + 1] = mxfp4_lut[bb[i] >> 4] * f;
				}
				continue;
			}
			for (int i = 0; i < MXFP4_BLOCK / 2; i++) { /* subnormal or overflowing scales: as ldexp */
				db[2 * i] = ldexpf(mxfp4_lut[bb[i] & 0x0F], shift);
				db[2 * i + 1] = ldexpf(mxfp4_lut[bb[i] >> 4], shift);
			}
		}
	}
}

struct mxfp4_job {
	const struct mxfp4 *w;
	int64_t expert;
	const float *x;
	int n, ldy;
	float *y;
};

#ifdef MXFP4_X86

/* 2^E as a float for E in -126 .. 127 (a normal float's exponent), without ldexpf's call. */
static inline float mxfp4_pow2(int e)
{
	uint32_t bits = (uint32_t)(e + 127) << 23;
	float f;
	memcpy(&f, &bits, sizeof f);
	return f;
}

/* Y[i][r0..r0+nr) = X[i] · rows r0.. of matrix EXPERT: each row decoded in registers (a pshufb lookup of
 * the doubled codes, then the block's halved power of two) into DEC (cols floats, in the L1 cache),
 * never to memory beyond it, then dotted with each token's x with four independent sums (columns
 * 32b + 0..7, 8..15, 16..23, 24..31), added lane by lane at the end: the same sums whatever N is, so a
 * token's result does not depend on the others. A block whose scale is not a normal float's power for
 * the halved codes takes the scalar decode. */
__attribute__((target("avx2,fma"))) static void mxfp4_rows_fused(const struct mxfp4 *w, int64_t expert,
								  const float *x, int n, int64_t r0, int nr,
								  float *y, int ldy, float *dec)
{
	const __m128i lut = _mm_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12);
	const __m128i low4 = _mm_set1_epi8(0x0F);
	int64_t cols = w->cols, g = cols / MXFP4_BLOCK;
	for (int r = 0; r < nr; r++) {
		size_t row = (size_t)(expert * w->rows + r0 + r);
		const uint8_t *blk = w->blocks + row * (size_t)g * (MXFP4_BLOCK / 2), *sc = w->scales + row * (size_t)g;
		for (int64_t b = 0; b < g; b++) {
			float *d = dec + b * MXFP4_BLOCK;
			const uint8_t *bb = blk + b * (MXFP4_BLOCK / 2);
			int shift = (int)sc[b] - 127 - 1; /* the codes are doubled: halve the scale */
			if (shift < -126 || shift > 127) {
				for (int k = 0; k < MXFP4_BLOCK / 2; k++) { /* as mxfp4_rows: ldexp of each value */
					d[2 * k] = ldexpf(mxfp4_lut[bb[k] & 0x0F], shift + 1);
					d[2 * k + 1] = ldexpf(mxfp4_lut[bb[k] >> 4], shift + 1);
				}
				continue;
			}
			__m128i bytes = _mm_loadu_si128((const __m128i *)(const void *)bb);
			__m128i lo = _mm_and_si128(bytes, low4), hi = _mm_and_si128(_mm_srli_epi16(bytes, 4), low4);
			/* columns 2k (low nibble) and 2k + 1 (high nibble): interleaved, 0..15 then 16..31 */
			__m128i c0 = _mm_shuffle_epi8(lut, _mm_unpacklo_epi8(lo, hi));
			__m128i c1 = _mm_shuffle_epi8(lut, _mm_unpackhi_epi8(lo, hi));
			__m256 s = _mm256_set1_ps(mxfp4_pow2(shift));
			_mm256_storeu_ps(d, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(c0)), s));
			_mm256_storeu_ps(d + 8, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(c0, 8))), s));
			_mm256_storeu_ps(d + 16, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(c1)), s));
			_mm256_storeu_ps(d + 24, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(c1, 8))), s));
		}
		for (int i = 0; i < n; i++) {
			const float *xi = x + (size_t)i * cols;
			__m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
			for (int64_t c = 0; c < cols; c += MXFP4_BLOCK) {
				a0 = _mm256_fmadd_ps(_mm256_loadu_ps(xi + c), _mm256_loadu_ps(dec + c), a0);
				a1 = _mm256_fmadd_ps(_mm256_loadu_ps(xi + c + 8), _mm256_loadu_ps(dec + c + 8), a1);
				a2 = _mm256_fmadd_ps(_mm256_loadu_ps(xi + c + 16), _mm256_loadu_ps(dec + c + 16), a2);
				a3 = _mm256_fmadd_ps(_mm256_loadu_ps(xi + c + 24), _mm256_loadu_ps(dec + c + 24), a3);
			}
			float a[8];
			_mm256_storeu_ps(a, _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
			y[(size_t)i * ldy + r0 + r] = ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
		}
	}
}

static bool mxfp4_has_avx2(void)
{
	static int has = -1;
	if (has < 0) {
		__builtin_cpu_init();
		has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
	}
	return has;
}
#endif

/* The largest token count the fused product serves: each row is decoded once and dotted with every
 * token's x, which must then stay in the L2 cache (16 x 2880 floats: 184 KB); beyond it one decoded tile
 * and sgemm over all the tokens cost less. A forward's usual share of an expert is a few tokens. */
#define MXFP4_FUSED_MAX_ROWS 16

/* Tile T by the fused product, each row decoded into DEC (cols floats). */
static void mxfp4_tile_fused(void *ctx, int t, float *dec)
{
#ifdef MXFP4_X86
	const struct mxfp4_job *j = ctx;
	int64_t r0 = (int64_t)t * MXFP4_TILE_ROWS;
	int nr = (int)(j->w->rows - r0 < MXFP4_TILE_ROWS ? j->w->rows - r0 : MXFP4_TILE_ROWS);
	mxfp4_rows_fused(j->w, j->expert, j->x, j->n, r0, nr, j->y, j->ldy, dec);
#else
	(void)ctx, (void)t, (void)dec;
#endif
}

/* Tile T: its rows decoded into TILE, then their outputs (columns of Y no other tile writes). */
static void mxfp4_tile(void *ctx, int t, float *tile)
{
	const struct mxfp4_job *j = ctx;
	int cols = (int)j->w->cols;
	int64_t r0 = (int64_t)t * MXFP4_TILE_ROWS;
	int nr = (int)(j->w->rows - r0 < MXFP4_TILE_ROWS ? j->w->rows - r0 : MXFP4_TILE_ROWS);
	mxfp4_rows(j->w, j->expert, r0, nr, tile);
	gemm(true, j->n, nr, cols, 1.0f, j->x, cols, tile, cols, 0.0f, j->y + r0, j->ldy);
}

void mxfp4_linear(const struct mxfp4 *w, int64_t expert, const float *x, int n, const float *b, float *y, int ldy,
		  float *scratch)
{
	struct mxfp4_job j = {w, expert, x, n, ldy, y};
	int tiles = (int)((w->rows + MXFP4_TILE_ROWS - 1) / MXFP4_TILE_ROWS);
#ifdef MXFP4_X86
	if (n <= MXFP4_FUSED_MAX_ROWS && mxfp4_has_avx2() &&
	    weights_parallel(tiles, (size_t)w->cols, mxfp4_tile_fused, &j) == 0) {
		if (b)
			for (int i = 0; i < n; i++)
				for (int64_t r = 0; r < w->rows; r++)
					y[(size_t)i * ldy + r] += b[r];
		return;
	}
#endif
	/* The tiles shared between the engine's threads, each decoding into its own scratch; without the
	 * memory for that, one after another in SCRATCH (the same tiles: the same numbers). */
	if (weights_parallel(tiles, (size_t)MXFP4_TILE_ROWS * w->cols, mxfp4_tile, &j) < 0)
		for (int t = 0; t < tiles; t++)
			mxfp4_tile(&j, t, scratch);
	if (b)
		for (int i = 0; i < n; i++)
			for (int64_t r = 0; r < w->rows; r++)
				y[(size_t)i * ldy + r] += b[r];
}
