/* abljob.h -- the head finder's ablation-effect column computed on a thread of its own.
 *
 * Each head ablated alone (engine/ablate.h, ablation_effects_metric by the change of mean surprisal): one
 * rerun per head, 144 on a 12 x 12 model, too long for the keystroke. The job runs them in the
 * background under the model's lock (the lock the runners take), letting a runner that waits for it in
 * between two heads, counts the heads done, and stops at the next layer when told (Esc, a new text). The
 * explorer copies the values done so far into what the view shows. */
#ifndef ATTNSCOPE_ABLJOB_H
#define ATTNSCOPE_ABLJOB_H

#include <pthread.h>
#include <stdbool.h>

#include "engine/ablate.h"

struct abljob;

/* Start computing the column of M on CLEAN (borrowed: it must outlive the job, abljob_free first) in MODE.
 * LOCK serialises model runs; *WAITING (under no lock, read atomically) is non-zero while a runner waits
 * for it. WAKE_FD (>= 0) gets a byte after each head. NULL with why. */
struct abljob *abljob_start(const struct model *m, const struct trace *clean, enum ablate_mode mode,
			    pthread_mutex_t *lock, const volatile int *waiting, int wake_fd, struct err *e);
/* Copy the values done so far into EFFECT [n_layers][n_heads] (NaN for the rest); *DONE, *TOTAL heads.
 * True while the job is still running. */
bool abljob_poll(struct abljob *j, double *effect, int *done, int *total);
/* Why it ended without every head ("" when it did not, or while running). */
const char *abljob_error(struct abljob *j);
/* Stop (at the next layer of the current head), wait for the thread, free. NULL is fine. */
void abljob_free(struct abljob *j);

#endif
