// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for src/records/cgroup.c (paths, the mount lookup, the id cache) and
 * src/records/agg.c (folding the kernel's block aggregation into /metrics rows):
 * known synthetic inputs, exact answers.
 */
#include <stdlib.h>
#include <unistd.h>

#include "unit.h"
#include "iotracer.h"
#include "records/agg.h"
#include "records/cgroup.h"

static void test_cgroup_truncate(void)
{
	static const struct {
		const char *rel;
		int depth;
		const char *want;
	} cases[] = {
		{ "/a/b/c", 0, "/" },
		{ "/a/b/c", 1, "/a" },
		{ "/a/b/c", 2, "/a/b" },
		{ "/a/b/c", 3, "/a/b/c" },
		{ "/a/b/c", 9, "/a/b/c" },
		{ "/", 2, "/" },
		{ "/system.slice/x.service", 1, "/system.slice" },
	};
	char buf[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cg_truncate(cases[i].rel, cases[i].depth, buf, sizeof(buf));
		ASSERT_STREQ(buf, cases[i].want, cases[i].rel);
	}
}

static void test_cgroup_under(void)
{
	ASSERT_TRUE(cg_under("/a", "/a"), "itself");
	ASSERT_TRUE(cg_under("/a/b", "/a"), "child");
	ASSERT_TRUE(cg_under("/a/b", "/a/"), "trailing slash");
	ASSERT_TRUE(cg_under("/a/b", "/"), "the root holds all");
	ASSERT_FALSE(cg_under("/ab", "/a"), "a sibling sharing a prefix");
	ASSERT_FALSE(cg_under("/a", "/a/b"), "a parent");
}

/* The mounts file decides; the first cgroup2 line wins. */
static void test_cgroup_mount_file(void)
{
	char path[] = "/tmp/it_test_mounts.XXXXXX", mnt[128];
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (!ASSERT_TRUE(f != NULL, "temp file"))
		return;
	fputs("sysfs /sys sysfs rw 0 0\n"
	      "cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n"
	      "cgroup2 /sys/fs/cgroup/unified cgroup2 rw,nsdelegate 0 0\n"
	      "cgroup2 /elsewhere cgroup2 rw 0 0\n",
	      f);
	fclose(f);
	ASSERT_OK(cg_mount_point(path, "/nonexistent/run", mnt, sizeof(mnt)), "found");
	ASSERT_STREQ(mnt, "/sys/fs/cgroup/unified", "hybrid mount");
	unlink(path);
}

/* Told paths come back; an unknown id is NULL (no mount to ask); ids survive growth. */
static void test_cgroup_cache(void)
{
	struct cg_cache *c = cg_cache_new(NULL);
	char p[32];
	int bad = 0;

	if (!ASSERT_TRUE(c != NULL, "new"))
		return;
	ASSERT_OK(cg_cache_put(c, 42, "/a/b"), "put");
	ASSERT_STREQ(cg_path(c, 42), "/a/b", "known");
	ASSERT_TRUE(cg_path(c, 43) == NULL, "unknown");
	ASSERT_TRUE(cg_path(c, 0) == NULL, "id 0");
	for (uint64_t id = 1000; id < 3000; id++) {
		snprintf(p, sizeof(p), "/x/%llu", (unsigned long long)id);
		bad += cg_cache_put(c, id, p) != 0;
	}
	ASSERT_EQ(bad, 0, "puts");
	ASSERT_STREQ(cg_path(c, 42), "/a/b", "kept across growth");
	ASSERT_STREQ(cg_path(c, 2999), "/x/2999", "last");
	ASSERT_OK(cg_cache_put(c, 42, "/renamed"), "put again");
	ASSERT_STREQ(cg_path(c, 42), "/renamed", "newest wins");
	cg_cache_free(c);
	cg_cache_free(NULL);
}

static struct agg_entry entry(uint64_t cg, uint32_t dev, uint8_t op, uint64_t count)
{
	struct agg_entry e;

	memset(&e, 0, sizeof(e));
	e.key.cgroup_id = cg;
	e.key.dev = dev;
	e.key.op = op;
	e.v.count = count;
	e.v.bytes = count * 4096;
	e.v.size[12] = count;
	e.v.lat[10] = count;
	return e;
}

/* Children fold into their slice at depth 1; ops and devices stay apart; unknown: other. */
static void test_agg_fold(void)
{
	struct agg_entry e[5] = {
		entry(10, 1, IT_OP_READ, 5),  entry(11, 1, IT_OP_READ, 7),
		entry(11, 1, IT_OP_WRITE, 2), entry(12, 1, IT_OP_READ, 3),
		entry(99, 1, IT_OP_READ, 1), /* never named */
	};
	struct agg_labels *lb = calloc(1, sizeof(*lb));
	struct cg_cache *c = cg_cache_new(NULL);
	struct agg_row rows[5];
	int n;

	if (!ASSERT_TRUE(lb && c, "alloc"))
		goto out;
	cg_cache_put(c, 10, "/s.slice/a");
	cg_cache_put(c, 11, "/s.slice/b");
	cg_cache_put(c, 12, "/u.slice/c");
	n = agg_fold(e, 5, c, 1, lb, rows);
	if (!ASSERT_EQ(n, 4, "rows: s read, s write, u read, other read"))
		goto out;
	ASSERT_STREQ(rows[0].cgroup, "/s.slice", "slice label");
	ASSERT_EQ(rows[0].v.count, 12, "a + b");
	ASSERT_EQ(rows[0].v.bytes, 12 * 4096, "bytes add");
	ASSERT_EQ(rows[0].v.size[12], 12, "sizes add");
	ASSERT_EQ(rows[1].op, IT_OP_WRITE, "write apart");
	ASSERT_EQ(rows[1].v.count, 2, "b's writes");
	ASSERT_STREQ(rows[2].cgroup, "/u.slice", "other slice");
	ASSERT_STREQ(rows[3].cgroup, "other", "unknown path");
	n = agg_fold(e, 5, c, -1, lb, rows);
	ASSERT_EQ(n, 2, "no label: per device and op");
	ASSERT_TRUE(rows[0].cgroup == NULL, "no label value");
	ASSERT_EQ(rows[0].v.count, 16, "all reads");
out:
	cg_cache_free(c);
	free(lb);
}

/* Past AGG_MAX_LABELS distinct values, new ones count under "other"; old ones keep theirs. */
static void test_agg_label_cap(void)
{
	struct agg_labels *lb = calloc(1, sizeof(*lb));
	struct cg_cache *c = cg_cache_new(NULL);
	struct agg_entry *e = calloc(AGG_MAX_LABELS + 10, sizeof(*e));
	struct agg_row *rows = calloc(AGG_MAX_LABELS + 10, sizeof(*rows));
	char p[32];
	int n, others = 0;

	if (!ASSERT_TRUE(lb && c && e && rows, "alloc"))
		goto out;
	for (int i = 0; i < AGG_MAX_LABELS + 10; i++) {
		snprintf(p, sizeof(p), "/cg%d", i);
		cg_cache_put(c, 100 + i, p);
		e[i] = entry(100 + i, 1, IT_OP_READ, 1);
	}
	n = agg_fold(e, AGG_MAX_LABELS + 10, c, 1, lb, rows);
	ASSERT_EQ(n, AGG_MAX_LABELS + 1, "64 labels + other");
	for (int i = 0; i < n; i++)
		if (!strcmp(rows[i].cgroup, "other"))
			others += (int)rows[i].v.count;
	ASSERT_EQ(others, 10, "the last 10 in other");
	ASSERT_EQ(agg_lat_quantile(&rows[0].v, 0.99), 2047, "p99 = the slot's upper edge");
out:
	free(rows);
	free(e);
	cg_cache_free(c);
	free(lb);
}

int main(void)
{
	RUN_TEST(test_cgroup_truncate);
	RUN_TEST(test_cgroup_under);
	RUN_TEST(test_cgroup_mount_file);
	RUN_TEST(test_cgroup_cache);
	RUN_TEST(test_agg_fold);
	RUN_TEST(test_agg_label_cap);
	return unit_result();
}
