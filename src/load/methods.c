// SPDX-License-Identifier: GPL-2.0
/*
 * A method per hook: the cheapest that works on this kernel (tp_btf -> raw_tp
 * -> tp -> fentry -> kprobe), or none with the reason; then autoload exactly
 * the programs of the chosen methods.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "iotracer.h"
#include "iotracer.skel.h"
#include "load/kfeat.h"
#include "load/loader.h"
#include "load/loader_int.h"
#include "lib/log.h"

/* Can `method` implement hook `d` here? If not, say why in `why`. */
int ld_method_usable(struct it_probe *p, const struct it_hook_def *d, enum it_method m, char *why,
		     size_t n)
{
	char name[64];
	const char *fn = ld_hook_fn(d, name, sizeof(name));

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
				snprintf(why, n, "no tracepoint %s/%s",
					 d->tp_group ? d->tp_group : "?", d->name);
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
				snprintf(why, n, "fentry: no BTF for %s (a module without BTF)",
					 fn);
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
			snprintf(h->reason, sizeof(h->reason),
				 "no task storage for tracing programs "
				 "(5.12): an LRU hash of %d threads",
				 IT_TSTATE_HASH_ENTRIES);
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
	snprintf(h->reason, sizeof(h->reason),
		 "no BTF for struct %s (module BTF: 5.11): "
		 "opcode and status not read, stamps are",
		 ty);
}

int ld_choose_wb_mode(const struct ld_config *o, const struct it_probe *p, uint32_t layers)
{
	const char *w = o->writeback ? o->writeback : "pages";

	if (!(layers & (1u << IT_L_BLOCK)) || !strcmp(w, "off"))
		return IT_WBMODE_OFF;
	if (!strcmp(w, "files"))
		return IT_WBMODE_FILES;
	if (!p->loop) {
		it_debug("--writeback pages: no bpf_loop (5.17) for the page walk: per file");
		return IT_WBMODE_FILES;
	}
	return IT_WBMODE_PAGES;
}

/* The writeback attribution's hooks --writeback leaves off (docs/hooks.md "Writeback"). */
static const char *wb_gated(const struct it_hook_def *d, int mode)
{
	if (!d->wb)
		return NULL;
	if (mode == IT_WBMODE_OFF)
		return "--writeback off";
	if (d->wb == IT_WB_HOOK_PAGES && mode != IT_WBMODE_PAGES)
		return "--writeback files: each write is split over its file's dirtiers "
		       "(--writeback pages turns it on)";
	return NULL;
}

/*
 * The stack layer's remap hook: what this kernel's stacks do not say
 * (docs/hooks.md, "The stack layer"), for the stack drivers loaded at start.
 * Device mapper before 5.18 has no dm_submit_bio_remap: targets that submit
 * their own clones (dm-crypt) send them without a remap event. Without
 * raid456's BTF a raid5 stripe's own IO (parity, the reads for it) cannot be
 * traced to its upper bio. Module BTF (5.11) answers the first; only without
 * it /proc/kallsyms (slow under emulation: read only then).
 */
static void note_stack(struct it_hook_state *h, struct it_probe *p)
{
	const char *dm = "", *r5 = "";
	int remap;

	if (h->method == IT_M_NONE || strcmp(h->def->name, "block_bio_remap"))
		return;
	if (!access("/sys/module/dm_mod", F_OK)) {
		remap = !access("/sys/kernel/btf/dm_mod", F_OK) ?
				it_func_exists(p, "dm_submit_bio_remap") :
				it_ksym_exists(p, "dm_submit_bio_remap");
		if (!remap)
			dm = "dm-crypt's clones (no dm_submit_bio_remap: 5.18) are their threads'; ";
	}
	if (!access("/sys/module/raid456", F_OK) && !it_btf_type_exists(p, "stripe_head"))
		r5 = "raid5 parity IO lost (no raid456 BTF: 5.11); ";
	else if (!access("/sys/module/raid456", F_OK) && !p->btf_ids)
		r5 = "raid5 parity IO lost (module BTF needs CAP_SYS_ADMIN); ";
	snprintf(h->reason, sizeof(h->reason), "%s%s", dm, r5);
	if (h->reason[0])
		h->reason[strlen(h->reason) - 2] = 0;
}

/* A hook the options leave off (its reason in why), or false. */
static bool hook_gated(const struct it_hook_def *d, const struct ld_config *o, int wb_mode,
		       char *why, size_t n)
{
	const char *r = NULL;

	if (d->sched_switch && !o->sched_switch)
		r = "--sched-switch turns it on";
	else if (d->block_insert && !o->block_insert)
		r = "--block-insert turns it on";
	else if (d->every_record && o->min_lat_ns)
		r = "records of slow requests only (-m, --profile always-on): not needed";
	else
		r = wb_gated(d, wb_mode);
	if (r)
		snprintf(why, n, "%s", r);
	return r;
}

void ld_choose_methods(struct it_loader *ld, struct it_probe *p, const struct ld_config *o,
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
			snprintf(
				h->reason, sizeof(h->reason), "%s",
				ld->path == IT_PATH_FILE ?
					"file IO is traced in the file systems (no program on every "
					"syscall): --syscall-hooks raw turns it on" :
				ld->path == IT_PATH_PERCALL ? "--syscall-hooks percall" :
							      "the raw_syscalls pair");
			continue;
		}
		if (hook_gated(d, o, ld->wb_mode, h->reason, sizeof(h->reason))) {
			h->off = 1;
			continue;
		}
		if (choose_special(h, p))
			continue;
		if (d->task_counters) {
			if (ld_method_usable(p, d, IT_M_TASK, why, sizeof(why)))
				h->method = IT_M_TASK;
			else
				snprintf(h->reason, sizeof(h->reason), "%s", why);
			continue;
		}
		/* A preferred method (tests force raw_tp) goes first when the hook has it. */
		if (prefer && d->progs[prefer][0] &&
		    ld_method_usable(p, d, prefer, why, sizeof(why))) {
			h->method = prefer;
			continue;
		}
		for (int m = IT_M_TP_BTF; m < IT_M_MAX; m++) {
			if (!d->progs[m][0])
				continue;
			if (ld_method_usable(p, d, m, why, sizeof(why))) {
				h->method = m;
				break;
			}
		}
		if (h->method == IT_M_NONE) {
			snprintf(h->reason, sizeof(h->reason), "%s", why[0] ? why : "no method");
			h->kernel_has = kernel_has_tp(p, d);
		}
		note_unread_types(h, p);
		note_stack(h, p);
	}
}

struct bpf_program *ld_prog_by_name(struct it_loader *ld, const char *name)
{
	return name ? bpf_object__find_program_by_name(ld->skel->obj, name) : NULL;
}

/* Autoload exactly the programs of the chosen methods. */
void ld_set_autoload(struct it_loader *ld, const struct ld_config *o)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, ld->skel->obj) bpf_program__set_autoload(prog, false);
	for (int i = 0; i < ld->nr_hooks; i++) {
		const struct it_hook_state *h = &ld->hooks[i];

		if (h->method == IT_M_NONE)
			continue;
		for (int k = 0; k < IT_HOOK_PROGS; k++) {
			char fn[64];

			prog = ld_prog_by_name(ld, h->def->progs[h->method][k]);
			if (!prog)
				continue;
			bpf_program__set_autoload(prog, true);
			/* a slot program: its function is the table's (kprobes: at attach) */
			if (h->def->target && h->method == IT_M_FENTRY &&
			    bpf_program__set_attach_target(prog, 0,
							   ld_hook_fn(h->def, fn, sizeof(fn))))
				it_debug("%s: cannot set the attach target of %s", h->name,
					 bpf_program__name(prog));
		}
	}
	/* the caller's own programs (host: the QEMU uprobes; guest: gpa.bpf.h), attached by it */
	bpf_object__for_each_program(prog, ld->skel->obj)
	{
		if (o->mode_progs && ld_mode_prog_of(prog) == o->mode_progs)
			bpf_program__set_autoload(prog, true);
	}
}
