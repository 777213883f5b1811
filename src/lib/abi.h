/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The names of iotracer's ABI values (include/iotracer.h), in both directions: what
 * the JSON, the text output, the metrics and the reports print, and what the
 * options (-L), the config and the report's JSON reader parse back. One table per
 * enum; the opcode mappings (libaio, io_uring) are in include/it_opmap.h, shared
 * with the BPF programs.
 */
#ifndef IT_LIB_ABI_H
#define IT_LIB_ABI_H

#include <stddef.h>

struct abi_names {
	const char *const *names; /* names[value]; every value from first below n has one */
	unsigned int first, n;
	const char *fallback; /* the name of a value out of range */
	const char *what; /* "op", "layer", ... (messages, tests) */
};

extern const struct abi_names abi_ops; /* enum it_op: read write sync discard other */
extern const struct abi_names abi_layers; /* enum it_layer: syscall fs sched block ... */
extern const struct abi_names abi_stages; /* enum it_stage: total offcpu q2c d2c q2d runq */
extern const struct abi_names abi_syscalls; /* enum it_sys: read write pread64 ... */
extern const struct abi_names abi_origins; /* enum it_origin: none syscall io_uring writeback */
extern const struct abi_names abi_drops; /* enum it_drop_kind: ringbuf inflight hist missed */
extern const struct abi_names
	abi_kinds; /* enum corr_kind (records/corr.h): syscall io_uring aio block */
extern const struct abi_names *const abi_all[]; /* the tables above, NULL-terminated */

/* The name of value v (t->fallback when out of range); never NULL. */
const char *abi_name(const struct abi_names *t, unsigned int v);
/* The value named by the len bytes at s, case-insensitively; -1 when none is. */
int abi_value(const struct abi_names *t, const char *s, size_t len);

static inline const char *abi_op_name(unsigned int op)
{
	return abi_name(&abi_ops, op);
}

static inline const char *abi_layer_name(unsigned int layer)
{
	return abi_name(&abi_layers, layer);
}

static inline const char *abi_stage_name(unsigned int stage)
{
	return abi_name(&abi_stages, stage);
}

#endif /* IT_LIB_ABI_H */
