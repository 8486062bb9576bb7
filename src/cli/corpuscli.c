/* corpuscli.c -- corpus mode on the command line (see corpuscli.h). */
#include "config.h"

#include "cli/corpuscli.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corpus/aggfile.h"
#include "corpus/aggregate.h"
#include "corpus/corpusrun.h"
#include "cli/dump.h"
#include "engine/model.h"
#include "tui/print.h"

static volatile int corpuscli_cancel;

static void corpuscli_on_sigint(int sig)
{
	(void)sig;
	corpuscli_cancel = 1;
	signal(SIGINT, SIG_DFL); /* a second Ctrl-C ends the program at once */
}

int corpuscli_parse_shard(const char *s, int *k, int *n)
{
	char *end;
	long a = strtol(s, &end, 10);
	if (end == s || *end != '/')
		return -1;
	const char *p = end + 1;
	long b = strtol(p, &end, 10);
	if (end == p || *end || b < 1 || b > 1000000 || a < 1 || a > b)
		return -1;
	*k = (int)a;
	*n = (int)b;
	return 0;
}

int corpuscli_parse_head(const char *s, int *layer, int *head)
{
	char *end;
	long a = strtol(s, &end, 10);
	if (end == s || *end != '.' || a < 0 || a > 1000000 || !(*s >= '0' && *s <= '9'))
		return -1;
	const char *p = end + 1;
	long b = strtol(p, &end, 10);
	if (end == p || *end || b < 0 || b > 1000000 || !(*p >= '0' && *p <= '9'))
		return -1;
	*layer = (int)a;
	*head = (int)b;
	return 0;
}

/* The run's options from the command line's (no progress, messages or cancel flag yet). */
static void corpuscli_run_opts(const struct corpuscli_opts *o, struct corpusrun_opts *ro)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	*ro = (struct corpusrun_opts){
		.path = o->corpus,
		.shard_k = o->shard_k,
		.shard_n = o->shard_n,
		.workers = o->workers > 0 ? o->workers : cores > 0 ? (int)cores : 1,
		.keep_going = o->keep_going,
		.pca_layer = o->pca_layer,
		.pca_head = o->pca_head,
		.batch = o->batch,
	};
}

/* What the run met, on standard error. */
static void corpuscli_report(const struct aggregate *a, const char *path, bool cancelled)
{
	const struct agg_counts *c = &a->c;
	if (c->empty)
		fprintf(stderr, "attnscope: %s: %llu empty line%s skipped\n", path, (unsigned long long)c->empty,
			c->empty == 1 ? "" : "s");
	if (c->failed)
		fprintf(stderr, "attnscope: %s: %llu line%s skipped with errors\n", path, (unsigned long long)c->failed,
			c->failed == 1 ? "" : "s");
	if (c->truncated)
		fprintf(stderr, "attnscope: warning: %llu text%s truncated to the model's %d positions\n",
			(unsigned long long)c->truncated, c->truncated == 1 ? "" : "s", a->model.max_positions);
	if (cancelled)
		fprintf(stderr, "attnscope: interrupted: the aggregate covers the %llu texts done (%llu lines)\n",
			(unsigned long long)c->texts, (unsigned long long)c->lines);
}

static int corpuscli_write(const struct aggregate *a, const struct corpuscli_opts *o)
{
	struct err e = {{0}};
	if (o->save && aggfile_save(a, o->save, &e) < 0) {
		fprintf(stderr, "attnscope: %s\n", e.msg);
		return 1;
	}
	int rc = 0;
	if (o->print_view)
		rc = print_aggregate(a, o->print_view, o->ui, stdout, &e);
	else if (o->dump_format == DUMP_JSON)
		rc = aggfile_write(a, stdout, &e);
	else if (o->dump_format == DUMP_CSV)
		rc = aggfile_write_csv(a, stdout, &e);
	if (rc < 0) {
		fprintf(stderr, "attnscope: %s\n", e.msg);
		return 1;
	}
	return 0;
}

int corpuscli_run(const struct corpuscli_opts *o)
{
	struct err e = {{0}};
	struct aggregate *a = NULL;
	bool cancelled = false;
	if (o->load) {
		if (aggfile_load(o->load, &a, &e) < 0) {
			fprintf(stderr, "attnscope: %s\n", e.msg);
			return 1;
		}
	} else {
		struct model *m = NULL;
		if (model_open(o->model, &m, &e) < 0) {
			fprintf(stderr, "attnscope: %s\n", e.msg);
			return 1;
		}
		model_promote_weights_now(m); /* many forward passes on every core: packed copies first */
		struct corpusrun_opts ro;
		corpuscli_run_opts(o, &ro);
		ro.progress = isatty(STDERR_FILENO) ? stderr : NULL;
		ro.messages = stderr;
		ro.cancel = &corpuscli_cancel;
		struct sigaction sa = {.sa_handler = corpuscli_on_sigint}, old;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, &old);
		int rc = corpusrun(m, &ro, &a, &cancelled, &e);
		sigaction(SIGINT, &old, NULL);
		model_close(m);
		if (rc < 0) {
			fprintf(stderr, "attnscope: %s\n", e.msg);
			return 1;
		}
		corpuscli_report(a, o->corpus, cancelled);
	}
	int rc = corpuscli_write(a, o);
	aggregate_free(a);
	return rc ? rc : cancelled ? 130 : 0;
}

static int corpuscli_model_run(void *ctx, const char *text, const char *text_b, const volatile int *cancel,
				struct trace **out, struct err *e)
{
	return model_run(ctx, text, text_b, cancel, out, e);
}

/* The explorer's text source without a model (--load): an empty text gives an empty trace of the
 * aggregate's model (CTX, its struct agg_model), any other says why it cannot run. */
static int corpuscli_no_model(void *ctx, const char *text, const char *text_b, const volatile int *cancel,
			      struct trace **out, struct err *e)
{
	const struct agg_model *m = ctx;
	(void)text_b, (void)cancel;
	*out = NULL;
	if (text[0])
		return err_set(e, "no model loaded (--load): give -m MODEL --corpus FILE to run texts too");
	*out = trace_new(m->n_layers, m->n_heads, m->head_dim, m->hidden, 0);
	return *out ? 0 : err_set(e, "out of memory");
}

int corpuscli_explore(const struct corpuscli_opts *o)
{
	struct err e = {{0}};
	struct aggregate *a = NULL, *final = NULL;
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "attnscope: the explorer needs a terminal; corpus mode in scripts needs --print, "
				"--dump json|csv or --save FILE\n");
		return 2;
	}
	int rc;
	if (o->load) {
		if (aggfile_load(o->load, &a, &e) < 0) {
			fprintf(stderr, "attnscope: %s\n", e.msg);
			return 1;
		}
		struct agg_model shape = a->model;
		struct ui_source src = {.name = shape.name, .ctx = &shape, .run = corpuscli_no_model};
		rc = ui_run_corpus(&src, a, NULL, NULL, o->ui, &final, &e);
	} else {
		struct model *m = NULL;
		if (model_open(o->model, &m, &e) < 0) {
			fprintf(stderr, "attnscope: %s\n", e.msg);
			return 1;
		}
		model_promote_weights(m); /* the run and the texts typed: packed copies, made in the background */
		const struct model_info *info = model_get_info(m);
		struct ui_source src = {
			.name = info->name, .supports_pairs = info->supports_pairs, .ctx = m, .run = corpuscli_model_run};
		struct corpusrun_opts ro;
		corpuscli_run_opts(o, &ro);
		rc = ui_run_corpus(&src, NULL, m, &ro, o->ui, &final, &e);
		model_close(m);
	}
	if (rc < 0)
		fprintf(stderr, "attnscope: %s\n", e.msg);
	else if (final && o->corpus)
		corpuscli_report(final, o->corpus, final->n_src > 0 && final->src[0].partial);
	aggregate_free(final);
	return rc < 0 ? 1 : 0;
}

int corpuscli_merge(int argc, char **argv)
{
	static const struct option longopts[] = {{"output", required_argument, NULL, 'o'}, {NULL, 0, NULL, 0}};
	const char *out = NULL;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:", longopts, NULL)) != -1) {
		if (c != 'o') {
			fprintf(stderr, "Usage: attnscope merge [-o OUT] FILE...\n");
			return 2;
		}
		out = optarg;
	}
	if (optind >= argc) {
		fprintf(stderr, "attnscope: merge: no aggregate files (Usage: attnscope merge [-o OUT] FILE...)\n");
		return 2;
	}
	struct err e = {{0}};
	struct aggregate *all = NULL;
	for (int i = optind; i < argc; i++) {
		struct aggregate *a;
		if (aggfile_load(argv[i], &a, &e) < 0) {
			fprintf(stderr, "attnscope: merge: %s\n", e.msg);
			aggregate_free(all);
			return 1;
		}
		if (!all) {
			all = a;
			continue;
		}
		int rc = aggregate_merge(all, a, &e);
		aggregate_free(a);
		if (rc < 0) {
			fprintf(stderr, "attnscope: merge: %s: %s\n", argv[i], e.msg);
			aggregate_free(all);
			return 1;
		}
	}
	/* Say which shards of a split file are missing: the merge is still what it says it is. */
	for (int i = 0; i < all->n_src; i++) {
		const struct agg_source *s = &all->src[i];
		bool first = true;
		for (int j = 0; j < i && first; j++)
			first = strcmp(all->src[j].file, s->file) || all->src[j].shard_n != s->shard_n;
		if (!first || s->shard_n < 2)
			continue;
		int have = 0;
		for (int j = i; j < all->n_src; j++)
			have += !strcmp(all->src[j].file, s->file) && all->src[j].shard_n == s->shard_n;
		if (have < s->shard_n)
			fprintf(stderr, "attnscope: merge: warning: %d of the %d shards of %s are missing\n", s->shard_n - have,
				s->shard_n, s->file);
	}
	int rc = out ? aggfile_save(all, out, &e) : aggfile_write(all, stdout, &e);
	if (rc < 0)
		fprintf(stderr, "attnscope: merge: %s\n", e.msg);
	aggregate_free(all);
	return rc < 0 ? 1 : 0;
}
