/* b64.c -- base64 of float32 vectors (see b64.h). */
#include "base/b64.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static const char b64_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Byte I of X[] in little-endian order, whatever the machine's order. */
static unsigned b64_byte(const float *x, size_t i)
{
	uint32_t u;
	memcpy(&u, &x[i / 4], sizeof u);
	return (u >> (8 * (i % 4))) & 0xff;
}

void b64_write_floats(FILE *out, const float *x, size_t n)
{
	size_t bytes = 4 * n;
	for (size_t i = 0; i < bytes; i += 3) {
		unsigned v = b64_byte(x, i) << 16, have = bytes - i < 3 ? (unsigned)(bytes - i) : 3;
		if (have > 1)
			v |= b64_byte(x, i + 1) << 8;
		if (have > 2)
			v |= b64_byte(x, i + 2);
		char c[4] = {b64_alphabet[v >> 18], b64_alphabet[(v >> 12) & 63], have > 1 ? b64_alphabet[(v >> 6) & 63] : '=',
			     have > 2 ? b64_alphabet[v & 63] : '='};
		fwrite(c, 1, 4, out);
	}
}

void b64_write_bytes(FILE *out, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i += 3) {
		unsigned have = n - i < 3 ? (unsigned)(n - i) : 3, v = (unsigned)b[i] << 16;
		if (have > 1)
			v |= (unsigned)b[i + 1] << 8;
		if (have > 2)
			v |= b[i + 2];
		char c[4] = {b64_alphabet[v >> 18], b64_alphabet[(v >> 12) & 63], have > 1 ? b64_alphabet[(v >> 6) & 63] : '=',
			     have > 2 ? b64_alphabet[v & 63] : '='};
		fwrite(c, 1, 4, out);
	}
}

static int b64_value(char c)
{
	const char *p = c ? strchr(b64_alphabet, c) : NULL;
	return p ? (int)(p - b64_alphabet) : -1;
}

int b64_read_floats(const char *s, size_t len, float *x, size_t n)
{
	size_t bytes = 4 * n, groups = (bytes + 2) / 3;
	if (len != 4 * groups)
		return -1;
	uint32_t word = 0;
	size_t got = 0;
	for (size_t g = 0; g < groups; g++) {
		const char *c = s + 4 * g;
		size_t have = bytes - 3 * g < 3 ? bytes - 3 * g : 3; /* bytes this group carries */
		int v[4];
		for (int k = 0; k < 4; k++) {
			bool pad = (size_t)k > have;
			v[k] = pad ? (c[k] == '=' ? 0 : -1) : b64_value(c[k]);
			if (v[k] < 0)
				return -1;
		}
		unsigned bits = (unsigned)v[0] << 18 | (unsigned)v[1] << 12 | (unsigned)v[2] << 6 | (unsigned)v[3];
		if ((have < 3 && (bits & 0xff)) || (have < 2 && (bits & 0xff00)))
			return -1; /* bits past the data must be 0: one text per vector */
		for (size_t k = 0; k < have; k++, got++) {
			word |= (uint32_t)((bits >> (16 - 8 * k)) & 0xff) << (8 * (got % 4));
			if (got % 4 == 3) {
				memcpy(&x[got / 4], &word, sizeof word);
				word = 0;
			}
		}
	}
	return 0;
}
