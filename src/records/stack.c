// SPDX-License-Identifier: GPL-2.0
/* How the block records of one request stack up (stack.h). */
#include <stdint.h>

#include "records/stack.h"

static const char *const how_names[] = {
	[STK_NONE] = "none",	 [STK_REMAP] = "remap",		[STK_SPLIT] = "split",
	[STK_MIRROR] = "mirror", [STK_PARTITION] = "partition", [STK_FLUSH] = "flush",
	[STK_STRIPE] = "stripe", [STK_LOST] = "lost",
};

const char *stk_how_name(enum stk_how how)
{
	return how <= STK_LOST ? how_names[how] : "?";
}

/*
 * The upper bio member b came from, among the request's records: an upper
 * record on b's upper device, in flight while b was (queued before it,
 * completed after it), whose bytes hold b's offset.
 */
static int stk_find_upper(const struct corr_req *r, const struct it_block_rec *b)
{
	for (int j = 0; j < r->nr_blocks; j++) {
		const struct it_block_rec *u = r->blocks[j];

		if (u == b || !stk_is_upper(u) || u->dev != b->up_dev)
			continue;
		if (u->q_ns > b->q_ns || u->c_ns < b->c_ns)
			continue;
		if (b->up_off < IT_STK_FAR && (uint64_t)b->up_off * 512 >= u->bytes && u->bytes)
			continue;
		return j;
	}
	return -1;
}

/* An earlier member of the same upper bio at the same offset on another device. */
static int stk_mirrored(const struct corr_req *r, int i, int upper)
{
	const struct it_block_rec *b = r->blocks[i];

	for (int j = 0; j < i; j++) {
		const struct it_block_rec *m = r->blocks[j];

		if (m->up_dev == b->up_dev && m->up_off == b->up_off && m->dev != b->dev &&
		    !(m->flags & IT_F_STK_LOST) && stk_find_upper(r, m) == upper)
			return 1;
	}
	return 0;
}

static enum stk_how stk_how_of(const struct corr_req *r, int i, int upper)
{
	const struct it_block_rec *b = r->blocks[i];

	if (!stk_is_member(b))
		return STK_NONE;
	if (b->flags & IT_F_STK_LOST)
		return STK_LOST;
	if (b->up_off == IT_STK_PART)
		return STK_PARTITION;
	if (b->up_off == IT_STK_STRIPE)
		return STK_STRIPE;
	if (b->up_off == IT_STK_FAR)
		return STK_SPLIT; /* further in than the record says: no sector */
	if (!b->bytes)
		return STK_FLUSH;
	if (upper >= 0 && stk_mirrored(r, i, upper))
		return STK_MIRROR;
	return b->up_off ? STK_SPLIT : STK_REMAP;
}

void stk_describe(const struct corr_req *r, int i, struct stk_info *si)
{
	const struct it_block_rec *b = r->blocks[i];
	uint32_t up[STK_MAX_LEVELS];
	int n = 0, cur = i;

	si->upper = stk_is_member(b) && b->up_off != IT_STK_PART ? stk_find_upper(r, b) : -1;
	si->how = stk_how_of(r, i, si->upper);
	/* up the stack: each level's upper device, through the upper records found */
	while (n < STK_MAX_LEVELS - 1 && cur >= 0 && stk_is_member(r->blocks[cur])) {
		const struct it_block_rec *c = r->blocks[cur];

		up[n++] = c->up_dev;
		cur = c->up_off == IT_STK_PART ? -1 : stk_find_upper(r, c);
	}
	si->nr_chain = 0;
	while (n > 0)
		si->chain[si->nr_chain++] = up[--n];
	si->chain[si->nr_chain++] = b->dev;
}

uint64_t stk_upper_sector(const struct corr_req *r, int i, const struct stk_info *si,
			  uint64_t part_start)
{
	const struct it_block_rec *b = r->blocks[i];

	if (si->how == STK_PARTITION)
		return part_start != UINT64_MAX && b->sector >= part_start &&
				       b->sector != UINT64_MAX ?
			       b->sector - part_start :
			       UINT64_MAX;
	if (si->upper < 0 || si->how == STK_LOST || si->how == STK_STRIPE ||
	    b->up_off == IT_STK_FAR)
		return UINT64_MAX;
	return r->blocks[si->upper]->sector + b->up_off;
}
