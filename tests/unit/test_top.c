// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for src/top/view.c: two synthetic snapshots of the kernel's
 * aggregation in, rates, folds, sort order and the printed table out.
 */
#include <stdlib.h>

#include "unit.h"
#include "iotracer.h"
#include "top/top.h"

static struct agg_entry ent(uint32_t tgid, uint64_t cg, uint8_t op, uint64_t n, uint64_t lat_ns)
{
	struct agg_entry e;
	int k = 0;

	memset(&e, 0, sizeof(e));
	e.key.tgid = tgid;
	e.key.cgroup_id = cg;
	e.key.dev = IT_MKDEV(7, 0);
	e.key.op = op;
	e.v.count = n;
	e.v.bytes = n * 4096;
	e.v.q2c_ns = n * lat_ns;
	e.v.nr_d = n;
	e.v.q2d_ns = n * (lat_ns / 4);
	e.v.d2c_ns = n * (lat_ns - lat_ns / 4);
	while ((2ull << k) <= lat_ns)
		k++;
	e.v.lat[k] = n;
	snprintf(e.v.comm, sizeof(e.v.comm), "p%u", tgid);
	return e;
}

static const char *name(uint32_t dev, void *ctx)
{
	return "loop0";
}

static const char *cgname(uint64_t id, void *ctx)
{
	return id == 5 ? "/a.slice" : NULL;
}

/* 1 s apart: rates are the deltas; a process idle in the interval has no row. */
static void test_top_rates(void)
{
	struct agg_entry prev[3] = { ent(10, 5, IT_OP_READ, 100, 1000),
				     ent(20, 5, IT_OP_READ, 50, 1000),
				     ent(30, 6, IT_OP_WRITE, 7, 1000) };
	struct agg_entry now[3] = { ent(10, 5, IT_OP_READ, 400, 1000),
				    ent(20, 5, IT_OP_READ, 150, 1000),
				    ent(30, 6, IT_OP_WRITE, 7, 1000) };
	struct tview_row *rows = NULL;
	int n;

	tview_sort_snapshot(prev, 3);
	tview_sort_snapshot(now, 3);
	n = tview_rows(now, 3, prev, 3, 1000000000ull, 0, &rows);
	if (!ASSERT_EQ(n, 2, "two busy processes"))
		goto out;
	tview_sort(rows, n, TV_IOPS);
	ASSERT_EQ(rows[0].tgid, 10, "busiest first");
	ASSERT_TRUE(rows[0].iops == 300.0, "300 IOPS");
	ASSERT_TRUE(rows[0].bps == 300.0 * 4096, "bytes/s");
	ASSERT_EQ(rows[0].avg_ns, 1000, "avg");
	ASSERT_EQ(rows[0].queue_ns, 250, "queue");
	ASSERT_EQ(rows[0].device_ns, 750, "device");
	ASSERT_EQ(rows[0].p99_ns, 1023, "p99: the bucket's upper edge");
	ASSERT_EQ(rows[0].ios, 400, "total since the start");
	ASSERT_STREQ(rows[0].comm, "p10", "comm");
	ASSERT_TRUE(rows[1].iops == 100.0, "second");
	free(rows);
	/* per cgroup: 10 and 20 fold into cgroup 5 */
	n = tview_rows(now, 3, prev, 3, 2000000000ull, 1, &rows);
	if (!ASSERT_EQ(n, 1, "one busy cgroup"))
		goto out;
	ASSERT_EQ(rows[0].cgroup_id, 5, "cgroup");
	ASSERT_EQ(rows[0].tgid, 0, "no pid");
	ASSERT_TRUE(rows[0].iops == 200.0, "400 requests over 2 s");
out:
	free(rows);
}

static void test_top_sort_print(void)
{
	struct agg_entry now[2] = { ent(10, 5, IT_OP_READ, 10, 100000),
				    ent(20, 6, IT_OP_WRITE, 100, 1000) };
	struct tview_opts o = { .dev_name = name, .cgroup = cgname };
	struct tview_row *rows = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int n;

	n = tview_totals(now, 2, 1000000000ull, 0, &rows);
	if (!ASSERT_EQ(n, 2, "rows"))
		goto out;
	tview_sort(rows, n, TV_AVG);
	ASSERT_EQ(rows[0].tgid, 10, "slowest first by avg");
	tview_sort(rows, n, TV_IOPS);
	ASSERT_EQ(rows[0].tgid, 20, "busiest first by iops");
	ASSERT_EQ(tview_sort_of("p99"), TV_P99, "key name");
	ASSERT_EQ(tview_sort_of("nosuch"), -1, "unknown key");
	f = open_memstream(&text, &len);
	if (!ASSERT_TRUE(f != NULL, "memstream"))
		goto out;
	o.max_rows = 1;
	tview_print(f, "title", rows, n, &o);
	fclose(f);
	ASSERT_TRUE(strstr(text, "title\n    PID COMM ") == text, "title, then the header");
	ASSERT_TRUE(strstr(text, "     20 p20             loop0    write     100.0      400.0"),
		    "the busiest row");
	ASSERT_TRUE(strstr(text, " -\n... 1 more rows\n"), "unknown cgroup '-', then the cut");
	ASSERT_FALSE(strstr(text, "\033"), "no escapes without ansi");
out:
	free(text);
	free(rows);
}

/* cgroups 5 and 6 are one container (7 stays alone): fold to the first one's id */
static uint64_t fold(uint64_t id, void *ctx)
{
	(void)ctx;
	return id == 6 ? 5 : id;
}

/* Per container: two cgroups' entries summed into one row, deltas still per interval. */
static void test_top_fold(void)
{
	struct agg_entry prev[3] = { ent(10, 5, IT_OP_READ, 100, 1000),
				     ent(20, 6, IT_OP_READ, 50, 1000),
				     ent(30, 7, IT_OP_READ, 7, 1000) };
	struct agg_entry now[3] = { ent(10, 5, IT_OP_READ, 400, 1000),
				    ent(20, 6, IT_OP_READ, 150, 1000),
				    ent(30, 7, IT_OP_READ, 17, 1000) };
	struct tview_row *rows = NULL;
	int np, nn, n;

	np = tview_fold(prev, 3, fold, NULL);
	nn = tview_fold(now, 3, fold, NULL);
	ASSERT_EQ(np, 3, "processes stay apart (tgid in the key)");
	ASSERT_EQ(nn, 3, "now too");
	n = tview_rows(now, nn, prev, np, 1000000000ull, 1, &rows);
	if (!ASSERT_EQ(n, 2, "two containers"))
		goto out;
	tview_sort(rows, n, TV_IOPS);
	ASSERT_EQ(rows[0].cgroup_id, 5, "the folded container");
	ASSERT_TRUE(rows[0].iops == 400.0, "300 + 100 IOPS");
	ASSERT_EQ(rows[0].ios, 550, "400 + 150 since the start");
	ASSERT_EQ(rows[1].cgroup_id, 7, "the other");
	ASSERT_TRUE(rows[1].iops == 10.0, "10 IOPS");
	free(rows);
	rows = NULL;
	/* one process in two cgroups of the container: the entries merge */
	now[1].key.tgid = 10;
	nn = tview_fold(now, 3, fold, NULL);
	ASSERT_EQ(nn, 2, "merged entries");
	ASSERT_EQ(now[0].v.count + now[1].v.count, 567, "nothing lost");
out:
	free(rows);
}

int main(void)
{
	RUN_TEST(test_top_rates);
	RUN_TEST(test_top_fold);
	RUN_TEST(test_top_sort_print);
	return unit_result();
}
