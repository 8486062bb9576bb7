/* mxfp4.h -- MXFP4 weights (OCP microscaling: 4-bit E2M1 values in blocks of 32 that share one E8M0
 * scale) read where the safetensors file has them, beside weights.h's F32/F16/BF16: gpt-oss ships its
 * experts so (`*_blocks` and `*_scales` U8 tensors; quantization_config quant_method "mxfp4").
 *
 * A matrix is never widened whole (gpt-oss-20b's experts would take 4 times their 12 GB in float32):
 * a product decodes a tile of rows at a time into the caller's scratch and multiplies it, so only the
 * experts a forward pass routes a token to are read, each once per layer and pass. Decoding is exact:
 * an E2M1 code times a power of two is a float32 (transformers' convert_moe_packed_tensors gives the
 * same numbers in its float32 path). Private to the engine. */
#ifndef ATTNSCOPE_MXFP4_H
#define ATTNSCOPE_MXFP4_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "engine/safetensors.h"

#define MXFP4_BLOCK 32         /* values per scale */
#define MXFP4_TILE_ROWS 64     /* rows a product decodes at a time */

/* EXPERTS matrices of ROWS x COLS (row r = output r, its COLS inputs: a torch Linear's [out][in]). */
struct mxfp4 {
	const uint8_t *blocks; /* [experts][rows][cols / 32][16] two codes a byte: column 2i in the low nibble,
	                        * 2i + 1 in the high one */
	const uint8_t *scales; /* [experts][rows][cols / 32] E8M0: the block's values times 2^(s - 127) */
	int64_t experts, rows, cols;
};

/* Check BLOCKS and SCALES (U8, of the shapes above) for EXPERTS matrices of ROWS x COLS (COLS a multiple
 * of 32) and describe them in *OUT; an error names the tensor and what it should be. */
int mxfp4_bind(const struct st_tensor *blocks, const struct st_tensor *scales, int64_t experts, int64_t rows,
	       int64_t cols, struct mxfp4 *out, struct err *e);

/* Bytes one of W's matrices takes in the file: half a byte a value, a byte of scale per 32. */
size_t mxfp4_expert_bytes(const struct mxfp4 *w);

/* Rows R0 .. R0+NR-1 of matrix EXPERT as float32 into DST [nr][cols]. */
void mxfp4_rows(const struct mxfp4 *w, int64_t expert, int64_t r0, int64_t nr, float *dst);

/* Y[n][rows] (row stride LDY) = X[n][cols] · W_expertᵀ + B (B [rows] or NULL), tile by tile of
 * MXFP4_TILE_ROWS rows, the tiles shared between the engine's threads (weights_parallel). For up to 16
 * tokens on a CPU with AVX2 and FMA each row is decoded in registers into a row in the L1 cache and
 * dotted with every token at once (no tile of floats goes through memory); otherwise a tile is
 * decoded into scratch and multiplied by sgemm. SCRATCH (MXFP4_TILE_ROWS x cols floats) serves the tiles one after another when
 * there is no memory for more. */
void mxfp4_linear(const struct mxfp4 *w, int64_t expert, const float *x, int n, const float *b, float *y, int ldy,
		  float *scratch);

#endif
