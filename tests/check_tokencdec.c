/* check_tokencdec.c -- the tokenizers of the encoder-decoder families (TOKENIZER_T5, _MBART, _MARIAN,
 * _NLLB, _PEGASUS, and TOKENIZER_ROBERTA for BART) and tokenizer_encode_target.
 *
 * 1. The 14 cases of ../shared/reference/cases (*--translate, *--summary: what transformers 4.31's
 *    slow tokenizers gave): `text` must give the case's `ids` and `tokens`, `target` its
 *    decoder.labels and decoder.label_tokens, through tokenizer_encode / tokenizer_encode_target.
 * 2. The classes' rules on inputs with no stored output: special tokens typed in the text, the
 *    empty text, invalid UTF-8, truncation, language codes and tokenizer_set_langs, pairs refused.
 *    Checked as equalities between inputs and against the ids the rules give (from the
 *    tokenizer's own tables, never a number copied from a case).
 * 3. Hand-made folders: what the classes would do differently is refused with one line; an
 *    mBART folder whose tokenizer_class is MBart50Tokenizer follows that class. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "tokenizer/tokenizer.h"

enum { T5, FLANT5, BART, MBART, MARIAN, NLLB, PEGASUS, N_MODELS };
static const struct model {
	const char *dir; /* under ../shared/reference/models */
	enum tokenizer_kind kind;
} models[N_MODELS] = {
	{"t5-tiny", TOKENIZER_T5},         {"flant5-tiny", TOKENIZER_T5}, {"bart-tiny", TOKENIZER_ROBERTA},
	{"mbart-tiny", TOKENIZER_MBART},   {"marian-tiny", TOKENIZER_MARIAN}, {"nllb-tiny", TOKENIZER_NLLB},
	{"pegasus-tiny", TOKENIZER_PEGASUS},
};

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

/* OUT against WANT_IDS / WANT_TOKENS; 1 (and a message) when they differ. */
static int compare(const char *label, const struct token_list *out, json_t *want_i, json_t *want_t)
{
	const char *what = NULL;
	if ((int)json_array_size(want_i) != out->n || (int)json_array_size(want_t) != out->n)
		what = "length";
	for (int i = 0; i < out->n && !what; i++) {
		if (json_integer_value(json_array_get(want_i, i)) != out->ids[i])
			what = "ids";
		else if (strcmp(json_string_value(json_array_get(want_t, i)), out->pieces[i]) != 0)
			what = "tokens";
		else if (out->type_ids[i] != 0)
			what = "token_type_ids";
	}
	if (what) {
		char *got = list_str(out), *wt = json_dumps(want_t, JSON_COMPACT), *wi = json_dumps(want_i, JSON_COMPACT);
		fprintf(stderr, "MISMATCH %s: %s differ\n  want %s %s\n  got  %s\n", label, what, wt, wi, got);
		free(got);
		free(wt);
		free(wi);
	}
	return what != NULL;
}

START_TEST(test_reference_cases)
{
	char *ref = testutil_shared_ref();
	int n = 0, bad = 0, n_ids = 0;
	for (size_t m = 0; m < N_MODELS; m++) {
		if (!toks[m])
			continue;
		static const char *const names[] = {"translate", "summary"};
		for (size_t k = 0; k < 2; k++) {
			char *p = testutil_printf("%s/cases/%s--%s.json", ref, models[m].dir, names[k]);
			json_error_t je;
			json_t *c = json_load_file(p, 0, &je);
			ck_assert_msg(c != NULL, "%s: %s", p, je.text);
			json_t *dec = json_object_get(c, "decoder");
			const char *text = json_string_value(json_object_get(c, "text"));
			const char *target = json_string_value(json_object_get(c, "target"));
			ck_assert_msg(text && target && dec, "%s: no text, target or decoder", p);
			struct token_list a, b;
			struct err e = {""};
			ck_assert_msg(tokenizer_encode(toks[m], text, NULL, 0, &a, &e) == 0, "%s: %s", p, e.msg);
			ck_assert_msg(tokenizer_encode_target(toks[m], target, 0, &b, &e) == 0, "%s: %s", p, e.msg);
			char *la = testutil_printf("%s (text)", p), *lb = testutil_printf("%s (target)", p);
			bad += compare(la, &a, json_object_get(c, "ids"), json_object_get(c, "tokens"));
			bad += compare(lb, &b, json_object_get(dec, "labels"), json_object_get(dec, "label_tokens"));
			n_ids += a.n + b.n;
			n += 2;
			free(la);
			free(lb);
			token_list_free(&a);
			token_list_free(&b);
			json_decref(c);
			free(p);
		}
	}
	printf("check_tokencdec: %d texts and targets of %d reference cases (%d ids), %d mismatches\n", n, n / 2, n_ids,
	       bad);
	ck_assert_msg(bad == 0, "%d of %d encodings differ (listed above)", bad, n);
	free(ref);
}
END_TEST

/* ---------------------------------------------------------------- 2. the classes' rules */

static struct token_list enc(struct tokenizer *tok, const char *text, bool target, int max_len)
{
	struct token_list l;
	struct err e = {""};
	int rc = target ? tokenizer_encode_target(tok, text, max_len, &l, &e)
			: tokenizer_encode(tok, text, NULL, max_len, &l, &e);
	ck_assert_msg(rc == 0, "\"%s\": %s", text, e.msg);
	return l;
}

static int32_t id_of(struct tokenizer *tok, const char *name)
{
	int32_t id = tokenizer_token_to_id(tok, name);
	ck_assert_msg(id >= 0, "%s not in the vocabulary", name);
	return id;
}

static char *ids_of(struct tokenizer *tok, const char *text, bool target)
{
	struct token_list l = enc(tok, text, target, 0);
	char *s = list_str(&l);
	token_list_free(&l);
	return s;
}

static void assert_same(struct tokenizer *tok, const char *x, const char *y)
{
	char *a = ids_of(tok, x, false), *b = ids_of(tok, y, false);
	ck_assert_msg(strcmp(a, b) == 0, "\"%s\" -> %s\n\"%s\" -> %s", x, a, y, b);
	free(a);
	free(b);
}

/* Ids in range, pieces are the ids' tokens and map back (Marian: unknown pieces read as <unk>). */
static void check_list(size_t m, const struct token_list *l)
{
	struct tokenizer *tok = toks[m];
	for (int i = 0; i < l->n; i++) {
		ck_assert_msg(l->ids[i] >= 0 && l->ids[i] < tokenizer_vocab_size(tok), "%s: id %d", models[m].dir, l->ids[i]);
		const char *p = tokenizer_id_to_token(tok, l->ids[i]);
		ck_assert_msg(p && strcmp(p, l->pieces[i]) == 0, "%s: piece %d", models[m].dir, i);
		ck_assert_int_eq(tokenizer_token_to_id(tok, l->pieces[i]), l->ids[i]);
		ck_assert_int_eq(l->type_ids[i], 0);
	}
}

/* The template around LIST's text, from the class's rule: how many ids before and after it, and
 * what they are (EOS, the language code LANG or none). */
static void check_template(size_t m, const struct token_list *l, const char *lang)
{
	struct tokenizer *tok = toks[m];
	int32_t eos = id_of(tok, "</s>");
	ck_assert_msg(l->n >= 1, "%s: empty", models[m].dir);
	if (models[m].kind == TOKENIZER_NLLB) {
		ck_assert_int_eq(l->ids[0], id_of(tok, lang));
		ck_assert(l->special[0]);
		ck_assert_int_eq(l->ids[l->n - 1], eos);
	} else if (models[m].kind == TOKENIZER_MBART) {
		ck_assert(l->n >= 2);
		ck_assert_int_eq(l->ids[l->n - 2], eos);
		ck_assert_int_eq(l->ids[l->n - 1], id_of(tok, lang));
		ck_assert(l->special[l->n - 1] && l->special[l->n - 2]);
	} else if (models[m].kind == TOKENIZER_ROBERTA) {
		ck_assert_int_eq(l->ids[0], id_of(tok, "<s>"));
		ck_assert_int_eq(l->ids[l->n - 1], eos);
	} else {
		ck_assert_int_eq(l->ids[l->n - 1], eos);
		ck_assert(l->special[l->n - 1]);
	}
}

/* Special tokens added by the template for M (one text). */
static int n_template(size_t m)
{
	return models[m].kind == TOKENIZER_NLLB || models[m].kind == TOKENIZER_MBART || models[m].kind == TOKENIZER_ROBERTA
		       ? 2
		       : 1;
}

static const char *src_lang(size_t m)
{
	return models[m].kind == TOKENIZER_NLLB ? "eng_Latn" : "en_XX";
}

static const char *tgt_lang(size_t m)
{
	return models[m].kind == TOKENIZER_NLLB ? "deu_Latn" : "de_DE";
}

static const char *const hard_texts[] = {
	"",
	" ",
	"   \t\n  ",
	"caf\xc3\xa9 na\xc3\xafve \xc3\x85ngstr\xc3\xb6m",
	"\xe4\xb8\xad\xe6\x96\x87 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e emoji \xf0\x9f\x98\x80 \xe2\x98\x83",
	"ctl \x01\x02\x1b[0m\x7f \xc2\x85 \xe2\x80\x8b zero-width",
	"<s></s><pad><unk><mask>",
	"  leading and trailing  ",
	">>de<< Guten Tag >>fr<< x",
};
#define N_HARD (sizeof hard_texts / sizeof hard_texts[0])

START_TEST(test_hard_inputs)
{
	size_t m = (size_t)_i;
	if (!toks[m])
		return;
	struct tokenizer *tok = toks[m];
	bool langs = models[m].kind == TOKENIZER_MBART || models[m].kind == TOKENIZER_NLLB;
	for (size_t k = 0; k < N_HARD; k++) {
		for (int target = 0; target < 2; target++) {
			struct token_list l = enc(tok, hard_texts[k], target, 0);
			check_list(m, &l);
			check_template(m, &l, target ? tgt_lang(m) : src_lang(m));
			/* truncation keeps the template and the text's first token */
			if (l.n > n_template(m) + 1) {
				struct token_list t = enc(tok, hard_texts[k], target, n_template(m) + 1);
				ck_assert_int_eq(t.n, n_template(m) + 1);
				ck_assert(t.truncated);
				ck_assert_int_eq(t.n_before_truncation, l.n);
				check_template(m, &t, target ? tgt_lang(m) : src_lang(m));
				int first = models[m].kind == TOKENIZER_NLLB || models[m].kind == TOKENIZER_ROBERTA ? 1 : 0;
				ck_assert_int_eq(t.ids[first], l.ids[first]);
				token_list_free(&t);
			}
			token_list_free(&l);
		}
	}
	/* the empty text is the template alone */
	struct token_list l = enc(tok, "", false, 0);
	ck_assert_int_eq(l.n, n_template(m));
	token_list_free(&l);
	/* invalid UTF-8 is refused with its offset, on both sides */
	struct err e = {""};
	ck_assert(tokenizer_encode(tok, "ab\xff", NULL, 0, &l, &e) == -1);
	ck_assert_msg(strstr(e.msg, "invalid UTF-8 at byte 2") != NULL, "%s", e.msg);
	ck_assert_int_eq(l.n, 0);
	e.msg[0] = '\0';
	ck_assert(tokenizer_encode_target(tok, "abc\xc3", 0, &l, &e) == -1);
	ck_assert_msg(strstr(e.msg, "invalid UTF-8 at byte 3") != NULL, "%s", e.msg);
	/* a max_len that leaves no room for the text is an error, as everywhere */
	ck_assert(tokenizer_encode_target(tok, "Hello world", n_template(m), &l, &e) == -1);
	ck_assert_msg(strstr(e.msg, "max_len") != NULL, "%s", e.msg);
	if (models[m].kind != TOKENIZER_ROBERTA) {
		/* one text only: a pair is refused */
		ck_assert(!tokenizer_supports_pairs(tok));
		ck_assert(tokenizer_encode(tok, "a", "b", 0, &l, &e) == -1);
		ck_assert_msg(strstr(e.msg, "pair") != NULL, "%s", e.msg);
		ck_assert(tokenizer_pieces(tok) == TOKENIZER_PIECES_SENTENCEPIECE);
	}
	/* languages: only mBART and NLLB have them */
	const char *s, *t;
	tokenizer_langs(tok, &s, &t);
	if (!langs) {
		ck_assert(s == NULL && t == NULL);
		ck_assert(tokenizer_set_langs(tok, "en_XX", NULL, &e) == -1);
		ck_assert_msg(strstr(e.msg, "no language codes") != NULL, "%s", e.msg);
	} else {
		ck_assert_str_eq(s, src_lang(m)); /* as the folder's tokenizer_config.json says */
		ck_assert_str_eq(t, tgt_lang(m));
	}
}
END_TEST

/* mBART and NLLB: tokenizer_set_langs moves the codes; unknown codes change nothing. */
START_TEST(test_langs)
{
	for (size_t m = MBART; m <= NLLB; m++) {
		if (!toks[m] || m == MARIAN)
			continue;
		struct tokenizer *tok = toks[m];
		struct err e = {""};
		bool nllb = m == NLLB;
		const char *fr = nllb ? "fra_Latn" : "fr_XX", *ro = nllb ? "ron_Latn" : "ro_RO";
		char *before = ids_of(tok, "Hello", false);
		ck_assert_msg(tokenizer_set_langs(tok, fr, ro, &e) == 0, "%s", e.msg);
		struct token_list a = enc(tok, "Hello", false, 0), b = enc(tok, "Hello", true, 0);
		check_template(m, &a, fr);
		check_template(m, &b, ro);
		token_list_free(&a);
		token_list_free(&b);
		/* an unknown code is an error naming it, and keeps both languages */
		ck_assert(tokenizer_set_langs(tok, "en_XX", "xx_YY", &e) == -1 || nllb);
		ck_assert(tokenizer_set_langs(tok, "eng_Latn_", NULL, &e) == -1);
		ck_assert_msg(strstr(e.msg, "eng_Latn_") != NULL && strstr(e.msg, "unknown language code") != NULL, "%s", e.msg);
		const char *s, *t;
		tokenizer_langs(tok, &s, &t);
		ck_assert_str_eq(s, fr);
		ck_assert_str_eq(t, ro);
		/* NULL keeps a side */
		ck_assert(tokenizer_set_langs(tok, src_lang(m), NULL, &e) == 0);
		tokenizer_langs(tok, &s, &t);
		ck_assert_str_eq(t, ro);
		ck_assert(tokenizer_set_langs(tok, NULL, tgt_lang(m), &e) == 0);
		char *after = ids_of(tok, "Hello", false);
		ck_assert_str_eq(before, after);
		free(before);
		free(after);
		/* the codes follow the pieces in the class's order, <mask> after the last */
		int32_t first = id_of(tok, nllb ? "ace_Arab" : "ar_AR"), last = id_of(tok, nllb ? "zul_Latn" : "zh_CN");
		ck_assert_int_eq(last - first + 1, nllb ? 202 : 25);
		ck_assert_int_eq(id_of(tok, "<mask>"), last + 1);
		ck_assert_int_eq(tokenizer_vocab_size(tok), last + 2);
		/* a code typed in the text is that special token; <mask> eats the space on its left only */
		struct token_list l = enc(tok, "Hallo de_DE Welt deu_Latn x", false, 0);
		bool found = false;
		for (int i = 0; i < l.n; i++)
			found |= l.ids[i] == id_of(tok, nllb ? "deu_Latn" : "de_DE") && l.special[i];
		ck_assert(found);
		token_list_free(&l);
		assert_same(tok, "Hello  <mask> world", "Hello<mask> world");
		assert_same(tok, "a </s> b", "a</s>b"); /* a plain string special: strips both sides */
	}
}
END_TEST

START_TEST(test_class_rules)
{
	struct err e = {""};
	for (size_t m = T5; m <= FLANT5; m++) {
		struct tokenizer *tok = toks[m];
		if (!tok)
			continue;
		/* <extra_id_N> = vocab_size - 1 - N, past the model's pieces; typed, it is that token */
		int v = tokenizer_vocab_size(tok);
		ck_assert_int_eq(id_of(tok, "<extra_id_0>"), v - 1);
		ck_assert_int_eq(id_of(tok, "<extra_id_99>"), v - 100);
		ck_assert_str_eq(tokenizer_id_to_token(tok, v - 1), "<extra_id_0>");
		struct token_list l = enc(tok, "The <extra_id_0> walks in <extra_id_1> park", false, 0);
		int n_extra = 0;
		for (int i = 0; i < l.n; i++)
			n_extra += (l.ids[i] == v - 1 || l.ids[i] == v - 2) && l.special[i];
		ck_assert_int_eq(n_extra, 2);
		token_list_free(&l);
		assert_same(tok, "a <extra_id_0> b", "a<extra_id_0>b");
		/* no second </s> after a typed one at the end (_add_eos_if_not_present); one elsewhere */
		struct token_list a = enc(tok, "Hello", false, 0), b = enc(tok, "Hello </s>", false, 0),
				  c = enc(tok, "Hello </s> x", true, 0), x = enc(tok, "x", true, 0);
		ck_assert_int_eq(b.n, a.n);
		ck_assert_int_eq(c.n, a.n + x.n);
		for (int i = 0; i < a.n; i++)
			ck_assert_int_eq(c.ids[i], a.ids[i]);
		for (int i = 0; i < x.n; i++)
			ck_assert_int_eq(c.ids[a.n + i], x.ids[i]);
		token_list_free(&x);
		token_list_free(&a);
		token_list_free(&b);
		token_list_free(&c);
	}
	if (toks[PEGASUS]) {
		struct tokenizer *tok = toks[PEGASUS];
		/* <pad> </s> <mask_1> <mask_2> <unk_2> ... <unk_102> = 0 ... 104, then the pieces */
		ck_assert_int_eq(id_of(tok, "<pad>"), 0);
		ck_assert_int_eq(id_of(tok, "</s>"), 1);
		ck_assert_int_eq(id_of(tok, "<mask_1>"), 2);
		ck_assert_int_eq(id_of(tok, "<mask_2>"), 3);
		for (int n = 2; n <= 102; n++) {
			char name[16];
			snprintf(name, sizeof name, "<unk_%d>", n);
			ck_assert_int_eq(id_of(tok, name), n + 2);
			ck_assert_str_eq(tokenizer_id_to_token(tok, n + 2), name);
		}
		ck_assert_int_eq(id_of(tok, "<unk>"), 105); /* the model's <unk> (piece 2) + 103 */
		struct token_list l = enc(tok, "The <mask_1> sat on the <unk_7> mat <mask_2>", true, 0);
		int found = 0;
		for (int i = 0; i < l.n; i++)
			found += (l.ids[i] == 2 || l.ids[i] == 9 || l.ids[i] == 3) && l.special[i];
		ck_assert_int_eq(found, 3);
		token_list_free(&l);
		/* a character the model lacks is <unk> */
		l = enc(tok, "\xe2\x98\x83", false, 0);
		ck_assert_int_eq(l.ids[l.n - 2], 105);
		token_list_free(&l);
		assert_same(tok, "a <mask_1> b", "a<mask_1>b");
	}
	if (toks[MARIAN]) {
		struct tokenizer *tok = toks[MARIAN];
		/* vocab.json's ids: </s> appended, <pad> the last id, unknown pieces <unk> */
		ck_assert_int_eq(id_of(tok, "<pad>"), tokenizer_vocab_size(tok) - 1);
		struct token_list l = enc(tok, "\xe2\x98\x83", false, 0);
		ck_assert_int_eq(l.ids[l.n - 2], id_of(tok, "<unk>"));
		token_list_free(&l);
		/* a leading >>code<< is one token (here not in the vocabulary: <unk>), every one is cut out */
		l = enc(tok, ">>de<< Hello world", false, 0);
		struct token_list h = enc(tok, "Hello world", false, 0);
		ck_assert_int_eq(l.n, h.n + 1);
		ck_assert_int_eq(l.ids[0], id_of(tok, "<unk>"));
		for (int i = 0; i < h.n; i++)
			ck_assert_int_eq(l.ids[i + 1], h.ids[i]);
		token_list_free(&l);
		l = enc(tok, "Hello >>fr<< world", false, 0);
		struct token_list w = enc(tok, "Hello  world", false, 0);
		ck_assert_int_eq(l.n, w.n);
		for (int i = 0; i < w.n; i++)
			ck_assert_int_eq(l.ids[i], w.ids[i]);
		token_list_free(&l);
		token_list_free(&w);
		token_list_free(&h);
		/* language_code_re = ">>.+<<" is greedy within a line (Python's re.match / re.sub give these) */
		struct token_list g = enc(tok, ">>a<<b>>c<< x", false, 0), gx = enc(tok, " x", false, 0);
		ck_assert_int_eq(g.n, gx.n + 1);
		ck_assert_str_eq(g.pieces[0], "<unk>"); /* the code ">>a<<b>>c<<" is not in this vocabulary */
		token_list_free(&g);
		token_list_free(&gx);
		assert_same(tok, "a >>b<<\n>>c<< d", "a \n d");
		assert_same(tok, "x\n>>de<< y", "x\n y");
		g = enc(tok, ">><< y", false, 0); /* no character between: no code */
		gx = enc(tok, "y", false, 0);
		ck_assert_int_gt(g.n, gx.n);
		token_list_free(&g);
		token_list_free(&gx);
		g = enc(tok, ">>>x<<<<", false, 0); /* the whole text is the code */
		ck_assert_int_eq(g.n, 2);
		token_list_free(&g);
		/* a long line of ">" is linear work (each line is scanned once) */
		size_t big = 400000;
		char *gt = malloc(big + 3);
		ck_assert(gt != NULL);
		memset(gt, '>', big);
		memcpy(gt + big, "<<", 3);
		g = enc(tok, gt, false, 0);
		ck_assert_int_eq(g.n, 2);
		token_list_free(&g);
		gt[1] = 'x'; /* no ">>" at the start: the code (from byte 2 on) is cut out, "> x" remains */
		g = enc(tok, gt, false, 0);
		gx = enc(tok, ">x", false, 0);
		ck_assert_int_eq(g.n, gx.n);
		token_list_free(&g);
		token_list_free(&gx);
		free(gt);
		assert_same(tok, "a </s> b", "a</s>b");
		/* the target side reads target.spm (the same model here): the same ids */
		char *a = ids_of(tok, "Guten Tag", false), *b = ids_of(tok, "Guten Tag", true);
		ck_assert_str_eq(a, b);
		free(a);
		free(b);
	}
	if (toks[BART]) {
		/* BartTokenizer is RobertaTokenizer's rule: <s> a </s>, <mask> eats the space on its left */
		struct tokenizer *tok = toks[BART];
		char *a = ids_of(tok, "Hello world", false), *b = ids_of(tok, "Hello world", true);
		ck_assert_str_eq(a, b);
		free(a);
		free(b);
		assert_same(tok, "Hello <mask>", "Hello<mask>");
		ck_assert(tokenizer_set_langs(tok, NULL, "de_DE", &e) == -1);
	}
}
END_TEST

/* ---------------------------------------------------------------- 3. hand-made folders */

/* A copy of model folder M's tokenizer files with tokenizer_config.json CONFIG (NULL: none);
 * loading it as KIND must fail with one line containing WANT (or succeed when WANT is NULL). */
static void expect_load(size_t m, enum tokenizer_kind kind, const char *config, const char *drop, const char *want)
{
	char *ref = testutil_shared_ref(), *src = testutil_printf("%s/models/%s", ref, models[m].dir), *dir = testutil_tmpdir("tokencdec");
	static const char *const files[] = {"spiece.model", "sentencepiece.bpe.model", "source.spm", "target.spm",
					    "vocab.json"};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char *p = testutil_printf("%s/%s", src, files[i]);
		if (access(p, F_OK) == 0 && (!drop || strcmp(drop, files[i]) != 0))
			testutil_copy(src, files[i], dir, files[i]);
		free(p);
	}
	if (config)
		testutil_write_text(dir, "tokenizer_config.json", config);
	struct tokenizer *tok = NULL;
	struct err e = {""};
	int rc = tokenizer_load(dir, kind, &tok, &e);
	if (want) {
		ck_assert_msg(rc == -1, "%s: loaded, expected an error with \"%s\"", config ? config : "(no config)", want);
		ck_assert_msg(strstr(e.msg, want) != NULL && strchr(e.msg, '\n') == NULL, "want \"%s\", got: %s", want, e.msg);
	} else {
		ck_assert_msg(rc == 0, "%s", e.msg);
	}
	tokenizer_free(tok);
	testutil_rmtree(dir);
	free(dir);
	free(src);
	free(ref);
}

START_TEST(test_folders)
{
	if (!toks[T5] || !toks[MARIAN] || !toks[NLLB] || !toks[MBART] || !toks[PEGASUS])
		return;
	expect_load(NLLB, TOKENIZER_NLLB, "{\"tokenizer_class\": \"M2M100Tokenizer\"}", NULL, "M2M100Tokenizer");
	expect_load(MBART, TOKENIZER_MBART, "{\"tokenizer_class\": \"XLMRobertaTokenizer\"}", NULL, "XLMRobertaTokenizer");
	expect_load(MBART, TOKENIZER_MBART, "{\"tokenizer_class\": \"MBart50TokenizerFast\", \"tgt_lang\": \"ps_AF\"}",
		    NULL, NULL);
	expect_load(MBART, TOKENIZER_MBART, "{\"tgt_lang\": \"ps_AF\"}", NULL, "ps_AF"); /* mBART-25 lacks it */
	expect_load(MBART, TOKENIZER_MBART, "{\"tokenizer_class\": ", NULL, "tokenizer_config.json");
	expect_load(MBART, TOKENIZER_MBART, "{\"tokenizer_class\": \"MBartTokenizerFast\"}", NULL, NULL);
	expect_load(NLLB, TOKENIZER_NLLB, "{\"src_lang\": \"klingon\"}", NULL, "klingon");
	expect_load(T5, TOKENIZER_T5, "{\"legacy\": false}", NULL, "legacy");
	expect_load(T5, TOKENIZER_T5, "{\"extra_ids\": 3, \"additional_special_tokens\": [\"<extra_id_0>\"]}", NULL,
		    "extra_ids");
	expect_load(T5, TOKENIZER_T5, NULL, "spiece.model", "spiece.model: missing");
	expect_load(PEGASUS, TOKENIZER_PEGASUS, "{\"offset\": 5}", NULL, "offset");
	expect_load(PEGASUS, TOKENIZER_PEGASUS, "{\"additional_special_tokens\": [\"<x>\"]}", NULL,
		    "additional_special_tokens");
	expect_load(MARIAN, TOKENIZER_MARIAN, NULL, "target.spm", "target.spm: missing");
	expect_load(MARIAN, TOKENIZER_MARIAN, NULL, "vocab.json", "vocab.json: missing");
	expect_load(MARIAN, TOKENIZER_MARIAN, "{\"separate_vocabs\": true}", NULL, "separate_vocabs");
	/* T5 without a configuration: the class's defaults, 100 extra ids */
	expect_load(T5, TOKENIZER_T5, NULL, NULL, NULL);
	/* mBART without languages: the class's source en_XX, and no target (an error, as HF fails) */
	char *ref = testutil_shared_ref(), *src = testutil_printf("%s/models/mbart-tiny", ref), *dir = testutil_tmpdir("tokencdec");
	testutil_copy(src, "sentencepiece.bpe.model", dir, "sentencepiece.bpe.model");
	struct tokenizer *tok = NULL;
	struct err e = {""};
	ck_assert_msg(tokenizer_load(dir, TOKENIZER_MBART, &tok, &e) == 0, "%s", e.msg);
	const char *s, *t;
	tokenizer_langs(tok, &s, &t);
	ck_assert_str_eq(s, "en_XX");
	ck_assert(t == NULL);
	struct token_list l;
	ck_assert(tokenizer_encode_target(tok, "Hallo", 0, &l, &e) == -1);
	ck_assert_msg(strstr(e.msg, "tgt_lang") != NULL, "%s", e.msg);
	tokenizer_free(tok);
	/* MBart50Tokenizer (tokenizer_class): the same model with 52 codes, lang a </s> on both sides */
	testutil_write_text(dir, "tokenizer_config.json",
		   "{\"tokenizer_class\": \"MBart50Tokenizer\", \"src_lang\": \"en_XX\", \"tgt_lang\": \"sl_SI\"}");
	ck_assert_msg(tokenizer_load(dir, TOKENIZER_MBART, &tok, &e) == 0, "%s", e.msg);
	struct tokenizer *m25 = toks[MBART];
	ck_assert_int_eq(tokenizer_vocab_size(tok), tokenizer_vocab_size(m25) + 27);
	ck_assert_int_eq(id_of(tok, "ar_AR"), id_of(m25, "ar_AR"));
	ck_assert_int_eq(id_of(tok, "sl_SI"), tokenizer_vocab_size(tok) - 2);
	ck_assert_int_eq(id_of(tok, "<mask>"), tokenizer_vocab_size(tok) - 1);
	for (int target = 0; target < 2; target++) {
		struct token_list a = enc(tok, "The king went home.", target, 0), b = enc(m25, "The king went home.", false, 0);
		ck_assert_int_eq(a.n, b.n);
		ck_assert_int_eq(a.ids[0], id_of(tok, target ? "sl_SI" : "en_XX"));
		ck_assert_str_eq(a.pieces[0], target ? "sl_SI" : "en_XX");
		ck_assert_int_eq(a.ids[a.n - 1], id_of(tok, "</s>"));
		for (int i = 1; i < a.n - 1; i++)
			ck_assert_int_eq(a.ids[i], b.ids[i - 1]);
		token_list_free(&a);
		token_list_free(&b);
	}
	ck_assert(tokenizer_set_langs(m25, NULL, "sl_SI", &e) == -1); /* not one of mBART's 25 */
	tokenizer_free(tok);
	char *cfg = testutil_printf("%s/tokenizer_config.json", dir);
	ck_assert(unlink(cfg) == 0);
	free(cfg);
	/* a Marian vocab.json without <unk> */
	testutil_copy(src, "sentencepiece.bpe.model", dir, "source.spm");
	testutil_copy(src, "sentencepiece.bpe.model", dir, "target.spm");
	testutil_write_text(dir, "vocab.json", "{\"</s>\": 0, \"<pad>\": 1, \"a\": 2}");
	ck_assert(tokenizer_load(dir, TOKENIZER_MARIAN, &tok, &e) == -1);
	ck_assert_msg(strstr(e.msg, "<unk>") != NULL, "%s", e.msg);
	testutil_write_text(dir, "vocab.json", "{\"</s>\": 0, \"<unk>\": 1, \"<pad>\": 2, \"\\u2581a\": 3}");
	ck_assert_msg(tokenizer_load(dir, TOKENIZER_MARIAN, &tok, &e) == 0, "%s", e.msg);
	l = enc(tok, "a b", true, 0); /* ▁a 3, ▁b unknown, </s> 0 */
	ck_assert_int_eq(l.n, 3);
	ck_assert_int_eq(l.ids[0], 3);
	ck_assert_int_eq(l.ids[1], 1);
	ck_assert_int_eq(l.ids[2], 0);
	token_list_free(&l);
	tokenizer_free(tok);
	testutil_rmtree(dir);
	free(dir);
	free(src);
	free(ref);
}
END_TEST

/* ---------------------------------------------------------------- 4. M2M100Tokenizer */

/* tests/data/tokenizer/m2m100-spm (the nllb-tiny model with a shuffled vocab.json lacking every 37th
 * piece, tokenizer_class M2M100Tokenizer) against what tests/tools/ref_m2m100_tok.py, written from
 * tokenization_m2m_100.py, gives; then its configuration errors. Needs no shared reference. */
START_TEST(test_m2m100)
{
	char *dir = testutil_printf("%s/tests/data/tokenizer/m2m100-spm", testutil_srcdir());
	char *cases = testutil_printf("%s/tests/data/tokenizer/m2m100-cases.json", testutil_srcdir());
	json_error_t je;
	json_t *root = json_load_file(cases, 0, &je);
	ck_assert_msg(root != NULL, "%s: %s", cases, je.text);
	struct tokenizer *tok = NULL;
	struct err e = {""};
	/* the family says nllb; tokenizer_class says which class reads the folder */
	ck_assert_msg(tokenizer_load(dir, TOKENIZER_NLLB, &tok, &e) == 0, "%s", e.msg);
	json_t *list = json_object_get(root, "cases");
	int bad = 0, unk = 0;
	for (size_t i = 0; i < json_array_size(list); i++) {
		json_t *c = json_array_get(list, i);
		const char *text = json_string_value(json_object_get(c, "text"));
		const char *src = json_string_value(json_object_get(c, "src_lang"));
		const char *tgt = json_string_value(json_object_get(c, "tgt_lang"));
		ck_assert_msg(tokenizer_set_langs(tok, src, tgt, &e) == 0, "%s", e.msg);
		struct token_list a, b;
		ck_assert_msg(tokenizer_encode(tok, text, NULL, 0, &a, &e) == 0, "%s", e.msg);
		ck_assert_msg(tokenizer_encode_target(tok, text, 0, &b, &e) == 0, "%s", e.msg);
		char *la = testutil_printf("m2m100 case %zu (text)", i), *lb = testutil_printf("m2m100 case %zu (target)", i);
		bad += compare(la, &a, json_object_get(c, "ids"), json_object_get(c, "tokens"));
		bad += compare(lb, &b, json_object_get(c, "target_ids"), json_object_get(c, "target_tokens"));
		for (int k = 0; k < a.n; k++)
			unk += strcmp(a.pieces[k], "<unk>") == 0;
		free(la);
		free(lb);
		token_list_free(&a);
		token_list_free(&b);
	}
	ck_assert_int_ge((int)json_array_size(list), 18);
	ck_assert_msg(unk > 0, "no case reaches a piece vocab.json lacks");
	ck_assert_msg(bad == 0, "%d of %zu texts and targets differ from ref_m2m100_tok.py", bad, 2 * json_array_size(list));
	/* "__de__" and "de" name the same language; codes of another class do not */
	ck_assert_int_eq(tokenizer_set_langs(tok, "__de__", NULL, &e), 0);
	ck_assert_int_eq(tokenizer_set_langs(tok, "deu_Latn", NULL, &e), -1);
	ck_assert_msg(strstr(e.msg, "unknown language code") != NULL, "%s", e.msg);
	tokenizer_free(tok);
	json_decref(root);

	/* a copy of the folder with hostile changes */
	char *tmp = testutil_tmpdir("m2m100");
	testutil_copy(dir, "sentencepiece.bpe.model", tmp, "sentencepiece.bpe.model");
	static const struct {
		const char *config, *vocab, *want; /* tokenizer_config.json, vocab.json (NULL: none), error (NULL: loads) */
	} bad_folders[] = {
		{"{\"tokenizer_class\": \"M2M100Tokenizer\"}", NULL, "vocab.json: missing"},
		{"{\"tokenizer_class\": \"M2M100Tokenizer\"}", "{\"<s>\": 0, \"</s>\": 2}", "has no \"<unk>\""},
		{"{\"tokenizer_class\": \"M2M100Tokenizer\", \"language_codes\": \"xx\"}",
		 "{\"<s>\": 0, \"<pad>\": 1, \"</s>\": 2, \"<unk>\": 3}", "language_codes"},
		{"{\"tokenizer_class\": \"M2M100Tokenizer\", \"src_lang\": \"eng_Latn\"}",
		 "{\"<s>\": 0, \"<pad>\": 1, \"</s>\": 2, \"<unk>\": 3}", "src_lang"},
		{"{\"tokenizer_class\": \"M2M100Tokenizer\", \"language_codes\": \"wmt21\"}",
		 "{\"<s>\": 0, \"<pad>\": 1, \"</s>\": 2, \"<unk>\": 3}", NULL},
	};
	for (size_t k = 0; k < sizeof bad_folders / sizeof bad_folders[0]; k++) {
		testutil_write_text(tmp, "tokenizer_config.json", bad_folders[k].config);
		char *vp = testutil_printf("%s/vocab.json", tmp);
		unlink(vp);
		free(vp);
		if (bad_folders[k].vocab)
			testutil_write_text(tmp, "vocab.json", bad_folders[k].vocab);
		int rc = tokenizer_load(tmp, TOKENIZER_NLLB, &tok, &e);
		if (bad_folders[k].want) {
			ck_assert_msg(rc == -1 && strstr(e.msg, bad_folders[k].want) && !strchr(e.msg, '\n'),
				      "folder %zu: rc %d, \"%s\"", k, rc, e.msg);
			continue;
		}
		ck_assert_msg(rc == 0, "%s", e.msg);
		/* wmt21: 8 codes after vocab.json's 4 entries, "__de__" the last; no tgt_lang: no target */
		struct token_list l;
		ck_assert_int_eq(tokenizer_set_langs(tok, "de", NULL, &e), 0);
		ck_assert_int_eq(tokenizer_encode(tok, "", NULL, 0, &l, &e), 0);
		ck_assert_int_eq(l.n, 2);
		ck_assert_int_eq(l.ids[0], 4 + 7);
		ck_assert_int_eq(l.ids[1], 2);
		token_list_free(&l);
		ck_assert_int_eq(tokenizer_set_langs(tok, "fr", NULL, &e), -1);
		ck_assert_int_eq(tokenizer_encode_target(tok, "a", 0, &l, &e), -1);
		ck_assert_msg(strstr(e.msg, "tgt_lang") != NULL, "%s", e.msg);
		tokenizer_free(tok);
	}
	testutil_rmtree(tmp);
	free(tmp);
	free(cases);
	free(dir);
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
				fprintf(stderr, "check_tokencdec: %s: %s\n", dir, e.msg);
				return EXIT_FAILURE;
			}
			loaded++;
		}
		free(dir);
	}
	if (!loaded)
		printf("check_tokencdec: shared reference not found at %s: its tests are skipped\n", ref);
	free(ref);
	Suite *s = suite_create("tokencdec");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_reference_cases);
	tcase_add_loop_test(tc, test_hard_inputs, 0, (int)N_MODELS);
	tcase_add_test(tc, test_langs);
	tcase_add_test(tc, test_class_rules);
	tcase_add_test(tc, test_folders);
	tcase_add_test(tc, test_m2m100);
	suite_add_tcase(s, tc);
	int failed = testutil_run_suite(s, false);
	for (size_t m = 0; m < N_MODELS; m++)
		tokenizer_free(toks[m]);
	return failed;
}
