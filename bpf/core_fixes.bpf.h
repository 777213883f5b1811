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
 * gets one program per name (io_uring_submit_sqe/_req, uring.bpf.h) and
 * the loader autoloads the one that exists. Helpers a kernel lacks are
 * probed by the loader too (has_* in config.bpf.h): a branch on such a
 * constant is dead code the verifier never checks, so the helper's call
 * stays in the object for the kernels that have it. Plain NULL and range checks
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
#include "maps.bpf.h"

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

/*
 * 5.11 added bpf_get_current_task_btf(): a task pointer the
 * verifier types, whose fields are plain loads. Before, bpf_get_current_task()
 * returns a plain value, read with bpf_probe_read_kernel: pass IT_TASK_BTF as
 * IT_RD's btf argument for reads from it_current_task().
 */
#define IT_TASK_BTF ((bool)has_task_btf)

static __always_inline struct task_struct *it_current_task(void)
{
	if (has_task_btf)
		return bpf_get_current_task_btf();
	return (struct task_struct *)bpf_get_current_task();
}

/*
 * 5.12 opened task local storage to tracing programs (5.11 had it for LSM
 * programs only). Before,
 * the loader makes `tstate` an LRU hash keyed by thread id (has_task_storage
 * = 0): same value, created on a thread's first traced event, evicted oldest
 * first (when more threads than its entries do IO) instead of freed with the
 * task. New entries are copied from tstate_zero (a thread_state is too big
 * for the stack of some callers).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct thread_state);
} tstate_zero SEC(".maps");

/* tid < 0: the current thread's (asked of the kernel only where the hash needs it) */
static __always_inline struct thread_state *it_tstate_get(struct task_struct *t, s64 tid,
							  bool create)
{
	struct thread_state *st, *zero;
	u32 k = 0, key;

	if (has_task_storage)
		return bpf_task_storage_get(&tstate, t, 0,
					    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	key = tid < 0 ? (u32)bpf_get_current_pid_tgid() : (u32)tid;
	st = bpf_map_lookup_elem(&tstate, &key);
	if (st || !create)
		return st;
	zero = bpf_map_lookup_elem(&tstate_zero, &k);
	if (!zero || bpf_map_update_elem(&tstate, &key, zero, BPF_NOEXIST))
		return NULL;
	return bpf_map_lookup_elem(&tstate, &key);
}

/*
 * raw_syscalls sys_enter / sys_exit: the syscall's arguments and number in
 * the user registers the tracepoint passes (the architecture's syscall
 * convention), and whether it is a 32-bit (compat) syscall, whose numbers
 * are another table's: x86 marks one in thread_info.status (TS_COMPAT, set
 * at entry, cleared on the return to user mode, after sys_exit), arm64 by
 * the AArch32 state bit of the saved PSTATE (PSR_MODE32_BIT).
 */
#if defined(__TARGET_ARCH_x86)
#define IT_SYS_ARG(btf, regs, n)            \
	((n) == 0 ? IT_RD(btf, regs, di) :  \
	 (n) == 1 ? IT_RD(btf, regs, si) :  \
	 (n) == 2 ? IT_RD(btf, regs, dx) :  \
	 (n) == 3 ? IT_RD(btf, regs, r10) : \
	 (n) == 4 ? IT_RD(btf, regs, r8) :  \
		    IT_RD(btf, regs, r9))
#define IT_SYS_NR(btf, regs) ((u64)IT_RD(btf, regs, orig_ax))
/* the first argument once the syscall returned (x86 keeps di; arm64's x0 holds the return) */
#define IT_SYS_ARG0_AT_EXIT(btf, regs) IT_RD(btf, regs, di)
#define IT_TS_COMPAT 0x0002

static __always_inline bool it_compat_syscall(struct pt_regs *regs, const bool btf)
{
	return IT_RD(IT_TASK_BTF, it_current_task(), thread_info.status) & IT_TS_COMPAT;
}
#elif defined(__TARGET_ARCH_arm64)
#define IT_SYS_ARG(btf, regs, n) IT_RD(btf, regs, regs[n])
#define IT_SYS_NR(btf, regs) ((u64)(u32)IT_RD(btf, regs, syscallno))
#define IT_SYS_ARG0_AT_EXIT(btf, regs) IT_RD(btf, regs, orig_x0)
#define IT_PSR_MODE32_BIT 0x10

static __always_inline bool it_compat_syscall(struct pt_regs *regs, const bool btf)
{
	return IT_RD(btf, regs, pstate) & IT_PSR_MODE32_BIT;
}
#else
#error "iotracer: syscall registers of this architecture are not known (core_fixes.bpf.h)"
#endif

/* The current thread's state, if it has one (never created here). */
static __always_inline struct thread_state *it_state(void)
{
	return it_tstate_get(it_current_task(), -1, false);
}

/* The current thread's state, created if missing (task is it_current_task()). */
static __always_inline struct thread_state *it_state_new(struct task_struct *task)
{
	return it_tstate_get(task, -1, true);
}

/* Another thread's state (t: a BTF pointer, a tp_btf argument), never created. */
static __always_inline struct thread_state *it_state_of(struct task_struct *t)
{
	return it_tstate_get(t, t->pid, false);
}

static __always_inline u32 it_disk_devt(struct gendisk *disk, const bool btf)
{
	u32 major = IT_RD(btf, disk, major);
	u32 minor = IT_RD(btf, disk, first_minor);

	return (major << 20) | minor;
}

/* dev_t of a request's disk (rq_disk is read as a plain value: its fields too). */
static __always_inline u32 it_rq_devt(struct request *rq, const bool btf)
{
	if (bpf_core_field_exists(struct request___old, rq_disk))
		return it_disk_devt(BPF_CORE_READ((struct request___old *)rq, rq_disk), false);
	return it_disk_devt(IT_RD(btf, rq, q, disk), btf);
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

/* Before 5.18, cmnd pointed to the CDB. */
struct scsi_cmnd___old {
	unsigned char *cmnd;
} __attribute__((preserve_access_index));

/*
 * md raid5 (raid456's types, through md-mod's struct mddev): a member bio of
 * a stripe is &sh->dev[i].req (or .rreq), its bi_private the stripe_head,
 * and each page's upper bios wait on dev[i].toread / towrite, then written
 * (stack.bpf.h). Module types: relocated against raid456's BTF when it is
 * loaded at start, else the branches reading them are dead code.
 */
struct r5dev___it {
	struct bio *toread;
	struct bio *read;
	struct bio *towrite;
	struct bio *written;
} __attribute__((preserve_access_index));

struct mddev___it {
	struct gendisk *gendisk;
} __attribute__((preserve_access_index));

struct r5conf___it {
	struct mddev___it *mddev;
} __attribute__((preserve_access_index));

/*
 * md accounts a bio through a clone of it (md_account_bio) that the
 * personality then handles: what raid5's pages hold. The clone is
 * embedded in md_io_acct (5.14) / md_io_clone (6.5), beside the original.
 */
struct md_io_acct___it {
	struct bio *orig_bio;
} __attribute__((preserve_access_index));

struct md_io_clone___it {
	struct bio *orig_bio;
} __attribute__((preserve_access_index));

/* The bio md cloned bio from (0: not an md clone known here). */
static __always_inline u64 it_md_orig_bio(u64 bio)
{
	u64 priv = (u64)BPF_CORE_READ((struct bio *)bio, bi_private);

	if (!priv)
		return 0;
	if (bpf_core_type_exists(struct md_io_clone___it))
		return (u64)BPF_CORE_READ((struct md_io_clone___it *)priv, orig_bio);
	if (bpf_core_type_exists(struct md_io_acct___it))
		return (u64)BPF_CORE_READ((struct md_io_acct___it *)priv, orig_bio);
	return 0;
}

struct stripe_head___it {
	struct r5conf___it *raid_conf;
	int disks;
	struct r5dev___it dev[];
} __attribute__((preserve_access_index));

/*
 * Without module BTF (before 5.11, or a kernel built without
 * CONFIG_DEBUG_INFO_BTF_MODULES) the driver types cannot be relocated: their
 * fields are not read (the bpf_core_type_exists branches are dead code then),
 * the stamps still are, so requests still join their driver layer.
 */
static __always_inline void it_nvme_cmd(struct nvme_command___it *cmd, u8 *opcode, u32 *cid)
{
	if (!bpf_core_type_exists(struct nvme_command___it))
		return;
	*opcode = BPF_CORE_READ(cmd, common.opcode);
	*cid = BPF_CORE_READ(cmd, common.command_id);
}

static __always_inline u32 it_nvme_status(struct nvme_request___it *nr)
{
	if (!bpf_core_type_exists(struct nvme_request___it))
		return 0;
	return BPF_CORE_READ(nr, status);
}

/* CDB[0] of a SCSI command (0 where the type cannot be read). */
static __always_inline u8 it_scsi_opcode(struct scsi_cmnd___it *cmd)
{
	u8 op = 0;

	if (bpf_core_field_exists(struct scsi_cmnd___it, cmnd)) {
		op = BPF_CORE_READ(cmd, cmnd[0]);
	} else if (bpf_core_field_exists(struct scsi_cmnd___old, cmnd)) {
		unsigned char *cdb = BPF_CORE_READ((struct scsi_cmnd___old *)cmd, cmnd);

		bpf_probe_read_kernel(&op, sizeof(op), cdb);
	}
	return op;
}

static __always_inline s32 it_scsi_result(struct scsi_cmnd___it *cmd)
{
	if (!bpf_core_type_exists(struct scsi_cmnd___it))
		return 0;
	return BPF_CORE_READ(cmd, result);
}

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
 * Tracepoint argument i, or i + shift where the kernel's signature has
 * arguments in front that later kernels dropped. Each branch reads ctx at a
 * constant offset: clang makes ctx[cond ? i + 1 : i] one load at a computed
 * offset, which the 5.10 verifier refuses ("dereference of modified ctx
 * ptr") even when the offset is a known constant.
 */
static __always_inline u64 it_ctx_arg(u64 *ctx, bool shifted, const int i, const int shift)
{
	u64 v;

	if (shifted) {
		v = ctx[i + shift];
		asm volatile("" : "+r"(v)); /* keeps the two loads apart */
	} else {
		v = ctx[i];
	}
	return v;
}

/*
 * Before 5.11 the block tracepoints took the request_queue as their first
 * argument (request ones: a54895fa057c; the bio ones in the same series);
 * a stable kernel can have one change without the other (Debian 11's
 * 5.10.223: requests without the queue, bios with it). The loader reads
 * each from BTF.
 * IT_BLK_ARG / IT_BLK_BIO_ARG are argument i of the 5.11 signature.
 */
#define IT_BLK_ARG(ctx, i) ((void *)it_ctx_arg(ctx, blk_tp_has_queue, i, 1))
#define IT_BLK_BIO_ARG(ctx, i) ((void *)it_ctx_arg(ctx, blk_bio_tp_has_queue, i, 1))
/* bio merges: (bio) since 5.11; (q, rq, bio) before */
#define IT_BLK_MERGE_BIO(ctx) ((void *)it_ctx_arg(ctx, blk_bio_tp_has_queue, 0, 2))

/*
 * sched_switch(preempt, prev, next) gained prev_state as 4th argument in
 * 5.18 (fa2c3254d7cf); before, read prev's state (it_task_state).
 */
#define IT_SWITCH_PREV_STATE(ctx, prev) \
	(sched_switch_has_state ? (long)(ctx)[3] : it_task_state(prev))

/*
 * io_uring_complete: (ctx, req, cqe) since 6.0 (c4bb964fa092), (ctx, req,
 * user_data, res, cflags...) in 5.18 and 5.19, (ctx, user_data, res, cflags)
 * before: no request there, so submission and completion meet on (ring,
 * user_data) instead of the request's address (it_uring_key). The loader
 * reads which from BTF.
 */
static __always_inline s32 it_uring_complete_res(u64 *ctx, const bool btf)
{
	struct io_uring_cqe *cqe = (void *)ctx[2];

	if (uring_complete_has_cqe)
		return IT_RD(btf, cqe, res);
	return (s32)it_ctx_arg(ctx, uring_complete_has_req, 2, 1);
}

/* Key of an io_uring request in uring_inflight (and the bios' origin id). */
#define IT_URING_KEY(ring, user_data) ((u64)(ring) ^ ((user_data)*0x9e3779b97f4a7c15ull))

/* At submission. The ring is read as a plain value (no arithmetic on BTF pointers). */
static __always_inline u64 it_uring_submit_key(struct io_kiocb *req, u64 user_data)
{
	if (uring_complete_has_req)
		return (u64)req;
	return IT_URING_KEY(BPF_CORE_READ(req, ctx), user_data);
}

/* At completion: ctx[0] is the ring (a void *: a plain value), ctx[1] req or user_data. */
static __always_inline u64 it_uring_complete_key(u64 *ctx)
{
	if (uring_complete_has_req)
		return ctx[1];
	return IT_URING_KEY(ctx[0], ctx[1]);
}

/*
 * io_uring_submit_sqe(ctx, req, ...) became (req, ...) in 6.0 and
 * io_uring_submit_req(req) in 6.2: the loader reads where req is.
 */
#define IT_URING_SUBMIT_REQ(ctx) ((void *)it_ctx_arg(ctx, uring_submit_req_arg, 0, 1))

/* Before the request carried its CQE (req->cqe, 5.19), user_data was its own field. */
struct io_kiocb___old {
	u64 user_data;
} __attribute__((preserve_access_index));

static __always_inline u64 it_uring_user_data(struct io_kiocb *req, const bool btf)
{
	if (bpf_core_field_exists(req->cqe))
		return IT_RD(btf, req, cqe.user_data);
	return BPF_CORE_READ((struct io_kiocb___old *)req, user_data);
}

/*
 * The SQE's fd, for a request whose file is not assigned yet at submission
 * (req->cqe.fd; -1 before req->cqe, when io_init_req still assigned
 * req->file before the tracepoint).
 */
static __always_inline s32 it_uring_sqe_fd(struct io_kiocb *req, const bool btf)
{
	if (bpf_core_field_exists(req->cqe))
		return IT_RD(btf, req, cqe.fd);
	return -1;
}

/* Pages added to the page cache: the tracepoint has the folio's `order` since 6.6. */
static __always_inline u32 it_page_cache_pages(struct trace_event_raw_mm_filemap_op_page_cache *ctx)
{
	if (bpf_core_field_exists(ctx->order))
		return 1u << (BPF_CORE_READ(ctx, order) & 31);
	return 1;
}

/*
 * Page-cache pages (bpf/wb.bpf.h). A page's folio: its compound head (bit 0
 * of page->compound_head set on tail pages, since 4.x). The folio's mapping
 * and index: struct folio (5.16, 7b230db3b8d3) overlays the head page, and
 * 6.16 renamed page->index to __folio_index: read them through struct folio
 * where it exists, else through the page's old field names.
 */
struct page___old {
	struct address_space *mapping;
	unsigned long index;
} __attribute__((preserve_access_index));

/*
 * The page size is the rodata page_shift the loader sets from user space's
 * page size (the kernel's): a __kconfig extern would make libbpf need the
 * kernel's config file, which kernels without /proc/config.gz or /boot/config-*
 * (the lab's arm64 guest) lack: the whole object then fails to load.
 */
#define IT_PAGE_SHIFT page_shift

static __always_inline u64 it_page_head(u64 page)
{
	u64 ch = 0;

	bpf_core_read(&ch, sizeof(ch), &((struct page *)page)->compound_head);
	return (ch & 1) ? ch - 1 : page;
}

/*
 * The mapping (0 for anonymous, movable or KSM pages) and index of a folio
 * (index NULL: not read).
 */
static __always_inline u64 it_folio_mapping(u64 head, u64 *index)
{
	u64 m = 0;

	if (bpf_core_type_exists(struct folio)) {
		struct folio *f = (void *)head;

		bpf_core_read(&m, sizeof(m), &f->mapping);
		if (index)
			*index = BPF_CORE_READ(f, index);
	} else {
		struct page___old *pg = (void *)head;

		bpf_core_read(&m, sizeof(m), &pg->mapping);
		if (index)
			*index = BPF_CORE_READ(pg, index);
	}
	return (m & 3) ? 0 : m; /* PAGE_MAPPING_ANON / MOVABLE */
}

/*
 * The cgroup v2 id of the blkcg a bio is charged to (CONFIG_BLK_CGROUP:
 * bio->bi_blkg, 4.19+; kernfs_node.id a u64 since 5.5, 67c0496e87d1),
 * 0 without one.
 */
static __always_inline u64 it_bio_blkcg_id(struct bio *bio, const bool btf)
{
	struct blkcg_gq *blkg;

	if (!bpf_core_field_exists(bio->bi_blkg))
		return 0;
	blkg = IT_RD(btf, bio, bi_blkg);
	if (!blkg)
		return 0;
	return IT_RD(btf, blkg, blkcg, css.cgroup, kn, id);
}

/*
 * The bytes a task took from clean to dirty so far (task_io_account_write in
 * folio_account_dirtied; also direct-IO writes): /proc/PID/io write_bytes.
 * CONFIG_TASK_IO_ACCOUNTING; has_it false without it (the field is gone).
 */
static __always_inline u64 it_task_write_bytes(struct task_struct *t, bool *has_it)
{
	*has_it = bpf_core_field_exists(t->ioac);
	if (!*has_it)
		return 0;
	return IT_RD(IT_TASK_BTF, t, ioac.write_bytes);
}

/*
 * Bytes of a folio (writeback_dirty_folio's: what one clean -> dirty
 * transition adds to write_bytes). Large folios have PG_head in the first
 * word (page->flags, 6.18's memdesc_flags_t the same word); the count of
 * pages moved: _folio_nr_pages (5.16 .. 6.9), then the order in the low byte
 * of _flags_1 (6.10, when _folio_nr_pages went), and _nr_pages again on
 * 64-bit (6.14, NR_PAGES_IN_LARGE_FOLIO).
 */
struct folio___nrp {
	unsigned int _folio_nr_pages;
} __attribute__((preserve_access_index));

static __always_inline u64 it_folio_bytes(struct folio *folio)
{
	u64 flags = 0, nr = 1;

	bpf_core_read(&flags, sizeof(flags), folio);
	if (!(flags & (1ull << bpf_core_enum_value(enum pageflags, PG_head))))
		return 1ull << IT_PAGE_SHIFT;
	if (bpf_core_field_exists(folio->_nr_pages))
		nr = BPF_CORE_READ(folio, _nr_pages);
	else if (bpf_core_field_exists(((struct folio___nrp *)folio)->_folio_nr_pages))
		nr = BPF_CORE_READ((struct folio___nrp *)folio, _folio_nr_pages);
	else if (bpf_core_field_exists(folio->_flags_1))
		nr = 1ull << (BPF_CORE_READ(folio, _flags_1) & 31);
	return (nr ?: 1) << IT_PAGE_SHIFT;
}

/*
 * When an inode went dirty, from its dirtied_when (jiffies: the kernel's own
 * page-cache age of the file, set when it goes clean -> dirty), on the clock
 * of now_ns; 0 when not known (no jiffy_ns, or not dirty).
 */
static __always_inline u64 it_inode_dirtied_ns(u64 when, u64 now_ns)
{
	u64 age;

	if (!jiffy_ns)
		return 0;
	age = bpf_jiffies64() - when;
	if (!when || (s64)age < 0 || age * jiffy_ns >= now_ns)
		return 0;
	return now_ns - age * jiffy_ns;
}

/*
 * A struct page's physical address. With SPARSEMEM_VMEMMAP (x86_64 and
 * arm64 select it; every Debian kernel of the lab has it) a page's pfn is its
 * index in the vmemmap array, whose base each architecture places its own way
 * and has moved: x86_64 randomizes it (the variable vmemmap_base, 4.17+ with
 * RANDOMIZE_MEMORY), arm64 derives it from VMEMMAP_START (5.11 and 6.9
 * redefined it) minus memstart_addr's pfns. Rather than each formula, the base
 * is measured once on the running kernel from the kernel's own page_to_pfn
 * (gpa.bpf.h: mm_page_alloc's page argument beside its pfn field, both on
 * every kernel from 5.10 to 6.18, x86 and arm64), and passed in as `vmemmap`.
 * Its size is read from BTF (64 bytes on these configurations).
 */
static __always_inline u64 it_page_phys(u64 page, u64 vmemmap)
{
	u64 sz = bpf_core_type_size(struct page);

	if (!vmemmap || page < vmemmap || !sz)
		return 0;
	return (page - vmemmap) / sz << IT_PAGE_SHIFT;
}

/*
 * File names (names.bpf.h). Checked in the BTF of the kernels we run on
 * (Debian's 5.10, 6.1, 6.12; 6.18 here): struct dentry's d_parent, d_hash (a
 * hashed dentry has d_hash.pprev set: d_unhashed(), and d_unlinked() is
 * unhashed and not its own parent, unchanged since 2.6.38), d_sb and
 * d_u.d_alias (a member of inode->i_dentry), super_block's s_root, struct
 * mount's mnt (the vfsmount) and mnt_id, mnt_namespace's ns.inum are in all
 * of them. What moved:
 * - d_name became `const struct qstr d_name` in an anonymous union with
 *   __d_name between 6.12 and 6.18 (6.12's BTF has the plain member): CO-RE
 *   matches the named member through the union both ways, so one read serves.
 * - d_iname became d_shortname in the same window, d_subdirs/d_child
 *   d_children/d_sib in 6.8: not read here.
 * - struct mount gained mnt_id_unique (6.8); mnt_id, the one mountinfo's
 *   first field shows, stays.
 * A pseudo file (memfd_create's "memfd:NAME", alloc_file_pseudo) has a
 * dentry that is its own parent and not its file system's root: its name is
 * its only component.
 */
static __always_inline void it_dentry_name(u64 d, struct qstr *q)
{
	bpf_core_read(q, sizeof(*q), &((struct dentry *)d)->d_name);
}

/* The type of a super block's file system ("ext4", "tmpfs", "pidfs"), NUL-padded. */
static __always_inline void it_sb_type(u64 sb, char *buf)
{
	const char *name = BPF_CORE_READ((struct super_block *)sb, s_type, name);

	__builtin_memset(buf, 0, IT_FSTYPE_LEN);
	bpf_probe_read_kernel_str(buf, IT_FSTYPE_LEN, name);
}

/* A dentry of the inode (the first of its aliases, inode->i_dentry), 0: none. */
static __always_inline u64 it_inode_alias(u64 inode)
{
	u64 first = 0;

	bpf_core_read(&first, sizeof(first), &((struct inode *)inode)->i_dentry.first);
	return first ? first - bpf_core_field_offset(struct dentry, d_u.d_alias) : 0;
}

/* The mount id (mountinfo's first field) of a vfsmount, the `mnt` of a struct mount. */
static __always_inline u32 it_mnt_id(u64 vfsmnt)
{
	struct mount *m = (void *)(vfsmnt - bpf_core_field_offset(struct mount, mnt));

	return vfsmnt ? BPF_CORE_READ(m, mnt_id) : 0;
}

/*
 * BPF atomics with fetch (xchg) came with 5.12. Older
 * verifiers reject such an instruction anywhere in a program, dead code
 * too, so no branch can hide it: the object is built a second time with
 * IT_BPF_COMPAT (Makefile), which the loader loads where its probe finds no
 * xchg. That build has no per-CPU record buffers (the loader turns them off):
 * every record goes through the ring buffer.
 */
static __always_inline bool it_slot_busy_claim(u64 *busy)
{
#ifdef IT_BPF_COMPAT
	return false;
#else
	return !__sync_lock_test_and_set(busy, 1);
#endif
}

/*
 * *p from old to new if it is old (64-bit cmpxchg, 5.12 too); the compat
 * build's plain compare and store can lose a race (bpf/wbfile.bpf.h: two
 * new dirtiers of one file may then share its slot).
 */
static __always_inline bool it_cas_u64(u64 *p, u64 old, u64 new)
{
#ifdef IT_BPF_COMPAT
	if (*p != old)
		return false;
	*p = new;
	return true;
#else
	return __sync_val_compare_and_swap(p, old, new) == old;
#endif
}

/*
 * A BPF subprogram (a global function) in a tp_btf program whose BTF-pointer
 * load faults crashes 5.10 (Debian's 5.10.223, lab 2026-12-07: a NULL
 * dereference in search_bpf_extables() under the program, at an md flush
 * bio's NULL bi_io_vec): the compat object, which such kernels load, inlines
 * what the other has as a subprogram.
 */
#ifdef IT_BPF_COMPAT
#define IT_DEV_LISTED_FN static __always_inline
/*
 * No bpf_loop callbacks either: a callback is a subprogram referenced by
 * BPF_PSEUDO_FUNC (5.13), which older kernels do not count, so they refuse
 * the program even where the call is dead code ("number of funcs in
 * func_info doesn't match number of subprogs", 5.10); bpf_loop itself came
 * with 5.17.
 */
#else
#define IT_DEV_LISTED_FN __noinline
#define IT_HAS_CALLBACKS 1
#endif

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
