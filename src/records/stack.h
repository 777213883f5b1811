/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stack: how the block records of one request stack up (bpf/stack.bpf.h,
 * docs/json.md "block[].stack"): which record is the upper bio a member
 * request was remapped from, how it got there (a remap, a split piece, a
 * mirror, a partition's request) and the chain of devices from the top.
 * Pure user space: the records alone.
 */
#ifndef IT_RECORDS_STACK_H
#define IT_RECORDS_STACK_H

#include <stdint.h>

#include "iotracer.h"
#include "records/corr.h"

/* Devices in a chain, the top one first (LVM on dm-crypt on a partition: 4). */
#define STK_MAX_LEVELS 6

enum stk_how {
	STK_NONE = 0, /* not a member: a disk's own request, or the top of a stack */
	STK_REMAP, /* the upper bio's first piece at its start (dm-linear, dm-crypt, raid1 read) */
	STK_SPLIT, /* a piece from further into the upper bio */
	STK_MIRROR, /* the same piece as another member's, on another device (raid1 write) */
	STK_PARTITION, /* a partition's request on its disk */
	STK_FLUSH, /* an empty flush, sent to every device below the upper one */
	STK_STRIPE, /* a raid5 stripe's IO for the upper bio: parity, or a read to compute it */
	STK_LOST, /* remapped from up_dev, whose bio iotracer had not followed: owner unknown */
};

struct stk_info {
	int upper; /* index in r->blocks of the upper bio's record; -1: not in this request */
	enum stk_how how;
	int nr_chain;
	uint32_t chain[STK_MAX_LEVELS]; /* devices from the top down to the record's own */
};

/* Is the record a member (remapped from an upper device) or an upper bio? */
static inline int stk_is_member(const struct it_block_rec *b)
{
	return b->up_dev != 0;
}

static inline int stk_is_upper(const struct it_block_rec *b)
{
	return !!(b->flags & IT_F_UPPER);
}

/* What r->blocks[i] is in its stack. */
void stk_describe(const struct corr_req *r, int i, struct stk_info *si);
const char *stk_how_name(enum stk_how how);
/*
 * The sector on the upper device of member r->blocks[i] (si from
 * stk_describe); part_start: the partition's start sector for a partition's
 * request (UINT64_MAX: unknown). UINT64_MAX when not known.
 */
uint64_t stk_upper_sector(const struct corr_req *r, int i, const struct stk_info *si,
			  uint64_t part_start);

#endif /* IT_RECORDS_STACK_H */
