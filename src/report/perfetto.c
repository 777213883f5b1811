// SPDX-License-Identifier: GPL-2.0
/*
 * perfetto: a report as a Chrome trace-event JSON file, the format that
 * ui.perfetto.dev and chrome://tracing open (docs/record.md, "Perfetto").
 *
 * - One process per traced pid, a track (tid) per thread: a request is a
 *   complete event (ph "X") on its thread, with child slices pre_block,
 *   block and post_block for a syscall whose block requests it waited for.
 * - A pseudo-process "block devices" with a track per device: a block
 *   request is a slice Q..C with children queue (Q..D) and device (D..C), and
 *   the driver's submit..done inside device. An upper bio of a storage stack (dm,
 *   md) is a slice on its device's track with q2r, below and m2c nested in it, and
 *   the flows to its members start there (thread -> dm-0 -> sda: nested by level).
 * - A flow arrow (ph "s" -> ph "f", bp "e") from each request to its block
 *   requests. A flow event binds to the slice on its pid/tid that encloses its ts (the
 *   format) and that starts at its ts with its cat (Chrome DevTools' engine): so it sits
 *   at its slice's start, and flows and the slices they bind share the cat "io".
 * - A flow "dirtied" from a buffered write syscall to the writeback block request that
 *   carries its pages (issue 26): the write syscalls of the request's dirtier thread on
 *   the same file (dev + inode) that ran while the request's noted pages went dirty
 *   (block[].dirty first_ns..last_ns), where both were recorded; PF_MAX_DIRTY_FLOWS at
 *   most per request, the newest.
 * - A wall-clock anchor: the top-level "metadata" holds startTime (the first slice's
 *   CLOCK_REALTIME, ISO 8601 UTC, as DevTools' saved traces have it) and
 *   realtime_offset_us (realtime = ts + it).
 * - Host mode (from a host's -j file): a pseudo-process "guests (host clock)"
 *   with a track per guest disk serial: each joined guest request ("path"
 *   line) is a slice from the guest syscall to its exit with the stages of
 *   docs/modes.md as children (guest_submit, guest_virtio > kick_to_qemu,
 *   qemu > qemu_to_host, host_syscall > host_block, host_to_notify,
 *   notify_to_irq, guest_complete), and a flow to QEMU's host syscall. Its
 *   timestamps cross the guest/host clock boundary (known to +- the clock
 *   uncertainty), so they are made non-decreasing along the path first.
 * Slices of one track must nest; requests that overlap on a track (io_uring,
 * aio, several block requests in flight) go to extra tracks ("lanes") of the
 * same thread or device, given the first lane free at their start.
 * Timestamps are CLOCK_MONOTONIC in microseconds with ns decimals.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "records/fname.h"
#include "records/output.h"
#include "records/recfmt.h"
#include "records/stack.h"
#include "lib/abi.h"
#include "lib/jsonw.h"
#include "lib/parse.h"
#include "report/internal.h"

#define PF_DEV_PID 4194305u /* above PID_MAX_LIMIT: no traced process has it */
#define PF_VM_PID 4194306u /* host mode: the guests' requests */
#define PF_MAX_SERIALS 64
#define PF_LANE_TID0 4194305u /* synthetic tids of extra lanes start here */
#define PF_MAX_DIRTY_FLOWS 8 /* flows from dirtying writes into one block request */

struct pf_item {
	uint64_t start, end;
	uint64_t t1, t2, t3; /* thread: first_q, last_c; dev: d, drv_submit, drv_done */
	uint64_t id, bytes, offset;
	uint32_t pid, tid; /* thread: the task; dev: 0 and the dev_t */
	uint32_t lane_tid; /* the track it is drawn on */
	int32_t parent; /* dev item: the thread item its flow starts from, or -1 */
	uint16_t call; /* thread: syscall number, or 0xffff io_uring, 0xfffe aio */
	int32_t path; /* PF_PATH: index in pf.paths */
	uint32_t tid2; /* PF_PATH: QEMU's thread that did the host IO */
	uint8_t is_dev, op, drv_layer; /* is_dev: PF_THREAD, PF_DEV or PF_PATH */
	uint8_t upper; /* dev: an upper bio of a storage stack (t2: its first remap, t3: last member) */
	char comm[IT_COMM_LEN];
	/* the file: a write syscall's; a page-cache block write's (dev: of its file system) */
	uint64_t ino;
	uint32_t fdev;
	uint32_t dirty_tid; /* dev: the dirtier's thread (0: none known) */
	uint64_t d_first, d_last; /* dev: its noted pages' dirtying, oldest and newest */
	struct fn_key file; /* the file it names (its slice name carries it) */
	int has_file;
};

enum { PF_THREAD = 0, PF_DEV = 1, PF_PATH = 2 };

struct pf {
	struct pf_item *it;
	size_t nr, cap;
	struct rp_path *paths;
	size_t nr_paths, cap_paths;
	char serials[PF_MAX_SERIALS][24]; /* track names of PF_PATH items (tid = index) */
	int nr_serials;
	int64_t real_off_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC of the first request, or 0 */
	int err;
	const struct fn_cache *names; /* the files' names (not owned); NULL: none */
	struct jw jw; /* a slice's name, escaped */
};

#define PF_CALL_URING 0xffff
#define PF_CALL_AIO 0xfffe

struct pf *pf_new(void)
{
	struct pf *p = calloc(1, sizeof(struct pf));

	if (p)
		jw_init(&p->jw);
	return p;
}

void pf_set_names(struct pf *p, const struct fn_cache *names)
{
	p->names = names;
}

void pf_free(struct pf *p)
{
	if (!p)
		return;
	jw_free(&p->jw);
	free(p->it);
	free(p->paths);
	free(p);
}

static struct pf_item *pf_item_new(struct pf *p)
{
	if (p->nr == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 4096;
		struct pf_item *n = realloc(p->it, cap * sizeof(*n));

		if (!n) {
			p->err = -ENOMEM;
			return NULL;
		}
		p->it = n;
		p->cap = cap;
	}
	memset(&p->it[p->nr], 0, sizeof(p->it[0]));
	return &p->it[p->nr++];
}

static void add_block(struct pf *p, const struct it_block_rec *b, int32_t parent,
		      const struct fn_key *rk)
{
	struct pf_item *i = pf_item_new(p);

	if (!i)
		return;
	i->has_file = fn_blk_key(b, rk, &i->file);
	i->is_dev = PF_DEV;
	i->pid = PF_DEV_PID;
	i->start = b->q_ns;
	i->end = b->c_ns > b->q_ns ? b->c_ns : b->q_ns;
	i->t1 = b->d_ns;
	i->t2 = b->drv_submit_ns; /* an upper bio: stk_r_ns (the same field) */
	i->t3 = b->drv_done_ns; /* an upper bio: stk_m_ns */
	i->drv_layer = b->drv_layer;
	i->upper = stk_is_upper(b);
	i->tid = b->dev;
	i->op = b->op;
	i->bytes = b->bytes;
	i->offset = corr_blk_offset(b);
	i->parent = parent;
	memcpy(i->comm, b->task.comm, sizeof(i->comm));
	if ((b->flags & IT_F_WB) && b->wb.dirtier.tid && b->wb.dirty_first_ns) {
		i->dirty_tid = b->wb.dirtier.tid;
		i->d_first = b->wb.dirty_first_ns;
		i->d_last = b->wb.dirty_last_ns > i->d_first ? b->wb.dirty_last_ns : i->d_first;
		i->ino = b->ino;
		i->fdev = b->wb.file_dev;
	}
}

/*
 * The request's block requests; in a storage stack a member's flow comes from its upper
 * bio's slice (thread -> dm-1 -> dm-0 -> sda), the top one's from the request.
 */
static void stk_parents(struct pf *p, const struct corr_req *r, int32_t parent,
			const struct fn_key *rk)
{
	size_t base = p->nr;
	struct stk_info si;

	for (int k = 0; k < r->nr_blocks; k++) {
		stk_describe(r, k, &si);
		add_block(p, r->blocks[k], si.upper >= 0 ? (int32_t)(base + si.upper) : parent, rk);
	}
	if (p->nr != base + (size_t)r->nr_blocks) /* an allocation failed: no stack flows */
		for (size_t k = base; k < p->nr; k++)
			p->it[k].parent = parent;
}

void pf_add(struct pf *p, const struct rp_req *q)
{
	const struct corr_req *r = q->r;
	const struct it_task *task = NULL;
	struct pf_item *i;
	int32_t parent = -1;
	struct fn_key rk;
	int has_rk = fn_req_key(r, &rk);

	if (r->kind == CORR_SYSCALL)
		task = &r->sys->task;
	else if (r->kind == CORR_URING)
		task = &r->uring->task;
	else if (r->kind == CORR_AIO)
		task = &r->aio.task;
	if (!p->real_off_ns)
		p->real_off_ns = q->real_off_ns;
	if (task && (i = pf_item_new(p))) {
		parent = (int32_t)(p->nr - 1);
		i->start = q->start_ns;
		i->end = q->end_ns > q->start_ns ? q->end_ns : q->start_ns;
		i->id = r->id;
		i->file = rk;
		i->has_file = has_rk;
		i->pid = task->pid;
		i->tid = task->tid;
		memcpy(i->comm, task->comm, sizeof(i->comm));
		i->call = r->kind == CORR_SYSCALL ? r->sys->sys :
			  r->kind == CORR_URING	  ? PF_CALL_URING :
						    PF_CALL_AIO;
		i->op = r->kind == CORR_SYSCALL ? r->sys->op :
			r->kind == CORR_URING	? r->uring->op :
						  0;
		if (r->kind == CORR_SYSCALL) {
			i->ino = r->sys->ino;
			i->fdev = r->sys->dev;
		}
		i->bytes = r->kind == CORR_SYSCALL ? r->sys->bytes :
			   r->kind == CORR_AIO	   ? r->aio.iocb.nbytes :
						     0;
		for (int k = 0; k < r->nr_blocks; k++) {
			if (!i->t1 || r->blocks[k]->q_ns < i->t1)
				i->t1 = r->blocks[k]->q_ns;
			if (r->blocks[k]->c_ns > i->t2)
				i->t2 = r->blocks[k]->c_ns;
		}
	}
	stk_parents(p, r, parent, has_rk ? &rk : NULL);
}

/* The track of a guest disk serial (the last one when there are too many). */
static uint32_t serial_track(struct pf *p, const char *serial)
{
	int k;

	for (k = 0; k < p->nr_serials; k++)
		if (!strcmp(p->serials[k], serial))
			return (uint32_t)k;
	if (k == PF_MAX_SERIALS)
		return PF_MAX_SERIALS - 1;
	snprintf(p->serials[k], sizeof(p->serials[k]), "%s", serial);
	return (uint32_t)p->nr_serials++;
}

void pf_add_path(struct pf *p, const struct rp_path *g)
{
	struct rp_path *m;
	struct pf_item *i;
	uint64_t last = 0, first = 0;

	if (p->nr_paths == p->cap_paths) {
		size_t cap = p->cap_paths ? p->cap_paths * 2 : 1024;
		struct rp_path *n = realloc(p->paths, cap * sizeof(*n));

		if (!n) {
			p->err = -ENOMEM;
			return;
		}
		p->paths = n;
		p->cap_paths = cap;
	}
	m = &p->paths[p->nr_paths];
	*m = *g;
	/* non-decreasing along the path: the guest/host boundary is known to +- the clock */
	for (int k = 0; k < VJ_T_MAX; k++) {
		if (!m->t[k])
			continue;
		if (m->t[k] < last)
			m->t[k] = last;
		last = m->t[k];
		if (!first)
			first = m->t[k];
	}
	if (!first || !(i = pf_item_new(p)))
		return;
	i->is_dev = PF_PATH;
	i->pid = PF_VM_PID;
	i->tid = serial_track(p, g->serial);
	i->start = first;
	i->end = last;
	i->op = g->op;
	i->bytes = g->bytes;
	i->offset = g->offset;
	i->path = (int32_t)p->nr_paths++;
	i->parent = -1;
	i->t1 = g->t[VJ_T_H_ENTER]; /* as recorded: QEMU's syscall starts there */
	i->tid2 = g->host_tid;
}

/* ---- lanes ---- */

static const struct pf_item *g_sort_items; /* qsort() has no context argument */

static int by_track_start(const void *a, const void *b)
{
	const struct pf_item *x = &g_sort_items[*(const size_t *)a];
	const struct pf_item *y = &g_sort_items[*(const size_t *)b];

	if (x->is_dev != y->is_dev)
		return x->is_dev - y->is_dev;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end > y->end ? -1 : x->end < y->end; /* the longer first */
}

/* A slice name: "pread64 read 4KiB", "io_uring write 64KiB", "read 4KiB" (a device's). */
static void item_name(const struct pf_item *i, char *buf, size_t n)
{
	char b[24];

	rp_fmt_bytes(i->bytes, b, sizeof(b));
	if (i->is_dev == PF_PATH)
		snprintf(buf, n, "guest %s %s", abi_op_name(i->op), b);
	else if (i->is_dev)
		snprintf(buf, n, "%s %s", abi_op_name(i->op), b);
	else if (i->call == PF_CALL_URING)
		snprintf(buf, n, "io_uring %s", abi_op_name(i->op));
	else if (i->call == PF_CALL_AIO)
		snprintf(buf, n, "aio %s", b);
	else
		snprintf(buf, n, "%s %s", abi_name(&abi_syscalls, i->call), b);
}

/*
 * A request's or block request's slice name as a JSON string (quoted): its call
 * and size, then the file it names where the input named it
 * ("pread64 4KiB /var/lib/db/t.dat"). Valid until the next call.
 */
static const char *name_json(struct pf *p, const struct pf_item *i)
{
	const struct fn_entry *e = i->has_file && p->names ? fn_peek(p->names, &i->file) : NULL;
	char base[64], *full;
	size_t n;

	item_name(i, base, sizeof(base));
	jw_reset(&p->jw);
	if (!e) {
		jw_str(&p->jw, NULL, base);
		return jw_data(&p->jw);
	}
	n = strlen(base) + strlen(e->file) + 2;
	full = malloc(n);
	if (!full) {
		jw_str(&p->jw, NULL, base);
		return jw_data(&p->jw);
	}
	snprintf(full, n, "%s %s", base, e->file);
	jw_str(&p->jw, NULL, full);
	free(full);
	return jw_data(&p->jw);
}

/* Text as a JSON string's content (up to n - 1 bytes): printable ASCII, no quote or backslash. */
static void safe_text(const char *src, char *out, size_t n)
{
	size_t k;

	for (k = 0; k < n - 1 && src[k]; k++)
		out[k] = src[k] >= 0x20 && src[k] < 0x7f && src[k] != '"' && src[k] != '\\' ?
				 src[k] :
				 '?';
	out[k] = '\0';
}

/* ts and dur in microseconds with three decimals (exact ns). */
static void fus(FILE *f, const char *key, uint64_t ns)
{
	fprintf(f, ",\"%s\":%llu.%03llu", key, (unsigned long long)(ns / 1000),
		(unsigned long long)(ns % 1000));
}

static void slice(FILE *f, uint32_t pid, uint32_t tid, const char *name, const char *cat,
		  uint64_t from, uint64_t to)
{
	fprintf(f, ",\n{\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"name\":\"%s\",\"cat\":\"%s\"", pid,
		tid, name, cat);
	fus(f, "ts", from);
	fus(f, "dur", to - from);
	fputc('}', f);
}

static void meta(FILE *f, const char *what, uint32_t pid, uint32_t tid, const char *name)
{
	fprintf(f,
		",\n{\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"name\":\"%s\",\"args\":{\"name\":\"%s\"}}",
		pid, tid, what, name);
}

/* A request and its stages, on its thread's lane. */
static void emit_thread(FILE *f, struct pf *p, const struct pf_item *i)
{
	uint32_t pid = i->pid, tid = i->lane_tid;

	fprintf(f, ",\n{\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"name\":%s,\"cat\":\"io\"", pid, tid,
		name_json(p, i));
	fus(f, "ts", i->start);
	fus(f, "dur", i->end - i->start);
	fprintf(f, ",\"args\":{\"id\":%llu,\"tid\":%u}}", (unsigned long long)i->id, i->tid);
	if (!i->t1 || i->t1 < i->start || i->t2 < i->t1 || i->t2 > i->end)
		return; /* no block requests inside it */
	slice(f, pid, tid, "pre_block", "stage", i->start, i->t1);
	slice(f, pid, tid, "block", "stage", i->t1, i->t2);
	slice(f, pid, tid, "post_block", "stage", i->t2, i->end);
}

/* A block request: Q..C, queue Q..D, device D..C and the driver inside it. */
/* The slice's args: its offset, none for a request with no position (a flush). */
static void fargs_offset(FILE *f, uint64_t offset)
{
	if (offset == CORR_NO_OFFSET)
		fputs(",\"args\":{}}", f);
	else
		fprintf(f, ",\"args\":{\"offset\":%llu}}", (unsigned long long)offset);
}

/*
 * An upper bio's stages, nested in its slice: q2r (queued .. first remap), below (..
 * its last member's completion: the members' own slices are on their devices' tracks,
 * with flows from this one), m2c (.. its completion).
 */
static void emit_upper(FILE *f, const struct pf_item *i, uint32_t tid)
{
	uint64_t r = i->t2 >= i->start && i->t2 <= i->end ? i->t2 : 0;
	uint64_t m = i->t3 >= (r ? r : i->start) && i->t3 <= i->end ? i->t3 : 0;

	if (r)
		slice(f, PF_DEV_PID, tid, "q2r", "stage", i->start, r);
	if (r && m)
		slice(f, PF_DEV_PID, tid, "below", "stage", r, m);
	if (m)
		slice(f, PF_DEV_PID, tid, "m2c", "stage", m, i->end);
}

static void emit_dev(FILE *f, struct pf *p, const struct pf_item *i)
{
	uint32_t tid = i->lane_tid;

	fprintf(f, ",\n{\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"name\":%s,\"cat\":\"io\"", PF_DEV_PID,
		tid, name_json(p, i));
	fus(f, "ts", i->start);
	fus(f, "dur", i->end - i->start);
	fargs_offset(f, i->offset);
	if (i->upper) {
		emit_upper(f, i, tid);
		return;
	}
	if (!i->t1 || i->t1 < i->start || i->t1 > i->end)
		return;
	slice(f, PF_DEV_PID, tid, "queue", "stage", i->start, i->t1);
	slice(f, PF_DEV_PID, tid, "device", "stage", i->t1, i->end);
	if (i->drv_layer && i->t2 >= i->t1 && i->t3 >= i->t2 && i->t3 <= i->end)
		slice(f, PF_DEV_PID, tid, abi_layer_name(i->drv_layer), "driver", i->t2, i->t3);
}

/*
 * One flow arrow: its start ("s") at the start of a slice on (spid, stid), its end
 * ("f", bp "e") at the start of a slice on (fpid, ftid), both slices of cat "io". Each
 * at a slice's own start, with that slice's cat: the slice it binds to for the format
 * (the enclosing one) and for DevTools' engine (the slice of the same ts, pid, tid and
 * cat; before issue 23 the cat "flow" bound none there).
 */
static void flow_pair(FILE *f, const char *name, size_t id, uint32_t spid, uint32_t stid,
		      uint64_t sts, uint32_t fpid, uint32_t ftid, uint64_t fts)
{
	fprintf(f,
		",\n{\"ph\":\"s\",\"id\":%zu,\"pid\":%u,\"tid\":%u,\"name\":\"%s\",\"cat\":\"io\"",
		id, spid, stid, name);
	fus(f, "ts", sts);
	fprintf(f,
		"},\n{\"ph\":\"f\",\"bp\":\"e\",\"id\":%zu,\"pid\":%u,\"tid\":%u,\"name\":\"%s\","
		"\"cat\":\"io\"",
		id, fpid, ftid, name);
	fus(f, "ts", fts);
	fputc('}', f);
}

/*
 * Flow from a request (its slice, on its lane) to one of its block requests. It starts
 * at the request's start: a block request's own start is inside the request but at no
 * slice's start when it is not the first one (before issue 23 those bound to nothing).
 */
static void emit_flow(FILE *f, const struct pf_item *from, const struct pf_item *to, size_t id)
{
	flow_pair(f, "bio", id, from->pid, from->lane_tid, from->start, PF_DEV_PID, to->lane_tid,
		  to->start);
}

/* A joined guest request and its stages (docs/modes.md), nested: m is non-decreasing. */
static void emit_path(FILE *f, const struct pf *p, const struct pf_item *i)
{
	static const struct {
		int from, to;
		const char *name;
	} st[] = {
		{ VJ_T_G_SYS_ENTER, VJ_T_G_KICK, "guest_submit" },
		{ VJ_T_G_KICK, VJ_T_G_IRQ, "guest_virtio" },
		{ VJ_T_G_KICK, VJ_T_Q_SUBMIT, "kick_to_qemu" },
		{ VJ_T_Q_SUBMIT, VJ_T_Q_NOTIFY, "qemu" },
		{ VJ_T_Q_SUBMIT, VJ_T_H_ENTER, "qemu_to_host" },
		{ VJ_T_H_ENTER, VJ_T_H_EXIT, "host_syscall" },
		{ VJ_T_H_BLK_Q, VJ_T_H_BLK_C, "host_block" },
		{ VJ_T_H_EXIT, VJ_T_Q_NOTIFY, "host_to_notify" },
		{ VJ_T_Q_NOTIFY, VJ_T_G_IRQ, "notify_to_irq" },
		{ VJ_T_G_IRQ, VJ_T_G_SYS_EXIT, "guest_complete" },
	};
	const uint64_t *m = p->paths[i->path].t;
	char name[64];

	item_name(i, name, sizeof(name));
	fprintf(f, ",\n{\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"name\":\"%s\",\"cat\":\"io\"", i->pid,
		i->lane_tid, name);
	fus(f, "ts", i->start);
	fus(f, "dur", i->end - i->start);
	fargs_offset(f, i->offset);
	for (size_t k = 0; k < sizeof(st) / sizeof(st[0]); k++)
		if (m[st[k].from] && m[st[k].to])
			slice(f, i->pid, i->lane_tid, st[k].name, "stage", m[st[k].from],
			      m[st[k].to]);
}

static const struct pf_item *g_find_items; /* bsearch()/qsort() have no context argument */

/* Thread items by (tid, start). */
static int by_tid_start(const void *a, const void *b)
{
	const struct pf_item *x = &g_find_items[*(const size_t *)a];
	const struct pf_item *y = &g_find_items[*(const size_t *)b];

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* The first of the n thread items ix[] (by tid, start) not before (tid, start). */
static size_t tid_lower(const struct pf *p, const size_t *ix, size_t n, uint32_t tid,
			uint64_t start)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct pf_item *x = &p->it[ix[mid]];

		if (x->tid < tid || (x->tid == tid && x->start < start))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * A flow from each joined guest request (from its slice's start: the slice of cat "io" a
 * flow event binds to) to QEMU's host syscall, when that was traced.
 */
static void emit_path_flows(FILE *f, const struct pf *p, const size_t *ix, size_t n,
			    size_t first_id)
{
	for (size_t k = 0; k < p->nr; k++) {
		const struct pf_item *g = &p->it[k], *h;
		size_t lo;

		if (g->is_dev != PF_PATH || !g->t1)
			continue;
		lo = tid_lower(p, ix, n, g->tid2, g->t1);
		if (lo == n)
			continue;
		h = &p->it[ix[lo]];
		if (h->tid != g->tid2 || h->start != g->t1)
			continue;
		flow_pair(f, "host_io", first_id + k, g->pid, g->lane_tid, g->start, h->pid,
			  h->lane_tid, h->start);
	}
}

/*
 * Flows "dirtied" into each page-cache block write from the write syscalls that dirtied
 * its pages: those of its dirtier thread on its file running in d_first..d_last (a
 * thread's syscalls do not overlap: walked back from the last one starting by d_last
 * until one ended before d_first). Ids from *id on.
 */
static void emit_dirty_flows(FILE *f, const struct pf *p, const size_t *ix, size_t n, size_t *id)
{
	for (size_t k = 0; k < p->nr; k++) {
		const struct pf_item *b = &p->it[k];
		size_t j;
		int nf = 0;

		if (b->is_dev != PF_DEV || !b->dirty_tid)
			continue;
		j = tid_lower(p, ix, n, b->dirty_tid, b->d_last + 1);
		while (j-- > 0 && nf < PF_MAX_DIRTY_FLOWS) {
			const struct pf_item *w = &p->it[ix[j]];

			if (w->tid != b->dirty_tid || w->end < b->d_first)
				break;
			if (w->call >= IT_SYS_MAX || w->op != IT_OP_WRITE || w->ino != b->ino ||
			    w->fdev != b->fdev)
				continue;
			flow_pair(f, "dirtied", (*id)++, w->pid, w->lane_tid, w->start, PF_DEV_PID,
				  b->lane_tid, b->start);
			nf++;
		}
	}
}

/* Flows between items of different tracks found by thread: host IO and dirtying writes. */
static void emit_thread_flows(FILE *f, const struct pf *p)
{
	size_t n = 0, id = 2 * p->nr + 1, *ix = malloc((p->nr ? p->nr : 1) * sizeof(*ix));

	if (!ix)
		return;
	for (size_t k = 0; k < p->nr; k++)
		if (p->it[k].is_dev == PF_THREAD)
			ix[n++] = k;
	g_find_items = p->it;
	qsort(ix, n, sizeof(*ix), by_tid_start);
	emit_path_flows(f, p, ix, n, p->nr + 1);
	emit_dirty_flows(f, p, ix, n, &id);
	free(ix);
}

/* Track names: a process per pid, a thread per (tid, lane), a device per (dev, lane). */
static void emit_names(FILE *f, const struct pf *p, const struct pf_item *i, int new_pid, int lane,
		       const char *(*name)(void *ctx, uint32_t dev), void *ctx)
{
	char comm[IT_COMM_LEN], n[96], dn[32], devno[24];
	const char *d;

	safe_text(i->comm, comm, sizeof(comm));
	if (i->is_dev) {
		if (i->is_dev == PF_PATH)
			d = p->serials[i->tid];
		else if (!(d = name(ctx, i->tid)))
			d = parse_fmt_devno(i->tid, devno, sizeof(devno));
		safe_text(d, dn, sizeof(dn));
		snprintf(n, sizeof(n), lane ? "%s #%d" : "%s", dn, lane + 1);
		meta(f, "thread_name", i->pid ? i->pid : PF_DEV_PID, i->lane_tid, n);
		return;
	}
	if (new_pid) {
		snprintf(n, sizeof(n), "%s", comm);
		meta(f, "process_name", i->pid, 0, n);
	}
	snprintf(n, sizeof(n), lane ? "%s %u #%d" : "%s %u", comm, i->tid, lane + 1);
	meta(f, "thread_name", i->pid, i->lane_tid, n);
}

/*
 * Give each item of one track (items ix[0..n), sorted by start) the first
 * lane free at its start, naming new lanes as they open.
 */
static void assign_lanes(FILE *f, struct pf *p, const size_t *ix, size_t n, uint32_t *next_tid,
			 int new_pid, const char *(*name)(void *ctx, uint32_t dev), void *ctx)
{
	uint64_t ends[64];
	uint32_t tids[64];
	int nl = 0;

	for (size_t k = 0; k < n; k++) {
		struct pf_item *i = &p->it[ix[k]];
		int l, m = 0;

		for (l = 0; l < nl && ends[l] > i->start; l++)
			if (ends[l] < ends[m])
				m = l;
		if (l == nl && nl < 64) {
			tids[nl] = !i->is_dev && !nl ? i->tid : (*next_tid)++;
			ends[nl] = i->end;
			i->lane_tid = tids[nl];
			emit_names(f, p, i, new_pid && !nl, nl, name, ctx);
			nl++;
		} else if (l == nl) {
			l = m; /* 64 lanes busy: it overlaps the one that ends first */
		}
		if (i->end > ends[l] || ends[l] <= i->start)
			ends[l] = i->end;
		i->lane_tid = tids[l];
	}
}

/* The wall clock of requests that came without one (JSON lines: this boot's). */
void pf_clock(struct pf *p, int64_t real_off_ns)
{
	if (!p->real_off_ns)
		p->real_off_ns = real_off_ns;
}

/* The wall-clock anchor: the first slice's CLOCK_REALTIME and the offset of every ts. */
static void emit_clock(FILE *f, const struct pf *p)
{
	uint64_t first = UINT64_MAX;
	int64_t off = p->real_off_ns;
	char when[48];

	for (size_t k = 0; k < p->nr; k++)
		if (p->it[k].start < first)
			first = p->it[k].start;
	if (first == UINT64_MAX)
		first = 0;
	fprintf(f,
		"],\n\"metadata\":{\"startTime\":\"%s\",\"realtime_offset_us\":%s%llu.%03llu}}\n",
		rp_fmt_real(first + (uint64_t)off, when, sizeof(when)), off < 0 ? "-" : "",
		(unsigned long long)((off < 0 ? -off : off) / 1000),
		(unsigned long long)((off < 0 ? -off : off) % 1000));
}

int pf_write(struct pf *p, FILE *f, const char *(*name)(void *ctx, uint32_t dev), void *ctx)
{
	size_t *ix = p->nr ? malloc(p->nr * sizeof(*ix)) : NULL;
	uint32_t next_tid = PF_LANE_TID0, last_pid = 0;
	size_t a = 0;

	if (p->err || (p->nr && !ix)) {
		free(ix);
		return -ENOMEM;
	}
	for (size_t k = 0; k < p->nr; k++)
		ix[k] = k;
	g_sort_items = p->it;
	qsort(ix, p->nr, sizeof(*ix), by_track_start);
	fprintf(f,
		"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n{\"ph\":\"M\",\"pid\":%u,"
		"\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":\"block devices\"}}",
		PF_DEV_PID);
	if (p->nr_paths)
		meta(f, "process_name", PF_VM_PID, 0, "guests (host clock)");
	while (a < p->nr) {
		const struct pf_item *x = &p->it[ix[a]];
		size_t b = a + 1;

		while (b < p->nr && p->it[ix[b]].is_dev == x->is_dev &&
		       p->it[ix[b]].pid == x->pid && p->it[ix[b]].tid == x->tid)
			b++;
		assign_lanes(f, p, ix + a, b - a, &next_tid,
			     x->is_dev ? 0 : !a || x->pid != last_pid, name, ctx);
		last_pid = x->pid;
		a = b;
	}
	for (size_t k = 0; k < p->nr; k++) {
		const struct pf_item *i = &p->it[ix[k]];

		if (i->is_dev == PF_PATH)
			emit_path(f, p, i);
		else if (i->is_dev)
			emit_dev(f, p, i);
		else
			emit_thread(f, p, i);
	}
	for (size_t k = 0; k < p->nr; k++)
		if (p->it[k].is_dev == PF_DEV && p->it[k].parent >= 0)
			emit_flow(f, &p->it[p->it[k].parent], &p->it[k], k + 1);
	emit_thread_flows(f, p);
	fputc('\n', f);
	emit_clock(f, p);
	free(ix);
	return ferror(f) ? -EIO : 0;
}
