/* check_longtext.c -- compact traces (long texts): a trace over its budget keeps no n x n matrices,
 * and every head read back, the recorded head scores and block thumbnails, and a trace of words
 * built on it, equal those of the full trace of the same text. The budget is lowered through
 * ATTNSCOPE_TRACE_BUDGET so the small fixtures go compact. */
#include <check.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/headscore.h"
#include "trace/headsummary.h"
#include "analysis/heatdata.h"
#include "engine/model.h"
#include "analysis/rollout.h"
#include "analysis/words.h"
#include "testutil.h"

/* A text of a few dozen tokens with repeats (induction, duplicates) and punctuation. */
static const char *const text =
	"The cat sat on the mat, and the dog sat on the log. The cat sat on the mat again; the dog barked twice!";

static struct model *open_fixture(const char *name)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/tests/data/models/%s", testutil_srcdir(), name);
	struct model *m = NULL;
	struct err e = {{0}};
	ck_assert_msg(model_open(dir, &m, &e) == 0, "%s: %s", name, e.msg);
	return m;
}

/* The full trace (default budget) and the compact one (budget BUDGET) of TEXT. */
static void run_both(const struct model *m, const char *budget, struct trace **full, struct trace **compact)
{
	struct err e = {{0}};
	unsetenv("ATTNSCOPE_TRACE_BUDGET");
	ck_assert_msg(model_run(m, text, NULL, NULL, full, &e) == 0, "%s", e.msg);
	setenv("ATTNSCOPE_TRACE_BUDGET", budget, 1);
	ck_assert_msg(model_run(m, text, NULL, NULL, compact, &e) == 0, "%s", e.msg);
	unsetenv("ATTNSCOPE_TRACE_BUDGET");
}

static bool same_score(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

/* The blocks a full trace's head gives when pooled directly: the grid's thumbnail source. */
static void check_blocks(const struct trace *full, const struct trace *c, int l, int h, bool hide)
{
	struct heatmat m;
	ck_assert_int_eq(heatmat_build(full, l, h, HEAT_HEAD, hide, &m), 0);
	heatmat_mask(&m, m.v);
	int side = headsummary_side(c, hide);
	ck_assert_int_eq(side, m.rows < TRACE_THUMB ? m.rows : TRACE_THUMB);
	float *want = malloc(((size_t)side * side + 1) * sizeof *want), *got = malloc(((size_t)side * side + 1) * sizeof *got);
	ck_assert(want && got);
	for (int pool = HEAT_POOL_MAX; pool <= HEAT_POOL_MEAN; pool++) {
		heatdata_downsample(m.v, m.rows, m.cols, want, side, side, (enum heat_pool)pool);
		ck_assert_int_eq(heatdata_blocks(c, l, h, hide, (enum heat_pool)pool, got), side);
		for (int i = 0; i < side * side; i++) {
			if (isnan(want[i]) || isnan(got[i])) {
				assert_each(isnan(want[i]) && isnan(got[i]), "L%d H%d block %d: masked in one only", l, h, i);
				continue;
			}
			/* max: the very value; mean: a double sum kept as float, then divided */
			assert_each(fabsf(want[i] - got[i]) <= (pool == HEAT_POOL_MAX ? 0 : 1e-6f), "L%d H%d %s block %d: %g vs %g",
				    l, h, pool == HEAT_POOL_MAX ? "max" : "mean", i, want[i], got[i]);
		}
	}
	free(want);
	free(got);
	heatmat_free(&m);
}

static void check_same(const char *name, const char *budget)
{
	struct model *m = open_fixture(name);
	struct trace *full, *c;
	run_both(m, budget, &full, &c);
	ck_assert_msg(full->attn && !trace_compact(full), "%s: the default budget keeps the matrices", name);
	ck_assert_msg(trace_compact(c), "%s: over the budget the trace is compact", name);
	ck_assert_int_eq(full->n, c->n);
	size_t n = full->n, nn = n * n;
	ck_assert_msg(n > 20, "%s: the text is long enough to mean something (%zu tokens)", name, n);
	ck_assert(memcmp(full->q, c->q, (size_t)full->n_layers * full->n_heads * n * full->head_dim * sizeof(float)) == 0);
	ck_assert(memcmp(full->hidden_states, c->hidden_states, (size_t)(full->n_layers + 1) * n * full->hidden * sizeof(float)) ==
		  0);
	/* Every head recomputed to the bit: the forward pass's float operations in its order. */
	for (int l = 0; l < full->n_layers; l++)
		for (int h = 0; h < full->n_heads; h++)
			ck_assert_msg(memcmp(trace_attn(full, l, h), trace_attn(c, l, h), nn * sizeof(float)) == 0,
				      "%s: layer %d head %d differs when recomputed", name, l, h);
	/* The head finder's scores, recorded by the forward pass. */
	size_t lh = (size_t)full->n_layers * full->n_heads;
	struct headscore *a = calloc(lh, sizeof *a), *b = calloc(lh, sizeof *b);
	ck_assert(a && b);
	ck_assert_int_eq(headscore_all(full, a), 0);
	ck_assert_int_eq(headscore_all(c, b), 0);
	for (size_t i = 0; i < lh; i++) {
		for (int k = 0; k < HS_COUNT; k++)
			ck_assert_msg(same_score(a[i].s[k], b[i].s[k]), "%s: head %zu score %s", name, i, headscore_name(k));
		ck_assert(same_score(a[i].entropy_norm, b[i].entropy_norm));
		ck_assert_str_eq(a[i].label, b[i].label);
	}
	free(a);
	free(b);
	for (int l = 0; l < full->n_layers; l++)
		for (int h = 0; h < full->n_heads; h++)
			for (int hide = 0; hide < 2; hide++)
				check_blocks(full, c, l, h, hide);
	/* Words merged from recomputed heads. */
	struct trace *wf = words_build(full), *wc = words_build(c);
	ck_assert(wf && wc && trace_compact(wc));
	for (int l = 0; l < full->n_layers; l++)
		for (int h = 0; h < full->n_heads; h++)
			ck_assert(memcmp(trace_attn(wf, l, h), trace_attn(wc, l, h), (size_t)wf->n * wf->n * sizeof(float)) == 0);
	trace_free(wf);
	trace_free(wc);
	trace_free(full);
	trace_free(c);
	model_close(m);
}

/* A decoder with sliding windows and GQA, soft-capping, an encoder, local bidirectional windows. */
START_TEST(test_compact_equals_full)
{
	const char *names[] = {"gpt2-mini", "mistral-window", "llama-gqa", "gemma2-softcap", "bert-mini", "modernbert-window"};
	check_same(names[_i], "0");
}
END_TEST

/* ALiBi (BLOOM, 6 heads): the slopes ride on the trace, so a compact trace's recomputed heads add the
 * same bias as the forward pass, to the bit. */
START_TEST(test_compact_alibi)
{
	check_same("bloom-alibi", "100");
}
END_TEST

/* Learned attention sinks (gpt-oss): the sink logits ride on the trace, so a compact trace's recomputed
 * heads take the sink into their softmax as the forward pass did, to the bit (rows summing to < 1). */
START_TEST(test_compact_sinks)
{
	check_same("gptoss-sinks", "100");
}
END_TEST

/* Chunked attention and NoPE temperature tuning (Llama 4): the chunks ride on the trace (trace_key_range)
 * and the temperature is in the trace's q, so a compact trace's recomputed heads mask and scale the same. */
START_TEST(test_compact_chunks)
{
	check_same("llama4-chunks", "100");
}
END_TEST

/* More tokens than TRACE_THUMB: blocks of several tokens, a sliding window across them (the budget
 * given with a suffix). */
START_TEST(test_long_blocks)
{
	struct model *m = open_fixture("mistral-window");
	char *big = malloc(16 * strlen(text) + 16);
	ck_assert_ptr_nonnull(big);
	big[0] = 0;
	for (int i = 0; i < 12; i++)
		strcat(strcat(big, text), " ");
	struct trace *full, *c;
	struct err e = {{0}};
	ck_assert(model_run(m, big, NULL, NULL, &full, &e) == 0);
	setenv("ATTNSCOPE_TRACE_BUDGET", "1k", 1);
	ck_assert(model_run(m, big, NULL, NULL, &c, &e) == 0);
	unsetenv("ATTNSCOPE_TRACE_BUDGET");
	ck_assert(trace_compact(c) && c->n > 3 * TRACE_THUMB);
	for (int l = 0; l < c->n_layers; l++)
		for (int h = 0; h < c->n_heads; h++) {
			check_blocks(full, c, l, h, false);
			check_blocks(full, c, l, h, true);
			ck_assert(memcmp(trace_attn(full, l, h), trace_attn(c, l, h), (size_t)c->n * c->n * sizeof(float)) == 0);
		}
	free(big);
	trace_free(full);
	trace_free(c);
	model_close(m);
}
END_TEST

/* DeBERTa's scores hold relative terms q and k cannot give back: its trace stays full. */
START_TEST(test_relative_stays_full)
{
	struct model *m = open_fixture("deberta-rel");
	struct trace *full, *c;
	run_both(m, "0", &full, &c);
	ck_assert(!trace_compact(c) && c->attn);
	trace_free(full);
	trace_free(c);
	model_close(m);
}
END_TEST

/* A pointer from trace_attn outlives TRACE_ATTN_SLOTS - 1 requests for other heads. */
START_TEST(test_pointer_lifetime)
{
	struct model *m = open_fixture("llama-gqa");
	struct trace *full, *c;
	run_both(m, "0", &full, &c);
	size_t nn = (size_t)c->n * c->n;
	ck_assert_int_ge(c->n_layers * c->n_heads, TRACE_ATTN_SLOTS);
	const float *first = trace_attn(c, 0, 0);
	for (int i = 1; i < TRACE_ATTN_SLOTS; i++) {
		const float *p = trace_attn(c, i / c->n_heads, i % c->n_heads);
		ck_assert(memcmp(p, trace_attn(full, i / c->n_heads, i % c->n_heads), nn * sizeof(float)) == 0);
		ck_assert(memcmp(first, trace_attn(full, 0, 0), nn * sizeof(float)) == 0);
	}
	ck_assert_ptr_eq(trace_attn(c, 0, 0), first); /* still cached: the same memory */
	trace_free(full);
	trace_free(c);
	model_close(m);
}
END_TEST

static void count_recompute(void *arg, const struct trace *t)
{
	(void)t;
	++*(int *)arg;
}

/* The explorer counts the heads a view makes a compact trace recompute: once per head filled,
 * never for a head still cached, and only on the thread that asked. */
START_TEST(test_recompute_hook)
{
	struct model *m = open_fixture("llama-gqa");
	struct trace *full, *c;
	run_both(m, "0", &full, &c);
	int count = 0;
	trace_on_recompute(count_recompute, &count);
	(void)trace_attn(c, 0, 0);
	(void)trace_attn(c, 0, 1);
	(void)trace_attn(c, 0, 0); /* cached */
	(void)trace_attn(full, 0, 2); /* a full trace computes nothing */
	ck_assert_int_eq(count, 2);
	for (int l = 0; l < c->n_layers; l++)
		for (int h = 0; h < c->n_heads; h++)
			(void)trace_attn(c, l, h);
	ck_assert_int_eq(count, 2 + c->n_layers * c->n_heads - 2);
	trace_on_recompute(NULL, NULL);
	(void)trace_attn(c, 0, 0);
	ck_assert_int_eq(count, 2 + c->n_layers * c->n_heads - 2);
	trace_free(full);
	trace_free(c);
	model_close(m);
}
END_TEST

/* Esc in the explorer: the loops over every head end with "stopped", nothing stopped is cached,
 * and once resumed the same computation gives the full trace's numbers. */
START_TEST(test_recompute_stop)
{
	struct model *m = open_fixture("llama-gqa");
	struct trace *full, *c;
	run_both(m, "0", &full, &c);
	size_t nn = (size_t)c->n * c->n, all = (size_t)c->n_layers * nn;
	float *want = malloc(all * sizeof *want), *got = malloc(all * sizeof *got);
	struct err e = {{0}};
	ck_assert_int_eq(rollout_compute(full, want, &e), 0);
	trace_stop_recompute(true);
	ck_assert(trace_recompute_stopped());
	ck_assert_int_ne(rollout_compute(c, got, &e), 0);
	ck_assert_str_eq(e.msg, "stopped");
	(void)trace_attn(c, 1, 1); /* not recomputed: must not stay cached as head (1, 1) */
	trace_stop_recompute(false);
	ck_assert(memcmp(trace_attn(c, 1, 1), trace_attn(full, 1, 1), nn * sizeof(float)) == 0);
	ck_assert_int_eq(rollout_compute(c, got, &e), 0);
	ck_assert(memcmp(got, want, all * sizeof *got) == 0);
	free(want);
	free(got);
	trace_free(full);
	trace_free(c);
	model_close(m);
}
END_TEST

START_TEST(test_budget_parse)
{
	setenv("ATTNSCOPE_TRACE_BUDGET", "2k", 1);
	ck_assert(trace_budget() == 2048);
	setenv("ATTNSCOPE_TRACE_BUDGET", "3M", 1);
	ck_assert(trace_budget() == 3.0 * 1024 * 1024);
	setenv("ATTNSCOPE_TRACE_BUDGET", "1G", 1);
	ck_assert(trace_budget() == 1024.0 * 1024 * 1024);
	setenv("ATTNSCOPE_TRACE_BUDGET", "12345", 1);
	ck_assert(trace_budget() == 12345);
	setenv("ATTNSCOPE_TRACE_BUDGET", "lots", 1);
	ck_assert(trace_budget() == TRACE_BUDGET_DEFAULT);
	setenv("ATTNSCOPE_TRACE_BUDGET", "-5", 1);
	ck_assert(trace_budget() == TRACE_BUDGET_DEFAULT);
	unsetenv("ATTNSCOPE_TRACE_BUDGET");
	ck_assert(trace_budget() == TRACE_BUDGET_DEFAULT);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("longtext");
	TCase *tc = tcase_create("compact");
	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, test_compact_equals_full, 0, 6);
	tcase_add_test(tc, test_long_blocks);
	tcase_add_test(tc, test_compact_alibi);
	tcase_add_test(tc, test_compact_sinks);
	tcase_add_test(tc, test_compact_chunks);
	tcase_add_test(tc, test_relative_stays_full);
	tcase_add_test(tc, test_pointer_lifetime);
	tcase_add_test(tc, test_budget_parse);
	tcase_add_test(tc, test_recompute_hook);
	tcase_add_test(tc, test_recompute_stop);
	suite_add_tcase(s, tc);
	return testutil_run_suite(s, false);
}
