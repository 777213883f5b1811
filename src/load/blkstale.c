// SPDX-License-Identifier: GPL-2.0
/* Ending block requests whose completion no program saw (blkstale.h). */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <bpf/bpf.h>
#include "blkstale.h"

/*
 * Ends one entry: written back dead only when it still holds the request read
 * (the BPF side may have recycled the address for a new bio meanwhile). A
 * recycle between this check and the write is not excluded; that request would
 * then count as missed too, never silently.
 */
static int end_entry(int fd, uint64_t key, struct it_bio_info *v)
{
	struct it_bio_info now;

	if (bpf_map_lookup_elem(fd, &key, &now) || memcmp(&now, v, sizeof(now)))
		return 0;
	now.live = 0;
	return !bpf_map_update_elem(fd, &key, &now, BPF_EXIST);
}

#define BATCH 32

/* One batch of keys and values: the stale ones ended; n counts them. */
static void sweep_batch(int fd, const uint64_t *keys, struct it_bio_info *vals, uint32_t nr,
			uint64_t now_ns, uint64_t age_ns, long *n)
{
	for (uint32_t i = 0; i < nr; i++)
		if (blk_stale(&vals[i], now_ns, age_ns))
			*n += end_entry(fd, keys[i], &vals[i]);
}

long ld_blk_sweep_stale(int fd, uint64_t now_ns, uint64_t age_ns, long max_keys)
{
	uint64_t keys[BATCH];
	struct it_bio_info vals[BATCH];
	uint32_t token = 0, nr;
	long n = 0;
	int err;

	for (void *in = NULL; max_keys > 0; in = &token, max_keys -= nr) {
		nr = BATCH;
		err = bpf_map_lookup_batch(fd, in, &token, keys, vals, &nr, NULL);
		if (err && errno != ENOENT)
			return -errno;
		sweep_batch(fd, keys, vals, nr, now_ns, age_ns, &n);
		if (err) /* ENOENT: the last batch */
			break;
	}
	return n;
}
