/* fuzz_aggfile.c -- libFuzzer target: the saved-aggregate loader (aggfile.c).
 *
 * Input: the bytes of an aggregate file, parsed from memory with aggfile_parse. An accepted file
 * must write out again and parse back to the same accumulators bit for bit (17 significant
 * digits), and merging it with its copy must be refused when it names a source (the same shard
 * twice) and otherwise double every count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aggfile.h"
#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct aggregate *a = NULL, *b = NULL;
	struct err e = {{0}};
	if (aggfile_parse((const char *)data, size, &a, &e) < 0) {
		fuzz_check_message("aggfile_parse", &e);
		return 0;
	}
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (aggfile_write(a, f, &e) < 0)
		fuzz_fail("aggfile_write: %s", e.msg);
	fclose(f);
	if (aggfile_parse(text, len, &b, &e) < 0)
		fuzz_fail("an accepted aggregate does not reload: %s", e.msg);
	size_t n = (size_t)a->model.n_layers * a->model.n_heads * AGG_SCORES;
	for (size_t i = 0; i < n; i++)
		if (a->hs[i].n != b->hs[i].n || a->hs[i].mean != b->hs[i].mean || a->hs[i].m2 != b->hs[i].m2)
			fuzz_fail("moment %zu changed in a round trip", i);
	if (memcmp(&a->c, &b->c, sizeof a->c) || a->n_src != b->n_src)
		fuzz_fail("counts or sources changed in a round trip");
	uint64_t texts = a->c.texts;
	int rc = aggregate_merge(a, b, &e);
	if (a->n_src > 0 && rc == 0)
		fuzz_fail("the same shard merged twice");
	if (a->n_src == 0 && (rc < 0 || a->c.texts != 2 * texts))
		fuzz_fail("merging a copy: %s", rc < 0 ? e.msg : "counts not doubled");
	if (rc < 0)
		fuzz_check_message("aggregate_merge", &e);
	for (size_t i = 0; i < n; i++)
		if (!isfinite(a->hs[i].mean) || !(a->hs[i].m2 >= 0))
			fuzz_fail("moment %zu not finite after a merge", i);
	free(text);
	aggregate_free(a);
	aggregate_free(b);
	return 0;
}
