/* weights.h -- weight matrices used where they are stored: in the safetensors mapping, as F32, F16
 * or BF16 (private to the engine).
 *
 * A model does not widen its half-precision weights to float32 at load (a 7 B model in BF16 would
 * need 28 GB instead of 14). A linear layer converts its weight in tiles of output rows (or, for the
 * [in][out] layout, of output columns) small enough to stay in the CPU's cache, and runs sgemm on
 * each tile, the tiles shared between threads. An optional float32 cache (ATTNSCOPE_WEIGHT_CACHE,
 * off by default) keeps whole converted matrices within a byte budget. Conversion is exact and every
 * path runs the same sgemm calls, so the results are bit-identical whichever path a matrix takes.
 * Tile shapes never depend on the thread count. */
#ifndef ATTNSCOPE_WEIGHTS_H
#define ATTNSCOPE_WEIGHTS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/safetensors.h"

/* A 2-D tensor as stored: ROWS x COLS values of DTYPE at DATA (in the mapping, maybe unaligned). */
struct weight {
	const uint8_t *data;  /* NULL when the model has no such tensor */
	enum st_dtype dtype;  /* ST_F32, ST_F16 or ST_BF16 */
	int64_t rows, cols;
	const float *f32;     /* the mapping itself when it is aligned F32, else NULL */
	int slot;             /* index into the cache's slots (half-precision weights), -1 = none */
	const float *packed;  /* op(W) packed in attnscope's kernel's order (weight_pack), or NULL: set
			       * once while forward passes may run, so read with weight_packed */
	size_t packed_bytes;
};

/* Whole matrices converted to float32, kept while they fit a byte budget; filled in first-use
 * order and never evicted (a forward pass walks the layers in order: with LRU eviction, a model
 * larger than the budget would convert every matrix twice and keep none). */
struct wcache {
	pthread_mutex_t lock;
	size_t budget, used;  /* bytes */
	int n_slots;
	float **slots;        /* [n_slots] converted matrices or NULL */
	unsigned char *tried; /* [n_slots] 1 when the matrix did not fit (tiles from then on) */
};

static inline bool weight_present(const struct weight *w)
{
	return w->data != NULL;
}

/* Bytes W takes in its file. */
size_t weight_bytes(const struct weight *w);
/* Rows R0 .. R0+NR-1 of W as float32 into DST (NR x cols, dense). */
void weight_rows(const struct weight *w, int64_t r0, int64_t nr, float *dst);

/* Columns C0 .. C0+NC-1 of every row of W as float32 into DST (rows x NC, dense). */
void weight_cols(const struct weight *w, int64_t c0, int64_t nc, float *dst);

/* Convert COUNT values of DTYPE at SRC (maybe unaligned) to float32. */
void weight_convert(enum st_dtype dtype, const uint8_t *src, size_t count, float *dst);

/* The cache budget from ATTNSCOPE_WEIGHT_CACHE ("0", "512M", "2G", "unlimited", bytes), else 0. */
size_t wcache_default_budget(void);
int wcache_init(struct wcache *c, size_t budget);
void wcache_free(struct wcache *c);
/* Give W a slot when it would need converting (F16/BF16). Returns -1 when out of memory. */
int wcache_register(struct wcache *c, struct weight *w);
/* Bytes of converted matrices the cache holds now. */
size_t wcache_bytes(struct wcache *c);

/* weight_linear for a pass over many rows on one thread (a corpus batch): one product over the whole
 * of W when it is aligned F32 in the mapping, where weight_linear multiplies tile by tile (each tile's
 * product packs X again: a bert-base layer's linears at 512 rows on OpenBLAS's Zen kernels, one
 * thread, ran at 77-87 GFLOP/s whole against 66-77 in tiles). The sums differ from weight_linear's
 * in the last bits. With several threads, or W in F16/BF16 or unaligned, it is weight_linear. */
void weight_linear_whole(struct wcache *cache, const float *x, int n, int in, int out, const struct weight *w,
			 bool transposed, const float *b, float *y, int ldy);

/* True when W is cut into more than one tile (a matrix larger than a tile). */
bool weight_tiled(const struct weight *w, bool transposed);

/* Y[n][out] = X[n][in] · W + B, W stored [out][in] (TRANSPOSED, torch Linear) or [in][out] (GPT-2
 * Conv1D), read from the mapping through CACHE (may be NULL: tiles only). B may be NULL. */
void weight_linear(struct wcache *cache, const float *x, int n, int in, int out, const struct weight *w,
		   bool transposed, const float *b, float *y, int ldy);

/* Run FN(CTX, item, scratch) for items 0 .. N-1 on the engine's threads (as many as OpenBLAS would
 * use; OpenBLAS is single-threaded meanwhile), each thread with SCRATCH_FLOATS floats of scratch.
 * Returns -1, having run nothing, when there is no memory for the scratch. */
int weights_parallel(int n, size_t scratch_floats, void (*fn)(void *ctx, int item, float *scratch), void *ctx);

/* OpenBLAS single-threaded (our threads share the work) until the matching end; nests. Returns the
 * number of threads to use. (Not around whole forward passes: OpenBLAS rounds a few sums
 * differently with one thread than with several, and the results must not change.) */
int weights_threads_begin(void);
void weights_threads_end(void);

/* Packed weights. A process that runs many forward passes (the explorer, a corpus run) can keep a
 * copy of a matrix in the order attnscope's kernel reads it, when the kernel runs its products
 * (gemm_packs): the linears then read the copy and skip packing each tile in every call (the same
 * bits; at a keystroke's 32 tokens that packing cost the products a fifth of their time). The copy
 * is float32 in huge pages: as large as an F32 file's matrix, twice a BF16 one's. */

/* One of several linears of the same input (weight_linear_set): W with OUT outputs, bias B (or
 * NULL), into Y with rows LDY apart, or, with HEADS, where it puts them (a trace's head-major q, k
 * and v; Y and LDY unused). */
struct gemm_heads;
struct linear_part {
	const struct weight *w;
	int out;
	const float *b;
	float *y;
	int ldy;
	const struct gemm_heads *heads;
};
#define WEIGHT_SET_MAX 4

/* weight_linear of COUNT (at most WEIGHT_SET_MAX) parts on the same X [n][in], the same bits: where
 * all have packed copies, X is packed once and the tiles of all of them shared between the threads
 * in one job (a layer's q, k and v projections: one packing of X instead of three, 12 tiles to
 * share instead of 4 three times); else one weight_linear after the other. Returns 0; -1, having
 * done nothing, when a part asks for HEADS and they cannot run that way (not all packed, or no
 * memory for X's copy). */
int weight_linear_set(struct wcache *cache, const float *x, int n, int in, bool transposed,
		      const struct linear_part *parts, int count);

/* Pack W (TRANSPOSED as weight_linear takes it) unless it is packed already, it is not on the
 * kernel, or its copy would pass BUDGET bytes. Returns the bytes the copy took (0: none made; -1:
 * no memory). Forward passes may run meanwhile: they see the copy once it is whole. */
long long weight_pack(struct weight *w, bool transposed, size_t budget);
/* The bytes weight_pack would take for W's copy (0: none would be made, or it has one). */
size_t weight_pack_bytes(const struct weight *w, bool transposed);
/* Free W's packed copy (no forward pass may run). */
void weight_unpack(struct weight *w);
/* W's packed copy, or NULL. */
const float *weight_packed(const struct weight *w);
/* The budget of packed copies: ATTNSCOPE_PACKED_WEIGHTS ("0" or "off": none; "512M", "2G",
 * "unlimited", bytes), else half the memory available (MemAvailable) when asked. */
size_t weight_packed_budget(void);

/* Bytes of float32 a tile holds (0: the default, about a core's L2 cache). For tests. */
void weight_set_tile_bytes(size_t bytes);

#endif
