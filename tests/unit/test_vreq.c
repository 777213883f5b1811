// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for src/mode/vreq.c: which guest block records are streamed to
 * the host, and the kick a request may carry (only its own).
 */
#include <string.h>

#include "unit.h"
#include "iotracer.h"
#include "mode/vreq.h"

static struct it_block_rec blk(uint8_t layer, uint64_t d, uint64_t submit, uint64_t kick)
{
	struct it_block_rec b;

	memset(&b, 0, sizeof(b));
	b.sector = 2048;
	b.bytes = 4096;
	b.op = IT_OP_WRITE;
	b.q_ns = 100;
	b.d_ns = d;
	b.c_ns = 9000;
	b.drv_layer = layer;
	b.drv_submit_ns = submit;
	b.drv_kick_ns = kick;
	b.drv_done_ns = 8000;
	b.task.pid = 42;
	return b;
}

static void test_vreq_own_kick(void)
{
	/* virtio-blk: submit (virtio_queue_rq) < D (blk_mq_start_request inside it) < kick */
	ASSERT_EQ(vreq_own_kick(300, 200, 150, 900), 300ull, "after D and submit");
	ASSERT_EQ(vreq_own_kick(200, 200, 150, 900), 200ull, "at D");
	/* SCSI: D < submit (scsi_dispatch_cmd_start) < kick (virtscsi_queuecommand) */
	ASSERT_EQ(vreq_own_kick(400, 200, 350, 900), 400ull, "scsi order");
	ASSERT_EQ(vreq_own_kick(300, 200, 350, 900), 0ull, "before its submit");
	/* the arm64 case: the queue's last kick, 0.46 ms before the request's own D */
	ASSERT_EQ(vreq_own_kick(1000000, 1460000, 1450000, 1900000), 0ull,
		  "an earlier request's kick");
	/* a list's last kick after the device already took and finished this one */
	ASSERT_EQ(vreq_own_kick(950, 200, 150, 900), 0ull, "after its done");
	ASSERT_EQ(vreq_own_kick(900, 200, 150, 900), 900ull, "at its done");
	ASSERT_EQ(vreq_own_kick(0, 200, 150, 900), 0ull, "none");
	ASSERT_EQ(vreq_own_kick(300, 0, 0, 0), 300ull, "no stamps to compare with");
}

static void test_vreq_layers(void)
{
	struct corr_req r = { .kind = CORR_BLOCK };
	struct vreq_stats st = { 0 };
	struct link_vreq v;
	struct it_block_rec b;
	static const uint8_t yes[] = { IT_L_VIRTIO, IT_L_SCSI, IT_L_NVME };

	for (size_t i = 0; i < sizeof(yes); i++) {
		b = blk(yes[i], 200, 150, 0);
		if (!ASSERT_EQ(vreq_fill(&v, &r, &b, "sn", 0, &st), 1, "streamed"))
			return;
		ASSERT_EQ(v.drv_layer, yes[i], "bus");
		ASSERT_EQ(v.sector, 2048ull, "sector");
		ASSERT_EQ(v.nr_sectors, 8u, "sectors of 512 bytes");
		ASSERT_EQ(v.op, IT_OP_WRITE, "op");
		ASSERT_EQ(v.sys, UINT32_MAX, "no syscall");
		ASSERT_EQ(v.flags & LINK_VF_HAS_SYS, 0, "no syscall flag");
	}
	ASSERT_EQ(st.by_layer[0], 1ull, "virtio-blk");
	ASSERT_EQ(st.by_layer[1], 1ull, "scsi");
	ASSERT_EQ(st.by_layer[2], 1ull, "nvme");
	b = blk(0, 200, 0, 0);
	ASSERT_EQ(vreq_fill(&v, &r, &b, "sn", 0, &st), 0, "no driver layer");
	b = blk(IT_L_BLOCK, 200, 0, 0);
	ASSERT_EQ(vreq_fill(&v, &r, &b, "sn", 0, &st), 0, "block only");
	ASSERT_EQ(st.by_layer[0] + st.by_layer[1] + st.by_layer[2], 3ull, "not counted");
	ASSERT_STREQ(vreq_bus_name(IT_L_VIRTIO), "virtio-blk", "bus name");
	ASSERT_STREQ(vreq_bus_name(IT_L_SCSI), "scsi", "bus name scsi");
	ASSERT_STREQ(vreq_bus_name(IT_L_NVME), "nvme", "bus name nvme");
	ASSERT_STREQ(vreq_bus_name(0), "-", "no bus");
}

static void test_vreq_kick_flags(void)
{
	struct corr_req r = { .kind = CORR_BLOCK };
	struct vreq_stats st = { 0 };
	struct link_vreq v;
	struct it_block_rec b;

	/* virtio-blk with its own kick */
	b = blk(IT_L_VIRTIO, 200, 150, 300);
	vreq_fill(&v, &r, &b, "sn", 1, &st);
	ASSERT_EQ(v.kick_ns, 300ull, "own kick");
	ASSERT_EQ(v.flags & LINK_VF_NO_KICK, 0, "not suppressed");
	/* virtio-blk, notification suppressed: no kick at all */
	b = blk(IT_L_VIRTIO, 200, 150, 0);
	vreq_fill(&v, &r, &b, "sn", 1, &st);
	ASSERT_EQ(v.kick_ns, 0ull, "suppressed: none");
	ASSERT_TRUE(v.flags & LINK_VF_NO_KICK, "suppressed flag");
	/* a kick before its D: dropped, counted stale and suppressed */
	b = blk(IT_L_VIRTIO, 1460000, 1450000, 1000000);
	vreq_fill(&v, &r, &b, "sn", 1, &st);
	ASSERT_EQ(v.kick_ns, 0ull, "stale kick dropped");
	ASSERT_TRUE(v.flags & LINK_VF_NO_KICK, "stale: suppressed flag");
	/* virtio-blk is virtio whatever the caller says */
	b = blk(IT_L_VIRTIO, 200, 150, 0);
	vreq_fill(&v, &r, &b, "sn", 0, &st);
	ASSERT_TRUE(v.flags & LINK_VF_NO_KICK, "virtio-blk kicks");
	/* virtio-scsi without a kick: suppressed; NVMe (doorbell): not */
	b = blk(IT_L_SCSI, 100, 150, 0);
	vreq_fill(&v, &r, &b, "sn", 1, &st);
	ASSERT_TRUE(v.flags & LINK_VF_NO_KICK, "virtio-scsi");
	b = blk(IT_L_SCSI, 100, 150, 0);
	vreq_fill(&v, &r, &b, "sn", 0, &st);
	ASSERT_EQ(v.flags & LINK_VF_NO_KICK, 0, "scsi not on virtio");
	b = blk(IT_L_NVME, 200, 150, 0);
	vreq_fill(&v, &r, &b, "sn", 0, &st);
	ASSERT_EQ(v.flags & LINK_VF_NO_KICK, 0, "nvme");
	ASSERT_EQ(st.kick_suppressed, 4ull, "suppressed count");
	ASSERT_EQ(st.kick_stale, 1ull, "stale count");
}

static void test_vreq_serial_sys(void)
{
	struct it_syscall_rec sys;
	struct corr_req r = { .kind = CORR_SYSCALL, .sys = &sys };
	struct vreq_stats st = { 0 };
	struct link_vreq v;
	struct it_block_rec b = blk(IT_L_NVME, 200, 150, 0);

	memset(&sys, 0, sizeof(sys));
	sys.sys = 3;
	sys.enter_ns = 50;
	sys.exit_ns = 9500;
	/* all 20 bytes of the serial travel, with no NUL (docs/link.md) */
	vreq_fill(&v, &r, &b, "ABCDEFGHIJKLMNOPQRSTUVWXYZ", 0, &st);
	ASSERT_TRUE(!memcmp(v.serial, "ABCDEFGHIJKLMNOPQRST", LINK_SERIAL_LEN), "20 bytes");
	ASSERT_TRUE(v.flags & LINK_VF_HAS_SYS, "syscall flag");
	ASSERT_EQ(v.sys, 3u, "syscall");
	ASSERT_EQ(v.sys_enter_ns, 50ull, "enter");
	ASSERT_EQ(v.sys_exit_ns, 9500ull, "exit");
	vreq_fill(&v, &r, &b, "short", 0, &st);
	ASSERT_STREQ(v.serial, "short", "NUL padded");
	ASSERT_EQ(st.no_serial, 0ull, "serials given");
	vreq_fill(&v, &r, &b, NULL, 0, &st);
	ASSERT_EQ(v.serial[0], 0, "none");
	ASSERT_EQ(st.no_serial, 1ull, "no serial counted");
	ASSERT_EQ(vreq_fill(&v, &r, &b, NULL, 0, NULL), 1, "stats optional");
}

int main(void)
{
	RUN_TEST(test_vreq_own_kick);
	RUN_TEST(test_vreq_layers);
	RUN_TEST(test_vreq_kick_flags);
	RUN_TEST(test_vreq_serial_sys);
	return unit_result();
}
