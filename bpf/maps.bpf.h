/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The maps every layer shares: the ring buffer and the per-CPU record
 * buffers (slots, slot_pos) that records leave through, drop and event
 * counters, the histograms, the pid and file filter sets, the sampling
 * counter, and the per-thread state in task storage (struct thread_state,
 * it_state()). A map of one layer, or of the block/driver pair
 * (request.bpf.h), is defined with the code that uses it.
 */
#ifndef IT_MAPS_BPF_H
#define IT_MAPS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "iotracer.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20); /* resized by the loader */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* possible CPUs << slot_shift */
	__type(key, u32);
	__type(value, struct it_slot);
} slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* possible CPUs */
	__type(key, u32);
	__type(value, struct it_slot_pos);
} slot_pos SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, IT_NR_DROPS);
	__type(key, u32);
	__type(value, u64);
} drops SEC(".maps");

/*
 * Per CPU, so no atomics; values are 2.6 KB per CPU: allocate on first use,
 * not 1024 up front. User space sums the CPUs.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1024);
	__type(key, struct it_hist_key);
	__type(value, struct it_hist_val);
} hists SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, IT_NR_COUNTERS);
	__type(key, u32);
	__type(value, u64);
} counters SEC(".maps");

/*
 * -p pids; the value is the generation that added them (src/load/filters.c):
 * during a reload the old and the new set (64 each) are both in.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 128);
	__type(key, u32);
	__type(value, u8);
} pids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct it_file_key);
	__type(value, u8);
} files SEC(".maps");

/* Per-CPU counter for 1-in-N sampling. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} sample_ctr SEC(".maps");

/*
 * Per-thread state, in task local storage: cheaper than a tid-keyed hash and
 * freed with the task. Holds the syscall in flight and what the fs, sched
 * and block hooks learn about it. Reached through it_state() and friends
 * (core_fixes.bpf.h: kernels without task storage for tracing programs get
 * a hash keyed by thread id instead).
 */
struct thread_state {
	u64 seq; /* traced syscalls so far */
	u64 enter_ns;
	u64 offset;
	u64 bytes;
	u64 ino;
	u64 first_q_ns;
	u64 vfs_ns;
	u64 fio_key; /* fileio.bpf.h: what the exit of the file IO call that began it shows */
	u64 offcpu_ns;
	u64 offcpu_blocked_ns;
	u64 switch_out_ns;
	u64 sw0, pre0, rq0; /* task counters at syscall enter (sched_counters) */
	u64 uring_req; /* io_kiocb being submitted by this thread */
	u64 wb_ino; /* inode under flusher writeback by this thread */
	u64 user_ptr; /* io_submit: iocb **; io_getevents: io_event * */
	struct it_bufs bufs; /* fd read/write: the user buffer(s) */
	u32 dev;
	u32 flags;
	u32 nr_bios;
	u32 cache_miss_pages;
	u32 dio_count;
	u32 waker_tid;
	u32 fd; /* the fd syscall in flight's fd: its exit must name the same one */
	u16 sys; /* enum it_sys of the syscall in flight */
	u8 in_sys; /* a traced syscall is in flight */
	u8 op;
	u8 out_blocked;
	u8 in_uring_enter;
	char waker_comm[IT_COMM_LEN];
	/* the last file this thread's records named (names.bpf.h it_name_file) */
	u64 name_ino;
	u32 name_dev;
	u32 name_gen; /* name_gen when it was checked */
	u8 name_bdev;
	u8 name_left; /* calls on it before its name is checked again */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_state);
} tstate SEC(".maps");

#endif /* IT_MAPS_BPF_H */
