/* tok-bpe.c -- GPT-2's tokenizer: regex pre-tokenization, then byte-level BPE by merge rank.
 *
 * As HF's slow GPT2Tokenizer: the text is cut by GPT-2's pattern (contractions, letters,
 * digits, other symbols, whitespace runs), each piece's UTF-8 bytes become printable symbols
 * (bytes_to_unicode: 'Ġ' for a space), and then, repeatedly, every occurrence of the adjacent
 * pair with the lowest merge rank is merged, left to right, until no pair has a rank. This is
 * true BPE, not a longest-match over the vocabulary. */
#include "tokenizer/tok-internal.h"
#include "base/utf8.h"

#include <stdio.h>
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
	/* GPT-2 files intern every symbol; tokenizer.json merges vocabulary ids and has no table */
	if (tok->syms.slots && tok_vocab_reserve(&tok->syms, n + 256) < 0)
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

/* Why bpe_add_merge failed: the symbol table is full (each rule may add three), or memory. */
static int bpe_merge_error(const struct tokenizer *tok, const char *path, struct err *e)
{
	if (tok->syms.n_ids + 3 > TOK_MAX_IDS)
		return err_set(e, "%s: more than %d distinct symbols in the merges", path, TOK_MAX_IDS);
	return err_set(e, "%s: out of memory", path);
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
	/* HF: read().split("\n")[1:-1] -- the first line is the "#version" header, and what
	 * follows the last newline is dropped (nothing, in a well-formed file). */
	if (tok_read_text(merges_path, &buf, &len, e) < 0)
		return -1;
	size_t n_lines = 1;
	for (size_t i = 0; i < len; i++)
		n_lines += buf[i] == '\n';
	/* Each rule makes a token, so real files have fewer rules than the vocabulary has tokens;
	 * refusing far more keeps a hostile file from costing gigabytes of merge tables. */
	if (n_lines - 1 > 2 * (size_t)tok->vocab.n_ids + 1024) {
		free(buf);
		return err_set(e, "%s: %zu lines of merges for a vocabulary of %d tokens", merges_path, n_lines - 1,
			       tok->vocab.n_ids);
	}
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
			rc = bpe_merge_error(tok, merges_path, e);
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
	if (json_array_size(merges) > 2 * (size_t)tok->vocab.n_ids + 1024) /* as for merges.txt */
		return err_set(e, "%s: model.merges has %zu rules for a vocabulary of %d tokens", path,
			       json_array_size(merges), tok->vocab.n_ids);
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
			return bpe_merge_error(tok, path, e);
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

/* BPE of one piece, as HF's loop: take the lowest-ranked adjacent pair, merge every occurrence
 * of it left to right, repeat. Done with a heap of candidate pairs so a long piece costs
 * O(n log n), not HF's O(n^2): all candidates of the lowest rank are taken off the heap as one
 * batch (a rank is one pair) and merged in position order before any pair the merges create
 * is looked at, which is exactly one pass of HF's loop. */
struct bpe_cand {
	int32_t rank;
	int32_t pos;         /* node of the left symbol */
	int32_t left, right; /* the pair's symbols when pushed: stale once either node changed */
};

struct bpe_work {
	size_t cap;               /* room for pieces of this many bytes */
	int32_t *sym;             /* [cap] symbol of each node (a node starts as one byte), -1 once merged away */
	int32_t *prev, *next;     /* [cap] the nodes still alive, as a linked list; -1 at the ends */
	struct bpe_cand *heap;    /* [3*cap] min-heap on (rank, pos) */
	struct bpe_cand *batch;   /* [3*cap] the candidates of the current rank */
	size_t heap_n;
};

static int32_t bpe_rank(const struct tokenizer *tok, int32_t a, int32_t b)
{
	const struct tok_merge_slot *s = bpe_merge_slot(tok, a, b);
	return s->left < 0 ? INT32_MAX : s->rank;
}

static bool bpe_cand_less(const struct bpe_cand *a, const struct bpe_cand *b)
{
	return a->rank < b->rank || (a->rank == b->rank && a->pos < b->pos);
}

/* Push the pair starting at node I, if it has a rule. */
static void bpe_push(const struct tokenizer *tok, struct bpe_work *w, int32_t i)
{
	int32_t j = w->next[i];
	if (j < 0)
		return;
	int32_t r = bpe_rank(tok, w->sym[i], w->sym[j]);
	if (r == INT32_MAX)
		return;
	size_t k = w->heap_n++;
	struct bpe_cand c = {r, i, w->sym[i], w->sym[j]};
	while (k > 0 && bpe_cand_less(&c, &w->heap[(k - 1) / 2])) {
		w->heap[k] = w->heap[(k - 1) / 2];
		k = (k - 1) / 2;
	}
	w->heap[k] = c;
}

static struct bpe_cand bpe_pop(struct bpe_work *w)
{
	struct bpe_cand top = w->heap[0], last = w->heap[--w->heap_n];
	size_t k = 0, n = w->heap_n;
	for (;;) {
		size_t c = 2 * k + 1;
		if (c >= n)
			break;
		if (c + 1 < n && bpe_cand_less(&w->heap[c + 1], &w->heap[c]))
			c++;
		if (!bpe_cand_less(&w->heap[c], &last))
			break;
		w->heap[k] = w->heap[c];
		k = c;
	}
	if (n)
		w->heap[k] = last;
	return top;
}

static int bpe_reserve(struct bpe_work *w, size_t n)
{
	if (n <= w->cap)
		return 0;
	size_t cap = n < 64 ? 64 : n;
	if (cap > SIZE_MAX / (3 * sizeof(struct bpe_cand)) || cap > INT32_MAX)
		return -1;
	free(w->sym);
	free(w->prev);
	free(w->next);
	free(w->heap);
	free(w->batch);
	w->sym = malloc(cap * sizeof *w->sym);
	w->prev = malloc(cap * sizeof *w->prev);
	w->next = malloc(cap * sizeof *w->next);
	w->heap = malloc(3 * cap * sizeof *w->heap);
	w->batch = malloc(3 * cap * sizeof *w->batch);
	w->cap = w->sym && w->prev && w->next && w->heap && w->batch ? cap : 0;
	return w->cap ? 0 : -1;
}

static void bpe_work_free(struct bpe_work *w)
{
	free(w->sym);
	free(w->prev);
	free(w->next);
	free(w->heap);
	free(w->batch);
}

/* Merge the N symbols in W->sym by rank until no adjacent pair has a rule. */
static void bpe_merge_all(const struct tokenizer *tok, struct bpe_work *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		w->prev[i] = (int32_t)i - 1;
		w->next[i] = i + 1 < n ? (int32_t)i + 1 : -1;
	}
	w->heap_n = 0;
	for (size_t i = 0; i + 1 < n; i++)
		bpe_push(tok, w, (int32_t)i);
	while (w->heap_n) {
		int32_t rank = w->heap[0].rank;
		size_t nb = 0;
		while (w->heap_n && w->heap[0].rank == rank)
			w->batch[nb++] = bpe_pop(w); /* in position order */
		for (size_t k = 0; k < nb; k++) {
			const struct bpe_cand *c = &w->batch[k];
			int32_t i = c->pos, j = w->next[i];
			if (w->sym[i] != c->left || j < 0 || w->sym[j] != c->right)
				continue; /* taken apart by an earlier merge */
			w->sym[i] = bpe_merge_slot(tok, c->left, c->right)->result;
			w->sym[j] = -1;
			w->next[i] = w->next[j];
			if (w->next[j] >= 0)
				w->prev[w->next[j]] = i;
			if (w->prev[i] >= 0)
				bpe_push(tok, w, w->prev[i]);
			bpe_push(tok, w, i);
		}
	}
}

/* BPE of one pre-tokenized piece (its raw bytes); pushes the ids of its symbols. */
static int bpe_word(const struct tokenizer *tok, const unsigned char *p, size_t n, struct bpe_work *w,
		    struct tok_ids *out)
{
	if (bpe_reserve(w, n) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		w->sym[i] = tok->byte_sym[p[i]];
	bpe_merge_all(tok, w, n);
	for (int32_t i = 0; i >= 0; i = w->next[i]) {
		/* HF's convert_tokens_to_ids: an added token of that text first, then the vocabulary */
		const char *s = tok->syms.id_str[w->sym[i]];
		int32_t id = tok_token_id(tok, s, tok->syms.id_len[w->sym[i]]);
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
	bpe_work_free(&w);
	pcre2_match_data_free(md);
	return rc;
}

/* ---------------------------------------------------------------- tokenizer.json's BPE model
 *
 * As tokenizers' models/bpe: symbols are vocabulary ids. A word starts as its characters (with
 * continuing_subword_prefix before all but the first and end_of_word_suffix after the last);
 * a character the vocabulary lacks becomes its <0xXX> byte tokens with byte_fallback, else
 * the unknown token (runs of them fused into one with fuse_unk), else nothing. Then pairs are
 * merged by rank (same loop as above), except that with ignore_merges a word that is itself
 * in the vocabulary is taken whole. */

/* One merge rule "A B" of tokenizer.json: all three of A, B and their merge must be tokens. */
static int bpe_json_merge(struct tokenizer *tok, const char *a, size_t al, const char *b, size_t bl, int32_t rank,
			  size_t prefix_len, struct err *e)
{
	int32_t ia = tok_vocab_get(&tok->vocab, a, al), ib = tok_vocab_get(&tok->vocab, b, bl);
	if (ia < 0 || ib < 0)
		return err_set(e, "model.merges[%d]: \"%.*s\" is not in the vocabulary", rank, ia < 0 ? (int)(al > 40 ? 40 : al) : (int)(bl > 40 ? 40 : bl),
			       ia < 0 ? a : b);
	if (bl < prefix_len)
		return err_set(e, "model.merges[%d]: the right part is shorter than continuing_subword_prefix", rank);
	char small[256], *ab = al + bl <= sizeof small ? small : malloc(al + bl); /* 515k rules: no malloc each */
	if (!ab)
		return err_set(e, "out of memory");
	memcpy(ab, a, al);
	memcpy(ab + al, b + prefix_len, bl - prefix_len);
	int32_t iab = tok_vocab_get(&tok->vocab, ab, al + bl - prefix_len);
	if (ab != small)
		free(ab);
	if (iab < 0)
		return err_set(e, "model.merges[%d]: the merge of \"%.*s\" and \"%.*s\" is not in the vocabulary", rank,
			       (int)(al > 20 ? 20 : al), a, (int)(bl > 20 ? 20 : bl), b);
	struct tok_merge_slot *s = bpe_merge_slot(tok, ia, ib);
	if (s->left < 0)
		tok->n_merges++;
	*s = (struct tok_merge_slot){ia, ib, rank, iab}; /* a repeated rule keeps its last rank */
	return 0;
}

static int bpe_json_opt_string(json_t *model, const char *key, char **out, struct err *e)
{
	json_t *v = json_object_get(model, key);
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return err_set(e, "model.%s is not a string", key);
	if (!json_string_value(v)[0])
		return 0; /* "" is the same as none */
	return (*out = strdup(json_string_value(v))) ? 0 : err_set(e, "out of memory");
}

int bpe_json_load(struct tokenizer *tok, json_t *model, struct err *e)
{
	struct tok_json *j = tok->json;
	json_t *dropout = json_object_get(model, "dropout");
	if (dropout && !json_is_null(dropout) && !(json_is_number(dropout) && json_number_value(dropout) == 0.0))
		return err_set(e, "model.dropout is not supported (BPE dropout is random; it must be null)");
	j->byte_fallback = json_is_true(json_object_get(model, "byte_fallback"));
	j->fuse_unk = json_is_true(json_object_get(model, "fuse_unk"));
	j->ignore_merges = json_is_true(json_object_get(model, "ignore_merges"));
	if (bpe_json_opt_string(model, "continuing_subword_prefix", &j->subword_prefix, e) < 0 ||
	    bpe_json_opt_string(model, "end_of_word_suffix", &j->word_suffix, e) < 0)
		return -1;
	if (!j->vocab_read && tok_vocab_from_json(&tok->vocab, json_object_get(model, "vocab"), e) < 0)
		return err_prefix(e, "model.vocab");
	json_t *merges = json_object_get(model, "merges");
	if (!merges || json_is_null(merges) || j->merges)
		merges = NULL;
	else if (!json_is_array(merges))
		return err_set(e, "model.merges is not a list");
	size_t nm = j->merges ? j->merges->n : merges ? json_array_size(merges) : 0;
	/* ignore_merges files keep merges whose results were dropped (Llama 3: 280k for 128k tokens) */
	if (nm > 4 * (size_t)tok->vocab.n_ids + 4096)
		return err_set(e, "model.merges has %zu rules for a vocabulary of %d tokens", nm, tok->vocab.n_ids);
	if (bpe_alloc_merges(tok, nm, e) < 0)
		return -1;
	size_t prefix_len = j->subword_prefix ? strlen(j->subword_prefix) : 0;
	for (size_t i = 0; i < nm; i++) {
		json_t *m = merges ? json_array_get(merges, i) : NULL;
		const char *a = NULL, *b = NULL;
		size_t al = 0, bl = 0;
		if (j->merges) {
			const uint32_t *o = &j->merges->off[4 * i];
			a = j->merges->text + o[0], al = o[1];
			b = j->merges->text + o[2], bl = o[3];
		} else if (json_is_string(m)) {
			/* "left right": exactly one space */
			const char *s = json_string_value(m), *sp = strchr(s, ' ');
			if (sp && !strchr(sp + 1, ' ')) {
				a = s, al = (size_t)(sp - s);
				b = sp + 1, bl = strlen(b);
			}
		} else if (json_is_array(m) && json_array_size(m) == 2 && json_is_string(json_array_get(m, 0)) &&
			   json_is_string(json_array_get(m, 1))) {
			a = json_string_value(json_array_get(m, 0)), al = json_string_length(json_array_get(m, 0));
			b = json_string_value(json_array_get(m, 1)), bl = json_string_length(json_array_get(m, 1));
		}
		if (!a)
			return err_set(e, "model.merges[%zu] is not \"left right\" or [\"left\", \"right\"]", i);
		if (bpe_json_merge(tok, a, al, b, bl, (int32_t)i, prefix_len, e) < 0)
			return -1;
	}
	tok_jsonfast_free(j->merges); /* no longer needed */
	j->merges = NULL;
	return 0;
}

/* The <0xXX> tokens of the bytes S[0..LEN); false when one is missing. */
static bool bpe_json_bytes(const struct tokenizer *tok, const char *s, size_t len, int32_t *ids)
{
	for (size_t i = 0; i < len; i++) {
		char name[8];
		snprintf(name, sizeof name, "<0x%02X>", (unsigned char)s[i]);
		if ((ids[i] = tok_vocab_get(&tok->vocab, name, 6)) < 0)
			return false;
	}
	return true;
}

int bpe_json_word(const struct tokenizer *tok, const char *w, size_t len, struct tok_ids *out, struct err *e)
{
	const struct tok_json *j = tok->json;
	if (len == 0)
		return 0;
	if (j->ignore_merges) {
		int32_t id = tok_vocab_get(&tok->vocab, w, len);
		if (id >= 0)
			return tok_ids_push(out, id, false) < 0 ? err_set(e, "out of memory") : 0;
	}
	struct bpe_work wk = {0};
	size_t pl = j->subword_prefix ? strlen(j->subword_prefix) : 0, sl = j->word_suffix ? strlen(j->word_suffix) : 0;
	char *scratch = malloc(pl + sl + 8);
	int32_t *bytes = malloc((pl + sl + 8) * sizeof *bytes);
	/* each character gives at most its bytes plus prefix and suffix as symbols */
	if (!scratch || !bytes || len > SIZE_MAX / (pl + sl + 1) || bpe_reserve(&wk, len * (pl + sl + 1)) < 0) {
		free(scratch);
		free(bytes);
		bpe_work_free(&wk);
		return err_set(e, "out of memory");
	}
	size_t n = 0;
	bool unk_pending = false; /* an unknown-token symbol not yet added (fuse_unk grows it) */
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t cl = (size_t)utf8_decode(w + i, &cp), sn = 0;
		if (i > 0 && pl) {
			memcpy(scratch, j->subword_prefix, pl);
			sn = pl;
		}
		memcpy(scratch + sn, w + i, cl);
		sn += cl;
		if (i + cl == len && sl) {
			memcpy(scratch + sn, j->word_suffix, sl);
			sn += sl;
		}
		i += cl;
		int32_t id = tok_vocab_get(&tok->vocab, scratch, sn);
		if (id >= 0) {
			if (unk_pending)
				wk.sym[n++] = tok->unk_id;
			unk_pending = false;
			wk.sym[n++] = id;
		} else if (j->byte_fallback && bpe_json_bytes(tok, scratch, sn, bytes)) {
			/* as tokenizers: byte tokens go in without flushing a pending unknown token */
			for (size_t k = 0; k < sn; k++)
				wk.sym[n++] = bytes[k];
		} else if (j->has_unk) {
			if (unk_pending && !j->fuse_unk)
				wk.sym[n++] = tok->unk_id;
			unk_pending = true;
		}
		/* without an unknown token the character is dropped, as tokenizers does */
	}
	if (unk_pending)
		wk.sym[n++] = tok->unk_id;
	int rc = 0;
	if (n) {
		bpe_merge_all(tok, &wk, n);
		for (int32_t i = 0; i >= 0 && rc == 0; i = wk.next[i])
			rc = tok_ids_push(out, wk.sym[i], false);
	}
	free(scratch);
	free(bytes);
	bpe_work_free(&wk);
	return rc < 0 ? err_set(e, "out of memory") : 0;
}
