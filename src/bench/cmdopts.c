// SPDX-License-Identifier: GPL-2.0
/*
 * cmdopts: the options of `iotracer bench` (lib/opts.h rows), pure: cmd.c
 * parses with them, the unit tests read them.
 */
#include <stddef.h>

#include "bench/bench.h"
#include "bench/internal.h"
#include "lib/opts.h"

static const struct opt_row bench_own[] = {
	{ .name = "preset",
	  .key = B_PRESET,
	  .arg = "LIST",
	  .kw = bench_preset_kw,
	  .help = "a comma list of {}\n"
		  "(default reference,tax); tax: getppid, pipe and socket\n"
		  "calls, no fio" },
	{ .name = "quick",
	  .key = B_QUICK,
	  .help = "1 pair of 2 s runs, the first workload of each preset\n(for tests)" },
	{ .name = "pairs",
	  .key = B_PAIRS,
	  .arg = "N",
	  .help = "rounds of (none, tracer...) per workload (default 3)" },
	{ .name = "runtime",
	  .key = B_RUNTIME,
	  .arg = "DUR",
	  .help = "fio run time of each run (default 10s; --quick 2s)" },
	{ .name = "tracers",
	  .key = B_TRACERS,
	  .arg = "LIST",
	  .help = "none,iotracer,iotracer-nojson,iotracer-scrape (with\n"
		  "--metrics, scraped once a second),iotracer-alwayson\n"
		  "(--profile always-on, scraped),iotracer-empty (always-on\n"
		  "with its syscall hooks' programs empty: the dispatch\n"
		  "floor),bpftrace-hist,bpftrace-print,libbpf-biolatency\n"
		  "(libbpf-tools' biolatency -D -d DEV) (default: all but\n"
		  "iotracer-empty; tax: none,iotracer,iotracer-alwayson,\n"
		  "iotracer-empty,iotracer-alwayson:block, floor-raw and\n"
		  "floor-percall (empty programs on the raw_syscalls pair or\n"
		  "the per-syscall tracepoints: build/tax_floor) and the\n"
		  "block peers);\n"
		  "iotracer:LAYERS (e.g. iotracer:syscall+block) for -l;\n"
		  "iotracer@PATH[:LAYERS]: another iotracer build, side by side" },
	{ .name = "workloads",
	  .key = B_WORKLOADS,
	  .arg = "LIST",
	  .kw = bench_wl_kw,
	  .help = "only these workloads (without --preset, their presets\n"
		  "are chosen; with it, each must be in one), a comma list\n"
		  "of {}" },
	{ .name = "target",
	  .key = B_TARGET,
	  .arg = "DEV|FILE",
	  .help = "run on this block device or file instead of a loop device\n"
		  "over a file of our own (a device is written to; mounted\n"
		  "devices, the root disk and devices with a file system are\n"
		  "refused, see --force)" },
	{ .name = "size",
	  .key = B_SIZE,
	  .arg = "SIZE",
	  .help = "size of the backing file (default 1G; --quick 256M)" },
	{ .name = "json",
	  .key = B_JSON,
	  .arg = "FILE",
	  .help = "write every raw sample and the aggregates as JSON" },
	{ .name = "svg", .key = B_SVG, .arg = "FILE", .help = "write the overhead chart as SVG" },
	{ .name = "no-bpf-stats",
	  .key = B_NO_BPF_STATS,
	  .help = "skip the extra run per tracer with BPF run-time statistics on" },
	{ .name = "tools-dir",
	  .key = B_TOOLS_DIR,
	  .arg = "DIR",
	  .help = "where the bpftrace scripts are (default: src/bench/scripts\n"
		  "next to the binary, then ../share/iotracer/scripts,\n"
		  "/usr/share/iotracer/scripts)" },
	{ .name = "force",
	  .key = B_FORCE,
	  .help = "allow a --target that holds a file system or partition table" },
	{ .name = "keep",
	  .key = B_KEEP,
	  .help = "keep the work directory (fio and tracer outputs)" },
	{ .name = "verbose", .key = 'v', .help = "print every command" },
	{ .name = "help", .key = 'h', .help = "this text" },
};
static const struct opt_row *bench_rows[sizeof(bench_own) / sizeof(bench_own[0]) + 1];

static const struct opt_cmd bench_cmd = {
	.prog = "iotracer bench",
	.head = "Usage: iotracer bench [options]\n"
		"Measure what a tracer costs under fio: runs each workload in rounds without and\n"
		"with every tracer (A B A B ...), reports medians and min-max. Needs root and fio.\n"
		"\n",
	.tail = "\nProgress goes to stderr, the tables to stdout. See docs/bench.md.\n",
	.rows = bench_rows,
};

const struct opt_cmd *bench_opts(void)
{
	if (!bench_rows[0])
		for (size_t i = 0; i < sizeof(bench_own) / sizeof(bench_own[0]); i++)
			bench_rows[i] = &bench_own[i];
	return &bench_cmd;
}
