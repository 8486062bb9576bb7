/* testutil.c -- see testutil.h. */
#define _GNU_SOURCE /* vasprintf */
#include "config.h"

#include "testutil.h"

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h> /* RUNNING_ON_VALGRIND: a no-op instruction sequence valgrind recognizes */
#define TESTUTIL_VALGRIND_H 1
#endif
#endif

int testutil_run_suite(Suite *s, bool nofork)
{
	SRunner *sr = srunner_create(s);
	if (nofork)
		srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

bool testutil_under_valgrind(void)
{
#ifdef TESTUTIL_VALGRIND_H
	return RUNNING_ON_VALGRIND != 0;
#else
	return false; /* no valgrind headers: valgrind is not installed, so nothing runs under it */
#endif
}

const char *testutil_srcdir(void)
{
	const char *s = getenv("top_srcdir");
	return s && *s ? s : SRCDIR;
}

char *testutil_printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	return s;
}

char *testutil_shared_ref(void)
{
	const char *env = getenv("ATTNSCOPE_SHARED_REF");
	return env && *env ? testutil_printf("%s", env) : testutil_printf("%s/../shared/reference", testutil_srcdir());
}

char *testutil_tmpdir(const char *tag)
{
	const char *t = getenv("TMPDIR");
	char *d = testutil_printf("%s/attnscope-%s-XXXXXX", t && *t ? t : "/tmp", tag);
	ck_assert_msg(mkdtemp(d) != NULL, "mkdtemp %s", d);
	return d;
}

void testutil_write(const char *dir, const char *name, const void *data, size_t len)
{
	char *p = testutil_printf("%s/%s", dir, name);
	FILE *f = fopen(p, "wb");
	ck_assert_msg(f != NULL, "%s", p);
	ck_assert(fwrite(data, 1, len, f) == len);
	ck_assert(fclose(f) == 0);
	free(p);
}

void testutil_write_text(const char *dir, const char *name, const char *text)
{
	testutil_write(dir, name, text, strlen(text));
}

void testutil_copy(const char *from_dir, const char *name, const char *to_dir, const char *to_name)
{
	char *cmd = testutil_printf("cp '%s/%s' '%s/%s'", from_dir, name, to_dir, to_name);
	ck_assert_msg(system(cmd) == 0, "%s", cmd);
	free(cmd);
}

void testutil_rmtree(const char *dir)
{
	char *cmd = testutil_printf("rm -rf '%s'", dir);
	ck_assert_msg(system(cmd) == 0, "%s", cmd);
	free(cmd);
}
