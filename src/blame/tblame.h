/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tblame: `iotracer top --blame` (docs/top.md "Blame", docs/blame.md). Every
 * block record goes to the blame engine (blame.h, by process, horizon
 * 1 s); each split adds to two matrices, the interval's and the run's, keyed
 * by the victim (process, cgroup, file, device, op) and its culprits
 * (process, cgroup). A row of top then asks for its top culprit under top's grouping
 * of the moment (process, cgroup, container, pod: a function of the owner),
 * so `c` regroups what was summed, with no second engine: a culprit in the
 * row's own group is self, the rest others, summed per group.
 *
 * Pure user space. Not thread safe.
 */
#ifndef IT_TOP_TBLAME_H
#define IT_TOP_TBLAME_H

#include <stdint.h>

#include "iotracer.h"
#include "blame/blame.h"

/* Culprits kept per victim and matrix; past it their wait is summed unnamed (other_ns). */
#define TB_MAX_CUL 256

struct tblame;

/*
 * An owner's row key under top's grouping: its tgid, cgroup id, its container's
 * cgroup id, or (rows per file) a victim's file (file: the caller's id of the
 * victim's file, tblame_block(); 0 for a culprit, which is an owner only).
 */
typedef uint64_t (*tblame_group_fn)(const struct blame_owner *o, uint64_t file, void *ctx);

/* A row's top culprit. */
struct tblame_top {
	struct blame_owner who; /* the first owner of the culprit's group seen */
	double ns; /* the culprit group's share of the row's wait */
	double blamed_ns; /* the row's blamed wait: self + others */
	int found; /* 0: no culprit (nothing but self, or no split yet) */
};

/* NULL: no memory. */
struct tblame *tblame_new(void);
/*
 * One completed block request (the dirtier owns a page-cache write) of file
 * (the caller's id, handed to the group function; 0: none). 0 or -ENOMEM.
 */
int tblame_block(struct tblame *t, const struct it_block_rec *b, uint64_t file);
/* The records' clock is at least now: split what the horizon passed. */
void tblame_tick(struct tblame *t, uint64_t now);
/* The stream ended: split every request left, with what arrived. */
void tblame_flush(struct tblame *t);
/* A new interval: its matrix starts empty (the run's keeps adding). */
void tblame_next(struct tblame *t);
/*
 * The top culprit of a row: the victims on dev with op whose group(owner) is
 * key, over the interval's splits (total 0) or the run's. 0, or -ENOMEM.
 */
int tblame_row(struct tblame *t, int total, uint64_t key, uint32_t dev, uint8_t op,
	       tblame_group_fn group, void *ctx, struct tblame_top *out);
const struct blame_stats *tblame_stats(const struct tblame *t);
/* Splits whose sums could not be kept (no memory): counted, never guessed. */
uint64_t tblame_lost(const struct tblame *t);
void tblame_free(struct tblame *t);

#endif /* IT_TOP_TBLAME_H */
