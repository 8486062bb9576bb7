/* check_theme.c -- theme YAML parsing and its errors, colour fallback per depth, depth detection,
 * and the user config file (settings, key overrides, errors). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/datadir.h"
#include "draw/theme.h"
#include "tui/userconf.h"
#include "testutil.h"

static struct theme th;
static struct err e;

static void expect_error(const char *yaml, const char *msg)
{
	memset(&e, 0, sizeof e);
	ck_assert_int_eq(theme_load_string("t.yaml", yaml, &th, &e), -1);
	ck_assert_msg(!strcmp(e.msg, msg), "got '%s', want '%s'", e.msg, msg);
}

START_TEST(parses_roles_and_ramp)
{
	const char *yaml = "name: test\n"
			   "background: light\n"
			   "ramp: ['#000000', '#ff8000', 'white']\n"
			   "ramp16: [black, brightyellow]\n"
			   "roles:\n"
			   "  status: {fg: '#fff', bg: 21, attrs: [bold, underline]}\n"
			   "  cursor: {mono: [underline]}\n";
	ck_assert_int_eq(theme_load_string("t.yaml", yaml, &th, &e), 0);
	ck_assert_str_eq(th.name, "test");
	ck_assert(th.light);
	ck_assert_int_eq(th.n_ramp, 3);
	ck_assert_uint_eq(th.ramp[1], COLOR_RGB | 0xff8000);
	ck_assert_uint_eq(th.ramp[2], COLOR_RGB | 0xe5e5e5); /* "white" is palette 7 */
	ck_assert_int_eq(th.n_ramp16, 2);
	ck_assert_int_eq(th.ramp16[1], 11);
	ck_assert_uint_eq(th.role[ROLE_STATUS].fg, COLOR_RGB | 0xffffff);
	ck_assert_uint_eq(th.role[ROLE_STATUS].bg, 21);
	ck_assert_uint_eq(th.role[ROLE_STATUS].attr, ATTR_BOLD | ATTR_UNDERLINE);
	/* Roles not in the file keep built-in attributes (so monochrome still shows selection). */
	ck_assert_uint_eq(th.role[ROLE_TOKEN_SEL].attr, ATTR_REVERSE);

	struct palette p;
	theme_resolve(&th, DEPTH_MONO, true, &p);
	ck_assert_uint_eq(p.role[ROLE_STATUS].attr, ATTR_BOLD | ATTR_UNDERLINE | ATTR_REVERSE);
	ck_assert_uint_eq(p.role[ROLE_CURSOR].attr, ATTR_UNDERLINE);
	ck_assert_uint_eq(p.role[ROLE_STATUS].bg, COLOR_DEFAULT);
	theme_resolve(&th, DEPTH_256, true, &p);
	ck_assert_uint_eq(p.role[ROLE_STATUS].fg, 231);
	ck_assert_uint_eq(p.role[ROLE_STATUS].bg, 21);
	ck_assert_uint_eq(p.heat[0], 16);    /* black in the cube */
	ck_assert_uint_eq(p.heat[255], 254); /* #e5e5e5 → grey 254 */
	ck_assert_uint_eq(p.heat_text[0], 231);
	ck_assert_uint_eq(p.heat_text[255], 16);
	theme_resolve(&th, DEPTH_16, true, &p);
	ck_assert_uint_eq(p.heat[0], 0);
	ck_assert_uint_eq(p.heat[255], 11); /* from ramp16 */
	theme_resolve(&th, DEPTH_8, true, &p);
	ck_assert_uint_eq(p.heat[255], 3);  /* bright yellow folds to yellow */
	ck_assert_uint_eq(p.role[ROLE_STATUS].bg, 4);
	theme_resolve(&th, DEPTH_TRUE, true, &p);
	ck_assert_uint_eq(p.heat[0], COLOR_RGB | 0);
	ck_assert_uint_eq(p.heat[PALETTE_LEVELS - 1], COLOR_RGB | 0xe5e5e5);
	uint32_t mid = p.heat[PALETTE_LEVELS / 2]; /* just past the middle stop: #ff80xx */
	ck_assert_uint_eq(mid >> 8, (COLOR_RGB | 0xff8000) >> 8);
}
END_TEST

START_TEST(errors_name_line_and_column)
{
	expect_error("ramp: ['#000000', '#ffffff']\nroles:\n  statu: {}\n", "t.yaml:3:3: unknown role 'statu'");
	expect_error("ramp: ['#000000', '#ffffff']\nroles:\n  status: {fg: '#12345'}\n",
		     "t.yaml:3:16: bad colour '#12345': expected #rrggbb or #rgb");
	expect_error("ramp: ['#000000', '#ffffff']\nroles:\n  status: {fg: purple}\n", "t.yaml:3:16: unknown colour 'purple'");
	expect_error("ramp: ['#000000', '#ffffff']\nroles:\n  status: {attrs: [blink]}\n",
		     "t.yaml:3:20: unknown attribute 'blink' (bold, dim, underline, reverse)");
	expect_error("ramp: ['#000000']\n", "t.yaml:1:7: 'ramp' needs 2 to 32 colours");
	expect_error("name: x\n", "t.yaml:1:1: the theme has no 'ramp'");
	expect_error("ramp: ['#000000', '#ffffff']\ncolour: 3\n",
		     "t.yaml:2:1: unknown key 'colour' (name, description, background, ramp, ramp16, diverging, roles)");
	expect_error("ramp: ['#000000', 300]\n", "t.yaml:1:19: bad colour '300': a palette index is 0-255");
	expect_error("ramp16: [black, '#ff0000']\nramp: [red, blue]\n",
		     "t.yaml:1:17: 'ramp16' takes the 16 system colours only (names or 0-15)");
	/* YAML syntax errors come from libyaml with its position. */
	memset(&e, 0, sizeof e);
	ck_assert_int_eq(theme_load_string("t.yaml", "ramp: [a, b\nroles: {\n", &th, &e), -1);
	ck_assert_msg(!strncmp(e.msg, "t.yaml:", 7) && strstr(e.msg, ": did not find expected"), "%s", e.msg);
	/* Files: missing, and a name that is not installed. */
	ck_assert_int_eq(theme_load_file("/nonexistent/x.yaml", &th, &e), -1);
	ck_assert_str_eq(e.msg, "/nonexistent/x.yaml: No such file or directory");
	ck_assert_int_eq(theme_load("no-such-theme", &th, &e), -1);
	ck_assert_ptr_nonnull(strstr(e.msg, "theme 'no-such-theme' not found"));
}
END_TEST

START_TEST(shipped_themes_load)
{
	const char *names[] = {"viridis", "cividis", "grayscale", "light"};
	for (int i = 0; i < 4; i++) {
		memset(&e, 0, sizeof e);
		ck_assert_msg(theme_load(names[i], &th, &e) == 0, "%s: %s", names[i], e.msg);
		ck_assert_str_eq(th.name, names[i]);
		ck_assert_int_ge(th.n_ramp, 2);
	}
	ck_assert(th.light);
	/* A path works as well as a name. */
	char path[4096];
	ck_assert(datadir_yaml(path, sizeof path, "themes", "cividis"));
	ck_assert_int_eq(theme_load(path, &th, &e), 0);
	ck_assert_str_eq(th.name, "cividis");
}
END_TEST

START_TEST(nearest_colours)
{
	/* Exact cube and grey entries map to themselves; the first 16 are never used in 256 mode. */
	ck_assert_uint_eq(theme_nearest(0x5f87af, DEPTH_256), 67);
	ck_assert_uint_eq(theme_nearest(0x080808, DEPTH_256), 232);
	ck_assert_uint_eq(theme_nearest(0xeeeeee, DEPTH_256), 255);
	ck_assert_uint_eq(theme_nearest(0xff0000, DEPTH_256), 196);
	ck_assert_uint_eq(theme_nearest(0xff0000, DEPTH_16), 9);
	ck_assert_uint_eq(theme_nearest(0xff0000, DEPTH_8), 1);
	ck_assert_uint_eq(theme_nearest(0x123456, DEPTH_TRUE), COLOR_RGB | 0x123456);
	ck_assert_uint_eq(theme_nearest(0x123456, DEPTH_MONO), COLOR_DEFAULT);
	for (int i = 16; i < 256; i++)
		ck_assert_uint_eq(theme_nearest(theme_index_rgb(i), DEPTH_256), (uint32_t)i);
	ck_assert_int_eq(palette_level(-1), 0);
	ck_assert_int_eq(palette_level(NAN), 0);
	ck_assert_int_eq(palette_level(2), PALETTE_LEVELS - 1);
	ck_assert_int_eq(palette_shade(0), ' ');
	ck_assert_int_eq(palette_shade(0.001f), '.');
	ck_assert_int_eq(palette_shade(1), '@');
}
END_TEST

static const char *fake_env[8][2];

static const char *fake_getenv(const char *name)
{
	for (int i = 0; i < 8 && fake_env[i][0]; i++)
		if (!strcmp(fake_env[i][0], name))
			return fake_env[i][1];
	return NULL;
}

static enum color_depth detect(const char *term, const char *colorterm, const char *no_color)
{
	memset(fake_env, 0, sizeof fake_env);
	int n = 0;
	if (term)
		fake_env[n][0] = "TERM", fake_env[n++][1] = term;
	if (colorterm)
		fake_env[n][0] = "COLORTERM", fake_env[n++][1] = colorterm;
	if (no_color)
		fake_env[n][0] = "NO_COLOR", fake_env[n++][1] = no_color;
	return theme_detect_depth(fake_getenv);
}

START_TEST(depth_from_environment)
{
	ck_assert_int_eq(detect("xterm-256color", NULL, NULL), DEPTH_256);
	ck_assert_int_eq(detect("xterm-256color", "truecolor", NULL), DEPTH_TRUE);
	ck_assert_int_eq(detect("xterm-256color", "24bit", NULL), DEPTH_TRUE);
	ck_assert_int_eq(detect("xterm-256color", "truecolor", "1"), DEPTH_MONO);
	ck_assert_int_eq(detect("xterm-256color", NULL, ""), DEPTH_256); /* NO_COLOR must be non-empty */
	ck_assert_int_eq(detect("xterm", NULL, NULL), DEPTH_8);
	ck_assert_int_eq(detect("rxvt-16color", NULL, NULL), DEPTH_16);
	ck_assert_int_eq(detect("vt100", "truecolor", NULL), DEPTH_MONO);
	ck_assert_int_eq(detect("dumb", NULL, NULL), DEPTH_MONO);
	ck_assert_int_eq(detect(NULL, NULL, NULL), DEPTH_MONO);
}
END_TEST

START_TEST(config_settings_and_keys)
{
	struct userconf *c = malloc(sizeof *c);
	const char *yaml = "model: bert-base-uncased\n"
			   "theme: cividis\n"
			   "keys:\n"
			   "  down: [J, C-n]\n"
			   "  quit: X\n";
	ck_assert_int_eq(userconf_load_string("c.yaml", yaml, c, &e), 0);
	ck_assert_str_eq(c->model, "bert-base-uncased");
	ck_assert_str_eq(c->theme, "cividis");
	ck_assert_int_eq(keymap_lookup(&c->keys, 'J', false), ACT_DOWN);
	ck_assert_int_eq(keymap_lookup(&c->keys, KEY_CTRL('n'), false), ACT_DOWN);
	ck_assert_int_eq(keymap_lookup(&c->keys, 'j', false), ACTION_NONE);
	ck_assert_int_eq(keymap_lookup(&c->keys, 'x', false), ACT_TOKEN_CLEAR);
	ck_assert_int_eq(keymap_lookup(&c->keys, 'X', false), ACT_QUIT);

	ck_assert_int_eq(userconf_load_string("c.yaml", "keys:\n  dwn: j\n", c, &e), -1);
	ck_assert_str_eq(e.msg, "c.yaml:2:3: unknown action 'dwn' (see attnscope --help or the man page)");
	ck_assert_int_eq(userconf_load_string("c.yaml", "keys:\n  down: [j, Dwn]\n", c, &e), -1);
	ck_assert_msg(!strncmp(e.msg, "c.yaml:2:13: unknown key 'Dwn'", 30), "%s", e.msg);
	ck_assert_int_eq(userconf_load_string("c.yaml", "modle: x\n", c, &e), -1);
	ck_assert_str_eq(e.msg, "c.yaml:1:1: unknown setting 'modle' (model, theme, pixels, keys)");
	ck_assert_int_eq(userconf_load_string("c.yaml", "pixels: sixel\n", c, &e), 0);
	ck_assert_int_eq(c->pixels, USERCONF_PIXELS_SIXEL);
	ck_assert_int_eq(userconf_load_string("c.yaml", "theme: x\n", c, &e), 0);
	ck_assert_int_eq(c->pixels, USERCONF_PIXELS_UNSET);
	ck_assert_int_eq(userconf_load_string("c.yaml", "pixels: yes\n", c, &e), -1);
	ck_assert_str_eq(e.msg, "c.yaml:1:9: 'pixels' is one of off, auto, sixel, kitty");
	ck_assert_int_eq(userconf_load_string("c.yaml", "model: [a]\n", c, &e), -1);
	ck_assert_str_eq(e.msg, "c.yaml:1:8: 'model' must be a non-empty string");

	/* The default place may be absent; an explicit file may not. */
	setenv("XDG_CONFIG_HOME", "/nonexistent-dir", 1);
	ck_assert_int_eq(userconf_load(NULL, c, &e), 0);
	ck_assert_str_eq(c->model, "");
	ck_assert_int_eq(userconf_load("/nonexistent-dir/c.yaml", c, &e), -1);
	ck_assert_str_eq(e.msg, "/nonexistent-dir/c.yaml: No such file or directory");
	char buf[256];
	ck_assert_str_eq(userconf_default_path(buf, sizeof buf), "/nonexistent-dir/attnscope/config.yaml");
	unsetenv("XDG_CONFIG_HOME");
	setenv("HOME", "/home/u", 1);
	ck_assert_str_eq(userconf_default_path(buf, sizeof buf), "/home/u/.config/attnscope/config.yaml");
	free(c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("theme");
	TCase *tc = tcase_create("theme");
	tcase_add_test(tc, parses_roles_and_ramp);
	tcase_add_test(tc, errors_name_line_and_column);
	tcase_add_test(tc, shipped_themes_load);
	tcase_add_test(tc, nearest_colours);
	tcase_add_test(tc, depth_from_environment);
	tcase_add_test(tc, config_settings_and_keys);
	suite_add_tcase(s, tc);
	return testutil_run_suite(s, false);
}
