// SPDX-License-Identifier: GPL-2.0
/* Unit tests for src/jsonw.c. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>

#include "unit.h"
#include "jsonw.h"

static void test_jw_nested(void)
{
	struct jw w;

	jw_init(&w);
	ASSERT_STREQ(jw_data(&w), "", "empty data");
	ASSERT_EQ(jw_len(&w), 0, "empty len");

	jw_obj_begin(&w, NULL);
	jw_str(&w, "type", "request");
	jw_u64(&w, "id", 42);
	jw_obj_begin(&w, "fs");
	jw_bool(&w, "dio", 1);
	jw_u64(&w, "cache_miss_pages", 0);
	jw_obj_end(&w);
	jw_arr_begin(&w, "block");
	jw_obj_begin(&w, NULL);
	jw_str(&w, "dev", "loop0");
	jw_i64(&w, "error", -5);
	jw_obj_end(&w);
	jw_obj_begin(&w, NULL);
	jw_obj_end(&w);
	jw_arr_end(&w);
	jw_arr_begin(&w, "empty");
	jw_arr_end(&w);
	jw_arr_begin(&w, "nested");
	jw_arr_begin(&w, NULL);
	jw_u64(&w, NULL, 1);
	jw_u64(&w, NULL, 2);
	jw_arr_end(&w);
	jw_arr_begin(&w, NULL);
	jw_arr_end(&w);
	jw_null(&w, NULL);
	jw_arr_end(&w);
	jw_null(&w, "parent");
	jw_obj_end(&w);

	ASSERT_OK(jw_error(&w), "no error");
	ASSERT_STREQ(jw_data(&w),
		     "{\"type\":\"request\",\"id\":42,\"fs\":{\"dio\":true,\"cache_miss_pages\":0},"
		     "\"block\":[{\"dev\":\"loop0\",\"error\":-5},{}],\"empty\":[],"
		     "\"nested\":[[1,2],[],null],\"parent\":null}",
		     "text");
	ASSERT_EQ(jw_len(&w), strlen(jw_data(&w)), "len");
	ASSERT_EQ(w.depth, 0, "balanced");
	jw_free(&w);
	ASSERT_TRUE(w.buf == NULL && w.len == 0, "freed");
	jw_free(&w); /* twice is fine */
}

static void test_jw_numbers(void)
{
	struct jw w;

	jw_init(&w);
	jw_arr_begin(&w, NULL);
	jw_u64(&w, NULL, 0);
	jw_u64(&w, NULL, UINT64_MAX);
	jw_i64(&w, NULL, INT64_MIN);
	jw_i64(&w, NULL, INT64_MAX);
	jw_bool(&w, NULL, 0);
	jw_bool(&w, NULL, 7);
	jw_double(&w, NULL, 0.5);
	jw_double(&w, NULL, 1.0 / 3);
	jw_double(&w, NULL, 62000.0);
	jw_double(&w, NULL, 1e20);
	jw_double(&w, NULL, -2.5e-7);
	jw_double(&w, NULL, NAN);
	jw_double(&w, NULL, INFINITY);
	jw_double(&w, NULL, -INFINITY);
	jw_hex(&w, NULL, 0x1a2b);
	jw_hex(&w, NULL, 0);
	jw_hex(&w, NULL, UINT64_MAX);
	jw_arr_end(&w);
	ASSERT_OK(jw_error(&w), "no error");
	ASSERT_STREQ(jw_data(&w),
		     "[0,18446744073709551615,-9223372036854775808,9223372036854775807,false,true,"
		     "0.5,0.333333,62000,1e+20,-2.5e-07,null,null,null,\"0x1a2b\",\"0x0\","
		     "\"0xffffffffffffffff\"]",
		     "text");
	jw_free(&w);
}

static void test_jw_escape(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "", "\"\"" },
		{ "plain", "\"plain\"" },
		{ "a\"b\\c/d", "\"a\\\"b\\\\c/d\"" },
		{ "\n\t\r\b\f", "\"\\n\\t\\r\\b\\f\"" },
		{ "\x01\x1f\x7f", "\"\\u0001\\u001f\x7f\"" },
		{ "kworker/1:1H", "\"kworker/1:1H\"" },
		/* valid UTF-8 passes through: é, €, U+1F600, U+10FFFF, U+FFFF */
		{ "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
		  "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"" },
		{ "\xf4\x8f\xbf\xbf\xef\xbf\xbf", "\"\xf4\x8f\xbf\xbf\xef\xbf\xbf\"" },
		/* invalid bytes: each as \u00XX */
		{ "\xff", "\"\\u00ff\"" },
		{ "a\x80z", "\"a\\u0080z\"" }, /* lone continuation byte */
		{ "\xc0\x80", "\"\\u00c0\\u0080\"" }, /* overlong NUL */
		{ "\xc1\xbf", "\"\\u00c1\\u00bf\"" }, /* overlong */
		{ "\xe0\x80\xaf", "\"\\u00e0\\u0080\\u00af\"" }, /* overlong 3 bytes */
		{ "\xed\xa0\x80", "\"\\u00ed\\u00a0\\u0080\"" }, /* surrogate U+D800 */
		{ "\xf0\x80\x80\xaf", "\"\\u00f0\\u0080\\u0080\\u00af\"" }, /* overlong 4 */
		{ "\xf4\x90\x80\x80", "\"\\u00f4\\u0090\\u0080\\u0080\"" }, /* > U+10FFFF */
		{ "\xf5\x80\x80\x80", "\"\\u00f5\\u0080\\u0080\\u0080\"" },
		{ "\xe2\x82", "\"\\u00e2\\u0082\"" }, /* truncated at the end */
		{ "\xe2\x82z", "\"\\u00e2\\u0082z\"" }, /* truncated by an ASCII byte */
		{ "\xc3\xa9\xff\xc3\xa9", "\"\xc3\xa9\\u00ff\xc3\xa9\"" },
	};
	struct jw w;
	size_t i;

	jw_init(&w);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		jw_reset(&w);
		jw_str(&w, NULL, cases[i].in);
		if (!ASSERT_STREQ(jw_data(&w), cases[i].out, "escape"))
			break;
	}
	/* keys are escaped too */
	jw_reset(&w);
	jw_obj_begin(&w, NULL);
	jw_str(&w, "k\"\n\xff", NULL);
	jw_obj_end(&w);
	ASSERT_STREQ(jw_data(&w), "{\"k\\\"\\n\\u00ff\":null}", "key escape, NULL value");
	jw_free(&w);
}

static void test_jw_strn(void)
{
	const char comm_full[16] = { 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h',
				     'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p' }; /* no NUL */
	const char comm_short[16] = "fio";
	struct jw w;

	jw_init(&w);
	jw_obj_begin(&w, NULL);
	jw_strn(&w, "full", comm_full, sizeof(comm_full));
	jw_strn(&w, "short", comm_short, sizeof(comm_short));
	jw_strn(&w, "cut", "abcdef", 3);
	jw_strn(&w, "zero", "abc", 0);
	jw_strn(&w, "null", NULL, 16);
	jw_strn(&w, "utf8cut", "\xc3\xa9\xc3\xa9", 3); /* a cut sequence is escaped */
	jw_obj_end(&w);
	ASSERT_STREQ(
		jw_data(&w),
		"{\"full\":\"abcdefghijklmnop\",\"short\":\"fio\",\"cut\":\"abc\",\"zero\":\"\","
		"\"null\":null,\"utf8cut\":\"\xc3\xa9\\u00c3\"}",
		"text");
	jw_free(&w);
}

static void test_jw_misuse(void)
{
	struct jw w;
	int i;

	jw_init(&w);
	jw_obj_begin(&w, NULL);
	jw_u64(&w, NULL, 1); /* no key inside an object */
	ASSERT_EQ(jw_error(&w), EINVAL, "missing key");
	jw_reset(&w);
	ASSERT_OK(jw_error(&w), "reset clears the error");
	ASSERT_STREQ(jw_data(&w), "", "reset empties");

	jw_arr_begin(&w, NULL);
	jw_u64(&w, "k", 1); /* key inside an array */
	ASSERT_EQ(jw_error(&w), EINVAL, "key in array");
	jw_reset(&w);

	jw_u64(&w, "k", 1); /* key at the top level */
	ASSERT_EQ(jw_error(&w), EINVAL, "key at top");
	jw_reset(&w);

	jw_arr_begin(&w, NULL);
	jw_obj_end(&w);
	ASSERT_EQ(jw_error(&w), EINVAL, "obj_end closes an array");
	jw_reset(&w);

	jw_obj_end(&w);
	ASSERT_EQ(jw_error(&w), EINVAL, "end at depth 0");
	jw_reset(&w);

	for (i = 0; i < JW_MAX_DEPTH; i++)
		jw_arr_begin(&w, NULL);
	ASSERT_OK(jw_error(&w), "max depth ok");
	jw_arr_begin(&w, NULL);
	ASSERT_EQ(jw_error(&w), EINVAL, "too deep");
	jw_reset(&w);

	/* after an error, calls are no-ops */
	jw_obj_begin(&w, NULL);
	jw_u64(&w, "a", 1);
	jw_obj_end(&w);
	jw_obj_end(&w);
	ASSERT_EQ(jw_error(&w), EINVAL, "extra end");
	jw_u64(&w, NULL, 2);
	ASSERT_STREQ(jw_data(&w), "{\"a\":1}", "nothing after the error");
	jw_free(&w);
}

static void test_jw_lines(void)
{
	struct jw w;
	char *buf;
	size_t cap;

	jw_init(&w);
	jw_obj_begin(&w, NULL);
	jw_u64(&w, "n", 1);
	jw_obj_end(&w);
	jw_obj_begin(&w, NULL);
	jw_u64(&w, "n", 2);
	jw_obj_end(&w);
	ASSERT_STREQ(jw_data(&w), "{\"n\":1}\n{\"n\":2}", "two top-level values, one per line");

	buf = w.buf;
	cap = w.cap;
	jw_reset(&w);
	ASSERT_EQ(jw_len(&w), 0, "reset len");
	ASSERT_TRUE(w.buf == buf && w.cap == cap, "reset keeps the buffer");
	jw_obj_begin(&w, NULL);
	jw_obj_end(&w);
	ASSERT_STREQ(jw_data(&w), "{}", "after reset: no leading newline");
	jw_free(&w);
}

static void test_jw_growth(void)
{
	char big[5000];
	struct jw w;
	size_t i, len;
	const char *d;

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	big[100] = '\n';
	jw_init(&w);
	jw_arr_begin(&w, NULL);
	for (i = 0; i < 10000; i++)
		jw_u64(&w, NULL, i);
	jw_str(&w, NULL, big);
	jw_arr_end(&w);
	if (!ASSERT_OK(jw_error(&w), "no error"))
		goto out;
	d = jw_data(&w);
	len = jw_len(&w);
	ASSERT_EQ(len, strlen(d), "len matches");
	ASSERT_TRUE(w.cap > len, "NUL fits");
	ASSERT_EQ(strncmp(d, "[0,1,2,3,", 9), 0, "start");
	ASSERT_TRUE(strstr(d, ",9998,9999,\"xxx"), "numbers then string");
	ASSERT_TRUE(len > 5000 && !strcmp(d + len - 4, "xx\"]"), "end");
	ASSERT_TRUE(strstr(d, "x\\nx"), "newline escaped in a long string");
out:
	jw_free(&w);
}

/* Run a shell command with input from file, return its exit status (-1 if it could not run). */
static int sh(const char *cmd)
{
	int st = system(cmd);

	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint64_t rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

/*
 * Write JSON lines with random bytes in strings and keys, a request like the
 * one in docs/json.md, then check with jq that every line is valid JSON and
 * with iconv that the file is valid UTF-8.
 */
static void test_jw_jq(void)
{
	char path[] = "/tmp/it_jsonw.XXXXXX", cmd[256], s[48], *out = NULL;
	struct jw w;
	FILE *f = NULL, *p;
	size_t len = 0, n;
	int fd, i, j;

	jw_init(&w);
	if (sh("command -v jq >/dev/null 2>&1") != 0) {
		SKIP("jq not installed");
		return;
	}
	fd = mkstemp(path);
	if (!ASSERT_TRUE(fd >= 0, "mkstemp"))
		return;
	f = fdopen(fd, "w");
	if (!ASSERT_TRUE(f, "fdopen")) {
		close(fd);
		goto out;
	}

	for (i = 0; i < 2000; i++) {
		n = rng_next() % (sizeof(s) - 1);
		for (j = 0; j < (int)n; j++)
			s[j] = (char)(1 + rng_next() % 255);
		s[n] = '\0';
		jw_reset(&w);
		jw_obj_begin(&w, NULL);
		jw_str(&w, "type", "fuzz");
		jw_str(&w, "s", s);
		jw_strn(&w, "comm", s, 16);
		jw_str(&w, s, "as a key");
		jw_arr_begin(&w, "a");
		jw_double(&w, NULL, (double)(int64_t)rng_next() / 1e9);
		jw_i64(&w, NULL, (int64_t)rng_next());
		jw_obj_begin(&w, NULL);
		jw_hex(&w, "h", rng_next());
		jw_obj_end(&w);
		jw_arr_end(&w);
		jw_obj_end(&w);
		if (!ASSERT_OK(jw_error(&w), "jw error"))
			goto out;
		fprintf(f, "%s\n", jw_data(&w));
	}

	jw_reset(&w);
	jw_obj_begin(&w, NULL);
	jw_str(&w, "type", "request");
	jw_u64(&w, "id", 42);
	jw_str(&w, "kind", "syscall");
	jw_strn(&w, "comm", "fio\0garbage", 16);
	jw_obj_begin(&w, "sched");
	jw_u64(&w, "offcpu_ns", 52000);
	jw_strn(&w, "waker_comm", "kworker/1:1H", 16);
	jw_obj_end(&w);
	jw_arr_begin(&w, "block");
	jw_obj_begin(&w, NULL);
	jw_str(&w, "devno", "7:0");
	jw_u64(&w, "q2c_ns", 54000);
	jw_obj_end(&w);
	jw_arr_end(&w);
	jw_obj_end(&w);
	fprintf(f, "%s\n", jw_data(&w));
	if (!ASSERT_OK(fclose(f), "fclose"))
		goto out;
	f = NULL;

	snprintf(cmd, sizeof(cmd), "jq -e . '%s' >/dev/null", path);
	ASSERT_EQ(sh(cmd), 0, "jq accepts every line");
	snprintf(cmd, sizeof(cmd), "iconv -f UTF-8 -t UTF-8 '%s' >/dev/null", path);
	ASSERT_EQ(sh(cmd), 0, "valid UTF-8");
	snprintf(cmd, sizeof(cmd), "jq -s length '%s'", path);
	p = popen(cmd, "r");
	if (ASSERT_TRUE(p, "popen")) {
		ASSERT_TRUE(fgets(s, sizeof(s), p) && !strcmp(s, "2001\n"), "2001 values");
		ASSERT_EQ(pclose(p), 0, "jq -s");
	}
	/* the request line reads back as written */
	snprintf(cmd, sizeof(cmd), "tail -n1 '%s' | jq -j '%s'", path,
		 "[.comm, .sched.waker_comm, .block[0].q2c_ns] | join(\" \")");
	p = popen(cmd, "r");
	if (ASSERT_TRUE(p, "popen")) {
		n = fread(s, 1, sizeof(s) - 1, p);
		s[n] = '\0';
		ASSERT_STREQ(s, "fio kworker/1:1H 54000", "jq read back");
		ASSERT_EQ(pclose(p), 0, "jq read back status");
	}

	/* round trip of control characters and UTF-8; stray bytes read as Latin-1 */
	jw_reset(&w);
	jw_str(&w, NULL, "a\"\\\n\t\x01\xc3\xa9\xf0\x9f\x98\x80\xff");
	snprintf(cmd, sizeof(cmd), "jq -j . > '%s'", path);
	p = popen(cmd, "w");
	if (ASSERT_TRUE(p, "popen w")) {
		fputs(jw_data(&w), p);
		ASSERT_EQ(pclose(p), 0, "jq -j");
		f = fopen(path, "r");
		if (ASSERT_TRUE(f, "fopen")) {
			out = calloc(1, 64);
			len = out ? fread(out, 1, 63, f) : 0;
			ASSERT_EQ(len, 14, "decoded length");
			ASSERT_TRUE(!memcmp(out,
					    "a\"\\\n\t\x01" /* as written */
					    "\xc3\xa9\xf0\x9f\x98\x80" /* UTF-8 kept */
					    "\xc3\xbf", /* 0xff read as U+00FF */
					    14),
				    "decoded bytes");
		}
	}
out:
	jw_free(&w);
	if (f)
		fclose(f);
	free(out);
	unlink(path);
}

int main(void)
{
	RUN_TEST(test_jw_nested);
	RUN_TEST(test_jw_numbers);
	RUN_TEST(test_jw_escape);
	RUN_TEST(test_jw_strn);
	RUN_TEST(test_jw_misuse);
	RUN_TEST(test_jw_lines);
	RUN_TEST(test_jw_growth);
	RUN_TEST(test_jw_jq);
	return unit_result();
}
