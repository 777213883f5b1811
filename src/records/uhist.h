/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uhist: the in-kernel log2 histograms (map "hists") built in user space from
 * the records instead, with the same keys and stages. The daemon does so
 * when every request leaves a record (no -m, no --sample: the BPF programs
 * then skip their histogram update), and `iotracer report` from a recording.
 * The daemon also keeps its sums in them (the BPF side's + the built ones +
 * those carried over a re-attach).
 * Pure user space.
 */
#ifndef IT_CORE_UHIST_H
#define IT_CORE_UHIST_H

#include <stddef.h>

#include "records/output.h"

#define UHIST_MAX 4096 /* keys, at most */

struct uhists {
	struct out_khist *v; /* grown on demand, up to UHIST_MAX */
	int nr, cap;
};

/* Room for entry n of h->v (may move h->v); 0 when there is none. */
int uhists_room(struct uhists *h, int n);

/* Add one record (struct it_syscall_rec, it_uring_rec or it_block_rec; others are ignored). */
void uhists_record(struct uhists *h, const void *data, size_t size);

/*
 * A libaio request's io_submit..io_getevents latency (IT_HK_AIO): known only once
 * corr joined its submit and reap, so built here whatever -m and --sample say.
 */
void uhists_aio(struct uhists *h, const struct corr_req *r);
/*
 * Every record of a request, then its libaio latency, in the order the daemon most
 * often got them (block requests complete before their syscall returns): what
 * `iotracer report` builds from a recording.
 */
void uhists_request(struct uhists *h, const struct corr_req *r);

/*
 * As a set by key, for the daemon's sums across a reload (docs/config.md):
 * the entry of key k (created zeroed; NULL when full or out of memory),
 * dst[k] += val (0, -E2BIG or -ENOMEM), every entry of src into dst, and
 * forget the entries (keeping the memory).
 */
struct it_hist_val *uhists_get(struct uhists *h, const struct it_hist_key *k);
int uhists_add(struct uhists *dst, const struct it_hist_key *k, const struct it_hist_val *val);
void uhists_merge(struct uhists *dst, const struct uhists *src);
void uhists_clear(struct uhists *h);

void uhists_free(struct uhists *h);

#endif /* IT_CORE_UHIST_H */
