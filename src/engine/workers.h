/* workers.h -- the engine's persistent helper threads: one call hands items to the caller and to
 * threads started once and kept, instead of starting threads for every linear layer and every
 * layer's heads (a forward pass of a 12-layer model hands out work a hundred times). Private to
 * the engine. */
#ifndef ATTNSCOPE_WORKERS_H
#define ATTNSCOPE_WORKERS_H

#define WORKERS_MAX 16

/* Run FN(CTX, item, worker) for items 0 .. N-1 on THREADS threads (at most WORKERS_MAX): the caller
 * is worker 0, helpers are 1 .. THREADS-1, each item runs once, and the call returns when all have
 * run. While another call is using the helpers (or from inside an item), the caller runs every item
 * itself. */
void workers_run(int threads, int n, void (*fn)(void *ctx, int item, int worker), void *ctx);

#endif
