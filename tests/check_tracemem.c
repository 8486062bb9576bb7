/* check_tracemem.c -- a freed trace's large arrays kept for the next trace (src/trace/tracemem.c):
 * reused only where they fit, handed out as zeros (or, for a trace its forward pass writes whole, as
 * NaNs under ATTNSCOPE_TRACE_POISON), dropped before new memory is taken, and safe from two threads
 * at once. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include "trace/trace.h"
#include "trace/tracemem.h"
#include "testutil.h"

/* 4 layers x 4 heads x N tokens: the attention is 16 N² floats (9.4 MB at 384 tokens: kept), the
 * other arrays stay below TRACEMEM_MIN (malloc's). */
static struct trace *mk(int n)
{
	struct trace *t = trace_new(4, 4, 64, 64, n);
	ck_assert_ptr_nonnull(t);
	return t;
}

static size_t attn_bytes(int n)
{
	return (size_t)16 * n * n * sizeof(float);
}

static void fill(struct trace *t, float v)
{
	for (size_t i = 0; i < attn_bytes(t->n) / sizeof(float); i++)
		t->attn[i] = v; /* what a forward leaves there */
}

static void assert_zeros(const struct trace *t)
{
	size_t i = 0, count = attn_bytes(t->n) / sizeof(float);
	while (i < count && t->attn[i] == 0.0f)
		i++;
	ck_assert_msg(i == count, "attention[%zu] = %g in a new trace", i, i < count ? (double)t->attn[i] : 0.0);
}

START_TEST(test_reused_as_zeros)
{
	struct trace *a = mk(384);
	float *was = a->attn;
	fill(a, 1.5f);
	trace_free(a);
	ck_assert_uint_eq(tracemem_kept(), attn_bytes(384)); /* the small arrays went back to malloc */
	struct trace *b = mk(384);
	ck_assert_ptr_eq(b->attn, was); /* the same block */
	ck_assert_uint_eq(tracemem_kept(), 0);
	assert_zeros(b);
	fill(b, -2.0f);
	trace_free(b);
	struct trace *c = mk(300); /* 300² is more than half of 384²: it fits, the used part is zeroed */
	ck_assert_ptr_eq(c->attn, was);
	assert_zeros(c);
	trace_free(c);
}
END_TEST

START_TEST(test_unfit_dropped)
{
	struct trace *a = mk(384);
	fill(a, 3.0f);
	trace_free(a);
	ck_assert_uint_eq(tracemem_kept(), attn_bytes(384));
	struct trace *b = mk(400); /* larger: nothing fits, the kept block is freed before new memory */
	ck_assert_uint_eq(tracemem_kept(), 0);
	assert_zeros(b);
	trace_free(b);
	ck_assert_uint_eq(tracemem_kept(), attn_bytes(400));
	struct trace *c = mk(256); /* 4 MB, less than half the kept block: too large to keep for it */
	ck_assert_uint_eq(tracemem_kept(), 0);
	assert_zeros(c);
	trace_free(c);
	tracemem_drop();
	ck_assert_uint_eq(tracemem_kept(), 0);
	struct trace *d = mk(100); /* 640 KB: malloc's, never kept */
	trace_free(d);
	ck_assert_uint_eq(tracemem_kept(), 0);
}
END_TEST

/* Whether every 61st float of COUNT from X, and the last, is a NaN. */
static bool all_nan(const float *x, size_t count)
{
	for (size_t i = 0; i < count; i += 61)
		if (!isnan(x[i]))
			return false;
	return isnan(x[count - 1]);
}

/* A trace whose arrays its forward pass writes whole (shape.written) starts, with the tests'
 * ATTNSCOPE_TRACE_POISON, with NaNs in all of them, on fresh memory and on a kept block; a kept block
 * handed to a trace that is not written whole is zeros again. */
START_TEST(test_written_poisoned)
{
	struct trace_shape sh = {.n_layers = 4, .n_heads = 4, .n_kv_heads = 2, .head_dim = 64, .hidden = 64, .n = 384,
				 .rotary = true, .written = true};
	size_t n = 384, qf = 16 * n * 64, kf = 8 * n * 64;
	for (int round = 0; round < 2; round++) {
		struct trace *t = trace_new_shaped(&sh);
		ck_assert_ptr_nonnull(t);
		ck_assert_msg(all_nan(t->attn, attn_bytes(384) / sizeof(float)), "round %d: attention", round);
		ck_assert(all_nan(t->q, qf) && all_nan(t->q_raw, qf));
		ck_assert(all_nan(t->k, kf) && all_nan(t->k_raw, kf) && all_nan(t->v, kf));
		ck_assert(all_nan(t->hidden_states, 5 * n * 64));
		ck_assert_float_eq(t->vnorm[0], 0.0f); /* the small arrays: zeros either way */
		fill(t, 1.5f);
		trace_free(t);
		ck_assert_uint_eq(tracemem_kept(), attn_bytes(384)); /* round 1 took this block */
	}
	struct trace *z = mk(384);
	assert_zeros(z);
	trace_free(z);
	tracemem_drop();
}
END_TEST

START_TEST(test_slots_and_budget)
{
	void *p[TRACEMEM_SLOTS + 2];
	for (int i = 0; i < TRACEMEM_SLOTS + 2; i++) {
		p[i] = tracemem_calloc(TRACEMEM_MIN);
		ck_assert_ptr_nonnull(p[i]);
	}
	for (int i = 0; i < TRACEMEM_SLOTS + 2; i++) /* past the slots: freed */
		tracemem_free(p[i], TRACEMEM_MIN);
	ck_assert_uint_eq(tracemem_kept(), (size_t)TRACEMEM_SLOTS * TRACEMEM_MIN);
	tracemem_drop();
	ck_assert_uint_eq(tracemem_kept(), 0);
	/* past the budget: freed */
	tracemem_limit(2 * (size_t)TRACEMEM_MIN + TRACEMEM_MIN / 2);
	for (int i = 0; i < 3; i++)
		p[i] = tracemem_calloc(TRACEMEM_MIN);
	for (int i = 0; i < 3; i++)
		tracemem_free(p[i], TRACEMEM_MIN);
	ck_assert_uint_eq(tracemem_kept(), 2 * (size_t)TRACEMEM_MIN);
	tracemem_drop();
	tracemem_limit(0);
}
END_TEST

/* Traces of about N tokens made and freed in turn, each leaving values in its attention; a value
 * seen in a new trace is another's (every 61st float and the last are looked at: valgrind's pace). */
static void *churn(void *arg)
{
	int n = *(const int *)arg;
	for (int r = 0; r < 12; r++) {
		struct trace *t = trace_new(4, 4, 64, 64, n + r % 3 * 40);
		if (!t)
			return (void *)1;
		size_t count = attn_bytes(t->n) / sizeof(float);
		for (size_t i = 0; i < count; i += 61)
			if (t->attn[i] != 0.0f)
				return (void *)1;
		if (t->attn[count - 1] != 0.0f)
			return (void *)1;
		for (size_t i = 0; i < count; i += 61)
			t->attn[i] = 7.0f;
		t->attn[count - 1] = 7.0f;
		trace_free(t);
	}
	return NULL;
}

START_TEST(test_two_threads)
{
	int na = 384, nb = 420;
	pthread_t th;
	void *ra = NULL, *rb = NULL;
	ck_assert_int_eq(pthread_create(&th, NULL, churn, &nb), 0);
	ra = churn(&na);
	pthread_join(th, &rb);
	ck_assert_msg(!ra && !rb, "a trace started with a value left by another");
	tracemem_drop();
}
END_TEST

int main(void)
{
	setenv("ATTNSCOPE_TRACE_POISON", "1", 1); /* as make check sets it, also when run by hand */
	Suite *s = suite_create("tracemem");
	TCase *tc = tcase_create("tracemem");
	tcase_set_timeout(tc, 600); /* minutes under valgrind */
	tcase_add_test(tc, test_reused_as_zeros);
	tcase_add_test(tc, test_unfit_dropped);
	tcase_add_test(tc, test_written_poisoned);
	tcase_add_test(tc, test_slots_and_budget);
	tcase_add_test(tc, test_two_threads);
	suite_add_tcase(s, tc);
	return testutil_run_suite(s, false);
}
