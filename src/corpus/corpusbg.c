/* corpusbg.c -- a corpus run on its own thread (see corpusbg.h). */
#include "config.h"

#include "corpus/corpusbg.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/progress.h"

struct corpusbg {
	const struct model *m;
	struct corpusrun_opts o;
	int wake;
	volatile int cancel;
	pthread_t thread;
	bool joined;
	pthread_mutex_t lock;   /* guards what follows */
	struct aggregate *next; /* newest aggregate not yet taken */
	uint64_t done, total;
	double elapsed;
	bool ended, cancelled;
	int rc;
	struct err err;
};

static void corpusbg_wake(struct corpusbg *b)
{
	if (b->wake >= 0 && write(b->wake, "c", 1) < 0) {
		/* a full pipe already holds a wake-up */
	}
}

static void corpusbg_report(void *ctx, uint64_t done, uint64_t total, double elapsed, struct aggregate *snapshot)
{
	struct corpusbg *b = ctx;
	pthread_mutex_lock(&b->lock);
	b->done = done, b->total = total, b->elapsed = elapsed;
	if (snapshot) {
		aggregate_free(b->next);
		b->next = snapshot;
	}
	pthread_mutex_unlock(&b->lock);
	corpusbg_wake(b);
}

static void *corpusbg_main(void *arg)
{
	struct corpusbg *b = arg;
	struct aggregate *a = NULL;
	bool cancelled = false;
	struct err e = {{0}};
	int rc = corpusrun(b->m, &b->o, &a, &cancelled, &e);
	pthread_mutex_lock(&b->lock);
	if (a) {
		aggregate_free(b->next);
		b->next = a;
		b->done = a->c.lines;
	}
	b->ended = true, b->cancelled = cancelled, b->rc = rc, b->err = e;
	pthread_mutex_unlock(&b->lock);
	corpusbg_wake(b);
	return NULL;
}

int corpusbg_start(const struct model *m, const struct corpusrun_opts *o, int wake_fd, struct corpusbg **out,
		   struct err *e)
{
	struct corpusbg *b = calloc(1, sizeof *b);
	*out = NULL;
	if (!b)
		return err_set(e, "out of memory");
	b->m = m;
	b->o = *o;
	b->o.cancel = &b->cancel;
	b->o.report = corpusbg_report;
	b->o.report_ctx = b;
	b->o.progress = NULL;
	b->o.messages = NULL; /* bad lines are counted; the terminal belongs to the explorer */
	b->wake = wake_fd;
	pthread_mutex_init(&b->lock, NULL);
	if (pthread_create(&b->thread, NULL, corpusbg_main, b)) {
		pthread_mutex_destroy(&b->lock);
		free(b);
		return err_set(e, "cannot start the corpus thread");
	}
	*out = b;
	return 0;
}

struct aggregate *corpusbg_take(struct corpusbg *b)
{
	pthread_mutex_lock(&b->lock);
	struct aggregate *a = b->next;
	b->next = NULL;
	pthread_mutex_unlock(&b->lock);
	return a;
}

bool corpusbg_progress(struct corpusbg *b, char *buf, size_t n, int width)
{
	pthread_mutex_lock(&b->lock);
	progress_format(buf, n, b->done, b->total, b->elapsed, width, "lines");
	bool going = !b->ended;
	pthread_mutex_unlock(&b->lock);
	return going;
}

void corpusbg_stop(struct corpusbg *b)
{
	b->cancel = 1;
}

int corpusbg_result(struct corpusbg *b, bool *cancelled, struct err *e)
{
	pthread_mutex_lock(&b->lock);
	int rc = b->ended ? b->rc : 0;
	*cancelled = b->cancelled;
	if (rc < 0)
		*e = b->err;
	pthread_mutex_unlock(&b->lock);
	return rc;
}

void corpusbg_finish(struct corpusbg *b)
{
	b->cancel = 1;
	if (!b->joined)
		pthread_join(b->thread, NULL);
	b->joined = true;
}

void corpusbg_free(struct corpusbg *b)
{
	if (!b)
		return;
	corpusbg_finish(b);
	aggregate_free(b->next);
	pthread_mutex_destroy(&b->lock);
	free(b);
}
