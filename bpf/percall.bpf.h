/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The syscall layer's per-syscall tracepoint programs (--syscall-hooks
 * percall, the default where neither fentry nor kprobes work): the same
 * records as the raw_syscalls pair (syscall.bpf.h), from each traced
 * syscall's own sys_enter_NAME / sys_exit_NAME.
 */
#ifndef IT_PERCALL_BPF_H
#define IT_PERCALL_BPF_H

#include "syscall.bpf.h"

/*
 * Per-syscall tracepoints (syscalls/sys_enter_NAME, sys_exit_NAME): the other
 * way to the same records (--syscall-hooks, docs/hooks.md "The tax"). The
 * kernel runs them only for their own syscall, so every other syscall pays the
 * tracepoint work flag and a bitmap test, no program run; each run costs more
 * than a raw one (the perf syscall handler copies the arguments). Never for a
 * 32-bit syscall. The exit reads the call's fd from the task's saved registers
 * where the kernel has bpf_task_pt_regs (5.15).
 */
static __always_inline u32 it_percall_exit_fd(void)
{
	struct pt_regs *regs;

	if (!bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs) || !has_task_btf)
		return IT_FD_ANY;
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	return regs ? (u32)IT_SYS_ARG0_AT_EXIT(true, regs) : IT_FD_ANY;
}

static __always_inline int it_percall_enter(u32 sys, struct trace_event_raw_sys_enter *ctx)
{
	struct it_sysargs x;

	if (empty_progs)
		return 0;
	x.a[0] = ctx->args[0];
	x.a[1] = ctx->args[1];
	x.a[2] = ctx->args[2];
	x.a[3] = ctx->args[3];
	x.regs = NULL;
	x.btf = false;
	return it_sys_args_enter(sys, &x);
}

/*
 * The call's fd is read (bpf_task_pt_regs) only when the thread has this
 * syscall in flight: a pipe's, a socket's exit pays the state's lookup alone.
 */
static __always_inline int it_percall_exit(u32 sys, struct trace_event_raw_sys_exit *ctx)
{
	struct thread_state *st;

	if (empty_progs)
		return 0;
	if (it_is_aio(sys))
		return it_aio_exit(sys, ctx->ret);
	st = it_sys_in_flight(sys);
	return st ? it_fd_exit_st(st, sys, it_percall_exit_fd(), ctx->ret) : 0;
}

/* pc_enter_NAME, pc_exit_NAME */
#define IT_PERCALL(name, sys)                                      \
	SEC("tp/syscalls/sys_enter_" #name)                        \
	int pc_enter_##name(struct trace_event_raw_sys_enter *ctx) \
	{                                                          \
		return it_percall_enter(sys, ctx);                 \
	}                                                          \
	SEC("tp/syscalls/sys_exit_" #name)                         \
	int pc_exit_##name(struct trace_event_raw_sys_exit *ctx)   \
	{                                                          \
		return it_percall_exit(sys, ctx);                  \
	}

IT_PERCALL(read, IT_SYS_READ)
IT_PERCALL(write, IT_SYS_WRITE)
IT_PERCALL(pread64, IT_SYS_PREAD64)
IT_PERCALL(pwrite64, IT_SYS_PWRITE64)
IT_PERCALL(readv, IT_SYS_READV)
IT_PERCALL(writev, IT_SYS_WRITEV)
IT_PERCALL(preadv, IT_SYS_PREADV)
IT_PERCALL(pwritev, IT_SYS_PWRITEV)
IT_PERCALL(preadv2, IT_SYS_PREADV2)
IT_PERCALL(pwritev2, IT_SYS_PWRITEV2)
IT_PERCALL(fsync, IT_SYS_FSYNC)
IT_PERCALL(fdatasync, IT_SYS_FDATASYNC)
IT_PERCALL(sync_file_range, IT_SYS_SYNC_FILE_RANGE)
/* libaio: the exits walk the iocbs with bpf_loop (5.17), a hook of their own */
IT_PERCALL(io_submit, IT_SYS_IO_SUBMIT)
IT_PERCALL(io_getevents, IT_SYS_IO_GETEVENTS)
IT_PERCALL(io_pgetevents, IT_SYS_IO_PGETEVENTS)

SEC("tp/syscalls/sys_exit_io_uring_enter")
int pc_exit_io_uring_enter(struct trace_event_raw_sys_exit *ctx)
{
	return empty_progs ? 0 : it_uring_enter_exit();
}

#endif /* IT_PERCALL_BPF_H */
