/* fuzz_encode.c -- libFuzzer target: both tokenizers on arbitrary bytes.
 *
 * The fixture tokenizers (tests/data/tokenizer: bert and gpt2 from their own files, bert-json and
 * gpt2-json from tokenizer.json) are loaded once. Input: a selector byte (bits 0-1 tokenizer,
 * bit 2 sentence pair, bits 3-7 a max_len of 0 = none or 1..31), then the text; for a pair the
 * second text follows the first 0x00 byte. Checks: invalid UTF-8 is refused with its byte
 * offset and everything valid is accepted when nothing is truncated, every id and piece agree
 * with the vocabulary, max_len is honoured, type ids are 0/1 with text B's after text A's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"
#include "tokenizer/tokenizer.h"
#include "base/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct tokenizer *toks[4];

static void load_fixtures(void)
{
	static const char *const names[4] = {"bert", "gpt2", "bert-json", "gpt2-json"};
	for (int i = 0; i < 4; i++) {
		char dir[1024];
		struct err e = {{0}};
		snprintf(dir, sizeof dir, "%s/tests/data/tokenizer/%s", fuzz_datadir(), names[i]);
		if (tokenizer_load(dir, i % 2 ? TOKENIZER_BPE : TOKENIZER_WORDPIECE, &toks[i], &e) < 0)
			fuzz_fail("fixture %s: %s", dir, e.msg);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!toks[0])
		load_fixtures();
	if (size < 1 || size > 65536)
		return 0;
	const struct tokenizer *tok = toks[data[0] & 3];
	bool pair = data[0] & 4;
	int max_len = data[0] >> 3;
	char *buf = malloc(size); /* the text (and the second one), NUL-terminated */
	memcpy(buf, data + 1, size - 1);
	buf[size - 1] = '\0';
	const char *a = buf, *b = NULL;
	size_t alen = strlen(a), blen = 0;
	if (pair) {
		b = alen + 1 < size ? buf + alen + 1 : "";
		blen = strlen(b);
	}
	bool valid = utf8_check(a, alen) == alen && (!b || utf8_check(b, blen) == blen);

	struct token_list l;
	struct err e = {{0}};
	int rc = tokenizer_encode(tok, a, b, max_len, &l, &e);
	if (rc < 0) {
		fuzz_check_message("tokenizer_encode", &e);
		if (valid && max_len == 0)
			fuzz_fail("valid UTF-8 refused: %s", e.msg);
		if (!valid && !strstr(e.msg, "invalid UTF-8 at byte "))
			fuzz_fail("invalid UTF-8 gave another message: %s", e.msg);
		if (l.n != 0)
			fuzz_fail("failed with %d tokens", l.n);
	} else {
		if (!valid)
			fuzz_fail("invalid UTF-8 accepted");
		if (max_len > 0 && l.n > max_len)
			fuzz_fail("%d tokens for max_len %d", l.n, max_len);
		if (l.truncated != (l.n_before_truncation > l.n))
			fuzz_fail("truncated %d but %d of %d tokens", l.truncated, l.n, l.n_before_truncation);
		int prev_type = 0;
		for (int i = 0; i < l.n; i++) {
			const char *s = tokenizer_id_to_token(tok, l.ids[i]);
			if (!s || strcmp(s, l.pieces[i]) != 0)
				fuzz_fail("token %d: id %d, piece '%s'", i, l.ids[i], l.pieces[i]);
			if (l.type_ids[i] < prev_type || l.type_ids[i] > (pair ? 1 : 0))
				fuzz_fail("token %d has type id %d", i, l.type_ids[i]);
			prev_type = l.type_ids[i];
		}
	}
	token_list_free(&l);
	free(buf);
	return 0;
}
