/* pixout.c -- canvas images as sixel or kitty graphics (see pixout.h). */
#include "config.h"

#include "draw/pixout.h"

#include <stdlib.h>

#include "draw/kitty.h"
#include "draw/pixmap.h"
#include "draw/sixel.h"

const char *pixout_name(enum pixel_proto p)
{
	return p == PIXELS_SIXEL ? "sixel" : p == PIXELS_KITTY ? "kitty" : "cells";
}

int pixout_image(const struct canvas_image *img, enum pixel_proto p, unsigned id, FILE *out)
{
	struct pixmap pm;
	if (pixmap_render(img, &pm))
		return -1;
	if (p == PIXELS_SIXEL)
		sixel_write(&pm, out);
	else if (p == PIXELS_KITTY)
		kitty_write(&pm, id, out);
	pixmap_free(&pm);
	return 0;
}

char *pixout_canvas(const struct canvas *cv, bool ansi, enum pixel_proto p)
{
	if (p == PIXELS_NONE || !cv->n_images)
		return canvas_to_string(cv, ansi);
	char **prefix = calloc((size_t)cv->h, sizeof *prefix);
	if (!prefix)
		return NULL;
	char *text = NULL;
	bool oom = false;
	for (int y = 0; y < cv->h && !oom; y++) {
		int room = 0; /* rows the images starting here need */
		for (int i = 0; i < cv->n_images; i++)
			if (cv->images[i].at.y == y && cv->images[i].at.h > room)
				room = cv->images[i].at.h;
		if (!room)
			continue;
		size_t len = 0;
		FILE *f = open_memstream(&prefix[y], &len);
		if (!f) {
			oom = true;
			break;
		}
		/* Scroll the room in first: a terminal scrolls an image that reaches past its last line, and
		 * the cursor would no longer come back to the image's row. */
		for (int k = 0; k < room; k++)
			fputc('\n', f);
		fprintf(f, "\033[%dA", room);
		for (int i = 0; i < cv->n_images; i++) {
			const struct canvas_image *img = &cv->images[i];
			if (img->at.y != y)
				continue;
			fputs("\0337", f); /* save the cursor; the image is drawn from its cell */
			if (img->at.x > 0)
				fprintf(f, "\033[%dC", img->at.x);
			if (pixout_image(img, p, (unsigned)i + 1, f))
				oom = true;
			fputs("\0338", f);
		}
		if (fclose(f))
			oom = true;
	}
	if (!oom)
		text = canvas_to_string_around(cv, ansi, (const char *const *)prefix);
	for (int y = 0; y < cv->h; y++)
		free(prefix[y]);
	free(prefix);
	return text;
}
