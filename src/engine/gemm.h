/* gemm.h -- the matrix product the engine runs, on the library that measured fastest on this machine
 * for the product's shape class among OpenBLAS, oneDNN (when built in: configure --with-gemm) and
 * attnscope's own kernel (CPUs with AVX2 and FMA: gemmkern.h) (gemmtune.h; the choice cached per
 * CPU and libraries, ATTNSCOPE_GEMM=openblas|dnnl|attnscope|auto forces it), so forward.c and
 * weights.c call one function whichever it is (private to the engine). */
#ifndef ATTNSCOPE_GEMM_H
#define ATTNSCOPE_GEMM_H

#include <stdbool.h>
#include <stddef.h>

/* Row-major C[m][n] = ALPHA · A[m][k] · op(B) + BETA · C, op(B) = Bᵀ when TRANS_B (B is [n][k]),
 * else B ([k][n]). Leading dimensions as in BLAS. */
void gemm(bool trans_b, int m, int n, int k, float alpha, const float *a, int lda, const float *b, int ldb,
	  float beta, float *c, int ldc);

/* True when the library threads one call itself (OpenBLAS for every class): the engine then leaves
 * a lone large product to it. False (oneDNN or attnscope's kernel for some class): one call is
 * single-threaded and the engine shares the work between its own threads (weights_parallel), cut
 * into pieces whose shapes do not depend on the thread count, so every thread count computes the
 * same sums. */
bool gemm_threads_itself(void);

/* Columns a weight tile (weights.c) is a multiple of: 64 on OpenBLAS; 128 with oneDNN (its 64-column
 * tiles ran at 60 % of its rate); 192 with attnscope's kernel (whole panels of its 24 columns). */
int gemm_tile_columns(void);

/* Packed weights (gemmkern.h): whether products of depth K in TRANS_B's layout run on attnscope's
 * kernel, which can read op(B) from a copy packed once in its order (gemm_pack) instead of packing
 * it in every call: the same bits, the copy's memory for the time. */
bool gemm_packs(bool trans_b, int k);
/* Floats of the packed copy of op(B) [k][n]; columns of op(B) per block of it (a tile starting at a
 * multiple of these columns, J0, has its own packed copy at J0 · K). */
size_t gemm_packed_floats(int n, int k);
int gemm_packed_block(void);
/* Pack op(B) (B as gemm() takes it) into OUT (gemm_packed_floats, 32-byte aligned). Only where
 * gemm_packs(TRANS_B, K). */
void gemm_pack(bool trans_b, int n, int k, const float *b, int ldb, float *out);
/* A [m][k] packed once for the calls of a linear's tiles: gemm_packed_a_floats(M, K) floats. */
size_t gemm_packed_a_floats(int m, int k);
void gemm_pack_a(int m, int k, const float *a, int lda, float *out);
/* The same in pieces that threads may run at once: piece P of gemm_pack_a_parts(M, K). */
int gemm_pack_a_parts(int m, int k);
void gemm_pack_a_part(int m, int k, const float *a, int lda, float *out, int piece);
/* gemm() with op(B) from its packed copy PACKED, A from APACKED when not NULL, and BIAS [n] added to
 * every row when not NULL (gemmkern_sgemm_packed). Only where gemm_packs. */
void gemm_packed(int m, int n, int k, float alpha, const float *a, int lda, const float *apacked, const float *packed,
		 float beta, const float *bias, float *c, int ldc);
/* The same with C where HEADS puts it (gemmkern.h: a trace's head-major q, k and v). */
struct gemm_heads;
void gemm_packed_heads(int m, int n, int k, float alpha, const float *a, int lda, const float *apacked,
		       const float *packed, float beta, const float *bias, const struct gemm_heads *heads);

/* Rows of A in a block B such that a row of C gets the very same sums in every call that starts a
 * multiple of B rows after a whole call's first row and ends on the same row, single-threaded (a run
 * reusing a text's first tokens computes the others so: model_run_reuse), on every class's
 * library. Measured at the first call (with the choice of libraries): 12 on OpenBLAS's Zen kernels
 * (and whenever a class runs on OpenBLAS); 1 on attnscope's kernel, and on oneDNN as gemm.c calls
 * it where its sums do not depend on the number of keys either (AVX-512), else 8 (AVX2:
 * attnscore_block); 0 when no block up to 48 rows holds: no reuse. */
int gemm_row_block(void);

/* True when oneDNN's AVX-512 kernels run every class of products. The engine's AVX-512 vector math (ops.c's
 * libmvec softmax and GELU) goes with them: the fidelity suites pass with both together and with
 * OpenBLAS and the scalar functions, while OpenBLAS with the vector math moved check_analysis's q.k
 * dot products 1.3e-5 from numpy's (tolerance 1e-5): not libmvec's error as such, those dots sit at
 * the float32 rounding noise (ops.c says more). */
bool gemm_avx512(void);

/* OpenBLAS held to one thread until the matching end (nests; the last end restores its count):
 * weights_threads_begin's. Returns OpenBLAS's thread count before the first begin. */
int gemm_serial_begin(void);
void gemm_serial_end(void);

/* The libraries' names, for the benchmark and --version. */
const char *gemm_backend(void);

/* Lines for `attnscope --version --verbose` and the benchmark: the library of each class, both
 * libraries' measured rates, how the choice was made (measured, cached, forced), the cache file, its
 * key and the row block. Writes at most SIZE bytes to OUT (NUL-terminated); returns the length
 * wanted, as snprintf. */
size_t gemm_describe(char *out, size_t size);

#endif
