/* runner.c -- the model worker thread with debounce and stale-result discard (see runner.h). */
#include "config.h"

#include "tui/runner.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
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
	char *text, *text_b;      /* NULL text: no run of a text waiting */
	const struct trace *abl_clean; /* an ablated rerun alone waiting, of this clean trace (not owned) */
	struct ablation spec;     /* heads to ablate after each run (mask NULL or none marked: none) */
	runner_ablate_fn ablate;  /* how (NULL: never) */
	void *ablate_ctx;
	unsigned gen;             /* generation of the latest request */
	struct timespec when;     /* time of the latest request (CLOCK_MONOTONIC) */
	bool burst;               /* the latest request came within the debounce interval of the one before */
	bool running;
	unsigned running_gen;
	volatile int cancel;      /* read by the running model_run */

	/* The finished result not yet taken. */
	bool ready;
	struct trace *result;
	struct trace *result_abl; /* its ablated rerun, or NULL */
	bool result_abl_only;     /* the result of an ablated rerun alone (result NULL) */
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
		if (!r->text && !r->abl_clean) {
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
		const struct trace *abl_clean = r->abl_clean;
		r->text = r->text_b = NULL;
		r->abl_clean = NULL;
		unsigned gen = r->gen;
		r->running = true;
		r->running_gen = gen;
		r->cancel = 0;
		r->stats.started++;
		struct ablation spec = {r->spec.mode, r->spec.n_layers, r->spec.n_heads, NULL};
		if (r->ablate && ablation_count(&r->spec) > 0) /* the marks as they were asked for */
			spec.mask = malloc((size_t)spec.n_layers * spec.n_heads);
		if (spec.mask)
			memcpy(spec.mask, r->spec.mask, (size_t)spec.n_layers * spec.n_heads);
		pthread_mutex_unlock(&r->lock);

		struct trace *t = NULL, *abl = NULL;
		struct err e = {{0}}, ea = {{0}};
		int rc = text ? r->src->run(r->src->ctx, text, text_b, &r->cancel, &t, &e) : 0;
		const struct trace *clean = text ? t : abl_clean;
		if (rc == 0 && clean && spec.mask && r->ablate(r->ablate_ctx, clean, &spec, &r->cancel, &abl, &ea) < 0) {
			trace_free(abl);
			abl = NULL;
			snprintf(e.msg, sizeof e.msg, "ablation: %.*s", (int)sizeof e.msg - 16, ea.msg);
		}
		free(spec.mask);
		free(text);
		free(text_b);

		pthread_mutex_lock(&r->lock);
		r->running = false;
		if (gen != r->gen) { /* the text changed meanwhile: nobody wants this */
			trace_free(t);
			trace_free(abl);
			r->stats.discarded++;
			continue;
		}
		trace_free(r->result);
		trace_free(r->result_abl);
		r->result = rc == 0 ? t : NULL;
		r->result_abl = rc == 0 ? abl : NULL;
		r->result_abl_only = !text;
		if (rc != 0) {
			trace_free(t);
			trace_free(abl);
		}
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
	trace_free(r->result_abl);
	ablation_free(&r->spec);
	pthread_cond_destroy(&r->cond);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

/* A result of an older request that the UI has not taken yet is stale (the lock held). */
static void runner_drop_ready(struct runner *r)
{
	if (r->ready) {
		trace_free(r->result);
		trace_free(r->result_abl);
		r->result = r->result_abl = NULL;
		r->ready = false;
		r->stats.discarded++;
	}
}

unsigned runner_submit(struct runner *r, const char *text, const char *text_b)
{
	char *t = strdup(text), *tb = text_b ? strdup(text_b) : NULL;
	pthread_mutex_lock(&r->lock);
	free(r->text);
	free(r->text_b);
	r->text = t ? t : strdup("");
	r->text_b = tb;
	r->abl_clean = NULL;
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
	runner_drop_ready(r);
	unsigned gen = r->gen;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
	return gen;
}

void runner_set_ablate_fn(struct runner *r, runner_ablate_fn fn, void *ctx)
{
	pthread_mutex_lock(&r->lock);
	r->ablate = fn;
	r->ablate_ctx = ctx;
	pthread_mutex_unlock(&r->lock);
}

void runner_set_ablation(struct runner *r, const struct ablation *a)
{
	pthread_mutex_lock(&r->lock);
	if (a && a->mask && (r->spec.n_layers != a->n_layers || r->spec.n_heads != a->n_heads || !r->spec.mask)) {
		free(r->spec.mask);
		r->spec.mask = malloc((size_t)a->n_layers * a->n_heads);
		r->spec.n_layers = r->spec.mask ? a->n_layers : 0;
		r->spec.n_heads = r->spec.mask ? a->n_heads : 0;
	}
	if (a && a->mask && r->spec.mask) {
		memcpy(r->spec.mask, a->mask, (size_t)a->n_layers * a->n_heads);
		r->spec.mode = a->mode;
	} else if (r->spec.mask) {
		memset(r->spec.mask, 0, (size_t)r->spec.n_layers * r->spec.n_heads);
	}
	pthread_mutex_unlock(&r->lock);
}

unsigned runner_submit_ablation(struct runner *r, const struct trace *clean)
{
	pthread_mutex_lock(&r->lock);
	free(r->text);
	free(r->text_b);
	r->text = r->text_b = NULL;
	r->abl_clean = clean;
	r->gen++;
	r->stats.submitted++;
	r->burst = false; /* a key, not typing: at once */
	clock_gettime(CLOCK_MONOTONIC, &r->when);
	if (r->running)
		r->cancel = 1;
	runner_drop_ready(r);
	unsigned gen = r->gen;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
	return gen;
}

bool runner_take_pair(struct runner *r, struct trace **out, struct trace **ablated, bool *ablation_only,
		      struct err *e)
{
	bool got = false;
	pthread_mutex_lock(&r->lock);
	if (r->ready) {
		*out = r->result;
		*ablated = r->result_abl;
		*ablation_only = r->result_abl_only;
		if (e)
			*e = r->result_err;
		r->result = r->result_abl = NULL;
		r->ready = false;
		r->stats.delivered++;
		got = true;
	}
	pthread_mutex_unlock(&r->lock);
	return got;
}

bool runner_take(struct runner *r, struct trace **out, struct err *e)
{
	struct trace *abl = NULL;
	bool only = false;
	bool got = runner_take_pair(r, out, &abl, &only, e);
	trace_free(abl);
	return got;
}

bool runner_busy(struct runner *r)
{
	pthread_mutex_lock(&r->lock);
	/* ... or a text's result not taken yet: an ablated rerun alone asked for now would drop it */
	bool busy = r->text != NULL || r->abl_clean != NULL || r->running || (r->ready && !r->result_abl_only);
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
