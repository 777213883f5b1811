/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Configuration: the rodata knobs the loader (src/load/loader.c) sets before
 * load — self, the record buffers' geometry and wake thresholds, the sched
 * layer's variant, the tracepoint signatures it read from BTF —, the filters
 * (task, device, file, sampling, latency threshold), which are writable
 * globals a reload changes in place, and the kernel constants the programs
 * compare against.
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

const volatile __u32 self_tgid = 0; /* never trace ourselves */
const volatile __u8 page_shift = 12; /* log2 of the kernel's page size (arm64: 12, 14 or 16) */
/*
 * A thread's first syscall sequence number under this load: the loads of one
 * daemon << 40, so that a re-attach (SIGHUP) never hands out a (tid, seq) the
 * correlator already saw from the previous load (it joins blocks by it).
 */
const volatile __u64 seq_base = 0;
const volatile __u64 wake_bytes = 0; /* wake user space early above this fill */
const volatile __u8 sched_switch_has_state = 0; /* tp arg prev_state exists (5.18+) */
const volatile __u8 blk_tp_has_queue = 0; /* block rq tps take a request_queue first (< 5.11) */
const volatile __u8 blk_bio_tp_has_queue =
	0; /* same for the bio tps (separate: stable backports) */
const volatile __u8 uring_complete_has_cqe = 1; /* io_uring_complete(ctx, req, cqe) */
const volatile __u8 uring_complete_has_req = 1; /* io_uring_complete(ctx, req, ...) (5.18+) */
const volatile __u8 uring_submit_req_arg = 0; /* io_uring_submit_sqe(ctx, req, ...) before 6.0: 1 */
/* Kernel features the loader probed (core_fixes.bpf.h says what replaces them). */
const volatile __u8 has_task_btf = 1; /* bpf_get_current_task_btf() (5.11) */
const volatile __u8 has_task_storage = 1; /* task storage in tracing programs (5.12) */
const volatile __u8 has_loop = 1; /* bpf_loop() (5.17) */
const volatile __u8 sched_counters = 0; /* sched layer: task counters at syscall enter/exit */
const volatile __u8 want_iovecs = 0; /* host mode: vectored syscalls' first buffers (join key) */
/* records name their files (bpf/names.bpf.h): --file-names N > 0 */
const volatile __u8 names_on = 0;
/* IOTRACER_EMPTY_PROGS (bench's iotracer-empty): the syscall hooks' programs return at once */
const volatile __u8 empty_progs = 0;
const volatile __u8 insert_hooked = 0; /* block_rq_insert attached (--block-insert) */
const volatile __u8 nested_hooked = 0; /* the second block_rq_complete program attached */
const volatile __u8 sched_hooks =
	0; /* sched layer: sched_switch/wakeup attached (--sched-switch) */
/* the stack layer's block_bio_complete attached: upper bios are followed (stack.bpf.h) */
const volatile __u8 stk_hooked = 0;
/*
 * --blame: every block request leaves a record, whatever -m says (it_keep_block):
 * blame needs the fast ones as culprits; the daemon thins what it writes.
 */
const volatile __u8 keep_all_blocks = 0;
/* --writeback: enum it_wbmode (iotracer.h): how block writes name who dirtied their pages */
const volatile __u8 wb_mode = 0;
/* ns per jiffy (1e9 / CONFIG_HZ, read by the loader); 0: not known, no per-file dirty age */
const volatile __u32 jiffy_ns = 0;
/*
 * Tests only (IOTRACER_TEST_MISS_COMPLETION=N, docs/testing.md): the Nth
 * completion of a followed block request is not seen, as if no program had
 * run for it. 0 (always, outside tests): the verifier prunes the branch.
 */
const volatile __u32 test_miss_nth = 0;
__u32 test_completions = 0; /* followed completions counted for test_miss_nth */
/* The traced syscalls by number (IT_SYS_* + 1; 0: not traced): src/load/syscalls.c. */
const volatile __u8 sys_of_nr[IT_SYSNR_MAX] = {};

/* Per-CPU record buffers (struct it_slot_pos in iotracer.h); sized by the loader. */
const volatile __u32 slot_mask = 0; /* slots per CPU - 1; 0: ring buffer only */
const volatile __u32 slot_shift = 0; /* log2(slots per CPU) */
const volatile __u64 slot_wake = 0; /* records held by one CPU that wake user space */
/* The histograms' indices (maps hist_keys, hists): 1 << hist_shift, at most IT_HIST_KEYS. */
const volatile __u32 hist_shift = 8;
/* The block aggregation's indices (maps agg_names, agg): 1 << agg_shift, at most IT_AGG_KEYS. */
const volatile __u32 agg_shift = 0;

/*
 * The filters, which a reload (SIGHUP) changes in place under attached
 * programs: writable globals (.bss), set by src/load/filters.c after load. A
 * global is read like rodata (one load from a map value the verifier knows,
 * no lookup call), only without the verifier's dead-code pruning of an
 * unused filter: a load and a branch, measured in docs/config.md.
 */
volatile __u8 filter_pid = 0; /* use map pids */
volatile __u8 filter_dev = 0; /* use dev_list[dev_cur] */
volatile __u8 filter_file = 0; /* use map files */
volatile __u8 filter_comm = 0;
volatile __u8 filter_cgroup = 0;
volatile char target_comm[IT_COMM_LEN] = {};
/*
 * --cgroup subtrees: entries [cg_cur * IT_MAX_CGROUPS, + nr_cgroup_list[cg_cur])
 * of map "cgroups" (filter.bpf.h); double-buffered like the device list.
 */
volatile __u32 nr_cgroup_list[2] = {};
volatile __u32 cg_cur = 0;
/* In-kernel aggregation of block requests (agg.bpf.h): IT_AGG_* bits, 0: off. */
volatile __u8 agg_keys = 0;
volatile __u64 min_lat_ns = 0; /* per-request records only at/above */
/*
 * Set by the loader once every hook is attached, to ~0 before it detaches: a
 * syscall whose exit went unseen counts as missed only if it entered inside
 * that window (one in flight while programs attach or detach is no loss).
 */
volatile __u64 armed_ns = 0;
volatile __u32 sample_n = 0; /* records for 1 in N requests (0/1: all) */
/*
 * Bumped by user space when it forgot names (src/service/dnames.c: it deletes
 * them from map "named" first): every thread's and CPU's last-named file
 * (names.bpf.h) is looked up in the map again.
 */
volatile __u32 name_gen = 0;
/*
 * In-kernel histograms: needed when records are filtered (--sample,
 * --min-latency); when every request leaves a record the daemon builds the
 * same histograms from the records and the hooks skip the map update.
 */
volatile __u8 kern_hists = 0;
/*
 * -d devices: for the usual one to a few devices, two compares instead of a
 * hash lookup, on every hook that filters. Two copies: a reload writes the
 * idle one, then flips dev_cur, so a hook never sees a half-written list.
 */
volatile __u32 dev_list[2][IT_MAX_DEVS] = {};
volatile __u32 nr_dev_list[2] = {};
volatile __u32 dev_cur = 0;

#endif /* IT_CONFIG_BPF_H */
