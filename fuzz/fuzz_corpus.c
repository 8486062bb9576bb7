/* fuzz_corpus.c -- libFuzzer target: the corpus file reader (corpus.c).
 *
 * Input: the bytes of a corpus file. They are written to the scratch folder and read line by line
 * with corpus_next, every other line parsed (as a shard would); each accepted text must be a
 * NUL-terminated string no longer than its line, blank texts must come back as empty, line
 * numbers must count up by one and match corpus_count_lines at the end, and bad lines must carry
 * a one-line message. The same bytes are also parsed whole as one plain and one JSON line. */
#include <stdlib.h>
#include <string.h>

#include "corpus/corpus.h"
#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_check_item(const struct corpus_item *it, size_t line_len, const struct err *e)
{
	if (it->kind == CORPUS_BAD) {
		fuzz_check_message("corpus", e);
		return;
	}
	if (it->kind != CORPUS_TEXT)
		return;
	if (!it->text || !*it->text)
		fuzz_fail("a text item without text");
	if (strlen(it->text) > line_len || (it->text_b && strlen(it->text_b) > line_len))
		fuzz_fail("a text longer than its line");
	if (strspn(it->text, " \t\r\f\v") == strlen(it->text) && !it->text_b)
		fuzz_fail("a blank text not reported as empty");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_write("corpus.txt", data, size);
	char path[512];
	snprintf(path, sizeof path, "%s/corpus.txt", fuzz_dir());
	struct corpus_reader *r;
	struct err e = {{0}};
	if (corpus_open(path, &r, &e) < 0)
		fuzz_fail("corpus_open: %s", e.msg);
	struct corpus_item it;
	uint64_t lines = 0;
	int got;
	while ((got = corpus_next(r, lines % 2 == 0, &it, &e)) == 1) {
		if (it.line != ++lines)
			fuzz_fail("line %llu reported as %llu", (unsigned long long)lines, (unsigned long long)it.line);
		fuzz_check_item(&it, size, &e);
	}
	if (got < 0)
		fuzz_fail("read error: %s", e.msg);
	corpus_close(r);
	if ((long long)lines != corpus_count_lines(path))
		fuzz_fail("%llu lines read, corpus_count_lines says %lld", (unsigned long long)lines, corpus_count_lines(path));
	for (int jsonl = 0; jsonl < 2; jsonl++) {
		char *line = malloc(size + 1), *owned = NULL;
		memcpy(line, data, size);
		corpus_parse_line(line, size, jsonl, &it, &owned, &e);
		fuzz_check_item(&it, size, &e);
		free(owned);
		free(line);
	}
	return 0;
}
