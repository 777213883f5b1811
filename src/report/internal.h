/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The parts of `iotracer report` and what they share (private to src/report).
 *
 *   report.c    the driver: options, the files to read, the filters, and every
 *               request to the parts below (report_main)
 *   reader.c    --record segments back into requests (reader.h)
 *   jsonl.c     -j JSON lines back into requests (jsonl.h)
 *   slowest.c   the N slowest requests (-n/--top), with where their time went
 *   fmt.c       the size and time formats the parts share
 *   perfetto.c  a Chrome trace-event JSON file
 *   heatmap.c   an SVG latency heatmap per device
 *   bykey.c     --by file|cgroup|pod: the top keys by bytes, p99 and blamed wait
 *
 * --blame's matrix is blame/culprits.c (the blame room's part for report).
 */
#ifndef IT_REPORT_INTERNAL_H
#define IT_REPORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "blame/culprits.h"
#include "records/corr.h"
#include "mode/vjoin.h"

/* A request as the parts see it: the corr_req and its place in time. */
struct rp_req {
	const struct corr_req *r;
	uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC; end 0: never finished */
	int64_t real_off_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC of its recording */
	const char *dev_name; /* the request's device name (or "MAJ:MIN", "-") */
};

/* A host-mode guest request joined to its host IO (a "path" JSON line, docs/modes.md). */
struct rp_path {
	uint64_t t[VJ_T_MAX]; /* host clock; 0 = not seen */
	uint64_t offset, bytes;
	uint32_t host_tid;
	uint8_t op;
	char serial[24]; /* the guest disk's */
};

/* ---- slowest: the N slowest requests, the -n/--top table (slowest.c) ---- */
struct rp_slowest;
struct rp_slowest *slowest_new(int n);
void slowest_add(struct rp_slowest *t, const struct rp_req *q);
/* name(dev): the recorded name of a device (for the lines). */
void slowest_print(struct rp_slowest *t, FILE *f, const char *(*name)(void *ctx, uint32_t dev),
		   void *ctx);
void slowest_free(struct rp_slowest *t);

/* ---- perfetto: Chrome trace-event JSON (perfetto.c) ---- */
struct pf;
struct pf *pf_new(void);
void pf_add(struct pf *p, const struct rp_req *q);
void pf_add_path(struct pf *p, const struct rp_path *g);
/* Write the trace; name(dev) names the device tracks. 0 or -errno. */
void pf_clock(struct pf *p, int64_t real_off_ns);
/* The files' names for the slice names (records/fname.h; not owned). */
struct fn_cache;
void pf_set_names(struct pf *p, const struct fn_cache *names);
int pf_write(struct pf *p, FILE *f, const char *(*name)(void *ctx, uint32_t dev), void *ctx);
void pf_free(struct pf *p);

/* ---- heatmap: latency (log2 rows) x time per device, as SVG (heatmap.c) ---- */
struct hm;
/*
 * What a cell's latency is: the request's own (IT_ST_TOTAL), or a stage of its
 * block requests (IT_ST_Q2C, IT_ST_Q2D, IT_ST_D2C): abi's stage ids and names.
 */
/* --stage's keyword i: the name of the heatmap's stage i, NULL past the last (.kw). */
const char *hm_stage_kw(int i);
/* --stage's NAME: its enum it_stage, or -1. */
int hm_stage_of(const char *name);
struct hm *hm_new(unsigned int stage);
/*
 * A request on device dev (the one its summary line names), in the panel of
 * its device and op; under a block stage each of its block requests, on its
 * own device and op. Unfinished ones (no such stage) are counted.
 */
void hm_add(struct hm *h, const struct rp_req *q, uint32_t dev);
/* Write the SVG document; name(dev) names the panels. 0 or -errno. */
int hm_write(struct hm *h, FILE *f, const char *(*name)(void *ctx, uint32_t dev), void *ctx);
void hm_free(struct hm *h);

/* ---- bykey: --by file|cgroup|pod, the matching requests per key (bykey.c) ---- */
enum bk_kind { BK_FILE, BK_CGROUP, BK_POD };
#define BK_NO_POD "(no pod)" /* the row of the requests of no pod */
/* --by's NAME ("file", "cgroup", "pod"): its enum bk_kind, or -1. */
int bk_kind_of(const char *name);
const char *bk_kind_name(int kind); /* an enum bk_kind's --by keyword */
struct rp_bykey;
struct fn_key;
struct fn_cache;
/*
 * blame: split the block requests' waits too (--blame), a request's block
 * requests the victims of its row; nm: the names of cgroups and pods (copied;
 * BK_POD: nm->pod). NULL: out of memory.
 */
struct rp_bykey *bk_new(enum bk_kind kind, int blame, const struct rp_names *nm);
/* A matching request, of the task of cgroup cgroup_id: its key's row. */
void bk_add(struct rp_bykey *b, const struct rp_req *q, uint64_t cgroup_id);
/* --blame: every request read (culprits are never filtered); matched: its blocks are victims. */
void bk_add_blocks(struct rp_bykey *b, const struct corr_req *r, int matched, uint64_t cgroup_id);
/*
 * report --from: the rows come summed by the server, bk_add_sums() (a key:
 * any, named by its label or in bk_print()'s names), and blame: the blamed
 * wait's table.
 */
struct rp_bykey *bk_new_sums(enum bk_kind kind, int blame);
/* A key's sums: requests, bytes, n latencies of one bucket, blamed wait, one culprit's share. */
struct bk_sums {
	uint64_t reqs, bytes;
	uint64_t lat_v, lat_n, lat_min, lat_max, lat_sum; /* lhist_add_bucket()'s */
	double blamed;
	uint64_t culprit; /* a cgroup id */
	double culprit_ns;
};
/*
 * k NULL: requests of no file; label: the row's name when k's is new (NULL:
 * named at print). 0 or -ENOMEM (counted: the print says so).
 */
int bk_add_sums(struct rp_bykey *b, const struct fn_key *k, const char *label,
		const struct bk_sums *s);
/* The top keys by bytes, p99 and blamed wait; names: the files' names (NULL: none). 0 or -errno. */
int bk_print(struct rp_bykey *b, FILE *out, int top, const struct fn_cache *names,
	     const struct rp_names *nm);
void bk_free(struct rp_bykey *b);

/* ---- stored: matched requests waiting for their stored blame line, by id (stored.c) ---- */
struct rp_stored;
struct rp_stored *st_new(void);
/* 0 or -ENOMEM. */
int st_put(struct rp_stored *s, uint64_t id, uint32_t dev, uint64_t cgroup_id, int victim);
/* 1 and id's entry, removed; 0: none. */
int st_take(struct rp_stored *s, uint64_t id, uint32_t *dev, uint64_t *cgroup_id, int *victim);
uint64_t st_count(const struct rp_stored *s);
void st_free(struct rp_stored *s);

/* ---- formats the parts share (fmt.c) ---- */
/* A human size ("4KiB"). */
char *rp_fmt_bytes(uint64_t b, char *buf, size_t n);
/* "2026-11-24T13:25:01.123456Z" of a CLOCK_REALTIME time in ns. */
char *rp_fmt_real(uint64_t real_ns, char *buf, size_t n);

#endif /* IT_REPORT_INTERNAL_H */
