/* corpusrun.c -- the corpus run: reader, workers, progress (see corpusrun.h). */
#include "config.h"

#include "corpusrun.h"

#include <cblas.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "corpus.h"
#include "progress.h"

struct corpusrun_shared {
	const struct model *m;
	const struct corpusrun_opts *o;
	pthread_mutex_t lock;
	uint64_t lines_done;    /* lines of the shard handled by every worker (atomic) */
	int finished;           /* workers done (atomic) */
	int stop;               /* a worker hit a fatal error (atomic) */
	uint64_t err_line;      /* the lowest line of a fatal error, under lock */
	struct err err;
};

struct corpusrun_worker {
	struct corpusrun_shared *sh;
	int index, count;
	struct aggregate *agg;
	int failed;             /* -1 when the worker itself could not go on (OOM, read error) */
};

static double corpusrun_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

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
	w->agg->c.failed++;
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

static void *corpusrun_work(void *arg)
{
	struct corpusrun_worker *w = arg;
	struct corpusrun_shared *sh = w->sh;
	const struct corpusrun_opts *o = sh->o;
	struct corpus_reader *r = NULL;
	struct err e = {{0}};
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
		if (got == 0)
			break;
		if (got < 0) {
			corpusrun_bad(w, i + 1, &e);
			w->failed = -1;
			break;
		}
		if (!ours)
			continue;
		w->agg->c.lines++;
		if (it.kind == CORPUS_EMPTY) {
			w->agg->c.empty++;
		} else if (it.kind == CORPUS_BAD) {
			corpusrun_bad(w, it.line, &e);
		} else {
			struct trace *t = NULL;
			if (model_run(sh->m, it.text, it.text_b, o->cancel, &t, &e) < 0) {
				if (o->cancel && *o->cancel) {
					w->agg->c.lines--; /* the interrupted text is not in the aggregate */
					break;
				}
				err_prefix(&e, "line %llu", (unsigned long long)it.line);
				corpusrun_bad(w, it.line, &e);
			} else if (aggregate_add(w->agg, t, it.line - 1, it.text, it.text_b, &e) < 0) {
				trace_free(t);
				w->failed = -1;
				corpusrun_bad(w, it.line, &e);
				break;
			} else {
				trace_free(t);
			}
		}
		__atomic_add_fetch(&sh->lines_done, 1, __ATOMIC_RELAXED);
	}
done:
	if (w->failed < 0 && e.msg[0]) {
		pthread_mutex_lock(&sh->lock);
		if (!sh->stop || sh->err.msg[0] == 0)
			sh->err = e;
		__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&sh->lock);
	}
	corpus_close(r);
	__atomic_add_fetch(&sh->finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Lines of a file of LINES lines that fall in shard K/N. */
static uint64_t corpusrun_shard_lines(long long lines, int k, int n)
{
	return lines < k ? 0 : (uint64_t)(lines - k) / (uint64_t)n + 1;
}

static void corpusrun_draw(FILE *f, const struct corpusrun_shared *sh, uint64_t total, double t0)
{
	char line[160];
	progress_format(line, sizeof line, __atomic_load_n(&sh->lines_done, __ATOMIC_RELAXED), total,
			corpusrun_now() - t0, 79, "lines");
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
	struct corpusrun_worker *w = calloc((size_t)count, sizeof *w);
	struct agg_model am;
	corpusrun_agg_model(m, &am);
	int rc = w ? 0 : err_set(e, "out of memory");
	for (int i = 0; i < count && rc == 0; i++) {
		w[i] = (struct corpusrun_worker){.sh = &sh, .index = i, .count = count};
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
		double t0 = corpusrun_now();
		for (; tid && started < count; started++)
			if (pthread_create(&tid[started], NULL, corpusrun_work, &w[started]))
				break;
		if (started < count) { /* no thread for some: stop those that run, report */
			__atomic_store_n(&sh.stop, 1, __ATOMIC_RELEASE);
			err_set(&sh.err, "cannot start a worker thread");
		}
		while (__atomic_load_n(&sh.finished, __ATOMIC_ACQUIRE) < started) {
			if (o->progress)
				corpusrun_draw(o->progress, &sh, total, t0);
			nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
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
	for (int i = 0; w && i < count; i++)
		aggregate_free(w[i].agg);
	free(w);
	pthread_mutex_destroy(&sh.lock);
	return rc;
}
