/* tok-config.c -- special tokens and the settings around a vocabulary, as HF gathers them.
 *
 * The defaults of BertTokenizer / GPT2Tokenizer, then tokenizer_config.json (flags and special
 * token names), special_tokens_map.json (overriding it), added_tokens.json and tokenizer.json's
 * added_tokens; at the end the ids of the tokens the tokenizer needs and the list of tokens
 * cut out of the text before the model's tokenizer runs (tok->specials). */
#include "tokenizer/tok-internal.h"
#include "base/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* HF's SPECIAL_TOKENS_ATTRIBUTES order, which is also the order of all_special_tokens. */
enum { ROLE_BOS, ROLE_EOS, ROLE_UNK, ROLE_SEP, ROLE_PAD, ROLE_CLS, ROLE_MASK, N_ROLES };
static const char *const role_keys[N_ROLES] = {
	"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token",
};

struct special_spec {
	char *content; /* NULL when the role has no token */
	bool lstrip, rstrip;
};

struct tok_config {
	struct special_spec roles[N_ROLES];
	struct special_spec *extra; /* [n_extra] additional_special_tokens */
	int n_extra;
	struct special_spec *json_special; /* [n_json_special] tokenizer.json's added tokens marked special */
	int n_json_special;
	struct special_spec *added; /* [n_added] added_tokens.json's tokens that are not special */
	int n_added;
	enum tokenizer_kind kind;
};

/* Whether a special token given as a plain string strips the whitespace around it. HF strips
 * on both sides for a str, and GPT2Tokenizer wraps its bos/eos/unk/pad strings in
 * AddedToken(lstrip=False, rstrip=False), which strips nothing. Additional tokens stay str. */
static bool config_plain_strips(enum tokenizer_kind kind, int role)
{
	return !(kind == TOKENIZER_BPE && (role == ROLE_BOS || role == ROLE_EOS || role == ROLE_UNK || role == ROLE_PAD));
}

/* The same on each side, for the classes that wrap their strings differently (transformers 4.31):
 * RobertaTokenizer wraps every role in AddedToken(lstrip=False, rstrip=False) except <mask>,
 * which, like the mask of XLMRobertaTokenizer and AlbertTokenizer, is AddedToken(lstrip=True,
 * rstrip=False) ("behaves like a normal word, includes the space before it"). */
static void config_plain_strip_sides(enum tokenizer_kind kind, int role, bool *left, bool *right)
{
	*left = *right = config_plain_strips(kind, role);
	if (kind == TOKENIZER_ROBERTA)
		*left = *right = false;
	if (role == ROLE_MASK && (kind == TOKENIZER_ROBERTA || kind == TOKENIZER_XLMR || kind == TOKENIZER_ALBERT ||
				  kind == TOKENIZER_MBART || kind == TOKENIZER_NLLB))
		*left = true, *right = false;
}

static void config_spec_clear(struct special_spec *s)
{
	free(s->content);
	s->content = NULL;
}

static int config_spec_set(struct special_spec *s, const char *content, bool lstrip, bool rstrip, struct err *e)
{
	char *c = strdup(content);
	if (!c)
		return err_set(e, "out of memory");
	free(s->content);
	s->content = c;
	s->lstrip = lstrip;
	s->rstrip = rstrip;
	return 0;
}

/* A special token value: "text" or an AddedToken object {"content": ..., "lstrip": ..., ...}. */
static int config_spec_from_json(struct special_spec *s, json_t *v, bool plain_left, bool plain_right, const char *what,
				 struct err *e)
{
	if (json_is_string(v))
		return config_spec_set(s, json_string_value(v), plain_left, plain_right, e);
	json_t *content = json_is_object(v) ? json_object_get(v, "content") : NULL;
	if (!json_is_string(content))
		return err_set(e, "%s is not a string or a token object with \"content\"", what);
	return config_spec_set(s, json_string_value(content), json_is_true(json_object_get(v, "lstrip")),
			json_is_true(json_object_get(v, "rstrip")), e);
}

static struct special_spec *config_spec_append(struct special_spec **list, int *n, struct err *e)
{
	struct special_spec *l = realloc(*list, (size_t)(*n + 1) * sizeof *l);
	if (!l) {
		err_set(e, "out of memory");
		return NULL;
	}
	*list = l;
	memset(&l[*n], 0, sizeof *l);
	return &l[(*n)++];
}

static int config_add_extra(struct tok_config *st, json_t *v, const char *what, struct err *e)
{
	struct special_spec *s = config_spec_append(&st->extra, &st->n_extra, e);
	return s ? config_spec_from_json(s, v, true, true, what, e) : -1;
}

static void config_spec_list_free(struct special_spec *list, int n)
{
	for (int i = 0; i < n; i++)
		config_spec_clear(&list[i]);
	free(list);
}

/* Roles and additional_special_tokens from tokenizer_config.json or special_tokens_map.json. */
static int config_read_roles(struct tok_config *st, json_t *cfg, struct err *e)
{
	for (int r = 0; r < N_ROLES; r++) {
		json_t *v = json_object_get(cfg, role_keys[r]);
		bool left, right;
		config_plain_strip_sides(st->kind, r, &left, &right);
		if (v && !json_is_null(v) && config_spec_from_json(&st->roles[r], v, left, right, role_keys[r], e) < 0)
			return -1;
	}
	json_t *add = json_object_get(cfg, "additional_special_tokens");
	if (add && !json_is_null(add)) {
		if (!json_is_array(add))
			return err_set(e, "additional_special_tokens is not a list");
		/* a later file replaces the list, as HF's init kwargs do */
		for (int i = 0; i < st->n_extra; i++)
			config_spec_clear(&st->extra[i]);
		st->n_extra = 0;
		size_t i;
		json_t *v;
		json_array_foreach(add, i, v) {
			if (config_add_extra(st, v, "an additional special token", e) < 0)
				return -1;
		}
	}
	return 0;
}

static int config_json_bool(json_t *cfg, const char *key, bool *out, struct err *e)
{
	json_t *v = json_object_get(cfg, key);
	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return err_set(e, "%s is not true or false", key);
	*out = json_is_true(v);
	return 0;
}

/* The class each encoder-decoder kind stands for (its fast twin reads the same files). */
static const char *config_seq2seq_class(enum tokenizer_kind kind)
{
	switch (kind) {
	case TOKENIZER_T5:
		return "T5Tokenizer";
	case TOKENIZER_MBART:
		return "MBartTokenizer";
	case TOKENIZER_MARIAN:
		return "MarianTokenizer";
	case TOKENIZER_NLLB:
		return "NllbTokenizer";
	case TOKENIZER_M2M100:
		return "M2M100Tokenizer";
	default:
		return "PegasusTokenizer";
	}
}

/* The class TOK follows: its kind's, or MBart50Tokenizer. */
static const char *config_class_name(const struct tokenizer *tok)
{
	return tok->mbart50 ? "MBart50Tokenizer" : config_seq2seq_class(tok->kind);
}

/* A language code of tokenizer_config.json (null: the default) into *IDX. */
static int config_lang(struct tokenizer *tok, json_t *cfg, const char *key, int *idx, struct err *e)
{
	json_t *v = json_object_get(cfg, key);
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v) || (*idx = tok_lang_find(tok, json_string_value(v))) < 0)
		return err_set(e, "%s \"%.40s\" is not one of %s's language codes", key,
			       json_is_string(v) ? json_string_value(v) : "?", config_class_name(tok));
	return 0;
}

/* The constructor arguments of the encoder-decoder classes; what 4.31 would do otherwise (another
 * class in tokenizer_class, T5's non-legacy mode, Marian's separate vocabularies, another Pegasus
 * offset) is refused by name rather than guessed. */
static int config_read_seq2seq(struct tokenizer *tok, json_t *cfg, struct err *e)
{
	const char *want = config_class_name(tok);
	json_t *cls = json_object_get(cfg, "tokenizer_class");
	if (json_is_string(cls)) {
		const char *c = json_string_value(cls);
		size_t n = strlen(want);
		if (strncmp(c, want, n) != 0 || (c[n] && strcmp(c + n, "Fast") != 0))
			return err_set(e, "tokenizer_class %.60s is not supported here (this model's is %s)", c, want);
	}
	if (tok->kind == TOKENIZER_T5) {
		json_t *x = json_object_get(cfg, "extra_ids");
		if (x && !json_is_null(x)) {
			double d = json_number_value(x);
			if (!json_is_number(x) || d < 0 || d > 100000 || d != (int)d)
				return err_set(e, "extra_ids is not a count from 0 to 100000");
			tok->extra_ids = (int)d;
		}
		if (config_json_bool(cfg, "legacy", &tok->legacy, e) < 0)
			return -1;
		if (!tok->legacy)
			return err_set(e, "legacy: false (T5Tokenizer's newer handling of text after special tokens) is not "
				       "supported");
	}
	if (tok->kind == TOKENIZER_NLLB && config_json_bool(cfg, "legacy_behaviour", &tok->legacy, e) < 0)
		return -1;
	if (tok->kind == TOKENIZER_MARIAN) {
		bool sep = false;
		if (config_json_bool(cfg, "separate_vocabs", &sep, e) < 0)
			return -1;
		if (sep)
			return err_set(e, "separate_vocabs: true (a second vocabulary, target_vocab.json) is not supported");
	}
	if (tok->kind == TOKENIZER_M2M100) {
		/* FAIRSEQ_LANGUAGE_CODES[language_codes]; num_madeup_words only counts in vocab_size */
		json_t *lc = json_object_get(cfg, "language_codes");
		if (lc && !json_is_null(lc)) {
			const char *s = json_is_string(lc) ? json_string_value(lc) : "";
			if (strcmp(s, "m2m100") != 0 && strcmp(s, "wmt21") != 0)
				return err_set(e, "language_codes is not \"m2m100\" or \"wmt21\" (M2M100Tokenizer's)");
			tok->wmt21 = strcmp(s, "wmt21") == 0;
		}
	}
	if (tok->kind == TOKENIZER_PEGASUS) {
		json_t *o = json_object_get(cfg, "offset");
		if (o && !json_is_null(o) && (!json_is_number(o) || json_number_value(o) != 103))
			return err_set(e, "offset is not 103 (PegasusTokenizer's; other offsets are not supported)");
	}
	if (config_lang(tok, cfg, "src_lang", &tok->src_lang, e) < 0 ||
	    config_lang(tok, cfg, "tgt_lang", &tok->tgt_lang, e) < 0)
		return -1;
	return 0;
}

/* tokenizer_config.json: the flags HF passes to the tokenizer's constructor. */
static int config_read_flags(struct tokenizer *tok, json_t *cfg, struct err *e)
{
	if (config_json_bool(cfg, "do_lower_case", &tok->lower, e) < 0 ||
	    config_json_bool(cfg, "tokenize_chinese_chars", &tok->chinese, e) < 0 ||
	    config_json_bool(cfg, "add_prefix_space", &tok->add_prefix_space, e) < 0 ||
	    config_json_bool(cfg, "add_bos_token", &tok->add_bos_token, e) < 0)
		return -1;
	/* AlbertTokenizer's preprocess_text and DebertaV2Tokenizer's SPMTokenizer */
	if (config_json_bool(cfg, "remove_space", &tok->remove_space, e) < 0 ||
	    config_json_bool(cfg, "keep_accents", &tok->keep_accents, e) < 0 ||
	    config_json_bool(cfg, "split_by_punct", &tok->split_by_punct, e) < 0)
		return -1;
	if (tok_kind_is_seq2seq(tok->kind) && config_read_seq2seq(tok, cfg, e) < 0)
		return -1;
	json_t *sa = json_object_get(cfg, "strip_accents");
	if (sa) {
		if (json_is_null(sa))
			tok->strip_accents = -1;
		else if (json_is_boolean(sa))
			tok->strip_accents = json_is_true(sa);
		else
			return err_set(e, "strip_accents is not true, false or null");
	}
	json_t *ns = json_object_get(cfg, "never_split");
	if (ns && !json_is_null(ns)) {
		if (!json_is_array(ns))
			return err_set(e, "never_split is not a list");
		tok->never_split = calloc(json_array_size(ns) + 1, sizeof *tok->never_split);
		if (!tok->never_split)
			return err_set(e, "out of memory");
		size_t i;
		json_t *v;
		json_array_foreach(ns, i, v) {
			if (!json_is_string(v))
				return err_set(e, "never_split has a value that is not a string");
			if (!(tok->never_split[tok->n_never_split++] = strdup(json_string_value(v))))
				return err_set(e, "out of memory");
		}
	}
	return 0;
}

/* tokenizer.json's added_tokens: entries the model's vocabulary lacks are added beside it, and
 * the special ones are split out of the text like the configured special tokens. */
int tok_config_json_added(struct tokenizer *tok, struct tok_config *st, json_t *root, struct err *e)
{
	json_t *added = json_object_get(root, "added_tokens");
	if (!added || json_is_null(added))
		return 0;
	if (!json_is_array(added))
		return err_set(e, "added_tokens is not a list");
	size_t i;
	json_t *a;
	json_array_foreach(added, i, a) {
		json_t *content = json_object_get(a, "content"), *id = json_object_get(a, "id");
		if (!json_is_string(content) || !json_is_integer(id))
			return err_set(e, "added token %zu has no \"content\" and integer \"id\"", i);
		const char *s = json_string_value(content);
		json_int_t v = json_integer_value(id);
		if (tok_token_id(tok, s, strlen(s)) < 0) {
			if (v < 0 || v >= TOK_MAX_IDS || v > (json_int_t)tok->vocab.n_ids + 65536)
				return err_set(e, "added token \"%.40s\" has an id out of range (%lld)", s, (long long)v);
			if (tok_vocab_set(&tok->added, s, strlen(s), (int32_t)v) < 0)
				return err_set(e, "out of memory");
		}
		if (json_is_true(json_object_get(a, "special"))) {
			struct special_spec *sp = config_spec_append(&st->json_special, &st->n_json_special, e);
			if (!sp || config_spec_from_json(sp, a, false, false, "an added token", e) < 0)
				return -1;
		}
	}
	return 0;
}

static bool config_is_special(const struct tok_config *st, const char *s)
{
	for (int r = 0; r < N_ROLES; r++)
		if (st->roles[r].content && strcmp(st->roles[r].content, s) == 0)
			return true;
	for (int i = 0; i < st->n_extra; i++)
		if (st->extra[i].content && strcmp(st->extra[i].content, s) == 0)
			return true;
	for (int i = 0; i < st->n_json_special; i++)
		if (st->json_special[i].content && strcmp(st->json_special[i].content, s) == 0)
			return true;
	return false;
}

struct added_entry {
	const char *text;
	json_int_t index;
	size_t order;
};

static int config_added_cmp(const void *a, const void *b)
{
	const struct added_entry *x = a, *y = b;
	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return (x->order > y->order) - (x->order < y->order);
}

/* added_tokens.json {"token": index}: HF's from_pretrained adds these, in index order, after
 * the vocabulary (ids from len(vocabulary) on; the file's indexes only give the order). A
 * token the vocabulary has is not added again. Non-special ones are lower-cased when the
 * tokenizer lower-cases, and split out of the text like special tokens. */
static int config_read_added_file(struct tokenizer *tok, struct tok_config *st, const char *dir, struct err *e)
{
	char *path = tok_path_join(dir, "added_tokens.json");
	if (!path)
		return err_set(e, "out of memory");
	if (!tok_file_exists(path)) {
		free(path);
		return 0;
	}
	json_t *root = tok_load_json(path, 0, e);
	struct added_entry *ents = NULL;
	char *low = NULL;
	int rc = -1;
	if (!root)
		goto out;
	if (!json_is_object(root)) {
		err_set(e, "%s: not a JSON object of token indexes", path);
		goto out;
	}
	size_t n = json_object_size(root), k = 0;
	if (!(ents = calloc(n + 1, sizeof *ents))) {
		err_set(e, "out of memory");
		goto out;
	}
	const char *key;
	json_t *val;
	json_object_foreach(root, key, val) {
		if (!json_is_integer(val)) {
			err_set(e, "%s: the index of \"%.40s\" is not an integer", path, key);
			goto out;
		}
		ents[k] = (struct added_entry){key, json_integer_value(val), k};
		k++;
	}
	qsort(ents, n, sizeof *ents, config_added_cmp);
	/* len(tokenizer): distinct vocabulary strings plus the tokens added so far */
	int32_t next = (int32_t)(tok->vocab.n_entries + tok->added.n_entries);
	for (k = 0; k < n; k++) {
		const char *t = ents[k].text;
		size_t len = strlen(t);
		bool special = config_is_special(st, t);
		free(low);
		low = NULL;
		if (!special && tok->kind == TOKENIZER_WORDPIECE && tok->lower) {
			if (!(low = malloc(len * 3 + 1))) {
				err_set(e, "out of memory");
				goto out;
			}
			size_t m = 0;
			for (size_t i = 0; i < len;) {
				uint32_t cp;
				i += (size_t)utf8_decode(t + i, &cp);
				m += (size_t)utf8_py_lower(cp, low + m);
			}
			low[m] = '\0';
			t = low, len = m;
		}
		const char *unk = st->roles[ROLE_UNK].content;
		if ((unk && strcmp(t, unk) == 0) || tok_token_id(tok, t, len) >= 0 || len == 0)
			continue;
		if (next >= TOK_MAX_IDS || tok_vocab_set(&tok->added, t, len, next++) < 0) {
			err_set(e, "%s: out of memory", path);
			goto out;
		}
		if (!special) {
			struct special_spec *s = config_spec_append(&st->added, &st->n_added, e);
			if (!s || config_spec_set(s, t, true, true, e) < 0)
				goto out;
		}
	}
	rc = 0;
out:
	free(low);
	free(ents);
	json_decref(root);
	free(path);
	return rc;
}

static int config_special_cmp(const void *a, const void *b)
{
	const struct tok_special *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->text, y->text, n);
	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* all_special_tokens: the roles, then the additional ones, each text once, the first flags
 * kept. A token the vocabulary lacks is left out: HF would give it an id past the vocabulary,
 * which the model's embedding cannot look up. */
static int config_collect_specials(struct tokenizer *tok, struct tok_config *st, struct err *e)
{
	int n_special = N_ROLES + st->n_extra + st->n_json_special, n = n_special + st->n_added;
	tok->specials = calloc((size_t)n + 1, sizeof *tok->specials);
	if (!tok->specials)
		return err_set(e, "out of memory");
	for (int k = 0; k < n; k++) {
		struct special_spec *s = k < N_ROLES ? &st->roles[k]
				       : k < N_ROLES + st->n_extra ? &st->extra[k - N_ROLES]
				       : k < n_special ? &st->json_special[k - N_ROLES - st->n_extra]
						       : &st->added[k - n_special];
		if (!s->content)
			continue;
		size_t len = strlen(s->content);
		int32_t id = tok_token_id(tok, s->content, len);
		bool dup = false;
		for (int i = 0; i < tok->n_specials; i++)
			dup |= tok->specials[i].len == len && memcmp(tok->specials[i].text, s->content, len) == 0;
		if (id < 0 || len == 0 || dup)
			continue;
		struct tok_special *t = &tok->specials[tok->n_specials];
		if (!(t->text = strdup(s->content)))
			return err_set(e, "out of memory");
		t->len = len;
		t->id = id;
		t->lstrip = s->lstrip;
		t->rstrip = s->rstrip;
		t->special = k < n_special;
		tok->n_specials++;
	}
	qsort(tok->specials, (size_t)tok->n_specials, sizeof *tok->specials, config_special_cmp);
	return 0;
}

static int32_t config_required_id(struct tokenizer *tok, struct tok_config *st, int role, const char *vocab_path,
			   struct err *e)
{
	const char *name = st->roles[role].content;
	int32_t id = name ? tok_token_id(tok, name, strlen(name)) : -1;
	if (id < 0)
		err_set(e, "%s: the %s \"%s\" is not in the vocabulary", vocab_path, role_keys[role],
			name ? name : "(none)");
	return id;
}

static int config_read_json_files(struct tokenizer *tok, const char *dir, struct tok_config *st, struct err *e)
{
	static const char *const names[] = {"tokenizer_config.json", "special_tokens_map.json"};
	for (int k = 0; k < 2; k++) {
		char *p = tok_path_join(dir, names[k]);
		if (!p)
			return err_set(e, "out of memory");
		int rc = 0;
		if (tok_file_exists(p)) {
			/* numbers as reals: configs often hold "model_max_length": 1000000000000000019884624838656,
			 * past jansson's integers, and no integer is read from them */
			json_t *cfg = tok_load_json(p, JSON_DECODE_INT_AS_REAL, e);
			if (!cfg) {
				rc = -1;
			} else if (!json_is_object(cfg)) {
				rc = err_set(e, "%s: not a JSON object", p);
			} else if ((k == 0 && config_read_flags(tok, cfg, e) < 0) || config_read_roles(st, cfg, e) < 0) {
				rc = err_prefix(e, "%s", p);
			}
			json_decref(cfg);
		}
		free(p);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* PegasusTokenizer's additional_special_tokens when none are given: <mask_1>, <unk_2> ... <unk_102>. */
static int config_pegasus_extra(struct tok_config *st, struct err *e)
{
	for (int i = 1; i < 103; i++) {
		char name[16];
		snprintf(name, sizeof name, i == 1 ? "<mask_1>" : "<unk_%d>", i);
		struct special_spec *s = config_spec_append(&st->extra, &st->n_extra, e);
		if (!s || config_spec_set(s, name, true, true, e) < 0)
			return -1;
	}
	return 0;
}

struct tok_config *tok_config_new(enum tokenizer_kind kind, struct err *e)
{
	struct tok_config *st = calloc(1, sizeof *st);
	if (!st) {
		err_set(e, "out of memory");
		return NULL;
	}
	st->kind = kind;
	int rc = 0;
	if (kind == TOKENIZER_WORDPIECE) {
		rc = config_spec_set(&st->roles[ROLE_UNK], "[UNK]", true, true, e) < 0 ||
		     config_spec_set(&st->roles[ROLE_SEP], "[SEP]", true, true, e) < 0 ||
		     config_spec_set(&st->roles[ROLE_PAD], "[PAD]", true, true, e) < 0 ||
		     config_spec_set(&st->roles[ROLE_CLS], "[CLS]", true, true, e) < 0 ||
		     config_spec_set(&st->roles[ROLE_MASK], "[MASK]", true, true, e) < 0;
	} else if (kind == TOKENIZER_ROBERTA || kind == TOKENIZER_XLMR || kind == TOKENIZER_MBART || kind == TOKENIZER_NLLB) {
		/* RobertaTokenizer / XLMRobertaTokenizer (and MBart, Nllb): fairseq's names */
		static const char *const names[N_ROLES] = {"<s>", "</s>", "<unk>", "</s>", "<pad>", "<s>", "<mask>"};
		for (int r = 0; r < N_ROLES && !rc; r++) {
			bool left, right;
			config_plain_strip_sides(kind, r, &left, &right);
			rc = config_spec_set(&st->roles[r], names[r], left, right, e) < 0;
		}
	} else if (tok_kind_is_seq2seq(kind) && kind != TOKENIZER_MBART && kind != TOKENIZER_NLLB) {
		/* T5Tokenizer, MarianTokenizer, PegasusTokenizer: </s>, <unk>, <pad> (Pegasus: and <mask_2>,
		 * <mask_1>, <unk_2> ... <unk_102>) */
		rc = config_spec_set(&st->roles[ROLE_EOS], "</s>", true, true, e) < 0 ||
		     config_spec_set(&st->roles[ROLE_UNK], "<unk>", true, true, e) < 0 ||
		     config_spec_set(&st->roles[ROLE_PAD], "<pad>", true, true, e) < 0;
		if (!rc && kind == TOKENIZER_PEGASUS) {
			rc = config_spec_set(&st->roles[ROLE_MASK], "<mask_2>", true, true, e) < 0 ||
			     config_pegasus_extra(st, e) < 0;
		}
		if (!rc && kind == TOKENIZER_M2M100) /* M2M100Tokenizer: and bos <s>, sep </s> */
			rc = config_spec_set(&st->roles[ROLE_BOS], "<s>", true, true, e) < 0 ||
			     config_spec_set(&st->roles[ROLE_SEP], "</s>", true, true, e) < 0;
	} else if (kind == TOKENIZER_ALBERT || kind == TOKENIZER_DEBERTA_V2) {
		/* AlbertTokenizer: <unk> and <pad>; DebertaV2Tokenizer: [UNK] and [PAD] */
		bool albert = kind == TOKENIZER_ALBERT;
		const char *names[N_ROLES] = {"[CLS]", "[SEP]", albert ? "<unk>" : "[UNK]", "[SEP]",
					      albert ? "<pad>" : "[PAD]", "[CLS]", "[MASK]"};
		for (int r = 0; r < N_ROLES && !rc; r++) {
			bool left, right;
			config_plain_strip_sides(kind, r, &left, &right);
			rc = config_spec_set(&st->roles[r], names[r], left, right, e) < 0;
		}
	} else {
		/* GPT2Tokenizer wraps its defaults in AddedToken(lstrip=False, rstrip=False) */
		for (int r = ROLE_BOS; r <= ROLE_UNK && !rc; r++)
			rc = config_spec_set(&st->roles[r], "<|endoftext|>", false, false, e) < 0;
	}
	if (rc) {
		tok_config_free(st);
		return NULL;
	}
	return st;
}

void tok_config_free(struct tok_config *st)
{
	if (!st)
		return;
	for (int r = 0; r < N_ROLES; r++)
		config_spec_clear(&st->roles[r]);
	config_spec_list_free(st->extra, st->n_extra);
	config_spec_list_free(st->json_special, st->n_json_special);
	config_spec_list_free(st->added, st->n_added);
	free(st);
}

int tok_config_set_unk(struct tok_config *st, const char *name, struct err *e)
{
	bool left, right;
	config_plain_strip_sides(st->kind, ROLE_UNK, &left, &right);
	return config_spec_set(&st->roles[ROLE_UNK], name, left, right, e);
}

/* SentencePiece kinds: HF's sanitize_special_tokens after loading. A special token other than
 * unk_token that converts to unk_token's id (the model lacks it, as DeBERTa-v3's [MASK]) is added
 * at len(tokenizer): the vocabulary size plus the tokens added so far. */
static int config_add_missing_specials(struct tokenizer *tok, struct tok_config *st, struct err *e)
{
	const char *unk = st->roles[ROLE_UNK].content;
	if (!unk)
		return 0;
	int32_t unk_id = spm_token_to_id(tok, unk, strlen(unk));
	for (int k = 0; k < N_ROLES + st->n_extra; k++) {
		const char *c = k < N_ROLES ? st->roles[k].content : st->extra[k - N_ROLES].content;
		if (!c || !*c || strcmp(c, unk) == 0 || spm_token_to_id(tok, c, strlen(c)) != unk_id)
			continue;
		int32_t next = tok->vocab.n_ids + (int32_t)tok->added.n_entries;
		if (next >= TOK_MAX_IDS || tok_vocab_set(&tok->added, c, strlen(c), next) < 0)
			return err_set(e, "out of memory");
	}
	return 0;
}

int tok_config_peek_class(const char *dir, char *out, size_t n, struct err *e)
{
	out[0] = '\0';
	char *p = tok_path_join(dir, "tokenizer_config.json");
	if (!p)
		return err_set(e, "out of memory");
	int rc = 0;
	if (tok_file_exists(p)) {
		json_t *cfg = tok_load_json(p, JSON_DECODE_INT_AS_REAL, e);
		json_t *cls = json_object_get(cfg, "tokenizer_class");
		if (!cfg)
			rc = -1;
		else if (json_is_string(cls))
			snprintf(out, n, "%s", json_string_value(cls));
		json_decref(cfg);
	}
	free(p);
	return rc;
}

int tok_config_read(struct tokenizer *tok, struct tok_config *st, const char *dir, struct err *e)
{
	if (config_read_json_files(tok, dir, st, e) < 0)
		return -1;
	return config_read_added_file(tok, st, dir, e);
}

/* Is NAME one of the additional special tokens? */
static bool config_has_extra(const struct tok_config *st, const char *name)
{
	for (int i = 0; i < st->n_extra; i++)
		if (st->extra[i].content && strcmp(st->extra[i].content, name) == 0)
			return true;
	return false;
}

/* The special tokens the encoder-decoder classes add themselves, with their ids (VOCAB_PATH names
 * the model in errors). */
static int config_seq2seq_tokens(struct tokenizer *tok, struct tok_config *st, const char *vocab_path,
				 struct err *e)
{
	if (tok->kind == TOKENIZER_T5) {
		/* T5Tokenizer: <extra_id_0> ... as additional_special_tokens when none are given, else
		 * as many "extra_id" tokens as extra_ids says; _convert_token_to_id puts <extra_id_N> at
		 * vocab_size - 1 - N, vocab_size = pieces + extra_ids */
		int n_extra = 0;
		for (int i = 0; i < st->n_extra; i++)
			n_extra += st->extra[i].content && strstr(st->extra[i].content, "extra_id") != NULL;
		if (st->n_extra == 0) {
			for (int i = 0; i < tok->extra_ids; i++) {
				char name[32];
				snprintf(name, sizeof name, "<extra_id_%d>", i);
				struct special_spec *s = config_spec_append(&st->extra, &st->n_extra, e);
				if (!s || config_spec_set(s, name, true, true, e) < 0)
					return -1;
			}
		} else if (tok->extra_ids > 0 && n_extra != tok->extra_ids) {
			return err_set(e, "%s: additional_special_tokens has %d extra_id tokens but extra_ids is %d", vocab_path,
				       n_extra, tok->extra_ids);
		}
		int32_t n = tok->vocab.n_ids;
		if (n + tok->extra_ids >= TOK_MAX_IDS)
			return err_set(e, "%s: too many ids", vocab_path);
		for (int i = 0; i < tok->extra_ids; i++) {
			char name[32];
			snprintf(name, sizeof name, "<extra_id_%d>", i);
			if (tok_vocab_set(&tok->vocab, name, strlen(name), n + tok->extra_ids - 1 - i) < 0)
				return err_set(e, "out of memory");
		}
	}
	if (tok->kind == TOKENIZER_PEGASUS) {
		/* the ids 2 ... 104 are PegasusTokenizer.encoder's, built from the default list: another
		 * list in the configuration would move them */
		bool mask1 = config_has_extra(st, "<mask_1>");
		if (!mask1 && st->n_extra == 101) {
			/* PegasusTokenizer puts mask_token_sent first when the list lacks it */
			struct special_spec *s = config_spec_append(&st->extra, &st->n_extra, e);
			if (!s || config_spec_set(s, "<mask_1>", true, true, e) < 0)
				return -1;
			mask1 = true;
		}
		bool ok = st->n_extra == 102 && mask1;
		for (int i = 2; ok && i < 103; i++) {
			char name[16];
			snprintf(name, sizeof name, "<unk_%d>", i);
			ok = config_has_extra(st, name);
		}
		if (!ok)
			return err_set(e, "%s: additional_special_tokens other than <mask_1>, <unk_2> ... <unk_102> are not "
				       "supported", vocab_path);
	}
	int n_codes;
	tok_lang_codes(tok, &n_codes);
	for (int i = 0; i < n_codes; i++) {
		char name[64];
		tok_lang_token(tok, i, name, sizeof name);
		/* M2M100Tokenizer: "__en__" is len(vocab.json) + i, whatever vocab.json says */
		if (tok->kind == TOKENIZER_M2M100 && tok_vocab_set(&tok->vocab, name, strlen(name), tok->lang_base + i) < 0)
			return err_set(e, "out of memory");
		/* MBart, Nllb and M2M100Tokenizer: the codes, then the configured ones not among them */
		if (config_has_extra(st, name))
			continue;
		struct special_spec *s = config_spec_append(&st->extra, &st->n_extra, e);
		if (!s || config_spec_set(s, name, true, true, e) < 0)
			return -1;
	}
	if (tok->kind == TOKENIZER_MBART && tok->src_lang < 0)
		tok->src_lang = tok_lang_find(tok, "en_XX"); /* MBart(50)Tokenizer's default src_lang */
	if (tok->kind == TOKENIZER_NLLB && tok->src_lang < 0)
		tok->src_lang = tok_lang_find(tok, "eng_Latn");
	if (tok->kind == TOKENIZER_M2M100 && tok->src_lang < 0)
		tok->src_lang = tok_lang_find(tok, "en");
	return (tok->eos_id = config_required_id(tok, st, ROLE_EOS, vocab_path, e)) < 0 ? -1 : 0;
}

int tok_config_finish(struct tokenizer *tok, struct tok_config *st, const char *vocab_path, struct err *e)
{
	if (tok_kind_is_seq2seq(tok->kind) && config_seq2seq_tokens(tok, st, vocab_path, e) < 0)
		return -1;
	if ((tok->unk_id = config_required_id(tok, st, ROLE_UNK, vocab_path, e)) < 0)
		return -1;
	if (tok_kind_is_spm(tok->kind) && config_add_missing_specials(tok, st, e) < 0)
		return -1;
	bool templ = tok->kind == TOKENIZER_WORDPIECE || tok->kind == TOKENIZER_ROBERTA ||
		     (tok_kind_is_spm(tok->kind) && !tok_kind_is_seq2seq(tok->kind));
	if (templ && ((tok->cls_id = config_required_id(tok, st, ROLE_CLS, vocab_path, e)) < 0 ||
						 (tok->sep_id = config_required_id(tok, st, ROLE_SEP, vocab_path, e)) < 0))
		return -1;
	if (tok->kind == TOKENIZER_BPE && tok->add_bos_token &&
	    (tok->bos_id = config_required_id(tok, st, ROLE_BOS, vocab_path, e)) < 0)
		return -1;
	return config_collect_specials(tok, st, e);
}
