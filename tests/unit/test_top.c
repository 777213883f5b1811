// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for src/top/view.c: two synthetic snapshots of the kernel's
 * aggregation in, rates, folds, sort order and the printed table out.
 */
#include <stdlib.h>

#include "unit.h"
#include "iotracer.h"
#include "top/view.h"

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
	ASSERT_TRUE(strstr(text, " -\n... 1 more row\n"), "unknown cgroup '-', then the cut");
	ASSERT_FALSE(strstr(text, "\033"), "no escapes without ansi");
out:
	free(text);
	free(rows);
}

static const char *longcg(uint64_t id, void *ctx)
{
	return "/demo.slice/db-with-a-long-name.service";
}

/* The lines of text, each at most w columns (bytes: the table is ASCII); the count in *n. */
static bool lines_within(const char *text, int w, int *n)
{
	bool ok = true;

	*n = 0;
	for (const char *p = text; *p;) {
		const char *e = strchr(p, '\n');
		int len = e ? (int)(e - p) : (int)strlen(p);

		if (len > w) {
			UNIT_LOG("line of %d > %d columns: %.*s", len, w, len, p);
			ok = false;
		}
		(*n)++;
		p += len + (e ? 1 : 0);
	}
	return ok;
}

/* tview_print's text (malloc'd; NULL when out of memory). */
static char *printed(const char *title, const struct tview_row *rows, int n,
		     const struct tview_opts *o)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	tview_print(f, title, rows, n, o);
	fclose(f);
	return text;
}

/* A table for a terminal: no line wraps at 80 columns; all columns when it is wide. */
static void test_top_width(void)
{
	struct agg_entry now[12];
	struct tview_opts o = { .dev_name = name, .cgroup = longcg, .width = 80 };
	struct tview_row *rows = NULL;
	char *text = NULL;
	int n, nl;

	for (int i = 0; i < 12; i++)
		now[i] = ent(100 + i, 5, IT_OP_READ, 10 + i, 100000);
	n = tview_totals(now, 12, 1000000000ull, 0, &rows);
	if (!ASSERT_EQ(n, 12, "rows"))
		goto out;
	text = printed("iotracer top - 10:00:00  interval 1s", rows, n, &o);
	if (!ASSERT_TRUE(text != NULL, "memstream"))
		goto out;
	ASSERT_TRUE(lines_within(text, 79, &nl), "80 columns: no line wraps");
	ASSERT_TRUE(strstr(text, "PID") && strstr(text, "IOPS") && strstr(text, "AVG") &&
			    strstr(text, "P99"),
		    "the main columns kept");
	free(text);
	/* 100 columns: the device times go, the cgroup's tail stays */
	o.width = 100;
	text = printed("title", rows, n, &o);
	ASSERT_TRUE(text && lines_within(text, 99, &nl), "100 columns: no line wraps");
	ASSERT_TRUE(text && strstr(text, "CGROUP\n") && strstr(text, " ...") &&
			    strstr(text, "name.service\n"),
		    "the cgroup's tail kept");
	free(text);
	o.width = 160;
	text = printed("title", rows, n, &o);
	ASSERT_TRUE(text && lines_within(text, 159, &nl), "160 columns");
	ASSERT_TRUE(text && strstr(text, "QUEUE") && strstr(text, "DEVICE") && strstr(text, "P99"),
		    "every column at 160");
	ASSERT_TRUE(text && strstr(text, " /demo.slice/db-with-a-long-name.service\n"),
		    "the whole cgroup at 160");
	free(text);
	/* 8 lines of terminal: the title stays on screen with the cut line */
	o.max_rows = tview_fit(8);
	text = printed("title", rows, n, &o);
	if (!ASSERT_TRUE(text != NULL, "memstream"))
		goto out;
	lines_within(text, 159, &nl);
	ASSERT_TRUE(nl <= 7, "8 rows of terminal: at most 7 lines and the cursor's");
	ASSERT_TRUE(strstr(text, "title\n") == text, "the title first");
	ASSERT_TRUE(strstr(text, "more rows\n") != NULL, "the cut said");
out:
	free(text);
	free(rows);
}

/* -b's totals: columns aligned; per cgroup, no PID or COMM column. */
static void test_top_totals_table(void)
{
	struct agg_entry now[3] = { ent(7, 5, IT_OP_READ, 3, 1000),
				    ent(123456, 6, IT_OP_WRITE, 1000000, 1000),
				    ent(42, 5, IT_OP_READ, 20, 1000) };
	struct tview_opts o = { .dev_name = name, .cgroup = cgname };
	struct tview_row *rows = NULL;
	char *text = NULL, *l[4];
	size_t len = 0;
	FILE *f;
	int n;

	n = tview_totals(now, 3, 1000000000ull, 0, &rows);
	if (!ASSERT_EQ(n, 3, "rows"))
		goto out;
	f = open_memstream(&text, &len);
	tview_print_totals(f, rows, n, &o);
	fclose(f);
	l[0] = text;
	for (int i = 1; i < 4; i++)
		l[i] = l[i - 1] ? strchr(l[i - 1], '\n') : NULL, l[i] = l[i] ? l[i] + 1 : NULL;
	if (!ASSERT_TRUE(l[3] != NULL, "a header and 3 rows"))
		goto out;
	ASSERT_TRUE(!strncmp(text, "PID    COMM    CGROUP   DEV   OP    IOS     BYTES\n", 50),
		    "the header, padded");
	/* every column starts where the header's does */
	for (int i = 1; i < 4; i++)
		for (const char *h = strchr(l[0], ' '); h && h < l[1]; h = strchr(h + 1, ' '))
			if (h[1] != ' ' && h[1] != '\n')
				ASSERT_TRUE(l[i][h - l[0]] == ' ' && l[i][h - l[0] + 1] != ' ',
					    "aligned with the header");
	free(text);
	text = NULL;
	free(rows);
	n = tview_totals(now, 3, 1000000000ull, 1, &rows);
	o.by_cgroup = 1;
	f = open_memstream(&text, &len);
	tview_print_totals(f, rows, n, &o);
	fclose(f);
	ASSERT_TRUE(!strncmp(text, "CGROUP ", 7), "per cgroup: no PID or COMM column");
	ASSERT_FALSE(strstr(text, "PID") || strstr(text, "COMM"), "none at all");
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

/* --blame: the row's culprit and share as the callback says; "-" without one */
static int blame_cb(const struct tview_row *r, int totals, char *nm, size_t n, double *pct,
		    void *ctx)
{
	if (r->tgid != 10)
		return 0;
	snprintf(nm, n, "%s",
		 totals ? "/aggressor.slice/total" : "/aggressor.slice/a-long-name.scope");
	*pct = 87.25;
	return 1;
}

/* The BLAMED% and CULPRIT columns: live (the name's tail), at 80 columns, and in the totals. */
static void test_top_blame_columns(void)
{
	struct agg_entry now[2] = { ent(10, 5, IT_OP_READ, 10, 100000),
				    ent(20, 6, IT_OP_WRITE, 100, 1000) };
	struct tview_opts o = { .dev_name = name, .cgroup = cgname, .blame = blame_cb };
	struct tview_row *rows = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int n, nl;

	n = tview_totals(now, 2, 1000000000ull, 0, &rows);
	if (!ASSERT_EQ(n, 2, "rows"))
		goto out;
	tview_sort(rows, n, TV_AVG);
	text = printed("title", rows, n, &o);
	if (!ASSERT_TRUE(text != NULL, "memstream"))
		goto out;
	ASSERT_TRUE(strstr(text, "    DEVICE BLAMED% CULPRIT              CGROUP\n"), "the header");
	ASSERT_TRUE(strstr(text, "   87.2 /aggressor.slice/a-long-name.scope /a.slice\n"),
		    "no width (-b): the victim's culprit whole");
	ASSERT_TRUE(strstr(text, "       - -                    -\n"), "no culprit: -");
	free(text);
	o.width = 200;
	text = printed("title", rows, n, &o);
	ASSERT_TRUE(text && strstr(text, "   87.2 ...a-long-name.scope /a.slice\n"),
		    "a terminal: its tail in 20 columns");
	free(text);
	o.width = 80;
	text = printed("title", rows, n, &o);
	ASSERT_TRUE(text && lines_within(text, 79, &nl), "80 columns: no line wraps");
	ASSERT_TRUE(text && strstr(text, "BLAMED% CULPRIT") && strstr(text, "IOPS") &&
			    !strstr(text, "P99"),
		    "80 columns: P99 gone, the blame kept");
	free(text);
	text = NULL;
	f = open_memstream(&text, &len);
	if (!ASSERT_TRUE(f != NULL, "memstream"))
		goto out;
	tview_print_totals(f, rows, n, &o);
	fclose(f);
	ASSERT_TRUE(strstr(text, " BYTES  BLAMED% CULPRIT\n"), "the totals' header");
	ASSERT_TRUE(strstr(text, " 40960  87.2    /aggressor.slice/total\n"),
		    "the run's culprit, whole");
	ASSERT_TRUE(strstr(text, " 409600 -       -\n"), "none: -");
out:
	free(text);
	free(rows);
}

/* --blame per cgroup: the victim row is the cgroup 5 */
static int blame_cg_cb(const struct tview_row *r, int totals, char *nm, size_t n, double *pct,
		       void *ctx)
{
	if (r->cgroup_id != 5)
		return 0;
	snprintf(nm, n, "/iotracer-it-6477-22780");
	*pct = 100;
	return 1;
}

/*
 * --blame per cgroup at 80 columns (issue 37): CGROUP, the row's key, stays; CULPRIT is
 * cut and AVG goes first. The title is cut between its parts, never inside one.
 */
static void test_top_blame_cgroup80(void)
{
	struct agg_entry now[2] = { ent(10, 5, IT_OP_READ, 10, 100000),
				    ent(20, 6, IT_OP_WRITE, 100, 1000) };
	struct tview_opts o = { .dev_name = name,
				.cgroup = cgname,
				.blame = blame_cg_cb,
				.by_cgroup = 1,
				.width = 80 };
	const char *title = "iotracer top - 12:09:42  interval 1.00s  sort iops  per cgroup  "
			    "2 rows  blame 1s late  [q quit, s sort, c grouping]";
	struct tview_row *rows = NULL;
	char *text = NULL, *head;
	int n, nl;

	n = tview_totals(now, 2, 1000000000ull, 1, &rows);
	if (!ASSERT_EQ(n, 2, "rows"))
		goto out;
	text = printed(title, rows, n, &o);
	if (!ASSERT_TRUE(text != NULL, "memstream"))
		goto out;
	ASSERT_TRUE(lines_within(text, 79, &nl), "80 columns: no line wraps");
	head = strchr(text, '\n');
	ASSERT_TRUE(head && strstr(head, " CGROUP\n"), "the key column kept");
	ASSERT_TRUE(strstr(text, " /a.slice\n") != NULL, "the row's cgroup shown");
	ASSERT_TRUE(strstr(text, "BLAMED% CULPRIT") && strstr(text, " 100.0 ...477-22780 "),
		    "the culprit cut to 12");
	ASSERT_TRUE(strstr(text, "IOPS") && !strstr(text, "AVG"), "AVG went first");
	ASSERT_TRUE(!strncmp(text,
			     "iotracer top - 12:09:42  interval 1.00s  sort iops  per cgroup"
			     "  2 rows\n",
			     strlen("iotracer top - 12:09:42  interval 1.00s  sort iops  per cgroup"
				    "  2 rows\n")),
		    "the title cut between its parts");
	free(text);
	/* one row more than fit: "1 more row" */
	o.max_rows = 1;
	text = printed(title, rows, n, &o);
	ASSERT_TRUE(text && strstr(text, "... 1 more row\n"), "1 more row, singular");
out:
	free(text);
	free(rows);
}

/*
 * The kernel's own requests (cache flushes: no submitter, pid 0, cgroup 0) are one row
 * named "(no task)", as blame names them, not "0 ?" (issue 37).
 */
static void test_top_no_task(void)
{
	struct agg_entry now[2] = { ent(10, 5, IT_OP_READ, 10, 100000),
				    ent(0, 0, IT_OP_SYNC, 3, 50000) };
	struct tview_opts o = { .dev_name = name, .cgroup = cgname };
	struct tview_row *rows = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int n;

	now[1].v.comm[0] = '\0';
	n = tview_totals(now, 2, 1000000000ull, 0, &rows);
	if (!ASSERT_EQ(n, 2, "rows"))
		goto out;
	text = printed("title", rows, n, &o);
	ASSERT_TRUE(text && strstr(text, "      - (no task)       loop0    sync "),
		    "live: PID -, COMM (no task)");
	ASSERT_TRUE(text && strstr(text, " (no task)\n"), "live: CGROUP (no task)");
	ASSERT_TRUE(text && !strstr(text, " ? "), "no '?'");
	free(text);
	text = NULL;
	f = open_memstream(&text, &len);
	if (!ASSERT_TRUE(f != NULL, "memstream"))
		goto out;
	tview_print_totals(f, rows, n, &o);
	fclose(f);
	ASSERT_TRUE(strstr(text, "\n-   (no task) (no task) loop0 sync "), "totals: the same name");
	free(rows);
	rows = NULL;
	free(text);
	text = NULL;
	o.by_cgroup = 1;
	n = tview_totals(now, 2, 1000000000ull, 1, &rows);
	text = printed("title", rows, n, &o);
	ASSERT_TRUE(text && strstr(text, " (no task)\n"), "per cgroup: its key (no task)");
out:
	free(text);
	free(rows);
}

int main(void)
{
	RUN_TEST(test_top_rates);
	RUN_TEST(test_top_blame_columns);
	RUN_TEST(test_top_blame_cgroup80);
	RUN_TEST(test_top_no_task);
	RUN_TEST(test_top_sort_print);
	RUN_TEST(test_top_width);
	RUN_TEST(test_top_totals_table);
	RUN_TEST(test_top_fold);
	return unit_result();
}
