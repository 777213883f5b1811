// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of src/mode/vjoin.c: synthetic guest requests, QEMU events and host
 * IOs with known times and a known clock offset; the expected paths are
 * written out by hand.
 */
#include <stdlib.h>

#include "iotracer.h"
#include "mode/vjoin.h"
#include "unit.h"

#define US 1000ull
#define MS 1000000ull
#define OFF 5000000000ll /* host = guest + 5 s */

static struct vj_path got[64];
static struct link_vreq got_g[64];
static int nr_got;

static void collect(const struct vj_path *p, void *ctx)
{
	if (nr_got < 64) {
		got[nr_got] = *p;
		got_g[nr_got] = *p->g;
		got[nr_got].g = &got_g[nr_got];
		nr_got++;
	}
}

/* A guest read of 4 KiB at sector, kicked at guest time t (ns). */
static struct link_vreq greq(uint64_t seq, uint64_t sector, uint64_t t)
{
	struct link_vreq v;

	memset(&v, 0, sizeof(v));
	v.seq = seq;
	v.sector = sector;
	v.nr_sectors = 8;
	v.op = IT_OP_READ;
	v.drv_layer = IT_L_VIRTIO;
	strcpy(v.serial, "labvblk0");
	v.flags = LINK_VF_HAS_SYS;
	v.sys_enter_ns = t - 30 * US;
	v.q_ns = t - 20 * US;
	v.d_ns = t - 10 * US;
	v.submit_ns = t - 5 * US;
	v.kick_ns = t;
	v.done_ns = t + 400 * US;
	v.c_ns = t + 410 * US;
	v.sys_exit_ns = t + 420 * US;
	return v;
}

/* The host IO QEMU made for greq(sector, guest t): host times t + OFF + .. */
static struct vj_host_io hio(uint64_t sector, uint64_t t)
{
	struct vj_host_io h;
	uint64_t ht = t + OFF;

	memset(&h, 0, sizeof(h));
	h.disk = 0;
	h.op = IT_OP_READ;
	h.pid = h.tid = 100;
	h.offset = sector * 512;
	h.bytes = 4096;
	h.enter_ns = ht + 50 * US;
	h.blk_q_ns = ht + 60 * US;
	h.blk_c_ns = ht + 300 * US;
	h.exit_ns = ht + 310 * US;
	h.ret = 4096;
	return h;
}

static struct vjoin *fresh(void)
{
	nr_got = 0;
	return vjoin_new(collect, NULL, 2000 * MS, 0);
}

static void test_join_full_path(void)
{
	struct vjoin *j = fresh();
	uint64_t t = 1000 * MS;
	struct link_vreq g = greq(1, 800, t);
	struct vj_host_io h = hio(800, t);
	const struct vj_path *p = &got[0];

	vjoin_add_qemu(j, IT_QEV_AIO_READ, t + OFF + 20 * US, 800 * 512);
	vjoin_add_qemu(j, IT_QEV_NOTIFY, t + OFF + 330 * US, 0);
	vjoin_add_host(j, &h, 1);
	vjoin_add_guest(j, 3, 0xabc, 0, &g, OFF, 50 * US, 2);
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

/* Same offset twice, 100 ms apart: each guest request gets its own host IO. */
static void test_join_by_time_window(void)
{
	struct vjoin *j = fresh();
	uint64_t t1 = 1000 * MS, t2 = 1100 * MS;
	struct link_vreq g1 = greq(1, 64, t1), g2 = greq(2, 64, t2);
	struct vj_host_io h1 = hio(64, t1), h2 = hio(64, t2);

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

/* Wrong offset, wrong length, wrong op, wrong disk, out of window: no join. */
static void test_no_join_without_key(void)
{
	struct vjoin *j = fresh();
	uint64_t t = 1000 * MS;
	struct vj_host_io h[5];
	struct link_vreq g = greq(1, 800, t);

	for (int i = 0; i < 5; i++)
		h[i] = hio(800, t);
	h[0].offset += 512;
	h[1].bytes = 8192;
	h[2].op = IT_OP_WRITE;
	h[3].disk = 1;
	h[4].enter_ns += 10 * MS; /* after the guest saw it complete */
	for (int i = 0; i < 5; i++)
		vjoin_add_host(j, &h[i], 1);
	vjoin_add_guest(j, 1, 0xabc, 0, &g, OFF, 50 * US, 2);
	ASSERT_EQ(nr_got, 0, "waits for its host IO");
	vjoin_tick(j, 2 + 1000 * MS);
	ASSERT_EQ(nr_got, 0, "still waiting before hold");
	vjoin_tick(j, 2 + 2000 * MS);
	if (ASSERT_EQ(nr_got, 1, "given up after hold"))
		ASSERT_EQ(got[0].joined, 0, "unjoined");
	ASSERT_EQ(vjoin_stats(j)->unjoined, 1, "counted");
	vjoin_free(j);
}

/* The guest record may come before the host IO: it waits and joins later. */
static void test_guest_first(void)
{
	struct vjoin *j = fresh();
	uint64_t t = 1000 * MS;
	struct link_vreq g = greq(7, 16, t);
	struct vj_host_io h = hio(16, t);

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

	vjoin_add_guest(j, 1, 0xabc, -1, &g, OFF, 50 * US, 1);
	ASSERT_EQ(nr_got, 1, "emitted at once");
	ASSERT_EQ(got[0].joined, 0, "unjoined");
	vjoin_add_host(j, &h, 1);
	vjoin_tick(j, 1 + 10000 * MS);
	ASSERT_EQ(vjoin_stats(j)->host_unjoined, 1, "expired host IO counted");
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

int main(void)
{
	RUN_TEST(test_join_full_path);
	RUN_TEST(test_join_by_time_window);
	RUN_TEST(test_no_join_without_key);
	RUN_TEST(test_guest_first);
	RUN_TEST(test_order_violation);
	RUN_TEST(test_unknown_disk_and_expiry);
	RUN_TEST(test_eviction);
	return unit_result();
}
