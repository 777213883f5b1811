// SPDX-License-Identifier: GPL-2.0
/* Ending block requests whose completion no program saw (blkstale.h). */
#include <errno.h>
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

long blk_sweep_stale(int fd, uint64_t now_ns, uint64_t age_ns, long max_keys)
{
	uint64_t key, next, *prev = NULL;
	struct it_bio_info v;
	long n = 0;

	while (max_keys-- > 0 && !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue; /* evicted or deleted meanwhile */
		if (blk_stale(&v, now_ns, age_ns))
			n += end_entry(fd, key, &v);
	}
	return max_keys < 0 || errno == ENOENT ? n : -errno;
}
