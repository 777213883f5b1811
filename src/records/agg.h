/* SPDX-License-Identifier: GPL-2.0 */
/*
 * agg: the kernel's per-request aggregation of block requests (map "agg",
 * bpf/agg.bpf.h; struct it_agg_key/val in iotracer.h) read back and summed
 * over CPUs (it_loader_agg, load/aggmap.h: from the mappings), and the pure arithmetic on it
 * (agg.c: unit-tested).
 */
#ifndef IT_CORE_AGG_H
#define IT_CORE_AGG_H

#include <stdint.h>

#include "iotracer.h"
#include "records/container.h"

struct agg_entry {
	struct it_agg_key key;
	struct it_agg_val v; /* summed over CPUs */
};

/* /metrics' cgroup label values: the first AGG_MAX_LABELS seen, then "other". */
#define AGG_MAX_LABELS 64
#define AGG_LABEL_LEN 512 /* CG_PATH_MAX */

struct ct_names;

struct agg_labels {
	char name[AGG_MAX_LABELS][AGG_LABEL_LEN];
	/*
	 * --metrics-containers (names set: the node's names, agg_ct_labels): each
	 * label's container, pod and namespace as they were when it was first seen,
	 * kept, so that its series stay the same after the container or pod is gone
	 * and its names with it.
	 */
	char ct[AGG_MAX_LABELS][3][CT_NAME_MAX];
	struct ct_names *names;
	int ct_on;
	int nr;
};

/* One row of /metrics: a cgroup label (NULL: none asked), device and op. */
struct agg_row {
	const char *cgroup;
	const char (*ct)[CT_NAME_MAX]; /* the label's container, pod, namespace; NULL: none */
	uint32_t dev;
	uint8_t op;
	struct it_agg_val v;
};

/*
 * The container, pod and namespace labels of a cgroup path (docs/metrics.md): names
 * from the node (n; NULL: ids only), else the container id's first 12 digits and the
 * pod's UID; "" where the path names none (and for a NULL path: "other").
 */
void agg_ct_labels(struct ct_names *n, const char *path, char buf[3][CT_NAME_MAX]);

struct cg_cache;
/*
 * The label of cgroup id (its path cut to depth, interned in lb as agg_fold
 * does; "other" when its path is unknown or past AGG_MAX_LABELS). Called at a
 * cgroup's first request (IT_REC_CGROUP), while the cgroup and its container
 * still exist, it names them for good.
 */
const char *agg_label(uint64_t id, struct cg_cache *cg, int depth, struct agg_labels *lb);
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
