/* fuzz_yaml.c -- libFuzzer target: the YAML attnscope reads: colour themes, the user's config file
 * and family descriptions.
 *
 * Input: a selector byte (mod 3: theme, config, family), then the YAML text (up to the first NUL,
 * as the file readers refuse NUL bytes). A theme that loads is resolved for every colour depth
 * and its palette checked; a config that loads has every key binding described; a family goes
 * through family_load_file from the scratch folder. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/family.h"
#include "fuzz-common.h"
#include "draw/theme.h"
#include "tui/userconf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_theme(const char *text)
{
	struct theme th;
	struct err e = {{0}};
	if (theme_load_string("fuzz.yaml", text, &th, &e) < 0) {
		fuzz_check_message("theme_load_string", &e);
		return;
	}
	if (th.n_ramp < 2 || th.n_ramp > THEME_RAMP_MAX || th.n_ramp16 < 0 || th.n_ramp16 > 16)
		fuzz_fail("theme with %d ramp stops and %d 16-colour stops", th.n_ramp, th.n_ramp16);
	for (int d = DEPTH_MONO; d <= DEPTH_TRUE; d++) {
		struct palette pal;
		theme_resolve(&th, (enum color_depth)d, d & 1, &pal);
		for (int i = 0; i < PALETTE_LEVELS; i++) {
			uint32_t c = pal.heat[i];
			if (d != DEPTH_TRUE && d != DEPTH_MONO && c != COLOR_DEFAULT && c > 255)
				fuzz_fail("depth %d: heat level %d is colour 0x%x", d, i, c);
		}
	}
}

static void fuzz_userconf(const char *text)
{
	struct userconf *c = malloc(sizeof *c);
	struct err e = {{0}};
	if (userconf_load_string("config.yaml", text, c, &e) < 0) {
		fuzz_check_message("userconf_load_string", &e);
	} else {
		char buf[256];
		for (int a = 0; a < ACTION_COUNT; a++)
			keymap_describe(&c->keys, (enum action)a, buf, sizeof buf);
		if (c->keys.n < 0 || c->keys.n > KEYMAP_MAX)
			fuzz_fail("keymap of %d entries", c->keys.n);
	}
	free(c);
}

static void fuzz_family(const char *text, size_t len)
{
	fuzz_write("family.yaml", text, len);
	char path[512];
	snprintf(path, sizeof path, "%s/family.yaml", fuzz_dir());
	struct family *f = malloc(sizeof *f);
	struct err e = {{0}};
	if (family_load_file(path, f, &e) < 0)
		fuzz_check_message("family_load_file", &e);
	else
		family_free(f);
	free(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	fuzz_datadir();
	char *text = malloc(size);
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	switch (data[0] % 3) {
	case 0:
		fuzz_theme(text);
		break;
	case 1:
		fuzz_userconf(text);
		break;
	default:
		fuzz_family(text, strlen(text));
		break;
	}
	free(text);
	return 0;
}
