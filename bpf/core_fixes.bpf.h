/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every kernel-drift workaround of iotracer's BPF side lives here, each with
 * the kernel change that made it necessary: CO-RE flavour structs (___old
 * for fields that went away, ___it for module types and for types newer
 * kernels added) with the helpers that choose between them, kfuncs older
 * kernels lack, and the verifier limit that shaped code. CO-RE only: no
 * version checks, no offsets. User space probes what cannot be probed in
 * BPF (tracepoint signatures) and passes the answer in as rodata
 * (config.bpf.h), read by the argument helpers below; a renamed tracepoint
 * gets one program per name (io_uring_submit_sqe/_req, syscall.bpf.h) and
 * the loader autoloads the one that exists. Plain NULL and range checks
 * stay at the value they check, with the kernel named there (driver
 * tracepoint arguments, 6.12; block G stamp, 6.9).
 */
#ifndef IT_CORE_FIXES_BPF_H
#define IT_CORE_FIXES_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "iotracer.h"
#include "config.bpf.h"

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

/*
 * Driver types. The NVMe and SCSI structs are module types, absent from a
 * vmlinux.h made from vmlinux alone: minimal local definitions, relocated by
 * CO-RE against the module's BTF, which the kernel has loaded since 5.11
 * (36e68442d1af). The ___it flavour keeps them apart from vmlinux.h's own
 * where the driver is built in.
 */
struct nvme_common_command___it {
	u8 opcode;
	u8 flags;
	u16 command_id;
} __attribute__((preserve_access_index));

/* struct nvme_command is a union of command layouts; `common` heads all. */
struct nvme_command___it {
	struct nvme_common_command___it common;
} __attribute__((preserve_access_index));

/* nvme_req(rq): the request's pdu, right behind struct request. */
struct nvme_request___it {
	u16 status;
} __attribute__((preserve_access_index));

struct scsi_cmnd___it {
	unsigned char cmnd[32]; /* an array since 5.18 (ce70fd9a551a) */
	int result;
} __attribute__((preserve_access_index));

/*
 * virtio_queue_rqs(list): the list was `struct request **` and became
 * `struct rq_list *` in 6.13 (a3396b99990d, "block: add a rq_list type");
 * the requests are still chained by rq->rq_next.
 */
struct rq_list___it {
	struct request *head;
} __attribute__((preserve_access_index));

/* The first request of a virtio_queue_rqs() list, into *rq. */
static __always_inline void it_rq_list_first(void *list, struct request **rq)
{
	if (bpf_core_type_exists(struct rq_list___it))
		*rq = BPF_CORE_READ((struct rq_list___it *)list, head);
	else
		bpf_probe_read_kernel(rq, sizeof(*rq), list);
}

/*
 * Before 5.11 (a54895fa057c) the block tracepoints took the request_queue
 * as their first argument: the loader reads which from BTF. IT_BLK_ARG is
 * argument i of the 5.11 signature.
 */
#define IT_BLK_ARG(ctx, i) ((void *)(ctx)[blk_tp_has_queue ? (i) + 1 : (i)])
/* bio merges: (bio) since 5.11; (q, rq, bio) before */
#define IT_BLK_MERGE_BIO(ctx) IT_BLK_ARG(ctx, blk_tp_has_queue ? 1 : 0)

/*
 * sched_switch(preempt, prev, next) gained prev_state as 4th argument in
 * 5.18 (fa2c3254d7cf); before, read prev's state (it_task_state).
 */
#define IT_SWITCH_PREV_STATE(ctx, prev) \
	(sched_switch_has_state ? (long)(ctx)[3] : it_task_state(prev))

/*
 * io_uring_complete: (ctx, req, cqe) since 6.0 (c4bb964fa092), before that
 * (ctx, req, user_data, res, cflags); the loader reads which from BTF.
 */
static __always_inline s32 it_uring_complete_res(u64 *ctx, const bool btf)
{
	struct io_uring_cqe *cqe = (void *)ctx[2];

	if (uring_complete_has_cqe)
		return IT_RD(btf, cqe, res);
	return (s32)ctx[3];
}

/* Pages added to the page cache: the tracepoint has the folio's `order` since 6.6. */
static __always_inline u32 it_page_cache_pages(struct trace_event_raw_mm_filemap_op_page_cache *ctx)
{
	if (bpf_core_field_exists(ctx->order))
		return 1u << (BPF_CORE_READ(ctx, order) & 31);
	return 1;
}

/*
 * v & mask, bounded for the verifier. The 6.1 verifier cannot bound
 * it_log2()'s OR chain, and clang folds a plain mask into it: hide the
 * value from the optimizer, then mask.
 */
static __always_inline u32 it_verifier_mask(u32 v, u32 mask)
{
	asm volatile("" : "+r"(v));
	return v & mask;
}

#endif /* IT_CORE_FIXES_BPF_H */
