// SPDX-License-Identifier: GPL-2.0
/*
 * agg: sums and quantiles of the kernel's block aggregation. See agg.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "records/agg.h"
#include "records/cgroup.h"

void agg_add(struct it_agg_val *dst, const struct it_agg_val *src)
{
	dst->count += src->count;
	dst->bytes += src->bytes;
	dst->q2c_ns += src->q2c_ns;
	dst->q2d_ns += src->q2d_ns;
	dst->d2c_ns += src->d2c_ns;
	dst->nr_d += src->nr_d;
	for (int k = 0; k < IT_SIZE_SLOTS; k++)
		dst->size[k] += src->size[k];
	for (int k = 0; k < IT_LAT_SLOTS; k++)
		dst->lat[k] += src->lat[k];
	if (!dst->comm[0])
		memcpy(dst->comm, src->comm, sizeof(dst->comm));
}

uint64_t agg_lat_quantile(const struct it_agg_val *v, double p)
{
	uint64_t total = 0, cum = 0;

	for (int k = 0; k < IT_LAT_SLOTS; k++)
		total += v->lat[k];
	if (!total)
		return 0;
	for (int k = 0; k < IT_LAT_SLOTS; k++) {
		cum += v->lat[k];
		if ((double)cum >= p * (double)total)
			return (2ull << k) - 1; /* slot k: [2^k, 2^(k+1)) ns */
	}
	return (2ull << (IT_LAT_SLOTS - 1)) - 1;
}

static const char other[] = "other";

void agg_ct_labels(struct ct_names *n, const char *path, char buf[3][CT_NAME_MAX])
{
	struct ct_full ct;

	buf[0][0] = buf[1][0] = buf[2][0] = '\0';
	if (!path)
		return;
	ct_describe(n, path, &ct);
	if (ct.container || ct.ci.name[0])
		snprintf(buf[0], CT_NAME_MAX, "%s", ct.container ? ct.container : ct.ci.name);
	else
		snprintf(buf[0], CT_NAME_MAX, "%.12s", ct.ci.id);
	snprintf(buf[1], CT_NAME_MAX, "%s", ct.pod ? ct.pod : ct.ci.pod_uid);
	snprintf(buf[2], CT_NAME_MAX, "%s", ct.pod_ns ? ct.pod_ns : "");
}

/* name's index in lb, added when new (its container names with it); -1: past the cap. */
static int intern(struct agg_labels *lb, const char *name)
{
	for (int i = 0; i < lb->nr; i++)
		if (!strcmp(lb->name[i], name))
			return i;
	if (lb->nr >= AGG_MAX_LABELS)
		return -1;
	snprintf(lb->name[lb->nr], AGG_LABEL_LEN, "%s", name);
	if (lb->ct_on)
		agg_ct_labels(lb->names, name, lb->ct[lb->nr]);
	return lb->nr++;
}

static int label_of(uint64_t id, struct cg_cache *cg, int depth, struct agg_labels *lb)
{
	const char *path = cg_path(cg, id);
	char cut[AGG_LABEL_LEN];

	if (!path)
		return -1;
	cg_truncate(path, depth, cut, sizeof(cut));
	return intern(lb, cut);
}

const char *agg_label(uint64_t id, struct cg_cache *cg, int depth, struct agg_labels *lb)
{
	int i = label_of(id, cg, depth, lb);

	return i < 0 ? other : lb->name[i];
}

int agg_fold(const struct agg_entry *e, int nr, struct cg_cache *cg, int depth,
	     struct agg_labels *lb, struct agg_row *rows)
{
	int n = 0, j;

	for (int i = 0; i < nr; i++) {
		int k = depth >= 0 ? label_of(e[i].key.cgroup_id, cg, depth, lb) : -1;
		const char *label = depth < 0 ? NULL : k < 0 ? other : lb->name[k];

		for (j = 0; j < n; j++)
			if (rows[j].cgroup == label && rows[j].dev == e[i].key.dev &&
			    rows[j].op == e[i].key.op)
				break;
		if (j == n) {
			memset(&rows[n], 0, sizeof(rows[n]));
			rows[n].cgroup = label;
			rows[n].ct = k >= 0 && lb->ct_on ? lb->ct[k] : NULL;
			rows[n].dev = e[i].key.dev;
			rows[n].op = e[i].key.op;
			n++;
		}
		agg_add(&rows[j].v, &e[i].v);
	}
	return n;
}
