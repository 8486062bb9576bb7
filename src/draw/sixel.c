/* sixel.c -- a pixmap as a sixel image (see sixel.h; DEC's VT330/340 programmer reference, ch. 14). */
#include "config.h"

#include "draw/sixel.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* One run of the same sixel character: with "!count" from 4 on (shorter runs are shorter as is). */
static void sixel_run(FILE *out, int ch, int count)
{
	if (count >= 4)
		fprintf(out, "!%d%c", count, ch);
	else
		for (int k = 0; k < count; k++)
			fputc(ch, out);
}

void sixel_write(const struct pixmap *p, FILE *out)
{
	/* ESC P 0;1;0 q: aspect 2:1 by default but the raster attributes below set 1:1; P2 = 1 keeps
	 * uncoloured pixels as they are. */
	fprintf(out, "\033P0;0;0q\"1;1;%d;%d", p->w, p->h);
	for (int c = 0; c < p->n_colours; c++) {
		uint32_t rgb = p->rgb[c];
		fprintf(out, "#%d;2;%d;%d;%d", c, (int)(((rgb >> 16) & 0xff) * 100 + 127) / 255,
			(int)(((rgb >> 8) & 0xff) * 100 + 127) / 255, (int)((rgb & 0xff) * 100 + 127) / 255);
	}
	bool in_band[PIXMAP_COLOURS];
	for (int y0 = 0; y0 < p->h; y0 += 6) {
		int rows = p->h - y0 < 6 ? p->h - y0 : 6;
		for (int c = 0; c < p->n_colours; c++)
			in_band[c] = false;
		for (int y = y0; y < y0 + rows; y++)
			for (int x = 0; x < p->w; x++) {
				uint16_t c = p->px[(size_t)y * p->w + x];
				if (c != PIXMAP_NONE)
					in_band[c] = true;
			}
		bool first = true;
		for (int c = 0; c < p->n_colours; c++) {
			if (!in_band[c])
				continue;
			if (!first)
				fputc('$', out); /* back to the band's left edge for the next colour */
			first = false;
			fprintf(out, "#%d", c);
			int run_ch = -1, run = 0, last = 0; /* trailing blanks of a colour are not sent */
			for (int x = 0; x < p->w; x++) {
				int bits = 0;
				for (int k = 0; k < rows; k++)
					if (p->px[(size_t)(y0 + k) * p->w + x] == c)
						bits |= 1 << k;
				if (bits)
					last = x + 1;
			}
			for (int x = 0; x < last; x++) {
				int bits = 0;
				for (int k = 0; k < rows; k++)
					if (p->px[(size_t)(y0 + k) * p->w + x] == c)
						bits |= 1 << k;
				int ch = '?' + bits;
				if (ch == run_ch) {
					run++;
				} else {
					if (run)
						sixel_run(out, run_ch, run);
					run_ch = ch, run = 1;
				}
			}
			if (run)
				sixel_run(out, run_ch, run);
		}
		if (y0 + 6 < p->h)
			fputc('-', out); /* the next band */
	}
	fputs("\033\\", out);
}
