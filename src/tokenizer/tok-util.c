/* tok-util.c -- the helpers every part of the tokenizer loads and builds with: reading a JSON
 * file, paths in the tokenizer's folder, Python's universal newlines and a growing byte string.
 * The bottom of the tokenizer's files with tok-vocab.c: it calls nothing above it. */
#include "base/jsoncap.h"
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

size_t tok_universal_newlines(char *s, size_t len)
{
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\r') {
			s[o++] = '\n';
			if (i + 1 < len && s[i + 1] == '\n')
				i++;
		} else {
			s[o++] = s[i];
		}
	}
	return o;
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
