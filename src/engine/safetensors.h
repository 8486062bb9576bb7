/* safetensors.h -- read-only, memory-mapped access to .safetensors files (single or sharded).
 *
 * Format: 8-byte little-endian header length N, N bytes of JSON {name: {dtype, shape, data_offsets}},
 * then the raw tensor bytes. Everything in the header is validated before use: a hostile file
 * yields an error message, never an out-of-bounds read. */
#ifndef ATTNSCOPE_SAFETENSORS_H
#define ATTNSCOPE_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#define ST_MAX_DIMS 8
#define ST_MAX_HEADER (100u << 20) /* same cap as the reference implementation: 100 MB of JSON */

enum st_dtype { ST_F32, ST_F16, ST_BF16, ST_F64, ST_I64, ST_I32, ST_I16, ST_I8, ST_U8, ST_BOOL, ST_OTHER };

struct st_tensor {
	char *name;
	enum st_dtype dtype;
	char dtype_name[12];        /* as written in the header, for messages */
	int ndim;
	int64_t shape[ST_MAX_DIMS]; /* [ndim] */
	const uint8_t *data;        /* points into the mapping; may be unaligned */
	size_t nbytes;
	const char *file;           /* path of the file holding it (for messages) */
};

/* One or more mapped files seen as one set of tensors, sorted by name. */
struct st_set {
	int n_files;
	struct st_map {
		char *path;
		void *addr;
		size_t size;
		int borrowed;   /* addr is the caller's buffer (st_parse_buffer), not a mapping */
		int huge;       /* st_promote: 0 not decided yet, 1 promote its 2 MB pages, -1 leave it */
		unsigned char *promoted; /* st_promote: per 2 MB page of the mapping, moved already */
	} *files;               /* [n_files] */
	int n_tensors;
	struct st_tensor *tensors; /* [n_tensors], sorted by name */
};

/* Map one file. */
int st_open_file(const char *path, struct st_set *set, struct err *e);
/* Parse a whole file already in memory (BUF, SIZE bytes; NAME stands for its path in messages)
 * without copying it: the tensors point into BUF, which must outlive the set. For tests and fuzzing. */
int st_parse_buffer(const void *buf, size_t size, const char *name, struct st_set *set, struct err *e);
/* Map DIR/model.safetensors, or every shard named in DIR/model.safetensors.index.json. */
int st_open_dir(const char *dir, struct st_set *set, struct err *e);
void st_close(struct st_set *set);

/* Move the 2 MB pages under [P, P + LEN) of a mapped file to anonymous huge pages when the kernel
 * could not map that file in 2 MB entries (hugemap.h). The first call for a file decides, from what
 * is resident of it: call it after faulting in a weight. One thread at a time; readers may run. */
void st_promote(struct st_set *set, const void *p, size_t len);
/* Bytes st_promote moved to huge pages. */
size_t st_promoted_bytes(const struct st_set *set);

const struct st_tensor *st_find(const struct st_set *set, const char *name);
size_t st_dtype_size(enum st_dtype dt);

/* Element count of T, or -1 if it overflows. */
int64_t st_numel(const struct st_tensor *t);

/* Conversions of half-precision bit patterns to float. */
float st_f16_to_f32(uint16_t h);
float st_bf16_to_f32(uint16_t h);

#endif
