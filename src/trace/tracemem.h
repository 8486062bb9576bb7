/* tracemem.h -- a freed trace's large arrays, kept for the next trace of the process.
 *
 * The explorer makes a trace on every keystroke and frees the one before. Fresh memory of that size
 * comes from new mappings, and its first touch faults page by page: on a 2-core Intel Xeon VM the
 * scores stage of a 512-token bert-base forward, which writes its 151 MB of attention, took 59-77 ms
 * on fresh memory and 31 on a kept block. tracemem_calloc clears a kept block (as calloc would), so
 * such an array starts at zero; tracemem_alloc does not, for an array its owner writes whole before
 * anything reads it (a forward pass's: zeroing the 227 MB of a 512-token bert-base trace first cost
 * its forward 20 ms). */
#ifndef ATTNSCOPE_TRACEMEM_H
#define ATTNSCOPE_TRACEMEM_H

#include <stddef.h>

#define TRACEMEM_MIN (4u << 20)       /* smaller arrays are malloc's: it keeps those itself */
#define TRACEMEM_SLOTS 8              /* blocks kept at most */
#define TRACEMEM_MAX ((size_t)1 << 30) /* bytes kept at most */

/* BYTES of zeros: a kept block of BYTES to twice that (the smallest such), else calloc's. NULL when
 * out of memory. */
void *tracemem_calloc(size_t bytes);

/* The same block, its contents undefined: what an earlier trace left in it, or malloc's. With
 * ATTNSCOPE_TRACE_POISON set in the environment (not empty, not 0) every byte is 0xff, each float a NaN,
 * so that an element its owner failed to write shows in what is read from it (the tests set it). */
void *tracemem_alloc(size_t bytes);

/* Give back P, from tracemem_calloc(BYTES) or tracemem_alloc(BYTES): kept when it is large and there is room, else freed. */
void tracemem_free(void *p, size_t bytes);

/* Free every kept block; the bytes kept. */
void tracemem_drop(void);
size_t tracemem_kept(void);

/* Keep at most BYTES from now on (tests: a small budget; 0 = TRACEMEM_MAX). */
void tracemem_limit(size_t bytes);

#endif
