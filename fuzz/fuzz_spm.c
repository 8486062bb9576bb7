/* fuzz_spm.c -- libFuzzer target: SentencePiece .model files (XLM-R, ALBERT, DeBERTa-v2, and the
 * encoder-decoder kinds T5, mBART, Marian, NLLB, Pegasus) loaded by tokenizer_load through
 * libsentencepiece (src/tokenizer/spm-shim.cc) and then used to encode.
 *
 * Input: one selector byte, then a text, a tokenizer_config.json and the .model file, separated
 * by 0xFF. The model comes last because a protobuf holds any byte (the last part keeps further
 * 0xFF bytes). The selector (mod 8) is the kind: 0 XLM-R (sentencepiece.bpe.model), 1 ALBERT
 * (spiece.model), 2 DeBERTa-v2 (spm.model), 3 T5 (spiece.model), 4 mBART and 6 NLLB
 * (sentencepiece.bpe.model), 5 Marian (the model as source.spm and target.spm; the config part
 * is its vocab.json, and there is no tokenizer_config.json), 7 Pegasus (spiece.model). An empty
 * config part means no tokenizer_config.json. When loading succeeds, the text (when valid UTF-8),
 * the model's own first pieces and a fixed mixed-script text are encoded alone, as a pair and
 * truncated (the encoder-decoder kinds: as a text, as a target, and a pair must be refused), and
 * every id, piece, type id and the template's first and last tokens are checked; mBART and NLLB
 * also switch languages (a known code, and an unknown one that must be refused). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"
#include "tokenizer/tokenizer.h"
#include "base/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define N_KINDS 9
static const enum tokenizer_kind kinds[N_KINDS] = {TOKENIZER_XLMR,  TOKENIZER_ALBERT, TOKENIZER_DEBERTA_V2,
						   TOKENIZER_T5,    TOKENIZER_MBART,  TOKENIZER_MARIAN,
						   TOKENIZER_NLLB,  TOKENIZER_PEGASUS, TOKENIZER_M2M100};
static const char *const model_files[N_KINDS] = {"sentencepiece.bpe.model", "spiece.model", "spm.model",
						 "spiece.model", "sentencepiece.bpe.model", "source.spm",
						 "sentencepiece.bpe.model", "spiece.model", "sentencepiece.bpe.model"};

static bool seq2seq; /* the kind of this input is an encoder-decoder one (selector 3 and up) */

static void check_list(const struct tokenizer *tok, const struct token_list *l, int max_len, bool pair)
{
	/* encoder-decoder: at least </s>, which is last (and special) */
	int least = seq2seq ? 1 : 2;
	if (l->n < least || (max_len > 0 && l->n > max_len))
		fuzz_fail("%d tokens for max_len %d", l->n, max_len);
	if ((!seq2seq && !l->special[0]) || !l->special[l->n - 1])
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
		if (seq2seq && b)
			fuzz_fail("an encoder-decoder tokenizer took a pair");
		check_list(tok, &l, max_len, b != NULL);
	}
	token_list_free(&l);
	if (!seq2seq || b)
		return;
	/* the target side: the same checks */
	if (tokenizer_encode_target(tok, a, max_len, &l, &e) < 0) {
		fuzz_check_message("tokenizer_encode_target", &e);
		if (l.n != 0)
			fuzz_fail("tokenizer_encode_target failed but returned %d tokens", l.n);
	} else {
		check_list(tok, &l, max_len, false);
	}
	token_list_free(&l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int k = data[0] % N_KINDS;
	seq2seq = k >= 3;
	struct fuzz_part parts[FUZZ_MAX_PARTS];
	int n = fuzz_split(data + 1, size - 1, parts);
	for (int i = 0; i < N_KINDS; i++)
		fuzz_remove(model_files[i]);
	fuzz_remove("target.spm");
	fuzz_remove("vocab.json");
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
	if (kinds[k] == TOKENIZER_MARIAN) {
		fuzz_write("target.spm", model.data ? (const void *)model.data : "", model.len);
		fuzz_write("vocab.json", cfg.data ? (const void *)cfg.data : "", cfg.len);
	} else if (kinds[k] == TOKENIZER_M2M100) {
		fuzz_write("vocab.json", cfg.data ? (const void *)cfg.data : "", cfg.len);
	} else if (cfg.len) {
		fuzz_write("tokenizer_config.json", cfg.data, cfg.len);
	}

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
	if (seq2seq) {
		encode(tok, ">>de<< a >>x<<>> b << </s> <extra_id_0> <mask_1> <unk_7> en_XX deu_Latn", NULL, 3);
		/* languages: a known code switches (mBART, NLLB, M2M100), an unknown one is refused everywhere */
		const char *src = kinds[k] == TOKENIZER_NLLB ? "fra_Latn" : kinds[k] == TOKENIZER_M2M100 ? "fr" : "fr_XX";
		int rc = tokenizer_set_langs(tok, src, src, &e);
		if (rc == 0 && kinds[k] != TOKENIZER_MBART && kinds[k] != TOKENIZER_NLLB && kinds[k] != TOKENIZER_M2M100)
			fuzz_fail("a tokenizer without language codes took %s", src);
		if (rc < 0)
			fuzz_check_message("tokenizer_set_langs", &e);
		if (tokenizer_set_langs(tok, "xx_Unknown", NULL, &e) == 0)
			fuzz_fail("tokenizer_set_langs took an unknown code");
		fuzz_check_message("tokenizer_set_langs", &e);
		encode(tok, "Hello world", NULL, 0);
	}
	tokenizer_free(tok);
	return 0;
}
