// SPDX-License-Identifier: GPL-2.0
/*
 * The ABI name tables (src/lib/abi.c) and opcode mappings (include/it_opmap.h):
 * every enum value has a name of its own that parses back to it, and every op the
 * libaio and io_uring opcodes map to maps back to an opcode of that op. The
 * oracle for the names is the list written here, from docs/json.md.
 */
#include <ctype.h>
#include <string.h>

#include "unit.h"
#include "iotracer.h"
#include "lib/abi.h"

/* Every value of every table: a name, unique in its table, that round-trips (any case). */
static void test_abi_round_trip(void)
{
	for (const struct abi_names *const *t = abi_all; *t; t++) {
		for (unsigned int v = (*t)->first; v < (*t)->n; v++) {
			const char *name = abi_name(*t, v);
			char upper[64];
			size_t i;

			if (!ASSERT_TRUE((*t)->names[v] && *name, (*t)->what))
				return;
			ASSERT_EQ(abi_value(*t, name, strlen(name)), (int)v, name);
			for (i = 0; name[i] && i < sizeof(upper) - 1; i++)
				upper[i] = (char)toupper((unsigned char)name[i]);
			upper[i] = 0;
			ASSERT_EQ(abi_value(*t, upper, i), (int)v, "case-insensitive");
			for (unsigned int w = (*t)->first; w < v; w++)
				ASSERT_TRUE(strcmp(abi_name(*t, w), name), "unique");
		}
		ASSERT_STREQ(abi_name(*t, (*t)->n), (*t)->fallback, "out of range");
		ASSERT_EQ(abi_value(*t, "nosuchname", 10), -1, "unknown name");
		ASSERT_EQ(abi_value(*t, NULL, 0), -1, "NULL");
	}
}

/* The tables cover their enums, with the names the JSON and the options use. */
static void test_abi_names(void)
{
	static const char *const ops[] = { "read", "write", "sync", "discard", "other" };
	static const char *const layers[] = { "syscall", "fs",	   "sched", "block", "nvme",
					      "scsi",	 "virtio", "qemu",  "stack" };
	static const char *const stages[] = { "total", "offcpu",    "q2c", "d2c", "q2d",
					      "runq",  "dirty_age", "q2r", "m2c" };
	unsigned int i;

	ASSERT_EQ(abi_ops.n, IT_OP_MAX, "ops");
	ASSERT_EQ(abi_layers.n, IT_L_MAX, "layers");
	ASSERT_EQ(abi_stages.n, IT_ST_MAX, "stages");
	ASSERT_EQ(abi_syscalls.n, IT_SYS_MAX, "syscalls");
	ASSERT_EQ(abi_drops.n, IT_DROP_KINDS, "drops");
	ASSERT_EQ(abi_origins.n, IT_ORIG_WRITEBACK + 1, "origins");
	for (i = 0; i < IT_OP_MAX; i++)
		ASSERT_STREQ(abi_op_name(i), ops[i], "op");
	for (i = 0; i < IT_L_MAX; i++)
		ASSERT_STREQ(abi_layer_name(i), layers[i], "layer");
	for (i = 0; i < IT_ST_MAX; i++)
		ASSERT_STREQ(abi_stage_name(i), stages[i], "stage");
	/* the host mode's paths print these too (it printed "other" for both) */
	ASSERT_STREQ(abi_op_name(IT_OP_SYNC), "sync", "sync");
	ASSERT_STREQ(abi_op_name(IT_OP_DISCARD), "discard", "discard");
	ASSERT_STREQ(abi_name(&abi_syscalls, IT_SYS_IO_URING_ENTER), "io_uring_enter", "syscall");
	ASSERT_STREQ(abi_name(&abi_origins, IT_ORIG_URING), "io_uring", "origin");
	ASSERT_STREQ(abi_name(&abi_drops, IT_DROP_MISSED), "missed", "drop");
	ASSERT_STREQ(abi_name(&abi_kinds, 4), "block", "kind");
	ASSERT_STREQ(abi_name(&abi_kinds, 0), "", "kind 0: none");
	ASSERT_STREQ(abi_layer_name((unsigned int)-1), "unknown", "negative layer");
}

/* libaio and io_uring opcodes (uapi numbers written here) <-> enum it_op, both ways. */
static void test_abi_opcodes(void)
{
	static const struct {
		unsigned int opcode, op;
	} aio[] = { { 0, IT_OP_READ }, { 1, IT_OP_WRITE }, { 2, IT_OP_SYNC },
		    { 3, IT_OP_SYNC }, { 5, IT_OP_OTHER }, { 6, IT_OP_OTHER },
		    { 7, IT_OP_READ }, { 8, IT_OP_WRITE }, { 9, IT_OP_OTHER } },
	  uring[] = { { 0, IT_OP_OTHER }, { 1, IT_OP_READ },  { 2, IT_OP_WRITE },
		      { 3, IT_OP_SYNC },  { 4, IT_OP_READ },  { 5, IT_OP_WRITE },
		      { 8, IT_OP_SYNC },  { 22, IT_OP_READ }, { 23, IT_OP_WRITE },
		      { 13, IT_OP_OTHER } };
	unsigned int i;

	for (i = 0; i < sizeof(aio) / sizeof(aio[0]); i++)
		ASSERT_EQ(it_aio_op(aio[i].opcode), aio[i].op, "aio opcode -> op");
	for (i = 0; i < sizeof(uring) / sizeof(uring[0]); i++)
		ASSERT_EQ(it_uring_op((__u8)uring[i].opcode), uring[i].op, "io_uring opcode -> op");
	for (i = 0; i < IT_OP_MAX; i++) {
		unsigned int back = i == IT_OP_DISCARD ? IT_OP_OTHER :
							 i; /* neither has a discard */

		ASSERT_EQ(it_aio_op(it_aio_opcode(i)), back, abi_op_name(i));
		ASSERT_EQ(it_uring_op(it_uring_opcode(i)), back, abi_op_name(i));
	}
}

int main(void)
{
	RUN_TEST(test_abi_round_trip);
	RUN_TEST(test_abi_names);
	RUN_TEST(test_abi_opcodes);
	return unit_result();
}
