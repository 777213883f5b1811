// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of src/records/corr.c: synthetic ring buffer records in, requests out.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "records/corr.h"
#include "unit.h"

#define SEC 1000000000ULL

/* ---- record builders ---- */

static struct it_task mk_task(uint32_t pid, uint32_t tid)
{
	struct it_task t;

	memset(&t, 0, sizeof(t));
	t.pid = pid;
	t.tid = tid;
	t.cgroup_id = 1;
	snprintf(t.comm, sizeof(t.comm), "t%u", tid);
	return t;
}

static struct it_block_rec mk_block(uint32_t pid, uint32_t tid, uint64_t seq, uint8_t origin,
				    uint64_t origin_id, uint64_t sector, uint32_t bytes)
{
	struct it_block_rec b;

	memset(&b, 0, sizeof(b));
	b.hdr.type = IT_REC_BLOCK;
	b.hdr.size = sizeof(b);
	b.task = mk_task(pid, tid);
	b.origin = origin;
	if (origin == IT_ORIG_SYSCALL) /* one word */
		b.seq = seq;
	else
		b.origin_id = origin_id;
	b.sector = sector;
	b.bytes = bytes;
	b.q_ns = 1000 + sector;
	b.c_ns = 2000 + sector;
	b.dev = IT_MKDEV(7, 0);
	b.op = IT_OP_READ;
	return b;
}

static struct it_block_rec sys_block(uint32_t tid, uint64_t seq, uint64_t sector)
{
	return mk_block(tid, tid, seq, IT_ORIG_SYSCALL, 0, sector, 4096);
}

static struct it_syscall_rec mk_sys(uint32_t pid, uint32_t tid, uint64_t seq)
{
	struct it_syscall_rec s;

	memset(&s, 0, sizeof(s));
	s.hdr.type = IT_REC_SYSCALL;
	s.hdr.size = sizeof(s);
	s.task = mk_task(pid, tid);
	s.seq = seq;
	s.enter_ns = 100;
	s.exit_ns = 1000000;
	s.ret = 4096;
	s.bytes = 4096;
	s.sys = IT_SYS_PREAD64;
	s.op = IT_OP_READ;
	return s;
}

static struct it_uring_rec mk_uring(uint32_t tid, uint64_t req, uint64_t submit_ns,
				    uint64_t complete_ns)
{
	struct it_uring_rec u;

	memset(&u, 0, sizeof(u));
	u.hdr.type = IT_REC_URING;
	u.hdr.size = sizeof(u);
	u.task = mk_task(tid, tid);
	u.req = req;
	u.user_data = req ^ 0xffff;
	u.submit_ns = submit_ns;
	u.complete_ns = complete_ns;
	u.res = 4096;
	u.op = IT_OP_READ;
	return u;
}

static struct it_aio_rec mk_aio(uint16_t sys, uint32_t pid, uint32_t tid, uint64_t seq,
				uint64_t enter_ns, uint64_t exit_ns)
{
	struct it_aio_rec a;

	memset(&a, 0, sizeof(a));
	a.hdr.type = IT_REC_AIO;
	a.hdr.size = IT_AIO_SIZE(0);
	a.task = mk_task(pid, tid);
	a.seq = seq;
	a.enter_ns = enter_ns;
	a.exit_ns = exit_ns;
	a.sys = sys;
	return a;
}

static void aio_add(struct it_aio_rec *a, uint64_t iocb, uint64_t offset, uint64_t nbytes,
		    int64_t res, uint32_t fd)
{
	struct it_aio_iocb *io = &a->iocbs[a->nr++];

	a->hdr.size = IT_AIO_SIZE(a->nr);
	io->iocb = iocb;
	io->offset = offset;
	io->nbytes = nbytes;
	io->res = res;
	io->fd = fd;
}

#define FEED(c, rec, now) corr_feed(c, &(rec), sizeof(rec), now)

/* ---- capture of emitted requests (deep copies) ---- */

struct cap {
	enum corr_kind kind;
	uint64_t id;
	struct it_syscall_rec sys;
	struct it_uring_rec uring;
	struct it_task aio_task;
	uint64_t aio_seq, submit_ns, reap_ns;
	struct it_aio_iocb iocb;
	int64_t res;
	int reaped;
	int nr_blocks, apart;
	struct it_block_rec blocks[CORR_MAX_BLOCKS];
	uint64_t parent_id, parent_seq;
	uint32_t parent_tid;
	int parent_valid;
};

struct log {
	struct cap v[256];
	int n;
	int overflow;
};

static void log_emit(const struct corr_req *r, void *ctx)
{
	struct log *l = ctx;
	struct cap *c;

	if (l->n >= (int)(sizeof(l->v) / sizeof(l->v[0]))) {
		l->overflow++;
		return;
	}
	c = &l->v[l->n++];
	memset(c, 0, sizeof(*c));
	c->kind = r->kind;
	c->id = r->id;
	if (r->sys)
		c->sys = *r->sys;
	if (r->uring)
		c->uring = *r->uring;
	c->aio_task = r->aio.task;
	c->aio_seq = r->aio.seq;
	c->submit_ns = r->aio.submit_ns;
	c->reap_ns = r->aio.reap_ns;
	c->iocb = r->aio.iocb;
	c->res = r->aio.res;
	c->reaped = r->aio.reaped;
	c->nr_blocks = r->nr_blocks;
	c->apart = r->nr_blocks_apart;
	for (int i = 0; i < r->nr_blocks && i < CORR_MAX_BLOCKS; i++)
		c->blocks[i] = *r->blocks[i];
	c->parent_valid = r->parent.valid;
	c->parent_id = r->parent.id;
	c->parent_tid = r->parent.tid;
	c->parent_seq = r->parent.seq;
}

static struct log *log_new(void)
{
	return calloc(1, sizeof(struct log));
}

/* Index in the log of the request whose first block has this sector, or -1. */
static int find_by_sector(const struct log *l, uint64_t sector)
{
	for (int i = 0; i < l->n; i++)
		for (int j = 0; j < l->v[i].nr_blocks; j++)
			if (l->v[i].blocks[j].sector == sector)
				return i;
	return -1;
}

static bool check_ids(const struct log *l)
{
	for (int i = 0; i < l->n; i++)
		if (!ASSERT_EQ(l->v[i].id, (uint64_t)i + 1, "ids 1, 2, 3... in emit order"))
			return false;
	return ASSERT_EQ(l->overflow, 0, "log overflow");
}

/* ---- tests ---- */

static void test_sync_one_block(void)
{
	struct log *l = log_new();
	struct corr *c = corr_new(log_emit, l, SEC, 1024);
	struct it_block_rec b = sys_block(100, 1, 80);
	struct it_syscall_rec s = mk_sys(100, 100, 1);

	if (!ASSERT_TRUE(c && l, "corr_new"))
		goto out;
	ASSERT_OK(FEED(c, b, 10), "feed block");
	ASSERT_EQ(l->n, 0, "block waits for its syscall");
	ASSERT_EQ(corr_pending(c), (size_t)1, "one held");
	ASSERT_OK(FEED(c, s, 20), "feed syscall");
	if (!ASSERT_EQ(l->n, 1, "one request"))
		goto out;
	ASSERT_EQ(l->v[0].kind, CORR_SYSCALL, "kind");
	ASSERT_EQ(l->v[0].id, 1, "id");
	ASSERT_EQ(l->v[0].sys.seq, 1, "sys seq");
	ASSERT_EQ(l->v[0].sys.task.tid, 100, "sys tid");
	ASSERT_EQ(l->v[0].nr_blocks, 1, "one block");
	ASSERT_EQ(l->v[0].blocks[0].sector, 80, "block sector");
	ASSERT_FALSE(l->v[0].parent_valid, "no parent");
	ASSERT_EQ(corr_pending(c), (size_t)0, "nothing held");
	ASSERT_EQ(corr_get_stats(c)->records[IT_REC_BLOCK], 1, "block records");
	ASSERT_EQ(corr_get_stats(c)->records[IT_REC_SYSCALL], 1, "syscall records");
	ASSERT_EQ(corr_get_stats(c)->requests, 1, "requests");
	ASSERT_EQ(corr_get_stats(c)->unjoined, 0, "unjoined");
out:
	corr_free(c);
	free(l);
}

static void test_sync_three_blocks(void)
{
	struct log *l = log_new();
	struct corr *c = corr_new(log_emit, l, SEC, 1024);
	struct it_syscall_rec s = mk_sys(7, 8, 42);

	if (!ASSERT_TRUE(c && l, "corr_new"))
		goto out;
	for (uint64_t i = 0; i < 3; i++) {
		struct it_block_rec b = sys_block(8, 42, 800 + i * 8);

		ASSERT_OK(FEED(c, b, i), "feed block");
	}
	/* a syscall with no block in between */
	{
		struct it_syscall_rec s0 = mk_sys(7, 8, 41);

		ASSERT_OK(FEED(c, s0, 5), "feed other syscall");
	}
	ASSERT_OK(FEED(c, s, 10), "feed syscall");
	if (!ASSERT_EQ(l->n, 2, "two requests"))
		goto out;
	ASSERT_EQ(l->v[0].nr_blocks, 0, "seq 41 has no block");
	ASSERT_EQ(l->v[0].sys.seq, 41, "seq 41 first");
	ASSERT_EQ(l->v[1].sys.seq, 42, "seq 42");
	if (!ASSERT_EQ(l->v[1].nr_blocks, 3, "three blocks"))
		goto out;
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(l->v[1].blocks[i].sector, 800 + (uint64_t)i * 8, "arrival order");
	ASSERT_EQ(l->v[1].apart, 0, "none apart");
	ASSERT_EQ(corr_pending(c), (size_t)0, "nothing held");
	check_ids(l);
out:
	corr_free(c);
	free(l);
}

static void test_readahead_after(void)
{
	struct log *l = log_new();
	struct corr *c = corr_new(log_emit, l, SEC, 1024);
	struct it_block_rec b1 = sys_block(5, 3, 16), b2 = sys_block(5, 3, 24);
	struct it_syscall_rec s = mk_sys(5, 5, 3);

	if (!ASSERT_TRUE(c && l, "corr_new"))
		goto out;
	s.task.tid = 5;
	b1.task.tid = 5;
	b2.task.tid = 5;
	ASSERT_OK(FEED(c, b1, 1), "block");
	ASSERT_OK(FEED(c, s, 2), "syscall");
	ASSERT_OK(FEED(c, b2, 3), "readahead block");
	if (!ASSERT_EQ(l->n, 2, "two requests"))
		goto out;
	ASSERT_EQ(l->v[0].kind, CORR_SYSCALL, "syscall first");
	ASSERT_EQ(l->v[0].nr_blocks, 1, "with its block");
	ASSERT_EQ(l->v[1].kind, CORR_BLOCK, "late block on its own");
	ASSERT_EQ(l->v[1].id, 2, "id 2");
	ASSERT_EQ(l->v[1].blocks[0].sector, 24, "the readahead block");
	ASSERT_TRUE(l->v[1].parent_valid, "parent known");
	ASSERT_EQ(l->v[1].parent_id, 1, "parent id");
	ASSERT_EQ(l->v[1].parent_tid, 5, "parent tid");
	ASSERT_EQ(l->v[1].parent_seq, 3, "parent seq");
	ASSERT_EQ(corr_pending(c), (size_t)0, "not held");
	ASSERT_EQ(corr_get_stats(c)->unjoined, 0, "joined by parent");
out:
	corr_free(c);
	free(l);
}

static void test_interleaved_threads(void)
{
	struct log *l = log_new();
	struct corr *c = corr_new(log_emit, l, SEC, 1024);
	/* thread 10 seq 1 (2 blocks), thread 20 seq 1 (1 block), thread 10 seq 2 (1 block) */
	struct it_block_rec a1 = sys_block(10, 1, 100), b1 = sys_block(20, 1, 200);
	struct it_block_rec a2 = sys_block(10, 1, 108), a3 = sys_block(10, 2, 116);
	struct it_syscall_rec sa1 = mk_sys(10, 10, 1), sb1 = mk_sys(20, 20, 1);
	struct it_syscall_rec sa2 = mk_sys(10, 10, 2);
	int ia, ib, ic;

	if (!ASSERT_TRUE(c && l, "corr_new"))
		goto out;
	FEED(c, a1, 1);
	FEED(c, b1, 2);
	FEED(c, a2, 3);
	FEED(c, sb1, 4);
	FEED(c, a3, 5);
	FEED(c, sa1, 6);
	FEED(c, sa2, 7);
	if (!ASSERT_EQ(l->n, 3, "three requests"))
		goto out;
	ia = find_by_sector(l, 100);
	ib = find_by_sector(l, 200);
	ic = find_by_sector(l, 116);
	if (!ASSERT_TRUE(ia >= 0 && ib >= 0 && ic >= 0, "all blocks emitted"))
		goto out;
	ASSERT_EQ(ib, 0, "thread 20 first");
	ASSERT_EQ(l->v[ib].sys.task.tid, 20, "tid 20");
	ASSERT_EQ(l->v[ib].nr_blocks, 1, "tid 20: 1 block");
	ASSERT_EQ(l->v[ia].sys.task.tid, 10, "tid 10");
	ASSERT_EQ(l->v[ia].sys.seq, 1, "seq 1");
	ASSERT_EQ(l->v[ia].nr_blocks, 2, "tid 10 seq 1: 2 blocks");
	ASSERT_EQ(l->v[ia].blocks[1].sector, 108, "second block");
	ASSERT_EQ(l->v[ic].sys.seq, 2, "seq 2");
	ASSERT_EQ(l->v[ic].nr_blocks, 1, "tid 10 seq 2: 1 block");
	check_ids(l);
out:
	corr_free(c);
	free(l);
}

/* Deterministic random numbers (unit_rng). */
static uint64_t rng_state = 88172645463325252ULL;

static uint64_t rnd(void)
{
	return unit_rng(&rng_state);
}

static void shuffle(int *v, int n)
{
	for (int i = n - 1; i > 0; i--) {
		int j = (int)(rnd() % (uint64_t)(i + 1)), t = v[i];

		v[i] = v[j];
		v[j] = t;
	}
}

static void test_uring_32_out_of_order(void)
{
	struct log *l = log_new();
	struct corr *c = corr_new(log_emit, l, SEC, 1024);
	int order[32];
	bool ok = true;

	if (!ASSERT_TRUE(c && l, "corr_new"))
		goto out;
	rng_state = 12345;
	for (int i = 0; i < 32; i++)
		order[i] = i;
	shuffle(order, 32);
	for (int i = 0; i < 32; i++) {
		int k = order[i];
		struct it_block_rec b = mk_block(9, 9, 0, IT_ORIG_URING,
						 0x10000 + (uint64_t)k * 0x200, k * 8, 4096);

		b.q_ns = 500 + (uint64_t)i;
		ok &= ASSERT_OK(FEED(c, b, i), "uring block");
	}
	ASSERT_EQ(l->n, 0, "all 32 blocks wait");
	ASSERT_EQ(corr_pending(c), (size_t)32, "32 held");
	shuffle(order, 32);
	for (int i = 0; i < 32; i++) {
		int k = order[i];
		struct it_uring_rec u = mk_uring(9, 0x10000 + (uint64_t)k * 0x200, 400, 1000 + i);

		ok &= ASSERT_OK(FEED(c, u, 100 + i), "uring rec");
	}
	if (!ok || !ASSERT_EQ(l->n, 32, "32 requests"))
		goto out;
	for (int i = 0; i < 32; i++) {
		struct cap *r = &l->v[i];

		ok &= ASSERT_EQ(r->kind, CORR_URING, "kind");
		ok &= ASSERT_EQ(r->uring.req, 0x10000 + (uint64_t)order[i] * 0x200,
				"completion order");
		ok &= ASSERT_EQ(r->nr_blocks, 1, "one block each");
		ok &= ASSERT_EQ(r->blocks[0].origin_id, r->uring.req, "its own block");
		ok &= ASSERT_EQ(r->blocks[0].sector, (uint64_t)order[i] * 8, "its own sector");
		if (!ok)
			goto out;
	}
	ASSERT_EQ(corr_pending(c), (size_t)0, "nothing held");

	/* late block of request order[0] (queued before it completed): parent */
	{
		struct it_block_rec b = mk_block(9, 9, 0, IT_ORIG_URING,
						 0x10000 + (uint64_t)order[0] * 0x200, 9000, 4096);

		b.q_ns = 999;
		FEED(c, b, 200);
		if (!ASSERT_EQ(l->n, 33, "late block emitted at once"))
			goto out;
		ASSERT_EQ(l->v[32].kind, CORR_BLOCK, "kind block");
		ASSERT_TRUE(l->v[32].parent_valid, "parent valid");
		ASSERT_EQ(l->v[32].parent_id, 1, "parent = first completed");
		ASSERT_EQ(l->v[32].parent_tid, 9, "parent tid");
	}
	/* io_kiocb recycled: a block queued after the old request completed waits for the new one */
	{
		uint64_t req = 0x10000 + (uint64_t)order[1] * 0x200;
		struct it_block_rec b = mk_block(9, 9, 0, IT_ORIG_URING, req, 9100, 4096);
		struct it_uring_rec u = mk_uring(9, req, 5000, 6000);

		b.q_ns = 5500;
		FEED(c, b, 300);
		ASSERT_EQ(l->n, 33, "recycled req: block held");
		FEED(c, u, 301);
		if (!ASSERT_EQ(l->n, 34, "new request emitted"))
			goto out;
		ASSERT_EQ(l->v[33].kind, CORR_URING, "kind uring");
		ASSERT_EQ(l->v[33].nr_blocks, 1, "with the new block");
		ASSERT_EQ(l->v[33].blocks[0].sector, 9100, "new block");
	}
	check_ids(l);
	ASSERT_EQ(corr_get_stats(c)->unjoined, 0, "none unjoined");
out:
	corr_free(c);
	free(l);
}

#define AIO_PID 300
#define AIO_TID 301
#define IOCB(i) (0x7f0000001000ULL + 64 * (uint64_t)(i))

static void test_aio_qd16(void)
{
	struct log *l = log_new();
	struct corr *c = corr_new(log_emit, l, SEC, 1024);
	struct it_aio_rec sub = mk_aio(IT_SYS_IO_SUBMIT, AIO_PID, AIO_TID, 77, 5000, 5100);
	struct it_aio_rec r1 = mk_aio(IT_SYS_IO_GETEVENTS, AIO_PID, AIO_PID, 78, 6000, 7000);
	struct it_aio_rec r2 = mk_aio(IT_SYS_IO_PGETEVENTS, AIO_PID, AIO_TID, 79, 8000, 9000);
	int before[16], after[16], reap[16], nb = 0, na = 0;
	bool ok = true;

	if (!ASSERT_TRUE(c && l, "corr_new"))
		goto out;
	rng_state = 777;
	/* iocb i: offset = sector 1000 + 16 i (exact match), 8 KiB */
	for (int i = 0; i < 16; i++) {
		aio_add(&sub, IOCB(i), (1000 + 16 * (uint64_t)i) * 512, 8192, 0, 3);
		if (i % 3 == 0)
			before[nb++] = i;
		else
			after[na++] = i;
		reap[i] = i;
	}
	shuffle(before, nb);
	shuffle(after, na);
	shuffle(reap, 16);
	for (int i = 0; i < nb; i++) {
		struct it_block_rec b = mk_block(AIO_PID, AIO_TID, 77, IT_ORIG_SYSCALL, 0,
						 1000 + 16 * (uint64_t)before[i], 8192);

		ok &= ASSERT_OK(FEED(c, b, i), "block before io_submit");
	}
	ok &= ASSERT_OK(FEED(c, sub, 50), "io_submit");
	ASSERT_EQ(l->n, 0, "nothing reaped yet");
	for (int i = 0; i < na; i++) {
		struct it_block_rec b = mk_block(AIO_PID, AIO_TID, 77, IT_ORIG_SYSCALL, 0,
						 1000 + 16 * (uint64_t)after[i], 8192);

		ok &= ASSERT_OK(FEED(c, b, 60 + i), "block after io_submit");
	}
	ASSERT_EQ(corr_pending(c), (size_t)32, "16 iocbs + 16 blocks held");
	/* reaped by another thread of the process, in two batches */
	for (int i = 0; i < 16; i++) {
		struct it_aio_rec *r = i < 10 ? &r1 : &r2;

		aio_add(r, IOCB(reap[i]), 0, 0, 8192 - reap[i], 0);
	}
	ok &= ASSERT_OK(FEED(c, r1, 100), "getevents");
	ok &= ASSERT_EQ(l->n, 10, "10 reaped");
	ok &= ASSERT_OK(FEED(c, r2, 101), "pgetevents");
	if (!ok || !ASSERT_EQ(l->n, 16, "16 aio requests"))
		goto out;
	for (int i = 0; i < 16; i++) {
		struct cap *r = &l->v[i];
		int k = reap[i];

		ok &= ASSERT_EQ(r->kind, CORR_AIO, "kind aio");
		ok &= ASSERT_EQ(r->iocb.iocb, IOCB(k), "reap order");
		ok &= ASSERT_EQ(r->aio_task.tid, AIO_TID, "submitter tid");
		ok &= ASSERT_EQ(r->aio_seq, 77, "submit seq");
		ok &= ASSERT_EQ(r->submit_ns, 5000, "submit_ns = io_submit enter");
		ok &= ASSERT_EQ(r->reap_ns, i < 10 ? 7000 : 9000, "reap_ns = getevents exit");
		ok &= ASSERT_EQ(r->res, 8192 - k, "res");
		ok &= ASSERT_TRUE(r->reaped, "reaped");
		ok &= ASSERT_EQ(r->nr_blocks, 1, "one block");
		ok &= ASSERT_EQ(r->blocks[0].sector, 1000 + 16 * (uint64_t)k, "offset match");
		if (!ok)
			goto out;
	}
	ASSERT_EQ(corr_pending(c), (size_t)0, "nothing held");
	ASSERT_EQ(corr_get_stats(c)->aio_unknown_reap, 0, "no unknown reap");
	ASSERT_EQ(corr_get_stats(c)->aio_unreaped, 0, "none unreaped");
	check_ids(l);
out:
	corr_free(c);
	free(l);
}

static void test_aio_ordinal_fallback(void)
{
	struct log *l = log_new();
	struct corr *c = corr_new(log_emit, l, SEC, 1024);
	struct it_aio_rec sub = mk_aio(IT_SYS_IO_SUBMIT, AIO_PID, AIO_TID, 5, 100, 110);
	struct it_aio_rec rp = mk_aio(IT_SYS_IO_GETEVENTS, AIO_PID, AIO_TID, 6, 200, 300);
	/* Y, X (exact for iocb 2), Z, W: Y->0, X->2, Z->1, W->3 */
	uint64_t secs[4] = { 9000, 2000, 9100, 9200 };
	uint64_t want[4] = { 9000, 9100, 2000, 9200 };
	bool ok = true;

	if (!ASSERT_TRUE(c && l, "corr_new"))
		goto out;
	for (int i = 0; i < 4; i++)
		aio_add(&sub, IOCB(i), i == 2 ? 2000 * 512 : (uint64_t)i * 4096, 4096, 0, 3);
	for (int i = 0; i < 4; i++) {
		struct it_block_rec b =
			mk_block(AIO_PID, AIO_TID, 5, IT_ORIG_SYSCALL, 0, secs[i], 4096);

		if (i == 2)
			ok &= ASSERT_OK(FEED(c, sub, 10), "io_submit between blocks");
		ok &= ASSERT_OK(FEED(c, b, i), "block");
	}
	for (int i = 0; i < 4; i++)
		aio_add(&rp, IOCB(i), 0, 0, 4096, 0);
	aio_add(&rp, IOCB(9), 0, 0, 4096, 0); /* never submitted */
	ok &= ASSERT_OK(FEED(c, rp, 20), "getevents");
	if (!ok || !ASSERT_EQ(l->n, 4, "4 requests"))
		goto out;
	for (int i = 0; i < 4; i++) {
		ok &= ASSERT_EQ(l->v[i].iocb.iocb, IOCB(i), "iocb");
		ok &= ASSERT_EQ(l->v[i].nr_blocks, 1, "one block");
		ok &= ASSERT_EQ(l->v[i].blocks[0].sector, want[i], "ordinal / exact matching");
		if (!ok)
			goto out;
	}
	ASSERT_EQ(corr_get_stats(c)->aio_unknown_reap, 1, "unknown reap counted");
	ASSERT_EQ(corr_pending(c), (size_t)0, "nothing held");
out:
	corr_free(c);
	free(l);
}

static void test_aio_reuse_and_late(void)
{
	struct log *l = log_new();
	struct corr *c = corr_new(log_emit, l, SEC, 1024);
	struct it_aio_rec s1 = mk_aio(IT_SYS_IO_SUBMIT, AIO_PID, AIO_TID, 1, 100, 110);
	struct it_aio_rec s2 = mk_aio(IT_SYS_IO_SUBMIT, AIO_PID, AIO_TID, 2, 200, 210);
	struct it_aio_rec rp = mk_aio(IT_SYS_IO_GETEVENTS, AIO_PID, AIO_TID, 3, 300, 310);
	struct it_block_rec b1 = mk_block(AIO_PID, AIO_TID, 1, IT_ORIG_SYSCALL, 0, 8, 4096);
	struct it_block_rec late = mk_block(AIO_PID, AIO_TID, 2, IT_ORIG_SYSCALL, 0, 16, 4096);

	if (!ASSERT_TRUE(c && l, "corr_new"))
		goto out;
	aio_add(&s1, IOCB(0), 8 * 512, 4096, 0, 3);
	aio_add(&s2, IOCB(0), 16 * 512, 4096, 0, 3);
	aio_add(&rp, IOCB(0), 0, 0, 4096, 0);
	FEED(c, s1, 1);
	FEED(c, b1, 2);
	FEED(c, s2, 3); /* reuses IOCB(0) before its reap */
	if (!ASSERT_EQ(l->n, 1, "stale iocb emitted"))
		goto out;
	ASSERT_EQ(l->v[0].kind, CORR_AIO, "kind aio");
	ASSERT_FALSE(l->v[0].reaped, "unreaped");
	ASSERT_EQ(l->v[0].reap_ns, 0, "reap_ns 0");
	ASSERT_EQ(l->v[0].aio_seq, 1, "first submission");
	ASSERT_EQ(l->v[0].nr_blocks, 1, "with its block");
	ASSERT_EQ(corr_get_stats(c)->aio_unreaped, 1, "counted");
	{
		/* same iocb address in another process: not ours */
		struct it_aio_rec other =
			mk_aio(IT_SYS_IO_GETEVENTS, AIO_PID + 1, AIO_PID + 1, 1, 250, 260);

		aio_add(&other, IOCB(0), 0, 0, 4096, 0);
		FEED(c, other, 4);
		ASSERT_EQ(l->n, 1, "other pid: nothing emitted");
		ASSERT_EQ(corr_get_stats(c)->aio_unknown_reap, 1, "other pid: unknown reap");
	}
	FEED(c, rp, 4);
	if (!ASSERT_EQ(l->n, 2, "second reaped"))
		goto out;
	ASSERT_EQ(l->v[1].aio_seq, 2, "second submission");
	ASSERT_TRUE(l->v[1].reaped, "reaped");
	ASSERT_EQ(l->v[1].nr_blocks, 0, "no block yet");
	FEED(c, late, 5);
	if (!ASSERT_EQ(l->n, 3, "late block emitted at once"))
		goto out;
	ASSERT_EQ(l->v[2].kind, CORR_BLOCK, "kind block");
	ASSERT_TRUE(l->v[2].parent_valid, "parent known");
	ASSERT_EQ(l->v[2].parent_id, 2, "parent = the aio request");
	ASSERT_EQ(l->v[2].parent_seq, 2, "parent seq");
	ASSERT_EQ(corr_pending(c), (size_t)0, "nothing held");
	check_ids(l);
out:
	corr_free(c);
	free(l);
}

static void test_aio_same_offset(void)
{
	struct log *l = log_new();
	struct corr *c = corr_new(log_emit, l, SEC, 1024);
	struct it_aio_rec sub = mk_aio(IT_SYS_IO_SUBMIT, AIO_PID, AIO_TID, 5, 100, 110);
	struct it_aio_rec rp = mk_aio(IT_SYS_IO_GETEVENTS, AIO_PID, AIO_TID, 6, 200, 300);
	struct it_block_rec b = mk_block(AIO_PID, AIO_TID, 5, IT_ORIG_SYSCALL, 0, 64, 4096);

	if (!ASSERT_TRUE(c && l, "corr_new"))
		goto out;
	/* the same range twice in one batch: one block each */
	aio_add(&sub, IOCB(0), 64 * 512, 4096, 0, 3);
	aio_add(&sub, IOCB(1), 64 * 512, 4096, 0, 3);
	aio_add(&rp, IOCB(1), 0, 0, 4096, 0);
	aio_add(&rp, IOCB(0), 0, 0, 4096, 0);
	FEED(c, sub, 1);
	FEED(c, b, 2);
	b.q_ns++;
	FEED(c, b, 3);
	FEED(c, rp, 4);
	if (!ASSERT_EQ(l->n, 2, "2 requests"))
		goto out;
	ASSERT_EQ(l->v[0].iocb.iocb, IOCB(1), "reap order");
	ASSERT_EQ(l->v[0].nr_blocks, 1, "iocb 1: one block");
	ASSERT_EQ(l->v[0].blocks[0].q_ns, b.q_ns, "iocb 1: the second block");
	ASSERT_EQ(l->v[1].nr_blocks, 1, "iocb 0: one block");
	ASSERT_EQ(l->v[1].blocks[0].q_ns, b.q_ns - 1, "iocb 0: the first block");
out:
	corr_free(c);
	free(l);
}

static void test_hash_collisions(void)
{
	struct log *l = log_new();
	struct corr *c = corr_new(log_emit, l, SEC, 64); /* 64 buckets: 60 keys collide */
	bool ok = true;

	if (!ASSERT_TRUE(c && l, "corr_new"))
		goto out;
	for (uint64_t seq = 0; seq < 60; seq++) {
		struct it_block_rec b = sys_block(1, seq, seq * 8);

		FEED(c, b, seq);
	}
	for (uint64_t seq = 60; seq-- > 0;) {
		struct it_syscall_rec s = mk_sys(1, 1, seq);

		FEED(c, s, 100);
	}
	if (!ASSERT_EQ(l->n, 60, "60 requests"))
		goto out;
	for (int i = 0; i < 60; i++) {
		ok &= ASSERT_EQ(l->v[i].sys.seq, 59 - (uint64_t)i, "seq");
		ok &= ASSERT_EQ(l->v[i].nr_blocks, 1, "exactly its block");
		ok &= ASSERT_EQ(l->v[i].blocks[0].sector, (59 - (uint64_t)i) * 8, "its sector");
		if (!ok)
			break;
	}
	ASSERT_EQ(corr_pending(c), (size_t)0, "nothing held");
out:
	corr_free(c);
	free(l);
}

/*
 * The tables grow with what is held (htab_fit): 120 syscalls' 360 blocks wait
 * (the wait table past 64 buckets, three times), their syscalls come in another
 * order, then one late block each finds its parent among the recently emitted
 * (that table grown too). Each request has exactly its blocks, in arrival order.
 */
static void test_table_growth(void)
{
	enum { NR = 120, PER = 3 };
	struct log *l = log_new();
	struct corr *c = corr_new(log_emit, l, SEC, 4096);
	bool ok = true;

	if (!ASSERT_TRUE(c && l, "corr_new"))
		goto out;
	for (uint64_t i = 0; i < PER; i++)
		for (uint64_t seq = 0; seq < NR; seq++) {
			struct it_block_rec b = sys_block(9, seq, (seq * PER + i) * 8);

			FEED(c, b, seq);
		}
	ASSERT_EQ(corr_pending(c), (size_t)NR * PER, "all held");
	for (uint64_t k = 0; k < NR; k++) {
		struct it_syscall_rec s = mk_sys(9, 9, (k * 7) % NR); /* 7 and 120: coprime */

		FEED(c, s, 100);
	}
	for (uint64_t seq = 0; seq < NR; seq++) {
		struct it_block_rec b = sys_block(9, seq, 100000 + seq * 8);

		FEED(c, b, 200);
	}
	if (!ASSERT_EQ(l->n, 2 * NR, "a request per syscall, a lone block per late one"))
		goto out;
	for (int i = 0; i < NR && ok; i++) {
		uint64_t seq = ((uint64_t)i * 7) % NR;
		const struct cap *r = &l->v[i], *late = &l->v[NR + i];

		ok &= ASSERT_EQ(r->sys.seq, seq, "syscall order");
		ok &= ASSERT_EQ(r->nr_blocks, PER, "its blocks");
		for (int j = 0; j < PER && ok; j++)
			ok &= ASSERT_EQ(r->blocks[j].sector, (seq * PER + (uint64_t)j) * 8,
					"its own, in arrival order");
		ok &= ASSERT_TRUE(late->parent_valid, "late block: parent found");
		ok &= ASSERT_EQ(late->parent_seq, (uint64_t)i, "late block: its parent");
		/* seq i was the k-th syscall fed, k * 7 = i mod 120: k = i * 103 (7 * 103 = 721) */
		ok &= ASSERT_EQ(late->parent_id, (uint64_t)(i * 103 % NR) + 1,
				"late block: its id");
	}
	ASSERT_EQ(corr_pending(c), (size_t)0, "nothing held");
	check_ids(l);
out:
	corr_free(c);
	free(l);
}

static void test_writeback_immediate(void)
{
	struct log *l = log_new();
	struct corr *c = corr_new(log_emit, l, SEC, 1024);
	struct it_block_rec wb = mk_block(0, 55, 0, IT_ORIG_WRITEBACK, 1234, 64, 65536);
	struct it_block_rec none = mk_block(0, 56, 0, IT_ORIG_NONE, 0, 72, 4096);

	if (!ASSERT_TRUE(c && l, "corr_new"))
		goto out;
	FEED(c, wb, 1);
	ASSERT_EQ(l->n, 1, "writeback emitted at once");
	FEED(c, none, 2);
	if (!ASSERT_EQ(l->n, 2, "no-origin emitted at once"))
		goto out;
	ASSERT_EQ(l->v[0].kind, CORR_BLOCK, "kind block");
	ASSERT_EQ(l->v[0].blocks[0].origin_id, 1234, "writeback inode");
	ASSERT_FALSE(l->v[0].parent_valid, "no parent");
	ASSERT_EQ(l->v[1].blocks[0].sector, 72, "second");
	ASSERT_EQ(corr_pending(c), (size_t)0, "nothing held");
	ASSERT_EQ(corr_get_stats(c)->unjoined, 0, "not unjoined");
out:
	corr_free(c);
	free(l);
}

static void test_hold_timeout(void)
{
	struct log *l = log_new();
	struct corr *c = corr_new(log_emit, l, 1000, 1024);
	struct it_block_rec b1 = sys_block(1, 1, 8), b2 = sys_block(2, 1, 16);
	struct it_syscall_rec s1 = mk_sys(1, 1, 1);

	if (!ASSERT_TRUE(c && l, "corr_new"))
		goto out;
	FEED(c, b1, 10000);
	FEED(c, b2, 10500);
	corr_tick(c, 10999);
	ASSERT_EQ(l->n, 0, "not expired yet");
	corr_tick(c, 11000);
	if (!ASSERT_EQ(l->n, 1, "first expired"))
		goto out;
	ASSERT_EQ(l->v[0].kind, CORR_BLOCK, "kind block");
	ASSERT_EQ(l->v[0].blocks[0].sector, 8, "oldest first");
	ASSERT_FALSE(l->v[0].parent_valid, "no parent");
	ASSERT_EQ(corr_get_stats(c)->unjoined, 1, "unjoined 1");
	corr_tick(c, 11499);
	ASSERT_EQ(l->n, 1, "second not yet");
	corr_tick(c, 20000);
	ASSERT_EQ(l->n, 2, "second expired");
	ASSERT_EQ(corr_get_stats(c)->unjoined, 2, "unjoined 2");
	FEED(c, s1, 30000);
	if (!ASSERT_EQ(l->n, 3, "syscall emitted"))
		goto out;
	ASSERT_EQ(l->v[2].nr_blocks, 0, "its block left already");
	ASSERT_EQ(corr_pending(c), (size_t)0, "nothing held");
out:
	corr_free(c);
	free(l);
}

static void test_flush(void)
{
	struct log *l = log_new();
	struct corr *c = corr_new(log_emit, l, SEC, 1024);
	struct it_block_rec b1 = sys_block(1, 1, 8);
	struct it_aio_rec sub = mk_aio(IT_SYS_IO_SUBMIT, AIO_PID, AIO_TID, 9, 100, 110);
	struct it_block_rec ab = mk_block(AIO_PID, AIO_TID, 9, IT_ORIG_SYSCALL, 0, 40, 4096);
	struct it_block_rec b2 = mk_block(1, 1, 0, IT_ORIG_URING, 0xabc, 48, 4096);

	if (!ASSERT_TRUE(c && l, "corr_new"))
		goto out;
	aio_add(&sub, IOCB(0), 40 * 512, 4096, 0, 3);
	aio_add(&sub, IOCB(1), 0, 4096, 0, 3);
	FEED(c, b1, 1);
	FEED(c, sub, 2);
	FEED(c, ab, 3);
	FEED(c, b2, 4);
	ASSERT_EQ(corr_pending(c), (size_t)5, "2 waiting + 2 iocbs + 1 attached");
	corr_flush(c);
	if (!ASSERT_EQ(l->n, 4, "4 requests"))
		goto out;
	ASSERT_EQ(l->v[0].kind, CORR_BLOCK, "oldest: waiting block");
	ASSERT_EQ(l->v[0].blocks[0].sector, 8, "sector 8");
	ASSERT_EQ(l->v[1].kind, CORR_AIO, "then iocb 0");
	ASSERT_EQ(l->v[1].iocb.iocb, IOCB(0), "iocb 0");
	ASSERT_FALSE(l->v[1].reaped, "unreaped");
	ASSERT_EQ(l->v[1].reap_ns, 0, "reap_ns 0");
	ASSERT_EQ(l->v[1].submit_ns, 100, "submit_ns");
	ASSERT_EQ(l->v[1].nr_blocks, 1, "with its block");
	ASSERT_EQ(l->v[2].iocb.iocb, IOCB(1), "iocb 1");
	ASSERT_EQ(l->v[2].nr_blocks, 0, "no block");
	ASSERT_EQ(l->v[3].kind, CORR_BLOCK, "uring block");
	ASSERT_EQ(corr_get_stats(c)->unjoined, 2, "2 unjoined");
	ASSERT_EQ(corr_get_stats(c)->aio_unreaped, 2, "2 unreaped");
	ASSERT_EQ(corr_pending(c), (size_t)0, "nothing held");
	corr_flush(c);
	ASSERT_EQ(l->n, 4, "second flush: nothing");
	check_ids(l);
out:
	corr_free(c);
	free(l);
}

static void test_max_pending_eviction(void)
{
	struct log *l = log_new();
	struct corr *c = corr_new(log_emit, l, SEC, 4);
	struct it_aio_rec sub = mk_aio(IT_SYS_IO_SUBMIT, AIO_PID, AIO_TID, 9, 100, 110);
	bool ok = true;

	if (!ASSERT_TRUE(c && l, "corr_new"))
		goto out;
	for (uint64_t i = 0; i < 6; i++) {
		struct it_block_rec b = sys_block(1, 100 + i, i * 8);

		ok &= ASSERT_OK(FEED(c, b, i), "feed");
		ok &= ASSERT_TRUE(corr_pending(c) <= 4, "bounded");
	}
	if (!ok || !ASSERT_EQ(l->n, 2, "2 evicted"))
		goto out;
	ASSERT_EQ(l->v[0].blocks[0].sector, 0, "oldest first");
	ASSERT_EQ(l->v[1].blocks[0].sector, 8, "then the next");
	ASSERT_EQ(l->v[0].kind, CORR_BLOCK, "as block");
	ASSERT_EQ(corr_get_stats(c)->evicted, 2, "evicted 2");
	ASSERT_EQ(corr_get_stats(c)->unjoined, 2, "unjoined 2");
	/* 3 iocbs: the 3 oldest blocks make room, then iocb 0 when a block comes */
	aio_add(&sub, IOCB(0), 0, 4096, 0, 3);
	aio_add(&sub, IOCB(1), 4096, 4096, 0, 3);
	aio_add(&sub, IOCB(2), 8192, 4096, 0, 3);
	FEED(c, sub, 10);
	ASSERT_EQ(corr_pending(c), (size_t)4, "1 block + 3 iocbs");
	ASSERT_EQ(l->n, 5, "3 more blocks evicted");
	{
		struct it_block_rec b = sys_block(1, 200, 999);

		FEED(c, b, 11);
	}
	ASSERT_EQ(l->n, 6, "one more evicted");
	ASSERT_EQ(l->v[5].kind, CORR_BLOCK, "the last old block");
	{
		struct it_block_rec b = sys_block(1, 201, 1000);

		FEED(c, b, 12);
	}
	if (!ASSERT_EQ(l->n, 7, "then the oldest iocb"))
		goto out;
	ASSERT_EQ(l->v[6].kind, CORR_AIO, "iocb evicted");
	ASSERT_EQ(l->v[6].iocb.iocb, IOCB(0), "iocb 0");
	ASSERT_FALSE(l->v[6].reaped, "unreaped");
	ASSERT_EQ(corr_get_stats(c)->evicted, 7, "evicted 7");
	ASSERT_EQ(corr_get_stats(c)->aio_unreaped, 1, "aio_unreaped 1");
	ASSERT_EQ(corr_pending(c), (size_t)4, "at the bound");
	check_ids(l);
out:
	corr_free(c);
	free(l);
}

/*
 * Requests l->v[from..to) hold every sector of 0, 8, ... (n - 1) * 8 + base once: the
 * parent's list and its apart blocks together (no block lost, none twice).
 */
static bool all_blocks_once(const struct log *l, int from, int to, uint64_t base, int n)
{
	int seen[64] = { 0 }, total = 0;

	for (int i = from; i < to; i++)
		for (int k = 0; k < l->v[i].nr_blocks; k++) {
			uint64_t j = (l->v[i].blocks[k].sector - base) / 8;

			if (j < (uint64_t)n && j < 64)
				seen[j]++;
			total++;
		}
	for (int j = 0; j < n; j++)
		if (seen[j] != 1)
			return false;
	return total == n;
}

/* Apart blocks l->v[from..to): kind block, one block, parent the request of id pid. */
static bool apart_of(const struct log *l, int from, int to, uint64_t pid, uint32_t tid,
		     uint64_t seq)
{
	for (int i = from; i < to; i++)
		if (l->v[i].kind != CORR_BLOCK || l->v[i].nr_blocks != 1 || !l->v[i].parent_valid ||
		    l->v[i].parent_id != pid || l->v[i].parent_tid != tid ||
		    l->v[i].parent_seq != seq)
			return false;
	return true;
}

static void test_max_blocks(void)
{
	struct log *l = log_new();
	struct corr *c = corr_new(log_emit, l, SEC, 1024);
	struct it_syscall_rec s = mk_sys(1, 1, 1);
	bool lo = false, hi = false;

	if (!ASSERT_TRUE(c && l, "corr_new"))
		goto out;
	for (uint64_t i = 0; i < CORR_MAX_BLOCKS + 4; i++) {
		struct it_block_rec b = sys_block(1, 1, i * 8);

		/* the 19th queued first, the 18th completed last: the span is listed */
		if (i == 18)
			b.q_ns = 10;
		if (i == 17)
			b.c_ns = 900000;
		FEED(c, b, i);
	}
	FEED(c, s, 100);
	if (!ASSERT_EQ(l->n, 5, "the request and its 4 apart blocks"))
		goto out;
	ASSERT_EQ(l->v[0].kind, CORR_SYSCALL, "the syscall first");
	ASSERT_EQ(l->v[0].nr_blocks, CORR_MAX_BLOCKS, "16 listed");
	ASSERT_EQ(l->v[0].apart, 4, "4 apart");
	for (int k = 0; k < l->v[0].nr_blocks; k++) {
		lo |= l->v[0].blocks[k].q_ns == 10;
		hi |= l->v[0].blocks[k].c_ns == 900000;
	}
	ASSERT_TRUE(lo && hi, "the first queued and the last completed are listed");
	ASSERT_EQ(l->v[0].blocks[0].sector, 0, "in arrival order");
	ASSERT_TRUE(apart_of(l, 1, 5, l->v[0].id, 1, 1), "apart: blocks, parent the syscall");
	ASSERT_TRUE(all_blocks_once(l, 0, 5, 0, CORR_MAX_BLOCKS + 4), "every block once");
	ASSERT_EQ(corr_get_stats(c)->blocks_apart, 4, "stats");
	ASSERT_EQ(corr_pending(c), (size_t)0, "nothing held");
	{
		/* one iocb split in 20 block requests, 10 before and 10 after io_submit */
		struct it_aio_rec sub = mk_aio(IT_SYS_IO_SUBMIT, AIO_PID, AIO_TID, 9, 100, 110);
		struct it_aio_rec rp = mk_aio(IT_SYS_IO_GETEVENTS, AIO_PID, AIO_TID, 10, 200, 300);

		aio_add(&sub, IOCB(0), 0, 20 * 4096, 0, 3);
		aio_add(&rp, IOCB(0), 0, 0, 20 * 4096, 0);
		for (uint64_t i = 0; i < 20; i++) {
			struct it_block_rec b = mk_block(AIO_PID, AIO_TID, 9, IT_ORIG_SYSCALL, 0,
							 1000 + i * 8, 4096);

			if (i == 10)
				FEED(c, sub, 150);
			FEED(c, b, 200 + i);
		}
		ASSERT_EQ(corr_pending(c), (size_t)1 + 20, "iocb + its 20 blocks held");
		FEED(c, rp, 300);
		if (!ASSERT_EQ(l->n, 10, "aio request and its 4 apart blocks"))
			goto out;
		ASSERT_EQ(l->v[5].kind, CORR_AIO, "kind aio");
		ASSERT_EQ(l->v[5].nr_blocks, CORR_MAX_BLOCKS, "aio: 16 listed");
		ASSERT_EQ(l->v[5].apart, 4, "aio: 4 apart");
		ASSERT_TRUE(apart_of(l, 6, 10, l->v[5].id, AIO_TID, 9), "aio: apart, parent");
		ASSERT_TRUE(all_blocks_once(l, 5, 10, 1000, 20), "aio: every block once");
		ASSERT_EQ(corr_get_stats(c)->blocks_apart, 8, "stats 8");
		ASSERT_EQ(corr_pending(c), (size_t)0, "nothing held");
	}
	check_ids(l);
out:
	corr_free(c);
	free(l);
}

static void test_malformed(void)
{
	struct log *l = log_new();
	struct corr *c = corr_new(log_emit, l, SEC, 1024);
	struct it_block_rec b = sys_block(1, 1, 8);
	struct it_syscall_rec s = mk_sys(1, 1, 1);
	struct it_aio_rec a = mk_aio(IT_SYS_IO_SUBMIT, 1, 1, 2, 0, 0);
	unsigned char buf[sizeof(struct it_aio_rec) + 8];
	int n = 0;

	if (!ASSERT_TRUE(c && l, "corr_new"))
		goto out;
	b.hdr.type = 9;
	n += ASSERT_EQ(FEED(c, b, 1), -EINVAL, "bad type");
	b.hdr.type = 0;
	n += ASSERT_EQ(FEED(c, b, 1), -EINVAL, "type 0");
	b.hdr.type = IT_REC_BLOCK;
	n += ASSERT_EQ(corr_feed(c, &b, sizeof(b) - 1, 1), -EINVAL, "short len");
	n += ASSERT_EQ(corr_feed(c, &b, 4, 1), -EINVAL, "shorter than hdr");
	n += ASSERT_EQ(corr_feed(c, NULL, 0, 1), -EINVAL, "NULL");
	b.hdr.size = sizeof(b) + 8;
	n += ASSERT_EQ(FEED(c, b, 1), -EINVAL, "bad size");
	b.hdr.size = sizeof(b);
	b.origin = 7;
	n += ASSERT_EQ(FEED(c, b, 1), -EINVAL, "bad origin");
	s.hdr.size = sizeof(s) + 16; /* not the size of a syscall record */
	n += ASSERT_EQ(FEED(c, s, 1), -EINVAL, "size of another type");
	a.nr = 99;
	n += ASSERT_EQ(FEED(c, a, 1), -EINVAL, "aio nr 99");
	a.nr = 2; /* size still says 0 iocbs */
	n += ASSERT_EQ(FEED(c, a, 1), -EINVAL, "aio size != nr");
	a.nr = 1;
	a.hdr.size = IT_AIO_SIZE(1);
	a.sys = IT_SYS_READ;
	n += ASSERT_EQ(FEED(c, a, 1), -EINVAL, "aio sys");
	/* unaligned, well-formed record: accepted */
	b.origin = IT_ORIG_WRITEBACK;
	memcpy(buf + 1, &b, sizeof(b));
	ASSERT_OK(corr_feed(c, buf + 1, sizeof(b), 1), "unaligned ok");
	ASSERT_EQ(l->n, 1, "only the good one emitted");
	ASSERT_EQ(corr_get_stats(c)->malformed, (uint64_t)n, "malformed counted");
	ASSERT_EQ(n, 11, "all rejected");
	ASSERT_EQ(corr_get_stats(c)->records[IT_REC_BLOCK], 1, "records: the good one");
	ASSERT_EQ(corr_get_stats(c)->records[IT_REC_SYSCALL], 0, "records: no syscall");
	ASSERT_EQ(corr_get_stats(c)->records[IT_REC_AIO], 0, "records: no aio");
	ASSERT_EQ(corr_pending(c), (size_t)0, "nothing held");
out:
	corr_free(c);
	free(l);
}

struct reent {
	struct corr *c;
	int ret;
};

static void reent_emit(const struct corr_req *r, void *ctx)
{
	struct reent *x = ctx;
	struct it_block_rec b = sys_block(1, 1, 8);

	x->ret = FEED(x->c, b, 0);
}

static void test_reentry(void)
{
	struct reent x = { .ret = 0 };
	struct it_block_rec b = mk_block(0, 1, 0, IT_ORIG_NONE, 0, 8, 4096);

	x.c = corr_new(reent_emit, &x, SEC, 16);
	if (!ASSERT_TRUE(x.c, "corr_new"))
		return;
	FEED(x.c, b, 0);
	ASSERT_EQ(x.ret, -EBUSY, "feed from the callback refused");
	ASSERT_EQ(corr_pending(x.c), (size_t)0, "nothing held");
	corr_free(x.c);
	corr_free(NULL);
}

/* ---- randomized stress ---- */

/*
 * Generator: 8 threads doing sync syscalls (0-3 blocks before, sometimes a
 * readahead block after), 32 io_uring requests in flight over 48 recycled
 * io_kiocb addresses, 4 aio threads (QD 1-8, blocks before/after io_submit,
 * reaps in random batches), writeback blocks and orphans. Every block gets
 * serial s (sector 8 s) and the token of its parent in ino; parents carry
 * their token (syscall/uring: ino, aio: iocb fd).
 */
#define ST_MAX_BLOCKS 200000

struct st_exp {
	uint32_t token; /* 0: no parent */
	uint8_t late; /* fed after its parent */
	uint8_t seen;
};

struct st {
	struct corr *c;
	bool roomy; /* no eviction, no timeout: every join is checked */
	uint64_t now;
	uint64_t nrec;
	uint32_t next_token;
	uint64_t nblocks;
	struct st_exp *exp;
	uint32_t *tok_of_id; /* request id -> token */
	uint64_t ids;
	uint64_t orphans;
	int errors;
	char why[256];
	/* late blocks waiting to be fed */
	struct it_block_rec late[64];
	uint64_t late_at[64];
	int nlate;
};

static void st_err(struct st *s, const char *why, uint64_t v)
{
	if (!s->errors++)
		snprintf(s->why, sizeof(s->why), "%s (%llu)", why, (unsigned long long)v);
}

static void st_emit(const struct corr_req *r, void *ctx)
{
	struct st *s = ctx;
	uint32_t tok = 0;

	if (r->id != ++s->ids)
		st_err(s, "id not sequential", r->id);
	if (r->id >= 2 * ST_MAX_BLOCKS) {
		st_err(s, "too many requests", r->id);
		return;
	}
	switch (r->kind) {
	case CORR_SYSCALL:
		tok = (uint32_t)r->sys->ino;
		break;
	case CORR_URING:
		tok = (uint32_t)r->uring->ino;
		break;
	case CORR_AIO:
		tok = r->aio.iocb.fd;
		if (s->roomy && !r->aio.reaped)
			st_err(s, "aio unreaped", r->aio.iocb.iocb);
		break;
	case CORR_BLOCK:
		if (r->nr_blocks != 1)
			st_err(s, "block request with != 1 block", (uint64_t)r->nr_blocks);
		break;
	}
	s->tok_of_id[r->id] = tok;
	if (r->nr_blocks_apart)
		st_err(s, "blocks apart", (uint64_t)r->nr_blocks_apart);
	for (int i = 0; i < r->nr_blocks; i++) {
		const struct it_block_rec *b = r->blocks[i];
		uint64_t ser = b->sector / 8;
		struct st_exp *e;

		if (ser >= s->nblocks) {
			st_err(s, "unknown block", ser);
			continue;
		}
		e = &s->exp[ser];
		if (e->seen++)
			st_err(s, "block emitted twice", ser);
		if (e->token != b->ino)
			st_err(s, "block record corrupted", ser);
		if (r->kind == CORR_BLOCK) {
			if (r->parent.valid &&
			    (r->parent.id >= r->id || s->tok_of_id[r->parent.id] != e->token))
				st_err(s, "wrong parent", ser);
			if (s->roomy && e->token && !r->parent.valid)
				st_err(s, "roomy: block not joined", ser);
			if (s->roomy && e->token && !e->late)
				st_err(s, "roomy: early block not in its request", ser);
		} else if (r->kind != CORR_AIO || s->roomy) {
			if (e->token != tok)
				st_err(s, "block in the wrong request", ser);
		}
		if (r->kind == CORR_AIO && (b->task.tid != r->aio.task.tid || b->seq != r->aio.seq))
			st_err(s, "aio block of another submission", ser);
		if (r->kind == CORR_AIO && s->roomy && b->sector * 512 != r->aio.iocb.offset)
			st_err(s, "aio block of another iocb", ser);
	}
}

static void st_feed(struct st *s, const void *rec, size_t len)
{
	int ret;

	s->now += 1000;
	s->nrec++;
	ret = corr_feed(s->c, rec, len, s->now);
	if (ret)
		st_err(s, "corr_feed failed", (uint64_t)-ret);
	if (!s->roomy && s->nrec % 64 == 0)
		corr_tick(s->c, s->now);
	if (s->nrec % 8 == 0 && s->nlate) {
		/* release the due late blocks */
		int j = 0;

		for (int i = 0; i < s->nlate; i++) {
			if (s->late_at[i] <= s->nrec) {
				struct it_block_rec b = s->late[i];

				s->now += 1000;
				s->nrec++;
				if (corr_feed(s->c, &b, sizeof(b), s->now))
					st_err(s, "late feed failed", b.sector);
			} else {
				s->late[j] = s->late[i];
				s->late_at[j++] = s->late_at[i];
			}
		}
		s->nlate = j;
	}
}

static struct it_block_rec st_block(struct st *s, uint32_t pid, uint32_t tid, uint64_t seq,
				    uint8_t origin, uint64_t origin_id, uint32_t token, bool late)
{
	uint64_t ser = s->nblocks++;
	struct it_block_rec b = mk_block(pid, tid, seq, origin, origin_id, ser * 8, 4096);

	b.ino = token;
	b.q_ns = s->now;
	s->exp[ser].token = token;
	s->exp[ser].late = late;
	return b;
}

static void st_late(struct st *s, struct it_block_rec *b)
{
	if (s->nlate >= 64) {
		st_feed(s, b, sizeof(*b));
		return;
	}
	s->late[s->nlate] = *b;
	s->late_at[s->nlate++] = s->nrec + 1 + rnd() % 16;
}

struct st_thr {
	uint32_t tid;
	uint64_t seq;
	int open, left;
	uint32_t token;
};

struct st_ring {
	uint64_t req;
	uint64_t submit_ns;
	uint32_t token;
	int left;
};

struct st_aio {
	uint32_t pid, tid;
	uint64_t seq;
	int phase; /* 0 idle, 1 blocks before, 2 submit, 3 blocks after, 4 reaping */
	int n, nsent, nreaped;
	int reap[8];
	int before[8];
	int sent[8];
	struct it_block_rec blk[8];
};

static void st_sys_step(struct st *s, struct st_thr *t, bool close_only)
{
	if (!t->open) {
		if (close_only)
			return;
		t->seq++;
		t->open = 1;
		t->left = (int)(rnd() % 4);
		t->token = ++s->next_token;
		return;
	}
	if (t->left) {
		struct it_block_rec b =
			st_block(s, t->tid, t->tid, t->seq, IT_ORIG_SYSCALL, 0, t->token, false);

		t->left--;
		st_feed(s, &b, sizeof(b));
		return;
	}
	{
		struct it_syscall_rec r = mk_sys(t->tid, t->tid, t->seq);

		r.ino = t->token;
		r.enter_ns = s->now;
		r.exit_ns = s->now + 500;
		st_feed(s, &r, sizeof(r));
		t->open = 0;
		if (rnd() % 8 == 0) {
			struct it_block_rec b = st_block(s, t->tid, t->tid, t->seq, IT_ORIG_SYSCALL,
							 0, t->token, true);

			st_late(s, &b);
		}
	}
}

static void st_ring_step(struct st *s, struct st_ring *fl, int *nfl, uint64_t *pool, int *npool,
			 bool close_only)
{
	struct st_ring *r;
	int i;

	if (!close_only && *nfl < 32 && *npool > 0 && rnd() % 2) {
		r = &fl[(*nfl)++];
		r->req = pool[0];
		memmove(pool, pool + 1, (size_t)(--*npool) * sizeof(*pool));
		r->submit_ns = s->now;
		r->token = ++s->next_token;
		r->left = (int)(rnd() % 3);
		return;
	}
	if (!*nfl)
		return;
	i = (int)(rnd() % (uint64_t)*nfl);
	r = &fl[i];
	if (r->left) {
		struct it_block_rec b =
			st_block(s, 70, 71, 0, IT_ORIG_URING, r->req, r->token, false);

		r->left--;
		st_feed(s, &b, sizeof(b));
		return;
	}
	{
		struct it_uring_rec u = mk_uring(71, r->req, r->submit_ns, s->now + 1);

		u.ino = r->token;
		st_feed(s, &u, sizeof(u));
		if (rnd() % 8 == 0) {
			struct it_block_rec b =
				st_block(s, 70, 71, 0, IT_ORIG_URING, r->req, r->token, true);

			b.q_ns = u.complete_ns - 1;
			st_late(s, &b);
		}
		pool[(*npool)++] = r->req; /* FIFO reuse */
		fl[i] = fl[--*nfl];
	}
}

static void st_aio_step(struct st *s, struct st_aio *a, bool close_only)
{
	uint32_t token;

	switch (a->phase) {
	case 0:
		if (close_only)
			return;
		a->seq++;
		a->n = 1 + (int)(rnd() % 8);
		a->nsent = 0;
		a->nreaped = 0;
		token = ++s->next_token;
		for (int i = 0; i < a->n; i++) {
			a->reap[i] = i;
			a->before[i] = (int)(rnd() % 2);
			a->sent[i] = 0;
			a->blk[i] = st_block(s, a->pid, a->tid, a->seq, IT_ORIG_SYSCALL, 0, token,
					     false);
		}
		shuffle(a->reap, a->n);
		a->phase = 1;
		/* fall through */
	case 1:
	case 3:
		for (int i = 0; i < a->n; i++) {
			int k = a->reap[(i + a->nsent) % a->n]; /* some scrambled order */

			if (a->sent[k] || a->before[k] != (a->phase == 1))
				continue;
			a->sent[k] = 1;
			a->nsent++;
			a->blk[k].q_ns = s->now;
			st_feed(s, &a->blk[k], sizeof(a->blk[k]));
			return;
		}
		/* all blocks of this phase sent */
		if (a->phase++ == 3)
			return;
		/* fall through */
	case 2: {
		struct it_aio_rec r = mk_aio(IT_SYS_IO_SUBMIT, a->pid, a->tid, a->seq, s->now, 0);

		for (int i = 0; i < a->n; i++)
			aio_add(&r, IOCB(i) + (uint64_t)a->pid * 0x100000, a->blk[i].sector * 512,
				4096, 0, (uint32_t)a->blk[i].ino);
		st_feed(s, &r, sizeof(r));
		a->phase = 3;
		return;
	}
	case 4: {
		struct it_aio_rec r = mk_aio(rnd() % 2 ? IT_SYS_IO_GETEVENTS : IT_SYS_IO_PGETEVENTS,
					     a->pid, a->tid + 1, a->seq + 1000000, 0, s->now);
		int k = 1 + (int)(rnd() % (uint64_t)(a->n - a->nreaped));

		for (int i = 0; i < k; i++, a->nreaped++)
			aio_add(&r, IOCB(a->reap[a->nreaped]) + (uint64_t)a->pid * 0x100000, 0, 0,
				4096, 0);
		st_feed(s, &r, sizeof(r));
		if (a->nreaped == a->n)
			a->phase = 0;
		return;
	}
	}
}

static bool st_run(bool roomy, uint64_t target)
{
	struct st *s = calloc(1, sizeof(*s));
	struct st_thr thr[8];
	struct st_ring *fl = calloc(32, sizeof(*fl));
	uint64_t pool[48];
	struct st_aio aio[4];
	int nfl = 0, npool = 48;
	bool ok = false;

	if (!s || !fl)
		goto out;
	s->roomy = roomy;
	s->exp = calloc(ST_MAX_BLOCKS + 64, sizeof(*s->exp));
	s->tok_of_id = calloc(2 * ST_MAX_BLOCKS, sizeof(*s->tok_of_id));
	s->c = corr_new(st_emit, s, roomy ? UINT64_MAX : 20000, roomy ? 1 << 16 : 48);
	if (!ASSERT_TRUE(s->exp && s->tok_of_id && s->c, "alloc"))
		goto out;
	rng_state = roomy ? 42 : 4242;
	memset(thr, 0, sizeof(thr));
	memset(aio, 0, sizeof(aio));
	for (int i = 0; i < 8; i++)
		thr[i].tid = 1000 + (uint32_t)i;
	for (int i = 0; i < 48; i++)
		pool[i] = 0xffff888000000000ULL + (uint64_t)i * 0x100;
	for (int i = 0; i < 4; i++) {
		aio[i].pid = 2000 + (uint32_t)i * 10;
		aio[i].tid = aio[i].pid;
	}

	while (s->nrec < target && s->nblocks < ST_MAX_BLOCKS - 100) {
		uint64_t x = rnd() % 100;

		if (x < 45) {
			st_sys_step(s, &thr[rnd() % 8], false);
		} else if (x < 75) {
			st_ring_step(s, fl, &nfl, pool, &npool, false);
		} else if (x < 95) {
			st_aio_step(s, &aio[rnd() % 4], false);
		} else if (x < 98) {
			struct it_block_rec b =
				st_block(s, 0, 90, 0, IT_ORIG_WRITEBACK, 5555, 0, false);

			st_feed(s, &b, sizeof(b));
		} else {
			/* orphan: its syscall record was lost */
			struct it_block_rec b =
				st_block(s, 95, 95, s->nrec, IT_ORIG_SYSCALL, 0, 0, false);

			s->orphans++;
			st_feed(s, &b, sizeof(b));
		}
	}
	/* drain: finish everything open, then the late blocks */
	for (int round = 0; round < 64; round++) {
		for (int i = 0; i < 8; i++)
			st_sys_step(s, &thr[i], true);
		st_ring_step(s, fl, &nfl, pool, &npool, true);
		for (int i = 0; i < 4; i++)
			st_aio_step(s, &aio[i], true);
	}
	while (nfl)
		st_ring_step(s, fl, &nfl, pool, &npool, true);
	for (int i = 0; i < s->nlate; i++)
		if (corr_feed(s->c, &s->late[i], sizeof(s->late[i]), s->now))
			st_err(s, "late feed failed", i);
	s->nlate = 0;
	for (int i = 0; i < 8; i++)
		if (!ASSERT_FALSE(thr[i].open, "drained syscalls"))
			goto out;
	for (int i = 0; i < 4; i++)
		if (!ASSERT_EQ(aio[i].phase, 0, "drained aio"))
			goto out;
	corr_flush(s->c);

	if (!ASSERT_EQ(s->errors, 0, s->why))
		goto out;
	for (uint64_t i = 0; i < s->nblocks; i++)
		if (!ASSERT_EQ(s->exp[i].seen, 1, "every block emitted exactly once"))
			goto out;
	if (!ASSERT_TRUE(s->nrec >= target, "enough records"))
		goto out;
	ASSERT_EQ(corr_pending(s->c), (size_t)0, "nothing held");
	ASSERT_EQ(corr_get_stats(s->c)->requests, s->ids, "requests = callbacks");
	ASSERT_EQ(corr_get_stats(s->c)->blocks_apart, 0, "none apart");
	ASSERT_EQ(corr_get_stats(s->c)->malformed, 0, "none malformed");
	if (roomy) {
		ASSERT_EQ(corr_get_stats(s->c)->unjoined, s->orphans, "unjoined = orphans");
		ASSERT_EQ(corr_get_stats(s->c)->evicted, 0, "no eviction");
		ASSERT_EQ(corr_get_stats(s->c)->aio_unreaped, 0, "all reaped");
		ASSERT_EQ(corr_get_stats(s->c)->aio_unknown_reap, 0, "no unknown reap");
	} else {
		ASSERT_TRUE(corr_get_stats(s->c)->evicted > 0, "tight: evictions happened");
		ASSERT_TRUE(corr_get_stats(s->c)->unjoined >= s->orphans, "tight: unjoined");
	}
	UNIT_LOG("# corr stress (%s): %llu records, %llu blocks, %llu requests, unjoined %llu, "
		 "evicted %llu, aio_unreaped %llu, aio_unknown_reap %llu\n",
		 roomy ? "roomy" : "tight", (unsigned long long)s->nrec,
		 (unsigned long long)s->nblocks, (unsigned long long)s->ids,
		 (unsigned long long)corr_get_stats(s->c)->unjoined,
		 (unsigned long long)corr_get_stats(s->c)->evicted,
		 (unsigned long long)corr_get_stats(s->c)->aio_unreaped,
		 (unsigned long long)corr_get_stats(s->c)->aio_unknown_reap);
	ok = true;
out:
	if (s) {
		corr_free(s->c);
		free(s->exp);
		free(s->tok_of_id);
	}
	free(s);
	free(fl);
	return ok;
}

static void test_stress_random(void)
{
	st_run(true, 100000);
}

static void test_stress_tight(void)
{
	st_run(false, 100000);
}

/* ---- throughput (informational) ---- */

static void count_emit(const struct corr_req *r, void *ctx)
{
	uint64_t *n = ctx;

	n[0]++;
	n[1] += (uint64_t)r->nr_blocks;
}

static void test_throughput(void)
{
	const uint64_t pairs = 1000000;
	uint64_t n[2] = { 0, 0 };
	struct corr *c = corr_new(count_emit, n, SEC, 65536);
	struct it_block_rec b = sys_block(1, 0, 8);
	struct it_syscall_rec s = mk_sys(1, 1, 0);
	struct timespec t0, t1;
	double dt;

	if (!ASSERT_TRUE(c, "corr_new"))
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint64_t i = 0; i < pairs; i++) {
		uint32_t tid = 100 + (uint32_t)(i & 7);

		b.task.tid = tid;
		b.seq = i;
		b.sector = i * 8;
		s.task.tid = tid;
		s.seq = i;
		corr_feed(c, &b, sizeof(b), i);
		corr_feed(c, &s, sizeof(s), i);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ASSERT_EQ(n[0], pairs, "one request per pair");
	ASSERT_EQ(n[1], pairs, "each with its block");
	ASSERT_EQ(corr_pending(c), (size_t)0, "nothing held");
	UNIT_LOG("# corr: %.0f records/s\n", dt > 0 ? (double)(2 * pairs) / dt : 0.0);
	corr_free(c);
}

int main(void)
{
	RUN_TEST(test_sync_one_block);
	RUN_TEST(test_sync_three_blocks);
	RUN_TEST(test_readahead_after);
	RUN_TEST(test_interleaved_threads);
	RUN_TEST(test_uring_32_out_of_order);
	RUN_TEST(test_aio_qd16);
	RUN_TEST(test_aio_ordinal_fallback);
	RUN_TEST(test_aio_reuse_and_late);
	RUN_TEST(test_aio_same_offset);
	RUN_TEST(test_hash_collisions);
	RUN_TEST(test_table_growth);
	RUN_TEST(test_writeback_immediate);
	RUN_TEST(test_hold_timeout);
	RUN_TEST(test_flush);
	RUN_TEST(test_max_pending_eviction);
	RUN_TEST(test_max_blocks);
	RUN_TEST(test_malformed);
	RUN_TEST(test_reentry);
	RUN_TEST(test_stress_random);
	RUN_TEST(test_stress_tight);
	RUN_TEST(test_throughput);
	return unit_result();
}
