// SPDX-License-Identifier: GPL-2.0
/*
 * recbuf: the merge of per-CPU record buffers and ring buffer copies, on
 * hand-built buffers: end-time order across CPUs, the watermark, slot reuse
 * after wrap-around, tails, malformed sizes.
 */
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "records/recbuf.h"

#define NCPU 2
#define SHIFT 2 /* 4 slots per CPU */
#define MAXFED 64

struct bufs {
	uint8_t slots[NCPU << SHIFT][IT_SLOT_SIZE];
	struct it_slot_pos pos[NCPU];
};

struct fed {
	int n;
	uint64_t end[MAXFED];
	uint16_t type[MAXFED];
	size_t len[MAXFED];
};

static void on_rec(void *ctx, void *data, size_t len)
{
	struct fed *f = ctx;

	if (f->n < MAXFED) {
		f->end[f->n] = recbuf_end_ns(data, len);
		f->type[f->n] = ((struct it_hdr *)data)->type;
		f->len[f->n] = len;
	}
	f->n++;
}

/* Publish a block (end = c_ns) or syscall (end = exit_ns) record on cpu, as BPF does. */
static void put(struct bufs *b, int cpu, int syscall, uint64_t end)
{
	uint64_t h = b->pos[cpu].head;
	uint8_t *s = b->slots[(cpu << SHIFT) | (h & ((1u << SHIFT) - 1))];

	memset(s, 0, IT_SLOT_SIZE);
	if (syscall) {
		struct it_syscall_rec *r = (void *)s;

		r->hdr.type = IT_REC_SYSCALL;
		r->hdr.size = sizeof(*r);
		r->enter_ns = end - 10;
		r->exit_ns = end;
	} else {
		struct it_block_rec *r = (void *)s;

		r->hdr.type = IT_REC_BLOCK;
		r->hdr.size = sizeof(*r);
		r->q_ns = end - 5;
		r->c_ns = end;
	}
	b->pos[cpu].head = h + 1;
}

static void spill_uring(struct recbuf *rb, uint64_t end)
{
	struct it_uring_rec u = { .hdr = { .type = IT_REC_URING, .size = sizeof(u) } };

	u.submit_ns = end - 3;
	u.complete_ns = end;
	ASSERT_EQ(recbuf_spill(rb, &u, sizeof(u)), 0, "spill");
}

static int sorted(const struct fed *f)
{
	for (int i = 1; i < f->n && i < MAXFED; i++)
		if (f->end[i] < f->end[i - 1])
			return 0;
	return 1;
}

/* A child on CPU 1 ended before its parent on CPU 0: it is fed first. */
static void test_merge_order(void)
{
	struct bufs *b = calloc(1, sizeof(*b));
	struct recbuf rb;
	struct fed f = { 0 };

	recbuf_init(&rb, NCPU, SHIFT, b->slots, b->pos);
	put(b, 0, 1, 200); /* syscall exit at 200 */
	put(b, 0, 1, 400);
	put(b, 1, 0, 150); /* its block completed at 150 on the other CPU */
	put(b, 1, 0, 390);
	spill_uring(&rb, 300);
	ASSERT_EQ(recbuf_pending(&rb), 5, "pending");
	ASSERT_EQ(recbuf_drain(&rb, UINT64_MAX, on_rec, &f), 5, "fed all");
	ASSERT_EQ(f.n, 5, "n");
	ASSERT_TRUE(sorted(&f), "end-time order");
	ASSERT_EQ(f.end[0], 150, "block first");
	ASSERT_EQ(f.type[0], IT_REC_BLOCK, "type");
	ASSERT_EQ(f.end[2], 300, "spilled uring record in place");
	ASSERT_EQ(f.len[2], sizeof(struct it_uring_rec), "spill len");
	ASSERT_EQ(f.len[0], sizeof(struct it_block_rec), "slot len from hdr.size");
	ASSERT_EQ(b->pos[0].tail, 2, "tail cpu0");
	ASSERT_EQ(b->pos[1].tail, 2, "tail cpu1");
	ASSERT_EQ(recbuf_pending(&rb), 0, "nothing left");
	recbuf_free(&rb);
	free(b);
}

/* Records that ended after the watermark wait for the next drain. */
static void test_watermark(void)
{
	struct bufs *b = calloc(1, sizeof(*b));
	struct recbuf rb;
	struct fed f = { 0 };

	recbuf_init(&rb, NCPU, SHIFT, b->slots, b->pos);
	put(b, 0, 1, 100);
	put(b, 0, 1, 500);
	put(b, 1, 0, 450);
	spill_uring(&rb, 120);
	spill_uring(&rb, 600);
	ASSERT_EQ(recbuf_drain(&rb, 300, on_rec, &f), 2, "two before the watermark");
	ASSERT_EQ(f.end[0], 100, "first");
	ASSERT_EQ(f.end[1], 120, "second");
	ASSERT_EQ(b->pos[0].tail, 1, "cpu0 tail stops at the held record");
	ASSERT_EQ(b->pos[1].tail, 0, "cpu1 untouched");
	ASSERT_EQ(recbuf_pending(&rb), 3, "three held");
	/* a record of CPU 1 published late, ending before the held ones */
	put(b, 1, 0, 440);
	ASSERT_EQ(recbuf_drain(&rb, UINT64_MAX, on_rec, &f), 4, "the rest");
	ASSERT_EQ(f.n, 6, "six in all");
	ASSERT_EQ(f.end[2], 450, "cpu1 in its own order (450 published before 440)");
	ASSERT_EQ(f.end[3], 440, "then 440");
	ASSERT_EQ(f.end[4], 500, "then cpu0");
	ASSERT_EQ(f.end[5], 600, "then the spill");
	recbuf_free(&rb);
	free(b);
}

/* Slots are reused once read: several rounds through 4 slots per CPU. */
static void test_wrap(void)
{
	struct bufs *b = calloc(1, sizeof(*b));
	struct recbuf rb;
	struct fed f = { 0 };
	uint64_t t = 1000;

	recbuf_init(&rb, NCPU, SHIFT, b->slots, b->pos);
	for (int round = 0; round < 5; round++) {
		for (int i = 0; i < 3; i++) {
			put(b, 1, 0, t++);
			put(b, 0, 1, t++);
		}
		ASSERT_EQ(recbuf_drain(&rb, UINT64_MAX, on_rec, &f), 6, "round");
	}
	ASSERT_EQ(f.n, 30, "all");
	ASSERT_TRUE(sorted(&f), "sorted across rounds");
	ASSERT_EQ(b->pos[0].head, 15, "head");
	ASSERT_EQ(b->pos[0].tail, 15, "tail follows");
	recbuf_free(&rb);
	free(b);
}

/* A slot with an impossible size is fed clamped (the correlator rejects it) and counted. */
static void test_bad_size(void)
{
	struct bufs *b = calloc(1, sizeof(*b));
	struct recbuf rb;
	struct fed f = { 0 };

	recbuf_init(&rb, NCPU, SHIFT, b->slots, b->pos);
	put(b, 0, 1, 10);
	((struct it_hdr *)(void *)b->slots[0])->size = 3;
	ASSERT_EQ(recbuf_drain(&rb, UINT64_MAX, on_rec, &f), 1, "fed");
	ASSERT_EQ(f.len[0], IT_SLOT_SIZE, "clamped to the slot");
	ASSERT_EQ(rb.bad, 1, "counted");
	recbuf_free(&rb);
	free(b);
}

/* Ring buffer only (no slots), many spilled records: growth keeps order. */
static void test_spill_only(void)
{
	struct recbuf rb;
	struct fed f = { 0 };

	recbuf_init(&rb, NCPU, SHIFT, NULL, NULL);
	for (int i = 0; i < 60; i++)
		spill_uring(&rb, 100 + i);
	ASSERT_EQ(recbuf_drain(&rb, 129, on_rec, &f), 30, "up to the watermark");
	for (int i = 0; i < 60; i++)
		spill_uring(&rb, 200 + i); /* appended after the 30 held */
	ASSERT_EQ(recbuf_pending(&rb), 90, "pending");
	ASSERT_EQ(recbuf_drain(&rb, UINT64_MAX, on_rec, &f), 90, "rest");
	ASSERT_EQ(f.n, 120, "all");
	ASSERT_TRUE(sorted(&f), "order");
	ASSERT_EQ(recbuf_end_ns("x", 1), 0, "short record: no end");
	recbuf_free(&rb);
}

int main(void)
{
	RUN_TEST(test_merge_order);
	RUN_TEST(test_watermark);
	RUN_TEST(test_wrap);
	RUN_TEST(test_bad_size);
	RUN_TEST(test_spill_only);
	return unit_result();
}
