// SPDX-License-Identifier: GPL-2.0
/*
 * recfmt: segment and block headers, and the entry coder of a --record
 * payload (see recfmt.h and docs/record.md). The decoder trusts nothing it
 * reads: every length, count and mask is checked against the buffer and the
 * structs before use.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <zlib.h>

#include "records/recfmt.h"

_Static_assert(sizeof(struct it_syscall_rec) % 8 == 0, "syscall record in words");
_Static_assert(sizeof(struct it_block_rec) % 8 == 0, "block record in words");
_Static_assert(sizeof(struct it_uring_rec) % 8 == 0, "uring record in words");
_Static_assert(sizeof(struct rf_aio) % 8 == 0 && sizeof(struct rf_aio) / 8 <= 64, "aio words");
_Static_assert(sizeof(struct it_syscall_rec) / 8 <= 64, "a word mask is 64 bits");

/* ---- little-endian fields ---- */

static void put_le(uint8_t *b, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *b, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v |= (uint64_t)b[i] << (8 * i);
	return v;
}

/* A NUL-padded text field of n bytes; the copy out is always terminated. */
static void put_text(uint8_t *b, const char *s, size_t n)
{
	size_t len = strnlen(s, n - 1);

	memset(b, 0, n);
	memcpy(b, s, len);
}

static void get_text(char *dst, const uint8_t *b, size_t n)
{
	memcpy(dst, b, n);
	dst[n - 1] = '\0';
}

/*
 * Segment header: magic(8) format(2) hdr_len(2) abi(4) real_ns(8) mono_ns(8)
 * seq(8) run_mono_ns(8) pid(4) flags(4) host(64) kernel(64) boot_id(40)
 * reserved(28) crc32(4) of the 252 bytes before it (flags: format 2; 0 in 1). The fields after the
 * format, as (offset, bytes, where in struct rf_seg_hdr): integers of 4 or 8
 * bytes, text of more.
 */
static const struct {
	uint16_t off, len;
	uint16_t field;
} seg_fields[] = {
	{ 12, 4, offsetof(struct rf_seg_hdr, abi) },
	{ 16, 8, offsetof(struct rf_seg_hdr, real_ns) },
	{ 24, 8, offsetof(struct rf_seg_hdr, mono_ns) },
	{ 32, 8, offsetof(struct rf_seg_hdr, seq) },
	{ 40, 8, offsetof(struct rf_seg_hdr, run_mono_ns) },
	{ 48, 4, offsetof(struct rf_seg_hdr, pid) },
	{ 52, 4, offsetof(struct rf_seg_hdr, flags) },
	{ 56, 64, offsetof(struct rf_seg_hdr, host) },
	{ 120, 64, offsetof(struct rf_seg_hdr, kernel) },
	{ 184, 40, offsetof(struct rf_seg_hdr, boot_id) },
};

#define NR_SEG_FIELDS (sizeof(seg_fields) / sizeof(seg_fields[0]))

void rf_seg_hdr_put(uint8_t *b, const struct rf_seg_hdr *h)
{
	memset(b, 0, RF_SEG_HDR_LEN);
	memcpy(b, RF_SEG_MAGIC, 8);
	put_le(b + 8, RF_FORMAT, 2);
	put_le(b + 10, RF_SEG_HDR_LEN, 2);
	for (size_t i = 0; i < NR_SEG_FIELDS; i++) {
		const char *f = (const char *)h + seg_fields[i].field;
		uint32_t v32;
		uint64_t v64;

		if (seg_fields[i].len == 4) {
			memcpy(&v32, f, 4);
			put_le(b + seg_fields[i].off, v32, 4);
		} else if (seg_fields[i].len == 8) {
			memcpy(&v64, f, 8);
			put_le(b + seg_fields[i].off, v64, 8);
		} else {
			put_text(b + seg_fields[i].off, f, seg_fields[i].len);
		}
	}
	put_le(b + 252, crc32(0, b, 252), 4);
}

int rf_seg_hdr_get(const uint8_t *b, size_t n, struct rf_seg_hdr *h)
{
	if (n < RF_SEG_HDR_LEN || memcmp(b, RF_SEG_MAGIC, 8) ||
	    get_le(b + 252, 4) != crc32(0, b, 252))
		return -EBADMSG;
	memset(h, 0, sizeof(*h));
	h->format = (uint16_t)get_le(b + 8, 2);
	if (h->format < RF_FORMAT_MIN || h->format > RF_FORMAT ||
	    get_le(b + 10, 2) != RF_SEG_HDR_LEN)
		return -EPROTO;
	for (size_t i = 0; i < NR_SEG_FIELDS; i++) {
		char *f = (char *)h + seg_fields[i].field;
		uint32_t v32;
		uint64_t v64;

		if (seg_fields[i].len == 4) {
			v32 = (uint32_t)get_le(b + seg_fields[i].off, 4);
			memcpy(f, &v32, 4);
		} else if (seg_fields[i].len == 8) {
			v64 = get_le(b + seg_fields[i].off, 8);
			memcpy(f, &v64, 8);
		} else {
			get_text(f, b + seg_fields[i].off, seg_fields[i].len);
		}
	}
	return 0;
}

/* Block header: magic(4) clen(4) rlen(4) nr_req(4) first_ns(8) last_ns(8) crc(4) hdr_crc(4). */
void rf_blk_hdr_put(uint8_t *b, const struct rf_blk_hdr *h)
{
	put_le(b, RF_BLK_MAGIC, 4);
	put_le(b + 4, h->clen, 4);
	put_le(b + 8, h->rlen, 4);
	put_le(b + 12, h->nr_req, 4);
	put_le(b + 16, h->first_ns, 8);
	put_le(b + 24, h->last_ns, 8);
	put_le(b + 32, h->crc, 4);
	put_le(b + 36, crc32(0, b, 36), 4);
}

int rf_blk_hdr_get(const uint8_t *b, size_t n, struct rf_blk_hdr *h)
{
	if (n < RF_BLK_HDR_LEN || get_le(b, 4) != RF_BLK_MAGIC ||
	    get_le(b + 36, 4) != crc32(0, b, 36))
		return -EBADMSG;
	h->clen = (uint32_t)get_le(b + 4, 4);
	h->rlen = (uint32_t)get_le(b + 8, 4);
	h->nr_req = (uint32_t)get_le(b + 12, 4);
	h->first_ns = get_le(b + 16, 8);
	h->last_ns = get_le(b + 24, 8);
	h->crc = (uint32_t)get_le(b + 32, 4);
	if (!h->clen || h->clen > RF_MAX_CLEN || h->rlen > RF_MAX_RLEN)
		return -EBADMSG;
	return 0;
}

/* ---- varints ---- */

static inline uint8_t *put_var(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static int get_var(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t x = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		if (p >= end)
			return -EBADMSG;
		x |= (uint64_t)(*p & 0x7f) << shift;
		if (!(*p++ & 0x80)) {
			*pp = p;
			*v = x;
			return 0;
		}
	}
	return -EBADMSG; /* more than 10 bytes */
}

/* get_var() of a value that must be at most max. */
static int get_var_max(const uint8_t **pp, const uint8_t *end, uint64_t max, uint64_t *v)
{
	return get_var(pp, end, v) || *v > max ? -EBADMSG : 0;
}

static inline uint64_t zigzag(uint64_t d)
{
	return (d << 1) ^ (uint64_t)((int64_t)d >> 63);
}

static inline uint64_t unzigzag(uint64_t z)
{
	return (z >> 1) ^ (0 - (z & 1));
}

/* ---- records as word deltas ---- */

/*
 * A record is coded as 64-bit words: the words that differ from a prediction
 * (the previous record of its type, or for a syscall's block requests the
 * fields the syscall already said), as a mask XOR the type's previous mask,
 * then each differing word's zigzag delta. Before that, the timestamps of a
 * record become offsets to its first one (exit, first_q to enter; g, i, d, c
 * and the driver's to q), as t - base + 1 (0 stays 0), so that they vary as
 * little as latencies do. Mask bit RF_RAW_BIT says a record is not so
 * transformed (one of its times is base - 1, which the +1 would make 0).
 */
#define RF_RAW_BIT 63
#define WORDS(x) ((int)(sizeof(x) / 8))
#define W_OF(type, field) ((int)(offsetof(type, field) / 8))

struct rf_rel {
	int base; /* word of the base time */
	int nr;
	int w[8]; /* words made relative to it */
};

static const struct rf_rel rel_sys = {
	W_OF(struct it_syscall_rec, enter_ns),
	2,
	{ W_OF(struct it_syscall_rec, exit_ns), W_OF(struct it_syscall_rec, first_q_ns) },
};
static const struct rf_rel rel_blk = {
	W_OF(struct it_block_rec, q_ns),
	7,
	{ W_OF(struct it_block_rec, g_ns), W_OF(struct it_block_rec, i_ns),
	  W_OF(struct it_block_rec, d_ns), W_OF(struct it_block_rec, c_ns),
	  W_OF(struct it_block_rec, drv_submit_ns), W_OF(struct it_block_rec, drv_kick_ns),
	  W_OF(struct it_block_rec, drv_done_ns) },
};

/* Make w's times relative; 0 when one cannot be (the record then goes as it is). */
static int rel_apply(uint64_t *w, const struct rf_rel *r)
{
	uint64_t b = w[r->base];

	for (int i = 0; i < r->nr; i++)
		if (w[r->w[i]] && w[r->w[i]] - b + 1 == 0)
			return 0;
	for (int i = 0; i < r->nr; i++)
		if (w[r->w[i]])
			w[r->w[i]] = w[r->w[i]] - b + 1;
	return 1;
}

static void rel_undo(uint64_t *w, const struct rf_rel *r)
{
	for (int i = 0; i < r->nr; i++)
		if (w[r->w[i]])
			w[r->w[i]] = w[r->w[i]] + w[r->base] - 1;
}

/*
 * n words of rec: mask of those that differ from pred (NULL: prev), XOR
 * *last_mask, then their deltas; prev becomes the record (as coded).
 */
static uint8_t *put_words(uint8_t *p, uint64_t *prev, const uint64_t *pred, uint64_t *last_mask,
			  const void *rec, int n, const struct rf_rel *rel)
{
	uint64_t w[64], mask = 0;
	uint8_t deltas[64 * 10], *d = deltas;

	memcpy(w, rec, (size_t)n * 8);
	if (rel && !rel_apply(w, rel))
		mask |= 1ull << RF_RAW_BIT;
	if (!pred)
		pred = prev;
	/* one pass: the deltas go to a side buffer, the mask that precedes them is known after */
	for (int i = 0; i < n; i++) {
		uint64_t delta = w[i] - pred[i];

		if (delta) {
			mask |= 1ull << i;
			d = put_var(d, zigzag(delta));
		}
		prev[i] = w[i];
	}
	p = put_var(p, mask ^ *last_mask);
	*last_mask = mask;
	memcpy(p, deltas, (size_t)(d - deltas));
	return p + (d - deltas);
}

static int get_words(const uint8_t **pp, const uint8_t *end, uint64_t *prev, const uint64_t *pred,
		     uint64_t *last_mask, void *rec, int n, const struct rf_rel *rel)
{
	uint64_t mask, d, w[64];

	if (get_var(pp, end, &mask))
		return -EBADMSG;
	mask ^= *last_mask;
	if ((mask & ~(1ull << RF_RAW_BIT)) >> n || (!rel && (mask >> RF_RAW_BIT)))
		return -EBADMSG;
	*last_mask = mask;
	if (!pred)
		pred = prev;
	for (int i = 0; i < n; i++) {
		w[i] = pred[i];
		if (mask & (1ull << i)) {
			if (get_var(pp, end, &d))
				return -EBADMSG;
			w[i] += unzigzag(d);
		}
	}
	memcpy(prev, w, (size_t)n * 8);
	if (rel && !(mask >> RF_RAW_BIT))
		rel_undo(w, rel);
	memcpy(rec, w, (size_t)n * 8);
	return 0;
}

/*
 * What the first block request of a syscall most likely holds: the
 * syscall's task, seq, inode, device and size, its offset as the sector and
 * its first queue time as q (the rest as the previous block request).
 */
static void blk_predict(uint64_t *pred, const uint64_t *prev_blk, const struct it_syscall_rec *s)
{
	struct it_block_rec b;

	memcpy(&b, prev_blk, sizeof(b));
	memcpy(&b.task, &s->task, sizeof(b.task));
	b.seq = s->seq;
	b.sector = s->offset / 512;
	b.q_ns = s->first_q_ns;
	b.ino = s->ino;
	b.dev = s->dev;
	b.bytes = (uint32_t)s->bytes;
	memcpy(pred, &b, sizeof(b));
	/* the times stay as the previous block's (relative to its q) */
	for (int i = 0; i < rel_blk.nr; i++)
		pred[rel_blk.w[i]] = prev_blk[rel_blk.w[i]];
}

static void aio_to_words(const struct corr_req *r, struct rf_aio *a)
{
	memset(a, 0, sizeof(*a));
	a->task = r->aio.task;
	a->seq = r->aio.seq;
	a->iocb = r->aio.iocb;
	a->submit_ns = r->aio.submit_ns;
	a->reap_ns = r->aio.reap_ns;
	a->res = r->aio.res;
	a->reaped = (uint64_t)r->aio.reaped;
}

/*
 * Request: tag kind id-delta(zigzag) nr_blocks nr_apart flags [parent id tid seq]
 * then the main record (syscall, io_uring or aio; a block request has none:
 * its first block is it) and the block records.
 */
uint8_t *rf_put_req(struct rf_state *s, uint8_t *p, const struct corr_req *r)
{
	int nb = r->nr_blocks < CORR_MAX_BLOCKS ? r->nr_blocks : CORR_MAX_BLOCKS;
	struct rf_aio a;

	*p++ = RF_E_REQ;
	p = put_var(p, (uint64_t)r->kind);
	p = put_var(p, zigzag(r->id - s->id));
	s->id = r->id;
	p = put_var(p, (uint64_t)nb);
	p = put_var(p, (uint64_t)(r->nr_blocks_apart > 0 ? r->nr_blocks_apart : 0));
	p = put_var(p, r->parent.valid ? 1 : 0);
	if (r->parent.valid) {
		p = put_var(p, r->parent.id);
		p = put_var(p, r->parent.tid);
		p = put_var(p, r->parent.seq);
	}
	if (r->kind == CORR_SYSCALL) {
		p = put_words(p, s->sys, NULL, &s->mask[0], r->sys, WORDS(*r->sys), &rel_sys);
	} else if (r->kind == CORR_URING) {
		p = put_words(p, s->uring, NULL, &s->mask[2], r->uring, WORDS(*r->uring), NULL);
	} else if (r->kind == CORR_AIO) {
		aio_to_words(r, &a);
		p = put_words(p, s->aio, NULL, &s->mask[3], &a, WORDS(a), NULL);
	}
	for (int i = 0; i < nb; i++) {
		uint64_t pred[WORDS(struct it_block_rec)];
		int predict = !i && r->kind == CORR_SYSCALL;

		if (predict)
			blk_predict(pred, s->blk, r->sys);
		p = put_words(p, s->blk, predict ? pred : NULL, &s->mask[1], r->blocks[i],
			      WORDS(*r->blocks[i]), &rel_blk);
	}
	return p;
}

static uint8_t *put_strn(uint8_t *p, const char *str, size_t max)
{
	size_t n = str ? strnlen(str, max - 1) : 0;

	p = put_var(p, n);
	if (n)
		memcpy(p, str, n);
	return p + n;
}

uint8_t *rf_put_dev(uint8_t *p, uint32_t dev, const char *name, const char *serial)
{
	*p++ = RF_E_DEV;
	p = put_var(p, dev);
	p = put_strn(p, name, RF_NAME_LEN);
	return put_strn(p, serial, RF_NAME_LEN);
}

uint8_t *rf_put_cgroup(uint8_t *p, uint64_t id, const char *path)
{
	*p++ = RF_E_CGROUP;
	p = put_var(p, id);
	return put_strn(p, path, RF_CG_LEN);
}

/*
 * Blame: tag len, then id - the block's last request id (zigzag), requests,
 * wait, own, unattributed, self, others, nr | named << 2, per culprit its
 * cgroup id and ns, other.
 */
uint8_t *rf_put_blame(const struct rf_state *s, uint8_t *p, const struct blame_line *b)
{
	uint8_t body[RF_BLAME_BODY_MAX], *q = body;
	int nr = b->nr < BLAME_LINE_TOP ? b->nr : BLAME_LINE_TOP;

	q = put_var(q, zigzag(b->id - s->id));
	q = put_var(q, b->requests);
	q = put_var(q, b->wait_ns);
	q = put_var(q, b->own_ns);
	q = put_var(q, b->unattr_ns);
	q = put_var(q, b->self_ns);
	q = put_var(q, b->others_ns);
	q = put_var(q, (uint64_t)nr | (uint64_t)(b->named & ((1u << nr) - 1)) << 2);
	for (int i = 0; i < nr; i++) {
		q = put_var(q, b->cgroup_id[i]);
		q = put_var(q, b->ns[i]);
	}
	q = put_var(q, b->other_ns);
	*p++ = RF_E_BLAME;
	p = put_var(p, (uint64_t)(q - body));
	memcpy(p, body, (size_t)(q - body));
	return p + (q - body);
}

static int get_blame(const struct rf_state *s, const uint8_t **pp, const uint8_t *end,
		     struct blame_line *b)
{
	uint64_t d, f;

	memset(b, 0, sizeof(*b));
	if (get_var(pp, end, &d) || get_var(pp, end, &b->requests) ||
	    get_var(pp, end, &b->wait_ns) || get_var(pp, end, &b->own_ns) ||
	    get_var(pp, end, &b->unattr_ns) || get_var(pp, end, &b->self_ns) ||
	    get_var(pp, end, &b->others_ns) || get_var_max(pp, end, 0x1f, &f) ||
	    (f & 3) > BLAME_LINE_TOP || (f >> 2) >> (f & 3))
		return -EBADMSG;
	b->id = s->id + unzigzag(d);
	b->nr = (int)(f & 3);
	b->named = (unsigned int)(f >> 2);
	for (int i = 0; i < b->nr; i++)
		if (get_var(pp, end, &b->cgroup_id[i]) || get_var(pp, end, &b->ns[i]))
			return -EBADMSG;
	return get_var(pp, end, &b->other_ns) || *pp != end ? -EBADMSG : 0;
}

static int get_strn(const uint8_t **pp, const uint8_t *end, char *dst, size_t max)
{
	uint64_t n;

	if (get_var_max(pp, end, max - 1, &n) || (uint64_t)(end - *pp) < n)
		return -EBADMSG;
	memcpy(dst, *pp, n);
	dst[n] = '\0';
	*pp += n;
	return 0;
}

/* File names: tag len, then dev, ino, bdev, file, cfile (0: none). */
uint8_t *rf_put_fname(uint8_t *p, uint64_t ino, uint32_t dev, uint32_t bdev, const char *file,
		      const char *cfile)
{
	uint8_t *len, *body;

	*p++ = RF_E_FNAME;
	len = p;
	body = p + 3; /* the length in three bytes (a varint of a redundant width): < 2^21 */
	p = put_var(body, dev);
	p = put_var(p, ino);
	p = put_var(p, bdev);
	p = put_strn(p, file, RF_FILE_LEN);
	p = put_strn(p, cfile, RF_FILE_LEN);
	len[0] = (uint8_t)((p - body) | 0x80);
	len[1] = (uint8_t)(((p - body) >> 7) | 0x80);
	len[2] = (uint8_t)((p - body) >> 14);
	return p;
}

static int get_fname(const uint8_t **pp, const uint8_t *end, struct rf_fname *f)
{
	uint64_t dev, bdev;

	if (get_var_max(pp, end, UINT32_MAX, &dev) || get_var(pp, end, &f->ino) ||
	    get_var_max(pp, end, 1, &bdev) || get_strn(pp, end, f->file, RF_FILE_LEN) ||
	    get_strn(pp, end, f->cfile, RF_FILE_LEN) || !f->file[0] || *pp != end)
		return -EBADMSG;
	f->dev = (uint32_t)dev;
	f->bdev = (uint32_t)bdev;
	return 0;
}

/* Container names: tag len, then kind, id, name, namespace. */
uint8_t *rf_put_ctname(uint8_t *p, int kind, const char *id, const char *name, const char *ns)
{
	uint8_t body[RF_CTNAME_MAX], *q = body;

	q = put_var(q, (uint64_t)kind);
	q = put_strn(q, id, RF_CT_LEN);
	q = put_strn(q, name, RF_CT_LEN);
	q = put_strn(q, ns, RF_CT_LEN);
	*p++ = RF_E_CTNAME;
	p = put_var(p, (uint64_t)(q - body));
	memcpy(p, body, (size_t)(q - body));
	return p + (q - body);
}

static int get_ctname(const uint8_t **pp, const uint8_t *end, struct rf_ctname *c)
{
	uint64_t kind;

	if (get_var_max(pp, end, RF_CT_POD, &kind) || get_strn(pp, end, c->id, RF_CT_LEN) ||
	    get_strn(pp, end, c->name, RF_CT_LEN) || get_strn(pp, end, c->ns, RF_CT_LEN) ||
	    !c->id[0] || !c->name[0] || *pp != end)
		return -EBADMSG;
	c->kind = (int)kind;
	return 0;
}

/* A sized entry (its tag read): the kinds this build knows decoded, any other skipped. */
static int get_sized(const struct rf_state *s, const uint8_t **pp, const uint8_t *end, int tag,
		     struct blame_line *bl, struct rf_more *more)
{
	const uint8_t *body;
	uint64_t n;

	if (get_var(pp, end, &n) || (uint64_t)(end - *pp) < n)
		return -EBADMSG;
	body = *pp;
	*pp += n;
	if (tag == RF_E_BLAME)
		return get_blame(s, &body, *pp, bl);
	if (tag == RF_E_FNAME && more)
		return get_fname(&body, *pp, &more->fname);
	if (tag == RF_E_CTNAME && more)
		return get_ctname(&body, *pp, &more->ctname);
	return 0;
}

static int get_dev(const uint8_t **pp, const uint8_t *end, struct rf_dev *d)
{
	uint64_t v;

	if (get_var_max(pp, end, UINT32_MAX, &v))
		return -EBADMSG;
	d->dev = (uint32_t)v;
	return get_strn(pp, end, d->name, RF_NAME_LEN) ||
			       get_strn(pp, end, d->serial, RF_NAME_LEN) ?
		       -EBADMSG :
		       0;
}

static int get_cgroup(const uint8_t **pp, const uint8_t *end, struct rf_cgroup *cg)
{
	return get_var(pp, end, &cg->id) || !cg->id || get_strn(pp, end, cg->path, RF_CG_LEN) ?
		       -EBADMSG :
		       0;
}

/* The fixed part of a request, up to its records. */
static int get_req_head(struct rf_state *s, const uint8_t **pp, const uint8_t *end,
			struct rf_req *q)
{
	uint64_t kind, d, nb, nd, flags, v;

	if (get_var_max(pp, end, CORR_BLOCK, &kind) || kind < CORR_SYSCALL ||
	    get_var(pp, end, &d) || get_var_max(pp, end, CORR_MAX_BLOCKS, &nb) ||
	    get_var_max(pp, end, INT32_MAX, &nd) || get_var_max(pp, end, 1, &flags))
		return -EBADMSG;
	if (kind == CORR_BLOCK && !nb)
		return -EBADMSG;
	q->kind = (enum corr_kind)kind;
	s->id += unzigzag(d);
	q->id = s->id;
	q->nr_blocks = (int)nb;
	q->nr_blocks_apart = (int)nd;
	q->parent_valid = (int)flags;
	q->parent_id = q->parent_seq = 0;
	q->parent_tid = 0;
	if (!flags)
		return 0;
	if (get_var(pp, end, &q->parent_id) || get_var_max(pp, end, UINT32_MAX, &v) ||
	    get_var(pp, end, &q->parent_seq))
		return -EBADMSG;
	q->parent_tid = (uint32_t)v;
	return 0;
}

static int get_req(struct rf_state *s, const uint8_t **pp, const uint8_t *end, struct rf_req *q)
{
	int err;

	if (get_req_head(s, pp, end, q))
		return -EBADMSG;
	if (q->kind == CORR_SYSCALL)
		err = get_words(pp, end, s->sys, NULL, &s->mask[0], &q->sys, WORDS(q->sys),
				&rel_sys);
	else if (q->kind == CORR_URING)
		err = get_words(pp, end, s->uring, NULL, &s->mask[2], &q->uring, WORDS(q->uring),
				NULL);
	else if (q->kind == CORR_AIO)
		err = get_words(pp, end, s->aio, NULL, &s->mask[3], &q->aio, WORDS(q->aio), NULL);
	else
		err = 0;
	for (int i = 0; !err && i < q->nr_blocks; i++) {
		uint64_t pred[WORDS(struct it_block_rec)];
		int predict = !i && q->kind == CORR_SYSCALL;

		if (predict)
			blk_predict(pred, s->blk, &q->sys);
		err = get_words(pp, end, s->blk, predict ? pred : NULL, &s->mask[1], &q->blocks[i],
				WORDS(q->blocks[i]), &rel_blk);
	}
	return err;
}

int rf_get_entry(struct rf_state *s, const uint8_t **pp, const uint8_t *end, int *tag,
		 struct rf_req *req, struct rf_dev *dev, struct rf_cgroup *cg,
		 struct blame_line *bl, struct rf_more *more)
{
	const uint8_t *p = *pp;
	int err;

	if (p >= end)
		return -EBADMSG;
	*tag = *p++;
	if (*tag == RF_E_REQ)
		err = get_req(s, &p, end, req);
	else if (*tag == RF_E_DEV)
		err = get_dev(&p, end, dev);
	else if (*tag == RF_E_CGROUP)
		err = get_cgroup(&p, end, cg);
	else if (*tag >= RF_E_SIZED)
		err = get_sized(s, &p, end, *tag, bl, more);
	else
		err = -EBADMSG;
	if (!err)
		*pp = p;
	return err;
}

void rf_req_view(const struct rf_req *q, struct corr_req *r)
{
	memset(r, 0, sizeof(*r));
	r->kind = q->kind;
	r->id = q->id;
	r->sys = &q->sys;
	r->uring = &q->uring;
	r->aio.task = q->aio.task;
	r->aio.seq = q->aio.seq;
	r->aio.iocb = q->aio.iocb;
	r->aio.submit_ns = q->aio.submit_ns;
	r->aio.reap_ns = q->aio.reap_ns;
	r->aio.res = q->aio.res;
	r->aio.reaped = q->aio.reaped != 0;
	for (int i = 0; i < q->nr_blocks; i++)
		r->blocks[i] = &q->blocks[i];
	r->nr_blocks = q->nr_blocks;
	r->nr_blocks_apart = q->nr_blocks_apart;
	r->parent.valid = q->parent_valid;
	r->parent.id = q->parent_id;
	r->parent.tid = q->parent_tid;
	r->parent.seq = q->parent_seq;
}

void rf_req_copy(struct rf_req *q, const struct corr_req *r)
{
	memset(q, 0, sizeof(*q));
	q->kind = r->kind;
	q->id = r->id;
	if (r->kind == CORR_SYSCALL)
		q->sys = *r->sys;
	else if (r->kind == CORR_URING)
		q->uring = *r->uring;
	else if (r->kind == CORR_AIO)
		aio_to_words(r, &q->aio);
	q->nr_blocks = r->nr_blocks < CORR_MAX_BLOCKS ? r->nr_blocks : CORR_MAX_BLOCKS;
	for (int i = 0; i < q->nr_blocks; i++)
		q->blocks[i] = *r->blocks[i];
	q->nr_blocks_apart = r->nr_blocks_apart;
	q->parent_valid = r->parent.valid;
	q->parent_id = r->parent.id;
	q->parent_tid = r->parent.tid;
	q->parent_seq = r->parent.seq;
}

void rf_req_span(const struct corr_req *r, uint64_t *start_ns, uint64_t *end_ns)
{
	switch (r->kind) {
	case CORR_SYSCALL:
		*start_ns = r->sys->enter_ns;
		*end_ns = r->sys->exit_ns;
		break;
	case CORR_URING:
		*start_ns = r->uring->submit_ns;
		*end_ns = r->uring->complete_ns;
		break;
	case CORR_AIO:
		*start_ns = r->aio.submit_ns;
		*end_ns = r->aio.reaped ? r->aio.reap_ns : 0;
		break;
	default:
		*start_ns = r->nr_blocks ? r->blocks[0]->q_ns : 0;
		*end_ns = r->nr_blocks ? r->blocks[0]->c_ns : 0;
		break;
	}
}
