/* check_canvas.c -- the cell canvas (text, wide characters, fallbacks, heat cells, text output)
 * and the token strip's readable token text. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "draw/braille.h"
#include "draw/canvas.h"
#include "draw/theme.h"
#include "draw/tokstrip.h"
#include "trace/tokentext.h"
#include "ui/synth.h"
#include "testutil.h"

static struct palette pal_for(enum color_depth depth, bool utf8)
{
	struct theme th;
	struct err e;
	const char *yaml = "ramp: ['#000000', '#ffffff']\n"
			   "roles:\n  status: {fg: '#ffffff', bg: '#0000ff'}\n";
	ck_assert_int_eq(theme_load_string("t", yaml, &th, &e), 0);
	struct palette p;
	theme_resolve(&th, depth, utf8, &p);
	return p;
}

static char *row_text(struct canvas *cv, int y)
{
	char *all = canvas_to_string(cv, false);
	char *line = all;
	for (int i = 0; i < y; i++)
		line = strchr(line, '\n') + 1;
	char *end = strchr(line, '\n');
	char *out = strndup(line, (size_t)(end - line));
	free(all);
	return out;
}

START_TEST(text_clips_with_ellipsis)
{
	struct palette p = pal_for(DEPTH_256, true);
	struct canvas *cv = canvas_new(10, 2, &p);
	struct style st = p.role[ROLE_TEXT];
	ck_assert_int_eq(canvas_text(cv, 0, 0, 5, "abcdefgh", st), 5);
	char *r = row_text(cv, 0);
	ck_assert_str_eq(r, "abcd\xe2\x80\xa6");
	free(r);
	ck_assert_int_eq(canvas_text(cv, 0, 1, 5, "abc", st), 3);
	/* Clip rectangle: nothing drawn outside. */
	canvas_clip(cv, (struct rect){2, 1, 3, 1});
	canvas_text(cv, 0, 1, -1, "XXXXXXXX", st);
	r = row_text(cv, 1);
	ck_assert_str_eq(r, "abXX\xe2\x80\xa6"); /* cut at the clip's edge, with an ellipsis */
	free(r);
	canvas_free(cv);
}
END_TEST

START_TEST(wide_characters_take_two_cells)
{
	struct palette p = pal_for(DEPTH_256, true);
	struct canvas *cv = canvas_new(8, 1, &p);
	struct style st = p.role[ROLE_TEXT];
	ck_assert_int_eq(canvas_text_width(cv, "a\xe6\x97\xa5z"), 4); /* a日z */
	ck_assert_int_eq(canvas_text(cv, 0, 0, -1, "a\xe6\x97\xa5z", st), 4);
	ck_assert_uint_eq(canvas_at(cv, 1, 0)->ch, 0x65e5);
	ck_assert_uint_eq(canvas_at(cv, 2, 0)->ch, 0);
	/* Overwriting the right half blanks the left half. */
	canvas_put(cv, 2, 0, 'x', st);
	ck_assert_uint_eq(canvas_at(cv, 1, 0)->ch, ' ');
	char *r = row_text(cv, 0);
	ck_assert_str_eq(r, "a xz");
	free(r);
	/* A wide character that does not fit in the last column becomes a blank. */
	canvas_put(cv, 7, 0, 0x65e5, st);
	ck_assert_uint_eq(canvas_at(cv, 7, 0)->ch, ' ');
	canvas_free(cv);
}
END_TEST

START_TEST(ascii_fallbacks_without_utf8)
{
	struct palette p = pal_for(DEPTH_256, false);
	struct canvas *cv = canvas_new(12, 3, &p);
	struct style st = p.role[ROLE_TEXT];
	ck_assert_int_eq(canvas_text(cv, 0, 0, -1, "caf\xc3\xa9 \xe6\x97\xa5", st), 6);
	canvas_text(cv, 0, 2, 4, "\xe2\x80\xa6\xc3\x97\xe2\x86\x92", st); /* … × → have look-alikes */
	canvas_box(cv, (struct rect){7, 0, 3, 3}, st);
	canvas_text(cv, 0, 1, 4, "abcdef", st);
	char *s = canvas_to_string(cv, false);
	ck_assert_str_eq(s, "caf? ? +-+\n"
			    "abc~   | |\n"
			    "~x>    +-+\n");
	free(s);
	ck_assert_int_eq(canvas_heat_rows(cv), 1);
	canvas_free(cv);
}
END_TEST

/* The character at cell (X, Y) of CV. */
static char cell_char(struct canvas *cv, int x, int y)
{
	char *line = row_text(cv, y);
	char c = line[x];
	free(line);
	return c;
}

/* A scatter with more points than cells shades each cell by its count on a log scale up to the
 * fullest cell, in the colour of the kind with two thirds of the points, else the "both" colour. */
START_TEST(density_shades_by_count)
{
	struct palette pal = pal_for(DEPTH_256, false);
	struct canvas *cv = canvas_new(40, 10, &pal);
	struct bplot p;
	ck_assert_int_eq(bplot_init(&p, cv, (struct rect){0, 0, 20, 10}, -10, 10, -10, 10, false), 0);
	const double pts[3][2] = {{-8, 8}, {0.5, 0.5}, {8, -8}};
	for (int i = 0; i < 16; i++) /* 16 queries in one cell */
		ck_assert_int_eq(bplot_density_add(&p, 0, pts[0][0], pts[0][1]), 0);
	bplot_density_add(&p, 1, pts[1][0], pts[1][1]); /* one key */
	for (int i = 0; i < 4; i++) /* two of each kind: mixed */
		bplot_density_add(&p, i % 2, pts[2][0], pts[2][1]);
	ck_assert(!bplot_dense(&p, 21)); /* 21 points in 3 cells: few enough to keep their labels */
	ck_assert(bplot_dense(&p, 201)); /* more points than the plot's 200 cells */
	struct style st[BPLOT_KINDS + 1] = {{1, 0, 0}, {2, 0, 0}, {3, 0, 0}};
	long upper[BPLOT_LEVELS];
	ck_assert_int_eq(bplot_density_draw(&p, cv, st, upper), 16);
	ck_assert(upper[0] == 2 && upper[1] == 4 && upper[2] == 8 && upper[3] == 16); /* 16^(1/4, 2/4, 3/4, 1) */
	const char want[3] = {'#', '.', ':'};     /* 16, 1, 4 points */
	const uint32_t fg[3] = {1, 2, 3};         /* queries, keys, both */
	for (int i = 0; i < 3; i++) {
		int cx, cy;
		ck_assert(bplot_cell(&p, pts[i][0], pts[i][1], &cx, &cy));
		ck_assert_int_eq(cell_char(cv, cx, cy), want[i]);
		ck_assert_uint_eq(canvas_at(cv, cx, cy)->fg, fg[i]);
	}
	char *legend_row;
	canvas_fill(cv, (struct rect){0, 9, 40, 1}, ' ', st[0]);
	ck_assert_int_eq(bplot_density_legend(cv, 0, 9, 40, upper, st[0]), 40);
	legend_row = row_text(cv, 9);
	ck_assert_str_eq(legend_row, ". <=2 : <=4 * <=8 # <=16 points per cell");
	free(legend_row);
	canvas_fill(cv, (struct rect){0, 9, 40, 1}, ' ', st[0]); /* narrow: whole shades only */
	bplot_density_legend(cv, 0, 9, 20, upper, st[0]);
	legend_row = row_text(cv, 9);
	ck_assert_str_eq(legend_row, ". <=2 : <=4 * <=8");
	free(legend_row);
	bplot_free(&p);
	/* From 256 points on, more than two a held cell on average is a density too. */
	ck_assert_int_eq(bplot_init(&p, cv, (struct rect){0, 0, 40, 10}, -10, 10, -10, 10, false), 0);
	for (int i = 0; i < 260; i++)
		bplot_density_add(&p, i % 2, pts[i % 3][0], pts[i % 3][1]);
	ck_assert(bplot_dense(&p, 260));  /* 260 points in 3 of 400 cells */
	ck_assert(!bplot_dense(&p, 6));   /* (as if) 6 points there: markers */
	bplot_free(&p);
	canvas_free(cv);
}
END_TEST

START_TEST(heat_cells_by_depth)
{
	struct palette c = pal_for(DEPTH_TRUE, true);
	struct canvas *cv = canvas_new(4, 1, &c);
	ck_assert_int_eq(canvas_heat_rows(cv), 2);
	canvas_heat2(cv, 0, 0, 0.0f, 1.0f);
	const struct cell *k = canvas_at(cv, 0, 0);
	ck_assert_uint_eq(k->ch, 0x2580);
	ck_assert_uint_eq(k->fg, COLOR_RGB | 0x000000);
	ck_assert_uint_eq(k->bg, COLOR_RGB | 0xffffff);
	canvas_heat2(cv, 1, 0, NAN, 0.5f); /* only the lower half */
	ck_assert_uint_eq(canvas_at(cv, 1, 0)->ch, 0x2584);
	ck_assert_uint_eq(canvas_at(cv, 1, 0)->fg, COLOR_RGB | 0x808080);
	canvas_free(cv);

	struct palette m = pal_for(DEPTH_MONO, true);
	cv = canvas_new(4, 1, &m);
	ck_assert_int_eq(canvas_heat_rows(cv), 1);
	canvas_heat2(cv, 0, 0, 0.0f, 1.0f); /* monochrome: one value per cell, as a shade */
	canvas_heat1(cv, 1, 0, 1.0f);
	canvas_heat1(cv, 2, 0, 0.01f);
	canvas_heat1(cv, 3, 0, 0.5f);
	char *s = canvas_to_string(cv, false);
	ck_assert_str_eq(s, " @.+\n");
	free(s);
	canvas_free(cv);
}
END_TEST

START_TEST(ansi_output_per_depth)
{
	struct palette p = pal_for(DEPTH_256, true);
	struct canvas *cv = canvas_new(3, 1, &p);
	canvas_text(cv, 0, 0, -1, "ab", p.role[ROLE_STATUS]);
	char *s = canvas_to_string(cv, true);
	/* #ffffff on #0000ff: 231 on 21 in the 256-colour cube; reset at the end of the line. */
	ck_assert_str_eq(s, "\033[0;38;5;231;48;5;21mab\033[0m\n");
	free(s);
	canvas_free(cv);

	p = pal_for(DEPTH_TRUE, true);
	cv = canvas_new(2, 1, &p);
	canvas_text(cv, 0, 0, -1, "x", p.role[ROLE_STATUS]);
	s = canvas_to_string(cv, true);
	ck_assert_str_eq(s, "\033[0;38;2;255;255;255;48;2;0;0;255mx\033[0m\n");
	free(s);
	canvas_free(cv);

	p = pal_for(DEPTH_16, true);
	cv = canvas_new(2, 1, &p);
	canvas_text(cv, 0, 0, -1, "x", p.role[ROLE_STATUS]);
	s = canvas_to_string(cv, true);
	ck_assert_str_eq(s, "\033[0;97;44mx\033[0m\n"); /* bright white on blue */
	free(s);
	/* Plain output drops trailing blanks. */
	s = canvas_to_string(cv, false);
	ck_assert_str_eq(s, "x\n");
	free(s);
	canvas_free(cv);
}
END_TEST

START_TEST(token_text_wordpiece_and_bpe)
{
	struct trace *t = synth_trace("walking home", NULL, 1, 1, SYNTH_BERT);
	char buf[64];
	bool cont;
	ck_assert_int_eq(t->n, 5); /* [CLS] walk ##ing home [SEP] */
	tokentext_text(t, 1, buf, sizeof buf, &cont);
	ck_assert_str_eq(buf, "walk");
	ck_assert(!cont);
	tokentext_text(t, 2, buf, sizeof buf, &cont);
	ck_assert_str_eq(buf, "ing");
	ck_assert(cont);
	tokstrip_label(t, 2, true, buf, sizeof buf);
	ck_assert_str_eq(buf, "\xc2\xb7ing");
	tokstrip_label(t, 2, false, buf, sizeof buf);
	ck_assert_str_eq(buf, "+ing");
	tokentext_text(t, 0, buf, sizeof buf, &cont);
	ck_assert_str_eq(buf, "[CLS]");
	trace_free(t);

	/* GPT-2 byte-level pieces: Ġ = space, Ċ = newline, Ã© = é, a lone byte of a split character. */
	t = synth_trace("Hello", NULL, 1, 1, SYNTH_GPT2);
	trace_free(t);
	t = trace_new(1, 1, 4, 4, 6);
	strcpy(t->family, "gpt2");
	const char *pieces[6] = {"Hello", "\xc4\xa0" "caf\xc3\x83\xc2\xa9", "!", "\xc4\x8a", "\xc3\xa2", "\xc4\xa0"};
	for (int i = 0; i < 6; i++)
		t->tokens[i] = strdup(pieces[i]);
	tokentext_text(t, 1, buf, sizeof buf, &cont);
	ck_assert_str_eq(buf, "caf\xc3\xa9");
	ck_assert(!cont);
	tokentext_text(t, 2, buf, sizeof buf, &cont);
	ck_assert_str_eq(buf, "!");
	ck_assert(cont);
	tokentext_text(t, 3, buf, sizeof buf, &cont);
	ck_assert_str_eq(buf, "\xe2\x86\xb5");
	ck_assert(!cont);
	tokentext_text(t, 4, buf, sizeof buf, &cont);
	ck_assert_str_eq(buf, "<e2>");
	ck_assert(!cont); /* after a newline a new word starts */
	tokentext_text(t, 5, buf, sizeof buf, &cont);
	ck_assert_str_eq(buf, "\xe2\x90\xa3");
	trace_free(t);

	/* SentencePiece-style pieces (tokenizer.json of Llama 2 / Gemma): '▁' = space, byte fallback */
	t = trace_new(1, 1, 4, 4, 7);
	strcpy(t->family, "llama");
	const char *spm[7] = {"<s>", "\xe2\x96\x81" "Hi", "!", "\xe2\x96\x81", "<0xE6>", "<0x9D>", "<0xB1>"};
	for (int i = 0; i < 7; i++)
		t->tokens[i] = strdup(spm[i]);
	t->special[0] = true;
	tokentext_text(t, 1, buf, sizeof buf, &cont);
	ck_assert_str_eq(buf, "Hi");
	ck_assert(!cont);
	tokentext_text(t, 2, buf, sizeof buf, &cont);
	ck_assert_str_eq(buf, "!");
	ck_assert(cont);
	tokentext_text(t, 3, buf, sizeof buf, &cont);
	ck_assert_str_eq(buf, "\xe2\x90\xa3");
	tokentext_text(t, 4, buf, sizeof buf, &cont);
	ck_assert_str_eq(buf, "\xe6\x9d\xb1"); /* the three bytes' character, on the first piece */
	tokentext_text(t, 5, buf, sizeof buf, &cont);
	ck_assert_str_eq(buf, "");
	ck_assert(cont);
	tokentext_text(t, 6, buf, sizeof buf, &cont);
	ck_assert(cont);
	trace_free(t);

	/* a run of spaces in one byte-level piece: the first separates the word, the others show */
	t = trace_new(1, 1, 4, 4, 1);
	strcpy(t->family, "gpt2");
	t->tokens[0] = strdup("\xc4\xa0\xc4\xa0\xc4\xa0" "x");
	tokentext_text(t, 0, buf, sizeof buf, &cont);
	ck_assert_str_eq(buf, "\xe2\x90\xa3\xe2\x90\xa3x");
	trace_free(t);
}
END_TEST

START_TEST(token_strip_rows)
{
	struct palette p = pal_for(DEPTH_MONO, true);
	struct trace *t = synth_trace("walking home", NULL, 1, 1, SYNTH_BERT);
	const int32_t ids[5] = {101, 7, 12345, 42, 102};
	memcpy(t->ids, ids, sizeof ids);
	struct canvas *cv = canvas_new(40, 2, &p);
	ck_assert_int_eq(tokstrip_draw(cv, (struct rect){0, 0, 40, 2}, t, -1, false), 2);
	char *s = canvas_to_string(cv, false);
	/* Pieces of one word joined by a dot, words by a space, each id under its token. */
	ck_assert_str_eq(s, "[CLS] walk\xc2\xb7ing   home [SEP]\n"
			    "101   7    12345 42   102\n");
	free(s);
	/* Wrapping: a narrow strip uses more rows. */
	ck_assert_int_gt(tokstrip_rows(cv, t, 12), 2);
	canvas_free(cv);
	trace_free(t);
}
END_TEST

/* An encoder-decoder's decoder trace: the source's strip above the target's, each named, with which are the
 * rows and the columns (cross-attention, or the decoder's self-attention); wrapped, each strip wraps in the
 * width beside the gutter. */
START_TEST(token_strip_encdec)
{
	struct palette p = pal_for(DEPTH_MONO, true);
	struct trace *src = synth_trace("walking home", NULL, 1, 1, SYNTH_BERT);
	struct trace *dec = synth_trace("the cat", NULL, 1, 1, SYNTH_BERT);
	const int32_t ids[5] = {101, 7, 12345, 42, 102}, dids[4] = {0, 5, 6, 1};
	memcpy(src->ids, ids, sizeof ids);
	memcpy(dec->ids, dids, sizeof dids);
	dec->encoder = src;
	struct canvas *cv = canvas_new(40, 4, &p);
	ck_assert_int_eq(tokstrip_draw_encdec(cv, (struct rect){0, 0, 40, 4}, dec, true, -1, false, NULL), 4);
	char *s = canvas_to_string(cv, false);
	ck_assert_str_eq(s, "source    [CLS] walk\xc2\xb7ing   home [SEP]\n"
			    "columns   101   7    12345 42   102\n"
			    "target    [CLS] the cat [SEP]\n"
			    "rows      0     5   6   1\n");
	free(s);
	canvas_clear(cv, canvas_role(cv, ROLE_TEXT));
	tokstrip_draw_encdec(cv, (struct rect){0, 0, 40, 4}, dec, false, -1, false, NULL);
	s = canvas_to_string(cv, false);
	ck_assert_str_eq(s, "source    [CLS] walk\xc2\xb7ing   home [SEP]\n"
			    "          101   7    12345 42   102\n"
			    "target    [CLS] the cat [SEP]\n"
			    "rows+cols 0     5   6   1\n");
	free(s);
	canvas_free(cv);
	/* 24 columns: 14 beside the gutter, where each text wraps on its own */
	int rows = tokstrip_encdec_rows(cv = canvas_new(24, 16, &p), dec, 24);
	ck_assert_int_eq(rows, tokstrip_rows(cv, src, 14) + tokstrip_rows(cv, dec, 14));
	ck_assert_int_gt(rows, 4);
	ck_assert_int_eq(tokstrip_draw_encdec(cv, (struct rect){0, 0, 24, 16}, dec, true, 2, true, NULL), rows);
	s = canvas_to_string(cv, false);
	ck_assert_ptr_nonnull(strstr(s, "\ntarget    [CLS] the cat\nrows      0     5   6\n"));
	ck_assert_ptr_nonnull(strstr(s, "\n          [SEP]\n          1\n"));
	free(s);
	canvas_free(cv);
	trace_free(dec);
	trace_free(src);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("canvas");
	TCase *tc = tcase_create("canvas");
	tcase_add_test(tc, text_clips_with_ellipsis);
	tcase_add_test(tc, wide_characters_take_two_cells);
	tcase_add_test(tc, ascii_fallbacks_without_utf8);
	tcase_add_test(tc, heat_cells_by_depth);
	tcase_add_test(tc, density_shades_by_count);
	tcase_add_test(tc, ansi_output_per_depth);
	tcase_add_test(tc, token_text_wordpiece_and_bpe);
	tcase_add_test(tc, token_strip_rows);
	tcase_add_test(tc, token_strip_encdec);
	suite_add_tcase(s, tc);
	return testutil_run_suite(s, false);
}
