/* check_lmhead.c -- the output head's API (engine/lmhead.h) on its own: top-k order and ties, that a
 * row of log-probabilities is a distribution and the per-text cache (lmpred) gives back what one row
 * computes, the surprisal of token t is row t-1's log-probability of it, and a model without a head
 * says why. The numbers themselves are checked against transformers and numpy in tests/lm.sh. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/lmhead.h"
#include "engine/model.h"
#include "testutil.h"

static struct model *open_model(const char *rel)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/%s", testutil_srcdir(), rel);
	struct model *m = NULL;
	struct err e = {{0}};
	ck_assert_msg(model_open(dir, &m, &e) == 0, "%s: %s", dir, e.msg);
	return m;
}

START_TEST(test_topk_order_and_ties)
{
	const float lp[] = {-3, -1, -1, -2, -1, -5};
	int32_t ids[4];
	float best[4];
	lmhead_topk(lp, 6, 4, ids, best);
	const int32_t want[] = {1, 2, 4, 3}; /* the three ties by the lower id, then the next best */
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(ids[i], want[i]);
	ck_assert(best[0] == -1 && best[3] == -2);
	lmhead_topk(lp, 6, 1, ids, best);
	ck_assert_int_eq(ids[0], 1);
}
END_TEST

START_TEST(test_causal_rows)
{
	struct model *m = open_model("models/demo-gpt2");
	ck_assert_int_eq(lmhead_kind(m), LMHEAD_CAUSAL);
	int V = lmhead_vocab(m);
	ck_assert_int_eq(V, model_get_info(m)->vocab_size);
	struct trace *t = NULL;
	struct err e = {{0}};
	ck_assert_msg(model_run(m, "the cat sat on the mat", NULL, NULL, &t, &e) == 0, "%s", e.msg);
	float *row = malloc((size_t)V * sizeof *row);
	ck_assert_ptr_nonnull(row);
	struct lmpred *p = lmpred_new(m, t, 5);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(lmpred_k(p), 5);
	for (int i = 0; i < t->n; i++) {
		double lse;
		ck_assert(lmhead_logprobs(m, trace_hidden(t, t->n_layers) + (size_t)i * t->hidden, false, row, &lse, &e) == 0);
		double sum = 0;
		for (int v = 0; v < V; v++)
			sum += exp((double)row[v]);
		ck_assert_msg(fabs(sum - 1) < 1e-4, "row %d sums to %.9f", i, sum);
		const int32_t *ids;
		const float *lp;
		double lse2;
		ck_assert(lmpred_row(p, i, &ids, &lp, &lse2, &e) == 0);
		ck_assert(lse2 == lse);
		int32_t top[5];
		float best[5];
		lmhead_topk(row, V, 5, top, best);
		for (int r = 0; r < 5; r++)
			ck_assert(ids[r] == top[r] && lp[r] == best[r]);
		int32_t id;
		float tlp;
		int rank;
		ck_assert(lmpred_target(p, i, &id, &tlp, &rank, &e) == 0);
		if (i + 1 < t->n) {
			ck_assert_int_eq(id, t->ids[i + 1]);
			ck_assert(tlp == row[id]);
			ck_assert(lmpred_surprisal(p, i + 1) == -tlp);
			int above = 0;
			for (int v = 0; v < V; v++)
				above += row[v] > row[id];
			ck_assert_int_ge(rank, above + 1);
		} else {
			ck_assert_int_eq(id, -1);
			ck_assert_int_eq(rank, 0);
		}
	}
	ck_assert(isnan(lmpred_surprisal(p, 0)));
	ck_assert(isnan(lmpred_surprisal(p, t->n)));
	ck_assert(lmpred_row(p, t->n, NULL, NULL, NULL, &e) < 0);
	lmpred_free(p);
	free(row);
	trace_free(t);
	model_close(m);
}
END_TEST

START_TEST(test_no_head)
{
	struct model *m = open_model("tests/data/models/qwen2-bias"); /* untied, no lm_head.weight */
	ck_assert_int_eq(lmhead_kind(m), LMHEAD_NONE);
	ck_assert_int_eq(lmhead_vocab(m), 0);
	ck_assert_ptr_nonnull(strstr(lmhead_why(m), "no output head"));
	ck_assert_ptr_null(strchr(lmhead_why(m), '\n'));
	struct trace *t = NULL;
	struct err e = {{0}};
	ck_assert(model_run(m, "the cat", NULL, NULL, &t, &e) == 0);
	float x = 0;
	ck_assert(lmhead_logprobs(m, trace_hidden(t, t->n_layers), false, &x, NULL, &e) < 0);
	ck_assert_str_eq(e.msg, lmhead_why(m));
	struct lmpred *p = lmpred_new(m, t, 10);
	const int32_t *ids;
	const float *lp;
	ck_assert(lmpred_row(p, 0, &ids, &lp, NULL, &e) < 0);
	ck_assert(isnan(lmpred_surprisal(p, 1)));
	lmpred_free(p);
	trace_free(t);
	model_close(m);
}
END_TEST

START_TEST(test_masked_head)
{
	struct model *m = open_model("tests/data/models/bert-mini"); /* cls.predictions.* in F16 */
	ck_assert_int_eq(lmhead_kind(m), LMHEAD_MASKED);
	struct trace *t = NULL;
	struct err e = {{0}};
	ck_assert(model_run(m, "the [MASK] sat", NULL, NULL, &t, &e) == 0);
	struct lmpred *p = lmpred_new(m, t, 3);
	int32_t id;
	float tlp;
	int rank;
	ck_assert(lmpred_target(p, 2, &id, &tlp, &rank, &e) == 0);
	ck_assert_int_eq(id, t->ids[2]); /* a masked LM's target is the token at the position */
	ck_assert(isnan(lmpred_surprisal(p, 2))); /* surprisal is a causal model's */
	lmpred_free(p);
	trace_free(t);
	model_close(m);
}
END_TEST

static Suite *lmhead_suite(void)
{
	Suite *s = suite_create("lmhead");
	TCase *tc = tcase_create("lmhead");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_topk_order_and_ties);
	tcase_add_test(tc, test_causal_rows);
	tcase_add_test(tc, test_no_head);
	tcase_add_test(tc, test_masked_head);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run_suite(lmhead_suite(), false);
}
