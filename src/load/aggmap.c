// SPDX-License-Identifier: GPL-2.0
/*
 * aggmap: read the "agg" map back, summed over CPUs (libbpf). See agg.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "records/agg.h"

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

/* Sum a per-CPU array map of u64 counters into out[0..n). */
void agg_percpu_u64(const struct bpf_map *map, uint64_t *out, uint32_t n)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *vals = calloc(ncpu > 0 ? ncpu : 1, sizeof(uint64_t));

	memset(out, 0, n * sizeof(*out));
	for (uint32_t i = 0; vals && ncpu > 0 && i < n; i++) {
		if (bpf_map__lookup_elem(map, &i, sizeof(i), vals, ncpu * sizeof(uint64_t), 0))
			continue;
		for (int c = 0; c < ncpu; c++)
			out[i] += vals[c];
	}
	free(vals);
}
