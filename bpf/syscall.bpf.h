/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Syscall layer: fd-based IO syscalls and libaio (io_submit / io_getevents)
 * on raw_syscalls sys_enter / sys_exit (or the per-syscall tracepoints); its
 * io_uring part (io_uring_submit_req / io_uring_complete) is uring.bpf.h.
 *
 * Only regular files and block devices are traced: a read() of a pipe,
 * socket or tty is dropped at enter, before any map is touched.
 */
#ifndef IT_SYSCALL_BPF_H
#define IT_SYSCALL_BPF_H

#include "config.bpf.h"
#include "maps.bpf.h"
#include "core_fixes.bpf.h"
#include "record.bpf.h"
#include "hist.bpf.h"
#include "filter.bpf.h"
#include "inflight.bpf.h"
#include "progs.bpf.h"
#include "wbfile.bpf.h"
#include "names.bpf.h"

/*
 * btf: task is a BTF pointer (read directly, see IT_RD): IT_TASK_BTF for
 * it_current_task(). The fd's slot is read as a kiocb's first member (ki_filp,
 * a struct file *) through bpf_rdonly_cast where the kernel has it: one
 * fault-checked load instead of a bpf_probe_read_kernel call, which was a
 * third of a pipe read's enter program (docs/hooks.md, "The tax").
 */
static __always_inline struct file *it_fd_file(struct task_struct *task, u32 fd, const bool btf)
{
	struct fdtable *fdt = IT_RD(btf, task, files, fdt);
	struct file **arr;
	struct file *f = NULL;

	if (!fdt || fd >= IT_RD(btf, fdt, max_fds))
		return NULL;
	arr = IT_RD(btf, fdt, fd);
	if (bpf_rdonly_cast) {
		struct kiocb *slot = bpf_rdonly_cast((void *)((u64)arr + (u64)fd * sizeof(f)),
						     bpf_core_type_id_kernel(struct kiocb));

		return slot->ki_filp;
	}
	bpf_probe_read_kernel(&f, sizeof(f), &arr[fd]);
	return f;
}

struct it_file_id {
	u64 ino;
	u32 dev; /* i_rdev for a block device, s_dev for a regular file */
	u32 flags; /* IT_F_BDEV, IT_F_DIO */
};

static __always_inline bool it_file_check_in(struct file *f, struct it_file_id *id, const bool btf)
{
	struct inode *inode = IT_RD(btf, f, f_inode);
	u32 mode = IT_RD(btf, inode, i_mode) & S_IFMT;

	id->flags = 0;
	if (mode == S_IFBLK) {
		id->dev = IT_RD(btf, inode, i_rdev);
		id->flags = IT_F_BDEV;
	} else if (mode == S_IFREG) {
		id->dev = IT_RD(btf, inode, i_sb, s_dev);
	} else {
		return false;
	}
	if (!it_dev_ok(id->dev))
		return false;
	id->ino = IT_RD(btf, inode, i_ino);
	if (IT_RD(btf, f, f_flags) & IT_O_DIRECT)
		id->flags |= IT_F_DIO;
	if (filter_file) {
		/* The key is the file's own filesystem (s_dev), bdev nodes too. */
		struct it_file_key k = { .ino = id->ino, .dev = IT_RD(btf, inode, i_sb, s_dev) };

		if (bpf_map_lookup_elem(&files, &k))
			return true;
		k.ino = IT_RD(btf, f, f_path.dentry, d_parent, d_inode, i_ino);
		if (!bpf_map_lookup_elem(&files, &k))
			return false;
	}
	return true;
}

/*
 * Resolve and filter a file: false when it is neither a regular file nor a
 * block device, or when the dev / file filters reject it. f comes from the
 * fd table as a plain value; where the kernel has bpf_rdonly_cast (6.2+) it
 * becomes a BTF pointer and its fields plain loads instead of one
 * bpf_probe_read_kernel each.
 */
static __always_inline bool it_file_check(struct file *f, struct it_file_id *id)
{
	if (bpf_rdonly_cast)
		return it_file_check_in(bpf_rdonly_cast(f, bpf_core_type_id_kernel(struct file)),
					id, true);
	return it_file_check_in(f, id, false);
}

/*
 * No traced syscall in flight on this thread any more: one still marked in
 * flight never saw its exit (a program run the kernel skipped), counted, unless
 * it entered while the programs were being attached or detached (armed_ns).
 */
static __always_inline void it_sys_clear(struct thread_state *st)
{
	if (st->in_sys) {
		if (armed_ns && st->enter_ns >= armed_ns)
			it_drop(IT_L_SYSCALL, IT_DROP_MISSED);
		st->in_sys = 0;
	}
}

/*
 * The sched layer without a hook of its own: the kernel counts every task's
 * context switches (nvcsw, nivcsw) and, with sched_info, the time it waited
 * runnable for a CPU (run_delay, summed at each switch-in). Read at enter and
 * exit, their differences describe the syscall exactly: the task is running
 * at both points, so no wait is half counted.
 */
static __always_inline void it_sched_read(struct task_struct *t, u64 *sw, u64 *pre, u64 *rq)
{
	*pre = IT_RD(IT_TASK_BTF, t, nivcsw);
	*sw = IT_RD(IT_TASK_BTF, t, nvcsw) + *pre;
	*rq = bpf_core_field_exists(t->sched_info) ? IT_RD(IT_TASK_BTF, t, sched_info.run_delay) :
						     0;
}

static __always_inline struct thread_state *it_sys_begin(struct task_struct *task,
							 struct thread_state *st, u32 sys, u32 op)
{
	if (!st) /* the caller's lookup found none (or it made none): create it */
		st = it_state_new(task);
	if (!st) {
		it_drop(IT_L_SYSCALL, IT_DROP_INFLIGHT);
		return NULL;
	}
	it_sys_clear(st);
	if (!st->seq)
		st->seq = seq_base; /* a thread new to this load (config.bpf.h) */
	st->seq++;
	st->in_sys = 1;
	st->sys = sys;
	st->op = op;
	st->offset = 0;
	st->bytes = 0;
	st->ino = 0;
	st->dev = 0;
	st->nr_bios = 0;
	st->first_q_ns = 0;
	st->cache_miss_pages = 0;
	st->dio_count = 0;
	st->vfs_ns = 0;
	st->offcpu_ns = 0;
	st->offcpu_blocked_ns = 0;
	st->switch_out_ns = 0;
	st->waker_tid = 0;
	st->flags = it_sample_flag();
	if (sched_counters)
		it_sched_read(task, &st->sw0, &st->pre0, &st->rq0);
	return st;
}

/* The first two iovecs of a user array of nr (zeros when unreadable). */
static __always_inline void it_iov_bufs(struct it_bufs *b, u64 vec, u64 nr)
{
	struct iovec v[2] = {};

	__builtin_memset(b, 0, sizeof(*b));
	if (!vec || !nr || bpf_probe_read_user(v, nr > 1 ? sizeof(v) : sizeof(v[0]), (void *)vec))
		return;
	b->buf = (u64)v[0].iov_base;
	b->len = v[0].iov_len;
	if (nr > 1) {
		b->buf2 = (u64)v[1].iov_base;
		b->len2 = v[1].iov_len;
	}
}

/* A plain buffer of bytes. */
static __always_inline void it_buf1(struct it_bufs *b, u64 buf, u64 bytes)
{
	__builtin_memset(b, 0, sizeof(*b));
	b->buf = buf;
	b->len = bytes;
}

/*
 * A traced syscall's first four arguments and where they came from: the raw
 * sys_enter's user registers (regs: a 32-bit syscall is checked for there),
 * or a per-syscall tracepoint's own arguments (regs NULL: those tracepoints
 * never fire for 32-bit syscalls).
 */
struct it_sysargs {
	u64 a[4];
	struct pt_regs *regs;
	bool btf; /* regs is a BTF pointer */
};

static __always_inline bool it_args_compat(const struct it_sysargs *x)
{
	return x->regs && it_compat_syscall(x->regs, x->btf);
}

/*
 * Begin an fd-based syscall on file f (checked: id), from the syscall hooks and
 * from the file systems' (fileio.bpf.h). pos < 0: the file position is used.
 * bytes == 0 for vectored IO: the record carries the bytes transferred.
 * buf: the user buffer, or (vlen > 0) the iovec array of vlen whose first two
 * buffers are kept (host mode joins a QEMU host IO to the guest request by them).
 */
static __always_inline struct thread_state *
it_file_begin(struct task_struct *task, struct thread_state *st, struct file *f,
	      const struct it_file_id *id, u32 sys, u32 op, s64 pos, u64 bytes, u64 buf, u64 vlen)
{
	st = it_sys_begin(task, st, sys, op);

	if (!st)
		return NULL;
	st->dev = id->dev;
	st->ino = id->ino;
	st->flags |= id->flags;
	it_name_file(st, f, id->ino, id->dev, id->flags);
	st->offset = pos >= 0 ? (u64)pos : (u64)BPF_CORE_READ(f, f_pos);
	st->bytes = bytes;
	it_wbf_begin(task, st, op, id->flags);
	/* a vectored call's buffers are read from user memory only for host mode's join */
	if (vlen && want_iovecs)
		it_iov_bufs(&st->bufs, buf, vlen);
	else
		it_buf1(&st->bufs, vlen ? 0 : buf, bytes);
	st->enter_ns = bpf_ktime_get_ns();
	return st;
}

/*
 * Enter of an fd-based syscall (the syscall hooks). A pipe, socket, tty or
 * eventfd leaves at the file check, before the 32-bit check, the task filters
 * and any map (docs/hooks.md, "The tax"): its exit finds no syscall in flight
 * with its fd. A traced syscall whose exit was never seen is counted by the
 * next one that begins (it_sys_clear).
 */
static __always_inline int it_fd_enter(u32 sys, u32 op, u32 fd, s64 pos, u64 bytes, u64 buf,
				       u64 vlen, const struct it_sysargs *x)
{
	struct task_struct *task = it_current_task();
	struct thread_state *st;
	struct it_file_id id;
	struct file *f;

	f = it_fd_file(task, fd, IT_TASK_BTF);
	if (!f || !it_file_check(f, &id))
		return 0;
	if (it_args_compat(x) || !it_task_ok())
		return 0;
	st = it_file_begin(task, NULL, f, &id, sys, op, pos, bytes, buf, vlen);
	if (st)
		st->fd = fd;
	return 0;
}

/* At an exit that cannot read the call's fd: its syscall in flight is taken as it. */
#define IT_FD_ANY 0xffffffffu

/* The thread's state if it has traced syscall sys in flight, else NULL. */
static __always_inline struct thread_state *it_sys_in_flight(u32 sys)
{
	struct thread_state *st = it_state();

	return st && st->in_sys && st->sys == sys ? st : NULL;
}

/*
 * The exit of the syscall in flight on st (it_sys_in_flight) whose first
 * argument was fd (IT_FD_ANY: unknown): its record.
 */
static __always_inline int it_fd_exit_st(struct thread_state *st, u32 sys, u32 fd, s64 ret)
{
	u64 now, lat, sw = 0, pre = 0, rq = 0;
	struct it_syscall_rec *r;
	struct it_res res;
	struct it_hist_val *h;
	u32 flags;

	if (st->fd != fd && fd != IT_FD_ANY)
		return 0;
	st->in_sys = 0;
	now = bpf_ktime_get_ns();
	if (wb_mode == IT_WBMODE_FILES) {
		it_wbf_flush(st, now); /* what a buffered write dirtied, per file */
		st->wbf_write = 0;
	}
	lat = now - st->enter_ns;
	flags = st->flags | (st->dio_count ? IT_F_DIO : 0);
	if (sched_counters) {
		it_sched_read(it_current_task(), &sw, &pre, &rq);
		sw -= st->sw0;
		pre -= st->pre0;
		rq -= st->rq0;
		flags |= IT_F_SCHED_CNT;
	}
	if (sched_hooks)
		flags |= IT_F_SCHED_SW;
	if (kern_hists) {
		h = it_hist_get(st->dev, IT_L_SYSCALL, st->op, IT_HK_PLAIN);
		if (h) {
			it_hist_slot(&h->st[IT_ST_TOTAL], lat);
			if (sched_hooks)
				it_hist_slot(&h->st[IT_ST_OFFCPU], st->offcpu_ns);
			if (sched_counters)
				it_hist_slot(&h->st[IT_ST_RUNQ], rq);
		}
	}
	if (!it_keep(flags, lat))
		return 0;
	r = it_reserve(&res, sizeof(*r), IT_L_SYSCALL);
	if (!r)
		return 0;
	it_hdr_init(&r->hdr, IT_REC_SYSCALL, sizeof(*r));
	it_fill_task(&r->task);
	r->seq = st->seq;
	r->enter_ns = st->enter_ns;
	r->exit_ns = now;
	r->ret = ret;
	r->offset = st->offset;
	r->bytes = st->bytes ? st->bytes : (ret > 0 ? ret : 0);
	r->ino = st->ino;
	r->dev = st->dev;
	r->sys = sys;
	r->op = st->op;
	r->pad0 = 0;
	r->flags = flags;
	r->nr_bios = st->nr_bios;
	r->cache_miss_pages = st->cache_miss_pages;
	r->dio_count = st->dio_count;
	r->first_q_ns = st->first_q_ns;
	r->vfs_ns = st->vfs_ns;
	r->offcpu_ns = st->offcpu_ns;
	r->offcpu_blocked_ns = st->offcpu_blocked_ns;
	r->nr_switches = sw;
	r->waker_tid = st->waker_tid;
	__builtin_memcpy(r->waker_comm, st->waker_comm, IT_COMM_LEN);
	r->runq_ns = rq;
	r->nr_preempt = pre;
	r->pad1 = 0;
	r->bufs = st->bufs;
	it_submit(&res, r);
	return 0;
}

static __always_inline int it_fd_exit(u32 sys, u32 fd, s64 ret)
{
	struct thread_state *st = it_sys_in_flight(sys);

	return st ? it_fd_exit_st(st, sys, fd, ret) : 0;
}

/* ---- libaio ---- */

/* Kernel ABI structs of linux/aio_abi.h, read from user memory. */
struct it_uiocb {
	u64 aio_data;
	u32 aio_key;
	u32 aio_rw_flags;
	u16 aio_lio_opcode;
	s16 aio_reqprio;
	u32 aio_fildes;
	u64 aio_buf;
	u64 aio_nbytes;
	s64 aio_offset;
};

struct it_uevent {
	u64 data;
	u64 obj;
	s64 res;
	s64 res2;
};

static __always_inline int it_aio_enter(u32 sys, u64 user_ptr, const struct it_sysargs *x)
{
	struct task_struct *task = it_current_task();
	struct thread_state *st;

	if (it_args_compat(x) || !it_task_ok())
		return 0;
	st = it_sys_begin(task, NULL, sys, IT_OP_OTHER);
	if (!st)
		return 0;
	st->user_ptr = user_ptr;
	st->enter_ns = bpf_ktime_get_ns();
	return 0;
}

/* aio records are large: built in per-CPU scratch, then copied to the ring. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct it_aio_rec);
} aio_scratch SEC(".maps");

struct aio_loop {
	struct it_aio_rec *r;
	struct thread_state *st;
	struct task_struct *task;
	u64 user_ptr;
	u32 nr;
	u32 submit;
};

/*
 * A vectored iocb (aio_buf: iovec array, aio_nbytes: its count): the first
 * two buffers, and the bytes when the count is small enough to add up here
 * (else nbytes stays the count).
 */
#define IT_AIO_IOV_MAX 8
static __always_inline void it_aio_iov(struct it_aio_iocb *e, u64 vec, u64 nr)
{
	struct iovec v[IT_AIO_IOV_MAX] = {};
	u64 sum = 0;

	it_iov_bufs(&e->bufs, vec, nr);
	if (!nr || nr > IT_AIO_IOV_MAX ||
	    bpf_probe_read_user(v, sizeof(v[0]) * (nr & (IT_AIO_IOV_MAX - 1) ?: IT_AIO_IOV_MAX),
				(void *)vec))
		return;
	for (int i = 0; i < IT_AIO_IOV_MAX; i++)
		if (i < nr)
			sum += v[i].iov_len;
	e->nbytes = sum;
}

/*
 * A reaped iocb (its user address) of a file the -d / -f filters keep: its fd,
 * read back from the iocb, which its owner may not reuse before this reap
 * returns, checked as at submit. Without those filters every reap is kept
 * (one the submit left out counts in corr's aio_unknown_reap). An iocb whose
 * fd was closed meanwhile is left out: its request ends unreaped.
 */
static __always_inline bool it_aio_reap_ok(struct task_struct *task, u64 uptr)
{
	struct it_file_id id = {};
	struct it_uiocb cb;
	struct file *f;

	if (!filter_dev && !filter_file)
		return true;
	if (bpf_probe_read_user(&cb, sizeof(cb), (void *)uptr))
		return false;
	f = it_fd_file(task, cb.aio_fildes, false);
	return f && it_file_check(f, &id);
}

/* bpf_loop callback: one iocb (submit) or io_event (reap); verified once. */
static long it_aio_one(u32 i, void *data)
{
	struct aio_loop *c = data;
	struct it_aio_iocb *e;

	if (c->nr >= IT_AIO_BATCH)
		return 1;
	e = &c->r->iocbs[c->nr];
	__builtin_memset(e, 0, sizeof(*e));
	if (c->submit) {
		struct it_file_id id = {};
		struct it_uiocb cb;
		u64 uptr = 0;
		struct file *f;

		if (bpf_probe_read_user(&uptr, sizeof(uptr), (void *)(c->user_ptr + i * 8)) ||
		    bpf_probe_read_user(&cb, sizeof(cb), (void *)uptr))
			return 0;
		f = it_fd_file(c->task, cb.aio_fildes, false);
		if (!f || !it_file_check(f, &id))
			return 0;
		e->iocb = uptr;
		e->offset = cb.aio_offset;
		e->nbytes = cb.aio_nbytes;
		e->fd = cb.aio_fildes;
		e->dev = id.dev;
		e->ino = id.ino;
		e->flags = id.flags & IT_F_BDEV;
		it_name_file(c->st, f, id.ino, id.dev, id.flags);
		e->opcode = cb.aio_lio_opcode;
		if (cb.aio_lio_opcode == IT_IOCB_PREADV || cb.aio_lio_opcode == IT_IOCB_PWRITEV)
			it_aio_iov(e, cb.aio_buf, cb.aio_nbytes);
		else
			it_buf1(&e->bufs, cb.aio_buf, cb.aio_nbytes);
	} else {
		struct it_uevent ev;

		if (bpf_probe_read_user(&ev, sizeof(ev), (void *)(c->user_ptr + i * sizeof(ev))) ||
		    !it_aio_reap_ok(c->task, ev.obj))
			return 0;
		e->iocb = ev.obj;
		e->res = ev.res;
	}
	c->nr++;
	return 0;
}

static __always_inline int it_aio_exit(u32 sys, s64 ret)
{
	struct thread_state *st = it_state();
	struct aio_loop c = {};
	struct it_aio_rec *r;
	u32 zero = 0, nr;

	if (!st || !st->in_sys || st->sys != sys)
		return 0;
	st->in_sys = 0;
	if (ret <= 0)
		return 0;
	r = bpf_map_lookup_elem(&aio_scratch, &zero);
	if (!r)
		return 0;
	it_hdr_init(&r->hdr, IT_REC_AIO, sizeof(*r));
	it_fill_task(&r->task);
	r->seq = st->seq;
	r->enter_ns = st->enter_ns;
	r->exit_ns = bpf_ktime_get_ns();
	r->sys = sys;
	r->ret = ret;
	r->flags = ret > IT_AIO_BATCH ? IT_F_TRUNC : 0;
	c.r = r;
	c.st = st;
	c.task = it_current_task();
	c.user_ptr = st->user_ptr;
	c.submit = sys == IT_SYS_IO_SUBMIT;
	bpf_loop(ret > IT_AIO_BATCH ? IT_AIO_BATCH : ret, it_aio_one, &c, 0);
	nr = c.nr & (IT_AIO_BATCH * 2 - 1);
	/* none of a traced file (-d, -f): no record, as for the other syscalls */
	if (!nr)
		return 0;
	/*
	 * Two tests: clang folds `!nr || nr > BATCH` into one on nr - 1, whose
	 * bounds the verifier before 6.12's linked scalars does not carry back
	 * to nr (the size below: "R2 min value is outside...", seen on 6.12).
	 */
	barrier_var(nr);
	if (nr > IT_AIO_BATCH)
		return 0;
	r->nr = nr;
	r->hdr.size = IT_AIO_SIZE(nr);
	if (bpf_ringbuf_output(&events, r, IT_AIO_SIZE(nr), it_wake_flags()))
		it_drop(IT_L_SYSCALL, IT_DROP_RINGBUF);
	return 0;
}

/* IT_OP_* of a traced fd syscall. */
static __always_inline u32 it_sys_op(u32 sys)
{
	switch (sys) {
	case IT_SYS_READ:
	case IT_SYS_PREAD64:
	case IT_SYS_READV:
	case IT_SYS_PREADV:
	case IT_SYS_PREADV2:
		return IT_OP_READ;
	case IT_SYS_FSYNC:
	case IT_SYS_FDATASYNC:
	case IT_SYS_SYNC_FILE_RANGE:
		return IT_OP_SYNC;
	default:
		return IT_OP_WRITE;
	}
}

/*
 * The fd-based syscalls, libaio's and io_uring_enter on raw_syscalls
 * sys_enter / sys_exit: one pair of programs for all of them. The kernel runs them for
 * every syscall of the system, and they leave at once for a number the
 * table sys_of_nr (config.bpf.h, filled by the loader) does not name; one
 * pair instead of a pair per syscall is also 2 links to attach and detach
 * instead of 34 (each syscall tracepoint link waits a grace period of its
 * own on detach).
 * A 32-bit task's numbers are another table's: its syscalls are not traced
 * (nor were they by the per-syscall tracepoints): checked at enter, after the
 * file check (an exit finds nothing in flight for them).
 */
static __always_inline u32 it_traced_sys(u64 nr)
{
	return nr < IT_SYSNR_MAX ? sys_of_nr[nr] : 0;
}

/* Enter of traced syscall sys (enum it_sys) with its arguments x. */
static __always_inline int it_sys_args_enter(u32 sys, const struct it_sysargs *x)
{
	s64 pos = -1; /* < 0: the file position */
	u64 bytes = 0; /* 0: the bytes transferred (the return value) */
	u64 vlen = 0; /* argument 1 is an iovec array of vlen (argument 2), not the buffer */
	u32 op;

	switch (sys) {
	case IT_SYS_READ: /* read(fd, buf, count) */
	case IT_SYS_WRITE:
		bytes = x->a[2];
		break;
	case IT_SYS_PREAD64: /* pread64(fd, buf, count, pos) */
	case IT_SYS_PWRITE64:
		bytes = x->a[2];
		pos = x->a[3];
		break;
	case IT_SYS_READV: /* readv(fd, vec, vlen) */
	case IT_SYS_WRITEV:
		vlen = x->a[2];
		break;
	/* preadv(fd, vec, vlen, pos_l, pos_h): on 64-bit pos_l is the whole offset;
	 * preadv2(..., flags): pos -1 is the file position */
	case IT_SYS_PREADV:
	case IT_SYS_PWRITEV:
	case IT_SYS_PREADV2:
	case IT_SYS_PWRITEV2:
		pos = x->a[3];
		vlen = x->a[2];
		break;
	case IT_SYS_FSYNC:
	case IT_SYS_FDATASYNC:
		pos = 0;
		break;
	case IT_SYS_SYNC_FILE_RANGE: /* sync_file_range(fd, offset, nbytes, flags) */
		pos = x->a[1];
		bytes = x->a[2];
		break;
	case IT_SYS_IO_SUBMIT: /* io_submit(ctx, nr, iocbpp) */
		return it_aio_enter(sys, x->a[2], x);
	case IT_SYS_IO_GETEVENTS: /* io_getevents(ctx, min_nr, nr, events, timeout) */
	case IT_SYS_IO_PGETEVENTS: /* io_pgetevents(..., usig) */
		return it_aio_enter(sys, x->a[3], x);
	default: /* io_uring_enter: its exit only */
		return 0;
	}
	op = it_sys_op(sys);
	return it_fd_enter(sys, op, x->a[0], pos, bytes, op == IT_OP_SYNC ? 0 : x->a[1], vlen, x);
}

static __always_inline int it_sys_enter(struct pt_regs *regs, long id, const bool btf)
{
	struct it_sysargs x;
	u32 sys;

	if (empty_progs)
		return 0;
	sys = it_traced_sys(id);
	if (!sys--)
		return 0;
	x.a[0] = IT_SYS_ARG(btf, regs, 0);
	x.a[1] = IT_SYS_ARG(btf, regs, 1);
	x.a[2] = IT_SYS_ARG(btf, regs, 2);
	x.a[3] = IT_SYS_ARG(btf, regs, 3);
	x.regs = regs;
	x.btf = btf;
	return it_sys_args_enter(sys, &x);
}

/*
 * The libaio exits walk the iocbs with bpf_loop (5.17): a program of their
 * own, loaded only where the kernel has it and reached by tail call from
 * sys_exit through this array; elsewhere the table does not name the libaio
 * calls (src/load/syscalls.c).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u32);
} aio_exit_prog SEC(".maps");

/* The submitting thread leaves io_uring_enter: bios it queues are no longer its requests'. */
static __always_inline int it_uring_enter_exit(void)
{
	struct thread_state *st = it_state();

	if (st)
		st->uring_req = 0;
	return 0;
}

/* libaio's calls, whose exits walk the iocbs (bpf_loop). */
static __always_inline bool it_is_aio(u32 sys)
{
	return sys == IT_SYS_IO_SUBMIT || sys == IT_SYS_IO_GETEVENTS || sys == IT_SYS_IO_PGETEVENTS;
}

/* The exit of traced syscall sys (not libaio's) whose first argument was fd. */
static __always_inline int it_sys_exit_of(u32 sys, u32 fd, s64 ret)
{
	if (sys == IT_SYS_IO_URING_ENTER)
		return it_uring_enter_exit();
	return it_fd_exit(sys, fd, ret);
}

static __always_inline int it_sys_exit(u64 *ctx, const bool btf)
{
	struct pt_regs *regs = (struct pt_regs *)ctx[0];
	u32 sys;

	if (empty_progs)
		return 0;
	sys = it_traced_sys(IT_SYS_NR(btf, regs));
	if (!sys--)
		return 0;
	if (it_is_aio(sys)) {
		bpf_tail_call(ctx, &aio_exit_prog, 0);
		return 0; /* no libaio program: the table named no libaio call */
	}
	return it_sys_exit_of(sys, IT_SYS_ARG0_AT_EXIT(btf, regs), ctx[1]);
}

/*
 * Reached only by sys_exit's tail call, for a libaio number it traced: the
 * table and compat checks were its; the number says which libaio call.
 */
static __always_inline int it_aio_exit_ctx(u64 *ctx, const bool btf)
{
	struct pt_regs *regs = (struct pt_regs *)ctx[0];
	u64 nr = IT_SYS_NR(btf, regs);

	return nr < IT_SYSNR_MAX ? it_aio_exit(sys_of_nr[nr] - 1, ctx[1]) : 0;
}

/*
 * raw_syscalls: sys_enter(regs, id), sys_exit(regs, ret). Programs:
 * btf_sys_enter, raw_sys_enter, btf_sys_exit, raw_sys_exit, btf_aio_exit, raw_aio_exit.
 */
IT_TP_BOTH(sys_enter, it_sys_enter((struct pt_regs *)ctx[0], ctx[1], it_btf))
IT_TP_BOTH(sys_exit, it_sys_exit(ctx, it_btf))
/* loaded, never attached: the aio_exit_prog entry (same tracepoint, so tail calls allowed) */
IT_TP_PAIR(sys_exit, aio_exit, it_aio_exit_ctx(ctx, it_btf))

#endif /* IT_SYSCALL_BPF_H */
