// SPDX-License-Identifier: GPL-2.0
/*
 * What attached: the attach report, the per-layer checks after attach, the
 * programs' run statistics and recursion misses.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "iotracer.h"
#include "iotracer.skel.h"
#include "load/loader.h"
#include "load/loader_int.h"
#include "lib/abi.h"
#include "lib/log.h"

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
static int check_layer(const struct it_loader *ld, const struct ld_config *o, int l, FILE *err)
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

int ld_check_layers(const struct it_loader *ld, const struct ld_config *o, uint32_t layers,
		    FILE *err)
{
	int ret = 0;

	for (int l = 0; l < IT_L_MAX; l++)
		if ((layers & (1u << l)) && check_layer(ld, o, l, err))
			ret = -ENOENT;
	return ret;
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
			struct bpf_program *prog = ld_prog_by_name((struct it_loader *)ld,
								   h->def->progs[h->method][k]);
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

	bpf_object__for_each_program(prog, ld->skel->obj)
	{
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
	bpf_object__for_each_program(prog, ld->skel->obj)
	{
		struct bpf_prog_info info;

		if (prog_info(prog, &info))
			continue;
		fprintf(f, "%-34s %12llu %12llu %10.0f %10llu\n", bpf_program__name(prog),
			(unsigned long long)info.run_cnt, (unsigned long long)info.run_time_ns,
			info.run_cnt ? (double)info.run_time_ns / info.run_cnt : 0.0,
			(unsigned long long)info.recursion_misses);
	}
}
