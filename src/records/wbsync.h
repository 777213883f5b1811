/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wbsync: the writeback an fsync, fdatasync or sync_file_range waited for
 * without issuing it (issue 26, item 4). The requests a sync issues in its
 * own context are its children (corr.c); the ones already in flight for the
 * same file when it began (the flusher's, another task's sync) are not, and
 * the sync waits for them all the same (the kernel's filemap_fdatawait).
 *
 * The correlator remembers the write block requests of no traced request
 * (origin none or writeback: the flusher's, sync(1)'s, reclaim's) it emitted.
 * They are emitted as they are fed, so in completion order (records are read
 * in end-time order, recbuf.h), into a ring of WBSYNC_RING entries; a
 * syscall's children, emitted with it at its end, are not in that order and
 * are left out. At a sync's emission
 * the ring is walked back from the newest entry while entries completed
 * after the sync began: those of the same file (file system dev + inode)
 * queued before it began were in flight then. Pure user space: libc only.
 */
#ifndef IT_WBSYNC_H
#define IT_WBSYNC_H

#include <stdint.h>

#include "iotracer.h"

/* Write requests remembered (completion order). */
#define WBSYNC_RING 8192
/* Request ids named per sync; more are counted in n and bytes only. */
#define WBSYNC_MAX_IDS 16

struct wbsync_ent {
	uint64_t id; /* request id of the emitted request that holds it */
	uint64_t ino;
	uint64_t q_ns, c_ns;
	uint32_t dev; /* kernel dev_t of the file system */
	uint32_t bytes;
};

struct wbsync {
	struct wbsync_ent *ring; /* NULL: not allocated (nothing remembered) */
	uint64_t next; /* entries ever added; the newest is at (next - 1) % WBSYNC_RING */
};

/* What a sync waited for. */
struct wbsync_waited {
	uint32_t n; /* write requests of no traced request in flight for its file when it began */
	uint32_t nr_ids; /* ids[] filled (<= WBSYNC_MAX_IDS) */
	uint64_t bytes;
	uint64_t ids[WBSYNC_MAX_IDS]; /* their request ids, newest first */
	int truncated; /* the ring had dropped entries that may have been in flight */
};

int wbsync_init(struct wbsync *ws);
void wbsync_free(struct wbsync *ws);
/* Remember write block request b, emitted in request id. */
void wbsync_add(struct wbsync *ws, const struct it_block_rec *b, uint64_t id);
/* Whether s is a sync that names what it waited for (fsync, fdatasync, sync_file_range). */
int wbsync_is_sync(const struct it_syscall_rec *s);
/* The write requests of s's file in flight at s's enter (out zeroed first). */
void wbsync_match(const struct wbsync *ws, const struct it_syscall_rec *s,
		  struct wbsync_waited *out);

struct jw;
/* "waited": {"n","bytes","ids",["truncated"]} (docs/json.md) */
void wbsync_json(struct jw *w, const struct wbsync_waited *wt);

#endif /* IT_WBSYNC_H */
