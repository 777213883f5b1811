/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Guest mode: the physical address of a request's first data byte, which a
 * QEMU guest's virtio-blk, virtio-scsi and NVMe drivers hand the device as
 * is (no IOMMU in the guest): its guest-physical address (GPA). The host maps
 * it to the buffer QEMU's host IO names (src/mode/vjaddr.c), so it needs no
 * uprobe in QEMU to know which guest request a host IO serves (docs/modes.md,
 * "The address path").
 *
 * page -> physical address needs the vmemmap base (core_fixes.bpf.h
 * it_page_phys), measured here once: the two programs below run on the same
 * mm_page_alloc event, one sees the page (raw_tp argument), the other the
 * pfn the kernel computed from it (the classic tracepoint's pfn field);
 * page - pfn * sizeof(struct page) is the base. The two halves meet in a
 * per-CPU slot whichever program runs first; a half left over from an
 * allocation an interrupt made in between gives a wrong candidate once,
 * so a value counts only after IT_GPA_STREAK equal candidates in a row on
 * one CPU. Guest mode attaches them at start and detaches them as soon as
 * gpa_vmemmap is set (src/mode/guest.c): they never run after that, and
 * outside guest mode they are never attached (gpa_vmemmap stays 0 and no
 * request reads its pages).
 */
#ifndef IT_GPA_BPF_H
#define IT_GPA_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "core_fixes.bpf.h"

#define IT_GPA_STREAK 16

/* The vmemmap base once measured (0: not yet: no request gets an address). */
volatile __u64 gpa_vmemmap = 0;

struct it_gpa_cal {
	u64 page; /* from the tp_btf program */
	u64 pfn; /* from the tracepoint program */
	u64 cand; /* the candidate base of the streak */
	u32 have; /* bit 0: page, bit 1: pfn */
	u32 streak;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct it_gpa_cal);
} gpa_cal SEC(".maps");

static __always_inline void it_gpa_cal_half(u64 page, u64 pfn, u32 bit)
{
	u32 zero = 0;
	struct it_gpa_cal *c = bpf_map_lookup_elem(&gpa_cal, &zero);
	u64 cand;

	if (!c)
		return;
	if (bit == 1)
		c->page = page;
	else
		c->pfn = pfn;
	c->have |= bit;
	if (c->have != 3)
		return;
	c->have = 0;
	if (!c->page || c->pfn == ~0ull) /* an allocation that failed */
		return;
	cand = c->page - c->pfn * bpf_core_type_size(struct page);
	if (cand != c->cand) {
		c->cand = cand;
		c->streak = 0;
	}
	if (++c->streak >= IT_GPA_STREAK)
		gpa_vmemmap = cand;
}

/*
 * mm_page_alloc(page, order, gfp_flags, migratetype): the page, as a number
 * (raw_tp: a tp_btf argument is a typed pointer the verifier will not let a
 * map value hold)
 */
SEC("raw_tp/mm_page_alloc")
int mode_guest_gpa_page(u64 *ctx)
{
	it_gpa_cal_half(ctx[0], 0, 1);
	return 0;
}

/* the same event's pfn = page_to_pfn(page) (-1 when the allocation failed) */
SEC("tp/kmem/mm_page_alloc")
int mode_guest_gpa_pfn(struct trace_event_raw_mm_page_alloc *ctx)
{
	it_gpa_cal_half(0, BPF_CORE_READ(ctx, pfn), 2);
	return 0;
}

/*
 * The physical address of a read's or write's first data byte: the first
 * bio's current segment (bi_io_vec[bi_idx], bi_bvec_done bytes into it),
 * which is where blk_rq_map_sg and nvme's PRP setup start (a multi-page
 * segment is physically contiguous: the offset may exceed a page). 0 when
 * the base is not measured, or the request has no data (flush, discard).
 */
static __always_inline u64 it_rq_gpa(struct request *rq)
{
	u64 base = gpa_vmemmap, phys;
	struct bio_vec *bv;
	struct bio *bio;
	u32 idx;

	if (!base || (BPF_CORE_READ(rq, cmd_flags) & IT_REQ_OP_MASK) > 1) /* READ 0, WRITE 1 */
		return 0;
	bio = BPF_CORE_READ(rq, bio);
	bv = bio ? BPF_CORE_READ(bio, bi_io_vec) : NULL;
	if (!bv)
		return 0;
	idx = BPF_CORE_READ(bio, bi_iter.bi_idx);
	bv = (void *)bv + (u64)idx * bpf_core_type_size(struct bio_vec);
	phys = it_page_phys((u64)BPF_CORE_READ(bv, bv_page), base);
	if (!phys)
		return 0;
	return phys + BPF_CORE_READ(bv, bv_offset) + BPF_CORE_READ(bio, bi_iter.bi_bvec_done);
}

#endif /* IT_GPA_BPF_H */
