// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for src/service/config.c: synthetic INI files in a temp dir, read
 * through config_parse() as the daemon does (file first, command line over it),
 * and the shipped example configs/iotracer.conf.
 */
#include "unit.h"
#include "iotracer.h"
#include "service/cli.h"
#include "service/config.h"
#include "cli_run.h"

/* Write tmpdir/name with text; returns its path (in path). */
static const char *conf(char *path, size_t n, const char *name, const char *text)
{
	snprintf(path, n, "%s/%s", tmpdir, name);
	if (unit_write_str(path, text))
		abort();
	return path;
}

static void test_config_good(void)
{
	char path[PATH_MAX], text[1024];
	struct run r;

	snprintf(text, sizeof(text),
		 "; a comment\n"
		 "# another\n"
		 "layers = syscall,block\n"
		 "pid = 10,20\n"
		 "comm = fio\n"
		 "cgroup = %s\n"
		 "dev = loop1   # inline comment\n"
		 "file = %s\n"
		 "interval = 2s\n"
		 "no-live = yes\n"
		 "quiet = no\n"
		 "ring-size = 1M\n"
		 "\n"
		 "[link]\n"
		 "mode = host\n"
		 "qemu-pid = 77\n"
		 "listen = unix:/tmp/x.sock\n"
		 "name = h1\n",
		 "/", file);
	RUN(&r, "--config", conf(path, sizeof(path), "good.conf", text));
	if (!ASSERT_EQ(r.ret, CLI_RUN, "ret") || !ASSERT_EQ(r.err_len, 0, "no error")) {
		UNIT_LOG("%s", r.err);
		goto out;
	}
	ASSERT_EQ(r.o.layers, (1u << IT_L_SYSCALL) | (1u << IT_L_BLOCK), "layers");
	ASSERT_EQ(r.o.nr_pids, 2, "pids");
	ASSERT_EQ(r.o.pids[1], 20, "pid 2");
	ASSERT_STREQ(r.o.comm, "fio", "comm");
	if (ASSERT_EQ(r.o.nr_cgroups, 1, "nr_cgroups"))
		ASSERT_STREQ(r.o.cgroups[0], "/", "cgroup");
	ASSERT_EQ(r.o.nr_devs, 1, "devs");
	ASSERT_EQ(r.o.devs[0], IT_MKDEV(7, 1), "dev");
	ASSERT_STREQ(r.o.file_path, file, "file");
	ASSERT_EQ(r.o.interval_ns, 2000000000ull, "interval");
	ASSERT_EQ(r.o.live, 0, "no-live");
	ASSERT_EQ(r.o.quiet, 0, "quiet = no");
	ASSERT_EQ(r.o.ring_size, 1u << 20, "ring size");
	ASSERT_EQ(r.o.mode, IT_MODE_HOST, "mode");
	ASSERT_EQ(r.o.nr_qemu_pids, 1, "qemu pids");
	ASSERT_EQ(r.o.nr_listens, 1, "listens");
	ASSERT_STREQ(r.o.name, "h1", "name");
	ASSERT_STREQ(r.o.config_path, path, "config path kept");
out:
	run_free(&r);
}

/* One bad file: config_parse says CLI_USAGE and prints exactly `want` (after the path). */
static bool bad_file(const char *name, const char *text, const char *want)
{
	char path[PATH_MAX], line[PATH_MAX + 256];
	struct run r;
	bool ok;

	RUN(&r, "--config", conf(path, sizeof(path), name, text));
	snprintf(line, sizeof(line), "iotracer: %s%s\n", path, want);
	ok = ASSERT_EQ(r.ret, CLI_USAGE, name) && ASSERT_STREQ(r.err, line, name);
	run_free(&r);
	return ok;
}

static void test_config_unknown_key(void)
{
	bad_file("unknown.conf", "dev = loop0\n\nfoo = 1\n", ":3: unknown key 'foo'");
	bad_file("unknown2.conf", "[record]\nbogus = 1\n", ":2: unknown key 'bogus' in [record]");
	bad_file("help.conf", "help = yes\n", ":1: unknown key 'help'");
	bad_file("config.conf", "config = /x\n", ":1: unknown key 'config'");
	bad_file("syntax.conf", "dev = loop0\njust words\n",
		 ":2: syntax error (expected KEY = VALUE or [SECTION])");
}

/* A binary or escape-laden file: its bytes named as \xNN, never written raw (issue 37). */
static void test_config_control_bytes(void)
{
	bad_file("bin1.conf", "a\x01\x1b[31mb = 1\n", ":1: unknown key 'a\\x01\\x1b[31mb'");
	bad_file("bin2.conf", "dev = \x1b[2Jloop0\n", ":1: dev: no block device '\\x1b[2Jloop0'");
	bad_file("bin3.conf",
		 "\x7f"
		 "ELF\x02\x01 = \x7f\n",
		 ":1: unknown key '\\x7fELF\\x02\\x01'");
}

static void test_config_wrong_section(void)
{
	bad_file("sect1.conf", "[link]\nmode = guest\ndev = loop0\n",
		 ":3: dev: belongs at the top of the file, before any [section]");
	bad_file("sect2.conf", "mode = guest\n", ":1: mode: belongs in section [link]");
	bad_file("sect3.conf", "[nosuch]\ndev = loop0\n",
		 ":2: dev: belongs at the top of the file, before any [section]");
}

static void test_config_bad_value(void)
{
	bad_file("val1.conf", "# x\ndev = loop0\nmin-latency = abc\n",
		 ":3: min-latency: bad value 'abc' (expected e.g. 250us, 10ms, 2s)");
	bad_file("val2.conf", "dev = loop9\n", ":1: dev: no block device 'loop9'");
	bad_file("val3.conf", "no-live = maybe\n",
		 ":1: no-live: bad value 'maybe' (expected yes or no)");
	bad_file("val4.conf", "\n\n[link]\nmode = sideways\n",
		 ":4: mode: bad value 'sideways' (expected standalone, guest, host)");
	bad_file("val5.conf", "sample =\n", ":1: sample: bad value '' (expected N >= 1: 1 in N)");
}

static void test_config_cannot_read(void)
{
	char path[PATH_MAX], want[PATH_MAX + 64];
	struct run r;

	snprintf(path, sizeof(path), "%s/none.conf", tmpdir);
	snprintf(want, sizeof(want), "iotracer: %s: cannot read: No such file or directory\n",
		 path);
	RUN(&r, "--config", path);
	ASSERT_EQ(r.ret, CLI_USAGE, "ret");
	ASSERT_STREQ(r.err, want, "message");
	run_free(&r);
}

/*
 * A directory opens for reading but every read fails (EISDIR): refused like a
 * missing file, never taken for an empty config.
 */
static void test_config_directory(void)
{
	char want[PATH_MAX + 64];
	struct run r;

	snprintf(want, sizeof(want), "iotracer: %s: cannot read: Is a directory\n", tmpdir);
	RUN(&r, "--config", tmpdir);
	ASSERT_EQ(r.ret, CLI_USAGE, "ret");
	ASSERT_STREQ(r.err, want, "message");
	run_free(&r);
}

/* The command line wins; a list given there replaces the file's list. */
static void test_config_cmdline_overrides(void)
{
	char path[PATH_MAX];
	struct run r;

	conf(path, sizeof(path), "over.conf",
	     "dev = loop0\npid = 1,2\nmin-latency = 1ms\nlayers = block\nsample = 3\n");
	RUN(&r, "-m", "2ms", "--config", path, "-d", "loop1", "--layers", "syscall", "-p", "9");
	if (!ASSERT_EQ(r.ret, CLI_RUN, "ret")) {
		UNIT_LOG("%s", r.err);
		goto out;
	}
	ASSERT_EQ(r.o.min_lat_ns, 2000000, "min latency from the command line");
	ASSERT_EQ(r.o.nr_devs, 1, "the command line's dev list only");
	ASSERT_EQ(r.o.devs[0], IT_MKDEV(7, 1), "dev loop1");
	ASSERT_EQ(r.o.layers, 1u << IT_L_SYSCALL, "layers replaced, not ORed");
	ASSERT_EQ(r.o.nr_pids, 1, "pids replaced");
	ASSERT_EQ(r.o.pids[0], 9, "pid");
	ASSERT_EQ(r.o.sample, 3, "sample from the file");
	run_free(&r);
	/* repeated on the command line: they accumulate there, still replacing the file */
	RUN(&r, "--config", path, "-d", "loop1", "-d", "loop0");
	ASSERT_EQ(r.o.nr_devs, 2, "two devs");
	ASSERT_EQ(r.o.devs[0], IT_MKDEV(7, 1), "first dev");
	ASSERT_EQ(r.o.nr_pids, 2, "pids from the file");
out:
	run_free(&r);
}

/* In the file too, lists accumulate over repeated keys, others: the last wins. */
static void test_config_lists(void)
{
	char path[PATH_MAX];
	struct run r;

	RUN(&r, "--config",
	    conf(path, sizeof(path), "lists.conf",
		 "dev = loop0\ndev = loop1,loop0\npid = 5\npid = 6,7\nlayers = block\n"
		 "layers = fs\ninterval = 1s\ninterval = 3s\n[link]\nmode = host\n"
		 "qemu-pid = 1\nqemu-pid = 2\nlisten = unix:/a\nlisten = unix:/b\n"));
	if (!ASSERT_EQ(r.ret, CLI_RUN, "ret")) {
		UNIT_LOG("%s", r.err);
		goto out;
	}
	ASSERT_EQ(r.o.nr_devs, 2, "devs (no duplicates)");
	ASSERT_EQ(r.o.nr_pids, 3, "pids");
	ASSERT_EQ(r.o.layers, (1u << IT_L_BLOCK) | (1u << IT_L_FS), "layers ORed");
	ASSERT_EQ(r.o.interval_ns, 3000000000ull, "last interval");
	ASSERT_EQ(r.o.nr_qemu_pids, 2, "qemu pids");
	ASSERT_EQ(r.o.nr_listens, 2, "listens");
out:
	run_free(&r);
}

/*
 * -m and --sample from the file; with --mode host they are refused, the file's
 * line named: host mode joins by every QEMU IO's record.
 */
static void test_config_thinning(void)
{
	char path[PATH_MAX], want[PATH_MAX + 160];
	struct run r;

	RUN(&r, "--config",
	    conf(path, sizeof(path), "thin.conf", "min-latency = 1ms\nsample = 4\n"));
	if (ASSERT_EQ(r.ret, CLI_RUN, "ret")) {
		ASSERT_EQ(r.o.min_lat_ns, 1000000, "min latency");
		ASSERT_EQ(r.o.sample, 4, "sample");
	}
	run_free(&r);
	RUN(&r, "--config", path, "--mode", "host");
	ASSERT_EQ(r.ret, CLI_USAGE, "refused in host mode");
	snprintf(want, sizeof(want),
		 "iotracer: %s:1: min-latency: --mode host needs a record of every QEMU IO to "
		 "join the guests' requests (thin the guest's records instead)\n",
		 path);
	ASSERT_STREQ(r.err, want, "the file's line named");
	run_free(&r);
}

/*
 * No file without --config (the service's unit passes it; issue 23: the installed file
 * took over every manual run); --help ignores a broken one; a value of the file says
 * its FILE:LINE when it is used (cli_where), one of the command line over it does not.
 */
static void test_config_only_given(void)
{
	char path[PATH_MAX], bad[PATH_MAX], where[PATH_MAX + 64], want[PATH_MAX + 64];
	struct run r;

	conf(path, sizeof(path), "given.conf",
	     "# a comment\nmin-latency = 5ms\n\n[metrics]\nmetrics = 127.0.0.1:1\n");
	conf(bad, sizeof(bad), "broken.conf", "nonsense = 1\n");
	RUN(&r, "--no-config");
	ASSERT_EQ(r.ret, CLI_RUN, "--no-config");
	ASSERT_TRUE(r.o.config_path == NULL, "no config path");
	run_free(&r);
	RUN(&r, "--help", "--config", bad);
	ASSERT_EQ(r.ret, CLI_EXIT_OK, "--help with a broken file");
	run_free(&r);
	RUN(&r, "--config", path, "--no-config");
	ASSERT_EQ(r.ret, CLI_USAGE, "both");
	run_free(&r);
	RUN(&r, "--config", path);
	if (ASSERT_EQ(r.ret, CLI_RUN, "--config")) {
		ASSERT_EQ(r.o.min_lat_ns, 5000000, "the file's value");
		snprintf(want, sizeof(want), "%s:5: metrics", path);
		ASSERT_STREQ(cli_where(&r.o, "metrics", where, sizeof(where)), want,
			     "a file's value says FILE:LINE");
		snprintf(want, sizeof(want), "%s:2: min-latency", path);
		ASSERT_STREQ(cli_where(&r.o, "min-latency", where, sizeof(where)), want, "line 2");
		ASSERT_STREQ(cli_where(&r.o, "json", where, sizeof(where)), "--json",
			     "an option not given");
	}
	run_free(&r);
	RUN(&r, "--config", path, "--metrics", "127.0.0.1:2");
	if (ASSERT_EQ(r.ret, CLI_RUN, "--config and --metrics"))
		ASSERT_STREQ(cli_where(&r.o, "metrics", where, sizeof(where)), "--metrics",
			     "the command line's over the file's");
	run_free(&r);
}

/*
 * Every option but the command-line-only ones is a config key (its row names
 * a section); names and codes are unique, as getopt and the file need.
 */
static void test_config_every_option_has_a_section(void)
{
	static const char *const cmdline_only[] = { "help", "version", "config", "no-config" };
	const struct cli_option *r, *q;

	for (int i = 0; (r = cli_option(i)); i++) {
		bool only = false;

		for (size_t k = 0; k < sizeof(cmdline_only) / sizeof(cmdline_only[0]); k++)
			only |= !strcmp(r->row.name, cmdline_only[k]);
		if (!ASSERT_EQ(r->section != NULL, !only, r->row.name) ||
		    !ASSERT_TRUE(cli_option_named(r->row.name) == r, r->row.name))
			return;
		for (int j = 0; (q = cli_option(j)); j++)
			if (!ASSERT_TRUE(q == r || q->row.key != r->row.key, r->row.name))
				return;
	}
}

#define MAX_SHOWN 64

struct shown {
	char keys[MAX_SHOWN][64];
	int n;
	bool ok;
};

/* One line of the shipped example: a "[section]", or a key (commented out or not). */
static void example_line(const char *line, char *section, size_t n, struct shown *sh)
{
	const struct cli_option *r;
	const char *p = line;
	char key[64];

	if (*p == '[') {
		snprintf(section, n, "%.*s", (int)strcspn(p + 1, "]"), p + 1);
		return;
	}
	if (*p == '#')
		p++;
	if (sscanf(p, "%63[a-z-] =", key) != 1 || !strstr(p, " = "))
		return;
	r = cli_option_named(key);
	if (!ASSERT_TRUE(r != NULL, key) ||
	    !ASSERT_TRUE(r->section && !strcmp(r->section, section), key)) {
		sh->ok = false;
		return;
	}
	if (sh->n < MAX_SHOWN)
		snprintf(sh->keys[sh->n++], sizeof(sh->keys[0]), "%s", key);
}

static bool example_shows(const struct shown *sh, const char *key)
{
	for (int i = 0; i < sh->n; i++)
		if (!strcmp(sh->keys[i], key))
			return true;
	return false;
}

static void test_config_shipped_example(void)
{
	static const char *const paths[] = { "configs/iotracer.conf",
					     "../../configs/iotracer.conf" };
	struct shown sh = { .ok = true };
	char line[512], section[64] = "";
	const struct cli_option *opt;
	const char *path = NULL;
	struct run r;
	FILE *f;

	for (size_t i = 0; i < 2 && !path; i++)
		if (!access(paths[i], R_OK))
			path = paths[i];
	if (!ASSERT_TRUE(path != NULL, "configs/iotracer.conf found (run from the repo root)"))
		return;
	RUN(&r, "--config", path);
	ASSERT_EQ(r.ret, CLI_RUN, "the example parses");
	ASSERT_EQ(r.err_len, 0, "without a message");
	run_free(&r);
	/* every key it shows (commented out or not) is a real option, in its section */
	f = fopen(path, "r");
	if (!ASSERT_TRUE(f != NULL, "open"))
		return;
	while (fgets(line, sizeof(line), f))
		example_line(line, section, sizeof(section), &sh);
	fclose(f);
	if (!ASSERT_TRUE(sh.ok, "keys valid"))
		return;
	/* and it documents every option that has a config key */
	for (int i = 0; (opt = cli_option(i)); i++)
		if (opt->section && !ASSERT_TRUE(example_shows(&sh, opt->row.name), opt->row.name))
			return;
}

int main(void)
{
	if (run_setup("config")) {
		printf("FAIL test_config_setup: cannot create the temp dir in /tmp\n");
		run_teardown();
		return 1;
	}
	RUN_TEST(test_config_good);
	RUN_TEST(test_config_unknown_key);
	RUN_TEST(test_config_control_bytes);
	RUN_TEST(test_config_wrong_section);
	RUN_TEST(test_config_bad_value);
	RUN_TEST(test_config_cannot_read);
	RUN_TEST(test_config_directory);
	RUN_TEST(test_config_cmdline_overrides);
	RUN_TEST(test_config_lists);
	RUN_TEST(test_config_thinning);
	RUN_TEST(test_config_only_given);
	RUN_TEST(test_config_every_option_has_a_section);
	RUN_TEST(test_config_shipped_example);
	run_teardown();
	return unit_result();
}
