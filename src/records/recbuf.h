/* SPDX-License-Identifier: GPL-2.0 */
/*
 * recbuf: reads the BPF side's records in time order.
 *
 * Records arrive by two paths (include/iotracer.h, "Per-CPU record
 * buffers"): each CPU's own buffer of fixed slots, and the shared ring buffer
 * for records that did not fit there (aio, a nested program, a full buffer).
 * Each path is in publication order, but a CPU's records are not ordered
 * against another CPU's: a block request completing on CPU 1 may be read
 * after the syscall it belongs to, which ended later on CPU 0. The
 * correlator wants children before parents, so recbuf merges the streams
 * by each record's end time (recbuf_end_ns) and holds back the records that
 * ended after a watermark: a record of another CPU that ended earlier may
 * not be published yet.
 *
 * Pure user space; the buffers are the BPF maps mmap'd by the caller (or
 * plain memory in tests). Not thread safe.
 */
#ifndef IT_RECBUF_H
#define IT_RECBUF_H

#include <stddef.h>
#include <stdint.h>

#include "iotracer.h"

struct recbuf {
	int ncpu;
	uint32_t shift; /* log2(slots per CPU); the buffers are unused when slots is NULL */
	uint8_t *slots; /* ncpu << shift slots of IT_SLOT_SIZE bytes */
	struct it_slot_pos *pos; /* ncpu */
	/* copies of ring buffer records, in ring order: [spill_off, spill_len) unread */
	uint8_t *spill;
	size_t spill_off, spill_len, spill_cap;
	uint64_t bad; /* slot records with an impossible size (fed clamped) */
	uint64_t spill_lost; /* ring buffer records not kept (no memory) */
	/*
	 * Records that need no order (IT_REC_CGROUP: the BPF side wakes user space
	 * for them), handed to note at once from recbuf_ring_record; NULL: merged
	 * like the others. Set after recbuf_init.
	 */
	void (*note)(void *ctx, void *data, size_t len);
	void *note_ctx;
};

typedef void (*recbuf_fn)(void *ctx, void *data, size_t len);

/* slots/pos may be NULL (ring buffer only). */
void recbuf_init(struct recbuf *b, int ncpu, uint32_t shift, void *slots, void *pos);
void recbuf_free(struct recbuf *b); /* the spill copies; not the buffers */

/* Keep a copy of a ring buffer record until recbuf_drain() feeds it. -ENOMEM. */
int recbuf_spill(struct recbuf *b, const void *data, size_t len);
/*
 * libbpf's ring_buffer_sample_fn, ctx the recbuf: a copy of every record but
 * the wake-up pokes (IT_REC_WAKE) and the notes (note); one that cannot be kept
 * counts in spill_lost.
 */
int recbuf_ring_record(void *ctx, void *data, size_t size);

/*
 * Feed fn every unread record that ended at or before watermark (ns, the BPF
 * clock; UINT64_MAX: all), merged by end time, and release their slots.
 * Returns the number fed.
 */
size_t recbuf_drain(struct recbuf *b, uint64_t watermark, recbuf_fn fn, void *ctx);

/* Unread records (slots and spill). */
size_t recbuf_pending(const struct recbuf *b);

/* The time a record is ordered by: when its request (or event) ended; 0 if unknown. */
uint64_t recbuf_end_ns(const void *data, size_t len);

#endif /* IT_RECBUF_H */
