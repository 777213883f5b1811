// SPDX-License-Identifier: GPL-2.0
/*
 * hprobe: host mode's uprobes in QEMU and its KVM tracepoints, and when each
 * is on (hprobe.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "iotracer.skel.h"
#include "load/loader.h"
#include "lib/log.h"
#include "mode/hprobe.h"
#include "mode/qemu.h"
#include "mode/vjoin.h"
#include "records/output.h"
#include "service/cli.h"
#include "service/daemon.h"

static const char *const up_syms[HPROBE_NR] = { "blk_aio_preadv", "blk_aio_pwritev",
						"virtio_notify", "virtio_notify_irqfd" };
#define UP_AIO 2 /* the first two: the submits */
/* The KVM tracepoints (bpf/qemu.bpf.h), one program each. */
static const char *const kvm_tps[] = { "kvm_msi_set_irq", "kvm_set_irq" };
#define NR_KVM 2

struct hp_vm {
	struct hprobe_vm pub;
	struct bpf_link *links[HPROBE_NR];
	uint64_t offs[HPROBE_NR]; /* 0: symbol not found */
	int offs_read;
};

struct hprobe {
	struct mode_env env;
	struct vjoin *vj;
	struct hprobe_opts o;
	struct hp_vm vm[VJ_MAX_VMS];
	int nr_vm;
	struct bpf_program *prog[HPROBE_NR], *kvm_prog[NR_KVM];
	struct bpf_link *kvm[NR_KVM];
};

static const char *const why_names[HP_WHY_MAX] = {
	[HP_OFF] = "address",	[HP_CALIBRATING] = "calibrating", [HP_RECHECK] = "recheck",
	[HP_PINNED] = "pinned", [HP_ALWAYS] = "always",		  [HP_GONE] = "gone",
};

const char *hprobe_why_name(int why)
{
	return why >= 0 && why < HP_WHY_MAX ? why_names[why] : "?";
}

/* An attach line (JSON, and stderr unless -q) of one probe. */
static void line(struct hprobe *hp, const char *hook, const char *method, unsigned int st,
		 const char *why)
{
	static const char *const word[OUT_HS_MAX] = { "ok", "off:", "absent:", "failed:" };

	out_attach(hp->env.out, "qemu", hook, method, st, why);
	if (!hp->env.o->quiet)
		fprintf(stderr, "qemu     %-30s %-7s %s%s%s\n", hook, method, word[st],
			why && *why ? " " : "", why ? why : "");
}

/* The KVM tracepoints: where the kvm module is loaded (raw_tp: no module BTF needed). */
static void attach_kvm(struct hprobe *hp)
{
	char why[160];

	for (int i = 0; i < NR_KVM; i++) {
		if (!hp->kvm_prog[i]) {
			line(hp, kvm_tps[i], "raw_tp", OUT_HS_FAILED, "no such program");
			continue;
		}
		hp->kvm[i] = bpf_program__attach_raw_tracepoint(hp->kvm_prog[i], kvm_tps[i]);
		if (hp->kvm[i]) {
			line(hp, kvm_tps[i], "raw_tp", OUT_HS_ATTACHED, NULL);
			continue;
		}
		if (errno == ENOENT)
			snprintf(why, sizeof(why), "no tracepoint kvm/%s (kvm module not loaded)",
				 kvm_tps[i]);
		else
			snprintf(why, sizeof(why), "attach failed: %s", strerror(errno));
		line(hp, kvm_tps[i], "raw_tp", errno == ENOENT ? OUT_HS_ABSENT : OUT_HS_FAILED,
		     why);
	}
}

struct hprobe *hprobe_new(const struct mode_env *env, struct vjoin *vj, const struct hprobe_opts *o)
{
	struct hprobe *hp = calloc(1, sizeof(*hp));
	static const char *const progs[HPROBE_NR] = { "qemu_aio_read", "qemu_aio_write",
						      "qemu_notify", "qemu_notify_irqfd" };
	static const char *const kprogs[NR_KVM] = { "mode_host_kvm_msi", "mode_host_kvm_irq" };
	struct bpf_object *obj;

	if (!hp)
		return NULL;
	hp->env = *env;
	hp->vj = vj;
	hp->o = *o;
	obj = env->ld->skel->obj;
	for (int i = 0; i < HPROBE_NR; i++)
		hp->prog[i] = bpf_object__find_program_by_name(obj, progs[i]);
	for (int i = 0; i < NR_KVM; i++)
		hp->kvm_prog[i] = bpf_object__find_program_by_name(obj, kprogs[i]);
	attach_kvm(hp);
	return hp;
}

/* Uprobes [from, to) of vm on (the .dynsym offsets of /proc/PID/exe, read once). */
static void up_on(struct hprobe *hp, struct hp_vm *v, int from, int to)
{
	char exe[64], why[160], hook[96];
	int n = 0;

	snprintf(exe, sizeof(exe), "/proc/%d/exe", v->pub.pid);
	if (!v->offs_read) {
		n = qemu_sym_offsets(exe, up_syms, HPROBE_NR, v->offs, why, sizeof(why));
		v->offs_read = n >= 0;
	}
	for (int i = from; i < to; i++) {
		if (v->links[i])
			continue;
		snprintf(hook, sizeof(hook), "%s (pid %d)", up_syms[i], v->pub.pid);
		if (n < 0 || !v->offs[i]) {
			line(hp, hook, "uprobe", OUT_HS_FAILED,
			     n < 0 ? why : "symbol not in .dynsym");
			continue;
		}
		v->links[i] = hp->prog[i] ?
				      bpf_program__attach_uprobe(hp->prog[i], false, v->pub.pid,
								 exe, v->offs[i]) :
				      NULL;
		if (!v->links[i])
			snprintf(why, sizeof(why), "attach failed: %s",
				 hp->prog[i] ? strerror(errno) : "no such program");
		line(hp, hook, "uprobe", v->links[i] ? OUT_HS_ATTACHED : OUT_HS_FAILED,
		     v->links[i] ? hprobe_why_name(v->pub.why) : why);
		v->pub.attaches += i == 0 && v->links[i];
	}
}

/* Uprobes [from, to) of vm off; why: the line's reason. The number detached. */
static int up_off(struct hprobe *hp, struct hp_vm *v, int from, int to, const char *why)
{
	char hook[96];
	int n = 0;

	for (int i = from; i < to; i++) {
		if (!v->links[i])
			continue;
		bpf_link__destroy(v->links[i]);
		v->links[i] = NULL;
		n++;
		v->pub.detaches += i == 0;
		snprintf(hook, sizeof(hook), "%s (pid %d)", up_syms[i], v->pub.pid);
		line(hp, hook, "uprobe", OUT_HS_OFF, why);
	}
	return n;
}

void hprobe_add_vm(struct hprobe *hp, int vm, pid_t pid)
{
	struct hp_vm *v;

	if (vm < 0 || vm >= VJ_MAX_VMS)
		return;
	v = &hp->vm[vm];
	v->pub.pid = pid;
	v->pub.why = hp->o.always ? HP_ALWAYS : HP_CALIBRATING;
	if (vm >= hp->nr_vm)
		hp->nr_vm = vm + 1;
	vjoin_vm_mode(hp->vj, vm, VJ_VM_UPROBES);
	up_on(hp, v, 0, HPROBE_NR);
}

void hprobe_pin(struct hprobe *hp, int vm, int delta)
{
	if (vm >= 0 && vm < hp->nr_vm) {
		hp->vm[vm].pub.pins += delta;
		hp->vm[vm].pub.pinned += delta > 0;
	}
}

/* vm's uprobes back: a re-check, or a guest without addresses. */
static void to_uprobes(struct hprobe *hp, int vm, int why)
{
	struct hp_vm *v = &hp->vm[vm];
	const struct vj_vm_stats *s = vjoin_vm(hp->vj, vm);

	v->pub.why = why;
	v->pub.recheck = s->recheck;
	it_note("qemu pid %d: uprobes back (%s%s%s)", v->pub.pid, hprobe_why_name(why),
		why == HP_RECHECK ? ": " : "",
		why == HP_RECHECK ? vj_recheck_name(s->recheck) : "");
	vjoin_vm_mode(hp->vj, vm, VJ_VM_UPROBES);
	up_on(hp, v, 0, HPROBE_NR);
}

/* vm ready: its submits' uprobes off (and the notify ones, without --qemu-stages). */
static void to_address(struct hprobe *hp, int vm)
{
	struct hp_vm *v = &hp->vm[vm];
	const struct vj_vm_stats *s = vjoin_vm(hp->vj, vm);

	vjoin_vm_mode(hp->vj, vm, VJ_VM_ADDRESS);
	v->pub.why = HP_OFF;
	v->pub.recheck = 0;
	up_off(hp, v, 0, UP_AIO, "address path");
	if (!hp->o.stages)
		up_off(hp, v, UP_AIO, HPROBE_NR, "address path (without --qemu-stages)");
	/* said once they are off (a detach waits for the kernel: tests go by this line) */
	it_note("qemu pid %d: address path (%llu samples, %d segments, %llu agreed; host - guest in "
		"[%lld, %lld] ns)",
		v->pub.pid, (unsigned long long)s->samples, s->segments,
		(unsigned long long)s->agree, (long long)s->clk_lo, (long long)s->clk_hi);
}

void hprobe_tick(struct hprobe *hp)
{
	for (int vm = 0; vm < hp->nr_vm; vm++) {
		struct hp_vm *v = &hp->vm[vm];
		const struct vj_vm_stats *s = vjoin_vm(hp->vj, vm);

		if (v->pub.why == HP_GONE || v->pub.why == HP_ALWAYS || !v->pub.pid)
			continue;
		if (s->mode == VJ_VM_ADDRESS && (v->pub.pins > 0 || s->recheck))
			to_uprobes(hp, vm, v->pub.pins > 0 ? HP_PINNED : HP_RECHECK);
		else if (s->mode == VJ_VM_UPROBES && v->pub.pins > 0)
			v->pub.why = HP_PINNED;
		else if (s->mode == VJ_VM_UPROBES && v->pub.why == HP_PINNED)
			v->pub.why = HP_CALIBRATING;
		else if (s->mode == VJ_VM_UPROBES && s->ready)
			to_address(hp, vm);
	}
}

int hprobe_gone(struct hprobe *hp, int vm)
{
	if (vm < 0 || vm >= hp->nr_vm)
		return 0;
	hp->vm[vm].pub.why = HP_GONE;
	return up_off(hp, &hp->vm[vm], 0, HPROBE_NR, "its QEMU exited");
}

const struct hprobe_vm *hprobe_vm(const struct hprobe *hp, int vm)
{
	return vm >= 0 && vm < hp->nr_vm ? &hp->vm[vm].pub : NULL;
}

static uint64_t runs_of(struct bpf_program *p)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (!p || bpf_program__fd(p) < 0 || bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len))
		return 0;
	return info.run_cnt;
}

/*
 * The statistics are on (the sysctl, or a BPF_ENABLE_STATS fd, which the
 * sysctl does not show) when any loaded program counted a run: QEMU's
 * syscalls run the syscall layer's all the time.
 */
void hprobe_runs(const struct hprobe *hp, uint64_t *uprobe, uint64_t *kvm, int *known)
{
	uint64_t runs = 0;

	it_loader_run_totals(hp->env.ld, &runs, NULL);
	*known = runs > 0;
	*uprobe = *kvm = 0;
	for (int i = 0; i < HPROBE_NR; i++)
		*uprobe += runs_of(hp->prog[i]);
	for (int i = 0; i < NR_KVM; i++)
		*kvm += runs_of(hp->kvm_prog[i]);
}

void hprobe_free(struct hprobe *hp)
{
	if (!hp)
		return;
	for (int vm = 0; vm < VJ_MAX_VMS; vm++)
		for (int i = 0; i < HPROBE_NR; i++)
			bpf_link__destroy(hp->vm[vm].links[i]);
	for (int i = 0; i < NR_KVM; i++)
		bpf_link__destroy(hp->kvm[i]);
	free(hp);
}
