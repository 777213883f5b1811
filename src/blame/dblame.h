/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dblame: the daemon's --blame (docs/blame.md, "/metrics"): every finished
 * request's block requests into the blame engine (blame.h, horizon 1 s),
 * the splits summed per (device, victim, culprit) cgroup label, the cgroup
 * paths cut to --metrics-cgroup-depth levels, for /metrics. Bounded: at most
 * DBL_MAX_LABELS labels (then "other") and DBL_TOP culprits per (device,
 * victim): the first ones seen keep their series, later ones add to
 * "other", so every series only grows. Pure user space.
 */
#ifndef IT_DBLAME_H
#define IT_DBLAME_H

#include <stdio.h>

#include "blame/blame.h"
#include "blame/blame_json.h"
#include "records/corr.h"
#include "records/metrics.h"

#define DBL_MAX_LABELS 64
#define DBL_TOP 5
/* A record's `blame` line: its first DBL_REC_TOP culprits, of the first DBL_REC_KEEP owners seen. */
#define DBL_REC_TOP 3
#define DBL_REC_KEEP 8
/*
 * Written requests waiting for their splits (a horizon's worth: 1 s of them), at
 * most; past it a request gets no `blame` line (blame_stats.records_capped). 32
 * bytes each: 8 MiB (docs/blame.md, "Memory").
 */
#define DBL_PEND_MAX (1 << 18)

struct cg_cache;
struct dblame;
struct it_out;
struct jw;

/* A written request's block requests, split and summed (its `blame` line). */
struct dblame_rec {
	uint64_t id; /* the request's (its JSON line's "id") */
	uint64_t c_max; /* the latest completion of its block requests */
	int blocks, left; /* its block requests; those not split yet */
	int lost; /* one will never be split: no line */
	int done; /* written or counted */
	struct blame_parts p;
	struct blame_owner who[DBL_REC_KEEP]; /* culprits, largest first once done */
	double ns[DBL_REC_KEEP];
	int nr;
};

/*
 * Host mode (docs/blame.md, "Host mode"): owners are VMs. vm_name: the name of
 * the VM whose QEMU is pid, NULL when pid is no traced QEMU (the pointer is
 * read at once, not kept). on_rec (may be NULL): each request of dblame_request()
 * once its block requests are split (lost: one never will be), whether or not
 * -j writes a line for it; one without block requests at once (blocks 0).
 */
struct dblame_host {
	const char *(*vm_name)(void *ctx, uint32_t pid);
	void (*on_rec)(void *ctx, const struct dblame_rec *e);
	void *ctx;
};

/*
 * cg: the daemon's id -> path cache; depth: --metrics-cgroup-depth (< 0: whole
 * paths, no /metrics); out: where each request's `blame` JSON line goes (NULL:
 * no lines). NULL: no memory.
 */
struct dblame *dblame_new(struct cg_cache *cg, int depth, struct it_out *out);
/* --record: each request's blame also goes to the recording (rec_blame()). */
struct recorder;
void dblame_set_recorder(struct dblame *d, struct recorder *rc);
/* --sink: each request's line to fn too, as it goes to the recording. */
void dblame_set_line_fn(struct dblame *d, void (*fn)(void *ctx, const struct blame_line *l),
			void *ctx);
/*
 * Owners are VMs from now on (blame.h: BLAME_BY_VM): before anything is fed.
 * host is kept until the next call (NULL: host mode stopped; VMs unnamed until
 * it is set again). 0, -EBUSY (requests were fed by cgroup) or -ENOMEM.
 */
int dblame_set_host(struct dblame *b, const struct dblame_host *host);
/* A VM's name or a cgroup's whole path (NULL: unknown), as the JSON lines name owners. */
const char *dblame_owner_name(const struct dblame *b, const struct blame_owner *o);
/* e's fields of a `blame` line: "by", "requests", the parts, "culprits" (the first DBL_REC_TOP). */
void dblame_json_rec(const struct dblame *b, struct jw *j, const struct dblame_rec *e);
/*
 * src's block requests, parts and culprits added to dst's (several host IOs of
 * one guest request), culprits by owner (the first DBL_REC_KEEP; the rest stay
 * in others), largest first.
 */
void dblame_rec_merge(const struct dblame *b, struct dblame_rec *dst, const struct dblame_rec *src);
/* A written request: its block requests are victims, and its `blame` line follows once split. */
void dblame_request(struct dblame *b, const struct corr_req *r);
/* A block record -m keeps out of the records: a victim and culprit, no line. */
void dblame_block(struct dblame *b, const struct it_block_rec *rec);
/* The records' clock is at least now: split what the horizon passed, write their lines. */
void dblame_tick(struct dblame *b, uint64_t now);
/* The end: split everything, write the lines and the blame_stats line. */
void dblame_finish(struct dblame *b);
/* The iotracer_blame_* families, after splitting what the horizon passed by now (CLOCK_MONOTONIC). */
void dblame_metrics(struct dblame *b, FILE *f, uint64_t now, metrics_dev_fn dev_name, void *ctx);
/* Lines written, requests that got none because a split was missing (unsplit) or the queue was full (capped). */
void dblame_counts(const struct dblame *b, uint64_t *written, uint64_t *unsplit, uint64_t *capped);
void dblame_free(struct dblame *b);

#endif /* IT_DBLAME_H */
