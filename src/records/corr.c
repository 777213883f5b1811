// SPDX-License-Identifier: GPL-2.0
/*
 * corr: joins ring buffer records into requests (see corr.h for the rules).
 *
 * Data structures (all intrusive, O(1) average per operation):
 *
 * - Nodes: one fixed-size union (a held block record or a pending aio iocb),
 *   carved from 256-node chunks and recycled through a free list, so the hot
 *   path never calls malloc once the pool has grown to its high-water mark
 *   (bounded by max_pending + one aio batch). Records are copied into nodes.
 *
 * - wait: hash table (chained, circular doubly linked buckets) of block
 *   records waiting for their parent, keyed (SYS, tid, seq) or (URING, req, 0).
 *   Nodes are appended, so a bucket walk yields one key's blocks in arrival
 *   order. The same nodes sit on wait_fifo (arrival order) for corr_tick().
 *
 * - by_iocb / by_sub: pending aio iocbs, hashed by (pid, iocb address) for the
 *   reap and by the io_submit's (tid, seq) for block matching (appended, so a
 *   walk is in submission order). Same nodes on iocb_fifo (submission order).
 *   A block matched to an iocb hangs on that iocb's block list.
 *
 * - recent: ring of CORR_RECENT emitted parents plus a hash on their key; the
 *   slot overwritten when the ring wraps is unhashed first (FIFO-bounded LRU).
 *
 * Every held item gets a global arrival number (order); the oldest held item
 * is whichever FIFO head has the smaller one, which gives O(1) eviction.
 *
 * Choices beyond the basic rules:
 * - A late block with origin URING joins a recently emitted io_uring parent
 *   only if it was queued before that request completed (q_ns <= complete_ns):
 *   io_kiocb addresses are recycled, so a block queued later belongs to a new
 *   request at the same address and is held for it instead.
 * - aio block matching: an exact (offset, nbytes) match with an iocb that has
 *   no block yet, else any exact match, else the first iocb without a block,
 *   else the first pending iocb of the submission (an iocb split in several
 *   block requests).
 * - Evicted items are counted in evicted and also in unjoined (blocks) or
 *   aio_unreaped (iocbs), like the same items emitted by corr_tick/flush.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "records/corr.h"
#include "records/corr_htab.h"
#include "records/corr_link.h"

#define CHUNK_NODES 256

enum key_class {
	KEY_SYS = 0, /* (tid, seq) of a syscall or an io_submit */
	KEY_URING = 1, /* (io_kiocb, 0) */
};

/* A block record held while its parent is unknown, or attached to an iocb. */
struct blk_node {
	struct corr_link hl; /* wait bucket, an iocb's block list, or a local list */
	struct corr_link fl; /* wait_fifo (only while waiting) */
	uint64_t order;
	uint64_t arr_ns;
	uint64_t k1, k2;
	uint8_t cls;
	uint8_t listed; /* in its request's blocks[] (fill_blocks) */
	struct it_block_rec rec;
};

/* One submitted, not yet reaped aio iocb. */
struct iocb_node {
	struct corr_link pl; /* by_iocb bucket */
	struct corr_link sl; /* by_sub bucket */
	struct corr_link fl; /* iocb_fifo */
	struct corr_link blocks; /* blk_node.hl, arrival order */
	uint64_t order;
	int nr_blocks;
	struct it_task task;
	uint64_t seq;
	uint64_t submit_ns;
	struct it_aio_iocb io;
};

union node {
	union node *next_free;
	struct blk_node b;
	struct iocb_node i;
};

struct chunk {
	struct chunk *next;
	union node nodes[CHUNK_NODES];
};

/* A recently emitted parent. */
struct recent {
	struct corr_link hl;
	uint64_t k1, k2;
	uint64_t id;
	uint64_t seq;
	uint64_t end_ns;
	uint32_t tid;
	uint8_t cls;
	uint8_t used;
};

struct corr {
	corr_emit_fn fn;
	void *ctx;
	uint64_t hold_ns;
	size_t max_pending;
	size_t npending;
	uint64_t next_id;
	uint64_t order;
	int in_emit;
	struct corr_stats st;
	struct htab wait, by_iocb, by_sub, recent_h;
	struct corr_link wait_fifo, iocb_fifo;
	union node *free;
	struct chunk *chunks;
	struct recent *recent;
	size_t recent_next, recent_used; /* the ring's next slot, its slots in recent_h */
	struct wbsync wbs; /* write requests emitted, for the syncs that waited for them */
};

/* Each table's entries' hashes: the keys htab_bucket() is given for them. */
static uint64_t wait_hash(const struct corr_link *l)
{
	const struct blk_node *bn = link_entry(l, struct blk_node, hl);

	return htab_hash(bn->k1, bn->k2 ^ bn->cls);
}

static uint64_t iocb_hash(const struct corr_link *l)
{
	const struct iocb_node *in = link_entry(l, struct iocb_node, pl);

	return htab_hash(in->task.pid, in->io.iocb);
}

static uint64_t sub_hash(const struct corr_link *l)
{
	const struct iocb_node *in = link_entry(l, struct iocb_node, sl);

	return htab_hash(in->task.tid, in->seq);
}

static uint64_t recent_hash(const struct corr_link *l)
{
	const struct recent *e = link_entry(l, struct recent, hl);

	return htab_hash(e->k1, e->k2 ^ e->cls);
}

static union node *node_alloc(struct corr *c)
{
	union node *n;

	if (!c->free) {
		struct chunk *ch = malloc(sizeof(*ch));

		if (!ch)
			return NULL;
		ch->next = c->chunks;
		c->chunks = ch;
		for (int i = CHUNK_NODES - 1; i >= 0; i--) {
			ch->nodes[i].next_free = c->free;
			c->free = &ch->nodes[i];
		}
	}
	n = c->free;
	c->free = n->next_free;
	return n;
}

static void node_free(struct corr *c, void *p)
{
	union node *n = p;

	n->next_free = c->free;
	c->free = n;
}

/* Free the blk_nodes of a list linked through hl. */
static void free_blocks(struct corr *c, struct corr_link *list)
{
	struct corr_link *l = list->next, *next;

	for (; l != list; l = next) {
		next = l->next;
		node_free(c, link_entry(l, struct blk_node, hl));
	}
	link_init(list);
}

/*
 * Point req->blocks at the records of a blk_node list, in arrival order. Past
 * CORR_MAX_BLOCKS the list keeps the first queued and the last completed block
 * (the request's block span, which post_block and the live FS column read) and
 * the first ones after them; the rest are emitted apart (emit_apart).
 */
static void fill_blocks(struct corr_req *r, struct corr_link *list)
{
	struct blk_node *lo = NULL, *hi = NULL;
	int n = 0, reserve;

	for (struct corr_link *l = list->next; l != list; l = l->next) {
		struct blk_node *bn = link_entry(l, struct blk_node, hl);

		if (!lo || bn->rec.q_ns < lo->rec.q_ns)
			lo = bn;
		if (!hi || bn->rec.c_ns > hi->rec.c_ns)
			hi = bn;
		n++;
	}
	reserve = n > CORR_MAX_BLOCKS ? 1 + (lo != hi) : 0;
	for (struct corr_link *l = list->next; l != list; l = l->next) {
		struct blk_node *bn = link_entry(l, struct blk_node, hl);
		bool span = reserve && (bn == lo || bn == hi);

		reserve -= span;
		bn->listed = span || r->nr_blocks < CORR_MAX_BLOCKS - reserve;
		if (bn->listed)
			r->blocks[r->nr_blocks++] = &bn->rec;
		else
			r->nr_blocks_apart++;
	}
}

static void emit(struct corr *c, struct corr_req *r)
{
	r->id = ++c->next_id;
	c->st.requests++;
	c->st.blocks_apart += (uint64_t)r->nr_blocks_apart;
	if (r->kind == CORR_SYSCALL && r->sys->ino && wbsync_is_sync(r->sys)) {
		wbsync_match(&c->wbs, r->sys, &r->waited);
		r->has_waited = 1;
	}
	c->in_emit = 1;
	c->fn(r, c->ctx);
	c->in_emit = 0;
	/* writes of no traced request: emitted as fed, in completion order (wbsync.h) */
	if (r->kind == CORR_BLOCK &&
	    (r->blocks[0]->origin == IT_ORIG_NONE || r->blocks[0]->origin == IT_ORIG_WRITEBACK))
		wbsync_add(&c->wbs, r->blocks[0], r->id);
}

/* ---- recently emitted parents ---- */

static struct recent *recent_find(const struct corr *c, uint8_t cls, uint64_t k1, uint64_t k2)
{
	struct corr_link *h = htab_bucket(&c->recent_h, k1, k2 ^ cls);

	for (struct corr_link *l = h->next; l != h; l = l->next) {
		struct recent *e = link_entry(l, struct recent, hl);

		if (e->cls == cls && e->k1 == k1 && e->k2 == k2)
			return e;
	}
	return NULL;
}

static void recent_put(struct corr *c, uint8_t cls, uint64_t k1, uint64_t k2, uint64_t id,
		       uint32_t tid, uint64_t seq, uint64_t end_ns)
{
	struct recent *e = recent_find(c, cls, k1, k2);

	if (e) {
		/* Same key again (recycled io_kiocb, next iocb of a batch). */
		link_del(&e->hl);
		e->used = 0;
		c->recent_used--;
	}
	e = &c->recent[c->recent_next];
	c->recent_next = (c->recent_next + 1) % CORR_RECENT;
	if (e->used)
		link_del(&e->hl);
	else
		htab_fit(&c->recent_h, ++c->recent_used);
	e->cls = cls;
	e->k1 = k1;
	e->k2 = k2;
	e->id = id;
	e->tid = tid;
	e->seq = seq;
	e->end_ns = end_ns;
	e->used = 1;
	link_add_tail(htab_bucket(&c->recent_h, k1, k2 ^ cls), &e->hl);
}

/* ---- block records ---- */

static void emit_lone_block(struct corr *c, const struct it_block_rec *rec,
			    const struct recent *parent)
{
	struct corr_req r;

	memset(&r, 0, sizeof(r));
	r.kind = CORR_BLOCK;
	r.blocks[0] = rec;
	r.nr_blocks = 1;
	if (parent) {
		r.parent.id = parent->id;
		r.parent.tid = parent->tid;
		r.parent.seq = parent->seq;
		r.parent.valid = 1;
	}
	emit(c, &r);
}

/* After request r: its blocks fill_blocks did not list, each with r as parent. */
static void emit_apart(struct corr *c, struct corr_link *list, const struct corr_req *r,
		       uint32_t tid, uint64_t seq)
{
	const struct recent p = { .id = r->id, .tid = tid, .seq = seq };

	for (struct corr_link *l = list->next; r->nr_blocks_apart && l != list; l = l->next) {
		const struct blk_node *bn = link_entry(l, struct blk_node, hl);

		if (!bn->listed)
			emit_lone_block(c, &bn->rec, &p);
	}
}

/* Emit a waiting block on its own: timeout, eviction or flush. */
static void emit_waiting_block(struct corr *c, struct blk_node *bn)
{
	link_del(&bn->hl);
	link_del(&bn->fl);
	c->npending--;
	c->st.unjoined++;
	emit_lone_block(c, &bn->rec, NULL);
	node_free(c, bn);
}

/* Move the waiting blocks of one key to list, in arrival order. */
static void take_waiting(struct corr *c, uint8_t cls, uint64_t k1, uint64_t k2,
			 struct corr_link *list)
{
	struct corr_link *h = htab_bucket(&c->wait, k1, k2 ^ cls), *l, *next;

	for (l = h->next; l != h; l = next) {
		struct blk_node *bn = link_entry(l, struct blk_node, hl);

		next = l->next;
		if (bn->cls != cls || bn->k1 != k1 || bn->k2 != k2)
			continue;
		link_del(&bn->hl);
		link_del(&bn->fl);
		link_add_tail(list, &bn->hl);
		c->npending--;
	}
}

/* ---- aio ---- */

static struct iocb_node *iocb_find(const struct corr *c, uint32_t pid, uint64_t iocb)
{
	struct corr_link *h = htab_bucket(&c->by_iocb, pid, iocb);

	for (struct corr_link *l = h->next; l != h; l = l->next) {
		struct iocb_node *in = link_entry(l, struct iocb_node, pl);

		if (in->task.pid == pid && in->io.iocb == iocb)
			return in;
	}
	return NULL;
}

/* The pending iocb of submission (tid, seq) that block b belongs to, or NULL. */
static struct iocb_node *sub_pick(const struct corr *c, uint32_t tid, uint64_t seq,
				  const struct it_block_rec *b)
{
	struct corr_link *h = htab_bucket(&c->by_sub, tid, seq);
	struct iocb_node *exact = NULL, *fresh = NULL, *first = NULL;

	for (struct corr_link *l = h->next; l != h; l = l->next) {
		struct iocb_node *in = link_entry(l, struct iocb_node, sl);
		bool is_exact, is_fresh;

		if (in->task.tid != tid || in->seq != seq)
			continue;
		is_exact = in->io.offset == b->sector * 512 && in->io.nbytes == b->bytes;
		is_fresh = in->nr_blocks == 0;
		if (is_exact && is_fresh)
			return in;
		if (!first)
			first = in;
		if (is_exact && !exact)
			exact = in;
		if (is_fresh && !fresh)
			fresh = in;
	}
	if (exact)
		return exact;
	return fresh ? fresh : first;
}

/* Attach a held (already counted) block node to an iocb. */
static void iocb_attach(struct corr *c, struct iocb_node *in, struct blk_node *bn)
{
	link_add_tail(&in->blocks, &bn->hl);
	in->nr_blocks++;
}

static void emit_iocb(struct corr *c, struct iocb_node *in, bool reaped, uint64_t reap_ns,
		      int64_t res)
{
	struct corr_req r;

	link_del(&in->pl);
	link_del(&in->sl);
	link_del(&in->fl);
	c->npending -= 1 + (size_t)in->nr_blocks;

	memset(&r, 0, sizeof(r));
	r.kind = CORR_AIO;
	r.aio.task = in->task;
	r.aio.seq = in->seq;
	r.aio.iocb = in->io;
	r.aio.submit_ns = in->submit_ns;
	if (reaped) {
		r.aio.iocb.res = res;
		r.aio.reap_ns = reap_ns;
		r.aio.res = res;
		r.aio.reaped = 1;
	} else {
		c->st.aio_unreaped++;
	}
	fill_blocks(&r, &in->blocks);
	emit(c, &r);
	recent_put(c, KEY_SYS, in->task.tid, in->seq, r.id, in->task.tid, in->seq, 0);
	emit_apart(c, &in->blocks, &r, in->task.tid, in->seq);
	free_blocks(c, &in->blocks);
	node_free(c, in);
}

static int on_aio_submit(struct corr *c, const struct it_aio_rec *a)
{
	struct corr_link *h, *l, *next;
	int ret = 0;

	for (unsigned int i = 0; i < a->nr; i++) {
		const struct it_aio_iocb *io = &a->iocbs[i];
		struct iocb_node *in = iocb_find(c, a->task.pid, io->iocb);
		union node *n;

		if (in)
			emit_iocb(c, in, false, 0, 0); /* reused before its reap */
		n = node_alloc(c);
		if (!n) {
			ret = -ENOMEM;
			continue;
		}
		in = &n->i;
		memset(in, 0, sizeof(*in));
		link_init(&in->blocks);
		in->order = ++c->order;
		in->task = a->task;
		in->seq = a->seq;
		in->submit_ns = a->enter_ns;
		in->io = *io;
		c->npending++;
		htab_fit(&c->by_iocb, c->npending);
		htab_fit(&c->by_sub, c->npending);
		link_add_tail(htab_bucket(&c->by_iocb, a->task.pid, io->iocb), &in->pl);
		link_add_tail(htab_bucket(&c->by_sub, a->task.tid, a->seq), &in->sl);
		link_add_tail(&c->iocb_fifo, &in->fl);
	}

	/* Block records of this submission that arrived before it. */
	h = htab_bucket(&c->wait, a->task.tid, a->seq ^ KEY_SYS);
	for (l = h->next; l != h; l = next) {
		struct blk_node *bn = link_entry(l, struct blk_node, hl);
		struct iocb_node *in;

		next = l->next;
		if (bn->cls != KEY_SYS || bn->k1 != a->task.tid || bn->k2 != a->seq)
			continue;
		in = sub_pick(c, a->task.tid, a->seq, &bn->rec);
		if (!in)
			break; /* nothing submitted: they wait (and time out) */
		link_del(&bn->hl);
		link_del(&bn->fl);
		iocb_attach(c, in, bn);
	}
	return ret;
}

static void on_aio_reap(struct corr *c, const struct it_aio_rec *a)
{
	for (unsigned int i = 0; i < a->nr; i++) {
		struct iocb_node *in = iocb_find(c, a->task.pid, a->iocbs[i].iocb);

		if (in)
			emit_iocb(c, in, true, a->exit_ns, a->iocbs[i].res);
		else
			c->st.aio_unknown_reap++;
	}
}

/* ---- syscall, io_uring, block ---- */

static void on_syscall(struct corr *c, const struct it_syscall_rec *s)
{
	struct corr_link got;
	struct corr_req r;

	link_init(&got);
	take_waiting(c, KEY_SYS, s->task.tid, s->seq, &got);
	memset(&r, 0, sizeof(r));
	r.kind = CORR_SYSCALL;
	r.sys = s;
	fill_blocks(&r, &got);
	emit(c, &r);
	recent_put(c, KEY_SYS, s->task.tid, s->seq, r.id, s->task.tid, s->seq, s->exit_ns);
	emit_apart(c, &got, &r, s->task.tid, s->seq);
	free_blocks(c, &got);
}

static void on_uring(struct corr *c, const struct it_uring_rec *u)
{
	struct corr_link got;
	struct corr_req r;

	link_init(&got);
	take_waiting(c, KEY_URING, u->req, 0, &got);
	memset(&r, 0, sizeof(r));
	r.kind = CORR_URING;
	r.uring = u;
	fill_blocks(&r, &got);
	emit(c, &r);
	recent_put(c, KEY_URING, u->req, 0, r.id, u->task.tid, 0, u->complete_ns);
	emit_apart(c, &got, &r, u->task.tid, 0);
	free_blocks(c, &got);
}

static int on_block(struct corr *c, const struct it_block_rec *b, uint64_t now_ns)
{
	const struct recent *p;
	struct iocb_node *in = NULL;
	struct blk_node *bn;
	union node *n;
	uint64_t k1, k2;
	uint8_t cls;

	switch (b->origin) {
	case IT_ORIG_SYSCALL:
		cls = KEY_SYS;
		k1 = b->task.tid;
		k2 = b->seq;
		/* an io_submit's block: only when aio iocbs are pending */
		if (!link_empty(&c->iocb_fifo))
			in = sub_pick(c, b->task.tid, b->seq, b);
		break;
	case IT_ORIG_URING:
		cls = KEY_URING;
		k1 = b->origin_id;
		k2 = 0;
		break;
	default: /* NONE, WRITEBACK: a request of its own */
		emit_lone_block(c, b, NULL);
		return 0;
	}

	if (!in) {
		p = recent_find(c, cls, k1, k2);
		if (p && (cls != KEY_URING || b->q_ns <= p->end_ns)) {
			emit_lone_block(c, b, p);
			return 0;
		}
	}

	n = node_alloc(c);
	if (!n) {
		c->st.unjoined++;
		emit_lone_block(c, b, NULL);
		return -ENOMEM;
	}
	bn = &n->b;
	bn->order = ++c->order;
	bn->arr_ns = now_ns;
	bn->cls = cls;
	bn->k1 = k1;
	bn->k2 = k2;
	bn->rec = *b;
	c->npending++;
	if (in) {
		link_init(&bn->fl);
		iocb_attach(c, in, bn);
	} else {
		htab_fit(&c->wait, c->npending);
		link_add_tail(htab_bucket(&c->wait, k1, k2 ^ cls), &bn->hl);
		link_add_tail(&c->wait_fifo, &bn->fl);
	}
	return 0;
}

/* Emit the oldest held item; false when nothing is held. */
static bool emit_oldest(struct corr *c)
{
	struct blk_node *bn = NULL;
	struct iocb_node *in = NULL;

	if (!link_empty(&c->wait_fifo))
		bn = link_entry(c->wait_fifo.next, struct blk_node, fl);
	if (!link_empty(&c->iocb_fifo))
		in = link_entry(c->iocb_fifo.next, struct iocb_node, fl);
	if (bn && (!in || bn->order < in->order))
		emit_waiting_block(c, bn);
	else if (in)
		emit_iocb(c, in, false, 0, 0);
	else
		return false;
	return true;
}

/* ---- API ---- */

struct corr *corr_new(corr_emit_fn fn, void *ctx, uint64_t hold_ns, size_t max_pending)
{
	struct corr *c;

	if (!fn) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->fn = fn;
	c->ctx = ctx;
	c->hold_ns = hold_ns;
	c->max_pending = max_pending ? max_pending : CORR_DEF_MAX_PENDING;
	link_init(&c->wait_fifo);
	link_init(&c->iocb_fifo);
	c->recent = calloc(CORR_RECENT, sizeof(*c->recent));
	if (!c->recent || htab_init(&c->wait, wait_hash) || htab_init(&c->by_iocb, iocb_hash) ||
	    htab_init(&c->by_sub, sub_hash) || htab_init(&c->recent_h, recent_hash) ||
	    wbsync_init(&c->wbs)) {
		corr_free(c);
		errno = ENOMEM;
		return NULL;
	}
	return c;
}

/*
 * A fixed-size record read in place when it is aligned (ring buffer samples
 * are), else from a copy in buf: no record is copied to the stack on the way
 * (a block record is copied once, into its node, when it must wait).
 */
static inline const void *rec_get(const void *data, void *buf, size_t size)
{
	_Static_assert(_Alignof(struct it_syscall_rec) <= 8 && _Alignof(struct it_block_rec) <= 8 &&
			       _Alignof(struct it_uring_rec) <= 8,
		       "records are 8-byte aligned at most");
	if (!((uintptr_t)data & 7))
		return data;
	memcpy(buf, data, size);
	return buf;
}

int corr_feed(struct corr *c, const void *data, size_t len, uint64_t now_ns)
{
	struct it_hdr h;
	size_t want;
	int ret = 0;

	if (!c)
		return -EINVAL;
	if (c->in_emit)
		return -EBUSY;
	if (!data || len < sizeof(h))
		goto bad;
	memcpy(&h, data, sizeof(h));
	if (h.type < IT_REC_SYSCALL || h.type > IT_REC_AIO) /* the types corr joins */
		goto bad;
	want = it_rec_size(h.type); /* aio: variable, checked against nr below */
	if (h.type == IT_REC_AIO ? h.size < want || len < h.size : h.size != want || len < want)
		goto bad;

	switch (h.type) {
	case IT_REC_SYSCALL: {
		struct it_syscall_rec copy;
		const struct it_syscall_rec *s = rec_get(data, &copy, sizeof(copy));

		c->st.records[h.type]++;
		on_syscall(c, s);
		break;
	}
	case IT_REC_BLOCK: {
		struct it_block_rec copy;
		const struct it_block_rec *b = rec_get(data, &copy, sizeof(copy));

		if (b->origin > IT_ORIG_WRITEBACK)
			goto bad;
		c->st.records[h.type]++;
		ret = on_block(c, b, now_ns);
		break;
	}
	case IT_REC_URING: {
		struct it_uring_rec copy;
		const struct it_uring_rec *u = rec_get(data, &copy, sizeof(copy));

		c->st.records[h.type]++;
		on_uring(c, u);
		break;
	}
	case IT_REC_AIO: {
		struct it_aio_rec a;

		memset(&a, 0, sizeof(a));
		memcpy(&a, data, want);
		if (a.nr > IT_AIO_BATCH || h.size != IT_AIO_SIZE(a.nr))
			goto bad;
		memcpy(&a, data, h.size);
		if (a.sys == IT_SYS_IO_SUBMIT) {
			c->st.records[h.type]++;
			ret = on_aio_submit(c, &a);
		} else if (a.sys == IT_SYS_IO_GETEVENTS || a.sys == IT_SYS_IO_PGETEVENTS) {
			c->st.records[h.type]++;
			on_aio_reap(c, &a);
		} else {
			goto bad;
		}
		break;
	}
	}

	while (c->npending > c->max_pending && emit_oldest(c)) {
		c->st.evicted++;
		/* emit_oldest counted it as unjoined / aio_unreaped */
	}
	return ret;
bad:
	c->st.malformed++;
	return -EINVAL;
}

void corr_tick(struct corr *c, uint64_t now_ns)
{
	if (!c || c->in_emit)
		return;
	while (!link_empty(&c->wait_fifo)) {
		struct blk_node *bn = link_entry(c->wait_fifo.next, struct blk_node, fl);

		if (now_ns < bn->arr_ns || now_ns - bn->arr_ns < c->hold_ns)
			break;
		emit_waiting_block(c, bn);
	}
}

void corr_flush(struct corr *c)
{
	if (!c || c->in_emit)
		return;
	while (emit_oldest(c))
		;
}

const struct corr_stats *corr_get_stats(const struct corr *c)
{
	static const struct corr_stats none;

	return c ? &c->st : &none;
}

size_t corr_pending(const struct corr *c)
{
	return c ? c->npending : 0;
}

void corr_free(struct corr *c)
{
	struct chunk *ch, *next;

	if (!c)
		return;
	for (ch = c->chunks; ch; ch = next) {
		next = ch->next;
		free(ch);
	}
	free(c->wait.b);
	free(c->by_iocb.b);
	free(c->by_sub.b);
	free(c->recent_h.b);
	free(c->recent);
	wbsync_free(&c->wbs);
	free(c);
}
