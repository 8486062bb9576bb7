/* jsoncap.c -- count the nodes a JSON text can make before handing it to jansson (see jsoncap.h). */
#include "base/jsoncap.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

size_t jsoncap_nodes(const char *s, size_t len)
{
	size_t n = 1;
	bool in_string = false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (in_string) {
			if (c == '\\')
				i++; /* the escaped character cannot end the string */
			else if (c == '"')
				in_string = false;
		} else if (c == '"') {
			in_string = true;
		} else if (c == ',' || c == ':' || c == '[' || c == '{') {
			n++;
		}
	}
	return n;
}

json_t *jsoncap_load_file(const char *path, size_t flags, json_error_t *je, struct err *e)
{
	e->msg[0] = '\0';
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* a FIFO must not block the open */
	FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		err_set(e, "%s: cannot read", path);
		return NULL;
	}
	struct stat sb;
	if (fstat(fileno(f), &sb) < 0 || !S_ISREG(sb.st_mode)) {
		fclose(f);
		err_set(e, "%s: not a regular file", path);
		return NULL;
	}
	if ((unsigned long long)sb.st_size > JSONCAP_MAX_FILE) {
		fclose(f);
		err_set(e, "%s: file too large (%lld bytes, limit %zu)", path, (long long)sb.st_size, JSONCAP_MAX_FILE);
		return NULL;
	}
	size_t n = (size_t)sb.st_size;
	char *buf = malloc(n + 1);
	size_t got = buf ? fread(buf, 1, n, f) : 0;
	fclose(f);
	json_t *root = NULL;
	if (!buf)
		err_set(e, "%s: out of memory", path);
	else if (got != n)
		err_set(e, "%s: read error", path);
	else if (jsoncap_nodes(buf, n) > JSONCAP_MAX_NODES)
		err_set(e, "%s: more than %zu JSON values", path, JSONCAP_MAX_NODES);
	else
		root = json_loadb(buf, n, flags, je);
	free(buf);
	return root;
}
