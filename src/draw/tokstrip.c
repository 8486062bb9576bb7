/* tokstrip.c -- readable token text, axis labels and the token strip (see tokstrip.h). */
#include "config.h"

#include "draw/tokstrip.h"
#include "base/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* GPT-2 maps every byte to a printable code point: bytes that are printable Latin-1 keep their
 * value, the 68 others (controls, space, 0x7f-0xa0, soft hyphen) become U+0100 + k in byte order.
 * Returns the byte for CP, or -1 when CP is not part of that alphabet. */
static int bpe_byte(uint32_t cp)
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

/* Byte-level BPE (GPT-2, RoBERTa) rather than WordPiece: decided by the family, or for an unknown
 * family by the pieces themselves. */
static bool is_bpe(const struct trace *t)
{
	if (strstr(t->family, "roberta") || strstr(t->family, "gpt") || strstr(t->family, "modernbert"))
		return true;
	if (strstr(t->family, "bert") || strstr(t->family, "electra"))
		return false;
	for (int i = 0; i < t->n; i++)
		if (t->tokens[i] && !strncmp(t->tokens[i], "##", 2) && t->tokens[i][2])
			return false;
	return true;
}

static void append(char *buf, size_t n, size_t *len, const char *s)
{
	size_t k = strlen(s);
	if (*len + k + 1 > n)
		return;
	memcpy(buf + *len, s, k + 1);
	*len += k;
}

/* Append decoded BYTES as text: valid UTF-8 as is, newline/tab as glyphs, the rest as <xx>. */
static void append_bytes(char *buf, size_t n, size_t *len, const unsigned char *b, size_t nb)
{
	for (size_t i = 0; i < nb;) {
		char tmp[16];
		if (b[i] == '\n') {
			append(buf, n, len, "\xe2\x86\xb5"); /* ↵ */
			i++;
			continue;
		}
		if (b[i] == '\t') {
			append(buf, n, len, "\xe2\x86\x92"); /* → */
			i++;
			continue;
		}
		if (b[i] < 0x20 || b[i] == 0x7f) {
			snprintf(tmp, sizeof tmp, "<%02x>", b[i]);
			append(buf, n, len, tmp);
			i++;
			continue;
		}
		uint32_t cp;
		int k = utf8_next((const char *)b + i, nb - i, &cp);
		if (cp == 0xfffd && !(nb - i >= 3 && b[i] == 0xef && b[i + 1] == 0xbf && b[i + 2] == 0xbd)) {
			snprintf(tmp, sizeof tmp, "<%02x>", b[i]);
			append(buf, n, len, tmp);
			i++;
			continue;
		}
		memcpy(tmp, b + i, (size_t)k);
		tmp[k] = 0;
		append(buf, n, len, tmp);
		i += (size_t)k;
	}
}

/* SentencePiece-style pieces (Llama 2, Mistral, Gemma): '▁' stands for a space and <0xXX> for a
 * byte the vocabulary has no character for. Decided by the pieces themselves. */
static bool is_spm(const struct trace *t)
{
	for (int i = 0; i < t->n; i++)
		if (!t->special[i] && t->tokens[i] && strstr(t->tokens[i], "\xe2\x96\x81"))
			return true;
	return false;
}

/* The byte of a byte-fallback piece "<0xXX>", or -1. */
static int fallback_byte(const struct trace *t, int i)
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
static void spm_byte_text(const struct trace *t, int i, char *buf, size_t n, size_t *len, bool *cont)
{
	int b = fallback_byte(t, i);
	if ((b & 0xC0) == 0x80) {
		/* a continuation byte: part of the character shown on its lead piece */
		*cont = true;
		return;
	}
	unsigned char bytes[4] = {(unsigned char)b};
	int need = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1, nb = 1;
	while (nb < need && (b = fallback_byte(t, i + nb)) >= 0 && (b & 0xC0) == 0x80)
		bytes[nb++] = (unsigned char)b;
	append_bytes(buf, n, len, bytes, (size_t)nb);
	*cont = i > 0 && !t->special[i - 1] && fallback_byte(t, i - 1) >= 0;
}

/* A SentencePiece piece: a leading '▁' starts a word, other '▁' are shown as '␣'. */
static void spm_text(const struct trace *t, int i, char *buf, size_t n, bool *cont)
{
	size_t len = 0;
	if (fallback_byte(t, i) >= 0) {
		spm_byte_text(t, i, buf, n, &len, cont);
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
		append_bytes(buf, n, &len, (const unsigned char *)p, k);
		if (!sp)
			break;
		append(buf, n, &len, "\xe2\x90\xa3"); /* ␣ */
		p = sp + 3;
	}
}

void tokstrip_text(const struct trace *t, int i, char *buf, size_t n, bool *cont)
{
	const char *piece = t->tokens[i] ? t->tokens[i] : "";
	size_t len = 0;
	buf[0] = 0;
	*cont = false;
	if (t->special[i] || t->source) {
		append(buf, n, &len, piece); /* a word trace's tokens are readable already */
		return;
	}
	if (is_spm(t)) {
		spm_text(t, i, buf, n, cont);
		return;
	}
	if (!is_bpe(t)) {
		if (!strncmp(piece, "##", 2) && piece[2]) {
			*cont = true;
			piece += 2;
		}
		append_bytes(buf, n, &len, (const unsigned char *)piece, strlen(piece));
		return;
	}
	/* Decode the byte-level alphabet back to bytes. */
	size_t pn = strlen(piece);
	unsigned char *bytes = malloc(pn + 1);
	if (!bytes) {
		append(buf, n, &len, piece);
		return;
	}
	size_t nb = 0;
	for (size_t p = 0; p < pn;) {
		uint32_t cp;
		int k = utf8_next(piece + p, pn - p, &cp);
		int b = bpe_byte(cp);
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
		append(buf, n, &len, "\xe2\x90\xa3"); /* ␣ */
	for (size_t k = start; k < nb;) {
		size_t e = k;
		while (e < nb && bytes[e] != ' ')
			e++;
		append_bytes(buf, n, &len, bytes + k, e - k);
		if (e < nb)
			append(buf, n, &len, "\xe2\x90\xa3");
		k = e + 1;
	}
	free(bytes);
}

void tokstrip_label(const struct trace *t, int i, bool utf8, char *buf, size_t n)
{
	char text[256];
	bool cont;
	tokstrip_text(t, i, text, sizeof text, &cont);
	snprintf(buf, n, "%s%s", cont ? (utf8 ? "\xc2\xb7" : "+") : "", text);
}

struct strip_item {
	char text[256];
	char id[16];
	int w;       /* column width: max of text and id */
	bool cont;
};

static struct strip_item *strip_items(const struct canvas *cv, const struct trace *t)
{
	struct strip_item *it = calloc(t->n ? (size_t)t->n : 1, sizeof *it);
	if (!it)
		return NULL;
	for (int i = 0; i < t->n; i++) {
		tokstrip_text(t, i, it[i].text, sizeof it[i].text, &it[i].cont);
		snprintf(it[i].id, sizeof it[i].id, "%d", (int)t->ids[i]);
		int tw = canvas_text_width(cv, it[i].text), iw = (int)strlen(it[i].id);
		it[i].w = tw > iw ? tw : iw;
		if (it[i].w < 1)
			it[i].w = 1;
		if (it[i].w > 24)
			it[i].w = 24; /* a very long piece is cut with an ellipsis */
	}
	return it;
}

/* Assign each item a line and column; returns the number of lines. */
static int strip_layout(const struct strip_item *it, int n, int width, bool wrap, int *line, int *col)
{
	int l = 0, x = 0;
	for (int i = 0; i < n; i++) {
		int sep = i > 0 ? 1 : 0;
		if (wrap && x > 0 && x + sep + it[i].w > width) {
			l++;
			x = 0;
			sep = 0;
		}
		x += sep;
		line[i] = l;
		col[i] = x;
		x += it[i].w;
	}
	return n ? l + 1 : 1;
}

int tokstrip_rows(const struct canvas *cv, const struct trace *t, int width)
{
	struct strip_item *it = strip_items(cv, t);
	int *line = calloc(t->n ? (size_t)t->n : 1, sizeof *line), *col = calloc(t->n ? (size_t)t->n : 1, sizeof *col);
	int lines = 1;
	if (it && line && col)
		lines = strip_layout(it, t->n, width, true, line, col);
	free(it);
	free(line);
	free(col);
	return 2 * lines;
}

int tokstrip_draw(struct canvas *cv, struct rect r, const struct trace *t, int selected, bool wrap)
{
	if (r.h < 1 || r.w < 1)
		return 0;
	struct strip_item *it = strip_items(cv, t);
	int *line = calloc(t->n ? (size_t)t->n : 1, sizeof *line), *col = calloc(t->n ? (size_t)t->n : 1, sizeof *col);
	if (!it || !line || !col) {
		free(it);
		free(line);
		free(col);
		return 0;
	}
	int lines = strip_layout(it, t->n, r.w, wrap, line, col);
	struct rect old = canvas_clip(cv, r);
	int shift = 0; /* horizontal scroll of the single line */
	if (!wrap && t->n > 0) {
		int total = col[t->n - 1] + it[t->n - 1].w;
		if (total > r.w && selected >= 0 && selected < t->n) {
			int right = col[selected] + it[selected].w;
			if (right > r.w - 2)
				shift = right - (r.w - 2);
			if (col[selected] - shift < 1)
				shift = col[selected] - 1;
			if (shift < 0)
				shift = 0;
		}
	}
	struct style text = canvas_role(cv, ROLE_TEXT), dim = canvas_role(cv, ROLE_DIM);
	struct style idst = canvas_role(cv, ROLE_TOKEN_ID), special = canvas_role(cv, ROLE_SPECIAL);
	struct style sel = canvas_role(cv, ROLE_TOKEN_SEL);
	for (int i = 0; i < t->n; i++) {
		int y = r.y + 2 * line[i], x = r.x + col[i] - shift;
		if (2 * line[i] >= r.h)
			break;
		if (i > 0 && it[i].cont && line[i] == line[i - 1]) {
			/* Join to the previous piece: fill from the end of its text up to this one. */
			int tw = canvas_text_width(cv, it[i - 1].text);
			int from = r.x + col[i - 1] - shift + (tw < it[i - 1].w ? tw : it[i - 1].w);
			for (int jx = from; jx < x; jx++)
				canvas_put(cv, jx, y, canvas_glyph(cv, GLYPH_JOIN), dim);
		}
		struct style ts = t->special[i] ? special : text, is = idst;
		if (i == selected) {
			ts = is = sel;
			canvas_fill(cv, (struct rect){x, y, it[i].w, 1}, ' ', sel);
			if (2 * line[i] + 1 < r.h)
				canvas_fill(cv, (struct rect){x, y + 1, it[i].w, 1}, ' ', sel);
		}
		canvas_text(cv, x, y, it[i].w, it[i].text, ts);
		if (2 * line[i] + 1 < r.h)
			canvas_text(cv, x, y + 1, it[i].w, it[i].id, is);
	}
	if (!wrap && t->n > 0) {
		/* Arrows at the edges say there are more tokens that way. */
		if (shift > 0)
			canvas_put(cv, r.x, r.y, canvas_glyph(cv, GLYPH_LEFT), dim);
		if (col[t->n - 1] + it[t->n - 1].w - shift > r.w)
			canvas_put(cv, r.x + r.w - 1, r.y, canvas_glyph(cv, GLYPH_RIGHT), dim);
	}
	canvas_clip(cv, old);
	free(it);
	free(line);
	free(col);
	int used = 2 * lines;
	return used < r.h ? used : r.h;
}
