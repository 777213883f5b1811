// SPDX-License-Identifier: GPL-2.0
/*
 * rows: a request row read back into the request it was (see rows.h): the
 * durations back into the records' stamps, as report/jsonl.c does for a -j
 * line. What the row does not carry is left zero, as a -j line leaves it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/abi.h"
#include "sink/rows.h"

#define SK_F_REC_MASK (IT_F_DIO | IT_F_BDEV | IT_F_SCHED_CNT | IT_F_SCHED_SW | IT_F_TRUNC)

void sk_rview_init(struct sk_rview *v, const struct nat_rblock *rb)
{
	v->rb = rb;
	for (int i = 0; i < SK_R_NR; i++) {
		const struct nat_rcol *c = nat_rcol(rb, sk_req_spec[i].name);

		/* a column of another type is not ours: read as missing */
		v->c[i] = c && c->type == sk_req_spec[i].type &&
					  c->array == !!sk_req_spec[i].group ?
				  c :
				  NULL;
	}
}

char *sk_rows_str(const struct nat_rcol *c, uint64_t i, char *buf, size_t n)
{
	size_t len;
	const char *s = nat_get_str(c, i, &len);

	snprintf(buf, n, "%.*s", (int)(len < n ? len : n - 1), s);
	return buf;
}

#define U(col) nat_get(v->c[col], i)
#define E(col) nat_get(v->c[col], e)

/* "MAJ:MIN" of column col, value i; 0 when none. */
static uint32_t devno_of(const struct nat_rcol *c, uint64_t i)
{
	unsigned int ma, mi;
	char buf[24];

	if (sscanf(sk_rows_str(c, i, buf, sizeof(buf)), "%u:%u", &ma, &mi) != 2)
		return 0;
	return IT_MKDEV(ma, mi);
}

/* A name column's enum value in table t; def when unknown. */
static int value_of(const struct nat_rcol *c, uint64_t i, const struct abi_names *t, int def)
{
	size_t len;
	const char *s = nat_get_str(c, i, &len);
	int x = len ? abi_value(t, s, len) : -1;

	return x < 0 ? def : x;
}

static void note_dev(const struct sk_notes *nt, uint32_t dev, const struct nat_rcol *name,
		     uint64_t i, const char *serial)
{
	char buf[64];

	if (nt && nt->dev && dev && name)
		nt->dev(nt->ctx, dev, sk_rows_str(name, i, buf, sizeof(buf)), serial);
}

static void note_cgroup(const struct sk_notes *nt, uint64_t id, const struct nat_rcol *path,
			uint64_t i)
{
	char buf[512];
	size_t len;

	if (nt && nt->cgroup && id && (nat_get_str(path, i, &len), len))
		nt->cgroup(nt->ctx, id, sk_rows_str(path, i, buf, sizeof(buf)));
}

static void get_wb(const struct sk_rview *v, uint64_t e, struct it_block_rec *b,
		   const struct sk_notes *nt)
{
	struct it_wb *wb = &b->wb;

	wb->blkcg_id = E(SK_R_B_BLKCG_ID);
	note_cgroup(nt, wb->blkcg_id, v->c[SK_R_B_BLKCG], e);
	wb->dirtier.pid = (uint32_t)E(SK_R_B_DIRTY_PID);
	wb->dirtier.tid = (uint32_t)E(SK_R_B_DIRTY_TID);
	sk_rows_str(v->c[SK_R_B_DIRTY_COMM], e, wb->dirtier.comm, sizeof(wb->dirtier.comm));
	wb->dirtier.cgroup_id = E(SK_R_B_DIRTY_CGROUP_ID);
	note_cgroup(nt, wb->dirtier.cgroup_id, v->c[SK_R_B_DIRTY_CGROUP], e);
	wb->bytes = (uint32_t)E(SK_R_B_DIRTY_BYTES);
	wb->other_pid = (uint32_t)E(SK_R_B_OTHER_PID);
	wb->other_bytes = (uint32_t)E(SK_R_B_OTHER_BYTES);
	wb->unknown_bytes = (uint32_t)E(SK_R_B_UNKNOWN_BYTES);
	wb->unknown_why = (uint8_t)E(SK_R_B_UNKNOWN_WHY);
	wb->dirty_first_ns = E(SK_R_B_DIRTY_FIRST);
	wb->dirty_last_ns = E(SK_R_B_DIRTY_LAST);
	wb->file_dev = devno_of(v->c[SK_R_B_DIRTY_FILE_DEVNO], e);
}

static void get_driver(const struct sk_rview *v, uint64_t e, struct it_block_rec *b)
{
	b->drv_layer = (uint8_t)value_of(v->c[SK_R_B_DRV_LAYER], e, &abi_layers, 0);
	b->drv_submit_ns = E(SK_R_B_DRV_SUBMIT);
	b->drv_kick_ns = E(SK_R_B_DRV_KICK);
	b->drv_done_ns = E(SK_R_B_DRV_DONE);
	b->drv_qid = (uint16_t)E(SK_R_B_DRV_QID);
	b->drv_tag = (uint32_t)E(SK_R_B_DRV_TAG);
	b->drv_opcode = (uint8_t)E(SK_R_B_DRV_OPCODE);
	b->drv_status = (int32_t)E(SK_R_B_DRV_STATUS);
}

/* Element e of block[] back into a block record; owner: the request's task. */
static void get_block(const struct sk_rview *v, uint64_t e, uint64_t start,
		      const struct it_task *owner, struct it_block_rec *b,
		      const struct sk_notes *nt)
{
	uint32_t flags = (uint32_t)E(SK_R_B_FLAGS);
	char serial[64];

	b->hdr.type = IT_REC_BLOCK;
	b->hdr.size = sizeof(*b);
	b->task = *owner;
	b->task.pid = (uint32_t)E(SK_R_B_PID);
	b->task.tid = (uint32_t)E(SK_R_B_TID);
	b->dev = devno_of(v->c[SK_R_B_DEVNO], e);
	b->op = (uint8_t)value_of(v->c[SK_R_B_OP], e, &abi_ops, IT_OP_OTHER);
	b->sector = E(SK_R_B_SECTOR);
	b->bytes = (uint32_t)E(SK_R_B_BYTES);
	b->ino = E(SK_R_B_INO);
	b->file_dev = devno_of(v->c[SK_R_B_FILE_DEVNO], e);
	b->flags = flags & ~SK_BF_ISSUED;
	b->q_ns = start + E(SK_R_B_Q_OFF);
	b->c_ns = b->q_ns + E(SK_R_B_Q2C);
	if (flags & IT_F_HAS_G)
		b->g_ns = b->q_ns + E(SK_R_B_Q2G);
	if (flags & SK_BF_ISSUED) {
		b->d_ns = b->q_ns + E(SK_R_B_Q2D);
		if (flags & IT_F_HAS_I)
			b->i_ns = b->d_ns - E(SK_R_B_I2D);
	}
	b->up_dev = devno_of(v->c[SK_R_B_UPPER_DEVNO], e);
	b->nr_merged = (uint16_t)(b->up_dev ? E(SK_R_B_UP_OFF) : E(SK_R_B_MERGED));
	b->error = (int32_t)E(SK_R_B_ERROR);
	b->origin = (uint8_t)value_of(v->c[SK_R_B_ORIGIN], e, &abi_origins, IT_ORIG_NONE);
	if (flags & IT_F_WB)
		get_wb(v, e, b, nt);
	get_driver(v, e, b);
	if (flags & IT_F_UPPER) { /* its stack stamps where a driver's would be */
		b->stk_r_ns = E(SK_R_B_STK_R);
		b->stk_m_ns = E(SK_R_B_STK_M);
		b->stk_pieces = (uint32_t)E(SK_R_B_STK_PIECES);
	}
	sk_rows_str(v->c[SK_R_B_SERIAL], e, serial, sizeof(serial));
	note_dev(nt, b->dev, v->c[SK_R_B_DEV], e, serial[0] ? serial : NULL);
	note_dev(nt, b->up_dev, v->c[SK_R_B_UPPER], e, NULL);
}

static void get_syscall(const struct sk_rview *v, uint64_t i, struct rf_req *q, uint64_t start,
			uint32_t dev, uint32_t flags)
{
	struct it_syscall_rec *s = &q->sys;

	s->hdr.type = IT_REC_SYSCALL;
	s->hdr.size = sizeof(*s);
	s->enter_ns = start;
	s->exit_ns = (flags & SK_F_END) ? start + U(SK_R_LAT) : 0;
	s->ret = (int64_t)U(SK_R_RET);
	s->offset = U(SK_R_OFFSET);
	s->bytes = U(SK_R_BYTES);
	s->ino = U(SK_R_INO);
	s->dev = dev;
	s->sys = (uint16_t)value_of(v->c[SK_R_SYSCALL], i, &abi_syscalls, IT_SYS_MAX);
	s->op = (uint8_t)value_of(v->c[SK_R_OP], i, &abi_ops, IT_OP_OTHER);
	s->flags = flags & SK_F_REC_MASK;
	s->nr_bios = (uint32_t)U(SK_R_NR_BIOS);
	s->cache_miss_pages = (uint32_t)U(SK_R_CACHE_MISS);
	s->vfs_ns = U(SK_R_VFS);
	if (flags & SK_F_PRE)
		s->first_q_ns = start + U(SK_R_PRE_BLOCK);
	s->nr_switches = (uint32_t)U(SK_R_SWITCHES);
	s->nr_preempt = (uint32_t)U(SK_R_PREEMPTED);
	s->runq_ns = U(SK_R_RUNQ);
	s->offcpu_ns = U(SK_R_OFFCPU);
	s->offcpu_blocked_ns = U(SK_R_OFFCPU_BLOCKED);
	s->waker_tid = (uint32_t)U(SK_R_WAKER_TID);
	sk_rows_str(v->c[SK_R_WAKER_COMM], i, s->waker_comm, sizeof(s->waker_comm));
}

static void get_uring(const struct sk_rview *v, uint64_t i, struct rf_req *q, uint64_t start,
		      uint32_t dev, uint32_t flags)
{
	struct it_uring_rec *u = &q->uring;

	u->hdr.type = IT_REC_URING;
	u->hdr.size = sizeof(*u);
	u->user_data = U(SK_R_URING_USER_DATA);
	u->opcode = (uint8_t)U(SK_R_URING_OPCODE);
	u->res = (int32_t)U(SK_R_RET);
	u->submit_ns = start;
	u->complete_ns = (flags & SK_F_END) ? start + U(SK_R_LAT) : 0;
	u->ino = U(SK_R_INO);
	u->dev = dev;
	u->op = (uint8_t)value_of(v->c[SK_R_OP], i, &abi_ops, IT_OP_OTHER);
	u->flags = flags & SK_F_REC_MASK;
}

static void get_aio(const struct sk_rview *v, uint64_t i, struct rf_req *q, uint64_t start,
		    uint32_t dev, uint32_t flags)
{
	struct rf_aio *a = &q->aio;

	a->iocb.iocb = U(SK_R_AIO_IOCB);
	a->iocb.offset = U(SK_R_OFFSET);
	a->iocb.nbytes = U(SK_R_BYTES);
	a->iocb.dev = dev;
	a->iocb.ino = U(SK_R_INO);
	a->iocb.flags = (uint16_t)(flags & IT_F_BDEV);
	a->iocb.opcode =
		it_aio_opcode((unsigned int)value_of(v->c[SK_R_OP], i, &abi_ops, IT_OP_OTHER));
	a->submit_ns = start;
	a->reaped = !!(flags & SK_F_END);
	a->reap_ns = a->reaped ? start + U(SK_R_LAT) : 0;
	a->res = (int64_t)U(SK_R_RET);
	a->iocb.res = a->res;
}

static void get_task(const struct sk_rview *v, uint64_t i, struct it_task *t,
		     const struct sk_notes *nt)
{
	t->pid = (uint32_t)U(SK_R_PID);
	t->tid = (uint32_t)U(SK_R_TID);
	t->cgroup_id = U(SK_R_CGROUP_ID);
	sk_rows_str(v->c[SK_R_COMM], i, t->comm, sizeof(t->comm));
	note_cgroup(nt, t->cgroup_id, v->c[SK_R_CGROUP], i);
}

static void get_ident(const struct sk_rview *v, uint64_t i, struct sk_ident *id)
{
	if (!id)
		return;
	sk_rows_str(v->c[SK_R_HOST], i, id->host, sizeof(id->host));
	sk_rows_str(v->c[SK_R_BOOT], i, id->boot, sizeof(id->boot));
	id->run = U(SK_R_RUN);
	id->clock_off = (int64_t)U(SK_R_CLOCK_OFF);
}

/* Column col's names of file k (ccol: the container's), row or element i, to nt. */
static void note_file(const struct sk_notes *nt, const struct sk_rview *v, int col, int ccol,
		      uint64_t i, const struct fn_key *k)
{
	char file[RF_FILE_LEN], cfile[RF_FILE_LEN];

	if (!v->c[col] || !*sk_rows_str(v->c[col], i, file, sizeof(file)))
		return;
	if (v->c[ccol])
		sk_rows_str(v->c[ccol], i, cfile, sizeof(cfile));
	nt->file(nt->ctx, k, file, v->c[ccol] && cfile[0] ? cfile : NULL);
}

/* The names of the request's file and of its block requests' (as output_json.c keys them). */
static void note_files(const struct sk_rview *v, uint64_t i, const struct rf_req *q,
		       const struct sk_notes *nt)
{
	struct corr_req r;
	struct fn_key rk, k;
	int has;
	uint64_t first, n;

	if (!nt || !nt->file)
		return;
	rf_req_view(q, &r);
	has = fn_req_key(&r, &rk);
	if (has)
		note_file(nt, v, SK_R_FILE, SK_R_CFILE, i, &rk);
	if (nat_get_elems(v->c[SK_R_B_FLAGS], i, &first, &n))
		return;
	for (int b = 0; b < r.nr_blocks && (uint64_t)b < n; b++)
		if (fn_blk_key(r.blocks[b], has ? &rk : NULL, &k))
			note_file(nt, v, SK_R_B_FILE, SK_R_B_CFILE, first + (uint64_t)b, &k);
}

int sk_rows_get(const struct sk_rview *v, uint64_t i, struct rf_req *q, struct sk_ident *id,
		const struct sk_notes *nt)
{
	uint32_t flags = (uint32_t)U(SK_R_FLAGS), dev = devno_of(v->c[SK_R_DEVNO], i);
	uint64_t start = U(SK_R_TS) - U(SK_R_CLOCK_OFF), first, n;
	struct it_task owner = { 0 };
	int kind = value_of(v->c[SK_R_KIND], i, &abi_kinds, 0);

	memset(q, 0, sizeof(*q));
	if (!kind || i >= v->rb->rows)
		return -EINVAL;
	get_ident(v, i, id);
	q->kind = (enum corr_kind)kind;
	q->id = U(SK_R_ID);
	note_dev(nt, dev, v->c[SK_R_DEV], i, NULL);
	get_task(v, i, &owner, nt);
	if (!nat_get_elems(v->c[SK_R_B_FLAGS], i, &first, &n))
		for (uint64_t e = first; e < first + n && q->nr_blocks < CORR_MAX_BLOCKS; e++)
			get_block(v, e, start, &owner, &q->blocks[q->nr_blocks++], nt);
	q->nr_blocks_apart = (int)U(SK_R_BLOCK_APART);
	if (q->kind == CORR_SYSCALL) {
		q->sys.task = owner;
		get_syscall(v, i, q, start, dev, flags);
	} else if (q->kind == CORR_URING) {
		q->uring.task = owner;
		get_uring(v, i, q, start, dev, flags);
	} else if (q->kind == CORR_AIO) {
		q->aio.task = owner;
		get_aio(v, i, q, start, dev, flags);
	} else if (!q->nr_blocks) {
		return -EINVAL;
	}
	if (flags & SK_F_PARENT) {
		q->parent_valid = 1;
		q->parent_id = U(SK_R_PARENT_ID);
		q->parent_tid = (uint32_t)U(SK_R_PARENT_TID);
		q->parent_seq = U(SK_R_PARENT_SEQ);
	}
	note_files(v, i, q, nt);
	return 0;
}

int sk_rows_get_blame(const struct nat_rblock *rb, uint64_t i, struct blame_line *l,
		      const struct sk_notes *nt)
{
	const struct nat_rcol *c[SK_B_NR];
	uint64_t first, n;
	char by[16];

	if (i >= rb->rows)
		return -EINVAL;
	for (int k = 0; k < SK_B_NR; k++)
		c[k] = nat_rcol(rb, sk_blame_spec[k].name);
	memset(l, 0, sizeof(*l));
	l->id = nat_get(c[SK_B_ID], i);
	l->requests = nat_get(c[SK_B_REQUESTS], i);
	l->wait_ns = nat_get(c[SK_B_WAIT], i);
	l->own_ns = nat_get(c[SK_B_OWN], i);
	l->unattr_ns = nat_get(c[SK_B_UNATTR], i);
	l->self_ns = nat_get(c[SK_B_SELF], i);
	l->others_ns = nat_get(c[SK_B_OTHERS], i);
	l->other_ns = nat_get(c[SK_B_OTHER], i);
	l->by = blame_by_of(sk_rows_str(c[SK_B_BY], i, by, sizeof(by))) == BLAME_BY_CGROUP ?
			BLAME_BY_CGROUP :
			BLAME_BY_VM;
	if (nat_get_elems(c[SK_B_C_NS], i, &first, &n))
		return 0;
	for (uint64_t e = first; e < first + n && l->nr < BLAME_LINE_TOP; e++, l->nr++) {
		size_t len;

		l->cgroup_id[l->nr] = nat_get(c[SK_B_C_CGROUP_ID], e);
		l->pid[l->nr] = (uint32_t)nat_get(c[SK_B_C_PID], e);
		l->ns[l->nr] = nat_get(c[SK_B_C_NS], e);
		if (nat_get_str(c[SK_B_C_CGROUP], e, &len), len) {
			l->named |= 1u << l->nr;
			note_cgroup(nt, l->cgroup_id[l->nr], c[SK_B_C_CGROUP], e);
		}
	}
	return 0;
}
