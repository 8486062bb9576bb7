/* testutil.h -- what the check suites share: running a suite, where the source tree and the shared
 * reference are, formatted strings, and scratch folders under /tmp. Failures abort the test
 * (ck_assert). */
#ifndef ATTNSCOPE_TESTUTIL_H
#define ATTNSCOPE_TESTUTIL_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>

/* ck_assert_msg for a loop over many values: check writes the file and line of every assertion that
 * holds to its log (a write(2) and ~1,300 instructions each), which in the loops over every element
 * took minutes under valgrind; this one costs only when EXPR fails, with the message FMT, ... */
#define assert_each(expr, ...)                                                                               \
	do {                                                                                                 \
		if (!(expr))                                                                                 \
			ck_abort_msg(__VA_ARGS__);                                                           \
	} while (0)

/* Runs suite S (each test in a child process unless NOFORK) and frees it: EXIT_SUCCESS when every
 * test passed, EXIT_FAILURE otherwise. */
int testutil_run_suite(Suite *s, bool nofork);

/* Whether the suite runs under valgrind (tools/test-all's valgrind stage): the long numeric sweeps
 * then take a sample. Valgrind is there for the memory their code touches, which a sample touches
 * too; make check and the ASan stage run them whole. */
bool testutil_under_valgrind(void);

/* The source tree: $top_srcdir (set by make check) or the configure-time path. */
const char *testutil_srcdir(void);

/* A newly allocated formatted string (aborts when out of memory). */
char *testutil_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The shared reference outputs: $ATTNSCOPE_SHARED_REF or ../shared/reference beside the tree (allocated). */
char *testutil_shared_ref(void);

/* A new empty folder $TMPDIR/attnscope-TAG-XXXXXX, /tmp by default (allocated). */
char *testutil_tmpdir(const char *tag);

/* DIR/NAME holding LEN bytes of DATA. */
void testutil_write(const char *dir, const char *name, const void *data, size_t len);

/* DIR/NAME holding the string TEXT. */
void testutil_write_text(const char *dir, const char *name, const char *text);

/* cp FROM_DIR/NAME TO_DIR/TO_NAME. */
void testutil_copy(const char *from_dir, const char *name, const char *to_dir, const char *to_name);

/* rm -rf DIR. */
void testutil_rmtree(const char *dir);

#endif
