/* SPDX-License-Identifier: GPL-2.0 */
/*
 * recfmt: the byte layout of a --record segment (docs/record.md), shared by
 * the writer (records/record.c) and the reader (report/reader.c). Pure user
 * space: libc and zlib's crc32 only.
 *
 *   segment := header(RF_SEG_HDR_LEN) block*
 *   block   := block header(RF_BLK_HDR_LEN) zlib stream(clen bytes)
 *   payload := entry*   (the zlib stream inflated: rlen bytes)
 *   entry   := RF_E_DEV dev name serial | RF_E_REQ request | RF_E_CGROUP id path
 *            | tag(>= RF_E_SIZED) len(varint) body(len bytes)   (format 2)
 *
 * Every integer in the headers is little-endian. In a payload, integers are
 * LEB128 varints; the records of a request (struct it_syscall_rec,
 * it_block_rec, it_uring_rec and the aio part) are coded word by word as the
 * difference to the previous record of the same type in the same block (a
 * bit mask of the changed 64-bit words, then their zigzag varint deltas).
 * Each block starts from zero state, so it decodes without the others.
 */
#ifndef IT_CORE_RECFMT_H
#define IT_CORE_RECFMT_H

#include <stddef.h>
#include <stdint.h>

#include "iotracer.h"
#include "records/corr.h"

#define RF_SEG_MAGIC "ITRECSEG"
/*
 * 2: sized entries (tags from RF_E_SIZED on: a reader skips those it does not
 * know, counted) and the segment header's flags. A reader of 2 reads 1.
 */
#define RF_FORMAT 2
#define RF_FORMAT_MIN 1
#define RF_SEG_F_BLAME 1u /* the run recorded each request's blame (RF_E_BLAME) */
#define RF_SEG_HDR_LEN 256
#define RF_BLK_MAGIC 0x4b425449u /* "ITBK" little-endian */
#define RF_BLK_HDR_LEN 40
#define RF_MAX_CLEN (4u << 20) /* a block's zlib stream, at most */
#define RF_MAX_RLEN (4u << 20) /* a block's payload, at most */
#define RF_NAME_LEN 64 /* device name or serial, with its NUL */
#define RF_SEG_SUFFIX ".itrec"

enum rf_entry_tag {
	RF_E_DEV =
		1, /* a device's name and serial, before the first request of the block using it */
	RF_E_REQ = 2, /* one request (struct corr_req) */
	/* a cgroup id's path, before the first request of the block from a task in it */
	RF_E_CGROUP = 3,
	/* from here on: tag, length (varint), that many bytes; unknown ones are skipped */
	RF_E_SIZED = 4,
	RF_E_BLAME = 4, /* a request's blame (struct blame_line), after the request */
	/* a file's names (records/fname.h), before the first request of the block naming it */
	RF_E_FNAME = 5,
	/* a container's or pod's name from the node, with the first cgroup of the block in it */
	RF_E_CTNAME = 6,
};

#define RF_CG_LEN 512 /* a cgroup path, with its NUL (records/cgroup.h CG_PATH_MAX) */
#define RF_FILE_LEN 8192 /* a file's path, with its NUL (records/fnres.h FR_PATH_MAX) */
#define RF_CT_LEN 128 /* a container id, pod UID, name or namespace, with its NUL */

/* A file's names (RF_E_FNAME): its key as the records have it, the host's and a container's path. */
struct rf_fname {
	uint64_t ino;
	uint32_t dev, bdev;
	char file[RF_FILE_LEN];
	char cfile[RF_FILE_LEN]; /* "": none */
};

enum rf_ct_kind { RF_CT_CONTAINER = 0, RF_CT_POD = 1 };

/* A name the node gave (RF_E_CTNAME): a container id's name, or a pod UID's namespace and name. */
struct rf_ctname {
	int kind; /* enum rf_ct_kind */
	char id[RF_CT_LEN]; /* container id, pod UID */
	char name[RF_CT_LEN];
	char ns[RF_CT_LEN]; /* the pod's namespace; "" for a container */
};

/*
 * A request's `blame` line (RF_E_BLAME; blame/blame_json.h writes it: the daemon's
 * --blame -j, host mode's host_blame): its block requests' parts and first
 * BLAME_LINE_TOP culprits, as the integers the line carries, so that the line
 * read back from a recording is the bytes the daemon wrote. A recording keeps
 * by cgroup only (by and pid zero when read back).
 */
#define BLAME_LINE_TOP 3
struct blame_line {
	uint64_t id; /* the request's */
	uint64_t requests; /* its block requests */
	uint64_t wait_ns, own_ns, unattr_ns, self_ns, others_ns;
	int by; /* enum blame_by (blame/blame.h): BLAME_BY_CGROUP, or BLAME_BY_VM (host mode) */
	int nr; /* culprits named, at most BLAME_LINE_TOP, the largest first */
	uint64_t cgroup_id[BLAME_LINE_TOP];
	uint32_t pid[BLAME_LINE_TOP]; /* BLAME_BY_VM: the VM's QEMU; 0: a cgroup */
	uint64_t ns[BLAME_LINE_TOP];
	unsigned int named; /* bit i: the writer knew culprit i's cgroup path */
	uint64_t other_ns; /* the culprits after them; 0: no "other" element */
};

/* The sized entries decoded besides blame (rf_get_entry's tag says which). */
struct rf_more {
	struct rf_fname fname;
	struct rf_ctname ctname;
};

struct rf_cgroup {
	uint64_t id;
	char path[RF_CG_LEN];
};

/* The segment header, decoded. */
struct rf_seg_hdr {
	uint16_t format;
	uint32_t abi;
	uint64_t real_ns; /* CLOCK_REALTIME at open */
	uint64_t mono_ns; /* CLOCK_MONOTONIC at open: real = mono + (real_ns - mono_ns) */
	uint64_t seq; /* segment number within the run, from 0 */
	uint64_t run_mono_ns; /* daemon start, CLOCK_MONOTONIC: with pid and boot_id, the run */
	uint32_t pid;
	uint32_t flags; /* RF_SEG_F_* (format 1: 0) */
	char host[64];
	char kernel[64];
	char boot_id[40];
};

struct rf_blk_hdr {
	uint32_t clen; /* zlib stream bytes after the header */
	uint32_t rlen; /* payload bytes once inflated */
	uint32_t nr_req; /* RF_E_REQ entries */
	uint64_t first_ns,
		last_ns; /* earliest start, latest end of its requests (CLOCK_MONOTONIC) */
	uint32_t crc; /* crc32 of the zlib stream */
};

/* The aio part of a request, as 64-bit words (no padding holes). */
struct rf_aio {
	struct it_task task;
	uint64_t seq;
	struct it_aio_iocb iocb;
	uint64_t submit_ns, reap_ns;
	int64_t res;
	uint64_t reaped;
};

/* One request as decoded: the storage a struct corr_req points into. */
struct rf_req {
	enum corr_kind kind;
	uint64_t id;
	int nr_blocks, nr_blocks_apart;
	int parent_valid;
	uint64_t parent_id, parent_seq;
	uint32_t parent_tid;
	struct it_syscall_rec sys;
	struct it_uring_rec uring;
	struct rf_aio aio;
	struct it_block_rec blocks[CORR_MAX_BLOCKS];
};

struct rf_dev {
	uint32_t dev;
	char name[RF_NAME_LEN];
	char serial[RF_NAME_LEN]; /* "" when none */
};

/* Coder state of one block: the previous record of each type, and the last id. */
struct rf_state {
	uint64_t sys[sizeof(struct it_syscall_rec) / 8];
	uint64_t blk[sizeof(struct it_block_rec) / 8];
	uint64_t uring[sizeof(struct it_uring_rec) / 8];
	uint64_t aio[sizeof(struct rf_aio) / 8];
	uint64_t mask[4]; /* the last word mask of each type (sys, blk, uring, aio) */
	uint64_t id;
};

/* The most an encoded request can take (all words changed, 10-byte varints). */
#define RF_REQ_MAX                                          \
	(64 + 11 * (sizeof(struct it_syscall_rec) / 8 + 2 + \
		    (CORR_MAX_BLOCKS) * (sizeof(struct it_block_rec) / 8 + 1)))
#define RF_DEV_MAX (1 + 10 + 2 * (10 + RF_NAME_LEN))
#define RF_CG_MAX (1 + 10 + 10 + RF_CG_LEN)
#define RF_BLAME_BODY_MAX (10 * 8 + 1 + (BLAME_LINE_TOP)*20)
#define RF_BLAME_MAX (1 + 10 + RF_BLAME_BODY_MAX)
#define RF_FNAME_MAX (1 + 10 + 3 * 10 + 2 * (10 + RF_FILE_LEN))
#define RF_CTNAME_MAX (1 + 10 + 10 + 3 * (10 + RF_CT_LEN))

/* Little-endian header helpers. */
void rf_seg_hdr_put(uint8_t *b, const struct rf_seg_hdr *h);
/* 0, or -EBADMSG (magic, header crc) / -EPROTO (format this build does not read). */
int rf_seg_hdr_get(const uint8_t *b, size_t n, struct rf_seg_hdr *h);
void rf_blk_hdr_put(uint8_t *b, const struct rf_blk_hdr *h);
/* 0, or -EBADMSG: no block header at b (magic, header crc or lengths out of bounds). */
int rf_blk_hdr_get(const uint8_t *b, size_t n, struct rf_blk_hdr *h);

/* Encoders: append to p (room for RF_REQ_MAX / RF_DEV_MAX), return the new end. */
uint8_t *rf_put_req(struct rf_state *s, uint8_t *p, const struct corr_req *r);
uint8_t *rf_put_dev(uint8_t *p, uint32_t dev, const char *name, const char *serial);
uint8_t *rf_put_cgroup(uint8_t *p, uint64_t id, const char *path); /* room: RF_CG_MAX */
/* A request's blame line (its id: a request of this block or an earlier one); room: RF_BLAME_MAX. */
uint8_t *rf_put_blame(const struct rf_state *s, uint8_t *p, const struct blame_line *b);

/* A file's names (cfile NULL or "": none); room: RF_FNAME_MAX. */
uint8_t *rf_put_fname(uint8_t *p, uint64_t ino, uint32_t dev, uint32_t bdev, const char *file,
		      const char *cfile);
/* A container's name (ns NULL) or a pod's namespace and name (enum rf_ct_kind); room: RF_CTNAME_MAX. */
uint8_t *rf_put_ctname(uint8_t *p, int kind, const char *id, const char *name, const char *ns);

/*
 * Decode the entry at *pp (before end): *tag says which of req/dev/cg/bl/more
 * was filled; a sized entry of a tag this build does not know is skipped
 * (*tag is its tag, nothing filled), and so are RF_E_FNAME and RF_E_CTNAME
 * when more is NULL. Returns 0 and moves *pp past it, or -EBADMSG for
 * anything that is not a well-formed entry (nothing read past end, whatever
 * it says).
 */
int rf_get_entry(struct rf_state *s, const uint8_t **pp, const uint8_t *end, int *tag,
		 struct rf_req *req, struct rf_dev *dev, struct rf_cgroup *cg,
		 struct blame_line *bl, struct rf_more *more);

/* A corr_req that points into q (valid while q is). */
void rf_req_view(const struct rf_req *q, struct corr_req *r);

/* Copy r into q (the inverse of rf_req_view()). */
void rf_req_copy(struct rf_req *q, const struct corr_req *r);

/* Start and end (CLOCK_MONOTONIC ns) of a request, as the JSON line's ts_ns and ts_ns + lat_ns. */
void rf_req_span(const struct corr_req *r, uint64_t *start_ns, uint64_t *end_ns);

#endif /* IT_CORE_RECFMT_H */
