/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's IO opcodes as enum it_op, in both directions: one definition for
 * the BPF programs (bpf/) and the daemon (src/). The opcode numbers are stable
 * kernel ABI: IOCB_CMD_* of include/uapi/linux/aio_abi.h and IORING_OP_* of
 * include/uapi/linux/io_uring.h. Included by iotracer.h after enum it_op.
 */
#ifndef IT_OPMAP_H
#define IT_OPMAP_H

/* libaio IOCB_CMD_*; IT_IOCB_NONE is no opcode (an op libaio has no command for) */
enum it_iocb_cmd {
	IT_IOCB_PREAD = 0,
	IT_IOCB_PWRITE = 1,
	IT_IOCB_FSYNC = 2,
	IT_IOCB_FDSYNC = 3,
	IT_IOCB_POLL = 5,
	IT_IOCB_NOOP = 6,
	IT_IOCB_PREADV = 7,
	IT_IOCB_PWRITEV = 8,
	IT_IOCB_NONE = 9,
};

/* io_uring IORING_OP_* that move data or sync it */
enum it_uring_opcode {
	IT_IORING_READV = 1,
	IT_IORING_WRITEV = 2,
	IT_IORING_FSYNC = 3,
	IT_IORING_READ_FIXED = 4,
	IT_IORING_WRITE_FIXED = 5,
	IT_IORING_SYNC_FILE_RANGE = 8,
	IT_IORING_READ = 22,
	IT_IORING_WRITE = 23,
};

/* enum it_op of a libaio IOCB_CMD_* opcode. */
static inline __attribute__((always_inline)) __u8 it_aio_op(__u32 opcode)
{
	switch (opcode) {
	case IT_IOCB_PREAD:
	case IT_IOCB_PREADV:
		return IT_OP_READ;
	case IT_IOCB_PWRITE:
	case IT_IOCB_PWRITEV:
		return IT_OP_WRITE;
	case IT_IOCB_FSYNC:
	case IT_IOCB_FDSYNC:
		return IT_OP_SYNC;
	default:
		return IT_OP_OTHER;
	}
}

/* The IOCB_CMD_* that it_aio_op() maps to op (the plain, not the vectored, form). */
static inline __attribute__((always_inline)) __u16 it_aio_opcode(__u32 op)
{
	switch (op) {
	case IT_OP_READ:
		return IT_IOCB_PREAD;
	case IT_OP_WRITE:
		return IT_IOCB_PWRITE;
	case IT_OP_SYNC:
		return IT_IOCB_FSYNC;
	default:
		return IT_IOCB_NONE;
	}
}

/* enum it_op of an io_uring IORING_OP_* opcode. */
static inline __attribute__((always_inline)) __u8 it_uring_op(__u8 opcode)
{
	switch (opcode) {
	case IT_IORING_READV:
	case IT_IORING_READ_FIXED:
	case IT_IORING_READ:
		return IT_OP_READ;
	case IT_IORING_WRITEV:
	case IT_IORING_WRITE_FIXED:
	case IT_IORING_WRITE:
		return IT_OP_WRITE;
	case IT_IORING_FSYNC:
	case IT_IORING_SYNC_FILE_RANGE:
		return IT_OP_SYNC;
	default:
		return IT_OP_OTHER;
	}
}

/* The IORING_OP_* that it_uring_op() maps to op; 0 (IORING_OP_NOP) for none. */
static inline __attribute__((always_inline)) __u8 it_uring_opcode(__u32 op)
{
	switch (op) {
	case IT_OP_READ:
		return IT_IORING_READ;
	case IT_OP_WRITE:
		return IT_IORING_WRITE;
	case IT_OP_SYNC:
		return IT_IORING_FSYNC;
	default:
		return 0;
	}
}

#endif /* IT_OPMAP_H */
