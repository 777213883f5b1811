/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dblame: the daemon's --blame (docs/blame.md, "/metrics"): every finished
 * request's block requests into the blame engine (core/blame.h, horizon 1 s),
 * the splits summed per (device, victim, culprit) cgroup label, the cgroup
 * paths cut to --metrics-cgroup-depth levels, for /metrics. Bounded: at most
 * DBL_MAX_LABELS labels (then "other") and DBL_TOP culprits per (device,
 * victim): the first ones seen keep their series, later ones add to
 * "other", so every series only grows. Pure user space.
 */
#ifndef IT_DBLAME_H
#define IT_DBLAME_H

#include <stdio.h>

#include "records/blame.h"
#include "records/corr.h"
#include "service/metrics.h"

#define DBL_MAX_LABELS 64
#define DBL_TOP 5
/* A record's `blame` line: its first DBL_REC_TOP culprits, of the first DBL_REC_KEEP owners seen. */
#define DBL_REC_TOP 3
#define DBL_REC_KEEP 8

struct cg_cache;
struct dblame;
struct it_out;

/*
 * cg: the daemon's id -> path cache; depth: --metrics-cgroup-depth (< 0: whole
 * paths, no /metrics); out: where each request's `blame` JSON line goes (NULL:
 * no lines). NULL: no memory.
 */
struct dblame *dblame_new(struct cg_cache *cg, int depth, struct it_out *out);
/* --record: each request's blame also goes to the recording (rec_blame()). */
struct recorder;
void dblame_set_recorder(struct dblame *d, struct recorder *rc);
/* A written request: its block requests are victims, and its `blame` line follows once split. */
void dblame_request(struct dblame *b, const struct corr_req *r);
/* A block record -m keeps out of the records: a victim and culprit, no line. */
void dblame_block(struct dblame *b, const struct it_block_rec *rec);
/* The records' clock is at least now: split what the horizon passed, write their lines. */
void dblame_tick(struct dblame *b, uint64_t now);
/* The end: split everything, write the lines and the blame_stats line. */
void dblame_finish(struct dblame *b);
/* A block record as the engine's input: its stamps, device, owner (the dirtier first). */
void dblame_in(struct blame_in *in, const struct it_block_rec *b, int victim);
/* The iotracer_blame_* families, after splitting what the horizon passed by now (CLOCK_MONOTONIC). */
void dblame_metrics(struct dblame *b, FILE *f, uint64_t now, metrics_dev_fn dev_name, void *ctx);
void dblame_free(struct dblame *b);

#endif /* IT_DBLAME_H */
