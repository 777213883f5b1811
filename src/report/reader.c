// SPDX-License-Identifier: GPL-2.0
/*
 * reader: decode --record segments (see reader.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "records/cgroup.h"
#include "records/container.h"
#include "records/fname.h"
#include "report/reader.h"

void rr_init(struct rr_reader *rr,
	     void (*fn)(void *ctx, const struct rr_reader *rr, const struct rf_req *q), void *ctx)
{
	memset(rr, 0, sizeof(*rr));
	rr->fn = fn;
	rr->ctx = ctx;
}

void rr_free(struct rr_reader *rr)
{
	cg_cache_free(rr->cg);
	rr->cg = NULL;
	fn_free(rr->fnames);
	rr->fnames = NULL;
	free(rr->more);
	rr->more = NULL;
	free(rr->raw);
	rr->raw = NULL;
	rr->raw_cap = 0;
}

static const struct rf_dev *dev_find(const struct rr_reader *rr, uint32_t dev)
{
	for (int i = 0; i < rr->nr_devs; i++)
		if (rr->devs[i].dev == dev)
			return &rr->devs[i];
	return NULL;
}

const char *rr_dev_name(const struct rr_reader *rr, uint32_t dev)
{
	const struct rf_dev *d = dev_find(rr, dev);

	return d ? d->name : NULL;
}

const char *rr_dev_serial(const struct rr_reader *rr, uint32_t dev)
{
	const struct rf_dev *d = dev_find(rr, dev);

	return d && d->serial[0] ? d->serial : NULL;
}

const char *rr_cgroup_path(const struct rr_reader *rr, uint64_t id)
{
	return cg_path(rr->cg, id); /* no mount: only what the recording said */
}

void rr_note_cgroup(struct rr_reader *rr, uint64_t id, const char *path)
{
	if (!rr->cg)
		rr->cg = cg_cache_new(NULL);
	if (rr->cg && id)
		cg_cache_put(rr->cg, id, path);
}

void rr_note_fname(struct rr_reader *rr, uint64_t ino, uint32_t dev, uint32_t bdev,
		   const char *file, const char *cfile)
{
	struct fn_key k = { .ino = ino, .dev = dev, .bdev = bdev };

	if (!rr->fnames)
		rr->fnames = fn_new(RR_MAX_FNAMES);
	if (rr->fnames && ino && file[0])
		fn_put(rr->fnames, &k, file, cfile);
}

/* A name entry of the recording: a file's, or the node's name of a container or pod. */
static void note_more(struct rr_reader *rr, int tag)
{
	const struct rf_ctname *c = &rr->more->ctname;
	const struct rf_fname *f = &rr->more->fname;

	if (tag == RF_E_FNAME) {
		rr->st.fnames++;
		rr_note_fname(rr, f->ino, f->dev, f->bdev, f->file, f->cfile);
		return;
	}
	rr->st.ctnames++;
	if (rr->names)
		ct_names_add(rr->names, c->kind == RF_CT_POD, c->id, c->name, c->ns);
}

void rr_note_dev(struct rr_reader *rr, const struct rf_dev *d)
{
	struct rf_dev *e = (struct rf_dev *)dev_find(rr, d->dev);

	if (!e && rr->nr_devs < RR_MAX_DEVS)
		e = &rr->devs[rr->nr_devs++];
	if (e)
		*e = *d;
}

/* Inflate a block's zlib stream into rr->raw: exactly rlen bytes, one whole stream. */
static int inflate_block(struct rr_reader *rr, const uint8_t *z, const struct rf_blk_hdr *h)
{
	z_stream zs = { 0 };
	int ret;

	if (h->rlen > rr->raw_cap) {
		uint8_t *n = realloc(rr->raw, h->rlen);

		if (!n)
			return -ENOMEM;
		rr->raw = n;
		rr->raw_cap = h->rlen;
	}
	if (inflateInit(&zs) != Z_OK)
		return -ENOMEM;
	zs.next_in = (Bytef *)z;
	zs.avail_in = h->clen;
	zs.next_out = rr->raw;
	zs.avail_out = h->rlen;
	ret = inflate(&zs, Z_FINISH);
	if (ret == Z_STREAM_END && (zs.total_out != h->rlen || zs.avail_in))
		ret = Z_DATA_ERROR;
	inflateEnd(&zs);
	return ret == Z_STREAM_END ? 0 : -EBADMSG;
}

/* The entries of an inflated payload; -EBADMSG at the first bad one. */
static int decode_payload(struct rr_reader *rr, size_t len, uint32_t nr_req)
{
	const uint8_t *p = rr->raw, *end = rr->raw + len;
	struct rf_state st;
	struct rf_dev dev;
	struct rf_cgroup cg;
	struct blame_line bl;
	uint32_t n = 0;
	int tag;

	memset(&st, 0, sizeof(st));
	while (p < end) {
		if (rf_get_entry(&st, &p, end, &tag, &rr->req, &dev, &cg, &bl, rr->more))
			return -EBADMSG;
		if (tag == RF_E_FNAME || tag == RF_E_CTNAME) {
			note_more(rr, tag);
			continue;
		}
		if (tag == RF_E_BLAME) {
			rr->st.blames++;
			if (rr->blame_fn)
				rr->blame_fn(rr->ctx, rr, &bl);
			continue;
		}
		if (tag >= RF_E_SIZED) {
			rr->st.unknown++;
			continue;
		}
		if (tag == RF_E_DEV) {
			rr_note_dev(rr, &dev);
			continue;
		}
		if (tag == RF_E_CGROUP) {
			rr_note_cgroup(rr, cg.id, cg.path);
			continue;
		}
		n++;
		rr->st.requests++;
		if (rr->fn)
			rr->fn(rr->ctx, rr, &rr->req);
	}
	return n == nr_req ? 0 : -EBADMSG;
}

/* Offset of the next valid block header at or after pos, or len. */
static size_t resync(const uint8_t *buf, size_t len, size_t pos)
{
	struct rf_blk_hdr h;

	for (; pos + RF_BLK_HDR_LEN <= len; pos++)
		if (buf[pos] == (RF_BLK_MAGIC & 0xff) && !rf_blk_hdr_get(buf + pos, len - pos, &h))
			return pos;
	return len;
}

int rr_segment(struct rr_reader *rr, const uint8_t *buf, size_t len)
{
	size_t pos = RF_SEG_HDR_LEN, next;
	struct rf_blk_hdr h;
	int err;

	err = rf_seg_hdr_get(buf, len, &rr->seg);
	if (err) {
		rr->st.bad_segments++;
		return err;
	}
	if (rr->seg.abi != IT_ABI_VERSION) {
		rr->st.bad_segments++;
		return -EPROTO;
	}
	rr->st.segments++;
	if (!rr->more && !(rr->more = malloc(sizeof(*rr->more))))
		return -ENOMEM;
	while (pos < len) {
		err = rf_blk_hdr_get(buf + pos, len - pos, &h);
		/* a length past the end: cut short by a crash while written, or bad */
		if (!err && h.clen > len - pos - RF_BLK_HDR_LEN)
			err = -EBADMSG;
		next = pos + RF_BLK_HDR_LEN + (err ? 0 : h.clen);
		if (!err && crc32(0, buf + pos + RF_BLK_HDR_LEN, h.clen) != h.crc)
			err = -EBADMSG;
		if (!err)
			err = inflate_block(rr, buf + pos + RF_BLK_HDR_LEN, &h);
		if (err == -ENOMEM)
			return err;
		if (!err)
			err = decode_payload(rr, h.rlen, h.nr_req);
		if (!err) {
			rr->st.blocks++;
			pos = next;
			continue;
		}
		/* skip to the next block header that checks; none: this was the tail */
		next = resync(buf, len, pos + 1);
		if (next == len)
			rr->st.torn++;
		else
			rr->st.bad_blocks++;
		rr->st.skipped_bytes += next - pos;
		pos = next;
	}
	return 0;
}
