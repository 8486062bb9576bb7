/* tok-util.c -- the helpers every part of the tokenizer loads and builds with: reading a JSON
 * or text file, paths in the tokenizer's folder, Python's universal newlines and a growing byte string.
 * The bottom of the tokenizer's files with tok-vocab.c: it calls nothing above it. */
#include "base/file.h"
#include "base/jsoncap.h"
#include "base/utf8.h"
#include "tokenizer/tok-internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

json_t *tok_load_json(const char *path, size_t flags, struct err *e)
{
	json_error_t je;
	json_t *root = jsoncap_load_file(path, flags, &je, e);
	if (!root && !e->msg[0])
		err_set(e, "%s: line %d column %d: %s", path, je.line, je.column, je.text);
	return root;
}

int tok_read_text(const char *path, char **buf, size_t *len, struct err *e)
{
	if (file_read_all(path, TOK_MAX_FILE_BYTES, 0, buf, len, e) < 0)
		return -1;
	char *s = *buf;
	size_t bad = utf8_check(s, *len);
	if (bad < *len) {
		free(s);
		*buf = NULL;
		return err_set(e, "%s: invalid UTF-8 at byte %zu", path, bad);
	}
	size_t o = 0, n = *len;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\r') {
			s[o++] = '\n';
			if (i + 1 < n && s[i + 1] == '\n')
				i++;
		} else {
			s[o++] = s[i];
		}
	}
	s[o] = '\0';
	*len = o;
	return 0;
}

bool tok_file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

char *tok_path_join(const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	char *p = malloc(a + b + 2);
	if (!p)
		return NULL;
	memcpy(p, dir, a);
	p[a] = '/';
	memcpy(p + a + 1, name, b + 1);
	return p;
}


int tok_buf_add(struct tok_buf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		while (cap < b->n + n + 1) {
			if (cap > SIZE_MAX / 2)
				return -1;
			cap *= 2;
		}
		char *ns = realloc(b->s, cap);
		if (!ns)
			return -1;
		b->s = ns;
		b->cap = cap;
	}
	if (n)
		memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = '\0';
	return 0;
}

void tok_buf_free(struct tok_buf *b)
{
	free(b->s);
	memset(b, 0, sizeof *b);
}
