// SPDX-License-Identifier: GPL-2.0
/*
 * The table of hooks: every kernel event the tracer attaches to, the
 * programs implementing it per method, what it needs and when it is off;
 * checked against the BPF object (it_loader_check_hooks).
 */
#include <errno.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "iotracer.h"
#include "load/loader.h"
#include "load/loader_int.h"

#define HOOK(l, n, g, ...)                                                     \
	{                                                                      \
		.layer = l, .name = n, .tp_group = g, .progs = { __VA_ARGS__ } \
	}
#define ALT_HOOK(l, n, g, a, ...)                                                        \
	{                                                                                \
		.layer = l, .name = n, .tp_group = g, .alt = a, .progs = { __VA_ARGS__ } \
	}
#define TP_HOOK(l, n, g, p) HOOK(l, n, g, [IT_M_TP] = { p })
#define BTF_HOOK(l, n, g) HOOK(l, #n, g, [IT_M_TP_BTF] = { "btf_" #n })
#define BTF_RAW_HOOK(l, n, g) \
	HOOK(l, #n, g, [IT_M_TP_BTF] = { "btf_" #n }, [IT_M_RAW_TP] = { "raw_" #n })
/* A driver tracepoint whose programs read fields of module struct `ty` (core_fixes.bpf.h). */
#define DRV_HOOK(l, n, g, ty)                                                       \
	{                                                                           \
		.layer = l, .name = #n, .tp_group = g, .reads_type = ty, .progs = { \
			[IT_M_TP_BTF] = { "btf_" #n },                              \
			[IT_M_RAW_TP] = { "raw_" #n }                               \
		}                                                                   \
	}
/* A kernel function: fentry(+fexit) where allowed, else kprobe(+kretprobe). */
#define FN_HOOK(l, n, fe, fx, kp, kr) \
	HOOK(l, #n, NULL, [IT_M_FENTRY] = { fe, fx }, [IT_M_KPROBE] = { kp, kr })
/* A traced syscall's pair of per-syscall tracepoints (bpf/syscall.bpf.h IT_PERCALL). */
#define PERCALL_HOOK(n, need)                                                              \
	{                                                                                  \
		.layer = IT_L_SYSCALL, .name = "sys_enter_" #n, .label = "syscalls/" #n,   \
		.tp_group = "syscalls", .path = IT_PATH_PERCALL, .needs = need, .progs = { \
			[IT_M_TP] = { "pc_enter_" #n, "pc_exit_" #n }                      \
		}                                                                          \
	}
/* A file IO function of the syscall layer's file path, fixed in its programs' sections. */
#define FIO_FN_HOOK(n)                                                              \
	{                                                                           \
		.layer = IT_L_SYSCALL, .name = #n, .path = IT_PATH_FILE, .progs = { \
			[IT_M_FENTRY] = { "fentry_" #n, "fexit_" #n },              \
			[IT_M_KPROBE] = { "kprobe_" #n, "kretprobe_" #n }           \
		}                                                                   \
	}
/* A ->read_iter / ->write_iter method bound to slot program n (bpf/fileio.bpf.h IT_FIO_SLOT). */
#define FIO_SLOT(n, fn)                                                                          \
	{                                                                                        \
		.layer = IT_L_SYSCALL, .name = fn, .path = IT_PATH_FILE, .target = 1, .progs = { \
			[IT_M_FENTRY] = { "fentry_fio_" #n, "fexit_fio_" #n },                   \
			[IT_M_KPROBE] = { "kprobe_fio_" #n, "kretprobe_fio_" #n }                \
		}                                                                                \
	}
/* libaio's syscall functions: entry and exit (bpf_loop walks the iocbs) */
#define FIO_AIO(n)                                                                                 \
	{                                                                                          \
		.layer = IT_L_SYSCALL, .name = #n, .path = IT_PATH_FILE, .target = 1, .sys_fn = 1, \
		.needs = IT_NEED_LOOP, .progs = {                                                  \
			[IT_M_FENTRY] = { "fentry_fio_" #n, "fexit_fio_" #n },                     \
			[IT_M_KPROBE] = { "kprobe_fio_" #n, "kretprobe_fio_" #n }                  \
		}                                                                                  \
	}

const struct it_hook_def ld_hook_defs[] = {
	/*
	 * The fd-based syscalls, libaio's and io_uring_enter: raw_syscalls
	 * sys_enter and sys_exit, one pair for all (src/load/syscalls.c names them).
	 */
	{ .layer = IT_L_SYSCALL,
	  .name = "sys_enter",
	  .label = "sys_enter/sys_exit",
	  .tp_group = "raw_syscalls",
	  .path = IT_PATH_RAW,
	  .shows_path = 1,
	  .progs = { [IT_M_TP_BTF] = { "btf_sys_enter", "btf_sys_exit" },
		     [IT_M_RAW_TP] = { "raw_sys_enter", "raw_sys_exit" } } },
	/* libaio's exits (bpf_loop): loaded where the kernel has it, reached by tail call */
	{ .layer = IT_L_SYSCALL,
	  .name = "sys_exit",
	  .label = "libaio",
	  .tp_group = "raw_syscalls",
	  .prog_array = "aio_exit_prog",
	  .needs = IT_NEED_LOOP,
	  .path = IT_PATH_RAW,
	  .progs = { [IT_M_TP_BTF] = { "btf_aio_exit" }, [IT_M_RAW_TP] = { "raw_aio_exit" } } },
	/*
	 * Or the same syscalls on their own tracepoints (the set choose_syscall_set
	 * keeps): every other syscall then runs no program (docs/hooks.md, "The tax").
	 */
	PERCALL_HOOK(read, 0),
	PERCALL_HOOK(write, 0),
	PERCALL_HOOK(pread64, 0),
	PERCALL_HOOK(pwrite64, 0),
	PERCALL_HOOK(readv, 0),
	PERCALL_HOOK(writev, 0),
	PERCALL_HOOK(preadv, 0),
	PERCALL_HOOK(pwritev, 0),
	PERCALL_HOOK(preadv2, 0),
	PERCALL_HOOK(pwritev2, 0),
	PERCALL_HOOK(fsync, 0),
	PERCALL_HOOK(fdatasync, 0),
	PERCALL_HOOK(sync_file_range, 0),
	PERCALL_HOOK(io_submit, IT_NEED_LOOP),
	PERCALL_HOOK(io_getevents, IT_NEED_LOOP),
	PERCALL_HOOK(io_pgetevents, IT_NEED_LOOP),
	{ .layer = IT_L_SYSCALL,
	  .name = "sys_exit_io_uring_enter",
	  .label = "syscalls/io_uring_enter",
	  .tp_group = "syscalls",
	  .path = IT_PATH_PERCALL,
	  .progs = { [IT_M_TP] = { "pc_exit_io_uring_enter" } } },
	/* renamed from io_uring_submit_sqe in 6.2: one event, two names */
	ALT_HOOK(IT_L_SYSCALL, "io_uring_submit_req", "io_uring",
		 "uring_submit", [IT_M_TP_BTF] = { "btf_io_uring_submit_req" },
		 [IT_M_RAW_TP] = { "raw_io_uring_submit_req" }),
	/* (void *ctx, void *req, ...) before 6.0: a tp_btf program cannot read req */
	{ .layer = IT_L_SYSCALL,
	  .name = "io_uring_submit_sqe",
	  .tp_group = "io_uring",
	  .alt = "uring_submit",
	  .arg0_typed = 1,
	  .progs = { [IT_M_TP_BTF] = { "btf_io_uring_submit_sqe" },
		     [IT_M_RAW_TP] = { "raw_io_uring_submit_sqe" } } },
	BTF_RAW_HOOK(IT_L_SYSCALL, io_uring_complete, "io_uring"),
	/*
	 * The file path (bpf/fileio.bpf.h): the file systems' and block
	 * devices' ->read_iter / ->write_iter (one slot program each, IT_FIO_SLOT),
	 * then fsync, sync_file_range, libaio and io_uring_enter. A function this
	 * kernel lacks (a module not loaded) is absent, the rest works. Which
	 * ones and why: docs/hooks.md "fileio".
	 */
	FIO_SLOT(0, "ext4_file_read_iter"),
	FIO_SLOT(1, "ext4_file_write_iter"),
	FIO_SLOT(2, "xfs_file_read_iter"),
	FIO_SLOT(3, "xfs_file_write_iter"),
	FIO_SLOT(4, "btrfs_file_read_iter"),
	FIO_SLOT(5, "btrfs_file_write_iter"),
	FIO_SLOT(6, "blkdev_read_iter"),
	FIO_SLOT(7, "blkdev_write_iter"),
	FIO_SLOT(8, "shmem_file_read_iter"),
	FIO_SLOT(9, "shmem_file_write_iter"),
	FIO_SLOT(10, "generic_file_read_iter"),
	FIO_SLOT(11, "generic_file_write_iter"),
	FIO_SLOT(12, "ovl_read_iter"),
	FIO_SLOT(13, "ovl_write_iter"),
	FIO_SLOT(14, "fuse_file_read_iter"),
	FIO_SLOT(15, "fuse_file_write_iter"),
	FIO_SLOT(16, "nfs_file_read"),
	FIO_SLOT(17, "nfs_file_write"),
	FIO_SLOT(18, "f2fs_file_read_iter"),
	FIO_SLOT(19, "f2fs_file_write_iter"),
	FIO_FN_HOOK(vfs_fsync_range),
	FIO_FN_HOOK(sync_file_range),
	FIO_AIO(io_submit),
	FIO_AIO(io_getevents),
	FIO_AIO(io_pgetevents),
	{ .layer = IT_L_SYSCALL,
	  .name = "io_uring_enter",
	  .path = IT_PATH_FILE,
	  .target = 1,
	  .sys_fn = 1,
	  .progs = { [IT_M_FENTRY] = { "fexit_fio_io_uring_enter" },
		     [IT_M_KPROBE] = { "kretprobe_fio_io_uring_enter" } } },
	TP_HOOK(IT_L_FS, "mm_filemap_add_to_page_cache", "filemap", "fs_page_cache_add"),
	/* fs.dio_count of records; the histograms need nothing of it (always-on: fd's O_DIRECT) */
	{ .layer = IT_L_FS,
	  .name = "iomap_dio_rw_begin",
	  .tp_group = "iomap",
	  .every_record = 1,
	  .progs = { [IT_M_TP_BTF] = { "btf_iomap_dio_rw_begin" } } },
	BTF_HOOK(IT_L_FS, writeback_single_inode_start, "writeback"),
	BTF_HOOK(IT_L_FS, writeback_single_inode, "writeback"),
	/*
	 * Who dirtied a page (bpf/wb.bpf.h): writeback_dirty_page before 5.17, one
	 * event. Block layer: they name the owner of block writes (`top` too).
	 */
	{ .layer = IT_L_BLOCK,
	  .name = "writeback_dirty_folio",
	  .tp_group = "writeback",
	  .alt = "dirty_note",
	  .wb = IT_WB_HOOK_ANY,
	  .progs = { [IT_M_TP_BTF] = { "btf_writeback_dirty_folio" },
		     [IT_M_RAW_TP] = { "raw_writeback_dirty_folio" } } },
	{ .layer = IT_L_BLOCK,
	  .name = "writeback_dirty_page",
	  .tp_group = "writeback",
	  .alt = "dirty_note",
	  .wb = IT_WB_HOOK_ANY,
	  .progs = { [IT_M_TP_BTF] = { "btf_writeback_dirty_page" },
		     [IT_M_RAW_TP] = { "raw_writeback_dirty_page" } } },
	/* task storage, or a hash by thread id before 5.12 (core_fixes.bpf.h it_tstate_get) */
	{ .layer = IT_L_SYSCALL, .name = "thread_state", .thread_state = 1 },
	/* sched layer by default: the task's counters at syscall enter/exit (sched.bpf.h) */
	{ .layer = IT_L_SCHED, .name = "sched_info", .task_counters = 1 },
	{ .layer = IT_L_SCHED,
	  .name = "sched_switch",
	  .tp_group = "sched",
	  .sched_switch = 1,
	  .progs = { [IT_M_TP_BTF] = { "btf_sched_switch" } } },
	{ .layer = IT_L_SCHED,
	  .name = "sched_wakeup",
	  .tp_group = "sched",
	  .sched_switch = 1,
	  .progs = { [IT_M_TP_BTF] = { "btf_sched_wakeup" } } },
	BTF_RAW_HOOK(IT_L_BLOCK, block_bio_queue, "block"),
	BTF_RAW_HOOK(IT_L_BLOCK, block_split, "block"),
	/* the stack layer (bpf/stack.bpf.h): pieces of upper bios, and their ends */
	BTF_RAW_HOOK(IT_L_STACK, block_bio_remap, "block"),
	BTF_RAW_HOOK(IT_L_STACK, block_bio_complete, "block"),
	BTF_RAW_HOOK(IT_L_BLOCK, block_bio_backmerge, "block"),
	{ .layer = IT_L_BLOCK,
	  .name = "block_rq_insert",
	  .tp_group = "block",
	  .block_insert = 1,
	  .progs = { [IT_M_TP_BTF] = { "btf_block_rq_insert" },
		     [IT_M_RAW_TP] = { "raw_block_rq_insert" } } },
	BTF_RAW_HOOK(IT_L_BLOCK, block_rq_issue, "block"),
	BTF_RAW_HOOK(IT_L_BLOCK, block_rq_requeue, "block"),
	DRV_HOOK(IT_L_NVME, nvme_setup_cmd, "nvme", "nvme_command"),
	DRV_HOOK(IT_L_NVME, nvme_complete_rq, "nvme", "nvme_request"),
	DRV_HOOK(IT_L_SCSI, scsi_dispatch_cmd_start, "scsi", "scsi_cmnd"),
	DRV_HOOK(IT_L_SCSI, scsi_dispatch_cmd_done, "scsi", "scsi_cmnd"),
	DRV_HOOK(IT_L_SCSI, scsi_dispatch_cmd_error, "scsi", "scsi_cmnd"),
	DRV_HOOK(IT_L_SCSI, scsi_dispatch_cmd_timeout, "scsi", "scsi_cmnd"),
	FN_HOOK(IT_L_VIRTIO, virtio_queue_rq, "fentry_virtio_queue_rq", "fexit_virtio_queue_rq",
		"kprobe_virtio_queue_rq", "kretprobe_virtio_queue_rq"),
	/* arg 0: struct request ** before 6.13, then struct rq_list * */
	{ .layer = IT_L_VIRTIO,
	  .name = "virtio_queue_rqs",
	  .arg0_struct = 1,
	  .progs = { [IT_M_FENTRY] = { "fentry_virtio_queue_rqs", "fexit_virtio_queue_rqs" },
		     [IT_M_KPROBE] = { "kprobe_virtio_queue_rqs", "kretprobe_virtio_queue_rqs" } } },
	/* arg 1 (the scsi_cmnd) is read: a struct pointer on every kernel */
	FN_HOOK(IT_L_VIRTIO, virtscsi_queuecommand, "fentry_virtscsi_queuecommand",
		"fexit_virtscsi_queuecommand", "kprobe_virtscsi_queuecommand",
		"kretprobe_virtscsi_queuecommand"),
	FN_HOOK(IT_L_VIRTIO, virtqueue_notify, "fentry_virtqueue_notify", NULL,
		"kprobe_virtqueue_notify", NULL),
	FN_HOOK(IT_L_VIRTIO, virtblk_done, "fentry_virtblk_done", NULL, "kprobe_virtblk_done",
		NULL),
	/*
	 * A write's pages per dirtier (bpf/wb.bpf.h, --writeback pages), for the
	 * record program below: attached before it, so it runs first (table
	 * order is attach order). --writeback files needs no program of its own
	 * at completion: the record program splits a write per file.
	 */
	{ .layer = IT_L_BLOCK,
	  .name = "block_rq_complete",
	  .label = "block_rq_complete_wb",
	  .tp_group = "block",
	  .needs = IT_NEED_LOOP,
	  .wb = IT_WB_HOOK_PAGES,
	  .progs = { [IT_M_TP_BTF] = { "btf_block_rq_complete_wb" },
		     [IT_M_RAW_TP] = { "raw_block_rq_complete_wb" } } },
	BTF_RAW_HOOK(IT_L_BLOCK, block_rq_complete, "block"),
	/*
	 * A second program on the same tracepoint for the completions the first
	 * one misses by nesting ("nested completions" in block.bpf.h): a record of
	 * every request needs it, and so do the histograms of always-on and -m,
	 * which alerts read: they count every request (issue 31).
	 */
	{ .layer = IT_L_BLOCK,
	  .name = "block_rq_complete",
	  .label = "block_rq_complete_nested",
	  .tp_group = "block",
	  .nested_complete = 1,
	  .progs = { [IT_M_TP_BTF] = { "btf_block_rq_complete2" },
		     [IT_M_RAW_TP] = { "raw_block_rq_complete2" } } },
};

const int ld_nr_hook_defs = (int)(sizeof(ld_hook_defs) / sizeof(ld_hook_defs[0]));

/*
 * A program of a mode, attached by the mode itself, no hook of the table:
 * host mode's QEMU uprobes (bpf/qemu.bpf.h, per process) and its mode_host_*
 * programs, guest mode's mode_guest_* (bpf/gpa.bpf.h). Which of them it is,
 * or LD_PROGS_NONE for a hook of the table.
 */
enum ld_progs ld_mode_prog_of(const struct bpf_program *prog)
{
	const char *name = bpf_program__name(prog);

	if (!strcmp(bpf_program__section_name(prog), "uprobe") || !strncmp(name, "mode_host_", 10))
		return LD_PROGS_HOST;
	return strncmp(name, "mode_guest_", 11) ? LD_PROGS_NONE : LD_PROGS_GUEST;
}

/* How many program names of the table are `name`. */
static int hooks_naming(const char *name)
{
	int nr = 0;

	for (int i = 0; i < NR_HOOKS; i++)
		for (int m = 0; m < IT_M_MAX; m++)
			for (int k = 0; k < IT_HOOK_PROGS; k++)
				nr += ld_hook_defs[i].progs[m][k] &&
				      !strcmp(ld_hook_defs[i].progs[m][k], name);
	return nr;
}

int it_loader_check_hooks(const struct bpf_object *obj, char *why, size_t n)
{
	struct bpf_program *prog;
	const char *name;
	int nr;

	for (int i = 0; i < NR_HOOKS; i++) {
		for (int m = 0; m < IT_M_MAX; m++) {
			for (int k = 0; k < IT_HOOK_PROGS; k++) {
				name = ld_hook_defs[i].progs[m][k];
				if (!name || bpf_object__find_program_by_name(obj, name))
					continue;
				snprintf(why, n, "hook %s: no program %s in the BPF object",
					 ld_hook_defs[i].name, name);
				return -EINVAL;
			}
		}
	}
	bpf_object__for_each_program(prog, obj)
	{
		name = bpf_program__name(prog);
		nr = hooks_naming(name);
		if (nr == 1 || (!nr && ld_mode_prog_of(prog)))
			continue;
		snprintf(why, n, "program %s is in %d hooks of the table (expected 1)", name, nr);
		return -EINVAL;
	}
	return 0;
}

static const char *const method_names[IT_M_MAX] = {
	[IT_M_NONE] = "-",    [IT_M_TP_BTF] = "tp_btf", [IT_M_RAW_TP] = "raw_tp",
	[IT_M_TP] = "tp",     [IT_M_FENTRY] = "fentry", [IT_M_KPROBE] = "kprobe",
	[IT_M_TASK] = "task", [IT_M_HASH] = "hash",
};

const char *it_method_name(enum it_method m)
{
	return m >= 0 && m < IT_M_MAX ? method_names[m] : "?";
}

/* The kernel function a fentry/kprobe hook attaches to. */
const char *ld_hook_fn(const struct it_hook_def *d, char *buf, size_t n)
{
	if (!d->sys_fn)
		return d->name;
	snprintf(buf, n, IT_SYS_FN_PREFIX "%s", d->name);
	return buf;
}
