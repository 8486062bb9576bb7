/* runner.c -- the model worker thread with debounce and stale-result discard (see runner.h). */
#include "config.h"

#include "tui/runner.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct runner {
	const struct ui_source *src;
	int debounce_ms;
	int wake_fd;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;      /* signalled on submit and quit */
	bool quit;

	/* The latest request (guarded by lock). */
	char *text, *text_b;      /* NULL text: no request waiting */
	unsigned gen;             /* generation of the latest request */
	struct timespec when;     /* time of the latest request (CLOCK_MONOTONIC) */
	bool burst;               /* the latest request came within the debounce interval of the one before */
	bool running;
	unsigned running_gen;
	volatile int cancel;      /* read by the running model_run */

	/* The finished result not yet taken. */
	bool ready;
	struct trace *result;
	struct err result_err;

	struct runner_stats stats;
};

static void add_ms(struct timespec *t, int ms)
{
	t->tv_sec += ms / 1000;
	t->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

static bool before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static void *runner_main(void *arg)
{
	struct runner *r = arg;
	pthread_mutex_lock(&r->lock);
	while (!r->quit) {
		if (!r->text) {
			pthread_cond_wait(&r->cond, &r->lock);
			continue;
		}
		/* An isolated edit runs at once; only a burst (typing fast, a paste) waits until the
		 * text has been still for the debounce interval. */
		struct timespec now, due = r->when;
		add_ms(&due, r->debounce_ms);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (r->burst && before(&now, &due)) {
			pthread_cond_timedwait(&r->cond, &r->lock, &due);
			continue;
		}
		char *text = r->text, *text_b = r->text_b;
		r->text = r->text_b = NULL;
		unsigned gen = r->gen;
		r->running = true;
		r->running_gen = gen;
		r->cancel = 0;
		r->stats.started++;
		pthread_mutex_unlock(&r->lock);

		struct trace *t = NULL;
		struct err e = {{0}};
		int rc = r->src->run(r->src->ctx, text, text_b, &r->cancel, &t, &e);
		free(text);
		free(text_b);

		pthread_mutex_lock(&r->lock);
		r->running = false;
		if (gen != r->gen) { /* the text changed meanwhile: nobody wants this */
			trace_free(t);
			r->stats.discarded++;
			continue;
		}
		trace_free(r->result);
		r->result = rc == 0 ? t : NULL;
		if (rc != 0)
			trace_free(t);
		r->result_err = e;
		if (rc != 0 && !r->result_err.msg[0])
			err_set(&r->result_err, "the model run failed");
		r->ready = true;
		if (r->wake_fd >= 0) {
			char b = 1;
			ssize_t w = write(r->wake_fd, &b, 1);
			(void)w; /* a full pipe already holds a wake-up */
		}
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

struct runner *runner_new(const struct ui_source *src, int debounce_ms, int wake_fd)
{
	struct runner *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->src = src;
	r->debounce_ms = debounce_ms;
	r->wake_fd = wake_fd;
	pthread_mutex_init(&r->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&r->thread, NULL, runner_main, r)) {
		pthread_cond_destroy(&r->cond);
		pthread_mutex_destroy(&r->lock);
		free(r);
		return NULL;
	}
	return r;
}

void runner_free(struct runner *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->quit = true;
	r->cancel = 1;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->thread, NULL);
	free(r->text);
	free(r->text_b);
	trace_free(r->result);
	pthread_cond_destroy(&r->cond);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

unsigned runner_submit(struct runner *r, const char *text, const char *text_b)
{
	char *t = strdup(text), *tb = text_b ? strdup(text_b) : NULL;
	pthread_mutex_lock(&r->lock);
	free(r->text);
	free(r->text_b);
	r->text = t ? t : strdup("");
	r->text_b = tb;
	r->gen++;
	r->stats.submitted++;
	struct timespec now, quiet_until = r->when;
	clock_gettime(CLOCK_MONOTONIC, &now);
	add_ms(&quiet_until, r->debounce_ms);
	r->burst = r->stats.submitted > 1 && before(&now, &quiet_until);
	r->when = now;
	if (r->running)
		r->cancel = 1;
	/* A result of an older request that the UI has not taken yet is stale too. */
	if (r->ready) {
		trace_free(r->result);
		r->result = NULL;
		r->ready = false;
		r->stats.discarded++;
	}
	unsigned gen = r->gen;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
	return gen;
}

bool runner_take(struct runner *r, struct trace **out, struct err *e)
{
	bool got = false;
	pthread_mutex_lock(&r->lock);
	if (r->ready) {
		*out = r->result;
		if (e)
			*e = r->result_err;
		r->result = NULL;
		r->ready = false;
		r->stats.delivered++;
		got = true;
	}
	pthread_mutex_unlock(&r->lock);
	return got;
}

bool runner_busy(struct runner *r)
{
	pthread_mutex_lock(&r->lock);
	bool busy = r->text != NULL || r->running;
	pthread_mutex_unlock(&r->lock);
	return busy;
}

struct runner_stats runner_stats(struct runner *r)
{
	pthread_mutex_lock(&r->lock);
	struct runner_stats s = r->stats;
	pthread_mutex_unlock(&r->lock);
	return s;
}
