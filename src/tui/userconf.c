/* userconf.c -- reading the user's config.yaml (see userconf.h). */
#include "config.h"

#include "tui/userconf.h"
#include "base/file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

const char *userconf_default_path(char *buf, size_t n)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	if (xdg && *xdg)
		snprintf(buf, n, "%s/attnscope/config.yaml", xdg);
	else if (home && *home)
		snprintf(buf, n, "%s/.config/attnscope/config.yaml", home);
	else
		return NULL;
	return buf;
}

static int fail(struct err *e, const char *name, const yaml_node_t *n, const char *msg)
{
	return err_set(e, "%s:%zu:%zu: %s", name, n->start_mark.line + 1, n->start_mark.column + 1, msg);
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int parse_keys(const char *name, yaml_document_t *doc, const yaml_node_t *map, struct userconf *c,
		      struct err *e)
{
	if (map->type != YAML_MAPPING_NODE)
		return fail(e, name, map, "'keys' must map action names to a key or a list of keys");
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(doc, p->key);
		const yaml_node_t *v = yaml_document_get_node(doc, p->value);
		const char *action_name = scalar(k);
		enum action a = action_name ? action_by_name(action_name) : ACTION_NONE;
		if (a == ACTION_NONE) {
			char msg[160];
			snprintf(msg, sizeof msg, "unknown action '%s' (see attnscope --help or the man page)",
				 action_name ? action_name : "?");
			return fail(e, name, k, msg);
		}
		int keys[16], nk = 0;
		const yaml_node_t *items[16];
		int ni = 0;
		if (v->type == YAML_SCALAR_NODE) {
			items[ni++] = v;
		} else if (v->type == YAML_SEQUENCE_NODE) {
			for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
				if (ni == 16)
					return fail(e, name, v, "at most 16 keys per action");
				items[ni++] = yaml_document_get_node(doc, *it);
			}
		} else {
			return fail(e, name, v, "expected a key or a list of keys");
		}
		for (int i = 0; i < ni; i++) {
			const char *ks = scalar(items[i]);
			struct err ke = {{0}};
			if (!ks)
				return fail(e, name, items[i], "expected a key name");
			if (action_key_parse(ks, &keys[nk], &ke))
				return fail(e, name, items[i], ke.msg);
			nk++;
		}
		if (keymap_bind(&c->keys, a, keys, nk, e))
			return err_prefix(e, "%s", name);
	}
	return 0;
}

enum userconf_pixels userconf_pixels_parse(const char *s)
{
	static const char *const names[] = {"off", "auto", "sixel", "kitty"};
	for (int i = 0; i < 4; i++)
		if (!strcmp(s, names[i]))
			return (enum userconf_pixels)(USERCONF_PIXELS_OFF + i);
	return USERCONF_PIXELS_UNSET;
}

int userconf_load_string(const char *name, const char *text, struct userconf *c, struct err *e)
{
	memset(c, 0, sizeof *c);
	keymap_init(&c->keys);
	snprintf(c->path, sizeof c->path, "%s", name);
	yaml_parser_t parser;
	yaml_document_t doc;
	if (!yaml_parser_initialize(&parser))
		return err_set(e, "%s: out of memory", name);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
	if (!yaml_parser_load(&parser, &doc)) {
		const yaml_mark_t *m = parser.problem ? &parser.problem_mark : &parser.mark;
		err_set(e, "%s:%zu:%zu: %s", name, m->line + 1, m->column + 1,
			parser.problem ? parser.problem : "cannot parse YAML");
		yaml_parser_delete(&parser);
		return -1;
	}
	int rc = 0;
	const yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (root && root->type != YAML_MAPPING_NODE) {
		rc = fail(e, name, root, "the config file is a mapping (model, theme, pixels, keys)");
	} else if (root) {
		for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top && !rc; p++) {
			const yaml_node_t *k = yaml_document_get_node(&doc, p->key);
			const yaml_node_t *v = yaml_document_get_node(&doc, p->value);
			const char *key = scalar(k);
			if (key && (!strcmp(key, "model") || !strcmp(key, "theme"))) {
				if (!scalar(v) || !*scalar(v)) {
					char msg[64];
					snprintf(msg, sizeof msg, "'%s' must be a non-empty string", key);
					rc = fail(e, name, v, msg);
				} else if (!strcmp(key, "model")) {
					snprintf(c->model, sizeof c->model, "%s", scalar(v));
				} else {
					snprintf(c->theme, sizeof c->theme, "%s", scalar(v));
				}
			} else if (key && !strcmp(key, "pixels")) {
				c->pixels = scalar(v) ? userconf_pixels_parse(scalar(v)) : USERCONF_PIXELS_UNSET;
				if (c->pixels == USERCONF_PIXELS_UNSET)
					rc = fail(e, name, v, "'pixels' is one of off, auto, sixel, kitty");
			} else if (key && !strcmp(key, "keys")) {
				rc = parse_keys(name, &doc, v, c, e);
			} else {
				char msg[160];
				snprintf(msg, sizeof msg, "unknown setting '%s' (model, theme, pixels, keys)", key ? key : "?");
				rc = fail(e, name, k, msg);
			}
		}
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return rc;
}

int userconf_load(const char *path, struct userconf *c, struct err *e)
{
	char def[PATH_MAX];
	bool optional = !path;
	memset(c, 0, sizeof *c);
	keymap_init(&c->keys);
	if (!path && !(path = userconf_default_path(def, sizeof def)))
		return 0;
	char *buf;
	size_t len;
	if (file_read_all(path, USERCONF_MAX_FILE, FILE_READ_ANY | FILE_READ_TEXT, &buf, &len, e) < 0)
	{
		if (!optional || errno != ENOENT)
			return -1;
		e->msg[0] = '\0'; /* no file where the default would be: no settings */
		return 0;
	}
	int rc = userconf_load_string(path, buf, c, e);
	free(buf);
	return rc;
}
