/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sink internals shared by sink.c (the daemon's side: rows, batches, the
 * spill's use), sender.c (the sender thread and the queue between them) and
 * spill.c (the spill directory: written in the --record format, replayed).
 */
#ifndef IT_SINK_INT_H
#define IT_SINK_INT_H

#include <pthread.h>
#include <stdint.h>

#include "sink/http.h"
#include "sink/rows.h"
#include "sink/sink.h"

enum { SK_T_REQ, SK_T_BLAME, SK_T_NR }; /* the table a batch goes to */

/* A spill segment being replayed: deleted once every batch made of it was sent. */
struct sk_seg {
	struct sk_seg *next;
	char *path;
	uint64_t bytes;
	int refs; /* its batches in the queue (atomic) */
	int read; /* every request of it is in a batch */
};

/* A batch: one Native block for one table. */
struct sk_batch {
	struct sk_batch *next;
	int table;
	uint64_t rows;
	struct nat_buf data; /* Native (SK_ENC_NONE); compressed: none (zoff), or handed back */
	size_t plain_at; /* data's columns that change from row to row: from here on */
	int enc; /* enum sk_enc: SK_ENC_NONE until the sender compressed it */
	size_t zoff, zlen; /* compressed: its bytes in the sender's zq */
	struct sk_seg *seg; /* replayed from this segment; NULL: live rows */
};

/* Counters both threads update (__atomic, relaxed): indexes into sk_ctr.v. */
enum {
	SK_C_ROWS,
	SK_C_BLAME_ROWS,
	SK_C_SENT,
	SK_C_BLAME_SENT,
	SK_C_BATCHES,
	SK_C_BYTES,
	SK_C_SPILLED,
	SK_C_REPLAYED,
	SK_C_DROP,
	SK_C_RETRY = SK_C_DROP + SK_DROP_NR,
	SK_C_NR = SK_C_RETRY + SK_RETRY_NR,
};

static inline void sk_add(uint64_t *v, uint64_t n)
{
	__atomic_fetch_add(v, n, __ATOMIC_RELAXED);
}

static inline uint64_t sk_get(const uint64_t *v)
{
	return __atomic_load_n(v, __ATOMIC_RELAXED);
}

#define SK_SPARES 1 /* a compressed batch's Native buffer, kept for the next batch */
#define SK_ZQ_KEEP (16u << 20) /* the compressed queue's memory kept once empty, at most */

/* The sender thread and the queue it takes batches from. */
struct sk_sender {
	pthread_t thread;
	int started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct sk_batch *head, *tail; /* under lock */
	uint64_t q_rows, q_bytes; /* under lock; q_bytes also read atomically */
	volatile int stop; /* the daemon is closing: leave */
	int draining; /* the daemon waits for the queue to empty */
	int up; /* the last request was answered 200 (atomic) */
	int failed; /* the last attempt failed (atomic; 0 before the first one ends) */
	int checked[SK_T_NR]; /* the table's columns were checked */
	int said; /* bit per enum sink_retry: its first message was printed */
	struct sk_http *http;
	const char *scheme; /* of the last answer: "https", "http" (static), "" before one */
	int enc; /* enum sk_enc: how batches are compressed */
	void *zctx; /* the compressor's state (sk_compress()) */
	/* the queue's compressed batches, one after the other in its order: POSTs' bodies */
	struct nat_buf zq;
	/* batches' buffers compressed, for the next batches (their pages kept): under lock */
	struct nat_buf spare[SK_SPARES];
	int nr_spare;
	struct sk_http_cfg cfg;
	uint64_t retry_max_ns;
	uint64_t *ctr; /* the sink's counters */
	char sql[SK_T_NR][200]; /* INSERT INTO db.table FORMAT Native */
	char table[SK_T_NR][140]; /* db.table */
	const char *who;
};

/* sender.c */
int sk_sender_start(struct sk_sender *q, const struct sk_http_cfg *cfg, int enc, uint64_t *ctr,
		    const char *who, uint64_t retry_max_ns);
/* An empty buffer for a batch's rows, one of those the sender compressed if any (else none). */
void sk_sender_spare(struct sk_sender *q, struct nat_buf *out);
/* Hand b to the sender (the queue takes it whatever its size). */
void sk_sender_push(struct sk_sender *q, struct sk_batch *b);
uint64_t sk_sender_bytes(struct sk_sender *q);
/* Wait until the queue is empty, or deadline (CLOCK_MONOTONIC), or an attempt fails. */
void sk_sender_drain(struct sk_sender *q, uint64_t deadline_ns);
/* Stop the thread; the batches left are handed back (in order), the queue emptied. */
struct sk_batch *sk_sender_stop(struct sk_sender *q);
void sk_batch_free(struct sk_batch *b);

/* The spill directory (spill.c). */
struct sk_spill {
	char *dir;
	uint64_t max;
	struct recorder *rc; /* open while spilling */
	uint64_t start_ns; /* the run, for its segments' headers */
	const char *sysfs_root;
	struct cg_cache *cg;
	struct fn_cache *fn; /* the daemon's file names (sink_set_fnames); NULL: none */
	uint64_t used; /* bytes in the directory at the last scan */
	uint64_t rc_bytes_at_scan; /* rec_bytes(rc) then */
	uint64_t next_scan_ns;
	uint64_t lost_seen, blame_seen; /* rec_lost(), rec_blame_lost() already counted */
	struct sk_seg *segs; /* being replayed */
	/*
	 * The directory may hold a segment not replayed yet: at start (a previous
	 * run's), once a spill closed; cleared by a scan that found none
	 * (sk_spill_next: not a scandir every drain).
	 */
	int rescan;
	int warned;
	const char *who;
};

int sk_spill_init(struct sk_spill *sp, const char *dir, uint64_t max, uint64_t start_ns,
		  const char *sysfs_root, struct cg_cache *cg, const char *who);
/* 0: spilled; else the enum sink_drop reason it could not be. */
int sk_spill_request(struct sk_spill *sp, const struct corr_req *r, uint64_t now_ns);
int sk_spill_blame(struct sk_spill *sp, const struct blame_line *l, uint64_t now_ns);
/*
 * Stop spilling: the segment is closed, ready to be replayed; the requests its
 * last writes lost (*blame: the blame lines).
 */
uint64_t sk_spill_close(struct sk_spill *sp, uint64_t *blame);
/* Requests (*blame: blame lines) lost to write errors since the last call. */
uint64_t sk_spill_lost(struct sk_spill *sp, uint64_t *blame);
/* The next closed segment not being replayed yet (oldest first), or NULL; it is then listed. */
struct sk_seg *sk_spill_next(struct sk_spill *sp);
/* Delete the replayed segments whose batches were all sent. */
void sk_spill_reap(struct sk_spill *sp);
/* Bytes in the directory now (rescanned at most once a second). */
uint64_t sk_spill_used(struct sk_spill *sp, uint64_t now_ns);
void sk_spill_free(struct sk_spill *sp);

#endif /* IT_SINK_INT_H */
