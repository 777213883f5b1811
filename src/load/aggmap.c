// SPDX-License-Identifier: GPL-2.0
/*
 * aggmap: the kernel's block aggregation (bpf/agg.bpf.h), summed over CPUs
 * from the daemon's mappings of its table (mapped.c): no syscall.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "load/aggmap.h"
#include "load/loader.h"
#include "records/agg.h"

int it_loader_agg(const struct it_loader *ld, struct agg_entry **out, int *nr)
{
	const volatile struct it_agg_idx *k = ld->anames_mem;
	const volatile struct it_agg_val *v = ld->agg_mem;
	uint32_t n = 1u << ld->agg_shift;
	struct agg_entry *e = NULL;
	struct it_agg_val one;
	int used = 0;

	*out = NULL;
	*nr = 0;
	if (!k || !v)
		return 0;
	for (uint32_t i = 0; i < n; i++)
		used += !!__atomic_load_n(&k[i].used, __ATOMIC_ACQUIRE);
	if (used && !(e = calloc(used, sizeof(*e))))
		return -ENOMEM;
	for (uint32_t i = 0; i < n && *nr < used; i++) {
		if (!__atomic_load_n(&k[i].used, __ATOMIC_ACQUIRE))
			continue;
		memcpy(&e[*nr].key, (const void *)&k[i].key, sizeof(e[*nr].key));
		for (int cpu = 0; cpu < ld->ncpu; cpu++) {
			memcpy(&one, (const void *)&v[((uint32_t)cpu << ld->agg_shift) | i],
			       sizeof(one));
			agg_add(&e[*nr].v, &one);
		}
		memcpy(e[*nr].v.comm, (const void *)k[i].comm, IT_COMM_LEN);
		(*nr)++;
	}
	*out = e;
	return 0;
}
