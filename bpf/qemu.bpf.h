/* SPDX-License-Identifier: GPL-2.0 */
/*
 * QEMU layer (host mode): uprobes on exported functions of a stock QEMU,
 * attached per process by src/mode/host.c at offsets read from its .dynsym.
 * A uprobe hit costs ~18 us here, so at most two per guest IO: the submit
 * of the guest request to QEMU's block layer (blk_aio_preadv/pwritev, which
 * carries the byte offset and the guest buffer: the join key) and the interrupt back to the guest
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
#include "filter.bpf.h"

/*
 * QEMU's QEMUIOVector (include/qemu/iov.h, the same from QEMU 4.2 to 9.x),
 * a user-space struct: the one place its layout is assumed (x86_64, arm64).
 *   struct iovec *iov;   @0
 *   int niov;            @8
 *   union {              @16 (8-aligned: it holds a struct iovec)
 *     struct { int nalloc; struct iovec local_iov; };   nalloc @16, local_iov @24
 *     struct { char pad[4 + 8]; size_t size; };         size @32
 *   };
 * (QEMU asserts offsetof(size) == offsetof(local_iov.iov_len).) Before 4.2
 * size followed nalloc at @16: such a QEMU shows as no submit of the
 * guest's length (counted, never joined).
 */
struct it_qemu_qiov {
	u64 iov;
	s32 niov;
	s32 pad0;
	s32 nalloc;
	s32 pad1;
	u64 local_base;
	u64 size;
};

static __always_inline void it_qemu_qiov_read(struct it_qemu_rec *r, u64 qiov)
{
	struct it_qemu_qiov q = {};
	u64 base = 0;

	r->niov = 0;
	r->hva = 0;
	r->bytes = 0;
	if (!qiov || bpf_probe_read_user(&q, sizeof(q), (void *)qiov))
		return;
	if (q.niov > 0 && !bpf_probe_read_user(&base, sizeof(base), (void *)q.iov))
		r->hva = base;
	r->niov = q.niov;
	r->bytes = q.size;
}

static __always_inline int it_qemu_ev(u32 ev, u64 obj, u64 offset, u64 qiov)
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
	it_qemu_qiov_read(r, qiov);
	it_submit(&res, r);
	return 0;
}

/*
 * BlockAIOCB *blk_aio_preadv(BlockBackend *blk, int64_t offset, QEMUIOVector *qiov, ...):
 * the qiov's first buffer (guest RAM mapped in QEMU) is the join key that
 * survives the image format and the aio mode (docs/modes.md).
 */
SEC("uprobe")
int BPF_KPROBE(qemu_aio_read, void *blk, long offset, void *qiov)
{
	return it_qemu_ev(IT_QEV_AIO_READ, (u64)blk, (u64)offset, (u64)qiov);
}

SEC("uprobe")
int BPF_KPROBE(qemu_aio_write, void *blk, long offset, void *qiov)
{
	return it_qemu_ev(IT_QEV_AIO_WRITE, (u64)blk, (u64)offset, (u64)qiov);
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
	return it_qemu_ev(IT_QEV_NOTIFY, (u64)vdev, 0, 0);
}

SEC("uprobe")
int BPF_KPROBE(qemu_notify_irqfd, void *vdev)
{
	return it_qemu_ev(IT_QEV_NOTIFY, (u64)vdev, 0, 0);
}

/*
 * Where KVM runs, the interrupt QEMU raises for a completion is injected by
 * KVM in the thread that signalled it (an irqfd write or KVM_SIGNAL_MSI
 * from QEMU's thread: kvm_arch_set_irq_inatomic for an MSI on x86) and its
 * tracepoints say when: the stamp the virtio_notify uprobe gives, at a
 * tracepoint's cost. kvm_msi_set_irq(address, data) is x86's (MSI-X:
 * virtio-pci and NVMe alike), kvm_set_irq(gsi, level, source) any
 * architecture's line interrupts (counted on assertion). An injection the
 * kernel defers to a worker (irqfd_inject) runs in a kworker, not a QEMU
 * thread: the pid filter leaves it out, and its path has no notify stamp.
 * Attached by host mode where the kvm module is loaded (src/mode/hprobe.c):
 * raw_tp, so no module BTF is needed. Under TCG nothing fires.
 */
static __always_inline int it_kvm_irq(void)
{
	if (!it_task_ok())
		return 0;
	return it_qemu_ev(IT_QEV_KVM_IRQ, 0, 0, 0);
}

SEC("raw_tp/kvm_msi_set_irq")
int mode_host_kvm_msi(u64 *ctx)
{
	return it_kvm_irq();
}

SEC("raw_tp/kvm_set_irq")
int mode_host_kvm_irq(u64 *ctx)
{
	return (int)ctx[1] ? it_kvm_irq() : 0; /* level: 1 raises it, 0 lowers it */
}

#endif /* IT_QEMU_BPF_H */
