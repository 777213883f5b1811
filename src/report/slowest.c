// SPDX-License-Identifier: GPL-2.0
/*
 * slowest: the N slowest requests of a report (its -n/--top table), with where their
 * time went.
 */
#include <stdlib.h>
#include <string.h>

#include "records/output.h"
#include "records/recfmt.h"
#include "lib/abi.h"
#include "lib/parse.h"
#include "report/internal.h"

struct slow_ent {
	uint64_t lat, start_ns;
	int64_t real_off_ns;
	struct rf_req q;
};

struct rp_slowest {
	int n, cap;
	struct slow_ent *e;
};

struct rp_slowest *slowest_new(int n)
{
	struct rp_slowest *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->cap = n;
	t->e = n ? calloc((size_t)n, sizeof(*t->e)) : NULL;
	if (n && !t->e) {
		free(t);
		return NULL;
	}
	return t;
}

void slowest_free(struct rp_slowest *t)
{
	if (!t)
		return;
	free(t->e);
	free(t);
}

void slowest_add(struct rp_slowest *t, const struct rp_req *q)
{
	uint64_t lat = q->end_ns > q->start_ns ? q->end_ns - q->start_ns : 0;
	int slot = t->n;

	if (!t->cap)
		return;
	if (t->n == t->cap) {
		slot = 0;
		for (int i = 1; i < t->n; i++)
			if (t->e[i].lat < t->e[slot].lat)
				slot = i;
		if (t->e[slot].lat >= lat)
			return;
	} else {
		t->n++;
	}
	t->e[slot].lat = lat;
	t->e[slot].start_ns = q->start_ns;
	t->e[slot].real_off_ns = q->real_off_ns;
	rf_req_copy(&t->e[slot].q, q->r);
}

static int by_lat_desc(const void *a, const void *b)
{
	const struct slow_ent *x = a, *y = b;

	return x->lat < y->lat ? 1 : x->lat > y->lat ? -1 : 0;
}

/* " name=DUR" into the line when ns is known. */
static void stage(FILE *f, const char *name, uint64_t from, uint64_t to)
{
	char b[16];

	if (from && to >= from)
		fprintf(f, " %s=%s", name, parse_fmt_duration(to - from, b, sizeof(b)));
}

/* Where the time of one request went: fs, block (per request), driver, sched. */
static void slowest_stages(FILE *f, const struct rf_req *q)
{
	uint64_t first_q = 0, last_c = 0;
	char b[16];

	for (int i = 0; i < q->nr_blocks; i++) {
		const struct it_block_rec *k = &q->blocks[i];

		if (!first_q || k->q_ns < first_q)
			first_q = k->q_ns;
		if (k->c_ns > last_c)
			last_c = k->c_ns;
	}
	fputs("    stages:", f);
	if (q->kind == CORR_SYSCALL && first_q) {
		stage(f, "pre_block", q->sys.enter_ns, first_q);
		stage(f, "block", first_q, last_c);
		stage(f, "post_block", last_c, q->sys.exit_ns);
	}
	for (int i = 0; i < q->nr_blocks && i < 4; i++) {
		const struct it_block_rec *k = &q->blocks[i];

		fprintf(f, " [bio%d", i);
		if (k->d_ns) {
			stage(f, "q2d", k->q_ns, k->d_ns);
			stage(f, "d2c", k->d_ns, k->c_ns);
		} else {
			stage(f, "q2c", k->q_ns, k->c_ns);
		}
		if (k->drv_layer)
			stage(f, abi_layer_name(k->drv_layer), k->drv_submit_ns, k->drv_done_ns);
		fputc(']', f);
	}
	if (q->nr_blocks > 4)
		fprintf(f, " (+%d bios)", q->nr_blocks - 4);
	if (q->kind == CORR_SYSCALL && (q->sys.flags & IT_F_SCHED_CNT))
		fprintf(f, " runq=%s", parse_fmt_duration(q->sys.runq_ns, b, sizeof(b)));
	if (q->kind == CORR_SYSCALL && (q->sys.flags & IT_F_SCHED_SW))
		fprintf(f, " offcpu=%s", parse_fmt_duration(q->sys.offcpu_ns, b, sizeof(b)));
	fputc('\n', f);
}

void slowest_print(struct rp_slowest *t, FILE *f, const char *(*name)(void *ctx, uint32_t dev),
		   void *ctx)
{
	char lat[16], when[48], dn[24], bytes[24], offs[24];

	if (!t->n)
		return;
	qsort(t->e, (size_t)t->n, sizeof(*t->e), by_lat_desc);
	fprintf(f, "\n=== %d slowest requests ===\n", t->n);
	fprintf(f, "%9s %-27s %-15s %-7s %-8s %-14s %-8s %12s %8s %s\n", "LAT", "TIME(UTC)", "COMM",
		"TID", "KIND", "CALL", "DEV", "OFFSET", "BYTES", "ID");
	for (int i = 0; i < t->n; i++) {
		const struct slow_ent *e = &t->e[i];
		struct corr_req r;
		const struct it_task *task;
		const char *call, *dname;
		uint32_t dev;
		uint64_t off, len;

		rf_req_view(&e->q, &r);
		switch (r.kind) {
		case CORR_SYSCALL:
			task = &r.sys->task, call = abi_name(&abi_syscalls, r.sys->sys),
			dev = r.sys->dev;
			off = r.sys->offset, len = r.sys->bytes;
			break;
		case CORR_URING:
			task = &r.uring->task, call = "io_uring", dev = r.uring->dev;
			off = r.nr_blocks ? corr_blk_offset(r.blocks[0]) : 0,
			len = r.nr_blocks ? r.blocks[0]->bytes : 0;
			break;
		case CORR_AIO:
			task = &r.aio.task, call = "io_submit", dev = r.aio.iocb.dev;
			off = r.aio.iocb.offset, len = r.aio.iocb.nbytes;
			break;
		default:
			task = &r.blocks[0]->task, call = abi_op_name(r.blocks[0]->op);
			dev = r.blocks[0]->dev, off = corr_blk_offset(r.blocks[0]);
			len = r.blocks[0]->bytes;
			break;
		}
		dname = dev ? name(ctx, dev) : "-";
		if (!dname)
			dname = parse_fmt_devno(dev, dn, sizeof(dn));
		fprintf(f, "%9s %-27s %-15.15s %-7u %-8s %-14s %-8.8s %12s %8s %llu\n",
			parse_fmt_duration(e->lat, lat, sizeof(lat)),
			rp_fmt_real(e->start_ns + (uint64_t)e->real_off_ns, when, sizeof(when)),
			task->comm, task->tid,
			r.kind == CORR_SYSCALL ? "syscall" :
			r.kind == CORR_URING   ? "io_uring" :
			r.kind == CORR_AIO     ? "aio" :
						 "block",
			call, dname, out_fmt_offset(off, offs, sizeof(offs)),
			rp_fmt_bytes(len, bytes, sizeof(bytes)), (unsigned long long)r.id);
		slowest_stages(f, &e->q);
	}
}
