/* rollout.h -- attention rollout (Abnar & Zuidema, 2020): how much each token's final
 * representation draws on each input token, through all layers.
 *
 * Per layer the heads are averaged, the residual connection is modelled as 0.5·A + 0.5·I, each row
 * is renormalised to sum to 1, and the layers are multiplied through: R_0 = Â_0, R_l = Â_l · R_(l−1).
 * Row i of R_l says where the information at position i after layer l came from. With learned
 * attention sinks (gpt-oss) a row of A sums to less than 1: the renormalisation drops the sinks' share
 * (the view says how much). */
#ifndef ATTNSCOPE_ROLLOUT_H
#define ATTNSCOPE_ROLLOUT_H

#include "base/err.h"
#include "trace/trace.h"

/* OUT[n_layers][n][n]: R_l for every layer l. -1 on OOM. */
int rollout_compute(const struct trace *t, float *out, struct err *e);

#endif
