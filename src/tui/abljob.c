/* abljob.c -- the ablation-effect column on its own thread (abljob.h). */
#include "config.h"

#include "tui/abljob.h"

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct abljob {
	const struct model *m;
	const struct trace *clean;
	enum ablate_mode mode;
	pthread_mutex_t *model_lock;
	const volatile int *waiting;
	int wake_fd;
	pthread_t thread;
	volatile int cancel;
	pthread_mutex_t lock;   /* guards what follows */
	double *effect;         /* [heads] as the engine fills it */
	double *shown;          /* [heads] the values reported so far */
	int done, total;
	bool running;
	struct err err;
};

/* After each head: publish its value, and let a runner that waits for the model have it first. */
static void abljob_progress(void *ctx, int done, int total)
{
	struct abljob *j = ctx;
	pthread_mutex_lock(&j->lock);
	memcpy(j->shown, j->effect, (size_t)total * sizeof *j->shown);
	j->done = done;
	pthread_mutex_unlock(&j->lock);
	if (j->wake_fd >= 0) {
		char b = 1;
		ssize_t w = write(j->wake_fd, &b, 1);
		(void)w; /* a full pipe already holds a wake-up */
	}
	if (*j->waiting) {
		pthread_mutex_unlock(j->model_lock);
		struct timespec ms = {0, 1000000L};
		for (int i = 0; i < 5000 && *j->waiting && !j->cancel; i++) /* a runner's run, at most ~5 s */
			nanosleep(&ms, NULL);
		pthread_mutex_lock(j->model_lock);
	}
}

static void *abljob_main(void *arg)
{
	struct abljob *j = arg;
	struct err e = {{0}};
	pthread_mutex_lock(j->model_lock);
	int rc = ablation_effects_metric(j->m, j->clean, j->mode, ABLATE_SURPRISAL, &j->cancel, abljob_progress, j,
					 j->effect, &e);
	pthread_mutex_unlock(j->model_lock);
	pthread_mutex_lock(&j->lock);
	j->running = false;
	if (rc < 0)
		j->err = e;
	pthread_mutex_unlock(&j->lock);
	if (j->wake_fd >= 0) {
		char b = 1;
		ssize_t w = write(j->wake_fd, &b, 1);
		(void)w;
	}
	return NULL;
}

struct abljob *abljob_start(const struct model *m, const struct trace *clean, enum ablate_mode mode,
			    pthread_mutex_t *lock, const volatile int *waiting, int wake_fd, struct err *e)
{
	struct abljob *j = calloc(1, sizeof *j);
	int heads = clean->n_layers * clean->n_heads;
	if (j) {
		j->effect = malloc((size_t)(heads > 0 ? heads : 1) * sizeof *j->effect);
		j->shown = malloc((size_t)(heads > 0 ? heads : 1) * sizeof *j->shown);
	}
	if (!j || !j->effect || !j->shown) {
		if (j)
			free(j->effect), free(j->shown);
		free(j);
		err_set(e, "out of memory");
		return NULL;
	}
	for (int i = 0; i < heads; i++)
		j->effect[i] = j->shown[i] = NAN;
	j->m = m, j->clean = clean, j->mode = mode, j->model_lock = lock, j->waiting = waiting, j->wake_fd = wake_fd;
	j->total = heads;
	j->running = true;
	pthread_mutex_init(&j->lock, NULL);
	if (pthread_create(&j->thread, NULL, abljob_main, j)) {
		pthread_mutex_destroy(&j->lock);
		free(j->effect), free(j->shown), free(j);
		err_set(e, "cannot start a thread");
		return NULL;
	}
	return j;
}

bool abljob_poll(struct abljob *j, double *effect, int *done, int *total)
{
	pthread_mutex_lock(&j->lock);
	memcpy(effect, j->shown, (size_t)j->total * sizeof *effect);
	*done = j->done;
	*total = j->total;
	bool running = j->running;
	pthread_mutex_unlock(&j->lock);
	return running;
}

const char *abljob_error(struct abljob *j)
{
	pthread_mutex_lock(&j->lock);
	const char *msg = j->running ? "" : j->err.msg; /* set once, before running turns false */
	pthread_mutex_unlock(&j->lock);
	return msg;
}

void abljob_free(struct abljob *j)
{
	if (!j)
		return;
	j->cancel = 1;
	pthread_join(j->thread, NULL);
	pthread_mutex_destroy(&j->lock);
	free(j->effect);
	free(j->shown);
	free(j);
}
