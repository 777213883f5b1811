// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of src/mode/gpamap.c: a VM's GPA -> HVA map learned from
 * samples, with the layouts QEMU gives guests: x86's pc.ram (one mapping,
 * below 4 GiB at one offset, above at another), arm64's virt (RAM at 1 GiB),
 * two RAM blocks in two mappings, and a block that moved.
 */
#include "mode/gpamap.h"
#include "unit.h"

#define GIB (1ull << 30)
#define BASE 0x7f0000000000ull /* QEMU's mapping of pc.ram */

static void test_one_block(void)
{
	struct gpamap m = { 0 };
	uint64_t hva = 0;

	/* arm64 virt: RAM at GPA 1 GiB, 2 GiB of it, mapped at BASE */
	ASSERT_EQ(gpamap_hva(&m, GIB, 4096, &hva), GPAMAP_NONE, "empty map");
	ASSERT_EQ(gpamap_add(&m, GIB + 0x5000, BASE + 0x5000, 4096, BASE, BASE + 2 * GIB), 1,
		  "first sample grows the map");
	ASSERT_EQ(gpamap_add(&m, GIB + 0x5000, BASE + 0x5000, 4096, BASE, BASE + 2 * GIB), 0,
		  "the same again: known");
	ASSERT_EQ(gpamap_add(&m, GIB + 0x9000, BASE + 0x9000, 4096, BASE, BASE + 2 * GIB), 1,
		  "a second one grows its segment");
	ASSERT_EQ(m.n, 1, "one segment");
	ASSERT_EQ(gpamap_hva(&m, GIB + 0x6000, 4096, &hva), GPAMAP_EXACT, "between samples");
	ASSERT_EQ(hva, BASE + 0x6000, "its hva");
	ASSERT_EQ(gpamap_hva(&m, GIB + GIB / 2, 4096, &hva), GPAMAP_NEAR, "in the mapping");
	ASSERT_EQ(hva, BASE + GIB / 2, "its hva");
	ASSERT_EQ(gpamap_hva(&m, 3 * GIB, 4096, &hva), GPAMAP_NONE, "past the mapping");
	ASSERT_EQ(gpamap_hva(&m, GIB - 4096, 4096, &hva), GPAMAP_NONE, "below it");
	gpamap_confirm(&m, GIB + GIB / 2, 4096);
	ASSERT_EQ(gpamap_hva(&m, GIB + GIB / 4, 4096, &hva), GPAMAP_EXACT, "confirmed: exact");
	ASSERT_TRUE(gpamap_is_ram(&m, BASE + GIB), "the mapping is RAM");
	ASSERT_TRUE(!gpamap_is_ram(&m, BASE - 4096), "below it is not");
}

static void test_x86_high_memory(void)
{
	struct gpamap m = { 0 };
	uint64_t low = 2 * GIB, hva = 0;

	/* q35 with 6 GiB: GPA [0, 2G) at BASE, [4G, 8G) at BASE + 2G: one mapping */
	gpamap_add(&m, 0x100000, BASE + 0x100000, 4096, BASE, BASE + 6 * GIB);
	ASSERT_EQ(gpamap_hva(&m, 4 * GIB + 0x1000, 4096, &hva), GPAMAP_NEAR,
		  "only low samples: high memory is a guess");
	ASSERT_EQ(hva, BASE + 4 * GIB + 0x1000, "at the low offset (wrong: why it is tentative)");
	gpamap_add(&m, 5 * GIB, BASE + low + GIB, 4096, BASE, BASE + 6 * GIB);
	ASSERT_EQ(m.n, 2, "a segment per offset");
	ASSERT_EQ(gpamap_hva(&m, 4 * GIB + 0x1000, 4096, &hva), GPAMAP_NEAR, "near the high one");
	ASSERT_EQ(hva, BASE + low + 0x1000, "by the high offset");
	ASSERT_EQ(gpamap_hva(&m, GIB, 4096, &hva), GPAMAP_NEAR, "near the low one");
	ASSERT_EQ(hva, BASE + GIB, "by the low offset");
	ASSERT_EQ(m.conflicts, 0ULL, "no conflict");
}

static void test_two_blocks_and_a_move(void)
{
	struct gpamap m = { 0 };
	uint64_t hva = 0, b2 = 0x7e0000000000ull;

	gpamap_add(&m, 0x2000, BASE + 0x2000, 4096, BASE, BASE + GIB);
	/* a DIMM plugged at 4 GiB: its own mapping */
	gpamap_add(&m, 4 * GIB + 0x3000, b2 + 0x3000, 4096, b2, b2 + GIB);
	ASSERT_EQ(m.n, 2, "two segments");
	ASSERT_EQ(gpamap_hva(&m, 4 * GIB + GIB / 2, 4096, &hva), GPAMAP_NEAR, "in the DIMM");
	ASSERT_EQ(hva, b2 + GIB / 2, "its hva");
	ASSERT_EQ(gpamap_hva(&m, 2 * GIB, 4096, &hva), GPAMAP_NONE,
		  "between them, outside both mappings");
	/* the first block moved (a new QEMU mapping after migration): the sample contradicts */
	ASSERT_EQ(gpamap_add(&m, 0x2000, 0x7d0000002000ull, 4096, 0x7d0000000000ull,
			     0x7d0000000000ull + GIB),
		  -1, "contradiction");
	ASSERT_EQ(m.conflicts, 1ULL, "counted");
	ASSERT_EQ(gpamap_hva(&m, 0x2000, 4096, &hva), GPAMAP_EXACT, "the new offset");
	ASSERT_EQ(hva, 0x7d0000002000ull, "its hva");
	ASSERT_EQ(m.n, 2, "the old segment dropped");
}

static void test_unknown_mapping(void)
{
	struct gpamap m = { 0 };
	uint64_t hva = 0;

	/* /proc/PID/maps unreadable: only what the samples cover */
	gpamap_add(&m, 0x10000, BASE + 0x10000, 4096, 0, 0);
	gpamap_add(&m, 0x30000, BASE + 0x30000, 4096, 0, 0);
	ASSERT_EQ(gpamap_hva(&m, 0x20000, 4096, &hva), GPAMAP_EXACT, "between samples");
	ASSERT_EQ(gpamap_hva(&m, 0x40000, 4096, &hva), GPAMAP_NONE, "beyond: not guessed");
	ASSERT_TRUE(gpamap_is_ram(&m, BASE + 0x20000), "covered: RAM");
	ASSERT_TRUE(!gpamap_is_ram(&m, BASE + 0x40000), "beyond: not known");
}

int main(void)
{
	RUN_TEST(test_one_block);
	RUN_TEST(test_x86_high_memory);
	RUN_TEST(test_two_blocks_and_a_move);
	RUN_TEST(test_unknown_mapping);
	return unit_result();
}
