// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of src/records/wbsync.c through the correlator: an fsync names the
 * write requests of its file in flight when it began and not its own.
 */
#include <stdlib.h>

#include "records/corr.h"
#include "unit.h"

#define DEV IT_MKDEV(7, 3)

struct seen {
	uint64_t id;
	int has_waited;
	struct wbsync_waited w;
};

struct log {
	struct seen v[WBSYNC_RING + 64];
	int n;
};

static void log_emit(const struct corr_req *r, void *ctx)
{
	struct log *l = ctx;
	struct seen *s = &l->v[l->n++];

	s->id = r->id;
	s->has_waited = r->has_waited;
	s->w = r->waited;
}

static struct it_block_rec wb_block(uint64_t ino, uint64_t q_ns, uint64_t c_ns, uint32_t bytes)
{
	struct it_block_rec b;

	memset(&b, 0, sizeof(b));
	b.hdr.type = IT_REC_BLOCK;
	b.hdr.size = sizeof(b);
	b.task.pid = b.task.tid = 50; /* a flusher */
	b.origin = IT_ORIG_WRITEBACK;
	b.op = IT_OP_WRITE;
	b.dev = DEV;
	b.ino = ino;
	b.flags = IT_F_WB;
	b.wb.file_dev = DEV;
	b.q_ns = q_ns;
	b.c_ns = c_ns;
	b.bytes = bytes;
	b.sector = q_ns;
	return b;
}

static struct it_syscall_rec fsync_rec(uint64_t ino, uint64_t enter_ns, uint64_t exit_ns)
{
	struct it_syscall_rec s;

	memset(&s, 0, sizeof(s));
	s.hdr.type = IT_REC_SYSCALL;
	s.hdr.size = sizeof(s);
	s.task.pid = s.task.tid = 100;
	s.seq = 7;
	s.sys = IT_SYS_FSYNC;
	s.op = IT_OP_SYNC;
	s.dev = DEV;
	s.ino = ino;
	s.enter_ns = enter_ns;
	s.exit_ns = exit_ns;
	return s;
}

#define FEED(c, rec) corr_feed(c, &(rec), sizeof(rec), 0)

static void test_in_flight(void)
{
	struct log *l = calloc(1, sizeof(*l));
	struct corr *c = corr_new(log_emit, l, 1000000000ULL, 1024);
	struct it_block_rec before = wb_block(12, 10, 150, 4096); /* done before the fsync */
	struct it_block_rec a = wb_block(12, 100, 300, 65536); /* in flight at 200 */
	struct it_block_rec other = wb_block(13, 100, 310, 8192); /* another file */
	struct it_block_rec after = wb_block(12, 250, 320, 4096); /* queued after it began */
	struct it_block_rec b = wb_block(12, 190, 400, 131072); /* in flight at 200 */
	struct it_block_rec own = wb_block(12, 210, 450, 4096);
	struct it_syscall_rec s = fsync_rec(12, 200, 500);
	struct it_syscall_rec rd = fsync_rec(12, 200, 500);

	if (!ASSERT_TRUE(c && l, "corr_new"))
		goto out;
	own.origin = IT_ORIG_SYSCALL; /* the fsync's own request */
	own.task.pid = own.task.tid = 100;
	own.seq = 7;
	FEED(c, before);
	FEED(c, a);
	FEED(c, other);
	FEED(c, after);
	FEED(c, b);
	FEED(c, own);
	FEED(c, s);
	if (!ASSERT_EQ(l->n, 6, "five lone blocks, then the fsync"))
		goto out;
	ASSERT_EQ(l->v[5].has_waited, 1, "an fsync of a file has waited");
	ASSERT_EQ(l->v[5].w.n, 2u, "the two requests in flight at its enter");
	ASSERT_EQ(l->v[5].w.bytes, 65536u + 131072u, "their bytes");
	ASSERT_EQ(l->v[5].w.nr_ids, 2u, "ids");
	ASSERT_EQ(l->v[5].w.ids[0], l->v[4].id, "newest first: b");
	ASSERT_EQ(l->v[5].w.ids[1], l->v[1].id, "then a");
	ASSERT_EQ(l->v[5].w.truncated, 0, "nothing dropped");
	/* a pread is no sync */
	rd.sys = IT_SYS_PREAD64;
	rd.seq = 8;
	FEED(c, rd);
	ASSERT_EQ(l->v[6].has_waited, 0, "a read has no waited");
out:
	corr_free(c);
	free(l);
}

/* More writes during the fsync than the ring holds: said, never guessed. */
static void test_truncated(void)
{
	struct log *l = calloc(1, sizeof(*l));
	struct corr *c = corr_new(log_emit, l, 1000000000ULL, 1024);
	struct it_syscall_rec s = fsync_rec(12, 200, 100000);
	int i;

	if (!ASSERT_TRUE(c && l, "corr_new"))
		goto out;
	for (i = 0; i < WBSYNC_RING + 10; i++) {
		struct it_block_rec b = wb_block(12, 100, 300 + (uint64_t)i, 4096);

		FEED(c, b);
	}
	FEED(c, s);
	ASSERT_EQ(l->v[l->n - 1].w.n, (uint32_t)WBSYNC_RING, "the ring's worth");
	ASSERT_EQ(l->v[l->n - 1].w.nr_ids, (uint32_t)WBSYNC_MAX_IDS, "ids capped");
	ASSERT_EQ(l->v[l->n - 1].w.truncated, 1, "truncated");
out:
	corr_free(c);
	free(l);
}

int main(void)
{
	RUN_TEST(test_in_flight);
	RUN_TEST(test_truncated);
	return unit_result();
}
