/* tok-pretok.c -- tokenizer.json's pre-tokenizers: cutting normalized text into words.
 *
 * Every pre-tokenizer is one or more "split" steps as in tokenizers' NormalizedString::split:
 * the text is covered by matches and the stretches between them (from a regex, a literal
 * string or a character class), and the behavior decides what the matches become (removed,
 * isolated, merged with the previous or next piece, or contiguous runs merged). ByteLevel and
 * Metaspace also rewrite the words. A Sequence is flattened at load time. Empty pieces are
 * dropped, as tokenizers drops them. */
#include "tokenizer/tok-internal.h"
#include "base/utf8.h"

#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

enum split_behavior { SPLIT_REMOVED, SPLIT_ISOLATED, SPLIT_PREVIOUS, SPLIT_NEXT, SPLIT_CONTIGUOUS };

enum pretok_kind {
	PRE_SPLIT,      /* regex or string pattern */
	PRE_BYTELEVEL,  /* optional prefix space, GPT-2 regex, bytes to the byte alphabet */
	PRE_METASPACE,  /* ' ' -> replacement, prefix, split before each replacement */
	PRE_CHARCLASS,  /* split on a character class: Digits, Punctuation, WhitespaceSplit, Bert */
};

enum char_class { CLASS_DIGIT, CLASS_PUNCT, CLASS_SPACE, CLASS_BERT_PUNCT };

struct pretok_step {
	enum pretok_kind kind;
	enum split_behavior behavior;
	bool invert;
	struct tok_regex *re;    /* PRE_SPLIT, PRE_BYTELEVEL with use_regex */
	enum char_class cls;     /* PRE_CHARCLASS */
	bool prefix_space;       /* ByteLevel add_prefix_space */
	char *replacement;       /* Metaspace */
	int prepend;             /* Metaspace: 0 never, 1 first, 2 always */
	bool split;              /* Metaspace */
};

struct tok_pretok {
	struct pretok_step *steps;
	int n;
};

/* tokenizers' ByteLevel pattern (GPT-2's); \s is rewritten to White_Space by tok-regex.c. */
static const char bytelevel_pattern[] = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

uint32_t tok_byte_char(unsigned char b)
{
	if ((b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE)
		return b;
	/* the others take U+0100 onwards in byte order */
	uint32_t k = 0;
	for (unsigned c = 0; c < b; c++)
		if (!((c >= '!' && c <= '~') || (c >= 0xA1 && c <= 0xAC) || c >= 0xAE))
			k++;
	return 256 + k;
}

/* ---------------------------------------------------------------- words */

int tok_words_add(struct tok_words *l, const char *s, size_t len, bool first)
{
	if (len == 0)
		return 0;
	if (l->n == l->cap) {
		int cap = l->cap ? l->cap * 2 : 16;
		struct tok_word *w = realloc(l->w, (size_t)cap * sizeof *w);
		if (!w)
			return -1;
		l->w = w;
		l->cap = cap;
	}
	size_t off = l->text.n;
	if (tok_buf_add(&l->text, s, len) < 0)
		return -1;
	l->w[l->n++] = (struct tok_word){off, len, first};
	return 0;
}

void tok_words_free(struct tok_words *l)
{
	tok_buf_free(&l->text);
	free(l->w);
	memset(l, 0, sizeof *l);
}

/* ---------------------------------------------------------------- loading */

static int pretok_behavior(json_t *j, enum split_behavior *out, struct err *e)
{
	json_t *b = json_object_get(j, "behavior");
	if (!b) {
		*out = SPLIT_ISOLATED;
		return 0;
	}
	static const char *const names[] = {"Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"};
	for (int i = 0; i < 5; i++) {
		if (json_is_string(b) && strcmp(json_string_value(b), names[i]) == 0) {
			*out = (enum split_behavior)i;
			return 0;
		}
	}
	return err_set(e, "pre_tokenizer split behavior %.40s is not supported",
		       json_is_string(b) ? json_string_value(b) : "(not a string)");
}

static int pretok_push(struct tok_pretok *p, struct pretok_step *st, struct err *e)
{
	struct pretok_step *ns = realloc(p->steps, (size_t)(p->n + 1) * sizeof *ns);
	if (!ns) {
		tok_regex_free(st->re);
		free(st->replacement);
		return err_set(e, "out of memory");
	}
	p->steps = ns;
	p->steps[p->n++] = *st;
	return 0;
}

static int pretok_add(struct tok_pretok *p, json_t *j, int depth, struct err *e)
{
	if (depth > 8)
		return err_set(e, "pre_tokenizer Sequence nested too deeply");
	json_t *type = json_object_get(j, "type");
	if (!json_is_object(j) || !json_is_string(type))
		return err_set(e, "a pre_tokenizer without a \"type\"");
	const char *t = json_string_value(type);
	struct pretok_step st = {0};
	if (strcmp(t, "Sequence") == 0) {
		json_t *list = json_object_get(j, "pretokenizers");
		if (!json_is_array(list))
			return err_set(e, "pre_tokenizer Sequence without a \"pretokenizers\" list");
		size_t i;
		json_t *v;
		json_array_foreach(list, i, v) {
			if (pretok_add(p, v, depth + 1, e) < 0)
				return -1;
		}
		return 0;
	} else if (strcmp(t, "Split") == 0) {
		json_t *pat = json_object_get(j, "pattern");
		json_t *ps = json_object_get(pat, "String"), *pr = json_object_get(pat, "Regex");
		if (!json_is_string(ps) && !json_is_string(pr))
			return err_set(e, "pre_tokenizer Split needs a \"pattern\" with a String or a Regex");
		if (pretok_behavior(j, &st.behavior, e) < 0)
			return -1;
		st.kind = PRE_SPLIT;
		st.invert = json_is_true(json_object_get(j, "invert"));
		json_t *v = ps ? ps : pr;
		if (!(st.re = tok_regex_new(json_string_value(v), json_string_length(v), ps != NULL, e)))
			return err_prefix(e, "pre_tokenizer Split");
	} else if (strcmp(t, "ByteLevel") == 0) {
		st.kind = PRE_BYTELEVEL;
		json_t *ps = json_object_get(j, "add_prefix_space"), *ur = json_object_get(j, "use_regex");
		st.prefix_space = ps ? json_is_true(ps) : true;
		if ((!ur || json_is_true(ur)) &&
		    !(st.re = tok_regex_new(bytelevel_pattern, strlen(bytelevel_pattern), false, e)))
			return -1;
	} else if (strcmp(t, "Metaspace") == 0) {
		st.kind = PRE_METASPACE;
		json_t *r = json_object_get(j, "replacement"), *sch = json_object_get(j, "prepend_scheme");
		json_t *aps = json_object_get(j, "add_prefix_space"), *sp = json_object_get(j, "split");
		const char *rep = json_is_string(r) ? json_string_value(r) : "\xe2\x96\x81";
		uint32_t cp;
		if (!rep[0] || (size_t)utf8_decode(rep, &cp) != strlen(rep))
			return err_set(e, "pre_tokenizer Metaspace replacement must be one character");
		st.prepend = 2;
		if (json_is_string(sch)) {
			const char *s = json_string_value(sch);
			st.prepend = !strcmp(s, "never") ? 0 : !strcmp(s, "first") ? 1 : !strcmp(s, "always") ? 2 : -1;
			if (st.prepend < 0)
				return err_set(e, "pre_tokenizer Metaspace prepend_scheme \"%.20s\" is not supported", s);
		} else if (aps && !json_is_true(aps)) {
			st.prepend = 0; /* older files: add_prefix_space false */
		}
		st.split = sp ? json_is_true(sp) : true;
		if (!(st.replacement = strdup(rep)))
			return err_set(e, "out of memory");
	} else if (strcmp(t, "Digits") == 0) {
		st.kind = PRE_CHARCLASS;
		st.cls = CLASS_DIGIT;
		st.behavior = json_is_true(json_object_get(j, "individual_digits")) ? SPLIT_ISOLATED : SPLIT_CONTIGUOUS;
	} else if (strcmp(t, "Punctuation") == 0) {
		st.kind = PRE_CHARCLASS;
		st.cls = CLASS_PUNCT;
		if (pretok_behavior(j, &st.behavior, e) < 0)
			return -1;
	} else if (strcmp(t, "WhitespaceSplit") == 0) {
		st.kind = PRE_CHARCLASS;
		st.cls = CLASS_SPACE;
		st.behavior = SPLIT_REMOVED;
	} else if (strcmp(t, "Whitespace") == 0) {
		/* \w+|[^\w\s]+ kept, the rest removed */
		st.kind = PRE_SPLIT;
		st.behavior = SPLIT_REMOVED;
		st.invert = true;
		if (!(st.re = tok_regex_new("\\w+|[^\\w\\s]+", 12, false, e)))
			return -1;
	} else if (strcmp(t, "BertPreTokenizer") == 0) {
		struct pretok_step ws = {.kind = PRE_CHARCLASS, .cls = CLASS_SPACE, .behavior = SPLIT_REMOVED};
		if (pretok_push(p, &ws, e) < 0)
			return -1;
		st.kind = PRE_CHARCLASS;
		st.cls = CLASS_BERT_PUNCT;
		st.behavior = SPLIT_ISOLATED;
	} else {
		return err_set(e, "pre_tokenizer type \"%.40s\" is not supported", t);
	}
	return pretok_push(p, &st, e);
}

int tok_pretok_load(json_t *j, struct tok_pretok **out, struct err *e)
{
	*out = NULL;
	if (!j || json_is_null(j))
		return 0;
	struct tok_pretok *p = calloc(1, sizeof *p);
	if (!p)
		return err_set(e, "out of memory");
	if (pretok_add(p, j, 0, e) < 0) {
		tok_pretok_free(p);
		return -1;
	}
	*out = p;
	return 0;
}

void tok_pretok_free(struct tok_pretok *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->n; i++) {
		tok_regex_free(p->steps[i].re);
		free(p->steps[i].replacement);
	}
	free(p->steps);
	free(p);
}

/* ---------------------------------------------------------------- splitting */

static bool pretok_in_class(enum char_class cls, uint32_t cp)
{
	utf8proc_category_t c = utf8proc_category((utf8proc_int32_t)cp);
	switch (cls) {
	case CLASS_DIGIT: /* Rust's char::is_numeric: Nd, Nl, No */
		return c == UTF8PROC_CATEGORY_ND || c == UTF8PROC_CATEGORY_NL || c == UTF8PROC_CATEGORY_NO;
	case CLASS_SPACE:
		return utf8_is_white_space(cp);
	case CLASS_PUNCT:
	case CLASS_BERT_PUNCT: /* ASCII punctuation or a P* category */
		return utf8_is_bert_punct(cp);
	}
	return false;
}

/* Matches of a character class: each character is one match (Rust's split on a char predicate). */
static int pretok_class_spans(enum char_class cls, const char *s, size_t len, struct tok_span **out, int *n)
{
	*n = 0;
	*out = malloc((len + 1) * sizeof **out);
	if (!*out)
		return -1;
	size_t prev = 0;
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		int w = utf8_decode(s + i, &cp);
		if (pretok_in_class(cls, cp)) {
			if (prev < i)
				(*out)[(*n)++] = (struct tok_span){prev, i, false};
			(*out)[(*n)++] = (struct tok_span){i, i + (size_t)w, true};
			prev = i + (size_t)w;
		}
		i += (size_t)w;
	}
	if (prev < len || len == 0)
		(*out)[(*n)++] = (struct tok_span){prev, len, false};
	return 0;
}

/* Apply BEHAVIOR to the spans SP (which cover S) and add the pieces to OUT; FIRST is the word's flag. */
static int pretok_emit(const char *s, struct tok_span *sp, int n, enum split_behavior behavior, bool invert,
		       bool first, struct tok_words *out)
{
	if (invert)
		for (int i = 0; i < n; i++)
			sp[i].match = !sp[i].match;
	/* merge in place into pieces [start, end) with a removed flag */
	int m = 0;
	bool prev_match = false;
	if (behavior == SPLIT_NEXT) {
		/* folded from the end: a match joins the piece after it */
		for (int i = n - 1; i >= 0; i--) {
			struct tok_span c = sp[i];
			if (c.match && !prev_match && m > 0)
				sp[n - m].start = c.start; /* pieces are kept at the tail, last piece first */
			else
				sp[n - 1 - m++] = (struct tok_span){c.start, c.end, false};
			prev_match = c.match;
		}
		/* the pieces are sp[n-m .. n-1] in text order */
		for (int i = n - m; i < n; i++)
			if (tok_words_add(out, s + sp[i].start, sp[i].end - sp[i].start, first && sp[i].start == 0) < 0)
				return -1;
		return 0;
	}
	for (int i = 0; i < n; i++) {
		struct tok_span c = sp[i];
		bool removed = false;
		switch (behavior) {
		case SPLIT_REMOVED:
			removed = c.match;
			break;
		case SPLIT_ISOLATED:
			break;
		case SPLIT_CONTIGUOUS:
			if (c.match == prev_match && m > 0) {
				sp[m - 1].end = c.end;
				prev_match = c.match;
				continue;
			}
			break;
		case SPLIT_PREVIOUS:
			if (c.match && !prev_match && m > 0) {
				sp[m - 1].end = c.end;
				prev_match = c.match;
				continue;
			}
			break;
		case SPLIT_NEXT:
			break;
		}
		prev_match = c.match;
		sp[m++] = (struct tok_span){c.start, c.end, removed};
	}
	for (int i = 0; i < m; i++)
		if (!sp[i].match && tok_words_add(out, s + sp[i].start, sp[i].end - sp[i].start, first && sp[i].start == 0) < 0)
			return -1;
	return 0;
}

/* ByteLevel: the UTF-8 bytes of S as characters of the byte alphabet. */
static int pretok_bytes(const char *s, size_t len, bool first, struct tok_words *out)
{
	struct tok_buf b = {0};
	int rc = 0;
	for (size_t i = 0; i < len && rc == 0; i++) {
		char u[4];
		rc = tok_buf_add(&b, u, (size_t)utf8_encode(tok_byte_char((unsigned char)s[i]), u));
	}
	if (rc == 0 && b.n)
		rc = tok_words_add(out, b.s, b.n, first);
	tok_buf_free(&b);
	return rc;
}

static int pretok_step_word(const struct pretok_step *st, const char *s, size_t len, bool first, struct tok_words *out,
			    struct err *e)
{
	struct tok_span *sp = NULL;
	int n = 0, rc = 0;
	struct tok_buf tmp = {0};
	switch (st->kind) {
	case PRE_SPLIT:
		if (tok_regex_spans(st->re, s, len, &sp, &n, e) < 0)
			return -1;
		rc = pretok_emit(s, sp, n, st->behavior, st->invert, first, out);
		break;
	case PRE_CHARCLASS:
		rc = pretok_class_spans(st->cls, s, len, &sp, &n) ||
		     pretok_emit(s, sp, n, st->behavior, false, first, out);
		break;
	case PRE_BYTELEVEL: {
		if (st->prefix_space && s[0] != ' ') {
			rc = tok_buf_add(&tmp, " ", 1) || tok_buf_add(&tmp, s, len);
			s = tmp.s, len = tmp.n;
		}
		if (rc == 0 && !st->re) {
			rc = pretok_bytes(s, len, first, out);
			break;
		}
		if (rc == 0 && tok_regex_spans(st->re, s, len, &sp, &n, e) < 0) {
			tok_buf_free(&tmp);
			return -1;
		}
		for (int i = 0; i < n && rc == 0; i++)
			rc = pretok_bytes(s + sp[i].start, sp[i].end - sp[i].start, first && sp[i].start == 0, out);
		break;
	}
	case PRE_METASPACE: {
		size_t rl = strlen(st->replacement);
		bool starts = len >= rl && memcmp(s, st->replacement, rl) == 0;
		if (st->prepend == 2 || (st->prepend == 1 && first)) {
			/* after the replacement below, a leading space would also start with it */
			if (!starts && s[0] != ' ')
				rc = tok_buf_add(&tmp, st->replacement, rl);
		}
		for (size_t i = 0; i < len && rc == 0; i++)
			rc = s[i] == ' ' ? tok_buf_add(&tmp, st->replacement, rl) : tok_buf_add(&tmp, s + i, 1);
		if (rc)
			break;
		if (!st->split) {
			rc = tok_words_add(out, tmp.s, tmp.n, first);
			break;
		}
		/* split before each replacement (MergedWithNext) */
		size_t start = 0;
		for (size_t i = rl; i + rl <= tmp.n && rc == 0; i++) {
			if (memcmp(tmp.s + i, st->replacement, rl) == 0) {
				rc = tok_words_add(out, tmp.s + start, i - start, first && start == 0);
				start = i;
				i += rl - 1;
			}
		}
		if (rc == 0)
			rc = tok_words_add(out, tmp.s + start, tmp.n - start, first && start == 0);
		break;
	}
	}
	free(sp);
	tok_buf_free(&tmp);
	return rc ? err_set(e, "out of memory") : 0;
}

int tok_pretok_run(const struct tok_pretok *p, struct tok_words *in, struct err *e)
{
	if (!p)
		return 0;
	for (int k = 0; k < p->n; k++) {
		struct tok_words out = {0};
		for (int i = 0; i < in->n; i++) {
			const struct tok_word *w = &in->w[i];
			if (pretok_step_word(&p->steps[k], in->text.s + w->off, w->len, w->first, &out, e) < 0) {
				tok_words_free(&out);
				return -1;
			}
		}
		tok_words_free(in);
		*in = out;
	}
	return 0;
}
