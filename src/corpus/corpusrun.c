/* corpusrun.c -- the corpus run: reader, workers, progress (see corpusrun.h). */
#include "config.h"

#include "corpus/corpusrun.h"

#include <cblas.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "corpus/corpus.h"
#include "base/progress.h"

struct corpusrun_shared {
	const struct model *m;
	const struct corpusrun_opts *o;
	pthread_mutex_t lock;
	pthread_cond_t done;    /* signalled as each worker finishes (with LOCK) */
	uint64_t lines_done;    /* lines of the shard handled by every worker (atomic) */
	int finished;           /* workers done, under LOCK */
	int stop;               /* a worker hit a fatal error (atomic) */
	uint64_t err_line;      /* the lowest line of a fatal error, under lock */
	struct err err;
};

struct corpusrun_worker {
	struct corpusrun_shared *sh;
	int index, count;
	pthread_mutex_t lock;   /* held while the worker changes AGG, so a snapshot can read it */
	struct aggregate *agg;
	int failed;             /* -1 when the worker itself could not go on (OOM, read error) */
};

void corpusrun_agg_model(const struct model *m, struct agg_model *out)
{
	const struct model_info *in = model_get_info(m);
	memset(out, 0, sizeof *out);
	snprintf(out->name, sizeof out->name, "%s", in->name);
	snprintf(out->family, sizeof out->family, "%s", in->family);
	out->causal = in->causal;
	out->n_layers = in->n_layers;
	out->n_heads = in->n_heads;
	out->n_kv_heads = in->n_kv_heads > 0 ? in->n_kv_heads : in->n_heads;
	out->head_dim = in->head_dim;
	out->hidden = in->hidden;
	out->max_positions = in->max_positions;
}

/* A bad line: report it, or (without --keep-going) stop every worker with it. */
static void corpusrun_bad(struct corpusrun_worker *w, uint64_t line, const struct err *why)
{
	struct corpusrun_shared *sh = w->sh;
	pthread_mutex_lock(&w->lock);
	w->agg->c.failed++;
	pthread_mutex_unlock(&w->lock);
	pthread_mutex_lock(&sh->lock);
	if (sh->o->keep_going) {
		if (sh->o->messages) {
			if (sh->o->progress)
				fputs("\r\033[K", sh->o->progress);
			fprintf(sh->o->messages, "attnscope: %s: %s\n", sh->o->path, why->msg);
		}
	} else if (!__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE) || line < sh->err_line) {
		sh->err_line = line;
		err_set(&sh->err, "%s: %s", sh->o->path, why->msg);
		__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&sh->lock);
}

static bool corpusrun_stopped(const struct corpusrun_shared *sh)
{
	return __atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE) || (sh->o->cancel && *sh->o->cancel);
}

/* Add DELTA to the worker's count *C under its lock. */
static void corpusrun_count(struct corpusrun_worker *w, uint64_t *c, int64_t delta)
{
	pthread_mutex_lock(&w->lock);
	*c += (uint64_t)delta;
	pthread_mutex_unlock(&w->lock);
}

/* A text read and tokenized, waiting for its batch's forward pass. */
struct corpusrun_pending {
	struct trace *t;
	uint64_t line;       /* 1-based */
	char *text, *text_b; /* copies: the reader's strings last until its next line */
};

/* Why batches (corpusrun.h): at ~25 tokens a text, one text at a time spent more time reading and
 * packing the weights than multiplying. Why no more than 192 rows: with the weights packed once for
 * attnscope's kernel, a batch's activations then stay near the core, while the weights' reads are
 * still small beside the arithmetic. 1,000 texts of 25 tokens, bert-base shape, 2 workers, on an
 * AVX-512 Xeon: 19.1-20.3 s at 512 rows, 17.7-18.1 at 192, 17.8-18.8 at 100-320; its AVX2 tiles:
 * 27.0-27.4 s at 512, 25.8-26.4 at 192. Memory stays small (a bert-base trace of 25 tokens is ~4 MB). */

static void corpusrun_drop(struct corpusrun_pending *p, int *n)
{
	for (int i = 0; i < *n; i++) {
		trace_free(p[i].t);
		free(p[i].text);
		free(p[i].text_b);
	}
	*n = 0;
}

/* Run the pending texts through the model together and add them in line order. -1 when the run
 * must stop (cancelled: the texts are not counted; or the aggregate failed). */
static int corpusrun_flush(struct corpusrun_worker *w, struct corpusrun_pending *p, int *n, struct err *e)
{
	struct corpusrun_shared *sh = w->sh;
	const struct corpusrun_opts *o = sh->o;
	struct trace *t[CORPUSRUN_BATCH_MAX];
	int rc = 0;
	for (int i = 0; i < *n; i++)
		t[i] = p[i].t;
	if (*n > 0 && model_forward_batch(sh->m, t, *n, o->cancel, e) < 0) {
		if (o->cancel && *o->cancel) {
			corpusrun_count(w, &w->agg->c.lines, -(int64_t)*n); /* the interrupted texts are not in the aggregate */
			corpusrun_drop(p, n);
			return -1;
		}
		for (int i = 0; i < *n; i++) { /* out of memory for the batch: each of its lines says so */
			struct err why = *e;
			err_prefix(&why, "line %llu", (unsigned long long)p[i].line);
			corpusrun_bad(w, p[i].line, &why);
		}
	} else {
		for (int i = 0; i < *n && rc == 0; i++) {
			pthread_mutex_lock(&w->lock);
			rc = aggregate_add(w->agg, p[i].t, p[i].line - 1, p[i].text, p[i].text_b, e);
			pthread_mutex_unlock(&w->lock);
			if (rc < 0) {
				w->failed = -1;
				corpusrun_bad(w, p[i].line, e);
			}
		}
	}
	__atomic_add_fetch(&sh->lines_done, (uint64_t)*n, __ATOMIC_RELAXED);
	corpusrun_drop(p, n);
	return rc;
}

static void *corpusrun_work(void *arg)
{
	struct corpusrun_worker *w = arg;
	struct corpusrun_shared *sh = w->sh;
	const struct corpusrun_opts *o = sh->o;
	struct corpus_reader *r = NULL;
	struct err e = {{0}};
	struct corpusrun_pending pend[CORPUSRUN_BATCH_MAX];
	int n_pend = 0, rows = 0, batch = o->batch > 0 && o->batch <= CORPUSRUN_BATCH_MAX ? o->batch : CORPUSRUN_BATCH;
	bool ended = false; /* the shard's lines were all read */
	uint64_t stride = (uint64_t)o->shard_n * w->count, mine = (uint64_t)(o->shard_k - 1) + (uint64_t)o->shard_n * w->index;
	if (corpus_open(o->path, &r, &e) < 0) {
		w->failed = -1;
		goto done;
	}
	struct corpus_item it;
	int got;
	for (uint64_t i = 0; !corpusrun_stopped(sh); i++) {
		bool ours = i % stride == mine;
		e.msg[0] = 0;
		got = corpus_next(r, ours, &it, &e);
		if (got == 0) {
			ended = true;
			break;
		}
		if (got < 0) {
			corpusrun_bad(w, i + 1, &e);
			w->failed = -1;
			break;
		}
		if (!ours)
			continue;
		corpusrun_count(w, &w->agg->c.lines, 1);
		if (it.kind == CORPUS_EMPTY) {
			corpusrun_count(w, &w->agg->c.empty, 1);
		} else if (it.kind == CORPUS_BAD) {
			corpusrun_bad(w, it.line, &e);
		} else {
			struct corpusrun_pending *p = &pend[n_pend];
			*p = (struct corpusrun_pending){.line = it.line};
			if (model_prepare(sh->m, it.text, it.text_b, true, &p->t, &e) < 0) {
				err_prefix(&e, "line %llu", (unsigned long long)it.line);
				corpusrun_bad(w, it.line, &e);
			} else if (!(p->text = strdup(it.text)) || (it.text_b && !(p->text_b = strdup(it.text_b)))) {
				n_pend++;
				err_set(&e, "out of memory");
				w->failed = -1;
				corpusrun_bad(w, it.line, &e);
				break;
			} else {
				rows += p->t->n;
				if (++n_pend == batch || rows >= CORPUSRUN_BATCH_ROWS) {
					rows = 0;
					if (corpusrun_flush(w, pend, &n_pend, &e) < 0)
						break;
				}
				continue; /* counted as done with its batch */
			}
		}
		__atomic_add_fetch(&sh->lines_done, 1, __ATOMIC_RELAXED);
	}
	if (ended && !corpusrun_stopped(sh) && w->failed == 0)
		corpusrun_flush(w, pend, &n_pend, &e);
	else if (n_pend > 0 && o->cancel && *o->cancel)
		corpusrun_count(w, &w->agg->c.lines, -(int64_t)n_pend); /* read but not run before Ctrl-C */
	corpusrun_drop(pend, &n_pend);
done:
	if (w->failed < 0 && e.msg[0]) {
		pthread_mutex_lock(&sh->lock);
		if (!sh->stop || sh->err.msg[0] == 0)
			sh->err = e;
		__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&sh->lock);
	}
	corpus_close(r);
	pthread_mutex_lock(&sh->lock);
	sh->finished++;
	pthread_cond_signal(&sh->done);
	pthread_mutex_unlock(&sh->lock);
	return NULL;
}

/* Waits until the STARTED workers have all finished (true) or 100 ms have passed (false): the run
 * ends as its last worker does, not at the next tick of the progress line (half a tick late on
 * average, 50 ms of a 20 s run). */
static bool corpusrun_wait(struct corpusrun_shared *sh, int started)
{
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_nsec += 100 * 1000 * 1000;
	if (until.tv_nsec >= 1000 * 1000 * 1000)
		until.tv_sec++, until.tv_nsec -= 1000 * 1000 * 1000;
	pthread_mutex_lock(&sh->lock);
	int rc = 0;
	while (sh->finished < started && rc == 0)
		rc = pthread_cond_timedwait(&sh->done, &sh->lock, &until);
	bool all = sh->finished >= started;
	pthread_mutex_unlock(&sh->lock);
	return all;
}

/* Lines of a file of LINES lines that fall in shard K/N. */
static uint64_t corpusrun_shard_lines(long long lines, int k, int n)
{
	return lines < k ? 0 : (uint64_t)(lines - k) / (uint64_t)n + 1;
}

/* A new aggregate of what the workers W[count] hold now (NULL on OOM). */
static struct aggregate *corpusrun_snapshot(struct corpusrun_worker *w, int count, const struct corpusrun_opts *o)
{
	struct err e = {{0}};
	struct aggregate *s = aggregate_new(&w[0].agg->model, o->pca_layer, o->pca_head, &e);
	for (int i = 0; s && i < count; i++) {
		pthread_mutex_lock(&w[i].lock);
		int rc = aggregate_merge(s, w[i].agg, &e);
		pthread_mutex_unlock(&w[i].lock);
		if (rc < 0) {
			aggregate_free(s);
			s = NULL;
		}
	}
	return s;
}

static void corpusrun_draw(FILE *f, const struct corpusrun_shared *sh, uint64_t total, double t0)
{
	char line[160];
	progress_format(line, sizeof line, __atomic_load_n(&sh->lines_done, __ATOMIC_RELAXED), total,
			progress_now() - t0, 79, "lines");
	fprintf(f, "\r%s\033[K", line);
	fflush(f);
}

int corpusrun(const struct model *m, const struct corpusrun_opts *o, struct aggregate **out, bool *cancelled,
	      struct err *e)
{
	*out = NULL;
	*cancelled = false;
	int count = strcmp(o->path, "-") ? (o->workers > 0 ? o->workers : 1) : 1;
	struct corpusrun_shared sh = {.m = m, .o = o};
	pthread_mutex_init(&sh.lock, NULL);
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC); /* corpusrun_wait's deadline */
	pthread_cond_init(&sh.done, &attr);
	pthread_condattr_destroy(&attr);
	struct corpusrun_worker *w = calloc((size_t)count, sizeof *w);
	struct agg_model am;
	corpusrun_agg_model(m, &am);
	int rc = w ? 0 : err_set(e, "out of memory");
	for (int i = 0; i < count && rc == 0; i++) {
		w[i] = (struct corpusrun_worker){.sh = &sh, .index = i, .count = count};
		pthread_mutex_init(&w[i].lock, NULL);
		w[i].agg = aggregate_new(&am, o->pca_layer, o->pca_head, e);
		if (!w[i].agg)
			rc = -1;
	}
	if (rc == 0) {
		long long lines = strcmp(o->path, "-") ? corpus_count_lines(o->path) : 0;
		uint64_t total = lines > 0 ? corpusrun_shard_lines(lines, o->shard_k, o->shard_n) : 0;
		int blas = openblas_get_num_threads();
		if (count > 1)
			openblas_set_num_threads(1);
		pthread_t *tid = calloc((size_t)count, sizeof *tid);
		int started = 0;
		double t0 = progress_now();
		for (; tid && started < count; started++)
			if (pthread_create(&tid[started], NULL, corpusrun_work, &w[started]))
				break;
		if (started < count) { /* no thread for some: stop those that run, report */
			__atomic_store_n(&sh.stop, 1, __ATOMIC_RELEASE);
			err_set(&sh.err, "cannot start a worker thread");
		}
		for (int tick = 1; started > 0; tick++) {
			if (o->progress)
				corpusrun_draw(o->progress, &sh, total, t0);
			if (o->report)
				o->report(o->report_ctx, __atomic_load_n(&sh.lines_done, __ATOMIC_RELAXED), total,
					  progress_now() - t0, tick % 10 == 0 ? corpusrun_snapshot(w, started, o) : NULL);
			if (corpusrun_wait(&sh, started))
				break;
		}
		for (int i = 0; i < started; i++)
			pthread_join(tid[i], NULL);
		free(tid);
		if (count > 1)
			openblas_set_num_threads(blas);
		if (o->progress) {
			corpusrun_draw(o->progress, &sh, total, t0);
			fputs("\r\033[K", o->progress);
			fflush(o->progress);
		}
		if (sh.stop) {
			*e = sh.err;
			rc = -1;
		}
	}
	for (int i = 1; i < count && rc == 0 && w; i++)
		rc = aggregate_merge(w[0].agg, w[i].agg, e);
	if (rc == 0) {
		*cancelled = o->cancel && *o->cancel;
		rc = aggregate_add_source(w[0].agg, o->path, o->shard_k, o->shard_n, w[0].agg->c.texts, *cancelled, e);
	}
	if (rc == 0) {
		*out = w[0].agg;
		w[0].agg = NULL;
	}
	for (int i = 0; w && i < count; i++) {
		aggregate_free(w[i].agg);
		pthread_mutex_destroy(&w[i].lock);
	}
	free(w);
	pthread_cond_destroy(&sh.done);
	pthread_mutex_destroy(&sh.lock);
	return rc;
}
