/* check_corpus.c -- corpus mode's pieces: the mergeable moments (Chan's formulas against one pass),
 * an aggregate of 4 shards against one run over the same texts, the saved-aggregate format (a
 * bit-exact round trip and the refusals of bad files), the corpus line reader, the progress line. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aggfile.h"
#include "aggregate.h"
#include "corpus.h"
#include "corpusrun.h"
#include "model.h"
#include "progress.h"

static const char *srcdir(void)
{
	const char *s = getenv("top_srcdir");
	return s && *s ? s : SRCDIR;
}

static double rel(double a, double b)
{
	double d = fabs(a - b), m = fmax(fabs(a), fabs(b));
	return m > 0 ? d / m : d;
}

START_TEST(moments_merge)
{
	/* 1000 values, added one by one vs. 4 uneven parts merged: equal up to rounding. */
	struct agg_moment all = {0}, part[4] = {{0}};
	double sum = 0, x[1000];
	for (int i = 0; i < 1000; i++) {
		x[i] = sin(i * 0.37) * 3 + (i % 7) * 0.1 + 100;
		sum += x[i];
		aggregate_moment_add(&all, x[i]);
		aggregate_moment_add(&part[i < 10 ? 0 : i < 400 ? 1 : i < 401 ? 2 : 3], x[i]);
	}
	double mean = sum / 1000, m2 = 0;
	for (int i = 0; i < 1000; i++)
		m2 += (x[i] - mean) * (x[i] - mean);
	struct agg_moment merged = {0};
	aggregate_moment_merge(&merged, &part[2]);
	aggregate_moment_merge(&merged, &part[0]);
	aggregate_moment_merge(&merged, &part[3]);
	aggregate_moment_merge(&merged, &part[1]);
	ck_assert_uint_eq(merged.n, 1000);
	ck_assert(rel(all.mean, mean) < 1e-14 && rel(all.m2, m2) < 1e-10);
	ck_assert(rel(merged.mean, mean) < 1e-14 && rel(merged.m2, m2) < 1e-10);
	ck_assert(rel(aggregate_moment_std(&merged), sqrt(m2 / 999)) < 1e-10);
	struct agg_moment one = {0}, none = {0};
	aggregate_moment_add(&one, 2.5);
	ck_assert(aggregate_moment_std(&one) == 0 && isnan(aggregate_moment_std(&none)));
}
END_TEST

/* A corpus file of texts with repeats, punctuation, a blank line and a pair in JSON lines. */
static void write_corpus(const char *path, bool jsonl)
{
	static const char *const texts[] = {
		"The cat sat on the mat.", "A dog barked at the mailman, twice.", "She said: hello, world!",
		"The book was on the table, and the table was on the floor.", "Rain again today; rain again tomorrow.",
		"Who wrote this?", "The quick brown fox jumps over the lazy dog.", "One, two, three, four, five.",
		"It was the best of times, it was the worst of times.", "Time flies like an arrow.",
	};
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < 10; i++) {
		if (i == 4)
			fputs("\n", f);
		if (jsonl && i == 7)
			fprintf(f, "{\"text\": \"%s\", \"text_b\": \"And six.\"}\n", texts[i]);
		else if (jsonl)
			fprintf(f, "{\"id\": %d, \"text\": \"%s\"}\n", i, texts[i]);
		else
			fprintf(f, "%s\n", texts[i]);
	}
	fclose(f);
}

static struct aggregate *run(const struct model *m, const char *path, int k, int n, int workers)
{
	struct corpusrun_opts o = {.path = path, .shard_k = k, .shard_n = n, .workers = workers};
	struct aggregate *a = NULL;
	struct err e = {{0}};
	bool cancelled = true;
	ck_assert_msg(corpusrun(m, &o, &a, &cancelled, &e) == 0, "%s", e.msg);
	ck_assert(!cancelled);
	return a;
}

/* The largest relative difference of any moment, and the counts equal. */
static double agg_diff(const struct aggregate *a, const struct aggregate *b)
{
	ck_assert_uint_eq(a->c.texts, b->c.texts);
	ck_assert_uint_eq(a->c.lines, b->c.lines);
	ck_assert_uint_eq(a->c.tokens, b->c.tokens);
	ck_assert_uint_eq(a->c.empty, b->c.empty);
	double worst = 0;
	size_t n = (size_t)a->model.n_layers * a->model.n_heads * AGG_SCORES;
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(a->hs[i].n, b->hs[i].n);
		worst = fmax(worst, rel(a->hs[i].mean, b->hs[i].mean));
		worst = fmax(worst, fabs(a->hs[i].m2 - b->hs[i].m2) / fmax(1e-12, fabs(a->hs[i].m2)));
	}
	return worst;
}

static void shards_case(const char *model, bool jsonl)
{
	char mdir[4096], path[] = "/tmp/attnscope-corpus-XXXXXX";
	snprintf(mdir, sizeof mdir, "%s/tests/data/models/%s", srcdir(), model);
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	write_corpus(path, jsonl);
	struct model *m = NULL;
	struct err e = {{0}};
	ck_assert_msg(model_open(mdir, &m, &e) == 0, "%s", e.msg);
	struct aggregate *one = run(m, path, 1, 1, 1), *merged = NULL;
	ck_assert_uint_eq(one->c.texts, 10);
	ck_assert_uint_eq(one->c.empty, 1);
	ck_assert_uint_eq(one->c.lines, 11);
	for (int k = 1; k <= 4; k++) {
		struct aggregate *s = run(m, path, k, 4, 1);
		if (!merged)
			merged = s;
		else {
			ck_assert_msg(aggregate_merge(merged, s, &e) == 0, "%s", e.msg);
			aggregate_free(s);
		}
	}
	double d = agg_diff(one, merged);
	printf("%s%s: 4 shards merged vs one run: max relative difference %.3g\n", model, jsonl ? " (JSON lines)" : "", d);
	ck_assert_msg(d < 1e-12, "merge differs by %g", d);
	/* Two workers split the texts the same way. */
	struct aggregate *two = run(m, path, 1, 1, 2);
	ck_assert(agg_diff(one, two) < 1e-12);
	/* Merging a shard twice is refused. */
	ck_assert_int_eq(aggregate_merge(merged, merged, &e), -1);
	ck_assert_msg(!strncmp(e.msg, "shard 1/4 of ", 13), "%s", e.msg);
	aggregate_free(two);
	aggregate_free(one);
	aggregate_free(merged);
	model_close(m);
	unlink(path);
}

START_TEST(shards_equal_one_run)
{
	shards_case("bert-mini", false);
	shards_case("bert-mini", true);
	shards_case("gpt2-mini", false);
}
END_TEST

START_TEST(aggfile_roundtrip)
{
	char mdir[4096], path[] = "/tmp/attnscope-corpus-XXXXXX", saved[] = "/tmp/attnscope-agg-XXXXXX";
	snprintf(mdir, sizeof mdir, "%s/tests/data/models/gpt2-mini", srcdir());
	int fd = mkstemp(path);
	close(fd);
	fd = mkstemp(saved);
	close(fd);
	write_corpus(path, false);
	struct model *m = NULL;
	struct err e = {{0}};
	ck_assert_msg(model_open(mdir, &m, &e) == 0, "%s", e.msg);
	struct aggregate *a = run(m, path, 2, 3, 1), *b = NULL;
	ck_assert_msg(aggfile_save(a, saved, &e) == 0, "%s", e.msg);
	ck_assert_msg(aggfile_load(saved, &b, &e) == 0, "%s", e.msg);
	ck_assert(!memcmp(&a->model, &b->model, sizeof a->model) && !memcmp(&a->c, &b->c, sizeof a->c));
	size_t n = (size_t)a->model.n_layers * a->model.n_heads * AGG_SCORES;
	for (size_t i = 0; i < n; i++) /* 17 significant digits: bit-exact */
		ck_assert(a->hs[i].n == b->hs[i].n && a->hs[i].mean == b->hs[i].mean && a->hs[i].m2 == b->hs[i].m2);
	ck_assert_int_eq(b->n_src, 1);
	ck_assert(b->src[0].shard_k == 2 && b->src[0].shard_n == 3 && !strcmp(b->src[0].file, path));
	aggregate_free(a);
	aggregate_free(b);
	model_close(m);
	unlink(path);
	unlink(saved);
}
END_TEST

/* aggfile_parse refuses TEXT with a message starting with WANT. */
static void refuse(const char *text, const char *want)
{
	struct aggregate *a = (void *)1;
	struct err e = {{0}};
	ck_assert_int_eq(aggfile_parse(text, strlen(text), &a, &e), -1);
	ck_assert_ptr_null(a);
	ck_assert_msg(!strncmp(e.msg, want, strlen(want)), "got '%s', want '%s…'", e.msg, want);
}

#define MODEL "\"model\": {\"name\": \"m\", \"family\": \"bert\", \"causal\": false, \"layers\": 1, \"heads\": 1, " \
	      "\"kv_heads\": 1, \"head_dim\": 4, \"hidden\": 4, \"max_positions\": 8}"
#define COUNTS "\"counts\": {\"lines\": 2, \"texts\": 2, \"tokens\": 9, \"empty\": 0, \"truncated\": 0, \"failed\": 0, " \
	       "\"first_special\": 2}"
#define SOURCES "\"sources\": [{\"file\": \"c.txt\", \"shard\": [1, 1], \"texts\": 2, \"partial\": false}]"

START_TEST(aggfile_refusals)
{
	refuse("[1", "invalid JSON at line 1");
	refuse("{}", "not an attnscope aggregate");
	refuse("{\"format\": \"attnscope-aggregate\", \"version\": 2}", "aggregate format version other is not 1");
	refuse("{\"format\": \"attnscope-aggregate\", \"version\": 1}", "no \"model\" object");
	refuse("{\"format\": \"attnscope-aggregate\", \"version\": 1, \"model\": {\"name\": \"m\", \"family\": \"bert\", "
	       "\"causal\": false, \"layers\": 100000, \"heads\": 100000, \"kv_heads\": 1, \"head_dim\": 4, \"hidden\": 4, "
	       "\"max_positions\": 8}}",
	       "a model of 100000 layers");
	refuse("{\"format\": \"attnscope-aggregate\", \"version\": 1, " MODEL ", " SOURCES ", " COUNTS ", \"heads\": []}",
	       "\"heads\" is not an array of 1 heads");
	refuse("{\"format\": \"attnscope-aggregate\", \"version\": 1, " MODEL ", \"sources\": [{\"file\": \"c\", \"shard\": "
	       "[3, 2], \"texts\": 1, \"partial\": false}]}",
	       "sources[0]: shard 3/2 is not K/N");
	refuse("{\"format\": \"attnscope-aggregate\", \"version\": 1, " MODEL ", " SOURCES ", \"counts\": {\"lines\": 1, "
	       "\"texts\": 2, \"tokens\": 9, \"empty\": 0, \"truncated\": 0, \"failed\": 0, \"first_special\": 0}}",
	       "counts: texts, empty and failed lines exceed the lines");
	refuse("{\"format\": \"attnscope-aggregate\", \"version\": 1, " MODEL ", " SOURCES ", " COUNTS
	       ", \"heads\": [{\"layer\": 0, \"head\": 0, \"prev\": {\"n\": 3, \"mean\": 0.5, \"m2\": 0}}]}",
	       "heads[0].prev: n 3 is more than the 2 texts");
	refuse("{\"format\": \"attnscope-aggregate\", \"version\": 1, \"version\": 1}", "invalid JSON");
}
END_TEST

/* Parse LINE as plain text or JSON: the kind, and text / text_b or the message. */
static void line_case(const char *line, bool jsonl, enum corpus_kind kind, const char *a, const char *b)
{
	size_t len = strlen(line);
	char *buf = malloc(len + 1), *owned = NULL;
	memcpy(buf, line, len + 1);
	struct corpus_item it;
	struct err e = {{0}};
	corpus_parse_line(buf, len, jsonl, &it, &owned, &e);
	ck_assert_msg(it.kind == kind, "'%s': kind %d, want %d (%s)", line, it.kind, kind, e.msg);
	if (kind == CORPUS_TEXT) {
		ck_assert_str_eq(it.text, a);
		if (b)
			ck_assert_str_eq(it.text_b, b);
		else
			ck_assert_ptr_null(it.text_b);
	} else if (kind == CORPUS_BAD) {
		ck_assert_msg(!strncmp(e.msg, a, strlen(a)), "'%s': '%s', want '%s…'", line, e.msg, a);
	}
	free(owned);
	free(buf);
}

START_TEST(corpus_lines)
{
	line_case("hello world\r", false, CORPUS_TEXT, "hello world", NULL);
	line_case(" \t\r", false, CORPUS_EMPTY, NULL, NULL);
	line_case("", false, CORPUS_EMPTY, NULL, NULL);
	line_case("{\"text\": \"a\\u00e9\", \"text_b\": \"b\", \"label\": 3}", true, CORPUS_TEXT, "a\xc3\xa9", "b");
	line_case("{\"text\": \"a\", \"text_b\": null}", true, CORPUS_TEXT, "a", NULL);
	line_case("{\"text\": \"  \"}", true, CORPUS_EMPTY, NULL, NULL);
	line_case("{\"text\": 3}", true, CORPUS_BAD, "no \"text\" string", NULL);
	line_case("[\"text\"]", true, CORPUS_BAD, "not a JSON object", NULL);
	line_case("{\"text\": \"a\", \"text_b\": 1}", true, CORPUS_BAD, "\"text_b\" is not a string", NULL);
	line_case("{\"text\": \"a\"", true, CORPUS_BAD, "invalid JSON at column", NULL);
	line_case("{\"text\": \"a\\u0000b\"}", true, CORPUS_BAD, "invalid JSON", NULL);
	char nul[] = "ab\0cd";
	char *owned;
	struct corpus_item it;
	struct err e = {{0}};
	corpus_parse_line(nul, 5, false, &it, &owned, &e);
	ck_assert_int_eq(it.kind, CORPUS_BAD);
	ck_assert_str_eq(e.msg, "a NUL byte at column 3");
}
END_TEST

START_TEST(corpus_reader)
{
	char path[] = "/tmp/attnscope-lines-XXXXXX";
	int fd = mkstemp(path);
	const char data[] = "\xef\xbb\xbf\n  {\"text\": \"one\"}\nnot json\n\n{\"text\": \"two\"}";
	ck_assert_int_eq(write(fd, data, sizeof data - 1), (ssize_t)sizeof data - 1);
	close(fd);
	ck_assert_int_eq(corpus_count_lines(path), 5);
	struct corpus_reader *r;
	struct corpus_item it;
	struct err e = {{0}};
	ck_assert_int_eq(corpus_open(path, &r, &e), 0);
	ck_assert_int_eq(corpus_next(r, true, &it, &e), 1);
	ck_assert(it.kind == CORPUS_EMPTY && it.line == 1);
	ck_assert_int_eq(corpus_next(r, true, &it, &e), 1);
	ck_assert(it.kind == CORPUS_TEXT && !strcmp(it.text, "one"));
	ck_assert_int_eq(corpus_next(r, true, &it, &e), 1);
	ck_assert_int_eq(it.kind, CORPUS_BAD);
	ck_assert_str_eq(e.msg, "line 3: invalid JSON at column 3: '[' or '{' expected near 'not'");
	ck_assert_int_eq(corpus_next(r, false, &it, &e), 1);
	ck_assert_int_eq(it.kind, CORPUS_SKIPPED);
	ck_assert_int_eq(corpus_next(r, true, &it, &e), 1);
	ck_assert(it.kind == CORPUS_TEXT && !strcmp(it.text, "two") && it.line == 5);
	ck_assert_int_eq(corpus_next(r, true, &it, &e), 0);
	corpus_close(r);
	ck_assert_int_eq(corpus_open("/nonexistent/c.txt", &r, &e), -1);
	ck_assert_str_eq(e.msg, "/nonexistent/c.txt: No such file or directory");
	unlink(path);
}
END_TEST

START_TEST(progress_line)
{
	char buf[160];
	progress_format(buf, sizeof buf, 412, 1000, 10, 79, "lines");
	ck_assert_str_eq(buf, "412/1000 lines  41% [#############....................]  41.2 lines/s  ETA 0:14");
	ck_assert_int_le((int)strlen(buf), 79);
	progress_format(buf, sizeof buf, 7, 0, 2, 79, "lines");
	ck_assert_str_eq(buf, "7 lines  3.5 lines/s");
	progress_format(buf, sizeof buf, 1000, 1000, 20, 30, "lines");
	ck_assert_str_eq(buf, "1000/1000 lines 100%  50.0 lines/s");
	progress_duration(buf, sizeof buf, 3909);
	ck_assert_str_eq(buf, "1:05:09");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("corpus");
	TCase *tc = tcase_create("corpus");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, moments_merge);
	tcase_add_test(tc, shards_equal_one_run);
	tcase_add_test(tc, aggfile_roundtrip);
	tcase_add_test(tc, aggfile_refusals);
	tcase_add_test(tc, corpus_lines);
	tcase_add_test(tc, corpus_reader);
	tcase_add_test(tc, progress_line);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
