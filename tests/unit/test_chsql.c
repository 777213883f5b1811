// SPDX-License-Identifier: GPL-2.0
/*
 * test_chsql: report --from's SQL for -f PATTERN (src/report/chsql.c): the
 * pattern as a regular expression for the server's match() matches the names
 * fnmatch(3) matches, as report's filter over a recording does (filter.c).
 * The oracle is the C library's fnmatch(); the expression is run by POSIX
 * extended regexps, whose syntax agrees with re2's for what chsql writes.
 */
#include <fnmatch.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/chsrc.h"
#include "unit.h"

static const char *const patterns[] = {
	"/data/*.db", "*/w2.0.[01]", "/srv/a?c",	 "*.log",	   "[[]bdev]",
	"/x/[!a-c]*", "/x/[]x]*",    "/a.b/(c)+{d}|e$^", "\\*lit",	   "/dev/loo[p]4",
	"*",	      "/x/\\a\\.b",  "[^ab]z",		 "/p/[a-c][!0-9]", "*[",
};

static const char *const names[] = {
	"/data/a.db",
	"/data/sub/b.db",
	"/tmp/flm/mnt/d2/w2.0.1",
	"/tmp/w2.0.2",
	"/srv/abc",
	"/srv/a/c",
	"/var/log/x.log",
	"[bdev]",
	"/x/dz",
	"/x/az",
	"/x/]a",
	"/x/xa",
	"/a.b/(c)+{d}|e$^",
	"/a.b/cd",
	"*lit",
	"xlit",
	"/dev/loop4",
	"/dev/loop44",
	"",
	"/x/a.b",
	"/x/axb",
	"cz",
	"az",
	"/p/bq",
	"/p/b1",
	"ab[",
	"memfd:x (deleted)",
};

static void test_glob(void)
{
	int bad = 0, tried = 0, matched = 0;

	for (size_t p = 0; p < sizeof(patterns) / sizeof(patterns[0]); p++) {
		struct nat_buf re = { 0 };
		regex_t rx;

		if (!ASSERT_OK(ch_glob_regex(&re, patterns[p]), patterns[p]) ||
		    nat_buf_room(&re, 1))
			continue;
		re.p[re.len] = '\0';
		if (!ASSERT_OK(regcomp(&rx, (char *)re.p, REG_EXTENDED | REG_NOSUB),
			       (char *)re.p)) {
			nat_buf_free(&re);
			continue;
		}
		for (size_t n = 0; n < sizeof(names) / sizeof(names[0]); n++) {
			int want = !fnmatch(patterns[p], names[n], 0);
			int got = !regexec(&rx, names[n], 0, NULL, 0);

			tried++;
			matched += want;
			if (want != got) {
				bad++;
				unit__fail(__FILE__, __LINE__,
					   "'%s' (%s) on '%s': fnmatch %d, regex %d", patterns[p],
					   (char *)re.p, names[n], want, got);
			}
		}
		regfree(&rx);
		nat_buf_free(&re);
	}
	ASSERT_EQ(bad, 0, "the regexps match what fnmatch matches");
	ASSERT_TRUE(matched > 20 && matched < tried - 20, "both outcomes tried");
}

int main(void)
{
	RUN_TEST(test_glob);
	return unit_result();
}
