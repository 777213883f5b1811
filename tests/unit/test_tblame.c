// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for src/blame/tblame.c: block records with hand-worked splits in,
 * each row's top culprit under top's groupings out (process, cgroup, a fold).
 */
#include <stdlib.h>

#include "unit.h"
#include "iotracer.h"
#include "blame/tblame.h"

#define US 1000ull
#define T0 5000000000ull /* the records' clock at the start */
#define DEV IT_MKDEV(7, 0)

static struct it_block_rec blk(uint32_t pid, uint64_t cg, uint8_t op, uint64_t q_us, uint64_t d_us,
			       uint64_t c_us)
{
	struct it_block_rec b;

	memset(&b, 0, sizeof(b));
	b.hdr.type = IT_REC_BLOCK;
	b.task.pid = b.task.tid = pid;
	b.task.cgroup_id = cg;
	snprintf(b.task.comm, sizeof(b.task.comm), "p%u", pid);
	b.dev = DEV;
	b.op = op;
	b.q_ns = T0 + q_us * US;
	b.d_ns = T0 + d_us * US;
	b.c_ns = T0 + c_us * US;
	return b;
}

static uint64_t by_pid(const struct blame_owner *o, uint64_t file, void *ctx)
{
	return o->pid;
}

static uint64_t by_cgroup(const struct blame_owner *o, uint64_t file, void *ctx)
{
	return o->cgroup_id;
}

/* cgroups 100 and 200 are one container (its first cgroup 100 stands for it) */
static uint64_t by_fold(const struct blame_owner *o, uint64_t file, void *ctx)
{
	return o->cgroup_id == 200 ? 100 : o->cgroup_id;
}

/* rows per file (top's --group file): a victim by its file, a culprit by its process */
static uint64_t by_file(const struct blame_owner *o, uint64_t file, void *ctx)
{
	return file ? 1000 + file : o->pid;
}

/*
 * V (pid 10, cgroup 100) queued at 0, dispatched at 10 us, done at 12; in
 * service meanwhile: A (pid 20, cg 200) 0-10, B (pid 30, cg 200) 0-5, C (pid
 * 11, cg 100, V's cgroup) 0-8. V's queue wait: [0,5) 3 in service, 5/3 us
 * each; [5,8) A and C 1.5 each; [8,10) A 2. A 5.1667, B 1.6667, C 3.1667; its
 * service [10,12) alone (own). Blamed: 10 us.
 */
static struct tblame *fed(void)
{
	struct it_block_rec r[4] = { blk(30, 200, IT_OP_WRITE, 0, 0, 5),
				     blk(11, 100, IT_OP_READ, 0, 0, 8),
				     blk(20, 200, IT_OP_WRITE, 0, 0, 10),
				     blk(10, 100, IT_OP_READ, 0, 10, 12) };
	struct tblame *t = tblame_new();

	if (!t)
		return NULL;
	for (int i = 0; i < 4; i++)
		/* V's read is of file 7, C's of file 8 */
		if (tblame_block(t, &r[i], r[i].task.pid == 10 ? 7 : r[i].task.pid == 11 ? 8 : 0)) {
			tblame_free(t);
			return NULL;
		}
	return t;
}

/* Rows per file: V's file is its row; its culprits by process, C's own file is another row. */
static void test_tblame_files(void)
{
	struct tblame *t = fed();
	struct tblame_top top;

	if (!ASSERT_TRUE(t != NULL, "fed"))
		return;
	tblame_flush(t);
	ASSERT_OK(tblame_row(t, 0, 1007, DEV, IT_OP_READ, by_file, NULL, &top), "row");
	ASSERT_TRUE(top.found && top.who.pid == 20, "file 7's top culprit is A");
	ASSERT_NEAR(top.blamed_ns, 10000.0, 1.0, "file 7's blamed wait");
	ASSERT_NEAR(top.ns, 5166.7, 1.0, "A's share");
	ASSERT_OK(tblame_row(t, 0, 1009, DEV, IT_OP_READ, by_file, NULL, &top), "row");
	ASSERT_FALSE(top.found, "no victim of file 9");
	tblame_free(t);
}

static void test_tblame_groupings(void)
{
	struct tblame *t = fed();
	struct tblame_top top;

	if (!ASSERT_TRUE(t != NULL, "fed"))
		return;
	ASSERT_OK(tblame_row(t, 0, 10, DEV, IT_OP_READ, by_pid, NULL, &top), "row");
	ASSERT_FALSE(top.found, "nothing split before the horizon");
	tblame_tick(t, T0 + 12 * US + BLAME_DEF_HORIZON_NS + 1);
	ASSERT_OK(tblame_row(t, 0, 10, DEV, IT_OP_READ, by_pid, NULL, &top), "row");
	ASSERT_TRUE(top.found, "split once the horizon passed");
	ASSERT_EQ(top.who.pid, 20, "per process: A the top culprit");
	ASSERT_STREQ(top.who.comm, "p20", "its comm");
	ASSERT_NEAR(top.blamed_ns, 10000.0, 1e-6, "blamed: the queue wait");
	ASSERT_NEAR(top.ns, 5000.0 / 3 + 1500 + 2000, 1e-6, "A's share");
	/*
	 * per cgroup the row is V's and C's reads: C is self to V, and C's own
	 * service [0,8) was shared with A and B (5/3 each in [0,5), A 1.5 in [5,8))
	 */
	ASSERT_OK(tblame_row(t, 0, 100, DEV, IT_OP_READ, by_cgroup, NULL, &top), "row");
	ASSERT_EQ(top.who.cgroup_id, 200, "per cgroup: A's and B's");
	ASSERT_NEAR(top.ns, 10000.0 - (5000.0 / 3 + 1500) + 10000.0 / 3 + 1500, 1e-6,
		    "A + B, of V and of C");
	ASSERT_NEAR(top.blamed_ns, 10000.0 + 10000.0 / 3 + 1500, 1e-6,
		    "self counts in the blamed wait");
	/* one container: everything is self, no culprit */
	ASSERT_OK(tblame_row(t, 0, 100, DEV, IT_OP_READ, by_fold, NULL, &top), "row");
	ASSERT_FALSE(top.found, "a container of them all: no culprit");
	ASSERT_NEAR(top.blamed_ns, 10000.0 + 10000.0 / 3 + 1500, 1e-6, "all self");
	/* another op, device or key: not V's row */
	ASSERT_OK(tblame_row(t, 0, 10, DEV, IT_OP_WRITE, by_pid, NULL, &top), "row");
	ASSERT_FALSE(top.found, "V wrote nothing");
	ASSERT_OK(tblame_row(t, 0, 10, DEV + 1, IT_OP_READ, by_pid, NULL, &top), "row");
	ASSERT_FALSE(top.found, "other device");
	/* A's own row: its service shared with B (self by cgroup) and C */
	ASSERT_OK(tblame_row(t, 0, 200, DEV, IT_OP_WRITE, by_cgroup, NULL, &top), "row");
	ASSERT_EQ(top.who.cgroup_id, 100, "A and B: C's cgroup");
	tblame_free(t);
}

/* The interval's sums start over; the run's keep adding. */
static void test_tblame_interval(void)
{
	struct tblame *t = fed();
	struct tblame_top top;

	if (!ASSERT_TRUE(t != NULL, "fed"))
		return;
	tblame_flush(t);
	ASSERT_OK(tblame_row(t, 0, 10, DEV, IT_OP_READ, by_pid, NULL, &top), "row");
	ASSERT_TRUE(top.found, "flushed: split");
	tblame_next(t);
	ASSERT_OK(tblame_row(t, 0, 10, DEV, IT_OP_READ, by_pid, NULL, &top), "row");
	ASSERT_FALSE(top.found, "a new interval: empty");
	ASSERT_OK(tblame_row(t, 1, 10, DEV, IT_OP_READ, by_pid, NULL, &top), "row");
	ASSERT_TRUE(top.found && top.who.pid == 20, "the run's sums kept");
	ASSERT_EQ(tblame_stats(t)->resolved, 4, "4 split");
	ASSERT_EQ(tblame_lost(t), 0, "nothing lost");
	tblame_free(t);
}

/* Past TB_MAX_CUL culprit processes their wait is still in the blamed wait, unnamed. */
static void test_tblame_cap(void)
{
	int nc = TB_MAX_CUL + 44;
	struct tblame *t = tblame_new();
	struct it_block_rec b;
	struct tblame_top top;

	if (!ASSERT_TRUE(t != NULL, "new"))
		return;
	/* culprit i in service [i, i + 1) us alone, pid 1000 + i; 7 at the end is the largest */
	for (int i = 0; i < nc; i++) {
		b = blk(1000 + i, 500 + i, IT_OP_WRITE, i, i, i + 1);
		tblame_block(t, &b, 0);
	}
	b = blk(7, 500 + nc, IT_OP_WRITE, nc, nc, nc + 5);
	tblame_block(t, &b, 0);
	b = blk(10, 100, IT_OP_READ, 0, nc + 5, nc + 6);
	tblame_block(t, &b, 0);
	tblame_flush(t);
	ASSERT_OK(tblame_row(t, 0, 10, DEV, IT_OP_READ, by_pid, NULL, &top), "row");
	ASSERT_NEAR(top.blamed_ns, (nc + 5) * 1000.0, 1e-6, "every culprit in the blamed wait");
	ASSERT_TRUE(top.found && top.who.pid == 7, "the largest named");
	ASSERT_NEAR(top.ns, 5000.0, 1e-6, "it held 5 us");
	tblame_free(t);
}

int main(void)
{
	RUN_TEST(test_tblame_groupings);
	RUN_TEST(test_tblame_files);
	RUN_TEST(test_tblame_interval);
	RUN_TEST(test_tblame_cap);
	return unit_result();
}
