/* corpus.h -- reading a corpus file: one text per line, or JSON lines with "text" / "text_b".
 *
 * The file is JSON lines when its first non-blank line begins with '{' (after an optional UTF-8
 * byte order mark); then every line must be a JSON object with a string "text" and optionally a
 * string (or null) "text_b", the second sentence of a pair; other keys are ignored. Otherwise each
 * line is one text as it stands (a trailing CR is dropped). Blank lines are reported as empty in
 * both forms, as is a JSON "text" of only whitespace. A line longer than CORPUS_MAX_LINE bytes,
 * holding a NUL byte, or (in JSON lines) not a valid object with a "text" string is reported as bad
 * with its line number; reading goes on with the next line. Lines are read one at a time, so
 * memory does not grow with the file. */
#ifndef ATTNSCOPE_CORPUS_H
#define ATTNSCOPE_CORPUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/err.h"

#define CORPUS_MAX_LINE ((size_t)1 << 24) /* 16 MiB */

enum corpus_kind {
	CORPUS_TEXT,   /* text (and text_b) hold a text */
	CORPUS_EMPTY,  /* a blank line (or blank "text") */
	CORPUS_BAD,    /* the line could not be read; the error says why */
	CORPUS_SKIPPED,/* not parsed (not in the caller's shard) */
};

struct corpus_item {
	enum corpus_kind kind;
	uint64_t line;     /* 1-based line number */
	const char *text;  /* CORPUS_TEXT: valid until the next corpus_next */
	const char *text_b;/* or NULL */
};

struct corpus_reader;

/* Open PATH ("-" for standard input). -1 with "PATH: why" when it cannot be opened. */
int corpus_open(const char *path, struct corpus_reader **out, struct err *e);
void corpus_close(struct corpus_reader *r);
/* The next line into ITEM: 1, or 0 at the end of the file, or -1 on a read error. When PARSE is
 * false the line is only counted (kind CORPUS_SKIPPED). A bad line returns 1 with kind CORPUS_BAD
 * and E set to "line N: why". */
int corpus_next(struct corpus_reader *r, bool parse, struct corpus_item *item, struct err *e);
/* Lines in the file at PATH (a final line without newline counts), or -1 when it cannot be read
 * or is not a regular file. For the progress bar's total. */
long long corpus_count_lines(const char *path);

/* Parse one line LINE[0..len) (no newline; LINE has room for LEN + 1 bytes and may be modified) as plain text or JSON (JSONL) into
 * ITEM; ITEM's strings point into LINE or into *OWNED (free it; NULL when unused). */
void corpus_parse_line(char *line, size_t len, bool jsonl, struct corpus_item *item, char **owned, struct err *e);

#endif
