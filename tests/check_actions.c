/* check_actions.c -- the action table (names, help, conflicts), key names, rebinding, and the
 * line editor the input fields use. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "views/actions.h"
#include "tui/lineedit.h"
#include "views/registry.h"
#include "testutil.h"

START_TEST(table_is_complete_and_conflict_free)
{
	struct keymap km;
	keymap_init(&km);
	for (int a = 1; a < ACTION_COUNT; a++) {
		const struct action_info *ai = action_get((enum action)a);
		ck_assert_ptr_nonnull(ai);
		ck_assert_int_gt(strlen(ai->name), 0);
		ck_assert_int_gt(strlen(ai->help), 0);
		ck_assert_int_eq(action_by_name(ai->name), a);
		/* Every default key parses and reaches this action: no other action in the same group
		 * (view keys or editing keys) claims it. */
		char keys[128];
		snprintf(keys, sizeof keys, "%s", ai->keys);
		int n = 0;
		for (char *save, *k = strtok_r(keys, " ", &save); k; k = strtok_r(NULL, " ", &save), n++) {
			int key;
			struct err e;
			ck_assert_msg(action_key_parse(k, &key, &e) == 0, "%s: %s", ai->name, e.msg);
			ck_assert_msg((int)keymap_lookup(&km, key, ai->scope == SCOPE_EDIT) == a, "key %s of %s is taken", k,
				      ai->name);
		}
		ck_assert_msg(n > 0, "%s has no key", ai->name);
	}
	/* Views list only view-scoped actions. */
	for (int i = 0; registry_views[i]; i++)
		for (const enum action *p = registry_views[i]->actions; *p; p++)
			ck_assert_int_eq(action_get(*p)->scope, SCOPE_VIEW);
	ck_assert_int_eq(action_by_name("nope"), ACTION_NONE);
}
END_TEST

START_TEST(key_names_round_trip)
{
	const char *names[] = {"j", "G", "?", "[", "{", "|", "Up", "PageDown", "S-Tab", "C-u", "F1", "Enter", "Esc",
			       "Tab", "Backspace", "Delete", "Home", "End", "Space", "\xc3\xa9"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		int key;
		char buf[32];
		struct err e;
		ck_assert_msg(action_key_parse(names[i], &key, &e) == 0, "%s: %s", names[i], e.msg);
		ck_assert_str_eq(action_key_name(key, buf, sizeof buf), names[i]);
	}
	int key;
	struct err e;
	ck_assert_int_eq(action_key_parse("c-U", &key, &e), 0);
	ck_assert_int_eq(key, KEY_CTRL('u'));
	ck_assert_int_eq(action_key_parse("C-i", &key, &e), 0);
	ck_assert_int_eq(key, K_TAB);
	ck_assert_int_eq(action_key_parse("pagedown", &key, &e), 0);
	ck_assert_int_eq(key, K_PAGE_DOWN);
	ck_assert_int_eq(action_key_parse("C-1", &key, &e), -1);
	ck_assert_str_eq(e.msg, "bad key 'C-1': Ctrl takes a letter (C-a \xe2\x80\xa6 C-z)");
	ck_assert_int_eq(action_key_parse("jk", &key, &e), -1);
	ck_assert_int_eq(strncmp(e.msg, "unknown key 'jk'", 16), 0);
}
END_TEST

START_TEST(rebinding)
{
	struct keymap km;
	struct err e;
	keymap_init(&km);
	char buf[64];
	ck_assert_str_eq(keymap_describe(&km, ACT_DOWN, buf, sizeof buf), "j, Down");
	int keys[] = {'J', 'x'};
	ck_assert_int_eq(keymap_bind(&km, ACT_DOWN, keys, 2, &e), 0);
	ck_assert_str_eq(keymap_describe(&km, ACT_DOWN, buf, sizeof buf), "J, x");
	ck_assert_int_eq(keymap_lookup(&km, 'j', false), ACTION_NONE);
	/* x was token-clear's: it moves to down, token-clear is left without keys. */
	ck_assert_int_eq(keymap_lookup(&km, 'x', false), ACT_DOWN);
	ck_assert_str_eq(keymap_describe(&km, ACT_TOKEN_CLEAR, buf, sizeof buf), "");
	/* Editing keys are a separate space: C-b stays "left" while editing. */
	int cb[] = {KEY_CTRL('b')};
	ck_assert_int_eq(keymap_bind(&km, ACT_DOWN, cb, 1, &e), 0);
	ck_assert_int_eq(keymap_lookup(&km, KEY_CTRL('b'), false), ACT_DOWN);
	ck_assert_int_eq(keymap_lookup(&km, KEY_CTRL('b'), true), ACT_ED_LEFT);
}
END_TEST

static int width1(uint32_t cp, void *ctx)
{
	return cp >= 0x1100 ? 2 : 1;
}

START_TEST(line_editing)
{
	static struct lineedit le;
	lineedit_set(&le, "caf\xc3\xa9\nau lait");
	ck_assert_str_eq(le.buf, "caf\xc3\xa9 au lait"); /* newline becomes a space */
	ck_assert_uint_eq(le.cursor, le.len);
	lineedit_home(&le);
	lineedit_right(&le);
	lineedit_right(&le);
	lineedit_right(&le);
	lineedit_right(&le); /* over the two bytes of é */
	ck_assert_uint_eq(le.cursor, 5);
	ck_assert(lineedit_backspace(&le));
	ck_assert_str_eq(le.buf, "caf au lait");
	ck_assert(lineedit_insert(&le, 0x65e5)); /* 日 */
	ck_assert_str_eq(le.buf, "caf\xe6\x97\xa5 au lait");
	ck_assert(!lineedit_insert(&le, 0x07));  /* control characters are refused */
	ck_assert(!lineedit_insert(&le, 0xd800)); /* and surrogates */
	lineedit_left(&le);
	ck_assert_uint_eq(le.cursor, 3);
	ck_assert(lineedit_delete(&le));
	ck_assert_str_eq(le.buf, "caf au lait");
	lineedit_end(&le);
	ck_assert(lineedit_kill_word(&le));
	ck_assert_str_eq(le.buf, "caf au ");
	ck_assert(lineedit_kill_word(&le));
	ck_assert_str_eq(le.buf, "caf ");
	lineedit_home(&le);
	ck_assert(!lineedit_kill_start(&le));
	lineedit_right(&le);
	ck_assert(lineedit_kill_end(&le));
	ck_assert_str_eq(le.buf, "c");
	ck_assert(lineedit_kill_start(&le));
	ck_assert_str_eq(le.buf, "");
	ck_assert(!lineedit_backspace(&le));

	/* Scrolling keeps the cursor inside the field. */
	lineedit_set(&le, "0123456789abcdef");
	int col = lineedit_view(&le, 8, width1, NULL);
	ck_assert_int_eq(col, 7);
	ck_assert_int_eq(le.scroll, 9);
	lineedit_home(&le);
	ck_assert_int_eq(lineedit_view(&le, 8, width1, NULL), 0);
	ck_assert_int_eq(le.scroll, 0);
	/* Invalid UTF-8 given as initial text becomes U+FFFD. */
	lineedit_set(&le, "a\xff" "b");
	ck_assert_str_eq(le.buf, "a\xef\xbf\xbd" "b");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("actions");
	TCase *tc = tcase_create("actions");
	tcase_add_test(tc, table_is_complete_and_conflict_free);
	tcase_add_test(tc, key_names_round_trip);
	tcase_add_test(tc, rebinding);
	tcase_add_test(tc, line_editing);
	suite_add_tcase(s, tc);
	return testutil_run_suite(s, false);
}
