// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for src/records/metrics.c: known synthetic histograms and counters
 * in, exact Prometheus text out; the exposition's invariants on random input.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "iotracer.h"
#include "records/metrics.h"

#define HIST_HELP                                                                           \
	"# HELP iotracer_request_duration_seconds Latency of finished requests per layer, " \
	"device, op and stage, from the log2 histograms (every request, whatever --sample " \
	"and --min-latency say).\n"                                                         \
	"# TYPE iotracer_request_duration_seconds histogram\n"
#define REQ_HELP                                                                       \
	"# HELP iotracer_requests_total Finished requests per layer, device and op.\n" \
	"# TYPE iotracer_requests_total counter\n"

/* dev 7:0 is "loop0", 7:1 a name that needs every escape, the rest "MAJ:MIN" */
static const char *test_dev(uint32_t dev, void *ctx)
{
	static char buf[32];

	if (dev == IT_MKDEV(7, 0))
		return "loop0";
	if (dev == IT_MKDEV(7, 1))
		return "a\\b\"c\nd";
	snprintf(buf, sizeof(buf), "%u:%u", IT_MAJOR(dev), IT_MINOR(dev));
	return buf;
}

/* metrics_write() of in, as a malloc'd string. */
static char *render(const struct metrics_in *in)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		abort();
	metrics_write(f, in);
	fclose(f);
	return text;
}

static void test_metrics_seconds(void)
{
	static const struct {
		uint64_t ns;
		const char *want;
	} cases[] = {
		{ 0, "0" },
		{ 1, "0.000000001" },
		{ 1023, "0.000001023" },
		{ 1000000000ull, "1" },
		{ 1500000000ull, "1.5" },
		{ 34359738367ull, "34.359738367" },
		{ UINT64_MAX, "18446744073.709551615" },
	};
	char buf[32];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (!ASSERT_STREQ(metrics_fmt_seconds(cases[i].ns, buf, sizeof(buf)), cases[i].want,
				  cases[i].want))
			return;
}

/*
 * One syscall histogram: 2 values in slot 3 (below the first edge), 5 in
 * slot 12, 1 in slot 40 (above the last edge: +Inf only). Empty stages and
 * the other families are not written.
 */
static void test_metrics_hist_exact(void)
{
	static const char want[] = HIST_HELP
		"iotracer_request_duration_seconds_bucket{layer=\"syscall\",device=\"loop0\",op=\"read\",stage=\"total\",le=\"0.000001023\"} 2\n"
		"iotracer_request_duration_seconds_bucket{layer=\"syscall\",device=\"loop0\",op=\"read\",stage=\"total\",le=\"0.000002047\"} 2\n"
		"iotracer_request_duration_seconds_bucket{layer=\"syscall\",device=\"loop0\",op=\"read\",stage=\"total\",le=\"0.000004095\"} 2\n"
		"iotracer_request_duration_seconds_bucket{layer=\"syscall\",device=\"loop0\",op=\"read\",stage=\"total\",le=\"0.000008191\"} 7\n"
		"iotracer_request_duration_seconds_bucket{layer=\"syscall\",device=\"loop0\",op=\"read\",stage=\"total\",le=\"0.000016383\"} 7\n"
		"iotracer_request_duration_seconds_bucket{layer=\"syscall\",device=\"loop0\",op=\"read\",stage=\"total\",le=\"0.000032767\"} 7\n"
		"iotracer_request_duration_seconds_bucket{layer=\"syscall\",device=\"loop0\",op=\"read\",stage=\"total\",le=\"0.000065535\"} 7\n"
		"iotracer_request_duration_seconds_bucket{layer=\"syscall\",device=\"loop0\",op=\"read\",stage=\"total\",le=\"0.000131071\"} 7\n"
		"iotracer_request_duration_seconds_bucket{layer=\"syscall\",device=\"loop0\",op=\"read\",stage=\"total\",le=\"0.000262143\"} 7\n"
		"iotracer_request_duration_seconds_bucket{layer=\"syscall\",device=\"loop0\",op=\"read\",stage=\"total\",le=\"0.000524287\"} 7\n"
		"iotracer_request_duration_seconds_bucket{layer=\"syscall\",device=\"loop0\",op=\"read\",stage=\"total\",le=\"0.001048575\"} 7\n"
		"iotracer_request_duration_seconds_bucket{layer=\"syscall\",device=\"loop0\",op=\"read\",stage=\"total\",le=\"0.002097151\"} 7\n"
		"iotracer_request_duration_seconds_bucket{layer=\"syscall\",device=\"loop0\",op=\"read\",stage=\"total\",le=\"0.004194303\"} 7\n"
		"iotracer_request_duration_seconds_bucket{layer=\"syscall\",device=\"loop0\",op=\"read\",stage=\"total\",le=\"0.008388607\"} 7\n"
		"iotracer_request_duration_seconds_bucket{layer=\"syscall\",device=\"loop0\",op=\"read\",stage=\"total\",le=\"0.016777215\"} 7\n"
		"iotracer_request_duration_seconds_bucket{layer=\"syscall\",device=\"loop0\",op=\"read\",stage=\"total\",le=\"0.033554431\"} 7\n"
		"iotracer_request_duration_seconds_bucket{layer=\"syscall\",device=\"loop0\",op=\"read\",stage=\"total\",le=\"0.067108863\"} 7\n"
		"iotracer_request_duration_seconds_bucket{layer=\"syscall\",device=\"loop0\",op=\"read\",stage=\"total\",le=\"0.134217727\"} 7\n"
		"iotracer_request_duration_seconds_bucket{layer=\"syscall\",device=\"loop0\",op=\"read\",stage=\"total\",le=\"0.268435455\"} 7\n"
		"iotracer_request_duration_seconds_bucket{layer=\"syscall\",device=\"loop0\",op=\"read\",stage=\"total\",le=\"0.536870911\"} 7\n"
		"iotracer_request_duration_seconds_bucket{layer=\"syscall\",device=\"loop0\",op=\"read\",stage=\"total\",le=\"1.073741823\"} 7\n"
		"iotracer_request_duration_seconds_bucket{layer=\"syscall\",device=\"loop0\",op=\"read\",stage=\"total\",le=\"2.147483647\"} 7\n"
		"iotracer_request_duration_seconds_bucket{layer=\"syscall\",device=\"loop0\",op=\"read\",stage=\"total\",le=\"4.294967295\"} 7\n"
		"iotracer_request_duration_seconds_bucket{layer=\"syscall\",device=\"loop0\",op=\"read\",stage=\"total\",le=\"8.589934591\"} 7\n"
		"iotracer_request_duration_seconds_bucket{layer=\"syscall\",device=\"loop0\",op=\"read\",stage=\"total\",le=\"17.179869183\"} 7\n"
		"iotracer_request_duration_seconds_bucket{layer=\"syscall\",device=\"loop0\",op=\"read\",stage=\"total\",le=\"34.359738367\"} 7\n"
		"iotracer_request_duration_seconds_bucket{layer=\"syscall\",device=\"loop0\",op=\"read\",stage=\"total\",le=\"+Inf\"} 8\n"
		"iotracer_request_duration_seconds_sum{layer=\"syscall\",device=\"loop0\",op=\"read\",stage=\"total\"} 1.500000123\n"
		"iotracer_request_duration_seconds_count{layer=\"syscall\",device=\"loop0\",op=\"read\",stage=\"total\"} 8\n" REQ_HELP
		"iotracer_requests_total{layer=\"syscall\",device=\"loop0\",op=\"read\"} 8\n";
	struct out_khist kh = { .key = { .dev = IT_MKDEV(7, 0),
					 .layer = IT_L_SYSCALL,
					 .op = IT_OP_READ,
					 .kind = IT_HK_PLAIN } };
	struct metrics_in in = { .khists = &kh, .nr_khists = 1, .dev_name = test_dev };
	struct it_hist *h = &kh.val.st[IT_ST_TOTAL];
	char *got;

	h->slots[3] = 2;
	h->slots[12] = 5;
	h->slots[40] = 1;
	h->count = 8;
	h->sum_ns = 1500000123ull;
	got = render(&in);
	ASSERT_STREQ(got, want, "text");
	free(got);
}

/* \, " and newline in a label value are escaped; io_uring keys get their layer name. */
static void test_metrics_escape(void)
{
	struct out_khist kh = { .key = { .dev = IT_MKDEV(7, 1),
					 .layer = IT_L_SYSCALL,
					 .op = IT_OP_WRITE,
					 .kind = IT_HK_URING } };
	struct metrics_in in = { .khists = &kh, .nr_khists = 1, .dev_name = test_dev };
	char *got;

	kh.val.st[IT_ST_TOTAL].slots[20] = 3;
	got = render(&in);
	ASSERT_TRUE(strstr(got,
			   "iotracer_requests_total{layer=\"io_uring\",device=\"a\\\\b\\\"c\\nd\","
			   "op=\"write\"} 3\n"),
		    "escaped dev");
	ASSERT_FALSE(strstr(got, "c\nd"), "no raw newline");
	free(got);

	{
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		struct metrics_label l[2] = { { "hook", "x\"y" }, { "method", "\\" } };

		metrics_sample(f, "m", l, 2, "1");
		metrics_sample_u64(f, "n", NULL, 0, 42);
		fclose(f);
		ASSERT_STREQ(text, "m{hook=\"x\\\"y\",method=\"\\\\\"} 1\nn 42\n", "sample");
		free(text);
	}
}

/* Drops (all reasons but missed, per layer asked for), hooks and process lines. */
static void test_metrics_counters_exact(void)
{
	static const char want[] = HIST_HELP REQ_HELP
		"# HELP iotracer_lost_requests_total Requests the daemon could not follow, per layer "
		"and reason: ringbuf (record buffer full), inflight (request table full), hist "
		"(histogram table full), missed (block: issued, completion not seen by an attached "
		"BPF side), user (records lost in user space: a failed copy, the correlator full).\n"
		"# TYPE iotracer_lost_requests_total counter\n"
		"iotracer_lost_requests_total{layer=\"block\",reason=\"ringbuf\"} 1\n"
		"iotracer_lost_requests_total{layer=\"block\",reason=\"inflight\"} 2\n"
		"iotracer_lost_requests_total{layer=\"block\",reason=\"hist\"} 0\n"
		"iotracer_lost_requests_total{layer=\"block\",reason=\"missed\"} 3\n"
		"iotracer_lost_requests_total{layer=\"daemon\",reason=\"user\"} 5\n"
		"# HELP iotracer_inflight_requests Requests issued and not seen completing yet, per "
		"layer: down again as they complete; one whose completion was missed stays until "
		"120 s after its issue or a reload, then it counts as lost (reason missed).\n"
		"# TYPE iotracer_inflight_requests gauge\n"
		"iotracer_inflight_requests{layer=\"block\"} 4\n"
		"# HELP iotracer_hook_attached 1 if the hook is attached, 0 if not (the attach "
		"report says why).\n"
		"# TYPE iotracer_hook_attached gauge\n"
		"iotracer_hook_attached{layer=\"block\",hook=\"block_rq_issue\",method=\"tp_btf\"} 1\n"
		"iotracer_hook_attached{layer=\"nvme\",hook=\"nvme_setup_cmd\",method=\"none\"} 0\n"
		"# HELP iotracer_hook_state 1 for the hook's state, 0 for the others: attached, off "
		"(by an option), absent (nothing to hook on this machine), failed (there, wanted, and "
		"could not attach: alert on this one).\n"
		"# TYPE iotracer_hook_state gauge\n"
		"iotracer_hook_state{layer=\"block\",hook=\"block_rq_issue\",method=\"tp_btf\",state=\"attached\"} 1\n"
		"iotracer_hook_state{layer=\"block\",hook=\"block_rq_issue\",method=\"tp_btf\",state=\"off\"} 0\n"
		"iotracer_hook_state{layer=\"block\",hook=\"block_rq_issue\",method=\"tp_btf\",state=\"absent\"} 0\n"
		"iotracer_hook_state{layer=\"block\",hook=\"block_rq_issue\",method=\"tp_btf\",state=\"failed\"} 0\n"
		"iotracer_hook_state{layer=\"nvme\",hook=\"nvme_setup_cmd\",method=\"none\",state=\"attached\"} 0\n"
		"iotracer_hook_state{layer=\"nvme\",hook=\"nvme_setup_cmd\",method=\"none\",state=\"off\"} 0\n"
		"iotracer_hook_state{layer=\"nvme\",hook=\"nvme_setup_cmd\",method=\"none\",state=\"absent\"} 1\n"
		"iotracer_hook_state{layer=\"nvme\",hook=\"nvme_setup_cmd\",method=\"none\",state=\"failed\"} 0\n"
		"# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
		"# TYPE process_cpu_seconds_total counter\n"
		"process_cpu_seconds_total 1.230\n"
		"# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
		"# TYPE process_resident_memory_bytes gauge\n"
		"process_resident_memory_bytes 8192\n"
		"# HELP process_start_time_seconds Start time of the process since unix epoch in "
		"seconds.\n"
		"# TYPE process_start_time_seconds gauge\n"
		"process_start_time_seconds 1700000000.250\n"
		"# HELP process_open_fds Number of open file descriptors.\n"
		"# TYPE process_open_fds gauge\n"
		"process_open_fds 9\n";
	static const struct metrics_hook hooks[] = {
		{ "block", "block_rq_issue", "tp_btf", 1, OUT_HS_ATTACHED },
		{ "nvme", "nvme_setup_cmd", "none", 0, OUT_HS_ABSENT },
	};
	struct metrics_proc proc = { .cpu_ticks = 123,
				     .ticks_per_sec = 100,
				     .rss_bytes = 8192,
				     .start_time_ms = 1700000000250ull,
				     .open_fds = 9 };
	uint64_t drops[IT_NR_DROPS] = { 0 };
	struct metrics_in in = { .drops = drops,
				 .drop_layers = 1u << IT_L_BLOCK,
				 .blk_inflight = 4,
				 .blk_missed = 3,
				 .lost = 5,
				 .hooks = hooks,
				 .nr_hooks = 2,
				 .proc = &proc,
				 .dev_name = test_dev };
	char *got;

	drops[IT_L_BLOCK * IT_DROP_KINDS + IT_DROP_RINGBUF] = 1;
	drops[IT_L_BLOCK * IT_DROP_KINDS + IT_DROP_INFLIGHT] = 2;
	drops[IT_L_BLOCK * IT_DROP_KINDS + IT_DROP_MISSED] = 99; /* blk_inflight/missed say it */
	drops[IT_L_SYSCALL * IT_DROP_KINDS + IT_DROP_RINGBUF] = 7; /* layer not asked for */
	got = render(&in);
	ASSERT_STREQ(got, want, "text");
	free(got);
}

/* The writeback families: each counter where its name and label say. */
static void test_metrics_writeback(void)
{
	uint64_t cnt[IT_NR_COUNTERS] = { 0 };
	struct metrics_in in = { .counters = cnt, .dev_name = test_dev };
	char *got;

	cnt[IT_CNT_WB_NOTED] = 11;
	cnt[IT_CNT_WB_FOUND] = 12;
	cnt[IT_CNT_WB_UNKNOWN] = 13;
	cnt[IT_CNT_WB_FOUND_BYTES] = 4096000;
	cnt[IT_CNT_WB_UNK_NOT_NOTED_BYTES] = 21;
	cnt[IT_CNT_WB_UNK_REDIRTIED_BYTES] = 22;
	cnt[IT_CNT_WB_UNK_MANY_BYTES] = 23;
	cnt[IT_CNT_WB_UNK_TRUNC_BYTES] = 24;
	cnt[IT_CNT_BLK_ISSUED] = 99; /* not a writeback counter */
	got = render(&in);
	ASSERT_TRUE(strstr(got, "# TYPE iotracer_writeback_folios_total counter\n"
				"iotracer_writeback_folios_total{event=\"noted\"} 11\n"
				"iotracer_writeback_folios_total{event=\"found\"} 12\n"
				"iotracer_writeback_folios_total{event=\"unknown\"} 13\n"),
		    "folios");
	ASSERT_TRUE(strstr(got, "\niotracer_writeback_found_bytes_total 4096000\n"), "found bytes");
	ASSERT_TRUE(strstr(got,
			   "# TYPE iotracer_writeback_unknown_bytes_total counter\n"
			   "iotracer_writeback_unknown_bytes_total{reason=\"not_noted\"} 21\n"
			   "iotracer_writeback_unknown_bytes_total{reason=\"redirtied\"} 22\n"
			   "iotracer_writeback_unknown_bytes_total{reason=\"many\"} 23\n"
			   "iotracer_writeback_unknown_bytes_total{reason=\"truncated\"} 24\n"),
		    "unknown bytes by reason");
	ASSERT_TRUE(!strstr(got, " 99\n"), "no other counter");
	free(got);
}

/* Scattered counts for slot k of series (i, s): about one slot in four used, 0..999. */
static uint64_t test_count(int i, int s, int k)
{
	uint64_t h = (uint64_t)(i * 64 * 8 + s * 64 + k + 1) * 0x9e3779b97f4a7c15ull;

	return (h >> 62) ? 0 : (h >> 20) % 1000;
}

/*
 * Check the bucket lines of one series (lines from *p on, up to its _count):
 * cumulative (never decreasing), +Inf equal to _count and to the slot sum.
 */
static bool check_series(const char **p, uint64_t want_total)
{
	uint64_t prev = 0, inf = UINT64_MAX, count = UINT64_MAX, v;
	int buckets = 0;
	const char *line = *p;

	while (line && *line) {
		const char *end = strchr(line, '\n');

		if (!ASSERT_TRUE(end, "newline"))
			return false;
		v = strtoull(memrchr(line, ' ', (size_t)(end - line)) + 1, NULL, 10);
		if (!strncmp(line, "iotracer_request_duration_seconds_bucket", 40)) {
			if (!ASSERT_TRUE(v >= prev, "cumulative"))
				return false;
			prev = v;
			buckets++;
			if (strstr(line, "le=\"+Inf\""))
				inf = v;
		} else if (!strncmp(line, "iotracer_request_duration_seconds_count", 39)) {
			count = v;
			*p = end + 1;
			break;
		}
		line = end + 1;
	}
	return ASSERT_EQ(buckets, METRICS_SLOT_LAST - METRICS_SLOT_FIRST + 2, "buckets") &&
	       ASSERT_EQ(inf, count, "+Inf == _count") && ASSERT_EQ(count, want_total, "total");
}

/* Scattered histograms over all 64 slots: every series keeps the invariants. */
static void test_metrics_invariants(void)
{
	struct out_khist kh[4];
	uint64_t totals[4][IT_ST_MAX] = { { 0 } };
	struct metrics_in in = { .khists = kh, .nr_khists = 4, .dev_name = test_dev };
	const char *p;
	char *got;

	memset(kh, 0, sizeof(kh));
	for (int i = 0; i < 4; i++) {
		kh[i].key = (struct it_hist_key){ .dev = IT_MKDEV(8, i),
						  .layer = IT_L_BLOCK,
						  .op = (uint8_t)i };
		for (int s = IT_ST_Q2C; s <= IT_ST_Q2D; s++)
			for (int k = 0; k < IT_HIST_SLOTS; k++) {
				uint64_t n = test_count(i, s, k);

				kh[i].val.st[s].slots[k] = n;
				totals[i][s] += n;
			}
	}
	got = render(&in);
	p = strchr(strchr(got, '\n') + 1, '\n') + 1; /* past HELP and TYPE */
	for (int i = 0; i < 4; i++)
		for (int s = IT_ST_Q2C; s <= IT_ST_Q2D; s++)
			if (totals[i][s] && !check_series(&p, totals[i][s]))
				goto out;
	ASSERT_TRUE(!strncmp(p, "# HELP iotracer_requests_total", 30), "families in order");
out:
	free(got);
}

/* write path/name with the given text */
static void put_file(const char *dir, const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
}

/* A fake /proc: stat of a process whose comm holds ") (", btime, three fds. */
static void test_metrics_proc(void)
{
	char root[] = "/tmp/test_metrics.XXXXXX", dir[256];
	long tck = sysconf(_SC_CLK_TCK), psz = sysconf(_SC_PAGESIZE);
	struct metrics_proc p;

	if (!mkdtemp(root)) {
		ASSERT_TRUE(0, "mkdtemp");
		return;
	}
	snprintf(dir, sizeof(dir), "%s/42", root);
	mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/42/fd", root);
	mkdir(dir, 0755);
	put_file(dir, "0", "");
	put_file(dir, "1", "");
	put_file(dir, "2", "");
	snprintf(dir, sizeof(dir), "%s/42", root);
	/* utime 300, stime 50, starttime 2000 (ticks since boot), rss 25 pages */
	put_file(dir, "stat",
		 "42 (a) (b c) S 1 42 42 0 -1 4194560 100 0 0 0 300 50 0 0 20 0 3 0 2000 "
		 "123456789 25 18446744073709551615\n");
	put_file(root, "stat", "cpu  1 2 3\nintr 1 2 3\nbtime 1700000000\nprocesses 9\n");
	if (ASSERT_OK(metrics_proc_read(root, "42", &p), "fake")) {
		ASSERT_EQ(p.cpu_ticks, 350, "cpu ticks");
		ASSERT_EQ(p.ticks_per_sec, (uint64_t)tck, "ticks/s");
		ASSERT_EQ(p.rss_bytes, 25 * (uint64_t)psz, "rss");
		ASSERT_EQ(p.start_time_ms, 1700000000000ull + 2000ull * 1000 / (uint64_t)tck,
			  "start");
		ASSERT_EQ(p.open_fds, 3, "fds");
	}
	ASSERT_EQ(metrics_proc_read(root, "43", &p), -ENOENT, "no such process");
	if (ASSERT_OK(metrics_proc_read("/proc", "self", &p), "self")) {
		ASSERT_TRUE(p.rss_bytes > 0, "self rss");
		ASSERT_TRUE(p.open_fds >= 3, "self fds");
	}
	snprintf(dir, sizeof(dir), "rm -rf '%s'", root);
	if (system(dir))
		UNIT_LOG("cannot remove %s\n", root);
}

/* The bytes, size and cgroup families from two rows of one device and op (two cgroups). */
static void test_metrics_sizes_cgroups(void)
{
	struct agg_row rows[2];
	struct metrics_in in = { .dev_name = test_dev, .agg = rows, .nr_agg = 2, .agg_cgroups = 1 };
	char *got;

	memset(rows, 0, sizeof(rows));
	rows[0] = (struct agg_row){ .cgroup = "/a.slice", .dev = IT_MKDEV(7, 0), .op = IT_OP_READ };
	rows[0].v.count = 3;
	rows[0].v.bytes = 3 * 4096;
	rows[0].v.size[12] = 3; /* (2048, 4096] */
	rows[1] = (struct agg_row){ .cgroup = "other", .dev = IT_MKDEV(7, 0), .op = IT_OP_READ };
	rows[1].v.count = 2;
	rows[1].v.bytes = 512 + (1 << 20);
	rows[1].v.size[9] = 1; /* 512 */
	rows[1].v.size[20] = 1; /* 1 MiB */
	got = render(&in);
	ASSERT_TRUE(strstr(got, "iotracer_request_bytes_total{layer=\"block\",device=\"loop0\","
				"op=\"read\"} 1061376\n"),
		    "bytes summed over cgroups");
	ASSERT_TRUE(strstr(got,
			   "iotracer_request_size_bytes_bucket{layer=\"block\",device=\"loop0\","
			   "op=\"read\",le=\"512\"} 1\n"
			   "iotracer_request_size_bytes_bucket{layer=\"block\",device=\"loop0\","
			   "op=\"read\",le=\"1024\"} 1\n"),
		    "first buckets");
	ASSERT_TRUE(strstr(got, "le=\"4096\"} 4\n"), "4096 holds 4 KiB requests");
	ASSERT_TRUE(strstr(got, "le=\"524288\"} 4\n"), "below 1 MiB");
	ASSERT_TRUE(strstr(got, "le=\"1048576\"} 5\n"), "1 MiB in le=1048576");
	ASSERT_TRUE(strstr(got,
			   "le=\"+Inf\"} 5\n"
			   "iotracer_request_size_bytes_sum{layer=\"block\",device=\"loop0\","
			   "op=\"read\"} 1061376\n"
			   "iotracer_request_size_bytes_count{layer=\"block\",device=\"loop0\","
			   "op=\"read\"} 5\n"),
		    "+Inf, sum, count");
	ASSERT_TRUE(strstr(got,
			   "iotracer_cgroup_requests_total{cgroup=\"/a.slice\",device=\"loop0\","
			   "op=\"read\"} 3\n"
			   "iotracer_cgroup_requests_total{cgroup=\"other\",device=\"loop0\","
			   "op=\"read\"} 2\n"),
		    "per cgroup");
	ASSERT_TRUE(strstr(got, "iotracer_cgroup_bytes_total{cgroup=\"/a.slice\",device=\"loop0\","
				"op=\"read\"} 12288\n"),
		    "bytes per cgroup");
	free(got);
	in.agg_cgroups = 0;
	got = render(&in);
	ASSERT_FALSE(strstr(got, "iotracer_cgroup_"), "no cgroup families unless asked");
	free(got);
}

/* --metrics-containers: the labels of each cgroup label's path; ids where no names. */
static void test_metrics_container_labels(void)
{
	struct agg_row rows[2];
	struct metrics_in in = {
		.dev_name = test_dev, .agg = rows, .nr_agg = 2, .agg_cgroups = 1, .ct_labels = 1
	};
	char *got;

	memset(rows, 0, sizeof(rows));
	rows[0] = (struct agg_row){ .cgroup = "/kubepods/burstable/pod2b1f5e7c-9d3a-4c8b-a1e2-"
					      "f3d4c5b6a798/4f3a9c1d2e5b6a7f8091a2b3c4d5e6f70819"
					      "2a3b4c5d6e7f8091a2b3c4d5e6f7",
				    .dev = IT_MKDEV(7, 0),
				    .op = IT_OP_READ };
	rows[0].v.count = 3;
	rows[1] = (struct agg_row){ .cgroup = "other", .dev = IT_MKDEV(7, 0), .op = IT_OP_READ };
	rows[1].v.count = 2;
	got = render(&in);
	ASSERT_TRUE(strstr(got, "device=\"loop0\",op=\"read\",container=\"4f3a9c1d2e5b\","
				"pod=\"2b1f5e7c-9d3a-4c8b-a1e2-f3d4c5b6a798\",namespace=\"\"} 3\n"),
		    "container id and pod UID");
	ASSERT_TRUE(strstr(got, "iotracer_cgroup_requests_total{cgroup=\"other\",device=\"loop0\","
				"op=\"read\",container=\"\",pod=\"\",namespace=\"\"} 2\n"),
		    "other: empty labels");
	free(got);
}

int main(void)
{
	RUN_TEST(test_metrics_seconds);
	RUN_TEST(test_metrics_hist_exact);
	RUN_TEST(test_metrics_escape);
	RUN_TEST(test_metrics_counters_exact);
	RUN_TEST(test_metrics_writeback);
	RUN_TEST(test_metrics_invariants);
	RUN_TEST(test_metrics_proc);
	RUN_TEST(test_metrics_sizes_cgroups);
	RUN_TEST(test_metrics_container_labels);
	return unit_result();
}
