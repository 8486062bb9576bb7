/* gemm.c -- the engine's matrix product on the configured GEMM library (see gemm.h).
 * A oneDNN build uses oneDNN where its AVX-512 kernels run: on this project's reference machine
 * (Zen 4, where OpenBLAS is held to its Haswell kernels) its sgemm ran twice as fast as OpenBLAS's
 * on one core. Elsewhere it uses OpenBLAS: oneDNN's AVX2 kernels were not faster, their rounding
 * moved check_analysis's q.k dot products past its tolerance, and they read past their own buffers
 * (tools/valgrind.supp). */
#include "config.h"

#include "engine/gemm.h"

#include <cblas.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef GEMM_DNNL
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

static bool dnnl_on;
static pthread_once_t dnnl_once = PTHREAD_ONCE_INIT;

static void gemm_choose(void)
{
	dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
	dnnl_on = (isa & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core;
}

static bool gemm_dnnl(void)
{
	pthread_once(&dnnl_once, gemm_choose);
	return dnnl_on;
}

/* Debian's oneDNN runs on OpenMP: each calling thread asks for a team of one, as our threads share
 * the work; a team per call on a busy 2-core machine cost more than it saved. */
static _Thread_local bool omp_single;

/* From this many rows of A on, oneDNN 2.6 computes each row of C with the same sums whatever the
 * number of rows (measured for K 64 .. 3072, both layouts, beta 0 and 1); with fewer, it takes
 * other kernels whose rounding differs. Fewer rows are computed as this many (zero rows added), so
 * a row's result never depends on how many rows were computed with it: a run that reuses earlier
 * tokens (forward_run_from) computes the new ones exactly as a whole run does. (Unpadded, those
 * kernels also moved check_analysis's dot products past its tolerance.) */
#define GEMM_MIN_ROWS 16

static void gemm_call(bool trans_b, int m, int n, int k, float alpha, const float *a, int lda, const float *b,
		      int ldb, float beta, float *c, int ldc)
{
	/* dnnl_sgemm is row-major; its only failures are invalid arguments, which the engine never passes */
	(void)dnnl_sgemm('N', trans_b ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

static void gemm_onednn(bool trans_b, int m, int n, int k, float alpha, const float *a, int lda, const float *b,
			int ldb, float beta, float *c, int ldc)
{
	if (!omp_single) {
		omp_set_num_threads(1);
		omp_single = true;
	}
	float *pad = m < GEMM_MIN_ROWS ? calloc((size_t)GEMM_MIN_ROWS * ((size_t)k + n), sizeof(float)) : NULL;
	if (!pad) { /* enough rows (or no memory for the padding: the same values within rounding) */
		gemm_call(trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
		return;
	}
	float *pa = pad, *pc = pad + (size_t)GEMM_MIN_ROWS * k;
	for (int i = 0; i < m; i++) {
		memcpy(pa + (size_t)i * k, a + (size_t)i * lda, (size_t)k * sizeof(float));
		if (beta != 0)
			memcpy(pc + (size_t)i * n, c + (size_t)i * ldc, (size_t)n * sizeof(float));
	}
	gemm_call(trans_b, GEMM_MIN_ROWS, n, k, alpha, pa, k, b, ldb, beta, pc, n);
	for (int i = 0; i < m; i++)
		memcpy(c + (size_t)i * ldc, pc + (size_t)i * n, (size_t)n * sizeof(float));
	free(pad);
}
#else
static bool gemm_dnnl(void)
{
	return false;
}
#endif

void gemm(bool trans_b, int m, int n, int k, float alpha, const float *a, int lda, const float *b, int ldb,
	  float beta, float *c, int ldc)
{
	if (m <= 0 || n <= 0)
		return;
#ifdef GEMM_DNNL
	if (gemm_dnnl()) {
		gemm_onednn(trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
		return;
	}
#endif
	cblas_sgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb,
		    beta, c, ldc);
}

bool gemm_threads_itself(void)
{
	return !gemm_dnnl();
}

/* OpenBLAS's rows. Measured with 0.3.21's Zen kernels: single-threaded, it takes the rows of A 12
 * at a time, rounding the first 6 and the last 6 of each 12 differently, and the last rows (their
 * number mod 12) differently again; threaded, it also cuts the rows between its threads where their
 * number says (12 rows: 6 and 6). So a row's sums depend on its place from the call's first row and
 * on where the call ends, and on nothing else: a call starting 12k rows after a whole one's first
 * and ending on the same row computes each row as the whole one did. The block is found by computing
 * a probe both ways (1, 2, 3, 4, 6, ... rows), on both layouts and two shapes. */
#define GEMM_PROBE_ROWS 101 /* prime: every block leaves some last rows */

/* Whether calls starting BLOCK, 2 BLOCK, .. rows after a whole probe's first row (of GEMM_PROBE_ROWS
 * rows of A [rows][k]) give its rows bit for bit; WHOLE and PART hold GEMM_PROBE_ROWS x N floats. */
static bool gemm_probe(int block, bool trans_b, int k, int n, const float *a, const float *b, float *whole, float *part)
{
	enum CBLAS_TRANSPOSE tb = trans_b ? CblasTrans : CblasNoTrans;
	int ldb = trans_b ? k : n;
	cblas_sgemm(CblasRowMajor, CblasNoTrans, tb, GEMM_PROBE_ROWS, n, k, 1.0f, a, k, b, ldb, 0.0f, whole, n);
	for (int r0 = block; r0 < GEMM_PROBE_ROWS; r0 += block) {
		int m = GEMM_PROBE_ROWS - r0;
		cblas_sgemm(CblasRowMajor, CblasNoTrans, tb, m, n, k, 1.0f, a + (size_t)r0 * k, k, b, ldb, 0.0f, part, n);
		if (memcmp(part, whole + (size_t)r0 * n, (size_t)m * n * sizeof(float)) != 0)
			return false;
	}
	return true;
}

static int row_block;
static pthread_once_t rows_once = PTHREAD_ONCE_INIT;

static void gemm_measure_rows(void)
{
	static const int blocks[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48};
	static const struct {
		bool trans_b;
		int k, n;
	} shapes[] = {{true, 64, 96}, {false, 160, 64}}; /* scores-like and linear-like, above OpenBLAS's small sizes */
	row_block = 0;
	if (gemm_dnnl()) {
		row_block = 1;
		return;
	}
	size_t ka = 160, nb = 96;
	float *a = malloc(((size_t)GEMM_PROBE_ROWS * ka + ka * nb + 2 * (size_t)GEMM_PROBE_ROWS * nb) * sizeof(float));
	if (!a)
		return; /* no reuse */
	float *b = a + (size_t)GEMM_PROBE_ROWS * ka, *whole = b + ka * nb, *part = whole + (size_t)GEMM_PROBE_ROWS * nb;
	uint32_t s = 12345u;
	for (size_t i = 0; i < (size_t)GEMM_PROBE_ROWS * ka + ka * nb; i++) {
		s = s * 1664525u + 1013904223u;
		a[i] = (float)(s >> 8) / 8388608.0f - 1.0f; /* [-1, 1) */
	}
	for (size_t i = 0; i < sizeof blocks / sizeof blocks[0] && !row_block; i++) {
		bool all = true;
		for (size_t j = 0; j < sizeof shapes / sizeof shapes[0] && all; j++)
			all = gemm_probe(blocks[i], shapes[j].trans_b, shapes[j].k, shapes[j].n, a, b, whole, part);
		if (all)
			row_block = blocks[i];
	}
	free(a);
}

int gemm_row_block(void)
{
	pthread_once(&rows_once, gemm_measure_rows);
	return row_block;
}

bool gemm_avx512(void)
{
	return gemm_dnnl();
}

const char *gemm_backend(void)
{
	return gemm_dnnl() ? "oneDNN (AVX-512)" : "OpenBLAS";
}
