/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Syscall layer where the kernel allows fentry (else kprobes): the fd
 * syscalls are traced where only file IO passes, in the file systems' and
 * block devices' ->read_iter / ->write_iter, vfs_fsync_range and
 * sync_file_range, and libaio's and io_uring_enter's exits on their syscall
 * functions. The raw_syscalls pair (syscall.bpf.h) is then not attached:
 * sockets, pipes, ttys, eventfds and every other syscall run no program.
 *
 * The record is the syscall's (IT_REC_SYSCALL, it_fd_exit_st): its name from
 * the number in the task's saved user registers (bpf_task_pt_regs, 5.15),
 * only for the fd syscalls of the table (io_uring workers, aio, splice,
 * sendfile and kernel-internal reads make none), its file from the call.
 * Nesting (overlayfs over ext4, an O_SYNC write's vfs_fsync_range, ext4's
 * buffered read in generic_file_read_iter) counts once, the outermost call:
 * a hook that finds a traced syscall in flight leaves, and only the exit of
 * the call that began it (st->fio_key) ends it.
 *
 * fentry programs bind one function each at load: the ->read_iter /
 * ->write_iter methods (one signature: struct kiocb *, struct iov_iter *)
 * share one body in slot programs (IT_FIO_SLOT) whose targets the loader sets
 * from its table (src/load/hooktab.c; src/load/methods.c, bpf_program__set_attach_target); the
 * kprobe variants are attached to their function by name.
 */
#ifndef IT_FILEIO_BPF_H
#define IT_FILEIO_BPF_H

#include "syscall.bpf.h"

/* include/linux/sched.h: a kernel thread, an io_uring worker (no syscall of their own) */
#define IT_PF_IO_WORKER 0x00000010
#define IT_PF_KTHREAD 0x00200000

/* What a hooked function stands for: which syscalls it may be the file IO of. */
enum it_fio_kind {
	IT_FIO_ITER, /* read, write, pread64, pwrite64, readv ... pwritev2 */
	IT_FIO_FSYNC, /* fsync, fdatasync */
	IT_FIO_SFR, /* sync_file_range */
};

static __always_inline bool it_fio_kind_of(u32 sys, u32 kind)
{
	if (kind == IT_FIO_ITER)
		return sys <= IT_SYS_PWRITEV2;
	if (kind == IT_FIO_FSYNC)
		return sys == IT_SYS_FSYNC || sys == IT_SYS_FDATASYNC;
	return sys == IT_SYS_SYNC_FILE_RANGE;
}

/*
 * The traced syscall (IT_SYS_* + 1) the current task is in, 0 when none:
 * not a user task's (kernel thread, io_uring worker), or a number the table
 * does not name. regs: the task's saved user registers.
 */
static __always_inline u32 it_fio_sys(struct task_struct *task, struct pt_regs **regs)
{
	struct pt_regs *r;

	if (task->flags & (IT_PF_KTHREAD | IT_PF_IO_WORKER))
		return 0;
	r = (struct pt_regs *)bpf_task_pt_regs(task);
	*regs = r;
	return it_compat_syscall(r, true) ? 0 : it_traced_sys(IT_SYS_NR(true, r));
}

/*
 * A hooked file IO call begins: f the file (btf: a BTF pointer), key what
 * its exit will show (the first argument; a kprobe's own slot number),
 * pos/nbytes the call's own offset and length (ITER: pos the kiocb's,
 * nbytes from the syscall's arguments).
 */
static __always_inline int it_fio_enter(struct file *f, u64 key, u32 kind, s64 pos, u64 nbytes,
					const bool btf)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct thread_state *st = it_state();
	struct it_file_id id;
	struct pt_regs *regs;
	u64 buf = 0, vlen = 0;
	u32 sys;

	if (st && st->in_sys) /* nested in a traced call: the outermost counts */
		return 0;
	sys = it_fio_sys(task, &regs);
	if (!sys-- || !it_fio_kind_of(sys, kind) || !it_task_ok())
		return 0;
	if (!it_file_check_in(f, &id, btf))
		return 0;
	if (kind == IT_FIO_ITER) {
		/* as the raw pair: read/write(fd, buf, count), pread64(..., pos); readv(fd, vec, vlen) */
		buf = IT_SYS_ARG(true, regs, 1);
		if (sys <= IT_SYS_PWRITE64)
			nbytes = IT_SYS_ARG(true, regs, 2);
		else
			vlen = IT_SYS_ARG(true, regs, 2);
	}
	/* the state looked up above, if any: one task-storage lookup per traced call */
	st = it_file_begin(task, st, f, &id, sys, it_sys_op(sys), pos < 0 ? 0 : pos, nbytes, buf,
			   vlen);
	if (st)
		st->fio_key = key;
	return 0;
}

/* The call that began the traced syscall ends: its record (syscall.bpf.h it_fd_exit_st). */
static __always_inline int it_fio_exit(u64 key, s64 ret)
{
	struct thread_state *st = it_state();

	if (!st || !st->in_sys || st->fio_key != key)
		return 0;
	st->fio_key = 0;
	return it_fd_exit_st(st, st->sys, IT_FD_ANY, ret);
}

/*
 * The slots' bodies, one BPF subprogram each (not inlined): the object holds
 * them once, not in 20 slots of four programs (~0.5 MiB of code that libbpf
 * copies at open whether or not a slot loads: most of the daemon's memory on
 * a kernel without fentry or kprobes, where none does). A loaded program gets
 * its copy at load (libbpf appends the subprogram), as inlined; the call
 * costs a few instructions a run.
 */
static __noinline int it_fio_iter_enter_btf(struct kiocb *iocb)
{
	return it_fio_enter(iocb->ki_filp, (u64)iocb, IT_FIO_ITER, iocb->ki_pos, 0, true);
}

static __noinline int it_fio_iter_enter_raw(struct kiocb *iocb, u64 key)
{
	return it_fio_enter(BPF_CORE_READ(iocb, ki_filp), key, IT_FIO_ITER,
			    BPF_CORE_READ(iocb, ki_pos), 0, false);
}

static __noinline int it_fio_exit_sub(u64 key, s64 ret)
{
	return it_fio_exit(key, ret);
}

/*
 * One ->read_iter / ->write_iter slot: fentry_fio_N, fexit_fio_N (key: the
 * kiocb), kprobe_fio_N, kretprobe_fio_N (key: N + 1; a kretprobe has no
 * arguments, so a method nested in itself ends the record at its inner
 * return: overlayfs over overlayfs on a kprobe-only kernel).
 */
#define IT_FIO_SLOT(n)                                                                 \
	SEC("fentry")                                                                  \
	int BPF_PROG(fentry_fio_##n, struct kiocb *iocb)                               \
	{                                                                              \
		return it_fio_iter_enter_btf(iocb);                                    \
	}                                                                              \
	SEC("fexit")                                                                   \
	int BPF_PROG(fexit_fio_##n, struct kiocb *iocb, struct iov_iter *it, long ret) \
	{                                                                              \
		return it_fio_exit_sub((u64)iocb, ret);                                \
	}                                                                              \
	SEC("kprobe")                                                                  \
	int BPF_KPROBE(kprobe_fio_##n, struct kiocb *iocb)                             \
	{                                                                              \
		return it_fio_iter_enter_raw(iocb, n + 1);                             \
	}                                                                              \
	SEC("kretprobe")                                                               \
	int BPF_KRETPROBE(kretprobe_fio_##n, long ret)                                 \
	{                                                                              \
		return it_fio_exit_sub(n + 1, ret);                                    \
	}

/* The slots' methods: the FIO_SLOT rows of src/load/hooktab.c's hook table */
IT_FIO_SLOT(0)
IT_FIO_SLOT(1)
IT_FIO_SLOT(2)
IT_FIO_SLOT(3)
IT_FIO_SLOT(4)
IT_FIO_SLOT(5)
IT_FIO_SLOT(6)
IT_FIO_SLOT(7)
IT_FIO_SLOT(8)
IT_FIO_SLOT(9)
IT_FIO_SLOT(10)
IT_FIO_SLOT(11)
IT_FIO_SLOT(12)
IT_FIO_SLOT(13)
IT_FIO_SLOT(14)
IT_FIO_SLOT(15)
IT_FIO_SLOT(16)
IT_FIO_SLOT(17)
IT_FIO_SLOT(18)
IT_FIO_SLOT(19)

/* kprobe keys past the slots' */
#define IT_FIO_KEY_FSYNC 101
#define IT_FIO_KEY_SFR 102

/*
 * vfs_fsync_range(file, start, end, datasync): fsync and fdatasync (an O_SYNC
 * write's own is nested in it). Programs: fentry_vfs_fsync_range,
 * fexit_vfs_fsync_range, kprobe_vfs_fsync_range, kretprobe_vfs_fsync_range.
 */
SEC("fentry/vfs_fsync_range")
int BPF_PROG(fentry_vfs_fsync_range, struct file *file)
{
	return it_fio_enter(file, (u64)file, IT_FIO_FSYNC, 0, 0, true);
}

SEC("fexit/vfs_fsync_range")
int BPF_PROG(fexit_vfs_fsync_range, struct file *file, loff_t start, loff_t end, int datasync,
	     int ret)
{
	return it_fio_exit((u64)file, ret);
}

SEC("kprobe/vfs_fsync_range")
int BPF_KPROBE(kprobe_vfs_fsync_range, struct file *file)
{
	return it_fio_enter(file, IT_FIO_KEY_FSYNC, IT_FIO_FSYNC, 0, 0, false);
}

SEC("kretprobe/vfs_fsync_range")
int BPF_KRETPROBE(kretprobe_vfs_fsync_range, int ret)
{
	return it_fio_exit(IT_FIO_KEY_FSYNC, ret);
}

/*
 * sync_file_range(file, offset, nbytes, flags), the syscall's own function.
 * Programs: fentry_sync_file_range, fexit_sync_file_range,
 * kprobe_sync_file_range, kretprobe_sync_file_range.
 */
SEC("fentry/sync_file_range")
int BPF_PROG(fentry_sync_file_range, struct file *file, loff_t offset, loff_t nbytes)
{
	return it_fio_enter(file, (u64)file, IT_FIO_SFR, offset, nbytes, true);
}

SEC("fexit/sync_file_range")
int BPF_PROG(fexit_sync_file_range, struct file *file, loff_t offset, loff_t nbytes,
	     unsigned int flags, int ret)
{
	return it_fio_exit((u64)file, ret);
}

SEC("kprobe/sync_file_range")
int BPF_KPROBE(kprobe_sync_file_range, struct file *file, loff_t offset, loff_t nbytes)
{
	return it_fio_enter(file, IT_FIO_KEY_SFR, IT_FIO_SFR, offset, nbytes, false);
}

SEC("kretprobe/sync_file_range")
int BPF_KRETPROBE(kretprobe_sync_file_range, int ret)
{
	return it_fio_exit(IT_FIO_KEY_SFR, ret);
}

/*
 * libaio and io_uring_enter on their syscall functions (__x64_sys_io_submit
 * ...: the loader adds the architecture's prefix and sets the target). The
 * arguments come from the task's user registers, as on the raw pair. A
 * 32-bit task's calls go through other functions (__ia32_compat_sys_...).
 */
static __always_inline int it_fio_aio_enter(u32 sys, int arg)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct it_sysargs x = { .regs = regs, .btf = true };
	struct thread_state *st;

	it_aio_enter(sys, arg == 2 ? IT_SYS_ARG(true, regs, 2) : IT_SYS_ARG(true, regs, 3), &x);
	st = it_state();
	if (st)
		st->fio_key = 0; /* no file IO call of its own ends it */
	return 0;
}

/* fentry_fio_<sys>, fexit_fio_<sys>, kprobe_fio_<sys>, kretprobe_fio_<sys> */
#define IT_FIO_AIO(name, sys, arg)                           \
	SEC("fentry")                                        \
	int BPF_PROG(fentry_fio_##name)                      \
	{                                                    \
		return it_fio_aio_enter(sys, arg);           \
	}                                                    \
	SEC("fexit")                                         \
	int BPF_PROG(fexit_fio_##name, void *regs, long ret) \
	{                                                    \
		return it_aio_exit(sys, ret);                \
	}                                                    \
	SEC("kprobe")                                        \
	int BPF_KPROBE(kprobe_fio_##name)                    \
	{                                                    \
		return it_fio_aio_enter(sys, arg);           \
	}                                                    \
	SEC("kretprobe")                                     \
	int BPF_KRETPROBE(kretprobe_fio_##name, long ret)    \
	{                                                    \
		return it_aio_exit(sys, ret);                \
	}

/* io_submit(ctx, nr, iocbpp); io_getevents(ctx, min_nr, nr, events, timeout); io_pgetevents */
IT_FIO_AIO(io_submit, IT_SYS_IO_SUBMIT, 2)
IT_FIO_AIO(io_getevents, IT_SYS_IO_GETEVENTS, 3)
IT_FIO_AIO(io_pgetevents, IT_SYS_IO_PGETEVENTS, 3)

/* fexit_fio_io_uring_enter, kretprobe_fio_io_uring_enter */
SEC("fexit")
int BPF_PROG(fexit_fio_io_uring_enter)
{
	return it_uring_enter_exit();
}

SEC("kretprobe")
int BPF_KRETPROBE(kretprobe_fio_io_uring_enter)
{
	return it_uring_enter_exit();
}

#endif /* IT_FILEIO_BPF_H */
