/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stages: the numbers behind a summary's per-stage lines (output_summary.c writes
 * them): a request's view (kind, task, times, dev, op, ...) and the
 * per-(layer, dev, op, stage) latency histograms that give the percentiles.
 * Pure computation, no output.
 */
#ifndef IT_STAGES_H
#define IT_STAGES_H

#include <stdint.h>

#include "iotracer.h"
#include "records/corr.h"

struct lhist;

/*
 * Bytes moved by the requests of a stage row and the span they cover (first
 * start .. last end): throughput = bytes / span, a figure of the requests
 * alone (the same from a recording as live, whatever the run's length).
 */
struct tput {
	uint64_t bytes, first_ns, last_ns;
};

/*
 * Stage statistics from records, keyed (layer name, dev, op, stage). A value
 * goes into ival only; each summary adds ival to total and empties it (the
 * final one first, so that total is complete when it is reported).
 */
struct stage_stat {
	const char *layer; /* static string */
	const char *stage; /* static string */
	uint32_t dev;
	uint8_t op;
	struct lhist *ival; /* since the last summary */
	struct lhist *total; /* up to the last summary */
	struct tput tp_ival, tp_total; /* the request's whole stage (total, q2c) only */
};

/*
 * Lookup cache of the stage lookup: a request adds to ~5 stages in turn.
 * Sets of two ways (an even slot and the next), hashed from the strings'
 * addresses: with one way in 32 slots, two of a request's 5 stages shared a
 * slot in ~28 % of builds (the linker places the strings) and took turns
 * missing (~230 instructions a request, a fifth of the stage statistics).
 */
#define STAGES_CACHE 128 /* a power of two */

/* All stages of one output (zeroed: empty). */
struct stages {
	struct stage_stat *st;
	int nr, cap;
	int cache[STAGES_CACHE]; /* index + 1 in st, 0: none */
	int error; /* -ENOMEM once a value could not be kept */
};

/* A request's derived numbers, whatever its kind. */
struct req_view {
	const char *kind;
	const struct it_task *task;
	uint64_t start_ns, end_ns;
	uint32_t dev;
	unsigned int op;
	uint64_t offset, bytes, ino;
	int64_t ret;
	uint64_t first_q, last_c; /* over the block children */
};

void stages_make_view(const struct corr_req *r, struct req_view *v);
/*
 * The task a block request counts for: the dirtier of its page-cache pages
 * where known (IT_F_WB, bpf/wb.bpf.h), else the one that queued it.
 */
const struct it_task *stages_block_owner(const struct it_block_rec *b);
/* end - start, 0 when the request never ended. */
uint64_t stages_lat_of(const struct req_view *v);

/* Add the stage latencies of request r (its view v, its block requests). */
void stages_request(struct stages *s, const struct corr_req *r, const struct req_view *v);
/*
 * Values of a stage computed elsewhere (a server's GROUP BY, docs/fleet.md):
 * n values of v's bucket (hist.h) with their least, greatest and sum, and
 * the bytes and span of the requests a total or q2c row carries (first_ns 0:
 * none). layer and stage are the names stages_request() uses. 0, -EINVAL
 * for a name it never uses, -ENOMEM.
 */
struct stages_bucket {
	uint64_t v, n, min, max, sum;
	uint64_t bytes, first_ns, last_ns;
};
int stages_add_bucket(struct stages *s, const char *layer, uint32_t dev, unsigned int op,
		      const char *stage, const struct stages_bucket *b);
/* total += ival, and ival starts again (each summary, the final one first). */
void stages_fold(struct stages *s);
void stages_free(struct stages *s);
/* Bytes per second over the span; 0 without a span. */
double stages_tput_rate(const struct tput *t);

#endif /* IT_STAGES_H */
