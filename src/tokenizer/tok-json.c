/* tok-json.c -- the tokenizer.json pipeline: loading its parts and running them on a text.
 *
 * As Hugging Face's tokenizers (TokenizerImpl::encode) with transformers' fast tokenizer on
 * top: added tokens that are not "normalized" are cut out of the raw text first; every stretch
 * between them is normalized, then the "normalized" added tokens are cut out of that; each
 * remaining stretch is pre-tokenized into words and each word goes through the model (BPE,
 * WordPiece or Unigram). The post-processor (tok-post.c) and truncation are tokenizer.c's.
 *
 * tokenizer_config.json adds what transformers adds: the entries of added_tokens_decoder the
 * tokenizer.json lacks, and the special tokens it names (bos_token ..., additional_special_tokens)
 * as special added tokens when the vocabulary has them. add_bos_token / add_eos_token: only
 * the LlamaTokenizerFast and GemmaTokenizerFast classes (tokenizer_class "LlamaTokenizer[Fast]",
 * "GemmaTokenizer[Fast]", "CodeLlamaTokenizer[Fast]") read them: their constructor calls
 * update_post_processor(), which replaces the file's post-processor by a template of
 * bos_token (when add_bos_token, default true) $A eos_token (when add_eos_token, default
 * false), the pair adding the same around $B with type id 1. PreTrainedTokenizerFast, Qwen2's
 * and the others keep tokenizer.json's post-processor and ignore the two flags. */
#include "base/jsoncap.h"
#include "base/file.h"
#include "tokenizer/tok-internal.h"
#include "base/utf8.h"

#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* ---------------------------------------------------------------- added tokens */

static bool json_is_added(const struct tokenizer *tok, const char *s, size_t len)
{
	return tok_vocab_get(&tok->added, s, len) >= 0;
}

/* Add (or, for a content seen before, keep) an added token; ID must name a token slot. */
static int json_added_add(struct tokenizer *tok, const char *s, size_t len, int32_t id, bool special, bool lstrip,
			  bool rstrip, bool single_word, bool normalized, struct err *e)
{
	struct tok_json *j = tok->json;
	if (len == 0)
		return err_set(e, "an added token is empty");
	if (json_is_added(tok, s, len))
		return 0;
	if (j->n_added >= 1 << 20)
		return err_set(e, "too many added tokens");
	if ((j->n_added & (j->n_added - 1)) == 0) { /* grow at powers of two */
		struct tok_added *na = realloc(j->added, (size_t)(j->n_added ? 2 * j->n_added : 1) * sizeof *na);
		if (!na)
			return err_set(e, "out of memory");
		j->added = na;
	}
	char *t = malloc(len + 1);
	if (!t)
		return err_set(e, "out of memory");
	memcpy(t, s, len);
	t[len] = '\0';
	j->added[j->n_added++] = (struct tok_added){t, len, id, special, lstrip, rstrip, single_word, normalized};
	if (tok_vocab_set(&tok->added, s, len, id) < 0)
		return err_set(e, "out of memory");
	return 0;
}

/* An AddedToken object of tokenizer.json's added_tokens or tokenizer_config.json's
 * added_tokens_decoder (whose id is the key). */
static int json_added_object(struct tokenizer *tok, json_t *a, json_int_t id, bool from_config, struct err *e)
{
	json_t *content = json_object_get(a, "content");
	if (!json_is_string(content))
		return err_set(e, "an added token has no \"content\"");
	const char *s = json_string_value(content);
	size_t len = json_string_length(content);
	if (id < 0 || id >= TOK_MAX_IDS || id > (json_int_t)tok->vocab.n_ids + (1 << 20))
		return err_set(e, "added token \"%.40s\" has an id out of range (%lld)", s, (long long)id);
	int32_t have = tok_vocab_get(&tok->vocab, s, len);
	if (from_config && json_is_added(tok, s, len))
		return 0; /* tokenizer.json's own definition wins */
	if (from_config && have < 0 && id < tok->vocab.n_ids && tok->vocab.id_str[id])
		return 0; /* transformers would give it a new id past the embedding: leave it out */
	bool special = json_is_true(json_object_get(a, "special"));
	json_t *norm = json_object_get(a, "normalized");
	return json_added_add(tok, s, len, (int32_t)id, special, json_is_true(json_object_get(a, "lstrip")),
			      json_is_true(json_object_get(a, "rstrip")),
			      json_is_true(json_object_get(a, "single_word")), norm ? json_is_true(norm) : !special, e);
}

static int json_lens_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x < y) - (x > y);
}

/* Index the added tokens whose "normalized" flag is NORMALIZED. */
static int json_matcher_build(struct tok_json *j, struct tok_added_matcher *m, bool normalized, struct err *e)
{
	if (tok_vocab_init(&m->index) < 0 || !(m->lens = malloc(((size_t)j->n_added + 1) * sizeof *m->lens)))
		return err_set(e, "out of memory");
	for (int i = 0; i < j->n_added; i++) {
		const struct tok_added *a = &j->added[i];
		if (a->normalized != normalized)
			continue;
		if (tok_vocab_get(&m->index, a->text, a->len) < 0 && tok_vocab_set(&m->index, a->text, a->len, i) < 0)
			return err_set(e, "out of memory");
		m->first[(unsigned char)a->text[0] >> 3] |= (uint8_t)(1u << ((unsigned char)a->text[0] & 7));
		int k;
		for (k = 0; k < m->n_lens && m->lens[k] != a->len; k++)
			;
		if (k == m->n_lens)
			m->lens[m->n_lens++] = (uint32_t)a->len;
	}
	qsort(m->lens, (size_t)m->n_lens, sizeof *m->lens, json_lens_cmp);
	return 0;
}

/* Rust regex's \w, which single_word tests on the characters around a token. */
static bool json_is_word_char(uint32_t cp)
{
	switch (utf8proc_category((utf8proc_int32_t)cp)) {
	case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT: case UTF8PROC_CATEGORY_LM:
	case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME:
	case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_PC:
		return true;
	default:
		return cp == 0x200C || cp == 0x200D;
	}
}

static bool json_word_at(const char *s, size_t i)
{
	uint32_t cp;
	utf8_decode(s + i, &cp);
	return json_is_word_char(cp);
}

/* The code point that ends at byte END of S (END > 0). */
static uint32_t json_cp_before(const char *s, size_t end, size_t *start)
{
	size_t k = end - 1;
	while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80)
		k--;
	uint32_t cp;
	utf8_decode(s + k, &cp);
	*start = k;
	return cp;
}

struct json_part {
	size_t start, end;
	int added; /* index into tok_json.added, or -1 for text */
};

struct json_parts {
	struct json_part *p;
	int n, cap;
};

static int json_parts_push(struct json_parts *l, size_t start, size_t end, int added)
{
	if (l->n == l->cap) {
		int cap = l->cap ? l->cap * 2 : 16;
		struct json_part *np = realloc(l->p, (size_t)cap * sizeof *np);
		if (!np)
			return -1;
		l->p = np;
		l->cap = cap;
	}
	l->p[l->n++] = (struct json_part){start, end, added};
	return 0;
}

/* AddedVocabulary::split_with_indices: the leftmost-longest matches of M in S, with
 * single_word, lstrip and rstrip applied; text between them as parts with added = -1. */
static int json_split_added(const struct tok_json *j, const struct tok_added_matcher *m, const char *s, size_t len,
			    struct json_parts *out)
{
	size_t done = 0; /* end of the previous token (after its rstrip) */
	for (size_t i = 0; i < len && m->n_lens;) {
		unsigned char c = (unsigned char)s[i];
		int hit = -1;
		size_t hl = 0;
		if (m->first[c >> 3] & (1u << (c & 7))) {
			for (int k = 0; k < m->n_lens && hit < 0; k++) {
				if (m->lens[k] <= len - i && (hit = tok_vocab_get(&m->index, s + i, m->lens[k])) >= 0)
					hl = m->lens[k];
			}
		}
		if (hit < 0) {
			i++;
			continue;
		}
		const struct tok_added *a = &j->added[hit];
		size_t start = i, stop = i + hl, b;
		i = stop; /* a match is consumed even when single_word rejects it */
		if (a->single_word && ((start > 0 && json_is_word_char(json_cp_before(s, start, &b))) ||
				       (stop < len && json_word_at(s, stop))))
			continue;
		if (a->lstrip) {
			while (start > done && utf8_is_white_space(json_cp_before(s, start, &b)))
				start = b;
		}
		if (a->rstrip) {
			uint32_t cp;
			while (stop < len) {
				int w = utf8_decode(s + stop, &cp);
				if (!utf8_is_white_space(cp))
					break;
				stop += (size_t)w;
			}
			i = stop;
		}
		if ((done < start && json_parts_push(out, done, start, -1) < 0) || json_parts_push(out, start, stop, hit) < 0)
			return -1;
		done = stop;
	}
	if (done < len && json_parts_push(out, done, len, -1) < 0)
		return -1;
	return 0;
}

/* ---------------------------------------------------------------- encoding */

static int json_model_word(const struct tokenizer *tok, const char *w, size_t len, struct tok_ids *out, struct err *e)
{
	switch (tok->json->model) {
	case TOK_MODEL_BPE:
		return bpe_json_word(tok, w, len, out, e);
	case TOK_MODEL_WORDPIECE:
		return wordpiece_word(tok, w, len, out) < 0 ? err_set(e, "out of memory") : 0;
	case TOK_MODEL_UNIGRAM:
		return unigram_word(tok, tok->json->unigram, w, len, out, e);
	}
	return err_set(e, "no model");
}

/* Normalized stretch S (FIRST: it starts the text): normalized added tokens, pre-tokenizer, model. */
static int json_encode_normalized(const struct tokenizer *tok, const char *s, size_t len, bool first,
				  struct tok_ids *out, struct err *e)
{
	const struct tok_json *j = tok->json;
	struct json_parts parts = {0};
	if (json_split_added(j, &j->normalized, s, len, &parts) < 0) {
		free(parts.p);
		return err_set(e, "out of memory");
	}
	int rc = 0;
	for (int p = 0; p < parts.n && rc == 0; p++) {
		const struct json_part *pt = &parts.p[p];
		if (pt->added >= 0) {
			rc = tok_ids_push(out, j->added[pt->added].id, j->added[pt->added].special) < 0 ? err_set(e, "out of memory") : 0;
			continue;
		}
		struct tok_words words = {0};
		if (tok_words_add(&words, s + pt->start, pt->end - pt->start, first && pt->start == 0) < 0)
			rc = err_set(e, "out of memory");
		if (rc == 0)
			rc = tok_pretok_run(j->pretok, &words, e);
		for (int i = 0; i < words.n && rc == 0; i++)
			rc = json_model_word(tok, words.text.s + words.w[i].off, words.w[i].len, out, e);
		tok_words_free(&words);
	}
	free(parts.p);
	return rc;
}

int tok_json_encode_one(const struct tokenizer *tok, const char *text, size_t len, struct tok_ids *out, struct err *e)
{
	const struct tok_json *j = tok->json;
	struct json_parts parts = {0};
	if (json_split_added(j, &j->raw, text, len, &parts) < 0) {
		free(parts.p);
		return err_set(e, "out of memory");
	}
	struct tok_buf norm = {0};
	int rc = 0;
	for (int p = 0; p < parts.n && rc == 0; p++) {
		const struct json_part *pt = &parts.p[p];
		if (pt->added >= 0) {
			rc = tok_ids_push(out, j->added[pt->added].id, j->added[pt->added].special) < 0 ? err_set(e, "out of memory") : 0;
			continue;
		}
		rc = tok_norm_run(j->norm, text + pt->start, pt->end - pt->start, &norm, e);
		if (rc == 0)
			rc = json_encode_normalized(tok, norm.s ? norm.s : "", norm.n, pt->start == 0, out, e);
	}
	tok_buf_free(&norm);
	free(parts.p);
	return rc;
}

/* ---------------------------------------------------------------- loading */

static int json_load_model(struct tokenizer *tok, json_t *model, struct err *e)
{
	struct tok_json *j = tok->json;
	json_t *type = json_object_get(model, "type");
	if (!json_is_object(model) || !json_is_string(type))
		return err_set(e, "no \"model\" with a \"type\"");
	const char *t = json_string_value(type);
	json_t *unk = json_object_get(model, "unk_token");
	if (!strcmp(t, "BPE")) {
		j->model = TOK_MODEL_BPE;
		if (bpe_json_load(tok, model, e) < 0)
			return -1;
	} else if (!strcmp(t, "WordPiece")) {
		j->model = TOK_MODEL_WORDPIECE;
		if (!j->vocab_read && tok_vocab_from_json(&tok->vocab, json_object_get(model, "vocab"), e) < 0)
			return err_prefix(e, "model.vocab");
		json_t *prefix = json_object_get(model, "continuing_subword_prefix");
		json_t *maxc = json_object_get(model, "max_input_chars_per_word");
		if (!(tok->prefix = strdup(json_is_string(prefix) ? json_string_value(prefix) : "##")))
			return err_set(e, "out of memory");
		tok->max_chars = 100;
		if (json_is_integer(maxc)) {
			json_int_t v = json_integer_value(maxc);
			tok->max_chars = v < 0 ? 0 : v > 1000000 ? 1000000 : (int)v;
		}
		if (!json_is_string(unk))
			return err_set(e, "model.unk_token is missing (WordPiece needs one)");
	} else if (!strcmp(t, "Unigram")) {
		j->model = TOK_MODEL_UNIGRAM;
		return unigram_load(tok, model, &j->unigram, e);
	} else {
		return err_set(e, "model type \"%.40s\" is not supported", t);
	}
	tok->unk_id = -1;
	if (json_is_string(unk)) {
		tok->unk_id = tok_vocab_get(&tok->vocab, json_string_value(unk), json_string_length(unk));
		if (tok->unk_id < 0)
			return err_set(e, "model.unk_token \"%.40s\" is not in the vocabulary", json_string_value(unk));
		j->has_unk = true;
	} else if (unk && !json_is_null(unk)) {
		return err_set(e, "model.unk_token is not a string");
	}
	return 0;
}

/* A special token value of tokenizer_config.json: "text" or {"content": "text", ...}. */
static const char *json_config_token(json_t *v)
{
	if (json_is_object(v))
		v = json_object_get(v, "content");
	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Make the special token S an added token, as transformers does with the tokens it is given. */
static int json_config_special(struct tokenizer *tok, const char *s, struct err *e)
{
	size_t len = strlen(s);
	if (!len || json_is_added(tok, s, len))
		return 0;
	int32_t id = tok_vocab_get(&tok->vocab, s, len);
	if (id < 0)
		return 0; /* it would get an id past the vocabulary, which the model cannot embed */
	return json_added_add(tok, s, len, id, true, false, false, false, false, e);
}

static bool json_config_flag(json_t *cfg, const char *key, bool dflt)
{
	json_t *v = json_object_get(cfg, key);
	return json_is_boolean(v) ? json_is_true(v) : dflt;
}

static int json_read_config(struct tokenizer *tok, json_t *cfg, struct err *e)
{
	json_t *dec = json_object_get(cfg, "added_tokens_decoder");
	if (json_is_object(dec)) {
		const char *key;
		json_t *v;
		json_object_foreach(dec, key, v) {
			char *end;
			long id = strtol(key, &end, 10);
			if (*end || end == key)
				return err_set(e, "added_tokens_decoder key \"%.20s\" is not an id", key);
			if (json_added_object(tok, v, id, true, e) < 0)
				return err_prefix(e, "added_tokens_decoder");
		}
	}
	static const char *const roles[] = {"bos_token", "eos_token", "unk_token", "sep_token",
					    "pad_token", "cls_token", "mask_token"};
	for (size_t r = 0; r < sizeof roles / sizeof *roles; r++) {
		const char *s = json_config_token(json_object_get(cfg, roles[r]));
		if (s && json_config_special(tok, s, e) < 0)
			return -1;
	}
	json_t *extra = json_object_get(cfg, "additional_special_tokens");
	size_t i;
	json_t *v;
	json_array_foreach(extra, i, v) {
		const char *s = json_config_token(v);
		if (s && json_config_special(tok, s, e) < 0)
			return -1;
	}
	json_t *cls = json_object_get(cfg, "tokenizer_class");
	const char *c = json_is_string(cls) ? json_string_value(cls) : "";
	static const char *const templated[] = {"LlamaTokenizer", "LlamaTokenizerFast", "GemmaTokenizer",
						"GemmaTokenizerFast", "CodeLlamaTokenizer", "CodeLlamaTokenizerFast"};
	bool update = false;
	for (size_t k = 0; k < sizeof templated / sizeof *templated; k++)
		update |= strcmp(c, templated[k]) == 0;
	if (!update)
		return 0;
	bool add_bos = json_config_flag(cfg, "add_bos_token", true), add_eos = json_config_flag(cfg, "add_eos_token", false);
	int32_t ids[2] = {-1, -1};
	static const char *const keys[2] = {"bos_token", "eos_token"};
	for (int k = 0; k < 2; k++) {
		if (!(k ? add_eos : add_bos))
			continue;
		const char *s = json_config_token(json_object_get(cfg, keys[k]));
		if (!s)
			return err_set(e, "add_%.3s_token is true but %s is not set", keys[k], keys[k]);
		if ((ids[k] = tokenizer_token_to_id(tok, s)) < 0)
			return err_set(e, "%s \"%.40s\" is not a token", keys[k], s);
	}
	tok_post_free(tok->json->post);
	tok->json->post = NULL;
	return tok_post_bos_eos(ids[0], ids[1], &tok->json->post, e);
}

/* tokenizer.json: the vocabulary and merges through tok-jsonfast.c when they are plain, the rest
 * (or all of it) through jansson. */
static json_t *json_read_tokenizer(struct tokenizer *tok, const char *path, struct err *e)
{
	char *buf;
	size_t len;
	if (file_read_all(path, TOK_MAX_FILE_BYTES, 0, &buf, &len, e) < 0)
		return NULL;
	json_t *root = NULL;
	json_error_t je;
	struct tok_json_rest rest = {0};
	if (jsoncap_nodes(buf, len) > JSONCAP_MAX_NODES) {
		err_set(e, "%s: more than %zu JSON values", path, JSONCAP_MAX_NODES);
	} else if (utf8_check(buf, len) == len && tok_jsonfast_take(tok, buf, len, &rest, e) < 0) {
		err_prefix(e, "%s", path);
	} else if (!(root = rest.text ? json_loadb(rest.text, rest.len, 0, &je) : json_loadb(buf, len, 0, &je))) {
		int line = je.line, column = je.column;
		if (rest.text && je.position >= 0)
			tok_jsonfast_where(&rest, buf, (size_t)je.position, &line, &column);
		err_set(e, "%s: line %d column %d: %s", path, line, column, je.text);
	}
	free(rest.text);
	free(buf);
	return root;
}

/* How the pieces of a decoder or pre-tokenizer J (a Sequence: its first member that tells) read
 * back as text; UNKNOWN when J does not say. */
static enum tokenizer_pieces json_pieces_of(json_t *j, int depth)
{
	const char *type = json_string_value(json_object_get(j, "type"));
	if (!type || depth > 8)
		return TOKENIZER_PIECES_UNKNOWN;
	if (!strcmp(type, "Sequence")) {
		json_t *list = json_object_get(j, "decoders");
		if (!list)
			list = json_object_get(j, "pretokenizers");
		size_t i;
		json_t *m;
		json_array_foreach(list, i, m) {
			enum tokenizer_pieces p = json_pieces_of(m, depth + 1);
			if (p != TOKENIZER_PIECES_UNKNOWN)
				return p;
		}
		return TOKENIZER_PIECES_UNKNOWN;
	}
	if (!strcmp(type, "ByteLevel"))
		return TOKENIZER_PIECES_BYTE_LEVEL;
	if (!strcmp(type, "WordPiece"))
		return TOKENIZER_PIECES_WORDPIECE;
	if (!strcmp(type, "Metaspace") || !strcmp(type, "ByteFallback"))
		return TOKENIZER_PIECES_SENTENCEPIECE;
	/* Llama 2 and Gemma decode with Replace("▁" -> " ") */
	const char *pattern = json_string_value(json_object_get(json_object_get(j, "pattern"), "String"));
	if (!strcmp(type, "Replace") && pattern && !strcmp(pattern, "\xe2\x96\x81"))
		return TOKENIZER_PIECES_SENTENCEPIECE;
	return TOKENIZER_PIECES_UNKNOWN;
}

/* How the pieces of tokenizer.json ROOT read back as text: what its decoder undoes, else what its
 * pre-tokenizer or WordPiece model writes. */
static enum tokenizer_pieces json_pieces(json_t *root)
{
	enum tokenizer_pieces p = json_pieces_of(json_object_get(root, "decoder"), 0);
	if (p == TOKENIZER_PIECES_UNKNOWN)
		p = json_pieces_of(json_object_get(root, "pre_tokenizer"), 0);
	if (p == TOKENIZER_PIECES_UNKNOWN)
		p = json_pieces_of(json_object_get(root, "model"), 0);
	return p;
}

int tok_json_load(struct tokenizer *tok, const char *dir, struct err *e)
{
	char *path = tok_path_join(dir, "tokenizer.json"), *cpath = tok_path_join(dir, "tokenizer_config.json");
	json_t *root = NULL, *cfg = NULL;
	int rc = -1;
	if (!path || !cpath || !(tok->json = calloc(1, sizeof *tok->json))) {
		err_set(e, "out of memory");
		goto out;
	}
	struct tok_json *j = tok->json;
	tok->unk_id = -1;
	if (!(root = json_read_tokenizer(tok, path, e)))
		goto out;
	if (!json_is_object(root)) {
		err_set(e, "%s: not a JSON object", path);
		goto out;
	}
	if (json_load_model(tok, json_object_get(root, "model"), e) < 0)
		goto fail;
	j->pieces = json_pieces(root);
	json_t *added = json_object_get(root, "added_tokens");
	if (added && !json_is_null(added) && !json_is_array(added)) {
		err_set(e, "added_tokens is not a list");
		goto fail;
	}
	size_t i;
	json_t *a;
	json_array_foreach(added, i, a) {
		json_t *id = json_object_get(a, "id");
		if (!json_is_integer(id)) {
			err_set(e, "added_tokens[%zu] has no integer \"id\"", i);
			goto fail;
		}
		if (json_added_object(tok, a, json_integer_value(id), false, e) < 0)
			goto fail;
	}
	if (tok_norm_load(json_object_get(root, "normalizer"), &j->norm, e) < 0 ||
	    tok_pretok_load(json_object_get(root, "pre_tokenizer"), &j->pretok, e) < 0 ||
	    tok_post_load(tok, json_object_get(root, "post_processor"), &j->post, e) < 0)
		goto fail;
	if (tok_file_exists(cpath)) {
		/* numbers as reals: "model_max_length": 1e30 and larger integers are common */
		if (!(cfg = tok_load_json(cpath, JSON_DECODE_INT_AS_REAL, e)))
			goto out;
		if (!json_is_object(cfg)) {
			err_set(e, "%s: not a JSON object", cpath);
			goto out;
		}
		/* added_tokens_decoder keys are ids: read them as integers */
		if (json_read_config(tok, cfg, e) < 0) {
			err_prefix(e, "%s", cpath);
			goto out;
		}
	}
	/* normalized added tokens are looked for in normalized text, so as normalized text */
	struct tok_buf nb = {0};
	for (int k = 0; k < j->n_added; k++) {
		struct tok_added *t = &j->added[k];
		if (!t->normalized || !j->norm)
			continue;
		if (tok_norm_run(j->norm, t->text, t->len, &nb, e) < 0 || nb.n == 0) {
			tok_buf_free(&nb);
			if (nb.n == 0)
				err_set(e, "added token \"%.40s\" normalizes to nothing", t->text);
			goto fail;
		}
		free(t->text);
		t->text = nb.s;
		t->len = nb.n;
		nb = (struct tok_buf){0};
	}
	if (json_matcher_build(j, &j->raw, false, e) < 0 || json_matcher_build(j, &j->normalized, true, e) < 0)
		goto fail;
	rc = 0;
	goto out;
fail:
	err_prefix(e, "%s", path);
out:
	json_decref(root);
	json_decref(cfg);
	free(path);
	free(cpath);
	return rc;
}

void tok_json_free(struct tokenizer *tok)
{
	struct tok_json *j = tok->json;
	if (!j)
		return;
	tok_norm_free(j->norm);
	tok_pretok_free(j->pretok);
	tok_post_free(j->post);
	unigram_free(j->unigram);
	free(j->subword_prefix);
	free(j->word_suffix);
	tok_jsonfast_free(j->merges);
	for (int i = 0; i < j->n_added; i++)
		free(j->added[i].text);
	free(j->added);
	if (j->raw.index.slots)
		tok_vocab_free(&j->raw.index);
	if (j->normalized.index.slots)
		tok_vocab_free(&j->normalized.index);
	free(j->raw.lens);
	free(j->normalized.lens);
	free(j);
	tok->json = NULL;
}
