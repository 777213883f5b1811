/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The stack layer: one request through the devices stacked above the disks.
 *
 * A bio-based device (device mapper, md) never makes requests: its bios are
 * remapped to clones, splits, mirrors and stripes on the devices below,
 * often submitted by the driver's own threads (kcryptd, dmcrypt_write,
 * raid1d, raid5d). A partition remaps its bios onto the whole disk. The
 * kernel says so in block_bio_remap(bio, dev, from): bio is the piece about
 * to be submitted below, (dev, from) where it came from, the upper device
 * and its sector there. As btt does, the piece is matched to its upper bio
 * on (dev, sector): every upper bio's start is keyed in `stk_sect` at its
 * queue (and the start of what is left of it at a split), so one rule serves
 * every target. The piece, once queued below, is a member: its entry in
 * `bios` takes the upper bio's owner (syscall, thread, cgroup, io_uring
 * request, writeback inode) instead of the thread that carried it, and names
 * the upper device and the piece's offset in the upper bio. An upper bio
 * ends at block_bio_complete, which fires for bio-based devices only (a
 * request's bios are completed with their trace flag cleared: block_rq_complete
 * stands for them): its record (IT_F_UPPER) has the upper queue, its first
 * remap, its last member's completion and its own completion.
 *
 * A remap from a followed device whose upper bio is not found is counted
 * (IT_CNT_STK_NO_UPPER) and its request flagged IT_F_STK_LOST: its owner is
 * the carrying thread, never a guess. docs/hooks.md, "The stack layer".
 */
#ifndef IT_STACK_BPF_H
#define IT_STACK_BPF_H

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

struct it_stk_key {
	u64 sector;
	u32 dev;
	u32 pad;
};

/*
 * Where followed upper bios start (or the rest of one, after a split): their
 * keys in `bios`, the newest first. Two slots: two writers of one block in
 * flight at once (the second queued before the first's piece is remapped,
 * and a driver's thread that reorders them, as dm-crypt's does) both stay
 * findable.
 */
#define IT_STK_SAME 2

struct it_stk_uppers {
	u64 up[IT_STK_SAME];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct it_stk_key);
	__type(value, struct it_stk_uppers);
} stk_sect SEC(".maps");

/* A piece remapped and not yet queued below: what its queue makes it a member of. */
struct it_stk_link {
	u64 up; /* the upper bio's key in `bios`, 0: none found */
	u32 up_dev;
	u32 up_off;
	u32 flags; /* IT_F_STK_LOST, IT_F_UNLISTED */
	u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, u64);
	__type(value, struct it_stk_link);
} stk_link SEC(".maps");

/*
 * Links made and not yet taken: while 0, a bio's queue looks nothing up. A
 * link whose queue never came (a piece failed before it) keeps it above 0
 * until the LRU drops it: a lookup more per queue, nothing wrong.
 */
__u64 stk_links = 0;

/*
 * Is the bio's disk bio-based (dm, md, ...: its own ->submit_bio), and does
 * the stack layer end such bios (stk_hooked: else nothing would)?
 */
static __always_inline bool it_stk_bio_based(struct bio *bio, const bool btf)
{
	struct gendisk *disk;

	if (!stk_hooked)
		return false;
	if (bpf_core_field_exists(struct bio___old, bi_disk)) {
		disk = BPF_CORE_READ((struct bio___old *)bio, bi_disk);
		return !!BPF_CORE_READ(disk, fops, submit_bio);
	}
	disk = IT_RD(btf, bio, bi_bdev, bd_disk);
	return !!IT_RD(btf, disk, fops, submit_bio);
}

/* The link a remap left for this bio, taken (NULL: none). */
static __always_inline bool it_stk_take(u64 key, struct it_stk_link *out)
{
	struct it_stk_link *l;

	if (!stk_links)
		return false;
	l = bpf_map_lookup_elem(&stk_link, &key);
	if (!l)
		return false;
	*out = *l;
	bpf_map_delete_elem(&stk_link, &key);
	__sync_fetch_and_add(&stk_links, -1);
	return true;
}

/*
 * A bio queued on a partition without a remap event: an empty one (a
 * flush: blk_partition_remap traces only bios with sectors). Since 5.12 the
 * bio keeps the partition's block_device (bi_bdev); before, bi_partno is
 * cleared by then and such a bio is the disk's.
 */
static __always_inline bool it_stk_part(struct bio *bio, struct it_stk_link *l, const bool btf)
{
	u32 part;

	if (!stk_hooked)
		return false;
	part = it_bio_part_devt(bio, btf);
	if (part == it_bio_disk_devt(bio, btf))
		return false;
	l->up = 0;
	l->up_dev = part;
	l->up_off = IT_STK_PART;
	l->flags = 0;
	return true;
}

/* Upper bio `key`, if live and holding sector `from`. */
static __always_inline struct it_bio_info *it_stk_holds(u64 key, u64 from)
{
	struct it_bio_info *up = IT_SLOT_GET(&bios, key, struct it_bio_info);

	/* a key left by an upper bio that ended unseen: its range must hold `from` */
	if (up && (up->flags & IT_F_UPPER) && from >= up->stk_sector &&
	    from < up->stk_sector + (up->stk_bytes >> 9) + !up->stk_bytes)
		return up;
	return NULL;
}

/* Key upper bio `key` at k, in front of the one still there (if live and starting there). */
static __always_inline void it_stk_key_put(struct it_stk_key *k, u64 key)
{
	struct it_stk_uppers *o = bpf_map_lookup_elem(&stk_sect, k);
	struct it_stk_uppers n = { .up = { key } };

	if (o) {
		if (o->up[0] != key && it_stk_holds(o->up[0], k->sector))
			n.up[1] = o->up[0];
		else if (o->up[1] != key && it_stk_holds(o->up[1], k->sector))
			n.up[1] = o->up[1];
	}
	bpf_map_update_elem(&stk_sect, k, &n, BPF_ANY);
}

/*
 * The upper bio a piece from (k->dev, k->sector) belongs to (its key in
 * *key), or NULL. Of two live ones there, the one with fewer pieces, the
 * older on a tie (counted: the two are not told apart; docs/hooks.md, "The
 * stack layer").
 */
static __always_inline struct it_bio_info *it_stk_find(struct it_stk_key *k, u64 *key)
{
	struct it_stk_uppers *u = bpf_map_lookup_elem(&stk_sect, k);
	struct it_bio_info *a, *b;

	*key = 0;
	if (!u)
		return NULL;
	a = it_stk_holds(u->up[0], k->sector);
	b = it_stk_holds(u->up[1], k->sector);
	if (a && b)
		it_count(IT_CNT_STK_SAME);
	if (a && (!b || a->stk_pieces < b->stk_pieces)) {
		*key = u->up[0];
		return a;
	}
	if (b)
		*key = u->up[1];
	return b;
}

/* An upper bio queued: key its start, so that its pieces find it. */
static __always_inline void it_stk_upper(struct bio *bio, struct it_bio_info *bi, const bool btf)
{
	struct it_stk_key k = { .dev = it_bio_disk_devt(bio, btf) };
	u64 key = (u64)bio;

	k.sector = IT_RD(btf, bio, bi_iter.bi_sector);
	bi->flags |= IT_F_UPPER;
	bi->stk_sector = k.sector;
	bi->stk_bytes = IT_RD(btf, bio, bi_iter.bi_size);
	it_stk_key_put(&k, key);
	it_count(IT_CNT_STK_UPPER);
}

/* A piece of upper bio up, remapped at now: its first remap, and one more piece. */
static __always_inline void it_stk_piece(struct it_bio_info *up, u64 now)
{
	if (!up->stk_r_ns)
		up->stk_r_ns = now;
	up->stk_pieces++;
	it_count(IT_CNT_STK_REMAP);
}

#define IT_STK_STRIPE_DISKS 32

#ifdef IT_HAS_CALLBACKS
/* bpf_loop's context over a stripe's pages (it_stk_stripe). */
struct it_stk_stripe_ctx {
	u64 base, esz, up;
	u64 offs[3];
};

/*
 * One page of the stripe: the first followed upper bio waiting on it
 * (towrite, then written, then toread), or md's accounting clone of one (the
 * original is one pointer away). A bpf_loop callback: verified once, not
 * once per page.
 */
static long it_stk_stripe_one(u32 i, struct it_stk_stripe_ctx *c)
{
	struct it_bio_info *up;
	u64 p;

	for (int f = 0; f < 3; f++) {
		p = 0;
		bpf_probe_read_kernel(&p, sizeof(p), (void *)(c->base + i * c->esz + c->offs[f]));
		if (!p)
			continue;
		up = IT_SLOT_GET(&bios, p, struct it_bio_info);
		if (!up) {
			p = it_md_orig_bio(p);
			up = IT_SLOT_GET(&bios, p, struct it_bio_info);
		}
		if (up && (up->flags & IT_F_UPPER)) {
			c->up = p;
			return 1;
		}
	}
	return 0;
}

/*
 * A raid5 stripe's IO (its parity, or a page read to compute it) starts at
 * no upper bio's sector: its bio is a page of the stripe (bi_private), whose
 * pages hold the upper bios waiting on them. The first followed one is the
 * owner (a stripe shared by several upper bios serves them all). 0: not a
 * stripe of md device dev, none followed, or no raid456 BTF or bpf_loop
 * (5.17) here.
 */
static __always_inline u64 it_stk_stripe(struct bio *bio, u32 dev, const bool btf)
{
	struct it_stk_stripe_ctx c = {};
	struct stripe_head___it *sh;
	int disks;

	if (!has_loop || !bpf_core_type_exists(struct stripe_head___it))
		return 0;
	sh = (void *)IT_RD(btf, bio, bi_private);
	if (!sh || it_disk_devt(BPF_CORE_READ(sh, raid_conf, mddev, gendisk), false) != dev)
		return 0;
	disks = BPF_CORE_READ(sh, disks);
	c.base = (u64)sh + bpf_core_field_offset(struct stripe_head___it, dev);
	c.esz = bpf_core_type_size(struct r5dev___it);
	c.offs[0] = bpf_core_field_offset(struct r5dev___it, towrite);
	c.offs[1] = bpf_core_field_offset(struct r5dev___it, written);
	c.offs[2] = bpf_core_field_offset(struct r5dev___it, toread);
	if (disks > 0)
		bpf_loop(disks < IT_STK_STRIPE_DISKS ? disks : IT_STK_STRIPE_DISKS,
			 it_stk_stripe_one, &c, 0);
	return c.up;
}
#else
/* the compat object: no bpf_loop callbacks (core_fixes.bpf.h), no raid5 stripe walk */
static __always_inline u64 it_stk_stripe(struct bio *bio, u32 dev, const bool btf)
{
	return 0;
}
#endif

/*
 * block_bio_remap(bio, dev, from): bio, about to be submitted below, comes
 * from sector `from` of device `dev`. An upper bio found there makes it a
 * piece of that bio; the bio's own partition makes it a partition's request,
 * a raid5 stripe's page the piece of an upper bio waiting on the stripe.
 */
static __always_inline int it_stk_remap(struct bio *bio, u32 dev, u64 from, const bool btf)
{
	struct it_stk_key k = { .sector = from, .dev = dev };
	struct it_stk_link l = { .up_dev = dev };
	struct it_bio_info *up = it_stk_find(&k, &l.up);
	u64 key = (u64)bio, now;

	now = bpf_ktime_get_ns();
	if (up) {
		l.up_off = from - up->stk_sector < IT_STK_FAR ? from - up->stk_sector : IT_STK_FAR;
		it_stk_piece(up, now);
	} else if (it_bio_part_devt(bio, btf) == dev) {
		/* a device mapper piece on a partition: the mapper's link stays */
		if (stk_links && bpf_map_lookup_elem(&stk_link, &key))
			return 0;
		l.up_off = IT_STK_PART;
	} else if ((l.up = it_stk_stripe(bio, dev, btf))) {
		l.up_off = IT_STK_STRIPE;
		up = IT_SLOT_GET(&bios, l.up, struct it_bio_info);
		if (up)
			it_stk_piece(up, now);
	} else {
		/* filtered at its queue on purpose, or never seen: the owner is not known */
		if (it_task_filtered())
			return 0;
		l.flags = IT_F_STK_LOST;
		it_count(IT_CNT_STK_NO_UPPER);
	}
	if (!bpf_map_update_elem(&stk_link, &key, &l, BPF_ANY))
		__sync_fetch_and_add(&stk_links, 1);
	return 0;
}

/*
 * block_split(bio, rest): device mapper (5.18+) hands what is left of an
 * upper bio back to the block layer under the same bio: key the rest's
 * start. Else bio is the new front part of its parent (bi_private, by
 * bio_chain): a member's front part is a piece of the same upper bio, and
 * an upper bio's parent keeps the rest. Returns true when bio is to be
 * queued as new (the front part).
 */
static __always_inline bool it_stk_split(struct bio *bio, const bool btf)
{
	struct it_stk_key k = { .dev = it_bio_disk_devt(bio, btf) };
	u64 key = (u64)bio, parent;
	struct it_bio_info *p = IT_SLOT_GET(&bios, key, struct it_bio_info);
	struct it_stk_link l = {};

	if (p && (p->flags & IT_F_UPPER)) {
		k.sector = IT_RD(btf, bio, bi_iter.bi_sector);
		it_stk_key_put(&k, key);
		it_count(IT_CNT_STK_SPLIT);
		return false;
	}
	parent = (u64)IT_RD(btf, bio, bi_private);
	p = IT_SLOT_GET(&bios, parent, struct it_bio_info);
	if (!p)
		return true;
	if (p->stk_up_dev) {
		l.up = p->stk_up;
		l.up_dev = p->stk_up_dev;
		l.up_off = p->stk_up_off;
		l.flags = p->flags & IT_F_STK_LOST;
		if (!bpf_map_update_elem(&stk_link, &key, &l, BPF_ANY))
			__sync_fetch_and_add(&stk_links, 1);
	}
	if (p->flags & IT_F_UPPER) {
		u32 front = IT_RD(btf, bio, bi_iter.bi_size);

		k.sector = IT_RD(btf, bio, bi_iter.bi_sector) + (front >> 9);
		p->stk_sector = k.sector;
		p->stk_bytes = p->stk_bytes > front ? p->stk_bytes - front : 0;
		it_stk_key_put(&k, parent);
	}
	return true;
}

/*
 * A member request completed at now: its upper bio's last member
 * completion. A partition's request also counts in the partition's
 * histogram: the partition is its upper level.
 */
static __always_inline void it_stk_member_done(const struct it_bio_info *bi, u8 op, u64 now,
					       u64 q2c)
{
	struct it_bio_info *up;
	struct it_hist_val *h;

	if (!bi->stk_up_dev)
		return;
	up = IT_SLOT_GET(&bios, bi->stk_up, struct it_bio_info);
	if (up && up->stk_m_ns < now)
		up->stk_m_ns = now;
	if (bi->stk_up_off != IT_STK_PART || !kern_hists)
		return;
	h = it_hist_get(bi->stk_up_dev, IT_L_STACK, op, IT_HK_PLAIN);
	if (h)
		it_hist_slot(&h->st[IT_ST_Q2C], q2c);
}

/* An upper bio's histograms: queue..completion, ..first remap, last member..completion. */
static __always_inline void it_stk_hist(const struct it_bio_info *bi, u32 dev, u8 op, u64 now)
{
	struct it_hist_val *h = kern_hists ? it_hist_get(dev, IT_L_STACK, op, IT_HK_PLAIN) : NULL;

	if (!h)
		return;
	it_hist_slot(&h->st[IT_ST_Q2C], now - bi->q_ns);
	if (bi->stk_r_ns >= bi->q_ns)
		it_hist_slot(&h->st[IT_ST_Q2R], bi->stk_r_ns - bi->q_ns);
	if (bi->stk_m_ns && bi->stk_m_ns <= now)
		it_hist_slot(&h->st[IT_ST_M2C], now - bi->stk_m_ns);
}

static __always_inline void it_stk_record(const struct it_bio_info *bi, u32 dev, u32 opf, s32 error,
					  u64 now)
{
	struct it_block_rec *r;
	struct it_res res;

	r = it_reserve(&res, sizeof(*r), IT_L_STACK);
	if (!r)
		return;
	__builtin_memset(r, 0, sizeof(*r));
	it_hdr_init(&r->hdr, IT_REC_BLOCK, sizeof(*r));
	r->task = bi->task;
	r->seq = bi->seq;
	r->origin_id = bi->origin_id;
	r->sector = bi->stk_sector;
	r->q_ns = bi->q_ns;
	r->c_ns = now;
	r->ino = bi->ino;
	r->dev = dev;
	r->bytes = bi->stk_bytes;
	r->flags = (bi->flags & (IT_F_SAMPLED | IT_F_HAS_Q | IT_F_UPPER | IT_F_STK_LOST)) |
		   it_req_flags(opf) | (error ? IT_F_ERROR : 0);
	r->error = error;
	r->stk_pieces = bi->stk_pieces;
	r->file_dev = bi->file_dev;
	r->op = it_req_op(opf);
	r->origin = bi->origin;
	r->up_dev = bi->stk_up_dev;
	r->up_off = bi->stk_up_off;
	r->stk_r_ns = bi->stk_r_ns;
	r->stk_m_ns = bi->stk_m_ns;
	it_submit(&res, r);
}

/*
 * block_bio_complete(q, bio): a bio of a bio-based device ends (its
 * BIO_TRACE_COMPLETION flag, set when its queue was traced). An upper bio of
 * ours leaves its record and histograms; an upper bio that is itself a
 * member (a dm device on a dm device) is its upper's last member so far.
 */
static __always_inline int it_stk_bio_done(struct bio *bio, const bool btf)
{
	struct it_bio_info *p, bi;
	u64 key = (u64)bio, now;
	u32 opf, dev;
	s32 error;

	p = IT_SLOT_GET(&bios, key, struct it_bio_info);
	if (!p || !(p->flags & IT_F_UPPER))
		return 0;
	bi = *p;
	p->live = 0;
	now = bpf_ktime_get_ns();
	it_count(IT_CNT_STK_UPPER_DONE);
	dev = it_bio_disk_devt(bio, btf);
	/*
	 * Its start's key in stk_sect stays (the LRU ages it out; a remap finds
	 * no live upper through it). Deleting it when it still names this bio
	 * raced with another upper bio queued at the same sector on another CPU:
	 * the check read the old value, the delete removed the new one, and that
	 * bio's piece was lost (the lab's dm-crypt writers, once in ~20k).
	 */
	opf = IT_RD(btf, bio, bi_opf);
	error = (s32)IT_RD(btf, bio, bi_status);
	it_stk_member_done(&bi, it_req_op(opf), now, now - bi.q_ns);
	if (bi.flags & IT_F_UNLISTED)
		return 0;
	it_stk_hist(&bi, dev, it_req_op(opf), now);
	it_agg_add(&bi, &bi.task, dev, it_req_op(opf), bi.stk_bytes, now);
	if (it_keep_block(bi.flags, now - bi.q_ns))
		it_stk_record(&bi, dev, opf, error, now);
	return 0;
}

/*
 * Programs: btf_block_bio_remap, raw_block_bio_remap, btf_block_bio_complete,
 * raw_block_bio_complete. block_bio_remap is (bio, dev, from) since 5.11,
 * (q, bio, dev, from) before, with the other bio tracepoints
 * (blk_bio_tp_has_queue); block_bio_complete has kept (q, bio).
 */
IT_TP_BOTH(block_bio_remap,
	   it_stk_remap(IT_BLK_BIO_ARG(ctx, 0), (u32)it_ctx_arg(ctx, blk_bio_tp_has_queue, 1, 1),
			it_ctx_arg(ctx, blk_bio_tp_has_queue, 2, 1), it_btf))
IT_TP_BOTH(block_bio_complete, it_stk_bio_done((void *)ctx[1], it_btf))

#endif /* IT_STACK_BPF_H */
