/* SPDX-License-Identifier: GPL-2.0 */
/*
 * top: `iotracer top`, a live view of block IO per process (or per cgroup) ×
 * device × op, refreshed every interval, in the manner of biotop/iotop
 * (docs/top.md). No per-request records: the BPF side aggregates in the
 * kernel (bpf/agg.bpf.h, map "agg"), the driver (top.c) reads the map each
 * interval, and the view (view.c, pure: view.h) turns two snapshots into rates
 * and prints the table.
 */
#ifndef IT_TOP_TOP_H
#define IT_TOP_TOP_H

/* `iotracer top ARGS...` (argv[0] is "top"); the exit status. */
int top_main(int argc, char **argv);

#endif /* IT_TOP_TOP_H */
