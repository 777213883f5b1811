/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Syscall layer, io_uring: a request from io_uring_submit_req (or _sqe) to
 * io_uring_complete, keyed in uring_inflight, its record and stage histogram.
 * The thread state, file checks and buffers it uses are syscall.bpf.h's; the
 * submitter's io_uring_enter exit stays there with the other syscalls.
 */
#ifndef IT_URING_BPF_H
#define IT_URING_BPF_H

#include "syscall.bpf.h"

struct uring_info {
	struct it_task task;
	u64 submit_ns;
	u64 user_data;
	u64 ino;
	u64 offset, bytes; /* read/write opcodes: it_uring_rw() */
	struct it_bufs bufs;
	u32 dev;
	u32 flags;
	u8 opcode;
	u8 op;
	u8 live; /* see IT_SLOT_PUT */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, u64);
	__type(value, struct uring_info);
} uring_inflight SEC(".maps");

/*
 * A read/write request's file offset and buffer, as its prep left them in the
 * request's command area (struct io_rw: ki_pos = sqe->off, addr = sqe->addr,
 * len = sqe->len; at submit_req the prep has run). READV/WRITEV: addr is the
 * user iovec array, its first buffer is read (the submitter's memory: this
 * runs in its context). Kernels without struct io_rw in BTF: left 0.
 */
static __always_inline void it_uring_rw(struct io_kiocb *req, struct uring_info *u)
{
	struct io_rw *rw = (void *)req;
	u64 addr, len;

	if (!bpf_core_type_exists(struct io_rw) || (u->op != IT_OP_READ && u->op != IT_OP_WRITE))
		return;
	u->offset = BPF_CORE_READ(rw, kiocb.ki_pos);
	addr = BPF_CORE_READ(rw, addr);
	len = BPF_CORE_READ(rw, len);
	if (u->opcode != 1 && u->opcode != 2) { /* not READV / WRITEV */
		it_buf1(&u->bufs, addr, len);
		u->bytes = len;
		return;
	}
	it_iov_bufs(&u->bufs, addr, len); /* len: the iovec count */
	u->bytes = len == 1 ? u->bufs.len : len == 2 ? (u64)u->bufs.len + u->bufs.len2 : 0;
}

static __always_inline int it_uring_submit(struct io_kiocb *req, const bool btf)
{
	struct task_struct *task = it_current_task();
	struct uring_info u = {};
	struct thread_state *st;
	struct it_file_id id = {};
	struct file *f;
	u64 key;
	s32 fd;

	if (!it_task_ok())
		goto untraced;
	u.opcode = IT_RD(btf, req, opcode);
	u.op = it_uring_op(u.opcode);
	/*
	 * req->file is assigned at issue, after this tracepoint; the SQE's fd
	 * is already in req->cqe.fd (a registered-file index when the request
	 * uses fixed files: then the file is not resolved here).
	 */
	f = IT_RD(btf, req, file);
	if (!f && !(IT_RD(btf, req, flags) & IT_REQ_F_FIXED_FILE)) {
		fd = it_uring_sqe_fd(req, btf);
		if (fd >= 0)
			f = it_fd_file(task, fd, IT_TASK_BTF);
	}
	if (f) {
		if (!it_file_check(f, &id))
			goto untraced;
	} else if (filter_dev || filter_file) {
		goto untraced;
	}
	u.dev = id.dev;
	u.ino = id.ino;
	u.flags = id.flags | it_sample_flag();
	u.user_data = it_uring_user_data(req, btf);
	it_uring_rw(req, &u);
	key = it_uring_submit_key(req, u.user_data);
	it_fill_task(&u.task);
	st = it_state_new(task);
	if (st) {
		st->uring_req = key;
		st->flags = u.flags;
		/* no traced syscall is in flight (io_uring_enter's is not one): its bios' file */
		st->ino = u.ino;
		st->dev = u.dev;
		if (f)
			it_name_file(st, f, u.ino, u.dev, u.flags);
	}
	u.submit_ns = bpf_ktime_get_ns();
	IT_SLOT_PUT(&uring_inflight, &key, u, IT_L_SYSCALL);
	return 0;
untraced:
	st = it_state();
	if (st)
		st->uring_req = 0;
	return 0;
}

static __always_inline int it_uring_complete(u64 key, s32 res)
{
	struct uring_info *p = IT_SLOT_GET(&uring_inflight, key, struct uring_info);
	struct uring_info u;
	struct it_uring_rec *r;
	struct it_res out;
	struct it_hist_val *h;
	u64 now, lat;

	if (!p)
		return 0;
	u = *p;
	p->live = 0;
	now = bpf_ktime_get_ns();
	lat = now - u.submit_ns;
	if (kern_hists) {
		h = it_hist_get(u.dev, IT_L_SYSCALL, u.op, IT_HK_URING);
		if (h)
			it_hist_slot(&h->st[IT_ST_TOTAL], lat);
	}
	if (!it_keep(u.flags, lat))
		return 0;
	r = it_reserve(&out, sizeof(*r), IT_L_SYSCALL);
	if (!r)
		return 0;
	it_hdr_init(&r->hdr, IT_REC_URING, sizeof(*r));
	r->task = u.task;
	r->req = key;
	r->user_data = u.user_data;
	r->submit_ns = u.submit_ns;
	r->complete_ns = now;
	r->ino = u.ino;
	r->res = res;
	r->dev = u.dev;
	r->opcode = u.opcode;
	r->op = u.op;
	r->pad0 = 0;
	r->flags = u.flags;
	r->offset = u.offset;
	r->bytes = u.bytes ? u.bytes : (res > 0 ? (u64)res : 0);
	r->bufs = u.bufs;
	it_submit(&out, r);
	return 0;
}

/* btf_io_uring_submit_req, raw_io_uring_submit_req */
IT_TP_BOTH(io_uring_submit_req, it_uring_submit((void *)ctx[0], it_btf))
/*
 * Before 6.2 (a6ae8b4e2a4e) the same tracepoint was io_uring_submit_sqe(req, ...):
 * btf_io_uring_submit_sqe, raw_io_uring_submit_sqe.
 */
IT_TP_BOTH(io_uring_submit_sqe, it_uring_submit(IT_URING_SUBMIT_REQ(ctx), it_btf))

/*
 * io_uring_complete(ctx, req, ...): req may be NULL for completions without
 * a request; the key and the result's place depend on the kernel
 * (it_uring_complete_key, it_uring_complete_res).
 */
static __always_inline int it_uring_complete_ctx(u64 *ctx, const bool btf)
{
	if (uring_complete_has_req && !ctx[1])
		return 0;
	return it_uring_complete(it_uring_complete_key(ctx), it_uring_complete_res(ctx, btf));
}

/* btf_io_uring_complete, raw_io_uring_complete */
IT_TP_BOTH(io_uring_complete, it_uring_complete_ctx(ctx, it_btf))

#endif /* IT_URING_BPF_H */
