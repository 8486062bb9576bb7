/* theme.c -- reading colour themes from YAML and resolving them for a terminal's colour depth. */
#include "config.h"

#include "draw/theme.h"
#include "base/datadir.h"
#include "base/file.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

static const char *const role_names[ROLE_COUNT] = {
#define THEME_ROLE_NAME(id, name, help) name,
	THEME_ROLES(THEME_ROLE_NAME)
#undef THEME_ROLE_NAME
};
static const char *const role_helps[ROLE_COUNT] = {
#define THEME_ROLE_HELP(id, name, help) help,
	THEME_ROLES(THEME_ROLE_HELP)
#undef THEME_ROLE_HELP
};

const char *theme_role_name(enum theme_role r)
{
	return (int)r >= 0 && r < ROLE_COUNT ? role_names[r] : NULL;
}

const char *theme_role_help(enum theme_role r)
{
	return (int)r >= 0 && r < ROLE_COUNT ? role_helps[r] : NULL;
}

/* ---- colours ---- */

/* xterm's default values for the 16 system colours. */
static const uint32_t ansi16[16] = {
	0x000000, 0xcd0000, 0x00cd00, 0xcdcd00, 0x0000ee, 0xcd00cd, 0x00cdcd, 0xe5e5e5,
	0x7f7f7f, 0xff0000, 0x00ff00, 0xffff00, 0x5c5cff, 0xff00ff, 0x00ffff, 0xffffff,
};
static const char *const ansi16_names[16] = {
	"black", "red", "green", "yellow", "blue", "magenta", "cyan", "white",
	"brightblack", "brightred", "brightgreen", "brightyellow", "brightblue", "brightmagenta",
	"brightcyan", "brightwhite",
};

uint32_t theme_index_rgb(int i)
{
	if (i < 0 || i > 255)
		return 0;
	if (i < 16)
		return ansi16[i];
	if (i >= 232) {
		uint32_t g = 8 + 10 * (uint32_t)(i - 232);
		return g << 16 | g << 8 | g;
	}
	static const uint32_t level[6] = {0, 95, 135, 175, 215, 255};
	int c = i - 16;
	return level[c / 36] << 16 | level[c / 6 % 6] << 8 | level[c % 6];
}

/* "Redmean" colour distance: cheap and much closer to perception than plain RGB distance. */
static long color_distance(uint32_t a, uint32_t b)
{
	long r1 = a >> 16 & 255, g1 = a >> 8 & 255, b1 = a & 255;
	long r2 = b >> 16 & 255, g2 = b >> 8 & 255, b2 = b & 255;
	long rm = (r1 + r2) / 2, dr = r1 - r2, dg = g1 - g2, db = b1 - b2;
	return ((512 + rm) * dr * dr >> 8) + 4 * dg * dg + ((767 - rm) * db * db >> 8);
}

static int nearest_in(uint32_t rgb, int from, int to)
{
	int best = from;
	long best_d = -1;
	for (int i = from; i < to; i++) {
		long d = color_distance(rgb, theme_index_rgb(i));
		if (best_d < 0 || d < best_d) {
			best_d = d;
			best = i;
		}
	}
	return best;
}

uint32_t theme_nearest(uint32_t rgb, enum color_depth depth)
{
	rgb &= 0xffffff;
	switch (depth) {
	case DEPTH_TRUE:
		return COLOR_RGB | rgb;
	case DEPTH_256:
		/* 16..255 only: the first 16 are often redefined by the user's terminal palette. */
		return (uint32_t)nearest_in(rgb, 16, 256);
	case DEPTH_16:
		return (uint32_t)nearest_in(rgb, 0, 16);
	case DEPTH_8:
		return (uint32_t)nearest_in(rgb, 0, 8);
	case DEPTH_MONO:
		break;
	}
	return COLOR_DEFAULT;
}

/* A theme colour (default, index or RGB) as the palette of DEPTH shows it. */
static uint32_t resolve_color(uint32_t c, enum color_depth depth)
{
	if (c == COLOR_DEFAULT || depth == DEPTH_MONO)
		return COLOR_DEFAULT;
	if (COLOR_IS_RGB(c))
		return theme_nearest(c, depth);
	int limit = depth == DEPTH_8 ? 8 : depth == DEPTH_16 ? 16 : 256;
	if ((int)c < limit)
		return c;
	return theme_nearest(theme_index_rgb((int)c), depth);
}

static uint32_t color_rgb(uint32_t c)
{
	return COLOR_IS_RGB(c) ? c & 0xffffff : theme_index_rgb((int)(c & 255));
}

int palette_level(float v)
{
	if (!(v > 0)) /* also NaN */
		return 0;
	if (v >= 1)
		return PALETTE_LEVELS - 1;
	return (int)(v * (PALETTE_LEVELS - 1) + 0.5f);
}

char palette_shade(float v)
{
	static const char shades[] = " .:-=+*#%@";
	int n = (int)sizeof shades - 1;
	if (!(v > 0))
		return shades[0];
	/* 0 stays blank; anything above gets at least a dot so that "small" and "none" differ. */
	int i = 1 + (int)(v * (n - 1));
	return shades[i < n ? i : n - 1];
}

static uint32_t ramp_at(const uint32_t *ramp, int n, float v)
{
	float p = v * (float)(n - 1);
	int i = (int)p;
	if (i >= n - 1)
		return ramp[n - 1] & 0xffffff;
	float f = p - (float)i;
	uint32_t a = ramp[i], b = ramp[i + 1], out = 0;
	for (int sh = 0; sh <= 16; sh += 8) {
		float ca = (float)(a >> sh & 255), cb = (float)(b >> sh & 255);
		out |= (uint32_t)(ca + (cb - ca) * f + 0.5f) << sh;
	}
	return out;
}

static double luminance(uint32_t rgb)
{
	return (0.2126 * (rgb >> 16 & 255) + 0.7152 * (rgb >> 8 & 255) + 0.0722 * (rgb & 255)) / 255.0;
}

/* Colours of the PALETTE_LEVELS levels of the ramp RAMP[n] (or, at 16/8 colours, R16[n16] when
 * given) for DEPTH, with readable text on each. */
static void resolve_ramp(const uint32_t *ramp, int n, const uint8_t *r16, int n16, enum color_depth depth,
			 uint32_t *heat, uint32_t *text, uint32_t *exact)
{
	for (int l = 0; l < PALETTE_LEVELS; l++) {
		float v = (float)l / (PALETTE_LEVELS - 1);
		uint32_t rgb = ramp_at(ramp, n, v), c;
		exact[l] = rgb & 0xffffff;
		if (depth == DEPTH_MONO) {
			heat[l] = text[l] = COLOR_DEFAULT;
			continue;
		}
		if ((depth == DEPTH_16 || depth == DEPTH_8) && n16 > 0) {
			int i = (int)(v * (float)n16);
			if (i >= n16)
				i = n16 - 1;
			c = r16[i];
			if (depth == DEPTH_8 && c >= 8)
				c -= 8;
		} else {
			c = theme_nearest(rgb, depth);
		}
		heat[l] = c;
		bool dark_text = luminance(color_rgb(c)) > 0.5;
		if (depth == DEPTH_TRUE)
			text[l] = COLOR_RGB | (dark_text ? 0x000000 : 0xffffff);
		else if (depth == DEPTH_256)
			text[l] = dark_text ? 16 : 231;
		else
			text[l] = dark_text ? 0 : 7;
	}
}

void theme_resolve(const struct theme *th, enum color_depth depth, bool utf8, struct palette *pal)
{
	memset(pal, 0, sizeof *pal);
	pal->depth = depth;
	pal->utf8 = utf8;
	pal->light = th->light;
	for (int r = 0; r < ROLE_COUNT; r++) {
		const struct theme_role_spec *s = &th->role[r];
		struct style *st = &pal->role[r];
		if (depth == DEPTH_MONO) {
			st->fg = st->bg = COLOR_DEFAULT;
			st->attr = s->mono_set ? s->mono
					       : (uint16_t)(s->attr | (s->bg != COLOR_DEFAULT ? ATTR_REVERSE : 0));
		} else {
			st->fg = resolve_color(s->fg, depth);
			st->bg = resolve_color(s->bg, depth);
			st->attr = s->attr;
		}
	}
	resolve_ramp(th->ramp, th->n_ramp, th->ramp16, th->n_ramp16, depth, pal->heat, pal->heat_text, pal->heat_rgb);
	/* The diverging ramp: the theme's, else blue → the background → red. */
	static const uint32_t dark[] = {COLOR_RGB | 0x4393c3, COLOR_RGB | 0x1c1c1c, COLOR_RGB | 0xd6604d};
	static const uint32_t light[] = {COLOR_RGB | 0x2166ac, COLOR_RGB | 0xf7f7f7, COLOR_RGB | 0xb2182b};
	static const uint8_t div16[] = {12, 4, 0, 1, 9}, div16_light[] = {4, 12, 15, 9, 1};
	if (th->n_diverging)
		resolve_ramp(th->diverging, th->n_diverging, NULL, 0, depth, pal->div, pal->div_text, pal->div_rgb);
	else
		resolve_ramp(th->light ? light : dark, 3, th->light ? div16_light : div16, 5, depth, pal->div, pal->div_text, pal->div_rgb);
}

char palette_shade_diverging(float v)
{
	float d = 2 * v - 1;
	return d <= -0.25f ? '=' : d < -0.02f ? '-' : d < 0.02f ? ' ' : d < 0.25f ? '+' : '#';
}

void palette_diverging(const struct palette *pal, struct palette *out)
{
	*out = *pal;
	out->diverging = true;
	memcpy(out->heat, pal->div, sizeof out->heat);
	memcpy(out->heat_text, pal->div_text, sizeof out->heat_text);
	memcpy(out->heat_rgb, pal->div_rgb, sizeof out->heat_rgb);
}

enum color_depth theme_detect_depth(const char *(*getenv_fn)(const char *))
{
	const char *no_color = getenv_fn("NO_COLOR");
	if (no_color && *no_color)
		return DEPTH_MONO;
	const char *term = getenv_fn("TERM");
	if (!term || !*term || !strcmp(term, "dumb") || !strncmp(term, "vt1", 3) || !strncmp(term, "vt2", 3))
		return DEPTH_MONO;
	const char *ct = getenv_fn("COLORTERM");
	if (ct && (!strcmp(ct, "truecolor") || !strcmp(ct, "24bit")))
		return DEPTH_TRUE;
	if (strstr(term, "direct"))
		return DEPTH_TRUE;
	if (strstr(term, "256color"))
		return DEPTH_256;
	if (strstr(term, "16color"))
		return DEPTH_16;
	return DEPTH_8;
}

/* ---- YAML ---- */

struct theme_parse {
	const char *file;
	yaml_document_t *doc;
	struct err *e;
};

static int parse_fail(struct theme_parse *p, const yaml_node_t *n, const char *fmt, const char *arg)
{
	char msg[256];
	snprintf(msg, sizeof msg, fmt, arg ? arg : "");
	return err_set(p->e, "%s:%zu:%zu: %s", p->file, n->start_mark.line + 1, n->start_mark.column + 1, msg);
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int parse_color(struct theme_parse *p, const yaml_node_t *n, uint32_t *out)
{
	const char *s = scalar(n);
	if (!s)
		return parse_fail(p, n, "expected a colour (#rrggbb, a colour name, 0-255 or default)%s", "");
	if (!strcasecmp(s, "default") || !strcasecmp(s, "none")) {
		*out = COLOR_DEFAULT;
		return 0;
	}
	if (s[0] == '#') {
		size_t len = strlen(s + 1);
		char *end;
		unsigned long v = strtoul(s + 1, &end, 16);
		if (*end || (len != 6 && len != 3))
			return parse_fail(p, n, "bad colour '%s': expected #rrggbb or #rgb", s);
		if (len == 3)
			v = (v >> 8 & 15) * 0x110000 + (v >> 4 & 15) * 0x1100 + (v & 15) * 0x11;
		*out = COLOR_RGB | (uint32_t)v;
		return 0;
	}
	if (s[0] >= '0' && s[0] <= '9') {
		char *end;
		long v = strtol(s, &end, 10);
		if (*end || v < 0 || v > 255)
			return parse_fail(p, n, "bad colour '%s': a palette index is 0-255", s);
		*out = (uint32_t)v;
		return 0;
	}
	for (int i = 0; i < 16; i++) {
		if (!strcasecmp(s, ansi16_names[i])) {
			*out = (uint32_t)i;
			return 0;
		}
	}
	if (!strcasecmp(s, "gray") || !strcasecmp(s, "grey")) {
		*out = 8;
		return 0;
	}
	return parse_fail(p, n, "unknown colour '%s'", s);
}

static int parse_attrs(struct theme_parse *p, const yaml_node_t *n, uint16_t *out)
{
	static const struct { const char *name; uint16_t bit; } names[] = {
		{"bold", ATTR_BOLD}, {"dim", ATTR_DIM}, {"underline", ATTR_UNDERLINE}, {"reverse", ATTR_REVERSE},
	};
	*out = 0;
	if (n->type != YAML_SEQUENCE_NODE)
		return parse_fail(p, n, "expected a list of attributes (bold, dim, underline, reverse)%s", "");
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		const yaml_node_t *a = yaml_document_get_node(p->doc, *it);
		const char *s = scalar(a);
		size_t k;
		for (k = 0; k < sizeof names / sizeof names[0]; k++)
			if (s && !strcmp(s, names[k].name))
				break;
		if (k == sizeof names / sizeof names[0])
			return parse_fail(p, a, "unknown attribute '%s' (bold, dim, underline, reverse)", s ? s : "?");
		*out |= names[k].bit;
	}
	return 0;
}

static int parse_role(struct theme_parse *p, const yaml_node_t *n, struct theme_role_spec *r)
{
	if (n->type != YAML_MAPPING_NODE)
		return parse_fail(p, n, "expected a mapping with fg, bg, attrs, mono%s", "");
	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top; pr++) {
		const yaml_node_t *k = yaml_document_get_node(p->doc, pr->key);
		const yaml_node_t *v = yaml_document_get_node(p->doc, pr->value);
		const char *key = scalar(k);
		int rc;
		if (key && !strcmp(key, "fg"))
			rc = parse_color(p, v, &r->fg);
		else if (key && !strcmp(key, "bg"))
			rc = parse_color(p, v, &r->bg);
		else if (key && !strcmp(key, "attrs"))
			rc = parse_attrs(p, v, &r->attr);
		else if (key && !strcmp(key, "mono")) {
			rc = parse_attrs(p, v, &r->mono);
			r->mono_set = true;
		} else
			rc = parse_fail(p, k, "unknown key '%s' (fg, bg, attrs, mono)", key ? key : "?");
		if (rc)
			return rc;
	}
	return 0;
}

static int parse_roles(struct theme_parse *p, const yaml_node_t *n, struct theme *th)
{
	if (n->type != YAML_MAPPING_NODE)
		return parse_fail(p, n, "'roles' must be a mapping of role names%s", "");
	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top; pr++) {
		const yaml_node_t *k = yaml_document_get_node(p->doc, pr->key);
		const char *key = scalar(k);
		int r;
		for (r = 0; r < ROLE_COUNT; r++)
			if (key && !strcmp(key, role_names[r]))
				break;
		if (r == ROLE_COUNT)
			return parse_fail(p, k, "unknown role '%s'", key ? key : "?");
		/* A role given in the file replaces the built-in attributes entirely. */
		struct theme_role_spec spec = {COLOR_DEFAULT, COLOR_DEFAULT, 0, 0, false};
		if (parse_role(p, yaml_document_get_node(p->doc, pr->value), &spec))
			return -1;
		th->role[r] = spec;
	}
	return 0;
}

/* A list of colour stops (the key NAME: ramp or diverging) into STOPS, *COUNT of them. */
static int parse_ramp(struct theme_parse *p, const yaml_node_t *n, const char *name, uint32_t *stops, int *out_n)
{
	if (n->type != YAML_SEQUENCE_NODE)
		return parse_fail(p, n, "'%s' must be a list of colours, low to high", name);
	int count = (int)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (count < 2 || count > THEME_RAMP_MAX) {
		char msg[64];
		snprintf(msg, sizeof msg, "%s' needs 2 to %d", name, THEME_RAMP_MAX);
		return parse_fail(p, n, "'%s colours", msg);
	}
	*out_n = 0;
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		const yaml_node_t *c = yaml_document_get_node(p->doc, *it);
		uint32_t col;
		if (parse_color(p, c, &col))
			return -1;
		if (col == COLOR_DEFAULT)
			return parse_fail(p, c, "a ramp colour cannot be 'default'%s", "");
		stops[(*out_n)++] = COLOR_IS_RGB(col) ? col : COLOR_RGB | theme_index_rgb((int)col);
	}
	return 0;
}

static int parse_ramp16(struct theme_parse *p, const yaml_node_t *n, struct theme *th)
{
	if (n->type != YAML_SEQUENCE_NODE)
		return parse_fail(p, n, "'ramp16' must be a list of colour names or indices 0-15%s", "");
	int count = (int)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (count < 2 || count > 16)
		return parse_fail(p, n, "'ramp16' needs 2 to 16 colours%s", "");
	th->n_ramp16 = 0;
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		const yaml_node_t *c = yaml_document_get_node(p->doc, *it);
		uint32_t col;
		if (parse_color(p, c, &col))
			return -1;
		if (COLOR_IS_RGB(col) || col == COLOR_DEFAULT || col > 15)
			return parse_fail(p, c, "'ramp16' takes the 16 system colours only (names or 0-15)%s", "");
		th->ramp16[th->n_ramp16++] = (uint8_t)col;
	}
	return 0;
}

/* Attributes every theme starts with, so that monochrome terminals still show selection and focus. */
static void theme_defaults(struct theme *th)
{
	memset(th, 0, sizeof *th);
	for (int r = 0; r < ROLE_COUNT; r++)
		th->role[r] = (struct theme_role_spec){COLOR_DEFAULT, COLOR_DEFAULT, 0, 0, false};
	th->role[ROLE_TITLE].attr = ATTR_BOLD;
	th->role[ROLE_LABEL_SEL].attr = ATTR_REVERSE;
	th->role[ROLE_SELECTED].attr = ATTR_BOLD;
	th->role[ROLE_CURSOR].attr = ATTR_REVERSE | ATTR_BOLD;
	th->role[ROLE_SPECIAL].attr = ATTR_UNDERLINE;
	th->role[ROLE_TOKEN_SEL].attr = ATTR_REVERSE;
	th->role[ROLE_STATUS].attr = ATTR_REVERSE;
	th->role[ROLE_STATUS_KEY].attr = ATTR_REVERSE | ATTR_BOLD;
	th->role[ROLE_ERROR].attr = ATTR_BOLD;
	th->role[ROLE_HELP_KEY].attr = ATTR_BOLD;
	th->role[ROLE_INPUT_LABEL].attr = ATTR_BOLD;
	th->role[ROLE_DIM].attr = ATTR_DIM;
	th->ramp[0] = COLOR_RGB | 0x000000;
	th->ramp[1] = COLOR_RGB | 0xffffff;
	th->n_ramp = 2;
}

static int theme_from_document(struct theme_parse *p, struct theme *th)
{
	const yaml_node_t *root = yaml_document_get_root_node(p->doc);
	if (!root)
		return err_set(p->e, "%s:1:1: empty theme file", p->file);
	if (root->type != YAML_MAPPING_NODE)
		return parse_fail(p, root, "a theme is a mapping (name, ramp, roles, …)%s", "");
	bool have_ramp = false;
	for (yaml_node_pair_t *pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top; pr++) {
		const yaml_node_t *k = yaml_document_get_node(p->doc, pr->key);
		const yaml_node_t *v = yaml_document_get_node(p->doc, pr->value);
		const char *key = scalar(k);
		if (key && !strcmp(key, "name")) {
			if (!scalar(v))
				return parse_fail(p, v, "'name' must be a string%s", "");
			snprintf(th->name, sizeof th->name, "%s", scalar(v));
		} else if (key && !strcmp(key, "description")) {
			if (!scalar(v))
				return parse_fail(p, v, "'description' must be a string%s", "");
			snprintf(th->description, sizeof th->description, "%s", scalar(v));
		} else if (key && !strcmp(key, "background")) {
			const char *s = scalar(v);
			if (!s || (strcmp(s, "dark") && strcmp(s, "light")))
				return parse_fail(p, v, "'background' is dark or light%s", "");
			th->light = !strcmp(s, "light");
		} else if (key && !strcmp(key, "ramp")) {
			if (parse_ramp(p, v, "ramp", th->ramp, &th->n_ramp))
				return -1;
			have_ramp = true;
		} else if (key && !strcmp(key, "diverging")) {
			if (parse_ramp(p, v, "diverging", th->diverging, &th->n_diverging))
				return -1;
		} else if (key && !strcmp(key, "ramp16")) {
			if (parse_ramp16(p, v, th))
				return -1;
		} else if (key && !strcmp(key, "roles")) {
			if (parse_roles(p, v, th))
				return -1;
		} else {
			return parse_fail(p, k, "unknown key '%s' (name, description, background, ramp, ramp16, diverging, roles)",
					  key ? key : "?");
		}
	}
	if (!have_ramp)
		return parse_fail(p, root, "the theme has no 'ramp'%s", "");
	return 0;
}

int theme_load_string(const char *name, const char *text, struct theme *th, struct err *e)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	struct theme_parse p = {name, &doc, e};
	if (!yaml_parser_initialize(&parser))
		return err_set(e, "%s: out of memory", name);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
	if (!yaml_parser_load(&parser, &doc)) {
		const yaml_mark_t *m = parser.problem ? &parser.problem_mark : &parser.mark;
		err_set(e, "%s:%zu:%zu: %s%s%s", name, m->line + 1, m->column + 1,
			parser.problem ? parser.problem : "cannot parse YAML", parser.context ? " " : "",
			parser.context ? parser.context : "");
		yaml_parser_delete(&parser);
		return -1;
	}
	theme_defaults(th);
	int rc = theme_from_document(&p, th);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return rc;
}

int theme_load_file(const char *path, struct theme *th, struct err *e)
{
	char *buf;
	size_t len;
	if (file_read_all(path, THEME_MAX_FILE, FILE_READ_ANY | FILE_READ_TEXT, &buf, &len, e) < 0)
		return -1;
	int rc = theme_load_string(path, buf, th, e);
	free(buf);
	return rc;
}

int theme_load(const char *name_or_file, struct theme *th, struct err *e)
{
	size_t len = strlen(name_or_file);
	if (strchr(name_or_file, '/') || (len > 5 && !strcmp(name_or_file + len - 5, ".yaml")))
		return theme_load_file(name_or_file, th, e);
	if (!len)
		return err_set(e, "empty theme name");
	char path[4096];
	if (!datadir_yaml(path, sizeof path, "themes", name_or_file))
		return err_set(e, "theme '%s' not found (looked for %s)", name_or_file, path);
	return theme_load_file(path, th, e);
}
