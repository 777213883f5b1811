// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of load/blkstale.h's test: which in-flight block entries the
 * daemon ends as missed, on synthetic entries around the age bound.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "iotracer.h"
#include "load/blkstale.h"
#include "unit.h"

#define S 1000000000ull

static void test_blk_stale_bound(void)
{
	struct it_bio_info v = { .live = 1, .d_ns = 10 * S };

	ASSERT_FALSE(blk_stale(&v, 10 * S + BLK_STALE_NS, BLK_STALE_NS), "exactly the age: kept");
	ASSERT_TRUE(blk_stale(&v, 10 * S + BLK_STALE_NS + 1, BLK_STALE_NS), "one ns older: stale");
	ASSERT_FALSE(blk_stale(&v, 5 * S, BLK_STALE_NS), "a clock before the age: kept");
}

static void test_blk_stale_states(void)
{
	struct it_bio_info v = { .live = 0, .d_ns = 1 };
	uint64_t late = 1000 * S;

	ASSERT_FALSE(blk_stale(&v, late, BLK_STALE_NS), "dead (completed): not counted again");
	v.live = 1;
	v.d_ns = 0;
	ASSERT_FALSE(blk_stale(&v, late, BLK_STALE_NS), "never issued (merged bio): not a request");
	v.d_ns = 1;
	ASSERT_TRUE(blk_stale(&v, late, BLK_STALE_NS), "issued long ago, live: missed");
}

/*
 * The walk on a real LRU hash shaped like `bios` (per-CPU LRU lists): of five
 * entries only the two issued > the age ago and live are ended, and end dead.
 */
static void test_blk_sweep_map(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = BPF_F_NO_COMMON_LRU);
	const uint64_t now = 1000 * S;
	const struct {
		uint64_t key, d_ns;
		uint8_t live;
		int stale;
	} e[] = {
		{ 0x1000, now - BLK_STALE_NS - S, 1, 1 }, /* missed */
		{ 0x2000, now - BLK_STALE_NS - 50 * S, 1, 1 }, /* missed long ago */
		{ 0x3000, now - S, 1, 0 }, /* in flight */
		{ 0x4000, now - BLK_STALE_NS - S, 0, 0 }, /* completed */
		{ 0x5000, 0, 1, 0 }, /* queued, never issued */
	};
	struct it_bio_info v;
	int fd, n = sizeof(e) / sizeof(e[0]);

	fd = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, "blkstale_t", sizeof(uint64_t), sizeof(v), 1024,
			    &mo);
	if (fd < 0) {
		SKIP("cannot create a BPF map (%s): needs root", strerror(errno));
		return;
	}
	for (int i = 0; i < n; i++) {
		memset(&v, 0, sizeof(v));
		v.d_ns = e[i].d_ns;
		v.live = e[i].live;
		v.q_ns = e[i].d_ns ? e[i].d_ns - 1000 : now - S;
		if (!ASSERT_OK(bpf_map_update_elem(fd, &e[i].key, &v, BPF_ANY), "fill"))
			goto out;
	}
	ASSERT_EQ(ld_blk_sweep_stale(fd, now, BLK_STALE_NS, 64), 2, "two ended");
	for (int i = 0; i < n; i++) {
		if (!ASSERT_OK(bpf_map_lookup_elem(fd, &e[i].key, &v), "entry kept"))
			goto out;
		ASSERT_EQ(v.live, e[i].stale ? 0 : e[i].live, "live after the sweep");
	}
	ASSERT_EQ(ld_blk_sweep_stale(fd, now, BLK_STALE_NS, 64), 0, "a second sweep ends none");
	ASSERT_EQ(ld_blk_sweep_stale(fd, now + 10 * BLK_STALE_NS, BLK_STALE_NS, 64), 1,
		  "the in-flight one, once old");
	ASSERT_EQ(ld_blk_sweep_stale(fd, now, BLK_STALE_NS, 0), 0, "no key walked: none");
out:
	close(fd);
}

int main(void)
{
	RUN_TEST(test_blk_stale_bound);
	RUN_TEST(test_blk_stale_states);
	RUN_TEST(test_blk_sweep_map);
	return unit_result();
}
