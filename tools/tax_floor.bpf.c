// SPDX-License-Identifier: GPL-2.0
/*
 * tax_floor: empty programs on the hooks a syscall layer could use on a
 * kernel with tracepoints only (docs/bench.md, "Tax"): the raw_syscalls pair
 * (tp_btf), or a pair of classic per-syscall tracepoints for each of the 17
 * syscalls iotracer traces. What a syscall pays for being hooked at all.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/sys_enter")
int raw_enter(u64 *ctx)
{
	return 0;
}

SEC("tp_btf/sys_exit")
int raw_exit(u64 *ctx)
{
	return 0;
}

#define PERCALL(n)                       \
	SEC("tp/syscalls/sys_enter_" #n) \
	int percall_enter_##n(void *ctx) \
	{                                \
		return 0;                \
	}                                \
	SEC("tp/syscalls/sys_exit_" #n)  \
	int percall_exit_##n(void *ctx)  \
	{                                \
		return 0;                \
	}

PERCALL(read)
PERCALL(write)
PERCALL(pread64)
PERCALL(pwrite64)
PERCALL(readv)
PERCALL(writev)
PERCALL(preadv)
PERCALL(pwritev)
PERCALL(preadv2)
PERCALL(pwritev2)
PERCALL(fsync)
PERCALL(fdatasync)
PERCALL(sync_file_range)
PERCALL(io_submit)
PERCALL(io_getevents)
PERCALL(io_pgetevents)
PERCALL(io_uring_enter)
