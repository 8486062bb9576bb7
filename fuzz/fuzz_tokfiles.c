/* fuzz_tokfiles.c -- libFuzzer target: the tokenizer files of a model folder, loaded by
 * tokenizer_load and then used once.
 *
 * Input: one selector byte, then up to five files separated by 0xFF. The selector (mod 5) says
 * which files they are:
 *   0  BERT    vocab.txt       tokenizer_config.json  special_tokens_map.json  added_tokens.json
 *   1  GPT-2   vocab.json      merges.txt  tokenizer_config.json  special_tokens_map.json  added_tokens.json
 *   2  BERT    tokenizer.json  tokenizer_config.json  special_tokens_map.json  added_tokens.json
 *   3  GPT-2   tokenizer.json  tokenizer_config.json  special_tokens_map.json  added_tokens.json
 *   4  JSON    tokenizer.json  tokenizer_config.json  (the tokenizer.json pipeline, TOKENIZER_JSON)
 * Missing parts are absent files. When loading succeeds, a text made of the vocabulary's own
 * first entries (so special and added tokens get matched) and a fixed mixed-script text are
 * encoded, alone, as a pair and truncated, and the results are checked against the vocabulary. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"
#include "tokenizer/tokenizer.h"
#include "base/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const layouts[5][5] = {
	{"vocab.txt", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json", NULL},
	{"vocab.json", "merges.txt", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json"},
	{"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json", NULL},
	{"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json", NULL},
	{"tokenizer.json", "tokenizer_config.json", NULL, NULL, NULL},
};
static const char *const every_file[] = {"vocab.txt", "vocab.json", "merges.txt", "tokenizer.json",
					 "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json"};

static void check_list(const struct tokenizer *tok, const struct token_list *l, int max_len)
{
	if (l->n < 0 || (max_len > 0 && l->n > max_len))
		fuzz_fail("%d tokens for max_len %d", l->n, max_len);
	for (int i = 0; i < l->n; i++) {
		const char *s = tokenizer_id_to_token(tok, l->ids[i]);
		if (!s)
			fuzz_fail("token %d has id %d outside the vocabulary of %d", i, l->ids[i], tokenizer_vocab_size(tok));
		if (strcmp(s, l->pieces[i]) != 0)
			fuzz_fail("token %d: piece '%s' but id %d is '%s'", i, l->pieces[i], l->ids[i], s);
		if (l->type_ids[i] != 0 && l->type_ids[i] != 1)
			fuzz_fail("token %d has type id %d", i, l->type_ids[i]);
	}
}

static void encode(const struct tokenizer *tok, const char *a, const char *b, int max_len)
{
	struct token_list l;
	struct err e = {{0}};
	if (tokenizer_encode(tok, a, b, max_len, &l, &e) < 0) {
		fuzz_check_message("tokenizer_encode", &e);
		if (l.n != 0)
			fuzz_fail("tokenizer_encode failed but returned %d tokens", l.n);
	} else {
		check_list(tok, &l, max_len);
	}
	token_list_free(&l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int layout = data[0] % 5;
	struct fuzz_part parts[FUZZ_MAX_PARTS];
	int n = fuzz_split(data + 1, size - 1, parts);
	for (size_t i = 0; i < sizeof every_file / sizeof every_file[0]; i++)
		fuzz_remove(every_file[i]);
	for (int i = 0; i < n && i < 5 && layouts[layout][i]; i++)
		if (parts[i].len || i == 0) /* the model file is always there, maybe empty */
			fuzz_write(layouts[layout][i], parts[i].data, parts[i].len);

	struct tokenizer *tok = NULL;
	struct err e = {{0}};
	enum tokenizer_kind kind = layout == 4 ? TOKENIZER_JSON : layout % 2 ? TOKENIZER_BPE : TOKENIZER_WORDPIECE;
	if (tokenizer_load(fuzz_dir(), kind, &tok, &e) < 0) {
		if (tok)
			fuzz_fail("tokenizer_load failed but returned a tokenizer");
		fuzz_check_message("tokenizer_load", &e);
		return 0;
	}
	bool nul_in_vocab = memchr(parts[0].data, 0, parts[0].len) != NULL;
	/* The first vocabulary entries joined by spaces: whatever the files made special is in it. */
	char text[2048];
	size_t len = 0;
	int vs = tokenizer_vocab_size(tok);
	for (int id = 0; id < vs && id < 64; id++) {
		const char *s = tokenizer_id_to_token(tok, id);
		size_t l = s ? strlen(s) : 0;
		if (!s || len + l + 2 >= sizeof text)
			continue;
		memcpy(text + len, s, l);
		len += l;
		text[len++] = id % 3 ? ' ' : 'x';
		/* (another id when the string is listed twice; vocab.txt lines may hold NUL bytes, which
		 * the C strings of the API cut short, harmlessly: text never has NUL) */
		if (!nul_in_vocab && tokenizer_token_to_id(tok, s) < 0)
			fuzz_fail("id %d is '%s' but that string has no id", id, s);
	}
	text[len] = '\0';
	if (utf8_check(text, len) == len) {
		encode(tok, text, NULL, 0);
		encode(tok, text, "Ünïcode ǅ İstanbul 日本語 ##x", 7);
	}
	encode(tok, "Hello, wörld! [CLS] <|endoftext|> İ ﬃ \t\r\n  x", NULL, 0);
	encode(tok, "a much longer first text with many words", "second", 5);
	tokenizer_free(tok);
	return 0;
}
