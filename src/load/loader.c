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
#include <malloc.h>
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
#include "load/filters.h"
#include "load/kfeat.h"
#include "load/loader.h"
#include "load/loader_int.h"
#include "load/syscalls.h"
#include "records/recbuf.h"
#include "lib/abi.h"
#include "lib/clock.h"
#include "lib/parse.h"
#include "lib/log.h"

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

static void size_buffers(struct it_loader *ld, const struct ld_config *o, const struct it_probe *p)
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

static int size_record_buffers(struct it_loader *ld, const struct ld_config *o)
{
	int ret = bpf_map__set_max_entries(ld->skel->maps.events, (uint32_t)ld->ring_bytes);

	/* --file-names: the files named at most (none: one entry, never used) */
	if (!ret)
		ret = bpf_map__set_max_entries(ld->skel->maps.named,
					       o->file_names > 0 ? (uint32_t)o->file_names : 1);
	if (!ret && ld->slot_shift)
		ret = bpf_map__set_max_entries(ld->skel->maps.slots,
					       (uint32_t)ld->ncpu << ld->slot_shift);
	if (!ret)
		ret = bpf_map__set_max_entries(ld->skel->maps.slot_pos, (uint32_t)ld->ncpu);
	return ret;
}

int it_loader_map_slots(struct it_loader *ld, void **slots, void **pos)
{
	*slots = *pos = NULL;
	if (!ld->slot_shift)
		return 0;
	ld->slots_mem = ld_map_mmap(ld->skel->maps.slots, &ld->slots_len);
	ld->pos_mem = ld_map_mmap(ld->skel->maps.slot_pos, &ld->pos_len);
	if (!ld->slots_mem || !ld->pos_mem)
		return -errno;
	*slots = ld->slots_mem;
	*pos = ld->pos_mem;
	return 0;
}

int it_loader_records(struct it_loader *ld, struct ring_buffer **rb, struct recbuf *recs)
{
	void *slots, *pos;
	int ret;

	*rb = ring_buffer__new(bpf_map__fd(ld->skel->maps.events), recbuf_ring_record, recs, NULL);
	if (!*rb) {
		ret = -errno;
		it_err("cannot set up the ring buffer: %s", strerror(errno));
		return ret;
	}
	ret = it_loader_map_slots(ld, &slots, &pos);
	if (ret) {
		it_err("cannot map the record buffers: %s", strerror(-ret));
		return ret;
	}
	recbuf_init(recs, ld->ncpu, ld->slot_shift, slots, pos);
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

/* log2 of the page size: user space's is the kernel's (arm64 kernels run 4, 16 or 64 KiB) */
static uint8_t page_shift(void)
{
	long sz = sysconf(_SC_PAGESIZE);

	return sz > 0 && !(sz & (sz - 1)) ? (uint8_t)__builtin_ctzl((unsigned long)sz) : 12;
}

static void set_rodata(struct it_loader *ld, const struct ld_config *o, const struct it_probe *p)
{
	struct iotracer_bpf__rodata *rd = ld->skel->rodata;
	const char *env;
	int n;

	rd->self_tgid = ld->self_tgid;
	rd->page_shift = page_shift();
	rd->seq_base = (uint64_t)loads++ << 40;
	it_syscalls_table((uint8_t *)rd->sys_of_nr, aio_loaded(ld));
	/* the filters are writable globals, set after load by it_filters_apply() */
	rd->wake_bytes = ld->ring_bytes / 2;
	rd->want_iovecs = !!o->want_iovecs;
	rd->names_on = o->file_names > 0;
	rd->keep_all_blocks = !!o->keep_all_blocks; /* -m thinned by the daemon (docs/blame.md) */
	rd->wb_mode = (uint8_t)ld->wb_mode;
	rd->jiffy_ns = p->hz ? 1000000000u / p->hz : 0;
	/* the bench's dispatch floor (docs/bench.md, "Tax"): the syscall hooks, nothing run */
	env = getenv("IOTRACER_EMPTY_PROGS");
	rd->empty_progs = env && !strcmp(env, "1");
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
		else if (!strcmp(ld->hooks[i].def->name, "block_bio_complete") &&
			 ld->hooks[i].method != IT_M_NONE)
			rd->stk_hooked = 1;
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
	rd->has_loop = p->loop;
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
	struct bpf_program *prog = ld_prog_by_name(ld, h->def->progs[h->method][0]);
	struct bpf_map *map = bpf_object__find_map_by_name(ld->skel->obj, h->def->prog_array);
	int fd = prog ? bpf_program__fd(prog) : -EBADF;
	uint32_t zero = 0;

	if (fd < 0 || !map ||
	    bpf_map__update_elem(map, &zero, sizeof(zero), &fd, sizeof(fd), BPF_ANY)) {
		snprintf(h->reason, sizeof(h->reason), "tail call not set: %s",
			 strerror(fd < 0 ? -fd :
				  !map	 ? ENOENT :
					   errno));
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
					  ld_hook_fn(h->def, fn, sizeof(fn)));
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
			struct bpf_program *prog = ld_prog_by_name(ld, h->def->progs[h->method][k]);

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

		if (len && strncmp(log, "processed ", 10) &&
		    strncmp(log, "verification time", 17) && strncmp(log, "stack depth", 11) &&
		    strncmp(log, "-- END", 6))
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

/*
 * The object to load: without BPF xchg (before 5.12) the compat build
 * (bpf/core_fixes.bpf.h it_slot_busy_claim), opened in the main skeleton's
 * layout: same sources, so the same maps, programs and globals. Where BTF
 * ids cannot be listed, libbpf would fail every module-type relocation
 * (md's, raid5's): CO-RE is then told to use vmlinux's BTF alone, and the
 * module types read as absent (their guards turn the code off).
 */
static struct iotracer_bpf *open_skel(const struct it_probe *p)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts);
	struct iotracer_bpf *obj;
	int err;

	if (!p->btf_ids)
		opts.btf_custom_path = "/sys/kernel/btf/vmlinux";
	if (p->xchg)
		return iotracer_bpf__open_opts(&opts);
	obj = calloc(1, sizeof(*obj));
	if (!obj) {
		errno = ENOMEM;
		return NULL;
	}
	err = iotracer_bpf__create_skeleton(obj);
	if (!err) {
		obj->skeleton->data =
			(void *)iotracer_compat_bpf__elf_bytes(&obj->skeleton->data_sz);
		err = bpf_object__open_skeleton(obj->skeleton, &opts);
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

				if (h->def->progs[m][0] &&
				    ld_method_usable(p, h->def, m, why, sizeof(why))) {
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

static int load_object(struct it_loader *ld, const struct ld_config *o, struct it_probe *p,
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
		ld_set_autoload(ld, o);
		size_buffers(ld, o, p);
		set_rodata(ld, o, p);
		ret = set_thread_map(ld, p);
		if (ret)
			it_err_to(err, "cannot set up the thread state map: %s", strerror(-ret));
		if (!ret)
			ret = size_record_buffers(ld, o);
		if (!ret)
			ret = ld_mapped_size(ld, o);
		if (ret)
			return ret;
		load_log.prog[0] = load_log.why[0] = 0;
		ret = iotracer_bpf__load(ld->skel);
		if (!ret) {
			ret = ld_mapped_open(ld);
			if (ret)
				it_err_to(err, "cannot map the counters and histograms: %s",
					  strerror(-ret));
			return ret;
		}
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
 * bpf_task_pt_regs (5.15) reads the syscall's number; else, where that helper
 * reads the exit's fd, the traced syscalls' own tracepoints (percall: other
 * syscalls run no program; their runs are skipped only while the CPU's
 * bpf_prog_active is held, which the daemon's own periodic reads no longer
 * do: mapped.c) where tracefs has them; else the raw_syscalls pair (every
 * syscall runs it: 5.10-5.14). raw, percall: that one.
 */
static int choose_path(struct it_probe *p, const struct ld_config *o)
{
	const char *want = o->syscall_hooks ? o->syscall_hooks : "auto";
	int percall = it_tracefs_event_exists(p, "syscalls", "sys_enter_read");

	if (!strcmp(want, "raw"))
		return IT_PATH_RAW;
	if (!strcmp(want, "percall")) {
		if (percall)
			return IT_PATH_PERCALL;
		it_warn("--syscall-hooks percall: no per-syscall tracepoints in tracefs here: "
			"the raw_syscalls pair traces the syscalls");
		return IT_PATH_RAW;
	}
	if (!p->task_regs) {
		it_debug("syscalls: the raw_syscalls pair (no bpf_task_pt_regs)");
		return IT_PATH_RAW;
	}
	if (p->fentry_err && !p->kprobe_ok) {
		it_debug("syscalls: %s (no fentry, no kprobes)",
			 percall ? "the per-syscall tracepoints" : "the raw_syscalls pair");
		return percall ? IT_PATH_PERCALL : IT_PATH_RAW;
	}
	it_debug("syscalls: traced in the file systems (%s)", p->fentry_err ? "kprobe" : "fentry");
	return IT_PATH_FILE;
}

int it_loader_load(struct it_loader *ld, const struct ld_config *o, FILE *err)
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
	ld->wb_mode = ld_choose_wb_mode(o, &p, layers);
	ld->nr_hooks = NR_HOOKS;
	ld->hooks = calloc(NR_HOOKS, sizeof(*ld->hooks));
	if (!ld->hooks) {
		ret = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < NR_HOOKS; i++) {
		ld->hooks[i].def = &ld_hook_defs[i];
		ld->hooks[i].layer = ld_hook_defs[i].layer;
		ld->hooks[i].name = ld_hook_defs[i].label ? ld_hook_defs[i].label :
							    ld_hook_defs[i].name;
	}
	ld_choose_methods(ld, &p, o, layers, prefer);

	ret = load_object(ld, o, &p, err);
	if (ret)
		goto out;
	ret = it_loader_filters(ld, o, err);
	ld->layers_want = layers;
out:
	it_probe_free(&p);
#ifdef __GLIBC__
	/*
	 * The kernel's BTF (parsed twice: the probe's and libbpf's for CO-RE,
	 * ~18 MiB at the peak) and the load's other temporaries are freed now,
	 * but glibc keeps the free pages of its heap: give back those it can
	 * (~0.1 MiB of the always-on daemon's RssAnon: docs/bench.md "Thirteenth
	 * round").
	 */
	malloc_trim(0);
#endif
	return ret;
}

int it_loader_filters(struct it_loader *ld, const struct ld_config *o, FILE *err)
{
	int ret = it_filters_apply(ld->skel, o, err);

	if (!ret)
		ld->kern_hists = ld->skel->bss->kern_hists;
	return ret;
}

int it_loader_attach(struct it_loader *ld, const struct ld_config *o, FILE *err)
{
	int ret;

	attach_hooks(ld);
	/* from now on a syscall whose exit goes unseen is a loss (bpf/config.bpf.h) */
	ld->skel->bss->armed_ns = it_mono_ns();
	ret = ld_check_layers(ld, o, ld->layers_want, err);
	if (ret)
		it_loader_report(ld, err);
	return ret;
}

int it_loader_start(struct it_loader *ld, const struct ld_config *o, FILE *err)
{
	return it_loader_load(ld, o, err) ?: it_loader_attach(ld, o, err);
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
		jobs[t] = (struct detach_job){ .links = links + t,
					       .n = n - t,
					       .step = DETACH_THREADS };
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
	ld_mapped_close(ld);
	iotracer_bpf__destroy(ld->skel);
	free(ld->hooks);
	memset(ld, 0, sizeof(*ld));
}
