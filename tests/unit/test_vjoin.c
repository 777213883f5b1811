// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of src/mode/vjoin.c: synthetic guest requests, QEMU events and
 * host IOs with known times, buffers and a known clock offset; the expected
 * paths are written out by hand. The key is the guest buffer (HVA) QEMU passes
 * from its blk_aio submit to the host IO.
 */
#include <stdlib.h>

#include "iotracer.h"
#include "mode/vjoin.h"
#include "unit.h"
#include "vjoin_harness.h"

/* One guest read g at sector 800, guest time t: QEMU's submit and notify, the host IO, then g. */
static void join_read(struct vjoin *j, const struct link_vreq *g, uint64_t t)
{
	struct vj_host_io h = hio(800, t);

	qsub(j, IT_OP_READ, 800, 4096, t, HVA);
	qnotify(j, t + OFF + 330 * US);
	vjoin_add_host(j, &h, 1);
	vjoin_add_guest(j, 3, 0xabc, 0, g, OFF, 50 * US, 2);
}

static void test_join_full_path(void)
{
	struct vjoin *j = fresh();
	uint64_t t = 1000 * MS;
	struct link_vreq g = greq(1, 800, t);
	const struct vj_path *p = &got[0];

	join_read(j, &g, t);
	if (!ASSERT_EQ(nr_got, 1, "one path"))
		goto out;
	ASSERT_EQ(p->joined, 1, "joined");
	ASSERT_EQ(p->peer, 3, "peer");
	ASSERT_EQ(p->order_ok, 1, "order");
	ASSERT_EQ(p->t[VJ_T_G_KICK], t + OFF, "kick on host clock");
	ASSERT_EQ(p->t[VJ_T_Q_SUBMIT], t + OFF + 20 * US, "qemu submit");
	ASSERT_EQ(p->t[VJ_T_Q_NOTIFY], t + OFF + 330 * US, "qemu notify");
	ASSERT_EQ(p->stage[VJ_GUEST_SUBMIT], 30 * US, "guest submit");
	ASSERT_EQ(p->stage[VJ_KICK_TO_QEMU], 20 * US, "kick to qemu");
	ASSERT_EQ(p->stage[VJ_QEMU_TO_HOST], 30 * US, "qemu to host");
	ASSERT_EQ(p->stage[VJ_HOST_SYSCALL], 260 * US, "host syscall");
	ASSERT_EQ(p->stage[VJ_HOST_BLOCK], 240 * US, "host block");
	ASSERT_EQ(p->stage[VJ_HOST_TO_NOTIFY], 20 * US, "host to notify");
	ASSERT_EQ(p->stage[VJ_NOTIFY_TO_IRQ], 70 * US, "notify to irq");
	ASSERT_EQ(p->stage[VJ_GUEST_COMPLETE], 20 * US, "guest complete");
	ASSERT_EQ(p->stage[VJ_GUEST_VIRTIO], 400 * US, "guest virtio");
	ASSERT_EQ(p->stage[VJ_QEMU_TOTAL], 310 * US, "qemu total");
	ASSERT_EQ(p->stage[VJ_WORLD_SWITCH], 90 * US, "world switch");
	ASSERT_EQ(vjoin_stats(j)->with_submit, 1, "with submit");
out:
	vjoin_free(j);
}
/*
 * No kick (suppressed): the stand-in is the driver submit, but never before D
 * (seen in a TCG guest: a submit stamp 1.15 ms before D made the path's order bad).
 */
static void test_join_no_kick(void)
{
	struct vjoin *j = fresh();
	uint64_t t = 1000 * MS;
	struct link_vreq g = greq(1, 800, t);
	const struct vj_path *p = &got[0];

	g.kick_ns = 0;
	g.submit_ns = g.d_ns - 2 * MS;
	join_read(j, &g, t);
	if (!ASSERT_EQ(nr_got, 1, "one path"))
		goto out;
	ASSERT_EQ(p->joined, 1, "joined");
	ASSERT_EQ(p->t[VJ_T_G_KICK], g.d_ns + OFF, "stand-in: D, not the earlier submit");
	ASSERT_EQ(p->order_ok, 1, "order");
out:
	vjoin_free(j);
}

/* Same offset twice, 100 ms apart: each guest request gets its own host IO. */
static void test_join_by_time_window(void)
{
	struct vjoin *j = fresh();
	uint64_t t1 = 1000 * MS, t2 = 1100 * MS;
	struct link_vreq g1 = greq(1, 64, t1), g2 = greq(2, 64, t2);
	struct vj_host_io h1 = hio(64, t1), h2 = hio(64, t2);

	qsub(j, IT_OP_READ, 64, 4096, t1, HVA);
	qsub(j, IT_OP_READ, 64, 4096, t2, HVA);
	vjoin_add_host(j, &h1, 1);
	vjoin_add_host(j, &h2, 1);
	vjoin_add_guest(j, 1, 0xabc, 0, &g2, OFF, 50 * US, 2);
	vjoin_add_guest(j, 1, 0xabc, 0, &g1, OFF, 50 * US, 2);
	if (ASSERT_EQ(nr_got, 2, "two paths")) {
		ASSERT_EQ(got[0].h.enter_ns, h2.enter_ns, "second request -> second IO");
		ASSERT_EQ(got[1].h.enter_ns, h1.enter_ns, "first request -> first IO");
	}
	vjoin_free(j);
}

/*
 * Wrong buffer, too long, wrong op, wrong disk, out of window, before the
 * submit: no join (the host offset is not the key: h[0] has the guest's).
 */
static void test_no_join_without_key(void)
{
	struct vjoin *j = fresh();
	uint64_t t = 1000 * MS;
	struct vj_host_io h[6];
	struct link_vreq g = greq(1, 800, t);

	for (int i = 0; i < 6; i++)
		h[i] = hio(800, t);
	h[0].buf += 512;
	h[1].bytes = 8192;
	h[2].op = IT_OP_WRITE;
	h[3].disk = 1;
	h[4].enter_ns += 10 * MS; /* after the guest saw it complete */
	h[5].enter_ns = t + OFF + 10 * US; /* before QEMU's submit */
	qsub(j, IT_OP_READ, 800, 4096, t, HVA);
	for (int i = 0; i < 6; i++)
		vjoin_add_host(j, &h[i], 1);
	vjoin_add_guest(j, 1, 0xabc, 0, &g, OFF, 50 * US, 2);
	ASSERT_EQ(nr_got, 0, "waits for its host IO");
	vjoin_tick(j, 2 + 1000 * MS);
	ASSERT_EQ(nr_got, 0, "still waiting before hold");
	vjoin_tick(j, 2 + 2000 * MS);
	if (ASSERT_EQ(nr_got, 1, "given up after hold")) {
		ASSERT_EQ(got[0].joined, 0, "unjoined");
		ASSERT_EQ(got[0].unjoin, VJ_UN_NO_HOST_IO, "reason: no host IO at its buffer");
	}
	ASSERT_EQ(vjoin_stats(j)->unjoined, 1, "counted");
	ASSERT_EQ(vjoin_stats(j)->unjoin[VJ_UN_NO_HOST_IO], 1, "counted by reason");
	vjoin_free(j);
}

/* The guest record may come before the host IO: it waits and joins later. */
static void test_guest_first(void)
{
	struct vjoin *j = fresh();
	uint64_t t = 1000 * MS;
	struct link_vreq g = greq(7, 16, t);
	struct vj_host_io h = hio(16, t);

	qsub(j, IT_OP_READ, 16, 4096, t, HVA);
	vjoin_add_guest(j, 1, 0xabc, 0, &g, OFF, 50 * US, 1000);
	ASSERT_EQ(nr_got, 0, "waiting");
	vjoin_tick(j, 999); /* a tick stamped before the record arrived */
	ASSERT_EQ(nr_got, 0, "still waiting");
	vjoin_add_host(j, &h, 2);
	vjoin_tick(j, 3);
	if (ASSERT_EQ(nr_got, 1, "joined on tick"))
		ASSERT_EQ(got[0].joined, 1, "joined");
	vjoin_free(j);
}

/* A clock error larger than the uncertainty shows as an order violation. */
static void test_order_violation(void)
{
	struct vjoin *j = fresh();
	uint64_t t = 1000 * MS;
	struct link_vreq g = greq(1, 8, t);
	struct vj_host_io h = hio(8, t);

	/*
	 * The clock is off by 400 us but claims +- 10 us: the host syscall still
	 * starts inside kick..irq +- (10 us + slack), so it joins, but its exit
	 * comes after the guest's interrupt by more than the tolerance.
	 */
	qsub(j, IT_OP_READ, 8, 4096, t, HVA);
	vjoin_add_host(j, &h, 1);
	vjoin_add_guest(j, 1, 0xabc, 0, &g, OFF - 400 * (int64_t)US, 10 * US, 2);
	vjoin_flush(j);
	if (ASSERT_EQ(nr_got, 1, "one path")) {
		ASSERT_EQ(got[0].joined, 1, "still joined (window = kick..irq +- tol)");
		ASSERT_EQ(got[0].order_ok, 0, "order violation found");
	}
	vjoin_free(j);
}

/* No serial match: emitted unjoined at once; host IOs expire and are counted. */
static void test_unknown_disk_and_expiry(void)
{
	struct vjoin *j = fresh();
	struct link_vreq g = greq(1, 8, 1000 * MS);
	struct vj_host_io h = hio(99, 1000 * MS);

	struct vj_host_io meta = hio(7, 1000 * MS);

	vjoin_add_guest(j, 1, 0xabc, -1, &g, OFF, 50 * US, 1);
	ASSERT_EQ(nr_got, 1, "emitted at once");
	ASSERT_EQ(got[0].joined, 0, "unjoined");
	ASSERT_EQ(got[0].unjoin, VJ_UN_NO_DISK, "reason");
	qsub(j, IT_OP_READ, 99, 4096, 1000 * MS, HVA);
	vjoin_add_host(j, &h, 1);
	meta.buf = 0x5500000000ull; /* QEMU's own buffer (qcow2 metadata) */
	vjoin_add_host(j, &meta, 1);
	vjoin_tick(j, 1 + 10000 * MS);
	ASSERT_EQ(vjoin_stats(j)->host_unjoined, 2, "expired host IOs counted");
	ASSERT_EQ(vjoin_stats(j)->host_unjoin[VJ_HU_UNCLAIMED], 1, "a guest buffer");
	ASSERT_EQ(vjoin_stats(j)->host_unjoin[VJ_HU_NOT_GUEST], 1, "not a guest buffer");
	vjoin_free(j);
}

/* A small table evicts the oldest host IOs and counts them. */
static void test_eviction(void)
{
	struct vjoin *j;
	struct link_vreq g = greq(1, 0, 1000 * MS);

	nr_got = 0;
	j = vjoin_new(collect, NULL, 2000 * MS, 4);
	for (uint64_t i = 0; i < 10; i++) {
		struct vj_host_io h = hio(i * 8, 1000 * MS);

		h.buf = HVA + i * 4096;
		qsub(j, IT_OP_READ, i * 8, 4096, 1000 * MS, h.buf);
		vjoin_add_host(j, &h, 1);
	}
	ASSERT_EQ(vjoin_stats(j)->evicted, 6, "evicted");
	vjoin_add_guest(j, 1, 0xabc, 0, &g, OFF, 50 * US, 2);
	ASSERT_EQ(nr_got, 0, "evicted IO is not found");
	g = greq(2, 9 * 8, 1000 * MS);
	vjoin_add_guest(j, 1, 0xabc, 0, &g, OFF, 50 * US, 2);
	ASSERT_EQ(nr_got, 1, "newest IO is found");
	vjoin_free(j);
}

/*
 * qcow2: the host IO is at another offset of the image (the cluster QEMU
 * chose), a different buffer reused by the next request is not taken.
 */
static void test_qcow2_offset(void)
{
	struct vjoin *j = fresh();
	uint64_t t = 1000 * MS;
	struct link_vreq g = greq(1, 800, t);
	struct vj_host_io h = hio(800, t);

	g.op = h.op = IT_OP_WRITE;
	h.offset = 0x350000; /* not 800 * 512 */
	qsub(j, IT_OP_WRITE, 800, 4096, t, HVA);
	vjoin_add_host(j, &h, 1);
	vjoin_add_guest(j, 1, 0xabc, 0, &g, OFF, 50 * US, 2);
	if (ASSERT_EQ(nr_got, 1, "joined at once")) {
		ASSERT_EQ(got[0].joined, 1, "joined");
		ASSERT_EQ(got[0].h.offset, 0x350000, "host offset of the image");
		ASSERT_EQ(got[0].hva, HVA, "by its buffer");
	}
	vjoin_free(j);
}

/*
 * One guest request served by two host IOs (a cluster boundary; the second
 * from the backing file: another inode) at buffer, buffer + 2048.
 */
static void test_split(void)
{
	struct vjoin *j = fresh();
	uint64_t t = 1000 * MS;
	struct link_vreq g = greq(1, 120, t);
	struct vj_host_io a = hio(120, t), b = hio(120, t);

	a.bytes = b.bytes = 2048;
	a.offset = 0x10000 - 2048;
	b.offset = 0x90000;
	b.ino = 77;
	b.buf = HVA + 2048;
	b.enter_ns += 5 * US;
	qsub(j, IT_OP_READ, 120, 4096, t, HVA);
	vjoin_add_host(j, &b, 1);
	vjoin_add_host(j, &a, 1);
	vjoin_add_guest(j, 1, 0xabc, 0, &g, OFF, 50 * US, 2);
	if (ASSERT_EQ(nr_got, 1, "joined")) {
		ASSERT_EQ(got[0].joined, 1, "joined");
		ASSERT_EQ(got[0].nr_h, 2, "two host IOs");
		ASSERT_EQ(got[0].hp[1].ino, 77, "second from the backing file");
	}
	ASSERT_EQ(vjoin_stats(j)->split, 1, "counted as split");
	vjoin_free(j);
}

/*
 * The guest reuses its buffer: request 1 (an unallocated cluster: no host
 * IO) and request 2 100 us after it completed. Request 1 must not take
 * request 2's host IO: QEMU's next submit of the buffer owns what follows.
 */
static void test_buffer_reuse(void)
{
	struct vjoin *j = fresh();
	uint64_t t1 = 1000 * MS, t2 = t1 + 500 * US;
	struct link_vreq g1 = greq(1, 8, t1), g2 = greq(2, 4000, t2);
	struct vj_host_io h2 = hio(4000, t2);

	qsub(j, IT_OP_READ, 8, 4096, t1, HVA);
	qsub(j, IT_OP_READ, 4000, 4096, t2, HVA);
	vjoin_add_host(j, &h2, 1);
	/* a wide clock uncertainty: request 1's window reaches request 2's IO */
	vjoin_add_guest(j, 1, 0xabc, 0, &g1, OFF, 400 * US, 2);
	vjoin_add_guest(j, 1, 0xabc, 0, &g2, OFF, 400 * US, 2);
	if (ASSERT_EQ(nr_got, 1, "request 2 joined, request 1 waits")) {
		ASSERT_EQ(got[0].g->seq, 2, "request 2");
		ASSERT_EQ(got[0].joined, 1, "joined");
	}
	vjoin_flush(j);
	if (ASSERT_EQ(nr_got, 2, "request 1 given up")) {
		ASSERT_EQ(got[1].joined, 0, "not joined");
		ASSERT_EQ(got[1].unjoin, VJ_UN_NO_HOST_IO, "no host IO");
	}
	vjoin_free(j);
}

/* QEMU merged two adjacent guest requests into one submit; none is joined. */
static void test_merged_and_no_submit(void)
{
	struct vjoin *j = fresh();
	uint64_t t = 1000 * MS;
	struct link_vreq g1 = greq(1, 64, t), g2 = greq(2, 72, t), g3 = greq(3, 900, t);
	struct vj_host_io h = hio(64, t);

	h.bytes = 8192;
	qsub(j, IT_OP_READ, 64, 8192, t, HVA);
	vjoin_add_host(j, &h, 1);
	vjoin_add_guest(j, 1, 0xabc, 0, &g1, OFF, 50 * US, 2);
	vjoin_add_guest(j, 1, 0xabc, 0, &g2, OFF, 50 * US, 2);
	vjoin_add_guest(j, 1, 0xabc, 0, &g3, OFF, 50 * US, 2);
	vjoin_flush(j);
	if (ASSERT_EQ(nr_got, 3, "three paths")) {
		for (int i = 0; i < 3; i++)
			ASSERT_EQ(got[i].joined, 0, "not joined");
	}
	ASSERT_EQ(vjoin_stats(j)->unjoin[VJ_UN_MERGED], 2, "merged");
	ASSERT_EQ(vjoin_stats(j)->unjoin[VJ_UN_NO_SUBMIT], 1, "no submit");
	vjoin_free(j);
}

/* Host IOs cover half the buffer only (a bounce buffer for the rest). */
static void test_partial(void)
{
	struct vjoin *j = fresh();
	uint64_t t = 1000 * MS;
	struct link_vreq g = greq(1, 64, t);
	struct vj_host_io h = hio(64, t);

	h.bytes = 2048;
	qsub(j, IT_OP_READ, 64, 4096, t, HVA);
	vjoin_add_host(j, &h, 1);
	vjoin_add_guest(j, 1, 0xabc, 0, &g, OFF, 50 * US, 2);
	vjoin_flush(j);
	if (ASSERT_EQ(nr_got, 1, "one path"))
		ASSERT_EQ(got[0].unjoin, VJ_UN_PARTIAL, "partial");
	vjoin_free(j);
}

/*
 * aio=native: the io_submit's iocb is the host IO, its completion the block
 * request's (QEMU reaps the ring in user space); the block record may come
 * before or after the io_submit's.
 */
static void test_aio_native_block(void)
{
	for (int before = 0; before < 2; before++) {
		struct vjoin *j = fresh();
		uint64_t t = 1000 * MS;
		struct link_vreq g = greq(1, 64, t);
		struct vj_host_io h = hio(64, t);
		uint64_t q = h.blk_q_ns, c = h.blk_c_ns;

		h.kind = VJ_K_AIO;
		h.seq = 5;
		h.exit_ns = h.blk_q_ns = h.blk_c_ns = 0;
		qsub(j, IT_OP_READ, 64, 4096, t, HVA);
		if (before)
			vjoin_host_block(j, 100, 5, 64, q, q, c, 8);
		vjoin_host_block(j, 100, 4, 64, q - 1, q - 1, c - 1, 8); /* another syscall's */
		vjoin_add_host(j, &h, 1);
		if (!before)
			vjoin_host_block(j, 100, 5, 64, q, q, c, 8);
		vjoin_add_guest(j, 1, 0xabc, 0, &g, OFF, 50 * US, 2);
		if (ASSERT_EQ(nr_got, 1, "joined")) {
			ASSERT_EQ(got[0].t[VJ_T_H_BLK_Q], q, "block queued");
			ASSERT_EQ(got[0].t[VJ_T_H_EXIT], c, "completion: the block's");
			ASSERT_EQ(got[0].stage[VJ_HOST_SYSCALL], (int64_t)(c - h.enter_ns),
				  "host submit to completion");
		}
		vjoin_free(j);
	}
}

/*
 * qcow2 copy on write: one pwritev of [QEMU's buffer, the guest's]; the host
 * adds a view per buffer, the guest's data at the IO's offset + the first
 * buffer's length.
 */
static void test_cow_second_buffer(void)
{
	struct vjoin *j = fresh();
	uint64_t t = 1000 * MS;
	struct link_vreq g = greq(1, 72, t);
	struct vj_host_io cow = hio(0, t), data;

	g.op = cow.op = IT_OP_WRITE;
	cow.io_offset = 0x200000;
	cow.io_bytes = 65536;
	cow.buf = 0x5500000000ull;
	cow.bytes = 4096;
	cow.offset = 0x200000;
	data = cow;
	data.view = 1;
	data.buf = HVA;
	data.offset = 0x201000;
	qsub(j, IT_OP_WRITE, 72, 4096, t, HVA);
	vjoin_add_host(j, &cow, 1);
	vjoin_add_host(j, &data, 1);
	vjoin_add_guest(j, 1, 0xabc, 0, &g, OFF, 50 * US, 2);
	if (ASSERT_EQ(nr_got, 1, "joined")) {
		ASSERT_EQ(got[0].joined, 1, "joined");
		ASSERT_EQ(got[0].h.offset, 0x201000, "where the guest's data went");
	}
	vjoin_free(j);
}

int main(void)
{
	RUN_TEST(test_aio_native_block);
	RUN_TEST(test_cow_second_buffer);
	RUN_TEST(test_qcow2_offset);
	RUN_TEST(test_split);
	RUN_TEST(test_buffer_reuse);
	RUN_TEST(test_merged_and_no_submit);
	RUN_TEST(test_partial);
	RUN_TEST(test_join_full_path);
	RUN_TEST(test_join_no_kick);
	RUN_TEST(test_join_by_time_window);
	RUN_TEST(test_no_join_without_key);
	RUN_TEST(test_guest_first);
	RUN_TEST(test_order_violation);
	RUN_TEST(test_unknown_disk_and_expiry);
	RUN_TEST(test_eviction);
	return unit_result();
}
