/* runner.h -- runs the model on a worker thread so typing never waits for it.
 *
 * The UI submits the text after every edit. An isolated edit runs at once; edits that come
 * faster than the debounce interval (typing fast, a paste) wait until the text has been still for
 * that interval, so a burst costs one run, not one per character. A submit while a run is going
 * cancels it (through model_run's cancel flag) and a result that is not for the latest text is thrown away. When a result is
 * ready, one byte is written to the wake file descriptor so the UI's poll() returns. */
#ifndef ATTNSCOPE_RUNNER_H
#define ATTNSCOPE_RUNNER_H

#include <stdbool.h>

#include "base/err.h"
#include "engine/ablate.h"
#include "trace/trace.h"

struct runner;

/* What the runner runs, the explorer's source of traces: the model (ui_run), or in tests a
 * synthetic generator. RUN has model_run's contract and is called on the worker thread. */
struct ui_source {
	const char *name;            /* shown in the status bar */
	bool supports_pairs;         /* offer the second input line */
	void *ctx;
	int (*run)(void *ctx, const char *text, const char *text_b, const volatile int *cancel,
		   struct trace **out, struct err *e);
	bool target_line;            /* offer the second input line as an encoder-decoder's target: RUN's TEXT_B is
	                              * the decoder's text (NULL: none, the decoder start token alone) */
	/* Optional, called on the UI thread: the runs from the next request on keep each head's value norms
	 * (trace->vnorm, for the weights key Y) when ON, or skip their products. NULL: the source's traces
	 * carry them or not as they are made (a synthetic trace always does). */
	void (*keep_value_norms)(void *ctx, bool on);
};

/* How a runner reruns CLEAN (a result of its source) with the heads of A ablated: model_run_ablated's
 * contract, called on the worker thread. */
typedef int (*runner_ablate_fn)(void *ctx, const struct trace *clean, const struct ablation *a,
				const volatile int *cancel, struct trace **out, struct err *e);

struct runner_stats {
	unsigned submitted;   /* runner_submit calls */
	unsigned started;     /* runs begun */
	unsigned delivered;   /* results handed to runner_take */
	unsigned discarded;   /* runs that finished (or were cancelled) after a newer submit */
};

/* Start the worker. SRC must outlive the runner. WAKE_FD < 0: no wake-ups (tests poll). */
struct runner *runner_new(const struct ui_source *src, int debounce_ms, int wake_fd);
/* Cancel any run, join the worker, free what it holds. */
void runner_free(struct runner *r);
/* Ask for a run of TEXT (and TEXT_B, may be NULL); returns the request's generation number. */
unsigned runner_submit(struct runner *r, const char *text, const char *text_b);
/* The result of the latest request, when it is ready: true with *OUT set (caller frees) or, when
 * the run failed, *OUT NULL and E filled. False when nothing new. */
bool runner_take(struct runner *r, struct trace **out, struct err *e);
/* Let the runner ablate with FN (on CTX); without it (a synthetic source) marks are never run. */
void runner_set_ablate_fn(struct runner *r, runner_ablate_fn fn, void *ctx);
/* The heads to ablate (copied; NULL or none marked: none): every run from the next request on is followed by
 * the ablated rerun of its result (runner_set_ablate_fn), delivered with it by runner_take_pair. */
void runner_set_ablation(struct runner *r, const struct ablation *a);
/* Ask for the ablated rerun alone of CLEAN, a trace runner_take_pair gave (the text unchanged, the marks
 * changed). CLEAN must stay alive until a newer result is taken or the runner is freed. */
unsigned runner_submit_ablation(struct runner *r, const struct trace *clean);
/* runner_take with the ablated rerun: *ABLATED (caller frees) is NULL when no head is marked or the rerun
 * failed (E then says why, with *OUT set). *ABLATION_ONLY: the result of runner_submit_ablation (*OUT
 * NULL: the clean trace is the one it was given). */
bool runner_take_pair(struct runner *r, struct trace **out, struct trace **ablated, bool *ablation_only,
		      struct err *e);
/* A request is waiting or running, or the result of a text's run waits to be taken. */
bool runner_busy(struct runner *r);
struct runner_stats runner_stats(struct runner *r);

#endif
