/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The report driver's own header, shared by its three files: report.c
 * (options, outputs, start and finish), files.c (the files to read, and
 * every request through the filters to the parts) and filter.c (the
 * filters). The parts never include it (they share internal.h).
 */
#ifndef IT_REPORT_DRIVER_H
#define IT_REPORT_DRIVER_H

#include <stdint.h>
#include <stdio.h>

#include "service/cli.h"
#include "records/container.h"
#include "records/output.h"
#include "records/uhist.h"
#include "report/internal.h"
#include "report/jsonl.h"
#include "records/reader.h"

struct ct_names;
struct it_task;
struct corr_req;

#define RP_MAX_HOSTS 64 /* --host, at most */

struct rp_opts {
	struct it_opts f; /* the filters (cli_filter, offline): the run options' */
	const char *container, *pod; /* --container, --pod: an id (prefix) or UID, or a name */
	int has_file, file_bdev; /* -f: its inode, or a block device (a path of this host) */
	uint64_t file_ino;
	uint32_t file_dev;
	const char *file_pat; /* -f: the recorded names' pattern (file_real or as given) */
	char *file_real; /* -f: the path of this host, resolved (malloc'd) */
	int file_glob; /* file_pat has *, ? or [...] */
	int top;
	const char *json_path, *perfetto_path, *heatmap_path;
	int stage; /* --stage: enum it_stage (heatmap.c); -1 not given */
	int blame, by; /* --blame, --by: enum blame_by; -1 not given */
	int bykey; /* --by file, cgroup (without --blame), pod: enum bk_kind; -1 not given */
	char **paths;
	int nr_paths;
	/* --from clickhouse://... (docs/fleet.md): the table, its password file and CA; --host */
	const char *from, *auth, *ca;
	char *hosts[RP_MAX_HOSTS];
	int nr_hosts;
};

/* The filters in the order rp_matches() applies them (a request fails at the first it fails). */
enum rp_filter {
	RP_F_MINLAT,
	RP_F_WINDOW,
	RP_F_COMM,
	RP_F_PID,
	RP_F_CGROUP,
	RP_F_CONTAINER, /* --container, --pod */
	RP_F_DEV, /* -d */
	RP_F_FILE, /* -f */
	RP_F_NR,
};

struct report {
	struct rp_opts o;
	struct rr_reader rr;
	struct ct_names *names; /* this host's container and pod names (docs/cgroups.md) */
	struct jl_stats jl; /* JSON lines files */
	struct out_devnames dn;
	struct it_out *out, *jout;
	FILE *jf, *pff, *hmf;
	struct uhists kh;
	struct rp_slowest *slowest;
	struct pf *pf;
	struct hm *hm;
	struct rp_blame *blame;
	struct rp_bykey *bykey; /* --by file, cgroup, pod */
	char pod[2 * CT_NAME_MAX]; /* rp_pod_of()'s answer */
	/* the recording's stored blame (docs/record.md): matched requests waiting for their line */
	struct rp_stored *stored;
	int blame_segs; /* segments whose run recorded blame (RF_SEG_F_BLAME) */
	int blame_stored; /* --blame sums the stored lines: every file is such a segment, --by cgroup */
	uint64_t stored_missing; /* requests of earlier runs whose line never came */
	uint64_t run_mono_ns; /* the run of the segment being read (its ids) */
	uint32_t run_pid;
	char **files; /* segment files, in order */
	int nr_files;
	uint64_t first_ns, last_ns, matched;
	uint64_t failed[RP_F_NR]; /* requests each filter turned away (the first one they failed) */
	uint64_t rec_start_real; /* the oldest segment's open time */
	int64_t boot_off_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC now (JSON lines' --since/--until) */
	int oom;
	struct ch_src *ch; /* --from: the server (chsrc.c); NULL: files */
};

/* files.c */
int rp_collect(struct report *rp);
void rp_find_start(struct report *rp);
void rp_on_req(void *ctx, const struct rr_reader *rr, const struct rf_req *rq);
void rp_on_blame(void *ctx, const struct rr_reader *rr, const struct blame_line *l);
int rp_read_file(struct report *rp, const char *path);

/* files.c: a request the server matched, to the per-request outputs */
void rp_outputs(struct report *rp, const struct rp_req *q);
/* A stored blame line as -j writes it (its culprits named by the input's cgroup paths). */
void rp_blame_json(struct report *rp, const struct blame_line *l);
/* A device's name and serial, a cgroup's path, as an input (not a segment) gives them (ctx: rp). */
void rp_note_dev(void *ctx, uint32_t dev, const char *name, const char *serial);
void rp_note_cgroup(void *ctx, uint64_t id, const char *path);
struct fn_key;
void rp_note_fname(void *ctx, const struct fn_key *k, const char *file, const char *cfile);

/* filter.c */
const char *rp_dev_name_of(void *ctx, uint32_t dev);
const char *rp_dev_serial_of(void *ctx, uint32_t dev);
const char *rp_cgroup_of(void *ctx, uint64_t id);
/* The pod of cgroup id as the tool names it: "namespace/name", else its UID; NULL: none. */
const char *rp_pod_of(void *ctx, uint64_t id);
const struct it_task *rp_req_task(const struct corr_req *r, uint32_t *dev, uint64_t *ino);
enum rp_filter rp_matches(const struct report *rp, const struct rp_req *q);
int rp_victim_dev(void *ctx, uint32_t dev);

#endif /* IT_REPORT_DRIVER_H */
