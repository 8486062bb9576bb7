/* tok-bpe.c -- GPT-2's tokenizer: regex pre-tokenization, then byte-level BPE by merge rank.
 *
 * As HF's slow GPT2Tokenizer: the text is cut by GPT-2's pattern (contractions, letters,
 * digits, other symbols, whitespace runs), each piece's UTF-8 bytes become printable symbols
 * (bytes_to_unicode: 'Ġ' for a space), and then, repeatedly, every occurrence of the adjacent
 * pair with the lowest merge rank is merged, left to right, until no pair has a rank. This is
 * true BPE, not a longest-match over the vocabulary. */
#include "tok-internal.h"
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

/* One merge rule: (left, right) symbols -> rank and the merged symbol. */
struct tok_merge_slot {
	int32_t left, right; /* symbol ids; left < 0 marks an empty slot */
	int32_t rank;        /* line of the rule: lower merges first */
	int32_t result;      /* symbol id of left+right */
};

/* Python's `regex` \s is Unicode White_Space; PCRE2's \s would add U+180E, so spell it out. */
#define BPE_WS "\\t\\n\\x0B\\f\\r \\x85\\xA0\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}"
static const char bpe_pattern[] =
	"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^" BPE_WS "\\p{L}\\p{N}]+|[" BPE_WS "]+(?![^" BPE_WS "])|[" BPE_WS "]+";

/* ---------------------------------------------------------------- merge table */

static uint32_t bpe_pair_hash(int32_t a, int32_t b)
{
	uint64_t k = ((uint64_t)(uint32_t)a << 32) | (uint32_t)b;
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (uint32_t)k;
}

static struct tok_merge_slot *bpe_merge_slot(const struct tokenizer *tok, int32_t a, int32_t b)
{
	for (uint32_t i = bpe_pair_hash(a, b) & tok->merge_mask;; i = (i + 1) & tok->merge_mask) {
		struct tok_merge_slot *s = &tok->merges[i];
		if (s->left < 0 || (s->left == a && s->right == b))
			return s;
	}
}

static int bpe_alloc_merges(struct tokenizer *tok, size_t n, struct err *e)
{
	if (n > TOK_MAX_IDS)
		return err_set(e, "too many merges (%zu)", n);
	uint32_t cap = 1024;
	while (cap < 2 * n + 2)
		cap *= 2;
	if (tok_vocab_reserve(&tok->syms, n + 256) < 0)
		return err_set(e, "out of memory");
	tok->merges = malloc(cap * sizeof *tok->merges);
	if (!tok->merges)
		return err_set(e, "out of memory");
	for (uint32_t i = 0; i < cap; i++)
		tok->merges[i].left = -1;
	tok->merge_mask = cap - 1;
	return 0;
}

/* The 256 byte symbols of bytes_to_unicode(): printable Latin-1 bytes stand for themselves,
 * the others (controls, space, ...) for U+0100 onwards in byte order. */
static int bpe_init_symbols(struct tokenizer *tok, struct err *e)
{
	if (tok_vocab_init(&tok->syms) < 0)
		return err_set(e, "out of memory");
	uint32_t next = 256;
	for (int b = 0; b < 256; b++) {
		bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
		char u[4];
		int n = utf8_encode(printable ? (uint32_t)b : next++, u);
		if ((tok->byte_sym[b] = tok_vocab_intern(&tok->syms, u, (size_t)n)) < 0)
			return err_set(e, "out of memory");
	}
	return 0;
}

/* Rule RANK: A B. A rule seen twice keeps its last rank, as dict(zip(merges, range(n))) does. */
static int bpe_add_merge(struct tokenizer *tok, const char *a, size_t al, const char *b, size_t bl, int32_t rank)
{
	char *ab = malloc(al + bl + 1);
	if (!ab)
		return -1;
	memcpy(ab, a, al);
	memcpy(ab + al, b, bl);
	int32_t sa = tok_vocab_intern(&tok->syms, a, al), sb = tok_vocab_intern(&tok->syms, b, bl);
	int32_t sab = tok_vocab_intern(&tok->syms, ab, al + bl);
	free(ab);
	if (sa < 0 || sb < 0 || sab < 0)
		return -1;
	struct tok_merge_slot *s = bpe_merge_slot(tok, sa, sb);
	if (s->left < 0)
		tok->n_merges++;
	*s = (struct tok_merge_slot){sa, sb, rank, sab};
	return 0;
}

static int bpe_compile(struct tokenizer *tok, struct err *e)
{
	int code;
	PCRE2_SIZE off;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)bpe_pattern, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP, &code,
				       &off, NULL);
	if (!re) {
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(code, msg, sizeof msg);
		return err_set(e, "pre-tokenizer pattern: %s at %zu", (char *)msg, (size_t)off);
	}
	tok->regex = re;
	return 0;
}

/* ---------------------------------------------------------------- loading */

int bpe_load_files(struct tokenizer *tok, const char *vocab_path, const char *merges_path, struct err *e)
{
	if (tok_vocab_load_json_file(&tok->vocab, vocab_path, e) < 0)
		return -1;
	int rc;
	char *buf;
	size_t len;
	if (tok_read_file(merges_path, &buf, &len, e) < 0)
		return -1;
	size_t bad = utf8_check(buf, len);
	if (bad < len) {
		free(buf);
		return err_set(e, "%s: invalid UTF-8 at byte %zu", merges_path, bad);
	}
	/* HF: read().split("\n")[1:-1] -- the first line is the "#version" header, and what
	 * follows the last newline is dropped (nothing, in a well-formed file). */
	len = tok_universal_newlines(buf, len);
	size_t n_lines = 1;
	for (size_t i = 0; i < len; i++)
		n_lines += buf[i] == '\n';
	if (bpe_init_symbols(tok, e) < 0 || bpe_alloc_merges(tok, n_lines, e) < 0) {
		free(buf);
		return err_prefix(e, "%s", merges_path);
	}
	rc = 0;
	const char *nl = memchr(buf, '\n', len);
	int32_t rank = 0;
	for (size_t start = nl ? (size_t)(nl - buf) + 1 : len; start < len; rank++) {
		nl = memchr(buf + start, '\n', len - start);
		if (!nl)
			break; /* the text after the last newline is not a rule */
		size_t end = (size_t)(nl - buf);
		/* Python's str.split(): fields between runs of whitespace; only a 2-field line is a rule */
		size_t fs[3], fe[3];
		int nf = 0;
		for (size_t i = start; i < end && nf < 3;) {
			uint32_t cp;
			int k = utf8_decode(buf + i, &cp);
			if (utf8_is_py_space(cp)) {
				i += (size_t)k;
				continue;
			}
			fs[nf] = i;
			while (i < end) {
				k = utf8_decode(buf + i, &cp);
				if (utf8_is_py_space(cp))
					break;
				i += (size_t)k;
			}
			fe[nf++] = i;
		}
		if (nf == 2 && bpe_add_merge(tok, buf + fs[0], fe[0] - fs[0], buf + fs[1], fe[1] - fs[1], rank) < 0) {
			rc = err_set(e, "%s: out of memory", merges_path);
			break;
		}
		start = end + 1;
	}
	free(buf);
	if (rc == 0 && bpe_compile(tok, e) < 0)
		return -1;
	return rc;
}

int bpe_load_json(struct tokenizer *tok, json_t *root, const char *path, struct err *e)
{
	json_t *model = json_object_get(root, "model");
	json_t *type = json_object_get(model, "type");
	if (!json_is_object(model) || !json_is_string(type))
		return err_set(e, "%s: no \"model\" with a \"type\"", path);
	if (strcmp(json_string_value(type), "BPE") != 0)
		return err_set(e, "%s: the model is %.40s, not BPE", path, json_string_value(type));
	static const char *const unsupported[] = {"continuing_subword_prefix", "end_of_word_suffix"};
	for (int i = 0; i < 2; i++) {
		json_t *v = json_object_get(model, unsupported[i]);
		if (json_is_string(v) && json_string_value(v)[0])
			return err_set(e, "%s: model.%s is not supported (only GPT-2 style byte-level BPE)", path,
				       unsupported[i]);
	}
	if (tok_vocab_from_json(&tok->vocab, json_object_get(model, "vocab"), e) < 0)
		return err_prefix(e, "%s: model.vocab", path);
	json_t *merges = json_object_get(model, "merges");
	if (!json_is_array(merges))
		return err_set(e, "%s: model.merges is not a list", path);
	if (bpe_init_symbols(tok, e) < 0 || bpe_alloc_merges(tok, json_array_size(merges), e) < 0)
		return err_prefix(e, "%s", path);
	size_t i;
	json_t *m;
	json_array_foreach(merges, i, m) {
		/* "left right" (one space) or, in newer files, ["left", "right"] */
		const char *a = NULL, *b = NULL;
		size_t al = 0, bl = 0;
		if (json_is_string(m)) {
			const char *s = json_string_value(m), *sp = strchr(s, ' ');
			if (sp && !strchr(sp + 1, ' ')) {
				a = s, al = (size_t)(sp - s);
				b = sp + 1, bl = strlen(b);
			}
		} else if (json_is_array(m) && json_array_size(m) == 2 && json_is_string(json_array_get(m, 0)) &&
			   json_is_string(json_array_get(m, 1))) {
			a = json_string_value(json_array_get(m, 0)), al = strlen(a);
			b = json_string_value(json_array_get(m, 1)), bl = strlen(b);
		}
		if (!a)
			return err_set(e, "%s: model.merges[%zu] is not \"left right\" or [\"left\", \"right\"]", path, i);
		if (bpe_add_merge(tok, a, al, b, bl, (int32_t)i) < 0)
			return err_set(e, "%s: out of memory", path);
	}
	return bpe_compile(tok, e);
}

void bpe_free(struct tokenizer *tok)
{
	pcre2_code_free(tok->regex);
	tok->regex = NULL;
	free(tok->merges);
	tok->merges = NULL;
	if (tok->syms.slots)
		tok_vocab_free(&tok->syms);
}

/* ---------------------------------------------------------------- encoding */

struct bpe_work {
	int32_t *sym;  /* [cap] symbols of the word being merged */
	int32_t *rank; /* [cap] rank of the pair (sym[i], sym[i+1]), INT32_MAX when no rule */
	int32_t *src;  /* [cap] where sym[i] came from before the last pass, -1 when just merged */
	size_t cap;
};

static int32_t bpe_rank(const struct tokenizer *tok, int32_t a, int32_t b)
{
	const struct tok_merge_slot *s = bpe_merge_slot(tok, a, b);
	return s->left < 0 ? INT32_MAX : s->rank;
}

/* BPE of one pre-tokenized piece (its raw bytes). */
static int bpe_word(const struct tokenizer *tok, const unsigned char *p, size_t n, struct bpe_work *w,
		    struct tok_ids *out)
{
	if (n > w->cap) {
		size_t cap = n < 64 ? 64 : n;
		free(w->sym);
		free(w->rank);
		free(w->src);
		w->sym = malloc(cap * sizeof *w->sym);
		w->rank = malloc(cap * sizeof *w->rank);
		w->src = malloc(cap * sizeof *w->src);
		w->cap = w->sym && w->rank && w->src ? cap : 0;
		if (!w->cap)
			return -1;
	}
	int32_t *sym = w->sym, *rank = w->rank, *src = w->src;
	size_t m = n;
	for (size_t i = 0; i < m; i++)
		sym[i] = tok->byte_sym[p[i]];
	for (size_t i = 0; i + 1 < m; i++)
		rank[i] = bpe_rank(tok, sym[i], sym[i + 1]);
	while (m > 1) {
		size_t best = 0;
		for (size_t i = 1; i + 1 < m; i++)
			if (rank[i] < rank[best])
				best = i;
		if (rank[best] == INT32_MAX)
			break;
		int32_t first = sym[best], second = sym[best + 1];
		int32_t merged = bpe_merge_slot(tok, first, second)->result;
		size_t j = 0;
		for (size_t i = 0; i < m; j++) {
			if (i + 1 < m && sym[i] == first && sym[i + 1] == second) {
				sym[j] = merged;
				src[j] = -1;
				i += 2;
			} else {
				sym[j] = sym[i];
				src[j] = (int32_t)i;
				i++;
			}
		}
		m = j;
		/* a pair of two untouched neighbours keeps its rank; only pairs next to a merge are new */
		for (size_t i = 0; i + 1 < m; i++)
			rank[i] = src[i] >= 0 && src[i + 1] >= 0 ? rank[src[i]] : bpe_rank(tok, sym[i], sym[i + 1]);
	}
	for (size_t i = 0; i < m; i++) {
		/* HF's convert_tokens_to_ids: an added token of that text first, then the vocabulary */
		const char *s = tok->syms.id_str[sym[i]];
		int32_t id = tok_token_id(tok, s, tok->syms.id_len[sym[i]]);
		if (tok_ids_push(out, id >= 0 ? id : tok->unk_id, false) < 0)
			return -1;
	}
	return 0;
}

int bpe_encode(const struct tokenizer *tok, const char *s, size_t len, struct tok_ids *out, struct err *e)
{
	pcre2_match_data *md = pcre2_match_data_create(1, NULL);
	if (!md)
		return err_set(e, "out of memory");
	struct bpe_work w = {0};
	int rc = 0;
	for (size_t pos = 0; pos < len;) {
		int r = pcre2_match(tok->regex, (PCRE2_SPTR)s, len, pos, PCRE2_NO_UTF_CHECK, md, NULL);
		if (r == PCRE2_ERROR_NOMATCH)
			break;
		if (r < 0) {
			PCRE2_UCHAR msg[256];
			pcre2_get_error_message(r, msg, sizeof msg);
			rc = err_set(e, "pre-tokenizer: %s", (char *)msg);
			break;
		}
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
		if (ov[1] <= ov[0] || ov[0] < pos) { /* cannot happen: every alternative takes a character */
			rc = err_set(e, "pre-tokenizer: empty match at byte %zu", (size_t)pos);
			break;
		}
		if (bpe_word(tok, (const unsigned char *)s + ov[0], ov[1] - ov[0], &w, out) < 0) {
			rc = err_set(e, "out of memory");
			break;
		}
		pos = ov[1];
	}
	free(w.sym);
	free(w.rank);
	free(w.src);
	pcre2_match_data_free(md);
	return rc;
}
