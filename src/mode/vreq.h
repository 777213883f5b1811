/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vreq: a guest's finished block request as the host needs it (struct
 * link_vreq), from the guest tracer's records. Pure: no I/O (the caller
 * gives the disk's serial and transport), unit-tested.
 *
 * Streamed: every request a driver layer saw on a disk QEMU emulates:
 * virtio-blk (IT_L_VIRTIO), SCSI (IT_L_SCSI: scsi-hd on virtio-scsi) and
 * NVMe (IT_L_NVME); drv_layer tells the host which bus it came by. The
 * sector is the block layer's, in 512-byte units whatever the disk's logical
 * block size (LBA x block size / 512), which is QEMU's byte offset / 512.
 *
 * A request carries only its own stamps: its kick is one at or after its
 * issue (block D) and its driver submit, or none: with event-idx the guest
 * suppresses the notification while the device drains the ring, and no kick
 * is the request's then (counted as suppressed when the disk is reached
 * through virtio, which kicks; an NVMe doorbell is not traced).
 */
#ifndef IT_VREQ_H
#define IT_VREQ_H

#include <stdint.h>

#include "iotracer.h"
#include "records/corr.h"
#include "mode/link.h"

/* Counts over the requests vreq_fill() was given (the guest's summary). */
struct vreq_stats {
	uint64_t by_layer[3]; /* streamed: [0] virtio-blk, [1] scsi, [2] nvme */
	uint64_t kick_suppressed; /* through virtio, no kick of its own */
	uint64_t kick_stale; /* a kick before its issue, dropped (an earlier request's) */
	uint64_t no_serial; /* the disk has no serial: the host cannot find it */
};

/* Is a driver layer one the host can join (a bus QEMU emulates)? */
int vreq_layer_streamed(uint8_t drv_layer);

/* The bus of a record's drv_layer: "virtio-blk", "scsi", "nvme", or "-". */
const char *vreq_bus_name(uint8_t drv_layer);

/*
 * The kick that is the request's own: kick_ns when it is at or after both
 * the issue d_ns and the driver submit submit_ns, and not after the driver
 * saw it done (done_ns: a later kick of its list, the device having taken the
 * request without one); 0s are unknown. Else 0.
 */
uint64_t vreq_own_kick(uint64_t kick_ns, uint64_t d_ns, uint64_t submit_ns, uint64_t done_ns);

/*
 * Fill v from block record b of request r (its parent syscall, if any) on a
 * disk with this serial (NULL: none) reached through virtio (virtio: 1) or
 * not. Returns 1 when b is to be streamed, 0 when not (no driver layer of a
 * bus QEMU emulates). s counts what it saw (may be NULL).
 */
int vreq_fill(struct link_vreq *v, const struct corr_req *r, const struct it_block_rec *b,
	      const char *serial, int virtio, struct vreq_stats *s);

#endif /* IT_VREQ_H */
