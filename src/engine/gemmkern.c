/* gemmkern.c -- attnscope's own sgemm on AVX2 or AVX-512, its sums fixed by the depth alone (see
 * gemmkern.h).
 *
 * One kernel of outer products: a tile of MR rows of A against NR columns of op(B) keeps its
 * elements in registers (AVX2: 4 x 24, 12 accumulators of 8 floats; AVX-512: 8 x 48, 24 of 16,
 * twice the width and twice the rows; 8 x 32 where a call packs B itself and 32 wide leaves fewer
 * padding columns, as a head's 64 values); each element of C is one chain of fused multiply-adds in depth order,
 * carried from one depth block to the next through memory (a float stored and loaded back is the
 * same float). Both operands are copied first into the order the kernel reads them (as every fast
 * GEMM does): A's block as [depth][MR rows] per tile, op(B)'s as [depth][NR columns] per panel,
 * transposing B when it is [n][k] (a torch Linear's weight). The copies also free the kernel from
 * the cache conflicts of rows 3 or 12 KB apart. Rows past A's last row and columns past B's last
 * column are copied as zeros: every element is computed by the same instructions wherever it sits,
 * so a row's sums depend neither on the other rows of the call nor on the columns. The two tiles
 * compute each element by the same chain, so they give the same bits (check_gemmkern runs both);
 * only the packed copies' layouts differ, and the one kernel a process uses makes and reads them.
 * Blocks: MC rows x NC columns of C at a time (their running sums in PART until the last block of
 * depths, whose whole tiles write C from their registers: struct tile_out), depth in blocks of KC;
 * a panel of B (KC x NR floats, 12 or 24 KB) stays in L1 while the tiles of A's block (48 KB) come from
 * L2 (with KC 256 the panel and a tile of A no longer both fitted in L1 once the next panel was
 * fetched: a 32-row call from a packed copy ran at 65-70 GFLOP/s, against 83-86 with KC 128). With
 * B copied once per block of MC rows, up to MC rows read the weights once (at most KC depths, as a
 * head's scores: once per call). A copy of B packed
 * beforehand (gemmkern_pack: a weight, kept) is laid out in the order the blocks read it.
 * A row or two against B [k][n] (the one new token of a causal text's keystroke, GPT-2's layout)
 * skip the tiles: B streams a whole row of the call at a time, each element's chain run on in
 * PART in the same order (stream_rows); against a packed copy (either layout), the copy streams
 * from start to end (stream_packed). */
#include "config.h"

/* The kernel's speed is this file's reason to be: a debug build (-O0) still optimizes it, or it
 * would run 20 times slower, and the measured choice (gemmtune.c) would never take it there. And no
 * contraction: under -std=gnu11 an optimized build fuses store_c's beta · C + sum into one FMA, a
 * debug build does not, and the bits would depend on the build (check_gemmkern caught it). */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("O2", "fp-contract=off")
#endif

#include "engine/gemmkern.h"

#include <pthread.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define GEMMKERN_X86 1
#endif

#define KC GEMMKERN_KC
#define MC_MAX 128 /* the most rows of C per block (tile_kind's mc) */
#define NC GEMMKERN_NC /* a multiple of every tile's columns */
#define PF 64 /* floats ahead that pack_bt prefetches each row of B */
#define ROWS_AHEAD 4 /* rows of B [k][n] that pack_b and stream_rows prefetch ahead */
#define STREAM_ROWS 2  /* rows of A up to which B [k][n] is streamed (at 4 rows it ran slower than tiles) */

/* X rounded up to a multiple of UNIT: the rows of whole tiles, the columns of whole panels. */
static inline int round_up(int x, int unit)
{
	return (x + unit - 1) / unit * unit;
}

/* Where a whole tile's sums go after the last block of depths, straight from its registers (not
 * through PART and store_c: 5 % of a 128-token bert-base forward went to store_c's second pass; the
 * linears of that forward 60.1-64.1 -> 57.9-62.5 ms, its PV 1.7-1.9 -> 1.4-1.7 ms, interleaved):
 * C[r][0 .. NR) = ALPHA · sum + BETA · C (+ BIAS), the operations and roundings of store_row. */
struct tile_out {
	float *col[3];      /* row 0 of each of the tile's vectors of C (8 or 16 columns): side by side, or
			       in heads (struct gemm_heads) */
	int ldc;
	float alpha, beta;
	const float *bias;  /* the bias of the tile's first column, or NULL */
};

/* Where a block of C goes: its element (I, J) at C + I · LDC + J, or, with HEADS, at the product's
 * element (I0 + I, J0 + J) where HEADS puts it (LDC is then the heads' width: a head's rows apart). */
struct block_out {
	float *c;
	int ldc;
	float alpha, beta;
	const float *bias;  /* the bias of the block's first column, or NULL */
	const struct gemm_heads *heads;
	int i0, j0;
};

static float *block_at(const struct block_out *o, int i, int j)
{
	return o->heads ? gemm_heads_at(o->heads, o->i0 + i, o->j0 + j) : o->c + (size_t)i * o->ldc + j;
}

/* A shape of tile and the function that computes it: P[r][0 .. NR) (rows NC apart) = P + the
 * block's products of the tile's rows of A (AP [kc][MR]) and the panel of B (BP [kc][NR]), each
 * element's chain continued from P (from 0 when FIRST); with OUT, the sums go to C instead of P. Meanwhile it prefetches PF_LINES cache lines
 * from PF on (the next panel's share of this tile), spread evenly over its depths: issued all at
 * once before the tile, 24 prefetches from memory filled the core's line buffers and stalled it
 * (perf: 4 % of a 128-token bert-base forward on them). */
struct tile_kind {
	const char *name;    /* as gemmkern_use takes it */
	const char *isa;     /* as gemmkern_isa gives it */
	const char *version; /* in the GEMM cache's key */
	int mr, nr;          /* rows of A, columns of op(B) */
	int vw;              /* columns of a vector (8 or 16): a tile's NR in NR / VW vectors */
	int mc;              /* rows of C per block, a multiple of MR: the rows that read a panel of B while
				it is in L1 (with 8 x 48 tiles on an Intel Xeon with AVX-512, 128 rows made a
				128-token bert-base forward 13 % faster than 96, and a 512-token one 9-11 %) */
	void (*tile)(const float *ap, const float *bp, int kc, float *p, bool first, const float *pf, int pf_lines,
		     const struct tile_out *out);
	/* Narrower tiles of the same rows for a call that packs B itself (no layout to keep), where
	 * they compute fewer padding columns: a head's 64 values (48 + 48 wide computed 96 of them). */
	const struct tile_kind *narrow;
};

#ifdef GEMMKERN_X86

#define TARGET __attribute__((target("avx2,fma")))
#define TARGET512 __attribute__((target("avx512f,avx2,fma")))

/* A tile's loop over its KC depths, STEP4 running four depths and STEP one: 4 depths at a time, then
 * the prefetches due by then (PF_LINES over the KC depths in all; once a depth, their bookkeeping
 * slowed the 4 x 24 tile 6 %), then the last depths one by one. */
#define TILE_DEPTHS_BY4(STEP4, STEP)                                                                               \
	do {                                                                                                       \
		int due = 0, d = 0;                                                                                \
		for (; d + 4 <= kc; d += 4) {                                                                      \
			for (due += 4 * pf_lines; due >= kc; due -= kc, pf += 16)                                  \
				__builtin_prefetch(pf);                                                            \
			STEP4;                                                                                     \
		}                                                                                                  \
		for (; d < kc; d++)                                                                                \
			STEP;                                                                                      \
	} while (0)
#define TILE_DEPTHS(STEP) TILE_DEPTHS_BY4(((STEP), (STEP), (STEP), (STEP)), (STEP))

/* 4 rows x 24 columns, 12 accumulators of 8 floats. One depth: */
#define AVX2_ROW(r)                                                                                                \
	x = _mm256_broadcast_ss(ap + (r)), c##r##0 = _mm256_fmadd_ps(x, w0, c##r##0),                             \
	c##r##1 = _mm256_fmadd_ps(x, w1, c##r##1), c##r##2 = _mm256_fmadd_ps(x, w2, c##r##2)
#define AVX2_DEPTH()                                                                                               \
	w0 = _mm256_load_ps(bp), w1 = _mm256_load_ps(bp + 8), w2 = _mm256_load_ps(bp + 16), AVX2_ROW(0), AVX2_ROW(1), \
	AVX2_ROW(2), AVX2_ROW(3), bp += 24, ap += 4

/* Four depths of the same, written out: the 12 accumulators and B's 3 vectors and A's broadcast take
 * all 16 registers, and GCC 12 left one of B's vectors in memory (4 loads of it a depth instead of
 * one) and added register moves: one core, M = 128, K = N = 768 from a packed copy, 120 GFLOP/s
 * compiled, 129 so (the core's peak, measured by FMAs alone, 129.7). Each accumulator runs the same
 * fused multiply-adds in the same order: the same bits. */
#define AVX2_ASM_DEPTH(o)                                                                                          \
	"vmovaps " #o "*96(%[b]), %%ymm12\n\t"                                                                     \
	"vmovaps " #o "*96+32(%[b]), %%ymm13\n\t"                                                                  \
	"vmovaps " #o "*96+64(%[b]), %%ymm14\n\t"                                                                  \
	"vbroadcastss " #o "*16(%[a]), %%ymm15\n\t"                                                                \
	"vfmadd231ps %%ymm12, %%ymm15, %[c00]\n\tvfmadd231ps %%ymm13, %%ymm15, %[c01]\n\t"                          \
	"vfmadd231ps %%ymm14, %%ymm15, %[c02]\n\t"                                                                  \
	"vbroadcastss " #o "*16+4(%[a]), %%ymm15\n\t"                                                              \
	"vfmadd231ps %%ymm12, %%ymm15, %[c10]\n\tvfmadd231ps %%ymm13, %%ymm15, %[c11]\n\t"                          \
	"vfmadd231ps %%ymm14, %%ymm15, %[c12]\n\t"                                                                  \
	"vbroadcastss " #o "*16+8(%[a]), %%ymm15\n\t"                                                              \
	"vfmadd231ps %%ymm12, %%ymm15, %[c20]\n\tvfmadd231ps %%ymm13, %%ymm15, %[c21]\n\t"                          \
	"vfmadd231ps %%ymm14, %%ymm15, %[c22]\n\t"                                                                  \
	"vbroadcastss " #o "*16+12(%[a]), %%ymm15\n\t"                                                             \
	"vfmadd231ps %%ymm12, %%ymm15, %[c30]\n\tvfmadd231ps %%ymm13, %%ymm15, %[c31]\n\t"                          \
	"vfmadd231ps %%ymm14, %%ymm15, %[c32]\n\t"
#define AVX2_4DEPTHS()                                                                                             \
	({                                                                                                         \
		__asm__(AVX2_ASM_DEPTH(0) AVX2_ASM_DEPTH(1) AVX2_ASM_DEPTH(2) AVX2_ASM_DEPTH(3)                     \
			: [c00] "+x"(c00), [c01] "+x"(c01), [c02] "+x"(c02), [c10] "+x"(c10), [c11] "+x"(c11),      \
			  [c12] "+x"(c12), [c20] "+x"(c20), [c21] "+x"(c21), [c22] "+x"(c22), [c30] "+x"(c30),      \
			  [c31] "+x"(c31), [c32] "+x"(c32)                                                          \
			: [a] "r"(ap), [b] "r"(bp), "m"(*(const float(*)[16])ap), "m"(*(const float(*)[96])bp)    \
			: "xmm12", "xmm13", "xmm14", "xmm15");                                                     \
		bp += 96, ap += 16;                                                                                \
	})
/* One vector V of a tile's sums as store_row makes C's element of it (C: that element in C). */
TARGET static inline __attribute__((always_inline)) __m256 out_avx2(__m256 v, const struct tile_out *o, const float *c,
								     const float *bias)
{
	if (o->alpha != 1.0f)
		v = _mm256_mul_ps(_mm256_set1_ps(o->alpha), v);
	if (o->beta == 1.0f)
		v = _mm256_add_ps(v, _mm256_loadu_ps(c));
	else if (o->beta != 0.0f)
		v = _mm256_add_ps(v, _mm256_mul_ps(_mm256_set1_ps(o->beta), _mm256_loadu_ps(c)));
	if (bias)
		v = _mm256_add_ps(v, _mm256_loadu_ps(bias));
	return v;
}
#define OUT_AVX2(r, q)                                                                                             \
	_mm256_storeu_ps(out->col[q] + (size_t)(r) * out->ldc,                                                     \
			 out_avx2(c##r##q, out, out->col[q] + (size_t)(r) * out->ldc, out->bias ? out->bias + 8 * (q) : NULL))

TARGET static void tile_avx2(const float *ap, const float *bp, int kc, float *p, bool first, const float *pf, int pf_lines,
			     const struct tile_out *out)
{
	__m256 c00, c01, c02, c10, c11, c12, c20, c21, c22, c30, c31, c32;
	if (first) {
		c00 = c01 = c02 = c10 = c11 = c12 = c20 = c21 = c22 = c30 = c31 = c32 = _mm256_setzero_ps();
	} else {
		c00 = _mm256_loadu_ps(p), c01 = _mm256_loadu_ps(p + 8), c02 = _mm256_loadu_ps(p + 16);
		c10 = _mm256_loadu_ps(p + NC), c11 = _mm256_loadu_ps(p + NC + 8), c12 = _mm256_loadu_ps(p + NC + 16);
		c20 = _mm256_loadu_ps(p + 2 * NC), c21 = _mm256_loadu_ps(p + 2 * NC + 8);
		c22 = _mm256_loadu_ps(p + 2 * NC + 16);
		c30 = _mm256_loadu_ps(p + 3 * NC), c31 = _mm256_loadu_ps(p + 3 * NC + 8);
		c32 = _mm256_loadu_ps(p + 3 * NC + 16);
	}
	__m256 w0, w1, w2, x;
	TILE_DEPTHS_BY4(AVX2_4DEPTHS(), AVX2_DEPTH());
	if (out) {
		OUT_AVX2(0, 0), OUT_AVX2(0, 1), OUT_AVX2(0, 2), OUT_AVX2(1, 0), OUT_AVX2(1, 1), OUT_AVX2(1, 2);
		OUT_AVX2(2, 0), OUT_AVX2(2, 1), OUT_AVX2(2, 2), OUT_AVX2(3, 0), OUT_AVX2(3, 1), OUT_AVX2(3, 2);
		return;
	}
	_mm256_storeu_ps(p, c00), _mm256_storeu_ps(p + 8, c01), _mm256_storeu_ps(p + 16, c02);
	_mm256_storeu_ps(p + NC, c10), _mm256_storeu_ps(p + NC + 8, c11), _mm256_storeu_ps(p + NC + 16, c12);
	_mm256_storeu_ps(p + 2 * NC, c20), _mm256_storeu_ps(p + 2 * NC + 8, c21), _mm256_storeu_ps(p + 2 * NC + 16, c22);
	_mm256_storeu_ps(p + 3 * NC, c30), _mm256_storeu_ps(p + 3 * NC + 8, c31), _mm256_storeu_ps(p + 3 * NC + 16, c32);
}

/* 8 rows x 48 columns, 24 accumulators of 16 floats: per depth 3 loads of B and 8 broadcasts of A
 * feed 24 fused multiply-adds (the 4 x 24 tile's 12 took 3 and 4). A row's three accumulators are
 * loaded, run on and stored by one macro each. */
#define ROW512_LOAD(r)                                                                                             \
	c##r##0 = first ? _mm512_setzero_ps() : _mm512_loadu_ps(p + (r) * NC),                                     \
	c##r##1 = first ? _mm512_setzero_ps() : _mm512_loadu_ps(p + (r) * NC + 16),                                \
	c##r##2 = first ? _mm512_setzero_ps() : _mm512_loadu_ps(p + (r) * NC + 32)
#define ROW512_STORE(r)                                                                                            \
	_mm512_storeu_ps(p + (r) * NC, c##r##0), _mm512_storeu_ps(p + (r) * NC + 16, c##r##1),                     \
		_mm512_storeu_ps(p + (r) * NC + 32, c##r##2)

/* One depth: B's three vectors loaded, then the rows' fused multiply-adds written out, in two
 * statements of four rows (an asm statement takes at most 30 operands): GCC 12's own code,
 * interleaving the rows' loads and products differently, ran 2-4 % slower (one core, M 192 and 512
 * from packed copies, interleaved: 193-195 -> 202-203 and 199-207 -> 207-209 GFLOP/s). The same
 * operations in the same order: the same bits. */
#define AVX512_ASM_ROW(r)                                                                                          \
	"vbroadcastss " #r "*4(%[a]), %%zmm31\n\t"                                                                 \
	"vfmadd231ps %[w0], %%zmm31, %[c" #r "0]\n\tvfmadd231ps %[w1], %%zmm31, %[c" #r "1]\n\t"                     \
	"vfmadd231ps %[w2], %%zmm31, %[c" #r "2]\n\t"
#define AVX512_ASM_4ROWS(r0, r1, r2, r3)                                                                           \
	__asm__(AVX512_ASM_ROW(r0) AVX512_ASM_ROW(r1) AVX512_ASM_ROW(r2) AVX512_ASM_ROW(r3)                         \
		: [c##r0##0] "+v"(c##r0##0), [c##r0##1] "+v"(c##r0##1), [c##r0##2] "+v"(c##r0##2),                 \
		  [c##r1##0] "+v"(c##r1##0), [c##r1##1] "+v"(c##r1##1), [c##r1##2] "+v"(c##r1##2),                 \
		  [c##r2##0] "+v"(c##r2##0), [c##r2##1] "+v"(c##r2##1), [c##r2##2] "+v"(c##r2##2),                 \
		  [c##r3##0] "+v"(c##r3##0), [c##r3##1] "+v"(c##r3##1), [c##r3##2] "+v"(c##r3##2)                  \
		: [a] "r"(ap), [w0] "v"(w0), [w1] "v"(w1), [w2] "v"(w2), "m"(*(const float(*)[8])ap)           \
		: "xmm31")
#define AVX512_ASM_DEPTH()                                                                                         \
	({                                                                                                         \
		w0 = _mm512_loadu_ps(bp), w1 = _mm512_loadu_ps(bp + 16), w2 = _mm512_loadu_ps(bp + 32);            \
		AVX512_ASM_4ROWS(0, 1, 2, 3);                                                                      \
		AVX512_ASM_4ROWS(4, 5, 6, 7);                                                                      \
		bp += 48, ap += 8;                                                                                 \
	})

/* out_avx2's 16 lanes wide */
TARGET512 static inline __attribute__((always_inline)) __m512 out_avx512(__m512 v, const struct tile_out *o, const float *c,
									  const float *bias)
{
	if (o->alpha != 1.0f)
		v = _mm512_mul_ps(_mm512_set1_ps(o->alpha), v);
	if (o->beta == 1.0f)
		v = _mm512_add_ps(v, _mm512_loadu_ps(c));
	else if (o->beta != 0.0f)
		v = _mm512_add_ps(v, _mm512_mul_ps(_mm512_set1_ps(o->beta), _mm512_loadu_ps(c)));
	if (bias)
		v = _mm512_add_ps(v, _mm512_loadu_ps(bias));
	return v;
}
#define OUT512(r, q)                                                                                               \
	_mm512_storeu_ps(out->col[q] + (size_t)(r) * out->ldc,                                                     \
			 out_avx512(c##r##q, out, out->col[q] + (size_t)(r) * out->ldc, out->bias ? out->bias + 16 * (q) : NULL))
#define ROW512_OUT(r) OUT512(r, 0), OUT512(r, 1), OUT512(r, 2)

TARGET512 static void tile_avx512(const float *ap, const float *bp, int kc, float *p, bool first, const float *pf, int pf_lines,
				  const struct tile_out *out)
{
	__m512 c00, c01, c02, c10, c11, c12, c20, c21, c22, c30, c31, c32, c40, c41, c42, c50, c51, c52, c60, c61, c62,
		c70, c71, c72;
	ROW512_LOAD(0), ROW512_LOAD(1), ROW512_LOAD(2), ROW512_LOAD(3);
	ROW512_LOAD(4), ROW512_LOAD(5), ROW512_LOAD(6), ROW512_LOAD(7);
	__m512 w0, w1, w2;
	/* a packed panel's rows are 64-byte aligned when its copy is (gemmkern_pack: 32 at least) */
	TILE_DEPTHS(AVX512_ASM_DEPTH());
	if (out) {
		ROW512_OUT(0), ROW512_OUT(1), ROW512_OUT(2), ROW512_OUT(3);
		ROW512_OUT(4), ROW512_OUT(5), ROW512_OUT(6), ROW512_OUT(7);
		return;
	}
	ROW512_STORE(0), ROW512_STORE(1), ROW512_STORE(2), ROW512_STORE(3);
	ROW512_STORE(4), ROW512_STORE(5), ROW512_STORE(6), ROW512_STORE(7);
}

/* 8 rows x 32 columns, 16 accumulators: the narrow tiles of calls that pack B themselves. */
#define ROW32_LOAD(r)                                                                                              \
	c##r##0 = first ? _mm512_setzero_ps() : _mm512_loadu_ps(p + (r) * NC),                                     \
	c##r##1 = first ? _mm512_setzero_ps() : _mm512_loadu_ps(p + (r) * NC + 16)
#define ROW32_FMA(r) x = _mm512_set1_ps(ap[r]), c##r##0 = _mm512_fmadd_ps(x, w0, c##r##0), c##r##1 = _mm512_fmadd_ps(x, w1, c##r##1)
#define AVX512_32_DEPTH()                                                                                          \
	w0 = _mm512_loadu_ps(bp), w1 = _mm512_loadu_ps(bp + 16), ROW32_FMA(0), ROW32_FMA(1), ROW32_FMA(2),         \
	ROW32_FMA(3), ROW32_FMA(4), ROW32_FMA(5), ROW32_FMA(6), ROW32_FMA(7), bp += 32, ap += 8
#define ROW32_STORE(r) _mm512_storeu_ps(p + (r) * NC, c##r##0), _mm512_storeu_ps(p + (r) * NC + 16, c##r##1)
#define ROW32_OUT(r) OUT512(r, 0), OUT512(r, 1)

TARGET512 static void tile_avx512_32(const float *ap, const float *bp, int kc, float *p, bool first, const float *pf,
				     int pf_lines, const struct tile_out *out)
{
	__m512 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51, c60, c61, c70, c71, x;
	ROW32_LOAD(0), ROW32_LOAD(1), ROW32_LOAD(2), ROW32_LOAD(3);
	ROW32_LOAD(4), ROW32_LOAD(5), ROW32_LOAD(6), ROW32_LOAD(7);
	__m512 w0, w1;
	TILE_DEPTHS(AVX512_32_DEPTH());
	if (out) {
		ROW32_OUT(0), ROW32_OUT(1), ROW32_OUT(2), ROW32_OUT(3);
		ROW32_OUT(4), ROW32_OUT(5), ROW32_OUT(6), ROW32_OUT(7);
		return;
	}
	ROW32_STORE(0), ROW32_STORE(1), ROW32_STORE(2), ROW32_STORE(3);
	ROW32_STORE(4), ROW32_STORE(5), ROW32_STORE(6), ROW32_STORE(7);
}

static const struct tile_kind tiles_avx512_32 = {"avx512", "AVX-512", "AVX-512 8x32", 8, 32, 16, 128, tile_avx512_32, NULL},
			      tiles_avx2 = {"avx2", "AVX2", "AVX2 4x24 v5", 4, 24, 8, 96, tile_avx2, NULL},
			      tiles_avx512 = {"avx512", "AVX-512", "AVX-512 8x48 v6", 8, 48, 16, 128, tile_avx512,
					      &tiles_avx512_32};

/* The widest the CPU runs (libgcc's test includes the OS saving the registers). */
static const struct tile_kind *tiles_widest(void)
{
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
		return NULL;
	return __builtin_cpu_supports("avx512f") ? &tiles_avx512 : &tiles_avx2;
}

#else

static const struct tile_kind *tiles_widest(void)
{
	return NULL;
}

#endif

/* The tiles this process runs: the widest, unless gemmkern_use chose others before any product. */
static const struct tile_kind *kind;
static pthread_once_t kind_once = PTHREAD_ONCE_INIT;

static void kind_default(void)
{
	kind = tiles_widest();
}

static const struct tile_kind *tiles(void)
{
	pthread_once(&kind_once, kind_default);
	return kind;
}

bool gemmkern_available(void)
{
	return tiles() != NULL;
}

bool gemmkern_use(const char *name)
{
	(void)tiles(); /* the default is set once, before this choice and not after it */
	const struct tile_kind *widest = tiles_widest();
#ifdef GEMMKERN_X86
	if (widest && strcmp(name, tiles_avx2.name) == 0) {
		kind = &tiles_avx2;
		return true;
	}
#endif
	if (widest && strcmp(name, widest->name) == 0) {
		kind = widest;
		return true;
	}
	return false;
}

const char *gemmkern_version(void)
{
	return tiles() ? tiles()->version : "none";
}

const char *gemmkern_isa(void)
{
	return tiles() ? tiles()->isa : "none";
}

int gemmkern_panel_columns(void)
{
	return tiles() ? tiles()->nr : 0;
}

#ifdef GEMMKERN_X86

/* Rows S[0], S[LD], .. S[7 LD] (8 columns of op(B), or 8 rows of A), 8 depths, transposed into
 * O [8][LDO]. */
TARGET static void transpose8(const float *s, size_t ld, float *o, int ldo)
{
	__m256 r0 = _mm256_loadu_ps(s), r1 = _mm256_loadu_ps(s + ld), r2 = _mm256_loadu_ps(s + 2 * ld),
	       r3 = _mm256_loadu_ps(s + 3 * ld), r4 = _mm256_loadu_ps(s + 4 * ld), r5 = _mm256_loadu_ps(s + 5 * ld),
	       r6 = _mm256_loadu_ps(s + 6 * ld), r7 = _mm256_loadu_ps(s + 7 * ld);
	__m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1), t2 = _mm256_unpacklo_ps(r2, r3),
	       t3 = _mm256_unpackhi_ps(r2, r3), t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5),
	       t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
	__m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee),
	       u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee),
	       u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xee),
	       u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xee);
	_mm256_storeu_ps(o, _mm256_permute2f128_ps(u0, u4, 0x20)); /* A's copy: aligned only as malloc's */
	_mm256_storeu_ps(o + ldo, _mm256_permute2f128_ps(u1, u5, 0x20));
	_mm256_storeu_ps(o + 2 * ldo, _mm256_permute2f128_ps(u2, u6, 0x20));
	_mm256_storeu_ps(o + 3 * ldo, _mm256_permute2f128_ps(u3, u7, 0x20));
	_mm256_storeu_ps(o + 4 * ldo, _mm256_permute2f128_ps(u0, u4, 0x31));
	_mm256_storeu_ps(o + 5 * ldo, _mm256_permute2f128_ps(u1, u5, 0x31));
	_mm256_storeu_ps(o + 6 * ldo, _mm256_permute2f128_ps(u2, u6, 0x31));
	_mm256_storeu_ps(o + 7 * ldo, _mm256_permute2f128_ps(u3, u7, 0x31));
}

/* ROWS rows x KC depths of A (LDA apart) into AP, tile by tile: [tile][kc][MR], zero past ROWS. */
TARGET static void pack_a(const struct tile_kind *t, const float *a, int lda, int rows, int kc, float *ap)
{
	const int MR = t->mr;
	for (int i = 0; i < rows; i += MR, ap += (size_t)kc * MR) {
		const float *r0 = a + (size_t)i * lda;
		int d = 0;
		if (rows - i >= MR && MR == 8)
			for (; d + 8 <= kc; d += 8) /* 8 rows x 8 depths transposed */
				transpose8(r0 + d, (size_t)lda, ap + (size_t)d * MR, MR);
		else if (rows - i >= MR)
			for (; d + 8 <= kc; d += 8) { /* 4 rows x 8 depths transposed */
				__m256 x0 = _mm256_loadu_ps(r0 + d), x1 = _mm256_loadu_ps(r0 + lda + d),
				       x2 = _mm256_loadu_ps(r0 + 2 * (size_t)lda + d), x3 = _mm256_loadu_ps(r0 + 3 * (size_t)lda + d);
				__m256 t0 = _mm256_unpacklo_ps(x0, x1), t1 = _mm256_unpackhi_ps(x0, x1),
				       t2 = _mm256_unpacklo_ps(x2, x3), t3 = _mm256_unpackhi_ps(x2, x3);
				__m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee),
				       u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);
				float *o = ap + (size_t)d * MR; /* a tile is 16·KC bytes: not always aligned */
				_mm256_storeu_ps(o, _mm256_permute2f128_ps(u0, u1, 0x20));
				_mm256_storeu_ps(o + 8, _mm256_permute2f128_ps(u2, u3, 0x20));
				_mm256_storeu_ps(o + 16, _mm256_permute2f128_ps(u0, u1, 0x31));
				_mm256_storeu_ps(o + 24, _mm256_permute2f128_ps(u2, u3, 0x31));
			}
		for (; d < kc; d++) /* the last depths, or a tile past A's last row */
			for (int r = 0; r < MR; r++)
				ap[(size_t)d * MR + r] = i + r < rows ? r0[(size_t)r * lda + d] : 0.0f;
	}
}

/* KC depths x COLS columns of B [k][n] (from its block's first depth and column) into BP, panel by
 * panel: [panel][kc][NR], zero past COLS. */
TARGET static void pack_b(const struct tile_kind *t, const float *b, int ldb, int kc, int cols, float *bp)
{
	const int NR = t->nr;
	int panels = (cols + NR - 1) / NR, whole = cols / 8 * 8; /* columns in whole vectors */
	for (int d = 0; d < kc; d++, b += ldb) { /* a row of the block at a time: its bytes are contiguous */
		for (int c = 0; c < cols; c += 16)
			__builtin_prefetch(b + ROWS_AHEAD * (size_t)ldb + c); /* rows 3 or 12 KB apart: ahead by hand */
		float *o = bp + (size_t)d * NR;
		int c = 0;
		for (; c < whole; c += 8) /* vector copies: a small memcpy becomes rep movsq, slow on AMD */
			_mm256_store_ps(o + (size_t)(c / NR) * kc * NR + c % NR, _mm256_loadu_ps(b + c));
		for (; c < panels * NR; c++)
			o[(size_t)(c / NR) * kc * NR + c % NR] = c < cols ? b[c] : 0.0f;
	}
}

/* The same from Bᵀ: B [n][k], so column c of op(B) is row c of B: 8 x 8 blocks transposed. */
TARGET static void pack_bt(const struct tile_kind *t, const float *b, int ldb, int kc, int cols, float *bp)
{
	const int NR = t->nr;
	for (int j = 0; j < cols; j += NR, bp += (size_t)kc * NR)
		for (int c0 = 0; c0 < NR; c0 += 8) {
			const float *s = b + (size_t)(j + c0) * ldb;
			float *o = bp + c0;
			int d = 0;
			if (j + c0 + 8 <= cols)
				for (; d + 8 <= kc; d += 8) {
					if (d % 16 == 0) /* 24 rows at once: more streams than the prefetcher follows */
						for (int r = 0; r < 8; r++)
							__builtin_prefetch(s + (size_t)r * ldb + d + PF);
					transpose8(s + d, (size_t)ldb, o + (size_t)d * NR, NR);
				}
			for (; d < kc; d++) /* the last depths, or columns past B's last row */
				for (int c = 0; c < 8; c++)
					o[(size_t)d * NR + c] = j + c0 + c < cols ? s[(size_t)c * ldb + d] : 0.0f;
		}
}

/* One row of store_c: C[j] = ALPHA · P[j] + BETA · C[j] (+ BIAS[j]), each operation rounded on its
 * own, skipped where it is the identity (ALPHA 1, BETA 0 or 1, no BIAS). Inlined with constant
 * SCALE (ALPHA ≠ 1), MIX (0: BETA 0, 1: BETA 1, 2: another) and ADD_BIAS, so the row's loop holds no
 * test: with the tests inside it, store_c took 20 % of a 512-token head's scores. First the lines of
 * the row STORE_AHEAD rows on (AHEAD, NULL past the block) are fetched for writing: a head's scores go
 * into the trace's attention, last written a whole pass before and out of the caches by now, and
 * their stores waited on each line (perf: 38 % of the scores stage of a 512-token bert-base forward in
 * store_c; with the lines fetched ahead the stage took 27.8-28.7 ms, not 31.2-31.3). */
#define STORE_AHEAD 4
__attribute__((always_inline)) TARGET static inline void store_row(int nc, const float *p, float alpha, float beta,
								    const float *bias, float *c, const float *ahead,
								    bool scale, int mix, bool add_bias)
{
	const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
	for (int q = 0; ahead && q < nc; q += 16)
		__builtin_prefetch(ahead + q, 1);
	int j = 0;
	for (; j + 8 <= nc; j += 8) {
		__m256 v = _mm256_loadu_ps(p + j); /* rows LDP apart: aligned only when LDP is a multiple of 8 */
		if (scale)
			v = _mm256_mul_ps(va, v);
		if (mix == 1)
			v = _mm256_add_ps(v, _mm256_loadu_ps(c + j));
		else if (mix == 2)
			v = _mm256_add_ps(v, _mm256_mul_ps(vb, _mm256_loadu_ps(c + j)));
		if (add_bias)
			v = _mm256_add_ps(v, _mm256_loadu_ps(bias + j));
		_mm256_storeu_ps(c + j, v);
	}
	for (; j < nc; j++) {
		float v = scale ? alpha * p[j] : p[j];
		v = mix == 0 ? v : mix == 1 ? v + c[j] : v + beta * c[j];
		c[j] = add_bias ? v + bias[j] : v;
	}
}

/* C = ALPHA · PART + BETA · C (+ BIAS [nc] on every row when not NULL) for MC x NC elements, PART's
 * rows LDP apart. */
TARGET static void store_c(int mc, int nc, const float *part, int ldp, float alpha, float beta, const float *bias,
			   float *c, int ldc)
{
	bool scale = alpha != 1.0f;
	int mix = beta == 0.0f ? 0 : beta == 1.0f ? 1 : 2;
#define STORE_ROWS(SCALE, MIX, BIAS)                                                                               \
	for (int i = 0; i < mc; i++)                                                                               \
		store_row(nc, part + (size_t)i * ldp, alpha, beta, bias, c + (size_t)i * ldc,                      \
			  i + STORE_AHEAD < mc ? c + (size_t)(i + STORE_AHEAD) * ldc : NULL, SCALE, MIX, BIAS)
	if (!scale && mix == 0 && !bias) /* the products of a head (PV) and of a linear without bias */
		STORE_ROWS(false, 0, false);
	else if (!scale && mix == 0) /* a linear's with its bias */
		STORE_ROWS(false, 0, true);
	else if (mix == 0 && !bias) /* a head's scores, scaled */
		STORE_ROWS(true, 0, false);
	else
		STORE_ROWS(scale, mix, bias != NULL);
#undef STORE_ROWS
}

/* A row or two of A (M <= STREAM_ROWS) against B [k][n]: B read a whole row of the call's columns
 * at a time, as it lies (blocks of NC columns read 768-byte pieces 12 KB apart, which memory serves
 * at a third of its rate); each element's chain of fused multiply-adds runs on through ACC [m][n],
 * in the order tile's does. */
TARGET static void stream_rows(int m, int n, int k, const float *a, int lda, const float *b, int ldb, float *acc)
{
	memset(acc, 0, (size_t)m * n * sizeof *acc);
	for (int d = 0; d < k; d++, b += ldb) {
		for (int j = 0; j < n; j += 16)
			__builtin_prefetch(b + ROWS_AHEAD * (size_t)ldb + j);
		for (int i = 0; i < m; i++) {
			float x = a[(size_t)i * lda + d], *o = acc + (size_t)i * n;
			__m256 vx = _mm256_set1_ps(x);
			int j = 0;
			for (; j + 8 <= n; j += 8)
				_mm256_storeu_ps(o + j, _mm256_fmadd_ps(vx, _mm256_loadu_ps(b + j), _mm256_loadu_ps(o + j)));
			for (; j < n; j++) /* the same fused multiply-add, one lane */
				o[j] = _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(x), _mm_set_ss(b[j]), _mm_set_ss(o[j])));
		}
	}
}

/* The columns N computed in tiles NR wide: each block of NC rounded up to whole panels. */
static int padded_columns(int n, int nr)
{
	return n / NC * NC + round_up(n % NC, nr);
}

/* Running sums and copies of the blocks, one set per thread (360 KB). */
static _Thread_local float part[MC_MAX * NC] __attribute__((aligned(64))), ap[MC_MAX * KC] __attribute__((aligned(64))),
	bp[KC * NC] __attribute__((aligned(64)));

/* The tiles of one block: MC rows of A (copied in ABLOCK) against NC columns of op(B) at depths D0 ..
 * D0+KC (copied in BPANELS, panels KC x 24 one after another), their chains continued in PART. From
 * a packed copy the panels come from memory (the first block of rows) or L2 and L3 (the others): the
 * next one is fetched while the current one's tiles run (AHEAD; for every block of rows: at 512 rows
 * 1-3 % faster than for the first alone), each tile prefetching its share along its depths (a
 * 32-token bert-base forward on an AVX-512 Xeon: 34.5 ms with the prefetches before each tile, 27.2
 * with them spread). With OUT (the last block of depths), the whole tiles (MR x NR inside MC x NC)
 * write their elements of C themselves (OUT: the block's first element; block_rest stores the others). */
TARGET static void block_tiles(const struct tile_kind *t, const float *ablock, const float *bpanels, int mc, int nc,
				int kc, bool first, bool ahead, const struct block_out *out)
{
	const int MR = t->mr, NR = t->nr;
	int lines = ahead ? kc * NR / 16 : 0, count = (mc + MR - 1) / MR, per = (lines + count - 1) / count;
	for (int j = 0; j < nc; j += NR) {
		const float *panel = bpanels + (size_t)j * kc, *next = panel + (size_t)kc * NR;
		for (int i = 0, l = 0; i < mc; i += MR, l += per) { /* the next panel spread over this one's tiles */
			struct tile_out o, *direct = NULL;
			if (out && i + MR <= mc && j + NR <= nc) {
				o = (struct tile_out){.ldc = out->ldc, .alpha = out->alpha,
						      .beta = out->beta, .bias = out->bias ? out->bias + j : NULL};
				for (int v = 0; v < NR / t->vw; v++)
					o.col[v] = block_at(out, i, j + v * t->vw);
				direct = &o;
				/* the next tile's rows of C fetched for writing, a line (16 floats) at a time: a
				 * head's scores land in the trace's attention, out of the caches (the scores of a
				 * 512-token bert-base forward 20.9-21.4 ms with them, 26.4-27.4 without, 23.9-24.9
				 * through store_c) */
				if (i + 2 * MR <= mc)
					for (int r = 0; r < MR; r++)
						for (int v = 0; v < NR / t->vw; v += 16 / t->vw)
							__builtin_prefetch(o.col[v] + (size_t)(MR + r) * o.ldc, 1);
			}
			t->tile(ablock + (size_t)i * kc, panel, kc, part + (size_t)i * NC + j, first, next + (size_t)l * 16,
				l < lines ? (lines - l < per ? lines - l : per) : 0, direct);
		}
	}
}

/* store_c of P's rows I_LO .. I_HI and columns J_LO .. J_HI (P's rows LDP apart) to their places in
 * OUT: at once, or a head's columns at a time. */
TARGET static void block_store(const struct block_out *o, int i_lo, int i_hi, int j_lo, int j_hi, const float *p,
			       int ldp)
{
	for (int j = j_lo; j < j_hi;) {
		int end = j_hi;
		if (o->heads) {
			int w = o->heads->width, next = j + w - (o->heads->first + o->j0 + j) % w;
			end = next < j_hi ? next : j_hi;
		}
		store_c(i_hi - i_lo, end - j, p + (size_t)i_lo * ldp + j, ldp, o->alpha, o->beta, o->bias ? o->bias + j : NULL,
			block_at(o, i_lo, j), o->ldc);
		j = end;
	}
}

/* After a block's depths: store_c of the elements its whole tiles did not write to OUT (the rows past
 * the last whole tile, then the columns past the last whole panel; all of them when no tile ran:
 * depth 0, RAN false). */
TARGET static void block_rest(const struct tile_kind *t, int mc, int nc, const struct block_out *out, bool ran)
{
	int rows = ran ? mc / t->mr * t->mr : 0, cols = nc / t->nr * t->nr;
	if (rows < mc)
		block_store(out, rows, mc, 0, nc, part, NC);
	if (cols < nc && rows > 0)
		block_store(out, 0, rows, cols, nc, part, NC);
}

/* The packed layout (gemmkern.h): block J0 of NC columns at J0 · K (the blocks before it are whole,
 * NC x K each); in it, depth block D0 at D0 · NCP (its width rounded up to whole panels); in that,
 * panel P at P · KC · 24. So the kernel reads a packed copy from start to end, as it walks it. */
static size_t packed_at(int j0, int d0, int k, int ncp)
{
	return (size_t)j0 * k + (size_t)d0 * ncp;
}

/* op(B) [k][n] packed whole for the tiles T into OUT, in the layout above. */
TARGET static void pack_whole(const struct tile_kind *t, bool trans_b, int n, int k, const float *b, int ldb,
			      float *out)
{
	for (int j0 = 0; j0 < n; j0 += NC) {
		int nc = n - j0 < NC ? n - j0 : NC, ncp = round_up(nc, t->nr);
		for (int d0 = 0; d0 < k; d0 += KC) {
			int kc = k - d0 < KC ? k - d0 : KC;
			float *o = out + packed_at(j0, d0, k, ncp);
			if (trans_b)
				pack_bt(t, b + (size_t)j0 * ldb + d0, ldb, kc, nc, o);
			else
				pack_b(t, b + (size_t)d0 * ldb + j0, ldb, kc, nc, o);
		}
	}
}

/* A thread's copies of a whole A or op(B) for gemmkern_sgemm, grown as needed (NULL without memory),
 * freed with the thread. */
struct whole {
	float *p;
	size_t cap; /* floats */
};
static pthread_key_t whole_key[2];
static pthread_once_t whole_once = PTHREAD_ONCE_INIT;
static _Thread_local struct whole whole_copy[2]; /* [0] A, [1] op(B) */

static void whole_keys_make(void)
{
	pthread_key_create(&whole_key[0], free);
	pthread_key_create(&whole_key[1], free);
}

static float *whole_get(int which, size_t floats)
{
	struct whole *w = &whole_copy[which];
	if (w->cap >= floats)
		return w->p;
	pthread_once(&whole_once, whole_keys_make);
	float *p = aligned_alloc(64, (floats * sizeof(float) + 63) / 64 * 64);
	if (!p)
		return NULL;
	free(w->p);
	w->p = p, w->cap = floats;
	pthread_setspecific(whole_key[which], p); /* its destructor frees it when the thread ends */
	return p;
}

void gemmkern_sgemm(bool trans_b, int m, int n, int k, float alpha, const float *a, int lda, const float *b,
		    int ldb, float beta, float *c, int ldc)
{
	if (!trans_b && m <= STREAM_ROWS && (size_t)m * n <= sizeof part / sizeof *part) {
		stream_rows(m, n, k, a, lda, b, ldb, part);
		store_c(m, n, part, n, alpha, beta, NULL, c, ldc);
		return;
	}
	const struct tile_kind *t = tiles();
	if (t->narrow && padded_columns(n, t->narrow->nr) * 11 < padded_columns(n, t->nr) * 10)
		t = t->narrow; /* the wide tiles run faster: only for 10 % fewer columns */
	const int MC = t->mc;
	/* One block of columns over several blocks of depths (a head's values over all its keys, PV):
	 * op(B) packed once for every block of rows, which packed it again each (16 % of the samples of
	 * the PV of 512 keys on the AVX2 tiles). */
	float *whole = n <= NC && k > KC && m > MC ? whole_get(1, (size_t)k * round_up(n, t->nr)) : NULL;
	/* One block of depths over several blocks of columns (a head's scores, 64 depths, every key): A
	 * packed once, not once per block of columns (the scores of 512 keys 7 % faster on the AVX-512
	 * tiles), block I0 of its rows at I0 · K. */
	float *whole_a = k <= KC && n > NC ? whole_get(0, (size_t)k * ((m + MC - 1) / MC * MC)) : NULL;
	for (int i0 = 0; whole_a && i0 < m; i0 += MC)
		pack_a(t, a + (size_t)i0 * lda, lda, m - i0 < MC ? m - i0 : MC, k, whole_a + (size_t)i0 * k);
	if (whole)
		pack_whole(t, trans_b, n, k, b, ldb, whole);
	for (int j0 = 0; j0 < n; j0 += NC) {
		int nc = n - j0 < NC ? n - j0 : NC;
		for (int i0 = 0; i0 < m; i0 += MC) {
			int mc = m - i0 < MC ? m - i0 : MC;
			struct block_out out = {c + (size_t)i0 * ldc + j0, ldc, alpha, beta, NULL, NULL, i0, j0};
			if (k == 0)
				memset(part, 0, sizeof part);
			for (int d0 = 0; d0 < k; d0 += KC) {
				int kc = k - d0 < KC ? k - d0 : KC;
				bool copied = i0 > 0 && k <= KC; /* one block of depths: the same copy for every block of rows */
				const float *panels = whole ? whole + packed_at(0, d0, k, round_up(n, t->nr)) : bp;
				if (!whole && trans_b && !copied)
					pack_bt(t, b + (size_t)j0 * ldb + d0, ldb, kc, nc, bp);
				else if (!whole && !copied)
					pack_b(t, b + (size_t)d0 * ldb + j0, ldb, kc, nc, bp);
				if (!whole_a)
					pack_a(t, a + (size_t)i0 * lda + d0, lda, mc, kc, ap);
				block_tiles(t, whole_a ? whole_a + (size_t)i0 * k : ap, panels, mc, nc, kc, d0 == 0, false,
					    d0 + kc >= k ? &out : NULL);
			}
			block_rest(t, mc, nc, &out, k > 0);
		}
	}
}

void gemmkern_pack(bool trans_b, int n, int k, const float *b, int ldb, float *out)
{
	pack_whole(tiles(), trans_b, n, k, b, ldb, out);
}

/* The chains of row X's W columns (W = 24 or 48: W / 8 vectors) run on in O over KC depths, the packed
 * columns read at P, one depth every NR floats: one FMA per column and depth, in order. */
TARGET static inline __attribute__((always_inline)) void stream_cols(const float *x, const float *p, int kc, int nr,
								      float *o, const int W)
{
	__m256 c[6];
#pragma GCC unroll 6
	for (int v = 0; v < W / 8; v++)
		c[v] = _mm256_loadu_ps(o + 8 * v);
	for (int d = 0; d < kc; d++, p += nr) {
		__m256 b = _mm256_broadcast_ss(x + d);
#pragma GCC unroll 6
		for (int v = 0; v < W / 8; v++)
			c[v] = _mm256_fmadd_ps(b, _mm256_load_ps(p + 8 * v), c[v]);
	}
#pragma GCC unroll 6
	for (int v = 0; v < W / 8; v++)
		_mm256_storeu_ps(o + 8 * v, c[v]);
}

/* A row or two of A against a packed copy: the copy read from start to end once, each element's chain
 * run on in ACC [m][LDACC] (LDACC: N in whole panels) in the order tile's runs it, a panel's row of
 * depths whole (48 columns on the AVX-512 tiles: in two halves of 24, a panel was read twice, one
 * edit of a 128-token gpt2 text 2.5 ms slower than on the AVX2 tiles). The tiles would compute 4 rows
 * for these one or two, at 4.5 GFLOP/s on gpt2's 768 x 768 against streaming's 6. */
TARGET static void stream_packed(int m, int n, int k, const float *a, int lda, const float *packed, float *acc,
				 int ldacc)
{
	const int NR = tiles()->nr;
	memset(acc, 0, (size_t)m * ldacc * sizeof *acc);
	for (int j0 = 0; j0 < n; j0 += NC) {
		int nc = n - j0 < NC ? n - j0 : NC, ncp = round_up(nc, NR);
		for (int d0 = 0; d0 < k; d0 += KC) {
			int kc = k - d0 < KC ? k - d0 : KC;
			const float *panel = packed + packed_at(j0, d0, k, ncp);
			for (int j = 0; j < ncp; j += NR, panel += (size_t)kc * NR)
				for (int i = 0; i < m; i++) {
					const float *x = a + (size_t)i * lda + d0;
					float *o = acc + (size_t)i * ldacc + j0 + j;
					if (NR % 48 == 0)
						for (int q = 0; q < NR; q += 48)
							stream_cols(x, panel + q, kc, NR, o + q, 48);
					else
						for (int q = 0; q < NR; q += 24)
							stream_cols(x, panel + q, kc, NR, o + q, 24);
				}
		}
	}
}

/* A's packed copy (gemmkern.h): block I0 of MC rows at I0 · K (the blocks before it whole, MC x K
 * each); in it, depth block D0 at D0 · MCP (its rows rounded up to whole tiles); in that, pack_a's
 * [tile][kc][MR]. */
int gemmkern_pack_a_parts(int m, int k)
{
	const int MC = tiles() ? tiles()->mc : MC_MAX;
	return (m + MC - 1) / MC * ((k + KC - 1) / KC);
}

void gemmkern_pack_a_part(int m, int k, const float *a, int lda, float *out, int piece)
{
	const int MC = tiles()->mc;
	int depths = (k + KC - 1) / KC, i0 = piece / depths * MC, d0 = piece % depths * KC;
	int mc = m - i0 < MC ? m - i0 : MC, mcp = round_up(mc, tiles()->mr), kc = k - d0 < KC ? k - d0 : KC;
	pack_a(tiles(), a + (size_t)i0 * lda + d0, lda, mc, kc, out + (size_t)i0 * k + (size_t)d0 * mcp);
}

void gemmkern_pack_a(int m, int k, const float *a, int lda, float *out)
{
	for (int piece = 0, pieces = gemmkern_pack_a_parts(m, k); piece < pieces; piece++)
		gemmkern_pack_a_part(m, k, a, lda, out, piece);
}

/* gemmkern_sgemm_packed, C at C (rows LDC apart) or where HEADS puts it. */
static void sgemm_packed(int m, int n, int k, float alpha, const float *a, int lda, const float *apacked,
			 const float *packed, float beta, const float *bias, float *c, int ldc, const struct gemm_heads *heads)
{
	const int MR = tiles()->mr, NR = tiles()->nr, MC = tiles()->mc;
	int ldacc = round_up(n, NR);
	if (m <= STREAM_ROWS && (size_t)m * ldacc <= sizeof part / sizeof *part) {
		stream_packed(m, n, k, a, lda, packed, part, ldacc);
		block_store(&(struct block_out){c, ldc, alpha, beta, bias, heads, 0, 0}, 0, m, 0, n, part, ldacc);
		return;
	}
	for (int j0 = 0; j0 < n; j0 += NC) {
		int nc = n - j0 < NC ? n - j0 : NC, ncp = round_up(nc, NR);
		for (int i0 = 0; i0 < m; i0 += MC) {
			int mc = m - i0 < MC ? m - i0 : MC, mcp = round_up(mc, MR);
			if (k == 0)
				memset(part, 0, sizeof part);
			struct block_out out = {heads ? NULL : c + (size_t)i0 * ldc + j0, ldc, alpha, beta, bias ? bias + j0 : NULL,
						heads, i0, j0};
			for (int d0 = 0; d0 < k; d0 += KC) {
				int kc = k - d0 < KC ? k - d0 : KC;
				const float *ablock = ap;
				if (apacked)
					ablock = apacked + (size_t)i0 * k + (size_t)d0 * mcp;
				else
					pack_a(tiles(), a + (size_t)i0 * lda + d0, lda, mc, kc, ap);
				block_tiles(tiles(), ablock, packed + packed_at(j0, d0, k, ncp), mc, nc, kc, d0 == 0, true,
					    d0 + kc >= k ? &out : NULL);
			}
			block_rest(tiles(), mc, nc, &out, k > 0);
		}
	}
}

void gemmkern_sgemm_packed(int m, int n, int k, float alpha, const float *a, int lda, const float *apacked,
			   const float *packed, float beta, const float *bias, float *c, int ldc)
{
	sgemm_packed(m, n, k, alpha, a, lda, apacked, packed, beta, bias, c, ldc, NULL);
}

void gemmkern_sgemm_packed_heads(int m, int n, int k, float alpha, const float *a, int lda, const float *apacked,
				 const float *packed, float beta, const float *bias, const struct gemm_heads *heads)
{
	sgemm_packed(m, n, k, alpha, a, lda, apacked, packed, beta, bias, NULL, heads->width, heads);
}

#else /* not x86-64: never called (gemmkern_available is false) */

void gemmkern_sgemm(bool trans_b, int m, int n, int k, float alpha, const float *a, int lda, const float *b,
		    int ldb, float beta, float *c, int ldc)
{
	(void)trans_b, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda, (void)b, (void)ldb, (void)beta,
		(void)c, (void)ldc;
}

void gemmkern_pack(bool trans_b, int n, int k, const float *b, int ldb, float *out)
{
	(void)trans_b, (void)n, (void)k, (void)b, (void)ldb, (void)out;
}

void gemmkern_pack_a(int m, int k, const float *a, int lda, float *out)
{
	(void)m, (void)k, (void)a, (void)lda, (void)out;
}

int gemmkern_pack_a_parts(int m, int k)
{
	(void)m, (void)k;
	return 0;
}

void gemmkern_pack_a_part(int m, int k, const float *a, int lda, float *out, int piece)
{
	(void)m, (void)k, (void)a, (void)lda, (void)out, (void)piece;
}

void gemmkern_sgemm_packed(int m, int n, int k, float alpha, const float *a, int lda, const float *apacked,
			   const float *packed, float beta, const float *bias, float *c, int ldc)
{
	(void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda, (void)apacked, (void)packed, (void)beta, (void)bias, (void)c,
		(void)ldc;
}

void gemmkern_sgemm_packed_heads(int m, int n, int k, float alpha, const float *a, int lda, const float *apacked,
				 const float *packed, float beta, const float *bias, const struct gemm_heads *heads)
{
	(void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda, (void)apacked, (void)packed, (void)beta, (void)bias,
		(void)heads;
}

#endif

size_t gemmkern_packed_a_floats(int m, int k)
{
	return tiles() ? (size_t)k * (size_t)round_up(m, tiles()->mr) : 0; /* whole tiles (MC: a multiple of MR) */
}

size_t gemmkern_packed_floats(int n, int k)
{
	int nr = gemmkern_panel_columns();
	return nr ? (size_t)k * (size_t)round_up(n, nr) : 0; /* whole panels (NC: a multiple of NR) */
}
