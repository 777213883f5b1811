// SPDX-License-Identifier: GPL-2.0
/*
 * Loader: probe the kernel, pick the cheapest working method per hook
 * (tp_btf -> raw_tp -> tp -> fentry -> kprobe), turn off the programs of
 * every other method before load, set the filters, load, attach, and keep
 * a per-hook report of what attached and why not.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "iotracer.h"
#include "iotracer.skel.h"
#include "iotracer_compat.skel.h"
#include "core/filters.h"
#include "core/kfeat.h"
#include "core/loader.h"
#include "core/syscalls.h"
#include "lib/abi.h"
#include "lib/clock.h"
#include "lib/parse.h"
#include "lib/log.h"

/*
 * A hook: one kernel event, with the program names implementing it per
 * method (NULL: no such variant). Entry/exit pairs are attached together.
 */
struct it_hook_def {
	int layer;
	const char *name; /* tracepoint or function name */
	const char *tp_group; /* tracefs group for `tp` */
	const char *progs[IT_M_MAX][IT_HOOK_PROGS];
	const char *alt; /* hooks with the same alt are one event under different names */
	int arg0_struct; /* fentry reads arg 0, which older verifiers allow for struct pointers only */
	int arg0_typed; /* tp_btf reads through arg 0: only where it is not a void * */
	int task_counters; /* IT_M_TASK: the task_struct member `name` read in place, no program */
	int thread_state; /* no program: where the per-thread state lives (report only) */
	const char *prog_array; /* no link: its program goes into this map (a tail call target) */
	const char *label; /* the report's name, when not the tracepoint's */
	const char *reads_type; /* a module struct its programs read fields of, if they can */
	int sched_switch; /* attached only with --sched-switch */
	int block_insert; /* attached only with --block-insert */
	int every_record; /* feeds only records: not attached when records are of slow requests only */
	int nested_complete; /* the second completion program (rodata nested_hooked) */
	unsigned int needs; /* IT_NEED_*: BPF features its programs use */
	int path; /* IT_PATH_*: one of the syscall layer's ways (0: every way) */
	int shows_path; /* of the other path, still reported (off, saying why) */
	int target; /* its programs name no function: the loader binds them to `name` */
	int sys_fn; /* `name` is a syscall: the function is IT_SYS_FN_PREFIX + name */
};

/*
 * The syscall layer's ways (docs/hooks.md "The tax", --syscall-hooks): where
 * fentry or kprobes work and bpf_task_pt_regs reads the syscall's number, the
 * file systems' and block devices' methods, which only file IO runs; else the
 * raw_syscalls pair, which every syscall of the system runs, or the
 * per-syscall tracepoints of the traced syscalls.
 */
#define IT_PATH_RAW 1
#define IT_PATH_FILE 2
#define IT_PATH_PERCALL 3

/* The syscall functions of this architecture (one place: libaio, io_uring_enter). */
#if defined(__x86_64__)
#define IT_SYS_FN_PREFIX "__x64_sys_"
#elif defined(__aarch64__)
#define IT_SYS_FN_PREFIX "__arm64_sys_"
#else
#error "iotracer: the syscall functions' prefix of this architecture is not known"
#endif

/* Threads the per-thread state hash holds where there is no task storage. */
#define IT_TSTATE_HASH_ENTRIES 16384

/* BPF features a hook's programs need beyond what every supported kernel has. */
#define IT_NEED_LOOP 1u /* bpf_loop() (5.17): the libaio exits and the writeback walk use it */

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
#define DRV_HOOK(l, n, g, ty)                                                            \
	{                                                                                \
		.layer = l, .name = #n, .tp_group = g, .reads_type = ty,                 \
		.progs = { [IT_M_TP_BTF] = { "btf_" #n }, [IT_M_RAW_TP] = { "raw_" #n } } \
	}
/* A kernel function: fentry(+fexit) where allowed, else kprobe(+kretprobe). */
#define FN_HOOK(l, n, fe, fx, kp, kr) \
	HOOK(l, #n, NULL, [IT_M_FENTRY] = { fe, fx }, [IT_M_KPROBE] = { kp, kr })
/* A traced syscall's pair of per-syscall tracepoints (bpf/syscall.bpf.h IT_PERCALL). */
#define PERCALL_HOOK(n, need)                                                          \
	{                                                                              \
		.layer = IT_L_SYSCALL, .name = "sys_enter_" #n, .label = "syscalls/" #n, \
		.tp_group = "syscalls", .path = IT_PATH_PERCALL, .needs = need, \
		.progs = { [IT_M_TP] = { "pc_enter_" #n, "pc_exit_" #n } }               \
	}
/* A file IO function of the syscall layer's file path, fixed in its programs' sections. */
#define FIO_FN_HOOK(n)                                                                        \
	{                                                                                     \
		.layer = IT_L_SYSCALL, .name = #n, .path = IT_PATH_FILE,                      \
		.progs = { [IT_M_FENTRY] = { "fentry_" #n, "fexit_" #n },                     \
			   [IT_M_KPROBE] = { "kprobe_" #n, "kretprobe_" #n } }                \
	}
/* A ->read_iter / ->write_iter method bound to slot program n (bpf/fileio.bpf.h IT_FIO_SLOT). */
#define FIO_SLOT(n, fn)                                                                       \
	{                                                                                     \
		.layer = IT_L_SYSCALL, .name = fn, .path = IT_PATH_FILE, .target = 1,         \
		.progs = { [IT_M_FENTRY] = { "fentry_fio_" #n, "fexit_fio_" #n },             \
			   [IT_M_KPROBE] = { "kprobe_fio_" #n, "kretprobe_fio_" #n } }        \
	}
/* libaio's syscall functions: entry and exit (bpf_loop walks the iocbs) */
#define FIO_AIO(n)                                                                            \
	{                                                                                     \
		.layer = IT_L_SYSCALL, .name = #n, .path = IT_PATH_FILE, .target = 1,         \
		.sys_fn = 1, .needs = IT_NEED_LOOP,                                           \
		.progs = { [IT_M_FENTRY] = { "fentry_fio_" #n, "fexit_fio_" #n },             \
			   [IT_M_KPROBE] = { "kprobe_fio_" #n, "kretprobe_fio_" #n } }        \
	}

static const struct it_hook_def hook_defs[] = {
	/*
	 * The fd-based syscalls, libaio's and io_uring_enter: raw_syscalls
	 * sys_enter and sys_exit, one pair for all (src/core/syscalls.c names them).
	 */
	{ .layer = IT_L_SYSCALL, .name = "sys_enter", .label = "sys_enter/sys_exit",
	  .tp_group = "raw_syscalls", .path = IT_PATH_RAW, .shows_path = 1,
	  .progs = { [IT_M_TP_BTF] = { "btf_sys_enter", "btf_sys_exit" },
		     [IT_M_RAW_TP] = { "raw_sys_enter", "raw_sys_exit" } } },
	/* libaio's exits (bpf_loop): loaded where the kernel has it, reached by tail call */
	{ .layer = IT_L_SYSCALL, .name = "sys_exit", .label = "libaio", .tp_group = "raw_syscalls",
	  .prog_array = "aio_exit_prog", .needs = IT_NEED_LOOP, .path = IT_PATH_RAW,
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
	{ .layer = IT_L_SYSCALL, .name = "sys_exit_io_uring_enter", .label = "syscalls/io_uring_enter",
	  .tp_group = "syscalls", .path = IT_PATH_PERCALL,
	  .progs = { [IT_M_TP] = { "pc_exit_io_uring_enter" } } },
	/* renamed from io_uring_submit_sqe in 6.2: one event, two names */
	ALT_HOOK(IT_L_SYSCALL, "io_uring_submit_req", "io_uring",
		 "uring_submit", [IT_M_TP_BTF] = { "btf_io_uring_submit_req" },
		 [IT_M_RAW_TP] = { "raw_io_uring_submit_req" }),
	/* (void *ctx, void *req, ...) before 6.0: a tp_btf program cannot read req */
	{ .layer = IT_L_SYSCALL, .name = "io_uring_submit_sqe", .tp_group = "io_uring",
	  .alt = "uring_submit", .arg0_typed = 1,
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
	{ .layer = IT_L_SYSCALL, .name = "io_uring_enter", .path = IT_PATH_FILE, .target = 1,
	  .sys_fn = 1,
	  .progs = { [IT_M_FENTRY] = { "fexit_fio_io_uring_enter" },
		     [IT_M_KPROBE] = { "kretprobe_fio_io_uring_enter" } } },
	TP_HOOK(IT_L_FS, "mm_filemap_add_to_page_cache", "filemap", "fs_page_cache_add"),
	/* fs.dio_count of records; the histograms need nothing of it (always-on: fd's O_DIRECT) */
	{ .layer = IT_L_FS, .name = "iomap_dio_rw_begin", .tp_group = "iomap", .every_record = 1,
	  .progs = { [IT_M_TP_BTF] = { "btf_iomap_dio_rw_begin" } } },
	BTF_HOOK(IT_L_FS, writeback_single_inode_start, "writeback"),
	BTF_HOOK(IT_L_FS, writeback_single_inode, "writeback"),
	/*
	 * Who dirtied a page (bpf/wb.bpf.h): writeback_dirty_page before 5.17, one
	 * event. Block layer: they name the owner of block writes (`top` too).
	 */
	ALT_HOOK(IT_L_BLOCK, "writeback_dirty_folio", "writeback", "dirty_note",
		 [IT_M_TP_BTF] = { "btf_writeback_dirty_folio" },
		 [IT_M_RAW_TP] = { "raw_writeback_dirty_folio" }),
	ALT_HOOK(IT_L_BLOCK, "writeback_dirty_page", "writeback", "dirty_note",
		 [IT_M_TP_BTF] = { "btf_writeback_dirty_page" },
		 [IT_M_RAW_TP] = { "raw_writeback_dirty_page" }),
	/* task storage, or a hash by thread id before 5.12 (core_fixes.bpf.h it_tstate_get) */
	{ .layer = IT_L_SYSCALL, .name = "thread_state", .thread_state = 1 },
	/* sched layer by default: the task's counters at syscall enter/exit (sched.bpf.h) */
	{ .layer = IT_L_SCHED, .name = "sched_info", .task_counters = 1 },
	{ .layer = IT_L_SCHED, .name = "sched_switch", .tp_group = "sched", .sched_switch = 1,
	  .progs = { [IT_M_TP_BTF] = { "btf_sched_switch" } } },
	{ .layer = IT_L_SCHED, .name = "sched_wakeup", .tp_group = "sched", .sched_switch = 1,
	  .progs = { [IT_M_TP_BTF] = { "btf_sched_wakeup" } } },
	BTF_RAW_HOOK(IT_L_BLOCK, block_bio_queue, "block"),
	BTF_RAW_HOOK(IT_L_BLOCK, block_split, "block"),
	BTF_RAW_HOOK(IT_L_BLOCK, block_bio_backmerge, "block"),
	{ .layer = IT_L_BLOCK, .name = "block_rq_insert", .tp_group = "block", .block_insert = 1,
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
	{ .layer = IT_L_VIRTIO, .name = "virtio_queue_rqs", .arg0_struct = 1,
	  .progs = { [IT_M_FENTRY] = { "fentry_virtio_queue_rqs", "fexit_virtio_queue_rqs" },
		     [IT_M_KPROBE] = { "kprobe_virtio_queue_rqs", "kretprobe_virtio_queue_rqs" } } },
	/* arg 1 (the scsi_cmnd) is read: a struct pointer on every kernel */
	FN_HOOK(IT_L_VIRTIO, virtscsi_queuecommand, "fentry_virtscsi_queuecommand",
		"fexit_virtscsi_queuecommand", "kprobe_virtscsi_queuecommand",
		"kretprobe_virtscsi_queuecommand"),
	FN_HOOK(IT_L_VIRTIO, virtqueue_notify, "fentry_virtqueue_notify", NULL,
		"kprobe_virtqueue_notify", NULL),
	FN_HOOK(IT_L_VIRTIO, virtblk_done, "fentry_virtblk_done", NULL, "kprobe_virtblk_done", NULL),
	/*
	 * A write's pages per dirtier (bpf/wb.bpf.h), for the record program
	 * below: attached before it, so it runs first (table order is attach order).
	 */
	{ .layer = IT_L_BLOCK, .name = "block_rq_complete", .label = "block_rq_complete_wb",
	  .tp_group = "block", .needs = IT_NEED_LOOP,
	  .progs = { [IT_M_TP_BTF] = { "btf_block_rq_complete_wb" },
		     [IT_M_RAW_TP] = { "raw_block_rq_complete_wb" } } },
	BTF_RAW_HOOK(IT_L_BLOCK, block_rq_complete, "block"),
	/*
	 * A second program on the same tracepoint for the completions the first
	 * one misses by nesting ("nested completions" in block.bpf.h): a record of
	 * every request needs it, and so do the histograms of always-on and -m,
	 * which alerts read: they count every request (issue 31).
	 */
	{ .layer = IT_L_BLOCK, .name = "block_rq_complete", .label = "block_rq_complete_nested",
	  .tp_group = "block", .nested_complete = 1,
	  .progs = { [IT_M_TP_BTF] = { "btf_block_rq_complete2" },
		     [IT_M_RAW_TP] = { "raw_block_rq_complete2" } } },
};

#define NR_HOOKS ((int)(sizeof(hook_defs) / sizeof(hook_defs[0])))

/* A QEMU uprobe (bpf/qemu.bpf.h): attached per process by host.c, no hook of the table. */
static int is_uprobe(const struct bpf_program *prog)
{
	return !strcmp(bpf_program__section_name(prog), "uprobe");
}

/* How many program names of the table are `name`. */
static int hooks_naming(const char *name)
{
	int nr = 0;

	for (int i = 0; i < NR_HOOKS; i++)
		for (int m = 0; m < IT_M_MAX; m++)
			for (int k = 0; k < IT_HOOK_PROGS; k++)
				nr += hook_defs[i].progs[m][k] && !strcmp(hook_defs[i].progs[m][k], name);
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
				name = hook_defs[i].progs[m][k];
				if (!name || bpf_object__find_program_by_name(obj, name))
					continue;
				snprintf(why, n, "hook %s: no program %s in the BPF object",
					 hook_defs[i].name, name);
				return -EINVAL;
			}
		}
	}
	bpf_object__for_each_program(prog, obj) {
		name = bpf_program__name(prog);
		nr = hooks_naming(name);
		if (nr == 1 || (!nr && is_uprobe(prog)))
			continue;
		snprintf(why, n, "program %s is in %d hooks of the table (expected 1)", name, nr);
		return -EINVAL;
	}
	return 0;
}

static const char *const method_names[IT_M_MAX] = {
	[IT_M_NONE] = "-", [IT_M_TP_BTF] = "tp_btf", [IT_M_RAW_TP] = "raw_tp",
	[IT_M_TP] = "tp",  [IT_M_FENTRY] = "fentry", [IT_M_KPROBE] = "kprobe",
	[IT_M_TASK] = "task", [IT_M_HASH] = "hash",
};

const char *it_method_name(enum it_method m)
{
	return m >= 0 && m < IT_M_MAX ? method_names[m] : "?";
}

/* The kernel function a fentry/kprobe hook attaches to. */
static const char *hook_fn(const struct it_hook_def *d, char *buf, size_t n)
{
	if (!d->sys_fn)
		return d->name;
	snprintf(buf, n, IT_SYS_FN_PREFIX "%s", d->name);
	return buf;
}

/* Can `method` implement hook `d` here? If not, say why in `why`. */
static int method_usable(struct it_probe *p, const struct it_hook_def *d, enum it_method m,
			 char *why, size_t n)
{
	char name[64];
	const char *fn = hook_fn(d, name, sizeof(name));

	switch (m) {
	case IT_M_TP_BTF:
		snprintf(name, sizeof(name), "btf_trace_%s", d->name);
		if (it_tp_params(p, name) < 0) {
			snprintf(why, n, "no BTF for tracepoint %s", d->name);
			return 0;
		}
		if (d->arg0_typed && it_tp_arg_ptr(p, name, 0) == 1) {
			snprintf(why, n, "tp_btf: %s's arguments are void * here", d->name);
			return 0;
		}
		return 1;
	case IT_M_RAW_TP:
	case IT_M_TP:
		if (!it_tracefs_event_exists(p, d->tp_group, d->name)) {
			if (!p->tracefs[0])
				snprintf(why, n, "%s", p->tracefs_why);
			else
				snprintf(why, n, "no tracepoint %s/%s", d->tp_group ? d->tp_group : "?",
					 d->name);
			return 0;
		}
		return 1;
	case IT_M_FENTRY:
		if (p->fentry_err) {
			snprintf(why, n, "fentry not permitted (%s)", it_fentry_why(p));
			return 0;
		}
		if (!it_func_exists(p, fn)) {
			if (it_ksym_exists(p, fn))
				snprintf(why, n, "fentry: no BTF for %s (a module without BTF)", fn);
			else
				snprintf(why, n, "no kernel function %s (module not loaded?)", fn);
			return 0;
		}
		if (d->arg0_struct && !it_func_arg0_struct_ptr(p, d->name)) {
			snprintf(why, n, "fentry: %s's first argument is not a struct pointer here",
				 d->name);
			return 0;
		}
		return 1;
	case IT_M_TASK:
		if (!it_btf_struct_has(p->vmlinux, "task_struct", d->name) ||
		    !it_btf_struct_has(p->vmlinux, "task_struct", "nvcsw")) {
			snprintf(why, n, "no task_struct.%s in the kernel BTF", d->name);
			return 0;
		}
		return 1;
	case IT_M_KPROBE:
		if (!p->kprobe_ok) {
			if (p->fentry_err)
				snprintf(why, n, "fentry: %s; kprobe: not supported by this kernel",
					 it_fentry_why(p));
			else
				snprintf(why, n, "kprobe: not supported by this kernel");
			return 0;
		}
		/* kallsyms: a module's function is a kprobe target without module BTF too */
		if (!it_func_exists(p, fn) && !it_ksym_exists(p, fn)) {
			snprintf(why, n, "no kernel function %s (module not loaded?)", fn);
			return 0;
		}
		return 1;
	default:
		return 0;
	}
}

/*
 * The kernel has this tracepoint (its BTF says so) although no method could
 * attach it: tracefs without its event (a bare or odd mount). It counts as
 * tried: a layer missing it is partial, not degraded by design.
 */
static int kernel_has_tp(struct it_probe *p, const struct it_hook_def *d)
{
	char name[80];

	if (!d->tp_group)
		return 0;
	snprintf(name, sizeof(name), "btf_trace_%s", d->name);
	return it_tp_params(p, name) >= 0;
}

/*
 * Hooks that do not depend on a method: where the per-thread state lives
 * (task storage, or before 5.12 a hash by thread id, which says so), and
 * the BPF features a hook's programs need. 1 when the hook is settled.
 */
static int choose_special(struct it_hook_state *h, const struct it_probe *p)
{
	const struct it_hook_def *d = h->def;

	if (d->thread_state) {
		h->method = p->task_storage ? IT_M_TASK : IT_M_HASH;
		if (!p->task_storage)
			snprintf(h->reason, sizeof(h->reason), "no task storage for tracing programs "
				 "(5.12): an LRU hash of %d threads", IT_TSTATE_HASH_ENTRIES);
		return 1;
	}
	if ((d->needs & IT_NEED_LOOP) && !p->loop) {
		snprintf(h->reason, sizeof(h->reason), "needs bpf_loop (5.17): %s",
			 d->prog_array ? "no libaio records" : "writeback names no dirtier");
		return 1;
	}
	return 0;
}

/* An attached driver hook whose module struct has no BTF here: say what it does not read. */
static void note_unread_types(struct it_hook_state *h, struct it_probe *p)
{
	const char *ty = h->def->reads_type;

	if (h->method == IT_M_NONE || !ty || it_btf_type_exists(p, ty))
		return;
	snprintf(h->reason, sizeof(h->reason), "no BTF for struct %s (module BTF: 5.11): "
		 "opcode and status not read, stamps are", ty);
}

/* A hook the options leave off (its reason in why), or false. */
static bool hook_gated(const struct it_hook_def *d, const struct it_opts *o, char *why, size_t n)
{
	const char *r = NULL;

	if (d->sched_switch && !o->sched_switch)
		r = "--sched-switch turns it on";
	else if (d->block_insert && !o->block_insert)
		r = "--block-insert turns it on";
	else if (d->every_record && o->min_lat_ns)
		r = "records of slow requests only (-m, --profile always-on): not needed";
	if (r)
		snprintf(why, n, "%s", r);
	return r;
}

static void choose_methods(struct it_loader *ld, struct it_probe *p, const struct it_opts *o,
			   uint32_t layers, enum it_method prefer)
{
	for (int i = 0; i < ld->nr_hooks; i++) {
		struct it_hook_state *h = &ld->hooks[i];
		const struct it_hook_def *d = h->def;
		char why[160] = "";

		h->method = IT_M_NONE;
		if (!(layers & (1u << d->layer))) {
			snprintf(h->reason, sizeof(h->reason), "layer not selected");
			continue;
		}
		if (d->path && d->path != ld->path) {
			/* the raw pair stays in the report where the file path replaced it */
			h->off = d->shows_path && ld->path == IT_PATH_FILE;
			h->other_path = !h->off;
			snprintf(h->reason, sizeof(h->reason), "%s",
				 ld->path == IT_PATH_FILE ?
					 "file IO is traced in the file systems (no program on every "
					 "syscall): --syscall-hooks raw turns it on" :
				 ld->path == IT_PATH_PERCALL ? "--syscall-hooks percall" :
							       "the raw_syscalls pair");
			continue;
		}
		if (hook_gated(d, o, h->reason, sizeof(h->reason))) {
			h->off = 1;
			continue;
		}
		if (choose_special(h, p))
			continue;
		if (d->task_counters) {
			if (method_usable(p, d, IT_M_TASK, why, sizeof(why)))
				h->method = IT_M_TASK;
			else
				snprintf(h->reason, sizeof(h->reason), "%s", why);
			continue;
		}
		/* A preferred method (tests force raw_tp) goes first when the hook has it. */
		if (prefer && d->progs[prefer][0] &&
		    method_usable(p, d, prefer, why, sizeof(why))) {
			h->method = prefer;
			continue;
		}
		for (int m = IT_M_TP_BTF; m < IT_M_MAX; m++) {
			if (!d->progs[m][0])
				continue;
			if (method_usable(p, d, m, why, sizeof(why))) {
				h->method = m;
				break;
			}
		}
		if (h->method == IT_M_NONE) {
			snprintf(h->reason, sizeof(h->reason), "%s", why[0] ? why : "no method");
			h->kernel_has = kernel_has_tp(p, d);
		}
		note_unread_types(h, p);
	}
}

static struct bpf_program *prog_by_name(struct it_loader *ld, const char *name)
{
	return name ? bpf_object__find_program_by_name(ld->skel->obj, name) : NULL;
}

/* Autoload exactly the programs of the chosen methods. */
static void set_autoload(struct it_loader *ld, const struct it_opts *o)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, ld->skel->obj) bpf_program__set_autoload(prog, false);
	for (int i = 0; i < ld->nr_hooks; i++) {
		const struct it_hook_state *h = &ld->hooks[i];

		if (h->method == IT_M_NONE)
			continue;
		for (int k = 0; k < IT_HOOK_PROGS; k++) {
			char fn[64];

			prog = prog_by_name(ld, h->def->progs[h->method][k]);
			if (!prog)
				continue;
			bpf_program__set_autoload(prog, true);
			/* a slot program: its function is the table's (kprobes: at attach) */
			if (h->def->target && h->method == IT_M_FENTRY &&
			    bpf_program__set_attach_target(prog, 0, hook_fn(h->def, fn, sizeof(fn))))
				it_debug("%s: cannot set the attach target of %s", h->name,
					 bpf_program__name(prog));
		}
	}
	/* host mode: the QEMU uprobes (bpf/qemu.bpf.h), attached per process by host.c */
	bpf_object__for_each_program(prog, ld->skel->obj) {
		if (o->mode == IT_MODE_HOST && is_uprobe(prog))
			bpf_program__set_autoload(prog, true);
	}
}

/*
 * --ring-size is the record memory: per-CPU slot buffers get all of it
 * (split over the possible CPUs, 512 to 65536 slots each), the shared ring
 * buffer (aio records and overflow) a quarter. IOTRACER_RING_ONLY=1 turns the
 * slot buffers off (A/B measurements, docs/bench.md), and so does a kernel without
 * BPF xchg (the compat object, open_skel).
 */
/*
 * Tests only (docs/testing.md): IOTRACER_TEST_MISS_COMPLETION=N makes the
 * kernel side miss the Nth completion of a followed block request.
 */
static uint32_t test_miss_nth(void)
{
	const char *env = getenv("IOTRACER_TEST_MISS_COMPLETION");
	uint64_t n;

	if (!env)
		return 0;
	if (parse_u64(env, 1, UINT32_MAX, &n)) {
		it_warn("IOTRACER_TEST_MISS_COMPLETION: bad count '%s' (expected N >= 1): ignored",
			env);
		return 0;
	}
	it_warn("IOTRACER_TEST_MISS_COMPLETION=%llu: block completion %llu will not be seen (a test)",
		(unsigned long long)n, (unsigned long long)n);
	return (uint32_t)n;
}

#define SLOT_SHIFT_MIN 9
#define SLOT_SHIFT_MAX 16

static void size_buffers(struct it_loader *ld, const struct it_opts *o, const struct it_probe *p)
{
	const char *env = getenv("IOTRACER_RING_ONLY");
	int ncpu = libbpf_num_possible_cpus();
	uint64_t per;

	ld->ncpu = ncpu > 0 ? ncpu : 1;
	ld->ring_bytes = o->ring_size;
	ld->slot_shift = 0;
	/* the compat object (no xchg, open_skel) cannot claim a slot */
	if ((env && !strcmp(env, "1")) || !p->xchg)
		return;
	per = o->ring_size / IT_SLOT_SIZE / ld->ncpu;
	ld->slot_shift = SLOT_SHIFT_MIN;
	while (ld->slot_shift < SLOT_SHIFT_MAX && (2ull << ld->slot_shift) <= per)
		ld->slot_shift++;
	ld->ring_bytes = o->ring_size / 4 < 65536 ? 65536 : o->ring_size / 4;
}

static int size_record_buffers(struct it_loader *ld, const struct it_opts *o)
{
	int ret = bpf_map__set_max_entries(ld->skel->maps.events, (uint32_t)ld->ring_bytes);

	if (!ret && ld->slot_shift)
		ret = bpf_map__set_max_entries(ld->skel->maps.slots,
					       (uint32_t)ld->ncpu << ld->slot_shift);
	if (!ret)
		ret = bpf_map__set_max_entries(ld->skel->maps.slot_pos, (uint32_t)ld->ncpu);
	return ret;
}

static void *map_mmap(const struct bpf_map *map, size_t *len)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t n = (size_t)bpf_map__value_size(map) * bpf_map__max_entries(map);
	void *p;

	*len = (n + page - 1) / page * page;
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(map), 0);
	return p == MAP_FAILED ? NULL : p;
}

int it_loader_map_slots(struct it_loader *ld, void **slots, void **pos)
{
	*slots = *pos = NULL;
	if (!ld->slot_shift)
		return 0;
	ld->slots_mem = map_mmap(ld->skel->maps.slots, &ld->slots_len);
	ld->pos_mem = map_mmap(ld->skel->maps.slot_pos, &ld->pos_len);
	if (!ld->slots_mem || !ld->pos_mem)
		return -errno;
	*slots = ld->slots_mem;
	*pos = ld->pos_mem;
	return 0;
}

/* libaio's exit program will be loaded (the kernel has what it needs). */
static int aio_loaded(const struct it_loader *ld)
{
	for (int i = 0; i < ld->nr_hooks; i++)
		if (ld->hooks[i].def->prog_array && ld->hooks[i].method != IT_M_NONE &&
		    !strcmp(ld->hooks[i].def->prog_array, "aio_exit_prog"))
			return 1;
	return 0;
}

/* Loads by this process: a re-attach starts the syscall sequence numbers higher. */
static uint64_t loads;

static void set_rodata(struct it_loader *ld, const struct it_opts *o, const struct it_probe *p)
{
	struct iotracer_bpf__rodata *rd = ld->skel->rodata;
	int n;

	rd->self_tgid = ld->self_tgid;
	rd->seq_base = (uint64_t)loads++ << 40;
	it_syscalls_table((uint8_t *)rd->sys_of_nr, aio_loaded(ld));
	/* the filters are writable globals, set after load by it_filters_apply() */
	rd->wake_bytes = ld->ring_bytes / 2;
	rd->want_iovecs = o->mode == IT_MODE_HOST;
	/* the bench's dispatch floor (docs/bench.md, "Tax"): the syscall hooks, nothing run */
	rd->empty_progs = getenv("IOTRACER_EMPTY_PROGS") && !strcmp(getenv("IOTRACER_EMPTY_PROGS"), "1");
	rd->slot_shift = ld->slot_shift;
	rd->slot_mask = ld->slot_shift ? (1u << ld->slot_shift) - 1 : 0;
	rd->slot_wake = ld->slot_shift ? 1ull << (ld->slot_shift - 1) : 0;
	for (int i = 0; i < ld->nr_hooks; i++) {
		if (ld->hooks[i].def->task_counters && ld->hooks[i].method == IT_M_TASK)
			rd->sched_counters = 1;
		else if (ld->hooks[i].def->sched_switch && ld->hooks[i].method != IT_M_NONE)
			rd->sched_hooks = 1;
		else if (ld->hooks[i].def->block_insert && ld->hooks[i].method != IT_M_NONE)
			rd->insert_hooked = 1;
		else if (ld->hooks[i].def->nested_complete && ld->hooks[i].method != IT_M_NONE)
			rd->nested_hooked = 1;
	}
	/* sched_switch(void *, preempt, prev, next, prev_state) since 5.18 */
	rd->sched_switch_has_state = it_btf_func_params(p->vmlinux, "btf_trace_sched_switch") >= 5;
	/* block_rq_issue(void *, rq) since 5.11; (void *, q, rq) before */
	n = it_btf_func_params(p->vmlinux, "btf_trace_block_rq_issue");
	rd->blk_tp_has_queue = n == 3;
	/* block_bio_queue(void *, bio) since 5.11; (void *, q, bio) before: checked apart */
	n = it_btf_func_params(p->vmlinux, "btf_trace_block_bio_queue");
	rd->blk_bio_tp_has_queue = n == 3;
	/* io_uring_complete(void *, ctx, req, cqe) since 6.0 */
	n = it_btf_func_params(p->vmlinux, "btf_trace_io_uring_complete");
	rd->uring_complete_has_cqe = n < 0 || n == 4;
	/* io_uring_complete(ctx, req, ...) since 5.18; (ctx, u64 user_data, ...) before */
	rd->uring_complete_has_req = it_tp_arg_ptr(p, "btf_trace_io_uring_complete", 1) != 0;
	/* io_uring_submit_sqe(void *ctx, void *req, ...) before 6.0; (struct io_kiocb *req, ...) */
	rd->uring_submit_req_arg = it_tp_arg_ptr(p, "btf_trace_io_uring_submit_sqe", 0) == 1;
	rd->has_task_btf = p->task_btf;
	rd->has_task_storage = p->task_storage;
	rd->test_miss_nth = test_miss_nth();
}

/*
 * Without task storage for tracing programs (before 5.12) the per-thread
 * state map becomes an LRU hash keyed by thread id (core_fixes.bpf.h).
 */
static int set_thread_map(struct it_loader *ld, const struct it_probe *p)
{
	struct bpf_map *m = ld->skel->maps.tstate;
	int ret;

	if (p->task_storage)
		return 0;
	ret = bpf_map__set_type(m, BPF_MAP_TYPE_LRU_HASH);
	if (!ret)
		ret = bpf_map__set_map_flags(m, 0);
	if (!ret)
		ret = bpf_map__set_max_entries(m, IT_TSTATE_HASH_ENTRIES);
	return ret;
}

/* ---- attach ---- */

/* A tail call target into its array (entry 0): "attached" once its caller can reach it. */
static int fill_prog_array(struct it_loader *ld, struct it_hook_state *h)
{
	struct bpf_program *prog = prog_by_name(ld, h->def->progs[h->method][0]);
	struct bpf_map *map = bpf_object__find_map_by_name(ld->skel->obj, h->def->prog_array);
	int fd = prog ? bpf_program__fd(prog) : -EBADF;
	uint32_t zero = 0;

	if (fd < 0 || !map ||
	    bpf_map__update_elem(map, &zero, sizeof(zero), &fd, sizeof(fd), BPF_ANY)) {
		snprintf(h->reason, sizeof(h->reason), "tail call not set: %s",
			 strerror(fd < 0 ? -fd : !map ? ENOENT : errno));
		return 0;
	}
	return 1;
}

/* A program bound by the loader to its hook's function is attached by name (kprobes). */
static struct bpf_link *attach_prog(struct it_hook_state *h, struct bpf_program *prog)
{
	char fn[64];

	if (!h->def->target || h->method != IT_M_KPROBE)
		return bpf_program__attach(prog);
	return bpf_program__attach_kprobe(prog,
					  !strcmp(bpf_program__section_name(prog), "kretprobe"),
					  hook_fn(h->def, fn, sizeof(fn)));
}

static void attach_hooks(struct it_loader *ld)
{
	ld->layers_on = 0;
	for (int i = 0; i < ld->nr_hooks; i++) {
		struct it_hook_state *h = &ld->hooks[i];

		if (h->method == IT_M_NONE)
			continue;
		if (h->def->prog_array) {
			h->ok = fill_prog_array(ld, h);
			continue;
		}
		h->ok = 1;
		for (int k = 0; k < IT_HOOK_PROGS; k++) {
			struct bpf_program *prog = prog_by_name(ld, h->def->progs[h->method][k]);

			if (!h->def->progs[h->method][k])
				continue;
			h->links[k] = prog ? attach_prog(h, prog) : NULL;
			if (!h->links[k]) {
				snprintf(h->reason, sizeof(h->reason), "attach failed: %s",
					 strerror(errno));
				h->ok = 0;
			}
		}
		if (h->ok)
			ld->layers_on |= 1u << h->def->layer;
	}
}

/*
 * What libbpf said about the last program that failed to load: its name and
 * the verifier's verdict (the last line of its log before the statistics).
 * libbpf's messages go to stderr only with -v.
 */
static struct {
	int verbose;
	char prog[64];
	char why[128];
} load_log;

static void note_verdict(const char *log, const char *end)
{
	while (log < end) {
		const char *nl = memchr(log, '\n', end - log);
		size_t len = (nl ? nl : end) - log;

		if (len && strncmp(log, "processed ", 10) && strncmp(log, "verification time", 17) &&
		    strncmp(log, "stack depth", 11) && strncmp(log, "-- END", 6))
			snprintf(load_log.why, sizeof(load_log.why), "%.*s", (int)len, log);
		log += len + 1;
	}
}

static void note_failure(const char *msg)
{
	const char *q = strstr(msg, "prog '"), *b = strstr(msg, "-- BEGIN PROG LOAD LOG --");
	const char *e;

	if (q && (strstr(msg, "failed to load") || strstr(msg, "load failed") || b)) {
		q += 6;
		e = strchr(q, '\'');
		if (e && e - q < (long)sizeof(load_log.prog))
			snprintf(load_log.prog, sizeof(load_log.prog), "%.*s", (int)(e - q), q);
	}
	if (b) {
		b = strchr(b, '\n');
		e = b ? strstr(b, "-- END PROG LOAD LOG --") : NULL;
		if (b && e)
			note_verdict(b + 1, e);
	}
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *msg = NULL;
	va_list aq;

	va_copy(aq, ap);
	if (load_log.verbose)
		vfprintf(stderr, fmt, aq);
	va_end(aq);
	if (level == LIBBPF_WARN && vasprintf(&msg, fmt, ap) >= 0) {
		note_failure(msg);
		free(msg);
	}
	return 0;
}

/* Another name of the same event attached: this one is not worth a line. */
static int alt_attached(const struct it_loader *ld, const struct it_hook_state *h)
{
	if (!h->def->alt)
		return 0;
	for (int i = 0; i < ld->nr_hooks; i++)
		if (ld->hooks[i].ok && ld->hooks[i].def->alt &&
		    !strcmp(ld->hooks[i].def->alt, h->def->alt))
			return 1;
	return 0;
}

int it_loader_hook_hidden(const struct it_loader *ld, int i)
{
	const struct it_hook_state *h = &ld->hooks[i];

	return !strcmp(h->reason, "layer not selected") || h->other_path ||
	       (!h->ok && alt_attached(ld, h));
}

/*
 * A layer's hooks: how many there are, were tried (a method chosen, or a
 * tracepoint the kernel has that no method could attach), and attached.
 */
struct hook_count {
	int total, tried, ok;
	const char *why; /* a reason of one that did not attach */
};

static void count_hooks(const struct it_loader *ld, int layer, struct hook_count *c)
{
	memset(c, 0, sizeof(*c));
	for (int i = 0; i < ld->nr_hooks; i++) {
		const struct it_hook_state *h = &ld->hooks[i];
		int tried = h->method != IT_M_NONE || h->kernel_has;

		if (h->layer != layer || h->off || it_loader_hook_hidden(ld, i))
			continue;
		c->total++;
		c->tried += tried;
		c->ok += h->ok;
		if (!h->ok && (!c->why || tried))
			c->why = h->reason;
	}
}

/*
 * A layer that attached nothing is an error when the kernel has it (some hook
 * could be tried), when the tracer cannot do without it (the syscall layer,
 * the block layer), or when the user asked for a layer of which nothing
 * attached. One that attached part of what it tried is a warning, printed
 * even under -q: its records are partial. Hooks with no method here (fentry
 * refused, no driver loaded, libaio without bpf_loop) are the attach report's
 * business.
 */
static int check_layer(const struct it_loader *ld, const struct it_opts *o, int l, FILE *err)
{
	int layer_ok = !!(ld->layers_on & (1u << l));
	int core = l == IT_L_SYSCALL || (l == IT_L_BLOCK && !layer_ok);
	struct hook_count c;

	count_hooks(ld, l, &c);
	if (!c.total)
		return 0;
	if (!c.ok && (c.tried || core || ((o->layers & (1u << l)) && !layer_ok))) {
		it_err_to(err, "layer %s: none of its hooks attached: %s", abi_layer_name(l),
			  c.why ? c.why : "no method");
		return -ENOENT;
	}
	if (c.ok < c.tried)
		it_warn_to(err, "layer %s: %d of %d hooks attached (%s): its records are partial",
			   abi_layer_name(l), c.ok, c.tried, c.why);
	return 0;
}

static int check_layers(const struct it_loader *ld, const struct it_opts *o, uint32_t layers,
			FILE *err)
{
	int ret = 0;

	for (int l = 0; l < IT_L_MAX; l++)
		if ((layers & (1u << l)) && check_layer(ld, o, l, err))
			ret = -ENOENT;
	return ret;
}

/*
 * The object to load: without BPF xchg (before 5.12) the compat build
 * (bpf/core_fixes.bpf.h it_slot_busy_claim), opened in the main skeleton's
 * layout: same sources, so the same maps, programs and globals.
 */
static struct iotracer_bpf *open_skel(const struct it_probe *p)
{
	struct iotracer_bpf *obj;
	int err;

	if (p->xchg)
		return iotracer_bpf__open();
	obj = calloc(1, sizeof(*obj));
	if (!obj) {
		errno = ENOMEM;
		return NULL;
	}
	err = iotracer_bpf__create_skeleton(obj);
	if (!err) {
		obj->skeleton->data = (void *)iotracer_compat_bpf__elf_bytes(&obj->skeleton->data_sz);
		err = bpf_object__open_skeleton(obj->skeleton, NULL);
	}
	if (err) {
		iotracer_bpf__destroy(obj);
		errno = -err;
		return NULL;
	}
	return obj;
}

/*
 * The hook of the program libbpf last failed to load (load_log.prog) moves to
 * its next usable method (tp_btf -> raw_tp, fentry -> kprobe), or gets none,
 * with the verifier's verdict as its reason. 0 when no hook owns it.
 */
static int drop_failed_hook(struct it_loader *ld, struct it_probe *p)
{
	for (int i = 0; load_log.prog[0] && i < ld->nr_hooks; i++) {
		struct it_hook_state *h = &ld->hooks[i];

		for (int k = 0; h->method != IT_M_NONE && k < IT_HOOK_PROGS; k++) {
			const char *name = h->def->progs[h->method][k];

			if (!name || strcmp(name, load_log.prog))
				continue;
			it_debug("%s: program %s did not load (%s)", h->name, name, load_log.why);
			snprintf(h->reason, sizeof(h->reason), "%s did not load here: %s",
				 it_method_name(h->method), load_log.why[0] ? load_log.why : "?");
			/* the next method that can implement it, if any */
			for (int m = h->method + 1; m < IT_M_MAX; m++) {
				char why[160];

				if (h->def->progs[m][0] && method_usable(p, h->def, m, why, sizeof(why))) {
					it_debug("%s: trying %s", h->name, it_method_name(m));
					h->method = m;
					h->reason[0] = 0;
					return 1;
				}
			}
			h->method = IT_M_NONE;
			h->load_failed = 1;
			return 1;
		}
	}
	return 0;
}

/*
 * Open, configure and load the object. A program this kernel refuses although
 * the probes let it through (a verifier limit, a type its BTF lacks) is not the
 * user's first sight: its hook is dropped with the verifier's verdict as the
 * reason, and the object opened and loaded again without it.
 */
#define LOAD_RETRIES 8

static int load_object(struct it_loader *ld, const struct it_opts *o, struct it_probe *p,
		       FILE *err)
{
	char why[160];
	int ret;

	for (int tries = 0;; tries++) {
		ld->skel = open_skel(p);
		if (!ld->skel) {
			ret = -errno;
			it_err_to(err, "cannot open BPF object: %s", strerror(errno));
			return ret;
		}
		ret = it_loader_check_hooks(ld->skel->obj, why, sizeof(why));
		if (ret) {
			it_err_to(err, "internal error: %s", why);
			return ret;
		}
		set_autoload(ld, o);
		size_buffers(ld, o, p);
		set_rodata(ld, o, p);
		ret = set_thread_map(ld, p);
		if (ret)
			it_err_to(err, "cannot set up the thread state map: %s", strerror(-ret));
		if (!ret)
			ret = size_record_buffers(ld, o);
		if (ret)
			return ret;
		load_log.prog[0] = load_log.why[0] = 0;
		ret = iotracer_bpf__load(ld->skel);
		if (!ret)
			return 0;
		if (tries == LOAD_RETRIES || !drop_failed_hook(ld, p)) {
			it_err_to(err, "cannot load BPF programs%s%s: %s%s",
				  load_log.prog[0] ? " at " : "", load_log.prog, strerror(-ret),
				  o->verbose ? "" : " (run with -v for the verifier log)");
			return ret;
		}
		iotracer_bpf__destroy(ld->skel);
		ld->skel = NULL;
	}
}

/*
 * The syscall layer's way (IT_PATH_*, --syscall-hooks; docs/hooks.md "The
 * tax"). auto: in the file systems where fentry or kprobes work and
 * bpf_task_pt_regs (5.15) reads the syscall's number, else the raw_syscalls
 * pair (exact; every syscall runs it). raw: that pair. percall: the traced
 * syscalls' own tracepoints where tracefs has them (other syscalls run no
 * program; their runs are skipped while the CPU's bpf_prog_active is held,
 * counted in skipped_runs), else the pair.
 */
static int choose_path(struct it_probe *p, const struct it_opts *o)
{
	const char *want = o->syscall_hooks ? o->syscall_hooks : "auto";

	if (!strcmp(want, "raw"))
		return IT_PATH_RAW;
	if (!strcmp(want, "percall")) {
		if (it_tracefs_event_exists(p, "syscalls", "sys_enter_read"))
			return IT_PATH_PERCALL;
		it_warn("--syscall-hooks percall: no per-syscall tracepoints in tracefs here: "
			"the raw_syscalls pair traces the syscalls");
		return IT_PATH_RAW;
	}
	if ((p->fentry_err && !p->kprobe_ok) || !p->task_regs) {
		it_debug("syscalls: the raw_syscalls pair (%s)",
			 p->task_regs ? "no fentry, no kprobes" : "no bpf_task_pt_regs");
		return IT_PATH_RAW;
	}
	it_debug("syscalls: traced in the file systems (%s)", p->fentry_err ? "kprobe" : "fentry");
	return IT_PATH_FILE;
}

int it_loader_load(struct it_loader *ld, const struct it_opts *o, FILE *err)
{
	uint32_t layers = o->layers ? o->layers : (1u << IT_L_MAX) - 1;
	enum it_method prefer = IT_M_NONE;
	const char *env = getenv("IOTRACER_PREFER");
	struct it_probe p;
	int ret;

	memset(ld, 0, sizeof(*ld));
	ld->self_tgid = getpid();
	load_log.verbose = o->verbose > 0;
	libbpf_set_print(libbpf_print);
	if (geteuid() != 0) {
		it_err_to(err, "need root (CAP_BPF and CAP_PERFMON): run with sudo");
		return -EPERM;
	}
	/* fs and sched annotate syscalls: they need the syscall layer. */
	if (layers & ((1u << IT_L_FS) | (1u << IT_L_SCHED)))
		layers |= 1u << IT_L_SYSCALL;
	/* tests cover the fallbacks: prefer raw_tp over tp_btf, kprobe over fentry */
	if (env && !strcmp(env, "raw_tp"))
		prefer = IT_M_RAW_TP;
	else if (env && !strcmp(env, "kprobe"))
		prefer = IT_M_KPROBE;

	it_probe_kernel(&p);
	ld->path = choose_path(&p, o);
	ld->nr_hooks = NR_HOOKS;
	ld->hooks = calloc(NR_HOOKS, sizeof(*ld->hooks));
	if (!ld->hooks) {
		ret = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < NR_HOOKS; i++) {
		ld->hooks[i].def = &hook_defs[i];
		ld->hooks[i].layer = hook_defs[i].layer;
		ld->hooks[i].name = hook_defs[i].label ? hook_defs[i].label : hook_defs[i].name;
	}
	choose_methods(ld, &p, o, layers, prefer);

	ret = load_object(ld, o, &p, err);
	if (ret)
		goto out;
	ret = it_filters_apply(ld, o, err);
	ld->layers_want = layers;
out:
	it_probe_free(&p);
	return ret;
}

int it_loader_attach(struct it_loader *ld, const struct it_opts *o, FILE *err)
{
	int ret;

	attach_hooks(ld);
	/* from now on a syscall whose exit goes unseen is a loss (bpf/config.bpf.h) */
	ld->skel->bss->armed_ns = it_mono_ns();
	ret = check_layers(ld, o, ld->layers_want, err);
	if (ret)
		it_loader_report(ld, err);
	return ret;
}

int it_loader_start(struct it_loader *ld, const struct it_opts *o, FILE *err)
{
	return it_loader_load(ld, o, err) ?: it_loader_attach(ld, o, err);
}

enum out_hook_st it_hook_state_of(const struct it_hook_state *h)
{
	if (h->ok)
		return OUT_HS_ATTACHED;
	if (h->off)
		return OUT_HS_OFF;
	if (h->method != IT_M_NONE || h->kernel_has || h->load_failed)
		return OUT_HS_FAILED;
	return OUT_HS_ABSENT;
}

static const char *hook_status(const struct it_hook_state *h)
{
	static const char *const text[OUT_HS_MAX] = { "ok", "off:", "absent:", "failed:" };

	return text[it_hook_state_of(h)];
}

void it_loader_report(const struct it_loader *ld, FILE *f)
{
	fprintf(f, "%-8s %-30s %-7s %s\n", "LAYER", "HOOK", "METHOD", "STATUS");
	for (int i = 0; i < ld->nr_hooks; i++) {
		const struct it_hook_state *h = &ld->hooks[i];

		if (it_loader_hook_hidden(ld, i))
			continue;
		if (h->ok && h->reason[0]) /* what it gives up on this kernel */
			fprintf(f, "%-8s %-30s %-7s ok (%s)\n", abi_layer_name(h->layer), h->name,
				it_method_name(h->method), h->reason);
		else
			fprintf(f, "%-8s %-30s %-7s %s%s%s\n", abi_layer_name(h->layer), h->name,
				it_method_name(h->method), hook_status(h), h->ok ? "" : " ",
				h->ok ? "" : h->reason);
	}
}

void it_loader_skipped(const struct it_loader *ld, uint64_t skipped[IT_L_MAX])
{
	memset(skipped, 0, IT_L_MAX * sizeof(*skipped));
	for (int i = 0; i < ld->nr_hooks; i++) {
		const struct it_hook_state *h = &ld->hooks[i];

		if (!h->ok)
			continue;
		for (int k = 0; k < IT_HOOK_PROGS; k++) {
			struct bpf_program *prog =
				prog_by_name((struct it_loader *)ld, h->def->progs[h->method][k]);
			struct bpf_prog_info info = {};
			__u32 len = sizeof(info);

			if (prog && !bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
				skipped[h->layer] += info.recursion_misses;
		}
	}
}

static int prog_info(const struct bpf_program *prog, struct bpf_prog_info *info)
{
	__u32 len = sizeof(*info);
	int fd = bpf_program__fd(prog);

	memset(info, 0, sizeof(*info));
	return fd < 0 ? -EBADF : bpf_obj_get_info_by_fd(fd, info, &len);
}

void it_loader_run_totals(const struct it_loader *ld, uint64_t *runs, uint64_t *ns)
{
	struct bpf_program *prog;
	uint64_t r = 0, t = 0;

	bpf_object__for_each_program(prog, ld->skel->obj) {
		struct bpf_prog_info info;

		if (prog_info(prog, &info))
			continue;
		r += info.run_cnt;
		t += info.run_time_ns;
	}
	if (runs)
		*runs = r;
	if (ns)
		*ns = t;
}

void it_loader_prog_stats(const struct it_loader *ld, FILE *f)
{
	struct bpf_program *prog;

	fprintf(f, "%-34s %12s %12s %10s %10s\n", "PROGRAM", "RUNS", "NS", "NS/RUN", "SKIPPED");
	bpf_object__for_each_program(prog, ld->skel->obj) {
		struct bpf_prog_info info;

		if (prog_info(prog, &info))
			continue;
		fprintf(f, "%-34s %12llu %12llu %10.0f %10llu\n", bpf_program__name(prog),
			(unsigned long long)info.run_cnt, (unsigned long long)info.run_time_ns,
			info.run_cnt ? (double)info.run_time_ns / info.run_cnt : 0.0,
			(unsigned long long)info.recursion_misses);
	}
}

/*
 * Detaching a classic tracepoint waits for an RCU grace period (tens of ms
 * here, more in a VM): one after the other, the 34 syscall tracepoint links
 * took ~2.5 s. Links destroyed from several threads at once wait for the same
 * grace periods, so the detach costs a few of them instead of one per link.
 */
#define DETACH_THREADS 8

struct detach_job {
	struct bpf_link **links;
	int n, step;
};

static void *detach_some(void *arg)
{
	struct detach_job *j = arg;

	for (int i = 0; i < j->n; i += j->step)
		bpf_link__destroy(j->links[i]);
	return NULL;
}

void it_loader_detach(struct it_loader *ld)
{
	struct bpf_link *links[256];
	struct detach_job jobs[DETACH_THREADS];
	pthread_t tids[DETACH_THREADS];
	int n = 0, started[DETACH_THREADS] = { 0 };

	/* the links go in any order: an exit program gone first is no loss */
	if (ld->skel)
		ld->skel->bss->armed_ns = UINT64_MAX;
	for (int i = 0; ld->hooks && i < ld->nr_hooks; i++)
		for (int k = 0; k < IT_HOOK_PROGS; k++) {
			if (!ld->hooks[i].links[k])
				continue;
			if (n == (int)(sizeof(links) / sizeof(links[0])))
				bpf_link__destroy(ld->hooks[i].links[k]);
			else
				links[n++] = ld->hooks[i].links[k];
			ld->hooks[i].links[k] = NULL;
		}
	for (int t = 0; t < DETACH_THREADS; t++) {
		jobs[t] = (struct detach_job){ .links = links + t, .n = n - t, .step = DETACH_THREADS };
		if (jobs[t].n > 0)
			started[t] = !pthread_create(&tids[t], NULL, detach_some, &jobs[t]);
	}
	for (int t = 0; t < DETACH_THREADS; t++) {
		if (started[t])
			pthread_join(tids[t], NULL);
		else if (jobs[t].n > 0)
			detach_some(&jobs[t]); /* no thread: this one does it */
	}
}

void it_loader_stop(struct it_loader *ld)
{
	it_loader_detach(ld);
	if (ld->slots_mem)
		munmap(ld->slots_mem, ld->slots_len);
	if (ld->pos_mem)
		munmap(ld->pos_mem, ld->pos_len);
	iotracer_bpf__destroy(ld->skel);
	free(ld->hooks);
	memset(ld, 0, sizeof(*ld));
}
