/* workers.c -- persistent helper threads for the engine's parallel loops (see workers.h). */
#include "engine/workers.h"
#include "base/progress.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

/* How long a thread that finished its part polls for the next job, or for the helpers to finish,
 * before it sleeps. A forward pass hands out jobs every few hundred microseconds; sleeping between
 * them made every job wait for the kernel to wake a helper, and on a VM waking an idle virtual CPU
 * took up to milliseconds: after a pause of 150 ms a 2-thread forward of 18 tokens ran as slowly as
 * a 1-thread one (48 ms instead of 27). */
#define WORKERS_SPIN_S 300e-6

static inline void workers_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause(); /* tells the core (and a hypervisor) that this is a poll loop */
#endif
}

/* Poll DONE(ARG) for up to WORKERS_SPIN_S; true when it turned true meanwhile. */
static bool workers_spin(bool (*done)(void *arg), void *arg)
{
	double until = progress_now() + WORKERS_SPIN_S;
	for (int i = 0;; i++) {
		if (done(arg))
			return true;
		if ((i & 63) == 63 && progress_now() > until)
			return false;
		workers_pause();
	}
}

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
static atomic_ulong generation;  /* bumped for every job handed to the helpers */
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

static bool workers_new_job(void *seen)
{
	return atomic_load_explicit(&generation, memory_order_relaxed) != *(unsigned long *)seen;
}

static void *workers_main(void *arg)
{
	int index = (int)(long)arg;
	unsigned long seen = 0;
	inside = true;
	pthread_mutex_lock(&lock);
	for (;;) {
		if (!(open_job && generation != seen && index < job.threads)) {
			pthread_mutex_unlock(&lock);
			workers_spin(workers_new_job, &seen);
			pthread_mutex_lock(&lock);
		}
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

static bool workers_items_done(void *unused)
{
	(void)unused;
	return atomic_load(&job.done) >= job.n;
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

	workers_spin(workers_items_done, NULL);
	pthread_mutex_lock(&lock);
	/* helpers that joined late find no item left; the job closes once none is inside it */
	while (atomic_load(&job.done) < n || active > 0)
		pthread_cond_wait(&finished, &lock);
	open_job = false;
	busy = false;
	pthread_mutex_unlock(&lock);
}
