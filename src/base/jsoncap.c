/* jsoncap.c -- count the nodes a JSON text can make before handing it to jansson (see jsoncap.h). */
#include "base/jsoncap.h"

#include "base/file.h"

#include <stdbool.h>
#include <stdlib.h>

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
	char *buf;
	size_t n;
	if (file_read_all(path, JSONCAP_MAX_FILE, 0, &buf, &n, e) < 0)
		return NULL;
	json_t *root = NULL;
	if (jsoncap_nodes(buf, n) > JSONCAP_MAX_NODES)
		err_set(e, "%s: more than %zu JSON values", path, JSONCAP_MAX_NODES);
	else
		root = json_loadb(buf, n, flags, je);
	free(buf);
	return root;
}
