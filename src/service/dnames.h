/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dnames: the file names of a run (issue 38) between the BPF side and the
 * outputs. Name records (bpf/names.bpf.h) are resolved into paths
 * (records/fnres.h) and kept in a bounded cache (records/fname.h) that the
 * JSON lines, the recording, /metrics and `iotracer top` read. The BPF map
 * "named" holds what the cache holds: the cache forgets the least used
 * names before the map is full (at 7/8 of --file-names, down to 3/4), and
 * every name it forgets, or lacks when a record asks for it, is deleted from
 * the map and name_gen bumped, so the BPF side names those files again at
 * their next IO. Used by the daemon and by top.
 */
#ifndef IT_SERVICE_DNAMES_H
#define IT_SERVICE_DNAMES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "records/fname.h"
#include "records/fnres.h"

struct iotracer_bpf;
struct dnames;

struct dnames_stats {
	struct fn_stats cache;
	struct fnres_stats res;
	uint64_t forgotten; /* names deleted from the BPF map (evicted, or missed) */
};

/* max: --file-names (> 0). NULL with errno. */
struct dnames *dnames_new(int max);
void dnames_free(struct dnames *d);
/* The BPF side of a (re)load: its map "named" and name_gen. */
void dnames_attach(struct dnames *d, struct iotracer_bpf *skel);
/* A record of the BPF side: 1 when it was a name record (taken), else 0. */
int dnames_record(struct dnames *d, const void *data, size_t size);
/* Once a drain: forget down to the low mark, and have the misses named again. */
void dnames_tick(struct dnames *d);
struct fn_cache *dnames_cache(struct dnames *d);
void dnames_stats(const struct dnames *d, struct dnames_stats *st);

#endif /* IT_SERVICE_DNAMES_H */
