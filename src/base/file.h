/* file.h -- the one whole-file read behind every loader (config.json and shard indexes, the
 * tokenizer's files, themes, the user config), with the checks an untrusted path needs: a size
 * limit checked before or while reading, no hanging on a FIFO where only a regular file makes
 * sense, and for text formats no NUL byte (a C string would silently stop there). */
#ifndef ATTNSCOPE_FILE_H
#define ATTNSCOPE_FILE_H

#include <stddef.h>

#include "base/err.h"

/* Flags of file_read_all. */
enum file_read_flag {
	/* Also read what is not a regular file (a pipe from `--theme <(...)`, /dev/stdin): opened
	 * blocking and read to its end, refused once past the limit ("file too large (limit N bytes)").
	 * Without it only a regular file is read ("not a regular file" otherwise), opened without
	 * blocking (a FIFO must not hang the open) and refused by its size before anything is read
	 * ("file too large (S bytes, limit N)"). */
	FILE_READ_ANY = 1,
	/* Refuse a NUL byte ("the file contains a NUL byte"): the text is used as a C string. */
	FILE_READ_TEXT = 2,
};

/* Read all of PATH (at most LIMIT bytes) into *BUF (malloc'd, NUL-terminated; the caller frees
 * it) and its length into *LEN. FLAGS are enum file_read_flag bits. On failure *BUF is NULL and
 * E holds "PATH: problem": the strerror of a failed open (errno then says why, e.g. ENOENT),
 * "not a regular file", "file too large ...", "out of memory", "read error" or the NUL byte. */
int file_read_all(const char *path, size_t limit, unsigned flags, char **buf, size_t *len, struct err *e);

#endif
