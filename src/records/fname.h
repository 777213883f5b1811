/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fname: the names of the files the records name by device and inode
 * (issue 38, docs/json.md "file"): a bounded cache of (dev, ino, bdev) -> the
 * file's path on the host and, for a container's file, the path its
 * container sees. The daemon fills it from the BPF side's name records
 * (records/fnres.h), `iotracer report` from a recording's name entries or the
 * JSON lines' "file" fields. The least recently used entry goes first when
 * the cache is full; lookups that find nothing are counted.
 * Pure user space; not thread safe.
 */
#ifndef IT_RECORDS_FNAME_H
#define IT_RECORDS_FNAME_H

#include <stddef.h>
#include <stdint.h>

#include "iotracer.h"
#include "records/corr.h"

/* A file as the records name it: dev (IT_F_BDEV: a block device node, dev its i_rdev), ino. */
struct fn_key {
	uint64_t ino;
	uint32_t dev;
	uint32_t bdev;
};

static inline int fn_key_eq(const struct fn_key *a, const struct fn_key *b)
{
	return a->ino == b->ino && a->dev == b->dev && a->bdev == b->bdev;
}

/* k = (dev, ino, bdev): 1, or 0 when there is no inode (no file). */
static inline int fn_key_set(struct fn_key *k, uint32_t dev, uint64_t ino, int bdev)
{
	k->ino = ino;
	k->dev = dev;
	k->bdev = (uint32_t)bdev;
	return ino != 0;
}

struct fn_entry {
	struct fn_key key;
	char *file; /* the host's path ("" never: an entry has one) */
	char *cfile; /* the path its container sees; NULL: none (or the same) */
	uint32_t file_len, cfile_len; /* their strlen() (cfile NULL: 0) */
	char *json; /* fn_get_json()'s members, made at its first call; NULL: not yet */
	uint32_t json_len, json_dlen; /* the names', and with "file_devno" */
	uint32_t prev, next; /* LRU list (indices; FN_NIL) */
	uint32_t hnext; /* hash chain */
};

struct fn_stats {
	uint64_t puts; /* names put (new or changed) */
	uint64_t hits, misses; /* fn_get() */
	uint64_t evicted; /* forgotten for room */
	uint64_t entries, bytes; /* now: entries, and the bytes of their strings and JSON */
};

struct fn_cache;

/*
 * The file of a block request: its own file_dev and inode, for a write of
 * page-cache pages the first page's file system, else (records of builds
 * before issue 38) the request's file when the inode is the same; one
 * issued inside the request's call with no inode (an aio iocb's: io_submit
 * queues the bios) has the request's file. 1, or 0. Inline: every JSON line's
 * block requests take it.
 */
static inline int fn_blk_key(const struct it_block_rec *b, const struct fn_key *req,
			     struct fn_key *k)
{
	/* issued inside the request's own call with no inode of its own: an aio iocb's */
	if (!b->ino && req && b->origin == IT_ORIG_SYSCALL) {
		*k = *req;
		return 1;
	}
	if (!b->ino)
		return 0;
	if (b->file_dev)
		return fn_key_set(k, b->file_dev, b->ino, !!(b->flags & IT_F_BDEV));
	if ((b->flags & IT_F_WB) && b->wb.file_dev)
		return fn_key_set(k, b->wb.file_dev, b->ino, 0);
	if (req && req->ino == b->ino) {
		*k = *req;
		return 1;
	}
	return 0;
}

/*
 * The file a request names (a syscall's or io_uring request's fd, an aio
 * iocb's, a block request's own): 1 and its key, or 0 when it names none.
 */
static inline int fn_req_key(const struct corr_req *r, struct fn_key *k)
{
	switch (r->kind) {
	case CORR_SYSCALL:
		return fn_key_set(k, r->sys->dev, r->sys->ino, !!(r->sys->flags & IT_F_BDEV));
	case CORR_URING:
		return fn_key_set(k, r->uring->dev, r->uring->ino, !!(r->uring->flags & IT_F_BDEV));
	case CORR_AIO:
		return fn_key_set(k, r->aio.iocb.dev, r->aio.iocb.ino,
				  !!(r->aio.iocb.flags & IT_F_BDEV));
	default:
		return r->nr_blocks ? fn_blk_key(r->blocks[0], NULL, k) : 0;
	}
}

/* At most max entries (>= 1). NULL with errno. */
struct fn_cache *fn_new(size_t max);
void fn_free(struct fn_cache *c);
/* Told each key an eviction forgets (fn_put() on a full cache, fn_evict()). */
void fn_set_evict(struct fn_cache *c, void (*fn)(const struct fn_key *k, void *ctx), void *ctx);
/* Name k (a new entry, or new names for a known one). cfile NULL: none. 0 or -ENOMEM. */
int fn_put(struct fn_cache *c, const struct fn_key *k, const char *file, const char *cfile);
/* k's names, the entry made the most recently used; NULL: not known (a miss, counted). */
const struct fn_entry *fn_get(struct fn_cache *c, const struct fn_key *k);
/*
 * The entry fn_get_json() returned last, while it is still the most recently
 * used with its members kept: a cache's first member, so that the next
 * lookups of the same file need no call (requests come in runs of one file).
 * Read only, but for hits.
 */
struct fn_hot {
	struct fn_key key;
	const char *json; /* NULL: none (anything moved since) */
	size_t len, dlen;
	uint64_t hits; /* fn_stats()'s hits */
};

/* fn_get_json() of another key than the hot one, or with none hot. */
const char *fn_get_json_find(struct fn_cache *c, const struct fn_key *k, size_t *len, size_t *dlen);

/*
 * k's names as the members of a JSON object (docs/json.md), "file":"PATH"
 * and, where it has one, ,"container_file":"PATH", then
 * ,"file_devno":"MAJ:MIN" of k's dev (a block request's): escaped once, at
 * the first call after the names were put, and kept with the entry, so that
 * a JSON line adds them with one copy (jw_members_pad(): JW_PAD bytes
 * readable past *dlen). *len: the names' length, *dlen: with file_devno.
 * Otherwise as fn_get(): the entry made the most recently used, a miss
 * counted. NULL: not known, or out of memory.
 */
static inline __attribute__((always_inline)) const char *
fn_get_json(struct fn_cache *c, const struct fn_key *k, size_t *len, size_t *dlen)
{
	struct fn_hot *h = (struct fn_hot *)(void *)c;

	if (__builtin_expect(!h->json || !fn_key_eq(&h->key, k), 0))
		return fn_get_json_find(c, k, len, dlen);
	h->hits++;
	*len = h->len;
	*dlen = h->dlen;
	return h->json;
}
/* k's names without a use (no order change, not counted); NULL: not known. */
const struct fn_entry *fn_peek(const struct fn_cache *c, const struct fn_key *k);
/* Forget the n least recently used entries. Returns how many went. */
size_t fn_evict(struct fn_cache *c, size_t n);
/*
 * The keys the last lookups missed (the newest FN_MISSES, each once): the
 * daemon has the BPF side name them again. Returns how many went to out.
 */
#define FN_MISSES 64
size_t fn_take_misses(struct fn_cache *c, struct fn_key *out, size_t max);
size_t fn_count(const struct fn_cache *c);
size_t fn_max(const struct fn_cache *c);
void fn_stats(const struct fn_cache *c, struct fn_stats *st);

/*
 * fn_index: files numbered in the order they are first seen (0, 1, ...), for
 * tables kept per file (report --by file, top's file rows). Unbounded: its
 * users count what they read.
 */
struct fn_index;
struct fn_index *fn_index_new(void);
void fn_index_free(struct fn_index *x);
/* k's number, given on its first sight; -1: out of memory. */
long fn_index_of(struct fn_index *x, const struct fn_key *k);
/* The key of number i (< fn_index_count). */
const struct fn_key *fn_index_key(const struct fn_index *x, size_t i);
size_t fn_index_count(const struct fn_index *x);

#endif /* IT_RECORDS_FNAME_H */
