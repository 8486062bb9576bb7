/* fuzz_aggfile.c -- libFuzzer target: the saved-aggregate loader (aggfile.c).
 *
 * Input: the bytes of an aggregate file, parsed from memory with aggfile_parse. An accepted file
 * must write out again and parse back to the same accumulators bit for bit (17 significant
 * digits: head scores, query/key moments, histograms; the token sample token for token, vectors
 * bit for bit through base64), and merging it with its copy must be
 * refused when it names a source (the same shard twice) and otherwise double every count and
 * leave every histogram consistent (agghist_check). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "corpus/aggfile.h"
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
	size_t cells = (size_t)a->model.n_layers * a->model.n_heads, hists = (size_t)a->model.n_layers * AGG_DISTS;
	if (memcmp(a->qk, b->qk, cells * sizeof *a->qk))
		fuzz_fail("query/key moments changed in a round trip");
	for (size_t i = 0; i < hists; i++)
		if (memcmp(&a->dist[i], &b->dist[i], sizeof a->dist[i]))
			fuzz_fail("histogram %zu changed in a round trip", i);
	aggsample_sort(&a->sample);
	aggsample_sort(&b->sample);
	if (a->sample.n != b->sample.n || a->sample.layer != b->sample.layer || a->sample.head != b->sample.head)
		fuzz_fail("the token sample changed in a round trip");
	for (int i = 0; i < a->sample.n; i++) {
		const struct aggsample_tok *x = &a->sample.tok[i], *y = &b->sample.tok[i];
		size_t d = (size_t)a->sample.dim * sizeof(float);
		if (x->key != y->key || x->line != y->line || x->token != y->token || strcmp(x->piece, y->piece) ||
		    strcmp(x->text, y->text) || (!x->text_b != !y->text_b) || (x->text_b && strcmp(x->text_b, y->text_b)) ||
		    memcmp(aggsample_q(&a->sample, i), aggsample_q(&b->sample, i), d) ||
		    memcmp(aggsample_k(&a->sample, i), aggsample_k(&b->sample, i), d))
			fuzz_fail("sampled token %d changed in a round trip", i);
	}
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
	if (rc == 0 && a->sample.n > a->sample.cap)
		fuzz_fail("a merged sample holds more than its cap");
	for (size_t i = 0; rc == 0 && i < hists; i++) {
		const char *why = agghist_check(&a->dist[i]);
		if (why && isfinite(a->dist[i].mean) && isfinite(a->dist[i].m2))
			fuzz_fail("histogram %zu after a merge: %s", i, why);
	}
	free(text);
	aggregate_free(a);
	aggregate_free(b);
	return 0;
}
