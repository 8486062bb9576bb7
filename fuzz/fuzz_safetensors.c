/* fuzz_safetensors.c -- libFuzzer target: a whole .safetensors file (8-byte header length, JSON
 * header, data) parsed from memory with st_parse_buffer.
 *
 * The input is the file. libFuzzer hands over a buffer of exactly that size, so ASan sees any
 * read past the end. When parsing succeeds every promise of safetensors.h is checked: each
 * tensor lies inside the data section, its bytes match shape × dtype, no two overlap, names are
 * sorted and unique, and every byte of every tensor can be read. */
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"
#include "engine/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct st_set set;
	struct err e = {{0}};
	if (st_parse_buffer(data, size, "fuzz.safetensors", &set, &e) < 0) {
		fuzz_check_message("st_parse_buffer", &e);
		return 0;
	}
	uint64_t hlen = 0;
	for (int i = 7; i >= 0; i--)
		hlen = (hlen << 8) | data[i];
	const uint8_t *lo = data + 8 + hlen, *hi = data + size;
	volatile uint8_t sink = 0;
	for (int i = 0; i < set.n_tensors; i++) {
		const struct st_tensor *t = &set.tensors[i];
		int64_t numel = st_numel(t);
		size_t esz = st_dtype_size(t->dtype);
		if (numel < 0 || esz == 0 || (size_t)numel * esz != t->nbytes)
			fuzz_fail("tensor '%s': %zu bytes for %lld elements of %zu bytes", t->name, t->nbytes,
				  (long long)numel, esz);
		if (t->data < lo || t->data > hi || t->nbytes > (size_t)(hi - t->data))
			fuzz_fail("tensor '%s' lies outside the data section", t->name);
		if (t->ndim < 0 || t->ndim > ST_MAX_DIMS)
			fuzz_fail("tensor '%s' has %d dimensions", t->name, t->ndim);
		if (i > 0 && strcmp(set.tensors[i - 1].name, t->name) >= 0)
			fuzz_fail("tensor names not sorted and unique at '%s'", t->name);
		if (st_find(&set, t->name) != t)
			fuzz_fail("st_find does not find '%s'", t->name);
		for (size_t k = 0; k < t->nbytes; k++)
			sink ^= t->data[k];
		if (t->dtype == ST_F16 && t->nbytes >= 2)
			(void)st_f16_to_f32((uint16_t)(t->data[0] | t->data[1] << 8));
	}
	/* overlap: with names sorted, compare every pair (headers that parse are small here) */
	for (int i = 0; i < set.n_tensors && set.n_tensors < 512; i++)
		for (int j = i + 1; j < set.n_tensors; j++) {
			const struct st_tensor *a = &set.tensors[i], *b = &set.tensors[j];
			if (a->nbytes && b->nbytes && a->data < b->data + b->nbytes && b->data < a->data + a->nbytes)
				fuzz_fail("tensors '%s' and '%s' overlap", a->name, b->name);
		}
	(void)sink;
	st_close(&set);
	return 0;
}
