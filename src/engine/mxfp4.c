/* mxfp4.c -- MXFP4 weights decoded by tiles from the mapping (mxfp4.h), as transformers'
 * convert_moe_packed_tensors decodes them: a lookup of the 16 E2M1 codes, the low nibble first, then
 * ldexp by the block's scale minus 127. */
#include "engine/mxfp4.h"

#include <math.h>
#include <stdio.h>

#include "engine/gemm.h"
#include "engine/weights.h"

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
