/* SPDX-License-Identifier: GPL-2.0 */
/*
 * corr: joins the records of the BPF ring buffer into requests.
 *
 * Feed every ring buffer sample to corr_feed() in ring buffer order; the
 * correlator calls the emit callback once per finished request (see
 * docs/json.md, "request"). Pure user space: libc only.
 *
 * - syscall request: one it_syscall_rec + the block records with origin
 *   SYSCALL and the same (tid, seq), arriving before it or (readahead)
 *   after it; late ones are emitted as kind BLOCK with parent set.
 * - io_uring request: one it_uring_rec + block records with origin URING and
 *   origin_id == req.
 * - aio request: one iocb of an io_submit record, its block record(s), and the
 *   io_getevents record that reaped it (matched by pid + iocb address).
 * - block request: a block record of no traced request (origin NONE or
 *   WRITEBACK), or one whose parent was emitted already, or was never seen
 *   within hold_ns (unjoined), or one past the CORR_MAX_BLOCKS its parent
 *   lists (emitted right after the parent).
 *
 * Memory is bounded by max_pending (held block records + pending aio iocbs),
 * checked each time corr_feed() returns. Not thread safe; the callback must not
 * call back into the same correlator (corr_feed() then returns -EBUSY).
 */
#ifndef IOTRACER_CORR_H
#define IOTRACER_CORR_H

#include <stddef.h>
#include <stdint.h>

#include "iotracer.h"
#include "records/wbsync.h"

enum corr_kind {
	CORR_SYSCALL = 1,
	CORR_URING,
	CORR_AIO,
	CORR_BLOCK,
};

/*
 * Block records listed in one request. A request with more lists the first
 * queued, the last completed and the first others in arrival order; each of
 * the rest (nr_blocks_apart) is emitted right after it as a CORR_BLOCK request
 * whose parent is it, so every block request reaches every sink.
 */
#define CORR_MAX_BLOCKS 16
/* Recently emitted parents remembered for late block records. */
#define CORR_RECENT 1024
/* max_pending used when corr_new() is given 0. */
#define CORR_DEF_MAX_PENDING 65536

/*
 * A block request's device offset in bytes; CORR_NO_OFFSET for one with no
 * position: a flush carries the kernel's "no sector" (blk_rq_init sets
 * (sector_t)-1), which shifted by 9 would wrap to 2^64 - 512.
 */
#define CORR_NO_OFFSET UINT64_MAX
static inline uint64_t corr_blk_offset(const struct it_block_rec *b)
{
	return b->sector == UINT64_MAX ? CORR_NO_OFFSET : b->sector * 512;
}

/* One finished request. Pointers are valid only during the callback. */
struct corr_req {
	enum corr_kind kind;
	uint64_t id; /* 1, 2, 3... in emit order */
	const struct it_syscall_rec *sys; /* CORR_SYSCALL */
	const struct it_uring_rec *uring; /* CORR_URING */
	struct {
		struct it_task task; /* the io_submit caller */
		uint64_t seq; /* the io_submit's seq */
		struct it_aio_iocb iocb; /* as submitted (res from the reap) */
		uint64_t submit_ns; /* io_submit enter */
		uint64_t reap_ns; /* io_getevents exit; 0 if never reaped */
		int64_t res;
		int reaped;
	} aio; /* CORR_AIO */
	const struct it_block_rec *blocks[CORR_MAX_BLOCKS]; /* in arrival order */
	int nr_blocks;
	int nr_blocks_apart; /* emitted next as CORR_BLOCK with this request as parent */
	struct {
		uint64_t id;
		uint32_t tid;
		uint64_t seq; /* 0 for an io_uring parent */
		int valid;
	} parent; /* CORR_BLOCK with a known parent */
	/*
	 * CORR_SYSCALL fsync, fdatasync, sync_file_range of a file: the write
	 * requests of that file that no traced request issued (the flusher's,
	 * sync(1)'s) in flight when it began, wbsync.h.
	 */
	struct wbsync_waited waited;
	int has_waited;
};

typedef void (*corr_emit_fn)(const struct corr_req *req, void *ctx);

struct corr_stats {
	uint64_t records[5]; /* valid records fed, by IT_REC_* type */
	uint64_t requests; /* requests emitted */
	uint64_t unjoined; /* block records emitted without their parent (timeout, eviction, flush) */
	uint64_t evicted; /* held items emitted early because max_pending was reached */
	uint64_t malformed; /* corr_feed() inputs rejected with -EINVAL */
	uint64_t aio_unknown_reap; /* reaped iocbs never seen submitted */
	uint64_t aio_unreaped; /* aio requests emitted without a reap */
	uint64_t blocks_apart; /* block records beyond CORR_MAX_BLOCKS, emitted apart */
};

struct corr;

/*
 * hold_ns: how long a block record may wait for its parent (see corr_tick()).
 * max_pending: bound on held block records + pending aio iocbs (0: default).
 * Returns NULL on allocation failure (errno set).
 */
struct corr *corr_new(corr_emit_fn fn, void *ctx, uint64_t hold_ns, size_t max_pending);

/*
 * Feed one ring buffer sample of len bytes; now_ns is its arrival time (any
 * monotonic clock, used only for hold_ns). The data is copied: the caller may
 * reuse it as soon as this returns. Returns 0, -EINVAL for a malformed record
 * (nothing emitted, stats.malformed++), -EBUSY when called from the emit
 * callback, -ENOMEM when a record could not be held (it is then emitted or
 * dropped as documented in corr.c).
 */
int corr_feed(struct corr *c, const void *data, size_t len, uint64_t now_ns);

/* Emit the block records held for hold_ns or longer as kind BLOCK (unjoined). */
void corr_tick(struct corr *c, uint64_t now_ns);

/* Emit everything pending, oldest first (shutdown). */
void corr_flush(struct corr *c);

const struct corr_stats *corr_get_stats(const struct corr *c);

/* Free all memory; NULL is ok. Does not emit anything still pending. */
void corr_free(struct corr *c);

/* Held block records + pending aio iocbs. */
size_t corr_pending(const struct corr *c);

#endif /* IOTRACER_CORR_H */
