/* workers.c -- persistent helper threads for the engine's parallel loops (see workers.h). */
#include "workers.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

struct workers_job {
	void (*fn)(void *ctx, int item, int worker);
	void *ctx;
	int n, threads;   /* items; threads taking part, caller included */
	atomic_int next;  /* the next item to take */
	atomic_int done;  /* items finished */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER, finished = PTHREAD_COND_INITIALIZER;
static struct workers_job job;
static unsigned long generation; /* bumped for every job handed to the helpers */
static bool open_job;            /* helpers may still join the current job */
static bool busy;                /* a caller owns the helpers */
static int active;               /* helpers inside the current job */
static int started;              /* helpers started (they never exit: they idle on WAKE) */
static _Thread_local bool inside; /* this thread runs items now: nested calls run inline */

static void workers_take(int worker)
{
	for (int i = atomic_fetch_add(&job.next, 1); i < job.n; i = atomic_fetch_add(&job.next, 1)) {
		job.fn(job.ctx, i, worker);
		atomic_fetch_add(&job.done, 1);
	}
}

static void *workers_main(void *arg)
{
	int index = (int)(long)arg;
	unsigned long seen = 0;
	inside = true;
	pthread_mutex_lock(&lock);
	for (;;) {
		while (!(open_job && generation != seen && index < job.threads))
			pthread_cond_wait(&wake, &lock);
		seen = generation;
		active++;
		pthread_mutex_unlock(&lock);
		workers_take(index);
		pthread_mutex_lock(&lock);
		active--;
		pthread_cond_signal(&finished);
	}
	return NULL;
}

/* Start helpers up to THREADS - 1 (fewer if the system refuses); returns the threads usable. */
static int workers_start(int threads)
{
	while (started < threads - 1) {
		pthread_t tid;
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		int rc = pthread_create(&tid, &attr, workers_main, (void *)(long)(started + 1));
		pthread_attr_destroy(&attr);
		if (rc != 0)
			break;
		started++;
	}
	return started + 1 < threads ? started + 1 : threads;
}

static void workers_inline(int n, void (*fn)(void *ctx, int item, int worker), void *ctx)
{
	for (int i = 0; i < n; i++)
		fn(ctx, i, 0);
}

void workers_run(int threads, int n, void (*fn)(void *ctx, int item, int worker), void *ctx)
{
	if (threads > WORKERS_MAX)
		threads = WORKERS_MAX;
	if (threads > n)
		threads = n;
	if (threads <= 1 || inside) {
		workers_inline(n, fn, ctx);
		return;
	}
	pthread_mutex_lock(&lock);
	if (busy || (threads = workers_start(threads)) <= 1) {
		pthread_mutex_unlock(&lock);
		workers_inline(n, fn, ctx);
		return;
	}
	busy = true;
	job.fn = fn;
	job.ctx = ctx;
	job.n = n;
	job.threads = threads;
	atomic_store(&job.next, 0);
	atomic_store(&job.done, 0);
	generation++;
	open_job = true;
	pthread_cond_broadcast(&wake);
	pthread_mutex_unlock(&lock);

	inside = true;
	workers_take(0);
	inside = false;

	pthread_mutex_lock(&lock);
	/* helpers that joined late find no item left; the job closes once none is inside it */
	while (atomic_load(&job.done) < n || active > 0)
		pthread_cond_wait(&finished, &lock);
	open_job = false;
	busy = false;
	pthread_mutex_unlock(&lock);
}
