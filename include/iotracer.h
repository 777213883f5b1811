/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iotracer: types shared by the BPF programs (bpf/) and the daemon (src/).
 *
 * Only __u8..__u64 and fixed arrays, so user space never needs vmlinux.h.
 * Every record that crosses the ring buffer starts with struct it_hdr; the
 * daemon dispatches on hdr.type and checks hdr.size before reading further.
 * Changing a record layout means bumping IT_ABI_VERSION.
 */
#ifndef IOTRACER_H
#define IOTRACER_H

#ifdef __VMLINUX_H__
/* BPF side: vmlinux.h already defines the __uN types. */
#else
#include <linux/types.h>
#endif

#define IT_ABI_VERSION 4
#define IT_COMM_LEN 16
#define IT_HIST_SLOTS 64 /* log2(ns): slot k holds [2^k, 2^(k+1)) ns; a power of two */
#define IT_AIO_BATCH 32 /* iocbs carried by one aio record */
#define IT_MAX_DEVS 64 /* -d devices (a load-time list in the BPF programs' rodata) */
#define IT_MAX_CGROUPS 8 /* --cgroup subtrees (entries of one half of map "cgroups") */
#define IT_SIZE_SLOTS 32 /* request sizes: slot k holds (2^(k-1), 2^k] bytes (0: 0-1, 31: open) */
#define IT_LAT_SLOTS 32 /* agg latency: log2(ns) like IT_HIST_SLOTS; the last one open (>= 2.1 s) */

/* Layers: bit i of a layer mask is layer i. Order is the display order. */
enum it_layer {
	IT_L_SYSCALL = 0,
	IT_L_FS,
	IT_L_SCHED,
	IT_L_BLOCK,
	IT_L_NVME,
	IT_L_SCSI,
	IT_L_VIRTIO,
	IT_L_QEMU,
	IT_L_STACK, /* bio-based devices (dm, md) and partitions above the disks: bpf/stack.bpf.h */
	IT_L_MAX,
};

/* Record types (it_hdr.type). */
enum it_rec_type {
	IT_REC_SYSCALL = 1, /* one fd-based IO syscall, enter..exit */
	IT_REC_BLOCK = 2, /* one block request, Q..C */
	IT_REC_URING = 3, /* one io_uring request, submit..complete */
	IT_REC_AIO = 4, /* iocbs submitted (io_submit) or reaped (io_getevents) */
	IT_REC_QEMU = 5, /* host mode: one uprobe hit in a traced QEMU */
	IT_REC_WAKE = 6, /* no data: a per-CPU record buffer is filling up, drain now */
	IT_REC_NAME = 7, /* a file's path, once per file (bpf/names.bpf.h) */
	IT_REC_CGROUP = 8, /* a cgroup's first block request in the aggregation (IT_AGG_NOTE) */
};

enum it_op {
	IT_OP_READ = 0,
	IT_OP_WRITE,
	IT_OP_SYNC, /* fsync, fdatasync, sync_file_range, block flush */
	IT_OP_DISCARD,
	IT_OP_OTHER,
	IT_OP_MAX,
};

#include "it_opmap.h" /* IOCB_CMD_* and IORING_OP_* <-> enum it_op */

/* What issued a block request. */
enum it_origin {
	IT_ORIG_NONE = 0, /* no traced context (e.g. kworker, filtered syscall) */
	IT_ORIG_SYSCALL, /* inside a traced syscall: (tid, seq) */
	IT_ORIG_URING, /* inside io_uring submission: origin_id = io_kiocb */
	IT_ORIG_WRITEBACK, /* flusher writeback of inode `ino` */
};

/* Syscalls we trace (it_syscall_rec.sys). */
enum it_sys {
	IT_SYS_READ = 0,
	IT_SYS_WRITE,
	IT_SYS_PREAD64,
	IT_SYS_PWRITE64,
	IT_SYS_READV,
	IT_SYS_WRITEV,
	IT_SYS_PREADV,
	IT_SYS_PWRITEV,
	IT_SYS_PREADV2,
	IT_SYS_PWRITEV2,
	IT_SYS_FSYNC,
	IT_SYS_FDATASYNC,
	IT_SYS_SYNC_FILE_RANGE,
	IT_SYS_IO_SUBMIT,
	IT_SYS_IO_GETEVENTS,
	IT_SYS_IO_PGETEVENTS,
	IT_SYS_IO_URING_ENTER,
	IT_SYS_MAX,
};

/*
 * Syscall numbers below this are looked up in the BPF side's table of traced
 * syscalls (sys_of_nr: IT_SYS_* + 1, 0 = not traced); the IO syscalls are
 * far below it on every architecture.
 */
#define IT_SYSNR_MAX 512

/* Histogram stages (it_hist_key.stage). */
enum it_stage {
	IT_ST_TOTAL = 0, /* syscall enter..exit; uring submit..complete */
	IT_ST_OFFCPU, /* off-CPU time inside a syscall */
	IT_ST_Q2C, /* block: queue..complete */
	IT_ST_D2C, /* block: issue to driver..complete (device time) */
	IT_ST_Q2D, /* block: queue..issue (time in the block layer) */
	IT_ST_RUNQ, /* runnable, waiting for a CPU, inside a syscall */
	IT_ST_DIRTY_AGE, /* block write of page-cache pages: oldest page dirtied..queue */
	IT_ST_Q2R, /* stack: an upper bio queued..its first remap to a member device */
	IT_ST_M2C, /* stack: the last member's completion..the upper bio's completion */
	IT_ST_MAX,
};

/* Drop / loss counters: per CPU, index = layer * IT_DROP_KINDS + kind. */
enum it_drop_kind {
	IT_DROP_RINGBUF = 0, /* bpf_ringbuf_reserve failed: record lost */
	IT_DROP_INFLIGHT, /* inflight map full: request not followed */
	IT_DROP_HIST, /* histogram map full */
	IT_DROP_MISSED, /* issued, completion not seen (user space: issued - completed) */
	IT_DROP_KINDS,
};
#define IT_NR_DROPS (IT_L_MAX * IT_DROP_KINDS)

/* Event counters: per CPU, struct it_cpu_counts. */
enum it_counter {
	IT_CNT_BLK_ISSUED = 0, /* followed block requests issued to the driver */
	IT_CNT_BLK_COMPLETED, /* followed block requests seen completing */
	IT_CNT_BLK_ADOPTED, /* requests first seen at issue (their bio queue was not) */
	IT_CNT_BLK_RECYCLED, /* issued, never seen completing, their entry taken by a new bio */
	IT_CNT_WB_NOTED, /* pages (folios) noted going clean -> dirty (map "dirtied") */
	IT_CNT_WB_FOUND, /* page-cache write pages whose dirtier was found at completion */
	IT_CNT_WB_UNKNOWN, /* ... whose dirtier was not (struct it_wb, unknown_why) */
	/* bytes of page-cache block writes (wb.bpf.h), as the records' block[].dirty sums */
	IT_CNT_WB_FOUND_BYTES, /* of pages whose dirtier was found (wb.bytes + other_bytes) */
	IT_CNT_WB_UNK_BYTES, /* unknown_bytes, per reason from here (IT_WB_* bit order): */
	IT_CNT_WB_UNK_NOT_NOTED_BYTES = IT_CNT_WB_UNK_BYTES, /* IT_WB_NOT_NOTED */
	IT_CNT_WB_UNK_REDIRTIED_BYTES, /* IT_WB_REDIRTIED */
	IT_CNT_WB_UNK_MANY_BYTES, /* IT_WB_MANY */
	IT_CNT_WB_UNK_TRUNC_BYTES, /* IT_WB_TRUNC: the rest of a request the walk did not reach */
	/* file names (bpf/names.bpf.h) */
	IT_CNT_NAMES, /* name records written (a file named, or named again) */
	IT_CNT_NAME_FULL, /* files not named: map "named" full (tried again at their next IO) */
	IT_CNT_NAME_LOST, /* name records lost: ring buffer full (tried again at the next IO) */
	/* the stack layer (bpf/stack.bpf.h) */
	IT_CNT_STK_UPPER, /* upper bios followed (queued on a bio-based device) */
	IT_CNT_STK_UPPER_DONE, /* ... seen completing (block_bio_complete) */
	IT_CNT_STK_REMAP, /* remaps matched to their upper bio */
	IT_CNT_STK_NO_UPPER, /* remaps from a followed device whose upper bio was not found */
	IT_CNT_STK_SPLIT, /* upper bios a stacked driver split and accounts as two IOs (dm) */
	IT_CNT_STK_SAME, /* remaps finding two live upper bios at their sector (one chosen) */
	IT_NR_COUNTERS,
};

/*
 * The drop and event counters of one CPU: map "cpu_counts", an entry per
 * possible CPU, BPF_F_MMAPABLE, so the daemon sums them from its mapping
 * without a syscall (a map syscall the kernel preempts holds the CPU's
 * bpf_prog_active, and the per-syscall tracepoints' programs skip their runs
 * meanwhile: docs/hooks.md "The tax"). A CPU's own cache lines.
 */
struct it_cpu_counts {
	__u64 drops[IT_NR_DROPS]; /* index layer * IT_DROP_KINDS + kind */
	__u64 counters[IT_NR_COUNTERS]; /* enum it_counter */
} __attribute__((aligned(64)));

/* Flags on records. */
#define IT_F_DIO (1u << 0) /* file opened O_DIRECT / iomap direct IO seen */
#define IT_F_BDEV (1u << 1) /* fd is a block device (dev = i_rdev) */
#define IT_F_SAMPLED (1u << 2) /* passed min-latency and sampling: keep */
#define IT_F_HAS_Q (1u << 3) /* block: bio queue seen (else q_ns = first seen) */
#define IT_F_HAS_G (1u << 4) /* block: getrq seen */
#define IT_F_HAS_I (1u << 5) /* block: insert seen (else issued directly) */
#define IT_F_SYNC (1u << 6) /* block: REQ_SYNC */
#define IT_F_META (1u << 7) /* block: REQ_META */
#define IT_F_FUA (1u << 8) /* block: REQ_FUA */
#define IT_F_ERROR (1u << 9) /* block: completed with error */
#define IT_F_TRUNC (1u << 10) /* aio: more iocbs than one record holds */
#define IT_F_SCHED_CNT (1u << 11) /* syscall: nr_switches, nr_preempt, runq_ns measured */
#define IT_F_SCHED_SW (1u << 12) /* syscall: offcpu_*, waker_* measured (sched_switch hooks) */
#define IT_F_NO_I (1u << 13) /* block: insert not hooked (no --block-insert): g2d one stage */
#define IT_F_WB (1u << 14) /* block: a write of page-cache pages, wb says who dirtied them */
#define IT_F_UPPER (1u << 15) /* block: a bio of a bio-based device (dm, md): stk_* stamps */
#define IT_F_STK_LOST (1u << 16) /* block: remapped from up_dev, its upper bio not found */
#define IT_F_UNLISTED \
	(1u << 17) /* in flight: an upper bio -d does not list, kept for its members */
/* IT_F_BDEV on a block record: ino/file_dev are a block device node's (file_dev its i_rdev) */

struct it_hdr {
	__u16 type; /* enum it_rec_type */
	__u16 size; /* sizeof the whole record */
	__u32 cpu; /* CPU that emitted it */
};

/*
 * Identity of a thread at a point in time. (tid, seq) names one syscall:
 * seq counts traced syscalls of that thread.
 */
struct it_task {
	__u32 pid; /* tgid */
	__u32 tid;
	__u64 cgroup_id;
	char comm[IT_COMM_LEN];
};

/*
 * A block request's state in flight: the value of map `bios` (bpf/request.bpf.h),
 * keyed by the request's first bio. User space reads it only to end entries
 * whose completion no program saw (src/load/blkstale.c).
 */
struct it_bio_info {
	struct it_task task;
	__u64 q_ns;
	__u64 i_ns;
	__u64 d_ns;
	__u64 seq;
	__u64 origin_id;
	__u64 ino;
	__u32 flags;
	__u8 origin;
	__u8 requeued;
	__u8 live; /* see IT_SLOT_PUT */
	/* driver layer (driver.bpf.h) */
	__u8 drv_layer;
	__u8 drv_opcode;
	union {
		__u16 drv_qid;
		__u16 stk_pieces; /* IT_F_UPPER: remaps of it seen */
	};
	union {
		__u32 drv_tag;
		__u32 stk_bytes; /* IT_F_UPPER: the bio's bytes at queue (the rest after a split) */
	};
	__s32 drv_status;
	__u32 file_dev; /* ino's file system (s_dev), or a block device node's i_rdev */
	/* an upper bio (IT_F_UPPER, stack.bpf.h) has no driver: its stack stamps */
	union {
		__u64 drv_submit_ns;
		__u64 stk_r_ns; /* IT_F_UPPER: its first remap */
	};
	union {
		__u64 drv_kick_ns;
		__u64 stk_sector; /* IT_F_UPPER: its start sector (keyed in map stk_sect) */
	};
	union {
		__u64 drv_done_ns;
		__u64 stk_m_ns; /* IT_F_UPPER: its last member's completion */
	};
	/* a member of a stack: the upper bio it was remapped from (stack.bpf.h) */
	__u64 stk_up; /* the upper bio's key in `bios` (0: not found or a partition) */
	__u32 stk_up_dev; /* the upper device's dev_t (0: not a member) */
	__u32 stk_up_off; /* sectors from the upper bio's start (IT_STK_PART: a partition) */
	/*
	 * A write of page-cache pages under --writeback files (IT_F_WB in
	 * flags, bpf/wbfile.bpf.h): its first page's mapping, read at queue,
	 * when its inode went dirty (inode->dirtied_when; 0: not known), and
	 * whether the pages are another device's data it carries (a loop
	 * device's backing file, a stack's member): then it names their
	 * dirtiers without counting the bytes as the file's written.
	 */
	__u64 wb_mapping;
	__u64 wb_dirtied_ns;
	__u8 wb_carried;
	__u8 pad_wb[7];
	__u64 drv_gpa; /* guest mode: the first data byte's physical address (0: unknown) */
};

/* stk_up_off / up_off of a partition's request: the partition's sector is sector - its start. */
#define IT_STK_PART 0xffffu
/* ... of a raid5 stripe's IO for an upper bio (parity, reads for the parity): no offset */
#define IT_STK_STRIPE 0xfffeu
/* ... of a piece further into its upper bio than the record's 16 bits say */
#define IT_STK_FAR 0xfffdu

/*
 * Who dirtied the page-cache pages a block write carries (bpf/wb.bpf.h):
 * noted when each page went clean -> dirty, in the dirtying task, found
 * again from the request's pages at completion. At most two dirtiers are
 * named; bytes of pages whose dirtier is not known are counted, with why.
 */
#define IT_WB_NOT_NOTED 1 /* no note: dirtied before iotracer started, or evicted (map full) */
#define IT_WB_REDIRTIED 2 /* dirtied again after the request was queued, twice: both notes newer */
#define IT_WB_MANY 4 /* a third dirtier (or more) in one request */
#define IT_WB_TRUNC 8 /* more pages than one walk reads (IT_WB_MAX_VECS) */

/*
 * --writeback: how block writes of page-cache pages find who dirtied them
 * (rodata wb_mode; docs/hooks.md "Writeback"). off: not at all; files: the
 * bytes each process dirtied in each file, from its write calls' write_bytes
 * (per-file notes); pages: a note per dirtied page and a walk of each write
 * request's pages.
 */
enum it_wbmode {
	IT_WBMODE_OFF = 0,
	IT_WBMODE_FILES,
	IT_WBMODE_PAGES,
};

/* struct it_wb.mode: how the dirtiers were found (--writeback, docs/json.md) */
#define IT_WBM_FILE 1 /* split over the file's dirtiers (per-file notes), not page by page */
#define IT_WBM_SHARED 2 /* the file had several dirtiers with bytes not yet written */

/* A noted dirtying: the value of map "dirtied", key struct it_dirty_key. */
struct it_dirty_key {
	__u64 mapping; /* struct address_space *: identity only */
	__u64 index; /* page index of the folio in the file */
};

struct it_dirty {
	struct it_task task; /* the dirtier */
	__u64 ns; /* when the page went clean -> dirty */
	/*
	 * The dirtying before (prev_ns 0: none noted): a page dirtied again while
	 * a request carries it (PG_writeback) is that request's by the older one.
	 */
	struct it_task prev_task;
	__u64 prev_ns;
};

struct it_wb {
	struct it_task dirtier; /* whose pages are most of the first ones (pid 0: none known) */
	__u64 dirty_first_ns; /* oldest page's dirtying (any dirtier); 0: none known */
	__u64 dirty_last_ns; /* newest page's */
	__u64 blkcg_id; /* cgroup v2 id the kernel charges the IO to (bio's blkcg); 0: none */
	__u32 bytes; /* of the dirtier's pages */
	__u32 other_bytes; /* of the second dirtier's pages */
	__u32 unknown_bytes; /* of pages whose dirtier is not known (unknown_why) */
	__u32 file_dev; /* kernel dev_t of the first page's file system (s_dev) */
	__u32 other_pid; /* the second dirtier's tgid (0: none) */
	__u8 unknown_why; /* IT_WB_* bits */
	__u8 mode; /* IT_WBM_* bits (0: page by page) */
	__u16 pad1;
};

/*
 * The user buffers of a read or write: the buffer, or a vectored call's first
 * two iovecs (host mode finds the guest's buffer QEMU passed through in
 * either: qcow2 puts its copy-on-write buffer before the guest's).
 */
struct it_bufs {
	__u64 buf; /* buffer, or iov[0].iov_base */
	__u64 buf2; /* iov[1].iov_base; 0 with fewer than two iovecs */
	__u32 len; /* bytes at buf: the count, or iov[0].iov_len */
	__u32 len2; /* iov[1].iov_len */
};

struct it_syscall_rec {
	struct it_hdr hdr;
	struct it_task task;
	__u64 seq;
	__u64 enter_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u64 exit_ns;
	__s64 ret;
	__u64 offset; /* pos argument, or file position at enter */
	__u64 bytes; /* requested length (sum of iovecs where known) */
	__u64 ino; /* inode of the fd */
	__u32 dev; /* kernel dev_t (MAJOR<<20|MINOR): i_rdev for bdevs, s_dev else */
	__u16 sys; /* enum it_sys */
	__u8 op; /* enum it_op */
	__u8 pad0;
	__u32 flags; /* IT_F_* */
	__u32 nr_bios; /* bios this syscall queued */
	/* fs layer */
	__u32 cache_miss_pages; /* pages added to the page cache while in the syscall */
	__u32 dio_count; /* iomap direct-IO operations begun */
	__u64 first_q_ns; /* first bio queued (0 if none) */
	__u64 vfs_ns; /* time inside vfs_read/vfs_write (fentry/kprobe kernels), else 0 */
	/*
	 * sched layer. From the task's own counters at enter and exit
	 * (IT_F_SCHED_CNT): context switches, the involuntary ones among them,
	 * and the time spent runnable but waiting for a CPU (the kernel's
	 * sched_info.run_delay). From the sched_switch/sched_wakeup hooks
	 * (IT_F_SCHED_SW, --sched-switch): off-CPU time and the waker.
	 */
	__u64 offcpu_ns; /* total time switched out */
	__u64 offcpu_blocked_ns; /* part of it in a blocked (not runnable) state */
	__u32 nr_switches;
	__u32 waker_tid; /* last task that woke this one (0 if none) */
	char waker_comm[IT_COMM_LEN];
	__u64 runq_ns; /* runnable, waiting for a CPU */
	__u32 nr_preempt; /* involuntary switches (preempted while runnable) */
	__u32 pad1;
	struct it_bufs bufs; /* the user buffer(s) */
};

struct it_block_rec {
	struct it_hdr hdr;
	struct it_task task; /* submitter (current at bio queue) */
	union { /* by origin (ABI 4: one word) */
		__u64 seq; /* SYSCALL: the submitter's syscall seq */
		__u64 origin_id; /* URING: the io_kiocb pointer; WRITEBACK: the inode */
	};
	__u64 sector;
	__u64 q_ns, g_ns, i_ns, d_ns, c_ns;
	__u64 ino; /* inode of the page-cache pages, or of the submitting fd */
	__u32 dev; /* kernel dev_t of the request's disk */
	__u32 bytes;
	__u32 flags; /* IT_F_* */
	__s32 error;
	/*
	 * Bios merged into this request (0: not reported). In a storage stack
	 * (bpf/stack.bpf.h), a request remapped from an upper device (up_dev)
	 * has instead its offset from that upper bio's start, in sectors
	 * (IT_STK_PART: a partition's request, its sector is this one minus
	 * the partition's start; IT_STK_STRIPE: a raid5 stripe's IO for the
	 * upper bio, parity or a read for it; IT_STK_FAR: further than 16 bits
	 * say). An upper bio that is itself a member (LVM on dm-crypt) names
	 * its own upper the same way.
	 */
	union {
		__u16 nr_merged;
		__u16 up_off;
	};
	__u8 op; /* enum it_op */
	__u8 origin; /* enum it_origin */
	__u32 file_dev; /* kernel dev_t of ino's file system (IT_F_BDEV: the node's i_rdev); 0 */
	/*
	 * driver layer (nvme, scsi, virtio): zero when no driver hook saw it.
	 * An upper bio (IT_F_UPPER) has no driver: drv_layer is 0 and these
	 * hold its stack stamps and pieces.
	 */
	union {
		__u64 drv_submit_ns; /* nvme_setup_cmd / scsi_dispatch_cmd_start / virtio_queue_rq */
		__u64 stk_r_ns; /* IT_F_UPPER: its first remap to a member (0: none seen) */
	};
	__u64 drv_kick_ns; /* virtio: virtqueue_notify (exit to the hypervisor) */
	union {
		__u64 drv_done_ns; /* nvme_complete_rq / scsi_dispatch_cmd_done / virtblk done */
		__u64 stk_m_ns; /* IT_F_UPPER: its last member's completion (0: none seen) */
	};
	union {
		__u32 drv_tag; /* nvme command id, scsi tag, virtio: 0 */
		__u32 stk_pieces; /* IT_F_UPPER: remaps of it seen */
	};
	__u16 drv_qid; /* nvme queue id, hw queue */
	__u8 drv_layer; /* IT_L_NVME, IT_L_SCSI, IT_L_VIRTIO; 0 = none */
	__u8 drv_opcode; /* nvme opcode, scsi cdb[0], virtio: 0 */
	__s32 drv_status; /* nvme status, scsi result */
	__u32 up_dev; /* the upper device's dev_t in a storage stack (0: none): see up_off */
	__u64 drv_gpa; /* guest mode: it_block_gpa() */
	/* a write of page-cache pages (IT_F_WB): who dirtied them (pid 0 and no bytes: not one) */
	struct it_wb wb;
};

/*
 * Guest mode: the physical address of the request's first data byte as the
 * driver hands it to the device (bpf/gpa.bpf.h), 0 when not known. On a QEMU
 * guest that is the guest-physical address (GPA) the host maps to the buffer
 * QEMU's host IO names (docs/modes.md, "The address path"). Its word came
 * from seq and origin_id, which no origin uses both of (ABI 4): the record
 * fills its 256-byte slot (IT_SLOT_SIZE).
 */
static inline __u64 it_block_gpa(const struct it_block_rec *b)
{
	return b->drv_gpa;
}

struct it_uring_rec {
	struct it_hdr hdr;
	struct it_task task; /* submitter */
	__u64 req; /* io_kiocb address: id only, never dereferenced */
	__u64 user_data;
	__u64 submit_ns;
	__u64 complete_ns;
	__u64 ino;
	__s32 res;
	__u32 dev;
	__u8 opcode; /* IORING_OP_* */
	__u8 op; /* enum it_op */
	__u16 pad0;
	__u32 flags;
	/* read/write opcodes (0 otherwise): the SQE's file offset, bytes, buffer(s) */
	__u64 offset;
	__u64 bytes; /* READ/WRITE: len; READV/WRITEV: the iovecs' sum, else the result */
	struct it_bufs bufs;
};

struct it_aio_iocb {
	__u64 iocb; /* user address of the iocb: the key */
	__u64 offset;
	__u64 nbytes;
	__s64 res; /* reap only */
	__u32 fd;
	__u32 dev; /* kernel dev_t of the fd's file (submit only, 0 if unknown) */
	__u16 opcode; /* IOCB_CMD_* */
	__u16 flags; /* IT_F_BDEV: the fd is a block device (dev its i_rdev) */
	__u32 pad1;
	__u64 ino; /* inode of the fd's file (submit only) */
	struct it_bufs bufs; /* submit only */
};

struct it_aio_rec {
	struct it_hdr hdr;
	struct it_task task;
	__u64 seq; /* the io_submit / io_getevents syscall's seq */
	__u64 enter_ns;
	__u64 exit_ns;
	__u16 sys; /* IT_SYS_IO_SUBMIT or IT_SYS_IO_GETEVENTS/PGETEVENTS */
	__u16 nr; /* valid entries in iocbs[] */
	__u32 flags; /* IT_F_TRUNC */
	__s64 ret;
	struct it_aio_iocb iocbs[IT_AIO_BATCH]; /* only nr of them are sent */
};

/* An aio record is variable-length: hdr.size == IT_AIO_SIZE(nr). */
#define IT_AIO_SIZE(nr)                                                          \
	(sizeof(struct it_aio_rec) - IT_AIO_BATCH * sizeof(struct it_aio_iocb) + \
	 (nr) * sizeof(struct it_aio_iocb))

/*
 * In-kernel log2 histograms, read by the daemon from its mappings without a
 * syscall (as struct it_cpu_counts): key -> index in map "hist_idx" (a hash:
 * one lookup per finished request updates every stage of its layer), the
 * index's key in map "hist_keys" (BPF_F_MMAPABLE: struct it_hist_idx, used
 * once published), and the values per CPU in map "hists" (BPF_F_MMAPABLE:
 * struct it_hist_val at cpu << hist_shift | index). The loader sizes the
 * number of indices (up to IT_HIST_KEYS) to a memory budget.
 */
#define IT_HIST_KEYS 256
struct it_hist_key {
	__u32 dev; /* kernel dev_t, 0 when not device specific */
	__u8 layer; /* enum it_layer */
	__u8 op; /* enum it_op */
	__u16 kind; /* enum it_hist_kind */
};

/* Within a layer, requests whose latencies must not be mixed. */
enum it_hist_kind {
	IT_HK_PLAIN = 0, /* sync syscalls; block requests */
	IT_HK_URING = 1, /* io_uring requests (syscall layer) */
	IT_HK_AIO = 2, /* libaio requests, io_submit..io_getevents (built in user space) */
	IT_HK_MEMBER = 3, /* block requests remapped from an upper device (role "member") */
};

struct it_hist {
	__u64 slots[IT_HIST_SLOTS];
	__u64 count;
	__u64 sum_ns;
};

struct it_hist_val {
	struct it_hist st[IT_ST_MAX]; /* indexed by enum it_stage */
};

struct it_hist_idx {
	struct it_hist_key key;
	__u32 used; /* set last: key is valid */
	__u32 pad;
};

/* What a QEMU uprobe saw (it_qemu_rec.ev). */
enum it_qemu_ev {
	IT_QEV_AIO_READ = 0, /* blk_aio_preadv(blk, offset, ...): QEMU submits a guest read */
	IT_QEV_AIO_WRITE, /* blk_aio_pwritev(blk, offset, ...) */
	IT_QEV_NOTIFY, /* virtio_notify(vdev, vq): QEMU interrupts the guest */
	IT_QEV_KVM_IRQ, /* kvm_msi_set_irq / kvm_set_irq in a QEMU thread: KVM injects it */
	IT_QEV_MAX,
};

struct it_qemu_rec {
	struct it_hdr hdr;
	__u32 pid, tid;
	__u64 ts_ns;
	__u64 obj; /* BlockBackend * (aio) or VirtIODevice * (notify): identity only */
	__u64 offset; /* aio: byte offset in the image */
	__u32 ev; /* enum it_qemu_ev */
	__u32 niov; /* aio: qiov->niov */
	__u64 hva; /* aio: qiov->iov[0].iov_base, the guest buffer in QEMU's memory */
	__u64 bytes; /* aio: qiov->size */
};

/*
 * A file's name (IT_REC_NAME), written the first time a record names the file
 * (dev, ino, and IT_NM_BDEV as the records' IT_F_BDEV), and again when its
 * name changed (renamed, moved, unlinked, reached by another link). The path
 * is its dentries' names up to the root of its file system (not of a mount:
 * user space finds the mount from mountinfo, mnt_id or the file system's dev
 * and the mount's root), leaf first, each NUL-terminated: names[0..len) holds
 * nr of them. The variable part is sent: hdr.size == IT_NAME_SIZE(len).
 */
#define IT_NAME_MAX 4096 /* bytes of names a record carries (a longer path is cut: IT_NM_CUT) */
#define IT_NAME_COMP 256 /* a component's bytes at most, its NUL included (NAME_MAX 255) */
#define IT_NAME_DEPTH 256 /* components at most */
#define IT_FSTYPE_LEN 16

#define IT_NM_BDEV 1 /* the key: a block device node (dev its i_rdev) */
#define IT_NM_DELETED 2 /* unlinked (d_unlinked): open, no name left in its directory */
#define IT_NM_CUT 4 /* the walk stopped before the root: names holds the leaf side */
/* no directory holds it (memfd, pseudo files): its own name only; an inode of no dentry
 * (a block device's own page cache): no name, its file system's type alone */
#define IT_NM_PSEUDO 8
#define IT_NM_AGAIN 16 /* named before in this run: the name changed since */
#define IT_NM_INODE 32 /* named from the inode (page cache, writeback): its first alias */

struct it_name_rec {
	struct it_hdr hdr;
	__u64 ts_ns; /* when (CLOCK_MONOTONIC): ordered with the records */
	__u64 ino;
	__u32 dev;
	__u32 flags; /* IT_NM_* */
	__u32 mnt_id; /* the mount it was reached through (mountinfo's first field); 0: none */
	__u32 mnt_ns; /* that task's mount namespace (its inode number); 0: none known */
	__u32 pid; /* the task (tgid) that reached it: its /proc/PID/mountinfo */
	__u16 nr; /* components in names */
	__u16 len; /* bytes of names used */
	char fstype[IT_FSTYPE_LEN]; /* its file system's type (s_type->name), NUL-padded */
	char names[IT_NAME_MAX];
};

#define IT_NAME_SIZE(len) (sizeof(struct it_name_rec) - IT_NAME_MAX + (len))

/*
 * A cgroup's first block request in the aggregation: a new key of map "agg"
 * with its cgroup (agg_keys IT_AGG_NOTE, the daemon's --metrics-cgroup-depth).
 * The daemon names the cgroup and its container from it while they exist: a
 * container that did its IO and exited between two /metrics rebuilds would be
 * gone by the next one (docs/cgroups.md). One per new (cgroup, device, op).
 */
struct it_cgroup_rec {
	struct it_hdr hdr;
	__u64 cgroup_id;
	__u64 ts_ns; /* the request's completion */
};

#ifndef __bpf__
/*
 * User space reads each record type's size and end stamp here, and only
 * here. it_rec_size: the size of a record of that type (aio: without its
 * iocbs, IT_AIO_SIZE(0), the least it has); 0 for a type without a body
 * (IT_REC_WAKE) or unknown. it_rec_end_ns: when the record's request ended
 * (CLOCK_MONOTONIC; the daemon merges records in this order), 0 when len is
 * too short for its type or the type has no end.
 */
static inline __u32 it_rec_size(__u32 type)
{
	switch (type) {
	case IT_REC_SYSCALL:
		return sizeof(struct it_syscall_rec);
	case IT_REC_BLOCK:
		return sizeof(struct it_block_rec);
	case IT_REC_URING:
		return sizeof(struct it_uring_rec);
	case IT_REC_AIO:
		return IT_AIO_SIZE(0);
	case IT_REC_QEMU:
		return sizeof(struct it_qemu_rec);
	case IT_REC_NAME:
		return IT_NAME_SIZE(0);
	case IT_REC_CGROUP:
		return sizeof(struct it_cgroup_rec);
	default:
		return 0;
	}
}

static inline __u64 it_rec_end_ns(const void *data, __u64 len)
{
	const struct it_hdr *h = (const struct it_hdr *)data;

	if (len < sizeof(*h) || !it_rec_size(h->type) || len < it_rec_size(h->type))
		return 0;
	switch (h->type) {
	case IT_REC_SYSCALL:
		return ((const struct it_syscall_rec *)data)->exit_ns;
	case IT_REC_BLOCK:
		return ((const struct it_block_rec *)data)->c_ns;
	case IT_REC_URING:
		return ((const struct it_uring_rec *)data)->complete_ns;
	case IT_REC_AIO:
		return ((const struct it_aio_rec *)data)->exit_ns;
	case IT_REC_NAME:
		return ((const struct it_name_rec *)data)->ts_ns;
	case IT_REC_CGROUP:
		return ((const struct it_cgroup_rec *)data)->ts_ns;
	default: /* IT_REC_QEMU */
		return ((const struct it_qemu_rec *)data)->ts_ns;
	}
}
#endif /* !__bpf__ */

/*
 * Per-CPU record buffers (map "slots", BPF_F_MMAPABLE): CPU c owns slots
 * [c << shift, (c + 1) << shift), one record per IT_SLOT_SIZE slot, written
 * at head & mask. A BPF program claims its CPU's buffer (busy), writes the
 * record in place and publishes it by advancing head; user space reads
 * up to head and moves tail. No lock, no IRQ masking, no cache line shared
 * between CPUs. A record that does not fit (aio), or finds the buffer busy
 * (a program interrupted on this CPU) or full, goes to the shared ring
 * buffer "events" instead. map "slot_pos" holds one struct it_slot_pos per
 * CPU; head and tail sit on separate cache lines.
 */
#define IT_SLOT_SIZE 256

struct it_slot {
	__u8 b[IT_SLOT_SIZE];
};

struct it_slot_pos {
	__u64 head; /* records published (BPF) */
	__u64 busy; /* a program of this CPU is writing a record (BPF) */
	__u64 pad0[6];
	__u64 tail; /* records consumed (user space) */
	__u64 pad1[7];
};

/*
 * Block requests aggregated in the kernel (map "agg", bpf/agg.bpf.h), for the
 * /metrics bytes and size families, the cgroup label and `iotracer top`: per
 * CPU, summed by user space. The key's tgid and cgroup_id are 0 unless the
 * daemon asked for them (agg_keys, IT_AGG_*).
 */
#define IT_AGG_KEYS 16384 /* indices of the table, at most (the loader sizes it) */
#define IT_AGG_ON 1 /* aggregate at all */
#define IT_AGG_TGID 2 /* key by the owner's process (submitter, or dirtier: wb.bpf.h) */
#define IT_AGG_CGROUP 4 /* key by the owner's cgroup v2 id */
#define IT_AGG_FILE 8 /* key by the request's file (ino, file_dev, file_bdev; 0: none known) */
#define IT_AGG_NOTE 16 /* a new key's cgroup in an IT_REC_CGROUP record */

struct it_agg_key {
	__u64 cgroup_id;
	__u64 ino; /* IT_AGG_FILE: the file's inode */
	__u32 tgid;
	__u32 dev; /* kernel dev_t */
	__u32 file_dev; /* IT_AGG_FILE: its file system's dev_t (a block device node's i_rdev) */
	__u8 op; /* enum it_op */
	__u8 file_bdev; /* IT_AGG_FILE: the file is a block device node */
	__u8 pad[2];
};

/*
 * The aggregation is a table of the daemon's mappings, as the histograms: a
 * key's index in map "agg_idx", the index's key and process name in map
 * "agg_names" (struct it_agg_idx, used once published), the values per CPU in
 * map "agg" (struct it_agg_val at cpu << agg_shift | index; its comm is left
 * to the reader, from agg_names).
 */
struct it_agg_idx {
	struct it_agg_key key;
	char comm[IT_COMM_LEN]; /* the submitter's when its index was given (with IT_AGG_TGID) */
	__u32 used; /* set last: key and comm are valid */
	__u32 pad;
};

struct it_agg_val {
	__u64 count;
	__u64 bytes;
	__u64 q2c_ns; /* sums over the requests */
	__u64 q2d_ns; /* queue: bio queued -> issued to the driver (requests with a D stamp) */
	__u64 d2c_ns; /* device: issued -> completed */
	__u64 nr_d; /* requests with a D stamp (those q2d_ns and d2c_ns sum) */
	__u64 size[IT_SIZE_SLOTS];
	__u64 lat[IT_LAT_SLOTS]; /* q2c, log2(ns) */
	char comm[IT_COMM_LEN]; /* the submitter's, last seen (with IT_AGG_TGID) */
};

/* Kernel dev_t helpers (the kernel's MKDEV, not glibc's makedev). */
#define IT_MINORBITS 20
#define IT_MKDEV(ma, mi) (((__u32)(ma) << IT_MINORBITS) | (__u32)(mi))
#define IT_MAJOR(d) ((__u32)(d) >> IT_MINORBITS)
#define IT_MINOR(d) ((__u32)(d) & ((1u << IT_MINORBITS) - 1))

/*
 * Key of the "files" filter map (a traced file or directory: bdev 0, dev the
 * file system's s_dev, block device nodes too) and of the "named" map
 * (bpf/names.bpf.h: a file as the records name it, dev and ino as theirs:
 * a block device node by its i_rdev, bdev 1).
 */
struct it_file_key {
	__u64 ino;
	__u32 dev; /* kernel dev_t of the filesystem (s_dev), or (bdev) the node's i_rdev */
	__u32 bdev;
};

#endif /* IOTRACER_H */
