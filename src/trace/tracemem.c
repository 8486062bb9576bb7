/* tracemem.c -- a freed trace's large arrays kept for the next trace (see tracemem.h). */
#include "trace/tracemem.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* traces are made and freed on several threads */
static struct {
	void *p;
	size_t bytes;
} slot[TRACEMEM_SLOTS];
static size_t kept, limit = TRACEMEM_MAX;

/* With LOCK held: take out slot I's block. */
static void *slot_take(int i)
{
	void *p = slot[i].p;
	kept -= slot[i].bytes;
	slot[i].p = NULL;
	slot[i].bytes = 0;
	return p;
}

static bool poison;
static pthread_once_t poison_once = PTHREAD_ONCE_INIT;

static void poison_read(void)
{
	const char *s = getenv("ATTNSCOPE_TRACE_POISON");
	poison = s && *s && strcmp(s, "0") != 0;
}

/* A kept block of BYTES to twice that (the smallest such), taken out of its slot, or NULL. */
static void *kept_take(size_t bytes)
{
	void *p = NULL, *unfit[TRACEMEM_SLOTS];
	int best = -1, n_unfit = 0;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < TRACEMEM_SLOTS; i++)
		if (slot[i].p && slot[i].bytes >= bytes && slot[i].bytes / 2 <= bytes &&
		    (best < 0 || slot[i].bytes < slot[best].bytes))
			best = i;
	if (best >= 0)
		p = slot_take(best);
	else /* nothing fits (another length of text): the kept blocks go before new memory is taken */
		for (int i = 0; i < TRACEMEM_SLOTS; i++)
			if (slot[i].p)
				unfit[n_unfit++] = slot_take(i);
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < n_unfit; i++)
		free(unfit[i]);
	return p;
}

void *tracemem_calloc(size_t bytes)
{
	if (bytes < TRACEMEM_MIN)
		return calloc(bytes ? bytes : 1, 1);
	void *p = kept_take(bytes);
	if (!p)
		return calloc(bytes, 1);
	memset(p, 0, bytes); /* the part used; the rest of a larger block is never read */
	return p;
}

void *tracemem_alloc(size_t bytes)
{
	void *p = bytes < TRACEMEM_MIN ? NULL : kept_take(bytes);
	if (!p)
		p = malloc(bytes ? bytes : 1);
	pthread_once(&poison_once, poison_read);
	if (p && poison)
		memset(p, 0xff, bytes); /* every float a NaN */
	return p;
}

void tracemem_free(void *p, size_t bytes)
{
	if (!p)
		return;
	if (bytes >= TRACEMEM_MIN) {
		pthread_mutex_lock(&lock);
		for (int i = 0; i < TRACEMEM_SLOTS && p && kept + bytes <= limit; i++)
			if (!slot[i].p) {
				slot[i].p = p;
				slot[i].bytes = bytes;
				kept += bytes;
				p = NULL;
			}
		pthread_mutex_unlock(&lock);
	}
	free(p);
}

void tracemem_drop(void)
{
	pthread_mutex_lock(&lock);
	for (int i = 0; i < TRACEMEM_SLOTS; i++)
		free(slot_take(i));
	pthread_mutex_unlock(&lock);
}

size_t tracemem_kept(void)
{
	pthread_mutex_lock(&lock);
	size_t k = kept;
	pthread_mutex_unlock(&lock);
	return k;
}

void tracemem_limit(size_t bytes)
{
	pthread_mutex_lock(&lock);
	limit = bytes ? bytes : TRACEMEM_MAX;
	pthread_mutex_unlock(&lock);
}
