/* tokentext.c -- readable text of a trace's tokens (see tokentext.h). */
#include "trace/tokentext.h"
#include "base/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* GPT-2 maps every byte to a printable code point: bytes that are printable Latin-1 keep their
 * value, the 68 others (controls, space, 0x7f-0xa0, soft hyphen) become U+0100 + k in byte order.
 * Returns the byte for CP, or -1 when CP is not part of that alphabet. */
static int tokentext_bpe_byte(uint32_t cp)
{
	if ((cp >= 0x21 && cp <= 0x7e) || (cp >= 0xa1 && cp <= 0xac) || (cp >= 0xae && cp <= 0xff))
		return (int)cp;
	if (cp < 0x100 || cp >= 0x100 + 68)
		return -1;
	int k = (int)(cp - 0x100);
	for (int b = 0; b < 256; b++) {
		bool printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
		if (!printable && k-- == 0)
			return b;
	}
	return -1;
}

static void tokentext_append(char *buf, size_t n, size_t *len, const char *s)
{
	size_t k = strlen(s);
	if (*len + k + 1 > n)
		return;
	memcpy(buf + *len, s, k + 1);
	*len += k;
}

/* Append decoded BYTES as text: valid UTF-8 as is, newline/tab as glyphs, the rest as <xx>. */
static void tokentext_append_bytes(char *buf, size_t n, size_t *len, const unsigned char *b, size_t nb)
{
	for (size_t i = 0; i < nb;) {
		char tmp[16];
		if (b[i] == '\n') {
			tokentext_append(buf, n, len, "\xe2\x86\xb5"); /* ↵ */
			i++;
			continue;
		}
		if (b[i] == '\t') {
			tokentext_append(buf, n, len, "\xe2\x86\x92"); /* → */
			i++;
			continue;
		}
		if (b[i] < 0x20 || b[i] == 0x7f) {
			snprintf(tmp, sizeof tmp, "<%02x>", b[i]);
			tokentext_append(buf, n, len, tmp);
			i++;
			continue;
		}
		uint32_t cp;
		int k = utf8_next((const char *)b + i, nb - i, &cp);
		if (cp == 0xfffd && !(nb - i >= 3 && b[i] == 0xef && b[i + 1] == 0xbf && b[i + 2] == 0xbd)) {
			snprintf(tmp, sizeof tmp, "<%02x>", b[i]);
			tokentext_append(buf, n, len, tmp);
			i++;
			continue;
		}
		memcpy(tmp, b + i, (size_t)k);
		tmp[k] = 0;
		tokentext_append(buf, n, len, tmp);
		i += (size_t)k;
	}
}

/* How T's pieces are written: as its tokenizer said, or for a trace that does not say, guessed
 * from the pieces themselves: '▁' in any of them is SentencePiece, a "##" piece WordPiece, and
 * anything else byte-level BPE. */
static enum tokenizer_pieces tokentext_pieces(const struct trace *t)
{
	if (t->pieces != TOKENIZER_PIECES_UNKNOWN)
		return t->pieces;
	for (int i = 0; i < t->n; i++)
		if (!t->special[i] && t->tokens[i] && strstr(t->tokens[i], "\xe2\x96\x81"))
			return TOKENIZER_PIECES_SENTENCEPIECE;
	for (int i = 0; i < t->n; i++)
		if (t->tokens[i] && !strncmp(t->tokens[i], "##", 2) && t->tokens[i][2])
			return TOKENIZER_PIECES_WORDPIECE;
	return TOKENIZER_PIECES_BYTE_LEVEL;
}

/* The byte of a byte-fallback piece "<0xXX>", or -1. */
static int tokentext_fallback_byte(const struct trace *t, int i)
{
	const char *p = i >= 0 && i < t->n && !t->special[i] ? t->tokens[i] : NULL;
	unsigned v;
	char end;
	if (!p || strlen(p) != 6 || strncmp(p, "<0x", 3) != 0 || sscanf(p + 3, "%2x%c", &v, &end) != 2 || end != '>')
		return -1;
	return (int)v;
}

/* A byte-fallback piece: the character its run of <0xXX> pieces encodes is shown on the run's
 * first piece (the lead byte); the following pieces show nothing and join to it. */
static void tokentext_spm_byte(const struct trace *t, int i, char *buf, size_t n, size_t *len, bool *cont)
{
	int b = tokentext_fallback_byte(t, i);
	if ((b & 0xC0) == 0x80) {
		/* a continuation byte: part of the character shown on its lead piece */
		*cont = true;
		return;
	}
	unsigned char bytes[4] = {(unsigned char)b};
	int need = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1, nb = 1;
	while (nb < need && (b = tokentext_fallback_byte(t, i + nb)) >= 0 && (b & 0xC0) == 0x80)
		bytes[nb++] = (unsigned char)b;
	tokentext_append_bytes(buf, n, len, bytes, (size_t)nb);
	*cont = i > 0 && !t->special[i - 1] && tokentext_fallback_byte(t, i - 1) >= 0;
}

/* A SentencePiece piece: a leading '▁' starts a word, other '▁' are shown as '␣'. */
static void tokentext_spm(const struct trace *t, int i, char *buf, size_t n, bool *cont)
{
	size_t len = 0;
	if (tokentext_fallback_byte(t, i) >= 0) {
		tokentext_spm_byte(t, i, buf, n, &len, cont);
		return;
	}
	const char *p = t->tokens[i] ? t->tokens[i] : "";
	bool lead = strncmp(p, "\xe2\x96\x81", 3) == 0;
	*cont = i > 0 && !t->special[i - 1] && !lead;
	if (lead && p[3])
		p += 3;
	for (; *p;) {
		const char *sp = strstr(p, "\xe2\x96\x81");
		size_t k = sp ? (size_t)(sp - p) : strlen(p);
		tokentext_append_bytes(buf, n, &len, (const unsigned char *)p, k);
		if (!sp)
			break;
		tokentext_append(buf, n, &len, "\xe2\x90\xa3"); /* ␣ */
		p = sp + 3;
	}
}

void tokentext_text(const struct trace *t, int i, char *buf, size_t n, bool *cont)
{
	const char *piece = t->tokens[i] ? t->tokens[i] : "";
	size_t len = 0;
	buf[0] = 0;
	*cont = false;
	if (t->special[i] || t->source) {
		tokentext_append(buf, n, &len, piece); /* a word trace's tokens are readable already */
		return;
	}
	enum tokenizer_pieces style = tokentext_pieces(t);
	if (style == TOKENIZER_PIECES_SENTENCEPIECE) {
		tokentext_spm(t, i, buf, n, cont);
		return;
	}
	if (style == TOKENIZER_PIECES_WORDPIECE) {
		if (!strncmp(piece, "##", 2) && piece[2]) {
			*cont = true;
			piece += 2;
		}
		tokentext_append_bytes(buf, n, &len, (const unsigned char *)piece, strlen(piece));
		return;
	}
	/* Decode the byte-level alphabet back to bytes. */
	size_t pn = strlen(piece);
	unsigned char *bytes = malloc(pn + 1);
	if (!bytes) {
		tokentext_append(buf, n, &len, piece);
		return;
	}
	size_t nb = 0;
	for (size_t p = 0; p < pn;) {
		uint32_t cp;
		int k = utf8_next(piece + p, pn - p, &cp);
		int b = tokentext_bpe_byte(cp);
		if (b >= 0) {
			bytes[nb++] = (unsigned char)b;
		} else { /* not byte-level (an added token): keep its UTF-8 */
			memcpy(bytes + nb, piece + p, (size_t)k);
			nb += (size_t)k;
		}
		p += (size_t)k;
	}
	size_t start = 0;
	if (nb && bytes[0] == ' ')
		start = 1; /* the word separator */
	bool prev_ends_word = false;
	if (i > 0 && !t->special[i - 1] && t->tokens[i - 1]) {
		const char *prev = t->tokens[i - 1];
		size_t pl = strlen(prev);
		/* 'Ċ' (newline) and 'Ġ' (space) end a word; both are two bytes in UTF-8. */
		prev_ends_word = pl >= 2 && (!strcmp(prev + pl - 2, "\xc4\x8a") || !strcmp(prev + pl - 2, "\xc4\xa0"));
	}
	*cont = i > 0 && !t->special[i - 1] && start == 0 && nb && bytes[0] != '\n' && !prev_ends_word;
	/* spaces other than the word separator (runs of 'Ġ') are shown as '␣' */
	if (nb == start)
		tokentext_append(buf, n, &len, "\xe2\x90\xa3"); /* ␣ */
	for (size_t k = start; k < nb;) {
		size_t e = k;
		while (e < nb && bytes[e] != ' ')
			e++;
		tokentext_append_bytes(buf, n, &len, bytes + k, e - k);
		if (e < nb)
			tokentext_append(buf, n, &len, "\xe2\x90\xa3");
		k = e + 1;
	}
	free(bytes);
}
