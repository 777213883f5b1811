/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Block layer: btt-style stages per request, at the least cost per IO.
 *
 * A bio is stamped at queue (Q) in the submitter's context, where the current
 * syscall, io_uring request or writeback inode is known. Its entry in `bios`
 * is the request's state as long as the bio is the request's first one
 * (rq->bio): issue (D), and insert (I) with --block-insert, stamp it with one
 * lookup, completion (C) reads it, marks it dead (IT_SLOT_PUT) and leaves one record. G is the kernel's own
 * rq->start_time_ns (set at request allocation when IO accounting is on), so
 * no hook is spent on getrq. Every request also lands in the per-CPU
 * per-(dev, op) log2 histograms. The request state (struct it_bio_info in
 * `bios`) is in request.bpf.h, shared with the driver layers.
 */
#ifndef IT_BLOCK_BPF_H
#define IT_BLOCK_BPF_H

#include "config.bpf.h"
#include "maps.bpf.h"
#include "core_fixes.bpf.h"
#include "record.bpf.h"
#include "hist.bpf.h"
#include "filter.bpf.h"
#include "inflight.bpf.h"
#include "progs.bpf.h"
#include "request.bpf.h"
#include "agg.bpf.h"
#include "wb.bpf.h"
#include "names.bpf.h"
#include "stack.bpf.h"

/* Per CPU: the last bio-less request completed (see it_rq_complete). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} last_bioless SEC(".maps");

/* Per CPU: the request the first completion program last began with. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} first_rq SEC(".maps");

/*
 * The second completion program runs right after the first one, on the same
 * request, unless the first one was skipped because it was already running
 * on this CPU (nested completion, see block_rq_complete below): then
 * first_rq holds the request it is busy with. So the second program can
 * return at once when first_rq is this request, before any hash lookup.
 * Without the second program (nested_hooked 0) nothing reads the note.
 */
static __always_inline bool it_rq_complete_seen(struct request *rq, bool second)
{
	u32 zero = 0;
	u64 *first;

	if (!second && !nested_hooked)
		return false;
	first = bpf_map_lookup_elem(&first_rq, &zero);
	if (!first)
		return false;
	if (!second) {
		*first = (u64)rq;
		return false;
	}
	if (*first != (u64)rq)
		return false;
	*first = 0; /* consumed: a later request at this address is not skipped */
	return true;
}

/*
 * Inode number of a page-cache bio (0 for anonymous or user pages: direct
 * IO), its file system's dev in *sdev and the inode itself in *inode.
 */
static __always_inline u64 it_bio_ino(struct bio *bio, u32 *sdev, u64 *inode, const bool btf)
{
	struct page *page = IT_RD(btf, bio, bi_io_vec, bv_page);
	struct address_space *mapping;
	struct inode *host;
	u64 m = 0;

	/* a plain value, not a BTF pointer: the verifier refuses '&' on pointers */
	bpf_core_read(&m, sizeof(m), &page->mapping);
	if (!m || (m & 3)) /* PAGE_MAPPING_ANON / MOVABLE */
		return 0;
	mapping = (void *)m;
	host = BPF_CORE_READ(mapping, host);
	*inode = (u64)host;
	*sdev = BPF_CORE_READ(host, i_sb, s_dev);
	return BPF_CORE_READ(host, i_ino);
}

/*
 * An entry a new bio at its address takes over (or forgets): still live and
 * issued, its request ended unseen, since a bio is freed only after its
 * request completed (a completion no program ran for: docs/hooks.md). Counted,
 * so that it leaves the in-flight gauge for the missed ones at once: the
 * daemon's sweep of stale entries (src/load/blkstale.c) never finds it again.
 */
static __always_inline void it_bio_recycled(const struct it_bio_info *old)
{
	if (old->live && old->d_ns)
		it_count(IT_CNT_BLK_RECYCLED);
}

/*
 * A bio that heads no request of ours (merged behind another, or filtered out
 * at queue): its address may still hold the live entry of an earlier bio that
 * never headed a request (front-merged, ended without a request). Killed here,
 * a request this bio heads is not taken for that earlier one's (seen: a vda
 * completion ending a loop bio's stale entry under -d loop0, which also hid a
 * missed completion from issued - completed).
 */
static __always_inline int it_bio_forget(u64 key)
{
	struct it_bio_info *bi = IT_SLOT_GET(&bios, key, struct it_bio_info);

	if (bi) {
		it_bio_recycled(bi);
		bi->live = 0;
	}
	return 0;
}

/*
 * A piece of an upper bio (a remap said so: stack.bpf.h), queued below: the
 * upper bio's, not the carrying thread's (kcryptd, dmcrypt_write, raid5d). It
 * passes -d when its upper bio did or its own device is listed, and the task
 * filters with the upper bio. It may be an upper bio itself (a dm device on a
 * dm device).
 */
static __always_inline int it_bio_piece(struct bio *bio, const struct it_stk_link *l,
					const struct it_bio_info *up, const bool btf)
{
	struct it_bio_info bi = {};
	u32 unlisted = up->flags & IT_F_UNLISTED;
	bool upper = it_stk_bio_based(bio, btf);
	u64 key = (u64)bio;

	/* -d of the disk or partition below takes its pieces of an unlisted upper bio */
	if (unlisted && (it_dev_listed(it_bio_part_devt(bio, btf)) ||
			 it_dev_listed(it_bio_disk_devt(bio, btf))))
		unlisted = 0;
	if (unlisted && !upper)
		return it_bio_forget(key);
	bi.q_ns = bpf_ktime_get_ns();
	bi.task = up->task;
	bi.seq = up->seq;
	bi.origin = up->origin;
	bi.origin_id = up->origin_id;
	bi.ino = up->ino;
	bi.file_dev = up->file_dev;
	bi.flags = (up->flags & (IT_F_SAMPLED | IT_F_BDEV | IT_F_WB)) | IT_F_HAS_Q | unlisted;
	/*
	 * --writeback files: the upper bio's file; its bytes counted written
	 * here (a bio-based upper device's bio completes no request), so a
	 * mirror's second copy finds them written: unknown (docs/hooks.md)
	 */
	bi.wb_mapping = up->wb_mapping;
	bi.wb_dirtied_ns = up->wb_dirtied_ns;
	bi.stk_up = l->up;
	bi.stk_up_dev = l->up_dev;
	bi.stk_up_off = l->up_off;
	if (upper)
		it_stk_upper(bio, &bi, btf);
	IT_SLOT_PUT_OLD(&bios, &key, bi, IT_L_BLOCK, it_bio_recycled);
	return 0;
}

/*
 * A bio of its own thread's (the front part of a split too). l: a partition's
 * request, or a piece whose upper bio was not found (lost), else zero. An
 * upper bio (dm, md) is followed for its pieces even when -d lists only them.
 */
static __always_inline int it_bio_own(struct bio *bio, const struct it_stk_link *l, const bool btf)
{
	struct thread_state *st;
	struct it_bio_info bi = {};
	u64 key = (u64)bio, inode = 0;
	u32 sdev = 0, unlisted = 0;

	/* before the task storage lookup: with -d most bios may be another device's */
	if (filter_dev && !it_dev_listed(it_bio_part_devt(bio, btf)) &&
	    !it_dev_listed(it_bio_disk_devt(bio, btf)) &&
	    !(l->up_dev && it_dev_listed(l->up_dev))) {
		if (!it_stk_bio_based(bio, btf))
			return it_bio_forget(key);
		unlisted = IT_F_UNLISTED;
	}
	st = it_state();
	bi.q_ns = bpf_ktime_get_ns();
	bi.stk_up_dev = l->up_dev;
	bi.stk_up_off = l->up_off;
	if (st && st->in_sys) {
		/* Inside a traced syscall: it passed every filter already. */
		if (wb_mode == IT_WBMODE_FILES)
			it_wbf_flush(st, bi.q_ns); /* an O_SYNC write's own dirtying first */
		bi.origin = IT_ORIG_SYSCALL;
		bi.seq = st->seq;
		bi.ino = st->ino;
		bi.file_dev = st->dev;
		bi.flags = st->flags & (IT_F_SAMPLED | IT_F_BDEV);
		st->nr_bios++;
		if (!st->first_q_ns)
			st->first_q_ns = bi.q_ns;
	} else if (st && st->uring_req) {
		bi.origin = IT_ORIG_URING;
		bi.origin_id = st->uring_req;
		bi.ino = st->ino; /* the request's file (it_uring_submit) */
		bi.file_dev = st->dev;
		bi.flags = st->flags & (IT_F_SAMPLED | IT_F_BDEV);
	} else {
		bi.ino = it_bio_ino(bio, &sdev, &inode, btf);
		bi.file_dev = sdev;
		if (st && st->wb_ino) {
			bi.origin = IT_ORIG_WRITEBACK;
			bi.origin_id = st->wb_ino;
			if (!bi.ino)
				bi.ino = st->wb_ino;
		}
		/*
		 * The task filters apply to flusher writeback too, on the task
		 * that dirtied the pages, not the kworker (wb.bpf.h: a page is
		 * noted only when its dirtier passed them).
		 */
		if (!it_task_ok() && !it_wb_owner_ok(bio, btf))
			return it_bio_forget(key);
		if (filter_file) {
			struct it_file_key k = { .ino = bi.ino, .dev = sdev };

			if (!bi.ino || !bpf_map_lookup_elem(&files, &k))
				return it_bio_forget(key);
		}
		bi.flags = it_sample_flag();
		it_name_inode(inode, bi.ino, sdev);
	}
	bi.flags |= IT_F_HAS_Q | unlisted | (l->flags & IT_F_STK_LOST);
	/* a write of page-cache pages: its file (not direct IO, which a traced fd says) */
	if (wb_mode == IT_WBMODE_FILES &&
	    !(st && (st->in_sys || st->uring_req) && (st->flags & IT_F_DIO)))
		it_wbf_queue(bio, &bi, btf);
	it_fill_task(&bi.task);
	if (unlisted || it_stk_bio_based(bio, btf))
		it_stk_upper(bio, &bi, btf);
	IT_SLOT_PUT_OLD(&bios, &key, bi, IT_L_BLOCK, it_bio_recycled);
	return 0;
}

/* A bio enters the block layer: a piece of an upper bio whose owner is known, or its own. */
static __always_inline int it_bio_queue(struct bio *bio, const bool btf)
{
	struct it_stk_link ln = {};
	struct it_bio_info *up = NULL;

	if (it_stk_take((u64)bio, &ln)) {
		up = IT_SLOT_GET(&bios, ln.up, struct it_bio_info);
		/* its upper bio ended before its piece was queued: the owner is not known */
		if (ln.up && !up && !it_task_filtered()) {
			ln.flags |= IT_F_STK_LOST;
			it_count(IT_CNT_STK_NO_UPPER);
		}
	} else {
		it_stk_part(bio, &ln, btf);
	}
	if (up)
		return it_bio_piece(bio, &ln, up, btf);
	return it_bio_own(bio, &ln, btf);
}

/* A split: its front part is queued as a new bio, unless it is a stack's (stack.bpf.h). */
static __always_inline int it_bio_split(struct bio *bio, const bool btf)
{
	return it_stk_split(bio, btf) ? it_bio_queue(bio, btf) : 0;
}

/* A bio merged behind another one never heads a request: forget it. */
static __always_inline int it_bio_merged(struct bio *bio)
{
	return it_bio_forget((u64)bio);
}

static __always_inline int it_rq_insert(struct request *rq, const bool btf)
{
	struct it_bio_info *bi = it_rq_slot(rq, btf);

	if (bi) {
		bi->i_ns = bpf_ktime_get_ns();
		bi->flags |= IT_F_HAS_I;
	}
	return 0;
}

/*
 * A request issued whose first bio has no entry: its queue was not seen (a
 * bio queued before the programs attached, or a block_bio_queue run that
 * never came: docs/hooks.md, "Completions no program sees"). Followed from
 * here, with the kernel's allocation stamp as its start when there is one,
 * so that its completion is counted like any other. Not with a task or file
 * filter: the bio may have been filtered out at queue on purpose.
 */
static __always_inline struct it_bio_info *it_rq_adopt(struct request *rq, u64 now, const bool btf)
{
	struct it_bio_info bi = {};
	u64 key = (u64)IT_RD(btf, rq, bio);

	if (!key || it_task_filtered() || !it_dev_ok(it_rq_devt(rq, btf)))
		return NULL;
	bi.q_ns = IT_RD(btf, rq, start_time_ns);
	if (!bi.q_ns || bi.q_ns > now)
		bi.q_ns = now;
	bi.flags = it_sample_flag();
	IT_SLOT_PUT(&bios, &key, bi, IT_L_BLOCK);
	it_count(IT_CNT_BLK_ADOPTED);
	return IT_SLOT_GET(&bios, key, struct it_bio_info);
}

static __always_inline int it_rq_issue(struct request *rq, const bool btf)
{
	struct it_bio_info *bi = it_rq_slot(rq, btf);

	if (!bi)
		bi = it_rq_adopt(rq, bpf_ktime_get_ns(), btf);
	if (!bi)
		return 0;
	if (!bi->d_ns && !bi->requeued)
		it_count(IT_CNT_BLK_ISSUED);
	bi->d_ns = bpf_ktime_get_ns(); /* after a requeue: the last issue */
	return 0;
}

static __always_inline int it_rq_requeue(struct request *rq)
{
	struct it_bio_info *bi = it_rq_info(rq);

	if (bi)
		bi->requeued = 1;
	return 0;
}

/*
 * block_rq_complete fires once per blk_update_request(): several times for a
 * request completed in parts. The first call finds the first bio's entry and
 * ends the request; later calls see the next bio as rq->bio and find nothing.
 */
static __always_inline int it_rq_complete(struct request *rq, s32 error, const bool btf,
					  bool second)
{
	struct it_bio_info *p, bi;
	struct it_block_rec *r;
	struct it_res res;
	struct it_hist_val *h;
	struct it_wb *wb;
	u64 key, now, g;
	u32 dev, opf;

	if (it_rq_complete_seen(rq, second))
		return 0;
	key = (u64)IT_RD(btf, rq, bio);
	p = IT_SLOT_GET(&bios, key, struct it_bio_info);
	/* a test's missed completion (test_miss_nth): left live, as a missed one is */
	if (p && test_miss_nth && ++test_completions == test_miss_nth)
		return 0;
	if (p) {
		bi = *p;
		p->live = 0;
		/* its issue not seen (no block_rq_issue run came): issued - completed stays exact */
		if (!bi.d_ns && !bi.requeued)
			it_count(IT_CNT_BLK_ISSUED);
		it_count(IT_CNT_BLK_COMPLETED);
	} else {
		/*
		 * A request without bios (the flush machinery's own request):
		 * followed from the kernel's stamps alone. The second program
		 * gets here only when first_rq no longer names the request (a
		 * completion nested between the two programs): the per-CPU note
		 * of the first program's last one keeps one record. Only the
		 * second program reads it, and consumes it: a note left behind
		 * never hides a later request at the same address (it did, when
		 * both programs read it: the next flush there went uncounted).
		 */
		u32 zero = 0;
		u64 *last = bpf_map_lookup_elem(&last_bioless, &zero);

		if (key || !last)
			return 0;
		if (second && *last == (u64)rq) {
			*last = 0;
			return 0;
		}
		if (!second)
			*last = (u64)rq;
		if (it_task_filtered())
			return 0;
		__builtin_memset(&bi, 0, sizeof(bi));
		bi.q_ns = IT_RD(btf, rq, start_time_ns);
		bi.d_ns = IT_RD(btf, rq, io_start_time_ns);
		if (!bi.q_ns)
			return 0;
		bi.flags = it_sample_flag();
	}
	dev = it_rq_devt(rq, btf);
	if (!p && !it_dev_ok(dev))
		return 0;
	/*
	 * C: the page walk's clock read when it ran first (--writeback pages,
	 * bpf/wb.bpf.h), else now. A per-file split (wbfile.bpf.h) for a write
	 * of page-cache pages; nothing for any other request.
	 */
	wb = NULL;
	if (p && wb_mode == IT_WBMODE_PAGES) {
		wb = it_wb_take(rq, bi.q_ns, &now);
	} else {
		now = bpf_ktime_get_ns();
		if (p && wb_mode == IT_WBMODE_FILES && (bi.flags & IT_F_WB))
			wb = it_wbf_complete(rq, &bi, second, btf);
	}
	bi.flags &= ~IT_F_WB;
	opf = IT_RD(btf, rq, cmd_flags);
	/*
	 * G: the request's allocation time. It may come from the plug's cached
	 * clock (6.9+), i.e. before Q: then it is not a usable stamp.
	 */
	g = p ? IT_RD(btf, rq, start_time_ns) : 0;
	if (g < bi.q_ns || g > now)
		g = 0;
	h = kern_hists ? it_hist_get(dev, IT_L_BLOCK, it_req_op(opf),
				     bi.stk_up_dev ? IT_HK_MEMBER : IT_HK_PLAIN) :
			 NULL;
	if (h) {
		it_hist_slot(&h->st[IT_ST_Q2C], now - bi.q_ns);
		if (bi.d_ns) {
			it_hist_slot(&h->st[IT_ST_D2C], now - bi.d_ns);
			it_hist_slot(&h->st[IT_ST_Q2D], bi.d_ns - bi.q_ns);
		}
		if (wb && wb->dirty_first_ns && wb->dirty_first_ns <= bi.q_ns)
			it_hist_slot(&h->st[IT_ST_DIRTY_AGE], bi.q_ns - wb->dirty_first_ns);
	}
	it_agg_block(&bi, wb && wb->dirtier.pid ? &wb->dirtier : &bi.task, dev, it_req_op(opf), rq,
		     btf, now);
	it_stk_member_done(&bi, it_req_op(opf), now, now - bi.q_ns);
	if (!it_keep_block(bi.flags, now - bi.q_ns))
		return 0;
	it_virtio_done(&bi, now);
	r = it_reserve(&res, sizeof(*r), IT_L_BLOCK);
	if (!r)
		return 0;
	it_hdr_init(&r->hdr, IT_REC_BLOCK, sizeof(*r));
	r->task = bi.task;
	/* one word (include/iotracer.h): each origin sets only its own */
	r->seq = bi.origin == IT_ORIG_SYSCALL ? bi.seq : bi.origin_id;
	r->sector = IT_RD(btf, rq, __sector);
	r->q_ns = bi.q_ns;
	r->g_ns = g;
	r->i_ns = bi.i_ns;
	r->d_ns = bi.d_ns;
	r->c_ns = now;
	r->ino = bi.ino;
	r->dev = dev;
	r->bytes = IT_RD(btf, rq, __data_len);
	r->flags = bi.flags | (g ? IT_F_HAS_G : 0) | it_req_flags(opf) | (error ? IT_F_ERROR : 0) |
		   (insert_hooked ? 0 : IT_F_NO_I) | (wb ? IT_F_WB : 0);
	r->error = error;
	r->nr_merged = 0;
	r->op = it_req_op(opf);
	r->origin = bi.origin;
	r->file_dev = bi.file_dev;
	r->up_dev = bi.stk_up_dev;
	r->drv_submit_ns = bi.drv_submit_ns;
	r->drv_kick_ns = bi.drv_kick_ns;
	r->drv_done_ns = bi.drv_done_ns;
	r->drv_tag = bi.drv_tag;
	r->drv_qid = bi.drv_qid;
	r->drv_layer = bi.drv_layer;
	r->drv_opcode = bi.drv_opcode;
	r->drv_status = bi.drv_status;
	r->drv_gpa = bi.drv_gpa; /* guest mode only (gpa.bpf.h) */
	r->up_off = (u16)bi.stk_up_off; /* < IT_STK_FAR, or one of the IT_STK_* */
	if (wb)
		r->wb = *wb;
	else
		__builtin_memset(&r->wb, 0, sizeof(r->wb));
	it_submit(&res, r);
	return 0;
}

/*
 * Arguments of the 5.11 signatures (IT_BLK_ARG, core_fixes.bpf.h). Programs:
 * btf_block_bio_queue, raw_block_bio_queue, btf_block_split, raw_block_split,
 * btf_block_bio_backmerge, raw_block_bio_backmerge, btf_block_rq_insert,
 * raw_block_rq_insert, btf_block_rq_issue, raw_block_rq_issue,
 * btf_block_rq_requeue, raw_block_rq_requeue.
 */
IT_TP_BOTH(block_bio_queue, it_bio_queue(IT_BLK_BIO_ARG(ctx, 0), it_btf))
IT_TP_BOTH(block_split, it_bio_split(IT_BLK_BIO_ARG(ctx, 0), it_btf))
IT_TP_BOTH(block_bio_backmerge, it_bio_merged(IT_BLK_MERGE_BIO(ctx)))
IT_TP_BOTH(block_rq_insert, it_rq_insert(IT_BLK_ARG(ctx, 0), it_btf))
IT_TP_BOTH(block_rq_issue, it_rq_issue(IT_BLK_ARG(ctx, 0), it_btf))
IT_TP_BOTH(block_rq_requeue, it_rq_requeue(IT_BLK_ARG(ctx, 0)))
/*
 * block_rq_complete(rq, error, nr_bytes) on every kernel we support.
 * The kernel skips a tp_btf/raw_tp program that would nest in itself on a
 * CPU (a completion in softirq interrupting a completion in task context).
 * A second program on the same tracepoint is not running when the first one
 * is interrupted, so one of the two sees a nested completion; the other finds
 * the request done: at once through first_rq (it_rq_complete_seen), else by
 * its dead entry. A completion neither saw is reported (issued - completed).
 * The second program is attached only when every request's record is wanted
 * (hook block_rq_complete_nested, src/load/hooktab.c): without it a nested
 * completion is such a counted miss.
 */
#define IT_RQ_COMPLETE(ctx, second) it_rq_complete((void *)(ctx)[0], (s32)(ctx)[1], it_btf, second)
/* btf_block_rq_complete, raw_block_rq_complete, btf_block_rq_complete2, raw_block_rq_complete2 */
IT_TP_BOTH(block_rq_complete, IT_RQ_COMPLETE(ctx, false))
IT_TP_PAIR(block_rq_complete, block_rq_complete2, IT_RQ_COMPLETE(ctx, true))

#endif /* IT_BLOCK_BPF_H */
