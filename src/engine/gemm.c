/* gemm.c -- the engine's matrix product on OpenBLAS, oneDNN or attnscope's own AVX2 kernel, chosen
 * per shape class (see gemm.h). Each class of the forward's products (gemmtune.h) runs on the
 * library that measured fastest on this machine among those available (gemmtune.c; cached,
 * ATTNSCOPE_GEMM forces one). On this
 * project's reference machine (Zen 4, where OpenBLAS is held to its Haswell kernels) oneDNN's
 * AVX-512 sgemm ran twice as fast as OpenBLAS's on one core; on a 2-core Zen EPYC with AVX2 its AVX2
 * kernels ran 10-40 % faster than OpenBLAS's Zen ones at 8..512 rows. oneDNN's kernels read past
 * their own buffers (tools/valgrind.supp). */
#include "config.h"

#include "engine/gemm.h"

#include "engine/gemmkern.h"
#include "engine/gemmtune.h"

#include "base/progress.h"

#include <cblas.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef GEMM_DNNL
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

/* Debian's oneDNN runs on OpenMP: each calling thread asks for a team of one, as our threads share
 * the work; a team per call on a busy 2-core machine cost more than it saved. */
static _Thread_local bool omp_single;

/* oneDNN 2.6 picks its kernels and how it blocks the rows by the row count: on AVX2, rows of one
 * call got other sums than the same rows in a call with more or fewer rows for every block tried
 * (1 to 384 rows, 101 to 997 rows in all); on AVX-512, calls of fewer than 16 rows did. Calls of
 * exactly 64 or exactly 16 rows give every row the same sums, wherever it sits in the call, on both
 * (measured for K 37 .. 1100, both layouts). So a product runs as calls of 64 rows, then of 16, the
 * last one padded with zero rows: a row's result never depends on how many rows were computed with
 * it, and a run that reuses earlier tokens (model_run_reuse) computes the new ones exactly as a whole
 * run does (gemm_measure_rows checks it on every start). */
#define GEMM_CHUNK_ROWS 64
#define GEMM_MIN_ROWS 16

static void gemm_dnnl_call(bool trans_b, int m, int n, int k, float alpha, const float *a, int lda, const float *b,
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
	int r = 0;
	for (; m - r >= GEMM_MIN_ROWS; r += m - r >= GEMM_CHUNK_ROWS ? GEMM_CHUNK_ROWS : GEMM_MIN_ROWS)
		gemm_dnnl_call(trans_b, m - r >= GEMM_CHUNK_ROWS ? GEMM_CHUNK_ROWS : GEMM_MIN_ROWS, n, k, alpha,
			       a + (size_t)r * lda, lda, b, ldb, beta, c + (size_t)r * ldc, ldc);
	if (r == m)
		return;
	int rows = m - r; /* the last ones, padded to GEMM_MIN_ROWS */
	a += (size_t)r * lda;
	c += (size_t)r * ldc;
	float *pad = calloc((size_t)GEMM_MIN_ROWS * ((size_t)k + n), sizeof(float));
	if (!pad) { /* no memory for the padding: the same values within rounding */
		gemm_dnnl_call(trans_b, rows, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
		return;
	}
	float *pa = pad, *pc = pad + (size_t)GEMM_MIN_ROWS * k;
	for (int i = 0; i < rows; i++) {
		memcpy(pa + (size_t)i * k, a + (size_t)i * lda, (size_t)k * sizeof(float));
		if (beta != 0)
			memcpy(pc + (size_t)i * n, c + (size_t)i * ldc, (size_t)n * sizeof(float));
	}
	gemm_dnnl_call(trans_b, GEMM_MIN_ROWS, n, k, alpha, pa, k, b, ldb, beta, pc, n);
	for (int i = 0; i < rows; i++)
		memcpy(c + (size_t)i * ldc, pc + (size_t)i * n, (size_t)n * sizeof(float));
	free(pad);
}

static bool dnnl_avx512(void)
{
	return (dnnl_get_effective_cpu_isa() & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core;
}

/* oneDNN's version and the instruction set its kernels use (ONEDNN_MAX_CPU_ISA may lower it). */
static void dnnl_describe(char *out, size_t size)
{
	const dnnl_version_t *v = dnnl_version();
	dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
	const char *name = dnnl_avx512() ? "AVX-512" : (isa & dnnl_cpu_isa_avx2) == dnnl_cpu_isa_avx2 ? "AVX2" : "SSE4.1";
	snprintf(out, size, "%d.%d.%d %s (isa 0x%x)", v->major, v->minor, v->patch, name, (unsigned)isa);
}
#endif

#define GEMM_KEYS_ROWS 8

/* One product on LIB. */
static void gemm_lib(enum gemm_lib lib, bool trans_b, int m, int n, int k, float alpha, const float *a, int lda,
		     const float *b, int ldb, float beta, float *c, int ldc)
{
	if (lib == GEMM_LIB_OWN) { /* chosen only where gemmkern_available() */
		gemmkern_sgemm(trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
		return;
	}
#ifdef GEMM_DNNL
	if (lib == GEMM_LIB_DNNL) {
		gemm_onednn(trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
		return;
	}
#else
	(void)lib;
#endif
	cblas_sgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb,
		    beta, c, ldc);
}

/* The packed copies of the timed weights (at most one per class and layout), made at their first
 * call: the measurement keeps each shape's best of 3 rounds, so the packing is never in it. */
static struct tune_packed {
	bool trans_b;
	int n, k;
	float *copy;
} tune_packed[2 * GEMM_CLASSES];

static const float *gemm_tune_packed(bool trans_b, int n, int k, const float *b)
{
	int i = 0;
	for (; i < 2 * GEMM_CLASSES && tune_packed[i].copy; i++)
		if (tune_packed[i].trans_b == trans_b && tune_packed[i].n == n && tune_packed[i].k == k)
			return tune_packed[i].copy;
	size_t bytes = (gemmkern_packed_floats(n, k) * sizeof(float) + 63) / 64 * 64;
	float *copy = i < 2 * GEMM_CLASSES ? aligned_alloc(64, bytes) : NULL;
	if (copy) {
		gemmkern_pack(trans_b, n, k, b, trans_b ? k : n, copy);
		tune_packed[i] = (struct tune_packed){trans_b, n, k, copy};
	}
	return copy;
}

static void gemm_tune_packed_free(void)
{
	for (int i = 0; i < 2 * GEMM_CLASSES; i++)
		free(tune_packed[i].copy);
	memset(tune_packed, 0, sizeof tune_packed);
}

/* One timed product. A weight's product (depth past a head's 128) on attnscope's kernel reads a
 * packed copy, as the forward's do from the copies its long-lived runs make (model_promote_weights):
 * the kernel is chosen for those runs (the explorer's keystrokes, corpus mode), and packing B in
 * every call cost it half its rate at 8 rows. */
static void gemm_tune_run(enum gemm_lib lib, bool trans_b, int m, int n, int k, const float *a, const float *b, float *c)
{
	const float *packed = lib == GEMM_LIB_OWN && k > 128 ? gemm_tune_packed(trans_b, n, k, b) : NULL;
	if (packed)
		gemmkern_sgemm_packed(m, n, k, 1.0f, a, k, NULL, packed, 0.0f, NULL, c, n);
	else
		gemm_lib(lib, trans_b, m, n, k, 1.0f, a, k, b, trans_b ? k : n, 0.0f, c, n);
}

/* ---- OpenBLAS's threads ---- */

/* The setting is global, so users are counted and the last one restores it. */
static pthread_mutex_t blas_lock = PTHREAD_MUTEX_INITIALIZER;
static int blas_users, blas_saved = 1;

int gemm_serial_begin(void)
{
	pthread_mutex_lock(&blas_lock);
	if (blas_users++ == 0) {
		blas_saved = openblas_get_num_threads();
		if (blas_saved > 1)
			openblas_set_num_threads(1);
	}
	int saved = blas_saved;
	pthread_mutex_unlock(&blas_lock);
	return saved;
}

void gemm_serial_end(void)
{
	pthread_mutex_lock(&blas_lock);
	if (--blas_users == 0 && blas_saved > 1)
		openblas_set_num_threads(blas_saved);
	pthread_mutex_unlock(&blas_lock);
}

/* ---- the choice, made once per process ---- */

static struct gemm_tune tune;                 /* the library per class, and the rates */
static char tune_path[4096], tune_how[200], tune_note[600];
static int row_block;
static pthread_once_t tune_once = PTHREAD_ONCE_INIT;

/* A note for --version --verbose; on stderr too when LOUD (what the user asked for was not done). */
static void gemm_note_as(bool loud, const char *fmt, const char *a, const char *b)
{
	size_t used = strlen(tune_note);
	if (used)
		used += (size_t)snprintf(tune_note + used, sizeof tune_note - used, "; ");
	if (used >= sizeof tune_note)
		return;
	snprintf(tune_note + used, sizeof tune_note - used, fmt, a, b);
	if (loud)
		fprintf(stderr, "attnscope: %s\n", tune_note + used);
}

static void gemm_note(const char *fmt, const char *a, const char *b)
{
	gemm_note_as(true, fmt, a, b);
}

static void gemm_measure_rows(bool measured);

static void gemm_tune_init(void)
{
	char isa[128] = "none", why[300];
	unsigned available = 1u << GEMM_LIB_OPENBLAS;
#ifdef GEMM_DNNL
	dnnl_describe(isa, sizeof isa);
	available |= 1u << GEMM_LIB_DNNL;
#endif
	const char *kernel = getenv("ATTNSCOPE_GEMM_KERNEL"); /* attnscope's tiles: the widest unless told */
	if (kernel && *kernel && strcmp(kernel, "auto") != 0 && !gemmkern_use(kernel))
		gemm_note("ATTNSCOPE_GEMM_KERNEL=%s: not avx2, avx512 or auto, or the CPU lacks it%s; the widest",
			  kernel, "");
	if (gemmkern_available())
		available |= 1u << GEMM_LIB_OWN;
	char own[96]; /* the kernel, how it is timed (gemm_tune_run) and kept (GEMMTUNE_MARGIN_SCORES): a
		       * cache timed or chosen otherwise is measured again */
	snprintf(own, sizeof own, "%s, weights packed, scores kept within %.0f %%", gemmkern_version(),
		 (GEMMTUNE_MARGIN_SCORES - 1) * 100);
	gemmtune_key(isa, available >> GEMM_LIB_OWN & 1 ? own : NULL, tune.key, sizeof tune.key);
	gemmtune_path(tune_path, sizeof tune_path);
	const char *env = getenv("ATTNSCOPE_GEMM");
	int forced = -1;
	for (int l = 0; env && l < GEMM_LIBS; l++)
		if (strcmp(env, gemmtune_lib_name((enum gemm_lib)l)) == 0)
			forced = l;
	if (env && *env && forced < 0 && strcmp(env, "auto") != 0)
		gemm_note("ATTNSCOPE_GEMM=%s%s is not openblas, dnnl, attnscope or auto: auto", env, "");
	if (forced == GEMM_LIB_DNNL && !(available >> GEMM_LIB_DNNL & 1)) {
		gemm_note("ATTNSCOPE_GEMM=dnnl: %sbuilt without oneDNN (configure --with-gemm)%s; auto", "", "");
		forced = -1;
	}
	if (forced == GEMM_LIB_OWN && !(available >> GEMM_LIB_OWN & 1)) {
		gemm_note("ATTNSCOPE_GEMM=attnscope: %sthe CPU lacks AVX2 or FMA%s; auto", "", "");
		forced = -1;
	}
	gemm_serial_begin(); /* OpenBLAS single-threaded, as in the forward's own threads */
	if (forced < 0 && available == 1u << GEMM_LIB_OPENBLAS) {
		forced = GEMM_LIB_OPENBLAS;
		snprintf(tune_how, sizeof tune_how, "OpenBLAS only (built without oneDNN, CPU without AVX2 and FMA)");
	}
	if (forced >= 0) {
		for (int c = 0; c < GEMM_CLASSES; c++)
			tune.lib[c] = forced;
		if (!*tune_how)
			snprintf(tune_how, sizeof tune_how, "forced by ATTNSCOPE_GEMM=%s", env);
	} else {
		struct gemm_tune got;
		int rc = gemmtune_load(tune_path, tune.key, &got, why, sizeof why);
		if (rc == 0) {
			tune = got;
			snprintf(tune_how, sizeof tune_how, "read from the cache");
		} else {
			if (rc < 0)
				gemm_note("GEMM cache %s ignored (%s); measured again", tune_path, why);
			double t0 = progress_now();
			gemmtune_measure(&tune, gemm_tune_run, available);
			gemm_tune_packed_free();
			snprintf(tune_how, sizeof tune_how, "measured in %.0f ms", (progress_now() - t0) * 1e3);
			if (gemmtune_save(tune_path, &tune, why, sizeof why) < 0)
				gemm_note("GEMM cache %s not written (%s)", tune_path, why);
		}
	}
	gemm_measure_rows(forced < 0);
	gemm_serial_end();
}

static void gemm_tune_once(void)
{
	pthread_once(&tune_once, gemm_tune_init);
}

void gemm(bool trans_b, int m, int n, int k, float alpha, const float *a, int lda, const float *b, int ldb,
	  float beta, float *c, int ldc)
{
	if (m <= 0 || n <= 0)
		return;
	gemm_tune_once();
	gemm_lib((enum gemm_lib)tune.lib[gemmtune_class(trans_b, k)], trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c,
		 ldc);
}

bool gemm_packs(bool trans_b, int k)
{
	gemm_tune_once();
	return tune.lib[gemmtune_class(trans_b, k)] == GEMM_LIB_OWN;
}

size_t gemm_packed_floats(int n, int k)
{
	return gemmkern_packed_floats(n, k);
}

int gemm_packed_block(void)
{
	return GEMMKERN_NC;
}

void gemm_pack(bool trans_b, int n, int k, const float *b, int ldb, float *out)
{
	gemmkern_pack(trans_b, n, k, b, ldb, out);
}

size_t gemm_packed_a_floats(int m, int k)
{
	return gemmkern_packed_a_floats(m, k);
}

void gemm_pack_a(int m, int k, const float *a, int lda, float *out)
{
	gemmkern_pack_a(m, k, a, lda, out);
}

int gemm_pack_a_parts(int m, int k)
{
	return gemmkern_pack_a_parts(m, k);
}

void gemm_pack_a_part(int m, int k, const float *a, int lda, float *out, int piece)
{
	gemmkern_pack_a_part(m, k, a, lda, out, piece);
}

void gemm_packed(int m, int n, int k, float alpha, const float *a, int lda, const float *apacked, const float *packed,
		 float beta, const float *bias, float *c, int ldc)
{
	if (m > 0 && n > 0)
		gemmkern_sgemm_packed(m, n, k, alpha, a, lda, apacked, packed, beta, bias, c, ldc);
}

void gemm_packed_heads(int m, int n, int k, float alpha, const float *a, int lda, const float *apacked,
		       const float *packed, float beta, const float *bias, const struct gemm_heads *heads)
{
	if (m > 0 && n > 0)
		gemmkern_sgemm_packed_heads(m, n, k, alpha, a, lda, apacked, packed, beta, bias, heads);
}

/* Whether a class runs on LIB (within gemm_tune_init; gemm_any after it). */
static bool gemm_uses(enum gemm_lib lib)
{
	for (int c = 0; c < GEMM_CLASSES; c++)
		if (tune.lib[c] == (int)lib)
			return true;
	return false;
}

static bool gemm_any(enum gemm_lib lib)
{
	gemm_tune_once();
	return gemm_uses(lib);
}

/* OpenBLAS threads a call itself; oneDNN's calls and attnscope's kernel's run on one thread. With
 * any class on those the engine shares all the work between its own threads (OpenBLAS then held to
 * one thread for the whole pass), so every call is single-threaded whatever its library. */
bool gemm_threads_itself(void)
{
	return !gemm_any(GEMM_LIB_DNNL) && !gemm_any(GEMM_LIB_OWN);
}

int gemm_tile_columns(void)
{
	return gemm_any(GEMM_LIB_OWN) ? GEMMKERN_NC : gemm_any(GEMM_LIB_DNNL) ? 128 : 64;
}

/* OpenBLAS's rows. Measured with 0.3.21's Zen kernels: single-threaded, it takes the rows of A 12
 * at a time, rounding the first 6 and the last 6 of each 12 differently, and the last rows (their
 * number mod 12) differently again; threaded, it also cuts the rows between its threads where their
 * number says (12 rows: 6 and 6). So a row's sums depend on its place from the call's first row and
 * on where the call ends, and on nothing else: a call starting 12k rows after a whole one's first
 * and ending on the same row computes each row as the whole one did. oneDNN's, as gemm_onednn calls
 * it: 1. The block is found by computing a probe both ways (1, 2, 3, 4, 6, ... rows) on every class
 * (its library and a shape of it). */
#define GEMM_PROBE_ROWS 101 /* prime: every block leaves some last rows */

/* Whether calls starting BLOCK, 2 BLOCK, .. rows after a whole probe's first row (of GEMM_PROBE_ROWS
 * rows of A [rows][k]) give its rows bit for bit; WHOLE and PART hold GEMM_PROBE_ROWS x N floats. */
static bool gemm_probe(int block, bool trans_b, int k, int n, const float *a, const float *b, float *whole, float *part)
{
	enum gemm_lib lib = (enum gemm_lib)tune.lib[gemmtune_class(trans_b, k)];
	/* attnscope's kernel sums each row's dots in one order set by the depth alone, by its design: a
	 * library's release or CPU cannot change that, and check_gemmkern proves it for every row range
	 * on every build. Probed, its block of 1 row cost 1.8 GFLOP at every start (45 ms of a 70 ms
	 * --dump of a small model on an AVX2 EPYC) and a minute under valgrind. */
	if (lib == GEMM_LIB_OWN)
		return true;
	int ldb = trans_b ? k : n;
	gemm_lib(lib, trans_b, GEMM_PROBE_ROWS, n, k, 1.0f, a, k, b, ldb, 0.0f, whole, n);
	for (int r0 = block; r0 < GEMM_PROBE_ROWS; r0 += block) {
		int m = GEMM_PROBE_ROWS - r0;
		gemm_lib(lib, trans_b, m, n, k, 1.0f, a + (size_t)r0 * k, k, b, ldb, 0.0f, part, n);
		if (memcmp(part, whole + (size_t)r0 * n, (size_t)m * n * sizeof(float)) != 0)
			return false;
	}
	return true;
}

/* Whether a causal model's block of 1 row holds beyond the rows: attnscore_block then computes a
 * query's scores against all the text's keys and its context over all of them (the later ones'
 * probabilities 0), so the sums must not depend on the number of keys either, as columns of the
 * scores (q·kᵀ) or depth of the context (P·V). oneDNN's AVX-512 kernels hold; its AVX2 ones do not
 * (at 5, 6, 8, 17, 24, 100 columns of 512 other sums), so there the block is more than 1 row and
 * a block's queries take only the keys up to its end, as a whole run's do. A, B: probe data. */
static bool gemm_probe_keys(const float *a, const float *b, float *whole, float *part)
{
	enum { ROWS = 20, D = 64, FEW = 37, MANY = 100 };
	for (int k = 128; k <= 2048; k *= 4) /* the context's depth: all the keys, whatever their class */
		if (tune.lib[gemmtune_class(false, k)] != tune.lib[gemmtune_class(false, 64)])
			return false;
	enum gemm_lib lib = (enum gemm_lib)tune.lib[gemmtune_class(true, D)];
	gemm_lib(lib, true, ROWS, MANY, D, 1.0f, a, D, b, D, 0.0f, whole, MANY); /* scores: keys as columns */
	gemm_lib(lib, true, ROWS, FEW, D, 1.0f, a, D, b, D, 0.0f, part, FEW);
	for (int i = 0; i < ROWS; i++)
		if (memcmp(part + (size_t)i * FEW, whole + (size_t)i * MANY, FEW * sizeof(float)) != 0)
			return false;
	float *p = part + (size_t)ROWS * MANY; /* [ROWS][MANY] probabilities, 0 beyond FEW keys */
	for (int i = 0; i < ROWS; i++)
		for (int j = 0; j < MANY; j++)
			p[(size_t)i * MANY + j] = j < FEW ? a[(size_t)i * MANY + j] : 0.0f;
	for (int k = FEW; k <= MANY; k += MANY - FEW) { /* context: keys as depth */
		lib = (enum gemm_lib)tune.lib[gemmtune_class(false, k)];
		gemm_lib(lib, false, ROWS, D, k, 1.0f, p, MANY, b, D, 0.0f, k == FEW ? whole : part, D);
	}
	return memcmp(whole, part, (size_t)ROWS * D * sizeof(float)) == 0;
}

/* The row block of the classes' libraries; called within gemm_tune_init. Where no block keeps the
 * sums of the libraries chosen by measurement (MEASURED), every class goes to attnscope's kernel,
 * whose sums depend on the depth alone, when the CPU runs it; else the classes on oneDNN go to
 * OpenBLAS (said in the note): token reuse is kept. On an Intel Xeon with AVX-512 neither oneDNN's
 * nor OpenBLAS 0.3.21's SkylakeX kernels kept any block beside the kernel's, and the measurement put
 * a head's scores on either of them by a few per cent. */
static void gemm_measure_rows(bool measured)
{
	static const int blocks[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48};
	static const struct {
		bool trans_b;
		int k, n;
	} shapes[] = {{false, 64, 96}, {false, 160, 64}, {false, 1100, 64},
		      {true, 64, 96},  {true, 160, 64},  {true, 1100, 64}}; /* every class, both layouts, beyond OpenBLAS's small sizes */
	row_block = 0;
	size_t ka = 1100, nb = 96;
	float *a = malloc(((size_t)GEMM_PROBE_ROWS * ka + ka * nb + 2 * (size_t)GEMM_PROBE_ROWS * nb) * sizeof(float));
	if (!a)
		return; /* no reuse */
	float *b = a + (size_t)GEMM_PROBE_ROWS * ka, *whole = b + ka * nb, *part = whole + (size_t)GEMM_PROBE_ROWS * nb;
	uint32_t s = 12345u;
	for (size_t i = 0; i < (size_t)GEMM_PROBE_ROWS * ka + ka * nb; i++) {
		s = s * 1664525u + 1013904223u;
		a[i] = (float)(s >> 8) / 8388608.0f - 1.0f; /* [-1, 1) */
	}
	for (int attempt = 0; attempt < 2 && !row_block; attempt++) {
		bool keys_free = gemm_probe_keys(a, b, whole, part);
		for (size_t i = keys_free ? 0 : 1; i < sizeof blocks / sizeof blocks[0] && !row_block; i++) {
			bool all = true;
			for (size_t j = 0; j < sizeof shapes / sizeof shapes[0] && all; j++)
				all = gemm_probe(blocks[i], shapes[j].trans_b, shapes[j].k, shapes[j].n, a, b, whole, part);
			if (all)
				row_block = blocks[i];
		}
		/* oneDNN alone, rows free but keys not: a causal pass's attention runs in calls of the block's
		 * rows, each padded to 16 (gemm_onednn): 8, not 2, wastes less; not 16, which would leave
		 * short texts (a model of 16 positions) nothing to reuse */
		if (row_block > 1 && GEMM_KEYS_ROWS % row_block == 0 && !gemm_uses(GEMM_LIB_OPENBLAS))
			row_block = GEMM_KEYS_ROWS;
		bool own = measured && gemmkern_available() && (gemm_uses(GEMM_LIB_DNNL) || gemm_uses(GEMM_LIB_OPENBLAS));
		if (row_block || (!gemm_uses(GEMM_LIB_DNNL) && !own))
			break;
		const char *lib = gemm_uses(GEMM_LIB_DNNL) ? "oneDNN" : "OpenBLAS";
		for (int c = 0; c < GEMM_CLASSES; c++)
			tune.lib[c] = own ? GEMM_LIB_OWN : GEMM_LIB_OPENBLAS;
		/* to the kernel: as fast within the margins, and every token reused, so only in the note (it
		 * is made on every start: a line on stderr each time broke every caller's clean output) */
		gemm_note_as(!own, "%s's sums vary with the row count here: %s for every class (token reuse)", lib,
			     own ? "attnscope's kernel" : "OpenBLAS");
	}
	free(a);
}

int gemm_row_block(void)
{
	gemm_tune_once();
	return row_block;
}

bool gemm_avx512(void)
{
#ifdef GEMM_DNNL
	return dnnl_avx512() && !gemm_any(GEMM_LIB_OPENBLAS) && !gemm_any(GEMM_LIB_OWN);
#else
	return false;
#endif
}

/* The libraries the classes run on, named (the choice is fixed once made, so one buffer serves). */
static char backend_name[160];
static pthread_once_t backend_once = PTHREAD_ONCE_INIT;

static void gemm_backend_once(void)
{
	int used = 0, n = 0;
	for (int l = 0; l < GEMM_LIBS; l++)
		if (gemm_uses((enum gemm_lib)l)) {
			const char *title = gemmtune_lib_title((enum gemm_lib)l);
			char own[40];
			if (l == GEMM_LIB_OWN) {
				snprintf(own, sizeof own, "attnscope's %s kernel", gemmkern_isa());
				title = own;
			}
#ifdef GEMM_DNNL
			if (l == GEMM_LIB_DNNL && dnnl_avx512())
				title = "oneDNN (AVX-512)";
#endif
			used += snprintf(backend_name + used, sizeof backend_name - (size_t)used, "%s%s", n++ ? " and " : "", title);
		}
	if (n > 1)
		snprintf(backend_name + used, sizeof backend_name - (size_t)used, ", by shape");
}

const char *gemm_backend(void)
{
	gemm_tune_once();
	pthread_once(&backend_once, gemm_backend_once);
	return backend_name;
}

size_t gemm_describe(char *out, size_t size)
{
	gemm_tune_once();
	size_t used = 0;
#define PUT(...) (used += (size_t)snprintf(used < size ? out + used : NULL, used < size ? size - used : 0, __VA_ARGS__))
	PUT("GEMM: %s, %s; cache file %s\n", gemm_backend(), tune_how, tune_path);
	PUT("  key: %s\n", tune.key);
	PUT("  %-11s %-10s %-31s %-31s %s\n", "class", "library", "OpenBLAS GFLOP/s", "oneDNN GFLOP/s",
	    "attnscope GFLOP/s");
	PUT("  %-11s %-10s %-31s %-31s %s\n", "(depth)", "", "(1 thread, 8/32/128/512 rows)", "(same)", "(same)");
	for (int c = 0; c < GEMM_CLASSES; c++) {
		char r[GEMM_LIBS][64];
		for (int l = 0; l < GEMM_LIBS; l++) {
			if (!(tune.rate[c][l][0] > 0)) {
				snprintf(r[l], sizeof r[l], "-");
				continue;
			}
			int w = 0;
			for (int s = 0; s < GEMM_SIZES; s++)
				w += snprintf(r[l] + w, sizeof r[l] - (size_t)w, "%s%.1f", s ? " " : "", tune.rate[c][l][s]);
		}
		PUT("  %-11s %-10s %-31s %-31s %s\n", gemmtune_class_name(c), gemmtune_lib_title((enum gemm_lib)tune.lib[c]),
		    r[0], r[1], r[2]);
	}
	PUT("  rows block of token reuse: %d%s\n", row_block, row_block ? "" : " (no reuse)");
	if (*tune_note)
		PUT("  note: %s\n", tune_note);
#undef PUT
	return used;
}
