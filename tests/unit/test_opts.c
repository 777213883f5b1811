// SPDX-License-Identifier: GPL-2.0
/*
 * The option tables (src/lib/opts.c) and the one filter parser (cli_filter): what a
 * table of rows gives getopt and --help, the one wording of getopt errors, and the
 * filters meaning the same to the daemon and to `report` (`-m 10` refused by both).
 * The expected strings are written here by hand.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"
#include "service/cli.h"
#include "lib/opts.h"
#include "report/report.h"
#include "top/topopts.h"
#include "bench/bench.h"

static const struct opt_row row_a = { .name = "alpha",
				      .key = 'a',
				      .group = "Group:",
				      .help = "a flag" };
static const struct opt_row row_b = { .name = "beta",
				      .key = 'b',
				      .arg = "N",
				      .help = "two lines:\nthe second" };
static const struct opt_row row_c = { .name = "gamma",
				      .key = 300,
				      .arg = "FILE",
				      .help = "long only" };
static const struct opt_row row_h = { .name = "help", .key = 301, .help = "this help" };
static const struct opt_row *const rows[] = { &row_a, &row_b, &row_c, &row_h, NULL };
static const struct opt_cmd cmd = { .prog = "iotracer demo",
				    .head = "Usage: demo\n",
				    .tail = "End.\n",
				    .rows = rows };

/* Text written to a memstream by fn. */
struct seen {
	int keys[8], n;
	char args[8][16];
};

static int one(void *ctx, int key, const char *arg)
{
	struct seen *s = ctx;

	if (s->n < 8) {
		s->keys[s->n] = key;
		snprintf(s->args[s->n], sizeof(s->args[0]), "%s", arg ? arg : "-");
		s->n++;
	}
	return 0;
}

/* Run opts_parse on args; out and err collected (free them). */
static int parse(const char *const *args, struct seen *s, char **out, char **err)
{
	char *argv[16];
	int argc = 0, ret;
	size_t ol, el;
	FILE *fo = open_memstream(out, &ol), *fe = open_memstream(err, &el);

	while (args[argc] && argc < 15) {
		argv[argc] = (char *)args[argc];
		argc++;
	}
	argv[argc] = NULL;
	memset(s, 0, sizeof(*s));
	ret = opts_parse(&cmd, argc, argv, one, s, fo, fe);
	fclose(fo);
	fclose(fe);
	return ret;
}

static void test_opts_tables(void)
{
	struct option lo[8];
	char shortopts[16];

	opts_tables(&cmd, lo, shortopts);
	ASSERT_STREQ(shortopts, ":ab:", "short string: letters only, ':' after an argument");
	ASSERT_STREQ(lo[2].name, "gamma", "long name");
	ASSERT_EQ(lo[2].has_arg, required_argument, "argument");
	ASSERT_EQ(lo[2].val, 300, "code");
	ASSERT_EQ(lo[0].has_arg, no_argument, "flag");
	ASSERT_TRUE(lo[4].name == NULL, "terminated");
	ASSERT_TRUE(opts_row(&cmd, 300) == &row_c, "row of a code");
}

static void test_opts_usage(void)
{
	char *buf;
	size_t n;
	FILE *f = open_memstream(&buf, &n);

	opts_usage(&cmd, f);
	fclose(f);
	ASSERT_STREQ(buf,
		     "Usage: demo\n"
		     "\nGroup:\n"
		     "  -a, --alpha            a flag\n"
		     "  -b, --beta N           two lines:\n"
		     "                         the second\n"
		     "      --gamma FILE       long only\n"
		     "      --help             this help\n"
		     "End.\n",
		     "usage");
	free(buf);
}

static void test_opts_parse(void)
{
	struct seen s;
	char *out, *err;

	ASSERT_EQ(parse((const char *const[]){ "demo", "-a", "--beta", "3", "--gamma=x", NULL }, &s,
			&out, &err),
		  0, "ok");
	ASSERT_EQ(s.n, 3, "three options");
	ASSERT_EQ(s.keys[2], 300, "long-only code");
	ASSERT_STREQ(s.args[1], "3", "value");
	free(out);
	free(err);
	ASSERT_EQ(parse((const char *const[]){ "demo", "--help", NULL }, &s, &out, &err), 1,
		  "help");
	ASSERT_TRUE(!strncmp(out, "Usage: demo\n", 12), "help printed to out");
	free(out);
	free(err);
}

/* One wording for every command: the subcommand named, then the Try line. */
static void test_opts_errors(void)
{
	static const struct {
		const char *args[4];
		const char *want;
	} cases[] = {
		{ { "demo", "-x" }, "iotracer: demo: unknown option '-x'\n" },
		{ { "demo", "--nope" }, "iotracer: demo: unknown or ambiguous option '--nope'\n" },
		{ { "demo", "-b" }, "iotracer: demo: option '--beta' requires an argument\n" },
		{ { "demo", "--gamma" },
		  "iotracer: demo: option '--gamma' requires an argument\n" },
		{ { "demo", "--alpha=1" },
		  "iotracer: demo: option '--alpha' doesn't allow an argument\n" },
		{ { "demo", "stray" }, "iotracer: demo: unexpected argument 'stray'\n" },
	};
	struct seen s;
	char *out, *err, want[160];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ASSERT_EQ(parse(cases[i].args, &s, &out, &err), 2, cases[i].want);
		snprintf(want, sizeof(want), "%sTry 'iotracer demo --help'.\n", cases[i].want);
		ASSERT_STREQ(err, want, cases[i].args[1]);
		ASSERT_STREQ(out, "", "nothing on out");
		free(out);
		free(err);
	}
}

/* -m: one meaning for the daemon and report (a bare number is refused by both). */
static void test_filter_min_latency(void)
{
	const struct opt_row *m = cli_row("min-latency");
	struct cli_src src;
	struct it_opts o;
	char *err;
	size_t n;
	FILE *f;

	if (!ASSERT_TRUE(m && m->key == 'm', "the run's row"))
		return;
	for (int offline = 0; offline < 2; offline++) {
		f = open_memstream(&err, &n);
		src = (struct cli_src){ .err = f, .cmd = offline ? "report" : NULL };
		cli_defaults(&o);
		o.offline = offline;
		ASSERT_EQ(cli_filter('m', "10", &o, &src), CLI_USAGE, "-m 10");
		ASSERT_EQ(cli_filter('m', "10ms", &o, &src), CLI_RUN, "-m 10ms");
		ASSERT_EQ(o.min_lat_ns, 10000000, "10 ms");
		ASSERT_EQ(cli_filter('m', "0", &o, &src), CLI_RUN, "-m 0");
		fclose(f);
		ASSERT_STREQ(
			err,
			offline ?
				"iotracer: report: --min-latency: bad value '10' (expected a number "
				"with a unit: ns, us, ms, s, m or h, e.g. 10ms or 10s)\n" :
				"iotracer: --min-latency: bad value '10' (expected a number with a "
				"unit: ns, us, ms, s, m or h, e.g. 10ms or 10s)\n",
			"message");
		free(err);
		cli_free(&o);
	}
}

/* Offline (report): -d keeps the names as given, /dev/ cut; since/until parse times. */
static void test_filter_offline(void)
{
	struct cli_src src = { .err = stderr, .cmd = "report" };
	struct it_opts o;

	cli_defaults(&o);
	o.offline = 1;
	ASSERT_EQ(cli_filter('d', "/dev/vdz,253:99", &o, &src), CLI_RUN, "-d");
	ASSERT_EQ(o.nr_dev_names, 2, "two names");
	ASSERT_STREQ(o.dev_names[0], "vdz", "/dev/ cut");
	ASSERT_STREQ(o.dev_names[1], "253:99", "MAJ:MIN");
	ASSERT_EQ(o.nr_devs, 0, "not resolved here");
	ASSERT_EQ(cli_filter(cli_row("since")->key, "1764000000", &o, &src), CLI_RUN, "since");
	ASSERT_EQ(o.since_real, 1764000000ull * 1000000000ull, "epoch seconds");
	ASSERT_EQ(cli_filter(cli_row("until")->key, "2026-11-24T13:25:00Z", &o, &src), CLI_RUN,
		  "until");
	/* date -u -d 2026-11-24T13:25:00Z +%s */
	ASSERT_EQ(o.until_real, 1795526700ull * 1000000000ull, "RFC 3339");
	cli_free(&o);
}

/* report_main(argc, argv) with its stderr into buf (n bytes). Returns its exit status. */
static int run_report(int argc, char **argv, char *buf, size_t n)
{
	char path[] = "/tmp/it_opts_XXXXXX";
	int fd = mkstemp(path), saved = dup(2), ret;
	ssize_t got;

	buf[0] = '\0';
	if (!ASSERT_TRUE(fd >= 0 && saved >= 0, "temp file"))
		return -1;
	fflush(stderr);
	dup2(fd, 2);
	ret = report_main(argc, argv);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	got = pread(fd, buf, n - 1, 0);
	buf[got > 0 ? got : 0] = '\0';
	close(fd);
	unlink(path);
	return ret;
}

/* report_main: `report -m 10` is refused (exit 2, one line and the Try line on stderr). */
static void test_report_min_latency(void)
{
	char *argv[] = { "report", "-m", "10", "/nonexistent", NULL };
	char buf[512];

	ASSERT_EQ(run_report(4, argv, buf, sizeof(buf)), 2, "exit 2");
	ASSERT_STREQ(buf,
		     "iotracer: report: --min-latency: bad value '10' (expected a number with a "
		     "unit: ns, us, ms, s, m or h, e.g. 10ms or 10s)\n",
		     "one line naming it");
}

static const char *const demo_names[] = { "a", "bc", "d" };
OPTS_KW_TABLE(demo_kw, demo_names)

/* The one bad-value wording (lib/opts.c), and report's keyword lists from their tables. */
static void test_bad_value(void)
{
	char *by[] = { "report", "--by", "nobody", "/nonexistent", NULL };
	char *stage[] = { "report", "--stage", "q2x", "/nonexistent", NULL };
	char buf[512], small[4];
	size_t len = 0;
	char *err = NULL;
	FILE *f = open_memstream(&err, &len);

	if (!ASSERT_TRUE(f != NULL, "memstream"))
		return;
	ASSERT_EQ(opts_bad_value(f, "top", "sort", "x", "%s, %d", "iops", 3), 2, "exit 2");
	ASSERT_EQ(opts_bad_value(f, NULL, "mode", "y", "one"), 2, "exit 2");
	fclose(f);
	ASSERT_STREQ(err,
		     "iotracer: top: --sort: bad value 'x' (expected iops, 3)\n"
		     "iotracer: --mode: bad value 'y' (expected one)\n",
		     "the wording");
	free(err);
	ASSERT_STREQ(opts_kw_list(buf, sizeof(buf), demo_kw), "a, bc, d", "the list");
	ASSERT_STREQ(opts_kw_list(small, sizeof(small), demo_kw), "a, ", "cut, terminated");
	ASSERT_EQ(opts_kw_find(demo_kw, "d"), 2, "found");
	ASSERT_EQ(opts_kw_find(demo_kw, "b"), -1, "whole names only");
	ASSERT_STREQ(opts_bad_msg(small, sizeof(small), "arg", "x"), "bad", "cut, terminated");
	ASSERT_EQ(run_report(4, by, buf, sizeof(buf)), 2, "--by exit 2");
	ASSERT_STREQ(
		buf,
		"iotracer: report: --by: bad value 'nobody' (expected file, cgroup, pod, pid, comm)\n",
		"--by");
	ASSERT_EQ(run_report(4, stage, buf, sizeof(buf)), 2, "--stage exit 2");
	ASSERT_STREQ(buf,
		     "iotracer: report: --stage: bad value 'q2x' (expected total, q2c, q2d, d2c)\n",
		     "--stage");
}

/* A row's "{}": its keywords, a line broken after a comma past the help column's width. */
static const char *const long_names[] = { "first-keyword", "second-keyword", "third-keyword",
					  "fourth-keyword" };
OPTS_KW_TABLE(long_kw, long_names)

static void test_kw_usage(void)
{
	const struct opt_row r = { .name = "pick",
				   .key = 'k',
				   .arg = "KEY",
				   .kw = long_kw,
				   .help = "one of {}.\nnext line" };
	char *buf;
	size_t n;
	FILE *f = open_memstream(&buf, &n);

	opts_usage_row(f, &r);
	fclose(f);
	ASSERT_STREQ(
		buf,
		"  -k, --pick KEY         one of first-keyword, second-keyword, third-keyword,\n"
		"                         fourth-keyword.\n"
		"                         next line\n",
		"expanded, wrapped");
	free(buf);
}

/* Does text hold word w, not as a piece of a longer keyword ("raw" in "raw_syscalls")? */
static int has_word(const char *text, const char *w)
{
	size_t len = strlen(w);

	for (const char *p = strstr(text, w); p; p = strstr(p + 1, w)) {
		char before = p > text ? p[-1] : ' ', after = p[len];

		if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789_-", before) &&
		    !strchr("abcdefghijklmnopqrstuvwxyz0123456789_-", after ? after : ' '))
			return 1;
	}
	return 0;
}

/*
 * Every keyword option of every command (the run options, top, report, bench):
 * its --help names every value of the table its value is parsed with (the
 * row's .kw), so a keyword cannot be added without appearing in --help.
 */
static void test_kw_help(void)
{
	const struct opt_cmd *cmds[] = { cli_table(), top_opts(), report_opts(), bench_opts() };
	int rows = 0;

	for (size_t c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++) {
		for (int i = 0; cmds[c]->rows[i]; i++) {
			const struct opt_row *r = cmds[c]->rows[i];
			const char *k;
			char *buf, what[128];
			size_t n;
			FILE *f;

			if (!r->kw)
				continue;
			rows++;
			f = open_memstream(&buf, &n);
			opts_usage_row(f, r);
			fclose(f);
			for (int j = 0; (k = r->kw(j)); j++) {
				snprintf(what, sizeof(what), "%s --%s: --help names '%s'",
					 cmds[c]->prog, r->name, k);
				ASSERT_TRUE(has_word(buf, k), what);
			}
			free(buf);
		}
	}
	/* cli 7 (-l, --syscall-hooks, --writeback, --profile, --sink-compress, --mode,
	 * --qemu-uprobes), top 2 (-s, --group), report 2 (--stage, --by), bench 2
	 * (--preset, --workloads) */
	ASSERT_EQ(rows, 13, "the keyword options");
}

int main(void)
{
	RUN_TEST(test_opts_tables);
	RUN_TEST(test_opts_usage);
	RUN_TEST(test_opts_parse);
	RUN_TEST(test_opts_errors);
	RUN_TEST(test_filter_min_latency);
	RUN_TEST(test_filter_offline);
	RUN_TEST(test_report_min_latency);
	RUN_TEST(test_bad_value);
	RUN_TEST(test_kw_usage);
	RUN_TEST(test_kw_help);
	return unit_result();
}
