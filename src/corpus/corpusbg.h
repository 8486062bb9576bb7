/* corpusbg.h -- a corpus run in the background, for the explorer: it hands over a snapshot of the
 * aggregate about once a second and the progress (rate, time left), can be stopped keeping what
 * it did, and hands over the final aggregate when it ends. */
#ifndef ATTNSCOPE_CORPUSBG_H
#define ATTNSCOPE_CORPUSBG_H

#include <stdbool.h>

#include "corpus/corpusrun.h"

struct corpusbg;

/* Start running M over the corpus O describes (O's report and cancel are replaced by the
 * corpusbg's own; its strings must outlive the run). WAKE_FD (-1: none) gets a byte whenever
 * there is news. -1 when the thread cannot start. */
int corpusbg_start(const struct model *m, const struct corpusrun_opts *o, int wake_fd, struct corpusbg **out,
		   struct err *e);
/* The newest aggregate since the last call, or NULL (the caller owns it). */
struct aggregate *corpusbg_take(struct corpusbg *b);
/* The progress line, at most WIDTH columns, into BUF; returns whether the run is still going. */
bool corpusbg_progress(struct corpusbg *b, char *buf, size_t n, int width);
/* Ask the run to stop; it keeps the texts done. */
void corpusbg_stop(struct corpusbg *b);
/* Once it has ended: 0 (with *CANCELLED), or -1 with why the run failed (a bad line without
 * --keep-going, an unreadable file). */
int corpusbg_result(struct corpusbg *b, bool *cancelled, struct err *e);
/* Stop the run and wait for it to end (its final aggregate is then there to take). */
void corpusbg_finish(struct corpusbg *b);
/* Stop the run, wait for it and free everything. */
void corpusbg_free(struct corpusbg *b);

#endif
