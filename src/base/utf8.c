/* utf8.c -- UTF-8 decoding and encoding, Python's notions of space and lower case, and the
 * character classes of BERT and of tokenizers (see utf8.h). */
#include "base/utf8.h"

#include <utf8proc.h>

size_t utf8_check(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;
	while (i < len) {
		unsigned c = s[i];
		size_t n;
		uint32_t min, cp;
		if (c < 0x80) {
			i++;
			continue;
		} else if (c >= 0xC2 && c <= 0xDF) {
			n = 2, min = 0x80, cp = c & 0x1F;
		} else if (c >= 0xE0 && c <= 0xEF) {
			n = 3, min = 0x800, cp = c & 0x0F;
		} else if (c >= 0xF0 && c <= 0xF4) {
			n = 4, min = 0x10000, cp = c & 0x07;
		} else {
			return i; /* continuation byte, C0/C1 (always overlong) or F5..FF */
		}
		if (len - i < n)
			return i;
		for (size_t k = 1; k < n; k++) {
			if ((s[i + k] & 0xC0) != 0x80)
				return i;
			cp = (cp << 6) | (s[i + k] & 0x3F);
		}
		if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return i;
		i += n;
	}
	return len;
}

int utf8_decode(const char *str, uint32_t *cp)
{
	const unsigned char *s = (const unsigned char *)str;
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] < 0xE0) {
		*cp = ((uint32_t)(s[0] & 0x1F) << 6) | (s[1] & 0x3F);
		return 2;
	}
	if (s[0] < 0xF0) {
		*cp = ((uint32_t)(s[0] & 0x0F) << 12) | ((uint32_t)(s[1] & 0x3F) << 6) | (s[2] & 0x3F);
		return 3;
	}
	*cp = ((uint32_t)(s[0] & 0x07) << 18) | ((uint32_t)(s[1] & 0x3F) << 12) |
	      ((uint32_t)(s[2] & 0x3F) << 6) | (s[3] & 0x3F);
	return 4;
}

int utf8_next(const char *s, size_t n, uint32_t *cp)
{
	utf8proc_int32_t c;
	utf8proc_ssize_t got = utf8proc_iterate((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)n, &c);
	if (got < 1) {
		*cp = 0xFFFD;
		return 1;
	}
	*cp = (uint32_t)c;
	return (int)got;
}

int utf8_encode(uint32_t cp, char *out)
{
	unsigned char *o = (unsigned char *)out;
	if (cp < 0x80) {
		o[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (unsigned char)(0xC0 | (cp >> 6));
		o[1] = (unsigned char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (unsigned char)(0xE0 | (cp >> 12));
		o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		o[2] = (unsigned char)(0x80 | (cp & 0x3F));
		return 3;
	}
	o[0] = (unsigned char)(0xF0 | (cp >> 18));
	o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
	o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
	o[3] = (unsigned char)(0x80 | (cp & 0x3F));
	return 4;
}

bool utf8_is_py_space(uint32_t cp)
{
	/* CPython: bidirectional class WS, B or S, or category Zs. Unlike the Unicode White_Space
	 * property this includes U+001C..U+001F. */
	if (cp <= 0x20)
		return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x1F);
	return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
	       cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

int utf8_py_lower(uint32_t cp, char *out)
{
	/* SpecialCasing.txt's only unconditional multi-character lower-case mapping. */
	if (cp == 0x130) {
		int n = utf8_encode('i', out);
		return n + utf8_encode(0x307, out + n);
	}
	return utf8_encode((uint32_t)utf8proc_tolower((utf8proc_int32_t)cp), out);
}

bool utf8_is_bert_space(uint32_t cp)
{
	return cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r' ||
	       utf8proc_category((utf8proc_int32_t)cp) == UTF8PROC_CATEGORY_ZS;
}

bool utf8_is_bert_control(uint32_t cp)
{
	if (cp == '\t' || cp == '\n' || cp == '\r')
		return false;
	utf8proc_category_t c = utf8proc_category((utf8proc_int32_t)cp);
	return c == UTF8PROC_CATEGORY_CC || c == UTF8PROC_CATEGORY_CF || c == UTF8PROC_CATEGORY_CS ||
	       c == UTF8PROC_CATEGORY_CO || c == UTF8PROC_CATEGORY_CN;
}

bool utf8_is_bert_punct(uint32_t cp)
{
	if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126))
		return true;
	switch (utf8proc_category((utf8proc_int32_t)cp)) {
	case UTF8PROC_CATEGORY_PC:
	case UTF8PROC_CATEGORY_PD:
	case UTF8PROC_CATEGORY_PS:
	case UTF8PROC_CATEGORY_PE:
	case UTF8PROC_CATEGORY_PI:
	case UTF8PROC_CATEGORY_PF:
	case UTF8PROC_CATEGORY_PO:
		return true;
	default:
		return false;
	}
}

bool utf8_is_cjk(uint32_t cp)
{
	return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
	       (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) ||
	       (cp >= 0x2B820 && cp <= 0x2CEAF) || (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

bool utf8_is_white_space(uint32_t cp)
{
	return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
	       (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
	       cp == 0x3000;
}
