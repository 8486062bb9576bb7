/* kitty.c -- a pixmap as a kitty graphics protocol image (see kitty.h;
 * https://sw.kovidgoyal.net/kitty/graphics-protocol/). */
#include "config.h"

#include "draw/kitty.h"

#include <stdint.h>
#include <stdlib.h>

#include "base/b64.h"

#define KITTY_CHUNK 3072 /* bytes of RGBA per escape: 4096 base64 characters, the protocol's limit */

void kitty_write(const struct pixmap *p, unsigned id, FILE *out)
{
	size_t n = (size_t)p->w * p->h * 4;
	uint8_t *rgba = malloc(n ? n : 1);
	if (!rgba)
		return;
	for (size_t k = 0; k < (size_t)p->w * p->h; k++) {
		uint16_t c = p->px[k];
		uint32_t rgb = c == PIXMAP_NONE ? 0 : p->rgb[c];
		rgba[4 * k] = (uint8_t)(rgb >> 16), rgba[4 * k + 1] = (uint8_t)(rgb >> 8), rgba[4 * k + 2] = (uint8_t)rgb;
		rgba[4 * k + 3] = c == PIXMAP_NONE ? 0 : 255;
	}
	for (size_t off = 0; off < n || off == 0; off += KITTY_CHUNK) {
		size_t len = n - off < KITTY_CHUNK ? n - off : KITTY_CHUNK;
		int more = off + len < n;
		if (off == 0)
			fprintf(out, "\033_Ga=T,f=32,s=%d,v=%d,i=%u,q=2,C=1,m=%d;", p->w, p->h, id, more);
		else
			fprintf(out, "\033_Gm=%d;", more);
		b64_write_bytes(out, rgba + off, len);
		fputs("\033\\", out);
		if (!more)
			break;
	}
	free(rgba);
}

void kitty_delete_all(FILE *out)
{
	fputs("\033_Ga=d,d=A,q=2\033\\", out);
}
