/* actions.c -- the action table, key names and the key map (see actions.h). */
#include "config.h"

#include "views/actions.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/utf8.h"
#include "draw/canvas.h"

static const struct action_info action_table[ACTION_COUNT] = {
	[ACTION_NONE] = {"none", SCOPE_GLOBAL, "", ""},
#define ACTION_ROW(id, name, scope, keys, help) [id] = {name, scope, keys, help},
	ACTIONS(ACTION_ROW)
#undef ACTION_ROW
};

const struct action_info *action_get(enum action a)
{
	return (int)a > 0 && a < ACTION_COUNT ? &action_table[a] : NULL;
}

enum action action_by_name(const char *name)
{
	for (int a = 1; a < ACTION_COUNT; a++)
		if (!strcmp(action_table[a].name, name))
			return (enum action)a;
	return ACTION_NONE;
}

static const struct {
	const char *name;
	int key;
} key_names[] = {
	{"Up", K_UP}, {"Down", K_DOWN}, {"Left", K_LEFT}, {"Right", K_RIGHT},
	{"Home", K_HOME}, {"End", K_END}, {"PageUp", K_PAGE_UP}, {"PageDown", K_PAGE_DOWN},
	{"Insert", K_INSERT}, {"Delete", K_DELETE}, {"Backspace", K_BACKSPACE}, {"Enter", K_ENTER},
	{"Esc", K_ESC}, {"Tab", K_TAB}, {"S-Tab", K_BACKTAB}, {"Space", ' '},
	{"F1", K_F1}, {"F2", K_F2}, {"F3", K_F3}, {"F4", K_F4}, {"F5", K_F5}, {"F6", K_F6},
	{"F7", K_F7}, {"F8", K_F8}, {"F9", K_F9}, {"F10", K_F10}, {"F11", K_F11}, {"F12", K_F12},
};

int action_key_parse(const char *name, int *key, struct err *e)
{
	for (size_t i = 0; i < sizeof key_names / sizeof key_names[0]; i++) {
		if (!strcasecmp(name, key_names[i].name)) {
			*key = key_names[i].key;
			return 0;
		}
	}
	if ((name[0] == 'C' || name[0] == 'c') && name[1] == '-' && name[2] && !name[3]) {
		char c = name[2];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c < 'a' || c > 'z')
			return err_set(e, "bad key '%s': Ctrl takes a letter (C-a … C-z)", name);
		*key = KEY_CTRL(c);
		/* The terminal sends these as Tab and Enter. */
		if (*key == KEY_CTRL('i'))
			*key = K_TAB;
		else if (*key == KEY_CTRL('m') || *key == KEY_CTRL('j'))
			*key = K_ENTER;
		return 0;
	}
	size_t len = strlen(name);
	uint32_t cp;
	if (len && (size_t)utf8_next(name, len, &cp) == len && cp != 0xfffd && cp > ' ' && cp != 0x7f) {
		*key = (int)cp;
		return 0;
	}
	return err_set(e, "unknown key '%s' (a character, C-x, Up, Down, Left, Right, Home, End, PageUp, "
			  "PageDown, Insert, Delete, Backspace, Enter, Esc, Tab, S-Tab, Space, F1-F12)", name);
}

const char *action_key_name(int key, char *buf, size_t n)
{
	for (size_t i = 0; i < sizeof key_names / sizeof key_names[0]; i++) {
		if (key == key_names[i].key) {
			snprintf(buf, n, "%s", key_names[i].name);
			return buf;
		}
	}
	if (key >= 1 && key <= 26) {
		snprintf(buf, n, "C-%c", 'a' + key - 1);
		return buf;
	}
	if (key > ' ' && key < KEY_SPECIAL_BASE) {
		char u[8];
		u[utf8_encode((uint32_t)key, u)] = 0;
		snprintf(buf, n, "%s", u);
		return buf;
	}
	snprintf(buf, n, "key-%d", key);
	return buf;
}

/* Actions in the view group and the edit group have separate key spaces. */
static bool editing_scope(enum action a)
{
	return action_table[a].scope == SCOPE_EDIT;
}

static void keymap_unbind(struct keymap *km, int key, bool editing)
{
	int w = 0;
	for (int i = 0; i < km->n; i++)
		if (!(km->entry[i].key == key && editing_scope(km->entry[i].action) == editing))
			km->entry[w++] = km->entry[i];
	km->n = w;
}

void keymap_init(struct keymap *km)
{
	km->n = 0;
	for (int a = 1; a < ACTION_COUNT; a++) {
		char names[128];
		snprintf(names, sizeof names, "%s", action_table[a].keys);
		for (char *save, *tok = strtok_r(names, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
			int key;
			if (action_key_parse(tok, &key, NULL) == 0 && km->n < KEYMAP_MAX)
				km->entry[km->n++] = (struct keymap_entry){key, (enum action)a};
		}
	}
}

int keymap_bind(struct keymap *km, enum action a, const int *keys, int n, struct err *e)
{
	bool editing = editing_scope(a);
	int w = 0;
	for (int i = 0; i < km->n; i++)
		if (km->entry[i].action != a)
			km->entry[w++] = km->entry[i];
	km->n = w;
	for (int i = 0; i < n; i++) {
		keymap_unbind(km, keys[i], editing);
		if (km->n >= KEYMAP_MAX)
			return err_set(e, "too many key bindings");
		km->entry[km->n++] = (struct keymap_entry){keys[i], a};
	}
	return 0;
}

enum action keymap_lookup(const struct keymap *km, int key, bool editing)
{
	for (int i = 0; i < km->n; i++)
		if (km->entry[i].key == key && editing_scope(km->entry[i].action) == editing)
			return km->entry[i].action;
	return ACTION_NONE;
}

int keymap_keys(const struct keymap *km, enum action a, int *keys, int max)
{
	int k = 0;
	for (int i = 0; i < km->n && k < max; i++)
		if (km->entry[i].action == a)
			keys[k++] = km->entry[i].key;
	return k;
}

const char *keymap_describe(const struct keymap *km, enum action a, char *buf, size_t n)
{
	int keys[16];
	int k = keymap_keys(km, a, keys, 16);
	size_t len = 0;
	buf[0] = 0;
	for (int i = 0; i < k && len < n; i++) {
		char name[32];
		int w = snprintf(buf + len, n - len, "%s%s", i ? ", " : "", action_key_name(keys[i], name, sizeof name));
		if (w < 0)
			break;
		len += (size_t)w;
	}
	return buf;
}

void actions_print_all(FILE *out)
{
	struct keymap km;
	keymap_init(&km);
	for (int a = 1; a < ACTION_COUNT; a++) {
		char keys[128];
		fprintf(out, "%s\t%s\t%s\n", action_table[a].name, keymap_describe(&km, (enum action)a, keys, sizeof keys),
			action_table[a].help);
	}
}
