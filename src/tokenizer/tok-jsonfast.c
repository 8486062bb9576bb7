/* tok-jsonfast.c -- tokenizer.json's two big members, model.vocab and model.merges, read directly.
 *
 * jansson allocates a node per value: Gemma 3's file (262k tokens, 515k merges, 33 MB) takes about
 * a second to parse that way, most of it in malloc. The vocabulary object and the merges list have
 * a fixed, flat shape, so they are found with a small scanner (strings, nesting), read straight
 * into the vocabulary table and a merge list, and cut out of the text jansson parses (down to {} and
 * [], their line and column numbers mapped back for its errors). Blanking them with spaces instead
 * kept the positions but left jansson 19 MB of Gemma 3's spaces to read (0.4 s).
 * Anything unusual (escapes the fast reader refuses, numbers it does not expect, another model
 * type) leaves the text alone and jansson reads and judges everything, as before. */
#include "tokenizer/tok-internal.h"

#include <stdlib.h>
#include <string.h>

struct fast_span {
	size_t start, end; /* the value's bytes */
};

static size_t fast_ws(const char *b, size_t i, size_t len)
{
	while (i < len && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r'))
		i++;
	return i;
}

/* The end of the string starting at the quote B[I], or 0 when unterminated: the first quote after it
 * that an even run of backslashes precedes (memchr: a vocabulary is skipped whole to reach the merges). */
static size_t fast_string_end(const char *b, size_t i, size_t len)
{
	for (size_t from = i + 1; from < len;) {
		const char *q = memchr(b + from, '"', len - from);
		if (!q)
			return 0;
		size_t at = (size_t)(q - b), run = at;
		while (run > from && b[run - 1] == '\\') /* from follows a quote: the run starts within */
			run--;
		if ((at - run) % 2 == 0)
			return at + 1;
		from = at + 1;
	}
	return 0;
}

/* The end of the value starting at B[I], or 0. */
static size_t fast_skip(const char *b, size_t i, size_t len)
{
	if (i >= len)
		return 0;
	if (b[i] == '"')
		return fast_string_end(b, i, len);
	if (b[i] == '{' || b[i] == '[') {
		int depth = 0;
		for (; i < len; i++) {
			if (b[i] == '"') {
				size_t e = fast_string_end(b, i, len);
				if (!e)
					return 0;
				i = e - 1;
			} else if (b[i] == '{' || b[i] == '[') {
				depth++;
			} else if ((b[i] == '}' || b[i] == ']') && --depth == 0) {
				return i + 1;
			}
		}
		return 0;
	}
	while (i < len && !strchr(",}] \t\r\n", b[i]))
		i++;
	return i;
}

/* The value of KEY in the object starting at B[I] ('{'); false when absent or malformed. */
static bool fast_member(const char *b, size_t i, size_t len, const char *key, struct fast_span *out)
{
	size_t kl = strlen(key);
	if (i >= len || b[i] != '{')
		return false;
	i = fast_ws(b, i + 1, len);
	while (i < len && b[i] == '"') {
		size_t ke = fast_string_end(b, i, len);
		if (!ke)
			return false;
		bool match = ke - i - 2 == kl && memcmp(b + i + 1, key, kl) == 0;
		i = fast_ws(b, ke, len);
		if (i >= len || b[i] != ':')
			return false;
		i = fast_ws(b, i + 1, len);
		size_t ve = fast_skip(b, i, len);
		if (!ve)
			return false;
		if (match) {
			*out = (struct fast_span){i, ve};
			return true;
		}
		i = fast_ws(b, ve, len);
		if (i < len && b[i] == ',')
			i = fast_ws(b, i + 1, len);
	}
	return false;
}

void tok_jsonfast_free(struct tok_fast_merges *m)
{
	if (!m)
		return;
	free(m->text);
	free(m->off);
	free(m);
}

/* model.merges: ["a b", ...] or [["a", "b"], ...]. NULL when unusual; *OOM when out of memory. */
static struct tok_fast_merges *fast_merges(const char *b, struct fast_span sp, bool *oom)
{
	size_t len = sp.end, i = fast_ws(b, sp.start + 1, len), n = 0, cap = 1024;
	struct tok_fast_merges *m = calloc(1, sizeof *m);
	if (!m || !(m->text = malloc(sp.end - sp.start + 1)) || !(m->off = malloc(cap * 4 * sizeof *m->off))) {
		*oom = true;
		tok_jsonfast_free(m);
		return NULL;
	}
	size_t used = 0;
	bool ok = b[sp.start] == '[';
	while (ok && i < len && b[i] != ']') {
		if (n == cap) {
			uint32_t *no = realloc(m->off, cap * 8 * sizeof *no);
			if (!no) {
				*oom = true;
				break;
			}
			m->off = no;
			cap *= 2;
		}
		uint32_t *o = &m->off[4 * n];
		const char *p = b + i + 1;
		if (b[i] == '"') {
			long sl = tok_vocab_json_string(&p, b + len, m->text + used);
			char *sep = sl > 0 ? memchr(m->text + used, ' ', (size_t)sl) : NULL;
			ok = sep && !memchr(sep + 1, ' ', (size_t)(m->text + used + sl - sep - 1));
			if (ok) {
				o[0] = (uint32_t)used, o[1] = (uint32_t)(sep - (m->text + used));
				o[2] = o[0] + o[1] + 1, o[3] = (uint32_t)sl - o[1] - 1;
				used += (size_t)sl;
			}
		} else if (b[i] == '[') {
			for (int k = 0; k < 2 && ok; k++) {
				size_t q = fast_ws(b, (size_t)(p - b), len);
				ok = q < len && b[q] == '"';
				p = b + q + 1;
				long sl = ok ? tok_vocab_json_string(&p, b + len, m->text + used) : -1;
				ok = sl >= 0;
				o[2 * k] = (uint32_t)used, o[2 * k + 1] = (uint32_t)sl;
				used += ok ? (size_t)sl : 0;
				q = fast_ws(b, (size_t)(p - b), len);
				ok = ok && q < len && b[q] == (k ? ']' : ',');
				p = b + q + 1;
			}
		} else {
			ok = false;
		}
		n++;
		i = fast_ws(b, (size_t)(p - b), len);
		if (ok && i < len && b[i] == ',')
			i = fast_ws(b, i + 1, len);
		else
			ok = ok && i < len && b[i] == ']';
	}
	if (!ok || *oom) {
		tok_jsonfast_free(m);
		return NULL;
	}
	m->n = n;
	return m;
}

/* REST: BUF without the values at SPANS (N of them, apart), each cut down to its first and last byte. */
static int fast_cut(const char *buf, size_t len, struct fast_span *spans, int n, struct tok_json_rest *rest)
{
	if (n == 2 && spans[1].start < spans[0].start) {
		struct fast_span s = spans[0];
		spans[0] = spans[1], spans[1] = s;
	}
	size_t removed = 0;
	for (int c = 0; c < n; c++)
		removed += spans[c].end - spans[c].start - 2;
	if (!(rest->text = malloc(len - removed + 1)))
		return -1;
	size_t from = 0, to = 0;
	for (int c = 0; c < n; c++) {
		size_t keep = spans[c].start + 1 - from; /* up to and with the opening bracket */
		memcpy(rest->text + to, buf + from, keep);
		to += keep;
		rest->text[to++] = buf[spans[c].end - 1];
		rest->cut_at[c] = to;
		rest->cut_removed[c] = spans[c].end - spans[c].start - 2;
		from = spans[c].end;
	}
	memcpy(rest->text + to, buf + from, len - from);
	rest->len = to + len - from;
	rest->text[rest->len] = '\0';
	rest->n_cuts = n;
	return 0;
}

void tok_jsonfast_where(const struct tok_json_rest *rest, const char *buf, size_t pos, int *line, int *column)
{
	size_t at = pos;
	for (int c = 0; c < rest->n_cuts; c++)
		if (pos >= rest->cut_at[c])
			at += rest->cut_removed[c];
	*line = 1, *column = 0;
	for (size_t i = 0; i < at; i++) { /* as jansson's stream counts: a column per character */
		unsigned char ch = (unsigned char)buf[i];
		if (ch == '\n')
			++*line, *column = 0;
		else if ((ch & 0xC0) != 0x80)
			++*column;
	}
}

int tok_jsonfast_take(struct tokenizer *tok, const char *buf, size_t len, struct tok_json_rest *rest, struct err *e)
{
	struct fast_span model, type, vocab, merges = {0, 0};
	size_t root = fast_ws(buf, 0, len);
	if (!fast_member(buf, root, len, "model", &model) || !fast_member(buf, model.start, len, "type", &type) ||
	    !fast_member(buf, model.start, len, "vocab", &vocab))
		return 0;
	bool bpe = type.end - type.start == 5 && !memcmp(buf + type.start, "\"BPE\"", 5);
	bool wp = type.end - type.start == 11 && !memcmp(buf + type.start, "\"WordPiece\"", 11);
	if (!bpe && !wp)
		return 0;
	bool oom = false;
	struct tok_fast_merges *m = NULL;
	if (bpe && fast_member(buf, model.start, len, "merges", &merges) && !(m = fast_merges(buf, merges, &oom)))
		return oom ? err_set(e, "out of memory") : 0;
	int rc = tok_vocab_load_flat(&tok->vocab, buf + vocab.start, vocab.end - vocab.start);
	if (rc < 0) {
		tok_jsonfast_free(m);
		return rc == -2 ? err_set(e, "out of memory") : 0;
	}
	tok->json->vocab_read = true;
	tok->json->merges = m;
	struct fast_span cuts[2] = {vocab, merges};
	if (fast_cut(buf, len, cuts, m ? 2 : 1, rest) < 0)
		return err_set(e, "out of memory"); /* the tokenizer is freed with what it holds */
	return 0;
}
