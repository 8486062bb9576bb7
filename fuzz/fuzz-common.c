/* fuzz-common.c -- scratch folder, input splitting and message checks for the fuzz targets. */
#include "fuzz-common.h"
#include "base/datadir.h"
#include "base/utf8.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void fuzz_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("fuzz: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

int fuzz_split(const uint8_t *data, size_t size, struct fuzz_part *parts)
{
	int n = 0;
	size_t start = 0;
	for (size_t i = 0; i < size && n < FUZZ_MAX_PARTS - 1; i++) {
		if (data[i] == FUZZ_SEP) {
			parts[n++] = (struct fuzz_part){data + start, i - start};
			start = i + 1;
		}
	}
	parts[n++] = (struct fuzz_part){data + start, size - start};
	return n;
}

static char scratch[256];

static void fuzz_cleanup(void)
{
	DIR *d = opendir(scratch);
	if (d) {
		struct dirent *de;
		char path[512];
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
				snprintf(path, sizeof path, "%s/%s", scratch, de->d_name);
				unlink(path);
			}
		closedir(d);
	}
	rmdir(scratch);
}

const char *fuzz_dir(void)
{
	if (scratch[0])
		return scratch;
	struct stat sb;
	const char *tmp = getenv("TMPDIR");
	const char *base = stat("/dev/shm", &sb) == 0 && access("/dev/shm", W_OK) == 0 ? "/dev/shm"
			   : tmp && *tmp ? tmp : "/tmp";
	snprintf(scratch, sizeof scratch, "%s/attnscope-fuzz-XXXXXX", base);
	if (!mkdtemp(scratch))
		fuzz_fail("cannot make a scratch folder in %s", base);
	atexit(fuzz_cleanup);
	return scratch;
}

void fuzz_write(const char *name, const void *data, size_t len)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
	unlink(path); /* it may be a link into the source tree: never write through it */
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0)
		fuzz_fail("cannot write %s", path);
}

void fuzz_remove(const char *name)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
	unlink(path);
}

void fuzz_link(const char *name, const char *target)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
	unlink(path);
	if (symlink(target, path) < 0)
		fuzz_fail("cannot link %s to %s", path, target);
}

const char *fuzz_datadir(void)
{
	/* The fuzzers read the source tree's data, installed or not: the search rule is datadir_path's. */
	const char *d = getenv("ATTNSCOPE_DATADIR");
	if (!d || !*d)
		setenv("ATTNSCOPE_DATADIR", SRCDIR, 1);
	return datadir_path();
}

void fuzz_check_message(const char *what, const struct err *e)
{
	size_t len = strnlen(e->msg, sizeof e->msg);
	if (len == 0)
		fuzz_fail("%s failed without a message", what);
	if (len == sizeof e->msg)
		fuzz_fail("%s: message not terminated", what);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)e->msg[i];
		if (c < 0x20 || c == 0x7f)
			fuzz_fail("%s: control character 0x%02x at %zu in message: %s", what, c, i, e->msg);
	}
	if (utf8_check(e->msg, len) != len)
		fuzz_fail("%s: message is not UTF-8: %s", what, e->msg);
}
