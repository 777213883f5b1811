/* SPDX-License-Identifier: GPL-2.0 */
/*
 * schema: the columns of the two tables the sink fills (deploy/clickhouse/,
 * docs/fleet.md, "Schema"): one row per request (the fields of its -j line,
 * block requests in the Nested group "block"), and one row per request's
 * blame line (TABLE_blame, culprits in "culprits"). One list each, from which
 * the builder's column table, the report's SELECT and the check of a
 * server's DESCRIBE TABLE are made. Pure.
 */
#ifndef IT_SINK_SCHEMA_H
#define IT_SINK_SCHEMA_H

#include <stddef.h>

#include "sink/native.h"

/* X(id, name, type, group): group 1 is the Nested "block", 2 the array waited_ids. */
#define SK_REQ_COLS(X)                                              \
	X(HOST, "host", NAT_STR, 0)                                 \
	X(BOOT, "boot", NAT_STR, 0)                                 \
	X(RUN, "run", NAT_U64, 0)                                   \
	X(ID, "id", NAT_U64, 0)                                     \
	X(TS, "ts", NAT_U64, 0)                                     \
	X(CLOCK_OFF, "clock_off", NAT_I64, 0)                       \
	X(KIND, "kind", NAT_STR, 0)                                 \
	X(SYSCALL, "syscall", NAT_STR, 0)                           \
	X(OP, "op", NAT_STR, 0)                                     \
	X(DEV, "dev", NAT_STR, 0)                                   \
	X(DEVNO, "devno", NAT_STR, 0)                               \
	X(INO, "ino", NAT_U64, 0)                                   \
	X(FILE, "file", NAT_STR, 0)                                 \
	X(CFILE, "container_file", NAT_STR, 0)                      \
	X(OFFSET, "offset", NAT_U64, 0)                             \
	X(BYTES, "bytes", NAT_U64, 0)                               \
	X(RET, "ret", NAT_I64, 0)                                   \
	X(LAT, "lat_ns", NAT_U64, 0)                                \
	X(FLAGS, "flags", NAT_U32, 0)                               \
	X(PID, "pid", NAT_U32, 0)                                   \
	X(TID, "tid", NAT_U32, 0)                                   \
	X(COMM, "comm", NAT_STR, 0)                                 \
	X(CGROUP_ID, "cgroup_id", NAT_U64, 0)                       \
	X(CGROUP, "cgroup", NAT_STR, 0)                             \
	X(RUNTIME, "runtime", NAT_STR, 0)                           \
	X(CONTAINER_ID, "container_id", NAT_STR, 0)                 \
	X(CONTAINER, "container", NAT_STR, 0)                       \
	X(CTRD_NS, "containerd_namespace", NAT_STR, 0)              \
	X(POD_UID, "pod_uid", NAT_STR, 0)                           \
	X(POD, "pod", NAT_STR, 0)                                   \
	X(NAMESPACE, "namespace", NAT_STR, 0)                       \
	X(QOS, "qos", NAT_STR, 0)                                   \
	X(CACHE_MISS, "cache_miss_pages", NAT_U32, 0)               \
	X(VFS, "vfs_ns", NAT_U64, 0)                                \
	X(PRE_BLOCK, "pre_block_ns", NAT_U64, 0)                    \
	X(POST_BLOCK, "post_block_ns", NAT_U64, 0)                  \
	X(SWITCHES, "switches", NAT_U32, 0)                         \
	X(PREEMPTED, "preempted", NAT_U32, 0)                       \
	X(RUNQ, "runq_ns", NAT_U64, 0)                              \
	X(OFFCPU, "offcpu_ns", NAT_U64, 0)                          \
	X(OFFCPU_BLOCKED, "offcpu_blocked_ns", NAT_U64, 0)          \
	X(WAKER_TID, "waker_tid", NAT_U32, 0)                       \
	X(WAKER_COMM, "waker_comm", NAT_STR, 0)                     \
	X(NR_BIOS, "nr_bios", NAT_U32, 0)                           \
	X(URING_USER_DATA, "uring_user_data", NAT_U64, 0)           \
	X(URING_OPCODE, "uring_opcode", NAT_U8, 0)                  \
	X(AIO_IOCB, "aio_iocb", NAT_U64, 0)                         \
	X(PARENT_ID, "parent_id", NAT_U64, 0)                       \
	X(PARENT_TID, "parent_tid", NAT_U32, 0)                     \
	X(PARENT_SEQ, "parent_seq", NAT_U64, 0)                     \
	X(BLOCK_APART, "block_apart", NAT_U32, 0)                   \
	X(WAITED_N, "waited_n", NAT_U32, 0)                         \
	X(WAITED_BYTES, "waited_bytes", NAT_U64, 0)                 \
	X(WAITED_IDS, "waited_ids", NAT_U64, 2)                     \
	X(B_DEV, "block.dev", NAT_STR, 1)                           \
	X(B_DEVNO, "block.devno", NAT_STR, 1)                       \
	X(B_OP, "block.op", NAT_STR, 1)                             \
	X(B_SECTOR, "block.sector", NAT_U64, 1)                     \
	X(B_BYTES, "block.bytes", NAT_U32, 1)                       \
	X(B_INO, "block.ino", NAT_U64, 1)                           \
	X(B_FILE, "block.file", NAT_STR, 1)                         \
	X(B_CFILE, "block.container_file", NAT_STR, 1)              \
	X(B_FILE_DEVNO, "block.file_devno", NAT_STR, 1)             \
	X(B_Q_OFF, "block.q_off_ns", NAT_I64, 1)                    \
	X(B_Q2G, "block.q2g_ns", NAT_U64, 1)                        \
	X(B_I2D, "block.i2d_ns", NAT_U64, 1)                        \
	X(B_Q2D, "block.q2d_ns", NAT_U64, 1)                        \
	X(B_D2C, "block.d2c_ns", NAT_U64, 1)                        \
	X(B_Q2C, "block.q2c_ns", NAT_U64, 1)                        \
	X(B_FLAGS, "block.flags", NAT_U32, 1)                       \
	X(B_MERGED, "block.merged", NAT_U16, 1)                     \
	X(B_ERROR, "block.error", NAT_I32, 1)                       \
	X(B_ORIGIN, "block.origin", NAT_STR, 1)                     \
	X(B_PID, "block.pid", NAT_U32, 1)                           \
	X(B_TID, "block.tid", NAT_U32, 1)                           \
	X(B_BLKCG_ID, "block.blkcg_id", NAT_U64, 1)                 \
	X(B_BLKCG, "block.blkcg", NAT_STR, 1)                       \
	X(B_DIRTY_PID, "block.dirty_pid", NAT_U32, 1)               \
	X(B_DIRTY_TID, "block.dirty_tid", NAT_U32, 1)               \
	X(B_DIRTY_COMM, "block.dirty_comm", NAT_STR, 1)             \
	X(B_DIRTY_CGROUP_ID, "block.dirty_cgroup_id", NAT_U64, 1)   \
	X(B_DIRTY_CGROUP, "block.dirty_cgroup", NAT_STR, 1)         \
	X(B_DIRTY_BYTES, "block.dirty_bytes", NAT_U32, 1)           \
	X(B_OTHER_PID, "block.other_pid", NAT_U32, 1)               \
	X(B_OTHER_BYTES, "block.other_bytes", NAT_U32, 1)           \
	X(B_UNKNOWN_BYTES, "block.unknown_bytes", NAT_U32, 1)       \
	X(B_UNKNOWN_WHY, "block.unknown_why", NAT_U8, 1)            \
	X(B_DIRTY_FIRST, "block.dirty_first_ns", NAT_U64, 1)        \
	X(B_DIRTY_LAST, "block.dirty_last_ns", NAT_U64, 1)          \
	X(B_DIRTY_FILE_DEVNO, "block.dirty_file_devno", NAT_STR, 1) \
	X(B_DRV_LAYER, "block.drv_layer", NAT_STR, 1)               \
	X(B_DRV_SUBMIT, "block.drv_submit_ns", NAT_U64, 1)          \
	X(B_DRV_KICK, "block.drv_kick_ns", NAT_U64, 1)              \
	X(B_DRV_DONE, "block.drv_done_ns", NAT_U64, 1)              \
	X(B_DRV_QID, "block.drv_qid", NAT_U16, 1)                   \
	X(B_DRV_TAG, "block.drv_tag", NAT_U32, 1)                   \
	X(B_DRV_OPCODE, "block.drv_opcode", NAT_U8, 1)              \
	X(B_DRV_STATUS, "block.drv_status", NAT_I32, 1)             \
	X(B_SERIAL, "block.serial", NAT_STR, 1)                     \
	X(B_UPPER, "block.upper", NAT_STR, 1)                       \
	X(B_UPPER_DEVNO, "block.upper_devno", NAT_STR, 1)           \
	X(B_UP_OFF, "block.up_off", NAT_U16, 1)                     \
	X(B_STACK_HOW, "block.stack_how", NAT_STR, 1)               \
	X(B_STK_PIECES, "block.stk_pieces", NAT_U32, 1)             \
	X(B_STK_R, "block.stk_r_ns", NAT_U64, 1)                    \
	X(B_STK_M, "block.stk_m_ns", NAT_U64, 1)

/* X(id, name, type, group): group 1 is the Nested "culprits". */
#define SK_BLAME_COLS(X)                                    \
	X(HOST, "host", NAT_STR, 0)                         \
	X(BOOT, "boot", NAT_STR, 0)                         \
	X(RUN, "run", NAT_U64, 0)                           \
	X(ID, "id", NAT_U64, 0)                             \
	X(TS, "ts", NAT_U64, 0)                             \
	X(BY, "by", NAT_STR, 0)                             \
	X(REQUESTS, "requests", NAT_U64, 0)                 \
	X(WAIT, "wait_ns", NAT_U64, 0)                      \
	X(OWN, "own_ns", NAT_U64, 0)                        \
	X(UNATTR, "unattributed_ns", NAT_U64, 0)            \
	X(SELF, "self_ns", NAT_U64, 0)                      \
	X(OTHERS, "others_ns", NAT_U64, 0)                  \
	X(OTHER, "other_ns", NAT_U64, 0)                    \
	X(VICTIM_DEV, "victim_dev", NAT_STR, 0)             \
	X(VICTIM_DEVNO, "victim_devno", NAT_STR, 0)         \
	X(VICTIM_CGROUP_ID, "victim_cgroup_id", NAT_U64, 0) \
	X(VICTIM_CGROUP, "victim_cgroup", NAT_STR, 0)       \
	X(VICTIM_POD, "victim_pod", NAT_STR, 0)             \
	X(VICTIM_NAMESPACE, "victim_namespace", NAT_STR, 0) \
	X(VICTIM_FILE, "victim_file", NAT_STR, 0)           \
	X(C_CGROUP_ID, "culprits.cgroup_id", NAT_U64, 1)    \
	X(C_CGROUP, "culprits.cgroup", NAT_STR, 1)          \
	X(C_POD, "culprits.pod", NAT_STR, 1)                \
	X(C_NAMESPACE, "culprits.namespace", NAT_STR, 1)    \
	X(C_PID, "culprits.pid", NAT_U32, 1)                \
	X(C_NS, "culprits.ns", NAT_U64, 1)

#define SK_ENUM_REQ(id, name, type, group) SK_R_##id,
#define SK_ENUM_BLAME(id, name, type, group) SK_B_##id,
enum sk_req_col { SK_REQ_COLS(SK_ENUM_REQ) SK_R_NR };
enum sk_blame_col { SK_BLAME_COLS(SK_ENUM_BLAME) SK_B_NR };
#undef SK_ENUM_REQ
#undef SK_ENUM_BLAME

extern const struct nat_colspec sk_req_spec[SK_R_NR];
extern const struct nat_colspec sk_blame_spec[SK_B_NR];

/*
 * The request row's flags: the record's IT_F_* bits (DIO, SCHED_CNT, SCHED_SW,
 * TRUNC), and what the -j line says by a field's presence.
 */
#define SK_F_END (1u << 24) /* finished: lat_ns is its latency */
#define SK_F_PRE (1u << 25) /* pre_block_ns is there */
#define SK_F_POST (1u << 26) /* post_block_ns is there */
#define SK_F_PARENT (1u << 27) /* a late block request: parent_* name its request */
#define SK_F_WAITED (1u << 28) /* a sync: waited_* is what it waited for */
#define SK_F_WAITED_TRUNC (1u << 29) /* ... and the ring had dropped some */
/* A block request's flags: its IT_F_* bits, and: */
#define SK_BF_ISSUED (1u << 31) /* issued to the driver: q2d, d2c are its */

/* The blame row's flags: none yet. */

/* The suffix of the blame table's name: TABLE_blame. */
#define SK_BLAME_SUFFIX "_blame"

/*
 * Compare a server's DESCRIBE TABLE (TabSeparated: name, type, ...) with a
 * spec: 0, or -EPROTO with the first difference in why ("column block.q2c_ns
 * is Array(UInt32), this build writes Array(UInt64)"; "no column ts"). Columns
 * the table has and the spec does not are allowed (the server fills none of
 * ours with them; a newer DDL may add some).
 */
int sk_schema_check(const struct nat_colspec *spec, int n, const char *describe, size_t len,
		    char *why, size_t whylen);

/* "name Type" of each column, comma-separated (a SELECT's list, quoted for the dotted ones). */
int sk_schema_select(const struct nat_colspec *spec, int n, struct nat_buf *out);

#endif /* IT_SINK_SCHEMA_H */
