/* tok-internal.h -- what the tokenizer's files share: the tokenizer struct, the vocabulary
 * table, the growing id list, the file helpers and the stages of the tokenizer.json pipeline.
 * Private to tokenizer.c and the tok-*.c files; everyone else uses tokenizer.h.
 *
 * The files form layers, each calling only those below it (no cycle between them):
 *   tokenizer.c                       dispatches to the kinds, assembles and truncates
 *   tok-config.c, tok-json.c          special tokens and configuration; the tokenizer.json pipeline
 *   tok-wordpiece.c, tok-bpe.c, tok-spm.c, tok-unigram.c, tok-normalize.c, tok-pretok.c,
 *   tok-post.c, tok-jsonfast.c, tok-regex.c   the models and pipeline stages (tok-bpe.c frees what
 *                                     tok-jsonfast.c read; the normalizer and pre-tokenizer use tok-regex.c)
 *   tok-util.c, tok-vocab.c           file and JSON helpers, byte strings; vocabularies and id <-> token
 * Character classes and UTF-8 are base/utf8.c, whole-file reads base/file.c. */
#ifndef ATTNSCOPE_TOK_INTERNAL_H
#define ATTNSCOPE_TOK_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "tokenizer/tokenizer.h"

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
/* The fast path of that on the JSON text BUF[0..LEN) (valid UTF-8): 0, -1 when the text is not
 * a plain {"token": id, ...} (jansson must judge it), -2 when out of memory. */
int tok_vocab_load_flat(struct tok_vocab *v, const char *buf, size_t len);
/* Decode the JSON string at *P (just after its opening quote) into OUT (room for as many bytes
 * as the source); *P moves past the closing quote. Its length, or -1 for anything unusual. */
long tok_vocab_json_string(const char **p, const char *end, char *out);

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
struct tok_json;       /* tok-json.c */
struct spm_model;      /* spm-shim.h */

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

	/* tokenizer.json (TOKENIZER_JSON): the pipeline; NULL for the other kinds and for a
	 * TOKENIZER_JSON folder that only has vocab.json + merges.txt */
	struct tok_json *json;

	/* SentencePiece kinds (TOKENIZER_XLMR, TOKENIZER_ALBERT, TOKENIZER_DEBERTA_V2): tok-spm.c.
	 * do_lower_case is `lower` above. */
	struct spm_model *spm;         /* the .model file, through spm-shim.h */
	bool remove_space;             /* ALBERT: collapse whitespace runs, strip the ends */
	bool keep_accents;             /* ALBERT: false = NFKD and drop combining marks */
	bool split_by_punct;           /* DeBERTa-v2: encode each punctuation character on its own */

	/* Encoder-decoder kinds (TOKENIZER_T5 ... TOKENIZER_PEGASUS): tok-spm.c, tok-langs.c */
	struct spm_model *spm_target;  /* Marian: target.spm, for tokenizer_encode_target */
	int32_t eos_id;                /* the </s> every text ends with (its place varies), else -1 */
	int32_t class_unk_id;          /* the class's _convert_token_to_id for a piece it lacks */
	int extra_ids;                 /* T5: tokenizer_config.json's extra_ids (100) */
	bool legacy;                   /* T5: legacy (true in 4.31); NLLB: legacy_behaviour (false) */
	bool mbart50;                  /* TOKENIZER_MBART whose tokenizer_class is MBart50Tokenizer: 52 codes,
	                                * lang a </s> on both sides */
	bool wmt21;                    /* TOKENIZER_M2M100 with language_codes "wmt21": its 8 codes, not 100 */
	int32_t lang_base;             /* mBART/NLLB/M2M100: id of the first language code, else -1 */
	int src_lang, tgt_lang;        /* mBART/NLLB/M2M100: index of the codes (tok_lang_codes), -1 none */
};

/* A growing list of ids, the output of the model-specific tokenizers. */
struct tok_ids {
	int32_t *ids;   /* [n] */
	bool *special;  /* [n] */
	int n, cap;
};

int tok_ids_push(struct tok_ids *l, int32_t id, bool special);
void tok_ids_free(struct tok_ids *l);

/* ---- tok-util.c: helpers for the loaders (with tok-vocab.c, the bottom of the tokenizer) ---- */

/* Parse PATH as JSON (FLAGS for json_loadb) within jsoncap.h's bounds; errors name PATH with line
 * and column. (Other files are read with file_read_all, at most TOK_MAX_FILE_BYTES.) */
json_t *tok_load_json(const char *path, size_t flags, struct err *e);
bool tok_file_exists(const char *path);
/* "DIR/NAME", malloc'd; NULL when out of memory. */
char *tok_path_join(const char *dir, const char *name);
/* Read the text file PATH (at most TOK_MAX_FILE_BYTES) into *BUF (malloc'd, NUL-terminated) as Python
 * opens one in text mode: it must be valid UTF-8, and "\r\n" and lone "\r" become "\n" (universal
 * newlines); *LEN is the length after that. */
int tok_read_text(const char *path, char **buf, size_t *len, struct err *e);

/* ---- tok-vocab.c: a tokenizer's lookups ---- */

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
/* tokenizer_config.json's tokenizer_class in DIR into OUT[0..N) ("" when absent); before loading
 * the model, for the classes whose ids depend on it (MBart50Tokenizer). */
int tok_config_peek_class(const char *dir, char *out, size_t n, struct err *e);
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
/* Greedy longest-match WordPiece of one word (tokenizers' WordPiece model); -1 when out of memory. */
int wordpiece_word(const struct tokenizer *tok, const char *w, size_t len, struct tok_ids *out);
void wordpiece_free(struct tokenizer *tok);

/* ---- tok-bpe.c ---- */
/* tokenizer.json's BPE model (byte-level or SentencePiece-style): vocabulary, merges keyed on
 * vocabulary ids, and the options in tok->json. */
int bpe_json_load(struct tokenizer *tok, json_t *model, struct err *e);
/* The BPE model on one pre-tokenized word, as tokenizers' BPE::tokenize. */
int bpe_json_word(const struct tokenizer *tok, const char *w, size_t len, struct tok_ids *out, struct err *e);
int bpe_load_files(struct tokenizer *tok, const char *vocab_path, const char *merges_path, struct err *e);
int bpe_load_json(struct tokenizer *tok, json_t *root, const char *path, struct err *e);
/* Regex pre-tokenization + byte-level BPE of one stretch of text without special tokens. */
int bpe_encode(const struct tokenizer *tok, const char *s, size_t len, struct tok_ids *out, struct err *e);
void bpe_free(struct tokenizer *tok);

/* ---- tok-langs.c: language codes of mBART and NLLB ---- */
/* The codes of TOK's class in id order ([*N]), or NULL (*N = 0) for a class without them. */
const char *const *tok_lang_codes(const struct tokenizer *tok, int *n);
/* The index of CODE among TOK's codes, or -1 (M2M100: "en" or its token "__en__"). */
int tok_lang_find(const struct tokenizer *tok, const char *code);
/* The token of TOK's code I into BUF (M2M100: "__en__"; the others: the code itself). */
const char *tok_lang_token(const struct tokenizer *tok, int i, char *buf, size_t n);

/* ---- tok-spm.c: the SentencePiece kinds ---- */
/* XLM-R, ALBERT, DeBERTa-v2 and the encoder-decoder kinds. */
bool tok_kind_is_spm(enum tokenizer_kind kind);
/* The encoder-decoder kinds: one text, a class template of </s> and language codes. */
bool tok_kind_is_seq2seq(enum tokenizer_kind kind);
/* The file the kind's HF class reads: sentencepiece.bpe.model, spiece.model or spm.model. */
const char *spm_file_name(enum tokenizer_kind kind);
/* Load the .model file PATH into TOK (tok->spm, and tok->vocab as HF's ids and pieces). Marian:
 * PATH is source.spm; target.spm and vocab.json are read beside it. */
int spm_load(struct tokenizer *tok, const char *path, struct err *e);
/* HF's _tokenize + convert_tokens_to_ids on one stretch of text without special tokens; TARGET:
 * as the class does in target mode (Marian: target.spm). */
int spm_encode(const struct tokenizer *tok, const char *s, size_t len, bool target, struct tok_ids *out,
	       struct err *e);
/* HF's convert_tokens_to_ids for one token: added tokens, then the class's _convert_token_to_id. */
int32_t spm_token_to_id(const struct tokenizer *tok, const char *s, size_t len);
void spm_free(struct tokenizer *tok);

/* ---- the tokenizer.json pipeline ---- */

/* A growing byte string (tok-util.c). */
struct tok_buf {
	char *s; /* NUL-terminated when not NULL */
	size_t n, cap;
};
int tok_buf_add(struct tok_buf *b, const char *s, size_t n);
void tok_buf_free(struct tok_buf *b);

/* Pieces of text as a pre-tokenizer leaves them, stored one after another in TEXT. */
struct tok_word {
	size_t off, len; /* in text.s */
	bool first;      /* starts at offset 0 of the original text (Metaspace's prepend_scheme "first") */
};
struct tok_words {
	struct tok_buf text;
	struct tok_word *w; /* [n] */
	int n, cap;
};
int tok_words_add(struct tok_words *l, const char *s, size_t len, bool first);
void tok_words_free(struct tok_words *l);

/* ---- tok-regex.c: patterns of tokenizer.json (Oniguruma syntax) run by PCRE2 ---- */
struct tok_regex;
/* Compile PATTERN (a regex, or with LITERAL a plain string); errors say what is wrong with it. */
struct tok_regex *tok_regex_new(const char *pattern, size_t len, bool literal, struct err *e);
void tok_regex_free(struct tok_regex *re);
/* One match: [start, end) in bytes, and whether it is a match or the text between two. */
struct tok_span {
	size_t start, end;
	bool match;
};
/* Cover S[0..LEN) with matches and the stretches between them, as tokenizers' Pattern::find_matches;
 * *OUT is malloc'd ([*N]). */
int tok_regex_spans(const struct tok_regex *re, const char *s, size_t len, struct tok_span **out, int *n,
		    struct err *e);

/* ---- tok-normalize.c ---- */
struct tok_norm;
/* The normalizer J (NULL or JSON null: none); errors name the unsupported type or option. */
int tok_norm_load(json_t *j, struct tok_norm **out, struct err *e);
/* Normalize S[0..LEN) into OUT (emptied first). */
int tok_norm_run(const struct tok_norm *n, const char *s, size_t len, struct tok_buf *out, struct err *e);
void tok_norm_free(struct tok_norm *n);

/* ---- tok-pretok.c ---- */
struct tok_pretok;
int tok_pretok_load(json_t *j, struct tok_pretok **out, struct err *e);
/* Split (and rewrite) every word of IN; the result replaces IN. */
int tok_pretok_run(const struct tok_pretok *p, struct tok_words *in, struct err *e);
void tok_pretok_free(struct tok_pretok *p);
/* tokenizers' ByteLevel alphabet: the code point standing for byte B. */
uint32_t tok_byte_char(unsigned char b);

/* ---- tok-unigram.c ---- */
struct tok_unigram;
int unigram_load(struct tokenizer *tok, json_t *model, struct tok_unigram **out, struct err *e);
int unigram_word(const struct tokenizer *tok, const struct tok_unigram *u, const char *w, size_t len,
		 struct tok_ids *out, struct err *e);
void unigram_free(struct tok_unigram *u);

/* ---- tok-post.c: post-processors as one template ---- */
struct tok_post;
/* The post_processor J of a tokenizer.json (NULL or null: none); special token ids resolved
 * in TOK. */
int tok_post_load(const struct tokenizer *tok, json_t *j, struct tok_post **out, struct err *e);
/* transformers' LlamaTokenizerFast.update_post_processor: [bos] $A [eos] / [bos] $A [eos] [bos] $B [eos]. */
int tok_post_bos_eos(int32_t bos, int32_t eos, struct tok_post **out, struct err *e);
bool tok_post_has_pair(const struct tok_post *p);
/* Special tokens the template adds around one text or a pair. */
int tok_post_added(const struct tok_post *p, bool pair);
/* Assemble A (and B when PAIR) into OUT with TYPES ([out->n] after the call, allocated by the caller
 * for a->n + b->n + tok_post_added). Without a template: A then B, types 0 then 1. */
int tok_post_apply(const struct tok_post *p, const struct tok_ids *a, const struct tok_ids *b, bool pair,
		   struct tok_ids *out, int32_t *types);
void tok_post_free(struct tok_post *p);

/* ---- tok-jsonfast.c: tokenizer.json's big members read without jansson ---- */

/* Merge rules: rule i is text[off[4i] .. +off[4i+1]) and text[off[4i+2] .. +off[4i+3]). */
struct tok_fast_merges {
	char *text;
	uint32_t *off;
	size_t n;
};
struct tok_json;
/* What jansson reads once the fast reader took model.vocab and model.merges: the file with each taken
 * value cut down to an empty {} / [], and where the cuts are, to give jansson's errors the file's line
 * and column. */
struct tok_json_rest {
	char *text; /* allocated; NULL: nothing taken, jansson reads the file itself */
	size_t len;
	int n_cuts;
	size_t cut_at[2];      /* in TEXT, ascending: the byte after a cut's {} or [] */
	size_t cut_removed[2]; /* how many of the file's bytes the cut dropped there */
};
/* When BUF (a whole tokenizer.json, valid UTF-8) has a plain model.vocab object and model.merges
 * list, read them into TOK and set REST to the rest of the text, for jansson (which took ~1 s for
 * Gemma 3's 262k tokens and 515k merges, and 0.4 s to skip them as blanks). Anything unusual leaves
 * REST empty, for jansson to read and judge BUF whole. Returns -1 only when out of memory. */
int tok_jsonfast_take(struct tokenizer *tok, const char *buf, size_t len, struct tok_json_rest *rest, struct err *e);
/* Line and column (from 1, the column in characters, as jansson counts them) in BUF, the file REST
 * came from, of the byte at POS of REST's text (a jansson error's position). */
void tok_jsonfast_where(const struct tok_json_rest *rest, const char *buf, size_t pos, int *line, int *column);
void tok_jsonfast_free(struct tok_fast_merges *m);

/* ---- tok-json.c ---- */

/* An added token of tokenizer.json (or tokenizer_config.json), HF's AddedToken. */
struct tok_added {
	char *text; /* content; for a normalized token, the normalized content it is matched as */
	size_t len;
	int32_t id;
	bool special, lstrip, rstrip, single_word, normalized;
};

/* Finds added tokens in a text, leftmost then longest (tokenizers' Aho-Corasick LeftmostLongest). */
struct tok_added_matcher {
	struct tok_vocab index; /* text -> index into tok_json.added */
	uint32_t *lens;         /* [n_lens] distinct token lengths, longest first */
	int n_lens;
	uint8_t first[32];      /* bit set of the bytes a token starts with */
};

enum tok_model_type { TOK_MODEL_BPE, TOK_MODEL_WORDPIECE, TOK_MODEL_UNIGRAM };

struct tok_json {
	enum tok_model_type model;
	struct tok_norm *norm;
	struct tok_pretok *pretok;
	struct tok_post *post;
	struct tok_unigram *unigram;
	/* BPE options */
	bool byte_fallback, fuse_unk, ignore_merges;
	char *subword_prefix, *word_suffix; /* NULL when absent */
	bool has_unk;                       /* model.unk_token names a vocabulary entry (tok->unk_id) */
	bool vocab_read;                    /* model.vocab was read by tok-jsonfast.c */
	struct tok_fast_merges *merges;     /* model.merges as read by tok-jsonfast.c, or NULL */
	struct tok_added *added;            /* [n_added] */
	int n_added;
	struct tok_added_matcher raw, normalized; /* normalized: false / true tokens */
	enum tokenizer_pieces pieces;       /* from the decoder, else the pre-tokenizer and model */
};

int tok_json_load(struct tokenizer *tok, const char *dir, struct err *e);
/* Everything before the post-processor for one text: added tokens, normalizer, pre-tokenizer, model. */
int tok_json_encode_one(const struct tokenizer *tok, const char *text, size_t len, struct tok_ids *out,
			struct err *e);
void tok_json_free(struct tokenizer *tok);

#endif
