/* safetensors.c -- parse and validate safetensors headers, map the data (see safetensors.h). */
#include "engine/safetensors.h"
#include "engine/hugemap.h"
#include "base/jsoncap.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
	const char *name;
	enum st_dtype dtype;
	size_t size;
} st_dtypes[] = {
	{"F32", ST_F32, 4}, {"F16", ST_F16, 2}, {"BF16", ST_BF16, 2}, {"F64", ST_F64, 8},
	{"I64", ST_I64, 8}, {"I32", ST_I32, 4}, {"I16", ST_I16, 2},  {"I8", ST_I8, 1},
	{"U8", ST_U8, 1},   {"BOOL", ST_BOOL, 1},
};

size_t st_dtype_size(enum st_dtype dt)
{
	for (size_t i = 0; i < sizeof st_dtypes / sizeof st_dtypes[0]; i++)
		if (st_dtypes[i].dtype == dt)
			return st_dtypes[i].size;
	return 0;
}

int64_t st_numel(const struct st_tensor *t)
{
	int64_t n = 1;
	for (int i = 0; i < t->ndim; i++) {
		if (t->shape[i] < 0 || (t->shape[i] > 0 && n > INT64_MAX / t->shape[i]))
			return -1;
		n *= t->shape[i];
	}
	return n;
}

float st_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f;
	uint32_t mant = h & 0x3ff;
	uint32_t bits;
	if (exp == 0) {
		if (mant == 0) {
			bits = sign;
		} else { /* subnormal: normalise */
			int e = -1;
			do {
				e++;
				mant <<= 1;
			} while (!(mant & 0x400));
			bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((mant & 0x3ff) << 13);
		}
	} else if (exp == 0x1f) {
		bits = sign | 0x7f800000u | (mant << 13);
	} else {
		bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
	}
	float f;
	memcpy(&f, &bits, sizeof f);
	return f;
}

float st_bf16_to_f32(uint16_t h)
{
	uint32_t bits = (uint32_t)h << 16;
	float f;
	memcpy(&f, &bits, sizeof f);
	return f;
}

static int st_cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct st_tensor *)a)->name, ((const struct st_tensor *)b)->name);
}

static int st_cmp_data(const void *a, const void *b)
{
	const struct st_tensor *x = *(const struct st_tensor *const *)a, *y = *(const struct st_tensor *const *)b;
	return x->data < y->data ? -1 : x->data > y->data;
}

/* Parse one tensor entry VALUE named NAME of the header into T. DATA/DATA_SIZE is the byte buffer. */
static int st_parse_entry(const char *path, const char *name, json_t *value, const uint8_t *data,
			  size_t data_size, struct st_tensor *t, struct err *e)
{
	if (!json_is_object(value))
		return err_set(e, "%s: tensor '%s': header entry is not an object", path, name);
	json_t *jd = json_object_get(value, "dtype"), *js = json_object_get(value, "shape"),
	       *jo = json_object_get(value, "data_offsets");
	if (!json_is_string(jd) || !json_is_array(js) || !json_is_array(jo) || json_array_size(jo) != 2)
		return err_set(e, "%s: tensor '%s': needs dtype, shape and data_offsets [begin, end]", path, name);
	const char *dn = json_string_value(jd);
	t->dtype = ST_OTHER;
	for (size_t i = 0; i < sizeof st_dtypes / sizeof st_dtypes[0]; i++)
		if (strcmp(dn, st_dtypes[i].name) == 0)
			t->dtype = st_dtypes[i].dtype;
	snprintf(t->dtype_name, sizeof t->dtype_name, "%s", dn);
	if (t->dtype == ST_OTHER)
		return err_set(e, "%s: tensor '%s': unsupported dtype '%.11s'", path, name, dn);
	size_t nd = json_array_size(js);
	if (nd > ST_MAX_DIMS)
		return err_set(e, "%s: tensor '%s': %zu dimensions (at most %d supported)", path, name, nd, ST_MAX_DIMS);
	t->ndim = (int)nd;
	for (size_t i = 0; i < nd; i++) {
		json_t *d = json_array_get(js, i);
		if (!json_is_integer(d) || json_integer_value(d) < 0)
			return err_set(e, "%s: tensor '%s': shape must hold non-negative integers", path, name);
		t->shape[i] = json_integer_value(d);
	}
	json_t *jb = json_array_get(jo, 0), *je = json_array_get(jo, 1);
	if (!json_is_integer(jb) || !json_is_integer(je))
		return err_set(e, "%s: tensor '%s': data_offsets must be integers", path, name);
	json_int_t b = json_integer_value(jb), en = json_integer_value(je);
	if (b < 0 || en < b || (uint64_t)en > data_size)
		return err_set(e, "%s: tensor '%s': data_offsets [%lld, %lld] outside the %zu data bytes", path, name,
			       (long long)b, (long long)en, data_size);
	int64_t numel = st_numel(t);
	size_t esz = st_dtype_size(t->dtype);
	if (numel < 0 || (uint64_t)numel > SIZE_MAX / esz || (size_t)numel * esz != (size_t)(en - b))
		return err_set(e, "%s: tensor '%s': %lld bytes in data_offsets but shape and dtype %s need %lld", path,
			       name, (long long)(en - b), dn, numel < 0 ? -1LL : (long long)numel * (long long)esz);
	t->data = data + b;
	t->nbytes = (size_t)(en - b);
	t->name = strdup(name);
	t->file = path;
	return t->name ? 0 : err_set(e, "out of memory");
}

/* Parse the header of the mapped file MAP and append its tensors to SET. */
static int st_parse(struct st_set *set, struct st_map *map, struct err *e)
{
	const char *path = map->path;
	const uint8_t *base = map->addr;
	if (map->size < 8)
		return err_set(e, "%s: truncated: %zu bytes, not even the 8-byte header length", path, map->size);
	uint64_t hlen = 0;
	for (int i = 7; i >= 0; i--)
		hlen = (hlen << 8) | base[i];
	if (hlen > ST_MAX_HEADER)
		return err_set(e, "%s: header length %llu exceeds the %u-byte limit", path, (unsigned long long)hlen,
			       ST_MAX_HEADER);
	if (hlen > map->size - 8)
		return err_set(e, "%s: truncated: header claims %llu bytes but the file has %zu", path,
			       (unsigned long long)hlen, map->size - 8);
	if (jsoncap_nodes((const char *)base + 8, hlen) > JSONCAP_MAX_NODES)
		return err_set(e, "%s: header has more than %zu JSON values", path, JSONCAP_MAX_NODES);
	json_error_t je;
	json_t *root = json_loadb((const char *)base + 8, hlen, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return err_set(e, "%s: header is not valid JSON: %s (byte %d)", path, je.text, je.position);
	if (!json_is_object(root)) {
		json_decref(root);
		return err_set(e, "%s: header is not a JSON object", path);
	}
	const uint8_t *data = base + 8 + hlen;
	size_t data_size = map->size - 8 - hlen;
	size_t count = json_object_size(root);
	struct st_tensor *grown = realloc(set->tensors, (set->n_tensors + count + 1) * sizeof *grown);
	if (!grown) {
		json_decref(root);
		return err_set(e, "out of memory");
	}
	set->tensors = grown;
	int first = set->n_tensors;
	const char *key;
	json_t *value;
	int rc = 0;
	json_object_foreach(root, key, value)
	{
		if (strcmp(key, "__metadata__") == 0)
			continue;
		struct st_tensor *t = &set->tensors[set->n_tensors];
		memset(t, 0, sizeof *t);
		if (st_parse_entry(path, key, value, data, data_size, t, e) < 0) {
			rc = -1;
			break;
		}
		set->n_tensors++;
	}
	json_decref(root);
	if (rc < 0)
		return -1;

	/* Overlapping tensors would alias memory: a hostile file could make one weight another. */
	int n = set->n_tensors - first;
	const struct st_tensor **by_data = malloc((n ? n : 1) * sizeof *by_data);
	if (!by_data)
		return err_set(e, "out of memory");
	for (int i = 0; i < n; i++)
		by_data[i] = &set->tensors[first + i];
	qsort(by_data, n, sizeof *by_data, st_cmp_data);
	for (int i = 1; i < n; i++) {
		if (by_data[i]->data < by_data[i - 1]->data + by_data[i - 1]->nbytes) {
			rc = err_set(e, "%s: tensors '%s' and '%s' overlap in the data section", path,
				     by_data[i - 1]->name, by_data[i]->name);
			break;
		}
	}
	free(by_data);
	return rc;
}

static int st_map_file(const char *path, struct st_set *set, struct err *e)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* a FIFO must not block the open */
	if (fd < 0)
		return err_set(e, "%s: %s", path, strerror(errno));
	struct stat sb;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return err_set(e, "%s: not a regular file", path);
	}
	struct st_map *grown = realloc(set->files, (set->n_files + 1) * sizeof *grown);
	if (!grown) {
		close(fd);
		return err_set(e, "out of memory");
	}
	set->files = grown;
	struct st_map *map = &set->files[set->n_files];
	map->size = (size_t)sb.st_size;
	map->addr = NULL;
	map->borrowed = 0;
	map->huge = 0;
	map->promoted = NULL;
	map->path = strdup(path);
	if (map->size > 0) {
		map->addr = hugemap_file(fd, map->size);
		if (map->addr == MAP_FAILED) {
			int errnum = errno;
			close(fd);
			free(map->path);
			return err_set(e, "%s: cannot map: %s", path, strerror(errnum));
		}
	}
	close(fd);
	set->n_files++;
	if (!map->path)
		return err_set(e, "out of memory");
	return st_parse(set, map, e);
}

static int st_finish(struct st_set *set, struct err *e)
{
	qsort(set->tensors, set->n_tensors, sizeof *set->tensors, st_cmp_name);
	for (int i = 1; i < set->n_tensors; i++)
		if (strcmp(set->tensors[i].name, set->tensors[i - 1].name) == 0)
			return err_set(e, "%s: tensor '%s' appears twice", set->tensors[i].file, set->tensors[i].name);
	return 0;
}

int st_open_file(const char *path, struct st_set *set, struct err *e)
{
	memset(set, 0, sizeof *set);
	if (st_map_file(path, set, e) < 0 || st_finish(set, e) < 0) {
		st_close(set);
		return -1;
	}
	return 0;
}

/* Whether MAP's 2 MB pages should be copied to anonymous huge pages: the kernel gives them, it
 * did not map the file in 2 MB entries itself, and a second copy of the file fits in free memory
 * twice over (the copy cannot be dropped under pressure as page cache can). */
static int st_promote_decide(const struct st_map *map)
{
	long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	bool fits = pages > 0 && page > 0 && map->size / (size_t)page < (size_t)pages / 2;
	bool aligned = ((uintptr_t)map->addr & (HUGEMAP_PAGE - 1)) == 0;
	return map->size >= HUGEMAP_PAGE && aligned && fits && hugemap_available() && !hugemap_mapped_huge(map->addr) ? 1 : -1;
}

void st_promote(struct st_set *set, const void *p, size_t len)
{
	const char *c = p;
	for (int f = 0; f < set->n_files; f++) {
		struct st_map *map = &set->files[f];
		char *base = map->addr;
		if (map->borrowed || !base || c < base || c >= base + map->size)
			continue;
		if (map->huge == 0 && (map->huge = st_promote_decide(map)) > 0 &&
		    !(map->promoted = calloc(map->size / HUGEMAP_PAGE + 1, 1)))
			map->huge = -1;
		if (map->huge < 0)
			return;
		/* whole 2 MB pages only: the file's last partial one stays mapped from the file */
		size_t whole = map->size / HUGEMAP_PAGE, first = (size_t)(c - base) / HUGEMAP_PAGE;
		size_t end = ((size_t)(c - base) + len + HUGEMAP_PAGE - 1) / HUGEMAP_PAGE;
		for (size_t i = first; i < end && i < whole; i++)
			if (!map->promoted[i] && hugemap_promote(base + i * HUGEMAP_PAGE, HUGEMAP_PAGE) == 0)
				map->promoted[i] = 1;
		return;
	}
}

size_t st_promoted_bytes(const struct st_set *set)
{
	size_t bytes = 0;
	for (int f = 0; f < set->n_files; f++)
		for (size_t i = 0; set->files[f].promoted && i < set->files[f].size / HUGEMAP_PAGE; i++)
			bytes += set->files[f].promoted[i] ? HUGEMAP_PAGE : 0;
	return bytes;
}

int st_parse_buffer(const void *buf, size_t size, const char *name, struct st_set *set, struct err *e)
{
	memset(set, 0, sizeof *set);
	if (!(set->files = calloc(1, sizeof *set->files)) || !(set->files[0].path = strdup(name))) {
		free(set->files);
		set->files = NULL;
		return err_set(e, "out of memory");
	}
	set->files[0] = (struct st_map){set->files[0].path, (void *)buf, size, 1, -1, NULL};
	set->n_files = 1;
	if (st_parse(set, &set->files[0], e) < 0 || st_finish(set, e) < 0) {
		st_close(set);
		return -1;
	}
	return 0;
}

/* Open the shards listed in the weight_map of INDEX_PATH (each file once, in first-seen order). */
static int st_open_index(const char *dir, const char *index_path, struct st_set *set, struct err *e)
{
	json_error_t je;
	json_t *root = jsoncap_load_file(index_path, 0, &je, e);
	if (!root)
		return e->msg[0] ? -1 : err_set(e, "%s:%d:%d: %s", index_path, je.line, je.column, je.text);
	json_t *wm = json_object_get(root, "weight_map");
	if (!json_is_object(wm)) {
		json_decref(root);
		return err_set(e, "%s: no \"weight_map\" object", index_path);
	}
	json_t *seen = json_object();
	const char *key;
	json_t *value;
	int rc = 0;
	json_object_foreach(wm, key, value)
	{
		const char *file = json_string_value(value);
		if (!file || !*file || strchr(file, '/') || strcmp(file, "..") == 0) {
			rc = err_set(e, "%s: tensor '%s' maps to an invalid shard file name", index_path, key);
			break;
		}
		if (json_object_get(seen, file))
			continue;
		json_object_set_new(seen, file, json_true());
		char path[PATH_MAX];
		if (snprintf(path, sizeof path, "%s/%s", dir, file) >= (int)sizeof path) {
			rc = err_set(e, "%s: shard path too long", index_path);
			break;
		}
		if (st_map_file(path, set, e) < 0) {
			rc = -1;
			break;
		}
	}
	json_decref(seen);
	/* Every tensor the index names must be in the shard it names. */
	if (rc == 0 && st_finish(set, e) == 0) {
		json_object_foreach(wm, key, value)
		{
			if (!st_find(set, key)) {
				rc = err_set(e, "%s: tensor '%s' is listed but missing from %s", index_path, key,
					     json_string_value(value));
				break;
			}
		}
	} else {
		rc = -1;
	}
	json_decref(root);
	return rc;
}

int st_open_dir(const char *dir, struct st_set *set, struct err *e)
{
	memset(set, 0, sizeof *set);
	char path[PATH_MAX];
	if (snprintf(path, sizeof path, "%s/model.safetensors", dir) >= (int)sizeof path)
		return err_set(e, "%s: path too long", dir);
	int rc;
	if (access(path, F_OK) == 0) {
		rc = st_open_file(path, set, e);
		return rc;
	}
	snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
	if (access(path, F_OK) == 0) {
		rc = st_open_index(dir, path, set, e);
		if (rc < 0)
			st_close(set);
		return rc;
	}
	snprintf(path, sizeof path, "%s/pytorch_model.bin", dir);
	if (access(path, F_OK) == 0)
		return err_set(e, "%s: only pytorch_model.bin found; attnscope reads safetensors (convert the model)",
			       dir);
	return err_set(e, "%s: no model.safetensors or model.safetensors.index.json", dir);
}

void st_close(struct st_set *set)
{
	for (int i = 0; i < set->n_tensors; i++)
		free(set->tensors[i].name);
	free(set->tensors);
	for (int i = 0; i < set->n_files; i++) {
		if (set->files[i].addr && !set->files[i].borrowed)
			munmap(set->files[i].addr, set->files[i].size);
		free(set->files[i].path);
		free(set->files[i].promoted);
	}
	free(set->files);
	memset(set, 0, sizeof *set);
}

const struct st_tensor *st_find(const struct st_set *set, const char *name)
{
	struct st_tensor key = {.name = (char *)name};
	return bsearch(&key, set->tensors, set->n_tensors, sizeof key, st_cmp_name);
}
