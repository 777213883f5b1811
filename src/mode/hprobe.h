/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hprobe: host mode's probes outside the kernel's IO path, and when each is
 * on. Per traced QEMU the uprobes (bpf/qemu.bpf.h): blk_aio_preadv/pwritev
 * (QEMU's submit of a guest request) and virtio_notify(_irqfd) (its interrupt
 * back), at .dynsym offsets. They are on while its VM calibrates (vjoin.h:
 * the uprobe path, which teaches the address path the VM's map and clock),
 * and off once the VM is on the address path; they come back to re-check
 * (vjoin's recheck), for a guest that sends no buffer addresses (pinned:
 * an older guest iotracer), and always with --qemu-uprobes always. With
 * --qemu-stages the notify uprobes stay (the notify stages under TCG). KVM's
 * interrupt tracepoints (kvm_msi_set_irq, kvm_set_irq) give the notify
 * stamp where KVM runs, for every VM, at a tracepoint's cost.
 * Talks to libbpf: left out of the unit builds.
 */
#ifndef IT_HPROBE_H
#define IT_HPROBE_H

#include <stdint.h>
#include <sys/types.h>

struct mode_env;
struct vjoin;
struct hprobe;

#define HPROBE_NR 4 /* blk_aio_preadv, blk_aio_pwritev, virtio_notify, virtio_notify_irqfd */

struct hprobe_opts {
	int always; /* --qemu-uprobes always: every VM on the uprobe path */
	int stages; /* --qemu-stages: the notify uprobes stay on */
};

/* Why a VM's uprobes are on (hprobe_vm.why). */
enum hprobe_why {
	HP_OFF = 0, /* on the address path: none */
	HP_CALIBRATING, /* learning its map and clock */
	HP_RECHECK, /* back to re-check (vjoin's reason in recheck) */
	HP_PINNED, /* a guest of it sends no buffer addresses */
	HP_ALWAYS, /* --qemu-uprobes always */
	HP_GONE, /* its QEMU exited */
	HP_WHY_MAX,
};

/* One traced QEMU's probe state, for the summary (hostout.h). */
struct hprobe_vm {
	pid_t pid;
	int why; /* enum hprobe_why */
	int recheck; /* enum vj_recheck of the re-check under way */
	int pins; /* connected guests of it without buffer addresses */
	uint64_t attaches, detaches; /* of its blk_aio uprobes (one each per attach) */
	uint64_t pinned; /* guests that pinned it */
};

struct hprobe *hprobe_new(const struct mode_env *env, struct vjoin *vj,
			  const struct hprobe_opts *o);
void hprobe_free(struct hprobe *hp);
/* QEMU number vm at pid: its uprobes on (calibrating, or always). */
void hprobe_add_vm(struct hprobe *hp, int vm, pid_t pid);
/* A guest of vm without buffer addresses came (+1) or went (-1). */
void hprobe_pin(struct hprobe *hp, int vm, int delta);
/* Ready VMs to the address path, re-checks back to the uprobes (each tick). */
void hprobe_tick(struct hprobe *hp);
/* QEMU vm exited: its uprobes detached. The number detached. */
int hprobe_gone(struct hprobe *hp, int vm);
const struct hprobe_vm *hprobe_vm(const struct hprobe *hp, int vm);
/*
 * The uprobe programs' runs (bpf_stats: every hit, dropped records too) and
 * the KVM ones'; *known 0 when the kernel's BPF statistics are off.
 */
void hprobe_runs(const struct hprobe *hp, uint64_t *uprobe, uint64_t *kvm, int *known);
const char *hprobe_why_name(int why);

#endif /* IT_HPROBE_H */
