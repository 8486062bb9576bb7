/* b64.h -- float32 vectors as base64 text (RFC 4648, with padding), for the saved aggregate's token
 * sample: exact, and a fraction of the size and of the JSON parser's nodes that numbers would take. */
#ifndef ATTNSCOPE_B64_H
#define ATTNSCOPE_B64_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Write X[n] as base64 of their little-endian IEEE 754 bytes to OUT. */
void b64_write_floats(FILE *out, const float *x, size_t n);
/* Write the bytes B[n] as base64 to OUT (the kitty graphics protocol's payload). */
void b64_write_bytes(FILE *out, const uint8_t *b, size_t n);
/* Decode the base64 text S[0..len) into X[n]: 0, or -1 when it is not the base64 of exactly N
 * floats (bad characters, padding or length). */
int b64_read_floats(const char *s, size_t len, float *x, size_t n);

#endif
