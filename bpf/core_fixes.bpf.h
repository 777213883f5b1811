/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every kernel-drift workaround of iotracer's BPF side lives here, each with
 * the kernel change that made it necessary. CO-RE only: no version checks,
 * no offsets. User space probes what cannot be probed in BPF (tracepoint
 * signatures) and passes the answer in as rodata.
 */
#ifndef IT_CORE_FIXES_BPF_H
#define IT_CORE_FIXES_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "iotracer.h"

/* 5.17 (f3fa33acca9f) removed request->rq_disk: the disk is rq->q->disk. */
struct request___old {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

/* 5.12 (309dca309fc3) replaced bio->bi_disk/bi_partno with bio->bi_bdev. */
struct bio___old {
	struct gendisk *bi_disk;
	u8 bi_partno;
} __attribute__((preserve_access_index));

/* 5.14 (2f064a59a11f) renamed task_struct->state to __state. */
struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

/*
 * IT_RD(btf, p, a, b...) reads p->a->b... With btf set (a constant: p is a
 * pointer the verifier types from BTF, a tp_btf argument or
 * bpf_get_current_task_btf()), as plain loads, which the JIT makes
 * fault-safe; else (raw_tp, tp) with one bpf_probe_read_kernel per step.
 * Field offsets are CO-RE relocated either way (vmlinux.h types carry
 * preserve_access_index). The pre-5.x fallbacks below keep BPF_CORE_READ.
 */
#define IT_RD(btf, src, a, ...) \
	((btf) ? ___arrow(src, a, ##__VA_ARGS__) : BPF_CORE_READ(src, a, ##__VA_ARGS__))

static __always_inline u32 it_disk_devt(struct gendisk *disk, const bool btf)
{
	u32 major = IT_RD(btf, disk, major);
	u32 minor = IT_RD(btf, disk, first_minor);

	return (major << 20) | minor;
}

static __always_inline struct gendisk *it_rq_disk(struct request *rq, const bool btf)
{
	if (bpf_core_field_exists(struct request___old, rq_disk))
		return BPF_CORE_READ((struct request___old *)rq, rq_disk);
	return IT_RD(btf, rq, q, disk);
}

/* Whole-disk dev_t of a bio (what /sys/block/DEV/stat counts). */
static __always_inline u32 it_bio_disk_devt(struct bio *bio, const bool btf)
{
	if (bpf_core_field_exists(struct bio___old, bi_disk))
		return it_disk_devt(BPF_CORE_READ((struct bio___old *)bio, bi_disk), false);
	return it_disk_devt(IT_RD(btf, bio, bi_bdev, bd_disk), btf);
}

/* dev_t of the partition (or whole disk) a bio was submitted to. */
static __always_inline u32 it_bio_part_devt(struct bio *bio, const bool btf)
{
	if (bpf_core_field_exists(struct bio___old, bi_disk)) {
		struct bio___old *b = (void *)bio;

		return it_disk_devt(BPF_CORE_READ(b, bi_disk), false) + BPF_CORE_READ(b, bi_partno);
	}
	return IT_RD(btf, bio, bi_bdev, bd_dev);
}

static __always_inline long it_task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(struct task_struct___old, state))
		return BPF_CORE_READ((struct task_struct___old *)t, state);
	return BPF_CORE_READ(t, __state);
}

/*
 * Request flag bits moved around over the years (enum req_flag_bits): read
 * them from BTF instead of hard-coding.
 */
#define IT_REQ_OP_MASK 0xff /* REQ_OP_BITS = 8 since 4.10 (ef295ecf090d) */

static __always_inline u32 it_req_flags(u32 opf)
{
	u32 f = 0;

	if (opf & (1u << bpf_core_enum_value(enum req_flag_bits, __REQ_SYNC)))
		f |= IT_F_SYNC;
	if (opf & (1u << bpf_core_enum_value(enum req_flag_bits, __REQ_META)))
		f |= IT_F_META;
	if (opf & (1u << bpf_core_enum_value(enum req_flag_bits, __REQ_FUA)))
		f |= IT_F_FUA;
	return f;
}

/*
 * io_uring's REQ_F_FIXED_FILE_BIT lives in an anonymous enum (io_uring_types.h),
 * which CO-RE cannot name; it has been bit 0 since io_uring was merged (5.1).
 */
#define IT_REQ_F_FIXED_FILE (1ull << 0)

/*
 * bpf_rdonly_cast came with 6.2 (a35b9af4ec2c): weak, so that it is NULL
 * before, and a branch on it is dead code there.
 */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

#endif /* IT_CORE_FIXES_BPF_H */
