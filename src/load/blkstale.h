/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Block requests whose completion no program saw: their entries in `bios`
 * stay live (issued, not completed). Ended here once they are older than any
 * request can be in flight, so the in-flight gauge does not grow with them.
 */
#ifndef IT_BLKSTALE_H
#define IT_BLKSTALE_H

#include <stdint.h>
#include "iotracer.h"

/* Older than this since issue: the completion was missed (the kernel's timeout is 30 s). */
#define BLK_STALE_NS (120ull * 1000000000ull)

/* An entry issued before now_ns - age_ns and still live: its completion was missed. */
static inline int blk_stale(const struct it_bio_info *v, uint64_t now_ns, uint64_t age_ns)
{
	return v->live && v->d_ns && now_ns > age_ns && v->d_ns < now_ns - age_ns;
}

/*
 * End the stale entries of the `bios` map fd (live = 0, written back only if
 * unchanged since read), read in batches of keys and values (one system call
 * for 32 entries: 4 KiB of stack) up to about max_keys keys; returns how many, or -errno.
 */
long ld_blk_sweep_stale(int fd, uint64_t now_ns, uint64_t age_ns, long max_keys);

#endif /* IT_BLKSTALE_H */
