/* gemm.h -- the matrix product the engine runs, on the GEMM library chosen at configure time
 * (--with-gemm: oneDNN, used where its AVX-512 kernels run, else OpenBLAS; or OpenBLAS alone), so
 * forward.c and weights.c call one function whichever it is (private to the engine). */
#ifndef ATTNSCOPE_GEMM_H
#define ATTNSCOPE_GEMM_H

#include <stdbool.h>

/* Row-major C[m][n] = ALPHA · A[m][k] · op(B) + BETA · C, op(B) = Bᵀ when TRANS_B (B is [n][k]),
 * else B ([k][n]). Leading dimensions as in BLAS. */
void gemm(bool trans_b, int m, int n, int k, float alpha, const float *a, int lda, const float *b, int ldb,
	  float beta, float *c, int ldc);

/* True when the library threads one call itself (OpenBLAS): the engine then leaves a lone large
 * product to it. False (oneDNN here): one call is single-threaded and the engine shares the work
 * between its own threads (weights_parallel), cut into pieces whose shapes do not depend on the
 * thread count, so every thread count computes the same sums. */
bool gemm_threads_itself(void);

/* Rows of A in a block B such that a row of C gets the very same sums in every call that starts a
 * multiple of B rows after a whole call's first row and ends on the same row, single-threaded (a run
 * reusing a text's first tokens computes the others so: model_run_reuse). 1 on oneDNN's AVX-512
 * kernels (the padding in gemm.c); on OpenBLAS measured at the first call (12 on Zen: gemm.c);
 * 0 when no block up to 48 rows holds: no reuse. The first call measures, with OpenBLAS held to one
 * thread (weights_threads_begin). */
int gemm_row_block(void);

/* True when oneDNN's AVX-512 kernels run the products. The engine's AVX-512 vector math (ops.c's
 * libmvec softmax and GELU) goes with them: the fidelity suites pass with both together and with
 * OpenBLAS and the scalar functions, while OpenBLAS with the vector math moved check_analysis's q.k
 * dot products 1.3e-5 from numpy's (tolerance 1e-5): not libmvec's error as such, those dots sit at
 * the float32 rounding noise (ops.c says more). */
bool gemm_avx512(void);

/* The library's name, for the benchmark and --version. */
const char *gemm_backend(void);

#endif
