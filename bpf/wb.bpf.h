/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Buffered writes followed to the disk. A write() dirties the page cache and
 * returns; a flusher, sync, fsync or reclaim writes the pages out later, in
 * another task. The owner of such a block write is whoever dirtied its pages.
 * Two ways (rodata wb_mode, --writeback): per file (wbfile.bpf.h, the
 * always-on profile's), or page by page (here, the full profile's):
 *
 * - When a page (folio) goes clean -> dirty, the writeback_dirty_folio
 *   tracepoint (writeback_dirty_page before 5.17) runs in the dirtying task:
 *   (mapping, index) -> the task and the time, in map `dirtied`. Once per
 *   transition (the kernel's folio_account_dirtied), never per write call.
 *   Only tasks that pass the task filters are noted: a note is also the
 *   filter's verdict, taken where the task is current.
 * - At bio queue outside the dirtier (block.bpf.h), a task filter that the
 *   submitter fails is passed when the bio's first page has a note.
 * - At completion, a program attached before the record's own one
 *   (block_rq_complete_wb) walks the request's pages (its bios' bio_vecs,
 *   with bpf_loop: a bounded number of steps per request) and sums them per
 *   dirtier into struct it_wb, left in `wb_stash` for the record's program.
 *   Pages whose dirtier is not known are counted with why, never guessed.
 *
 * Notes are not deleted at writeback: every clean -> dirty transition
 * replaces its page's note and keeps the one it replaces beside it (a page
 * dirtied again while a request carries it, under PG_writeback, is that
 * request's by the dirtying before: PostgreSQL re-dirties its pages during
 * writeback). The LRU drops the notes of pages written long ago first.
 */
#ifndef IT_WB_BPF_H
#define IT_WB_BPF_H

#include "config.bpf.h"
#include "maps.bpf.h"
#include "core_fixes.bpf.h"
#include "record.bpf.h"
#include "filter.bpf.h"
#include "progs.bpf.h"
#include "request.bpf.h"
#include "wbfile.bpf.h"

/* 64 Ki dirty folios: 256 MiB of 4 KiB pages, ~10 MiB of kernel memory (two dirtyings each). */
#define IT_WB_NOTES 65536
/* Steps of one walk: a page, or a move to the next bio_vec or bio. */
#define IT_WB_MAX_STEPS 1024

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, IT_WB_NOTES);
	__type(key, struct it_dirty_key);
	__type(value, struct it_dirty);
} dirtied SEC(".maps");

/* A folio of `mapping` at `index` went clean -> dirty in the current task. */
static __always_inline int it_dirty_note(struct address_space *mapping, u64 index)
{
	struct it_dirty_key k = { .mapping = (u64)mapping, .index = index };
	struct it_dirty d, *old;

	if (!mapping || !it_task_ok())
		return 0;
	it_fill_task(&d.task);
	d.ns = bpf_ktime_get_ns();
	/* the note it replaces stays one dirtying more: a request in flight may carry it */
	old = bpf_map_lookup_elem(&dirtied, &k);
	if (old) {
		d.prev_task = old->task;
		d.prev_ns = old->ns;
	} else {
		d.prev_ns = 0;
	}
	bpf_map_update_elem(&dirtied, &k, &d, BPF_ANY);
	it_count(IT_CNT_WB_NOTED);
	return 0;
}

static __always_inline int it_dirty_folio(struct folio *folio, struct address_space *mapping,
					  const bool btf)
{
	if (wb_mode == IT_WBMODE_FILES)
		return it_wbf_dirty(folio, mapping, btf);
	return it_dirty_note(mapping, IT_RD(btf, folio, index));
}

static __always_inline int it_dirty_page(struct page *page, struct address_space *mapping)
{
	if (wb_mode == IT_WBMODE_FILES)
		return it_wbf_dirty(NULL, mapping, false);
	return it_dirty_note(mapping, BPF_CORE_READ((struct page___old *)page, index));
}

/*
 * writeback_dirty_folio(folio, mapping), 5.17+; before, writeback_dirty_page(page,
 * mapping): one event, the loader attaches the one this kernel has. Programs:
 * btf_writeback_dirty_folio, raw_writeback_dirty_folio, btf_writeback_dirty_page,
 * raw_writeback_dirty_page.
 */
IT_TP_BOTH(writeback_dirty_folio, it_dirty_folio((void *)ctx[0], (void *)ctx[1], it_btf))
IT_TP_BOTH(writeback_dirty_page, it_dirty_page((void *)ctx[0], (void *)ctx[1]))

/* The note of the page a bio starts with, or NULL. */
static __always_inline struct it_dirty *it_bio_first_note(struct bio *bio)
{
	struct it_dirty_key k;
	struct bio_vec *v = BPF_CORE_READ(bio, bi_io_vec);
	u32 idx = BPF_CORE_READ(bio, bi_iter.bi_idx);
	u64 page = (u64)BPF_CORE_READ(v + idx, bv_page);

	if (!page)
		return NULL;
	k.mapping = it_folio_mapping(it_page_head(page), &k.index);
	if (!k.mapping)
		return NULL;
	return bpf_map_lookup_elem(&dirtied, &k);
}

/*
 * A bio queued outside a traced syscall that the submitter's task filters
 * reject: kept when its pages were dirtied by a task that passed them (only
 * those are noted). Writes only: a read's pages are not dirty.
 */
static __always_inline bool it_wb_owner_ok(struct bio *bio, const bool btf)
{
	if (wb_mode == IT_WBMODE_OFF || (IT_RD(btf, bio, bi_opf) & IT_REQ_OP_MASK) != 1)
		return false; /* not REQ_OP_WRITE */
	if (wb_mode == IT_WBMODE_FILES)
		return it_wbf_noted(bio, btf);
	return it_bio_first_note(bio) != NULL;
}

/* The walk's state (bpf_loop context). */
struct it_wb_walk {
	struct it_wb wb;
	u64 q_ns; /* the request's queue */
	u64 bio_q_ns; /* the current bio's: a note after it is a later dirtying */
	u64 bio; /* current bio; 0: done */
	u64 vec; /* its current bio_vec */
	u64 head; /* folio of the previous page */
	u32 left; /* bytes of the bio still to walk */
	u32 done; /* bytes of the bio_vec walked */
	u32 found, unknown; /* folios looked up, by outcome */
	u32 unk_bytes[3]; /* unknown bytes by reason: not noted, redirtied, many */
	u8 cls; /* where the previous page's bytes went: enum it_wb_cls */
	u8 why; /* the previous page's reason when cls is IT_WBC_UNKNOWN: 0, 1, 2 */
	u8 any; /* a page-cache page was seen */
};

/*
 * The last walk on this CPU: its state and result, for the completion
 * program that follows. In a map, not on the stack: the verifier follows
 * stack values through bpf_loop's callback and never saw the walk's
 * counters converge (1M instructions); map values it does not track.
 */
struct it_wb_stash {
	u64 rq; /* the request walked; 0: none */
	/*
	 * The completion's clock, read before the walk: the record program's
	 * C stamp, so that the walk's time is not in D2C (it was: +3 to +8 us
	 * per O_DIRECT write under TCG against blktrace, test_btt). Valid for
	 * the request instance (c_rq, c_q_ns) only, and taken once.
	 */
	u64 c_rq, c_q_ns, c_ns;
	struct it_wb_walk w;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct it_wb_stash);
} wb_stash SEC(".maps");

/* bpf_loop's context (on the stack): the walk in wb_stash. */
struct it_wb_ctx {
	struct it_wb_walk *w;
};

enum it_wb_cls {
	IT_WBC_NONE = 0, /* not a page-cache page (direct IO, anonymous) */
	IT_WBC_FIRST, /* the dirtier */
	IT_WBC_OTHER, /* the second dirtier */
	IT_WBC_UNKNOWN, /* not known: wb.unknown_why says why */
};

/* why: an IT_WB_* bit of the first three (the counters follow their order) */
static __always_inline u8 it_wb_unknown(struct it_wb_walk *w, u8 why)
{
	w->wb.unknown_why |= why;
	w->why = why >> 1; /* 1, 2, 4 -> 0, 1, 2 */
	w->unknown++;
	return IT_WBC_UNKNOWN;
}

/* A folio dirtied at ns by task t: the first dirtier's, the second's, or a third's. */
static __always_inline u8 it_wb_found(struct it_wb_walk *w, struct it_task *t, u64 ns)
{
	if (!w->wb.dirty_first_ns || ns < w->wb.dirty_first_ns)
		w->wb.dirty_first_ns = ns;
	if (ns > w->wb.dirty_last_ns)
		w->wb.dirty_last_ns = ns;
	w->found++;
	if (!w->wb.dirtier.pid) {
		w->wb.dirtier = *t;
		return IT_WBC_FIRST;
	}
	if (t->pid == w->wb.dirtier.pid)
		return IT_WBC_FIRST;
	if (!w->wb.other_pid)
		w->wb.other_pid = t->pid;
	if (t->pid == w->wb.other_pid)
		return IT_WBC_OTHER;
	return it_wb_unknown(w, IT_WB_MANY);
}

/* Whose is folio `head`? Also notes its file system for the first one. */
static __always_inline u8 it_wb_classify(struct it_wb_walk *w, u64 head)
{
	struct it_dirty_key k;
	struct it_dirty *d;

	k.mapping = it_folio_mapping(head, &k.index);
	if (!k.mapping)
		return IT_WBC_NONE;
	if (!w->any) {
		struct address_space *m = (void *)k.mapping;

		w->any = 1;
		w->wb.file_dev = BPF_CORE_READ(m, host, i_sb, s_dev);
	}
	d = bpf_map_lookup_elem(&dirtied, &k);
	if (!d)
		return it_wb_unknown(w, IT_WB_NOT_NOTED);
	/* dirtied again since the request was queued: its data is the dirtying before */
	if (d->ns > w->bio_q_ns) {
		if (!d->prev_ns || d->prev_ns > w->bio_q_ns)
			return it_wb_unknown(w, IT_WB_REDIRTIED);
		return it_wb_found(w, &d->prev_task, d->prev_ns);
	}
	return it_wb_found(w, &d->task, d->ns);
}

static __always_inline void it_wb_add(struct it_wb_walk *w, u32 n)
{
	switch (w->cls) {
	case IT_WBC_FIRST:
		w->wb.bytes += n;
		break;
	case IT_WBC_OTHER:
		w->wb.other_bytes += n;
		break;
	case IT_WBC_UNKNOWN:
		w->wb.unknown_bytes += n;
		if (w->why < 3)
			w->unk_bytes[w->why] += n;
		break;
	default:
		break;
	}
}

/*
 * Start walking bio b (0: the walk ends). A bio merged into the request was
 * queued after its first one, and its pages may have been dirtied in between
 * (a writer streaming while the flusher writes): its own queue stamp (its
 * entry in `bios`, dead since the merge, still holds it) bounds its notes.
 */
static __always_inline void it_wb_bio(struct it_wb_walk *w, struct bio *b)
{
	struct it_bio_info *bi;
	u64 key = (u64)b;
	u32 idx;

	w->bio = key;
	if (!b)
		return;
	bi = bpf_map_lookup_elem(&bios, &key);
	w->bio_q_ns = bi && bi->q_ns > w->q_ns ? bi->q_ns : w->q_ns;
	idx = BPF_CORE_READ(b, bi_iter.bi_idx);
	w->left = BPF_CORE_READ(b, bi_iter.bi_size);
	w->done = BPF_CORE_READ(b, bi_iter.bi_bvec_done);
	w->vec = (u64)(BPF_CORE_READ(b, bi_io_vec) + idx);
}

/* One step: the bytes of one page of the current bio_vec, or a move to the next one. */
static int it_wb_step(u32 i, void *ctx)
{
	struct it_wb_walk *w = ((struct it_wb_ctx *)ctx)->w;
	/* locals: CO-RE reads relocate every field access of their expression */
	struct bio_vec *v = (void *)w->vec;
	struct bio *b = (void *)w->bio;
	u32 len, off, pos, n, psize = 1u << IT_PAGE_SHIFT;
	u64 page, head;

	if (!b)
		return 1;
	if (!w->left) {
		it_wb_bio(w, BPF_CORE_READ(b, bi_next));
		return 0;
	}
	len = BPF_CORE_READ(v, bv_len);
	if (w->done >= len) {
		w->vec += sizeof(struct bio_vec);
		w->done = 0;
		return 0;
	}
	off = BPF_CORE_READ(v, bv_offset);
	page = (u64)BPF_CORE_READ(v, bv_page);
	pos = off + w->done;
	page += (u64)(pos >> IT_PAGE_SHIFT) * bpf_core_type_size(struct page);
	n = psize - (pos & (psize - 1));
	if (n > len - w->done)
		n = len - w->done;
	if (n > w->left)
		n = w->left;
	head = it_page_head(page);
	if (head != w->head) {
		w->head = head;
		w->cls = it_wb_classify(w, head);
		/* direct IO: user pages from the first one on, nothing to walk */
		if (w->cls == IT_WBC_NONE && !w->any) {
			w->bio = 0;
			return 1;
		}
	}
	it_wb_add(w, n);
	w->done += n;
	w->left -= n;
	return 0;
}

/*
 * Before the record's completion program: a followed write request's pages,
 * per dirtier, into this CPU's wb_stash (rq 0 when it carries no page-cache
 * page). Nothing for reads, flushes, or requests not followed.
 */
static __always_inline int it_wb_complete(struct request *rq, const bool btf)
{
	struct it_wb_stash *s;
	struct it_wb_walk *w;
	struct it_wb_ctx c;
	struct it_bio_info *bi;
	struct bio *bio;
	u32 zero = 0;
	u64 key;

	/* attached under --writeback pages only */
	if (wb_mode != IT_WBMODE_PAGES || (IT_RD(btf, rq, cmd_flags) & IT_REQ_OP_MASK) != 1)
		return 0; /* not REQ_OP_WRITE */
	bio = IT_RD(btf, rq, bio);
	key = (u64)bio;
	bi = IT_SLOT_GET(&bios, key, struct it_bio_info);
	s = bpf_map_lookup_elem(&wb_stash, &zero);
	if (!bi || !s)
		return 0;
	s->c_ns = bpf_ktime_get_ns();
	s->c_rq = (u64)rq;
	s->c_q_ns = bi->q_ns;
	s->rq = 0;
	w = &s->w;
	__builtin_memset(w, 0, sizeof(*w));
	w->q_ns = bi->q_ns;
	it_wb_bio(w, bio);
	c.w = w;
	bpf_loop(IT_WB_MAX_STEPS, it_wb_step, &c, 0);
	if (!w->any)
		return 0;
	if (w->bio) { /* steps ran out: the rest is not known */
		u32 rest = IT_RD(btf, rq, __data_len) - w->wb.bytes - w->wb.other_bytes -
			   w->wb.unknown_bytes;

		w->wb.unknown_why |= IT_WB_TRUNC;
		w->wb.unknown_bytes += rest;
		it_count_n(IT_CNT_WB_UNK_TRUNC_BYTES, rest);
	}
	w->wb.blkcg_id = it_bio_blkcg_id(bio, btf);
	it_count_n(IT_CNT_WB_FOUND, w->found);
	it_count_n(IT_CNT_WB_UNKNOWN, w->unknown);
	it_count_n(IT_CNT_WB_FOUND_BYTES, w->wb.bytes + w->wb.other_bytes);
	it_count_n(IT_CNT_WB_UNK_NOT_NOTED_BYTES, w->unk_bytes[0]);
	it_count_n(IT_CNT_WB_UNK_REDIRTIED_BYTES, w->unk_bytes[1]);
	it_count_n(IT_CNT_WB_UNK_MANY_BYTES, w->unk_bytes[2]);
	s->rq = (u64)rq;
	return 0;
}

/*
 * The completion's stamp into *now (the walk's, when it ran for this request
 * instance, else the clock now) and the walk's result for rq, taken once
 * (NULL: none, e.g. a completion nested between the two programs took this
 * CPU's stash).
 */
static __always_inline struct it_wb *it_wb_take(struct request *rq, u64 q_ns, u64 *now)
{
	struct it_wb_stash *s;
	u32 zero = 0;

	s = bpf_map_lookup_elem(&wb_stash, &zero);
	if (!s || s->c_rq != (u64)rq || s->c_q_ns != q_ns) {
		*now = bpf_ktime_get_ns();
		return NULL;
	}
	*now = s->c_ns;
	s->c_rq = 0;
	if (s->rq != (u64)rq)
		return NULL;
	s->rq = 0;
	return &s->w.wb;
}

/*
 * Attached before block_rq_complete's record program (the loader's table
 * order is the attach order, and a tracepoint runs its programs in attach
 * order). Programs: btf_block_rq_complete_wb, raw_block_rq_complete_wb.
 */
IT_TP_PAIR(block_rq_complete, block_rq_complete_wb, it_wb_complete((void *)ctx[0], it_btf))

#endif /* IT_WB_BPF_H */
