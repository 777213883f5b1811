/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uhist: the in-kernel log2 histograms (map "hists") built in user space from
 * the records instead, with the same keys and stages. The daemon does so
 * when every request leaves a record (no -m, no --sample: the BPF programs
 * then skip their histogram update), and `iotracer report` from a recording.
 * Pure user space.
 */
#ifndef IT_CORE_UHIST_H
#define IT_CORE_UHIST_H

#include <stddef.h>

#include "core/output.h"

#define UHIST_MAX 4096 /* keys, at most */

struct uhists {
	struct out_khist *v; /* grown on demand, up to UHIST_MAX */
	int nr, cap;
};

/* Room for entry n of h->v (may move h->v); 0 when there is none. */
int uhists_room(struct uhists *h, int n);

/* Add one record (struct it_syscall_rec, it_uring_rec or it_block_rec; others are ignored). */
void uhists_record(struct uhists *h, const void *data, size_t size);

void uhists_free(struct uhists *h);

#endif /* IT_CORE_UHIST_H */
