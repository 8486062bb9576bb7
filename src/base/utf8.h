/* utf8.h -- UTF-8 decoding and encoding, and the character classes the tokenizers must copy.
 *
 * Hugging Face's slow tokenizers are Python: they see text as code points, split on whatever
 * str.isspace() accepts and lower-case with str.lower(); BERT's BasicTokenizer has its own
 * notions of space, control and punctuation, and tokenizers (Rust) uses char::is_whitespace.
 * These helpers give the same answers from C, on UTF-8 bytes. */
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

/* Decode the code point at S of text not known to be valid, reading at most N bytes: returns
 * the bytes used, at least 1 so that a loop always moves on; an ill-formed sequence (or N == 0)
 * gives *CP = U+FFFD and uses 1 byte. */
int utf8_next(const char *s, size_t n, uint32_t *cp);

/* Encode CP into OUT (room for 4 bytes); returns the number of bytes written. */
int utf8_encode(uint32_t cp, char *out);

/* Python's str.isspace() for one code point. */
bool utf8_is_py_space(uint32_t cp);

/* Python's str.lower() of a one-character string, written to OUT (room for 8 bytes);
 * returns the byte count. Differs from utf8proc_tolower() only for U+0130, which Python
 * lower-cases to "i" + U+0307. */
int utf8_py_lower(uint32_t cp, char *out);

/* BERT's _is_whitespace: space, tab, newlines and category Zs. */
bool utf8_is_bert_space(uint32_t cp);
/* BERT's _is_control (and BertNormalizer's): categories Cc, Cf, Cs, Co, Cn, but tab and newlines. */
bool utf8_is_bert_control(uint32_t cp);
/* BERT's _is_punctuation: ASCII symbols and categories P*. */
bool utf8_is_bert_punct(uint32_t cp);
/* The CJK Unified Ideographs blocks BERT singles out (not Hangul, kana or CJK punctuation). */
bool utf8_is_cjk(uint32_t cp);
/* Rust's char::is_whitespace (Unicode White_Space), which tokenizers uses for strip/lstrip/rstrip. */
bool utf8_is_white_space(uint32_t cp);

#endif
