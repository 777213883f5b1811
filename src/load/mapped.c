// SPDX-License-Identifier: GPL-2.0
/*
 * The maps the daemon reads from its own mappings, never through a map
 * syscall: the record buffers (their mapping here, their reading in
 * records/recbuf.c), the drop and event counters and the histograms
 * (include/iotracer.h struct it_cpu_counts, struct it_hist_idx). A map
 * syscall holds the CPU's bpf_prog_active; preempted there, it makes the
 * kernel skip the per-syscall tracepoints' programs on that CPU
 * (docs/hooks.md "The tax"): periodic reads (summaries, /metrics every
 * second) must not be such syscalls.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "iotracer.h"
#include "iotracer.skel.h"
#include "load/loader.h"
#include "load/loader_int.h"

/* A table's values at most: fewer indices on hosts of many CPUs. */
#define TABLE_BUDGET (32ull << 20)
#define TABLE_SHIFT_MIN 5

void *ld_map_mmap(const struct bpf_map *map, size_t *len)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t n = (size_t)bpf_map__value_size(map) * bpf_map__max_entries(map);
	void *p;

	*len = (n + page - 1) / page * page;
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(map), 0);
	return p == MAP_FAILED ? NULL : p;
}

/* log2 of a table's indices: max, fewer while ncpu values of size exceed the budget. */
static uint32_t table_shift(const struct it_loader *ld, uint32_t max, size_t size)
{
	uint32_t shift = max;

	while (shift > TABLE_SHIFT_MIN && (uint64_t)ld->ncpu * size << shift > TABLE_BUDGET)
		shift--;
	return shift;
}

/* A table's maps: the key's index and the claims (n), the keys (n), the values (ncpu << shift). */
static int table_size(const struct it_loader *ld, uint32_t shift, struct bpf_map *idx,
		      struct bpf_map *claim, struct bpf_map *keys, struct bpf_map *vals)
{
	uint32_t n = 1u << shift;
	int ret = bpf_map__set_max_entries(idx, n);

	if (!ret)
		ret = bpf_map__set_max_entries(claim, n);
	if (!ret)
		ret = bpf_map__set_max_entries(keys, n);
	if (!ret)
		ret = bpf_map__set_max_entries(vals, (uint32_t)ld->ncpu << shift);
	return ret;
}

/* log2 of the block aggregation's indices its keys want (ld_config.agg_keys). */
static uint32_t agg_want(const struct ld_config *o)
{
	if (o->agg_keys & IT_AGG_FILE)
		return 14; /* IT_AGG_KEYS: a row per file and owner */
	if (o->agg_keys & IT_AGG_CGROUP)
		return 12; /* per cgroup */
	return o->agg_keys ? 8 : 0; /* device x op; or nothing reads it */
}

/*
 * Before load: an entry of the counters per CPU; the histograms' indices
 * (IT_HIST_KEYS) and the block aggregation's (agg_want; one when nothing
 * reads it: those options need a restart) within the budget.
 */
int ld_mapped_size(struct it_loader *ld, const struct ld_config *o)
{
	struct iotracer_bpf *s = ld->skel;
	uint32_t agg_max = agg_want(o);
	int ret;

	ld->hist_shift = table_shift(ld, 8, sizeof(struct it_hist_val));
	ld->agg_shift = agg_max ? table_shift(ld, agg_max, sizeof(struct it_agg_val)) : 0;
	s->rodata->hist_shift = ld->hist_shift;
	s->rodata->agg_shift = ld->agg_shift;
	ret = bpf_map__set_max_entries(s->maps.cpu_counts, (uint32_t)ld->ncpu);
	if (!ret)
		ret = table_size(ld, ld->hist_shift, s->maps.hist_idx, s->maps.hist_claim,
				 s->maps.hist_keys, s->maps.hists);
	if (!ret)
		ret = table_size(ld, ld->agg_shift, s->maps.agg_idx, s->maps.agg_claim,
				 s->maps.agg_names, s->maps.agg);
	return ret;
}

/* After load. 0 or -errno. */
int ld_mapped_open(struct it_loader *ld)
{
	ld->counts_mem = ld_map_mmap(ld->skel->maps.cpu_counts, &ld->counts_len);
	ld->hkeys_mem = ld_map_mmap(ld->skel->maps.hist_keys, &ld->hkeys_len);
	ld->hists_mem = ld_map_mmap(ld->skel->maps.hists, &ld->hists_len);
	ld->anames_mem = ld_map_mmap(ld->skel->maps.agg_names, &ld->anames_len);
	ld->agg_mem = ld_map_mmap(ld->skel->maps.agg, &ld->agg_len);
	return ld->counts_mem && ld->hkeys_mem && ld->hists_mem && ld->anames_mem && ld->agg_mem ?
		       0 :
		       -errno;
}

void ld_mapped_close(struct it_loader *ld)
{
	if (ld->counts_mem)
		munmap(ld->counts_mem, ld->counts_len);
	if (ld->hkeys_mem)
		munmap(ld->hkeys_mem, ld->hkeys_len);
	if (ld->hists_mem)
		munmap(ld->hists_mem, ld->hists_len);
	if (ld->anames_mem)
		munmap(ld->anames_mem, ld->anames_len);
	if (ld->agg_mem)
		munmap(ld->agg_mem, ld->agg_len);
}

void it_loader_counts(const struct it_loader *ld, uint64_t *drops, uint64_t *counters)
{
	const volatile struct it_cpu_counts *c = ld->counts_mem;

	if (drops)
		memset(drops, 0, IT_NR_DROPS * sizeof(*drops));
	if (counters)
		memset(counters, 0, IT_NR_COUNTERS * sizeof(*counters));
	for (int cpu = 0; c && cpu < ld->ncpu; cpu++) {
		for (int i = 0; drops && i < IT_NR_DROPS; i++)
			drops[i] += c[cpu].drops[i];
		for (int i = 0; counters && i < IT_NR_COUNTERS; i++)
			counters[i] += c[cpu].counters[i];
	}
}

/* dst += src, slot by slot. */
static void hist_add(struct it_hist *dst, const volatile struct it_hist *src)
{
	for (int i = 0; i < IT_HIST_SLOTS; i++)
		dst->slots[i] += src->slots[i];
	dst->count += src->count;
	dst->sum_ns += src->sum_ns;
}

int it_loader_hists(const struct it_loader *ld, it_loader_hist_fn fn, void *ctx)
{
	const volatile struct it_hist_idx *k = ld->hkeys_mem;
	const volatile struct it_hist_val *v = ld->hists_mem;
	uint32_t n = 1u << ld->hist_shift;
	struct it_hist_key key;
	struct it_hist_val sum;
	int nr = 0;

	for (uint32_t i = 0; k && v && i < n; i++) {
		if (!__atomic_load_n(&k[i].used, __ATOMIC_ACQUIRE))
			continue;
		memcpy(&key, (const void *)&k[i].key, sizeof(key));
		memset(&sum, 0, sizeof(sum));
		for (int cpu = 0; cpu < ld->ncpu; cpu++)
			for (int s = 0; s < IT_ST_MAX; s++)
				hist_add(&sum.st[s],
					 &v[((uint32_t)cpu << ld->hist_shift) | i].st[s]);
		fn(ctx, &key, &sum);
		nr++;
	}
	return nr;
}
