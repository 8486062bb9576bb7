/* marks.c -- the marked tokens and their combined attention (see marks.h). */
#include "config.h"

#include "views/marks.h"

#include <stdio.h>
#include <string.h>

#include "draw/tokstrip.h"
#include "analysis/words.h"

bool marks_has(const struct view_ctx *ctx, int tok)
{
	for (int i = 0; i < ctx->n_marks; i++)
		if (ctx->marks[i] == tok)
			return true;
	return false;
}

bool marks_toggle(struct view_ctx *ctx, int tok)
{
	if (!ctx->trace || tok < 0 || tok >= ctx->trace->n) {
		snprintf(ctx->message, sizeof ctx->message, "select a token first");
		return false;
	}
	for (int i = 0; i < ctx->n_marks; i++) {
		if (ctx->marks[i] == tok) {
			memmove(ctx->marks + i, ctx->marks + i + 1, (size_t)(ctx->n_marks - i - 1) * sizeof *ctx->marks);
			ctx->n_marks--;
			goto done;
		}
	}
	if (ctx->n_marks >= VIEW_MARKS_MAX) {
		snprintf(ctx->message, sizeof ctx->message, "at most %d tokens can be combined", VIEW_MARKS_MAX);
		return false;
	}
	ctx->marks[ctx->n_marks++] = tok;
done:;
	char lab[120];
	if (ctx->n_marks)
		snprintf(ctx->message, sizeof ctx->message, "combined: %s", marks_label(ctx, true, lab, sizeof lab));
	else
		snprintf(ctx->message, sizeof ctx->message, "no tokens combined");
	return true;
}

const char *marks_label(const struct view_ctx *ctx, bool utf8, char *buf, size_t n)
{
	size_t len = 0;
	buf[0] = 0;
	for (int i = 0; i < ctx->n_marks && len + 1 < n; i++) {
		char lab[256];
		tokstrip_label(ctx->trace, ctx->marks[i], utf8, lab, sizeof lab);
		int w = snprintf(buf + len, n - len, "%s%s", i ? " + " : "", lab);
		if (w < 0)
			break;
		len += (size_t)w;
	}
	return buf;
}

void marks_remap(struct view_ctx *ctx, const struct trace *from, const struct trace *t)
{
	int k = 0;
	for (int i = 0; i < ctx->n_marks; i++) {
		int piece = words_first_piece(from, ctx->marks[i]);
		int tok = t && t->word_of ? words_of_piece(t, piece) : piece;
		bool dup = false;
		for (int j = 0; j < k; j++)
			dup |= ctx->marks[j] == tok;
		if (!dup && t && tok >= 0 && tok < t->n)
			ctx->marks[k++] = tok;
	}
	ctx->n_marks = k;
}

void marks_given(const float *v, int cols, const int *rows, int k, float *given)
{
	memset(given, 0, (size_t)cols * sizeof *given);
	for (int i = 0; i < k; i++)
		for (int c = 0; c < cols; c++)
			given[c] += v[(size_t)rows[i] * cols + c];
}

void marks_received(const float *v, int rows, int ncols, const int *cols, int k, float *received)
{
	for (int r = 0; r < rows; r++) {
		float s = 0;
		for (int i = 0; i < k; i++)
			s += v[(size_t)r * ncols + cols[i]];
		received[r] = s;
	}
}
