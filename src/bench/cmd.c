// SPDX-License-Identifier: GPL-2.0
/*
 * cmd: `iotracer bench`, the driver. Options -> the plan (which tracers run on
 * which workloads) -> the environment (root, fio, bpftrace and its scripts)
 * -> the run loop (per workload: a warm-up, rounds of none + each tracer, a
 * BPF statistics run per tracer) -> the reports. The parts it drives are in
 * the other files of src/bench (internal.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/internal.h"
#include "lib/log.h"
#include "lib/opts.h"
#include "lib/parse.h"

static const char *const default_tracers =
	"none,iotracer,iotracer-nojson,iotracer-scrape,iotracer-alwayson,bpftrace-hist,"
	"bpftrace-print,libbpf-biolatency";
/* the tax preset: the floor (empty programs) and block-only always-on beside the peers */
static const char *const tax_tracers =
	"none,iotracer,iotracer-alwayson,iotracer-empty,iotracer-alwayson:block,floor-raw,"
	"floor-percall,bpftrace-hist,libbpf-biolatency";
static const char *const layer_tracers =
	"none,iotracer:syscall,iotracer:fs,iotracer:sched,iotracer:block,iotracer";

/* A bad option value: one line naming it, exit status 2. */
/* Options that say what was set, for --quick's defaults. */
struct opts_set {
	int runtime, size, pairs, presets;
};

struct bench_parse {
	struct bench *b;
	struct opts_set set;
};

/* One option with its value: 0 or exit status 2. */
static int parse_opt(void *ctx, int c, const char *arg)
{
	struct bench_parse *p = ctx;
	struct bench *b = p->b;
	char list[128];
	uint64_t v;

	switch (c) {
	case B_QUICK:
		b->o.quick = 1;
		break;
	case B_TARGET:
		b->o.target = arg;
		break;
	case B_PAIRS:
		if (parse_u64(arg, 1, 100, &v))
			return opts_bad_value(NULL, "bench", "pairs", arg, "1..100");
		b->o.pairs = v;
		p->set.pairs = 1;
		break;
	case B_PRESET:
		if (bench_parse_presets(arg, &b->o.presets))
			return opts_bad_value(NULL, "bench", "preset", arg, "a comma list of %s",
					      opts_kw_list(list, sizeof(list), bench_preset_kw));
		p->set.presets = 1;
		break;
	case B_RUNTIME:
		if (parse_duration(arg, &v) || v < 1000000000ull || v > 3600ull * 1000000000)
			return opts_bad_value(NULL, "bench", "runtime", arg,
					      "a duration of 1s..1h");
		b->o.runtime_ns = v;
		p->set.runtime = 1;
		break;
	case B_JSON:
		b->o.json = arg;
		break;
	case B_SVG:
		b->o.svg = arg;
		break;
	case B_TRACERS:
		b->o.tracers = arg;
		break;
	case B_SIZE:
		if (parse_size(arg, &v) || v < (64ull << 20) || v > (64ull << 30))
			return opts_bad_value(NULL, "bench", "size", arg, "a size of 64M..64G");
		b->o.size = v;
		p->set.size = 1;
		break;
	case B_WORKLOADS:
		b->o.workloads = arg;
		break;
	case B_NO_BPF_STATS:
		b->o.bpf_stats = 0;
		break;
	case B_TOOLS_DIR:
		b->o.tools_dir = arg;
		break;
	case B_KEEP:
		b->o.keep = 1;
		break;
	case B_FORCE:
		b->o.force = 1;
		break;
	case 'v':
		b->verbose = 1;
		break;
	default:
		return 2;
	}
	return 0;
}

/*
 * --workloads: each name known; without --preset, their presets are the
 * chosen ones; with it, each must be in one of them. 0 or exit status 2.
 */
static int check_workloads(struct bench *b, int presets_set)
{
	char buf[256], *save = NULL;
	unsigned int want = 0;

	if (!b->o.workloads)
		return 0;
	if (strlen(b->o.workloads) >= sizeof(buf)) {
		it_err("bench: --workloads: list too long: '%s'", b->o.workloads);
		return 2;
	}
	snprintf(buf, sizeof(buf), "%s", b->o.workloads);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int wl = bench_find_wl(t);
		char list[512];

		if (wl < 0)
			return opts_bad_value(NULL, "bench", "workloads", t, "%s",
					      opts_kw_list(list, sizeof(list), bench_wl_kw));
		if (presets_set && !(b->o.presets & bench_wls[wl].preset)) {
			it_err("bench: --workloads: '%s' is in the %s preset, which --preset leaves out",
			       t, bench_preset_name(bench_wls[wl].preset));
			return 2;
		}
		want |= bench_wls[wl].preset;
	}
	if (!presets_set)
		b->o.presets = want;
	return 0;
}

/* The command line into b->o. 0, -1 (--help: done) or exit status 2. */
static int parse_options(struct bench *b, int argc, char **argv)
{
	struct bench_parse p = { .b = b };
	int ret;

	ret = opts_parse(bench_opts(), argc, argv, parse_opt, &p, NULL, NULL);
	if (ret)
		return ret == 1 ? -1 : ret;
	ret = check_workloads(b, p.set.presets);
	if (ret)
		return ret;
	if (b->o.quick) {
		if (!p.set.pairs)
			b->o.pairs = 1;
		if (!p.set.runtime)
			b->o.runtime_ns = 2ull * 1000000000;
		if (!p.set.size)
			b->o.size = 256ull << 20;
	}
	return 0;
}

/* Is workload wl asked for: --workloads, else --quick's first of its preset, else all. */
static int workload_wanted(const struct bench *b, int wl)
{
	const struct workload *w = &bench_wls[wl];
	char buf[256], *save = NULL;
	int hit = 0;

	if (!(b->o.presets & w->preset))
		return 0;
	if (b->o.workloads) {
		snprintf(buf, sizeof(buf), "%s", b->o.workloads);
		for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
			hit |= !strcmp(t, w->name);
		return hit;
	}
	if (b->o.quick)
		for (int k = 0; k < wl; k++)
			if (bench_wls[k].preset == w->preset)
				return 0;
	return 1;
}

/* Add a tracer list to workload wl's runs. */
static int add_tracers(struct bench *b, int wl, const char *list)
{
	char buf[512], *save = NULL;

	if (strlen(list) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int i = tracer_get(b, t);

		if (i < 0)
			return i;
		b->wl_tr[wl][i] = 1;
	}
	return 0;
}

/* What runs where: the workloads, and the tracers of each. 0 or an exit status. */
static int build_plan(struct bench *b)
{
	int any = 0;

	b->none = tracer_get(b, "none");
	for (int wl = 0; wl < NR_WLS; wl++) {
		const struct workload *w = &bench_wls[wl];

		if (!workload_wanted(b, wl))
			continue;
		b->wl_sel[wl] = 1;
		b->wl_tr[wl][b->none] = 1;
		any = 1;
		if (add_tracers(b, wl,
				w->preset == P_LAYERS ? layer_tracers :
				b->o.tracers	      ? b->o.tracers :
				w->tax		      ? tax_tracers :
							default_tracers))
			return opts_bad_value(
				NULL, "bench", "tracers", b->o.tracers,
				"a list of none, iotracer[@PATH][:LAYERS], iotracer-nojson[@PATH][:LAYERS], bpftrace-hist, bpftrace-print, libbpf-biolatency (PATH an executable)");
	}
	if (!any) {
		it_err("bench: --workloads: no workload of the chosen presets matches '%s'",
		       b->o.workloads ? b->o.workloads : "");
		return 2;
	}
	return 0;
}

/* Root, fio, BPF statistics off, our own path, bpftrace and its scripts, the CPUs. 0 or 1. */
static int check_env(struct bench *b)
{
	struct procfs_cpu s;
	char fio[PATH_MAX], why[256];
	ssize_t l;

	if (geteuid() != 0) {
		it_err("need root (loop devices, BPF): run with sudo");
		return 1;
	}
	for (int wl = 0; wl < NR_WLS; wl++)
		if (b->wl_sel[wl] && !bench_wls[wl].tax &&
		    tracer_find_in_path("fio", fio, sizeof(fio))) {
			it_err("fio not found in PATH (apt-get install fio)");
			return 1;
		}
	l = readlink("/proc/self/exe", b->exe, sizeof(b->exe) - 1);
	if (l <= 0) {
		it_err("cannot read /proc/self/exe: %s", strerror(errno));
		return 1;
	}
	b->exe[l] = '\0';
	if (bpfstats_check_off(why, sizeof(why))) {
		it_err("%s", why);
		return 1;
	}
	tracer_find_tools(b);
	tracer_check_tools(b);
	b->user_hz = sysconf(_SC_CLK_TCK);
	if (procfs_cpu_read(&s)) {
		it_err("cannot read /proc/stat");
		return 1;
	}
	b->ncpu = s.ncpu;
	if (b->o.target)
		b->shared_target = 1;
	return 0;
}

static struct run *new_run(struct bench *b)
{
	if (b->nruns == b->cap) {
		int cap = b->cap ? b->cap * 2 : 64;
		struct run *n = realloc(b->runs, cap * sizeof(*n));

		if (!n)
			return NULL;
		b->runs = n;
		b->cap = cap;
	}
	return &b->runs[b->nruns++];
}

/* A recorded run; a run cut short by Ctrl-C is dropped. 0, or -EINTR/-ENOMEM: stop. */
static int record_run(struct bench *b, int wl, int tr, int round, int stats)
{
	struct run *r = new_run(b);

	if (!r)
		return -ENOMEM;
	bench_run_one(b, wl, tr, round, stats, r);
	if (bench_stopped() && !r->ok) {
		b->nruns--;
		return -EINTR;
	}
	bench_report_run(b, r);
	return 0;
}

/* Did the workload's target fail for good (nothing more can run on it)? */
static int target_lost(struct bench *b, int wl)
{
	const struct target *t = bench_target(b, bench_wls[wl].ram);

	return t->failed && !t->ready;
}

/* Warm-up, not recorded: caches, the backing file, the loop worker. */
static void warm_up(struct bench *b, int wl)
{
	uint64_t rt = b->o.runtime_ns;
	struct run warm;

	b->o.runtime_ns = b->o.quick ? 1000000000ull : rt < 3000000000ull ? rt : 3000000000ull;
	bench_run_one(b, wl, b->none, -1, 0, &warm);
	b->o.runtime_ns = rt;
	if (!warm.ok && !bench_stopped())
		it_warn("warm-up run failed: %s", warm.err);
}

/* All runs of a workload. 0, or 1 when its target could not be set up. */
static int run_workload(struct bench *b, int wl)
{
	bench_progress("workload %s: %s", bench_wls[wl].name, bench_wls[wl].desc);
	warm_up(b, wl);
	if (bench_target(b, bench_wls[wl].ram)->failed)
		return 1;
	for (int round = 0; round < b->o.pairs && !bench_stopped(); round++) {
		for (int tr = 0; tr < b->ntr && !bench_stopped(); tr++) {
			if (!b->wl_tr[wl][tr] || !b->tr[tr].avail)
				continue;
			if (record_run(b, wl, tr, round, 0))
				break;
			if (target_lost(b, wl))
				return 1;
		}
	}
	for (int tr = 0; tr < b->ntr && b->o.bpf_stats && !bench_stopped(); tr++) {
		if (!b->wl_tr[wl][tr] || !b->tr[tr].avail || tr == b->none)
			continue;
		if (record_run(b, wl, tr, 0, 1))
			break;
	}
	if (!bench_stopped())
		bench_print_workload(b, wl, stdout);
	return 0;
}

/* The runs planned, announced. */
static void announce_plan(struct bench *b)
{
	for (int wl = 0; wl < NR_WLS; wl++) {
		if (!b->wl_sel[wl])
			continue;
		for (int tr = 0; tr < b->ntr; tr++)
			if (b->wl_tr[wl][tr] && b->tr[tr].avail)
				b->total_planned += b->o.pairs + (tr != b->none && b->o.bpf_stats);
	}
	bench_progress(
		"iotracer bench: %d runs of %.1f s (%d pair(s)%s), %d CPUs; Ctrl-C stops and cleans up",
		b->total_planned, b->o.runtime_ns / 1e9, b->o.pairs,
		b->o.bpf_stats ? " + one bpf_stats run per tracer" : "", b->ncpu);
}

/* A report file: written, or an error. 0 or exit status 1. */
static int write_report(const struct bench *b, const char *path,
			int (*write)(const struct bench *, const char *, int), int complete)
{
	int e = write(b, path, complete);

	if (e) {
		it_err("cannot write %s: %s", path, strerror(-e));
		return 1;
	}
	bench_progress("wrote %s", path);
	return 0;
}

static int write_svg_report(const struct bench *b, const char *path, int complete)
{
	return bench_write_svg(b, path);
}

/* The tables, the JSON and SVG files, the exit status. */
static int report_all(struct bench *b, int ret)
{
	int failed = 0;

	for (int p = P_REFERENCE; p <= P_TAX; p <<= 1)
		if (b->o.presets & p)
			bench_print_preset_summary(b, p, stdout);
	bench_print_cost_table(b, stdout);
	bench_print_checks(b, stdout);
	fflush(stdout);
	if (b->o.json && write_report(b, b->o.json, bench_write_json, !b->interrupted && !ret))
		ret = 1;
	if (b->o.svg && write_report(b, b->o.svg, write_svg_report, 0))
		ret = 1;
	for (int i = 0; i < b->nruns; i++)
		failed += !b->runs[i].ok;
	if (failed) {
		it_warn("%d run(s) failed (see the tables and the JSON)", failed);
		if (!ret)
			ret = 1;
	}
	return b->interrupted ? 130 : ret;
}

static void bench_free(struct bench *b)
{
	for (int i = 0; i < b->nruns; i++)
		free(b->runs[i].progs);
	free(b->runs);
	free(b);
}

int bench_main(int argc, char **argv)
{
	struct bench *b = calloc(1, sizeof(*b));
	int ret;

	if (!b) {
		it_err("out of memory");
		return 1;
	}
	b->o.pairs = 3;
	b->o.runtime_ns = 10ull * 1000000000;
	b->o.size = 1ull << 30;
	b->o.presets = P_REFERENCE | P_TAX;
	b->o.bpf_stats = 1;
	b->tg[0].lfd = b->tg[1].lfd = -1;
	ret = parse_options(b, argc, argv);
	if (!ret)
		ret = build_plan(b);
	if (!ret)
		ret = check_env(b);
	if (ret) {
		bench_free(b);
		return ret < 0 ? 0 : ret;
	}
	bench_signals();
	announce_plan(b);
	for (int wl = 0; wl < NR_WLS && !bench_stopped() && !ret; wl++)
		if (b->wl_sel[wl])
			ret = run_workload(b, wl);
	if (bench_stopped()) {
		b->interrupted = 1;
		bench_progress("interrupted: cleaning up, reporting what was measured");
	}
	bench_kill_all_kids();
	bench_targets_cleanup(b);
	ret = report_all(b, ret);
	bench_free(b);
	return ret;
}
