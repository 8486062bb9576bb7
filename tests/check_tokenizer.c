/* check_tokenizer.c -- unit tests of the tokenizers (src/tokenizer/).
 *
 * Expected tokens come from outside the C code: tests/data/tokenizer/cases.json is written by
 * tests/tools/ref_tokenize.py (an independent Python implementation checked against real
 * Hugging Face outputs), and ../shared/reference/cases holds what transformers itself produced.
 * A failing comparison prints the fixture, the input and both token lists. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <utf8proc.h>

#include "engine/family.h"
#include "engine/hfconfig.h"
#include "testutil.h"
#include "tokenizer/tokenizer.h"

/* ---------------------------------------------------------------- helpers */

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static struct tokenizer *load_fixture(const char *name, enum tokenizer_kind kind)
{
	char *dir = testutil_printf("%s/tests/data/tokenizer/%s", testutil_srcdir(), name);
	struct tokenizer *tok = NULL;
	struct err e = {""};
	int rc = tokenizer_load(dir, kind, &tok, &e);
	ck_assert_msg(rc == 0, "loading %s: %s", dir, e.msg);
	free(dir);
	return tok;
}

static enum tokenizer_kind kind_of(const char *s)
{
	return strncmp(s, "bert", 4) == 0 ? TOKENIZER_WORDPIECE : TOKENIZER_BPE;
}

/* A JSON rendering of a C string or token list, for failure messages. */
static char *json_str(const char *s)
{
	if (!s)
		return strdup("null");
	json_t *j = json_string(s);
	char *out = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
	json_decref(j);
	return out ? out : strdup("(invalid UTF-8)");
}

static char *list_str(const struct token_list *l)
{
	json_t *toks = json_array(), *ids = json_array();
	for (int i = 0; i < l->n; i++) {
		json_array_append_new(toks, json_string(l->pieces[i]));
		json_array_append_new(ids, json_integer(l->ids[i]));
	}
	char *a = json_dumps(toks, JSON_COMPACT), *b = json_dumps(ids, JSON_COMPACT);
	char *s = testutil_printf("%s %s", a, b);
	free(a);
	free(b);
	json_decref(toks);
	json_decref(ids);
	return s;
}

/* Compare OUT with a case object (tokens, ids, type_ids, special, truncated, n_before_truncation);
 * NULL when equal, else what differs. */
static char *diff_case(json_t *c, const struct token_list *out)
{
	json_t *toks = json_object_get(c, "tokens"), *ids = json_object_get(c, "ids");
	json_t *types = json_object_get(c, "type_ids");
	if (!types)
		types = json_object_get(c, "token_type_ids");
	json_t *special = json_object_get(c, "special");
	json_t *trunc = json_object_get(c, "truncated"), *nbef = json_object_get(c, "n_before_truncation");
	const char *what = NULL;
	if ((int)json_array_size(toks) != out->n || (int)json_array_size(ids) != out->n) {
		what = "length";
	} else {
		for (int i = 0; i < out->n && !what; i++) {
			if (strcmp(json_string_value(json_array_get(toks, i)), out->pieces[i]) != 0)
				what = "tokens";
			else if (json_integer_value(json_array_get(ids, i)) != out->ids[i])
				what = "ids";
			else if (json_is_array(types) && json_integer_value(json_array_get(types, i)) != out->type_ids[i])
				what = "type_ids";
			else if (json_is_array(special) && json_is_true(json_array_get(special, i)) != out->special[i])
				what = "special";
		}
	}
	if (!what && trunc && json_is_true(trunc) != out->truncated)
		what = "truncated";
	if (!what && nbef && json_integer_value(nbef) != out->n_before_truncation)
		what = "n_before_truncation";
	if (!what)
		return NULL;
	char *wt = json_dumps(toks, JSON_COMPACT), *wi = json_dumps(ids, JSON_COMPACT), *g = list_str(out);
	char *msg = testutil_printf("%s differ\n    want %s %s\n    got  %s (truncated %d, n_before %d)", what, wt, wi, g,
			       out->truncated, out->n_before_truncation);
	free(wt);
	free(wi);
	free(g);
	return msg;
}

/* Run one case; on a difference print it and return 1. */
static int run_case(struct tokenizer *tok, const char *label, json_t *c)
{
	const char *text = json_string_value(json_object_get(c, "text"));
	const char *text_b = json_string_value(json_object_get(c, "text_b"));
	int max_len = (int)json_integer_value(json_object_get(c, "max_len"));
	struct token_list out;
	struct err e = {""};
	char *msg;
	if (tokenizer_encode(tok, text, text_b, max_len, &out, &e) < 0)
		msg = testutil_printf("error: %s", e.msg);
	else
		msg = diff_case(c, &out);
	token_list_free(&out);
	if (!msg)
		return 0;
	char *t = json_str(text), *tb = json_str(text_b);
	fprintf(stderr, "MISMATCH %s: text %s text_b %s max_len %d: %s\n", label, t, tb, max_len, msg);
	free(t);
	free(tb);
	free(msg);
	return 1;
}

static json_t *load_cases(void)
{
	char *p = testutil_printf("%s/tests/data/tokenizer/cases.json", testutil_srcdir());
	json_error_t je;
	json_t *cases = json_load_file(p, 0, &je);
	ck_assert_msg(json_is_array(cases), "%s: %s", p, je.text);
	free(p);
	return cases;
}

/* ---------------------------------------------------------------- the reference cases */

/* The fixture tokenizers, loaded once by main() before the tests fork (a tokenizer is
 * immutable, so the tests share them). */
static const char *const fixture_names[] = {"bert", "gpt2", "bert-json", "bert-cased", "bert-cased-strip", "gpt2-json",
					     "bpe-odd"};
#define MAX_FIXTURES (sizeof fixture_names / sizeof fixture_names[0])
static struct tokenizer *fixtures[MAX_FIXTURES];

static int fixtures_load(void)
{
	for (size_t i = 0; i < MAX_FIXTURES; i++) {
		char *dir = testutil_printf("%s/tests/data/tokenizer/%s", testutil_srcdir(), fixture_names[i]);
		struct err e = {""};
		int rc = tokenizer_load(dir, kind_of(fixture_names[i]), &fixtures[i], &e);
		free(dir);
		if (rc < 0) {
			fprintf(stderr, "check_tokenizer: fixture %s: %s\n", fixture_names[i], e.msg);
			return -1;
		}
	}
	return 0;
}

static struct tokenizer *fixture(const char *name)
{
	for (size_t i = 0; i < MAX_FIXTURES; i++)
		if (strcmp(fixture_names[i], name) == 0)
			return fixtures[i];
	ck_abort_msg("no fixture %s", name);
	return NULL;
}

static void fixtures_free(void)
{
	for (size_t i = 0; i < MAX_FIXTURES; i++) {
		tokenizer_free(fixtures[i]);
		fixtures[i] = NULL;
	}
}

START_TEST(test_fixture_cases)
{
	json_t *cases = load_cases();
	size_t i;
	json_t *c;
	int bad = 0;
	json_array_foreach(cases, i, c) {
		const char *fx = json_string_value(json_object_get(c, "fixture"));
		char *label = testutil_printf("cases.json #%zu (%s)", i, fx);
		struct tokenizer *tok = fixture(fx);
		ck_assert_int_eq(kind_of(json_string_value(json_object_get(c, "kind"))), kind_of(fx));
		bad += run_case(tok, label, c);
		free(label);
	}
	printf("check_tokenizer: %zu reference cases, %d mismatches\n", json_array_size(cases), bad);
	ck_assert_msg(json_array_size(cases) >= 500, "cases.json has only %zu cases", json_array_size(cases));
	ck_assert_msg(bad == 0, "%d of %zu cases differ (listed above)", bad, json_array_size(cases));
	json_decref(cases);
}
END_TEST

START_TEST(test_shared_reference)
{
	char *ref = testutil_shared_ref();
	char *cdir = testutil_printf("%s/cases", ref);
	DIR *d = opendir(cdir);
	if (!d) {
		printf("check_tokenizer: shared reference not found at %s: skipped\n", ref);
		free(cdir);
		free(ref);
		return;
	}
	int n = 0, bad = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *sep = strstr(de->d_name, "--");
		size_t nl = strlen(de->d_name);
		if (!sep || nl < 5 || strcmp(de->d_name + nl - 5, ".json") != 0)
			continue;
		char *model = strndup(de->d_name, (size_t)(sep - de->d_name));
		char *mdir = testutil_printf("%s/models/%s", ref, model);
		char *cpath = testutil_printf("%s/%s", cdir, de->d_name);
		json_error_t je;
		json_t *c = json_load_file(cpath, 0, &je);
		ck_assert_msg(c != NULL, "%s: %s", cpath, je.text);
		/* The tokenizer the model's family uses; families attnscope does not run yet are listed. */
		struct hfconfig cfg = {0};
		struct family fam = {0};
		struct err e = {""};
		ck_assert_msg(hfconfig_load(mdir, &cfg, &e) == 0, "%s", e.msg);
		/* Families without a description yet: a folder with a tokenizer.json is read as one
		 * (TOKENIZER_JSON), which is what their descriptions will say. */
		char *tjson = testutil_printf("%s/tokenizer.json", mdir);
		bool has_json = access(tjson, F_OK) == 0;
		free(tjson);
		enum tokenizer_kind kind = TOKENIZER_JSON;
		bool known = family_load(cfg.model_type, &fam, &e) == 0;
		if (known)
			kind = fam.tokenizer;
		if (!known && !has_json) {
			printf("check_tokenizer: %s: NOT SUPPORTED YET: %s\n", de->d_name, e.msg);
		} else {
			struct tokenizer *tok = NULL;
			ck_assert_msg(tokenizer_load(mdir, kind, &tok, &e) == 0, "%s", e.msg);
			bad += run_case(tok, de->d_name, c);
			n++;
			tokenizer_free(tok);
		}
		family_free(&fam);
		hfconfig_free(&cfg);
		json_decref(c);
		free(cpath);
		free(mdir);
		free(model);
	}
	closedir(d);
	printf("check_tokenizer: %d Hugging Face reference cases from %s, %d mismatches\n", n, ref, bad);
	ck_assert_msg(n > 0, "no cases in %s", cdir);
	ck_assert_msg(bad == 0, "%d of %d reference cases differ (listed above)", bad, n);
	free(cdir);
	free(ref);
}
END_TEST

/* ---------------------------------------------------------------- truncation and pairs */

static struct token_list encode_ok(struct tokenizer *tok, const char *a, const char *b, int max_len)
{
	struct token_list out;
	struct err e = {""};
	int rc = tokenizer_encode(tok, a, b, max_len, &out, &e);
	ck_assert_msg(rc == 0, "encode(\"%s\", \"%s\", %d): %s", a, b ? b : "(null)", max_len, e.msg);
	return out;
}

START_TEST(test_truncation)
{
	struct tokenizer *bert = fixture("bert");
	struct tokenizer *gpt2 = fixture("gpt2");
	const char *text = "the cat sat on the mat and looked at the dog for a very long time";
	struct token_list full = encode_ok(bert, text, NULL, 0);
	ck_assert(!full.truncated);
	ck_assert_int_eq(full.n_before_truncation, full.n);
	/* single text: keep the first max_len-2 pieces, then [SEP] */
	for (int ml = 3; ml < full.n + 3; ml++) {
		struct token_list t = encode_ok(bert, text, NULL, ml);
		int want = ml < full.n ? ml : full.n;
		ck_assert_int_eq(t.n, want);
		ck_assert_int_eq(t.truncated, ml < full.n);
		ck_assert_int_eq(t.n_before_truncation, full.n);
		for (int i = 0; i < t.n - 1; i++)
			ck_assert_int_eq(t.ids[i], full.ids[i]);
		ck_assert_str_eq(t.pieces[t.n - 1], "[SEP]");
		ck_assert(t.special[t.n - 1]);
		token_list_free(&t);
	}
	/* nothing of the text would be left: an error, not a silently over-long list */
	struct token_list t;
	struct err e = {""};
	ck_assert_int_eq(tokenizer_encode(bert, text, NULL, 2, &t, &e), -1);
	ck_assert_msg(strstr(e.msg, "max_len 2") != NULL, "%s", e.msg);
	ck_assert_int_eq(tokenizer_encode(bert, "a", "b", 2, &t, &e), -1);
	ck_assert_msg(strstr(e.msg, "pair") != NULL, "%s", e.msg);
	/* pair, longest_first: the longer side loses tokens until both are equal, then B first */
	const char *b = "short one";
	struct token_list fb = encode_ok(bert, b, NULL, 0);
	int la = full.n - 2, lb = fb.n - 2;
	for (int ml = 3; ml <= la + lb + 3; ml++) {
		struct token_list p = encode_ok(bert, text, b, ml);
		int ea = la, eb = lb;
		for (int k = 0; k < la + lb + 3 - ml; k++) {
			if (ea > eb)
				ea--;
			else
				eb--;
		}
		ck_assert_int_eq(p.n, ea + eb + 3);
		ck_assert_int_eq(p.n_before_truncation, la + lb + 3);
		ck_assert_str_eq(p.pieces[ea + 1], "[SEP]");
		ck_assert_str_eq(p.pieces[p.n - 1], "[SEP]");
		for (int i = 0; i < p.n; i++)
			ck_assert_int_eq(p.type_ids[i], i <= ea + 1 ? 0 : 1);
		token_list_free(&p);
	}
	/* GPT-2 adds nothing: max_len is the number of text tokens kept */
	struct token_list g = encode_ok(gpt2, text, NULL, 0);
	struct token_list g5 = encode_ok(gpt2, text, NULL, 5);
	ck_assert_int_eq(g5.n, 5);
	ck_assert(g5.truncated);
	ck_assert_int_eq(g5.n_before_truncation, g.n);
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(g5.ids[i], g.ids[i]);
	token_list_free(&g5);
	token_list_free(&g);
	token_list_free(&fb);
	token_list_free(&full);
}
END_TEST

START_TEST(test_pairs)
{
	struct tokenizer *bert = fixture("bert");
	struct tokenizer *gpt2 = fixture("gpt2");
	const char *a = "Where is the café?", *b = "It's in Zürich, near the lake.";
	/* BERT: [CLS] a [SEP] b [SEP], type ids 0 through the first [SEP] */
	struct token_list sa = encode_ok(bert, a, NULL, 0), sb = encode_ok(bert, b, NULL, 0);
	struct token_list p = encode_ok(bert, a, b, 0);
	ck_assert_int_eq(p.n, sa.n + sb.n - 1);
	for (int i = 0; i < sa.n; i++) {
		ck_assert_int_eq(p.ids[i], sa.ids[i]);
		ck_assert_int_eq(p.type_ids[i], 0);
	}
	for (int i = 1; i < sb.n; i++) {
		ck_assert_int_eq(p.ids[sa.n + i - 1], sb.ids[i]);
		ck_assert_int_eq(p.type_ids[sa.n + i - 1], 1);
	}
	token_list_free(&p);
	token_list_free(&sa);
	token_list_free(&sb);
	/* GPT-2: the two lists concatenated, nothing added */
	struct token_list ga = encode_ok(gpt2, a, NULL, 0), gb = encode_ok(gpt2, b, NULL, 0);
	struct token_list gp = encode_ok(gpt2, a, b, 0);
	ck_assert_int_eq(gp.n, ga.n + gb.n);
	for (int i = 0; i < gp.n; i++) {
		ck_assert_int_eq(gp.ids[i], i < ga.n ? ga.ids[i] : gb.ids[i - ga.n]);
		ck_assert_int_eq(gp.type_ids[i], 0);
		ck_assert(!gp.special[i]);
	}
	token_list_free(&gp);
	token_list_free(&ga);
	token_list_free(&gb);
	/* empty texts: [CLS] [SEP] for BERT, nothing for GPT-2 */
	struct token_list be = encode_ok(bert, "", NULL, 0), ge = encode_ok(gpt2, "", NULL, 0);
	ck_assert_int_eq(be.n, 2);
	ck_assert_str_eq(be.pieces[0], "[CLS]");
	ck_assert_str_eq(be.pieces[1], "[SEP]");
	ck_assert_int_eq(ge.n, 0);
	token_list_free(&be);
	token_list_free(&ge);
}
END_TEST

START_TEST(test_vocab_api)
{
	struct tokenizer *bert = fixture("bert");
	struct tokenizer *gpt2 = fixture("gpt2");
	/* sizes and ids as the fixture files define them: lines of vocab.txt, entries of vocab.json */
	ck_assert_int_eq(tokenizer_vocab_size(bert), 30522);
	ck_assert_int_eq(tokenizer_vocab_size(gpt2), 50257);
	ck_assert_int_eq(tokenizer_token_to_id(bert, "[CLS]"), 101);
	ck_assert_str_eq(tokenizer_id_to_token(bert, 102), "[SEP]");
	ck_assert_str_eq(tokenizer_id_to_token(bert, 30521), "##～");
	ck_assert_int_eq(tokenizer_token_to_id(gpt2, "<|endoftext|>"), 50256);
	ck_assert_str_eq(tokenizer_id_to_token(gpt2, 464), "The");
	ck_assert_ptr_null(tokenizer_id_to_token(bert, -1));
	ck_assert_ptr_null(tokenizer_id_to_token(bert, 30522));
	ck_assert_ptr_null(tokenizer_id_to_token(gpt2, 50257));
	ck_assert_int_eq(tokenizer_token_to_id(bert, "no-such-token"), -1);
}
END_TEST

/* How pieces are written, from the kind or tokenizer.json's decoder (trace.h's pieces). */
START_TEST(test_pieces)
{
	ck_assert_int_eq(tokenizer_pieces(fixture("bert")), TOKENIZER_PIECES_WORDPIECE);
	ck_assert_int_eq(tokenizer_pieces(fixture("bert-json")), TOKENIZER_PIECES_WORDPIECE);
	ck_assert_int_eq(tokenizer_pieces(fixture("gpt2")), TOKENIZER_PIECES_BYTE_LEVEL);
	ck_assert_int_eq(tokenizer_pieces(fixture("gpt2-json")), TOKENIZER_PIECES_BYTE_LEVEL);
	struct tokenizer *llama2 = load_fixture("json/llama2", TOKENIZER_JSON); /* Replace("▁" -> " ") decoder */
	ck_assert_int_eq(tokenizer_pieces(llama2), TOKENIZER_PIECES_SENTENCEPIECE);
	tokenizer_free(llama2);
}
END_TEST

/* ---------------------------------------------------------------- errors */

static char tmpdir[256];

static void tmp_setup(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(tmpdir, sizeof tmpdir, "%s/check_tokenizer.XXXXXX", t && *t ? t : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void tmp_clear(void)
{
	DIR *d = opendir(tmpdir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char *p = testutil_printf("%s/%s", tmpdir, de->d_name);
		unlink(p);
		free(p);
	}
	closedir(d);
}

static void tmp_teardown(void)
{
	tmp_clear();
	rmdir(tmpdir);
}

static void put_file(const char *name, const char *data, size_t len)
{
	char *p = testutil_printf("%s/%s", tmpdir, name);
	FILE *f = fopen(p, "wb");
	ck_assert_msg(f != NULL, "%s: %s", p, strerror(errno));
	ck_assert_int_eq(fwrite(data, 1, len, f), len);
	fclose(f);
	free(p);
}

static void put(const char *name, const char *text)
{
	put_file(name, text, strlen(text));
}

/* Loading the files now in tmpdir fails with a one-line message holding each NEEDLE. */
static void expect_load_error(enum tokenizer_kind kind, const char *needle1, const char *needle2)
{
	struct tokenizer *tok = NULL;
	struct err e = {""};
	ck_assert_msg(tokenizer_load(tmpdir, kind, &tok, &e) == -1, "loading succeeded, expected \"%s\"", needle1);
	ck_assert_ptr_null(tok);
	ck_assert_msg(strstr(e.msg, needle1) != NULL, "message \"%s\" lacks \"%s\"", e.msg, needle1);
	ck_assert_msg(!needle2 || strstr(e.msg, needle2) != NULL, "message \"%s\" lacks \"%s\"", e.msg, needle2);
	ck_assert_msg(strchr(e.msg, '\n') == NULL, "message \"%s\" is not one line", e.msg);
	tmp_clear();
}

START_TEST(test_load_errors)
{
	struct tokenizer *tok = NULL;
	struct err e = {""};
	ck_assert_int_eq(tokenizer_load("/nonexistent/model", TOKENIZER_WORDPIECE, &tok, &e), -1);
	ck_assert_str_eq(e.msg, "/nonexistent/model: No such file or directory");
	char *file = testutil_printf("%s/tests/data/tokenizer/bert/vocab.txt", testutil_srcdir());
	ck_assert_int_eq(tokenizer_load(file, TOKENIZER_WORDPIECE, &tok, &e), -1);
	ck_assert_msg(strstr(e.msg, "vocab.txt: not a folder") != NULL, "%s", e.msg);
	free(file);

	expect_load_error(TOKENIZER_WORDPIECE, "no vocab.txt or tokenizer.json", tmpdir);
	put("vocab.txt", "");
	expect_load_error(TOKENIZER_WORDPIECE, "vocab.txt: empty vocabulary", NULL);
	put("vocab.txt", "[PAD]\n[UNK]\n[SEP]\nhello\n");
	expect_load_error(TOKENIZER_WORDPIECE, "vocab.txt", "cls_token \"[CLS]\" is not in the vocabulary");
	put("vocab.txt", "[UNK]\n[CLS]\n[SEP]\ncaf\xc3\n");
	expect_load_error(TOKENIZER_WORDPIECE, "vocab.txt: invalid UTF-8 at byte 21", NULL);
	put("vocab.txt", "[UNK]\n[CLS]\n[SEP]\n");
	put("tokenizer_config.json", "{\"do_lower_case\": tru");
	expect_load_error(TOKENIZER_WORDPIECE, "tokenizer_config.json: line 1", NULL);
	put("vocab.txt", "[UNK]\n[CLS]\n[SEP]\n");
	put("tokenizer_config.json", "{\"do_lower_case\": \"yes\"}");
	expect_load_error(TOKENIZER_WORDPIECE, "tokenizer_config.json", "do_lower_case is not true or false");
	put("tokenizer.json", "{\"model\": {\"type\": \"Unigram\", \"vocab\": []}}");
	expect_load_error(TOKENIZER_WORDPIECE, "tokenizer.json: the model is Unigram, not WordPiece", NULL);
	put("tokenizer.json", "{\"model\": {\"type\": \"WordPiece\", \"vocab\": {}}}");
	expect_load_error(TOKENIZER_WORDPIECE, "tokenizer.json: model.vocab: empty vocabulary", NULL);

	static const struct {
		const char *config, *needle;
	} bad_configs[] = {
		{"[1, 2]", "tokenizer_config.json: not a JSON object"},
		{"{\"cls_token\": 5}", "cls_token is not a string or a token object"},
		{"{\"cls_token\": {\"content\": 3}}", "cls_token is not a string or a token object"},
		{"{\"additional_special_tokens\": \"[X]\"}", "additional_special_tokens is not a list"},
		{"{\"never_split\": [1]}", "never_split has a value that is not a string"},
		{"{\"strip_accents\": 1}", "strip_accents is not true, false or null"},
		{"{\"unk_token\": \"\"}", "unk_token \"\" is not in the vocabulary"},
		{"{\"sep_token\": \"[NOPE]\"}", "vocab.txt: the sep_token \"[NOPE]\" is not in the vocabulary"},
	};
	for (size_t i = 0; i < sizeof bad_configs / sizeof bad_configs[0]; i++) {
		put("vocab.txt", "[UNK]\n[CLS]\n[SEP]\n");
		put("tokenizer_config.json", bad_configs[i].config);
		expect_load_error(TOKENIZER_WORDPIECE, bad_configs[i].needle, NULL);
	}
	put("vocab.txt", "[UNK]\n[CLS]\n[SEP]\n");
	put("added_tokens.json", "{\"new\": \"zero\"}");
	expect_load_error(TOKENIZER_WORDPIECE, "added_tokens.json", "is not an integer");
	/* a file past the size limit is refused before anything is read (sparse: no disk used) */
	put("vocab.txt", "");
	char *big = testutil_printf("%s/vocab.txt", tmpdir);
	ck_assert_int_eq(truncate(big, (off_t)65 << 20), 0);
	free(big);
	expect_load_error(TOKENIZER_WORDPIECE, "vocab.txt: file too large", NULL);

	expect_load_error(TOKENIZER_BPE, "no vocab.json + merges.txt or tokenizer.json", NULL);
	put("merges.txt", "#version: 0.2\na b\n");
	expect_load_error(TOKENIZER_BPE, "vocab.json: missing", "merges.txt");
	put("vocab.json", "{\"<|endoftext|>\": 0}");
	expect_load_error(TOKENIZER_BPE, "merges.txt: missing", NULL);
	put("merges.txt", "#version: 0.2\n");
	put("vocab.json", "{\"a\": 1, \"b\": ");
	expect_load_error(TOKENIZER_BPE, "vocab.json: line 1 column", NULL);
	put("merges.txt", "#version: 0.2\n");
	put("vocab.json", "[\"a\", \"b\"]");
	expect_load_error(TOKENIZER_BPE, "vocab.json", "not a JSON object");
	put("merges.txt", "#version: 0.2\n");
	put("vocab.json", "{}");
	expect_load_error(TOKENIZER_BPE, "vocab.json: empty vocabulary", NULL);
	put("merges.txt", "#version: 0.2\n");
	put("vocab.json", "{\"<|endoftext|>\": 2000000000}");
	expect_load_error(TOKENIZER_BPE, "vocab.json", "out of range");
	put("merges.txt", "#version: 0.2\n");
	put("vocab.json", "{\"<|endoftext|>\": 4000000, \"a\": 0}");
	expect_load_error(TOKENIZER_BPE, "vocab.json", "too sparse");
	put("merges.txt", "#version: 0.2\n");
	put("vocab.json", "{\"<|endoftext|>\": \"zero\"}");
	expect_load_error(TOKENIZER_BPE, "vocab.json", "not an integer");
	put("merges.txt", "#version: 0.2\n");
	put("vocab.json", "{\"a\": 0}");
	expect_load_error(TOKENIZER_BPE, "vocab.json", "unk_token \"<|endoftext|>\" is not in the vocabulary");
	put("tokenizer.json", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"<|endoftext|>\": 0}, \"merges\": [\"a b c\"]}}");
	expect_load_error(TOKENIZER_BPE, "tokenizer.json: model.merges[0]", NULL);
	put("tokenizer.json", "not json");
	expect_load_error(TOKENIZER_BPE, "tokenizer.json: line 1", NULL);

	/* a minimal valid pair loads, and its only merge is used */
	put("vocab.json", "{\"<|endoftext|>\": 0, \"a\": 1, \"b\": 2, \"ab\": 3}");
	put("merges.txt", "#version: 0.2\na b\n");
	ck_assert_msg(tokenizer_load(tmpdir, TOKENIZER_BPE, &tok, &e) == 0, "%s", e.msg);
	struct token_list out = encode_ok(tok, "abba", NULL, 0);
	ck_assert_int_eq(out.n, 3);
	ck_assert_int_eq(out.ids[0], 3);
	ck_assert_int_eq(out.ids[1], 2);
	ck_assert_int_eq(out.ids[2], 1);
	token_list_free(&out);
	/* a character outside the vocabulary becomes the unknown token */
	out = encode_ok(tok, "abc", NULL, 0);
	ck_assert_int_eq(out.n, 2);
	ck_assert_int_eq(out.ids[1], 0);
	token_list_free(&out);
	tokenizer_free(tok);
	tmp_clear();
}
END_TEST

START_TEST(test_invalid_utf8)
{
	static const struct {
		const char *text;
		int at;
	} bad[] = {
		{"ab\xff" "cd", 2},         /* never valid */
		{"\xc0\x80", 0},            /* overlong NUL */
		{"ok \xe0\x80\xaf", 3},     /* overlong '/' */
		{"\xed\xa0\x80 surrogate", 0},
		{"x\xf4\x90\x80\x80", 1},   /* past U+10FFFF */
		{"caf\xc3", 3},             /* cut short */
		{"caf\xc3 e", 3},
		{"\x80", 0},                /* lone continuation */
		{"日本\xe8\xaa", 6},
	};
	struct tokenizer *toks[2] = {fixture("bert"), fixture("gpt2")};
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
			struct token_list out;
			struct err e = {""};
			char want[64];
			snprintf(want, sizeof want, "invalid UTF-8 at byte %d", bad[i].at);
			ck_assert_int_eq(tokenizer_encode(toks[k], bad[i].text, NULL, 0, &out, &e), -1);
			ck_assert_str_eq(e.msg, want);
			ck_assert_int_eq(out.n, 0);
			ck_assert_int_eq(tokenizer_encode(toks[k], "fine", bad[i].text, 0, &out, &e), -1);
			ck_assert_msg(strstr(e.msg, want) && strstr(e.msg, "second text"), "%s", e.msg);
		}
	}
}
END_TEST

/* ---------------------------------------------------------------- robustness */

static uint32_t rng_state = 12345;
static uint32_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

static bool utf8proc_says_valid(const char *s, size_t len)
{
	utf8proc_ssize_t i = 0;
	while ((size_t)i < len) {
		utf8proc_int32_t cp;
		utf8proc_ssize_t k = utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)len - i, &cp);
		if (k < 0)
			return false;
		i += k;
	}
	return true;
}

START_TEST(test_random_text)
{
	struct tokenizer *toks[2] = {fixture("bert"), fixture("gpt2")};
	char buf[200];
	int n_valid = 0;
	for (int iter = 0; iter < 3000; iter++) {
		size_t len = 0;
		if (iter % 2) { /* raw bytes, mostly invalid */
			len = rng() % 40;
			for (size_t i = 0; i < len; i++)
				buf[i] = (char)(rng() % 255 + 1);
		} else {        /* random code points anywhere in Unicode */
			int n = (int)(rng() % 30);
			for (int i = 0; i < n; i++) {
				uint32_t cp = rng() % 4 ? rng() % 0x3000 + 1 : rng() % 0x10FFFF + 1;
				if (cp >= 0xD800 && cp <= 0xDFFF)
					cp = 'x';
				len += (size_t)utf8proc_encode_char((utf8proc_int32_t)cp, (utf8proc_uint8_t *)buf + len);
			}
		}
		buf[len] = '\0';
		bool valid = utf8proc_says_valid(buf, len);
		n_valid += valid;
		for (int k = 0; k < 2; k++) {
			struct token_list out;
			struct err e = {""};
			int rc = tokenizer_encode(toks[k], buf, iter % 3 ? NULL : "and more", 0, &out, &e);
			ck_assert_msg((rc == 0) == valid, "input %d: rc %d, valid %d: %s", iter, rc, valid, e.msg);
			for (int i = 0; i < out.n; i++) {
				assert_each(out.ids[i] >= 0 && out.ids[i] < tokenizer_vocab_size(toks[k]),
					    "input %d: id %d out of the vocabulary", iter, out.ids[i]);
				assert_each(strcmp(out.pieces[i], tokenizer_id_to_token(toks[k], out.ids[i])) == 0,
					    "input %d: piece \"%s\" is not id %d's", iter, out.pieces[i], out.ids[i]);
			}
			if (rc == 0 && k == 0)
				ck_assert_int_ge(out.n, 2);
			token_list_free(&out);
		}
	}
	ck_assert_int_gt(n_valid, 1500);
}
END_TEST

START_TEST(test_random_files)
{
	/* garbage and truncated versions of real files must load or fail cleanly, never crash */
	static const char *const names[] = {"vocab.txt", "vocab.json", "merges.txt", "tokenizer.json"};
	static const char *const configs[] = {"tokenizer_config.json", "special_tokens_map.json", "added_tokens.json"};
	static const char *const config_texts[] = {
		"{\"do_lower_case\": false, \"cls_token\": {\"content\": \"[SEP]\", \"lstrip\": true}}",
		"{\"additional_special_tokens\": [\"the\", {\"content\": \"a\", \"rstrip\": true}, \"\"]}",
		"{\"x\": 1, \"\": 2, \"the\": 3, \"[CLS]\": 4}",
		"{\"never_split\": [\"\", \"a\"], \"strip_accents\": true, \"tokenize_chinese_chars\": false}",
		"{\"unk_token\": {\"content\": \"[UNK]\", \"lstrip\": 1, \"rstrip\": null}}",
		"{\"add_prefix_space\": true, \"pad_token\": null, \"mask_token\": [1]}",
	};
	char *good[4];
	size_t good_len[4];
	for (int f = 0; f < 4; f++) {
		char *p = testutil_printf("%s/tests/data/tokenizer/%s/%s", testutil_srcdir(),
				     f == 0 ? "bert-cased" : f == 3 ? "gpt2-json" : "gpt2", names[f]);
		FILE *fp = fopen(p, "rb");
		ck_assert_ptr_nonnull(fp);
		fseek(fp, 0, SEEK_END);
		good_len[f] = (size_t)ftell(fp);
		rewind(fp);
		good[f] = malloc(good_len[f]);
		ck_assert_int_eq(fread(good[f], 1, good_len[f], fp), good_len[f]);
		fclose(fp);
		free(p);
	}
	for (int iter = 0; iter < 96; iter++) {
		int f = iter % 4;
		size_t len = iter < 48 ? rng() % 300 : rng() % (good_len[f] < 65536 ? good_len[f] : 65536);
		char *data = malloc(len + 1);
		for (size_t i = 0; i < len; i++)
			data[i] = iter < 48 ? (char)rng() : good[f][i];
		data[len] = '\0';
		if (iter >= 72 && len) /* a few flipped bytes in a real prefix */
			for (int k = 0; k < 4; k++)
				data[rng() % len] = (char)rng();
		put_file(names[f], data, len);
		if (f == 1) /* a small valid partner file, so only the broken one is under test */
			put("merges.txt", "#version: 0.2\n\xc4\xa0 t\nh e\n");
		if (f == 2)
			put("vocab.json", "{\"<|endoftext|>\": 0, \"\xc4\xa0t\": 1, \"he\": 2, \"h\": 3}");
		if (iter % 3 == 0) { /* odd but well-formed or garbage configuration next to the model */
			const char *cfg = config_texts[rng() % (sizeof config_texts / sizeof config_texts[0])];
			put(configs[rng() % 3], iter % 2 ? cfg : data);
		}
		struct tokenizer *tok = NULL;
		struct err e = {""};
		enum tokenizer_kind kind = f == 0 ? TOKENIZER_WORDPIECE : TOKENIZER_BPE;
		if (tokenizer_load(tmpdir, kind, &tok, &e) == 0) {
			struct token_list out;
			if (tokenizer_encode(tok, "Hello, wörld! 日本 <|endoftext|> [CLS] x the a", "b", 5, &out, &e) == 0)
				token_list_free(&out);
			tokenizer_free(tok);
		} else {
			ck_assert_msg(e.msg[0] && !strchr(e.msg, '\n'), "bad message \"%s\"", e.msg);
		}
		free(data);
		tmp_clear();
	}
	for (int f = 0; f < 4; f++)
		free(good[f]);
}
END_TEST

/* ---------------------------------------------------------------- threads and speed */

struct thread_job {
	struct tokenizer *tok;
	json_t *cases;
	const char *fixture;
	int mismatches;
};

static void *thread_run(void *arg)
{
	struct thread_job *j = arg;
	size_t i;
	json_t *c;
	json_array_foreach(j->cases, i, c) {
		if (strcmp(json_string_value(json_object_get(c, "fixture")), j->fixture) == 0)
			j->mismatches += run_case(j->tok, "thread", c);
	}
	return NULL;
}

START_TEST(test_shared_between_threads)
{
	json_t *cases = load_cases();
	struct tokenizer *gpt2 = fixture("gpt2");
	struct thread_job jobs[2] = {{gpt2, cases, "gpt2", 0}, {gpt2, cases, "gpt2", 0}};
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, thread_run, &jobs[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	ck_assert_int_eq(jobs[0].mismatches + jobs[1].mismatches, 0);
	json_decref(cases);
}
END_TEST

START_TEST(test_speed)
{
	/* Not a benchmark (valgrind and ASan slow this down many times): prints the figures and
	 * checks a long word without spaces, BPE's worst case, stays far from quadratic blow-up. */
	double t0 = now_ms();
	struct tokenizer *gpt2 = load_fixture("gpt2", TOKENIZER_BPE);
	double t1 = now_ms();
	struct tokenizer *bert = load_fixture("bert", TOKENIZER_WORDPIECE);
	double t2 = now_ms();
	char *text = malloc(64 * 1024);
	size_t n = 0;
	const char *sentence = "The brown capybara, naïve and café-bound, slept 150 years ago! ";
	size_t sl = strlen(sentence);
	while (n + sl < 60000) {
		memcpy(text + n, sentence, sl);
		n += sl;
	}
	text[n] = '\0';
	struct token_list a = encode_ok(gpt2, text, NULL, 0);
	double t3 = now_ms();
	struct token_list b = encode_ok(bert, text, NULL, 0);
	double t4 = now_ms();
	for (int i = 0; i < 20000; i++) /* letters without a space: one piece, thousands of merges */
		text[i] = "etaoinshrdlucmfwypvbgkqjxz"[rng() % 26];
	text[20000] = '\0';
	struct token_list c = encode_ok(gpt2, text, NULL, 0);
	double t5 = now_ms();
	printf("check_tokenizer: load GPT-2 %.1f ms, BERT %.1f ms; encode %zu bytes: GPT-2 %.1f ms (%d tokens), "
	       "BERT %.1f ms (%d tokens); 20000-letter word: %.1f ms\n",
	       t1 - t0, t2 - t1, n, t3 - t2, a.n, t4 - t3, b.n, t5 - t4);
	ck_assert_int_gt(c.n, 0);
	ck_assert_msg(t5 - t4 < 60000, "a 20000-letter word took %.0f ms", t5 - t4);
	token_list_free(&a);
	token_list_free(&b);
	token_list_free(&c);
	free(text);
	tokenizer_free(gpt2);
	tokenizer_free(bert);
}
END_TEST

static Suite *tokenizer_suite(void)
{
	/* generous per-test limits: valgrind runs these 30-50 times slower */
	Suite *s = suite_create("tokenizer");
	TCase *tc = tcase_create("reference");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_fixture_cases);
	tcase_add_test(tc, test_shared_reference);
	suite_add_tcase(s, tc);
	tc = tcase_create("assembly");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_truncation);
	tcase_add_test(tc, test_pairs);
	tcase_add_test(tc, test_vocab_api);
	tcase_add_test(tc, test_pieces);
	suite_add_tcase(s, tc);
	tc = tcase_create("errors");
	tcase_set_timeout(tc, 300);
	tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
	tcase_add_test(tc, test_load_errors);
	tcase_add_test(tc, test_invalid_utf8);
	tcase_add_test(tc, test_random_files);
	suite_add_tcase(s, tc);
	tc = tcase_create("robustness");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_random_text);
	tcase_add_test(tc, test_shared_between_threads);
	tcase_add_test(tc, test_speed);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	if (fixtures_load() < 0)
		return EXIT_FAILURE;
	int failed = testutil_run_suite(tokenizer_suite(), false);
	fixtures_free();
	return failed;
}
