/* tok-normalize.c -- tokenizer.json's normalizers, applied to a whole stretch of text.
 *
 * attnscope needs ids, not offsets, so a normalizer is a plain string rewrite. A Sequence is
 * flattened into one list of steps at load time. Unicode forms come from utf8proc; Lowercase
 * is Rust's char::to_lowercase per character (full mapping, no final-sigma rule), which is
 * what utf8_py_lower gives. Precompiled (the SentencePiece charsmap of XLM-R/ALBERT files)
 * cannot be reproduced exactly here and is refused by name. */
#include "tokenizer/tok-internal.h"
#include "base/utf8.h"

#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

enum norm_kind {
	NORM_NFC,
	NORM_NFD,
	NORM_NFKC,
	NORM_NFKD,
	NORM_LOWER,
	NORM_STRIP_ACCENTS,
	NORM_REPLACE,
	NORM_PREPEND,
	NORM_STRIP,
	NORM_BERT,
};

struct norm_step {
	enum norm_kind kind;
	struct tok_regex *re; /* Replace */
	char *str;            /* Replace: content; Prepend: prepend */
	bool left, right;     /* Strip */
	bool clean, chinese, lower;
	int strip_accents; /* Bert: -1 follows lowercase */
};

struct tok_norm {
	struct norm_step *steps;
	int n;
};

/* ---------------------------------------------------------------- loading */

static void norm_step_free(struct norm_step *s)
{
	tok_regex_free(s->re);
	free(s->str);
}

static int norm_bool(json_t *j, const char *key, bool dflt)
{
	json_t *v = json_object_get(j, key);
	return v ? json_is_true(v) : dflt;
}

static int norm_add(struct tok_norm *n, json_t *j, int depth, struct err *e)
{
	if (depth > 8)
		return err_set(e, "normalizer Sequence nested too deeply");
	json_t *type = json_object_get(j, "type");
	if (!json_is_object(j) || !json_is_string(type))
		return err_set(e, "a normalizer without a \"type\"");
	const char *t = json_string_value(type);
	if (strcmp(t, "Sequence") == 0) {
		json_t *list = json_object_get(j, "normalizers");
		if (!json_is_array(list))
			return err_set(e, "normalizer Sequence without a \"normalizers\" list");
		size_t i;
		json_t *v;
		json_array_foreach(list, i, v) {
			if (norm_add(n, v, depth + 1, e) < 0)
				return -1;
		}
		return 0;
	}
	struct norm_step st = {0};
	if (strcmp(t, "NFC") == 0) {
		st.kind = NORM_NFC;
	} else if (strcmp(t, "NFD") == 0) {
		st.kind = NORM_NFD;
	} else if (strcmp(t, "NFKC") == 0) {
		st.kind = NORM_NFKC;
	} else if (strcmp(t, "NFKD") == 0) {
		st.kind = NORM_NFKD;
	} else if (strcmp(t, "Lowercase") == 0) {
		st.kind = NORM_LOWER;
	} else if (strcmp(t, "StripAccents") == 0) {
		st.kind = NORM_STRIP_ACCENTS;
	} else if (strcmp(t, "Strip") == 0) {
		st.kind = NORM_STRIP;
		st.left = norm_bool(j, "strip_left", true);
		st.right = norm_bool(j, "strip_right", true);
	} else if (strcmp(t, "Prepend") == 0) {
		json_t *p = json_object_get(j, "prepend");
		if (!json_is_string(p))
			return err_set(e, "normalizer Prepend without a \"prepend\" string");
		st.kind = NORM_PREPEND;
		if (!(st.str = strdup(json_string_value(p))))
			return err_set(e, "out of memory");
	} else if (strcmp(t, "Replace") == 0) {
		json_t *pat = json_object_get(j, "pattern"), *content = json_object_get(j, "content");
		json_t *ps = json_object_get(pat, "String"), *pr = json_object_get(pat, "Regex");
		if (!json_is_string(content) || !(json_is_string(ps) || json_is_string(pr)))
			return err_set(e, "normalizer Replace needs a \"pattern\" (String or Regex) and a \"content\"");
		json_t *p = ps ? ps : pr;
		st.kind = NORM_REPLACE;
		if (!(st.re = tok_regex_new(json_string_value(p), json_string_length(p), ps != NULL, e)))
			return err_prefix(e, "normalizer Replace");
		if (!(st.str = strdup(json_string_value(content)))) {
			norm_step_free(&st);
			return err_set(e, "out of memory");
		}
	} else if (strcmp(t, "BertNormalizer") == 0) {
		st.kind = NORM_BERT;
		st.clean = norm_bool(j, "clean_text", true);
		st.chinese = norm_bool(j, "handle_chinese_chars", true);
		st.lower = norm_bool(j, "lowercase", true);
		json_t *sa = json_object_get(j, "strip_accents");
		st.strip_accents = json_is_boolean(sa) ? json_is_true(sa) : -1;
	} else {
		return err_set(e, "normalizer type \"%.40s\" is not supported", t);
	}
	struct norm_step *ns = realloc(n->steps, (size_t)(n->n + 1) * sizeof *ns);
	if (!ns) {
		norm_step_free(&st);
		return err_set(e, "out of memory");
	}
	n->steps = ns;
	n->steps[n->n++] = st;
	return 0;
}

int tok_norm_load(json_t *j, struct tok_norm **out, struct err *e)
{
	*out = NULL;
	if (!j || json_is_null(j))
		return 0;
	struct tok_norm *n = calloc(1, sizeof *n);
	if (!n)
		return err_set(e, "out of memory");
	if (norm_add(n, j, 0, e) < 0) {
		tok_norm_free(n);
		return -1;
	}
	*out = n;
	return 0;
}

void tok_norm_free(struct tok_norm *n)
{
	if (!n)
		return;
	for (int i = 0; i < n->n; i++)
		norm_step_free(&n->steps[i]);
	free(n->steps);
	free(n);
}

/* ---------------------------------------------------------------- running */

static int norm_unicode(const char *s, size_t len, utf8proc_option_t opt, struct tok_buf *out)
{
	if (len == 0)
		return tok_buf_add(out, "", 0);
	utf8proc_uint8_t *dst = NULL;
	utf8proc_ssize_t n = utf8proc_map((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)len, &dst, opt);
	if (n < 0)
		return -1;
	int rc = tok_buf_add(out, (const char *)dst, (size_t)n);
	free(dst);
	return rc;
}

static bool norm_is_mark(uint32_t cp, bool nonspacing_only)
{
	utf8proc_category_t c = utf8proc_category((utf8proc_int32_t)cp);
	return c == UTF8PROC_CATEGORY_MN || (!nonspacing_only && (c == UTF8PROC_CATEGORY_MC || c == UTF8PROC_CATEGORY_ME));
}

/* Map every character of S through one of the per-character rewrites. */
static int norm_chars(const struct norm_step *st, const char *s, size_t len, struct tok_buf *out)
{
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		int w = utf8_decode(s + i, &cp);
		const char *src = s + i;
		i += (size_t)w;
		char tmp[16];
		int rc = 0;
		switch (st->kind) {
		case NORM_LOWER:
			rc = tok_buf_add(out, tmp, (size_t)utf8_py_lower(cp, tmp));
			break;
		case NORM_STRIP_ACCENTS:
			if (!norm_is_mark(cp, false))
				rc = tok_buf_add(out, src, (size_t)w);
			break;
		default: /* NORM_BERT's clean_text and handle_chinese_chars */
			if (st->clean && (cp == 0 || cp == 0xFFFD || utf8_is_bert_control(cp)))
				break;
			if (st->clean && (cp == '\t' || cp == '\n' || cp == '\r' || utf8_is_white_space(cp)))
				rc = tok_buf_add(out, " ", 1);
			else if (st->chinese && utf8_is_cjk(cp))
				rc = tok_buf_add(out, " ", 1) || tok_buf_add(out, src, (size_t)w) || tok_buf_add(out, " ", 1);
			else
				rc = tok_buf_add(out, src, (size_t)w);
		}
		if (rc)
			return -1;
	}
	return tok_buf_add(out, "", 0);
}

static int norm_replace(const struct norm_step *st, const char *s, size_t len, struct tok_buf *out, struct err *e)
{
	struct tok_span *sp;
	int n;
	if (tok_regex_spans(st->re, s, len, &sp, &n, e) < 0)
		return -1;
	int rc = tok_buf_add(out, "", 0);
	for (int i = 0; i < n && rc == 0; i++)
		rc = sp[i].match ? tok_buf_add(out, st->str, strlen(st->str))
				 : tok_buf_add(out, s + sp[i].start, sp[i].end - sp[i].start);
	free(sp);
	return rc < 0 ? err_set(e, "out of memory") : 0;
}

static int norm_step_run(const struct norm_step *st, const char *s, size_t len, struct tok_buf *out, struct err *e)
{
	int rc = 0;
	switch (st->kind) {
	case NORM_NFC:
		rc = norm_unicode(s, len, UTF8PROC_STABLE | UTF8PROC_COMPOSE, out);
		break;
	case NORM_NFD:
		rc = norm_unicode(s, len, UTF8PROC_STABLE | UTF8PROC_DECOMPOSE, out);
		break;
	case NORM_NFKC:
		rc = norm_unicode(s, len, UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT, out);
		break;
	case NORM_NFKD:
		rc = norm_unicode(s, len, UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT, out);
		break;
	case NORM_LOWER:
	case NORM_STRIP_ACCENTS:
		rc = norm_chars(st, s, len, out);
		break;
	case NORM_REPLACE:
		return norm_replace(st, s, len, out, e);
	case NORM_PREPEND:
		/* tokenizers prepends to non-empty text only */
		rc = (len && tok_buf_add(out, st->str, strlen(st->str))) || tok_buf_add(out, s, len);
		break;
	case NORM_STRIP: {
		size_t a = 0, b = len;
		uint32_t cp;
		while (st->left && a < b) {
			int w = utf8_decode(s + a, &cp);
			if (!utf8_is_white_space(cp))
				break;
			a += (size_t)w;
		}
		while (st->right && b > a) {
			size_t k = b - 1;
			while (k > a && ((unsigned char)s[k] & 0xC0) == 0x80)
				k--;
			utf8_decode(s + k, &cp);
			if (!utf8_is_white_space(cp))
				break;
			b = k;
		}
		rc = tok_buf_add(out, s + a, b - a);
		break;
	}
	case NORM_BERT: {
		/* clean_text and chinese chars, then strip accents (NFD, drop Mn), then lowercase */
		struct tok_buf t1 = {0}, t2 = {0};
		rc = norm_chars(st, s, len, &t1);
		bool strip = st->strip_accents < 0 ? st->lower : st->strip_accents;
		if (!rc && strip) {
			rc = norm_unicode(t1.s, t1.n, UTF8PROC_STABLE | UTF8PROC_DECOMPOSE, &t2);
			t1.n = 0;
			for (size_t i = 0; !rc && i < t2.n;) {
				uint32_t cp;
				int w = utf8_decode(t2.s + i, &cp);
				if (!norm_is_mark(cp, true))
					rc = tok_buf_add(&t1, t2.s + i, (size_t)w);
				i += (size_t)w;
			}
			rc = rc || tok_buf_add(&t1, "", 0);
		}
		if (!rc && st->lower) {
			struct norm_step low = {.kind = NORM_LOWER};
			rc = norm_chars(&low, t1.s, t1.n, out);
		} else if (!rc) {
			rc = tok_buf_add(out, t1.s, t1.n);
		}
		tok_buf_free(&t1);
		tok_buf_free(&t2);
		break;
	}
	}
	return rc ? err_set(e, "out of memory") : 0;
}

int tok_norm_run(const struct tok_norm *n, const char *s, size_t len, struct tok_buf *out, struct err *e)
{
	out->n = 0;
	if (!n || n->n == 0)
		return tok_buf_add(out, s, len) < 0 ? err_set(e, "out of memory") : 0;
	struct tok_buf tmp = {0};
	const char *src = s;
	size_t sl = len;
	int rc = 0;
	for (int i = 0; i < n->n && rc == 0; i++) {
		/* alternate between OUT and TMP so the last step writes OUT */
		struct tok_buf *dst = ((n->n - 1 - i) % 2 == 0) ? out : &tmp;
		dst->n = 0;
		rc = norm_step_run(&n->steps[i], src, sl, dst, e);
		src = dst->s ? dst->s : "";
		sl = dst->n;
	}
	tok_buf_free(&tmp);
	return rc;
}
