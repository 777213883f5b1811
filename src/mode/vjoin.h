/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vjoin: host mode's joiner. One guest virtio request (struct link_vreq, guest
 * clock) + QEMU's submit of it (blk_aio_preadv/pwritev uprobe) + the host IO
 * QEMU made for it (a syscall of a QEMU thread on the disk's image, with its
 * host block request) + QEMU's interrupt back (virtio_notify uprobe) = one
 * full path, every time on the host's clock.
 *
 * The key is (disk, op, byte offset = sector * 512, length) — raw images map
 * guest sectors to file offsets one to one — inside a time window: the host
 * syscall must start between the guest's kick and the guest's completion,
 * mapped to host time, widened by the clock uncertainty. Time alone never
 * joins. Pure user space, libc only; not thread safe.
 */
#ifndef IT_VJOIN_H
#define IT_VJOIN_H

#include <stddef.h>
#include <stdint.h>

#include "mode/link.h"

/* One host IO of a QEMU thread on a traced disk image. */
struct vj_host_io {
	int disk; /* index into the caller's disk table */
	uint8_t op; /* enum it_op */
	uint32_t pid, tid;
	uint64_t offset, bytes;
	uint64_t enter_ns, exit_ns; /* host syscall */
	uint64_t blk_q_ns, blk_d_ns, blk_c_ns; /* its first host block request; 0 if none */
	uint32_t blk_dev;
	int64_t ret;
};

enum vj_stage {
	VJ_GUEST_SUBMIT = 0, /* guest syscall enter -> virtio kick */
	VJ_KICK_TO_QEMU, /* guest kick -> QEMU blk_aio submit (exit + QEMU pickup) */
	VJ_QEMU_TO_HOST, /* QEMU submit -> host syscall enter (thread pool hand-off) */
	VJ_HOST_SYSCALL, /* host syscall enter -> exit */
	VJ_HOST_BLOCK, /* host block request Q -> C (host device + block layer) */
	VJ_HOST_TO_NOTIFY, /* host syscall exit -> QEMU virtio_notify */
	VJ_NOTIFY_TO_IRQ, /* QEMU notify -> guest virtio interrupt */
	VJ_GUEST_COMPLETE, /* guest interrupt -> guest syscall exit */
	VJ_GUEST_VIRTIO, /* guest kick -> guest interrupt (what the guest sees) */
	VJ_QEMU_TOTAL, /* QEMU submit -> notify (what the host spent) */
	VJ_WORLD_SWITCH, /* VJ_GUEST_VIRTIO - VJ_QEMU_TOTAL */
	VJ_STAGES,
};

/* Timestamp slots of a path, all on the host clock, in path order. */
enum vj_ts {
	VJ_T_G_SYS_ENTER = 0,
	VJ_T_G_Q,
	VJ_T_G_D,
	VJ_T_G_KICK,
	VJ_T_Q_SUBMIT,
	VJ_T_H_ENTER,
	VJ_T_H_BLK_Q,
	VJ_T_H_BLK_C,
	VJ_T_H_EXIT,
	VJ_T_Q_NOTIFY,
	VJ_T_G_IRQ,
	VJ_T_G_C,
	VJ_T_G_SYS_EXIT,
	VJ_T_MAX,
};

struct vj_path {
	const struct link_vreq *g; /* guest times on the guest clock */
	int peer; /* link peer id */
	uint64_t session; /* the guest's link session */
	int disk;
	int joined; /* a host IO was found */
	struct vj_host_io h; /* valid when joined */
	uint64_t t[VJ_T_MAX]; /* host clock; 0 = not seen */
	int64_t stage[VJ_STAGES]; /* ns; INT64_MIN = not computable */
	int64_t clock_off; /* host - guest */
	uint64_t clock_unc;
	int order_ok; /* timestamps non-decreasing (guest vs host within clock_unc) */
	int bad_pair; /* first VJ_T_* found out of order (order_ok == 0) */
};

typedef void (*vj_emit_fn)(const struct vj_path *p, void *ctx);

struct vj_stats {
	uint64_t guest; /* guest requests added */
	uint64_t joined, unjoined; /* emitted with / without a host IO */
	uint64_t host_io, host_unjoined; /* host IOs added; expired unused */
	uint64_t qemu_submit, qemu_notify; /* uprobe events added */
	uint64_t with_submit, with_notify; /* joined paths that got a QEMU event */
	uint64_t order_bad; /* joined paths out of order beyond the uncertainty */
	uint64_t evicted; /* host IOs dropped because the table was full */
};

struct vjoin;

/*
 * hold_ns: how long a guest request waits for its host IO (and a host IO
 * for its guest request) before it is given up. max_host: bound on held host
 * IOs (0: 65536).
 */
struct vjoin *vjoin_new(vj_emit_fn fn, void *ctx, uint64_t hold_ns, size_t max_host);
void vjoin_free(struct vjoin *j);

/* A host IO of a traced disk; now_ns: host clock at arrival. */
void vjoin_add_host(struct vjoin *j, const struct vj_host_io *h, uint64_t now_ns);
/* A QEMU uprobe event (enum it_qemu_ev) on the host clock. */
void vjoin_add_qemu(struct vjoin *j, uint32_t ev, uint64_t ts_ns, uint64_t offset);
/*
 * A guest request of disk `disk` (-1: its serial names no traced disk: emitted
 * unjoined at once), with the peer's clock: host = guest + off, +- unc.
 */
void vjoin_add_guest(struct vjoin *j, int peer, uint64_t session, int disk, const struct link_vreq *g, int64_t off,
		     uint64_t unc, uint64_t now_ns);
/* Give up on what waited hold_ns; emit those guest requests unjoined. */
void vjoin_tick(struct vjoin *j, uint64_t now_ns);
/* Emit every waiting guest request (shutdown). */
void vjoin_flush(struct vjoin *j);
const struct vj_stats *vjoin_stats(const struct vjoin *j);

const char *vj_stage_name(int s);
const char *vj_ts_name(int t);

#endif /* IT_VJOIN_H */
