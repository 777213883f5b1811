// SPDX-License-Identifier: GPL-2.0
/* The names of iotracer's ABI values (abi.h). */
#include <string.h>
#include <strings.h>

#include "iotracer.h"
#include "lib/abi.h"

#define NAMES(arr) (arr), 0, sizeof(arr) / sizeof((arr)[0])

static const char *const op_names[IT_OP_MAX] = {
	[IT_OP_READ] = "read",	     [IT_OP_WRITE] = "write", [IT_OP_SYNC] = "sync",
	[IT_OP_DISCARD] = "discard", [IT_OP_OTHER] = "other",
};
static const char *const layer_names[IT_L_MAX] = {
	[IT_L_SYSCALL] = "syscall", [IT_L_FS] = "fs",	  [IT_L_SCHED] = "sched",
	[IT_L_BLOCK] = "block",	    [IT_L_NVME] = "nvme", [IT_L_SCSI] = "scsi",
	[IT_L_VIRTIO] = "virtio",   [IT_L_QEMU] = "qemu", [IT_L_STACK] = "stack",
};
static const char *const stage_names[IT_ST_MAX] = {
	[IT_ST_TOTAL] = "total",
	[IT_ST_OFFCPU] = "offcpu",
	[IT_ST_Q2C] = "q2c",
	[IT_ST_D2C] = "d2c",
	[IT_ST_Q2D] = "q2d",
	[IT_ST_RUNQ] = "runq",
	[IT_ST_DIRTY_AGE] = "dirty_age",
	[IT_ST_Q2R] = "q2r",
	[IT_ST_M2C] = "m2c",
};
static const char *const sys_names[IT_SYS_MAX] = {
	[IT_SYS_READ] = "read",
	[IT_SYS_WRITE] = "write",
	[IT_SYS_PREAD64] = "pread64",
	[IT_SYS_PWRITE64] = "pwrite64",
	[IT_SYS_READV] = "readv",
	[IT_SYS_WRITEV] = "writev",
	[IT_SYS_PREADV] = "preadv",
	[IT_SYS_PWRITEV] = "pwritev",
	[IT_SYS_PREADV2] = "preadv2",
	[IT_SYS_PWRITEV2] = "pwritev2",
	[IT_SYS_FSYNC] = "fsync",
	[IT_SYS_FDATASYNC] = "fdatasync",
	[IT_SYS_SYNC_FILE_RANGE] = "sync_file_range",
	[IT_SYS_IO_SUBMIT] = "io_submit",
	[IT_SYS_IO_GETEVENTS] = "io_getevents",
	[IT_SYS_IO_PGETEVENTS] = "io_pgetevents",
	[IT_SYS_IO_URING_ENTER] = "io_uring_enter",
};
static const char *const origin_names[] = {
	[IT_ORIG_NONE] = "none",
	[IT_ORIG_SYSCALL] = "syscall",
	[IT_ORIG_URING] = "io_uring",
	[IT_ORIG_WRITEBACK] = "writeback",
};
_Static_assert(sizeof(origin_names) / sizeof(origin_names[0]) == IT_ORIG_WRITEBACK + 1,
	       "a name for every enum it_origin");
static const char *const drop_names[IT_DROP_KINDS] = {
	[IT_DROP_RINGBUF] = "ringbuf",
	[IT_DROP_INFLIGHT] = "inflight",
	[IT_DROP_HIST] = "hist",
	[IT_DROP_MISSED] = "missed",
};
/* enum corr_kind, from 1 (the "kind" of a JSON request line) */
static const char *const kind_names[] = { NULL, "syscall", "io_uring", "aio", "block" };

const struct abi_names abi_ops = { NAMES(op_names), "other", "op" };
const struct abi_names abi_layers = { NAMES(layer_names), "unknown", "layer" };
const struct abi_names abi_stages = { NAMES(stage_names), "unknown", "stage" };
const struct abi_names abi_syscalls = { NAMES(sys_names), "?", "syscall" };
const struct abi_names abi_origins = { NAMES(origin_names), "none", "origin" };
const struct abi_names abi_drops = { NAMES(drop_names), "unknown", "drop" };
const struct abi_names abi_kinds = { kind_names, 1, 5, "", "kind" };
const struct abi_names *const abi_all[] = {
	&abi_ops,     &abi_layers, &abi_stages, &abi_syscalls,
	&abi_origins, &abi_drops,  &abi_kinds,	NULL,
};

const char *abi_name(const struct abi_names *t, unsigned int v)
{
	return v < t->n && t->names[v] ? t->names[v] : t->fallback;
}

int abi_value(const struct abi_names *t, const char *s, size_t len)
{
	if (!s)
		return -1;
	for (unsigned int v = t->first; v < t->n; v++)
		if (t->names[v] && strlen(t->names[v]) == len && !strncasecmp(s, t->names[v], len))
			return (int)v;
	return -1;
}
