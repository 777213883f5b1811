/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tables the daemon reads from its mappings (src/load/mapped.c), without a
 * map syscall: a key's index in a hash (one lookup per update), the values
 * per CPU in an BPF_F_MMAPABLE array at cpu << shift | index, and each index's
 * key in another such array, published once its index is taken. The
 * histograms (hist.bpf.h) and the block aggregation (agg.bpf.h) are such
 * tables. A map syscall holds the CPU's bpf_prog_active, and preempted there
 * makes the kernel skip the per-syscall tracepoints' programs on that CPU
 * (docs/hooks.md "The tax"): the daemon's periodic reads must not be any.
 */
#ifndef IT_TABLE_BPF_H
#define IT_TABLE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

/* Indices a new key tries, from its hash on: more of them taken is a full table. */
#define IT_TAB_PROBES 16

/*
 * The index of key (hash h) in a table of mask + 1 indices: found in idx_map,
 * or the first free one from h on, claimed with one BPF_NOEXIST insert into
 * claim_map (a CPU claiming it at once fails; no fetching atomics: 5.10 has
 * this too) and then given to the key (the same key given an index at once
 * by another CPU: that one is taken, ours given back). 0: found, 1: new, the
 * caller publishes the key (it_tab_publish); -1: the table is full.
 */
static __always_inline int it_tab_index(void *idx_map, void *claim_map, const void *key, u32 h,
					u32 mask, u32 *idx)
{
	u32 *got = bpf_map_lookup_elem(idx_map, key), c, one = 1;

	if (got) {
		*idx = *got & mask;
		return 0;
	}
	for (int i = 0; i < IT_TAB_PROBES; i++) {
		c = (h + i) & mask;
		if (bpf_map_update_elem(claim_map, &c, &one, BPF_NOEXIST))
			continue;
		if (bpf_map_update_elem(idx_map, key, &c, BPF_NOEXIST)) {
			bpf_map_delete_elem(claim_map, &c);
			got = bpf_map_lookup_elem(idx_map, key);
			if (!got)
				return -1;
			*idx = *got & mask;
			return 0;
		}
		*idx = c;
		return 1;
	}
	return -1;
}

/*
 * An index's key is written: now mark it used, after it (x86 keeps the
 * stores' order; elsewhere an atomic add orders them, as it_submit's head).
 */
static __always_inline void it_tab_publish(u32 *used)
{
#if defined(__TARGET_ARCH_x86)
	asm volatile("" ::: "memory");
	*(volatile u32 *)used = 1;
#else
	__sync_fetch_and_add(used, 1);
#endif
}

#endif /* IT_TABLE_BPF_H */
