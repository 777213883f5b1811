/* SPDX-License-Identifier: GPL-2.0 */
/*
 * aggmap: the kernel's block aggregation (bpf/agg.bpf.h) as the daemon's
 * /metrics and top read it, from the loader's mappings (mapped.c).
 */
#ifndef IT_AGGMAP_H
#define IT_AGGMAP_H

struct agg_entry; /* records/agg.h */
struct it_loader;

/*
 * The aggregation summed over CPUs from its mappings, into *out (malloc'd, *nr
 * entries): no syscall. 0 or -errno.
 */
int it_loader_agg(const struct it_loader *ld, struct agg_entry **out, int *nr);

#endif /* IT_AGGMAP_H */
