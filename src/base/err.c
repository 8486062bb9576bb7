/* err.c -- formatting of engine error messages (see err.h). */
#include "base/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Messages quote file contents (tensor names, colours, the text near a JSON error): a newline
 * would break the one-line promise, and an escape sequence or a C1 control would reach the
 * user's terminal. Every control character (C0, DEL, C1) and every byte that is not part of
 * well-formed UTF-8 becomes '?'. */
static void err_sanitize(char *msg)
{
	unsigned char *s = (unsigned char *)msg;
	for (size_t i = 0; s[i];) {
		unsigned char c = s[i];
		if (c < 0x80) {
			if (c < 0x20 || c == 0x7f)
				s[i] = '?';
			i++;
			continue;
		}
		int n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		unsigned cp = n == 2 ? c & 0x1f : n == 3 ? c & 0x0f : c & 0x07;
		for (int k = 1; k < n; k++) {
			if ((s[i + k] & 0xc0) != 0x80) { /* also stops at the terminating NUL */
				n = 0;
				break;
			}
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if (n == 0 || (n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
		    (n == 4 && (cp < 0x10000 || cp > 0x10ffff))) {
			s[i++] = '?';
			continue;
		}
		if (cp <= 0x9f) /* C1 controls U+0080..U+009F */
			memset(s + i, '?', (size_t)n);
		i += (size_t)n;
	}
}

int err_set(struct err *e, const char *fmt, ...)
{
	if (!e)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
	err_sanitize(e->msg);
	return -1;
}

int err_prefix(struct err *e, const char *fmt, ...)
{
	if (!e)
		return -1;
	char prefix[ERR_MSG_MAX], old[ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof prefix, fmt, ap);
	va_end(ap);
	memcpy(old, e->msg, sizeof old);
	snprintf(e->msg, sizeof e->msg, "%s: %s", prefix, old);
	err_sanitize(e->msg);
	return -1;
}
