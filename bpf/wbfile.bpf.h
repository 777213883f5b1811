/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --writeback files (the always-on profile's): who dirtied a block write's
 * pages, per file, at a price always-on can pay (docs/hooks.md "Writeback").
 *
 * - A traced buffered write call (not O_DIRECT) notes at its exit the bytes
 *   it took from clean to dirty: the delta of the task's ioac.write_bytes
 *   across the call, the counter behind /proc/PID/io write_bytes, which the
 *   kernel adds in folio_account_dirtied. Direct-IO writes add to it too: an
 *   O_DIRECT call is not noted this way. The file is the one of the first
 *   page the call dirtied (writeback_dirty_folio, which returns after one
 *   task-local load inside such a call): an overlay's upper file, a block
 *   device's own mapping. No hook runs per page for it.
 * - A dirtying outside a traced write call (a shared mmap written through a
 *   fault, io_uring, libaio, an O_DIRECT call falling back to the page
 *   cache) is noted by writeback_dirty_folio itself, one folio at a time.
 * - Either way into map `wbfile`: (file, process) -> bytes dirtied, bytes
 *   attributed to writeback since, the last dirtying; the process's task and
 *   cgroup at its first.
 * - A page-cache write bio notes at queue its first page's file and when the
 *   file went dirty (inode->dirtied_when, the kernel's own age). At
 *   completion, the record's program splits the request's bytes over the
 *   file's dirtiers by what each has dirtied and not yet had written,
 *   names the two biggest shares, and marks the request `shared` when the
 *   file had several. Bytes beyond what the notes hold are unknown
 *   (not_noted: dirtied before iotracer started, by a task the filters leave
 *   out, or a note evicted), those of a third dirtier `many`.
 * No program of this file runs for a read or a direct-IO request.
 */
#ifndef IT_WBFILE_BPF_H
#define IT_WBFILE_BPF_H

#include "config.bpf.h"
#include "maps.bpf.h"
#include "core_fixes.bpf.h"
#include "record.bpf.h"
#include "filter.bpf.h"
#include "hist.bpf.h"

/* Files with notes: ~2.6 MiB of kernel memory; the least recently dirtied go first. */
#define IT_WBF_FILES 8192
/* Dirtiers one file's note names; more share `many`. */
#define IT_WBF_WHO 4

/* A file: its mapping, and its inode's number and generation against reuse. */
struct it_wbf_key {
	u64 mapping;
	u64 ino;
	u32 gen;
	u32 pad;
};

struct it_wbf_who {
	struct it_task task; /* pid 0: a free slot */
	u64 dirtied; /* bytes this process took from clean to dirty */
	u64 written; /* of them, bytes block writes were attributed */
	u64 last_ns; /* its last noted dirtying */
};

struct it_wbf {
	u64 many_dirtied, many_written; /* dirtiers beyond the slots */
	struct it_wbf_who who[IT_WBF_WHO];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, IT_WBF_FILES);
	__type(key, struct it_wbf_key);
	__type(value, struct it_wbf);
} wbfile SEC(".maps");

/*
 * Per CPU, one entry per completion program (the first, and the second for
 * nested completions: they never run on each other's entry): a request's
 * split, for its record.
 */
/*
 * The split's accumulators live here too, not on the stack: a value read from
 * a map is unknown to the verifier on every path, so the paths of the split's
 * branches meet in one state, and the record program's rest is verified once
 * (with them in registers: ~190k instructions processed, ~0.6 s a program).
 */
struct it_wbf_out {
	struct it_wb wb;
	u64 b1, b2; /* the two biggest shares so far */
	u64 l1, l2; /* their dirtiers' last dirtying */
	u64 rem; /* what the cuts left, to the first dirtier with bytes left */
	u64 left[IT_WBF_WHO]; /* each dirtier's bytes not yet written, then its part */
	u64 pm; /* the share of the dirtiers beyond the slots */
	u32 nr; /* dirtiers with bytes left */
	u32 had; /* which slots had bytes left (bit i: who[i]) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, u32);
	__type(value, struct it_wbf_out);
} wbf_out SEC(".maps");

/* A new note (the stack is too small for it). */
static struct it_wbf wbf_zero;

static __always_inline u64 it_wbf_left(const struct it_wbf_who *w)
{
	u64 d = w->dirtied, wr = w->written;

	return d > wr ? d - wr : 0;
}

/*
 * The first word of a slot's task, pid and tid (struct it_task): claimed with
 * one cmpxchg, so two new dirtiers never take the same free slot.
 */
static __always_inline u64 *it_wbf_id(struct it_wbf_who *w)
{
	return (u64 *)&w->task;
}

/* The current process's slot in note n: its own, a free one, or one with nothing left. */
static __always_inline struct it_wbf_who *it_wbf_slot(struct it_wbf *n, u64 pid_tgid)
{
	u32 tgid = pid_tgid >> 32;
	u64 me = tgid | (pid_tgid << 32), old; /* struct it_task: pid, then tid */

#pragma unroll
	for (int i = 0; i < IT_WBF_WHO; i++)
		if (n->who[i].task.pid == tgid)
			return &n->who[i];
#pragma unroll
	for (int i = 0; i < IT_WBF_WHO; i++) {
		if (*it_wbf_id(&n->who[i]) || !it_cas_u64(it_wbf_id(&n->who[i]), 0, me))
			continue;
		it_fill_task(&n->who[i].task);
		return &n->who[i];
	}
	/* a process whose bytes were all written gives its slot up */
#pragma unroll
	for (int i = 0; i < IT_WBF_WHO; i++) {
		old = *it_wbf_id(&n->who[i]);
		if (it_wbf_left(&n->who[i]) || !it_cas_u64(it_wbf_id(&n->who[i]), old, me))
			continue;
		n->who[i].written = n->who[i].dirtied;
		it_fill_task(&n->who[i].task);
		return &n->who[i];
	}
	return NULL;
}

/* The current process dirtied `bytes` of file k at now. */
static __always_inline void it_wbf_add(struct it_wbf_key *k, u64 bytes, u64 now)
{
	struct it_wbf_who *w;
	struct it_wbf *n;

	n = bpf_map_lookup_elem(&wbfile, k);
	if (!n) {
		bpf_map_update_elem(&wbfile, k, &wbf_zero, BPF_NOEXIST);
		n = bpf_map_lookup_elem(&wbfile, k);
		if (!n)
			return;
	}
	w = it_wbf_slot(n, bpf_get_current_pid_tgid());
	if (!w) {
		__sync_fetch_and_add(&n->many_dirtied, bytes);
		return;
	}
	__sync_fetch_and_add(&w->dirtied, bytes);
	w->last_ns = now;
	it_count(IT_CNT_WB_NOTED);
}

/* The note key of a mapping (btf: a BTF pointer, read with plain loads). */
static __always_inline void it_wbf_key_of(struct it_wbf_key *k, struct address_space *m,
					  const bool btf)
{
	k->mapping = (u64)m;
	k->ino = IT_RD(btf, m, host, i_ino);
	k->gen = IT_RD(btf, m, host, i_generation);
	k->pad = 0;
}

/* The device whose data a mapping's pages are: its file system's, or a block device's own. */
static __always_inline u32 it_wbf_fdev(struct address_space *m, const bool btf)
{
	struct inode *h = IT_RD(btf, m, host);

	if ((IT_RD(btf, h, i_mode) & S_IFMT) == S_IFBLK)
		return IT_RD(btf, h, i_rdev);
	return IT_RD(btf, h, i_sb, s_dev);
}

/*
 * A traced syscall begins (syscall.bpf.h it_file_begin): a buffered write's
 * dirtying will be noted per file (the task's write_bytes now).
 */
static __always_inline void it_wbf_begin(struct task_struct *task, struct thread_state *st, u32 op,
					 u32 flags)
{
	bool has;

	st->wbf_write = 0;
	if (wb_mode != IT_WBMODE_FILES || op != IT_OP_WRITE || (flags & IT_F_DIO))
		return;
	st->wbf_bytes0 = it_task_write_bytes(task, &has);
	st->wbf_mapping = 0;
	st->wbf_write = has;
}

/*
 * The bytes the traced write in flight dirtied since its enter (or the last
 * flush) into its file's note: at its exit, and before it queues a write of
 * its own (O_SYNC, RWF_DSYNC), whose completion must find them.
 */
static __always_inline void it_wbf_flush(struct thread_state *st, u64 now)
{
	struct it_wbf_key k;
	u64 wbytes, delta;
	bool has;

	if (!st->wbf_write)
		return;
	wbytes = it_task_write_bytes(it_current_task(), &has);
	delta = wbytes - st->wbf_bytes0;
	st->wbf_bytes0 = wbytes;
	if (!st->wbf_mapping || (s64)delta <= 0)
		return;
	k.mapping = st->wbf_mapping;
	k.ino = st->wbf_ino;
	k.gen = st->wbf_gen;
	k.pad = 0;
	it_wbf_add(&k, delta, now);
}

/*
 * writeback_dirty_folio / _page under --writeback files: inside a traced
 * buffered write, the file of its first dirtied page (its exit notes the
 * bytes); outside one, the folio's own bytes now.
 */
static __always_inline int it_wbf_dirty(struct folio *folio, struct address_space *mapping,
					const bool btf)
{
	struct thread_state *st = it_state();
	struct it_wbf_key k;

	if (!mapping)
		return 0;
	if (st && st->in_sys && st->wbf_write) {
		if (!st->wbf_mapping) {
			it_wbf_key_of(&k, mapping, btf);
			st->wbf_mapping = k.mapping;
			st->wbf_ino = k.ino;
			st->wbf_gen = k.gen;
		}
		return 0;
	}
	if (!it_task_ok() || (filter_dev && !it_dev_ok(it_wbf_fdev(mapping, btf))))
		return 0;
	it_wbf_key_of(&k, mapping, btf);
	it_wbf_add(&k, folio ? it_folio_bytes(folio) : 1ull << IT_PAGE_SHIFT, bpf_ktime_get_ns());
	return 0;
}

/* The first page of a bio: its folio's mapping (0: not a page-cache page). */
static __always_inline u64 it_bio_first_mapping(struct bio *bio, const bool btf)
{
	struct bio_vec *v = IT_RD(btf, bio, bi_io_vec);
	u32 idx = btf ? bio->bi_iter.bi_idx : BPF_CORE_READ(bio, bi_iter.bi_idx);
	u64 page;

	/* a probe read: a BTF pointer takes no variable offset */
	page = (u64)BPF_CORE_READ(v + idx, bv_page);
	return page ? it_folio_mapping(it_page_head(page), NULL) : 0;
}

/*
 * What a write's file says (m its mapping, a BTF pointer when btf): its note's
 * key, its file system, and the device its pages are the data of (a block
 * device's own page cache: that device).
 */
struct it_wbf_inode {
	struct it_wbf_key k;
	u64 dirtied_when;
	u32 sdev;
	u32 fdev;
};

static __always_inline void it_wbf_inode_rd(struct address_space *m, struct it_wbf_inode *o,
					    const bool btf)
{
	struct inode *h = IT_RD(btf, m, host);

	o->k.ino = IT_RD(btf, h, i_ino);
	o->k.gen = IT_RD(btf, h, i_generation);
	o->k.pad = 0;
	o->dirtied_when = IT_RD(btf, h, dirtied_when);
	o->sdev = IT_RD(btf, h, i_sb, s_dev);
	o->fdev = it_wbf_fdev(m, btf);
}

/* The same from a plain mapping address: plain loads where bpf_rdonly_cast (6.2) types it. */
static __always_inline void it_wbf_inode_of(u64 m, struct it_wbf_inode *o)
{
	if (bpf_rdonly_cast)
		it_wbf_inode_rd(bpf_rdonly_cast((void *)m,
						bpf_core_type_id_kernel(struct address_space)),
				o, true);
	else
		it_wbf_inode_rd((void *)m, o, false);
	o->k.mapping = m;
}

/*
 * At bio queue: a write of page-cache pages (not direct IO, which the caller
 * rules out) keeps its first page's file and when that file went dirty, read
 * now: at completion the inode may be clean, or dirty again. Pages that are
 * not the data of the bio's own device (a loop device's backing file or a
 * stack's member writing an upper device's pages) are carried: their
 * completion names the dirtiers and leaves the bytes to the upper request.
 */
static __always_inline void it_wbf_queue(struct bio *bio, struct it_bio_info *bi, const bool btf)
{
	struct it_wbf_inode f;
	u64 m;

	if ((IT_RD(btf, bio, bi_opf) & IT_REQ_OP_MASK) != 1) /* REQ_OP_WRITE */
		return;
	m = it_bio_first_mapping(bio, btf);
	if (!m)
		return;
	it_wbf_inode_of(m, &f);
	bi->wb_mapping = m;
	bi->wb_dirtied_ns = it_inode_dirtied_ns(f.dirtied_when, bi->q_ns);
	bi->wb_carried = f.fdev != it_bio_part_devt(bio, btf);
	bi->flags |= IT_F_WB;
}

/* A bio of a file someone the filters keep dirtied (wb.bpf.h it_wb_owner_ok). */
static __always_inline bool it_wbf_noted(struct bio *bio, const bool btf)
{
	u64 m = it_bio_first_mapping(bio, btf);
	struct it_wbf_inode f;

	if (!m)
		return false;
	it_wbf_inode_of(m, &f);
	return bpf_map_lookup_elem(&wbfile, &f.k) != NULL;
}

/* n bytes unknown for reason why (an IT_WB_* bit), counted as the records' sums are. */
static __always_inline void it_wbf_unknown(struct it_wb *wb, u64 n, u8 why, u32 cnt)
{
	if (!n)
		return;
	wb->unknown_bytes += n;
	wb->unknown_why |= why;
	it_count_n(cnt, n);
}

/* One dirtier's share part, named in o->wb if it is one of the two biggest so far. */
static __always_inline void it_wbf_name(struct it_wbf_out *o, const struct it_wbf_who *w, u64 part)
{
	if (part > o->b1) {
		o->wb.other_pid = o->wb.dirtier.pid;
		o->b2 = o->b1;
		o->l2 = o->l1;
		o->wb.dirtier = w->task;
		o->b1 = part;
		o->l1 = w->last_ns;
	} else if (part > o->b2) {
		o->wb.other_pid = w->task.pid;
		o->b2 = part;
		o->l2 = w->last_ns;
	}
}

/*
 * The parts of take (of tot bytes left) in o->left[]: each dirtier's
 * take * left / tot, in 64 bits (both cut to 32 significant bits), the
 * dirtiers beyond the slots' in o->pm, what the cuts leave in o->rem. One
 * dirtier with bytes left (the common case) takes it all: no division.
 */
static __always_inline void it_wbf_parts(struct it_wbf_out *o, u64 lm, u64 take, u64 tot)
{
	u32 sh = 0;

	if (o->nr == 1 && !lm) {
#pragma unroll
		for (int i = 0; i < IT_WBF_WHO; i++)
			o->left[i] = o->left[i] ? take : 0;
		return;
	}
	if (tot >> 32)
		sh = it_verifier_mask(it_log2(tot) - 31, 31);
	o->pm = take * (lm >> sh) / (tot >> sh);
	o->rem = take - o->pm;
#pragma unroll
	for (int i = 0; i < IT_WBF_WHO; i++) {
		o->left[i] = take * (o->left[i] >> sh) / (tot >> sh);
		o->rem -= o->left[i];
	}
}

/*
 * bytes of a write request of the file of note n: split over its dirtiers by
 * what each dirtied and was not yet written (it_wbf_parts; what the cuts
 * leave to the first one with bytes left), then counted as written unless
 * carried.
 */
static __always_inline void it_wbf_split(struct it_wbf *n, u32 bytes, struct it_wbf_out *o,
					 u64 q_ns, bool carried)
{
	u64 lm, tot, take, part;

	lm = n->many_dirtied > n->many_written ? n->many_dirtied - n->many_written : 0;
	tot = lm;
	o->nr = lm != 0;
#pragma unroll
	for (int i = 0; i < IT_WBF_WHO; i++) {
		o->left[i] = it_wbf_left(&n->who[i]);
		tot += o->left[i];
		o->nr += o->left[i] != 0;
		o->had |= (o->left[i] != 0) << i;
	}
	if (!tot) {
		it_wbf_unknown(&o->wb, bytes, IT_WB_NOT_NOTED, IT_CNT_WB_UNK_NOT_NOTED_BYTES);
		return;
	}
	take = bytes < tot ? bytes : tot;
	it_wbf_parts(o, lm, take, tot);
#pragma unroll
	for (int i = 0; i < IT_WBF_WHO; i++) {
		part = o->left[i];
		if (o->had & (1u << i)) {
			part += o->rem;
			o->rem = 0;
		}
		if (!part)
			continue;
		if (!carried)
			__sync_fetch_and_add(&n->who[i].written, part);
		it_wbf_name(o, &n->who[i], part);
	}
	o->pm += o->rem;
	if (o->pm && !carried)
		__sync_fetch_and_add(&n->many_written, o->pm);
	o->wb.bytes = o->b1;
	o->wb.other_bytes = o->b2;
	if (!o->b2)
		o->wb.other_pid = 0;
	/* the newest dirtying of the two named, before the queue (a later one is not this data) */
	if (o->l1 <= q_ns)
		o->wb.dirty_last_ns = o->l1;
	if (o->l2 <= q_ns && o->l2 > o->wb.dirty_last_ns)
		o->wb.dirty_last_ns = o->l2;
	it_wbf_unknown(&o->wb, take - o->b1 - o->b2, IT_WB_MANY, IT_CNT_WB_UNK_MANY_BYTES);
	it_wbf_unknown(&o->wb, bytes - take, IT_WB_NOT_NOTED, IT_CNT_WB_UNK_NOT_NOTED_BYTES);
	if (o->nr > 1)
		o->wb.mode |= IT_WBM_SHARED;
}

/*
 * A followed write of page-cache pages completes (the record's program, for
 * a request whose bio queue set IT_F_WB): its bytes over its file's
 * dirtiers, the bio's blkcg (the cgroup io.stat charges) and the file's
 * dirty time, in this program's wbf_out entry. NULL: none.
 */
static __always_inline struct it_wb *
it_wbf_complete(struct request *rq, const struct it_bio_info *bi, bool second, const bool btf)
{
	struct it_wbf_inode f;
	struct it_wbf_out *o;
	u32 idx = second;
	struct it_wbf *n;
	struct it_wb *wb;

	o = bpf_map_lookup_elem(&wbf_out, &idx);
	if (!o || !bi->wb_mapping)
		return NULL;
	__builtin_memset(o, 0, sizeof(*o));
	wb = &o->wb;
	it_wbf_inode_of(bi->wb_mapping, &f);
	wb->mode = IT_WBM_FILE;
	wb->file_dev = f.sdev;
	wb->blkcg_id = it_bio_blkcg_id(IT_RD(btf, rq, bio), btf);
	wb->dirty_first_ns = bi->wb_dirtied_ns;
	n = bpf_map_lookup_elem(&wbfile, &f.k);
	if (n)
		it_wbf_split(n, IT_RD(btf, rq, __data_len), o, bi->q_ns, bi->wb_carried);
	else
		it_wbf_unknown(wb, IT_RD(btf, rq, __data_len), IT_WB_NOT_NOTED,
			       IT_CNT_WB_UNK_NOT_NOTED_BYTES);
	it_count_n(IT_CNT_WB_FOUND_BYTES, wb->bytes + wb->other_bytes);
	return wb;
}

#endif /* IT_WBFILE_BPF_H */
