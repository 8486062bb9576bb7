/* check_words.c -- word-level attention (src/analysis/words.c) against the numpy reference.
 *
 * For each tests/data/words/<case>.json (written by tests/tools/ref_words.py from the case's
 * reference attentions) the C model runs on the case's text and words_build merges its pieces;
 * the word split must match exactly and the merged attention to 2e-5. Also: a hand-computed merge,
 * rows summing to 1 and causal zeros, the piece<->word maps, and rollout on words. */
#include "config.h"

#include <check.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model.h"
#include "analysis/rollout.h"
#include "analysis/words.h"
#include "testutil.h"

static const char *const cases[] = {
	"bert-mini--pair", "bert-mini--unicode", "bert-mini-sharded--book", "gpt2-mini--book",
	"gpt2-mini--unicode", "gpt2-mini--pair", "llama-gqa--short", "llama-mqa-bias--short",
	"mistral-window--long", "gemma-mqa--short", "gemma2-softcap--long", "gemma3-local--long",
	"phi3-fused--short", "qwen2-bias--short", "qwen3-qknorm--short", "neox-serial--short",
};

START_TEST(test_words_reference)
{
	char path[PATH_MAX], dir[PATH_MAX];
	snprintf(path, sizeof path, "%s/tests/data/words/%s.json", testutil_srcdir(), cases[_i]);
	json_error_t je;
	json_t *root = json_load_file(path, 0, &je);
	ck_assert_msg(root, "%s:%d: %s", path, je.line, je.text);
	snprintf(dir, sizeof dir, "%s/%s", testutil_srcdir(), json_string_value(json_object_get(root, "model_dir")));
	struct err e = {{0}};
	struct model *m = NULL;
	struct trace *t = NULL;
	ck_assert_msg(model_open(dir, &m, &e) == 0, "%s", e.msg);
	ck_assert_msg(model_run(m, json_string_value(json_object_get(root, "text")),
				json_string_value(json_object_get(root, "text_b")), NULL, &t, &e) == 0, "%s", e.msg);
	json_t *special = json_object_get(root, "special"), *pw = json_object_get(root, "piece_word");
	ck_assert_int_eq(t->n, (int)json_array_size(pw));
	for (int i = 0; i < t->n; i++)
		ck_assert_msg(t->special[i] == json_is_true(json_array_get(special, (size_t)i)),
			      "%s: special flag of piece %d (%s)", cases[_i], i, t->tokens[i]);
	struct trace *w = words_build(t);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(w->n, (int)json_integer_value(json_object_get(root, "n_words")));
	ck_assert_ptr_eq(w->source, t);
	for (int i = 0; i < t->n; i++)
		ck_assert_msg(w->word_of[i] == (int)json_integer_value(json_array_get(pw, (size_t)i)),
			      "%s: piece %d (%s) is in word %d, numpy says %d", cases[_i], i, t->tokens[i],
			      w->word_of[i], (int)json_integer_value(json_array_get(pw, (size_t)i)));
	json_t *attn = json_object_get(root, "attentions");
	double maxdiff = 0, maxsum = 0;
	for (int l = 0; l < w->n_layers; l++)
		for (int h = 0; h < w->n_heads; h++) {
			const float *a = trace_attn(w, l, h);
			json_t *rows = json_array_get(json_array_get(attn, (size_t)l), (size_t)h);
			for (int i = 0; i < w->n; i++) {
				double sum = 0;
				for (int j = 0; j < w->n; j++) {
					double ref = json_number_value(json_array_get(json_array_get(rows, (size_t)i), (size_t)j));
					double d = fabs(a[i * w->n + j] - ref);
					maxdiff = d > maxdiff ? d : maxdiff;
					sum += a[i * w->n + j];
					if (w->causal && j > i)
						ck_assert_msg(a[i * w->n + j] == 0.0f, "%s: causal word row %d has weight on %d",
							      cases[_i], i, j);
				}
				maxsum = fabs(sum - 1) > maxsum ? fabs(sum - 1) : maxsum;
			}
		}
	ck_assert_msg(maxdiff < 2e-5, "%s: word attention differs from numpy by %g", cases[_i], maxdiff);
	ck_assert_msg(maxsum < 1e-5, "%s: a word row sums to 1 ± %g", cases[_i], maxsum);
	printf("%s: %d pieces -> %d words, split as numpy's; attention max |diff| %.2g, rows sum to 1 ± %.2g\n",
	       cases[_i], t->n, w->n, maxdiff, maxsum);
	trace_free(w);
	trace_free(t);
	model_close(m);
	json_decref(root);
}
END_TEST

/* play ##ing [SEP]: to a word summed, from a word averaged. */
START_TEST(test_words_merge_by_hand)
{
	const float a[9] = {0.5f, 0.3f, 0.2f, 0.1f, 0.6f, 0.3f, 0.2f, 0.2f, 0.6f};
	const int word_of[3] = {0, 0, 1}, word_start[3] = {0, 2, 3};
	float out[4];
	words_merge(a, 3, word_of, word_start, 2, out);
	ck_assert_float_eq_tol(out[0], (0.5f + 0.3f + 0.1f + 0.6f) / 2, 1e-7f);
	ck_assert_float_eq_tol(out[1], (0.2f + 0.3f) / 2, 1e-7f);
	ck_assert_float_eq_tol(out[2], 0.4f, 1e-7f);
	ck_assert_float_eq_tol(out[3], 0.6f, 1e-7f);
	float x[6] = {1, 2, 3, 4, 5, 6}, mean[4];
	words_mean_rows(x, 2, word_start, 2, mean);
	ck_assert_float_eq(mean[0], 2);
	ck_assert_float_eq(mean[1], 3);
	ck_assert_float_eq(mean[3], 6);
}
END_TEST

/* Cross-attention: 3 target pieces (▁c at ▁sat: 2 words) x 4 source pieces (hell o ▁world </s>: 3 words); a
 * target word's rows averaged, a source word's columns summed. */
START_TEST(test_words_merge_rect_by_hand)
{
	const float a[12] = {0.1f, 0.2f, 0.3f, 0.4f, 0.4f, 0.4f, 0.1f, 0.1f, 0.7f, 0.1f, 0.1f, 0.1f};
	const int row_start[3] = {0, 2, 3}, col_of[4] = {0, 0, 1, 2};
	float out[6];
	words_merge_rect(a, 4, row_start, 2, col_of, 3, out);
	ck_assert_float_eq_tol(out[0], (0.1f + 0.2f + 0.4f + 0.4f) / 2, 1e-7f);
	ck_assert_float_eq_tol(out[1], (0.3f + 0.1f) / 2, 1e-7f);
	ck_assert_float_eq_tol(out[2], (0.4f + 0.1f) / 2, 1e-7f);
	ck_assert_float_eq_tol(out[3], 0.8f, 1e-7f);
	ck_assert_float_eq_tol(out[4], 0.1f, 1e-7f);
	ck_assert_float_eq_tol(out[5], 0.1f, 1e-7f);
}
END_TEST

/* Maps both ways, readable word text, and rollout: pieces rolled out, then merged. */
START_TEST(test_words_maps_rollout)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/tests/data/models/gpt2-mini", testutil_srcdir());
	struct err e = {{0}};
	struct model *m = NULL;
	struct trace *t = NULL;
	ck_assert_msg(model_open(dir, &m, &e) == 0, "%s", e.msg);
	ck_assert_msg(model_run(m, "The capybara was playing", NULL, NULL, &t, &e) == 0, "%s", e.msg);
	struct trace *w = words_build(t);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(w->n, 4);
	ck_assert_str_eq(w->tokens[0], "The");
	ck_assert_str_eq(w->tokens[1], "capybara");
	for (int p = 0; p < t->n; p++) {
		int wd = words_of_piece(w, p);
		ck_assert(words_first_piece(w, wd) <= p && p < w->word_start[wd + 1]);
	}
	ck_assert_int_eq(words_of_piece(w, -1), -1);
	ck_assert_int_eq(words_of_piece(t, 3), 3); /* a trace of pieces maps to itself */
	size_t nn = (size_t)t->n * t->n, ww = (size_t)w->n * w->n;
	float *rp = malloc(t->n_layers * nn * sizeof *rp), *rw = malloc(t->n_layers * ww * sizeof *rw);
	float *merged = malloc(ww * sizeof *merged);
	ck_assert_int_eq(rollout_compute(t, rp, &e), 0);
	ck_assert_int_eq(words_rollout(w, rw, &e), 0);
	for (int l = 0; l < t->n_layers; l++) {
		words_merge(rp + l * nn, t->n, w->word_of, w->word_start, w->n, merged);
		for (size_t k = 0; k < ww; k++)
			ck_assert_float_eq_tol(rw[l * ww + k], merged[k], 1e-7f);
	}
	free(rp);
	free(rw);
	free(merged);
	trace_free(w);
	trace_free(t);
	model_close(m);
}
END_TEST

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	Suite *s = suite_create("words");
	TCase *tc = tcase_create("words");
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, test_words_reference, 0, (int)(sizeof cases / sizeof *cases));
	tcase_add_test(tc, test_words_merge_by_hand);
	tcase_add_test(tc, test_words_merge_rect_by_hand);
	tcase_add_test(tc, test_words_maps_rollout);
	suite_add_tcase(s, tc);
	return testutil_run_suite(s, false);
}
