/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vjoin internals, shared by vjoin.c (the tables, the uprobe path: a guest
 * request found by QEMU's blk_aio submit), vjaddr.c (the address path: a
 * guest request found by its buffer's guest-physical address, with the VM's
 * GPA -> HVA map; each VM's state) and vjpath.c (what every joined path
 * gets, the VM's clock), in that order: each calls only the ones after it.
 * Not for other modules: they use vjoin.h.
 */
#ifndef IT_VJOIN_INT_H
#define IT_VJOIN_INT_H

#include <stdint.h>

#include "mode/gpamap.h"
#include "mode/vjoin.h"

#define VJ_DEF_HOST 65536
#define VJ_QEV 16384 /* QEMU submit events kept */
#define VJ_NOTIFY 65536 /* QEMU notify times kept */
#define VJ_SLACK_NS 200000ull /* added to the clock uncertainty on guest/host bounds */
#define VJ_NONE UINT64_MAX
#define VJ_HOST_KEEP 5 /* host IOs wait 5 x hold_ns: guest records may come late */
#define VJ_EARLY 256
#define VJ_AIO_SCAN 256 /* newest host IOs searched for a block's io_submit */
#define VJ_AIO_SEEN 1024 /* io_submits recently seen, by a hash of (tid, seq) */
#define VJ_CLK 64 /* joined paths a VM's causal clock bounds are taken over */
#define VJ_WIN 64 /* address-path outcomes a VM's re-check looks at */
#define VJ_HIST 256 /* a VM's clock history: the tightest bounds of each 100 ms */
#define VJ_CLK_SLACK_NS 10000ull /* stamps: a probe's own time */
/*
 * A lookup for host IOs that entered at or after lo drops from its bucket's
 * unused list those that ended this long before lo: requests at one buffer
 * come in order, so no later one can claim them (still counted when they
 * expire). A QEMU submit chain (newest first, in arrival order) is walked
 * down to this long before the time looked for. Reused guest buffers (most
 * are) had every lookup walk thousands of entries: ~20 us per guest IO.
 */
#define VJ_CHAIN_SLACK_NS 1000000000ull

/*
 * A host IO. Until it is used (or expires, or is too old to be claimed), it
 * is on its bucket's list of unused IOs, oldest first: the IOs at one guest
 * buffer never overlap in time (a buffer is not reused in flight), so the
 * first that fits a request at that buffer is its earliest, and a lookup
 * stops there instead of walking every IO the buffer ever had.
 */
struct vj_hent {
	struct vj_host_io io;
	uint64_t idx, arrive_ns;
	uint64_t uprev, unext; /* the bucket's unused list (VJ_NONE: end) */
	int used, listed;
};

struct vj_qent {
	uint64_t idx, prev_off, prev_hva; /* chains by (op, offset) and by buffer */
	uint64_t ts, offset, hva, bytes;
	uint32_t niov;
	uint8_t op;
};

/* A block request of an io_submit seen before the io_submit's record. */
struct vj_early {
	uint32_t tid, dev;
	uint64_t seq, sector, q, d, c;
};

struct vj_wait {
	struct link_vreq g;
	int peer, disk;
	uint64_t session;
	int64_t off;
	uint64_t unc, arrive_ns;
};

/* A guest request's time window on the host clock (try_join). */
struct vj_win {
	uint64_t lo, hi; /* where its QEMU submit may be: kick - tol .. irq + tol */
	uint64_t kick, irq; /* guest clock, raw */
};

/* A joined path's bounds on host - guest (enter - kick, end - interrupt) at guest time t. */
struct vj_clk {
	int64_t a, b;
	uint64_t t;
};

/* A ring of them: n kept, the next written at next. */
struct vj_clks {
	unsigned int n, next, cap;
	struct vj_clk *s;
};

/*
 * One VM: its GPA -> HVA map, the bounds its joined paths put on its clock
 * (host - guest: at most each host IO's enter - its guest kick, at least its
 * end - its guest interrupt, over the last VJ_CLK, each at its guest time),
 * and the re-check state.
 */
struct vj_vm {
	struct vj_vm_stats st;
	struct gpamap map;
	struct vj_clk clk_s[VJ_CLK];
	struct vj_clks clk; /* the last VJ_CLK joined paths' */
	/*
	 * The history: per 100 ms of guest time, the tightest of its paths'
	 * bounds (at their own times), over the last VJ_HIST; the clock's rate
	 * against the host's fitted to it (vjaddr.c clk_rate), to carry the
	 * bounds over a pause with no path.
	 */
	struct vj_clk hist_s[VJ_HIST];
	struct vj_clks hist;
	double rate, rate_half; /* host - guest drift (ns per ns), and its uncertainty */
	int rate_ok;
	uint64_t rate_hist; /* hist_next + hist_n * VJ_HIST when rate was fitted */
	uint8_t win[VJ_WIN]; /* address-path outcomes: enum vj_outcome */
	unsigned int win_n, win_next;
	unsigned int win_unmapped, win_bad; /* outcomes in the window: unmapped, not joined */
	unsigned int agree_run; /* uprobe path: address path agreed this many times in a row */
	uint64_t gen_at_recheck; /* map generation when the re-check began */
	uint64_t backoff_ns, next_recheck_ns; /* join-rate re-checks: not before */
	int recheck_reason; /* enum vj_recheck of the re-check under way */
	uint64_t uprobes_since; /* host time the uprobe path began (its submits seen since) */
};

struct vjoin {
	vj_emit_fn fn;
	void *ctx;
	uint64_t hold_ns;
	uint64_t now_ns; /* latest time a caller passed */
	/* host IOs */
	struct vj_hent *h;
	uint64_t hmask, hhead, htail; /* entries [htail, hhead) */
	uint64_t *uhead, *utail; /* per bucket: its unused IOs, oldest first */
	/* QEMU submits */
	struct vj_qent q[VJ_QEV];
	uint64_t qhead;
	uint64_t qb_off[VJ_QEV], qb_hva[VJ_QEV];
	/* QEMU notifies: sorted, circular [ntail, nhead) */
	uint64_t n[VJ_NOTIFY];
	uint64_t nhead, ntail;
	struct vj_early early[VJ_EARLY];
	uint64_t ehead;
	/*
	 * The (tid, seq) keys of recent aio host IOs' io_submits: a block
	 * request of another syscall (aio=threads' preadv: the correlator joined
	 * it already) skips the scan of the newest host IOs for its io_submit.
	 */
	uint64_t aio_seen[VJ_AIO_SEEN];
	/* guest requests waiting for their host IO */
	struct vj_wait *w;
	size_t nw, wcap;
	struct vj_stats st;
	/* VMs and their disks (vjoin_disk) */
	struct vj_vm vm[VJ_MAX_VMS];
	int16_t disk_vm[VJ_MAX_DISKS]; /* -1: not said */
	uint8_t disk_raw[VJ_MAX_DISKS]; /* its host IO's offset is the guest's */
	vj_maps_fn maps;
	void *maps_ctx;
};

/* Address-path outcomes in a VM's window (vj_vm.win). */
enum vj_outcome { VJ_O_JOINED = 0, VJ_O_UNJOINED, VJ_O_UNMAPPED };

/* vjpath.c: below vjoin.c and vjaddr.c, calling neither */
/* A mix of a and b: the tables' hash keys. */
uint64_t vj_hash(uint64_t a, uint64_t b);
uint64_t vj_host_key(uint8_t op, uint64_t buf);
/* The oldest unused host IO of buf's bucket (other buffers' too: check), and the next. */
struct vj_hent *vj_unused(struct vjoin *j, uint8_t op, uint64_t buf);
struct vj_hent *vj_unused_next(struct vjoin *j, const struct vj_hent *e);
/* Off its bucket's list: used, expired, or ended long before anything still looks for it. */
void vj_unlist(struct vjoin *j, struct vj_hent *e);
/* The guest's kick or its stand-in (raw guest clock), and its interrupt. */
uint64_t vj_guest_kick(const struct link_vreq *g);
uint64_t vj_guest_irq(const struct link_vreq *g);
/* A host IO's end as QEMU sees it (exit, else block C, else its start). */
uint64_t vj_io_end(const struct vj_host_io *io);
/*
 * A path's fields from w (guest times on the host clock) with unjoin set to
 * VJ_UN_NO_DISK; its window in *win. 1 when it has a disk and a kick.
 */
int vj_path_init(const struct vj_wait *w, struct vj_path *p, struct vj_win *win);
/*
 * Emit p: joined with the n pieces pc (marked used; submit_ts: its QEMU
 * submit, 0 for none) when p->joined, else unjoined; counted either way.
 */
void vj_finish(struct vjoin *j, struct vj_path *p, struct vj_hent **pc, int n, uint64_t submit_ts,
	       uint64_t hi);
/* The VM of a disk, NULL when not said. */
struct vj_vm *vj_vm_of(struct vjoin *j, int disk);
/* A joined path bounds its VM's clock (host - guest); vj_finish does it. */
void vj_clock_note(struct vjoin *j, const struct vj_path *p);
/*
 * The VM's clock bounds at guest time t: lo <= host - guest <= hi, from its
 * recent joined paths. 0 when they cannot tell (too few, too wide).
 */
int vj_clk_bounds(struct vj_vm *vm, uint64_t t, int64_t *lo, int64_t *hi);

/* vjaddr.c: below vjoin.c */
/* Does w take the address path (its VM on it, or w from before its uprobes came back)? */
int vj_by_address(struct vjoin *j, const struct vj_wait *w, const struct vj_vm *vm);
/* The address path for w (its VM in VJ_VM_ADDRESS): 1 when emitted. */
int vj_addr_join(struct vjoin *j, const struct vj_wait *w, int force);
/* The uprobe path found no submit for w: joined by the address path (1), or not (0). */
int vj_addr_fallback(struct vjoin *j, const struct vj_wait *w);
/*
 * The uprobe path found QEMU's submit of w, at buffer hva, and joined it
 * with first as its first host IO (NULL: not joined): the VM learns its map,
 * and the address path is tried beside it (nothing marked, nothing emitted):
 * agreements in a row make the VM ready.
 */
void vj_addr_learn(struct vjoin *j, const struct vj_wait *w, uint64_t hva, struct vj_hent *first);
/* A bounce buffer's host IO for w: offset and time (a disk whose offsets are the guest's). */
struct vj_hent *vj_bounce_find(struct vjoin *j, const struct vj_wait *w, uint64_t lo, uint64_t hi,
			       uint64_t hva);
/* Is buf guest RAM of the disk's VM (by its map)? */
int vj_is_guest_ram(struct vjoin *j, int disk, uint64_t buf);

#endif /* IT_VJOIN_INT_H */
