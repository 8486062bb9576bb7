/* theme.h -- colour themes: roles and a heatmap ramp read from YAML, resolved to what a terminal can show.
 *
 * A theme names colours for each role (status bar, labels, cursor, …) and a ramp of colour stops for
 * heatmaps. A palette is a theme resolved for one colour depth: truecolor keeps RGB, 256 and 16/8
 * colours pick the nearest palette entry, monochrome keeps only attributes and draws heatmaps with
 * shade characters. Views never see RGB directly; they ask the palette. */
#ifndef ATTNSCOPE_THEME_H
#define ATTNSCOPE_THEME_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"

/* Every role a view may draw with: X(id, yaml name, what it is for). */
#define THEME_ROLES(X)                                                          \
	X(ROLE_TEXT, "text", "ordinary text")                                   \
	X(ROLE_DIM, "dim", "secondary text, separators, subword joiners")       \
	X(ROLE_TITLE, "title", "view titles")                                   \
	X(ROLE_LABEL, "label", "axis labels and numbers")                       \
	X(ROLE_LABEL_SEL, "label-selected", "the label of the selected row/column") \
	X(ROLE_SELECTED, "selected", "frame around the selected head")          \
	X(ROLE_CURSOR, "cursor", "the heatmap cell cursor")                     \
	X(ROLE_QUERY, "query", "query tokens (heatmap rows)")                   \
	X(ROLE_KEY, "key", "key tokens (heatmap columns)")                      \
	X(ROLE_SPECIAL, "special", "special tokens such as [CLS], [SEP]")       \
	X(ROLE_TOKEN_SEL, "token-selected", "the selected token in every view") \
	X(ROLE_TOKEN_ID, "token-id", "token ids under the token strip")         \
	X(ROLE_INPUT, "input", "the text input line")                           \
	X(ROLE_INPUT_LABEL, "input-label", "the label before an input line")    \
	X(ROLE_STATUS, "status", "the status bar")                              \
	X(ROLE_STATUS_KEY, "status-key", "key names in the status bar")         \
	X(ROLE_ERROR, "error", "error messages")                                \
	X(ROLE_PANEL, "panel", "side panel text")                               \
	X(ROLE_HELP_KEY, "help-key", "key names on the help screen")

enum theme_role {
#define THEME_ROLE_ENUM(id, name, help) id,
	THEME_ROLES(THEME_ROLE_ENUM)
#undef THEME_ROLE_ENUM
	ROLE_COUNT
};

/* Colour depths, from least to most. */
enum color_depth { DEPTH_MONO, DEPTH_8, DEPTH_16, DEPTH_256, DEPTH_TRUE };

/* A colour as a theme or a cell holds it. Palette indices 0..255 are plain numbers;
 * COLOR_RGB marks a 24-bit colour in the low bits; COLOR_DEFAULT is the terminal's own. */
#define COLOR_DEFAULT 0xff000000u
#define COLOR_RGB 0x01000000u
#define COLOR_IS_RGB(c) (((c) & 0xff000000u) == COLOR_RGB)

/* Text attributes (bit set). */
enum {
	ATTR_BOLD = 1,
	ATTR_DIM = 2,
	ATTR_UNDERLINE = 4,
	ATTR_REVERSE = 8,
};

struct style {
	uint32_t fg, bg; /* COLOR_DEFAULT, a palette index or COLOR_RGB|rgb */
	uint16_t attr;   /* ATTR_* */
};

#define THEME_RAMP_MAX 32
#define THEME_MAX_FILE (1 << 20) /* bytes; real themes are a few KB */
#define THEME_NAME_MAX 64

struct theme_role_spec {
	uint32_t fg, bg;   /* as written in the theme */
	uint16_t attr;     /* attributes in colour modes */
	uint16_t mono;     /* attributes in monochrome (default: attr, plus reverse when bg is set) */
	bool mono_set;
};

struct theme {
	char name[THEME_NAME_MAX];
	char description[128];
	bool light;                          /* made for light terminal backgrounds */
	struct theme_role_spec role[ROLE_COUNT];
	uint32_t ramp[THEME_RAMP_MAX];       /* [n_ramp] COLOR_RGB stops, low to high, >= 2 */
	int n_ramp;
	uint8_t ramp16[16];                  /* [n_ramp16] palette indices 0..15 for 16/8-colour heatmaps */
	int n_ramp16;                        /* 0: nearest colours of the ramp */
	uint32_t diverging[THEME_RAMP_MAX];  /* [n_diverging] COLOR_RGB stops for signed differences, from
	                                      * -1 through 0 (the middle) to +1; 0: the default for the
	                                      * background (blue, background-like, red) */
	int n_diverging;
};

#define PALETTE_LEVELS 256

/* A theme resolved for one terminal. */
struct palette {
	enum color_depth depth;
	bool utf8;                            /* the locale can show block and box glyphs */
	bool light;                           /* the theme is made for a light background (what the
	                                       * terminal's default colours stand for in an SVG) */
	struct style role[ROLE_COUNT];
	uint32_t heat[PALETTE_LEVELS];        /* [level] cell colour for value level/(LEVELS-1) */
	uint32_t heat_text[PALETTE_LEVELS];   /* [level] black or white text readable on heat[level] */
	uint32_t div[PALETTE_LEVELS];         /* [level] the diverging ramp: level 0 = -1, the middle 0, top +1 */
	uint32_t div_text[PALETTE_LEVELS];
	uint32_t heat_rgb[PALETTE_LEVELS];    /* [level] the ramp's exact colour 0xrrggbb, whatever the depth
	                                       * (pixel images draw it) */
	uint32_t div_rgb[PALETTE_LEVELS];
	bool diverging;                       /* heat holds the diverging ramp (palette_diverging) */
};

/* Names of the roles, NULL past the end (for the man page and the theme parser). */
const char *theme_role_name(enum theme_role r);
const char *theme_role_help(enum theme_role r);

/* Parse the YAML theme in PATH. Errors read "PATH:LINE:COLUMN: message". */
int theme_load_file(const char *path, struct theme *th, struct err *e);
/* Parse a theme from memory; NAME is used in error messages instead of a path. */
int theme_load_string(const char *name, const char *text, struct theme *th, struct err *e);
/* NAME_OR_FILE containing a '/' or ending in .yaml is a file; otherwise
 * DATADIR/themes/NAME.yaml (base/datadir.h). */
int theme_load(const char *name_or_file, struct theme *th, struct err *e);

/* Resolve TH for DEPTH. */
void theme_resolve(const struct theme *th, enum color_depth depth, bool utf8, struct palette *pal);

/* Colour depth the environment asks for: NO_COLOR → mono, TERM unset/dumb/vt100 → mono,
 * COLORTERM=truecolor|24bit → true, TERM *256color* → 256, TERM *16color* → 16, otherwise 8.
 * GETENV is getenv in the program and a fake in tests. */
enum color_depth theme_detect_depth(const char *(*getenv_fn)(const char *));

/* The xterm RGB value of palette index I (0..255). */
uint32_t theme_index_rgb(int i);
/* The palette colour nearest RGB for DEPTH (an index, or COLOR_RGB|rgb for DEPTH_TRUE). */
uint32_t theme_nearest(uint32_t rgb, enum color_depth depth);

/* Value V in [0,1] (clamped; NaN → 0) to a heat level 0..PALETTE_LEVELS-1. */
int palette_level(float v);
/* The shade character for V in monochrome: one of " .:-=+*#%@". */
char palette_shade(float v);
/* The monochrome character for position V of a diverging ramp (d = 2V − 1): ' ' near 0, '-' and
 * '=' below, '+' and '#' above. */
char palette_shade_diverging(float v);
/* PAL with its diverging ramp in place of the heatmap ramp (OUT): draw a signed difference d in
 * [-1, 1] at position (d + 1) / 2 through a canvas using it. */
void palette_diverging(const struct palette *pal, struct palette *out);

#endif
