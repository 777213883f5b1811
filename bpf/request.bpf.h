/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A block request's state, shared by the block layer (block.bpf.h), which
 * creates it at bio queue and ends it at completion, and the driver layers
 * (driver.bpf.h), which annotate it: struct it_bio_info in `bios`, keyed by
 * the request's first bio, its lookup from a request, and the driver done
 * stamp the block completion takes from virtio-blk's last interrupt. Both
 * layers include this header; neither includes the other.
 */
#ifndef IT_REQUEST_BPF_H
#define IT_REQUEST_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "iotracer.h"
#include "core_fixes.bpf.h"
#include "inflight.bpf.h"

/*
 * bio -> request state. LRU: a bio that never heads a request (front merge,
 * bio-based driver) or whose completion was not seen only costs a slot.
 * Per-CPU LRU lists: with the common list, entries allocated on one CPU and
 * freed on another made the map evict live entries long before it was full
 * (~0.6 % of completions lost at libaio QD16); a per-CPU list evicts only
 * when that CPU holds max_entries / ncpus entries.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(map_flags, BPF_F_NO_COMMON_LRU);
	__uint(max_entries, 32768);
	__type(key, u64);
	__type(value, struct it_bio_info);
} bios SEC(".maps");

/*
 * Per virtqueue index (= the blk-mq hw queue of virtio-blk): the time of its
 * last interrupt (virtblk_done), which completes the requests that follow.
 * Not per CPU: blk-mq may complete a request on its submitting CPU, not the
 * one that took the interrupt (seen in the lab: 1 of 600 requests). Indices
 * are shared by virtio-blk disks: with several busy disks a done stamp may
 * be a later interrupt of another disk, still before the completion.
 */
#define IT_VIRTIO_QUEUES 64

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, IT_VIRTIO_QUEUES);
	__type(key, u32);
	__type(value, u64);
} virtio_irq SEC(".maps");

static __always_inline u8 it_req_op(u32 opf)
{
	switch (opf & IT_REQ_OP_MASK) {
	case 0: /* REQ_OP_READ */
		return IT_OP_READ;
	case 1: /* REQ_OP_WRITE */
		return IT_OP_WRITE;
	case 2: /* REQ_OP_FLUSH */
		return IT_OP_SYNC;
	case 3: /* REQ_OP_DISCARD */
	case 5: /* REQ_OP_SECURE_ERASE */
		return IT_OP_DISCARD;
	default:
		return IT_OP_OTHER;
	}
}

static __always_inline struct it_bio_info *it_rq_slot(struct request *rq, const bool btf)
{
	u64 key = (u64)IT_RD(btf, rq, bio);

	return IT_SLOT_GET(&bios, key, struct it_bio_info);
}

/* For the driver hooks, whose request pointers are not all BTF typed. */
static __always_inline struct it_bio_info *it_rq_info(struct request *rq)
{
	return it_rq_slot(rq, false);
}

/*
 * At block completion (now = C): a virtio request completes in its
 * virtqueue's last interrupt. When that interrupt began before the request
 * was submitted, the handler's loop (virtblk_done polls the ring until it is
 * empty) picked the request up later: the device finished it between submit
 * and now, and now is the closest stamp there is (seen in the lab, 1 of 600).
 */
static __always_inline void it_virtio_done(struct it_bio_info *bi, u64 now)
{
	u32 idx = bi->drv_qid & (IT_VIRTIO_QUEUES - 1);
	u64 *t;

	if (bi->drv_layer != IT_L_VIRTIO || bi->drv_done_ns)
		return;
	t = bpf_map_lookup_elem(&virtio_irq, &idx);
	if (t && *t >= bi->drv_submit_ns)
		bi->drv_done_ns = *t;
	else if (now >= bi->drv_submit_ns)
		bi->drv_done_ns = now;
}

#endif /* IT_REQUEST_BPF_H */
