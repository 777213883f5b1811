// SPDX-License-Identifier: GPL-2.0
/*
 * seed_record DIR: seeds for fuzz_record, written by the real recorder (so
 * they follow the format as it is built): a few syscall requests with a block
 * child each, stored (level 0) and deflated (level 1), one segment each.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "records/record.h"
#include "records/recfmt.h"

static void make(struct rf_req *q, int i)
{
	uint64_t t = 5000000000ull + (uint64_t)i * 70000;

	memset(q, 0, sizeof(*q));
	q->id = (uint64_t)i + 1;
	q->kind = CORR_SYSCALL;
	q->sys.hdr.type = IT_REC_SYSCALL;
	q->sys.hdr.size = sizeof(q->sys);
	q->sys.task.pid = q->sys.task.tid = 4242;
	memcpy(q->sys.task.comm, "fio", 4);
	q->sys.seq = (uint64_t)i;
	q->sys.enter_ns = t;
	q->sys.exit_ns = t + 60000;
	q->sys.first_q_ns = t + 1000;
	q->sys.offset = (uint64_t)i * 4096;
	q->sys.bytes = 4096;
	q->sys.ret = 4096;
	q->sys.dev = IT_MKDEV(7, 0);
	q->sys.sys = IT_SYS_PREAD64;
	q->nr_blocks = 1;
	q->blocks[0].hdr.type = IT_REC_BLOCK;
	q->blocks[0].hdr.size = sizeof(q->blocks[0]);
	q->blocks[0].dev = IT_MKDEV(7, 0);
	q->blocks[0].sector = (uint64_t)i * 8;
	q->blocks[0].bytes = 4096;
	q->blocks[0].q_ns = t + 1000;
	q->blocks[0].d_ns = t + 2000;
	q->blocks[0].c_ns = t + 50000;
}

int main(int argc, char **argv)
{
	char tmp[] = "/tmp/seed_record.XXXXXX", cmd[512];

	if (argc != 2 || !mkdtemp(tmp))
		return 2;
	for (int level = 0; level <= 1; level++) {
		struct rec_opts o = { .dir = tmp,
				      .seg_size = 64ull << 20,
				      .seg_age_ns = 3600e9,
				      .max_bytes = 1ull << 30,
				      .sysfs_root = "/nonexistent",
				      .level = level };
		struct recorder *rc = rec_open(&o, 1000000000ull);
		struct corr_req r;
		struct rf_req q;

		if (!rc)
			return 1;
		for (int i = 0; i < 40; i++) {
			make(&q, i);
			rf_req_view(&q, &r);
			rec_request(rc, &r);
			if (i % 10 == 9)
				rec_tick(rc, 1000000000ull + (uint64_t)(i + 1) * RF_FLUSH_NS);
		}
		rec_close(rc);
		snprintf(cmd, sizeof(cmd),
			 "for f in %s/*; do mv \"$f\" %s/level%d-$(basename \"$f\"); done", tmp,
			 argv[1], level);
		if (system(cmd))
			return 1;
	}
	rmdir(tmp);
	return 0;
}
