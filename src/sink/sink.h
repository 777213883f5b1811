/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sink: --sink clickhouse://..., every request the daemon writes (-j,
 * --record) also as a row of a ClickHouse table (docs/fleet.md). The
 * daemon's thread builds the rows into Native blocks and hands whole
 * batches (SK_BATCH_ROWS rows or SK_BATCH_AGE_NS old) to a queue; a sender
 * thread compresses them and POSTs those waiting (one INSERT), and retries
 * with backoff while the server is down, slow or refusing. The daemon never waits on the network: when the
 * queue holds --sink-queue bytes, requests go to a spill directory in the
 * --record format instead, replayed once the queue has room again; what
 * the queue still holds at exit is spilled too, and replayed by the next
 * run. Rows carry (host, boot, run, id): at-least-once delivery, a
 * ReplacingMergeTree removes the doubles. Every row that cannot be kept is
 * counted with its reason.
 */
#ifndef IT_SINK_SINK_H
#define IT_SINK_SINK_H

#include <stdint.h>
#include <stdio.h>

#include "blame/blame_json.h"
#include "records/corr.h"

/*
 * Rows in a batch, at most: one Native block, compressed as soon as the sender
 * is free (memory), several batches a POST (the server's parts).
 */
#define SK_BATCH_ROWS 4096
#define SK_BATCH_AGE_NS 1000000000ull /* a row waits at most this long for its batch */
#define SK_DEF_QUEUE (64ull << 20) /* --sink-queue */
#define SK_MIN_QUEUE (64ull << 10)
#define SK_DEF_SPILL_MAX (1ull << 30) /* --sink-spill-max */
#define SK_MIN_SPILL_MAX (64ull << 10)
#define SK_DEF_SPILL "/var/lib/iotracer/sink"
#define SK_DEF_TIMEOUT_MS 10000L /* --sink-timeout: a request, at most */

struct cg_cache;
struct ct_names;

struct sink_opts {
	const char *url; /* clickhouse[s]://[user@]host:port/db.table */
	const char *auth; /* the password file, NULL: none */
	const char *ca_file;
	const char *spill_dir;
	uint64_t spill_max, queue_max;
	const char *host; /* the rows' host column (--name); NULL: the host name */
	const char *sysfs_root;
	uint64_t start_ns; /* the daemon's start, CLOCK_MONOTONIC: the rows' run */
	const char *who; /* how errors name the option: "--sink" or "FILE:LINE: sink" */
	long timeout_ms; /* a request to the server, at most (0: SK_DEF_TIMEOUT_MS) */
	/*
	 * --sink-compress: "fast" (NULL: ClickHouse's own format, zstd, the columns that
	 * change from row to row stored), "zstd" (every column compressed), "gzip"
	 * (Content-Encoding gzip)
	 */
	const char *compress;
	uint64_t retry_max_ns; /* tests: the longest backoff (0: 100 ms doubling to 2 s) */
};

/* Why rows were not kept, and why a batch was sent again. */
enum sink_drop {
	SK_DROP_QUEUE_FULL, /* the queue was full and there is no spill directory */
	SK_DROP_SPILL_FULL, /* the spill directory holds --sink-spill-max */
	SK_DROP_SPILL_ERROR, /* a spill write failed (ENOSPC, EIO...) */
	SK_DROP_ENCODE, /* out of memory while building a batch */
	SK_DROP_NR,
};

enum sink_retry {
	SK_RETRY_CONNECT, /* refused, unreachable, name not resolved */
	SK_RETRY_TIMEOUT, /* no answer within the timeout (a stopped or slow server) */
	SK_RETRY_TLS,
	SK_RETRY_IO, /* the connection broke */
	SK_RETRY_AUTH, /* wrong user or password */
	SK_RETRY_TABLE, /* no such table, or its columns are not this build's */
	SK_RETRY_HTTP_4XX,
	SK_RETRY_HTTP_5XX,
	SK_RETRY_NR,
};

struct sink_stats {
	uint64_t rows, blame_rows; /* requests (and blame lines) the daemon handed over */
	uint64_t sent, blame_sent; /* rows the server took (200) */
	uint64_t batches, bytes; /* batches sent, their gzip'd bytes */
	uint64_t spilled; /* rows written to the spill directory */
	uint64_t replayed; /* rows read back from it and sent */
	uint64_t dropped[SK_DROP_NR];
	uint64_t retries[SK_RETRY_NR];
	uint64_t queue_rows, queue_bytes; /* waiting in memory now */
	uint64_t spill_bytes; /* in the spill directory now (of this and earlier runs) */
	int up; /* the last request got a 200 */
	const char *scheme; /* "https", "http", "" before the first answer */
};

struct sink;

/*
 * Open: check the address and the password file, start the sender thread
 * (nothing waits for the server: it is checked from that thread). NULL when
 * the options are bad or this build has no sink (said on stderr).
 */
struct sink *sink_open(const struct sink_opts *o, struct cg_cache *cg, struct ct_names *names);

/*
 * The daemon's file names (records/fname.h; not owned), for the rows' file
 * columns and the spill: read without a use, as the recording reads them.
 */
struct fn_cache;
void sink_set_fnames(struct sink *s, struct fn_cache *fn);

/* One finished request (corr_emit_fn style), and a request's blame line. */
void sink_request(struct sink *s, const struct corr_req *r);
void sink_blame(struct sink *s, const struct blame_line *l);

/* Every drain (now: CLOCK_MONOTONIC): due batches, spill and replay. */
void sink_tick(struct sink *s, uint64_t now_ns);

void sink_stats(struct sink *s, struct sink_stats *st);
const char *sink_drop_name(int reason);
const char *sink_retry_name(int reason);

/* The summary's line: "sink: 12000 rows sent ...". */
void sink_summary(struct sink *s, FILE *f);

/*
 * Deliver what is left (a few seconds at most while the server answers),
 * spill the rest, stop the sender. The rows not kept over the run, 0 when
 * none. The stats stay readable until sink_free() (which finishes first).
 */
uint64_t sink_finish(struct sink *s);
void sink_free(struct sink *s);

#endif /* IT_SINK_SINK_H */
