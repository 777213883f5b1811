/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vjoin_harness.h: synthetic guest requests, QEMU events and host IOs with
 * known times and buffers, for the vjoin unit tests (test_vjoin.c: the
 * uprobe path; test_vjaddr.c: the address path). Include after unit.h.
 */
#ifndef IT_VJOIN_HARNESS_H
#define IT_VJOIN_HARNESS_H

#include <string.h>

#include "iotracer.h"
#include "mode/vjoin.h"

/* not every test file uses every helper */
#pragma GCC diagnostic ignored "-Wunused-function"

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

#define HVA 0x7f0000100000ull /* the guest buffer in QEMU's memory */

/* QEMU's submit of greq(sector, guest t) at host time t + OFF + 20 us, buffer hva. */
static void qsub(struct vjoin *j, uint8_t op, uint64_t sector, uint64_t bytes, uint64_t t,
		 uint64_t hva)
{
	struct vj_qemu_ev e = { .ev = op == IT_OP_READ ? IT_QEV_AIO_READ : IT_QEV_AIO_WRITE,
				.pid = 100,
				.ts_ns = t + OFF + 20 * US,
				.offset = sector * 512,
				.hva = hva,
				.bytes = bytes,
				.niov = 1 };

	vjoin_add_qemu(j, &e);
}

static void qnotify(struct vjoin *j, uint64_t ts)
{
	struct vj_qemu_ev e = { .ev = IT_QEV_NOTIFY, .pid = 100, .ts_ns = ts };

	vjoin_add_qemu(j, &e);
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
	h.buf = HVA;
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

#endif /* IT_VJOIN_HARNESS_H */
