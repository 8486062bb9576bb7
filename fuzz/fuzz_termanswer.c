/* fuzz_termanswer.c -- libFuzzer target: what a terminal answers to the pixel-heatmap questions
 * (graphics.h: kitty's query image, CSI 16 t, DA1), and the image encoders.
 *
 * Input: the bytes a terminal might send back, parsed by graphics_parse_answers: the cell size it
 * takes must be sane (2..1000 pixels) and the protocol one of the three. The same bytes then make a
 * small image (width and height from the first two bytes, heat levels from the rest, some cells
 * empty, a cursor) that goes through the sixel and kitty encoders into memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw/pixout.h"
#include "fuzz-common.h"
#include "tui/graphics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct graphics g;
	memset(&g, 0, sizeof g);
	g.px_w = GRAPHICS_CELL_W, g.px_h = GRAPHICS_CELL_H;
	graphics_parse_answers(&g, (const char *)data, size > 4096 ? 4096 : (int)size);
	if (g.px_w < 2 || g.px_w > 1000 || g.px_h < 2 || g.px_h > 1000)
		fuzz_fail("cell size %dx%d", g.px_w, g.px_h);
	if (g.available != PIXELS_NONE && g.available != PIXELS_SIXEL && g.available != PIXELS_KITTY)
		fuzz_fail("protocol %d", (int)g.available);
	if (size < 2)
		return 0;
	int rows = 1 + data[0] % 24, cols = 1 + data[1] % 24, bw = 1 + (size > 2 ? data[2] % 5 : 0);
	struct canvas_image img;
	memset(&img, 0, sizeof img);
	img.at = (struct rect){0, 0, 1, 1};
	img.rows = rows, img.cols = cols, img.block_w = bw, img.block_h = bw;
	img.level = malloc((size_t)rows * cols * sizeof *img.level);
	if (!img.level)
		return 0;
	for (int k = 0; k < rows * cols; k++) {
		uint8_t b = size > 3 ? data[3 + (size_t)k % (size - 3)] : 0;
		img.level[k] = b == 0xff ? CANVAS_IMAGE_EMPTY : (uint16_t)b;
		img.rgb[k % PALETTE_LEVELS] = (uint32_t)k * 0x010203u & 0xffffff;
	}
	img.cur_row = size > 4 ? data[4] % (rows + 1) - 1 : -1;
	img.cur_col = size > 5 ? data[5] % (cols + 1) - 1 : -1;
	img.cursor_rgb = 0xffffff;
	for (int p = PIXELS_SIXEL; p <= PIXELS_KITTY; p++) {
		char *s = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&s, &len);
		if (!f)
			break;
		if (pixout_image(&img, (enum pixel_proto)p, 1, f))
			fuzz_fail("encoding failed");
		fclose(f);
		if (!len || s[0] != '\033')
			fuzz_fail("%s image of %zu bytes", pixout_name((enum pixel_proto)p), len);
		free(s);
	}
	free(img.level);
	return 0;
}
