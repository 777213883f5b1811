/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Load-time configuration: the rodata knobs the loader (src/core/loader.c)
 * sets before load — self, task, device and file filters, sampling and the
 * latency threshold, the record buffers' geometry and wake thresholds, the
 * sched layer's variant, the tracepoint signatures it read from BTF — and
 * the kernel constants the programs compare against.
 */
#ifndef IT_CONFIG_BPF_H
#define IT_CONFIG_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "iotracer.h"

/* Macros of the kernel's uapi headers, absent from vmlinux.h. */
#define S_IFMT 00170000
#define S_IFREG 0100000
#define S_IFBLK 0060000
#if defined(__TARGET_ARCH_arm64)
#define IT_O_DIRECT 0200000
#else
#define IT_O_DIRECT 040000
#endif

const volatile __u32 self_tgid; /* never trace ourselves */
const volatile __u8 filter_pid; /* use map pids */
const volatile __u8 filter_dev; /* use dev_list */
const volatile __u8 filter_file; /* use map files */
const volatile __u8 filter_comm;
const volatile __u8 filter_cgroup;
const volatile char target_comm[IT_COMM_LEN];
const volatile __u64 target_cgroup;
const volatile __u64 min_lat_ns; /* per-request records only at/above */
const volatile __u32 sample_n; /* records for 1 in N requests (0/1: all) */
const volatile __u64 wake_bytes; /* wake user space early above this fill */
const volatile __u8 sched_switch_has_state; /* tp arg prev_state exists (5.18+) */
const volatile __u8 blk_tp_has_queue; /* block rq tps take a request_queue first (< 5.11) */
const volatile __u8 blk_bio_tp_has_queue; /* same for the bio tps (separate: stable backports) */
const volatile __u8 uring_complete_has_cqe = 1; /* io_uring_complete(ctx, req, cqe) */
const volatile __u8 uring_complete_has_req = 1; /* io_uring_complete(ctx, req, ...) (5.18+) */
const volatile __u8 uring_submit_req_arg; /* io_uring_submit_sqe(ctx, req, ...) before 6.0: 1 */
/* Kernel features the loader probed (core_fixes.bpf.h says what replaces them). */
const volatile __u8 has_task_btf = 1; /* bpf_get_current_task_btf() (5.11) */
const volatile __u8 has_task_storage = 1; /* task storage in tracing programs (5.12) */
const volatile __u8 sched_counters; /* sched layer: task counters at syscall enter/exit */
const volatile __u8 sched_hooks; /* sched layer: sched_switch/wakeup attached (--sched-switch) */
/*
 * In-kernel histograms: needed when records are filtered (--sample,
 * --min-latency); when every request leaves a record the daemon builds the
 * same histograms from the records and the hooks skip the map update.
 */
const volatile __u8 kern_hists = 1;

/* Per-CPU record buffers (struct it_slot_pos in iotracer.h); sized by the loader. */
const volatile __u32 slot_mask; /* slots per CPU - 1; 0: ring buffer only */
const volatile __u32 slot_shift; /* log2(slots per CPU) */
const volatile __u64 slot_wake; /* records held by one CPU that wake user space */

/*
 * -d devices: fixed at load, so a list in rodata. For the usual one to a few
 * devices, two compares instead of a hash lookup, on every hook that filters.
 */
const volatile __u32 dev_list[IT_MAX_DEVS];
const volatile __u32 nr_dev_list;

#endif /* IT_CONFIG_BPF_H */
