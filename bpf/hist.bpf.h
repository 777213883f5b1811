/* SPDX-License-Identifier: GPL-2.0 */
/*
 * In-kernel latency histograms: per-CPU log2(ns) slots per (dev, layer, op,
 * kind), an index given to a key on its first use (maps.bpf.h: hist_idx,
 * hist_keys, hists; the daemon reads the values from its mappings). Only
 * updated when records are filtered (kern_hists, config.bpf.h); otherwise the
 * daemon builds the same histograms from the records.
 */
#ifndef IT_HIST_BPF_H
#define IT_HIST_BPF_H

#include "maps.bpf.h"
#include "record.bpf.h"
#include "core_fixes.bpf.h"
#include "table.bpf.h"

static __always_inline u32 it_log2(u64 v)
{
	u32 r = 0, shift;

	shift = (v > 0xffffffffULL) << 5;
	v >>= shift;
	r |= shift;
	shift = (v > 0xffff) << 4;
	v >>= shift;
	r |= shift;
	shift = (v > 0xff) << 3;
	v >>= shift;
	r |= shift;
	shift = (v > 0xf) << 2;
	v >>= shift;
	r |= shift;
	shift = (v > 0x3) << 1;
	v >>= shift;
	r |= shift;
	r |= (v >> 1);
	return r;
}

static __always_inline void it_hist_slot(struct it_hist *h, u64 ns)
{
	u32 slot = it_verifier_mask(it_log2(ns), IT_HIST_SLOTS - 1);

	/* this CPU's copy: plain adds (a nested update on this CPU may be lost) */
	h->slots[slot]++;
	h->count++;
	h->sum_ns += ns;
}

static __always_inline struct it_hist_val *it_hist_get(u32 dev, u32 layer, u32 op, u32 kind)
{
	struct it_hist_key key = { .dev = dev, .layer = layer, .op = op, .kind = kind };
	u32 mask = (1u << hist_shift) - 1, idx, h;
	struct it_hist_val *v = NULL;
	struct it_hist_idx *k;
	int got;

	h = (dev * 0x9e3779b1u) ^ (layer << 16 | op << 8 | kind);
	got = it_tab_index(&hist_idx, &hist_claim, &key, h, mask, &idx);
	if (got < 0)
		goto out;
	if (got) {
		k = bpf_map_lookup_elem(&hist_keys, &idx);
		if (!k)
			goto out;
		k->key = key;
		it_tab_publish(&k->used);
	}
	idx |= bpf_get_smp_processor_id() << hist_shift;
	v = bpf_map_lookup_elem(&hists, &idx);
out:
	if (!v)
		it_drop(layer, IT_DROP_HIST);
	return v;
}

#endif /* IT_HIST_BPF_H */
