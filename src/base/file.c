/* file.c -- reading a whole file with a size limit (see file.h). */
#include "base/file.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A regular file of at most LIMIT bytes, read in one go into a buffer of its size. */
static int file_read_regular(FILE *f, const char *path, size_t limit, char **out, size_t *len, struct err *e)
{
	struct stat st;
	if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode))
		return err_set(e, "%s: not a regular file", path);
	if ((unsigned long long)st.st_size > limit)
		return err_set(e, "%s: file too large (%lld bytes, limit %zu)", path, (long long)st.st_size, limit);
	size_t n = (size_t)st.st_size;
	char *buf = malloc(n + 1);
	if (!buf)
		return err_set(e, "%s: out of memory", path);
	size_t got = fread(buf, 1, n, f);
	if (ferror(f) || got != n) {
		free(buf);
		return err_set(e, "%s: read error", path);
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

/* Anything readable, in chunks until its end; refused as soon as more than LIMIT bytes came
 * (/dev/zero must not eat all memory). */
static int file_read_stream(FILE *f, const char *path, size_t limit, char **out, size_t *len, struct err *e)
{
	enum { CHUNK = 4096 };
	char *buf = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (n + CHUNK + 1 > cap) {
			cap = cap ? cap * 2 : 2 * CHUNK;
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				return err_set(e, "%s: out of memory", path);
			}
			buf = nb;
		}
		size_t got = fread(buf + n, 1, CHUNK, f);
		n += got;
		if (n > limit) {
			free(buf);
			return err_set(e, "%s: file too large (limit %zu bytes)", path, limit);
		}
		if (got < CHUNK)
			break;
	}
	if (ferror(f)) {
		free(buf);
		return err_set(e, "%s: read error", path);
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

int file_read_all(const char *path, size_t limit, unsigned flags, char **buf, size_t *len, struct err *e)
{
	*buf = NULL;
	*len = 0;
	bool any = flags & FILE_READ_ANY;
	int fd = open(path, O_RDONLY | O_CLOEXEC | (any ? 0 : O_NONBLOCK)); /* a FIFO must not block the open */
	FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
	if (!f) {
		int errnum = errno;
		if (fd >= 0)
			close(fd);
		err_set(e, "%s: %s", path, strerror(errnum));
		errno = errnum;
		return -1;
	}
	int rc = any ? file_read_stream(f, path, limit, buf, len, e) : file_read_regular(f, path, limit, buf, len, e);
	fclose(f);
	if (rc == 0 && (flags & FILE_READ_TEXT) && strlen(*buf) != *len) {
		free(*buf);
		*buf = NULL;
		*len = 0;
		return err_set(e, "%s: the file contains a NUL byte", path);
	}
	return rc;
}
