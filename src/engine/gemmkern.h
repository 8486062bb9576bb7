/* gemmkern.h -- attnscope's own single-threaded sgemm for CPUs with AVX2 and FMA (private to the
 * engine: gemm.c runs it as a third library beside OpenBLAS and oneDNN, chosen by measurement).
 *
 * Why a kernel of our own: OpenBLAS packs the weight matrix into its panel format again on every
 * call, which at the 8-32 rows of a keystroke's forward costs as much as the product, and its sums
 * depend on where a row sits among the call's rows (token reuse then works in blocks of 12 rows).
 * This kernel reads the weights where they lie (no packing) and sums every element of C in an
 * order fixed by K alone: not by the row count, the column count or where the element sits in the
 * call. So a row gets the same bits in any call, and a query's scores and context the same bits
 * against any number of keys (zero probabilities beyond add exactly nothing). */
#ifndef ATTNSCOPE_GEMMKERN_H
#define ATTNSCOPE_GEMMKERN_H

#include <stdbool.h>

/* True when the CPU runs the kernel (AVX2 and FMA, and the OS saves the AVX registers). */
bool gemmkern_available(void);

/* Row-major C[m][n] = ALPHA · A[m][k] · op(B) + BETA · C, as gemm() (gemm.h): op(B) = Bᵀ when
 * TRANS_B (B [n][k], a torch Linear's weight), else B ([k][n], GPT-2's Conv1D). Only when
 * gemmkern_available(). The sum of element (i, j):
 *   TRANS_B: over blocks of GEMMKERN_KC depths, in order; within a block, 8 lanes (depth mod 8),
 *            each a chain of fused multiply-adds, added in a fixed tree ((0+1)+(2+3))+((4+5)+(6+7));
 *   else:    one chain of fused multiply-adds over the depths in order.
 * Then ALPHA · sum (when ALPHA ≠ 1) + BETA · C (when BETA ≠ 0; C itself when BETA = 1). */
void gemmkern_sgemm(bool trans_b, int m, int n, int k, float alpha, const float *a, int lda, const float *b,
		    int ldb, float beta, float *c, int ldc);

#define GEMMKERN_KC 256

#endif
