// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of src/mode/vjaddr.c, vjoin's address path: a VM learns its
 * GPA -> HVA map and its clock on the uprobe path, becomes ready when the
 * address path agrees, then joins guest requests by their buffer address
 * alone (no QEMU event); a request without host IO never takes its
 * neighbour's at the same buffer; a stale clock, unmapped addresses and
 * records without address are said and counted; a bounce buffer's IO is
 * found by offset on a raw disk. The expected paths are written by hand.
 */
#include "unit.h"
#include "vjoin_harness.h"

#define GIB (1ull << 30)
#define GPA 0x3d79b000ull /* the guest buffer, guest-physical */
#define RAM_LO (HVA - GPA) /* QEMU's mapping of the guest's RAM */

static int maps(void *ctx, int vm, uint64_t hva, uint64_t *lo, uint64_t *hi)
{
	if (hva < RAM_LO || hva >= RAM_LO + GIB)
		return -1;
	*lo = RAM_LO;
	*hi = RAM_LO + GIB;
	return 0;
}

static struct link_vreq areq(uint64_t seq, uint64_t sector, uint64_t t)
{
	struct link_vreq v = greq(seq, sector, t);

	v.gpa = GPA;
	return v;
}

/* A VM 0 with disk 0 (raw), on the uprobe path. */
static struct vjoin *vm_fresh(void)
{
	struct vjoin *j = fresh();

	vjoin_disk(j, 0, 0, 1);
	vjoin_set_maps(j, maps, NULL);
	vjoin_vm_mode(j, 0, VJ_VM_UPROBES);
	return j;
}

/* n reads joined on the uprobe path, 1 ms apart from guest time *t (seq from *seq). */
static void uprobe_reads(struct vjoin *j, uint64_t *seq, uint64_t *t, int n)
{
	for (int i = 0; i < n; i++, (*seq)++, *t += MS) {
		struct link_vreq g = areq(*seq, 8 * *seq, *t);
		struct vj_host_io h = hio(8 * *seq, *t);

		qsub(j, IT_OP_READ, 8 * *seq, 4096, *t, HVA);
		vjoin_add_host(j, &h, 1);
		vjoin_add_guest(j, 1, 0xabc, 0, &g, OFF, 400 * US, 2);
	}
}

/* One read by address: its host IO, then its record (no QEMU event). */
static void addr_read(struct vjoin *j, uint64_t seq, uint64_t t, int with_io)
{
	struct link_vreq g = areq(seq, 8 * seq, t);
	struct vj_host_io h = hio(8 * seq, t);

	if (with_io)
		vjoin_add_host(j, &h, 1);
	vjoin_add_guest(j, 1, 0xabc, 0, &g, OFF, 400 * US, 2);
}

/* Calibrated: ready after the agreements, then on the address path. */
static struct vjoin *calibrated(uint64_t *seq, uint64_t *t)
{
	struct vjoin *j = vm_fresh();

	*seq = 1;
	*t = 1000 * MS;
	uprobe_reads(j, seq, t, 8);
	ASSERT_EQ(vjoin_vm(j, 0)->ready, 0, "8 joins bound the clock: not ready yet");
	uprobe_reads(j, seq, t, VJ_READY);
	ASSERT_EQ(vjoin_vm(j, 0)->ready, 1, "ready after VJ_READY agreements");
	ASSERT_EQ(vjoin_vm(j, 0)->disagree, 0ULL, "no disagreement");
	ASSERT_EQ(vjoin_vm(j, 0)->segments, 1, "one map segment");
	vjoin_vm_mode(j, 0, VJ_VM_ADDRESS);
	nr_got = 0;
	return j;
}

static void test_calibrate_then_address(void)
{
	uint64_t seq, t;
	struct vjoin *j = calibrated(&seq, &t);

	for (int i = 0; i < 10; i++, seq++, t += MS)
		addr_read(j, seq, t, 1);
	if (ASSERT_EQ(nr_got, 10, "ten paths at once")) {
		for (int i = 0; i < 10; i++) {
			ASSERT_EQ(got[i].joined, 1, "joined");
			ASSERT_EQ(got[i].key, VJ_KEY_ADDRESS, "by address");
			ASSERT_EQ(got[i].h.offset, got[i].g->sector * 512, "its own host IO");
			ASSERT_EQ(got[i].t[VJ_T_Q_SUBMIT], 0ULL, "no QEMU submit stamp");
			ASSERT_TRUE(got[i].stage[VJ_KICK_TO_HOST] == 50 * (int64_t)US,
				    "kick_to_host");
		}
	}
	ASSERT_EQ(vjoin_stats(j)->by_key[VJ_KEY_ADDRESS], 10ULL, "counted by key");
	ASSERT_EQ(vjoin_vm(j, 0)->addr_joined, 10ULL, "the VM's count");
	vjoin_free(j);
}

/*
 * A read of an unallocated qcow2 cluster has no host IO; the next request
 * reuses the buffer 200 us after its interrupt. Within the ping's window
 * (+- 400 us + slack) the neighbour's IO would fit; the clock bounds keep it.
 */
static void test_no_io_keeps_off_neighbour(void)
{
	uint64_t seq, t;
	struct vjoin *j = calibrated(&seq, &t);
	struct link_vreq a = areq(seq, 8 * seq, t), b = areq(seq + 1, 8 * (seq + 1), t + 600 * US);
	struct vj_host_io hb = hio(8 * (seq + 1), t + 600 * US);

	vjoin_add_host(j, &hb, 1);
	vjoin_add_guest(j, 1, 0xabc, 0, &a, OFF, 400 * US, 2);
	ASSERT_EQ(nr_got, 0, "a waits: no IO of its own");
	vjoin_add_guest(j, 1, 0xabc, 0, &b, OFF, 400 * US, 2);
	vjoin_flush(j);
	if (ASSERT_EQ(nr_got, 2, "two paths")) {
		ASSERT_EQ(got[0].g->seq, b.seq, "b first");
		ASSERT_EQ(got[0].joined, 1, "b joined");
		ASSERT_EQ(got[0].h.offset, b.sector * 512, "b's own IO");
		ASSERT_EQ(got[1].joined, 0, "a not joined");
		ASSERT_EQ(got[1].unjoin, VJ_UN_NO_HOST_IO, "no host IO");
	}
	vjoin_free(j);
}

/*
 * 60 s without a joined path, the guest clock 300 us off since (TCG drifts):
 * the bounds widened past use, so the request waits and its VM asks for a
 * re-check; back on the uprobe path, fresh joins re-anchor the bounds and the
 * waiting request joins its own IO (not the next one's).
 */
static void test_stale_clock_recheck(void)
{
	uint64_t seq, t, t0, s0;
	struct vjoin *j = calibrated(&seq, &t);
	struct link_vreq g;
	struct vj_host_io h;

	t += 60000 * MS;
	t0 = t;
	s0 = seq;
	g = areq(seq, 8 * seq, t);
	h = hio(8 * seq, t + 300 * US);
	vjoin_add_host(j, &h, 1);
	vjoin_add_guest(j, 1, 0xabc, 0, &g, OFF, 400 * US, 2);
	ASSERT_EQ(nr_got, 0, "not guessed");
	ASSERT_EQ(vjoin_vm(j, 0)->recheck, VJ_RC_CLOCK, "re-check: clock");
	ASSERT_EQ(vjoin_vm(j, 0)->rechecks[VJ_RC_CLOCK], 1ULL, "counted");
	vjoin_vm_mode(j, 0, VJ_VM_UPROBES); /* host mode brings the uprobes back */
	seq++;
	t += 600 * US;
	for (int i = 0; i < 8; i++, seq++, t += MS) {
		struct link_vreq n = areq(seq, 8 * seq, t);
		struct vj_host_io hn = hio(8 * seq, t + 300 * US);

		qsub(j, IT_OP_READ, 8 * seq, 4096, t + 300 * US, HVA);
		vjoin_add_host(j, &hn, 1);
		vjoin_add_guest(j, 1, 0xabc, 0, &n, OFF, 400 * US, 2);
	}
	vjoin_tick(j, 3);
	ASSERT_EQ(nr_got, 9, "eight by uprobe, then the waiting one");
	for (int i = 0; i < nr_got; i++) {
		ASSERT_EQ(got[i].joined, 1, "joined");
		ASSERT_EQ(got[i].h.offset, got[i].g->sector * 512, "its own host IO");
		if (got[i].g->seq == s0)
			ASSERT_EQ(got[i].key, VJ_KEY_ADDRESS, "the waiting one by address");
	}
	ASSERT_TRUE(t > t0, "time went on");
	vjoin_free(j);
}

/*
 * A guest clock 10 ppm fast against the host's: 20 s of reads (one every 100
 * ms) let the VM fit that drift; after a 30 s pause (300 us of drift since)
 * a burst is joined by address at once, its bounds carried over the pause
 * (each its own IO), with no re-check.
 */
static void test_drift_carried_over_pause(void)
{
	uint64_t seq, t, t_first;
	struct vjoin *j = calibrated(&seq, &t);

	t_first = 1000 * MS;
	for (int i = 0; i < 200; i++, seq++) {
		int64_t d = (int64_t)(t - t_first) / 100000; /* 10 ppm */
		struct link_vreq g = areq(seq, 8 * seq, t);
		struct vj_host_io h = hio(8 * seq, t + (uint64_t)d);

		vjoin_add_host(j, &h, 1);
		vjoin_add_guest(j, 1, 0xabc, 0, &g, OFF, 400 * US, 2);
		t += 100 * MS;
	}
	ASSERT_EQ(vjoin_vm(j, 0)->addr_joined, 200ULL,
		  "200 joined as the drift grew (fresh bounds)");
	t += 30000 * MS;
	nr_got = 0;
	for (int i = 0; i < 8; i++, seq++) {
		int64_t d = (int64_t)(t - t_first) / 100000;
		struct link_vreq g = areq(seq, 8 * seq, t);
		struct vj_host_io h = hio(8 * seq, t + (uint64_t)d);

		vjoin_add_host(j, &h, 1);
		vjoin_add_guest(j, 1, 0xabc, 0, &g, OFF, 400 * US, 2);
		t += 600 * US;
	}
	ASSERT_EQ(vjoin_vm(j, 0)->recheck, VJ_RC_NONE, "no re-check");
	if (ASSERT_EQ(nr_got, 8, "the burst joined at once")) {
		for (int i = 0; i < 8; i++) {
			ASSERT_EQ(got[i].joined, 1, "joined");
			ASSERT_EQ(got[i].h.offset, got[i].g->sector * 512, "its own host IO");
		}
	}
	vjoin_free(j);
}

static void test_unmapped_and_no_address(void)
{
	uint64_t seq, t;
	struct vjoin *j = calibrated(&seq, &t);

	for (int i = 0; i < 4; i++, seq++, t += MS) {
		struct link_vreq g = areq(seq, 8 * seq, t);

		g.gpa = 8 * GIB; /* beyond the RAM QEMU maps */
		vjoin_add_guest(j, 1, 0xabc, 0, &g, OFF, 400 * US, 2);
	}
	ASSERT_EQ(nr_got, 4, "given up at once");
	ASSERT_EQ(got[0].unjoin, VJ_UN_UNMAPPED, "unmapped");
	ASSERT_EQ(vjoin_vm(j, 0)->unmapped, 4ULL, "counted");
	ASSERT_EQ(vjoin_vm(j, 0)->recheck, VJ_RC_UNMAPPED, "a re-check: memory moved?");
	{
		struct link_vreq g = areq(seq, 8 * seq, t);

		g.gpa = 0; /* an older guest's record */
		vjoin_add_guest(j, 1, 0xabc, 0, &g, OFF, 400 * US, 2);
	}
	ASSERT_EQ(nr_got, 5, "at once");
	ASSERT_EQ(got[4].unjoin, VJ_UN_NO_ADDRESS, "no address");
	ASSERT_EQ(vjoin_stats(j)->unjoin[VJ_UN_NO_ADDRESS], 1ULL, "by reason");
	vjoin_free(j);
}

/* QEMU bounced an unaligned buffer: its IO, at the guest's offset, is found by offset. */
static void test_bounce_by_offset(void)
{
	uint64_t seq, t;
	struct vjoin *j = calibrated(&seq, &t);
	struct link_vreq g = areq(seq, 8 * seq, t);
	struct vj_host_io h = hio(8 * seq, t);

	h.buf = 0x5555a000ull; /* QEMU's bounce buffer, not guest RAM */
	h.io_offset = h.offset;
	h.io_bytes = h.bytes;
	vjoin_add_host(j, &h, 1);
	vjoin_add_guest(j, 1, 0xabc, 0, &g, OFF, 400 * US, 2);
	ASSERT_EQ(nr_got, 0, "waits for its IO at its buffer");
	vjoin_flush(j);
	if (ASSERT_EQ(nr_got, 1, "one path")) {
		ASSERT_EQ(got[0].joined, 1, "joined");
		ASSERT_EQ(got[0].key, VJ_KEY_OFFSET, "by offset");
	}
	ASSERT_EQ(vjoin_vm(j, 0)->bounced, 1ULL, "counted");
	vjoin_free(j);
}

int main(void)
{
	RUN_TEST(test_calibrate_then_address);
	RUN_TEST(test_no_io_keeps_off_neighbour);
	RUN_TEST(test_stale_clock_recheck);
	RUN_TEST(test_drift_carried_over_pause);
	RUN_TEST(test_unmapped_and_no_address);
	RUN_TEST(test_bounce_by_offset);
	return unit_result();
}
