/* check_runner.c -- the model worker: debounce coalesces quick edits, a newer submit cancels or
 * discards an older run, failures come back as messages. Uses a fake source with a delay, and an
 * encoder-decoder fixture whose target rides in TEXT_B as the explorer's target line sends it. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/model.h"
#include "tui/runner.h"
#include "ui/synth.h"
#include "testutil.h"

struct fake {
	int delay_ms;
	bool honour_cancel;
	int runs, cancelled;
	char last[256];
	pthread_mutex_t lock;
};

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static int fake_run(void *ctx, const char *text, const char *text_b, const volatile int *cancel, struct trace **out,
		    struct err *e)
{
	struct fake *f = ctx;
	pthread_mutex_lock(&f->lock);
	f->runs++;
	snprintf(f->last, sizeof f->last, "%s", text);
	pthread_mutex_unlock(&f->lock);
	for (int t = 0; t < f->delay_ms; t += 2) {
		if (f->honour_cancel && *cancel) {
			pthread_mutex_lock(&f->lock);
			f->cancelled++;
			pthread_mutex_unlock(&f->lock);
			return err_set(e, "cancelled");
		}
		sleep_ms(2);
	}
	if (!strcmp(text, "fail"))
		return err_set(e, "no such luck");
	*out = synth_trace(text, text_b, 1, 1, SYNTH_BERT);
	return 0;
}

/* Wait up to 5 s for a result. */
static bool wait_take(struct runner *r, struct trace **t, struct err *e)
{
	for (int i = 0; i < 2500; i++) {
		if (runner_take(r, t, e))
			return true;
		sleep_ms(2);
	}
	return false;
}

START_TEST(debounce_coalesces_typing)
{
	struct fake f = {.delay_ms = 0, .honour_cancel = true, .lock = PTHREAD_MUTEX_INITIALIZER};
	struct ui_source src = {"fake", false, &f, fake_run, false, NULL};
	/* A debounce far above the 5 ms between keystrokes: under valgrind on a loaded machine a 5 ms
	 * sleep has taken over 80 ms, which isolated a keystroke and started a third run. */
	struct runner *r = runner_new(&src, 1000, -1);
	const char *typed[] = {"t", "th", "the", "the c", "the ca", "the cat"};
	for (int i = 0; i < 6; i++) {
		runner_submit(r, typed[i], NULL);
		sleep_ms(5); /* faster than the debounce */
	}
	struct trace *t = NULL;
	struct err e = {{0}};
	ck_assert(wait_take(r, &t, &e));
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(t->n, 4); /* [CLS] the cat [SEP] */
	ck_assert_str_eq(t->tokens[2], "cat");
	trace_free(t);
	struct runner_stats s = runner_stats(r);
	ck_assert_uint_eq(s.submitted, 6);
	/* The first keystroke was isolated and ran at once; the burst after it ran once, when still. */
	ck_assert_uint_eq(s.started, 2);
	ck_assert_uint_eq(s.delivered, 1);
	ck_assert_uint_eq(s.discarded, 1);
	ck_assert(!runner_busy(r));
	runner_free(r);
	ck_assert_int_eq(f.runs, 2);
}
END_TEST

START_TEST(isolated_edit_runs_at_once)
{
	struct fake f = {.delay_ms = 0, .honour_cancel = true, .lock = PTHREAD_MUTEX_INITIALIZER};
	struct ui_source src = {"fake", false, &f, fake_run, false, NULL};
	struct runner *r = runner_new(&src, 2000, -1);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	runner_submit(r, "the cat", NULL);
	struct trace *t = NULL;
	struct err e = {{0}};
	ck_assert(wait_take(r, &t, &e));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
	ck_assert_msg(ms < 1000, "an isolated edit waited %.0f ms (debounce 2000 ms)", ms);
	trace_free(t);
	runner_free(r);
}
END_TEST

START_TEST(newer_text_cancels_running)
{
	struct fake f = {.delay_ms = 300, .honour_cancel = true, .lock = PTHREAD_MUTEX_INITIALIZER};
	struct ui_source src = {"fake", false, &f, fake_run, false, NULL};
	struct runner *r = runner_new(&src, 0, -1);
	runner_submit(r, "old text", NULL);
	for (int i = 0; i < 500 && runner_stats(r).started < 1; i++)
		sleep_ms(2);
	ck_assert(runner_busy(r));
	runner_submit(r, "new", NULL);
	struct trace *t = NULL;
	struct err e = {{0}};
	ck_assert(wait_take(r, &t, &e));
	ck_assert_ptr_nonnull(t);
	ck_assert_str_eq(t->tokens[1], "new");
	trace_free(t);
	runner_free(r);
	ck_assert_int_eq(f.runs, 2);
	ck_assert_int_eq(f.cancelled, 1);
}
END_TEST

START_TEST(stale_result_is_discarded)
{
	/* A source that ignores the cancel flag: its stale result must still never be delivered. */
	struct fake f = {.delay_ms = 150, .honour_cancel = false, .lock = PTHREAD_MUTEX_INITIALIZER};
	struct ui_source src = {"fake", false, &f, fake_run, false, NULL};
	struct runner *r = runner_new(&src, 0, -1);
	runner_submit(r, "stale", NULL);
	for (int i = 0; i < 500 && runner_stats(r).started < 1; i++)
		sleep_ms(2);
	runner_submit(r, "fresh", NULL);
	struct trace *t = NULL;
	struct err e = {{0}};
	ck_assert(wait_take(r, &t, &e));
	ck_assert_str_eq(t->tokens[1], "fresh");
	trace_free(t);
	struct runner_stats s = runner_stats(r);
	ck_assert_uint_eq(s.discarded, 1);
	ck_assert_uint_eq(s.delivered, 1);
	/* Nothing else arrives later. */
	sleep_ms(50);
	ck_assert(!runner_take(r, &t, &e));
	runner_free(r);
}
END_TEST

START_TEST(failure_is_reported)
{
	struct fake f = {.delay_ms = 0, .honour_cancel = true, .lock = PTHREAD_MUTEX_INITIALIZER};
	struct ui_source src = {"fake", false, &f, fake_run, false, NULL};
	int fds[2];
	ck_assert_int_eq(pipe(fds), 0);
	struct runner *r = runner_new(&src, 0, fds[1]);
	runner_submit(r, "fail", NULL);
	char b;
	ck_assert_int_eq(read(fds[0], &b, 1), 1); /* the wake-up byte */
	struct trace *t = (struct trace *)1;
	struct err e = {{0}};
	ck_assert(runner_take(r, &t, &e));
	ck_assert_ptr_null(t);
	ck_assert_str_eq(e.msg, "no such luck");
	runner_free(r);
	close(fds[0]);
	close(fds[1]);
}
END_TEST

/* A fake ablated rerun: a copy of the clean trace's tokens, its first attention weight set to the number
 * of heads marked, so the test sees which marks and which clean trace it ran on. */
static int fake_ablate(void *ctx, const struct trace *clean, const struct ablation *a, const volatile int *cancel,
		       struct trace **out, struct err *e)
{
	(void)ctx, (void)cancel;
	if (!(*out = synth_trace(clean->tokens[1], NULL, 1, 1, SYNTH_BERT)))
		return err_set(e, "out of memory");
	(*out)->attn[0] = (float)ablation_count(a);
	return 0;
}

static bool wait_pair(struct runner *r, struct trace **t, struct trace **abl, bool *only, struct err *e)
{
	for (int i = 0; i < 2500; i++) {
		if (runner_take_pair(r, t, abl, only, e))
			return true;
		sleep_ms(2);
	}
	return false;
}

/* With heads marked every run comes with its ablated rerun; a change of marks alone reruns only that, on
 * the clean trace given; no mark (or no ablate function): no rerun. */
START_TEST(ablation_rides_along)
{
	struct fake f = {.delay_ms = 0, .honour_cancel = true, .lock = PTHREAD_MUTEX_INITIALIZER};
	struct ui_source src = {"fake", false, &f, fake_run, false, NULL};
	struct runner *r = runner_new(&src, 0, -1);
	unsigned char mask[4] = {0, 1, 0, 0};
	struct ablation a = {ABLATE_ZERO, 2, 2, mask};
	struct trace *t = NULL, *abl = NULL;
	bool only = true;
	struct err e = {{0}};
	runner_set_ablation(r, &a); /* marks but no ablate function: the clean run alone */
	runner_submit(r, "cat", NULL);
	ck_assert(wait_pair(r, &t, &abl, &only, &e));
	ck_assert(t && !abl && !only);
	trace_free(t);
	runner_set_ablate_fn(r, fake_ablate, NULL);
	runner_submit(r, "dog", NULL);
	ck_assert(wait_pair(r, &t, &abl, &only, &e));
	ck_assert(t && abl && !only);
	ck_assert_str_eq(abl->tokens[1], "dog");
	ck_assert_float_eq(abl->attn[0], 1.0f);
	trace_free(abl);
	mask[2] = 1; /* two marks: the ablation alone, on the clean trace kept */
	runner_set_ablation(r, &a);
	runner_submit_ablation(r, t);
	struct trace *none = NULL;
	ck_assert(wait_pair(r, &none, &abl, &only, &e));
	ck_assert(!none && abl && only);
	ck_assert_str_eq(abl->tokens[1], "dog");
	ck_assert_float_eq(abl->attn[0], 2.0f);
	trace_free(abl);
	runner_set_ablation(r, NULL); /* none marked: no rerun */
	runner_submit(r, "eel", NULL);
	struct trace *t2 = NULL;
	ck_assert(wait_pair(r, &t2, &abl, &only, &e));
	ck_assert(t2 && !abl && !only);
	trace_free(t2);
	trace_free(t);
	ck_assert_uint_eq(runner_stats(r).delivered, 4);
	runner_free(r);
}
END_TEST

/* The explorer's source for an encoder-decoder (ui-model.c): TEXT_B is the target line's text. */
static int encdec_run(void *ctx, const char *text, const char *text_b, const volatile int *cancel, struct trace **out,
		      struct err *e)
{
	return model_run_target(ctx, text, text_b, cancel, out, e);
}

/* Edits of the target line (a burst of typing, a backspace) reach the model through the runner: the trace taken
 * is model_run_target's of the last text and target, bit for bit (decoder ids, labels, cross-attention); an
 * empty line (NULL) runs the decoder on its start token alone. */
START_TEST(target_rides_along)
{
	const char *top = getenv("top_srcdir");
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/tests/data/models/bart-encdec", top && *top ? top : SRCDIR);
	struct model *m = NULL;
	struct err e = {{0}};
	ck_assert_msg(model_open(dir, &m, &e) == 0, "%s", e.msg);
	ck_assert(model_get_info(m)->encoder_decoder);
	struct ui_source src = {"bart", false, m, encdec_run, true, NULL};
	struct runner *r = runner_new(&src, 1000, -1);
	const char *typed[] = {"the", "the c", "the cat", "the cat s", "the cat sat", "the cat sa"};
	for (int i = 0; i < 6; i++) {
		runner_submit(r, "hello world there", typed[i]);
		sleep_ms(5);
	}
	struct trace *t = NULL, *want = NULL;
	ck_assert(wait_take(r, &t, &e));
	ck_assert_msg(t && t->decoder, "%s", e.msg);
	ck_assert_int_eq(model_run_target(m, "hello world there", "the cat sa", NULL, &want, &e), 0);
	const struct trace *d = t->decoder, *w = want->decoder;
	ck_assert_int_eq(d->n, w->n);
	ck_assert_int_eq(d->n_cross, t->n);
	ck_assert_mem_eq(d->ids, w->ids, (size_t)w->n * sizeof *w->ids);
	ck_assert_mem_eq(d->labels, w->labels, (size_t)w->n * sizeof *w->labels);
	ck_assert_mem_eq(d->cross_attn, w->cross_attn, (size_t)w->n_layers * w->n_heads * w->n * w->n_cross * sizeof(float));
	ck_assert_int_eq(d->ids[0], model_get_info(m)->decoder_start);
	trace_free(t);
	trace_free(want);
	runner_submit(r, "hello world there", NULL);
	ck_assert(wait_take(r, &t, &e));
	ck_assert_msg(t && t->decoder, "%s", e.msg);
	ck_assert_int_eq(t->decoder->n, 1);
	ck_assert_int_eq(t->decoder->ids[0], model_get_info(m)->decoder_start);
	trace_free(t);
	ck_assert_uint_eq(runner_stats(r).delivered, 2);
	ck_assert_uint_eq(runner_stats(r).started, 3); /* the first key at once, the burst once, the empty line */
	runner_free(r);
	model_close(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("runner");
	TCase *tc = tcase_create("runner");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, debounce_coalesces_typing);
	tcase_add_test(tc, isolated_edit_runs_at_once);
	tcase_add_test(tc, newer_text_cancels_running);
	tcase_add_test(tc, stale_result_is_discarded);
	tcase_add_test(tc, failure_is_reported);
	tcase_add_test(tc, ablation_rides_along);
	tcase_add_test(tc, target_rides_along);
	suite_add_tcase(s, tc);
	return testutil_run_suite(s, false);
}
