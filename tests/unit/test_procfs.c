// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for lib/procfs: the /proc parsers on known texts (stat,
 * schedstat, status, fdinfo), and the readers on this very process.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/procfs.h"
#include "unit.h"

static const char stat_a[] = "cpu  51356 0 19688 171722 990 0 1212 0 0 0\n"
			     "cpu0 23206 0 8694 89927 176 0 527 0 0 0\n"
			     "cpu1 28150 0 10993 81795 814 0 685 0 0 0\n"
			     "intr 1419499 0 0\nctxt 7151576\nbtime 1\n";

static void test_proc_stat(void)
{
	struct procfs_cpu a = { 0 }, b = { 0 };
	char buf[512];

	if (!ASSERT_OK(procfs_parse_stat(stat_a, &a), "parse"))
		return;
	ASSERT_EQ(a.ncpu, 2, "ncpu");
	ASSERT_EQ(a.idle_ticks, (uint64_t)(171722 + 990), "idle + iowait");
	/* 10 s later: 15 s of idle+iowait over 2 CPUs (1500 ticks at USER_HZ 100) */
	snprintf(buf, sizeof(buf), "cpu  99999 0 99999 %d %d 0 0 0 0 0\ncpu0 1\ncpu1 1\n",
		 171722 + 1400, 990 + 100);
	if (!ASSERT_OK(procfs_parse_stat(buf, &b), "parse b"))
		return;
	a.t_ns = 1000000000ull;
	b.t_ns = a.t_ns + 10000000000ull;
	/* user/system ticks are ignored on purpose: only idle time is exact */
	ASSERT_NEAR(procfs_busy_ns(&a, &b, 100), 5e9, 1, "busy ns = 2 x 10 s - 15 s");
	ASSERT_NEAR(procfs_busy_pct(&a, &b, 100), 25.0, 1e-9, "busy % per core");
	/* idle at USER_HZ 250 */
	ASSERT_NEAR(procfs_busy_pct(&a, &b, 250), 100.0 * (20 - 6) / 20, 1e-9, "HZ 250");
	b.t_ns = a.t_ns;
	ASSERT_TRUE(isnan(procfs_busy_pct(&a, &b, 100)), "zero elapsed");
	ASSERT_EQ(procfs_parse_stat("cpu0 1 2 3 4 5\n", &b), -EINVAL, "no cpu line");
	ASSERT_EQ(procfs_parse_stat("cpu  1 2 3\ncpu0 1\n", &b), -EINVAL, "short cpu line");
	ASSERT_EQ(procfs_parse_stat("cpu  1 2 3 4 5\n", &b), -EINVAL, "no cpuN lines");
}

static void test_schedstat_status(void)
{
	uint64_t v = 0;
	static const char status[] = "Name:\tiotracer\nVmHWM:\t   23848 kB\nVmRSS:\t  9000 kB\n"
				     "RssAnon:\t    4432 kB\nRssFile:\t 4568 kB\n";

	ASSERT_OK(procfs_parse_schedstat("2537738 37611 2\n", &v), "schedstat");
	ASSERT_EQ(v, 2537738ull, "run ns");
	ASSERT_EQ(procfs_parse_schedstat("x 1 2", &v), -EINVAL, "junk");
	ASSERT_EQ(procfs_parse_schedstat("12x 1 2", &v), -EINVAL, "junk after number");
	ASSERT_OK(procfs_parse_status_kb(status, "RssAnon", &v), "RssAnon");
	ASSERT_EQ(v, 4432ull, "RssAnon value");
	ASSERT_OK(procfs_parse_status_kb(status, "VmHWM", &v), "VmHWM");
	ASSERT_EQ(v, 23848ull, "VmHWM value");
	ASSERT_EQ(procfs_parse_status_kb(status, "RssShmem", &v), -ENOENT, "absent");
	ASSERT_EQ(procfs_parse_status_kb(status, "Rss", &v), -ENOENT, "prefix is not a key");
}

static void test_fdinfo(void)
{
	struct procfs_prog p = { 0 };
	static const char prog[] = "pos:\t0\nflags:\t02000002\nmnt_id:\t16\nino:\t1057\n"
				   "prog_type:\t26\nprog_jited:\t1\nprog_tag:\t993e808ed1b6e789\n"
				   "memlock:\t4096\nprog_id:\t939\nrun_time_ns:\t123456\n"
				   "run_cnt:\t789\nrecursion_misses:\t0\nverified_insns:\t300\n";
	static const char link[] = "pos:\t0\nflags:\t02000000\nlink_type:\ttracing\n"
				   "link_id:\t12\nprog_tag:\t993e808ed1b6e789\nprog_id:\t939\n";
	static const char map[] = "pos:\t0\nmap_type:\t27\nkey_size:\t0\nmap_id:\t300\n";

	ASSERT_EQ(procfs_parse_fdinfo_prog(prog, &p), 1, "program fd");
	ASSERT_EQ(p.id, 939u, "id");
	ASSERT_EQ(p.run_time_ns, 123456ull, "run_time_ns");
	ASSERT_EQ(p.run_cnt, 789ull, "run_cnt");
	ASSERT_EQ(procfs_parse_fdinfo_prog(link, &p), 0, "link fd is not a program");
	ASSERT_EQ(procfs_parse_fdinfo_prog(map, &p), 0, "map fd");
	ASSERT_EQ(procfs_parse_fdinfo_prog("prog_id:\t99999999999\n", &p), -EINVAL, "id range");
}

/* The readers on this process: its CPU time, memory, no BPF fds; files written and read back. */
static void test_readers(void)
{
	char path[] = "/tmp/test_procfs.XXXXXX", *t;
	struct procfs_cpu s;
	int64_t rss, hwm;
	int fd, progs, links, perf;
	size_t len;

	ASSERT_OK(procfs_cpu_read(&s), "/proc/stat");
	ASSERT_TRUE(s.ncpu >= 1 && s.t_ns > 0, "ncpu and time");
	ASSERT_TRUE(procfs_cpu_ns(getpid()) > 0, "our CPU time");
	ASSERT_EQ(procfs_cpu_ns(-1), 0ull, "no such process");
	procfs_mem(getpid(), &rss, &hwm);
	ASSERT_TRUE(rss > 0 && hwm >= rss, "RssAnon <= VmHWM");
	ASSERT_OK(procfs_bpf_fds(getpid(), &progs, &links, &perf), "our fds");
	ASSERT_TRUE(!progs && !links, "no BPF fds");
	ASSERT_EQ(procfs_bpf_fds(-1, &progs, &links, &perf), -1, "gone");
	fd = mkstemp(path);
	if (!ASSERT_TRUE(fd >= 0, "mkstemp"))
		return;
	close(fd);
	ASSERT_OK(procfs_write_file(path, "line 1\nline 2\n", 14), "write");
	t = procfs_read_file(path, &len);
	ASSERT_TRUE(t && len == 14 && !strcmp(t, "line 1\nline 2\n"), "read back");
	free(t);
	t = procfs_read_tail(path, 7, &len);
	ASSERT_TRUE(t && len == 7 && !strcmp(t, "line 2\n"), "tail");
	free(t);
	unlink(path);
	errno = 0;
	ASSERT_TRUE(!procfs_read_file(path, NULL) && errno == ENOENT, "missing file: ENOENT");
}

int main(void)
{
	RUN_TEST(test_proc_stat);
	RUN_TEST(test_schedstat_status);
	RUN_TEST(test_fdinfo);
	RUN_TEST(test_readers);
	return unit_result();
}
