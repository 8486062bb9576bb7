/* fuzz_spm.c -- libFuzzer target: SentencePiece .model files (XLM-R, ALBERT, DeBERTa-v2) loaded
 * by tokenizer_load through libsentencepiece (src/tokenizer/spm-shim.cc) and then used to encode.
 *
 * Input: one selector byte, then a text, a tokenizer_config.json and the .model file, separated
 * by 0xFF. The model comes last because a protobuf holds any byte (the last part keeps further
 * 0xFF bytes). The selector (mod 3) is the kind: 0 XLM-R (sentencepiece.bpe.model), 1 ALBERT
 * (spiece.model), 2 DeBERTa-v2 (spm.model). An empty config part means no tokenizer_config.json.
 * When loading succeeds, the text (when valid UTF-8), the model's own first pieces and a fixed
 * mixed-script text are encoded alone, as a pair and truncated, and every id, piece, type id and
 * the template's first and last tokens are checked. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"
#include "tokenizer/tokenizer.h"
#include "base/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const enum tokenizer_kind kinds[3] = {TOKENIZER_XLMR, TOKENIZER_ALBERT, TOKENIZER_DEBERTA_V2};
static const char *const model_files[3] = {"sentencepiece.bpe.model", "spiece.model", "spm.model"};

static void check_list(const struct tokenizer *tok, const struct token_list *l, int max_len, bool pair)
{
	if (l->n < 2 || (max_len > 0 && l->n > max_len))
		fuzz_fail("%d tokens for max_len %d", l->n, max_len);
	if (!l->special[0] || !l->special[l->n - 1])
		fuzz_fail("the template's first or last token is not special");
	for (int i = 0; i < l->n; i++) {
		const char *s = tokenizer_id_to_token(tok, l->ids[i]);
		if (l->ids[i] < 0 || l->ids[i] >= tokenizer_vocab_size(tok))
			fuzz_fail("token %d has id %d outside the vocabulary of %d", i, l->ids[i], tokenizer_vocab_size(tok));
		if (strcmp(s ? s : "", l->pieces[i]) != 0)
			fuzz_fail("token %d: piece '%s' but id %d is '%s'", i, l->pieces[i], l->ids[i], s ? s : "(none)");
		if (l->type_ids[i] != 0 && (l->type_ids[i] != 1 || !pair))
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
		check_list(tok, &l, max_len, b != NULL);
	}
	token_list_free(&l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int k = data[0] % 3;
	struct fuzz_part parts[FUZZ_MAX_PARTS];
	int n = fuzz_split(data + 1, size - 1, parts);
	for (int i = 0; i < 3; i++)
		fuzz_remove(model_files[i]);
	fuzz_remove("tokenizer_config.json");
	fuzz_remove("tokenizer.json");
	/* parts: text, config, model (the model keeps any further separators) */
	struct fuzz_part text = parts[0], cfg = n > 1 ? parts[1] : (struct fuzz_part){NULL, 0};
	struct fuzz_part model = {NULL, 0};
	if (n > 2) {
		model.data = parts[2].data;
		model.len = (size_t)(data + size - parts[2].data);
	}
	fuzz_write(model_files[k], model.data ? (const void *)model.data : "", model.len);
	if (cfg.len)
		fuzz_write("tokenizer_config.json", cfg.data, cfg.len);

	struct tokenizer *tok = NULL;
	struct err e = {{0}};
	if (tokenizer_load(fuzz_dir(), kinds[k], &tok, &e) < 0) {
		if (tok)
			fuzz_fail("tokenizer_load failed but returned a tokenizer");
		fuzz_check_message("tokenizer_load", &e);
		return 0;
	}
	char *t = malloc(text.len + 1);
	if (!t)
		abort();
	if (text.len)
		memcpy(t, text.data, text.len);
	t[text.len] = '\0';
	if (strlen(t) == text.len && utf8_check(t, text.len) == text.len) {
		encode(tok, t, NULL, 0);
		encode(tok, t, "second [MASK] <mask> text", 6);
	} else {
		encode(tok, t, NULL, 0); /* refused with its offset, or cut at a NUL */
	}
	free(t);
	/* the model's first pieces joined: control and user-defined pieces, special tokens */
	char buf[2048];
	size_t len = 0;
	int vs = tokenizer_vocab_size(tok);
	for (int id = 0; id < vs && id < 48; id++) {
		const char *s = tokenizer_id_to_token(tok, id);
		size_t l = s ? strlen(s) : 0;
		if (!s || len + l + 2 >= sizeof buf)
			continue;
		memcpy(buf + len, s, l);
		len += l;
		buf[len++] = id % 3 ? ' ' : 'x';
	}
	buf[len] = '\0';
	if (utf8_check(buf, len) == len)
		encode(tok, buf, buf, 0);
	encode(tok, "Hello, 1,000 w\xc3\xb6rlds! \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80 ``x'' [CLS]<s> <mask>[MASK]  \t\r\n", NULL, 0);
	encode(tok, "a much longer first text with many words", "second", 5);
	tokenizer_free(tok);
	return 0;
}
