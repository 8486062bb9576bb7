/* tokenizer.c -- text to token ids as Hugging Face's slow tokenizers do it (see tokenizer.h).
 *
 * This file holds what BERT and GPT-2 share, in the order HF's PreTrainedTokenizer runs it:
 * finding the files, reading tokenizer_config.json / special_tokens_map.json, lower-casing
 * everything but special tokens (BERT), cutting special tokens typed in the text out before the
 * model's tokenizer runs, then truncation ('longest_first') and the [CLS] a [SEP] b [SEP]
 * assembly. The model-specific parts are tok-wordpiece.c and tok-bpe.c. */
#include "tokenizer.h"
#include "tok-internal.h"
#include "utf8.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---------------------------------------------------------------- file helpers */

int tok_read_file(const char *path, char **out, size_t *len, struct err *e)
{
	*out = NULL;
	*len = 0;
	FILE *f = fopen(path, "rb");
	if (!f)
		return err_set(e, "%s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode)) {
		fclose(f);
		return err_set(e, "%s: not a regular file", path);
	}
	if ((unsigned long long)st.st_size > TOK_MAX_FILE_BYTES) {
		fclose(f);
		return err_set(e, "%s: file too large (%lld bytes, limit %zu)", path, (long long)st.st_size,
			       TOK_MAX_FILE_BYTES);
	}
	size_t n = (size_t)st.st_size;
	char *buf = malloc(n + 1);
	if (!buf) {
		fclose(f);
		return err_set(e, "%s: out of memory", path);
	}
	size_t got = fread(buf, 1, n, f);
	int bad = ferror(f);
	fclose(f);
	if (bad || got != n) {
		free(buf);
		return err_set(e, "%s: read error", path);
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

json_t *tok_load_json(const char *path, size_t flags, struct err *e)
{
	char *buf;
	size_t len;
	if (tok_read_file(path, &buf, &len, e) < 0)
		return NULL;
	json_error_t je;
	json_t *root = json_loadb(buf, len, flags, &je);
	free(buf);
	if (!root)
		err_set(e, "%s: line %d column %d: %s", path, je.line, je.column, je.text);
	return root;
}

size_t tok_universal_newlines(char *s, size_t len)
{
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\r') {
			s[o++] = '\n';
			if (i + 1 < len && s[i + 1] == '\n')
				i++;
		} else {
			s[o++] = s[i];
		}
	}
	return o;
}

static bool file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

static char *path_join(const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	char *p = malloc(a + b + 2);
	if (!p)
		return NULL;
	memcpy(p, dir, a);
	p[a] = '/';
	memcpy(p + a + 1, name, b + 1);
	return p;
}

int32_t tok_token_id(const struct tokenizer *tok, const char *s, size_t len)
{
	int32_t id = tok_vocab_get(&tok->added, s, len);
	return id >= 0 ? id : tok_vocab_get(&tok->vocab, s, len);
}

bool tok_is_never_split(const struct tokenizer *tok, const char *s, size_t len)
{
	/* BertTokenizer passes all_special_tokens: not the non-special added tokens */
	for (int i = 0; i < tok->n_specials; i++)
		if (tok->specials[i].special && tok->specials[i].len == len && memcmp(tok->specials[i].text, s, len) == 0)
			return true;
	for (int i = 0; i < tok->n_never_split; i++)
		if (strlen(tok->never_split[i]) == len && memcmp(tok->never_split[i], s, len) == 0)
			return true;
	return false;
}

/* ---------------------------------------------------------------- special-token configuration */

/* HF's SPECIAL_TOKENS_ATTRIBUTES order, which is also the order of all_special_tokens. */
enum { ROLE_BOS, ROLE_EOS, ROLE_UNK, ROLE_SEP, ROLE_PAD, ROLE_CLS, ROLE_MASK, N_ROLES };
static const char *const role_keys[N_ROLES] = {
	"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token",
};

struct special_spec {
	char *content; /* NULL when the role has no token */
	bool lstrip, rstrip;
};

struct load_state {
	struct special_spec roles[N_ROLES];
	struct special_spec *extra; /* [n_extra] additional_special_tokens */
	int n_extra;
	struct special_spec *json_special; /* [n_json_special] tokenizer.json's added tokens marked special */
	int n_json_special;
	struct special_spec *added; /* [n_added] added_tokens.json's tokens that are not special */
	int n_added;
	enum tokenizer_kind kind;
	char *vocab_path;           /* the file the vocabulary came from, for messages */
};

/* Whether a special token given as a plain string strips the whitespace around it. HF strips
 * on both sides for a str, and GPT2Tokenizer wraps its bos/eos/unk/pad strings in
 * AddedToken(lstrip=False, rstrip=False), which strips nothing. Additional tokens stay str. */
static bool role_plain_strips(enum tokenizer_kind kind, int role)
{
	return !(kind == TOKENIZER_BPE && (role == ROLE_BOS || role == ROLE_EOS || role == ROLE_UNK || role == ROLE_PAD));
}

static void spec_clear(struct special_spec *s)
{
	free(s->content);
	s->content = NULL;
}

static int spec_set(struct special_spec *s, const char *content, bool lstrip, bool rstrip, struct err *e)
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
static int spec_from_json(struct special_spec *s, json_t *v, bool plain_strips, const char *what, struct err *e)
{
	if (json_is_string(v))
		return spec_set(s, json_string_value(v), plain_strips, plain_strips, e);
	json_t *content = json_is_object(v) ? json_object_get(v, "content") : NULL;
	if (!json_is_string(content))
		return err_set(e, "%s is not a string or a token object with \"content\"", what);
	return spec_set(s, json_string_value(content), json_is_true(json_object_get(v, "lstrip")),
			json_is_true(json_object_get(v, "rstrip")), e);
}

static struct special_spec *spec_append(struct special_spec **list, int *n, struct err *e)
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

static int add_extra(struct load_state *st, json_t *v, const char *what, struct err *e)
{
	struct special_spec *s = spec_append(&st->extra, &st->n_extra, e);
	return s ? spec_from_json(s, v, true, what, e) : -1;
}

static void spec_list_free(struct special_spec *list, int n)
{
	for (int i = 0; i < n; i++)
		spec_clear(&list[i]);
	free(list);
}

/* Roles and additional_special_tokens from tokenizer_config.json or special_tokens_map.json. */
static int read_special_roles(struct load_state *st, json_t *cfg, struct err *e)
{
	for (int r = 0; r < N_ROLES; r++) {
		json_t *v = json_object_get(cfg, role_keys[r]);
		if (v && !json_is_null(v) &&
		    spec_from_json(&st->roles[r], v, role_plain_strips(st->kind, r), role_keys[r], e) < 0)
			return -1;
	}
	json_t *add = json_object_get(cfg, "additional_special_tokens");
	if (add && !json_is_null(add)) {
		if (!json_is_array(add))
			return err_set(e, "additional_special_tokens is not a list");
		/* a later file replaces the list, as HF's init kwargs do */
		for (int i = 0; i < st->n_extra; i++)
			spec_clear(&st->extra[i]);
		st->n_extra = 0;
		size_t i;
		json_t *v;
		json_array_foreach(add, i, v) {
			if (add_extra(st, v, "an additional special token", e) < 0)
				return -1;
		}
	}
	return 0;
}

static int json_bool(json_t *cfg, const char *key, bool *out, struct err *e)
{
	json_t *v = json_object_get(cfg, key);
	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return err_set(e, "%s is not true or false", key);
	*out = json_is_true(v);
	return 0;
}

/* tokenizer_config.json: the flags HF passes to the tokenizer's constructor. */
static int read_config_flags(struct tokenizer *tok, json_t *cfg, struct err *e)
{
	if (json_bool(cfg, "do_lower_case", &tok->lower, e) < 0 ||
	    json_bool(cfg, "tokenize_chinese_chars", &tok->chinese, e) < 0 ||
	    json_bool(cfg, "add_prefix_space", &tok->add_prefix_space, e) < 0 ||
	    json_bool(cfg, "add_bos_token", &tok->add_bos_token, e) < 0)
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
static int read_added_tokens(struct tokenizer *tok, struct load_state *st, json_t *root, struct err *e)
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
			struct special_spec *sp = spec_append(&st->json_special, &st->n_json_special, e);
			if (!sp || spec_from_json(sp, a, false, "an added token", e) < 0)
				return -1;
		}
	}
	return 0;
}

static bool is_special_text(const struct load_state *st, const char *s)
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

static int added_cmp(const void *a, const void *b)
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
static int read_added_tokens_file(struct tokenizer *tok, struct load_state *st, const char *dir, struct err *e)
{
	char *path = path_join(dir, "added_tokens.json");
	if (!path)
		return err_set(e, "out of memory");
	if (!file_exists(path)) {
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
	qsort(ents, n, sizeof *ents, added_cmp);
	/* len(tokenizer): distinct vocabulary strings plus the tokens added so far */
	int32_t next = (int32_t)(tok->vocab.n_entries + tok->added.n_entries);
	for (k = 0; k < n; k++) {
		const char *t = ents[k].text;
		size_t len = strlen(t);
		bool special = is_special_text(st, t);
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
			struct special_spec *s = spec_append(&st->added, &st->n_added, e);
			if (!s || spec_set(s, t, true, true, e) < 0)
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

static int special_cmp(const void *a, const void *b)
{
	const struct tok_special *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->text, y->text, n);
	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* all_special_tokens: the roles, then the additional ones, each text once, the first flags
 * kept. A token the vocabulary lacks is left out: HF would give it an id past the vocabulary,
 * which the model's embedding cannot look up. */
static int collect_specials(struct tokenizer *tok, struct load_state *st, struct err *e)
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
	qsort(tok->specials, (size_t)tok->n_specials, sizeof *tok->specials, special_cmp);
	return 0;
}

static int32_t required_id(struct tokenizer *tok, struct load_state *st, int role, struct err *e)
{
	const char *name = st->roles[role].content;
	int32_t id = name ? tok_token_id(tok, name, strlen(name)) : -1;
	if (id < 0)
		err_set(e, "%s: the %s \"%s\" is not in the vocabulary", st->vocab_path, role_keys[role],
			name ? name : "(none)");
	return id;
}

/* ---------------------------------------------------------------- loading */

static int load_model_files(struct tokenizer *tok, const char *dir, struct load_state *st, struct err *e)
{
	char *vtxt = path_join(dir, "vocab.txt"), *vjson = path_join(dir, "vocab.json");
	char *merges = path_join(dir, "merges.txt"), *tjson = path_join(dir, "tokenizer.json");
	int rc = -1;
	if (!vtxt || !vjson || !merges || !tjson) {
		err_set(e, "out of memory");
		goto out;
	}
	const char *use_json = NULL;
	if (tok->kind == TOKENIZER_WORDPIECE) {
		if (file_exists(vtxt)) {
			st->vocab_path = vtxt, vtxt = NULL;
			rc = wordpiece_load_vocab_txt(tok, st->vocab_path, e);
		} else if (file_exists(tjson)) {
			use_json = tjson;
		} else {
			err_set(e, "%s: no vocab.txt or tokenizer.json (needed for a BERT WordPiece tokenizer)", dir);
		}
	} else {
		bool hv = file_exists(vjson), hm = file_exists(merges);
		if (hv && hm) {
			st->vocab_path = vjson, vjson = NULL;
			rc = bpe_load_files(tok, st->vocab_path, merges, e);
		} else if (file_exists(tjson)) {
			use_json = tjson;
		} else if (hm) {
			err_set(e, "%s: missing (merges.txt needs the vocabulary it merges into)", vjson);
		} else if (hv) {
			err_set(e, "%s: missing (vocab.json needs the merges of a BPE tokenizer)", merges);
		} else {
			err_set(e, "%s: no vocab.json + merges.txt or tokenizer.json (needed for a GPT-2 BPE tokenizer)", dir);
		}
	}
	if (use_json) {
		st->vocab_path = tjson, tjson = NULL;
		json_t *root = tok_load_json(st->vocab_path, 0, e);
		if (!root)
			goto out;
		char *unk = NULL;
		if (tok->kind == TOKENIZER_WORDPIECE)
			rc = wordpiece_load_json(tok, root, st->vocab_path, &unk, e);
		else
			rc = bpe_load_json(tok, root, st->vocab_path, e);
		if (rc == 0 && unk)
			rc = spec_set(&st->roles[ROLE_UNK], unk, role_plain_strips(tok->kind, ROLE_UNK),
				      role_plain_strips(tok->kind, ROLE_UNK), e);
		free(unk);
		if (rc == 0 && read_added_tokens(tok, st, root, e) < 0) {
			err_prefix(e, "%s", st->vocab_path);
			rc = -1;
		}
		json_decref(root);
	}
out:
	free(vtxt);
	free(vjson);
	free(merges);
	free(tjson);
	return rc;
}

static int load_config(struct tokenizer *tok, const char *dir, struct load_state *st, struct err *e)
{
	static const char *const names[] = {"tokenizer_config.json", "special_tokens_map.json"};
	for (int k = 0; k < 2; k++) {
		char *p = path_join(dir, names[k]);
		if (!p)
			return err_set(e, "out of memory");
		int rc = 0;
		if (file_exists(p)) {
			/* numbers as reals: configs often hold "model_max_length": 1000000000000000019884624838656,
			 * past jansson's integers, and no integer is read from them */
			json_t *cfg = tok_load_json(p, JSON_DECODE_INT_AS_REAL, e);
			if (!cfg) {
				rc = -1;
			} else if (!json_is_object(cfg)) {
				rc = err_set(e, "%s: not a JSON object", p);
			} else if ((k == 0 && read_config_flags(tok, cfg, e) < 0) || read_special_roles(st, cfg, e) < 0) {
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

int tokenizer_load(const char *dir, enum tokenizer_kind kind, struct tokenizer **out, struct err *e)
{
	*out = NULL;
	if (kind != TOKENIZER_WORDPIECE && kind != TOKENIZER_BPE)
		return err_set(e, "unknown tokenizer kind %d", (int)kind);
	struct stat sb;
	if (stat(dir, &sb) < 0)
		return err_set(e, "%s: %s", dir, strerror(errno));
	if (!S_ISDIR(sb.st_mode))
		return err_set(e, "%s: not a folder", dir);
	struct tokenizer *tok = calloc(1, sizeof *tok);
	struct load_state st = {0};
	if (!tok || tok_vocab_init(&tok->vocab) < 0 || tok_vocab_init(&tok->added) < 0) {
		if (tok) {
			tok_vocab_free(&tok->vocab);
			tok_vocab_free(&tok->added);
		}
		free(tok);
		return err_set(e, "out of memory");
	}
	tok->kind = kind;
	tok->cls_id = tok->sep_id = tok->bos_id = -1;
	/* BertTokenizer's defaults; tokenizer.json and tokenizer_config.json may change them. */
	tok->lower = true;
	tok->strip_accents = -1;
	tok->chinese = true;
	tok->max_chars = 100;
	int rc = -1;
	st.kind = kind;
	if (kind == TOKENIZER_WORDPIECE) {
		if (spec_set(&st.roles[ROLE_UNK], "[UNK]", true, true, e) < 0 ||
		    spec_set(&st.roles[ROLE_SEP], "[SEP]", true, true, e) < 0 ||
		    spec_set(&st.roles[ROLE_PAD], "[PAD]", true, true, e) < 0 ||
		    spec_set(&st.roles[ROLE_CLS], "[CLS]", true, true, e) < 0 ||
		    spec_set(&st.roles[ROLE_MASK], "[MASK]", true, true, e) < 0)
			goto out;
	} else {
		/* GPT2Tokenizer wraps its defaults in AddedToken(lstrip=False, rstrip=False) */
		for (int r = ROLE_BOS; r <= ROLE_UNK; r++)
			if (spec_set(&st.roles[r], "<|endoftext|>", false, false, e) < 0)
				goto out;
	}
	if (load_model_files(tok, dir, &st, e) < 0 || load_config(tok, dir, &st, e) < 0 ||
	    read_added_tokens_file(tok, &st, dir, e) < 0)
		goto out;
	if (!tok->prefix && !(tok->prefix = strdup("##"))) {
		err_set(e, "out of memory");
		goto out;
	}
	if ((tok->unk_id = required_id(tok, &st, ROLE_UNK, e)) < 0)
		goto out;
	if (kind == TOKENIZER_WORDPIECE && ((tok->cls_id = required_id(tok, &st, ROLE_CLS, e)) < 0 ||
					    (tok->sep_id = required_id(tok, &st, ROLE_SEP, e)) < 0))
		goto out;
	if (kind == TOKENIZER_BPE && tok->add_bos_token && (tok->bos_id = required_id(tok, &st, ROLE_BOS, e)) < 0)
		goto out;
	if (collect_specials(tok, &st, e) < 0)
		goto out;
	rc = 0;
out:
	for (int r = 0; r < N_ROLES; r++)
		spec_clear(&st.roles[r]);
	spec_list_free(st.extra, st.n_extra);
	spec_list_free(st.json_special, st.n_json_special);
	spec_list_free(st.added, st.n_added);
	free(st.vocab_path);
	if (rc < 0) {
		tokenizer_free(tok);
		return -1;
	}
	*out = tok;
	return 0;
}

void tokenizer_free(struct tokenizer *tok)
{
	if (!tok)
		return;
	wordpiece_free(tok);
	bpe_free(tok);
	for (int i = 0; i < tok->n_specials; i++)
		free(tok->specials[i].text);
	free(tok->specials);
	tok_vocab_free(&tok->vocab);
	tok_vocab_free(&tok->added);
	free(tok);
}

/* ---------------------------------------------------------------- encoding */

/* The special token HF's Trie.split finds at byte I: the longest one starting there, or -1. */
static int special_at(const struct tokenizer *tok, const char *s, size_t len, size_t i)
{
	int best = -1;
	for (int k = 0; k < tok->n_specials; k++) {
		const struct tok_special *sp = &tok->specials[k];
		if (sp->len <= len - i && (unsigned char)s[i] == (unsigned char)sp->text[0] &&
		    memcmp(s + i, sp->text, sp->len) == 0 && (best < 0 || sp->len > tok->specials[best].len))
			best = k;
	}
	return best;
}

/* HF's tokenize() for tokenizers with do_lower_case: re.sub of "(special|special|...)|(.+?)"
 * keeps special tokens and lower-cases every other character on its own (so no final-sigma
 * rule), '\n' excepted because '.' does not match it. The alternation takes the first special
 * token in sorted order that matches, not the longest. */
static char *lower_outside_specials(const struct tokenizer *tok, const char *s, size_t len, size_t *olen)
{
	if (len > (SIZE_MAX - 1) / 3)
		return NULL;
	char *o = malloc(len * 3 + 1); /* lower case is never more than 3 times longer in UTF-8 */
	if (!o)
		return NULL;
	size_t n = 0;
	for (size_t i = 0; i < len;) {
		int k;
		for (k = 0; k < tok->n_specials; k++)
			if (tok->specials[k].len <= len - i && memcmp(s + i, tok->specials[k].text, tok->specials[k].len) == 0)
				break;
		if (k < tok->n_specials) {
			memcpy(o + n, s + i, tok->specials[k].len);
			n += tok->specials[k].len;
			i += tok->specials[k].len;
			continue;
		}
		uint32_t cp;
		int w = utf8_decode(s + i, &cp);
		if (cp == '\n') {
			o[n++] = '\n';
		} else {
			n += (size_t)utf8_py_lower(cp, o + n);
		}
		i += (size_t)w;
	}
	o[n] = '\0';
	*olen = n;
	return o;
}

/* Python's str.lstrip() / str.rstrip() on a UTF-8 range. */
static void py_strip(const char *s, size_t *start, size_t *end, bool left, bool right)
{
	uint32_t cp;
	while (left && *start < *end) {
		int w = utf8_decode(s + *start, &cp);
		if (!utf8_is_py_space(cp))
			break;
		*start += (size_t)w;
	}
	while (right && *end > *start) {
		size_t b = *end - 1;
		while (b > *start && ((unsigned char)s[b] & 0xC0) == 0x80)
			b--;
		utf8_decode(s + b, &cp);
		if (!utf8_is_py_space(cp))
			break;
		*end = b;
	}
}

struct text_part {
	size_t start, end; /* byte range */
	int special;       /* index into tok->specials, or -1 for text */
};

/* PreTrainedTokenizer.tokenize on one text: split out special tokens, strip around them as
 * their flags say, and run the model's tokenizer on the rest. */
static int encode_one(const struct tokenizer *tok, const char *text, const char *which, struct tok_ids *out,
		      struct err *e)
{
	size_t len = strlen(text);
	size_t bad = utf8_check(text, len);
	if (bad < len)
		return err_set(e, "invalid UTF-8 at byte %zu%s", bad, which);
	char *buf = NULL;
	const char *s = text;
	if (tok->kind == TOKENIZER_BPE && tok->add_prefix_space) {
		if (!(buf = malloc(len + 2)))
			return err_set(e, "out of memory");
		buf[0] = ' ';
		memcpy(buf + 1, text, len + 1);
		s = buf, len++;
	} else if (tok->kind == TOKENIZER_WORDPIECE && tok->lower) {
		if (!(buf = lower_outside_specials(tok, text, len, &len)))
			return err_set(e, "out of memory");
		s = buf;
	}
	struct text_part *parts = NULL;
	int np = 0, cap = 0, rc = -1;
	size_t start = 0;
	for (size_t i = 0; i <= len;) {
		int k = i < len ? special_at(tok, s, len, i) : -1;
		if (k < 0 && i < len) {
			i++;
			continue;
		}
		if (np + 2 > cap) {
			cap = cap ? cap * 2 : 16;
			struct text_part *n = realloc(parts, (size_t)cap * sizeof *n);
			if (!n) {
				err_set(e, "out of memory");
				goto out;
			}
			parts = n;
		}
		if (start < i)
			parts[np++] = (struct text_part){start, i, -1};
		if (k < 0)
			break;
		parts[np++] = (struct text_part){i, i + tok->specials[k].len, k};
		i += tok->specials[k].len;
		start = i;
	}
	for (int p = 0; p < np; p++) {
		if (parts[p].special < 0)
			continue;
		const struct tok_special *sp = &tok->specials[parts[p].special];
		if (sp->rstrip && p + 1 < np && parts[p + 1].special < 0)
			py_strip(s, &parts[p + 1].start, &parts[p + 1].end, true, false);
		if (sp->lstrip && p > 0 && parts[p - 1].special < 0)
			py_strip(s, &parts[p - 1].start, &parts[p - 1].end, false, true);
	}
	for (int p = 0; p < np; p++) {
		if (parts[p].special >= 0) {
			const struct tok_special *sp = &tok->specials[parts[p].special];
			if (tok_ids_push(out, sp->id, sp->special) < 0) {
				err_set(e, "out of memory");
				goto out;
			}
			continue;
		}
		if (parts[p].start == parts[p].end)
			continue;
		int r = tok->kind == TOKENIZER_WORDPIECE
			? wordpiece_encode(tok, s + parts[p].start, parts[p].end - parts[p].start, out, e)
			: bpe_encode(tok, s + parts[p].start, parts[p].end - parts[p].start, out, e);
		if (r < 0)
			goto out;
	}
	rc = 0;
out:
	free(parts);
	free(buf);
	return rc;
}

/* HF's truncate_sequences with 'longest_first', truncating on the right. */
static int truncate_longest_first(struct tok_ids *a, struct tok_ids *b, bool pair, int max_len, int n_special,
				  bool *truncated, struct err *e)
{
	int total = a->n + b->n + n_special;
	*truncated = false;
	if (max_len <= 0 || total <= max_len)
		return 0;
	int remove = total - max_len;
	if (pair) {
		if (max_len < n_special)
			return err_set(e, "max_len %d is too small for a text pair (%d special tokens)", max_len, n_special);
		/* one token at a time from the longer sequence, from the second one on a tie */
		for (int k = 0; k < remove; k++) {
			if (a->n > b->n)
				a->n--;
			else if (b->n > 0)
				b->n--;
		}
	} else {
		/* HF refuses (and returns every token) when nothing of the text would be left */
		if (a->n <= remove)
			return err_set(e, "max_len %d is too small: it leaves no room for the text", max_len);
		a->n -= remove;
	}
	*truncated = true;
	return 0;
}

static int list_alloc(const struct tokenizer *tok, struct token_list *out, const int32_t *ids, int n)
{
	size_t bytes = (size_t)n * sizeof(char *) + 1;
	for (int i = 0; i < n; i++) {
		const char *p = tokenizer_id_to_token(tok, ids[i]);
		bytes += (p ? strlen(p) : 0) + 1;
	}
	out->ids = malloc((size_t)n * sizeof *out->ids + 1);
	out->type_ids = malloc((size_t)n * sizeof *out->type_ids + 1);
	out->special = malloc((size_t)n * sizeof *out->special + 1);
	out->pieces = malloc(bytes); /* the pointers, then the strings they point to: one free() */
	if (!out->ids || !out->type_ids || !out->special || !out->pieces)
		return -1;
	char *str = (char *)(out->pieces + n);
	for (int i = 0; i < n; i++) {
		const char *p = tokenizer_id_to_token(tok, ids[i]);
		size_t l = p ? strlen(p) : 0;
		memcpy(str, p ? p : "", l + 1);
		out->pieces[i] = str;
		str += l + 1;
	}
	return 0;
}

int tokenizer_encode(const struct tokenizer *tok, const char *text, const char *text_b, int max_len,
		     struct token_list *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	if (!tok || !text)
		return err_set(e, "no tokenizer or no text");
	struct tok_ids a = {0}, b = {0}, all = {0};
	bool pair = text_b != NULL;
	int rc = -1;
	if (encode_one(tok, text, "", &a, e) < 0 || (pair && encode_one(tok, text_b, " of the second text", &b, e) < 0))
		goto out;
	bool wp = tok->kind == TOKENIZER_WORDPIECE, bos = !wp && tok->add_bos_token;
	int n_special = wp ? (pair ? 3 : 2) : bos ? (pair ? 2 : 1) : 0;
	if (a.n > (1 << 28) || b.n > (1 << 28)) {
		err_set(e, "text too long");
		goto out;
	}
	int total = a.n + b.n + n_special;
	bool truncated;
	if (truncate_longest_first(&a, &b, pair, max_len, n_special, &truncated, e) < 0)
		goto out;
	/* BERT: [CLS] a [SEP] (b [SEP]); GPT-2: a b, or bos a (bos b) with add_bos_token */
	int n_first = 0;
	bool ok = true;
	if (wp || bos)
		ok = tok_ids_push(&all, wp ? tok->cls_id : tok->bos_id, true) == 0;
	for (int i = 0; ok && i < a.n; i++)
		ok = tok_ids_push(&all, a.ids[i], a.special[i]) == 0;
	if (ok && wp)
		ok = tok_ids_push(&all, tok->sep_id, true) == 0;
	n_first = all.n;
	if (ok && bos && pair)
		ok = tok_ids_push(&all, tok->bos_id, true) == 0;
	for (int i = 0; ok && i < b.n; i++)
		ok = tok_ids_push(&all, b.ids[i], b.special[i]) == 0;
	if (ok && wp && pair)
		ok = tok_ids_push(&all, tok->sep_id, true) == 0;
	if (!ok || list_alloc(tok, out, all.ids, all.n) < 0) {
		token_list_free(out);
		err_set(e, "out of memory");
		goto out;
	}
	out->n = all.n;
	for (int i = 0; i < all.n; i++) {
		out->ids[i] = all.ids[i];
		out->special[i] = all.special[i];
		/* HF's GPT2Tokenizer returns no token_type_ids, so GPT-2 gets 0 throughout */
		out->type_ids[i] = wp && i >= n_first ? 1 : 0;
	}
	out->truncated = truncated;
	out->n_before_truncation = total;
	rc = 0;
out:
	tok_ids_free(&a);
	tok_ids_free(&b);
	tok_ids_free(&all);
	return rc;
}

void token_list_free(struct token_list *list)
{
	if (!list)
		return;
	free(list->ids);
	free(list->pieces);
	free(list->type_ids);
	free(list->special);
	memset(list, 0, sizeof *list);
}

int tokenizer_vocab_size(const struct tokenizer *tok)
{
	return tok->vocab.n_ids > tok->added.n_ids ? tok->vocab.n_ids : tok->added.n_ids;
}

const char *tokenizer_id_to_token(const struct tokenizer *tok, int32_t id)
{
	if (id >= 0 && id < tok->added.n_ids && tok->added.id_str[id])
		return tok->added.id_str[id];
	if (id >= 0 && id < tok->vocab.n_ids)
		return tok->vocab.id_str[id];
	return NULL;
}

int32_t tokenizer_token_to_id(const struct tokenizer *tok, const char *s)
{
	return tok_token_id(tok, s, strlen(s));
}
