/* SPDX-License-Identifier: GPL-2.0 */
/*
 * unit.h: a tiny assertion framework for iotracer's unit tests.
 *
 * A test is `static void test_<what>(void)`, run by RUN_TEST(test_<what>).
 * Each test prints exactly one line on stdout:
 *   PASS test_<what>
 *   FAIL test_<what>: <first failed assertion, with values>
 *   SKIP test_<what>: <reason>
 * Assertions return bool, so a test can stop early:
 *   if (!ASSERT_OK(err, "parse")) return;
 * SKIP() only records the reason: return from the test after it.
 * main() ends with `return unit_result();` (1 if any test failed).
 * Diagnostics other than these lines go to stderr.
 */
#ifndef IT_UNIT_H
#define IT_UNIT_H

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rng.h" /* unit_rng() */

struct unit_state {
	const char *test; /* current test name */
	int failed; /* assertions failed in the current test */
	int skipped;
	int nr_failed_tests;
	char msg[512]; /* first failure, or the skip reason */
};

static struct unit_state unit__st;

static inline __attribute__((format(printf, 3, 0))) void unit__vrecord(const char *file, int line,
								       const char *fmt, va_list ap)
{
	size_t len, i;

	if (unit__st.failed++)
		return;
	vsnprintf(unit__st.msg, sizeof(unit__st.msg), fmt, ap);
	len = strlen(unit__st.msg);
	snprintf(unit__st.msg + len, sizeof(unit__st.msg) - len, " (%s:%d)", file, line);
	/* the protocol is one line per test */
	for (i = 0; unit__st.msg[i]; i++)
		if (unit__st.msg[i] == '\n' || unit__st.msg[i] == '\r')
			unit__st.msg[i] = ' ';
}

static inline __attribute__((format(printf, 3, 4))) void unit__fail(const char *file, int line,
								    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	unit__vrecord(file, line, fmt, ap);
	va_end(ap);
}

static inline bool unit__true(bool ok, const char *expr, const char *name, const char *file,
			      int line)
{
	if (!ok)
		unit__fail(file, line, "%s: unexpected false: %s", name, expr);
	return ok;
}

/* Signedness of an integer expression, for printing and mixed comparisons. */
#define UNIT__SIGNED(x) \
	_Generic((x), signed char : 1, short : 1, int : 1, long : 1, long long : 1, default : 0)

static inline void unit__fmt_int(char *buf, size_t n, int is_signed, uint64_t v)
{
	if (is_signed)
		snprintf(buf, n, "%lld", (long long)(int64_t)v);
	else
		snprintf(buf, n, "%llu", (unsigned long long)v);
}

static inline bool unit__eq(int want_eq, int sa, uint64_t a, int sb, uint64_t b, const char *ea,
			    const char *eb, const char *name, const char *file, int line)
{
	char va[32], vb[32];
	bool eq = a == b;

	/* a negative signed value never equals an unsigned one */
	if (sa != sb && ((sa && (int64_t)a < 0) || (sb && (int64_t)b < 0)))
		eq = false;
	if (eq == (bool)want_eq)
		return true;
	unit__fmt_int(va, sizeof(va), sa, a);
	unit__fmt_int(vb, sizeof(vb), sb, b);
	unit__fail(file, line, "%s: expected %s %s %s, got %s %s %s", name, ea,
		   want_eq ? "==" : "!=", eb, va, want_eq ? "!=" : "==", vb);
	return false;
}

#define UNIT__EQ(want_eq, a, b, name)                                                     \
	({                                                                                \
		__typeof__(a) ___a = (a);                                                 \
		__typeof__(b) ___b = (b);                                                 \
		unit__eq(want_eq, UNIT__SIGNED(___a), (uint64_t)___a, UNIT__SIGNED(___b), \
			 (uint64_t)___b, #a, #b, name, __FILE__, __LINE__);               \
	})

static inline bool unit__streq(const char *a, const char *b, const char *ea, const char *eb,
			       const char *name, const char *file, int line)
{
	if (a == b || (a && b && !strcmp(a, b)))
		return true;
	unit__fail(file, line, "%s: expected %s == %s, got \"%s\" != \"%s\"", name, ea, eb,
		   a ? a : "(null)", b ? b : "(null)");
	return false;
}

static inline bool unit__near(double a, double b, double tol, const char *ea, const char *eb,
			      const char *name, const char *file, int line)
{
	if (fabs(a - b) <= tol)
		return true;
	unit__fail(file, line, "%s: expected %s ~= %s (tol %g), got %.9g vs %.9g", name, ea, eb,
		   tol, a, b);
	return false;
}

static inline bool unit__ok(long long err, const char *expr, const char *name, const char *file,
			    int line)
{
	if (!err)
		return true;
	unit__fail(file, line, "%s: %s failed: %lld", name, expr, err);
	return false;
}

/* All return bool: true when the assertion holds. */
#define ASSERT_TRUE(cond, name) unit__true(!!(cond), #cond, name, __FILE__, __LINE__)
#define ASSERT_FALSE(cond, name) unit__true(!(cond), "!(" #cond ")", name, __FILE__, __LINE__)
#define ASSERT_EQ(a, b, name) UNIT__EQ(1, a, b, name)
#define ASSERT_NEQ(a, b, name) UNIT__EQ(0, a, b, name)
#define ASSERT_STREQ(a, b, name) unit__streq(a, b, #a, #b, name, __FILE__, __LINE__)
#define ASSERT_NEAR(a, b, tol, name) unit__near(a, b, tol, #a, #b, name, __FILE__, __LINE__)
#define ASSERT_OK(err, name) unit__ok((long long)(err), #err, name, __FILE__, __LINE__)

/* Mark the current test skipped (printf-style reason); the test then returns. */
static inline __attribute__((format(printf, 1, 2))) void SKIP(const char *fmt, ...)
{
	va_list ap;

	if (unit__st.skipped++)
		return;
	va_start(ap, fmt);
	if (!unit__st.failed)
		vsnprintf(unit__st.msg, sizeof(unit__st.msg), fmt, ap);
	va_end(ap);
}

/* Print a diagnostic to stderr (never to stdout: it carries the protocol). */
#define UNIT_LOG(...) fprintf(stderr, __VA_ARGS__)

static inline void unit__run(const char *name, void (*fn)(void))
{
	unit__st.test = name;
	unit__st.failed = 0;
	unit__st.skipped = 0;
	unit__st.msg[0] = '\0';
	fflush(stdout);
	fn();
	if (unit__st.failed) {
		unit__st.nr_failed_tests++;
		printf("FAIL %s: %s\n", name, unit__st.msg);
	} else if (unit__st.skipped) {
		printf("SKIP %s: %s\n", name, unit__st.msg);
	} else {
		printf("PASS %s\n", name);
	}
	fflush(stdout);
}

#define RUN_TEST(fn) unit__run(#fn, fn)

static inline int unit_result(void)
{
	return unit__st.nr_failed_tests ? 1 : 0;
}

/* Write len bytes of data to path (created or truncated). 0 or -errno. */
static inline int unit_write(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "w");
	int ret = 0;

	if (!f)
		return -errno;
	if (fwrite(data, 1, len, f) != len)
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

static inline int unit_write_str(const char *path, const char *s)
{
	return unit_write(path, s, strlen(s));
}

#endif /* IT_UNIT_H */
