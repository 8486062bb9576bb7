/* corpusrun.h -- running a model over a corpus file into an aggregate.
 *
 * The texts of the shard are spread over worker threads (each running the model on one text at a
 * time with a single-threaded BLAS, which at corpus sizes of ~25 tokens beats one multi-threaded
 * forward). Worker w of W takes the shard's texts w, w + W, w + 2W, … and keeps its own aggregate;
 * the workers' aggregates are merged in order at the end, so a run is deterministic for a given W.
 * Nothing of a text is kept once it is added but what the token sample takes (bounded by its size),
 * so memory stays flat in the number of texts. */
#ifndef ATTNSCOPE_CORPUSRUN_H
#define ATTNSCOPE_CORPUSRUN_H

#include <stdbool.h>
#include <stdio.h>

#include "corpus/aggregate.h"
#include "base/err.h"
#include "engine/model.h"

/* Texts a worker runs through the model together (model_forward_batch): their rows share every
 * matrix product, so the weights are read once per batch rather than once per text; a batch also
 * ends at CORPUSRUN_BATCH_ROWS tokens. A text's float32 results can differ in the last bits with
 * the texts batched with it (the BLAS kernels' rounding depends on the matrix sizes), so only a
 * batch of 1 makes shards merge to one run's aggregate bit for bit; larger batches agree to
 * float32 rounding. */
#define CORPUSRUN_BATCH 32
#define CORPUSRUN_BATCH_MAX 64
#define CORPUSRUN_BATCH_ROWS 192

struct corpusrun_opts {
	const char *path;       /* the corpus file, "-" for standard input (then one worker) */
	int shard_k, shard_n;   /* process the lines i (0-based) with i mod N = K − 1; 1/1 = all */
	int workers;            /* threads, at least 1 */
	int pca_layer, pca_head;/* the head whose queries and keys the token sample keeps (aggsample.h) */
	int batch;              /* texts per forward pass, 1 .. CORPUSRUN_BATCH_MAX; 0 = CORPUSRUN_BATCH */
	bool keep_going;        /* report bad lines and go on; otherwise the first one stops the run */
	FILE *progress;         /* where to draw the progress line (a terminal), or NULL for none */
	FILE *messages;         /* where bad lines are reported ("PATH: line N: why"), or NULL */
	const volatile int *cancel; /* when it becomes non-zero the run stops, keeping what is done */
	/* Called about every 100 ms from corpusrun's own thread with the lines done out of TOTAL (0:
	 * unknown) after ELAPSED seconds; about once a second SNAPSHOT is a new aggregate of the texts
	 * done so far (the callee owns it), else NULL. May be NULL. */
	void (*report)(void *ctx, uint64_t done, uint64_t total, double elapsed, struct aggregate *snapshot);
	void *report_ctx;
};

/* Run M over the corpus into a new aggregate *OUT. Returns 0 (with *CANCELLED telling whether the
 * run was stopped through CANCEL: then *OUT covers the texts finished before), or -1 with E set
 * when the file cannot be read, or a line is bad and KEEP_GOING is false ("PATH: line N: why"). */
int corpusrun(const struct model *m, const struct corpusrun_opts *o, struct aggregate **out, bool *cancelled,
	      struct err *e);

/* The aggregate's model description for M (name as the user gave it). */
void corpusrun_agg_model(const struct model *m, struct agg_model *out);

#endif
