/* check_ablate.c -- head ablation's API (engine/ablate.h) on its own: the head lists, that an ablation of
 * no head is the clean run bit for bit, that the layers below the first ablated head stay the clean run's
 * bit for bit and the ablated head's own pattern is kept, that an ablated run leaves the explorer's token
 * reuse (model_run_reuse) to clean rows, that the effects stop when cancelled and their batched head
 * (lmhead_logprobs_rows) agrees with the row-by-row one. The numbers themselves
 * are checked against transformers and numpy in tests/ablate.sh. */
#include <check.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ablate.h"
#include "engine/lmhead.h"
#include "engine/model.h"
#include "testutil.h"

static struct model *open_model(const char *rel)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/%s", testutil_srcdir(), rel);
	struct model *m = NULL;
	struct err e = {{0}};
	ck_assert_msg(model_open(dir, &m, &e) == 0, "%s: %s", dir, e.msg);
	return m;
}

/* Whether layer L's hidden states (0 = embeddings) of A and B are the same bits. */
static bool same_hidden(const struct trace *a, const struct trace *b, int l)
{
	return a->n == b->n && memcmp(trace_hidden(a, l), trace_hidden(b, l), (size_t)a->n * a->hidden * sizeof(float)) == 0;
}

static bool same_head(const struct trace *a, const struct trace *b, int l, int h)
{
	return memcmp(trace_attn(a, l, h), trace_attn(b, l, h), (size_t)a->n * a->n * sizeof(float)) == 0;
}

START_TEST(test_lists)
{
	struct model *m = open_model("models/demo-gpt2");
	struct ablation a;
	struct err e = {{0}};
	char buf[64];
	ck_assert_int_eq(ablation_init(&a, model_get_info(m), &e), 0);
	ck_assert_int_eq(ablation_parse(&a, "1.2,0.3,1.2", &e), 0);
	ck_assert_int_eq(ablation_count(&a), 2);
	ablation_describe(&a, buf, sizeof buf);
	ck_assert_str_eq(buf, "L0H3, L1H2 (zero)");
	a.mode = ABLATE_MEAN;
	ablation_describe(&a, buf, 17); /* too small for both: shortened, the mode kept */
	ck_assert_str_eq(buf, "L0H3, ... (mean)");
	const char *bad[] = {"", "0", "0.", ".1", "0.1,", "0.1,,1.2", "a.b", "4.0", "0.4", "0.1x", "-1.0", "0.1 "};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		e.msg[0] = '\0';
		ck_assert_msg(ablation_parse(&a, bad[i], &e) < 0 && e.msg[0], "'%s' accepted", bad[i]);
	}
	enum ablate_mode mode;
	ck_assert(ablation_parse_mode("mean", &mode) == 0 && mode == ABLATE_MEAN);
	ck_assert(ablation_parse_mode("zero", &mode) == 0 && mode == ABLATE_ZERO);
	ck_assert(ablation_parse_mode("Zero", &mode) < 0);
	ablation_free(&a);
	model_close(m);
}
END_TEST

/* Ablating nothing is the clean run; ablating layer 1's head 2 leaves the embeddings, layer 0 and layer 1's
 * attention patterns as they were, bit for bit, and changes what comes after. Zero and mean alike. */
START_TEST(test_layers_below)
{
	const char *models[] = {"models/demo-gpt2", "models/demo-bert", "tests/data/models/llama-gqa"};
	for (size_t k = 0; k < sizeof models / sizeof models[0]; k++) {
		struct model *m = open_model(models[k]);
		struct err e = {{0}};
		struct trace *clean = NULL, *t = NULL;
		struct ablation a;
		ck_assert_int_eq(model_run(m, "The cat sat on the mat and looked at the door.", NULL, NULL, &clean, &e), 0);
		ck_assert_int_eq(ablation_init(&a, model_get_info(m), &e), 0);
		for (int mode = ABLATE_ZERO; mode <= ABLATE_MEAN; mode++) {
			a.mode = (enum ablate_mode)mode;
			ck_assert_int_eq(model_run_ablated(m, clean, &a, NULL, &t, &e), 0);
			for (int l = 0; l <= clean->n_layers; l++)
				ck_assert_msg(same_hidden(t, clean, l), "%s: nothing ablated, layer %d differs", models[k], l);
			trace_free(t);
			ck_assert_int_eq(ablation_parse(&a, "1.2", &e), 0);
			ck_assert_int_eq(model_run_ablated(m, clean, &a, NULL, &t, &e), 0);
			ck_assert(same_hidden(t, clean, 0) && same_hidden(t, clean, 1));
			for (int h = 0; h < clean->n_heads; h++)
				ck_assert_msg(same_head(t, clean, 0, h) && same_head(t, clean, 1, h), "%s: a pattern changed", models[k]);
			ck_assert_msg(!same_hidden(t, clean, 2), "%s %d: the ablation changed nothing", models[k], mode);
			trace_free(t);
			memset(a.mask, 0, (size_t)a.n_layers * a.n_heads);
		}
		ablation_free(&a);
		trace_free(clean);
		model_close(m);
	}
}
END_TEST

/* The explorer's runs of a causal model reuse the rows a text shares with the one before: an ablated run
 * in between neither feeds nor spoils them -- the next clean run is the whole run's, bit for bit. */
START_TEST(test_reuse_stays_clean)
{
	struct model *m = open_model("tests/data/models/gpt2-mini");
	struct err e = {{0}};
	struct trace *r1 = NULL, *clean = NULL, *abl = NULL, *r2 = NULL, *whole = NULL;
	struct ablation a;
	const char *text = "The cat sat on the mat", *longer = "The cat sat on the mat and looked at the door";
	ck_assert_int_eq(model_run_reuse(m, text, NULL, NULL, &r1, &e), 0);
	ck_assert_int_eq(ablation_init(&a, model_get_info(m), &e), 0);
	ck_assert_int_eq(ablation_parse(&a, "0.0,0.1", &e), 0);
	ck_assert_int_eq(model_run_ablated(m, r1, &a, NULL, &abl, &e), 0);
	ck_assert(!same_hidden(abl, r1, r1->n_layers));
	ck_assert_int_eq(model_run_reuse(m, longer, NULL, NULL, &r2, &e), 0);
	ck_assert_int_eq(model_run(m, longer, NULL, NULL, &whole, &e), 0);
	for (int l = 0; l <= whole->n_layers; l++)
		ck_assert_msg(same_hidden(r2, whole, l), "layer %d: the reused run differs from the whole one", l);
	/* and an ablated run of the reused trace is that of the whole one */
	struct trace *a2 = NULL, *a3 = NULL;
	ck_assert_int_eq(model_run_ablated(m, r2, &a, NULL, &a2, &e), 0);
	ck_assert_int_eq(model_run_ablated(m, whole, &a, NULL, &a3, &e), 0);
	ck_assert(same_hidden(a2, a3, a3->n_layers));
	trace_free(a2);
	trace_free(a3);
	trace_free(r1);
	trace_free(clean);
	trace_free(abl);
	trace_free(r2);
	trace_free(whole);
	ablation_free(&a);
	model_close(m);
}
END_TEST

static void count_progress(void *ctx, int done, int total)
{
	int *n = ctx;
	ck_assert_int_eq(done, *n + 1);
	ck_assert_int_gt(total, 0);
	*n = done;
}

/* Every head's effect: non-negative, progress after each; cancelled, -1 "cancelled" and NaN left. */
START_TEST(test_effects_and_cancel)
{
	struct model *m = open_model("models/demo-gpt2");
	struct err e = {{0}};
	struct trace *clean = NULL;
	ck_assert_int_eq(model_run(m, "the cat sat on the mat", NULL, NULL, &clean, &e), 0);
	const struct model_info *in = model_get_info(m);
	int heads = in->n_layers * in->n_heads, seen = 0;
	double *eff = malloc((size_t)heads * sizeof *eff);
	ck_assert_int_eq(ablation_effects(m, clean, ABLATE_ZERO, NULL, count_progress, &seen, eff, &e), 0);
	ck_assert_int_eq(seen, heads);
	for (int i = 0; i < heads; i++)
		ck_assert_msg(isfinite(eff[i]) && eff[i] >= 0, "head %d: %g", i, eff[i]);
	volatile int cancel = 1;
	ck_assert_int_lt(ablation_effects(m, clean, ABLATE_ZERO, &cancel, NULL, NULL, eff, &e), 0);
	ck_assert_str_eq(e.msg, "cancelled");
	ck_assert(isnan(eff[0]));
	free(eff);
	trace_free(clean);
	model_close(m);
}
END_TEST

/* Mean-ablation's means: taken from a full clean trace's probabilities and values, or recorded by a clean
 * pass for a compact trace (no probabilities kept): the same ablated run within float noise, and both
 * unlike zero-ablation. */
START_TEST(test_mean_from_trace_or_pass)
{
	struct model *m = open_model("models/demo-gpt2");
	struct err e = {{0}};
	const char *text = "the cat sat on the mat and the dog sat on the log";
	struct trace *full = NULL, *compact = NULL, *a = NULL, *b = NULL, *z = NULL;
	ck_assert_int_eq(model_run(m, text, NULL, NULL, &full, &e), 0);
	ck_assert_ptr_nonnull(full->attn);
	setenv("ATTNSCOPE_TRACE_BUDGET", "64", 1);
	ck_assert_int_eq(model_run(m, text, NULL, NULL, &compact, &e), 0);
	unsetenv("ATTNSCOPE_TRACE_BUDGET");
	ck_assert_ptr_null(compact->attn);
	struct ablation ab;
	ck_assert_int_eq(ablation_init(&ab, model_get_info(m), &e), 0);
	ck_assert_int_eq(ablation_parse(&ab, "0.1,1.2", &e), 0);
	ab.mode = ABLATE_MEAN;
	ck_assert_int_eq(model_run_ablated(m, full, &ab, NULL, &a, &e), 0);
	ck_assert_int_eq(model_run_ablated(m, compact, &ab, NULL, &b, &e), 0);
	ab.mode = ABLATE_ZERO;
	ck_assert_int_eq(model_run_ablated(m, full, &ab, NULL, &z, &e), 0);
	const float *xa = trace_hidden(a, a->n_layers), *xb = trace_hidden(b, b->n_layers), *xz = trace_hidden(z, z->n_layers);
	double worst = 0, apart = 0;
	for (size_t i = 0; i < (size_t)a->n * a->hidden; i++) {
		worst = fmax(worst, fabs((double)xa[i] - xb[i]));
		apart = fmax(apart, fabs((double)xa[i] - xz[i]));
	}
	printf("mean-ablation from the trace against a recording pass: max difference %.2g (zero-ablation: %.2g)\n",
	       worst, apart);
	ck_assert_msg(worst <= 1e-5, "%g", worst);
	ck_assert_msg(apart > 1e-3, "%g", apart);
	ablation_free(&ab);
	trace_free(a), trace_free(b), trace_free(z), trace_free(full), trace_free(compact);
	model_close(m);
}
END_TEST

/* The explorer's column: each head's change of mean surprisal (ablation_effects_metric) equals the mean of
 * -log p (lmhead_logprobs, row by row) over a separate ablated run minus the clean one's (within 1e-4, the batched head against
 * the row-by-row one), for a causal head (next tokens) and a masked one (each token at its own position). */
static double mean_surprisal(const struct model *m, const struct trace *t)
{
	bool causal = lmhead_kind(m) == LMHEAD_CAUSAL;
	int V = lmhead_vocab(m), rows = causal ? t->n - 1 : t->n;
	float *lp = malloc((size_t)V * sizeof *lp);
	struct err e = {{0}};
	double s = 0;
	for (int i = 0; i < rows; i++) {
		ck_assert_int_eq(lmhead_logprobs(m, trace_hidden(t, t->n_layers) + (size_t)i * t->hidden, false, lp, NULL, &e), 0);
		s -= lp[t->ids[causal ? i + 1 : i]];
	}
	free(lp);
	return s / rows;
}

START_TEST(test_surprisal_metric)
{
	const char *models[] = {"models/demo-gpt2", "models/demo-bert"};
	for (size_t k = 0; k < sizeof models / sizeof models[0]; k++) {
		struct model *m = open_model(models[k]);
		struct err e = {{0}};
		struct trace *clean = NULL;
		ck_assert_int_eq(model_run(m, "the cat sat on the mat", NULL, NULL, &clean, &e), 0);
		const struct model_info *in = model_get_info(m);
		int heads = in->n_layers * in->n_heads;
		double *eff = malloc((size_t)heads * sizeof *eff), base = mean_surprisal(m, clean);
		ck_assert_int_eq(ablation_effects_metric(m, clean, ABLATE_ZERO, ABLATE_SURPRISAL, NULL, NULL, NULL, eff, &e), 0);
		struct ablation a;
		ck_assert_int_eq(ablation_init(&a, in, &e), 0);
		double spread = 0;
		for (int i = 0; i < heads; i++) {
			struct trace *t = NULL;
			a.mask[i] = 1;
			ck_assert_int_eq(model_run_ablated(m, clean, &a, NULL, &t, &e), 0);
			a.mask[i] = 0;
			double want = mean_surprisal(m, t) - base;
			ck_assert_msg(fabs(eff[i] - want) <= 1e-4, "%s head %d: %g, expected %g", models[k], i, eff[i], want);
			spread = fmax(spread, fabs(want));
			trace_free(t);
		}
		ck_assert_msg(spread > 1e-3, "%s: no head changes the surprisal", models[k]);
		ablation_free(&a);
		free(eff);
		trace_free(clean);
		model_close(m);
	}
}
END_TEST

/* The effects' batched head (lmhead_logprobs_rows: float32 logits from one matrix product) against the
 * row-by-row one (float64 sums) on a causal and a masked head: within 1e-4 (the cases' tolerance). */
START_TEST(test_rows_match_one_row)
{
	const char *models[] = {"models/demo-gpt2", "models/demo-bert"};
	for (size_t k = 0; k < sizeof models / sizeof models[0]; k++) {
		struct model *m = open_model(models[k]);
		struct err e = {{0}};
		struct trace *t = NULL;
		ck_assert_int_eq(model_run(m, "The [MASK] sat on the mat.", NULL, NULL, &t, &e), 0);
		int V = lmhead_vocab(m);
		float *all = malloc((size_t)t->n * V * sizeof *all), *one = malloc((size_t)V * sizeof *one);
		double *lse = malloc((size_t)t->n * sizeof *lse), lse1;
		ck_assert_int_eq(lmhead_logprobs_rows(m, trace_hidden(t, t->n_layers), t->n, all, lse, &e), 0);
		double worst = 0;
		for (int i = 0; i < t->n; i++) {
			ck_assert_int_eq(lmhead_logprobs(m, trace_hidden(t, t->n_layers) + (size_t)i * t->hidden, false, one, &lse1, &e), 0);
			worst = fmax(worst, fabs(lse[i] - lse1));
			for (int v = 0; v < V; v++)
				worst = fmax(worst, fabs((double)all[(size_t)i * V + v] - one[v]));
		}
		printf("%s: batched rows against one row at a time: max difference %.2g\n", models[k], worst);
		ck_assert_msg(worst <= 1e-4, "%s: %g", models[k], worst);
		free(all);
		free(one);
		free(lse);
		trace_free(t);
		model_close(m);
	}
}
END_TEST

static Suite *ablate_suite(void)
{
	Suite *s = suite_create("ablate");
	TCase *tc = tcase_create("ablate");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_lists);
	tcase_add_test(tc, test_layers_below);
	tcase_add_test(tc, test_reuse_stays_clean);
	tcase_add_test(tc, test_effects_and_cancel);
	tcase_add_test(tc, test_rows_match_one_row);
	tcase_add_test(tc, test_surprisal_metric);
	tcase_add_test(tc, test_mean_from_trace_or_pass);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run_suite(ablate_suite(), false);
}
