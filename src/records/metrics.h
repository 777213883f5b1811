/* SPDX-License-Identifier: GPL-2.0 */
/*
 * metrics: what the daemon knows, as Prometheus text exposition (format
 * 0.0.4; docs/metrics.md). Pure user space: the daemon collects the inputs on
 * its event loop, metrics_write() turns them into text, and
 * service/metrics_http.c serves the latest text from its own thread.
 *
 * Histograms come from the log2 histograms of struct out_khist (slot k holds
 * [2^k, 2^(k+1)) ns, integer ns): a bucket's le is its last integer value,
 * (2^(k+1) - 1) ns, written in seconds. Every histogram has the same buckets,
 * slots METRICS_SLOT_FIRST..METRICS_SLOT_LAST (~1 us .. ~34 s) then +Inf, so
 * that sum by (le) across devices and ops adds like with like; values below
 * the first edge count in the first bucket, above the last one in +Inf only.
 */
#ifndef IT_METRICS_H
#define IT_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "records/agg.h"
#include "records/output.h"

#define METRICS_SLOT_FIRST 9 /* le = 1023 ns */
#define METRICS_SLOT_LAST 34 /* le = 2^35 - 1 ns = 34.36 s */
/* iotracer_request_size_bytes: le = 2^k bytes for k in FIRST..LAST (512 B .. 16 MiB), +Inf */
#define METRICS_SIZE_FIRST 9
#define METRICS_SIZE_LAST 24

/* Attach status of one hook. */
struct metrics_hook {
	const char *layer, *hook, *method;
	int ok;
	unsigned int state; /* enum out_hook_st (records/output.h) */
};

/* The daemon's own process (client libraries' standard process_* metrics). */
struct metrics_proc {
	uint64_t cpu_ticks; /* utime + stime, in ticks_per_sec */
	uint64_t ticks_per_sec;
	uint64_t rss_bytes;
	uint64_t start_time_ms; /* since the epoch */
	uint64_t open_fds;
};

/* Name of a device (dev_t, 0: not device specific) for the dev label; never NULL. */
typedef const char *(*metrics_dev_fn)(uint32_t dev, void *ctx);

struct metrics_in {
	const struct out_khist *khists;
	int nr_khists;
	const uint64_t *drops; /* IT_NR_DROPS, summed over CPUs; NULL: no drop lines */
	uint32_t drop_layers; /* 1u << IT_L_*: layers whose drop counters are written */
	/* drops[] holds IT_DROP_MISSED for no layer: the block layer's are these two */
	uint64_t blk_inflight; /* issued by the attached BPF side, not seen completing yet */
	uint64_t blk_missed; /* issued by a BPF side since detached (reload), never seen done */
	uint64_t lost; /* records lost in user space */
	const uint64_t *counters; /* IT_NR_COUNTERS: the writeback families; NULL: none */
	const struct metrics_hook *hooks;
	int nr_hooks;
	const struct metrics_proc *proc; /* NULL: no process_* lines */
	metrics_dev_fn dev_name;
	void *dev_ctx;
	/* block requests aggregated in the kernel (records/agg.h); nr_agg 0: no such families */
	const struct agg_row *agg;
	int nr_agg;
	int agg_cgroups; /* rows carry a cgroup label: write the iotracer_cgroup_* families */
	/* --metrics-containers: container, pod, namespace labels of each cgroup label's path */
	int ct_labels;
	struct ct_names *names; /* the node's names (records/container.h); NULL: ids */
};

struct ct_names;
/* Write every family of in to f. */
void metrics_write(FILE *f, const struct metrics_in *in);

/*
 * Building blocks, also for a mode's own lines (mode_ops.metrics, daemon.h): a family header
 * ("# HELP" and "# TYPE" lines), and one sample name{labels} value. labels:
 * nr name/value pairs, values escaped (\\, \", \n); value as written.
 */
struct metrics_label {
	const char *name, *value;
};
void metrics_family(FILE *f, const char *name, const char *type, const char *help);
void metrics_sample(FILE *f, const char *name, const struct metrics_label *labels, int nr,
		    const char *value);
void metrics_sample_u64(FILE *f, const char *name, const struct metrics_label *labels, int nr,
			uint64_t value);

/* A family of one sample without labels (a process-wide counter or gauge). */
void metrics_single(FILE *f, const char *name, const char *type, const char *help, uint64_t value);

/* ns as decimal seconds, exact ("0.000001023", "2", "1.5"); returns buf. */
char *metrics_fmt_seconds(uint64_t ns, char *buf, size_t n);

/*
 * Read the process_* values of process `pid` ("self") below proc_root ("/proc";
 * tests point it to a fake tree): <root>/<pid>/stat, <root>/stat (btime),
 * <root>/<pid>/fd. 0 or -errno.
 */
int metrics_proc_read(const char *proc_root, const char *pid, struct metrics_proc *p);

#endif /* IT_METRICS_H */
