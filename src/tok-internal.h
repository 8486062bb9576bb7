/* tok-internal.h -- what the tokenizer's files share: the tokenizer struct, the vocabulary
 * table, the growing id list and the file helpers. Private to tokenizer.c, tok-config.c,
 * tok-vocab.c, tok-wordpiece.c and tok-bpe.c; everyone else uses tokenizer.h. */
#ifndef ATTNSCOPE_TOK_INTERNAL_H
#define ATTNSCOPE_TOK_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "err.h"
#include "tokenizer.h"

/* Limits checked before allocating anything sized by a file. */
#define TOK_MAX_FILE_BYTES ((size_t)64 << 20) /* tokenizer.json of 250k-token vocabularies is ~20-35 MB */
#define TOK_MAX_IDS (1 << 22)                  /* largest vocabularies have ~260k entries; each entry
                                                * costs ~100 bytes, so this caps a table at ~400 MB */

/* ---- tok-vocab.c: a string <-> id table (hash on the bytes, strings kept in an arena) ---- */

struct tok_arena_block;

struct tok_vocab_slot {
	const char *s;  /* the entry's bytes (NUL-terminated, in the arena); NULL for an empty slot */
	uint32_t len;   /* bytes in s */
	uint32_t hash;
	int32_t id;
};

struct tok_vocab {
	int32_t n_ids;                /* ids run 0 .. n_ids-1 */
	int32_t id_cap;               /* allocated entries of id_str / id_len */
	const char **id_str;          /* [id_cap] string of each id (NULL where none), in the arena */
	uint32_t *id_len;             /* [id_cap] its length in bytes */
	uint32_t n_entries;           /* distinct strings */
	uint32_t mask;                /* slot count - 1 (slot count a power of two) */
	struct tok_vocab_slot *slots; /* [mask+1] open addressing, linear probing */
	struct tok_arena_block *arena;
};

int tok_vocab_init(struct tok_vocab *v);
void tok_vocab_free(struct tok_vocab *v);
/* Make room for N_ENTRIES strings without rehashing; -1 when out of memory. */
int tok_vocab_reserve(struct tok_vocab *v, size_t n_entries);
/* The id of S[0..LEN), or -1. */
int32_t tok_vocab_get(const struct tok_vocab *v, const char *s, size_t len);
/* Map S to ID; a string seen before takes the new id (like a Python dict), an id seen before
 * takes the new string. Returns 0, or -1 when out of memory. */
int tok_vocab_set(struct tok_vocab *v, const char *s, size_t len, int32_t id);
/* The id of S, adding it as the next id when absent; -1 when out of memory. */
int32_t tok_vocab_intern(struct tok_vocab *v, const char *s, size_t len);
/* Fill V from a JSON object {"token": id, ...} (vocab.json, tokenizer.json's model.vocab). */
int tok_vocab_from_json(struct tok_vocab *v, json_t *obj, struct err *e);
/* The same from a vocab.json file, quickly; errors name PATH. */
int tok_vocab_load_json_file(struct tok_vocab *v, const char *path, struct err *e);

/* ---- the tokenizer ---- */

/* A token split out of the text before the model's own tokenizer sees it (HF's "no split"
 * tokens): "[CLS]" typed in the text becomes the [CLS] id. Special tokens, and the
 * non-special tokens of added_tokens.json. */
struct tok_special {
	char *text;    /* UTF-8 */
	size_t len;
	int32_t id;
	bool lstrip;   /* eats the whitespace on its left (HF AddedToken.lstrip) */
	bool rstrip;   /* eats the whitespace on its right */
	bool special;  /* a special token (reported in token_list.special), not just an added one */
};

struct tok_merge_slot; /* tok-bpe.c */

struct tokenizer {
	enum tokenizer_kind kind;
	struct tok_vocab vocab;        /* the model's vocabulary: what WordPiece and BPE look pieces up in */
	struct tok_vocab added;        /* tokens added beside it (added_tokens.json, tokenizer.json's
	                                * added_tokens), found first when a token is turned into an id */
	int32_t unk_id;                /* used for anything the vocabulary lacks */
	int32_t cls_id, sep_id;        /* WordPiece only, -1 for BPE */
	struct tok_special *specials;  /* [n_specials] no-split tokens sorted by bytes, as HF sorts them */
	int n_specials;

	/* WordPiece (BERT) */
	bool lower;                    /* do_lower_case: str.lower() then, unless strip_accents is false, NFD + drop Mn */
	int strip_accents;             /* -1 unset (follows lower), 0 false, 1 true */
	bool chinese;                  /* tokenize_chinese_chars: spaces around CJK ideographs */
	int max_chars;                 /* max_input_chars_per_word: longer words become unk */
	char *prefix;                  /* continuing_subword_prefix, "##" */
	char **never_split;            /* [n_never_split] tokenizer_config.json's never_split */
	int n_never_split;

	/* BPE (GPT-2) */
	bool add_prefix_space;         /* prepend " " to each text (tokenizer_config.json) */
	bool add_bos_token;            /* put bos before each text (tokenizer_config.json) */
	int32_t bos_id;                /* its id when add_bos_token, else -1 */
	void *regex;                   /* pcre2_code* of the pre-tokenizer pattern */
	struct tok_vocab syms;         /* every symbol BPE can produce: 256 byte symbols + merge results */
	int32_t byte_sym[256];         /* symbol of each byte (bytes_to_unicode) */
	struct tok_merge_slot *merges; /* [merge_mask+1] (left symbol, right symbol) -> rank, result */
	uint32_t merge_mask;
	int32_t n_merges;
};

/* A growing list of ids, the output of the model-specific tokenizers. */
struct tok_ids {
	int32_t *ids;   /* [n] */
	bool *special;  /* [n] */
	int n, cap;
};

int tok_ids_push(struct tok_ids *l, int32_t id, bool special);
void tok_ids_free(struct tok_ids *l);

/* ---- tokenizer.c: helpers for the loaders ---- */

/* Read all of PATH (at most TOK_MAX_FILE_BYTES) into a NUL-terminated buffer. Errors name PATH. */
int tok_read_file(const char *path, char **out, size_t *len, struct err *e);
/* Parse PATH as JSON (FLAGS for json_loadb); errors name PATH with line and column. */
json_t *tok_load_json(const char *path, size_t flags, struct err *e);
bool tok_file_exists(const char *path);
/* "DIR/NAME", malloc'd; NULL when out of memory. */
char *tok_path_join(const char *dir, const char *name);
/* Python's universal newlines: turn "\r\n" and lone "\r" into "\n" in place; returns the new length. */
size_t tok_universal_newlines(char *s, size_t len);
/* The id of token S: an added token first, then the vocabulary (HF's convert_tokens_to_ids); -1. */
int32_t tok_token_id(const struct tokenizer *tok, const char *s, size_t len);
/* Is S[0..LEN) a special token or a configured never_split word? */
bool tok_is_never_split(const struct tokenizer *tok, const char *s, size_t len);

/* ---- tok-config.c: special tokens and configuration files, gathered while loading ---- */
struct tok_config;
/* The tokenizer class's defaults for KIND ([CLS]... or <|endoftext|>). */
struct tok_config *tok_config_new(enum tokenizer_kind kind, struct err *e);
void tok_config_free(struct tok_config *cfg);
/* tokenizer.json's model.unk_token. */
int tok_config_set_unk(struct tok_config *cfg, const char *name, struct err *e);
/* tokenizer.json's added_tokens (ROOT is the whole file). */
int tok_config_json_added(struct tokenizer *tok, struct tok_config *cfg, json_t *root, struct err *e);
/* tokenizer_config.json, special_tokens_map.json and added_tokens.json in DIR, when present;
 * after the vocabulary is loaded. */
int tok_config_read(struct tokenizer *tok, struct tok_config *cfg, const char *dir, struct err *e);
/* Resolve the ids the tokenizer needs (missing ones are errors naming VOCAB_PATH) and build
 * tok->specials. */
int tok_config_finish(struct tokenizer *tok, struct tok_config *cfg, const char *vocab_path, struct err *e);

/* ---- tok-wordpiece.c ---- */
int wordpiece_load_vocab_txt(struct tokenizer *tok, const char *path, struct err *e);
/* model.vocab / unk_token / prefix / max chars and the BertNormalizer flags of a tokenizer.json. */
int wordpiece_load_json(struct tokenizer *tok, json_t *root, const char *path, char **unk_name, struct err *e);
/* BasicTokenizer + WordPiece of one stretch of text without special tokens (valid UTF-8). */
int wordpiece_encode(const struct tokenizer *tok, const char *s, size_t len, struct tok_ids *out, struct err *e);
void wordpiece_free(struct tokenizer *tok);

/* ---- tok-bpe.c ---- */
int bpe_load_files(struct tokenizer *tok, const char *vocab_path, const char *merges_path, struct err *e);
int bpe_load_json(struct tokenizer *tok, json_t *root, const char *path, struct err *e);
/* Regex pre-tokenization + byte-level BPE of one stretch of text without special tokens. */
int bpe_encode(const struct tokenizer *tok, const char *s, size_t len, struct tok_ids *out, struct err *e);
void bpe_free(struct tokenizer *tok);

#endif
