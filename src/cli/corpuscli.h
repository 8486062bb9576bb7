/* corpuscli.h -- the command line's corpus mode: `--corpus FILE` / `--load FILE`, with `--save`,
 * `--print heads`, `--dump json|csv`, and the `attnscope merge` command. Prints its own messages. */
#ifndef ATTNSCOPE_CORPUSCLI_H
#define ATTNSCOPE_CORPUSCLI_H

#include <stdbool.h>

#include "tui/ui.h"

struct corpuscli_opts {
	const char *model;      /* for --corpus */
	const char *corpus;     /* --corpus FILE, or NULL */
	const char *load;       /* --load FILE, or NULL */
	const char *save;       /* --save FILE, or NULL */
	int shard_k, shard_n;   /* --shard K/N (1/1 without) */
	bool keep_going;
	int pca_layer, pca_head;/* --pca-head L.H: the token sample's head */
	int batch;              /* --batch N, 0 = the default */
	bool pca_given;
	int workers;            /* --threads, 0 = one per core */
	const char *print_view; /* --print VIEW, or NULL */
	int dump_format;        /* an enum dump_format, -1 for none */
	const struct ui_options *ui;
};

/* Parse "K/N" (1 <= K <= N <= 1000000); -1 when it is not. */
int corpuscli_parse_shard(const char *s, int *k, int *n);
/* Parse "L.H" (both 0 .. 1000000); -1 when it is not. */
int corpuscli_parse_head(const char *s, int *layer, int *head);
/* Run (or load) and write the aggregate. Returns the exit status: 0, 1 on a runtime error, 130
 * when interrupted (after writing what the partial aggregate covers). */
int corpuscli_run(const struct corpuscli_opts *o);
/* The explorer on the aggregate: --load's, or a --corpus run going on in the background (needs a
 * terminal). What the run met is reported on standard error after the explorer closes. Returns
 * the exit status. */
int corpuscli_explore(const struct corpuscli_opts *o);
/* `attnscope merge [-o OUT] FILE...` with ARGV[0] = "merge". Returns the exit status. */
int corpuscli_merge(int argc, char **argv);

#endif
