// SPDX-License-Identifier: GPL-2.0
/*
 * How the block records of one request stack up (src/records/stack.c): which
 * record is a member's upper bio, how it got there, the chain of devices and
 * the piece's sector on the upper device. The oracle is the stacks written
 * here by hand, as the kernel makes them (docs/hooks.md, "The stack layer").
 */
#include <string.h>

#include "unit.h"
#include "iotracer.h"
#include "records/stack.h"

#define DM0 IT_MKDEV(253, 0)
#define DM1 IT_MKDEV(253, 1)
#define MD5 IT_MKDEV(9, 5)
#define SDA IT_MKDEV(8, 0)
#define SDB IT_MKDEV(8, 16)
#define VDA IT_MKDEV(254, 0)
#define VDA1 IT_MKDEV(254, 1)

static struct it_block_rec recs[8];
static struct corr_req req;

static struct it_block_rec *upper(int i, uint32_t dev, uint64_t sector, uint32_t bytes, uint64_t q,
				  uint64_t c)
{
	struct it_block_rec *b = &recs[i];

	memset(b, 0, sizeof(*b));
	b->dev = dev;
	b->sector = sector;
	b->bytes = bytes;
	b->q_ns = q;
	b->c_ns = c;
	b->flags = IT_F_UPPER;
	req.blocks[i] = b;
	if (req.nr_blocks <= i)
		req.nr_blocks = i + 1;
	return b;
}

static struct it_block_rec *member(int i, uint32_t dev, uint64_t sector, uint32_t bytes,
				   uint32_t up_dev, uint32_t up_off, uint64_t q, uint64_t c)
{
	struct it_block_rec *b = upper(i, dev, sector, bytes, q, c);

	b->flags = 0;
	b->up_dev = up_dev;
	b->up_off = up_off;
	return b;
}

static void reset(void)
{
	memset(&req, 0, sizeof(req));
	req.kind = CORR_SYSCALL;
}

/* dm-linear: one upper bio, its piece at the start and one further in (a split) */
static void test_stack_remap_split(void)
{
	struct stk_info si;

	reset();
	upper(0, DM0, 1000, 16384, 100, 900);
	member(1, SDA, 5000, 8192, DM0, 0, 200, 800);
	member(2, VDA, 16, 8192, DM0, 16, 210, 850);
	stk_describe(&req, 0, &si);
	ASSERT_EQ(si.how, STK_NONE, "the upper bio is no member");
	ASSERT_EQ(si.nr_chain, 1, "its chain is itself");
	stk_describe(&req, 1, &si);
	ASSERT_EQ(si.upper, 0, "first piece: its upper bio");
	ASSERT_EQ(si.how, STK_REMAP, "at the start: remap");
	ASSERT_EQ(stk_upper_sector(&req, 1, &si, UINT64_MAX), 1000, "upper sector");
	stk_describe(&req, 2, &si);
	ASSERT_EQ(si.how, STK_SPLIT, "further in: split");
	ASSERT_EQ(stk_upper_sector(&req, 2, &si, UINT64_MAX), 1016, "upper sector + offset");
	ASSERT_EQ(si.nr_chain, 2, "dm-0 -> vda");
	ASSERT_EQ(si.chain[0], DM0, "top");
	ASSERT_EQ(si.chain[1], VDA, "bottom");
}

/* raid1 write: the same piece on two disks; an empty flush sent to both */
static void test_stack_mirror_flush(void)
{
	struct stk_info si;

	reset();
	upper(0, MD5, 64, 4096, 100, 900);
	member(1, SDA, 2112, 4096, MD5, 0, 200, 800);
	member(2, SDB, 2112, 4096, MD5, 0, 200, 820);
	stk_describe(&req, 1, &si);
	ASSERT_EQ(si.how, STK_REMAP, "first mirror");
	stk_describe(&req, 2, &si);
	ASSERT_EQ(si.how, STK_MIRROR, "second mirror");
	reset();
	upper(0, DM0, 0, 0, 100, 900);
	member(1, SDA, UINT64_MAX, 0, DM0, 0, 200, 800);
	stk_describe(&req, 1, &si);
	ASSERT_EQ(si.how, STK_FLUSH, "an empty piece: flush");
}

/* LVM on dm-crypt: dm-1 -> dm-0 -> vda, the middle bio both upper and member */
static void test_stack_nested(void)
{
	struct stk_info si;

	reset();
	upper(0, DM1, 800, 4096, 100, 1000);
	recs[1] = *upper(1, DM0, 300, 4096, 150, 950);
	recs[1].up_dev = DM1;
	recs[1].up_off = 0;
	member(2, VDA, 32768 + 300, 4096, DM0, 0, 300, 700);
	stk_describe(&req, 2, &si);
	ASSERT_EQ(si.upper, 1, "vda's upper: the dm-0 bio");
	ASSERT_EQ(si.nr_chain, 3, "three levels");
	ASSERT_EQ(si.chain[0], DM1, "dm-1 on top");
	ASSERT_EQ(si.chain[1], DM0, "dm-0");
	ASSERT_EQ(si.chain[2], VDA, "vda");
	stk_describe(&req, 1, &si);
	ASSERT_EQ(si.upper, 0, "dm-0's upper: the dm-1 bio");
	ASSERT_EQ(si.how, STK_REMAP, "remap");
	/* an upper record out of the member's time is not its upper bio */
	recs[1].c_ns = 600;
	stk_describe(&req, 2, &si);
	ASSERT_EQ(si.upper, -1, "completed before its member: not it");
}

/* a partition, a raid5 stripe's parity, a piece whose upper bio was not found */
static void test_stack_partition_stripe_lost(void)
{
	struct stk_info si;

	reset();
	member(0, VDA, 2048 + 80, 4096, VDA1, IT_STK_PART, 100, 200);
	stk_describe(&req, 0, &si);
	ASSERT_EQ(si.how, STK_PARTITION, "partition");
	ASSERT_EQ(stk_upper_sector(&req, 0, &si, 2048), 80, "sector - the partition's start");
	ASSERT_EQ(stk_upper_sector(&req, 0, &si, UINT64_MAX), UINT64_MAX, "start unknown");
	ASSERT_EQ(si.nr_chain, 2, "vda1 -> vda");
	reset();
	upper(0, MD5, 64, 4096, 100, 900);
	member(1, SDB, 2112, 4096, MD5, IT_STK_STRIPE, 300, 700);
	stk_describe(&req, 1, &si);
	ASSERT_EQ(si.how, STK_STRIPE, "parity: stripe");
	ASSERT_EQ(si.upper, 0, "its upper bio, whatever the offset");
	ASSERT_EQ(stk_upper_sector(&req, 1, &si, UINT64_MAX), UINT64_MAX, "no sector");
	recs[1].flags |= IT_F_STK_LOST;
	recs[1].up_off = 0;
	stk_describe(&req, 1, &si);
	ASSERT_EQ(si.how, STK_LOST, "lost");
	ASSERT_STREQ(stk_how_name(STK_LOST), "lost", "name");
	ASSERT_STREQ(stk_how_name(STK_STRIPE), "stripe", "name");
	ASSERT_STREQ(stk_how_name((enum stk_how)99), "?", "out of range");
}

int main(void)
{
	RUN_TEST(test_stack_remap_split);
	RUN_TEST(test_stack_mirror_flush);
	RUN_TEST(test_stack_nested);
	RUN_TEST(test_stack_partition_stripe_lost);
	return unit_result();
}
