/* weights.c -- weight matrices used from the mapping: conversion, tiled linears, the float32 cache
 * (see weights.h). */
#include "engine/weights.h"

#include <cblas.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/gemm.h"
#include "engine/gemmkern.h"
#include "engine/hugemap.h"
#include "engine/workers.h"

#define MAX_THREADS WORKERS_MAX

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define WEIGHTS_X86 1
#endif

/* ---- conversion ---- */

static void cvt_bf16(const uint8_t *src, size_t n, float *dst)
{
	size_t i = 0;
#ifdef WEIGHTS_X86
	const __m128i zero = _mm_setzero_si128();
	for (; i + 8 <= n; i += 8) { /* bf16 -> f32 is the 16 bits moved up: interleave with zeros */
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(src + 2 * i));
		_mm_storeu_si128((__m128i *)(void *)(dst + i), _mm_unpacklo_epi16(zero, v));
		_mm_storeu_si128((__m128i *)(void *)(dst + i + 4), _mm_unpackhi_epi16(zero, v));
	}
#endif
	for (; i < n; i++) {
		uint16_t h;
		memcpy(&h, src + 2 * i, 2);
		dst[i] = st_bf16_to_f32(h);
	}
}

static void cvt_f16_scalar(const uint8_t *src, size_t n, float *dst)
{
	for (size_t i = 0; i < n; i++) {
		uint16_t h;
		memcpy(&h, src + 2 * i, 2);
		dst[i] = st_f16_to_f32(h);
	}
}

#ifdef WEIGHTS_X86
/* Optimized in a debug build too: at -O0 every intrinsic is a call, and the tests' float16 models
 * convert their whole unembedding for each row of the head (13 % of check_ablate's instructions under
 * valgrind; with lmhead.c's dots, check_ablate there took 214 s instead of 289-293). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("O2")
#endif
__attribute__((target("avx,f16c"))) static void cvt_f16_f16c(const uint8_t *src, size_t n, float *dst)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(src + 2 * i))));
	cvt_f16_scalar(src + 2 * i, n - i, dst + i);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
#endif

static void cvt_f16(const uint8_t *src, size_t n, float *dst)
{
#ifdef WEIGHTS_X86
	static int has_f16c = -1;
	if (has_f16c < 0) {
		/* F16C from cpuid (clang's __builtin_cpu_supports does not know "f16c"); AVX through the
		 * builtin, which also checks that the OS saves the AVX registers. */
		unsigned a, b, c, d;
		__builtin_cpu_init();
		has_f16c = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) && __builtin_cpu_supports("avx");
	}
	if (has_f16c) {
		cvt_f16_f16c(src, n, dst);
		return;
	}
#endif
	cvt_f16_scalar(src, n, dst);
}

void weight_convert(enum st_dtype dtype, const uint8_t *src, size_t count, float *dst)
{
	if (dtype == ST_BF16)
		cvt_bf16(src, count, dst);
	else if (dtype == ST_F16)
		cvt_f16(src, count, dst);
	else
		memcpy(dst, src, count * sizeof(float)); /* F32, maybe unaligned in the file */
}

static size_t weight_esize(const struct weight *w)
{
	return w->dtype == ST_F32 ? 4 : 2;
}

size_t weight_bytes(const struct weight *w)
{
	return (size_t)w->rows * w->cols * weight_esize(w);
}

void weight_rows(const struct weight *w, int64_t r0, int64_t nr, float *dst)
{
	if (w->f32) {
		memcpy(dst, w->f32 + (size_t)r0 * w->cols, (size_t)nr * w->cols * sizeof(float));
		return;
	}
	weight_convert(w->dtype, w->data + (size_t)r0 * w->cols * weight_esize(w), (size_t)nr * w->cols, dst);
}

void weight_cols(const struct weight *w, int64_t c0, int64_t nc, float *dst)
{
	size_t es = weight_esize(w);
	for (int64_t r = 0; r < w->rows; r++)
		weight_convert(w->dtype, w->data + ((size_t)r * w->cols + c0) * es, nc, dst + (size_t)r * nc);
}

/* ---- the float32 cache ---- */

static size_t wcache_parse(const char *s, size_t fallback)
{
	if (!s || !*s)
		return fallback;
	if (strcmp(s, "unlimited") == 0 || strcmp(s, "inf") == 0)
		return SIZE_MAX;
	char *end;
	double v = strtod(s, &end);
	if (end == s || v < 0)
		return fallback;
	while (isspace((unsigned char)*end))
		end++;
	switch (toupper((unsigned char)*end)) {
	case 'K': v *= 1024.0; break;
	case 'M': v *= 1024.0 * 1024; break;
	case 'G': v *= 1024.0 * 1024 * 1024; break;
	case 'T': v *= 1024.0 * 1024 * 1024 * 1024; break;
	default: break;
	}
	return v >= (double)SIZE_MAX ? SIZE_MAX : (size_t)v;
}

/* No cache unless asked for. Measured on Qwen2.5-0.5B's shape in BF16 (2 cores): converting tiles
 * costs next to nothing beside the sgemm (SIMD, from memory read at half the bytes), a 1 GiB cache
 * made later passes no faster, took 1 GiB more memory and made the first pass ten times slower
 * (filling fresh pages). It pays where conversion is slow (F16 on a CPU without F16C). */
size_t wcache_default_budget(void)
{
	return wcache_parse(getenv("ATTNSCOPE_WEIGHT_CACHE"), 0);
}

int wcache_init(struct wcache *c, size_t budget)
{
	memset(c, 0, sizeof *c);
	c->budget = budget;
	return pthread_mutex_init(&c->lock, NULL) == 0 ? 0 : -1;
}

void wcache_free(struct wcache *c)
{
	for (int i = 0; i < c->n_slots; i++)
		free(c->slots[i]);
	free(c->slots);
	free(c->tried);
	pthread_mutex_destroy(&c->lock);
	memset(c, 0, sizeof *c);
}

int wcache_register(struct wcache *c, struct weight *w)
{
	w->slot = -1;
	if (!w->data || w->dtype == ST_F32) /* aligned F32 is used in place; unaligned F32 is copied by tile */
		return 0;
	if (c->n_slots % 64 == 0) {
		float **s = realloc(c->slots, (c->n_slots + 64) * sizeof *s);
		if (!s)
			return -1;
		c->slots = s;
		unsigned char *t = realloc(c->tried, c->n_slots + 64);
		if (!t)
			return -1;
		c->tried = t;
	}
	c->slots[c->n_slots] = NULL;
	c->tried[c->n_slots] = 0;
	w->slot = c->n_slots++;
	return 0;
}

size_t wcache_bytes(struct wcache *c)
{
	pthread_mutex_lock(&c->lock);
	size_t used = c->used;
	pthread_mutex_unlock(&c->lock);
	return used;
}

/* W as a whole float32 matrix from the cache (converting it if it fits), or NULL: use tiles. */
static const float *wcache_get(struct wcache *c, const struct weight *w)
{
	if (!c || w->slot < 0 || w->slot >= c->n_slots)
		return NULL;
	pthread_mutex_lock(&c->lock);
	float *f = c->slots[w->slot];
	if (!f && !c->tried[w->slot]) {
		size_t bytes = (size_t)w->rows * w->cols * sizeof(float);
		c->tried[w->slot] = 1;
		if (bytes <= c->budget - c->used && (f = malloc(bytes ? bytes : 1)) != NULL) {
			weight_convert(w->dtype, w->data, (size_t)w->rows * w->cols, f);
			c->slots[w->slot] = f;
			c->used += bytes;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return f;
}

/* ---- tiled linears ---- */

/* Bytes of float32 weights a tile holds: about a core's L2, so sgemm reads the tile from cache
 * right after its conversion wrote it. Tests make it tiny to cut small matrices into many tiles. */
static size_t tile_bytes = 512u << 10;
/* Tiles are whole multiples of gemm_tile_columns() rows or columns, and at least that many (wide
 * inputs: sgemm repacks X for every tile, so a tile must not be thin). Measured on Llama-3.1-8B's
 * down projection (14336 inputs) at 32 tokens, 9-row tiles ran 1.6 times slower than one sgemm,
 * 64-row ones as fast. oneDNN wants 128: on bert-base's down projection (3072 inputs) its 64-row
 * tiles ran at 60 % of its rate. 0 = that default; tests set 1. */
static int tile_min_step = 0;

void weight_set_tile_bytes(size_t bytes)
{
	tile_bytes = bytes ? bytes : 512u << 10;
	tile_min_step = bytes ? 1 : 0;
}

/* While work runs on our threads, each sgemm is single-threaded: OpenBLAS's own threads would fight
 * ours for the cores (and spin between calls). The count of users lives in gemm.c, which also holds
 * OpenBLAS to one thread while it measures the libraries. */
int weights_threads_begin(void)
{
	int saved = gemm_serial_begin();
	return saved < 1 ? 1 : saved > MAX_THREADS ? MAX_THREADS : saved;
}

void weights_threads_end(void)
{
	gemm_serial_end();
}

/* Tile buffers kept between linears (a few MB): allocating them afresh each time cost the first
 * forward pass of Qwen2.5-0.5B's shape a third of its CPU time in malloc and page faults. */
struct scratch {
	float *p;
	size_t cap; /* floats */
};
static pthread_mutex_t scratch_lock = PTHREAD_MUTEX_INITIALIZER;
static struct scratch scratch_pool[MAX_THREADS];
static int scratch_free;

static struct scratch scratch_get(size_t floats)
{
	struct scratch b = {NULL, 0};
	pthread_mutex_lock(&scratch_lock);
	if (scratch_free > 0)
		b = scratch_pool[--scratch_free];
	pthread_mutex_unlock(&scratch_lock);
	if (b.cap < floats) {
		free(b.p);
		b.p = malloc(floats * sizeof(float));
		b.cap = b.p ? floats : 0;
	}
	return b;
}

static void scratch_put(struct scratch b)
{
	pthread_mutex_lock(&scratch_lock);
	if (b.p && scratch_free < MAX_THREADS) {
		scratch_pool[scratch_free++] = b;
		b.p = NULL;
	}
	pthread_mutex_unlock(&scratch_lock);
	free(b.p);
}

struct pack_x_job {
	const float *x;
	int n, in;
	float *out;
};

static void pack_x_part(void *ctx, int part, float *scratch)
{
	const struct pack_x_job *j = ctx;
	(void)scratch;
	gemm_pack_a_part(j->n, j->in, j->x, j->in, j->out, part);
}

/* X [n][in] packed once for the tiles of a linear on a packed weight (each call would pack it again
 * for each of its blocks of columns); without memory, none (the calls pack it). A large X is packed
 * by the threads together: alone, the other thread waited (at 128 tokens on bert-base, 42 MB packed
 * per forward pass). */
static struct scratch scratch_packed_x(const float *x, int n, int in)
{
	struct scratch xp = scratch_get(gemm_packed_a_floats(n, in));
	if (!xp.p)
		return xp;
	struct pack_x_job j = {x, n, in, xp.p};
	int parts = gemm_pack_a_parts(n, in);
	if ((size_t)n * (size_t)in < 65536 || parts < 2 || weights_parallel(parts, 0, pack_x_part, &j) < 0)
		gemm_pack_a(n, in, x, in, xp.p);
	return xp;
}

struct par_job {
	void (*fn)(void *ctx, int item, float *scratch);
	void *ctx;
	float *scratch[WORKERS_MAX]; /* each worker's scratch (NULL when none was asked for) */
};

static void par_item(void *ctx, int item, int worker)
{
	struct par_job *j = ctx;
	j->fn(j->ctx, item, j->scratch[worker]);
}

int weights_parallel(int n, size_t scratch_floats, void (*fn)(void *ctx, int item, float *scratch), void *ctx)
{
	struct par_job j = {.fn = fn, .ctx = ctx};
	struct scratch b[WORKERS_MAX] = {{NULL, 0}};
	int threads = weights_threads_begin(), rc = 0;
	if (threads > n)
		threads = n;
	for (int i = 0; scratch_floats && i < threads; i++) {
		b[i] = scratch_get(scratch_floats);
		if (!b[i].p && i == 0)
			rc = -1;
		if (!b[i].p) /* without memory for a helper's scratch: fewer threads */
			threads = i;
		j.scratch[i] = b[i].p;
	}
	if (rc == 0)
		workers_run(threads, n, par_item, &j);
	for (int i = 0; i < WORKERS_MAX; i++)
		if (b[i].p)
			scratch_put(b[i]);
	weights_threads_end();
	return rc;
}

struct tile_job {
	const float *x;
	int n, in, out, ldy, step; /* STEP: output rows (transposed) or columns per tile */
	const struct weight *w;
	const float *f;            /* W as float32 (aligned F32 file or the cache), or NULL: convert tiles */
	const float *packed;       /* W's packed copy when the tiles start at its blocks, else NULL */
	const float *apacked;      /* with PACKED: X packed once for all the tiles, or NULL */
	bool transposed;
	const float *b;            /* the bias, or NULL */
	float *y;
	const struct gemm_heads *heads; /* with PACKED: where Y's columns go instead (gemmkern.h), or NULL */
};

/* Take tiles until none is left. Every path runs the same sgemm calls on the same tile shapes, so
 * the results do not depend on where the float32 values come from (mapping, cache or conversion). */
static void tile_one(struct tile_job *j, int t, float *tile)
{
	{
		int o0 = t * j->step, no = j->out - o0 < j->step ? j->out - o0 : j->step;
		float beta = j->b ? 1.0f : 0.0f;
		const float *wt;
		int ldw;
		if (j->packed && j->heads) { /* the same, its columns from O0 on where the heads put them */
			struct gemm_heads h = *j->heads;
			h.first += o0;
			gemm_packed_heads(j->n, no, j->in, 1.0f, j->x, j->in, j->apacked, j->packed + (size_t)o0 * j->in, 0.0f,
					  j->b ? j->b + o0 : NULL, &h);
			return;
		}
		if (j->packed) { /* the tile's columns of op(W) are a packed copy of their own; the bias added as
				    the sums are stored (the same bits as beta 1 on a copy of it) */
			gemm_packed(j->n, no, j->in, 1.0f, j->x, j->in, j->apacked, j->packed + (size_t)o0 * j->in, 0.0f,
				    j->b ? j->b + o0 : NULL, j->y + o0, j->ldy);
			return;
		}
		for (int i = 0; j->b && i < j->n; i++) /* the tile's bias, added by beta 1 (filled by its own thread) */
			memcpy(j->y + (size_t)i * j->ldy + o0, j->b + o0, (size_t)no * sizeof(float));
		if (j->transposed) { /* rows o0.. of W [out][in]: y[:, o0..] = x · tileᵀ */
			if (j->f) {
				wt = j->f + (size_t)o0 * j->in;
			} else {
				weight_rows(j->w, o0, no, tile);
				wt = tile;
			}
			gemm(true, j->n, no, j->in, 1.0f, j->x, j->in, wt, j->in, beta, j->y + o0, j->ldy);
		} else { /* columns o0.. of W [in][out] */
			if (j->f) {
				wt = j->f + o0;
				ldw = j->out;
			} else {
				weight_cols(j->w, o0, no, tile);
				wt = tile;
				ldw = no;
			}
			gemm(false, j->n, no, j->in, 1.0f, j->x, j->in, wt, ldw, beta, j->y + o0, j->ldy);
		}
	}
}

static void tile_item(void *ctx, int item, float *scratch)
{
	tile_one(ctx, item, scratch);
}

/* Rows or columns a tile of a linear with IN inputs holds. */
static int tile_step(int in)
{
	int step = (int)(tile_bytes / sizeof(float) / (in ? in : 1));
	int unit = tile_min_step ? tile_min_step : gemm_tile_columns();
	step = step >= unit ? step / unit * unit : step < 1 ? 1 : step;
	return step < unit ? unit : step;
}

bool weight_tiled(const struct weight *w, bool transposed)
{
	int in = (int)(transposed ? w->cols : w->rows), out = (int)(transposed ? w->rows : w->cols);
	return w->data && out > tile_step(in);
}

void weight_linear_whole(struct wcache *cache, const float *x, int n, int in, int out, const struct weight *w,
			 bool transposed, const float *b, float *y, int ldy)
{
	const float *f = w->f32; /* not the cache's: a matrix gets the same sums whether the cache holds it or not */
	const float *packed = weight_packed(w);
	int threads = weights_threads_begin();
	weights_threads_end();
	if ((!f && !packed) || threads > 1 || n == 0 || out == 0) { /* tiles: converted, or shared between threads */
		weight_linear(cache, x, n, in, out, w, transposed, b, y, ldy);
		return;
	}
	if (packed) {
		struct scratch xp = scratch_packed_x(x, n, in);
		gemm_packed(n, out, in, 1.0f, x, in, xp.p, packed, 0.0f, b, y, ldy);
		scratch_put(xp);
		return;
	}
	for (int i = 0; b && i < n; i++)
		memcpy(y + (size_t)i * ldy, b, out * sizeof(float));
	gemm(transposed, n, out, in, 1.0f, x, in, f, transposed ? in : out, b ? 1.0f : 0.0f, y, ldy);
}

/* How a linear of IN inputs and OUT > 0 outputs is cut: *STEP outputs a tile, *TILES tiles; W's packed
 * copy where the tiles start at its blocks, else NULL (tests' tiny tiles). */
static const float *tile_plan(int in, int out, const struct weight *w, int *step, int *tiles)
{
	*step = tile_step(in) < out ? tile_step(in) : out;
	*tiles = (out + *step - 1) / *step;
	const float *packed = weight_packed(w);
	return packed && *tiles > 1 && *step % gemm_packed_block() != 0 ? NULL : packed;
}

void weight_linear(struct wcache *cache, const float *x, int n, int in, int out, const struct weight *w,
		   bool transposed, const float *b, float *y, int ldy)
{
	const float *f = w->f32 ? w->f32 : wcache_get(cache, w);
	if (n == 0 || out == 0)
		return;
	int step, n_tiles;
	const float *packed = tile_plan(in, out, w, &step, &n_tiles);
	struct scratch xp = packed ? scratch_packed_x(x, n, in) : (struct scratch){NULL, 0};
	struct tile_job j = {x, n, in, out, ldy, step, w, f, packed, xp.p, transposed, b, y, NULL};
	bool done = false;
	if (n_tiles == 1) { /* one tile: one sgemm (threaded by OpenBLAS where it is the library) */
		struct scratch t = {NULL, 0};
		if (f || packed || (t = scratch_get((size_t)step * in)).p) {
			tile_one(&j, 0, t.p);
			scratch_put(t);
			done = true;
		}
	} else {
		done = weights_parallel(n_tiles, f || packed ? 0 : (size_t)step * in, tile_item, &j) == 0;
	}
	scratch_put(xp);
	if (done)
		return;
	/* No memory for a single tile: one row or column at a time (the same sums, another order). */
	for (int i = 0; b && i < n; i++)
		memcpy(y + (size_t)i * ldy, b, out * sizeof(float));
	float *row = malloc((size_t)in * sizeof(float));
	for (int k = 0; row && k < out; k++) {
		if (transposed)
			weight_rows(w, k, 1, row);
		else
			weight_cols(w, k, 1, row);
		for (int i = 0; i < n; i++)
			y[(size_t)i * ldy + k] = (b ? y[(size_t)i * ldy + k] : 0.0f) + cblas_sdot(in, x + (size_t)i * in, 1, row, 1);
	}
	free(row);
}

/* The tiles of several linears in one job: item I is tile I - FIRST[k] of linear K. */
struct set_job {
	struct tile_job j[WEIGHT_SET_MAX];
	int first[WEIGHT_SET_MAX + 1];
};

static void set_item(void *ctx, int item, float *scratch)
{
	struct set_job *s = ctx;
	int k = 0;
	while (item >= s->first[k + 1])
		k++;
	tile_one(&s->j[k], item - s->first[k], scratch);
}

int weight_linear_set(struct wcache *cache, const float *x, int n, int in, bool transposed,
		      const struct linear_part *parts, int count)
{
	struct set_job s;
	bool together = n > 0 && count > 0 && count <= WEIGHT_SET_MAX, heads = false;
	s.first[0] = 0;
	for (int k = 0; k < count; k++)
		heads |= parts[k].heads != NULL;
	for (int k = 0; together && k < count; k++) {
		const struct linear_part *p = &parts[k];
		int step = 1, tiles = 0;
		const float *packed = p->out > 0 ? tile_plan(in, p->out, p->w, &step, &tiles) : NULL;
		together = packed != NULL;
		s.j[k] = (struct tile_job){x, n, in, p->out, p->ldy, step, p->w, p->w->f32, packed, NULL, transposed, p->b, p->y,
					   p->heads};
		s.first[k + 1] = s.first[k] + tiles;
	}
	struct scratch xp = together ? scratch_packed_x(x, n, in) : (struct scratch){NULL, 0};
	if (!xp.p && heads) /* only the packed tiles write heads */
		return -1;
	if (!xp.p) { /* not all packed (or no memory for X's copy): each on its own */
		for (int k = 0; k < count; k++)
			weight_linear(cache, x, n, in, parts[k].out, parts[k].w, transposed, parts[k].b, parts[k].y, parts[k].ldy);
		return 0;
	}
	for (int k = 0; k < count; k++)
		s.j[k].apacked = xp.p;
	if (weights_parallel(s.first[count], 0, set_item, &s) < 0) /* asks no scratch: never fails */
		for (int item = 0; item < s.first[count]; item++)
			set_item(&s, item, NULL);
	scratch_put(xp);
	return 0;
}

/* ---- packed copies ---- */

const float *weight_packed(const struct weight *w)
{
	return __atomic_load_n(&w->packed, __ATOMIC_ACQUIRE);
}

size_t weight_pack_bytes(const struct weight *w, bool transposed)
{
	int64_t in = transposed ? w->cols : w->rows, out = transposed ? w->rows : w->cols;
	if (!w->data || weight_packed(w) || in < 1 || out < 1 || in > INT32_MAX || out > INT32_MAX ||
	    !gemm_packs(transposed, (int)in))
		return 0;
	return gemm_packed_floats((int)out, (int)in) * sizeof(float);
}

long long weight_pack(struct weight *w, bool transposed, size_t budget)
{
	int64_t in = transposed ? w->cols : w->rows, out = transposed ? w->rows : w->cols;
	size_t bytes = weight_pack_bytes(w, transposed);
	if (bytes == 0 || bytes > budget)
		return 0;
	float *p = hugemap_alloc(bytes), *tmp = NULL;
	int block = gemm_packed_block();
	if (p && !w->f32 && !(tmp = malloc((size_t)block * (size_t)in * sizeof(float)))) {
		hugemap_free(p, bytes);
		p = NULL;
	}
	if (!p)
		return -1;
	for (int64_t o0 = 0; o0 < out; o0 += block) { /* a block of the copy at a time, from float32 */
		int no = out - o0 < block ? (int)(out - o0) : block;
		float *at = p + (size_t)o0 * (size_t)in;
		if (w->f32 && transposed) {
			gemm_pack(true, no, (int)in, w->f32 + (size_t)o0 * (size_t)in, (int)in, at);
		} else if (w->f32) {
			gemm_pack(false, no, (int)in, w->f32 + o0, (int)out, at);
		} else if (transposed) {
			weight_rows(w, o0, no, tmp);
			gemm_pack(true, no, (int)in, tmp, (int)in, at);
		} else {
			weight_cols(w, o0, no, tmp);
			gemm_pack(false, no, (int)in, tmp, no, at);
		}
	}
	free(tmp);
	w->packed_bytes = bytes;
	__atomic_store_n(&w->packed, p, __ATOMIC_RELEASE);
	return (long long)bytes;
}

void weight_unpack(struct weight *w)
{
	hugemap_free((void *)w->packed, w->packed_bytes);
	w->packed = NULL;
	w->packed_bytes = 0;
}

/* MemAvailable from /proc/meminfo, in bytes (0 when unknown). */
static size_t mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	unsigned long long kb = 0;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return (size_t)kb * 1024;
}

size_t weight_packed_budget(void)
{
	const char *env = getenv("ATTNSCOPE_PACKED_WEIGHTS");
	if (env && strcmp(env, "off") == 0)
		return 0;
	return wcache_parse(env, mem_available() / 2);
}
