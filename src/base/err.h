/* err.h -- error reporting for the engine: functions return 0 or -1 and fill a message.
 * The engine never prints and never exits; the caller decides what to do with the message. */
#ifndef ATTNSCOPE_ERR_H
#define ATTNSCOPE_ERR_H

#include <stddef.h>

#define ERR_MSG_MAX 512

struct err {
	char msg[ERR_MSG_MAX]; /* one line of UTF-8 without control characters (quoted file contents
	                        * have them replaced by "?"); "" when no error */
};

/* Set the message (printf-style). Always returns -1 so callers can write `return err_set(...)`. */
int err_set(struct err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prefix the existing message with "PREFIX: " (e.g. the file name). Returns -1. */
int err_prefix(struct err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
