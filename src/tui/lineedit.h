/* lineedit.h -- a one-line UTF-8 text editor: the state behind the text, pair and target input
 * fields.
 *
 * The buffer is always valid UTF-8 and the cursor always sits on a code point boundary; all
 * editing is done by the functions here so the UI only maps actions to them. */
#ifndef ATTNSCOPE_LINEEDIT_H
#define ATTNSCOPE_LINEEDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LINEEDIT_MAX 16384 /* bytes of text, NUL excluded */

struct lineedit {
	char buf[LINEEDIT_MAX + 1]; /* [len] UTF-8, NUL-terminated */
	size_t len;                 /* bytes in buf */
	size_t cursor;              /* byte offset, 0..len, on a code point boundary */
	int scroll;                 /* first display column shown (kept by lineedit_view) */
};

/* Set the text (invalid UTF-8 bytes become U+FFFD) and put the cursor at the end. */
void lineedit_set(struct lineedit *le, const char *text);
/* Insert code point CP at the cursor; false when it is not a character (control, surrogate) or full. */
bool lineedit_insert(struct lineedit *le, uint32_t cp);
void lineedit_left(struct lineedit *le);
void lineedit_right(struct lineedit *le);
void lineedit_home(struct lineedit *le);
void lineedit_end(struct lineedit *le);
/* Each returns true when the text changed. */
bool lineedit_backspace(struct lineedit *le);
bool lineedit_delete(struct lineedit *le);
bool lineedit_kill_start(struct lineedit *le);
bool lineedit_kill_end(struct lineedit *le);
bool lineedit_kill_word(struct lineedit *le);

/* Choose the horizontal scroll so the cursor is visible in WIDTH columns, given the display
 * width function WIDTH_OF (columns of one code point). Returns the cursor's column on screen. */
int lineedit_view(struct lineedit *le, int width, int (*width_of)(uint32_t cp, void *ctx), void *ctx);

#endif
