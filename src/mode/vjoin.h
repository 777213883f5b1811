/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vjoin: host mode's joiner. One guest virtio request (struct link_vreq, guest
 * clock) + QEMU's submit of it (blk_aio_preadv/pwritev uprobe) + the host IO
 * QEMU made for it (a syscall of a QEMU thread on the disk's image, with its
 * host block request) + QEMU's interrupt back (virtio_notify uprobe) = one
 * full path, every time on the host's clock.
 *
 * The key is the guest's buffer as QEMU maps it (its host virtual address,
 * HVA), which QEMU hands unchanged to the host IO whatever the image format
 * and aio mode: guest record (disk, op, byte offset, length) -> QEMU's
 * blk_aio submit of that (op, offset, length) between the guest's kick and
 * interrupt (clock uncertainty widened) -> its qiov's first buffer -> the host
 * IO(s) of QEMU on the disk's files whose buffers tile [HVA, HVA + length),
 * each the first one at its buffer after the submit and before the next
 * submit of the same buffer (both on the host clock: exact). Time alone never
 * joins. That is the uprobe path. The address path needs no uprobe: the
 * guest says its buffer's guest-physical address (link_vreq.gpa), the VM's
 * GPA -> HVA map (gpamap.h, learned on the uprobe path) gives the HVA, and
 * the host IOs at it are bounded in time by the VM's clock as its joined
 * paths bound it (causal: a host IO starts after its guest kick and ends
 * before its guest interrupt), which is tighter than the ping's uncertainty
 * and never lends a request's host IO to its neighbour at the same buffer.
 * Each VM is on one path (vjoin_vm_mode); on the uprobe path the address
 * path runs beside it and says when it agrees enough to take over (ready),
 * and on the address path a drop says when to look again (recheck).
 * Pure user space, libc only; not thread safe.
 */
#ifndef IT_VJOIN_H
#define IT_VJOIN_H

#include <stddef.h>
#include <stdint.h>

#include "mode/link.h"

/* How QEMU issued a host IO (its aio= mode). */
enum vj_kind {
	VJ_K_SYSCALL = 0, /* aio=threads: preadv/pwritev/pread64/pwrite64 of a worker */
	VJ_K_AIO, /* aio=native: an iocb of io_submit */
	VJ_K_URING, /* aio=io_uring: an SQE */
};

/*
 * One host IO of a QEMU thread on a traced disk's file (image or backing
 * file), as seen from one of its buffers: a vectored IO is added once per
 * buffer the host saw (its first two iovecs: qcow2's copy on write puts its
 * own buffer before the guest's in one pwritev).
 */
struct vj_host_io {
	int disk; /* index into the caller's disk table */
	uint8_t op; /* enum it_op */
	uint8_t kind; /* enum vj_kind */
	uint8_t view; /* which buffer of the IO: 0 (the first) or 1 */
	uint32_t pid, tid;
	uint64_t offset, bytes; /* where the bytes at buf go in the file, and how many */
	uint64_t io_offset, io_bytes; /* the whole host IO */
	uint64_t seq; /* aio: its io_submit's syscall seq (with tid: finds its block request) */
	uint64_t buf; /* user buffer: the key */
	uint64_t ino; /* the file (a backing file's for an overlay's read) */
	/*
	 * Host submit and the completion QEMU sees: the syscall's enter/exit
	 * (threads), io_submit's enter and the block completion (native: QEMU
	 * reaps the ring in user space; 0 when unknown), the SQE's submit and
	 * CQE (io_uring).
	 */
	uint64_t enter_ns, exit_ns;
	uint64_t blk_q_ns, blk_d_ns, blk_c_ns; /* its first host block request; 0 if none */
	uint32_t blk_dev;
	int64_t ret;
	uint64_t req; /* the daemon's request id of the host IO (its JSON line's "id"); 0: none */
};

/* A QEMU uprobe event (bpf/qemu.bpf.h), host clock. */
struct vj_qemu_ev {
	uint32_t ev; /* enum it_qemu_ev */
	uint32_t pid;
	uint64_t ts_ns;
	uint64_t offset; /* aio: byte offset of the request on the disk */
	uint64_t hva, bytes; /* aio: the qiov's first buffer and its total size */
	uint32_t niov;
};

/* Why a guest request was not joined (each a counter). */
enum vj_unjoin {
	VJ_UN_NO_DISK = 0, /* its serial names no traced disk */
	VJ_UN_NO_SUBMIT, /* no QEMU submit of (op, offset, length) in its window */
	VJ_UN_MERGED, /* only a longer QEMU submit covers it: merged by QEMU */
	VJ_UN_NO_HOST_IO, /* QEMU submitted it, no host IO used its buffer: a read of
			     an unallocated cluster, zero-detect / discard, a bounce buffer */
	VJ_UN_PARTIAL, /* host IOs used part of its buffer only (bounce, compressed) */
	VJ_UN_NO_ADDRESS, /* address path: the record has no buffer address */
	VJ_UN_UNMAPPED, /* address path: its VM's map has no HVA for the address */
	VJ_UN_CLOCK, /* address path: its VM's clock bounds stale (no joined path in the 4 s
			before it, none carried over: the guest clock drifts), its host IO not
			told from its neighbours' */
	VJ_UN_MAX,
};

/* Why a host IO of QEMU on a traced file was never joined. */
enum vj_hunjoin {
	VJ_HU_NOT_GUEST = 0, /* no QEMU submit names its buffer: image metadata, copy
				on write, bounce buffers, QEMU's own IO */
	VJ_HU_UNCLAIMED, /* a guest buffer, but no guest record claimed it */
	VJ_HU_MAX,
};

#define VJ_PIECES 8 /* host IOs joined to one guest request at most */

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
	VJ_KICK_TO_HOST, /* guest kick -> host submit (kick_to_qemu + qemu_to_host) */
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

/* What found a joined path's host IO. */
enum vj_key {
	VJ_KEY_NONE = 0, /* not joined */
	VJ_KEY_UPROBE, /* QEMU's blk_aio submit (uprobe) named its buffer */
	VJ_KEY_ADDRESS, /* the guest's buffer address, through the VM's map */
	VJ_KEY_OFFSET, /* a bounce buffer: the disk offset and the time */
	VJ_KEY_MAX,
};

struct vj_path {
	const struct link_vreq *g; /* guest times on the guest clock */
	int key; /* enum vj_key */
	int peer; /* link peer id */
	uint64_t session; /* the guest's link session */
	int disk;
	int joined; /* a host IO was found */
	int unjoin; /* enum vj_unjoin when not joined */
	struct vj_host_io h; /* valid when joined: the first piece */
	struct vj_host_io hp[VJ_PIECES]; /* every host IO of the request (h == hp[0]) */
	int nr_h;
	uint64_t hva; /* QEMU's buffer for it (0: no submit found) */
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
	uint64_t unjoin[VJ_UN_MAX]; /* unjoined guest requests by reason */
	uint64_t host_unjoin[VJ_HU_MAX]; /* never joined host IOs by reason */
	uint64_t split; /* joined guest requests served by several host IOs */
	uint64_t by_key[VJ_KEY_MAX]; /* joined guest requests by what found them */
};

#define VJ_MAX_VMS 32 /* CLI_MAX_QEMU at most */
#define VJ_MAX_DISKS 64 /* host.c's disks */

enum vj_vm_mode {
	VJ_VM_UPROBES = 0, /* joined by QEMU's submit; the map and clock are learned */
	VJ_VM_ADDRESS, /* joined by the guest's buffer address: no uprobe needed */
};

/* Why an address-path VM wants its uprobes back for a while. */
enum vj_recheck {
	VJ_RC_NONE = 0,
	VJ_RC_UNMAPPED, /* addresses its map has no HVA for (memory hotplug, migration) */
	VJ_RC_JOIN_RATE, /* most of its recent requests unjoined */
	VJ_RC_CLOCK, /* its clock bounds went stale: joined paths re-anchor them */
	VJ_RC_MAX,
};

struct vj_vm_stats {
	int mode; /* enum vj_vm_mode, as vjoin_vm_mode() set it */
	int ready; /* uprobe mode: the address path agreed VJ_READY times in a row */
	int recheck; /* address mode: enum vj_recheck, VJ_RC_NONE when all is well */
	int segments; /* of its map */
	uint64_t samples, conflicts; /* map samples; ones that moved a segment */
	uint64_t agree, disagree; /* the address path beside the uprobe path */
	uint64_t addr_joined, addr_unjoined; /* guest requests on the address path */
	uint64_t unmapped, no_address; /* address path: no HVA; no address in the record */
	uint64_t clock_stale; /* address path: the clock bounds were too wide to use */
	uint64_t bounced; /* joined by offset (a bounce buffer) */
	uint64_t calibrations; /* times it became ready */
	uint64_t rechecks[VJ_RC_MAX]; /* re-checks asked, by reason */
	int64_t clk_lo, clk_hi; /* host - guest bounds at its latest path (clk_n > 0) */
	unsigned int clk_n;
};
#define VJ_READY 16 /* agreements in a row that make a VM ready */

/*
 * /proc/PID/maps of the VM's QEMU: the mapping [*lo, *hi) holding hva (guest
 * RAM is one mapping per RAM block). 0, or -1 when there is none.
 */
typedef int (*vj_maps_fn)(void *ctx, int vm, uint64_t hva, uint64_t *lo, uint64_t *hi);

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
/*
 * A host block request queued by QEMU thread tid in its syscall seq: for an
 * aio=native host IO of that io_submit (whose completion QEMU reaps in user
 * space) its block times are the completion. An io_submit of several iocbs:
 * the one whose offset is the sector's (a block device image).
 */
void vjoin_host_block(struct vjoin *j, uint32_t tid, uint64_t seq, uint64_t sector, uint64_t q_ns,
		      uint64_t d_ns, uint64_t c_ns, uint32_t dev);

/* A QEMU uprobe event. */
void vjoin_add_qemu(struct vjoin *j, const struct vj_qemu_ev *e);
/*
 * A guest request of disk `disk` (-1: its serial names no traced disk: emitted
 * unjoined at once), with the peer's clock: host = guest + off, +- unc.
 */
void vjoin_add_guest(struct vjoin *j, int peer, uint64_t session, int disk,
		     const struct link_vreq *g, int64_t off, uint64_t unc, uint64_t now_ns);
/* Give up on what waited hold_ns; emit those guest requests unjoined. */
void vjoin_tick(struct vjoin *j, uint64_t now_ns);
/* Emit every waiting guest request (shutdown). */
void vjoin_flush(struct vjoin *j);
const struct vj_stats *vjoin_stats(const struct vjoin *j);

/*
 * Disk `disk` (< VJ_MAX_DISKS) belongs to VM `vm` (< VJ_MAX_VMS); raw: its host
 * IO is at the guest's offset (a raw image or block device, no backing file),
 * so a bounce buffer's IO can still be found by offset.
 */
void vjoin_disk(struct vjoin *j, int disk, int vm, int raw);
void vjoin_set_maps(struct vjoin *j, vj_maps_fn fn, void *ctx);
/* Put VM vm on a path (enum vj_vm_mode); ready and recheck start over. */
void vjoin_vm_mode(struct vjoin *j, int vm, int mode);
const struct vj_vm_stats *vjoin_vm(const struct vjoin *j, int vm);

const char *vj_stage_name(int s);
const char *vj_unjoin_name(int r);
const char *vj_hunjoin_name(int r);
const char *vj_ts_name(int t);
const char *vj_key_name(int k);
const char *vj_recheck_name(int r);

#endif /* IT_VJOIN_H */
