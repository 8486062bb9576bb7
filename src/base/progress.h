/* progress.h -- a progress line for long runs: done / total, a bar, the rate and the time left. */
#ifndef ATTNSCOPE_PROGRESS_H
#define ATTNSCOPE_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

/* Write into BUF[n] the progress of DONE out of TOTAL units (TOTAL 0 = unknown: no bar, no ETA)
 * after ELAPSED seconds, at most WIDTH columns, e.g.
 *   "412/1000 texts  41% [########............]  35.2 texts/s  ETA 0:17"
 * UNIT names what is counted ("texts"). */
void progress_format(char *buf, size_t n, uint64_t done, uint64_t total, double elapsed, int width, const char *unit);
/* Seconds on the monotonic clock, for elapsed times. */
double progress_now(void);
/* "1:05:09", "0:17": H:MM:SS or M:SS of SECONDS. */
void progress_duration(char *buf, size_t n, double seconds);

#endif
