/* gemmkern.h -- attnscope's own single-threaded sgemm for CPUs with AVX2 and FMA, in tiles of AVX-512
 * where the CPU has it (private to the engine: gemm.c runs it as a third library beside OpenBLAS and
 * oneDNN, chosen by measurement).
 *
 * Why a kernel of our own: OpenBLAS's sums depend on where a row sits among the call's rows (token
 * reuse then works in blocks of 12 rows), and at the 8-32 rows of a keystroke's forward its
 * products ran at a third to two thirds of its rate. This kernel sums every element of C in an
 * order fixed by K alone: not by the row count, the column count or where the element sits in the
 * call. So a row gets the same bits in any call, and a query's scores and context the same bits
 * against any number of keys (zero probabilities beyond add exactly nothing). */
#ifndef ATTNSCOPE_GEMMKERN_H
#define ATTNSCOPE_GEMMKERN_H

#include <stdbool.h>
#include <stddef.h>

/* True when the CPU runs the kernel (AVX2 and FMA, and the OS saves the AVX registers). */
bool gemmkern_available(void);

/* The kernel's tiles and version, in the GEMM cache's key (gemmtune.h: a new kernel is measured
 * again): "AVX-512 8x48 v6" where the CPU has AVX-512F, else "AVX2 4x24 v5" ("none" without AVX2).
 * Both give every element the very same bits; only the layout of the packed copies differs. */
const char *gemmkern_version(void);
/* The instruction set of those tiles, "AVX2" or "AVX-512" ("none" without AVX2), and their columns:
 * the width of a packed copy's panels (24 or 48; 0 without AVX2). */
const char *gemmkern_isa(void);
int gemmkern_panel_columns(void);

/* Run the tiles NAME ("avx2" or "avx512") instead of the widest the CPU runs: false, and no change,
 * when the CPU lacks them or NAME is neither. Only before the first product or packed copy (the
 * copies' layout follows the tiles): ATTNSCOPE_GEMM_KERNEL (gemm.c), and the tests of both. */
bool gemmkern_use(const char *name);

/* Row-major C[m][n] = ALPHA · A[m][k] · op(B) + BETA · C, as gemm() (gemm.h): op(B) = Bᵀ when
 * TRANS_B (B [n][k], a torch Linear's weight), else B ([k][n], GPT-2's Conv1D). Only when
 * gemmkern_available(). The sum of element (i, j) is one chain of fused multiply-adds over the
 * depths in order, from 0, in either layout; then ALPHA · sum (when ALPHA ≠ 1), plus C (BETA = 1)
 * or BETA · C (another BETA ≠ 0), each rounded on its own. */
void gemmkern_sgemm(bool trans_b, int m, int n, int k, float alpha, const float *a, int lda, const float *b,
		    int ldb, float beta, float *c, int ldc);

#define GEMMKERN_KC 128 /* depths per block (the chains run on through memory between blocks) */
#define GEMMKERN_NC 192 /* columns per block, a multiple of the tiles' 24 and 48 */

/* A packed copy of op(B) [k][n]: the order the kernel reads it in, built once (for a weight used
 * by many forward passes) instead of in every call. At 32 rows, where copying a weight tile cost a
 * third of the call, the calls then ran 1.15 to 1.3 times as fast (check_gemmkern: the very same
 * bits as from B itself). The copy of columns J0 .. (J0 a multiple of GEMMKERN_NC) starts at
 * J0 · K floats: it is itself the packed copy of those columns. */
size_t gemmkern_packed_floats(int n, int k);
/* Pack op(B) (as gemmkern_sgemm takes B) into OUT, gemmkern_packed_floats(N, K) floats, 32-byte
 * aligned. */
void gemmkern_pack(bool trans_b, int n, int k, const float *b, int ldb, float *out);
/* A packed the same way, once for the calls of a linear's tiles (each call packed it again, for
 * each of its blocks of columns): gemmkern_packed_a_floats(M, K) floats. */
size_t gemmkern_packed_a_floats(int m, int k);
void gemmkern_pack_a(int m, int k, const float *a, int lda, float *out);
/* The same in parts that may run at once on several threads (each writes only its own floats of
 * OUT): piece P of gemmkern_pack_a_parts(M, K), one block of rows at one block of depths. */
int gemmkern_pack_a_parts(int m, int k);
void gemmkern_pack_a_part(int m, int k, const float *a, int lda, float *out, int piece);
/* gemmkern_sgemm's C with op(B) from its packed copy PACKED (bit for bit the same), and A from its
 * packed copy APACKED when not NULL (A itself is read for a row or two); BIAS [n], when not NULL, is
 * added last to every row (with BETA 0: the same bits as C filled with BIAS and BETA 1, one add). */
void gemmkern_sgemm_packed(int m, int n, int k, float alpha, const float *a, int lda, const float *apacked,
			   const float *packed, float beta, const float *bias, float *c, int ldc);

/* Where C's columns go when they are not side by side: a layer's q, k and v projected straight into
 * a trace's head-major arrays. The product's columns come in blocks of WIDTH (a head), and a
 * block's row i lies at BASE + block · STRIDE + i · WIDTH: the columns from COL0[p] on are part p's
 * (its own BASE; up to three: q, k and v of one fused product; COL0[0] = 0, each a multiple of
 * WIDTH). A call's column 0 is column FIRST of them (a tile of a linear's columns). WIDTH is a
 * multiple of 16, so that no vector of the tiles straddles two heads. */
struct gemm_heads {
	int width;
	size_t stride;
	int parts;
	int col0[3];
	float *base[3];
	int first;
};

/* Element (I, J) of H's product, J counted from column FIRST's. */
static inline float *gemm_heads_at(const struct gemm_heads *h, int i, int j)
{
	int c = h->first + j, p = h->parts - 1;
	while (p > 0 && c < h->col0[p])
		p--;
	c -= h->col0[p];
	return h->base[p] + (size_t)(c / h->width) * h->stride + (size_t)i * h->width + c % h->width;
}

/* gemmkern_sgemm_packed with C where HEADS puts it. */
void gemmkern_sgemm_packed_heads(int m, int n, int k, float alpha, const float *a, int lda, const float *apacked,
				 const float *packed, float beta, const float *bias, const struct gemm_heads *heads);

#endif
