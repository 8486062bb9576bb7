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
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "tokenizer/tokenizer.h"

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
	char *s = testutil_printf("%s %s", a ? a : "?", b ? b : "?");
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
	char *ref = testutil_shared_ref();
	int n = 0, bad = 0;
	for (size_t m = 0; m < N_MODELS; m++) {
		if (!toks[m])
			continue;
		static const char *const names[] = {"book", "pair", "capybara", "fiji", "friend"};
		for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
			char *p = testutil_printf("%s/cases/%s--%s.json", ref, models[m].dir, names[k]);
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

/* ---------------------------------------------------------------- 2. invariants on hard inputs */

static const char *const hard_texts[] = {
	"",
	" ",
	"   \t\n  ",
	"caf\xc3\xa9 na\xc3\xafve \xc3\x85ngstr\xc3\xb6m r\xc3\xa9sum\xc3\xa9 e\xcc\x81",          /* precomposed and combining accents */
	"\xe4\xb8\xad\xe6\x96\x87\xe6\xb5\x8b\xe8\xaf\x95 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae\xe3\x83\x86\xe3\x82\xad\xe3\x82\xb9\xe3\x83\x88 \xed\x95\x9c\xea\xb5\xad\xec\x96\xb4", /* CJK, kana, hangul */
	"emoji \xf0\x9f\x98\x80\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd \xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x91\xa7 flags \xf0\x9f\x87\xab\xf0\x9f\x87\xb7",
	"a    b\t\tc\n\n\nd \xc2\xa0 e\xe2\x80\x83" "f  ",                                             /* whitespace runs, NBSP, em space */
	"ctl \x01\x02\x1b[0m\x7f \xc2\x85 \xe2\x80\x8b zero-width",                                  /* control and format characters */
	"1,000,000 and 3,14 and 2, and ,5 x1, \xc2\xb2,",                                             /* ALBERT's digit-comma split */
	"``quoted'' text",                                                                          /* ALBERT's `` and '' */
	"HELLO World MiXeD",
	"\xef\xbc\xa6\xef\xbd\x95\xef\xbd\x8c\xef\xbd\x8c\xef\xbd\x97\xef\xbd\x89\xef\xbd\x84\xef\xbd\x94\xef\xbd\x88 \xe2\x84\x8c \xef\xac\x81", /* NFKC/NFKD-sensitive */
	"\xce\x9f\xce\xa3\xce\xa3\xce\x9f\xce\xa3 \xc4\xb0stanbul",                                  /* Greek final sigma, dotted I */
	"<s></s><pad><unk><mask>[CLS][SEP][MASK][UNK][PAD]",                                         /* literal special tokens */
	"  leading and trailing  ",
};
#define N_HARD (sizeof hard_texts / sizeof hard_texts[0])

/* What holds for every text: ids in range, pieces are convert_ids_to_tokens of the ids and map
 * back to them, the template's tokens at both ends, special flags only on special tokens. */
static void check_invariants(size_t m, const struct token_list *l, const char *text, bool pair, int n_b)
{
	struct tokenizer *tok = toks[m];
	const struct model *md = &models[m];
	int32_t cls = tokenizer_token_to_id(tok, md->cls), sep = tokenizer_token_to_id(tok, md->sep);
	ck_assert_msg(l->n >= 2, "%s %s: %d tokens", md->dir, text, l->n);
	ck_assert_int_eq(l->ids[0], cls);
	ck_assert_int_eq(l->ids[l->n - 1], sep);
	ck_assert(l->special[0] && l->special[l->n - 1]);
	for (int i = 0; i < l->n; i++) {
		ck_assert_msg(l->ids[i] >= 0 && l->ids[i] < tokenizer_vocab_size(tok), "%s: id %d out of range", md->dir,
			      l->ids[i]);
		const char *p = tokenizer_id_to_token(tok, l->ids[i]);
		ck_assert_msg(p && strcmp(p, l->pieces[i]) == 0, "%s: piece %d of \"%s\"", md->dir, i, text);
		ck_assert_msg(tokenizer_token_to_id(tok, l->pieces[i]) == l->ids[i], "%s: \"%s\" does not map back to %d",
			      md->dir, l->pieces[i], l->ids[i]);
		if (l->special[i])
			ck_assert_msg(strchr("<[", l->pieces[i][0]) != NULL, "%s: \"%s\" flagged special", md->dir, l->pieces[i]);
		int want_type = md->types && pair && i >= l->n - n_b ? 1 : 0;
		ck_assert_int_eq(l->type_ids[i], want_type);
	}
}

START_TEST(test_hard_inputs)
{
	size_t m = (size_t)_i;
	if (!toks[m])
		return;
	struct tokenizer *tok = toks[m];
	for (size_t k = 0; k < N_HARD; k++) {
		struct token_list a, b, ab;
		struct err e = {""};
		ck_assert_msg(tokenizer_encode(tok, hard_texts[k], NULL, 0, &a, &e) == 0, "%s: %s", models[m].dir, e.msg);
		check_invariants(m, &a, hard_texts[k], false, 0);
		ck_assert_msg(tokenizer_encode(tok, "x", hard_texts[k], 0, &b, &e) == 0, "%s: %s", models[m].dir, e.msg);
		ck_assert_msg(tokenizer_encode(tok, hard_texts[k], hard_texts[k], 0, &ab, &e) == 0, "%s", e.msg);
		/* a pair is the first text's tokens, the separator(s), the second's */
		int n_sep = models[m].pair_double_sep ? 2 : 1;
		ck_assert_int_eq(ab.n, 2 * (a.n - 2) + 2 + n_sep);
		check_invariants(m, &ab, hard_texts[k], true, a.n - 2 + 1);
		for (int i = 1; i < a.n - 1; i++) {
			ck_assert_int_eq(ab.ids[i], a.ids[i]);
			ck_assert_int_eq(ab.ids[a.n - 1 + n_sep + i - 1], a.ids[i]);
		}
		/* truncation keeps the template: max_len 3 leaves one token of text, or an error for a pair */
		if (a.n > 3) {
			struct token_list t;
			ck_assert_msg(tokenizer_encode(tok, hard_texts[k], NULL, 3, &t, &e) == 0, "%s", e.msg);
			ck_assert_int_eq(t.n, 3);
			ck_assert(t.truncated);
			ck_assert_int_eq(t.ids[1], a.ids[1]);
			token_list_free(&t);
		}
		token_list_free(&a);
		token_list_free(&b);
		token_list_free(&ab);
	}
	/* the empty string is the template alone */
	struct token_list l;
	struct err e = {""};
	ck_assert(tokenizer_encode(tok, "", NULL, 0, &l, &e) == 0);
	ck_assert_int_eq(l.n, 2);
	token_list_free(&l);
	ck_assert(tokenizer_supports_pairs(tok));
	/* invalid UTF-8 is refused with its offset */
	ck_assert(tokenizer_encode(tok, "ab\xff", NULL, 0, &l, &e) == -1);
	ck_assert_msg(strstr(e.msg, "invalid UTF-8 at byte 2") != NULL, "%s", e.msg);
}
END_TEST

/* Encode TEXT and return its ids without the template as a JSON-ish string, for comparisons. */
static char *ids_of(struct tokenizer *tok, const char *text)
{
	struct token_list l;
	struct err e = {""};
	ck_assert_msg(tokenizer_encode(tok, text, NULL, 0, &l, &e) == 0, "%s", e.msg);
	char *s = list_str(&l);
	token_list_free(&l);
	return s;
}

static void assert_same(struct tokenizer *tok, const char *x, const char *y)
{
	char *a = ids_of(tok, x), *b = ids_of(tok, y);
	ck_assert_msg(strcmp(a, b) == 0, "\"%s\" -> %s\n\"%s\" -> %s", x, a, y, b);
	free(a);
	free(b);
}

/* One token of the encoding of TEXT (without the template) is ID, flagged special. */
static void assert_has_special(struct tokenizer *tok, const char *text, const char *name)
{
	struct token_list l;
	struct err e = {""};
	ck_assert(tokenizer_encode(tok, text, NULL, 0, &l, &e) == 0);
	int32_t id = tokenizer_token_to_id(tok, name);
	ck_assert_msg(id >= 0, "%s not in the vocabulary", name);
	bool found = false;
	for (int i = 1; i < l.n - 1; i++)
		found |= l.ids[i] == id && l.special[i];
	char *s = list_str(&l);
	ck_assert_msg(found, "\"%s\": no %s (%d) in %s", text, name, id, s);
	free(s);
	token_list_free(&l);
}

/* Behaviour each class documents, checked as equalities between inputs (no HF output needed). */
START_TEST(test_class_rules)
{
	for (size_t m = 0; m < N_MODELS; m++) {
		struct tokenizer *tok = toks[m];
		if (!tok)
			continue;
		const struct model *md = &models[m];
		char *t = testutil_printf("see %s here", md->mask);
		assert_has_special(tok, t, md->mask);
		free(t);
		t = testutil_printf("a%sb%sc", md->sep, md->cls);
		assert_has_special(tok, t, md->sep);
		assert_has_special(tok, t, md->cls);
		free(t);
		/* the mask eats the space on its left (lstrip) in RoBERTa, XLM-R and ALBERT; DeBERTa's
		 * plain-string specials strip both sides */
		char *x = testutil_printf("word  %s", md->mask), *y = testutil_printf("word%s", md->mask);
		assert_same(tok, x, y);
		free(x);
		free(y);
	}
	if (toks[1]) { /* XLM-R: <mask> after the last piece, <unk> = 3 */
		ck_assert_int_eq(tokenizer_token_to_id(toks[1], "<mask>"), tokenizer_vocab_size(toks[1]) - 1);
		ck_assert_int_eq(tokenizer_token_to_id(toks[1], "<unk>"), 3);
		ck_assert_int_eq(tokenizer_token_to_id(toks[1], "<pad>"), 1);
		ck_assert_str_eq(tokenizer_id_to_token(toks[1], 3), "<unk>");
	}
	if (toks[2]) { /* ALBERT: lower case, accents dropped, whitespace collapsed, `` '' -> " */
		struct tokenizer *al = toks[2];
		assert_same(al, "HELLO World", "hello world");
		assert_same(al, "caf\xc3\xa9 na\xc3\xafve", "cafe naive");
		assert_same(al, "  a \t\n  b  ", "a b");
		assert_same(al, "``x''", "\"x\"");
		assert_same(al, "\xef\xac\x81", "fi"); /* NFKD of the ligature */
		/* no piece of two or more characters ends in a digit and "," */
		struct token_list l;
		struct err e = {""};
		ck_assert(tokenizer_encode(al, "1,000,000 and 12, 7,5 x9,", NULL, 0, &l, &e) == 0);
		for (int i = 0; i < l.n; i++) {
			size_t n = strlen(l.pieces[i]);
			ck_assert_msg(!(n >= 2 && l.pieces[i][n - 1] == ',' && l.pieces[i][n - 2] >= '0' && l.pieces[i][n - 2] <= '9'),
				      "piece \"%s\"", l.pieces[i]);
		}
		token_list_free(&l);
	}
	if (toks[3]) { /* DeBERTa-v3: [MASK] is the added token after the model's pieces; case kept */
		ck_assert_int_eq(tokenizer_token_to_id(toks[3], "[MASK]"), 7000);
		ck_assert_str_eq(tokenizer_id_to_token(toks[3], 7000), "[MASK]");
		char *a = ids_of(toks[3], "Hello"), *b = ids_of(toks[3], "hello");
		ck_assert_str_ne(a, b);
		free(a);
		free(b);
	}
	if (toks[0]) { /* RoBERTa: byte-level, so nothing is unknown; <s>/</s> typed in the text strip nothing */
		struct token_list l;
		struct err e = {""};
		ck_assert(tokenizer_encode(toks[0], "\xf0\x9f\x98\x80 \x01", NULL, 0, &l, &e) == 0);
		for (int i = 1; i < l.n - 1; i++)
			ck_assert_int_ne(l.ids[i], tokenizer_token_to_id(toks[0], "<unk>"));
		token_list_free(&l);
		char *a = ids_of(toks[0], "a </s> b"), *b = ids_of(toks[0], "a</s>b");
		ck_assert_str_ne(a, b);
		free(a);
		free(b);
	}
}
END_TEST

/* ---------------------------------------------------------------- 3. hand-made folders */

/* roberta-tiny's vocab.json + merges.txt as one tokenizer.json (as RobertaTokenizerFast saves it). */
static void write_roberta_json(const char *ref, const char *dir)
{
	char *vp = testutil_printf("%s/models/roberta-tiny/vocab.json", ref), *mp = testutil_printf("%s/models/roberta-tiny/merges.txt", ref);
	json_error_t je;
	json_t *vocab = json_load_file(vp, 0, &je);
	ck_assert_msg(vocab != NULL, "%s", je.text);
	json_t *merges = json_array();
	FILE *f = fopen(mp, "r");
	ck_assert(f != NULL);
	char line[1024];
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] && strncmp(line, "#version", 8) != 0)
			json_array_append_new(merges, json_string(line));
	}
	fclose(f);
	json_t *added = json_array();
	static const char *const sp[] = {"<s>", "<pad>", "</s>", "<unk>", "<mask>"};
	for (int i = 0; i < 5; i++) {
		json_t *id = json_object_get(vocab, sp[i]);
		ck_assert(id != NULL);
		json_array_append_new(added, json_pack("{s:I,s:s,s:b,s:b,s:b,s:b,s:b}", "id", json_integer_value(id), "content",
						       sp[i], "single_word", 0, "lstrip", i == 4, "rstrip", 0, "normalized", 0,
						       "special", 1));
	}
	json_t *root = json_pack(
		"{s:s,s:o,s:n,s:{s:s,s:b,s:b,s:b},s:{s:s,s:[s,I],s:[s,I],s:b,s:b},s:{s:s,s:b,s:b,s:b},s:{s:s,s:n,s:n,s:n,s:n,s:b,s:o,s:o}}",
		"version", "1.0", "added_tokens", added, "normalizer", "pre_tokenizer", "type", "ByteLevel", "add_prefix_space", 0,
		"trim_offsets", 1, "use_regex", 1, "post_processor", "type", "RobertaProcessing", "sep", "</s>", (json_int_t)2,
		"cls", "<s>", (json_int_t)0, "trim_offsets", 1, "add_prefix_space", 0, "decoder", "type", "ByteLevel",
		"add_prefix_space", 1, "trim_offsets", 1, "use_regex", 1, "model", "type", "BPE", "dropout", "unk_token",
		"continuing_subword_prefix", "end_of_word_suffix", "fuse_unk", 0, "vocab", vocab, "merges", merges);
	ck_assert(root != NULL);
	char *p = testutil_printf("%s/tokenizer.json", dir);
	ck_assert(json_dump_file(root, p, JSON_COMPACT) == 0);
	free(p);
	json_decref(root);
	testutil_write(dir, "tokenizer_config.json", "{\"model_max_length\": 512}", 25);
	free(vp);
	free(mp);
}

START_TEST(test_roberta_tokenizer_json)
{
	if (!toks[0])
		return;
	char *ref = testutil_shared_ref(), *dir = testutil_tmpdir("tokspm");
	write_roberta_json(ref, dir);
	struct tokenizer *slow_json = NULL, *fast = NULL;
	struct err e = {""};
	ck_assert_msg(tokenizer_load(dir, TOKENIZER_ROBERTA, &slow_json, &e) == 0, "%s", e.msg);
	ck_assert_msg(tokenizer_load(dir, TOKENIZER_JSON, &fast, &e) == 0, "%s", e.msg);
	static const char *const texts[] = {
		"Hello world", "leaves fall in autumn", " leading space", "it's 3.14, isn't it?", "see <mask> here",
		"a </s> b<s>c", "caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80", "tabs\tand\nnewlines", "",
	};
	for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
		for (int pair = 0; pair < 2; pair++) {
			const char *b = pair ? "second text here" : NULL;
			struct token_list x, y, z;
			ck_assert(tokenizer_encode(toks[0], texts[k], b, 0, &x, &e) == 0);
			ck_assert(tokenizer_encode(slow_json, texts[k], b, 0, &y, &e) == 0);
			ck_assert(tokenizer_encode(fast, texts[k], b, 0, &z, &e) == 0);
			char *sx = list_str(&x), *sy = list_str(&y), *sz = list_str(&z);
			ck_assert_msg(strcmp(sx, sy) == 0, "\"%s\": vocab.json %s, tokenizer.json %s", texts[k], sx, sy);
			ck_assert_msg(strcmp(sx, sz) == 0, "\"%s\": slow %s, tokenizer.json engine %s", texts[k], sx, sz);
			for (int i = 0; i < x.n; i++)
				ck_assert_int_eq(x.type_ids[i], 0);
			free(sx);
			free(sy);
			free(sz);
			token_list_free(&x);
			token_list_free(&y);
			token_list_free(&z);
		}
	}
	tokenizer_free(slow_json);
	tokenizer_free(fast);
	testutil_rmtree(dir);
	free(dir);
	free(ref);
}
END_TEST

/* A .model file that is not a valid SentencePiece model: one line, naming the file. */
static void expect_model_error(enum tokenizer_kind kind, const void *data, size_t len)
{
	char *dir = testutil_tmpdir("tokspm");
	const char *name = kind == TOKENIZER_XLMR ? "sentencepiece.bpe.model" : kind == TOKENIZER_ALBERT ? "spiece.model" : "spm.model";
	testutil_write(dir, name, data, len);
	struct tokenizer *tok = NULL;
	struct err e = {""};
	ck_assert_int_eq(tokenizer_load(dir, kind, &tok, &e), -1);
	ck_assert(tok == NULL);
	ck_assert_msg(strstr(e.msg, name) != NULL, "%s", e.msg);
	ck_assert_msg(strchr(e.msg, '\n') == NULL, "%s", e.msg);
	testutil_rmtree(dir);
	free(dir);
}

START_TEST(test_hostile_models)
{
	static const unsigned char empty_proto[] = {0};
	expect_model_error(TOKENIZER_ALBERT, "", 0);
	expect_model_error(TOKENIZER_ALBERT, empty_proto, 0);
	expect_model_error(TOKENIZER_XLMR, "not a model at all\n", 19);
	expect_model_error(TOKENIZER_DEBERTA_V2, "\x0a\xff\xff\xff\xff\x0f", 6);    /* a piece of 4 GB */
	expect_model_error(TOKENIZER_DEBERTA_V2, "\x0a\x03\x0a\x01\x61", 5);        /* no unknown piece */
	/* a missing .model without a tokenizer.json */
	char *dir = testutil_tmpdir("tokspm");
	struct tokenizer *tok = NULL;
	struct err e = {""};
	ck_assert_int_eq(tokenizer_load(dir, TOKENIZER_XLMR, &tok, &e), -1);
	ck_assert_msg(strstr(e.msg, "sentencepiece.bpe.model: missing") != NULL, "%s", e.msg);
	testutil_rmtree(dir);
	free(dir);
	/* real models cut short at every 997th byte: refused or loaded, never a crash */
	char *ref = testutil_shared_ref(), *p = testutil_printf("%s/models/albert-tiny/spiece.model", ref);
	FILE *f = fopen(p, "rb");
	if (f) {
		static unsigned char buf[400000];
		size_t n = fread(buf, 1, sizeof buf, f);
		fclose(f);
		for (size_t cut = 1; cut < n; cut += 997 * 7) {
			dir = testutil_tmpdir("tokspm");
			testutil_write(dir, "spiece.model", buf, cut);
			tok = NULL;
			if (tokenizer_load(dir, TOKENIZER_ALBERT, &tok, &e) == 0) {
				struct token_list l;
				ck_assert(tokenizer_encode(tok, "Hello, 1,000 worlds", NULL, 0, &l, &e) == 0 || e.msg[0]);
				token_list_free(&l);
				tokenizer_free(tok);
			} else {
				ck_assert_msg(strchr(e.msg, '\n') == NULL && e.msg[0], "%s", e.msg);
			}
			testutil_rmtree(dir);
			free(dir);
		}
	}
	free(p);
	free(ref);
}
END_TEST

int main(void)
{
	char *ref = testutil_shared_ref();
	int loaded = 0;
	for (size_t m = 0; m < N_MODELS; m++) {
		char *dir = testutil_printf("%s/models/%s", ref, models[m].dir);
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
	tcase_add_loop_test(tc, test_hard_inputs, 0, (int)N_MODELS);
	tcase_add_test(tc, test_class_rules);
	tcase_add_test(tc, test_roberta_tokenizer_json);
	tcase_add_test(tc, test_hostile_models);
	suite_add_tcase(s, tc);
	int failed = testutil_run_suite(s, false);
	for (size_t m = 0; m < N_MODELS; m++)
		tokenizer_free(toks[m]);
	return failed;
}
