// SPDX-License-Identifier: GPL-2.0
/*
 * aggmap: read the "agg" map back, summed over CPUs (libbpf). See agg.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/agg.h"

int agg_read(int fd, struct agg_entry **out, int *nr)
{
	int ncpu = libbpf_num_possible_cpus(), n = 0, cap = 0, ret = 0;
	struct it_agg_key key, prev;
	struct it_agg_val *vals;
	struct agg_entry *e = NULL, *grown;
	int have_prev = 0;

	*out = NULL;
	*nr = 0;
	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	while (!bpf_map_get_next_key(fd, have_prev ? &prev : NULL, &key)) {
		prev = key;
		have_prev = 1;
		if (bpf_map_lookup_elem(fd, &key, vals))
			continue; /* deleted meanwhile */
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			grown = realloc(e, cap * sizeof(*e));
			if (!grown) {
				ret = -ENOMEM;
				break;
			}
			e = grown;
		}
		memset(&e[n], 0, sizeof(e[n]));
		e[n].key = key;
		for (int c = 0; c < ncpu; c++)
			agg_add(&e[n].v, &vals[c]);
		n++;
	}
	free(vals);
	if (ret) {
		free(e);
		return ret;
	}
	*out = e;
	*nr = n;
	return 0;
}
