// SPDX-License-Identifier: GPL-2.0
/*
 * recbuf: merge the per-CPU record buffers and the ring buffer's records by
 * end time (see recbuf.h).
 *
 * A k-way merge over ncpu + 1 streams: each stream's next record and its end
 * time are cached, the smallest goes next, O(k) per record. Within a stream
 * records are in publication order, which is end-time order except for a
 * program interrupted on its CPU by another one (the interrupting record is
 * published first); the merge keeps such a pair as it is.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "records/recbuf.h"

#define SPILL_ALIGN 8
#define SPILL_KEEP 65536 /* spill buffer kept between drains, at most */
#define SPILL_HDR 8 /* a spilled record: its length (u32), padding, the record (aligned) */

/* the common records take the per-CPU slots (bpf/record.bpf.h it_reserve), not the ring */
_Static_assert(sizeof(struct it_block_rec) <= IT_SLOT_SIZE, "a block record fills a slot at most");
_Static_assert(sizeof(struct it_syscall_rec) <= IT_SLOT_SIZE, "a syscall record too");

void recbuf_init(struct recbuf *b, int ncpu, uint32_t shift, void *slots, void *pos)
{
	memset(b, 0, sizeof(*b));
	b->ncpu = slots && pos && ncpu > 0 ? ncpu : 0;
	b->shift = shift;
	b->slots = b->ncpu ? slots : NULL;
	b->pos = b->ncpu ? pos : NULL;
}

void recbuf_free(struct recbuf *b)
{
	free(b->spill);
	b->spill = NULL;
	b->spill_off = b->spill_len = b->spill_cap = 0;
}

static size_t spill_rec_len(size_t len)
{
	return (SPILL_HDR + len + SPILL_ALIGN - 1) & ~(size_t)(SPILL_ALIGN - 1);
}

int recbuf_ring_record(void *ctx, void *data, size_t size)
{
	struct recbuf *b = ctx;

	if (size >= sizeof(struct it_hdr) && ((struct it_hdr *)data)->type == IT_REC_WAKE)
		return 0;
	if (b->note && size >= sizeof(struct it_hdr) &&
	    ((struct it_hdr *)data)->type == IT_REC_CGROUP) {
		b->note(b->note_ctx, data, size);
		return 0;
	}
	if (recbuf_spill(b, data, size))
		b->spill_lost++;
	return 0;
}

int recbuf_spill(struct recbuf *b, const void *data, size_t len)
{
	size_t need = spill_rec_len(len);
	uint32_t l32 = (uint32_t)len;

	if (len > UINT32_MAX)
		return -EINVAL;
	if (b->spill_off && b->spill_off == b->spill_len)
		b->spill_off = b->spill_len = 0;
	if (b->spill_len + need > b->spill_cap) {
		size_t cap = b->spill_cap ? b->spill_cap : 4096;
		uint8_t *n;

		/* drop what was read before growing */
		if (b->spill_off) {
			memmove(b->spill, b->spill + b->spill_off, b->spill_len - b->spill_off);
			b->spill_len -= b->spill_off;
			b->spill_off = 0;
		}
		while (b->spill_len + need > cap)
			cap *= 2;
		if (cap != b->spill_cap) {
			n = realloc(b->spill, cap);
			if (!n)
				return -ENOMEM;
			b->spill = n;
			b->spill_cap = cap;
		}
	}
	memcpy(b->spill + b->spill_len, &l32, sizeof(l32));
	memcpy(b->spill + b->spill_len + SPILL_HDR, data, len);
	b->spill_len += need;
	return 0;
}

uint64_t recbuf_end_ns(const void *data, size_t len)
{
	return it_rec_end_ns(data, len);
}

static uint8_t *slot_of(const struct recbuf *b, int cpu, uint64_t i)
{
	uint64_t mask = (1ull << b->shift) - 1;

	return b->slots + ((((uint64_t)cpu << b->shift) | (i & mask)) * IT_SLOT_SIZE);
}

static int slot_ok(const uint8_t *s)
{
	const struct it_hdr *h = (const void *)s;

	return h->size >= sizeof(*h) && h->size <= IT_SLOT_SIZE;
}

/* Length of the record in a slot, clamped to the slot. */
static size_t slot_len(const uint8_t *s)
{
	return slot_ok(s) ? ((const struct it_hdr *)(const void *)s)->size : IT_SLOT_SIZE;
}

/* Length of the spilled record at off. */
static uint32_t spill_len_at(const struct recbuf *b, size_t off)
{
	uint32_t l;

	memcpy(&l, b->spill + off, sizeof(l));
	return l;
}

/* End time of the next unread spilled record (0 when none). */
static uint64_t spill_next_end(const struct recbuf *b)
{
	if (b->spill_off >= b->spill_len)
		return 0;
	return recbuf_end_ns(b->spill + b->spill_off + SPILL_HDR, spill_len_at(b, b->spill_off));
}

/* End time of CPU cpu's record at slot index i. */
static uint64_t slot_end(const struct recbuf *b, int cpu, uint64_t i)
{
	const uint8_t *s = slot_of(b, cpu, i);

	return recbuf_end_ns(s, slot_len(s));
}

size_t recbuf_pending(const struct recbuf *b)
{
	size_t n = 0;

	for (int c = 0; c < b->ncpu; c++)
		n += __atomic_load_n(&b->pos[c].head, __ATOMIC_ACQUIRE) - b->pos[c].tail;
	for (size_t off = b->spill_off; off < b->spill_len; n++)
		off += spill_rec_len(spill_len_at(b, off));
	return n;
}

struct stream {
	uint64_t next, end; /* slot index, and the head snapshot */
	uint64_t t; /* end time of the next record */
};

size_t recbuf_drain(struct recbuf *b, uint64_t watermark, recbuf_fn fn, void *ctx)
{
	struct stream one, *st = b->ncpu <= 1 ? &one : calloc(b->ncpu, sizeof(*st));
	uint64_t spill_t = spill_next_end(b);
	size_t fed = 0;

	if (!st)
		return 0;
	for (int c = 0; c < b->ncpu; c++) {
		st[c].next = b->pos[c].tail;
		st[c].end = __atomic_load_n(&b->pos[c].head, __ATOMIC_ACQUIRE);
		if (st[c].next < st[c].end)
			st[c].t = slot_end(b, c, st[c].next);
	}
	for (;;) {
		int best = -1; /* a CPU, or b->ncpu for the spill */
		uint64_t t = UINT64_MAX;

		for (int c = 0; c < b->ncpu; c++) {
			if (st[c].next < st[c].end && (best < 0 || st[c].t < t)) {
				best = c;
				t = st[c].t;
			}
		}
		if (b->spill_off < b->spill_len && (best < 0 || spill_t < t)) {
			best = b->ncpu;
			t = spill_t;
		}
		if (best < 0 || t > watermark)
			break;
		if (best == b->ncpu) {
			uint32_t l = spill_len_at(b, b->spill_off);

			fn(ctx, b->spill + b->spill_off + SPILL_HDR, l);
			b->spill_off += spill_rec_len(l);
			spill_t = spill_next_end(b);
		} else {
			struct stream *s = &st[best];
			uint8_t *rec = slot_of(b, best, s->next);

			b->bad += !slot_ok(rec);
			fn(ctx, rec, slot_len(rec));
			if (++s->next < s->end)
				s->t = slot_end(b, best, s->next);
		}
		fed++;
	}
	/* the slots read are free for the BPF side again */
	for (int c = 0; c < b->ncpu; c++)
		__atomic_store_n(&b->pos[c].tail, st[c].next, __ATOMIC_RELEASE);
	if (b->spill_off == b->spill_len) {
		b->spill_off = b->spill_len = 0;
		/* a burst of overflow grew it: give the memory back (RssAnon stays small) */
		if (b->spill_cap > SPILL_KEEP)
			recbuf_free(b);
	}
	if (st != &one)
		free(st);
	return fed;
}
