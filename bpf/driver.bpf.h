/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Driver layers: NVMe and SCSI (tracepoints in their modules) and virtio-blk
 * (no tracepoints: fentry/fexit where the kernel allows, kprobes otherwise).
 * They annotate the block request they belong to, found through its first
 * bio's entry in `bios` (see request.bpf.h), so the request still leaves one
 * record, at block completion, now with driver submit / kick / done stamps.
 * The driver structs are module types: their local definitions are in
 * core_fixes.bpf.h.
 */
#ifndef IT_DRIVER_BPF_H
#define IT_DRIVER_BPF_H

#include "core_fixes.bpf.h"
#include "progs.bpf.h"
#include "request.bpf.h"
#include "gpa.bpf.h"

/* The pdu of a blk-mq request follows struct request (blk_mq_rq_to_pdu). */
static __always_inline void *it_rq_pdu(struct request *rq)
{
	return (void *)rq + bpf_core_type_size(struct request);
}

static __always_inline struct request *it_pdu_rq(void *pdu)
{
	return (struct request *)(pdu - bpf_core_type_size(struct request));
}

/*
 * Driver tracepoint arguments may be typed "trusted or NULL" (6.12): every
 * pointer taken from ctx is NULL-checked before any arithmetic on it.
 */
static __always_inline struct it_bio_info *it_drv_submit(struct request *rq, u8 layer)
{
	struct it_bio_info *bi = rq ? it_rq_info(rq) : NULL;

	if (!bi)
		return NULL;
	bi->drv_layer = layer;
	bi->drv_submit_ns = bpf_ktime_get_ns();
	/*
	 * A new submission (a requeued request comes back here): a kick of an
	 * earlier attempt is not this one's. virtio_queue_rq kicks the queue
	 * when the ring is full and the request is requeued: that kick is the
	 * earlier requests', not its own (seen on arm64: 0.46 ms before D).
	 * The done stamp is left alone: clearing it here lost the SCSI done of
	 * 29 of 1200 requests in a QD4 lab run (0 without; cause not found).
	 */
	bi->drv_kick_ns = 0;
	bi->drv_qid = BPF_CORE_READ(rq, mq_hctx, queue_num);
	bi->drv_tag = BPF_CORE_READ(rq, tag);
	bi->drv_gpa = it_rq_gpa(rq); /* guest mode only (gpa.bpf.h): the host's join key */
	return bi;
}

/* ---- NVMe ---- */

/* nvme_setup_cmd(req, cmd) */
static __always_inline int it_nvme_setup(u64 *ctx)
{
	struct nvme_command___it *cmd = (void *)ctx[1];
	struct it_bio_info *bi = it_drv_submit((void *)ctx[0], IT_L_NVME);

	if (bi && cmd)
		it_nvme_cmd(cmd, &bi->drv_opcode, &bi->drv_tag);
	return 0;
}

/* nvme_complete_rq(req): before blk_mq_end_request, so before block C */
static __always_inline int it_nvme_complete(u64 *ctx)
{
	struct request *rq = (void *)ctx[0];
	struct nvme_request___it *nr;
	struct it_bio_info *bi;

	if (!rq)
		return 0;
	nr = it_rq_pdu(rq);
	bi = it_rq_info(rq);
	if (bi) {
		bi->drv_done_ns = bpf_ktime_get_ns();
		bi->drv_status = it_nvme_status(nr);
	}
	return 0;
}

/* btf_nvme_setup_cmd, raw_nvme_setup_cmd, btf_nvme_complete_rq, raw_nvme_complete_rq */
IT_TP_BOTH(nvme_setup_cmd, it_nvme_setup(ctx))
IT_TP_BOTH(nvme_complete_rq, it_nvme_complete(ctx))

/* ---- SCSI ---- */

/* scsi_dispatch_cmd_start(cmd): the command is the request's pdu */
static __always_inline int it_scsi_start(u64 *ctx)
{
	struct scsi_cmnd___it *cmd = (void *)ctx[0];
	struct it_bio_info *bi;

	if (!cmd)
		return 0;
	bi = it_drv_submit(it_pdu_rq(cmd), IT_L_SCSI);
	if (bi)
		bi->drv_opcode = it_scsi_opcode(cmd);
	return 0;
}

/* scsi_dispatch_cmd_done(cmd) / _error(cmd, rtn) / _timeout(cmd) */
static __always_inline int it_scsi_done(u64 *ctx)
{
	struct scsi_cmnd___it *cmd = (void *)ctx[0];
	struct it_bio_info *bi;

	if (!cmd)
		return 0;
	bi = it_rq_info(it_pdu_rq(cmd));
	if (bi) {
		bi->drv_done_ns = bpf_ktime_get_ns();
		bi->drv_status = it_scsi_result(cmd);
	}
	return 0;
}

/*
 * btf_scsi_dispatch_cmd_start, raw_scsi_dispatch_cmd_start, btf_scsi_dispatch_cmd_done,
 * raw_scsi_dispatch_cmd_done, btf_scsi_dispatch_cmd_error, raw_scsi_dispatch_cmd_error,
 * btf_scsi_dispatch_cmd_timeout, raw_scsi_dispatch_cmd_timeout
 */
IT_TP_BOTH(scsi_dispatch_cmd_start, it_scsi_start(ctx))
IT_TP_BOTH(scsi_dispatch_cmd_done, it_scsi_done(ctx))
IT_TP_BOTH(scsi_dispatch_cmd_error, it_scsi_done(ctx))
IT_TP_BOTH(scsi_dispatch_cmd_timeout, it_scsi_done(ctx))

/* ---- virtio-blk ---- */

/*
 * Per CPU: the request virtio_queue_rq is adding (so virtqueue_notify, the
 * kick it makes, lands on it).
 */
#define IT_VIRTIO_BATCH 32

struct virtio_cpu {
	u64 cur_rq;
	u32 nr_batch; /* requests a kick of this CPU covers, in batch[] */
	u32 last; /* the current submission ends its dispatch (bd->last) */
	u64 batch[IT_VIRTIO_BATCH];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct virtio_cpu);
} virtio_cpu SEC(".maps");

static __always_inline struct virtio_cpu *it_vcpu(void)
{
	u32 zero = 0;

	return bpf_map_lookup_elem(&virtio_cpu, &zero);
}

/* virtio_queue_rq(hctx, bd): bd->rq */
static __always_inline int it_virtio_queue(struct blk_mq_queue_data *bd)
{
	struct request *rq = bd ? BPF_CORE_READ(bd, rq) : NULL;
	struct virtio_cpu *vc = it_vcpu();

	if (!it_drv_submit(rq, IT_L_VIRTIO) || !vc)
		return 0;
	/*
	 * blk-mq dispatches a list with bd->last false on all but its last
	 * request: only that one may kick, for all of them. The others wait
	 * here for it (a dispatch cut short ends in commit_rqs, not hooked:
	 * its requests then take the next kick of this CPU's virtio_queue_rq).
	 */
	vc->cur_rq = (u64)rq;
	vc->last = BPF_CORE_READ(bd, last);
	if (vc->nr_batch < IT_VIRTIO_BATCH)
		vc->batch[vc->nr_batch++ & (IT_VIRTIO_BATCH - 1)] = (u64)rq;
	return 0;
}

static __always_inline int it_virtio_queue_exit(void)
{
	struct virtio_cpu *vc = it_vcpu();

	if (vc) {
		vc->cur_rq = 0;
		if (vc->last)
			vc->nr_batch = 0;
	}
	return 0;
}

/*
 * A kick is a request's own when it comes at or after the request's submit
 * (it_drv_submit cleared any earlier one): the first such kick. A request
 * whose add found the notification suppressed (event-idx: the device is
 * still draining the ring) gets none, never a neighbour's.
 */
static __always_inline void it_kick_rq(u64 rq, u64 now)
{
	struct it_bio_info *bi = it_rq_info((struct request *)rq);

	if (bi && !bi->drv_kick_ns && now >= bi->drv_submit_ns)
		bi->drv_kick_ns = now;
}

static __always_inline int it_virtio_kick(void)
{
	struct virtio_cpu *vc = it_vcpu();
	u64 now;

	if (!vc || !vc->cur_rq)
		return 0;
	now = bpf_ktime_get_ns();
	it_kick_rq(vc->cur_rq, now);
	/* one kick for the batch (virtio_queue_rqs: once per virtqueue) or the dispatch */
	for (u32 i = 0; i < IT_VIRTIO_BATCH && i < vc->nr_batch; i++)
		it_kick_rq(vc->batch[i], now);
	return 0;
}

static __always_inline int it_virtio_irq(struct virtqueue *vq)
{
	u32 idx = BPF_CORE_READ(vq, index) & (IT_VIRTIO_QUEUES - 1);
	u64 *t = bpf_map_lookup_elem(&virtio_irq, &idx);

	if (t)
		*t = bpf_ktime_get_ns();
	return 0;
}

/*
 * fentry_virtio_queue_rq, kprobe_virtio_queue_rq,
 * fexit_virtio_queue_rq, kretprobe_virtio_queue_rq
 */
IT_FN_ENTRY(virtio_queue_rq, it_virtio_queue(bd), struct blk_mq_hw_ctx *hctx,
	    struct blk_mq_queue_data *bd)
IT_FN_EXIT(virtio_queue_rq, it_virtio_queue_exit())

/*
 * virtio_queue_rqs(list): plugged IO submitted as a batch (6.12 sends such IO
 * here, not through virtio_queue_rq); the list's type changed in 6.13
 * (it_rq_list_first). Each request of the batch gets its submit stamp and is
 * remembered on this CPU (the list is taken apart as the requests are added),
 * so a kick of the batch lands on every request it covers: each one's first
 * kick after its submit (the kick of another virtqueue of the same batch may
 * come first: it is still after the request's D).
 */
static __always_inline int it_virtio_queue_batch(void *list)
{
	struct virtio_cpu *vc = it_vcpu();
	struct request *rq = NULL;
	u32 n = 0;

	if (!list || !vc)
		return 0;
	it_rq_list_first(list, &rq);
	vc->cur_rq = (u64)rq;
	for (int i = 0; i < IT_VIRTIO_BATCH && rq; i++) {
		it_drv_submit(rq, IT_L_VIRTIO);
		vc->batch[i & (IT_VIRTIO_BATCH - 1)] = (u64)rq;
		n = i + 1;
		rq = BPF_CORE_READ(rq, rq_next);
	}
	vc->nr_batch = n;
	vc->last = 1;
	return 0;
}

/*
 * fentry_virtio_queue_rqs, kprobe_virtio_queue_rqs,
 * fexit_virtio_queue_rqs, kretprobe_virtio_queue_rqs
 */
IT_FN_ENTRY(virtio_queue_rqs, it_virtio_queue_batch(list), void *list)
IT_FN_EXIT(virtio_queue_rqs, it_virtio_queue_exit())

/*
 * virtio-scsi: virtscsi_queuecommand(shost, sc) adds the SCSI command to a
 * virtqueue and kicks it; marking its request as the CPU's current one puts
 * that kick (virtqueue_notify) on the SCSI request, whose driver layer stays
 * scsi: the JSON then shows the transport's kick next to scsi submit/done.
 */
static __always_inline int it_virtscsi_queue(struct scsi_cmnd___it *sc)
{
	struct virtio_cpu *vc = it_vcpu();

	if (sc && vc) {
		vc->cur_rq = (u64)it_pdu_rq(sc);
		vc->nr_batch = 0;
		vc->last = 1;
	}
	return 0;
}

/*
 * fentry_virtscsi_queuecommand, kprobe_virtscsi_queuecommand, fexit_virtscsi_queuecommand,
 * kretprobe_virtscsi_queuecommand, fentry_virtqueue_notify, kprobe_virtqueue_notify,
 * fentry_virtblk_done, kprobe_virtblk_done
 */
IT_FN_ENTRY(virtscsi_queuecommand, it_virtscsi_queue(sc), void *shost, struct scsi_cmnd___it *sc)
IT_FN_EXIT(virtscsi_queuecommand, it_virtio_queue_exit())
IT_FN_ENTRY(virtqueue_notify, it_virtio_kick())
IT_FN_ENTRY(virtblk_done, it_virtio_irq(vq), struct virtqueue *vq)

#endif /* IT_DRIVER_BPF_H */
