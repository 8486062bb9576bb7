/* tok-regex.c -- the patterns of tokenizer.json, written for Oniguruma, run by PCRE2.
 *
 * tokenizers compiles Split and Replace patterns with Oniguruma (Ruby syntax, Unicode). PCRE2
 * with PCRE2_UTF | PCRE2_UCP reads the same syntax the real files use ((?i:...), \p{L}, \p{N},
 * lookahead, {1,3}) with the same meaning, except for two escapes rewritten here: \s is
 * Unicode White_Space in Oniguruma but PCRE2 adds U+180E, and \h is a hex digit in Oniguruma
 * but horizontal space in PCRE2. A literal String pattern is quoted. Matches are enumerated as
 * the onig crate's find_iter does: after an empty match the search moves on by one character,
 * and an empty match right where the previous match ended is skipped. */
#include "tokenizer/tok-internal.h"

#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

struct tok_regex {
	pcre2_code *code;
};

/* Oniguruma's \s: the code points with the White_Space property. */
#define REGEX_WS "\\t\\n\\x0B\\f\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}"

/* Rewrite the Oniguruma escapes PCRE2 reads differently; literal text is quoted byte by byte.
 * Returns a malloc'd pattern or NULL (with E set). */
static char *regex_translate(const char *p, size_t len, bool literal, struct err *e)
{
	struct tok_buf b = {0};
	bool in_class = false, ok = true;
	for (size_t i = 0; i < len && ok; i++) {
		char c = p[i];
		if (literal) {
			/* \Q...\E cannot hold "\E", so quote the metacharacters one by one */
			if (strchr("\\^$.|?*+()[]{}-#/ ", c) && c)
				ok = tok_buf_add(&b, "\\", 1) == 0;
			ok = ok && tok_buf_add(&b, &c, 1) == 0;
			continue;
		}
		if (c == '\\' && i + 1 < len) {
			char d = p[++i];
			const char *rep = NULL;
			if (d == 's')
				rep = in_class ? REGEX_WS : "[" REGEX_WS "]";
			else if (d == 'S' && !in_class)
				rep = "[^" REGEX_WS "]";
			else if (d == 'h')
				rep = in_class ? "0-9a-fA-F" : "[0-9a-fA-F]";
			else if (d == 'H' && !in_class)
				rep = "[^0-9a-fA-F]";
			else if (d == 'S' || d == 'H') {
				err_set(e, "\\%c inside a character class is not supported", d);
				tok_buf_free(&b);
				return NULL;
			}
			if (rep) {
				ok = tok_buf_add(&b, rep, strlen(rep)) == 0;
			} else {
				char two[2] = {c, d};
				ok = tok_buf_add(&b, two, 2) == 0;
			}
			continue;
		}
		if (c == '[' && !in_class) {
			in_class = true;
			ok = tok_buf_add(&b, &c, 1) == 0;
			/* a ']' or '^]' right after '[' is a literal member */
			if (ok && i + 1 < len && p[i + 1] == '^')
				ok = tok_buf_add(&b, &p[++i], 1) == 0;
			if (ok && i + 1 < len && p[i + 1] == ']')
				ok = tok_buf_add(&b, &p[++i], 1) == 0;
			continue;
		}
		if (c == '[' && in_class) {
			err_set(e, "nested character classes are not supported");
			tok_buf_free(&b);
			return NULL;
		}
		if (c == ']' && in_class)
			in_class = false;
		ok = tok_buf_add(&b, &c, 1) == 0;
	}
	if (ok && !b.s)
		ok = tok_buf_add(&b, "", 0) == 0;
	if (!ok) {
		err_set(e, "out of memory");
		tok_buf_free(&b);
		return NULL;
	}
	return b.s;
}

struct tok_regex *tok_regex_new(const char *pattern, size_t len, bool literal, struct err *e)
{
	if (literal && len == 0) {
		err_set(e, "empty pattern");
		return NULL;
	}
	char *p = regex_translate(pattern, len, literal, e);
	if (!p)
		return NULL;
	int code;
	PCRE2_SIZE off;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)p, strlen(p), PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &code,
				       &off, NULL);
	free(p);
	if (!re) {
		PCRE2_UCHAR msg[160];
		pcre2_get_error_message(code, msg, sizeof msg);
		err_set(e, "pattern \"%.60s\": %s", pattern, (char *)msg);
		return NULL;
	}
	struct tok_regex *r = malloc(sizeof *r);
	if (!r) {
		pcre2_code_free(re);
		err_set(e, "out of memory");
		return NULL;
	}
	r->code = re;
	return r;
}

void tok_regex_free(struct tok_regex *re)
{
	if (!re)
		return;
	pcre2_code_free(re->code);
	free(re);
}

static int regex_push(struct tok_span **v, int *n, int *cap, size_t start, size_t end, bool match)
{
	if (*n == *cap) {
		int nc = *cap ? *cap * 2 : 16;
		struct tok_span *nv = realloc(*v, (size_t)nc * sizeof *nv);
		if (!nv)
			return -1;
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = (struct tok_span){start, end, match};
	return 0;
}

int tok_regex_spans(const struct tok_regex *re, const char *s, size_t len, struct tok_span **out, int *n,
		    struct err *e)
{
	*out = NULL;
	*n = 0;
	int cap = 0;
	if (len == 0)
		return regex_push(out, n, &cap, 0, 0, false) < 0 ? err_set(e, "out of memory") : 0;
	pcre2_match_data *md = pcre2_match_data_create(1, NULL);
	if (!md)
		return err_set(e, "out of memory");
	size_t prev = 0, pos = 0;
	bool have_last = false;
	size_t last_end = 0;
	int rc = 0;
	while (pos <= len) {
		int r = pcre2_match(re->code, (PCRE2_SPTR)s, len, pos, PCRE2_NO_UTF_CHECK, md, NULL);
		if (r == PCRE2_ERROR_NOMATCH)
			break;
		if (r < 0) {
			PCRE2_UCHAR msg[160];
			pcre2_get_error_message(r, msg, sizeof msg);
			rc = err_set(e, "pattern: %s", (char *)msg);
			break;
		}
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
		size_t ms = ov[0], me = ov[1];
		if (ms == me) {
			/* step over one character */
			size_t step = 1;
			while (ms + step < len && ((unsigned char)s[ms + step] & 0xC0) == 0x80)
				step++;
			pos = ms + step;
			if (have_last && ms == last_end)
				continue;
		} else {
			pos = me;
		}
		have_last = true;
		last_end = me;
		if ((prev != ms && regex_push(out, n, &cap, prev, ms, false) < 0) ||
		    regex_push(out, n, &cap, ms, me, true) < 0) {
			rc = err_set(e, "out of memory");
			break;
		}
		prev = me;
		if (ms == me && ms >= len)
			break;
	}
	if (rc == 0 && prev != len && regex_push(out, n, &cap, prev, len, false) < 0)
		rc = err_set(e, "out of memory");
	pcre2_match_data_free(md);
	if (rc < 0) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}
