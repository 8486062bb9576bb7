/* utf8.h -- UTF-8 decoding and the few Python string semantics the tokenizers must copy.
 *
 * Hugging Face's slow tokenizers are Python: they see text as code points, split on whatever
 * str.isspace() accepts and lower-case with str.lower(). These helpers give the same answers
 * from C, on UTF-8 bytes. */
#ifndef ATTNSCOPE_UTF8_H
#define ATTNSCOPE_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Offset of the first byte of S[0..LEN) that does not start a well-formed UTF-8 sequence
 * (overlong forms, surrogates and values past U+10FFFF are ill-formed, as in Python's decoder),
 * or LEN when all of S is valid. */
size_t utf8_check(const char *s, size_t len);

/* Decode the code point at S (valid UTF-8 with at least one byte left); returns its length. */
int utf8_decode(const char *s, uint32_t *cp);

/* Encode CP into OUT (room for 4 bytes); returns the number of bytes written. */
int utf8_encode(uint32_t cp, char *out);

/* Python's str.isspace() for one code point. */
bool utf8_is_py_space(uint32_t cp);

/* Python's str.lower() of a one-character string, written to OUT (room for 8 bytes);
 * returns the byte count. Differs from utf8proc_tolower() only for U+0130, which Python
 * lower-cases to "i" + U+0307. */
int utf8_py_lower(uint32_t cp, char *out);

#endif
