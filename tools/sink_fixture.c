// SPDX-License-Identifier: GPL-2.0
/*
 * sink_fixture: the same synthetic requests into a recording and through the
 * sink to a server, for tests/integration/test_fleet.sh's `stacks` check: what
 * this machine cannot make (no device mapper or md here, docs/hooks.md) comes
 * from records of the shapes bpf/stack.bpf.h writes: syscalls on dm-0 with
 * their upper bio and its members on two disks, a partition's requests, members
 * whose upper bio was not followed, page-cache writes with their dirtier, and
 * block requests with a driver's stamps. `iotracer report` over the recording
 * and `report --from` over the table must then print the same.
 *
 *   sink_fixture URL DIR N [PASSWORD-FILE]
 *
 * Host "fixture"; device names are MAJ:MIN (no sysfs read). Exit 0 once the
 * server took every row and the recording is closed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "records/recfmt.h"
#include "records/record.h"
#include "sink/sink.h"

#define DM IT_MKDEV(253, 0)
#define DISK_A IT_MKDEV(7, 40)
#define DISK_B IT_MKDEV(7, 41)
#define PART IT_MKDEV(259, 7) /* a partition of DISK_B */
#define NO_SYSFS "/nonexistent"

static uint64_t g_rng = 0x6a09e667f3bcc908ull;

static uint64_t rnd(uint64_t n)
{
	g_rng ^= g_rng << 13;
	g_rng ^= g_rng >> 7;
	g_rng ^= g_rng << 17;
	return g_rng % n;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A block request on dev queued at q, of bytes; its stages random, issued unless asked. */
static void block(struct it_block_rec *b, uint32_t dev, uint64_t q, uint32_t bytes, int op,
		  const struct it_task *t)
{
	memset(b, 0, sizeof(*b));
	b->hdr.type = IT_REC_BLOCK;
	b->hdr.size = sizeof(*b);
	b->task = *t;
	b->dev = dev;
	b->op = (uint8_t)op;
	b->bytes = bytes;
	b->sector = rnd(1u << 20) * 8;
	b->q_ns = q;
	b->g_ns = q + 100 + rnd(400);
	b->d_ns = b->g_ns + 200 + rnd(2000);
	b->c_ns = b->d_ns + 20000 + rnd(400000);
	b->flags = IT_F_HAS_Q | IT_F_HAS_G;
	b->origin = IT_ORIG_SYSCALL;
}

/* dm-0's upper bio at blocks[0], its members on the two disks (a raid1 write: both). */
static void stacked(struct rf_req *q, uint64_t t, int op)
{
	struct it_block_rec *up = &q->blocks[0];
	int n = 1 + (int)rnd(3);

	block(up, DM, t + 500, 4096u * (uint32_t)n, op, &q->sys.task);
	up->flags = IT_F_HAS_Q | IT_F_UPPER;
	up->d_ns = 0;
	up->g_ns = 0;
	up->stk_pieces = (uint32_t)n;
	up->stk_r_ns = up->q_ns + 300 + rnd(500);
	for (int k = 0; k < n; k++) {
		struct it_block_rec *m = &q->blocks[1 + k];

		block(m, k % 2 ? DISK_B : DISK_A, up->stk_r_ns + 100, 4096, op, &q->sys.task);
		m->up_dev = DM;
		m->up_off = (uint16_t)(k * 8);
		if (up->c_ns < m->c_ns + 1000)
			up->c_ns = m->c_ns + 1000 + rnd(5000);
		if (up->stk_m_ns < m->c_ns)
			up->stk_m_ns = m->c_ns;
	}
	if (rnd(5) == 0)
		up->stk_m_ns = 0; /* no member seen completing */
	q->nr_blocks = 1 + n;
}

/* Request i: a syscall on dm-0, a partition's, a lost member's, a write-back, a driver's. */
static void make_req(struct rf_req *q, uint64_t i, uint64_t t)
{
	struct it_syscall_rec *s = &q->sys;
	int kind = (int)(i % 5), op = rnd(3) ? IT_OP_READ : IT_OP_WRITE;

	memset(q, 0, sizeof(*q));
	q->id = i + 1;
	q->kind = kind == 3 ? CORR_BLOCK : CORR_SYSCALL;
	s->hdr.type = IT_REC_SYSCALL;
	s->hdr.size = sizeof(*s);
	s->task = (struct it_task){ .pid = 700, .tid = 700 + (uint32_t)(i % 3), .comm = "fixture" };
	s->enter_ns = t;
	s->sys = op == IT_OP_READ ? IT_SYS_PREAD64 : IT_SYS_PWRITE64;
	s->op = (uint8_t)op;
	s->flags = IT_F_DIO;
	s->bytes = 4096;
	s->ret = 4096;
	s->dev = kind == 1 ? PART : DM;
	s->ino = kind == 1 ? 0 : 12 + i % 4;
	if (kind == 0 || kind == 4) {
		stacked(q, t, op);
	} else if (kind == 1) { /* a partition's request, on its disk */
		block(&q->blocks[0], DISK_B, t + 700, 4096, op, &s->task);
		q->blocks[0].up_dev = PART;
		q->blocks[0].up_off = IT_STK_PART;
		q->nr_blocks = 1;
	} else if (kind == 2) { /* remapped from dm-0, its upper bio not followed */
		block(&q->blocks[0], DISK_A, t + 900, 8192, op, &s->task);
		q->blocks[0].up_dev = DM;
		q->blocks[0].up_off = 16;
		q->blocks[0].flags |= IT_F_STK_LOST;
		q->nr_blocks = 1;
	} else { /* kind 3: a page-cache write of a flusher, its dirtier; a driver's stamps */
		struct it_block_rec *b = &q->blocks[0];

		block(b, DISK_A, t, 16384, IT_OP_WRITE, &s->task);
		b->origin = IT_ORIG_WRITEBACK;
		b->task = (struct it_task){ .pid = 0, .tid = 55, .comm = "kworker/u8:1" };
		b->flags |= IT_F_WB;
		b->wb.dirtier = s->task;
		b->wb.bytes = 16384;
		b->wb.dirty_first_ns = t - 3000000 - rnd(1000000);
		b->wb.dirty_last_ns = t - 1000;
		b->wb.file_dev = DM;
		b->drv_layer = IT_L_VIRTIO;
		b->drv_submit_ns = b->d_ns + 50;
		b->drv_kick_ns = b->d_ns + 80;
		b->drv_done_ns = b->c_ns - 100;
		q->nr_blocks = 1;
	}
	s->first_q_ns = q->blocks[0].q_ns;
	s->nr_bios = (uint32_t)q->nr_blocks;
	s->exit_ns = q->blocks[0].c_ns + 2000 + rnd(3000);
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 3 ? strtoull(argv[3], NULL, 10) : 0, start = mono_ns();
	uint64_t t = start - 600ull * 1000000000ull, lost;
	struct rec_opts ro = { .dir = argc > 2 ? argv[2] : NULL,
			       .seg_size = 64ull << 20,
			       .seg_age_ns = 3600ull * 1000000000ull,
			       .max_bytes = 1ull << 30,
			       .sysfs_root = NO_SYSFS,
			       .level = 1,
			       .who = "sink_fixture" };
	struct sink_opts so = { .url = argc > 1 ? argv[1] : NULL,
				.auth = argc > 4 ? argv[4] : NULL,
				.queue_max = 1ull << 30,
				.host = "fixture",
				.sysfs_root = NO_SYSFS,
				.start_ns = start,
				.who = "sink_fixture" };
	struct recorder *rc;
	struct sink *s;
	struct rf_req q;

	if (argc < 4 || !n) {
		fprintf(stderr, "usage: %s URL DIR N [PASSWORD-FILE]\n", argv[0]);
		return 2;
	}
	rc = rec_open(&ro, start);
	s = rc ? sink_open(&so, NULL, NULL) : NULL;
	if (!s)
		return 1;
	for (uint64_t i = 0; i < n; i++) {
		struct corr_req r;

		t += 20000 + rnd(200000);
		make_req(&q, i, t);
		rf_req_view(&q, &r);
		rec_request(rc, &r);
		sink_request(s, &r);
	}
	rec_close(rc);
	lost = sink_finish(s);
	sink_summary(s, stdout);
	sink_free(s);
	return lost ? 1 : 0;
}
