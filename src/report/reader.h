/* SPDX-License-Identifier: GPL-2.0 */
/*
 * reader: --record segments back into requests (format: records/recfmt.h,
 * docs/record.md). Pure: a segment is decoded from memory, so that tests
 * and fuzzers feed it any bytes. Nothing read is trusted: a block whose
 * header or CRC does not check is skipped and counted, and the reader looks
 * for the next block header after it; a block cut short at the end of the
 * file (a crash while writing it) is counted as torn.
 */
#ifndef IT_REPORT_READER_H
#define IT_REPORT_READER_H

#include <stddef.h>
#include <stdint.h>

#include "records/recfmt.h"

struct cg_cache; /* records/cgroup.h */
struct fn_cache; /* records/fname.h */
struct ct_names; /* records/container.h */

struct rr_stats {
	uint64_t segments; /* segment headers read */
	uint64_t bad_segments; /* files that are not segments this build reads */
	uint64_t blocks; /* blocks decoded */
	uint64_t bad_blocks; /* blocks skipped: header, CRC, inflate or entry errors */
	uint64_t torn; /* blocks cut short at the end of a segment */
	uint64_t skipped_bytes; /* bytes of bad or torn blocks and garbage between blocks */
	uint64_t requests; /* requests decoded */
	uint64_t blames; /* requests' blame entries decoded (RF_E_BLAME) */
	uint64_t unknown; /* entries of a kind this build does not know: skipped */
	uint64_t fnames; /* file names (RF_E_FNAME) */
	uint64_t ctnames; /* container and pod names (RF_E_CTNAME) */
};

#define RR_MAX_DEVS 256

/* What a request's callback may ask about: the segment and the device names seen. */
struct rr_reader {
	struct rf_seg_hdr seg; /* of the segment being read */
	struct rf_dev devs[RR_MAX_DEVS]; /* last name of each device, over all segments */
	int nr_devs;
	struct cg_cache *cg; /* cgroup id -> path, as the recording announced them */
	struct fn_cache *fnames; /* file names, as the recording announced them (made on the first) */
	struct ct_names *names; /* the caller's: the recording's container and pod names go there */
	struct rr_stats st;
	/* one request at a time: the callback gets it */
	void (*fn)(void *ctx, const struct rr_reader *rr, const struct rf_req *q);
	void *ctx;
	/* a request's blame entry (after the request); NULL: not wanted. Same ctx. */
	void (*blame_fn)(void *ctx, const struct rr_reader *rr, const struct blame_line *b);
	/* scratch */
	uint8_t *raw;
	size_t raw_cap;
	struct rf_req req;
	struct rf_more *more;
};

#define RR_MAX_FNAMES (1u << 20) /* file names kept, the least used forgotten past it */

void rr_init(struct rr_reader *rr,
	     void (*fn)(void *ctx, const struct rr_reader *rr, const struct rf_req *q), void *ctx);
void rr_free(struct rr_reader *rr);

/*
 * Decode one segment held in buf[0..len): every request goes to fn in file
 * order. Returns 0, or -EBADMSG / -EPROTO when buf does not start with a
 * segment header this build reads (counted in bad_segments; nothing decoded)
 * and -ENOMEM.
 */
int rr_segment(struct rr_reader *rr, const uint8_t *buf, size_t len);

/* Remember d's name and serial (the newest wins). */
void rr_note_dev(struct rr_reader *rr, const struct rf_dev *d);

/* Name and serial of dev from the recording, NULL when never seen (serial: none). */
const char *rr_dev_name(const struct rr_reader *rr, uint32_t dev);
const char *rr_dev_serial(const struct rr_reader *rr, uint32_t dev);
/* Remember cgroup id's path (the newest wins). */
void rr_note_cgroup(struct rr_reader *rr, uint64_t id, const char *path);
/* Path of cgroup id from the recording ("/system.slice/x.service"), NULL when never seen. */
const char *rr_cgroup_path(const struct rr_reader *rr, uint64_t id);
/* Remember a file's names (the newest win; the recording's, or a JSON line's "file"). */
void rr_note_fname(struct rr_reader *rr, uint64_t ino, uint32_t dev, uint32_t bdev,
		   const char *file, const char *cfile);

#endif /* IT_REPORT_READER_H */
