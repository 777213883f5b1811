// SPDX-License-Identifier: GPL-2.0
/*
 * khz: CONFIG_HZ from a kernel config file, plain or gzip'd as /proc/config.gz
 * (src/load/khz.c), which turns inode->dirtied_when into a time (--writeback
 * files, bpf/wbfile.bpf.h).
 */
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "unit.h"
#include "load/khz.h"

static const char cfg[] = "# Linux kernel config\n"
			  "CONFIG_HZ_PERIODIC=y\n"
			  "# CONFIG_HZ_100 is not set\n"
			  "CONFIG_HZ_250=y\n"
			  "CONFIG_HZ=250\n"
			  "CONFIG_HZ_X=1\n";

static char dir[] = "/tmp/it_test_khz.XXXXXX";

static void put(const char *name, const char *text, int gz, char *path, size_t n)
{
	snprintf(path, n, "%s/%s", dir, name);
	if (gz) {
		gzFile f = gzopen(path, "w");

		gzputs(f, text);
		gzclose(f);
	} else {
		FILE *f = fopen(path, "w");

		fputs(text, f);
		fclose(f);
	}
}

static void test_khz_plain_and_gz(void)
{
	char p[128];

	put("plain", cfg, 0, p, sizeof(p));
	ASSERT_EQ(khz_from_config(p), 250u, "plain config");
	unlink(p);
	put("config.gz", cfg, 1, p, sizeof(p));
	ASSERT_EQ(khz_from_config(p), 250u, "gzip'd config");
	unlink(p);
}

static void test_khz_not_there(void)
{
	char p[128];

	ASSERT_EQ(khz_from_config("/nonexistent/config"), 0u, "no file");
	put("nohz", "CONFIG_HZ_250=y\n# CONFIG_HZ is not set\n", 0, p, sizeof(p));
	ASSERT_EQ(khz_from_config(p), 0u, "no CONFIG_HZ line");
	unlink(p);
	put("bad", "CONFIG_HZ=fast\n", 0, p, sizeof(p));
	ASSERT_EQ(khz_from_config(p), 0u, "not a number");
	unlink(p);
	put("zero", "CONFIG_HZ=0\n", 0, p, sizeof(p));
	ASSERT_EQ(khz_from_config(p), 0u, "zero");
	unlink(p);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		printf("FAIL test_khz_setup: cannot create the temp dir in /tmp\n");
		return 1;
	}
	RUN_TEST(test_khz_plain_and_gz);
	RUN_TEST(test_khz_not_there);
	rmdir(dir);
	return unit_result();
}
