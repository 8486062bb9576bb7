/* tok-vocab.c -- the vocabulary table: token string <-> id in O(1), strings kept in an arena;
 * the growing id list; and a tokenizer's id <-> token lookups over its vocabulary and added tokens.
 *
 * Used for the model vocabularies (30k-250k entries) and for the BPE symbol table, so loading
 * GPT-2's 50k vocabulary and merges is a few milliseconds of hashing, not linear scans. With
 * tok-util.c the bottom of the tokenizer's files: it calls nothing above it. */
#include "base/jsoncap.h"
#include "base/file.h"
#include "tokenizer/tok-internal.h"
#include "base/utf8.h"

#include <stdlib.h>
#include <string.h>

/* Strings are bump-allocated from blocks of at least this many bytes. */
#define ARENA_BLOCK 65536

struct tok_arena_block {
	struct tok_arena_block *next;
	size_t used, cap;
	char data[]; /* [cap] */
};

static char *vocab_arena_copy(struct tok_vocab *v, const char *s, size_t len)
{
	struct tok_arena_block *b = v->arena;
	if (!b || b->cap - b->used < len + 1) {
		size_t cap = len + 1 > ARENA_BLOCK ? len + 1 : ARENA_BLOCK;
		b = malloc(sizeof *b + cap);
		if (!b)
			return NULL;
		b->next = v->arena;
		b->used = 0;
		b->cap = cap;
		v->arena = b;
	}
	char *p = b->data + b->used;
	memcpy(p, s, len);
	p[len] = '\0';
	b->used += len + 1;
	return p;
}

static uint32_t vocab_hash(const char *s, size_t len)
{
	/* FNV-1a, then a final mix so linear probing sees well-spread low bits. */
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	return h;
}

int tok_vocab_init(struct tok_vocab *v)
{
	memset(v, 0, sizeof *v);
	v->mask = 1023;
	v->slots = calloc(v->mask + 1, sizeof *v->slots);
	return v->slots ? 0 : -1;
}

void tok_vocab_free(struct tok_vocab *v)
{
	struct tok_arena_block *b = v->arena;
	while (b) {
		struct tok_arena_block *next = b->next;
		free(b);
		b = next;
	}
	free(v->slots);
	free(v->id_str);
	free(v->id_len);
	memset(v, 0, sizeof *v);
}

static struct tok_vocab_slot *vocab_find_slot(const struct tok_vocab *v, const char *s, size_t len, uint32_t h)
{
	for (uint32_t i = h & v->mask;; i = (i + 1) & v->mask) {
		struct tok_vocab_slot *sl = &v->slots[i];
		if (!sl->s || (sl->hash == h && sl->len == len && memcmp(sl->s, s, len) == 0))
			return sl;
	}
}

int32_t tok_vocab_get(const struct tok_vocab *v, const char *s, size_t len)
{
	if (!v->slots || len > UINT32_MAX)
		return -1;
	const struct tok_vocab_slot *sl = vocab_find_slot(v, s, len, vocab_hash(s, len));
	return sl->s ? sl->id : -1;
}

static int vocab_grow_slots(struct tok_vocab *v)
{
	uint32_t ncap = (v->mask + 1) * 2;
	struct tok_vocab_slot *old = v->slots, *ns = calloc(ncap, sizeof *ns);
	if (!ns)
		return -1;
	uint32_t omask = v->mask;
	v->slots = ns;
	v->mask = ncap - 1;
	for (uint32_t i = 0; i <= omask; i++) {
		if (!old[i].s)
			continue;
		uint32_t j = old[i].hash & v->mask;
		while (ns[j].s)
			j = (j + 1) & v->mask;
		ns[j] = old[i];
	}
	free(old);
	return 0;
}

int tok_vocab_reserve(struct tok_vocab *v, size_t n_entries)
{
	if (n_entries > TOK_MAX_IDS)
		return -1;
	while ((n_entries + 1) * 2 > (size_t)v->mask + 1)
		if (vocab_grow_slots(v) < 0)
			return -1;
	return 0;
}

static int vocab_reserve_ids(struct tok_vocab *v, int32_t id)
{
	if (id < v->id_cap)
		return 0;
	int32_t cap = v->id_cap ? v->id_cap : 1024;
	while (cap <= id)
		cap *= 2;
	const char **ns = realloc(v->id_str, (size_t)cap * sizeof *ns);
	if (!ns)
		return -1;
	v->id_str = ns;
	uint32_t *nl = realloc(v->id_len, (size_t)cap * sizeof *nl);
	if (!nl)
		return -1;
	v->id_len = nl;
	for (int32_t i = v->id_cap; i < cap; i++) {
		v->id_str[i] = NULL;
		v->id_len[i] = 0;
	}
	v->id_cap = cap;
	return 0;
}

int tok_vocab_set(struct tok_vocab *v, const char *s, size_t len, int32_t id)
{
	if (id < 0 || id >= TOK_MAX_IDS || len >= UINT32_MAX || vocab_reserve_ids(v, id) < 0)
		return -1;
	uint32_t h = vocab_hash(s, len);
	struct tok_vocab_slot *sl = vocab_find_slot(v, s, len, h);
	if (!sl->s) {
		if ((v->n_entries + 1) * 2 > v->mask + 1) {
			if (vocab_grow_slots(v) < 0)
				return -1;
			sl = vocab_find_slot(v, s, len, h);
		}
		const char *copy = vocab_arena_copy(v, s, len);
		if (!copy)
			return -1;
		sl->s = copy;
		sl->len = (uint32_t)len;
		sl->hash = h;
		v->n_entries++;
	}
	sl->id = id;
	v->id_str[id] = sl->s;
	v->id_len[id] = sl->len;
	if (id >= v->n_ids)
		v->n_ids = id + 1;
	return 0;
}

int32_t tok_vocab_intern(struct tok_vocab *v, const char *s, size_t len)
{
	if (len >= UINT32_MAX)
		return -1;
	uint32_t h = vocab_hash(s, len);
	const struct tok_vocab_slot *sl = vocab_find_slot(v, s, len, h); /* one probe when present */
	if (sl->s)
		return sl->id;
	int32_t id = v->n_ids;
	return tok_vocab_set(v, s, len, id) < 0 ? -1 : id;
}

int tok_vocab_from_json(struct tok_vocab *v, json_t *obj, struct err *e)
{
	if (!json_is_object(obj))
		return err_set(e, "the vocabulary is not a JSON object of token ids");
	size_t n = json_object_size(obj);
	if (n == 0)
		return err_set(e, "empty vocabulary");
	/* Check every id before allocating by the largest: a file claiming id 2000000000 for one
	 * token must not make us allocate gigabytes. */
	json_int_t max_id = -1;
	const char *key;
	json_t *val;
	json_object_foreach(obj, key, val) {
		if (!json_is_integer(val))
			return err_set(e, "the id of token \"%.40s\" is not an integer", key);
		json_int_t id = json_integer_value(val);
		if (id < 0 || id >= TOK_MAX_IDS)
			return err_set(e, "the id of token \"%.40s\" is out of range (%lld)", key, (long long)id);
		if (id > max_id)
			max_id = id;
	}
	if ((size_t)max_id >= 2 * n + 1024)
		return err_set(e, "ids are too sparse (largest %lld for %zu tokens)", (long long)max_id, n);
	if (vocab_reserve_ids(v, (int32_t)max_id) < 0 || tok_vocab_reserve(v, n) < 0)
		return err_set(e, "out of memory");
	json_object_foreach(obj, key, val) {
		/* json_object_foreach hands out NUL-terminated keys; tokens with NUL are refused by
		 * the parser, as jansson does by default. */
		if (tok_vocab_set(v, key, strlen(key), (int32_t)json_integer_value(val)) < 0)
			return err_set(e, "out of memory");
	}
	return 0;
}

/* ---- a fast reader for vocab.json ----
 * jansson needs ~80 ms for GPT-2's 50k-entry vocab.json (an allocation per key and value);
 * this reads the flat {"token": id, ...} shape directly in a few ms. Anything it does not
 * expect (floats, nesting, bad escapes, invalid UTF-8...) sends the file to jansson instead,
 * which then either accepts it or reports the error with its line and column. */

struct vocab_flat_reader {
	const char *p, *end;
};

static void vocab_flat_skip_ws(struct vocab_flat_reader *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

static int vocab_flat_hex4(const char *p, uint32_t *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		int d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -1;
		*v = *v << 4 | (uint32_t)d;
	}
	return 0;
}

/* A JSON string at r->p (after the quote) decoded into OUT (room for as many bytes as the
 * source); returns its length, or -1 for anything unusual. */
static long vocab_flat_string(struct vocab_flat_reader *r, char *out)
{
	size_t n = 0;
	while (r->p < r->end) {
		unsigned char c = (unsigned char)*r->p++;
		if (c == '"')
			return (long)n;
		if (c < 0x20)
			return -1;
		if (c != '\\') {
			out[n++] = (char)c;
			continue;
		}
		if (r->p >= r->end)
			return -1;
		char esc = *r->p++, simple = 0;
		switch (esc) {
		case '"': case '\\': case '/': simple = esc; break;
		case 'b': simple = '\b'; break;
		case 'f': simple = '\f'; break;
		case 'n': simple = '\n'; break;
		case 'r': simple = '\r'; break;
		case 't': simple = '\t'; break;
		}
		if (simple) {
			out[n++] = simple;
			continue;
		}
		uint32_t cp, lo;
		if (esc != 'u' || r->end - r->p < 4 || vocab_flat_hex4(r->p, &cp) < 0)
			return -1;
		r->p += 4;
		if (cp >= 0xD800 && cp <= 0xDBFF) {
			if (r->end - r->p < 6 || r->p[0] != '\\' || r->p[1] != 'u' || vocab_flat_hex4(r->p + 2, &lo) < 0 ||
			    lo < 0xDC00 || lo > 0xDFFF)
				return -1;
			r->p += 6;
			cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
		} else if ((cp >= 0xDC00 && cp <= 0xDFFF) || cp == 0) {
			return -1; /* lone surrogate, or NUL which jansson refuses too */
		}
		n += (size_t)utf8_encode(cp, out + n); /* never longer than its 6- or 12-byte escape */
	}
	return -1;
}

/* Read the whole object; with INSERT false only count entries and find the largest id. */
static int vocab_flat_pass(struct tok_vocab *v, const char *buf, size_t len, bool insert, char *scratch, size_t *count,
		     long long *max_id)
{
	struct vocab_flat_reader r = {buf, buf + len};
	*count = 0;
	*max_id = -1;
	vocab_flat_skip_ws(&r);
	if (r.p >= r.end || *r.p++ != '{')
		return -1;
	vocab_flat_skip_ws(&r);
	if (r.p < r.end && *r.p == '}') {
		r.p++;
	} else {
		for (;;) {
			vocab_flat_skip_ws(&r);
			if (r.p >= r.end || *r.p++ != '"')
				return -1;
			long kl = vocab_flat_string(&r, scratch);
			if (kl < 0)
				return -1;
			vocab_flat_skip_ws(&r);
			if (r.p >= r.end || *r.p++ != ':')
				return -1;
			vocab_flat_skip_ws(&r);
			long long id = 0;
			int digits = 0;
			while (r.p < r.end && *r.p >= '0' && *r.p <= '9' && digits < 12) {
				id = id * 10 + (*r.p++ - '0');
				digits++;
			}
			/* leading zeros, signs, fractions or huge numbers: leave them to jansson */
			if (!digits || digits >= 12 || (digits > 1 && r.p[-digits] == '0') ||
			    (r.p < r.end && (*r.p == '.' || *r.p == 'e' || *r.p == 'E' || (*r.p >= '0' && *r.p <= '9'))))
				return -1;
			if (id >= TOK_MAX_IDS)
				return -1;
			if (insert && tok_vocab_set(v, scratch, (size_t)kl, (int32_t)id) < 0)
				return -2;
			(*count)++;
			if (id > *max_id)
				*max_id = id;
			vocab_flat_skip_ws(&r);
			if (r.p < r.end && *r.p == ',') {
				r.p++;
				continue;
			}
			if (r.p < r.end && *r.p == '}') {
				r.p++;
				break;
			}
			return -1;
		}
	}
	vocab_flat_skip_ws(&r);
	return r.p == r.end ? 0 : -1;
}

long tok_vocab_json_string(const char **p, const char *end, char *out)
{
	struct vocab_flat_reader r = {*p, end};
	long n = vocab_flat_string(&r, out);
	*p = r.p;
	return n;
}

int tok_vocab_load_flat(struct tok_vocab *v, const char *buf, size_t len)
{
	char *scratch = malloc(len + 1);
	if (!scratch)
		return -2;
	size_t count;
	long long max_id;
	int rc = vocab_flat_pass(v, buf, len, false, scratch, &count, &max_id);
	if (rc == 0 && (count == 0 || (size_t)max_id >= 2 * count + 1024))
		rc = -1;
	/* the shape is right and the ids are sane: insert for real */
	if (rc == 0 && (vocab_reserve_ids(v, (int32_t)max_id) < 0 || tok_vocab_reserve(v, count) < 0 ||
			vocab_flat_pass(v, buf, len, true, scratch, &count, &max_id) < 0))
		rc = -2;
	free(scratch);
	return rc;
}

int tok_vocab_load_json_file(struct tok_vocab *v, const char *path, struct err *e)
{
	char *buf;
	size_t len;
	if (file_read_all(path, TOK_MAX_FILE_BYTES, 0, &buf, &len, e) < 0)
		return -1;
	int rc = utf8_check(buf, len) == len ? tok_vocab_load_flat(v, buf, len) : -1;
	if (rc == -2) {
		rc = err_set(e, "%s: out of memory", path);
	} else if (rc < 0) {
		/* unusual or wrong: jansson decides, and explains */
		json_error_t je;
		json_t *root = NULL;
		if (jsoncap_nodes(buf, len) > JSONCAP_MAX_NODES) {
			rc = err_set(e, "%s: more than %zu JSON values", path, JSONCAP_MAX_NODES);
		} else if (!(root = json_loadb(buf, len, 0, &je))) {
			rc = err_set(e, "%s: line %d column %d: %s", path, je.line, je.column, je.text);
		} else {
			rc = tok_vocab_from_json(v, root, e);
			if (rc < 0)
				err_prefix(e, "%s", path);
			json_decref(root);
		}
	}
	free(buf);
	return rc;
}

int tok_ids_push(struct tok_ids *l, int32_t id, bool special)
{
	if (l->n == l->cap) {
		if (l->cap > (1 << 28))
			return -1;
		int cap = l->cap ? l->cap * 2 : 64;
		int32_t *ni = realloc(l->ids, (size_t)cap * sizeof *ni);
		if (!ni)
			return -1;
		l->ids = ni;
		bool *ns = realloc(l->special, (size_t)cap * sizeof *ns);
		if (!ns)
			return -1;
		l->special = ns;
		l->cap = cap;
	}
	l->ids[l->n] = id;
	l->special[l->n] = special;
	l->n++;
	return 0;
}

void tok_ids_free(struct tok_ids *l)
{
	free(l->ids);
	free(l->special);
	memset(l, 0, sizeof *l);
}

/* ---------------------------------------------------------------- a tokenizer's lookups */

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

int tokenizer_vocab_size(const struct tokenizer *tok)
{
	return tok->vocab.n_ids > tok->added.n_ids ? tok->vocab.n_ids : tok->added.n_ids;
}
