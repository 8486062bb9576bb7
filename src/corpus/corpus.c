/* corpus.c -- the corpus file reader (see corpus.h). */
#include "corpus/corpus.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsoncap.h"

struct corpus_reader {
	FILE *f;
	bool own;        /* close f */
	int jsonl;       /* -1 = not decided yet (no non-blank line seen), else 0/1 */
	uint64_t line;   /* lines read */
	char *buf;       /* the current line */
	size_t cap;
	char *owned;     /* strings of the current JSON line */
};

int corpus_open(const char *path, struct corpus_reader **out, struct err *e)
{
	struct corpus_reader *r = calloc(1, sizeof *r);
	if (!r)
		return err_set(e, "out of memory");
	r->jsonl = -1;
	if (!strcmp(path, "-")) {
		r->f = stdin;
	} else {
		r->f = fopen(path, "r");
		r->own = true;
		if (!r->f) {
			int err = errno;
			free(r);
			return err_set(e, "%s: %s", path, strerror(err));
		}
	}
	*out = r;
	return 0;
}

void corpus_close(struct corpus_reader *r)
{
	if (!r)
		return;
	if (r->own)
		fclose(r->f);
	free(r->buf);
	free(r->owned);
	free(r);
}

long long corpus_count_lines(const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : NULL;
	if (!f)
		return -1;
	char buf[1 << 16];
	long long lines = 0;
	size_t got;
	int last = '\n';
	while ((got = fread(buf, 1, sizeof buf, f)) > 0) {
		for (char *p = buf; (p = memchr(p, '\n', (size_t)(buf + got - p))); p++)
			lines++;
		last = buf[got - 1];
	}
	if (last != '\n')
		lines++;
	fclose(f);
	return lines;
}

static bool corpus_blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!strchr(" \t\r\f\v", s[i]))
			return false;
	return true;
}

void corpus_parse_line(char *line, size_t len, bool jsonl, struct corpus_item *item, char **owned, struct err *e)
{
	*owned = NULL;
	item->text = item->text_b = NULL;
	const char *nul = memchr(line, 0, len);
	if (nul) {
		item->kind = CORPUS_BAD;
		err_set(e, "a NUL byte at column %zu", (size_t)(nul - line) + 1);
		return;
	}
	if (len && line[len - 1] == '\r')
		line[--len] = 0;
	line[len] = 0;
	if (corpus_blank(line, len)) {
		item->kind = CORPUS_EMPTY;
		return;
	}
	if (!jsonl) {
		item->kind = CORPUS_TEXT;
		item->text = line;
		return;
	}
	item->kind = CORPUS_BAD;
	if (jsoncap_nodes(line, len) > JSONCAP_MAX_NODES) {
		err_set(e, "too many JSON values");
		return;
	}
	json_error_t je;
	json_t *j = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
	if (!j) {
		err_set(e, "invalid JSON at column %d: %s", je.column, je.text);
		return;
	}
	json_t *text = json_object_get(j, "text"), *text_b = json_object_get(j, "text_b");
	if (!json_is_object(j)) {
		err_set(e, "not a JSON object");
	} else if (!json_is_string(text)) {
		err_set(e, "no \"text\" string");
	} else if (text_b && !json_is_string(text_b) && !json_is_null(text_b)) {
		err_set(e, "\"text_b\" is not a string");
	} else {
		size_t la = json_string_length(text), lb = json_is_string(text_b) ? json_string_length(text_b) : 0;
		char *buf = malloc(la + lb + 2);
		if (!buf) {
			err_set(e, "out of memory");
		} else {
			/* jansson refuses \u0000 unless asked, so the lengths are the C strings'. */
			memcpy(buf, json_string_value(text), la + 1);
			item->text = buf;
			if (json_is_string(text_b)) {
				memcpy(buf + la + 1, json_string_value(text_b), lb + 1);
				item->text_b = buf + la + 1;
			}
			*owned = buf;
			item->kind = corpus_blank(buf, la) ? CORPUS_EMPTY : CORPUS_TEXT;
		}
	}
	json_decref(j);
}

/* Read one line into r->buf (without its newline), keeping at most CORPUS_MAX_LINE bytes.
 * 1 with *LEN and *LONG (the line was longer), 0 at the end, -1 on a read error. */
static int corpus_read_line(struct corpus_reader *r, size_t *len, bool *toolong)
{
	size_t n = 0;
	int c;
	*toolong = false;
	while ((c = getc_unlocked(r->f)) != EOF && c != '\n') {
		if (n >= CORPUS_MAX_LINE) {
			*toolong = true;
			continue;
		}
		if (n + 1 >= r->cap) {
			size_t cap = r->cap ? r->cap * 2 : 4096;
			char *grown = realloc(r->buf, cap);
			if (!grown)
				return -1;
			r->buf = grown;
			r->cap = cap;
		}
		r->buf[n++] = (char)c;
	}
	if (ferror(r->f))
		return -1;
	if (c == EOF && n == 0 && !*toolong)
		return 0;
	if (!r->buf) {
		r->buf = malloc(1);
		r->cap = r->buf ? 1 : 0;
		if (!r->buf)
			return -1;
	}
	*len = n;
	return 1;
}

int corpus_next(struct corpus_reader *r, bool parse, struct corpus_item *item, struct err *e)
{
	size_t len;
	bool toolong;
	free(r->owned);
	r->owned = NULL;
	int got = corpus_read_line(r, &len, &toolong);
	if (got < 0)
		return err_set(e, "line %llu: read error", (unsigned long long)r->line + 1);
	if (got == 0)
		return 0;
	item->line = ++r->line;
	item->text = item->text_b = NULL;
	char *s = r->buf;
	if (r->line == 1 && len >= 3 && !memcmp(s, "\xef\xbb\xbf", 3))
		s += 3, len -= 3;
	if (r->jsonl < 0) { /* the first non-blank line decides, whatever the shard */
		size_t i = 0;
		while (i < len && strchr(" \t\r\f\v", s[i]))
			i++;
		if (i < len)
			r->jsonl = s[i] == '{';
	}
	if (toolong) {
		item->kind = parse ? CORPUS_BAD : CORPUS_SKIPPED;
		if (parse)
			err_set(e, "line %llu: longer than %zu bytes", (unsigned long long)r->line, CORPUS_MAX_LINE);
		return 1;
	}
	if (!parse) {
		item->kind = CORPUS_SKIPPED;
		return 1;
	}
	corpus_parse_line(s, len, r->jsonl > 0, item, &r->owned, e);
	if (item->kind == CORPUS_BAD)
		err_prefix(e, "line %llu", (unsigned long long)r->line);
	return 1;
}
