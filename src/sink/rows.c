// SPDX-License-Identifier: GPL-2.0
/*
 * rows: requests and blame lines into rows, and request rows back (see rows.h).
 * The columns carry what the request's -j line carries (output_json.c), with
 * times as durations from the request's start: small numbers, cheap to
 * compress, and what a query reads.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "records/cgroup.h"
#include "records/container.h"
#include "records/stack.h"
#include "records/stages.h"
#include "lib/abi.h"
#include "lib/parse.h"
#include "sink/rows.h"

/* The IT_F_* bits a request row keeps of its record. */
#define SK_F_REC_MASK (IT_F_DIO | IT_F_BDEV | IT_F_SCHED_CNT | IT_F_SCHED_SW | IT_F_TRUNC)

int sk_rows_init(struct sk_rows *w, const struct sk_lookup *lk)
{
	memset(w, 0, sizeof(*w));
	if (lk)
		w->lk = *lk;
	if (nat_block_init(&w->req, sk_req_spec, SK_R_NR) ||
	    nat_block_init(&w->blame, sk_blame_spec, SK_B_NR)) {
		sk_rows_free(w);
		return -ENOMEM;
	}
	return 0;
}

void sk_rows_forget(struct sk_rows *w)
{
	memset(w->devs, 0, sizeof(w->devs));
	memset(w->ct, 0, sizeof(w->ct));
}

void sk_rows_free(struct sk_rows *w)
{
	nat_block_free(&w->req);
	nat_block_free(&w->blame);
}

/* ---- names ---- */

static const char *dev_name(const struct sk_rows *w, uint32_t dev, char *buf, size_t n)
{
	const char *s = w->lk.dev_name ? w->lk.dev_name(w->lk.ctx, dev) :
					 parse_dev_name_cached(dev, w->lk.sysfs_root);

	return s ? s : parse_fmt_devno(dev, buf, n);
}

static const char *cgroup_path(const struct sk_rows *w, uint64_t id)
{
	if (w->lk.cgroup)
		return w->lk.cgroup(w->lk.ctx, id);
	return w->lk.cg ? cg_path(w->lk.cg, id) : NULL;
}

/* A file's names; NULL: not known (peeked, as the recording reads them: no use counted). */
static const struct fn_entry *fname_of(const struct sk_rows *w, const struct fn_key *k)
{
	if (!k)
		return NULL;
	if (w->lk.fname)
		return w->lk.fname(w->lk.ctx, k);
	return w->lk.fn ? fn_peek(w->lk.fn, k) : NULL;
}

/* The file columns of k (NULL: none): "" when its names are not known. */
static void put_file(struct sk_rows *w, int col, int ccol, const struct fn_key *k)
{
	const struct fn_entry *e = fname_of(w, k);

	nat_strn(&w->req, col, e ? e->file : "", e ? e->file_len : 0);
	nat_strn(&w->req, ccol, e && e->cfile ? e->cfile : "", e ? e->cfile_len : 0);
}

/* A device's names, looked up once (a few remembered: a name may change, a device may go). */
static const struct sk_dev *dev_of(struct sk_rows *w, uint32_t dev)
{
	struct sk_dev *d;
	char buf[24];

	for (int i = 0; i < SK_DEV_CACHE; i++)
		if (w->devs[i].dev == dev && w->devs[i].devno_len)
			return &w->devs[i];
	d = &w->devs[w->dev_next++ % SK_DEV_CACHE];
	d->dev = dev;
	snprintf(d->name, sizeof(d->name), "%s", dev_name(w, dev, buf, sizeof(buf)));
	parse_fmt_devno(dev, d->devno, sizeof(d->devno));
	d->name_len = (uint8_t)strlen(d->name);
	d->devno_len = (uint8_t)strlen(d->devno);
	return d;
}

/* The device columns: its name and "MAJ:MIN" ("" and "" for none). */
static void put_dev(struct sk_rows *w, int name_col, int devno_col, uint32_t dev)
{
	const struct sk_dev *d;

	if (!dev) {
		nat_strn(&w->req, name_col, "", 0);
		nat_strn(&w->req, devno_col, "", 0);
		return;
	}
	d = dev_of(w, dev);
	nat_strn(&w->req, name_col, d->name, d->name_len);
	nat_strn(&w->req, devno_col, d->devno, d->devno_len);
}

/* A cgroup's container fields, by ct_describe() once per cgroup (a few remembered). */
static const struct sk_ct *ct_of(struct sk_rows *w, uint64_t id, const char *path)
{
	struct sk_ct *e;
	struct ct_full f;
	const char *s;

	for (int i = 0; i < SK_CT_CACHE; i++)
		if (w->ct[i].valid && w->ct[i].id == id)
			return &w->ct[i];
	e = &w->ct[w->ct_next++ % SK_CT_CACHE];
	memset(e, 0, sizeof(*e));
	e->id = id;
	e->valid = 1;
	ct_describe(w->lk.names, path, &f);
	s = ct_runtime_name(f.ci.runtime);
	snprintf(e->runtime, sizeof(e->runtime), "%s", s ? s : "");
	snprintf(e->id_s, sizeof(e->id_s), "%s", f.ci.id);
	snprintf(e->name, sizeof(e->name), "%s", f.container ? f.container : f.ci.name);
	snprintf(e->ctrd_ns, sizeof(e->ctrd_ns), "%.*s", (int)sizeof(e->ctrd_ns) - 1, f.ci.ns);
	snprintf(e->pod_uid, sizeof(e->pod_uid), "%s", f.ci.pod_uid);
	snprintf(e->pod, sizeof(e->pod), "%s", f.pod ? f.pod : "");
	snprintf(e->ns, sizeof(e->ns), "%.*s", (int)sizeof(e->ns) - 1, f.pod ? f.pod_ns : "");
	s = ct_qos_name(f.ci.qos);
	snprintf(e->qos, sizeof(e->qos), "%s", s ? s : "");
	return e;
}

static void put_task(struct sk_rows *w, const struct it_task *t)
{
	struct nat_block *b = &w->req;
	const char *cg = cgroup_path(w, t->cgroup_id);
	static const struct sk_ct none;
	const struct sk_ct *c = cg ? ct_of(w, t->cgroup_id, cg) : &none;

	nat_u32(b, SK_R_PID, t->pid);
	nat_u32(b, SK_R_TID, t->tid);
	nat_strn(b, SK_R_COMM, t->comm, strnlen(t->comm, sizeof(t->comm)));
	nat_u64(b, SK_R_CGROUP_ID, t->cgroup_id);
	nat_str(b, SK_R_CGROUP, cg);
	nat_str(b, SK_R_RUNTIME, c->runtime);
	nat_str(b, SK_R_CONTAINER_ID, c->id_s);
	nat_str(b, SK_R_CONTAINER, c->name);
	nat_str(b, SK_R_CTRD_NS, c->ctrd_ns);
	nat_str(b, SK_R_POD_UID, c->pod_uid);
	nat_str(b, SK_R_POD, c->pod);
	nat_str(b, SK_R_NAMESPACE, c->ns);
	nat_str(b, SK_R_QOS, c->qos);
}

/* ---- a request ---- */

/* Who dirtied a block write's pages (block[].dirty); zeros when it is not one. */
static void put_wb(struct sk_rows *w, const struct it_block_rec *r)
{
	struct nat_block *b = &w->req;
	const struct it_wb *wb = &r->wb;
	int is = !!(r->flags & IT_F_WB);
	char devno[24];

	nat_u64(b, SK_R_B_BLKCG_ID, is ? wb->blkcg_id : 0);
	nat_str(b, SK_R_B_BLKCG, is && wb->blkcg_id ? cgroup_path(w, wb->blkcg_id) : NULL);
	nat_u32(b, SK_R_B_DIRTY_PID, is ? wb->dirtier.pid : 0);
	nat_u32(b, SK_R_B_DIRTY_TID, is ? wb->dirtier.tid : 0);
	nat_strn(b, SK_R_B_DIRTY_COMM, wb->dirtier.comm,
		 is ? strnlen(wb->dirtier.comm, sizeof(wb->dirtier.comm)) : 0);
	nat_u64(b, SK_R_B_DIRTY_CGROUP_ID, is ? wb->dirtier.cgroup_id : 0);
	nat_str(b, SK_R_B_DIRTY_CGROUP,
		is && wb->dirtier.pid ? cgroup_path(w, wb->dirtier.cgroup_id) : NULL);
	nat_u32(b, SK_R_B_DIRTY_BYTES, is ? wb->bytes : 0);
	nat_u32(b, SK_R_B_OTHER_PID, is ? wb->other_pid : 0);
	nat_u32(b, SK_R_B_OTHER_BYTES, is ? wb->other_bytes : 0);
	nat_u32(b, SK_R_B_UNKNOWN_BYTES, is ? wb->unknown_bytes : 0);
	nat_u8(b, SK_R_B_UNKNOWN_WHY, is ? wb->unknown_why : 0);
	nat_u64(b, SK_R_B_DIRTY_FIRST, is ? wb->dirty_first_ns : 0);
	nat_u64(b, SK_R_B_DIRTY_LAST, is ? wb->dirty_last_ns : 0);
	nat_str(b, SK_R_B_DIRTY_FILE_DEVNO,
		is ? parse_fmt_devno(wb->file_dev, devno, sizeof(devno)) : NULL);
}

/* The driver's fields; an upper bio's (IT_F_UPPER) hold its stack stamps instead: put_stack(). */
static void put_driver(struct sk_rows *w, const struct it_block_rec *r)
{
	struct nat_block *b = &w->req;
	const char *serial = NULL;
	int up = stk_is_upper(r);

	if (r->drv_layer)
		serial = w->lk.dev_serial ? w->lk.dev_serial(w->lk.ctx, r->dev) :
					    parse_dev_serial_cached(r->dev, w->lk.sysfs_root);
	nat_str(b, SK_R_B_DRV_LAYER, r->drv_layer ? abi_layer_name(r->drv_layer) : NULL);
	nat_u64(b, SK_R_B_DRV_SUBMIT, up ? 0 : r->drv_submit_ns);
	nat_u64(b, SK_R_B_DRV_KICK, r->drv_kick_ns);
	nat_u64(b, SK_R_B_DRV_DONE, up ? 0 : r->drv_done_ns);
	nat_u16(b, SK_R_B_DRV_QID, r->drv_qid);
	nat_u32(b, SK_R_B_DRV_TAG, up ? 0 : r->drv_tag);
	nat_u8(b, SK_R_B_DRV_OPCODE, r->drv_opcode);
	nat_u32(b, SK_R_B_DRV_STATUS, (uint32_t)r->drv_status);
	nat_str(b, SK_R_B_SERIAL, serial);
}

/*
 * Block request i's place in a storage stack (docs/json.md block[].stack): a
 * member's upper device and offset in its upper bio, how it got there; an
 * upper bio's pieces and stamps (CLOCK_MONOTONIC, as drv_*).
 */
static void put_stack(struct sk_rows *w, const struct corr_req *q, int i)
{
	const struct it_block_rec *r = q->blocks[i];
	struct nat_block *b = &w->req;
	int up = stk_is_upper(r), member = stk_is_member(r);
	struct stk_info si;

	if (member)
		stk_describe(q, i, &si);
	put_dev(w, SK_R_B_UPPER, SK_R_B_UPPER_DEVNO, r->up_dev);
	nat_u16(b, SK_R_B_UP_OFF, member ? r->up_off : 0);
	nat_str(b, SK_R_B_STACK_HOW, member ? stk_how_name(si.how) : NULL);
	nat_u32(b, SK_R_B_STK_PIECES, up ? r->stk_pieces : 0);
	nat_u64(b, SK_R_B_STK_R, up ? r->stk_r_ns : 0);
	nat_u64(b, SK_R_B_STK_M, up ? r->stk_m_ns : 0);
}

/*
 * Block request i of q, whose file is rk (NULL: none): the btt stages as
 * durations (q2g, i2d, q2d, d2c, q2c: g2i = q2d - q2g - i2d), its time from
 * the request's start.
 */
static void put_block(struct sk_rows *w, const struct corr_req *q, int bi, uint64_t start,
		      const struct fn_key *rk)
{
	const struct it_block_rec *r = q->blocks[bi];
	struct nat_block *b = &w->req;
	uint64_t g = (r->flags & IT_F_HAS_G) ? r->g_ns : r->q_ns;
	uint64_t i = (r->flags & IT_F_HAS_I) ? r->i_ns : g;
	uint32_t flags = r->flags | (r->d_ns ? SK_BF_ISSUED : 0);
	struct fn_key k;

	nat_elem(b, 1, bi);
	put_dev(w, SK_R_B_DEV, SK_R_B_DEVNO, r->dev);
	nat_str(b, SK_R_B_OP, abi_op_name(r->op));
	nat_u64(b, SK_R_B_SECTOR, r->sector);
	nat_u32(b, SK_R_B_BYTES, r->bytes);
	nat_u64(b, SK_R_B_INO, r->ino);
	put_file(w, SK_R_B_FILE, SK_R_B_CFILE, fn_blk_key(r, rk, &k) ? &k : NULL);
	if (r->file_dev) /* from the devices' cache: no printf a row */
		nat_strn(b, SK_R_B_FILE_DEVNO, dev_of(w, r->file_dev)->devno,
			 dev_of(w, r->file_dev)->devno_len);
	else
		nat_strn(b, SK_R_B_FILE_DEVNO, "", 0);
	nat_u64(b, SK_R_B_Q_OFF, r->q_ns - start);
	nat_u64(b, SK_R_B_Q2G, g - r->q_ns);
	nat_u64(b, SK_R_B_I2D, r->d_ns ? r->d_ns - i : 0);
	nat_u64(b, SK_R_B_Q2D, r->d_ns ? r->d_ns - r->q_ns : 0);
	nat_u64(b, SK_R_B_D2C, r->d_ns ? r->c_ns - r->d_ns : 0);
	nat_u64(b, SK_R_B_Q2C, r->c_ns - r->q_ns);
	nat_u32(b, SK_R_B_FLAGS, flags);
	nat_u16(b, SK_R_B_MERGED, stk_is_member(r) ? 0 : r->nr_merged); /* else up_off */
	nat_u32(b, SK_R_B_ERROR, (uint32_t)r->error);
	nat_str(b, SK_R_B_ORIGIN, abi_name(&abi_origins, r->origin));
	nat_u32(b, SK_R_B_PID, r->task.pid);
	nat_u32(b, SK_R_B_TID, r->task.tid);
	put_wb(w, r);
	put_driver(w, r);
	put_stack(w, q, bi);
}

/* The syscall's fs and sched notes (zeros for other kinds). */
static void put_syscall(struct sk_rows *w, const struct corr_req *r, const struct req_view *v,
			uint32_t *flags)
{
	static const struct it_syscall_rec zero;
	const struct it_syscall_rec *s = r->kind == CORR_SYSCALL ? r->sys : &zero;
	int pre = s->first_q_ns && s->first_q_ns >= s->enter_ns;
	int post = r->kind == CORR_SYSCALL && v->last_c && v->last_c <= s->exit_ns;
	struct nat_block *b = &w->req;

	*flags |= (s->flags & SK_F_REC_MASK) | (pre ? SK_F_PRE : 0) | (post ? SK_F_POST : 0);
	nat_u32(b, SK_R_CACHE_MISS, s->cache_miss_pages);
	nat_u64(b, SK_R_VFS, s->vfs_ns);
	nat_u64(b, SK_R_PRE_BLOCK, pre ? s->first_q_ns - s->enter_ns : 0);
	nat_u64(b, SK_R_POST_BLOCK, post ? s->exit_ns - v->last_c : 0);
	nat_u32(b, SK_R_SWITCHES, s->nr_switches);
	nat_u32(b, SK_R_PREEMPTED, s->nr_preempt);
	nat_u64(b, SK_R_RUNQ, s->runq_ns);
	nat_u64(b, SK_R_OFFCPU, s->offcpu_ns);
	nat_u64(b, SK_R_OFFCPU_BLOCKED, s->offcpu_blocked_ns);
	nat_u32(b, SK_R_WAKER_TID, s->waker_tid);
	nat_strn(b, SK_R_WAKER_COMM, s->waker_comm, strnlen(s->waker_comm, IT_COMM_LEN));
	nat_u32(b, SK_R_NR_BIOS, s->nr_bios);
}

/* io_uring, aio, a late block request's parent, a sync's waited writes. */
static void put_others(struct sk_rows *w, const struct corr_req *r, uint32_t *flags, int *nr)
{
	struct nat_block *b = &w->req;
	int parent = r->kind == CORR_BLOCK && r->parent.valid;

	nat_u64(b, SK_R_URING_USER_DATA, r->kind == CORR_URING ? r->uring->user_data : 0);
	nat_u8(b, SK_R_URING_OPCODE, r->kind == CORR_URING ? r->uring->opcode : 0);
	nat_u64(b, SK_R_AIO_IOCB, r->kind == CORR_AIO ? r->aio.iocb.iocb : 0);
	nat_u64(b, SK_R_PARENT_ID, parent ? r->parent.id : 0);
	nat_u32(b, SK_R_PARENT_TID, parent ? r->parent.tid : 0);
	nat_u64(b, SK_R_PARENT_SEQ, parent ? r->parent.seq : 0);
	nat_u32(b, SK_R_BLOCK_APART, (uint32_t)r->nr_blocks_apart);
	*flags |= parent ? SK_F_PARENT : 0;
	nat_u32(b, SK_R_WAITED_N, r->has_waited ? r->waited.n : 0);
	nat_u64(b, SK_R_WAITED_BYTES, r->has_waited ? r->waited.bytes : 0);
	nr[2] = r->has_waited ? (int)r->waited.nr_ids : 0;
	for (int i = 0; i < nr[2]; i++) {
		nat_elem(b, 2, i);
		nat_u64(b, SK_R_WAITED_IDS, r->waited.ids[i]);
	}
	if (r->has_waited)
		*flags |= SK_F_WAITED | (r->waited.truncated ? SK_F_WAITED_TRUNC : 0);
}

static const char *syscall_of(const struct corr_req *r)
{
	if (r->kind == CORR_SYSCALL)
		return abi_name(&abi_syscalls, r->sys->sys);
	return r->kind == CORR_AIO ? "io_submit" : "";
}

/* The request's victim for its blame line, if it has block requests; rk: its file. */
static void note_victim(struct sk_rows *w, const struct corr_req *r, uint64_t ts,
			const struct fn_key *rk)
{
	struct sk_victim *e = &w->vic[r->id % SK_VICTIMS];

	if (!r->nr_blocks)
		return;
	e->id = r->id;
	e->ts = ts;
	e->dev = r->blocks[0]->dev;
	e->cgroup_id = stages_block_owner(r->blocks[0])->cgroup_id;
	e->has_file = !!rk;
	if (rk)
		e->file = *rk;
}

void sk_rows_put(struct sk_rows *w, const struct sk_ident *id, const struct corr_req *r)
{
	struct nat_block *b = &w->req;
	int nr[NAT_MAX_GROUPS] = { 0 };
	struct req_view v;
	uint32_t flags = 0;
	struct fn_key rk;
	const struct fn_key *file = fn_req_key(r, &rk) ? &rk : NULL;

	stages_make_view(r, &v);
	note_victim(w, r, v.start_ns + (uint64_t)id->clock_off, file);
	if (v.end_ns)
		flags |= SK_F_END;
	nat_str(b, SK_R_HOST, id->host);
	nat_str(b, SK_R_BOOT, id->boot);
	nat_u64(b, SK_R_RUN, id->run);
	nat_u64(b, SK_R_ID, r->id);
	nat_u64(b, SK_R_TS, v.start_ns + (uint64_t)id->clock_off);
	nat_u64(b, SK_R_CLOCK_OFF, (uint64_t)id->clock_off);
	nat_str(b, SK_R_KIND, v.kind);
	nat_str(b, SK_R_SYSCALL, syscall_of(r));
	nat_str(b, SK_R_OP, abi_op_name(v.op));
	put_dev(w, SK_R_DEV, SK_R_DEVNO, v.dev);
	nat_u64(b, SK_R_INO, v.ino);
	put_file(w, SK_R_FILE, SK_R_CFILE, file);
	nat_u64(b, SK_R_OFFSET, v.offset);
	nat_u64(b, SK_R_BYTES, v.bytes);
	nat_u64(b, SK_R_RET, (uint64_t)v.ret);
	nat_u64(b, SK_R_LAT, stages_lat_of(&v));
	put_task(w, v.task);
	put_syscall(w, r, &v, &flags);
	if (r->kind == CORR_URING)
		flags |= r->uring->flags & SK_F_REC_MASK;
	else if (r->kind == CORR_AIO)
		flags |= r->aio.iocb.flags & SK_F_REC_MASK;
	put_others(w, r, &flags, nr);
	nat_u32(b, SK_R_FLAGS, flags);
	nr[1] = r->nr_blocks;
	for (int i = 0; i < r->nr_blocks; i++)
		put_block(w, r, i, v.start_ns, file);
	nat_row_end(b, nr);
}

/* ---- a blame line ---- */

void sk_rows_blame(struct sk_rows *w, const struct sk_ident *id, const struct blame_line *l,
		   uint64_t real_ns)
{
	const struct sk_victim *v = w->vic[l->id % SK_VICTIMS].id == l->id && l->id ?
					    &w->vic[l->id % SK_VICTIMS] :
					    NULL;
	struct nat_block *b = &w->blame;
	int nr[NAT_MAX_GROUPS] = { 0 };
	const char *vcg = v ? cgroup_path(w, v->cgroup_id) : NULL;
	const struct sk_ct *ct = vcg ? ct_of(w, v->cgroup_id, vcg) : NULL;
	const struct fn_entry *vf;

	nat_str(b, SK_B_HOST, id->host);
	nat_str(b, SK_B_BOOT, id->boot);
	nat_u64(b, SK_B_RUN, id->run);
	nat_u64(b, SK_B_ID, l->id);
	nat_u64(b, SK_B_TS, v ? v->ts : real_ns);
	nat_str(b, SK_B_BY, blame_by_name(l->by));
	nat_u64(b, SK_B_REQUESTS, l->requests);
	nat_u64(b, SK_B_WAIT, l->wait_ns);
	nat_u64(b, SK_B_OWN, l->own_ns);
	nat_u64(b, SK_B_UNATTR, l->unattr_ns);
	nat_u64(b, SK_B_SELF, l->self_ns);
	nat_u64(b, SK_B_OTHERS, l->others_ns);
	nat_u64(b, SK_B_OTHER, l->other_ns);
	nat_str(b, SK_B_VICTIM_DEV, v && v->dev ? dev_of(w, v->dev)->name : NULL);
	nat_str(b, SK_B_VICTIM_DEVNO, v && v->dev ? dev_of(w, v->dev)->devno : NULL);
	nat_u64(b, SK_B_VICTIM_CGROUP_ID, v ? v->cgroup_id : 0);
	nat_str(b, SK_B_VICTIM_CGROUP, vcg);
	nat_str(b, SK_B_VICTIM_POD, ct ? ct->pod : NULL);
	nat_str(b, SK_B_VICTIM_NAMESPACE, ct ? ct->ns : NULL);
	vf = v && v->has_file ? fname_of(w, &v->file) : NULL;
	nat_str(b, SK_B_VICTIM_FILE, vf ? vf->file : NULL);
	nr[1] = l->nr < BLAME_LINE_TOP ? l->nr : BLAME_LINE_TOP;
	for (int i = 0; i < nr[1]; i++) {
		const char *cg = (l->named & (1u << i)) ? cgroup_path(w, l->cgroup_id[i]) : NULL;
		const struct sk_ct *cc = cg ? ct_of(w, l->cgroup_id[i], cg) : NULL;

		nat_elem(b, 1, i);
		nat_u64(b, SK_B_C_CGROUP_ID, l->cgroup_id[i]);
		nat_str(b, SK_B_C_CGROUP, cg);
		nat_str(b, SK_B_C_POD, cc ? cc->pod : NULL);
		nat_str(b, SK_B_C_NAMESPACE, cc ? cc->ns : NULL);
		nat_u32(b, SK_B_C_PID, l->pid[i]);
		nat_u64(b, SK_B_C_NS, l->ns[i]);
	}
	nat_row_end(b, nr);
}
