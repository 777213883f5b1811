/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The record path. A finished request's record is reserved in a slot of this
 * CPU's buffer or, when that is off, busy or full, in the shared ring buffer
 * (it_reserve), filled in place and published (it_submit). What is lost is
 * counted: a record that finds no room in `drops` (it_drop), block requests
 * issued and completed in `counters` (it_count), whose difference is the
 * completions no program saw. Also here: whether a request leaves a record
 * at all (sampling at its start, --min-latency at its end), and the header
 * and task every record carries.
 */
#ifndef IT_RECORD_BPF_H
#define IT_RECORD_BPF_H

#include "config.bpf.h"
#include "maps.bpf.h"
#include "core_fixes.bpf.h"

/* This CPU's drop and event counters (struct it_cpu_counts), or NULL. */
static __always_inline struct it_cpu_counts *it_cpu_counts(void)
{
	u32 cpu = bpf_get_smp_processor_id();

	return bpf_map_lookup_elem(&cpu_counts, &cpu);
}

static __always_inline void it_drop(u32 layer, u32 kind)
{
	struct it_cpu_counts *c = it_cpu_counts();
	u32 idx = layer * IT_DROP_KINDS + kind;

	if (c && idx < IT_NR_DROPS)
		__sync_fetch_and_add(&c->drops[idx], 1); /* programs can nest on one CPU */
}

/*
 * counter idx (enum it_counter) += n. Atomic although per CPU: a completion in
 * an interrupt may nest inside a completion program counting on this CPU, and
 * a plain += would lose one of the two increments (a false block.missed).
 */
static __always_inline void it_count_n(u32 idx, u64 n)
{
	struct it_cpu_counts *c;

	if (!n || idx >= IT_NR_COUNTERS)
		return;
	c = it_cpu_counts();
	if (c)
		__sync_fetch_and_add(&c->counters[idx], n);
}

static __always_inline void it_count(u32 idx)
{
	it_count_n(idx, 1);
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
 * Never wake user space per record (tracers that stream one record per IO
 * to user space cut fio's IOPS to ~75 % at 12k IOPS, in-kernel histograms
 * kept ~100 %): the daemon drains on a timer, and is woken early only once
 * the ring is filling up.
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
	if (!it_slot_busy_claim(&p->busy))
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
	/*
	 * Written on every path: clang may load it before it_submit's branch on
	 * pos, and verifiers before 6.4 refuse a read of a stack slot no path
	 * wrote (seen: arm64 6.1, btf_block_rq_complete).
	 */
	res->head = 0;
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

/* Should a finished request of this latency produce a per-request record? */
static __always_inline bool it_keep(u32 flags, u64 lat)
{
	return (flags & IT_F_SAMPLED) && lat >= min_lat_ns;
}

/*
 * A block request's record: under --blame (keep_all_blocks) -m is the daemon's
 * to apply (src/service/daemon.c, blame_thinned), sampling still the kernel's.
 */
static __always_inline bool it_keep_block(u32 flags, u64 lat)
{
	return keep_all_blocks ? !!(flags & IT_F_SAMPLED) : it_keep(flags, lat);
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

#endif /* IT_RECORD_BPF_H */
