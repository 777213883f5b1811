/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Block layer: btt-style stages per request. A bio is stamped at queue (Q)
 * and getrq (G) in the submitter's context, where the current syscall,
 * io_uring request or writeback inode is known; the request inherits the
 * stamps of its first bio when it is first seen (insert or issue), is
 * stamped at insert (I) and issue (D), and leaves one record at completion
 * (C). Every request also lands in the per-(dev, op) log2 histograms.
 */
#ifndef IT_BLOCK_BPF_H
#define IT_BLOCK_BPF_H

#include "common.bpf.h"

struct bio_info {
	struct it_task task;
	u64 q_ns;
	u64 g_ns;
	u64 seq;
	u64 origin_id;
	u64 ino;
	u32 flags;
	u8 origin;
};

struct rq_info {
	struct it_task task;
	u64 q_ns, g_ns, i_ns, d_ns;
	u64 seq;
	u64 origin_id;
	u64 ino;
	u64 sector;
	u32 dev;
	u32 bytes;
	u32 flags;
	u8 op;
	u8 origin;
};

/* bio -> origin; LRU: a bio that never becomes a request only costs a slot. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, u64);
	__type(value, struct bio_info);
} bios SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, u64);
	__type(value, struct rq_info);
} inflight SEC(".maps");

static __always_inline u8 it_req_op(u32 opf)
{
	switch (opf & IT_REQ_OP_MASK) {
	case 0: /* REQ_OP_READ */
		return IT_OP_READ;
	case 1: /* REQ_OP_WRITE */
		return IT_OP_WRITE;
	case 2: /* REQ_OP_FLUSH */
		return IT_OP_SYNC;
	case 3: /* REQ_OP_DISCARD */
	case 5: /* REQ_OP_SECURE_ERASE */
		return IT_OP_DISCARD;
	default:
		return IT_OP_OTHER;
	}
}

/* Inode of a page-cache bio (0 for anonymous or user pages: direct IO). */
static __always_inline u64 it_bio_ino(struct bio *bio, u32 *sdev)
{
	struct address_space *mapping = BPF_CORE_READ(bio, bi_io_vec, bv_page, mapping);
	struct inode *host;

	if (!mapping || ((u64)mapping & 3)) /* PAGE_MAPPING_ANON / MOVABLE */
		return 0;
	host = BPF_CORE_READ(mapping, host);
	*sdev = BPF_CORE_READ(host, i_sb, s_dev);
	return BPF_CORE_READ(host, i_ino);
}

/* A bio enters the block layer (also used for the front part of a split). */
static __always_inline int it_bio_queue(struct bio *bio)
{
	struct thread_state *st = it_state();
	struct bio_info bi = {};
	u64 key = (u64)bio;
	u32 dev, sdev = 0;

	if (filter_dev) {
		dev = it_bio_part_devt(bio);
		if (!bpf_map_lookup_elem(&devs, &dev)) {
			dev = it_bio_disk_devt(bio);
			if (!bpf_map_lookup_elem(&devs, &dev))
				return 0;
		}
	}
	bi.q_ns = bpf_ktime_get_ns();
	if (st && st->in_sys) {
		/* Inside a traced syscall: it passed every filter already. */
		bi.origin = IT_ORIG_SYSCALL;
		bi.seq = st->seq;
		bi.ino = st->ino;
		bi.flags = st->flags & IT_F_SAMPLED;
		st->nr_bios++;
		if (!st->first_q_ns)
			st->first_q_ns = bi.q_ns;
	} else if (st && st->uring_req) {
		bi.origin = IT_ORIG_URING;
		bi.origin_id = st->uring_req;
		bi.flags = st->flags & IT_F_SAMPLED;
	} else {
		bi.ino = it_bio_ino(bio, &sdev);
		if (st && st->wb_ino) {
			bi.origin = IT_ORIG_WRITEBACK;
			bi.origin_id = st->wb_ino;
			if (!bi.ino)
				bi.ino = st->wb_ino;
		}
		/*
		 * The task filters apply to flusher writeback too: the kworker is
		 * not the task that dirtied the pages (-f and -d still see it).
		 */
		if (!it_task_ok())
			return 0;
		if (filter_file) {
			struct it_file_key k = { .ino = bi.ino, .dev = sdev };

			if (!bi.ino || !bpf_map_lookup_elem(&files, &k))
				return 0;
		}
		bi.flags = it_sample_flag();
	}
	it_fill_task(&bi.task);
	if (bpf_map_update_elem(&bios, &key, &bi, BPF_ANY))
		it_drop(IT_L_BLOCK, IT_DROP_INFLIGHT);
	return 0;
}

static __always_inline int it_getrq(struct bio *bio)
{
	u64 key = (u64)bio;
	struct bio_info *bi = bpf_map_lookup_elem(&bios, &key);

	if (bi)
		bi->g_ns = bpf_ktime_get_ns();
	return 0;
}

/* A bio merged into an existing request: its request carries the first bio's origin. */
static __always_inline int it_bio_merged(struct bio *bio)
{
	u64 key = (u64)bio;

	bpf_map_delete_elem(&bios, &key);
	return 0;
}

/* Find or start following a request. */
static __always_inline struct rq_info *it_rq_track(struct request *rq, u64 now)
{
	u64 key = (u64)rq, bkey;
	struct rq_info *ri = bpf_map_lookup_elem(&inflight, &key);
	struct rq_info n = {};
	struct bio_info *bi;
	u32 opf;

	if (ri)
		return ri;
	n.dev = it_disk_devt(it_rq_disk(rq));
	bkey = (u64)BPF_CORE_READ(rq, bio);
	bi = bkey ? bpf_map_lookup_elem(&bios, &bkey) : NULL;
	if (bi) {
		n.task = bi->task;
		n.q_ns = bi->q_ns;
		n.g_ns = bi->g_ns;
		n.seq = bi->seq;
		n.origin_id = bi->origin_id;
		n.ino = bi->ino;
		n.origin = bi->origin;
		n.flags = bi->flags | IT_F_HAS_Q | (bi->g_ns ? IT_F_HAS_G : 0);
		bpf_map_delete_elem(&bios, &bkey);
	} else {
		/* No bio seen: internal request (flush), or a filtered-out bio. */
		if (!it_dev_ok(n.dev) || !it_task_ok() || filter_file)
			return NULL;
		it_fill_task(&n.task);
		n.q_ns = now;
		n.flags = it_sample_flag();
	}
	opf = BPF_CORE_READ(rq, cmd_flags);
	n.op = it_req_op(opf);
	n.flags |= it_req_flags(opf);
	if (bpf_map_update_elem(&inflight, &key, &n, BPF_ANY)) {
		it_drop(IT_L_BLOCK, IT_DROP_INFLIGHT);
		return NULL;
	}
	return bpf_map_lookup_elem(&inflight, &key);
}

static __always_inline int it_rq_insert(struct request *rq)
{
	u64 now = bpf_ktime_get_ns();
	struct rq_info *ri = it_rq_track(rq, now);

	if (ri) {
		ri->i_ns = now;
		ri->flags |= IT_F_HAS_I;
	}
	return 0;
}

static __always_inline int it_rq_issue(struct request *rq)
{
	u64 now = bpf_ktime_get_ns(), key = (u64)rq;
	struct rq_info *ri = bpf_map_lookup_elem(&inflight, &key);

	/*
	 * Issued while still marked issued (requeue clears d_ns): the previous
	 * use of this request completed unseen. Start over from its bio.
	 */
	if (ri && ri->d_ns) {
		bpf_map_delete_elem(&inflight, &key);
		it_drop(IT_L_BLOCK, IT_DROP_MISSED);
	}
	ri = it_rq_track(rq, now);

	if (ri && !ri->d_ns) {
		ri->d_ns = now;
		ri->sector = BPF_CORE_READ(rq, __sector);
		ri->bytes = BPF_CORE_READ(rq, __data_len);
	}
	return 0;
}

/* Requeued: it will be issued again, and D must be that last issue. */
static __always_inline int it_rq_requeue(struct request *rq)
{
	u64 key = (u64)rq;
	struct rq_info *ri = bpf_map_lookup_elem(&inflight, &key);

	if (ri)
		ri->d_ns = 0;
	return 0;
}

/* A request merged into another one disappears. */
static __always_inline int it_rq_merged(struct request *rq)
{
	u64 key = (u64)rq;

	bpf_map_delete_elem(&inflight, &key);
	return 0;
}

static __always_inline int it_rq_complete(struct request *rq, s32 error)
{
	u64 key = (u64)rq;
	struct rq_info *p = bpf_map_lookup_elem(&inflight, &key);
	struct it_block_rec *r;
	struct it_hist_val *h;
	struct rq_info ri;
	u64 now, q2c;

	if (!p)
		return 0;
	ri = *p;
	bpf_map_delete_elem(&inflight, &key);
	now = bpf_ktime_get_ns();
	q2c = now - ri.q_ns;
	h = it_hist_get(ri.dev, IT_L_BLOCK, ri.op, IT_HK_PLAIN);
	if (h) {
		it_hist_slot(&h->st[IT_ST_Q2C], q2c);
		if (ri.d_ns) {
			it_hist_slot(&h->st[IT_ST_D2C], now - ri.d_ns);
			it_hist_slot(&h->st[IT_ST_Q2D], ri.d_ns - ri.q_ns);
		}
	}
	if (!it_keep(ri.flags, q2c))
		return 0;
	r = it_reserve(sizeof(*r), IT_L_BLOCK);
	if (!r)
		return 0;
	it_hdr_init(&r->hdr, IT_REC_BLOCK, sizeof(*r));
	r->task = ri.task;
	r->seq = ri.seq;
	r->origin_id = ri.origin_id;
	r->sector = ri.d_ns ? ri.sector : BPF_CORE_READ(rq, __sector);
	r->q_ns = ri.q_ns;
	r->g_ns = ri.g_ns;
	r->i_ns = ri.i_ns;
	r->d_ns = ri.d_ns;
	r->c_ns = now;
	r->ino = ri.ino;
	r->dev = ri.dev;
	r->bytes = ri.d_ns ? ri.bytes : BPF_CORE_READ(rq, __data_len);
	r->flags = ri.flags | (error ? IT_F_ERROR : 0);
	r->error = error;
	r->nr_merged = 0;
	r->op = ri.op;
	r->origin = ri.origin;
	r->pad0 = 0;
	it_submit(r);
	return 0;
}

/*
 * Before 5.11 (a54895fa057c) the block tracepoints took the request_queue
 * as their first argument: the loader reads which from BTF.
 */
#define IT_BLK_ARG(ctx, i) ((void *)(ctx)[blk_tp_has_queue ? (i) + 1 : (i)])

/* Each block hook as tp_btf (preferred) and raw_tp (fallback). */
#define IT_BLOCK_TP(tp, call)  \
	SEC("tp_btf/" #tp)     \
	int btf_##tp(u64 *ctx) \
	{                      \
		return call;   \
	}                      \
	SEC("raw_tp/" #tp)     \
	int raw_##tp(u64 *ctx) \
	{                      \
		return call;   \
	}

IT_BLOCK_TP(block_bio_queue, it_bio_queue(IT_BLK_ARG(ctx, 0)))
IT_BLOCK_TP(block_split, it_bio_queue(IT_BLK_ARG(ctx, 0)))
IT_BLOCK_TP(block_getrq, it_getrq(IT_BLK_ARG(ctx, 0)))
/* bio merges: (bio) since 5.11; (q, rq, bio) before */
IT_BLOCK_TP(block_bio_backmerge, it_bio_merged(IT_BLK_ARG(ctx, blk_tp_has_queue ? 1 : 0)))
IT_BLOCK_TP(block_bio_frontmerge, it_bio_merged(IT_BLK_ARG(ctx, blk_tp_has_queue ? 1 : 0)))
IT_BLOCK_TP(block_rq_merge, it_rq_merged(IT_BLK_ARG(ctx, 0)))
IT_BLOCK_TP(block_rq_insert, it_rq_insert(IT_BLK_ARG(ctx, 0)))
IT_BLOCK_TP(block_rq_issue, it_rq_issue(IT_BLK_ARG(ctx, 0)))
IT_BLOCK_TP(block_rq_requeue, it_rq_requeue(IT_BLK_ARG(ctx, 0)))
/*
 * block_rq_complete(rq, error, nr_bytes) on every kernel we support.
 * The kernel skips a tp_btf/raw_tp program that would nest in itself on a
 * CPU (a completion in softirq interrupting a completion in task context)
 * and only counts it in recursion_misses. A second program on the same
 * tracepoint is not running when the first one is interrupted, so one of the
 * two always sees a nested completion; the other finds no entry (one failed
 * lookup) and returns.
 */
IT_BLOCK_TP(block_rq_complete, it_rq_complete((void *)ctx[0], (s32)ctx[1]))
SEC("tp_btf/block_rq_complete")
int btf_block_rq_complete2(u64 *ctx)
{
	return it_rq_complete((void *)ctx[0], (s32)ctx[1]);
}

SEC("raw_tp/block_rq_complete")
int raw_block_rq_complete2(u64 *ctx)
{
	return it_rq_complete((void *)ctx[0], (s32)ctx[1]);
}

#endif /* IT_BLOCK_BPF_H */
