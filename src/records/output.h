/* SPDX-License-Identifier: GPL-2.0 */
/*
 * output: what the daemon (and `iotracer report`) writes: live per-request
 * lines, JSON lines (docs/json.md; batched, a failed write counted, not
 * fatal), the attach lines and the interval/final summaries. The per-stage
 * numbers the summaries print are computed in stages.c.
 */
#ifndef IT_OUTPUT_H
#define IT_OUTPUT_H

#include <stdint.h>
#include <stdio.h>
#include "iotracer.h"
#include "records/corr.h"

struct it_out;

/* One in-kernel histogram entry, as read from the "hists" map. */
struct out_khist {
	struct it_hist_key key;
	struct it_hist_val val;
};

/* File names (docs/json.md, "file"): the daemon's cache and resolver, as counted. */
struct out_fnames {
	uint64_t entries; /* names known now */
	uint64_t hits, misses; /* lookups of the records' files */
	uint64_t evicted; /* forgotten, the least used, for room */
	uint64_t forgotten; /* deleted from the BPF side's map (evicted or missed): named again */
	uint64_t no_mount; /* names of a file system no mount here shows ("[MAJ:MIN]") */
	uint64_t container; /* names with a container's path */
	uint64_t container_gone; /* another namespace's, its task gone: no container path */
	uint64_t bad; /* name records that did not decode */
};

/* Everything a summary reports besides the per-record stage statistics. */
struct out_summary_in {
	int final;
	uint64_t elapsed_ns;
	const struct out_khist *khists;
	int nr_khists;
	const uint64_t *drops; /* IT_NR_DROPS counters, summed over CPUs */
	const struct corr_stats *corr;
	uint64_t lost_samples; /* ring buffer callback errors */
	const uint64_t *skipped; /* IT_L_MAX: program runs skipped by the kernel (recursion) */
	/* IT_NR_COUNTERS event counters (the writeback notes, IT_CNT_WB_*); NULL: none */
	const uint64_t *counters;
	const struct out_fnames *fnames; /* NULL: file names off */
};

/* What the outputs are asked for (the service fills it from its options: cli_out_config). */
struct out_config {
	const char *sysfs_root; /* "/sys": the devices' names are read below it */
	int live; /* live per-request lines (none under quiet) */
	int quiet; /* -q */
	uint64_t min_lat_ns, sample; /* the records' thinning (out_set_thinning) */
	int live_cgroup; /* the live lines name each request's cgroup (a --cgroup filter) */
};

/*
 * text: human output (live lines, reports, summaries); json: JSON lines or
 * NULL. start_ns: CLOCK_MONOTONIC at start, for relative live timestamps.
 */
struct it_out *out_new(const struct out_config *o, FILE *text, FILE *json, uint64_t start_ns);
void out_free(struct it_out *out);

/*
 * Device names and serials from elsewhere than sysfs (a recording being read
 * back): name() returns dev's name, serial() its serial; NULL: unknown (the
 * name is then "MAJ:MIN", as for a device sysfs does not know).
 */
struct out_devnames {
	const char *(*name)(void *ctx, uint32_t dev);
	const char *(*serial)(void *ctx, uint32_t dev);
	const char *(*cgroup)(void *ctx, uint64_t id); /* NULL member: no cgroup paths */
	void *ctx;
};
void out_set_devnames(struct it_out *out, const struct out_devnames *dn);
/* Cgroup paths of the live system for the JSON "cgroup" field (records/cgroup.h). */
struct cg_cache;
void out_set_cgroups(struct it_out *out, struct cg_cache *cg);
/* The node's container and pod names for the JSON lines (container.h); NULL: ids only. */
struct ct_names;
void out_set_names(struct it_out *out, struct ct_names *names);

/* The file names for the JSON "file" fields (records/fname.h; not owned); NULL: none. */
struct fn_cache;
void out_set_fnames(struct it_out *out, struct fn_cache *fn);

/* corr_emit_fn: one finished request. */
void out_request(const struct corr_req *r, void *out);
/*
 * A hook's state, in the attach report, the JSON attach lines and /metrics
 * (docs/hooks.md): attached; off by an option (--sched-switch); absent: nothing to
 * hook with on this machine (no such tracepoint or function, no driver loaded, a
 * method this kernel refuses, a BPF feature it lacks); failed: the hook is there and
 * was wanted (a method chosen, or the kernel has its tracepoint) but did not load or
 * attach. Only "failed" is worth an alert.
 */
enum out_hook_st { OUT_HS_ATTACHED, OUT_HS_OFF, OUT_HS_ABSENT, OUT_HS_FAILED, OUT_HS_MAX };
const char *out_hook_st_name(unsigned int s); /* "attached", "off", "absent", "failed" */

/* One JSON attach line; state: enum out_hook_st. */
void out_attach(struct it_out *out, const char *layer, const char *hook, const char *method,
		unsigned int state, const char *reason);
void out_summary(struct it_out *out, const struct out_summary_in *in);
/*
 * A JSON line of another module (dblame's `blame` lines): build one object in the
 * returned writer, then hand it back with out_json_end(out, mark). NULL: no JSON
 * output. The line is batched with the requests'.
 */
struct jw *out_json_begin(struct it_out *out, size_t *mark);
void out_json_end(struct it_out *out, size_t mark);
/* Write JSON lines still held in the batch (the daemon calls it on its timer). */
void out_flush(struct it_out *out);
/* The names the JSON lines use: "read", "pread64", "syscall" ("other", "?", "none" when unknown). */
/* A request's offset for the text tables: the number, "-" for none (CORR_NO_OFFSET). */
const char *out_fmt_offset(uint64_t offset, char *buf, size_t n);

/* -m and --sample as they are now (a reload changes them): the text summary says what
 * its stage table counts. */
void out_set_thinning(struct it_out *out, uint64_t min_lat_ns, uint64_t sample);

/*
 * The stage statistics the summary reports, for requests counted elsewhere
 * (a server's sums: `report --from`, docs/fleet.md), which add to its count.
 */
struct stages;
struct stages *out_stages(struct it_out *out, uint64_t requests);

/* Requests written so far, and JSON write errors. */
uint64_t out_requests(const struct it_out *out);
/* 0, or -errno of the first failed output write (the exit status says it). */
int out_error(const struct it_out *out);
/* JSON lines lost to failed writes (counted, said once, tracing goes on). */
uint64_t out_json_lost(const struct it_out *out);

/* Names the summaries use (and /metrics, records/metrics.h): "read", "q2c", "ringbuf". */
const char *out_wb_why_name(unsigned int bit); /* bit i of IT_WB_*; NULL past the last */
/* Layer of a histogram key: the layer's name, "io_uring" and "aio" for syscall-layer keys. */
const char *out_khist_layer(const struct it_hist_key *k);
/* A stack's role of a histogram (upper, member), NULL for a plain one (docs/metrics.md). */
const char *out_khist_role(const struct it_hist_key *k);

#endif /* IT_OUTPUT_H */
