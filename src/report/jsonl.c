// SPDX-License-Identifier: GPL-2.0
/*
 * jsonl: `iotracer -j` JSON lines back into the requests a recording holds
 * (struct rf_req), so that `iotracer report` reads both (docs/record.md).
 * Every "type":"request" line is decoded (docs/json.md); other lines are
 * skipped. What a JSON line does not carry is left zero (the record headers'
 * CPU, a block record's seq and origin id, the syscall's dio_count), and
 * numbers above 2^53 (cgroup ids, io_uring user_data) lose their low bits to
 * the JSON reader's doubles: the summary, the slowest requests and the
 * Perfetto view are the same, re-emitted JSON lines may differ in those.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "records/output.h"
#include "records/stack.h"
#include "lib/abi.h"
#include "lib/parse.h"
#include "lib/json.h"
#include "records/fname.h"
#include "report/jsonl.h"

/* A number of the line, saturated to the type (a line is anyone's input: 1e300 is one). */
static uint64_t num(const struct json *v, const char *path)
{
	double d = json_num(v, path, 0);

	if (d >= 18446744073709551616.0) /* 2^64 */
		return UINT64_MAX;
	return d > 0 ? (uint64_t)d : 0;
}

static int64_t snum(const struct json *v, const char *path)
{
	double d = json_num(v, path, 0);

	if (d >= 9223372036854775808.0) /* 2^63 */
		return INT64_MAX;
	if (d < -9223372036854775808.0)
		return INT64_MIN;
	return d == d ? (int64_t)d : 0; /* NaN: 0 */
}

static const char *str(const struct json *v, const char *path)
{
	const struct json *s = json_path(v, path);

	return s && s->t == JSON_STR ? s->str : NULL;
}

/* Whether line v is of type name: a line without a string "type" is of none. */
static int type_is(const struct json *v, const char *name)
{
	const char *t = str(v, "type");

	return t && !strcmp(t, name);
}

static int has(const struct json *v, const char *path)
{
	return json_path(v, path) != NULL;
}

/* The value of table t that string member key of v names, or def: the names the JSON was written with. */
static int value_of(const struct json *v, const char *key, const struct abi_names *t, int def)
{
	const char *name = str(v, key);
	int x = name ? abi_value(t, name, strlen(name)) : -1;

	return x < 0 ? def : x;
}

static int op_of(const struct json *v)
{
	return value_of(v, "op", &abi_ops, IT_OP_OTHER);
}

/* "MAJ:MIN" -> kernel dev_t; the name and serial go to the device table. */
static uint32_t dev_of(const struct json *v, struct jl_devs *devs)
{
	const char *devno = str(v, "devno"), *name = str(v, "dev"), *serial;
	unsigned int ma, mi;
	uint32_t dev;

	if (!devno || sscanf(devno, "%u:%u", &ma, &mi) != 2)
		return 0;
	dev = IT_MKDEV(ma, mi);
	serial = str(v, "driver.serial");
	if (devs->fn && name)
		devs->fn(devs->ctx, dev, name, serial);
	return dev;
}

static void get_task(const struct json *v, struct it_task *t)
{
	const char *comm = str(v, "comm");

	t->pid = (uint32_t)num(v, "pid");
	t->tid = (uint32_t)num(v, "tid");
	t->cgroup_id = num(v, "cgroup_id");
	if (comm)
		strncpy(t->comm, comm, sizeof(t->comm) - 1);
}

static void get_driver(const struct json *d, struct it_block_rec *b)
{
	b->drv_layer = (uint8_t)value_of(d, "layer", &abi_layers, 0);
	b->drv_submit_ns = num(d, "submit_ns");
	b->drv_kick_ns = num(d, "kick_ns");
	b->drv_done_ns = num(d, "done_ns");
	b->drv_qid = (uint16_t)num(d, "qid");
	b->drv_tag = (uint32_t)num(d, "tag");
	b->drv_opcode = (uint8_t)num(d, "opcode");
	b->drv_status = (int32_t)snum(d, "status");
}

/* block[].dirty and blkcg_id (docs/json.md): who dirtied a write's page-cache pages. */
static void get_wb(const struct json *v, struct it_block_rec *b)
{
	const struct json *d = json_get(v, "dirty"), *u;
	const char *devno;
	unsigned int ma, mi, bit;

	if (!d || d->t != JSON_OBJ)
		return;
	b->flags |= IT_F_WB;
	b->wb.blkcg_id = num(v, "blkcg_id");
	get_task(d, &b->wb.dirtier);
	b->wb.bytes = (uint32_t)num(d, "bytes");
	b->wb.other_pid = (uint32_t)num(d, "other_pid");
	b->wb.other_bytes = (uint32_t)num(d, "other_bytes");
	b->wb.unknown_bytes = (uint32_t)num(d, "unknown_bytes");
	b->wb.dirty_first_ns = num(d, "first_ns");
	b->wb.dirty_last_ns = num(d, "last_ns");
	devno = str(d, "file_devno");
	if (devno && sscanf(devno, "%u:%u", &ma, &mi) == 2)
		b->wb.file_dev = IT_MKDEV(ma, mi);
	u = json_get(d, "unknown");
	for (u = u && u->t == JSON_ARR ? u->child : NULL; u; u = u->next) {
		for (bit = 0; out_wb_why_name(bit); bit++)
			if (u->t == JSON_STR && !strcmp(u->str, out_wb_why_name(bit)))
				b->wb.unknown_why |= (uint8_t)(1u << bit);
	}
}

/* block[].stack (docs/json.md): a storage stack's upper bio or member, back into the record */
static void get_stack(const struct json *v, struct it_block_rec *b, struct jl_devs *devs)
{
	const struct json *s = json_get(v, "stack");
	const char *role, *how, *devno, *name;
	unsigned int ma, mi;

	if (!s || s->t != JSON_OBJ)
		return;
	role = str(s, "role");
	if (role && !strcmp(role, "upper")) {
		b->flags |= IT_F_UPPER;
		b->stk_pieces = (uint32_t)num(s, "pieces");
		if (has(s, "q2r_ns"))
			b->stk_r_ns = b->q_ns + num(s, "q2r_ns");
		if (has(s, "m2c_ns"))
			b->stk_m_ns = b->c_ns - num(s, "m2c_ns");
	}
	devno = str(s, "upper_devno");
	if (!devno || sscanf(devno, "%u:%u", &ma, &mi) != 2)
		return;
	b->up_dev = IT_MKDEV(ma, mi);
	name = str(s, "upper");
	if (devs->fn && name)
		devs->fn(devs->ctx, b->up_dev, name, NULL);
	how = str(s, "how");
	b->up_off = num(s, "upper_offset") / 512 < IT_STK_FAR ?
			    (uint16_t)(num(s, "upper_offset") / 512) :
			    IT_STK_FAR;
	if (how && !strcmp(how, stk_how_name(STK_PARTITION)))
		b->up_off = IT_STK_PART;
	else if (how && !strcmp(how, stk_how_name(STK_STRIPE)))
		b->up_off = IT_STK_STRIPE;
	else if (how && !strcmp(how, stk_how_name(STK_LOST)))
		b->flags |= IT_F_STK_LOST;
}

/* One element of block[] (the btt stages back into timestamps). */
static void get_block(const struct json *v, struct it_block_rec *b, const struct it_task *owner,
		      struct jl_devs *devs)
{
	uint64_t q = num(v, "q_ns");
	unsigned int ma, mi;

	b->hdr.type = IT_REC_BLOCK;
	b->hdr.size = sizeof(*b);
	b->task = *owner;
	b->task.pid = (uint32_t)num(v, "pid");
	b->task.tid = (uint32_t)num(v, "tid");
	b->dev = dev_of(v, devs);
	b->op = (uint8_t)op_of(v);
	/* a flush's line has none: the kernel's "no sector" again (records/corr.h) */
	b->sector = has(v, "sector") ? num(v, "sector") : UINT64_MAX;
	b->bytes = (uint32_t)num(v, "bytes");
	b->ino = num(v, "ino");
	if (str(v, "file_devno") && sscanf(str(v, "file_devno"), "%u:%u", &ma, &mi) == 2)
		b->file_dev = IT_MKDEV(ma, mi);
	b->q_ns = q;
	b->c_ns = num(v, "c_ns");
	b->flags = IT_F_HAS_Q;
	if (has(v, "q2g_ns")) {
		b->g_ns = q + num(v, "q2g_ns");
		b->flags |= IT_F_HAS_G;
	}
	if (has(v, "q2d_ns"))
		b->d_ns = q + num(v, "q2d_ns");
	if (has(v, "g2d_ns"))
		b->flags |= IT_F_NO_I;
	if (has(v, "i2d_ns") && b->d_ns - num(v, "i2d_ns") != b->g_ns) {
		b->i_ns = b->d_ns - num(v, "i2d_ns");
		b->flags |= IT_F_HAS_I;
	}
	b->nr_merged = (uint16_t)num(v, "merged");
	b->error = (int32_t)snum(v, "error");
	b->origin = (uint8_t)value_of(v, "origin", &abi_origins, IT_ORIG_NONE);
	if (has(v, "driver"))
		get_driver(json_get(v, "driver"), b);
	get_wb(v, b);
	get_stack(v, b, devs);
}

static void get_syscall(const struct json *v, struct rf_req *q, uint32_t dev)
{
	struct it_syscall_rec *s = &q->sys;

	s->hdr.type = IT_REC_SYSCALL;
	s->hdr.size = sizeof(*s);
	get_task(v, &s->task);
	s->enter_ns = num(v, "ts_ns");
	s->exit_ns = s->enter_ns + num(v, "lat_ns");
	s->ret = snum(v, "ret");
	s->offset = num(v, "offset");
	s->bytes = num(v, "bytes");
	s->ino = num(v, "ino");
	s->dev = dev;
	s->sys = (uint16_t)value_of(v, "syscall", &abi_syscalls, IT_SYS_MAX);
	s->op = (uint8_t)op_of(v);
	s->nr_bios = (uint32_t)num(v, "nr_bios");
	if (json_path(v, "fs.dio") && json_path(v, "fs.dio")->t == JSON_BOOL &&
	    json_path(v, "fs.dio")->num)
		s->flags |= IT_F_DIO;
	s->cache_miss_pages = (uint32_t)num(v, "fs.cache_miss_pages");
	s->vfs_ns = num(v, "fs.vfs_ns");
	if (has(v, "fs.pre_block_ns"))
		s->first_q_ns = s->enter_ns + num(v, "fs.pre_block_ns");
	if (has(v, "sched.runq_ns")) {
		s->flags |= IT_F_SCHED_CNT;
		s->nr_switches = (uint32_t)num(v, "sched.switches");
		s->nr_preempt = (uint32_t)num(v, "sched.preempted");
		s->runq_ns = num(v, "sched.runq_ns");
	}
	if (has(v, "sched.offcpu_ns")) {
		s->flags |= IT_F_SCHED_SW;
		s->offcpu_ns = num(v, "sched.offcpu_ns");
		s->offcpu_blocked_ns = num(v, "sched.offcpu_blocked_ns");
	}
	s->waker_tid = (uint32_t)num(v, "sched.waker_tid");
	if (str(v, "sched.waker_comm"))
		strncpy(s->waker_comm, str(v, "sched.waker_comm"), sizeof(s->waker_comm) - 1);
}

static void get_uring(const struct json *v, struct rf_req *q, uint32_t dev)
{
	struct it_uring_rec *u = &q->uring;

	u->hdr.type = IT_REC_URING;
	u->hdr.size = sizeof(*u);
	get_task(v, &u->task);
	u->user_data = num(v, "uring.user_data");
	u->opcode = (uint8_t)num(v, "uring.opcode");
	u->res = (int32_t)snum(v, "uring.res");
	u->submit_ns = num(v, "uring.submit_ns");
	u->complete_ns = num(v, "uring.complete_ns");
	u->ino = num(v, "ino");
	u->dev = dev;
	u->op = (uint8_t)op_of(v);
}

static void get_aio(const struct json *v, struct rf_req *q, uint32_t dev)
{
	struct rf_aio *a = &q->aio;
	const char *iocb = str(v, "aio.iocb");

	get_task(v, &a->task);
	a->iocb.iocb = iocb ? strtoull(iocb, NULL, 16) : 0;
	a->iocb.offset = num(v, "offset");
	a->iocb.nbytes = num(v, "bytes");
	a->iocb.dev = dev;
	a->iocb.ino = num(v, "ino");
	a->iocb.opcode = it_aio_opcode((unsigned int)op_of(v));
	a->submit_ns = num(v, "aio.submit_ns");
	a->reaped = has(v, "aio.reap_ns");
	a->reap_ns = num(v, "aio.reap_ns");
	a->res = snum(v, "aio.res");
	a->iocb.res = a->res;
}

/* The "file" fields of a decoded request and its block requests to devs->file. */
static void get_files(const struct json *v, const struct rf_req *q, struct jl_devs *devs)
{
	const struct json *blocks = json_get(v, "block"), *b;
	struct corr_req r;
	struct fn_key rk, k;
	int has_rk, i = 0;

	if (!devs->file)
		return;
	rf_req_view(q, &r);
	has_rk = fn_req_key(&r, &rk);
	if (has_rk && str(v, "file"))
		devs->file(devs->ctx, &rk, str(v, "file"), str(v, "container_file"));
	for (b = blocks && blocks->t == JSON_ARR ? blocks->child : NULL; b && i < q->nr_blocks;
	     b = b->next, i++)
		if (str(b, "file") && fn_blk_key(&q->blocks[i], has_rk ? &rk : NULL, &k))
			devs->file(devs->ctx, &k, str(b, "file"), str(b, "container_file"));
}

int jl_decode(const struct json *v, struct rf_req *q, struct jl_devs *devs)
{
	const struct json *blocks = json_get(v, "block"), *b;
	struct it_task owner = { 0 };
	uint32_t dev;
	int kind;

	if (!type_is(v, "request"))
		return 0;
	kind = value_of(v, "kind", &abi_kinds, 0);
	if (!kind)
		return -EINVAL;
	memset(q, 0, sizeof(*q));
	q->kind = (enum corr_kind)kind;
	q->id = num(v, "id");
	dev = dev_of(v, devs);
	get_task(v, &owner);
	if (devs->cgroup && str(v, "cgroup"))
		devs->cgroup(devs->ctx, owner.cgroup_id, str(v, "cgroup"));
	for (b = blocks && blocks->t == JSON_ARR ? blocks->child : NULL;
	     b && q->nr_blocks < CORR_MAX_BLOCKS; b = b->next)
		get_block(b, &q->blocks[q->nr_blocks++], &owner, devs);
	q->nr_blocks_apart = (int)num(v, "block_apart");
	if (q->kind == CORR_SYSCALL)
		get_syscall(v, q, dev);
	else if (q->kind == CORR_URING)
		get_uring(v, q, dev);
	else if (q->kind == CORR_AIO)
		get_aio(v, q, dev);
	else if (!q->nr_blocks)
		return -EINVAL;
	if (has(v, "parent")) {
		q->parent_valid = 1;
		q->parent_id = num(v, "parent.id");
		q->parent_tid = (uint32_t)num(v, "parent.tid");
		q->parent_seq = num(v, "parent.seq");
	}
	get_files(v, q, devs);
	return 1;
}

/* A joined host-mode "path" line (docs/modes.md): its timestamps by name. */
static int get_path(const struct json *v, struct rp_path *g)
{
	const struct json *t = json_get(v, "t"), *j = json_get(v, "joined");
	const char *serial = str(v, "serial");

	if (!t || !j || j->t != JSON_BOOL || !j->num)
		return 0;
	memset(g, 0, sizeof(*g));
	for (int k = 0; k < VJ_T_MAX; k++)
		g->t[k] = num(t, vj_ts_name(k));
	g->offset = num(v, "offset");
	g->bytes = num(v, "bytes");
	g->host_tid = (uint32_t)num(v, "host_tid");
	g->op = (uint8_t)op_of(v);
	if (serial)
		snprintf(g->serial, sizeof(g->serial), "%s", serial);
	return 1;
}

int jl_read(const char *buf, size_t len, struct jl_devs *devs,
	    void (*fn)(void *ctx, const struct rf_req *q), void *ctx, struct jl_stats *st)
{
	struct rf_req *q = malloc(sizeof(*q));
	const char *p = buf, *end = buf + len;

	if (!q)
		return -ENOMEM;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		struct json *v = n ? json_parse(p, n) : NULL;
		int r = v ? jl_decode(v, q, devs) : -EINVAL;

		if (r > 0) {
			st->requests++;
			fn(ctx, q);
		} else if (!r && devs->path && type_is(v, "path")) {
			struct rp_path g;

			if (get_path(v, &g)) {
				st->paths++;
				devs->path(devs->ctx, &g);
			}
		} else if (r < 0 && n) {
			st->bad_lines++;
		}
		json_free(v);
		p += n + 1;
	}
	free(q);
	return 0;
}
