/* fuzz-common.h -- what the libFuzzer targets in fuzz/ share: a private scratch folder, splitting
 * one input into several files, and the checks every error message must pass. */
#ifndef ATTNSCOPE_FUZZ_COMMON_H
#define ATTNSCOPE_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* Byte that separates the files packed into one input. 0xFF never occurs in UTF-8 text or JSON,
 * so real files never contain it; the fuzzer still mutates invalid UTF-8 through 0xC0-0xFE. */
#define FUZZ_SEP 0xFF
#define FUZZ_MAX_PARTS 6

struct fuzz_part {
	const uint8_t *data; /* points into the input */
	size_t len;
};

/* Split DATA at FUZZ_SEP into at most FUZZ_MAX_PARTS parts (the last one keeps any further
 * separators). Returns the number of parts (>= 1). */
int fuzz_split(const uint8_t *data, size_t size, struct fuzz_part *parts);

/* A scratch folder made once per process (under /dev/shm when possible), removed at exit. */
const char *fuzz_dir(void);
/* Write LEN bytes to fuzz_dir()/NAME; remove fuzz_dir()/NAME. Abort on I/O errors. */
void fuzz_write(const char *name, const void *data, size_t len);
void fuzz_remove(const char *name);
/* Make fuzz_dir()/NAME a symbolic link to TARGET (replacing what was there). */
void fuzz_link(const char *name, const char *target);

/* The source tree (ATTNSCOPE_DATADIR, else the configured source directory); also exported as
 * ATTNSCOPE_DATADIR so that family descriptions and themes are found. */
const char *fuzz_datadir(void);

/* Every failure must leave a message: non-empty, one line of UTF-8, no control characters. Aborts (a
 * crash for libFuzzer) with WHAT and the message otherwise. */
void fuzz_check_message(const char *what, const struct err *e);

/* Abort with a message: an invariant the fuzzer broke. */
void fuzz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
