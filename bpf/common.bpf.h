/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Maps, configuration and helpers shared by every layer of iotracer.bpf.c.
 * Kernel side only.
 */
#ifndef IT_COMMON_BPF_H
#define IT_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "iotracer.h"
#include "core_fixes.bpf.h"

#define S_IFMT 00170000
#define S_IFREG 0100000
#define S_IFBLK 0060000
#if defined(__TARGET_ARCH_arm64)
#define IT_O_DIRECT 0200000
#else
#define IT_O_DIRECT 040000
#endif

/* kfuncs that may be missing (weak: NULL there, and the branch is dead code) */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

/* ---- configuration, set by the loader before load ---- */
const volatile __u32 self_tgid; /* never trace ourselves */
const volatile __u8 filter_pid; /* use map pids */
const volatile __u8 filter_dev; /* use map devs */
const volatile __u8 filter_file; /* use map files */
const volatile __u8 filter_comm;
const volatile __u8 filter_cgroup;
const volatile char target_comm[IT_COMM_LEN];
const volatile __u64 target_cgroup;
const volatile __u64 min_lat_ns; /* per-request records only at/above */
const volatile __u32 sample_n; /* records for 1 in N requests (0/1: all) */
const volatile __u64 wake_bytes; /* wake user space early above this fill */
const volatile __u8 sched_switch_has_state; /* tp arg prev_state exists (5.18+) */
const volatile __u8 blk_tp_has_queue; /* block tps take a request_queue first (< 5.11) */
const volatile __u8 uring_complete_has_cqe = 1; /* io_uring_complete(ctx, req, cqe) */
const volatile __u8 sched_counters; /* sched layer: task counters at syscall enter/exit */
const volatile __u8 sched_hooks; /* sched layer: sched_switch/wakeup attached (--sched-switch) */
/*
 * In-kernel histograms: needed when records are filtered (--sample,
 * --min-latency); when every request leaves a record the daemon builds the
 * same histograms from the records and the hooks skip the map update.
 */
const volatile __u8 kern_hists = 1;

/* ---- maps ---- */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20); /* resized by the loader */
} events SEC(".maps");

/* Per-CPU record buffers (struct it_slot_pos in iotracer.h); sized by the loader. */
const volatile __u32 slot_mask; /* slots per CPU - 1; 0: ring buffer only */
const volatile __u32 slot_shift; /* log2(slots per CPU) */
const volatile __u64 slot_wake; /* records held by one CPU that wake user space */

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

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, u32);
	__type(value, u8);
} pids SEC(".maps");

/*
 * -d devices: fixed at load, so a list in rodata. For the usual one to a few
 * devices, two compares instead of a hash lookup, on every hook that filters.
 */
const volatile __u32 dev_list[IT_MAX_DEVS];
const volatile __u32 nr_dev_list;

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
 * and block hooks learn about it.
 */
struct thread_state {
	u64 seq; /* traced syscalls so far */
	u64 enter_ns;
	u64 offset;
	u64 bytes;
	u64 ino;
	u64 first_q_ns;
	u64 vfs_ns;
	u64 vfs_enter_ns;
	u64 offcpu_ns;
	u64 offcpu_blocked_ns;
	u64 switch_out_ns;
	u64 sw0, pre0, rq0; /* task counters at syscall enter (sched_counters) */
	u64 uring_req; /* io_kiocb being submitted by this thread */
	u64 wb_ino; /* inode under flusher writeback by this thread */
	u64 user_ptr; /* io_submit: iocb **; io_getevents: io_event * */
	u32 dev;
	u32 flags;
	u32 nr_bios;
	u32 cache_miss_pages;
	u32 dio_count;
	u32 waker_tid;
	u16 sys; /* enum it_sys of the syscall in flight */
	u8 in_sys; /* a traced syscall is in flight */
	u8 op;
	u8 out_blocked;
	u8 in_uring_enter;
	char waker_comm[IT_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_state);
} tstate SEC(".maps");

/* Zeroed value to create histogram entries without using the stack. */
static struct it_hist_val zero_hist;

/* ---- helpers ---- */

static __always_inline void it_drop(u32 layer, u32 kind)
{
	u32 idx = layer * IT_DROP_KINDS + kind;
	u64 *v = bpf_map_lookup_elem(&drops, &idx);

	if (v)
		__sync_fetch_and_add(v, 1); /* programs can nest on one CPU */
}

/*
 * Where a record is being written: a slot of this CPU's buffer (pos set) or
 * the shared ring buffer (pos NULL). See struct it_slot_pos.
 */
struct it_res {
	struct it_slot_pos *pos;
	u64 head;
};

/*
 * Never wake user space per record (DESIGN principle 4): the daemon drains
 * on a timer, and is woken early only once the ring is filling up.
 */
static __always_inline u64 it_wake_flags(void)
{
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wake_bytes)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

/* This CPU's next free slot, claimed; NULL when busy, full or off. */
static __always_inline void *it_slot_claim(struct it_res *res)
{
	u32 cpu = bpf_get_smp_processor_id(), idx;
	struct it_slot_pos *p = bpf_map_lookup_elem(&slot_pos, &cpu);
	void *s = NULL;
	u64 h;

	if (!p)
		return NULL;
	/* xchg: a program preempted or interrupted on this CPU keeps it */
	if (__sync_lock_test_and_set(&p->busy, 1))
		return NULL;
	h = p->head;
	if (h - *(volatile u64 *)&p->tail <= slot_mask) {
		idx = (cpu << slot_shift) | (h & slot_mask);
		s = bpf_map_lookup_elem(&slots, &idx);
	}
	if (!s) {
		p->busy = 0;
		return NULL;
	}
	res->head = h;
	res->pos = p;
	return s;
}

static __always_inline void *it_reserve(struct it_res *res, u32 size, u32 layer)
{
	void *p = NULL;

	res->pos = NULL;
	if (slot_mask && size <= IT_SLOT_SIZE)
		p = it_slot_claim(res);
	if (!p)
		p = bpf_ringbuf_reserve(&events, size, 0);
	if (!p)
		it_drop(layer, IT_DROP_RINGBUF);
	return p;
}

static __always_inline void it_submit(struct it_res *res, void *rec)
{
	struct it_slot_pos *p = res->pos;

	if (!p) {
		bpf_ringbuf_submit(rec, it_wake_flags());
		return;
	}
	/*
	 * Publish. Only the claimer writes head, so no atomic is needed for the
	 * count; what matters is that the record's stores are visible before
	 * head. x86 is TSO: a plain store is a release, and unlike a locked add
	 * it does not wait for the record's stores to leave the store buffer
	 * (cache misses on the slot, ~100-300 ns here: docs/bench.md, "Fourth
	 * round"). Elsewhere the atomic add is the release.
	 */
#if defined(__TARGET_ARCH_x86)
	asm volatile("" ::: "memory"); /* the compiler keeps the record's stores before */
	*(volatile u64 *)&p->head = res->head + 1;
#else
	__sync_fetch_and_add(&p->head, 1);
#endif
	p->busy = 0;
	/* half full: wake user space once (the daemon drains on a timer otherwise) */
	if (res->head + 1 - *(volatile u64 *)&p->tail == slot_wake) {
		struct it_hdr w = { .type = IT_REC_WAKE, .size = sizeof(w) };

		bpf_ringbuf_output(&events, &w, sizeof(w), BPF_RB_FORCE_WAKEUP);
	}
}

static __always_inline u32 it_log2(u64 v)
{
	u32 r = 0, shift;

	shift = (v > 0xffffffffULL) << 5;
	v >>= shift;
	r |= shift;
	shift = (v > 0xffff) << 4;
	v >>= shift;
	r |= shift;
	shift = (v > 0xff) << 3;
	v >>= shift;
	r |= shift;
	shift = (v > 0xf) << 2;
	v >>= shift;
	r |= shift;
	shift = (v > 0x3) << 1;
	v >>= shift;
	r |= shift;
	r |= (v >> 1);
	return r;
}

static __always_inline void it_hist_slot(struct it_hist *h, u64 ns)
{
	u32 slot = it_log2(ns);

	/*
	 * The 6.1 verifier cannot bound it_log2()'s OR chain, and clang folds a
	 * plain mask into it: hide the value from the optimizer, then mask.
	 */
	asm volatile("" : "+r"(slot));
	slot &= IT_HIST_SLOTS - 1;
	/* this CPU's copy: plain adds (a nested update on this CPU may be lost) */
	h->slots[slot]++;
	h->count++;
	h->sum_ns += ns;
}

/*
 * Atomic although per CPU: a completion in an interrupt may nest inside a
 * completion program counting on this CPU, and a plain += would lose one of
 * the two increments (a false block.missed).
 */
static __always_inline void it_count(u32 idx)
{
	u64 *v = bpf_map_lookup_elem(&counters, &idx);

	if (v)
		__sync_fetch_and_add(v, 1);
}

static __always_inline struct it_hist_val *it_hist_get(u32 dev, u32 layer, u32 op, u32 kind)
{
	struct it_hist_key key = { .dev = dev, .layer = layer, .op = op, .kind = kind };
	struct it_hist_val *v;

	v = bpf_map_lookup_elem(&hists, &key);
	if (v)
		return v;
	bpf_map_update_elem(&hists, &key, &zero_hist, BPF_NOEXIST);
	v = bpf_map_lookup_elem(&hists, &key);
	if (!v)
		it_drop(layer, IT_DROP_HIST);
	return v;
}

/* Should a finished request of this latency produce a per-request record? */
static __always_inline bool it_keep(u32 flags, u64 lat)
{
	return (flags & IT_F_SAMPLED) && lat >= min_lat_ns;
}

/* Sampling decision, taken once per request at its start. */
static __always_inline u32 it_sample_flag(void)
{
	u32 zero = 0;
	u64 *c;

	if (sample_n <= 1)
		return IT_F_SAMPLED;
	c = bpf_map_lookup_elem(&sample_ctr, &zero);
	if (!c)
		return 0;
	*c += 1;
	return (*c % sample_n) == 0 ? IT_F_SAMPLED : 0;
}

static __always_inline void it_hdr_init(struct it_hdr *h, u16 type, u16 size)
{
	h->type = type;
	h->size = size;
	h->cpu = bpf_get_smp_processor_id();
}

static __always_inline void it_fill_task(struct it_task *t)
{
	u64 id = bpf_get_current_pid_tgid();

	t->pid = id >> 32;
	t->tid = (u32)id;
	t->cgroup_id = bpf_get_current_cgroup_id();
	bpf_get_current_comm(t->comm, sizeof(t->comm));
}

/* Task filters on the current thread: self, pid, comm, cgroup. */
static __always_inline bool it_task_ok(void)
{
	u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (tgid == self_tgid)
		return false;
	if (filter_pid && !bpf_map_lookup_elem(&pids, &tgid))
		return false;
	if (filter_comm) {
		char comm[IT_COMM_LEN];

		bpf_get_current_comm(comm, sizeof(comm));
		for (int i = 0; i < IT_COMM_LEN; i++) {
			if (comm[i] != target_comm[i])
				return false;
			if (!comm[i])
				break;
		}
	}
	if (filter_cgroup && bpf_get_current_cgroup_id() != target_cgroup)
		return false;
	return true;
}

static __always_inline bool it_dev_listed(u32 dev)
{
	for (u32 i = 0; i < IT_MAX_DEVS; i++) {
		if (i >= nr_dev_list)
			return false;
		if (dev_list[i] == dev)
			return true;
	}
	return false;
}

static __always_inline bool it_dev_ok(u32 dev)
{
	return !filter_dev || it_dev_listed(dev);
}

/*
 * Per-request state in an LRU hash keyed by a kernel address the kernel
 * recycles (a bio, an io_kiocb). The entry is not deleted when its request
 * ends but marked dead (live = 0), and the next request at that address
 * overwrites it in place: in the steady state no update or delete, which take
 * IRQ-saving spin locks (hash bucket, LRU list), only a lock-free lookup.
 * `val` is a struct with a u8 `live`; the macro sets it.
 */
#define IT_SLOT_PUT(map, key, val, layer)                                \
	({                                                               \
		typeof(val) *_p = bpf_map_lookup_elem(map, key);         \
		(val).live = 1;                                          \
		if (_p)                                                  \
			*_p = (val);                                     \
		else if (bpf_map_update_elem(map, key, &(val), BPF_ANY)) \
			it_drop(layer, IT_DROP_INFLIGHT);                \
	})

/* The live entry of `key` (a u64 lvalue, 0: none) as a `type *`, or NULL. */
#define IT_SLOT_GET(map, key, type)                                         \
	({                                                                  \
		type *_v = (key) ? bpf_map_lookup_elem(map, &(key)) : NULL; \
		_v && _v->live ? _v : NULL;                                 \
	})

static __always_inline struct thread_state *it_state(void)
{
	return bpf_task_storage_get(&tstate, bpf_get_current_task_btf(), 0, 0);
}

/*
 * A tracepoint hook as two programs, tp_btf (preferred) and raw_tp (the
 * fallback), named btf_<name> and raw_<name>; the loader autoloads one.
 * `call` sees `u64 *ctx` and `it_btf` (true in the tp_btf program: its
 * pointer arguments can be read with IT_RD).
 */
#define IT_TP_PAIR(tp, name, call)         \
	SEC("tp_btf/" #tp)                 \
	int btf_##name(u64 *ctx)           \
	{                                  \
		const bool it_btf = true;  \
		(void)it_btf;              \
		return call;               \
	}                                  \
	SEC("raw_tp/" #tp)                 \
	int raw_##name(u64 *ctx)           \
	{                                  \
		const bool it_btf = false; \
		(void)it_btf;              \
		return call;               \
	}
#define IT_TP_BOTH(tp, call) IT_TP_PAIR(tp, tp, call)

/*
 * A kernel function hook as fentry (preferred) and kprobe programs,
 * fentry_<fn> / kprobe_<fn>, or for its return fexit_<fn> / kretprobe_<fn>.
 * Arguments as in BPF_PROG / BPF_KPROBE.
 */
#define IT_FN_ENTRY(fn, call, args...)        \
	SEC("fentry/" #fn)                    \
	int BPF_PROG(fentry_##fn, ##args)     \
	{                                     \
		return call;                  \
	}                                     \
	SEC("kprobe/" #fn)                    \
	int BPF_KPROBE(kprobe_##fn, ##args)   \
	{                                     \
		return call;                  \
	}
#define IT_FN_EXIT(fn, call)                  \
	SEC("fexit/" #fn)                     \
	int BPF_PROG(fexit_##fn)              \
	{                                     \
		return call;                  \
	}                                     \
	SEC("kretprobe/" #fn)                 \
	int BPF_KRETPROBE(kretprobe_##fn)     \
	{                                     \
		return call;                  \
	}

#endif /* IT_COMMON_BPF_H */
