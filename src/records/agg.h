/* SPDX-License-Identifier: GPL-2.0 */
/*
 * agg: the kernel's per-request aggregation of block requests (map "agg",
 * bpf/agg.bpf.h; struct it_agg_key/val in iotracer.h) read back and summed
 * over CPUs (it_loader_agg, load/aggmap.c: from the mappings), and the pure arithmetic on it
 * (agg.c: unit-tested).
 */
#ifndef IT_CORE_AGG_H
#define IT_CORE_AGG_H

#include <stdint.h>

#include "iotracer.h"

struct agg_entry {
	struct it_agg_key key;
	struct it_agg_val v; /* summed over CPUs */
};

/* /metrics' cgroup label values: the first AGG_MAX_LABELS seen, then "other". */
#define AGG_MAX_LABELS 64
#define AGG_LABEL_LEN 512 /* CG_PATH_MAX */

struct agg_labels {
	char name[AGG_MAX_LABELS][AGG_LABEL_LEN];
	int nr;
};

/* One row of /metrics: a cgroup label (NULL: none asked), device and op. */
struct agg_row {
	const char *cgroup;
	uint32_t dev;
	uint8_t op;
	struct it_agg_val v;
};

struct cg_cache;
/*
 * Fold entries into rows (room for nr): by device and op, and with depth >= 0
 * by the cgroup path cut to depth components (records/cgroup.h cg_truncate),
 * interned in lb (kept across calls, so a label keeps its value); a cgroup
 * past AGG_MAX_LABELS or of unknown path counts under "other". Returns the
 * number of rows.
 */
int agg_fold(const struct agg_entry *e, int nr, struct cg_cache *cg, int depth,
	     struct agg_labels *lb, struct agg_row *rows);

/* dst += src (counts, sums, histograms; comm from src when dst has none). */
void agg_add(struct it_agg_val *dst, const struct it_agg_val *src);

/* p-quantile (0..1) of a log2 latency histogram in ns: the upper edge of its slot. */
uint64_t agg_lat_quantile(const struct it_agg_val *v, double p);

#endif /* IT_CORE_AGG_H */
