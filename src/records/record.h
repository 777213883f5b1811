/* SPDX-License-Identifier: GPL-2.0 */
/*
 * record: --record DIR, every finished request into zlib-compressed,
 * self-describing segment files (format: records/recfmt.h, docs/record.md).
 *
 * Requests are coded into a payload buffer; a block (one zlib stream with a
 * header and CRC) is written when the buffer is full, when rec_tick() finds
 * the oldest unwritten request RF_FLUSH_NS old, and at close, so a SIGKILL
 * loses about the last second. A segment is closed when it reaches
 * seg_size bytes or seg_age_ns, and the next one opened with the next block
 * (the first one at rec_open()); before a segment is opened the oldest segments of DIR are deleted until the directory (closed
 * segments + the new one at full size) fits max_bytes.
 *
 * Write errors (ENOSPC...) never stop tracing: the block is dropped (the file
 * is cut back to the last whole block), its requests are counted in
 * rec_lost(), the first error is warned about once, and later blocks are
 * tried again. Pure user space (libc, zlib).
 */
#ifndef IT_CORE_RECORD_H
#define IT_CORE_RECORD_H

#include <stdint.h>

#include "records/corr.h"

#define REC_DEF_SIZE (64ull << 20)
#define REC_DEF_AGE_NS (3600ull * 1000000000ull)
#define REC_DEF_MAX (1ull << 30)
/*
 * Measured with tools/replay_bench (docs/bench.md): the delta coding alone
 * (level 0) costs ~0.1 us per request, deflate level 1 ~0.8 us for a
 * further ~30 % off the size; so blocks are stored unless asked for.
 */
#define REC_DEF_LEVEL 0
#define REC_MIN_SIZE (64ull << 10) /* --record-size at least */
#define RF_FLUSH_NS 1000000000ull /* a request waits at most this long to be written */

struct rec_opts {
	const char *dir;
	uint64_t seg_size; /* bytes: rotate at this size */
	uint64_t seg_age_ns; /* rotate at this age */
	uint64_t max_bytes; /* DIR's segments, at most */
	const char *sysfs_root; /* device names and serials */
	int level; /* zlib level of the blocks: 0 (stored: the delta coding alone) to 9 */
	const char *who; /* how errors name the option: "--record" or "FILE:LINE: record" */
	int blame; /* rec_blame() will follow the requests: said in the segment headers */
};

struct recorder;

/*
 * Create DIR if it is missing and open the first segment. now_ns:
 * CLOCK_MONOTONIC. NULL with errno set (the error was printed).
 */
struct recorder *rec_open(const struct rec_opts *o, uint64_t now_ns);

/* corr_emit_fn style: one finished request. */
void rec_request(struct recorder *rc, const struct corr_req *r);
/* A request's blame (struct blame_line, recfmt.h), after the request (--blame). */
struct blame_line;
void rec_blame(struct recorder *rc, const struct blame_line *b);
/* Cgroup paths to announce in the blocks (records/cgroup.h; not owned); NULL: ids only. */
struct cg_cache;
void rec_set_cgroups(struct recorder *rc, struct cg_cache *cg);

/* Container and pod names of the node to keep with the cgroups (container.h; not owned). */
struct ct_names;
void rec_set_ctnames(struct recorder *rc, struct ct_names *names);
/* File names to keep with the requests that name the files (fname.h; not owned). */
struct fn_cache;
void rec_set_fnames(struct recorder *rc, struct fn_cache *fn);

/* Write the pending block if it is due; rotate on age. Call every drain. */
void rec_tick(struct recorder *rc, uint64_t now_ns);

/* Write the block being built, if any (rec_close() does it too). */
void rec_flush(struct recorder *rc);
/* Write what is pending, close the segment, free. NULL is ok. Returns rec_lost() at the end. */
uint64_t rec_close(struct recorder *rc);

/* Requests lost to write errors so far. */
uint64_t rec_lost(const struct recorder *rc);

/* Blame lines lost to write errors, and written, so far. */
uint64_t rec_blame_lost(const struct recorder *rc);
uint64_t rec_blame_written(const struct recorder *rc);

/* The open segment's path; NULL when none is open (the next block opens one). */
const char *rec_segment(const struct recorder *rc);

/* Requests and bytes written (segment headers and blocks) so far. */
uint64_t rec_written(const struct recorder *rc);
uint64_t rec_bytes(const struct recorder *rc);

#endif /* IT_CORE_RECORD_H */
