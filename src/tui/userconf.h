/* userconf.h -- the user's configuration file: default model, theme and key overrides.
 *
 * $XDG_CONFIG_HOME/attnscope/config.yaml (default ~/.config/attnscope/config.yaml):
 *
 *   model: bert-base-uncased     # used when -m is not given
 *   theme: cividis               # a name from the themes folder or a file
 *   pixels: auto                 # pixel heatmaps: off (default), auto, sixel or kitty
 *   keys:                        # action name: a key or a list of keys
 *     down: [j, Down, C-n]
 *     quit: Q
 *
 * A missing file at the default place is not an error. Errors read "FILE:LINE:COLUMN: message". */
#ifndef ATTNSCOPE_USERCONF_H
#define ATTNSCOPE_USERCONF_H

#include <limits.h>

#include "views/actions.h"
#include "base/err.h"

#define USERCONF_MAX_FILE (1 << 20) /* bytes */

/* Pixel heatmaps: not set, off, asked of the terminal, or a protocol used without asking. */
enum userconf_pixels { USERCONF_PIXELS_UNSET, USERCONF_PIXELS_OFF, USERCONF_PIXELS_AUTO, USERCONF_PIXELS_SIXEL,
		       USERCONF_PIXELS_KITTY };
/* The setting named S ("off", "auto", "sixel", "kitty"); USERCONF_PIXELS_UNSET when S is none of them. */
enum userconf_pixels userconf_pixels_parse(const char *s);

struct userconf {
	char path[PATH_MAX];   /* the file that was read, "" when none */
	char model[1024];      /* "" when not set */
	char theme[1024];      /* "" when not set */
	enum userconf_pixels pixels; /* pixel heatmaps (graphics.h); USERCONF_PIXELS_UNSET when not set */
	struct keymap keys;    /* default bindings with the file's overrides applied */
};

/* The default location into BUF; NULL when neither XDG_CONFIG_HOME nor HOME is set. */
const char *userconf_default_path(char *buf, size_t n);
/* Read PATH (NULL: the default location, silently absent) into C. */
int userconf_load(const char *path, struct userconf *c, struct err *e);
/* Parse TEXT as if read from NAME. */
int userconf_load_string(const char *name, const char *text, struct userconf *c, struct err *e);

#endif
