// SPDX-License-Identifier: GPL-2.0
/* Unit tests for src/lib/jsonw.c. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>

#include "unit.h"
#include "lib/jsonw.h"

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

/* Members written before (another writer's object, its braces off), added as they are. */
static void test_jw_members(void)
{
	const char *m = "\"file\":\"/a \\\"q\\\".dat\",\"file_devno\":\"7:3\"";
	struct jw w;
	int i;

	jw_init(&w);
	jw_obj_begin(&w, NULL);
	jw_members(&w, m, strlen(m)); /* first: no comma */
	jw_u64(&w, "q_ns", 5);
	/* a prefix: the names without file_devno */
	jw_members(&w, m, (size_t)(strstr(m, ",\"file_devno\"") - m));
	jw_members(&w, m, 0); /* nothing, and no comma */
	jw_obj_begin(&w, "o");
	jw_members(&w, m, strlen(m));
	jw_obj_end(&w);
	jw_obj_end(&w);
	ASSERT_OK(jw_error(&w), "no error");
	ASSERT_STREQ(jw_data(&w),
		     "{\"file\":\"/a \\\"q\\\".dat\",\"file_devno\":\"7:3\",\"q_ns\":5,"
		     "\"file\":\"/a \\\"q\\\".dat\","
		     "\"o\":{\"file\":\"/a \\\"q\\\".dat\",\"file_devno\":\"7:3\"}}",
		     "members copied in place, commas as for values");

	/* outside an object: misuse, as a value without a key there */
	jw_reset(&w);
	jw_members(&w, m, strlen(m));
	ASSERT_EQ(jw_error(&w), EINVAL, "at the top level");
	jw_reset(&w);
	jw_arr_begin(&w, NULL);
	jw_members(&w, m, strlen(m));
	ASSERT_EQ(jw_error(&w), EINVAL, "in an array");
	jw_free(&w);

	/* the general path: the buffer grows under them */
	jw_init(&w);
	jw_obj_begin(&w, NULL);
	for (i = 0; i < 100; i++)
		jw_members(&w, m, strlen(m));
	jw_obj_end(&w);
	ASSERT_OK(jw_error(&w), "grown");
	ASSERT_EQ(jw_len(&w), 2 + 100 * strlen(m) + 99, "every copy and comma");
	jw_free(&w);
}

/* jw_members_pad(): jw_members()'s bytes, reading at most JW_PAD bytes past n (ASan) */
static void test_jw_members_pad(void)
{
	const char *src = "\"file\":\"/var/lib/postgresql/15/main/base/16384/16397\","
			  "\"file_devno\":\"8:1\"";
	size_t len = strlen(src);
	struct jw a, b;

	for (size_t n = 0; n <= len; n++) {
		char *m = malloc(n + JW_PAD);

		ASSERT_TRUE(m != NULL, "malloc");
		memcpy(m, src, n);
		memset(m + n, '~', JW_PAD);
		jw_init(&a);
		jw_init(&b);
		jw_obj_begin(&a, NULL);
		jw_obj_begin(&b, NULL);
		/* the buffer grows on the way: both paths */
		for (int i = 0; i < 40; i++) {
			jw_members_pad(&a, m, n);
			jw_u64(&a, "i", (uint64_t)i);
			jw_members(&b, m, n);
			jw_u64(&b, "i", (uint64_t)i);
		}
		jw_obj_end(&a);
		jw_obj_end(&b);
		ASSERT_OK(jw_error(&a), "no error");
		ASSERT_STREQ(jw_data(&a), jw_data(&b), "the same bytes as jw_members()");
		jw_reset(&a);
		jw_members_pad(&a, m, n);
		ASSERT_EQ(jw_error(&a), n ? EINVAL : 0, "at the top level: misuse");
		jw_free(&a);
		jw_free(&b);
		free(m);
	}
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

/* ---- integers: snprintf is the oracle ---- */

static bool check_u64(struct jw *w, uint64_t v)
{
	char want[32];

	jw_reset(w);
	jw_u64(w, NULL, v);
	snprintf(want, sizeof(want), "%" PRIu64, v);
	if (!strcmp(jw_data(w), want) && jw_len(w) == strlen(want))
		return true;
	return ASSERT_STREQ(jw_data(w), want, "jw_u64") &&
	       ASSERT_EQ(jw_len(w), strlen(want), "len");
}

static bool check_i64(struct jw *w, int64_t v)
{
	char want[32];

	jw_reset(w);
	jw_i64(w, NULL, v);
	snprintf(want, sizeof(want), "%" PRId64, v);
	if (!strcmp(jw_data(w), want) && jw_len(w) == strlen(want))
		return true;
	return ASSERT_STREQ(jw_data(w), want, "jw_i64") &&
	       ASSERT_EQ(jw_len(w), strlen(want), "len");
}

static bool check_hex(struct jw *w, uint64_t v)
{
	char want[32];

	jw_reset(w);
	jw_hex(w, NULL, v);
	snprintf(want, sizeof(want), "\"0x%" PRIx64 "\"", v);
	if (!strcmp(jw_data(w), want) && jw_len(w) == strlen(want))
		return true;
	return ASSERT_STREQ(jw_data(w), want, "jw_hex") &&
	       ASSERT_EQ(jw_len(w), strlen(want), "len");
}

static bool check_int(struct jw *w, uint64_t v)
{
	return check_u64(w, v) && check_i64(w, (int64_t)v) && check_i64(w, -(int64_t)(v >> 1)) &&
	       check_hex(w, v);
}

/* Every digit count and chunk boundary: 10^k - 1, 10^k, 10^k + 1, 2^k +- 1, the extremes. */
static void test_jw_int_edges(void)
{
	static const uint64_t fixed[] = {
		0,
		1,
		9,
		10,
		11,
		99,
		100,
		101,
		999,
		1000,
		4294967295ull,
		4294967296ull,
		99999999ull,
		100000000ull,
		9999999999999999ull,
		10000000000000000ull,
		(uint64_t)INT64_MAX,
		(uint64_t)INT64_MAX + 1,
		UINT64_MAX - 1,
		UINT64_MAX,
	};
	struct jw w;
	uint64_t p = 1;
	int k;

	jw_init(&w);
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (!check_int(&w, fixed[i]))
			goto out;
	for (k = 0; k < 20; k++, p *= 10)
		if (!check_int(&w, p - 1) || !check_int(&w, p) || !check_int(&w, p + 1) ||
		    !check_i64(&w, -(int64_t)(p - 1)) ||
		    (k < 19 && (!check_i64(&w, -(int64_t)p) || !check_i64(&w, -(int64_t)p - 1))))
			goto out;
	for (k = 0; k < 64; k++) {
		uint64_t b = 1ull << k;

		if (!check_int(&w, b - 1) || !check_int(&w, b) || !check_int(&w, b + 1) ||
		    !check_i64(&w, -(int64_t)(b - 1)) || !check_i64(&w, (int64_t)b))
			goto out;
	}
	/* the negatives snprintf prints with the most digits */
	if (!check_i64(&w, INT64_MIN) || !check_i64(&w, INT64_MIN + 1) || !check_i64(&w, -1) ||
	    !check_i64(&w, -9) || !check_i64(&w, -10) || !check_i64(&w, -99) ||
	    !check_i64(&w, -100) || !check_i64(&w, INT64_MAX))
		goto out;
	/* every value of up to 5 digits, alone and as the low chunk of a larger one */
	for (uint64_t v = 0; v < 100000; v++)
		if (!check_int(&w, v) || !check_int(&w, 100000000ull + v * 997))
			goto out;
	/* runs across the 10^8 and 10^16 chunk boundaries */
	for (uint64_t v = 100000000ull - 300; v < 100000000ull + 300; v++)
		if (!check_int(&w, v) || !check_int(&w, v * 100000000ull))
			goto out;
	/* as values of keys, next to each other */
	jw_reset(&w);
	jw_obj_begin(&w, NULL);
	jw_u64(&w, "a", 0);
	jw_i64(&w, "b", INT64_MIN);
	jw_u64(&w, "c", UINT64_MAX);
	jw_hex(&w, "d", 0xa);
	jw_i64(&w, "e", -7);
	jw_obj_end(&w);
	ASSERT_STREQ(jw_data(&w),
		     "{\"a\":0,\"b\":-9223372036854775808,\"c\":18446744073709551615,"
		     "\"d\":\"0xa\",\"e\":-7}",
		     "numbers in an object");
out:
	jw_free(&w);
}

static uint64_t int_rng = 0x853c49e6748fea9bull;

static uint64_t int_rng_next(void)
{
	return unit_rng(&int_rng);
}

/* A few million random values of every magnitude, formatted three ways. */
static void test_jw_int_random(void)
{
	struct jw w;
	long i;

	jw_init(&w);
	for (i = 0; i < 3000000; i++) {
		uint64_t r = int_rng_next();
		uint64_t v = r >> (int_rng_next() % 64); /* every bit length */

		if (!check_u64(&w, v) || !check_u64(&w, r))
			break;
		if (!check_i64(&w, (int64_t)r) ||
		    !check_i64(&w, (i & 1) ? -(int64_t)(v >> 1) : (int64_t)(v >> 1)))
			break;
		if ((i & 3) == 0 && !check_hex(&w, v))
			break;
	}
	ASSERT_EQ(i, 3000000L, "all values");
	jw_free(&w);
}

/* ---- the copy-while-checking fast paths of keys and strings, at their limits ---- */

/* The JSON string of a + mid + b: mid already escaped, a and b plain. */
static void quoted(char *q, const char *a, size_t an, const char *mid, const char *b, size_t bn)
{
	*q++ = '"';
	memcpy(q, a, an);
	q += an;
	q = stpcpy(q, mid);
	memcpy(q, b, bn);
	q += bn;
	*q++ = '"';
	*q = '\0';
}

static void test_jw_fast_path_limits(void)
{
	static const struct {
		const char *in, *out;
	} specials[] = {
		{ "", "" }, /* none: plain only */
		{ "\"", "\\\"" },
		{ "\n", "\\n" },
		{ "\xff", "\\u00ff" },
		{ "\xc3\xa9", "\xc3\xa9" }, /* valid UTF-8: copied, but off the fast path */
		{ "\x7f", "\x7f" },
	};
	char in[256], q[512], want[4096];
	struct jw w;
	int len, pos;

	jw_init(&w);
	for (size_t sp = 0; sp < sizeof(specials) / sizeof(specials[0]); sp++) {
		size_t sl = strlen(specials[sp].in);

		for (len = 0; len <= 140; len++) {
			for (pos = 0; pos <= len; pos++) {
				/* pos 'a's, the special, len - pos 'b's */
				memset(in, 'a', (size_t)pos);
				memcpy(in + pos, specials[sp].in, sl);
				memset(in + pos + sl, 'b', (size_t)(len - pos));
				in[len + sl] = '\0';
				quoted(q, in, (size_t)pos, specials[sp].out, in + pos + sl,
				       (size_t)(len - pos));
				snprintf(want, sizeof(want), "{%s:%s,\"n\":%s,\"m\":%s}", q, q, q,
					 q);
				jw_reset(&w);
				jw_obj_begin(&w, NULL);
				jw_str(&w, in, in); /* as a key and as a value */
				jw_strn(&w, "n", in, len + sl); /* n: exactly its length */
				jw_strn(&w, "m", in, len + sl + 1); /* n: up to the NUL */
				jw_obj_end(&w);
				if (!ASSERT_STREQ(jw_data(&w), want, "key, str, strn") ||
				    !ASSERT_EQ(jw_len(&w), strlen(want), "len")) {
					UNIT_LOG("special %zu len %d pos %d\n", sp, len, pos);
					goto out;
				}
			}
		}
	}
	/* strn cut inside the plain part */
	memset(in, 'c', 200);
	in[200] = '\0';
	for (len = 0; len <= 200; len++) {
		quoted(q, in, (size_t)len, "", "", 0);
		jw_reset(&w);
		jw_strn(&w, NULL, in, (size_t)len);
		if (!ASSERT_STREQ(jw_data(&w), q, "strn cut"))
			goto out;
	}
out:
	jw_free(&w);
}

/* The slow paths of keys and strings grow the buffer right where they write. */
static void test_jw_slow_path_growth(void)
{
	char filler[600], str[300], key[300], want[2048];
	struct jw w;
	size_t fill;

	memset(str, 's', sizeof(str) - 1);
	str[sizeof(str) - 1] = '\0';
	memset(key, 'k', sizeof(key) - 1);
	key[sizeof(key) - 1] = '\0';
	for (fill = 0; fill < sizeof(filler) - 1; fill++) {
		memset(filler, 'f', fill);
		filler[fill] = '\0';
		key[10] = '"';
		str[150] = '\t';
		jw_init(&w); /* a fresh buffer each time: it grows inside the slow path */
		jw_obj_begin(&w, NULL);
		jw_str(&w, "f", filler);
		jw_str(&w, key, str);
		jw_strn(&w, "long", str, 200); /* long, nothing to escape before the cut */
		jw_obj_end(&w);
		key[10] = '\0';
		str[150] = '\0';
		snprintf(want, sizeof(want),
			 "{\"f\":\"%s\",\"%s\\\"%s\":\"%s\\t%s\",\"long\":\"%s\\t%.49s\"}", filler,
			 key, key + 11, str, str + 151, str, str + 151);
		if (!ASSERT_OK(jw_error(&w), "no error") ||
		    !ASSERT_STREQ(jw_data(&w), want, "text") ||
		    !ASSERT_EQ(jw_len(&w), strlen(want), "len")) {
			UNIT_LOG("fill %zu\n", fill);
			jw_free(&w);
			return;
		}
		jw_free(&w);
	}
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
	return unit_rng(&rng_state);
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

/* ---- literal keys: the inline fast path of jsonw.h against the functions ---- */

/*
 * The same calls twice: through the macros (a literal key takes the inline
 * path) and through the functions themselves (parenthesized names are not
 * macro calls). Strings and numbers come from variables, so only the key and
 * jw_str()'s literal value differ in how they are written.
 */
#define LIT_DOC(W, OBJ, ARR, STR, STRN, U64, I64, BOOL, v, n, u, i)                          \
	do {                                                                                 \
		jw_obj_begin(W, NULL);                                                       \
		OBJ(W, "o");                                                                 \
		U64(W, "", u);                                                               \
		U64(W, "k", u);                                                              \
		I64(W, "ab", i);                                                             \
		BOOL(W, "abc", (int)(u & 1));                                                \
		BOOL(W, "abcd", 0);                                                          \
		STR(W, "abcde", v);                                                          \
		STR(W, "abcdefg", "literal value");                                          \
		STR(W, "abcdefgh", "");                                                      \
		STRN(W, "abcdefghijklmno", v, n);                                            \
		STRN(W, "abcdefghijklmnop", v, (size_t)-1);                                  \
		ARR(W, "abcdefghijklmnopq");                                                 \
		OBJ(W, NULL);                                                                \
		U64(W, "abcdefghijklmnopqrstuvwxyz012345", u); /* JW_LIT_MAX bytes */        \
		U64(W, "abcdefghijklmnopqrstuvwxyz0123456", u); /* one more: general path */ \
		STR(W, "k\"", v); /* to escape: general path */                              \
		jw_obj_end(W);                                                               \
		jw_arr_end(W);                                                               \
		jw_obj_end(W);                                                               \
		jw_obj_end(W);                                                               \
	} while (0)

#define MAC_OBJ(w, k) jw_obj_begin(w, k)
#define MAC_ARR(w, k) jw_arr_begin(w, k)
#define MAC_STR(w, k, v) jw_str(w, k, v)
#define MAC_STRN(w, k, v, n) jw_strn(w, k, v, n)
#define MAC_U64(w, k, v) jw_u64(w, k, v)
#define MAC_I64(w, k, v) jw_i64(w, k, v)
#define MAC_BOOL(w, k, v) jw_bool(w, k, v)
#define FN_OBJ(w, k) (jw_obj_begin)(w, k)
#define FN_ARR(w, k) (jw_arr_begin)(w, k)
#define FN_STR(w, k, v) (jw_str)(w, k, v)
#define FN_STRN(w, k, v, n) (jw_strn)(w, k, v, n)
#define FN_U64(w, k, v) (jw_u64)(w, k, v)
#define FN_I64(w, k, v) (jw_i64)(w, k, v)
#define FN_BOOL(w, k, v) (jw_bool)(w, k, v)

static void test_jw_lit_keys(void)
{
	static const char *const strs[] = {
		"",	"a",	     "loop0", "kworker/1:1H", "\xc3\xa9t\xc3\xa9",
		"a\"b", "tab\there", "\xff",  NULL,
	};
	static const uint64_t nums[] = { 0, 9, 10, 99, 4096, 12345678, 123456789, UINT64_MAX };
	char longs[3][80];
	const char *v;
	struct jw a, b;
	size_t n;

#ifdef __OPTIMIZE__
	/* what the macros decide (at -O0 every key takes the general path) */
	ASSERT_TRUE(JW_LIT("offcpu_blocked_ns"), "a literal key");
	ASSERT_TRUE(JW_LIT(""), "the empty key");
#endif
	ASSERT_FALSE(JW_LIT("k\""), "a key to escape");
	ASSERT_FALSE(JW_LIT("\xc3\xa9"), "a UTF-8 key");
	ASSERT_FALSE(JW_LIT("abcdefghijklmnopqrstuvwxyz0123456"), "a longer key");
	ASSERT_FALSE(JW_LIT(NULL), "NULL");
	v = strs[1];
	ASSERT_FALSE(JW_LIT(v), "a variable");

	/* plain strings around JW_STR_FAST, and one to escape after it */
	for (int i = 0; i < 3; i++) {
		memset(longs[i], 'x', sizeof(longs[i]));
		longs[i][JW_STR_FAST - 1 + i] = '\0';
	}
	longs[2][JW_STR_FAST] = '\n';

	/* a from an empty buffer (the first calls grow it), b reused without growing */
	jw_init(&b);
	for (size_t si = 0; si < sizeof(strs) / sizeof(strs[0]) + 3; si++) {
		v = si < sizeof(strs) / sizeof(strs[0]) ? strs[si] : longs[si - 9];
		for (size_t ni = 0; ni < sizeof(nums) / sizeof(nums[0]); ni++) {
			uint64_t u = nums[ni];
			int64_t i = (int64_t)(u * 0x9e3779b97f4a7c15ull);

			n = ni % 3 ? ni : JW_STR_FAST + 1; /* strn cut, or not */
			jw_init(&a);
			jw_reset(&b);
			LIT_DOC(&a, MAC_OBJ, MAC_ARR, MAC_STR, MAC_STRN, MAC_U64, MAC_I64, MAC_BOOL,
				v, n, u, i);
			LIT_DOC(&b, FN_OBJ, FN_ARR, FN_STR, FN_STRN, FN_U64, FN_I64, FN_BOOL, v, n,
				u, i);
			if (!ASSERT_OK(jw_error(&a), "no error") ||
			    !ASSERT_STREQ(jw_data(&a), jw_data(&b), "macros = functions") ||
			    !ASSERT_EQ(jw_len(&a), jw_len(&b), "len")) {
				UNIT_LOG("string %zu number %zu\n", si, ni);
				jw_free(&a);
				goto out;
			}
			jw_free(&a);
		}
	}
	(jw_i64)(&b, "x", 0); /* b is at the top level: keep the functions in use */

	/* misuse and errors: the same error, nothing written */
	jw_init(&a);
	jw_u64(&a, "k", 1);
	ASSERT_EQ(jw_error(&a), EINVAL, "literal key at the top");
	jw_reset(&a);
	jw_arr_begin(&a, NULL);
	jw_str(&a, "k", "v");
	ASSERT_EQ(jw_error(&a), EINVAL, "literal key in an array");
	jw_reset(&a);
	jw_obj_begin(&a, NULL);
	for (int d = 1; d < JW_MAX_DEPTH; d++)
		jw_obj_begin(&a, "o");
	ASSERT_OK(jw_error(&a), "max depth");
	jw_arr_begin(&a, "o");
	ASSERT_EQ(jw_error(&a), EINVAL, "too deep");
	n = jw_len(&a);
	jw_bool(&a, "b", 1);
	jw_strn(&a, "s", "v", 1);
	ASSERT_EQ(jw_len(&a), n, "nothing after the error");
	jw_free(&a);
out:
	jw_free(&b);
}

int main(void)
{
	RUN_TEST(test_jw_nested);
	RUN_TEST(test_jw_numbers);
	RUN_TEST(test_jw_escape);
	RUN_TEST(test_jw_strn);
	RUN_TEST(test_jw_members);
	RUN_TEST(test_jw_members_pad);
	RUN_TEST(test_jw_misuse);
	RUN_TEST(test_jw_lines);
	RUN_TEST(test_jw_growth);
	RUN_TEST(test_jw_int_edges);
	RUN_TEST(test_jw_int_random);
	RUN_TEST(test_jw_fast_path_limits);
	RUN_TEST(test_jw_slow_path_growth);
	RUN_TEST(test_jw_jq);
	RUN_TEST(test_jw_lit_keys);
	return unit_result();
}
