/* lineedit.c -- one-line UTF-8 editing (see lineedit.h). */
#include "config.h"

#include "tui/lineedit.h"

#include <string.h>

#include "base/utf8.h"
#include "draw/canvas.h"

void lineedit_set(struct lineedit *le, const char *text)
{
	le->len = 0;
	le->cursor = 0;
	le->scroll = 0;
	le->buf[0] = 0;
	size_t n = strlen(text);
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		i += (size_t)utf8_next(text + i, n - i, &cp);
		/* Newlines and tabs in a given text are kept as spaces: the input is one line. */
		if (cp == '\n' || cp == '\t' || cp == '\r')
			cp = ' ';
		if (!lineedit_insert(le, cp))
			continue;
	}
}

static bool is_char(uint32_t cp)
{
	return cp >= 0x20 && cp != 0x7f && !(cp >= 0x80 && cp < 0xa0) && !(cp >= 0xd800 && cp < 0xe000) &&
	       cp <= 0x10ffff;
}

bool lineedit_insert(struct lineedit *le, uint32_t cp)
{
	if (!is_char(cp))
		return false;
	char u[8];
	size_t k = (size_t)utf8_encode(cp, u);
	if (le->len + k > LINEEDIT_MAX)
		return false;
	memmove(le->buf + le->cursor + k, le->buf + le->cursor, le->len - le->cursor + 1);
	memcpy(le->buf + le->cursor, u, k);
	le->len += k;
	le->cursor += k;
	return true;
}

static size_t prev_boundary(const struct lineedit *le, size_t pos)
{
	if (pos == 0)
		return 0;
	pos--;
	while (pos > 0 && ((unsigned char)le->buf[pos] & 0xc0) == 0x80)
		pos--;
	return pos;
}

static size_t next_boundary(const struct lineedit *le, size_t pos)
{
	if (pos >= le->len)
		return le->len;
	pos++;
	while (pos < le->len && ((unsigned char)le->buf[pos] & 0xc0) == 0x80)
		pos++;
	return pos;
}

void lineedit_left(struct lineedit *le)
{
	le->cursor = prev_boundary(le, le->cursor);
}

void lineedit_right(struct lineedit *le)
{
	le->cursor = next_boundary(le, le->cursor);
}

void lineedit_home(struct lineedit *le)
{
	le->cursor = 0;
}

void lineedit_end(struct lineedit *le)
{
	le->cursor = le->len;
}

/* Remove bytes [from, to) and put the cursor at FROM. */
static bool cut(struct lineedit *le, size_t from, size_t to)
{
	if (to <= from)
		return false;
	memmove(le->buf + from, le->buf + to, le->len - to + 1);
	le->len -= to - from;
	le->cursor = from;
	return true;
}

bool lineedit_backspace(struct lineedit *le)
{
	return cut(le, prev_boundary(le, le->cursor), le->cursor);
}

bool lineedit_delete(struct lineedit *le)
{
	size_t c = le->cursor;
	bool changed = cut(le, c, next_boundary(le, c));
	le->cursor = c;
	return changed;
}

bool lineedit_kill_start(struct lineedit *le)
{
	return cut(le, 0, le->cursor);
}

bool lineedit_kill_end(struct lineedit *le)
{
	size_t c = le->cursor;
	bool changed = cut(le, c, le->len);
	le->cursor = c;
	return changed;
}

bool lineedit_kill_word(struct lineedit *le)
{
	size_t p = le->cursor;
	while (p > 0 && le->buf[p - 1] == ' ')
		p--;
	while (p > 0 && le->buf[p - 1] != ' ')
		p = prev_boundary(le, p);
	return cut(le, p, le->cursor);
}

int lineedit_view(struct lineedit *le, int width, int (*width_of)(uint32_t cp, void *ctx), void *ctx)
{
	int col = 0;
	for (size_t i = 0; i < le->cursor;) {
		uint32_t cp;
		i += (size_t)utf8_next(le->buf + i, le->len - i, &cp);
		col += width_of(cp, ctx);
	}
	if (width < 2)
		width = 2;
	/* Keep a column free after the cursor for typing at the end. */
	if (col < le->scroll)
		le->scroll = col;
	if (col >= le->scroll + width)
		le->scroll = col - width + 1;
	if (le->scroll < 0)
		le->scroll = 0;
	return col - le->scroll;
}
