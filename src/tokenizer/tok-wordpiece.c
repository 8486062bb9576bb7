/* tok-wordpiece.c -- BERT's tokenizer: HF's BasicTokenizer followed by greedy WordPiece.
 *
 * BasicTokenizer: drop NUL, U+FFFD and control characters, turn whitespace into spaces, put
 * spaces around CJK ideographs, NFC, split on whitespace; then per word lower-case and strip
 * accents (NFD, drop Mn) as configured, and split off every punctuation character (ASCII
 * symbols count as punctuation). WordPiece: the longest vocabulary prefix first, continuations
 * written "##rest"; a word with no full cover, or longer than max_input_chars_per_word code
 * points, becomes [UNK]. Character classes come from utf8proc (the same as Python's
 * unicodedata for every character both know). */
#include "tokenizer/tok-internal.h"
#include "base/utf8.h"

#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* ---------------------------------------------------------------- loading */

int wordpiece_load_vocab_txt(struct tokenizer *tok, const char *path, struct err *e)
{
	char *buf;
	size_t len;
	/* HF: readlines() in text mode, each line without its "\n", id = line number */
	if (tok_read_text(path, &buf, &len, e) < 0)
		return -1;
	size_t lines = 1;
	for (const char *p = buf; (p = memchr(p, '\n', len - (size_t)(p - buf))); p++)
		lines++;
	int32_t id = 0;
	/* (a last line ending in "\n" adds no entry; more lines than ids fail before any work) */
	int rc = lines > (size_t)TOK_MAX_IDS + 1 ? err_set(e, "%s: too many lines (more than %d)", path, TOK_MAX_IDS)
		 : tok_vocab_reserve(&tok->vocab, lines > TOK_MAX_IDS ? TOK_MAX_IDS : lines) < 0
		 ? err_set(e, "%s: out of memory", path) : 0;
	for (size_t start = 0; start < len && rc == 0;) {
		const char *nl = memchr(buf + start, '\n', len - start);
		size_t end = nl ? (size_t)(nl - buf) : len;
		if (id >= TOK_MAX_IDS) {
			rc = err_set(e, "%s: too many lines (more than %d)", path, TOK_MAX_IDS);
			break;
		}
		if (tok_vocab_set(&tok->vocab, buf + start, end - start, id++) < 0) {
			rc = err_set(e, "%s: out of memory", path);
			break;
		}
		start = end + 1;
	}
	free(buf);
	if (rc == 0 && id == 0)
		rc = err_set(e, "%s: empty vocabulary", path);
	return rc;
}

int wordpiece_load_json(struct tokenizer *tok, json_t *root, const char *path, char **unk_name, struct err *e)
{
	json_t *model = json_object_get(root, "model");
	json_t *type = json_object_get(model, "type");
	if (!json_is_object(model) || !json_is_string(type))
		return err_set(e, "%s: no \"model\" with a \"type\"", path);
	if (strcmp(json_string_value(type), "WordPiece") != 0)
		return err_set(e, "%s: the model is %.40s, not WordPiece", path, json_string_value(type));
	if (tok_vocab_from_json(&tok->vocab, json_object_get(model, "vocab"), e) < 0)
		return err_prefix(e, "%s: model.vocab", path);
	json_t *unk = json_object_get(model, "unk_token");
	if (json_is_string(unk) && !(*unk_name = strdup(json_string_value(unk))))
		return err_set(e, "out of memory");
	json_t *prefix = json_object_get(model, "continuing_subword_prefix");
	if (json_is_string(prefix) && !(tok->prefix = strdup(json_string_value(prefix))))
		return err_set(e, "out of memory");
	json_t *maxc = json_object_get(model, "max_input_chars_per_word");
	if (json_is_integer(maxc)) {
		json_int_t v = json_integer_value(maxc);
		tok->max_chars = v < 0 ? 0 : v > 1000000 ? 1000000 : (int)v;
	}
	/* BertNormalizer carries BertTokenizer's flags; without one nothing is lower-cased. */
	json_t *norm = json_object_get(root, "normalizer");
	json_t *ntype = json_object_get(norm, "type");
	if (json_is_string(ntype) && strcmp(json_string_value(ntype), "BertNormalizer") == 0) {
		json_t *v = json_object_get(norm, "lowercase");
		tok->lower = v ? json_is_true(v) : true;
		v = json_object_get(norm, "strip_accents");
		tok->strip_accents = json_is_boolean(v) ? json_is_true(v) : -1;
		v = json_object_get(norm, "handle_chinese_chars");
		tok->chinese = v ? json_is_true(v) : true;
	} else {
		tok->lower = false;
	}
	return 0;
}

void wordpiece_free(struct tokenizer *tok)
{
	for (int i = 0; i < tok->n_never_split; i++)
		free(tok->never_split[i]);
	free(tok->never_split);
	free(tok->prefix);
	tok->never_split = NULL;
	tok->prefix = NULL;
	tok->n_never_split = 0;
}

/* ---------------------------------------------------------------- WordPiece */

/* Greedy longest-match-first over one word (no whitespace inside). */
int wordpiece_word(const struct tokenizer *tok, const char *w, size_t len, struct tok_ids *out)
{
	size_t offs_cap = (size_t)tok->max_chars + 2;
	size_t *offs = malloc(offs_cap * sizeof *offs); /* [n_chars+1] byte offset of each character */
	if (!offs)
		return -1;
	size_t n = 0;
	for (size_t i = 0; i < len && n < offs_cap; n++) {
		offs[n] = i;
		uint32_t cp;
		i += (size_t)utf8_decode(w + i, &cp);
	}
	if (n > (size_t)tok->max_chars) {
		free(offs);
		return tok_ids_push(out, tok->unk_id, false);
	}
	offs[n] = len;
	size_t pl = strlen(tok->prefix);
	char *scratch = malloc(pl + len + 1);
	if (!scratch) {
		free(offs);
		return -1;
	}
	memcpy(scratch, tok->prefix, pl);
	int n0 = out->n, rc = 0;
	bool bad = false;
	for (size_t start = 0; start < n && !bad;) {
		size_t end = n;
		int32_t id = -1;
		for (; end > start; end--) {
			size_t bytes = offs[end] - offs[start];
			if (start == 0) {
				id = tok_vocab_get(&tok->vocab, w, bytes);
			} else {
				memcpy(scratch + pl, w + offs[start], bytes);
				id = tok_vocab_get(&tok->vocab, scratch, pl + bytes);
			}
			if (id >= 0)
				break;
		}
		if (id < 0) {
			bad = true;
		} else if (tok_ids_push(out, id, false) < 0) {
			rc = -1;
			break;
		}
		start = end;
	}
	if (rc == 0 && bad) {
		out->n = n0;
		rc = tok_ids_push(out, tok->unk_id, false);
	}
	free(scratch);
	free(offs);
	return rc;
}

/* One word after punctuation splitting: never_split words go to the vocabulary whole. */
static int wordpiece_piece(const struct tokenizer *tok, const char *w, size_t len, struct tok_ids *out)
{
	for (int i = 0; i < tok->n_never_split; i++) {
		if (strlen(tok->never_split[i]) == len && memcmp(tok->never_split[i], w, len) == 0) {
			int32_t id = tok_token_id(tok, w, len);
			return tok_ids_push(out, id >= 0 ? id : tok->unk_id, false);
		}
	}
	return wordpiece_word(tok, w, len, out);
}

/* ---------------------------------------------------------------- BasicTokenizer */

/* utf8proc_map on S[0..LEN) (NFC or NFD as OPTIONS say); the result is malloc'd. */
static char *wordpiece_normalize(const char *s, size_t len, utf8proc_option_t options, size_t *olen)
{
	utf8proc_uint8_t *dst = NULL;
	utf8proc_ssize_t n = utf8proc_map((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)len, &dst, options);
	if (n < 0) {
		free(dst);
		return NULL;
	}
	*olen = (size_t)n;
	return (char *)dst;
}

/* Lower-case and strip accents of one whitespace-free word as BasicTokenizer does, into a
 * malloc'd string. */
static char *wordpiece_fold(const struct tokenizer *tok, const char *w, size_t len, size_t *olen)
{
	char *low = NULL;
	if (tok->lower) {
		if (!(low = malloc(len * 3 + 1)))
			return NULL;
		size_t n = 0;
		for (size_t i = 0; i < len;) {
			uint32_t cp;
			i += (size_t)utf8_decode(w + i, &cp);
			n += (size_t)utf8_py_lower(cp, low + n);
		}
		low[n] = '\0';
		w = low, len = n;
	}
	bool strip = tok->lower ? tok->strip_accents != 0 : tok->strip_accents == 1;
	if (!strip) {
		if (!low && (low = malloc(len + 1))) {
			memcpy(low, w, len);
			low[len] = '\0';
		}
		*olen = len;
		return low;
	}
	size_t dn;
	char *d = wordpiece_normalize(w, len, UTF8PROC_STABLE | UTF8PROC_DECOMPOSE, &dn);
	free(low);
	if (!d)
		return NULL;
	size_t n = 0;
	for (size_t i = 0; i < dn;) {
		uint32_t cp;
		int k = utf8_decode(d + i, &cp);
		if (utf8proc_category((utf8proc_int32_t)cp) != UTF8PROC_CATEGORY_MN) {
			memmove(d + n, d + i, (size_t)k);
			n += (size_t)k;
		}
		i += (size_t)k;
	}
	d[n] = '\0';
	*olen = n;
	return d;
}

/* Split a folded word at punctuation (each punctuation character its own piece), unless the
 * folded word is a never_split one. */
static int wordpiece_split_punct(const struct tokenizer *tok, const char *w, size_t len, struct tok_ids *out)
{
	if (tok_is_never_split(tok, w, len))
		return wordpiece_piece(tok, w, len, out);
	size_t start = 0;
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		int k = utf8_decode(w + i, &cp);
		if (utf8_is_bert_punct(cp)) {
			if (start < i && wordpiece_piece(tok, w + start, i - start, out) < 0)
				return -1;
			if (wordpiece_piece(tok, w + i, (size_t)k, out) < 0)
				return -1;
			start = i + (size_t)k;
		}
		i += (size_t)k;
	}
	if (start < len && wordpiece_piece(tok, w + start, len - start, out) < 0)
		return -1;
	return 0;
}

int wordpiece_encode(const struct tokenizer *tok, const char *s, size_t len, struct tok_ids *out, struct err *e)
{
	/* 1. clean: drop NUL, U+FFFD and controls, whitespace -> ' '; spaces around CJK */
	if (len > (SIZE_MAX - 1) / 3)
		return err_set(e, "text too long");
	char *clean = malloc(len * 3 + 1);
	if (!clean)
		return err_set(e, "out of memory");
	size_t n = 0;
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		int k = utf8_decode(s + i, &cp);
		i += (size_t)k;
		if (cp == 0 || cp == 0xFFFD || utf8_is_bert_control(cp))
			continue;
		if (utf8_is_bert_space(cp)) {
			clean[n++] = ' ';
		} else if (tok->chinese && utf8_is_cjk(cp)) {
			clean[n++] = ' ';
			n += (size_t)utf8_encode(cp, clean + n);
			clean[n++] = ' ';
		} else {
			memcpy(clean + n, s + i - k, (size_t)k);
			n += (size_t)k;
		}
	}
	/* 2. NFC, so that one character typed two ways tokenizes one way */
	size_t tn = 0;
	char *text = n ? wordpiece_normalize(clean, n, UTF8PROC_STABLE | UTF8PROC_COMPOSE, &tn) : NULL;
	free(clean);
	if (n && !text)
		return err_set(e, "out of memory");
	/* 3. split on Python whitespace; fold and split each word */
	int rc = 0;
	for (size_t i = 0; i < tn && rc == 0;) {
		uint32_t cp;
		int k = utf8_decode(text + i, &cp);
		if (utf8_is_py_space(cp)) {
			i += (size_t)k;
			continue;
		}
		size_t start = i;
		while (i < tn) {
			k = utf8_decode(text + i, &cp);
			if (utf8_is_py_space(cp))
				break;
			i += (size_t)k;
		}
		const char *w = text + start;
		size_t wl = i - start;
		if (tok_is_never_split(tok, w, wl)) {
			/* kept whole: not lower-cased nor split at punctuation */
			rc = wordpiece_piece(tok, w, wl, out);
			continue;
		}
		size_t fl;
		char *f = wordpiece_fold(tok, w, wl, &fl);
		if (!f) {
			rc = -1;
			break;
		}
		rc = wordpiece_split_punct(tok, f, fl, out);
		free(f);
	}
	free(text);
	return rc < 0 ? err_set(e, "out of memory") : 0;
}
