// SPDX-License-Identifier: GPL-2.0
/*
 * workload: the workloads of `iotracer bench`, by preset: reference
 * (rate-limited: the CPU a tracer adds at a fixed IO rate), maxrate (as fast
 * as a RAM loop goes: the IOPS a tracer costs), layers (one iotracer layer
 * at a time), all fio; and tax (no fio, tax.c: what a tracer adds to the
 * calls it does not trace).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bench/internal.h"
#include "lib/opts.h"

#define REF_G "--ioengine=psync --bs=4k "
/* The declaration in internal.h makes a wrong NR_WLS a type conflict. */
const struct workload bench_wls[] = {
	{ P_REFERENCE, "ref-rand",
	  "psync direct 4k randread 12000 + randwrite 250 IOPS (2 fio processes)", 0, M_CPU,
	  REF_G "--direct=1 --name=randread --rw=randread --rate_iops=12000 "
		"--name=randwrite --rw=randwrite --rate_iops=250",
	  12250, TAX_NONE },
	{ P_REFERENCE, "ref-seq", "psync direct 4k read 12000 + write 250 IOPS, sequential", 0,
	  M_CPU,
	  REF_G "--direct=1 --name=read --rw=read --rate_iops=12000 "
		"--name=write --rw=write --rate_iops=250",
	  12250, TAX_NONE },
	{ P_REFERENCE, "ref-buffered", "psync buffered 4k randread 12000 + randwrite 250 IOPS", 0,
	  M_CPU,
	  REF_G "--direct=0 --name=randread --rw=randread --rate_iops=12000 "
		"--name=randwrite --rw=randwrite --rate_iops=250",
	  12250, TAX_NONE },
	/*
	 * Buffered writes reaching the disk inside the run: every write dirties a
	 * page (random over the device, most are clean), every 64th is an fsync
	 * that writes them out. What the writeback notes cost (bpf/wb.bpf.h).
	 */
	{ P_REFERENCE, "ref-bufwrite", "psync buffered 4k randwrite 4000 IOPS, fsync every 64", 0,
	  M_CPU, REF_G "--direct=0 --name=randwrite --rw=randwrite --rate_iops=4000 --fsync=64",
	  4000, TAX_NONE },
	{ P_REFERENCE, "ref-12r1w", "psync direct 4k, 12 readers x 1000 + 1 writer x 250 IOPS", 0,
	  M_CPU,
	  REF_G "--direct=1 --name=readers --rw=randread --rate_iops=1000 --numjobs=12 "
		"--name=writer --rw=randwrite --rate_iops=250",
	  12250, TAX_NONE },
	{ P_MAXRATE, "max-psync", "psync QD1 4k randread direct, RAM-backed loop", 1, M_IOPS,
	  "--ioengine=psync --bs=4k --direct=1 --name=randread --rw=randread", 0, TAX_NONE },
	{ P_MAXRATE, "max-uring", "io_uring QD32 4k randread direct, RAM-backed loop", 1, M_IOPS,
	  "--ioengine=io_uring --iodepth=32 --bs=4k --direct=1 --name=randread --rw=randread", 0,
	  TAX_NONE },
	{ P_LAYERS, "layers-psync",
	  "psync QD1 4k randread direct, RAM-backed loop: one layer at a time", 1, M_IOPS,
	  "--ioengine=psync --bs=4k --direct=1 --name=randread --rw=randread", 0, TAX_NONE },
	/* the peers still get the RAM loop device as their -d; iotracer runs without -d */
	{ P_TAX, "tax-syscall", "getppid() in a loop: a syscall no tracer traces", 1, M_TAX, NULL,
	  0, TAX_SYSCALL },
	{ P_TAX, "tax-pipe", "64-byte write + read on a pipe, one thread (ns per pair)", 1, M_TAX,
	  NULL, 0, TAX_PIPE },
	{ P_TAX, "tax-socket",
	  "64-byte write + read on a UNIX socket pair, one thread (ns per pair)", 1, M_TAX, NULL, 0,
	  TAX_SOCKET },
};

/* --preset's names, by the bit of each preset; then "all" (bench_preset_names). */
const char *const bench_preset_names[BENCH_NR_PRESETS + 1] = { "reference", "maxrate", "layers",
							       "tax", "all" };

const char *bench_preset_name(int p)
{
	for (int i = 0; i < BENCH_NR_PRESETS; i++)
		if (p == 1 << i)
			return bench_preset_names[i];
	return "tax";
}

const char *bench_preset_kw(int i)
{
	return i >= 0 && i <= BENCH_NR_PRESETS ? bench_preset_names[i] : NULL;
}

const char *bench_wl_kw(int i)
{
	return i >= 0 && i < NR_WLS ? bench_wls[i].name : NULL;
}

int bench_find_wl(const char *name)
{
	return opts_kw_find(bench_wl_kw, name);
}

int bench_parse_presets(const char *s, unsigned *mask)
{
	char buf[128], *save = NULL;

	*mask = 0;
	if (strlen(s) >= sizeof(buf) || !*s)
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int i = opts_kw_find(bench_preset_kw, t);

		if (i < 0)
			return -EINVAL;
		*mask |= i < BENCH_NR_PRESETS ? 1u << i : P_ALL;
	}
	return *mask ? 0 : -EINVAL;
}
