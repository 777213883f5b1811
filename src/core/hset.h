/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hset: a growable set of log2 histograms by key (struct out_khist), as the
 * daemon keeps them in user space: built from records when the BPF side
 * keeps none, carried over a re-attach (SIGHUP), and summed for a summary.
 * A few keys in practice; lookups are linear, newest first.
 */
#ifndef IT_HSET_H
#define IT_HSET_H

#include <stddef.h>

#include "core/output.h"

#define HSET_MAX 4096 /* keys; more are not counted */

struct hset {
	struct out_khist *v;
	int n, cap;
};

/* The entry of key k (created zeroed), or NULL when the set is full or out of memory. */
struct it_hist_val *hset_get(struct hset *s, const struct it_hist_key *k);
/* dst[key] += val. 0, or -ENOMEM/-E2BIG (not counted). */
int hset_add(struct hset *dst, const struct it_hist_key *k, const struct it_hist_val *val);
/* Every entry of src into dst. */
void hset_merge(struct hset *dst, const struct hset *src);
/*
 * Count one record (struct it_*_rec) into the histograms the BPF side keeps
 * when records are filtered: same keys, same stages.
 */
void hset_record(struct hset *s, const void *data, size_t size);
/* Forget the entries (keep the memory). */
void hset_clear(struct hset *s);
void hset_free(struct hset *s);

#endif /* IT_HSET_H */
