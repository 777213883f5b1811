// SPDX-License-Identifier: GPL-2.0
/*
 * output: a request as one JSON line (docs/json.md): its task, devices,
 * blocks, writeback notes, stages and cgroup.
 */

#include <stdio.h>
#include <string.h>

#include "records/cgroup.h"
#include "records/container.h"
#include "records/corr.h"
#include "records/fname.h"
#include "records/output.h"
#include "records/output_int.h"
#include "records/stages.h"
#include "lib/abi.h"
#include "lib/jsonw.h"
#include "lib/parse.h"

/* The cgroup path of id: a recording's table, else the daemon's cache; NULL: unknown. */
const char *out_cgroup_of(const struct it_out *out, uint64_t id)
{
	if (out->dn && out->dn->cgroup)
		return out->dn->cgroup(out->dn->ctx, id);
	return cg_path(out->cg, id);
}

/* The container, pod or machine of a cgroup path (docs/json.md): only the fields known. */
static void json_container(struct jw *w, struct ct_names *names, const char *cg)
{
	const char *rt, *qos;
	struct ct_full f;

	ct_describe(names, cg, &f);
	rt = ct_runtime_name(f.ci.runtime);
	qos = ct_qos_name(f.ci.qos);
	if (rt)
		jw_str(w, "runtime", rt);
	if (f.ci.id[0])
		jw_str(w, "container_id", f.ci.id);
	if (f.container || f.ci.name[0])
		jw_str(w, "container", f.container ? f.container : f.ci.name);
	if (f.ci.ns[0])
		jw_str(w, "containerd_namespace", f.ci.ns);
	if (f.ci.pod_uid[0])
		jw_str(w, "pod_uid", f.ci.pod_uid);
	if (f.pod) {
		jw_str(w, "pod", f.pod);
		jw_str(w, "namespace", f.pod_ns);
	}
	if (qos)
		jw_str(w, "qos", qos);
}

static void json_task(struct it_out *out, const struct it_task *t)
{
	struct jw *w = &out->w;
	const char *cg = out_cgroup_of(out, t->cgroup_id);

	jw_u64(w, "pid", t->pid);
	jw_u64(w, "tid", t->tid);
	jw_strn(w, "comm", t->comm, sizeof(t->comm));
	jw_u64(w, "cgroup_id", t->cgroup_id);
	if (cg) {
		jw_str(w, "cgroup", cg);
		json_container(w, out->names, cg);
	}
}

/* "dev" and "devno" (literal keys: the writer's fast path) */
void out_json_dev(struct it_out *out, uint32_t dev)
{
	const struct out_dev *d;
	struct out_dev tmp;

	if (!dev)
		return;
	d = dev_get(out, dev, &tmp);
	jw_str(&out->w, "dev", d->name);
	jw_str(&out->w, "devno", d->devno);
}

/* The driver layer's view of a block request (docs/json.md: block[].driver). */
static void json_driver(struct it_out *out, const struct it_block_rec *b)
{
	struct jw *w = &out->w;
	const char *serial = out->dn ? out->dn->serial(out->dn->ctx, b->dev) :
				       parse_dev_serial_cached(b->dev, out->sysfs_root);

	jw_obj_begin(w, "driver");
	jw_str(w, "layer", abi_layer_name(b->drv_layer));
	if (b->drv_submit_ns)
		jw_u64(w, "submit_ns", b->drv_submit_ns);
	if (b->drv_kick_ns)
		jw_u64(w, "kick_ns", b->drv_kick_ns);
	if (b->drv_done_ns)
		jw_u64(w, "done_ns", b->drv_done_ns);
	if (b->drv_submit_ns && b->drv_done_ns >= b->drv_submit_ns)
		jw_u64(w, "drv_ns", b->drv_done_ns - b->drv_submit_ns);
	jw_u64(w, "qid", b->drv_qid);
	jw_u64(w, "tag", b->drv_tag);
	jw_u64(w, "opcode", b->drv_opcode);
	jw_i64(w, "status", b->drv_status);
	if (serial)
		jw_str(w, "serial", serial);
	jw_obj_end(w);
}

/*
 * An issued request's stages from getrq (g: its stamp, else Q) to the issue:
 * g2i and i2d, or one g2d when the insert is not hooked.
 */
static void json_to_issue(struct jw *w, const struct it_block_rec *b, uint64_t g)
{
	uint64_t i = (b->flags & IT_F_HAS_I) ? b->i_ns : g;

	if (b->flags & IT_F_NO_I) {
		if (b->flags & IT_F_HAS_G)
			jw_u64(w, "g2d_ns", b->d_ns - g);
		return;
	}
	/* i2d needs a start: the insert, else getrq (issued directly) */
	if (b->flags & IT_F_HAS_G)
		jw_u64(w, "g2i_ns", i - g);
	if (b->flags & (IT_F_HAS_G | IT_F_HAS_I))
		jw_u64(w, "i2d_ns", b->d_ns - i);
}

/* Why a write's page-cache bytes have no dirtier (IT_WB_* bit i: name i). */
static const char *const wb_why_names[] = { "not_noted", "redirtied", "many", "truncated" };

const char *out_wb_why_name(unsigned int bit)
{
	return bit < sizeof(wb_why_names) / sizeof(wb_why_names[0]) ? wb_why_names[bit] : NULL;
}

/* The cgroup as "<key>_id" and "<key>" (its path, where known). */
static void json_cgroup(struct it_out *out, const char *key, uint64_t id)
{
	const char *cg = out_cgroup_of(out, id);
	char name[32];

	snprintf(name, sizeof(name), "%s_id", key);
	jw_u64(&out->w, name, id);
	if (cg)
		jw_str(&out->w, key, cg);
}

/* A block request's "file_devno" (its file's, or its dirtied pages'): "MAJ:MIN" without printf. */
static void json_file_devno(struct jw *w, uint32_t dev)
{
	char devno[2 * JW_U64_MAX_LEN + 2], *p;

	p = jw_fmt_u64(devno, IT_MAJOR(dev));
	*p++ = ':';
	p = jw_fmt_u64(p, IT_MINOR(dev));
	jw_strn(w, "file_devno", devno, (size_t)(p - devno));
}

/*
 * Who dirtied the pages a block write carries (docs/json.md: block[].dirty),
 * and the cgroup the kernel charged it to.
 */
static void json_wb(struct it_out *out, const struct it_block_rec *b)
{
	const struct it_wb *wb = &b->wb;
	struct jw *w = &out->w;

	if (wb->blkcg_id)
		json_cgroup(out, "blkcg", wb->blkcg_id);
	jw_obj_begin(w, "dirty");
	jw_str(w, "by", (wb->mode & IT_WBM_FILE) ? "file" : "page");
	if (wb->mode & IT_WBM_SHARED)
		jw_bool(w, "shared", 1);
	if (wb->dirtier.pid) {
		json_task(out, &wb->dirtier);
		jw_u64(w, "bytes", wb->bytes);
	}
	if (wb->other_pid) {
		jw_u64(w, "other_pid", wb->other_pid);
		jw_u64(w, "other_bytes", wb->other_bytes);
	}
	jw_u64(w, "unknown_bytes", wb->unknown_bytes);
	if (wb->unknown_why) {
		jw_arr_begin(w, "unknown");
		for (unsigned int i = 0; out_wb_why_name(i); i++)
			if (wb->unknown_why & (1u << i))
				jw_str(w, NULL, out_wb_why_name(i));
		jw_arr_end(w);
	}
	if (wb->dirty_first_ns) {
		jw_u64(w, "first_ns", wb->dirty_first_ns);
		jw_u64(w, "last_ns", wb->dirty_last_ns);
		if (wb->dirty_first_ns <= b->q_ns)
			jw_u64(w, "age_ns", b->q_ns - wb->dirty_first_ns);
		if (wb->dirty_last_ns && wb->dirty_last_ns <= b->q_ns)
			jw_u64(w, "age_min_ns", b->q_ns - wb->dirty_last_ns);
	}
	json_file_devno(w, wb->file_dev);
	jw_obj_end(w);
}

/* The file a request's line wrote last, for its block requests of the same file. */
struct json_fk {
	struct fn_key key;
	const char *m; /* NULL: none yet */
	size_t n, d;
};

/*
 * "file" and "container_file" (docs/json.md), names on (out->fn): k's names,
 * where known, as the cache keeps them written (one copy: no escaping per
 * request), looked up once per line and file (fk); a block request's
 * "file_devno" of file_dev too (0: none).
 */
static inline __attribute__((always_inline)) void
json_file(struct it_out *out, struct json_fk *fk, const struct fn_key *k, uint32_t file_dev)
{
	if (!fk->m || !fn_key_eq(&fk->key, k)) {
		fk->m = fn_get_json(out->fn, k, &fk->n, &fk->d);
		fk->key = *k;
		if (!fk->m)
			return;
	}
	/* the cache's file_devno is k's dev: a block request's own file's (fn_blk_key) */
	jw_members_pad(&out->w, fk->m, file_dev && file_dev == k->dev ? fk->d : fk->n);
	if (file_dev && file_dev != k->dev)
		json_file_devno(&out->w, file_dev);
}

/* Block request i of r, whose file is rk (NULL: none; fk: the line's last file). */
static void json_block(struct it_out *out, const struct corr_req *r, int i, const struct fn_key *rk,
		       struct json_fk *fk)
{
	const struct it_block_rec *b = r->blocks[i];
	struct jw *w = &out->w;
	uint64_t g = b->g_ns ? b->g_ns : b->q_ns;
	struct fn_key k;

	jw_obj_begin(w, NULL);
	out_json_dev(out, b->dev);
	jw_str(w, "op", abi_op_name(b->op));
	if (corr_blk_offset(b) != CORR_NO_OFFSET)
		jw_u64(w, "sector", b->sector);
	jw_u64(w, "nr_sectors", b->bytes / 512);
	jw_u64(w, "bytes", b->bytes);
	jw_u64(w, "ino", b->ino);
	/*
	 * The file's own file system, for a reader of the line (report: its name's key).
	 * A block request of the line's own file (fn_blk_key's first case with the
	 * line's key, json_file's reuse) takes the line's members at once: most do.
	 */
	if (fk->m && b->ino == fk->key.ino && b->file_dev == fk->key.dev && b->file_dev &&
	    !!(b->flags & IT_F_BDEV) == fk->key.bdev)
		jw_members_pad(w, fk->m, fk->d);
	else if (out->fn && fn_blk_key(b, rk, &k))
		json_file(out, fk, &k, b->file_dev);
	jw_u64(w, "q_ns", b->q_ns);
	if (b->flags & IT_F_HAS_G)
		jw_u64(w, "q2g_ns", b->g_ns - b->q_ns);
	if (b->d_ns) {
		json_to_issue(w, b, g);
		jw_u64(w, "q2d_ns", b->d_ns - b->q_ns);
		jw_u64(w, "d2c_ns", b->c_ns - b->d_ns);
	}
	jw_u64(w, "q2c_ns", b->c_ns - b->q_ns);
	jw_u64(w, "c_ns", b->c_ns);
	/* a storage stack's member has its offset in the upper bio there (iotracer.h: up_off) */
	jw_u64(w, "merged", b->up_dev ? 0 : b->nr_merged);
	jw_i64(w, "error", b->error);
	jw_str(w, "origin", abi_name(&abi_origins, b->origin));
	jw_u64(w, "pid", b->task.pid);
	jw_u64(w, "tid", b->task.tid);
	if (b->flags & IT_F_WB)
		json_wb(out, b);
	if (b->drv_layer)
		json_driver(out, b);
	out_json_stack(out, r, i);
	jw_obj_end(w);
}

void out_json_request(struct it_out *out, const struct corr_req *r, const struct req_view *v)
{
	struct jw *w = &out->w;
	size_t mark = jw_len(w);
	uint64_t ts = v->end_ns ? v->end_ns : v->start_ns;
	struct fn_key rk;
	int has_rk = out->fn && fn_req_key(r, &rk); /* names off: no file keys */
	struct json_fk fk = { .m = NULL };

	if (!mark)
		out->batch_ts = ts;
	jw_obj_begin(w, NULL);
	jw_str(w, "type", "request");
	jw_u64(w, "id", r->id);
	jw_str(w, "kind", v->kind);
	jw_u64(w, "ts_ns", v->start_ns);
	json_task(out, v->task);
	if (r->kind == CORR_SYSCALL)
		jw_str(w, "syscall", abi_name(&abi_syscalls, r->sys->sys));
	else if (r->kind == CORR_AIO)
		jw_str(w, "syscall", "io_submit");
	jw_str(w, "op", abi_op_name(v->op));
	out_json_dev(out, v->dev);
	jw_u64(w, "ino", v->ino);
	if (has_rk)
		json_file(out, &fk, &rk, 0);
	if (v->offset != CORR_NO_OFFSET)
		jw_u64(w, "offset", v->offset);
	jw_u64(w, "bytes", v->bytes);
	if (r->kind != CORR_AIO || r->aio.reaped)
		jw_i64(w, "ret", v->ret);
	if (v->end_ns)
		jw_u64(w, "lat_ns", stages_lat_of(v));
	if (r->kind == CORR_SYSCALL) {
		const struct it_syscall_rec *s = r->sys;

		jw_obj_begin(w, "fs");
		jw_bool(w, "dio", !!(s->flags & IT_F_DIO));
		/* a write's new pages are no misses: the field is a read's (json.md) */
		if (v->op == IT_OP_READ)
			jw_u64(w, "cache_miss_pages", s->cache_miss_pages);
		if (s->vfs_ns)
			jw_u64(w, "vfs_ns", s->vfs_ns);
		if (s->first_q_ns && s->first_q_ns >= s->enter_ns)
			jw_u64(w, "pre_block_ns", s->first_q_ns - s->enter_ns);
		if (v->last_c && v->last_c <= s->exit_ns)
			jw_u64(w, "post_block_ns", s->exit_ns - v->last_c);
		jw_obj_end(w);
		if (s->flags & (IT_F_SCHED_CNT | IT_F_SCHED_SW)) {
			jw_obj_begin(w, "sched");
			if (s->flags & IT_F_SCHED_CNT) {
				jw_u64(w, "switches", s->nr_switches);
				jw_u64(w, "preempted", s->nr_preempt);
				jw_u64(w, "runq_ns", s->runq_ns);
			}
			if (s->flags & IT_F_SCHED_SW) {
				jw_u64(w, "offcpu_ns", s->offcpu_ns);
				jw_u64(w, "offcpu_blocked_ns", s->offcpu_blocked_ns);
			}
			if (s->waker_tid) {
				jw_u64(w, "waker_tid", s->waker_tid);
				jw_strn(w, "waker_comm", s->waker_comm, sizeof(s->waker_comm));
			}
			jw_obj_end(w);
		}
		jw_u64(w, "nr_bios", s->nr_bios);
		if (r->has_waited)
			wbsync_json(w, &r->waited);
	} else if (r->kind == CORR_URING) {
		jw_obj_begin(w, "uring");
		jw_u64(w, "user_data", r->uring->user_data);
		jw_u64(w, "opcode", r->uring->opcode);
		jw_i64(w, "res", r->uring->res);
		jw_u64(w, "submit_ns", r->uring->submit_ns);
		jw_u64(w, "complete_ns", r->uring->complete_ns);
		jw_obj_end(w);
	} else if (r->kind == CORR_AIO) {
		jw_obj_begin(w, "aio");
		jw_hex(w, "iocb", r->aio.iocb.iocb);
		jw_u64(w, "submit_ns", r->aio.submit_ns);
		if (r->aio.reaped) {
			jw_u64(w, "reap_ns", r->aio.reap_ns);
			jw_i64(w, "res", r->aio.res);
		}
		jw_obj_end(w);
	}
	if (r->kind == CORR_BLOCK && r->parent.valid) {
		jw_obj_begin(w, "parent");
		jw_u64(w, "id", r->parent.id);
		jw_u64(w, "tid", r->parent.tid);
		jw_u64(w, "seq", r->parent.seq);
		jw_obj_end(w);
	}
	jw_arr_begin(w, "block");
	for (int i = 0; i < r->nr_blocks; i++)
		json_block(out, r, i, has_rk ? &rk : NULL, &fk);
	jw_arr_end(w);
	if (r->nr_blocks_apart)
		jw_u64(w, "block_apart", r->nr_blocks_apart);
	jw_obj_end(w);
	out_json_line_done(out, mark, (int64_t)(ts - out->batch_ts) >= (int64_t)OUT_BATCH_AGE_NS);
}
