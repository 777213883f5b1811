/* SPDX-License-Identifier: GPL-2.0 */
/*
 * QEMU layer (host mode): uprobes on exported functions of a stock QEMU,
 * attached per process by src/mode/host.c at offsets read from its .dynsym.
 * A uprobe hit costs ~18 us here, so at most two per guest IO: the submit
 * of the guest request to QEMU's block layer (blk_aio_preadv/pwritev, which
 * carries the byte offset: the join key) and the interrupt back to the guest
 * (virtio_notify / virtio_notify_irqfd). Everything else about the request comes from the QEMU
 * threads' own syscalls and block IO, traced by the other layers.
 * (BPF_KPROBE: libbpf 1.1 has no BPF_UPROBE; a uprobe sees the same registers.)
 */
#ifndef IT_QEMU_BPF_H
#define IT_QEMU_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "iotracer.h"
#include "record.bpf.h"

static __always_inline int it_qemu_ev(u32 ev, u64 obj, u64 offset)
{
	u64 id = bpf_get_current_pid_tgid();
	struct it_qemu_rec *r;
	struct it_res res;

	r = it_reserve(&res, sizeof(*r), IT_L_QEMU);

	if (!r)
		return 0;
	it_hdr_init(&r->hdr, IT_REC_QEMU, sizeof(*r));
	r->pid = id >> 32;
	r->tid = (u32)id;
	r->ts_ns = bpf_ktime_get_ns();
	r->obj = obj;
	r->offset = offset;
	r->ev = ev;
	r->pad0 = 0;
	it_submit(&res, r);
	return 0;
}

/* BlockAIOCB *blk_aio_preadv(BlockBackend *blk, int64_t offset, QEMUIOVector *qiov, ...) */
SEC("uprobe")
int BPF_KPROBE(qemu_aio_read, void *blk, long offset)
{
	return it_qemu_ev(IT_QEV_AIO_READ, (u64)blk, (u64)offset);
}

SEC("uprobe")
int BPF_KPROBE(qemu_aio_write, void *blk, long offset)
{
	return it_qemu_ev(IT_QEV_AIO_WRITE, (u64)blk, (u64)offset);
}

/*
 * void virtio_notify(VirtIODevice *vdev, VirtQueue *vq), and its irqfd twin
 * virtio_notify_irqfd(): virtio-blk's dataplane path (used whenever QEMU
 * has ioeventfds, also without an iothread) batches completions in a bottom
 * half that calls the latter. One of the two runs per completion batch.
 */
SEC("uprobe")
int BPF_KPROBE(qemu_notify, void *vdev)
{
	return it_qemu_ev(IT_QEV_NOTIFY, (u64)vdev, 0);
}

SEC("uprobe")
int BPF_KPROBE(qemu_notify_irqfd, void *vdev)
{
	return it_qemu_ev(IT_QEV_NOTIFY, (u64)vdev, 0);
}

#endif /* IT_QEMU_BPF_H */
