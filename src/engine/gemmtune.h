/* gemmtune.h -- which GEMM library runs each shape class of the engine's products: OpenBLAS,
 * oneDNN or attnscope's own AVX2 kernel (gemmkern.h), chosen by timing those available once on the
 * machine and kept in a cache file keyed by the CPU and the libraries (gemm.c holds the choice;
 * private to the engine, and to tests/check_gemm.c). */
#ifndef ATTNSCOPE_GEMMTUNE_H
#define ATTNSCOPE_GEMMTUNE_H

#include <stdbool.h>
#include <stddef.h>

enum gemm_lib { GEMM_LIB_OPENBLAS, GEMM_LIB_DNNL, GEMM_LIB_OWN, GEMM_LIBS };

/* Classes by depth k: ≤ 128 (a head's q·kᵀ scores and per-head output projection, every product
 * of the small test models), ≤ 1024 (projections and MLP up from the hidden size), more (MLP down);
 * each timed in both layouts (op(B) = Bᵀ or B) together. Not by rows: a run reusing a text's first
 * tokens computes fewer rows than the whole run, and its rows must get the very same sums
 * (gemm_row_block), so a shape runs on one library whatever its row count. Not by layout either:
 * a head's scores and its context on two libraries took gemma3-tiny's end-to-end attention (which
 * its sandwich norms amplify) to 1.0014e-5 from Hugging Face's, past the 1e-5 that either library
 * alone keeps (8.6e-6 on oneDNN's AVX2 kernels). */
#define GEMM_CLASSES 3
/* Rows timed per class (a text's tokens: 8, 32, 128, 512). */
#define GEMM_SIZES 4

struct gemm_tune {
	char key[512];            /* gemmtune_key's */
	int lib[GEMM_CLASSES];    /* enum gemm_lib */
	float rate[GEMM_CLASSES][GEMM_LIBS][GEMM_SIZES]; /* GFLOP/s on one thread; 0: not measured */
};

/* One product on library LIB, as gemm() computes it (row-major, see gemm.h). */
typedef void gemmtune_fn(enum gemm_lib lib, bool trans_b, int m, int n, int k, const float *a, const float *b,
			 float *c);

int gemmtune_class(bool trans_b, int k);
const char *gemmtune_class_name(int cls);
extern const int gemmtune_rows[GEMM_SIZES];

/* Hardware and libraries the rates depend on: CPU model name, its AVX2/FMA/AVX-512 flags, OpenBLAS's
 * configuration (version and core), oneDNN's version and effective ISA (DNNL_ISA, or "none"), the
 * version of attnscope's kernel (OWN, or "none"). */
void gemmtune_key(const char *dnnl_isa, const char *own, char *out, size_t size);

/* The library's name in the cache file ("openblas", "dnnl", "attnscope") and for people
 * ("OpenBLAS", "oneDNN", "attnscope"). */
const char *gemmtune_lib_name(enum gemm_lib lib);
const char *gemmtune_lib_title(enum gemm_lib lib);

/* The cache file: $ATTNSCOPE_GEMM_CACHE, else $XDG_CACHE_HOME/attnscope/gemm, else
 * ~/.cache/attnscope/gemm. */
void gemmtune_path(char *out, size_t size);

/* Time RUN on the libraries in AVAILABLE (bits 1 << enum gemm_lib; OpenBLAS always) for every
 * class and size (single-threaded; the best of a few rounds; about 0.3 s in all on a 2-core EPYC)
 * and choose per class with gemmtune_choose. The others' rates are 0. T->key is left as it is. */
void gemmtune_measure(struct gemm_tune *t, gemmtune_fn *run, unsigned available);

/* The library for class CLS by T's rates (0: not measured): the one that takes least time for the
 * same work at each size (the lowest sum of 1/rate), but attnscope's kernel unless another is more
 * than 10 % faster (token reuse of every token on it). */
int gemmtune_choose(const struct gemm_tune *t, int cls);
/* How much faster another library must be to take a head's scores (class 0) from attnscope's kernel
 * (why: gemmtune.c); in the GEMM cache's key, so that a choice made by another margin is made again. */
#define GEMMTUNE_MARGIN_SCORES 1.25

/* The harmonic mean of a class's rates on LIB over the sizes (GFLOP/s; 0 when not measured). */
double gemmtune_rate(const struct gemm_tune *t, int cls, enum gemm_lib lib);

/* Read PATH into T if it holds a choice for KEY: 0 read, 1 no file (or one in an older format), -1
 * ignored (corrupt, another machine's or library's: WHY says which in a few words). */
int gemmtune_load(const char *path, const char *key, struct gemm_tune *t, char *why, size_t why_size);

/* Write T to PATH (its folders made as needed; through a temporary file renamed, so concurrent
 * processes never read half a file). 0, or -1 with WHY. */
int gemmtune_save(const char *path, const struct gemm_tune *t, char *why, size_t why_size);

#endif
