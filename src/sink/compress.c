// SPDX-License-Identifier: GPL-2.0
/*
 * compress: a batch's body as the server takes it (see http.h): gzip'd for an
 * HTTP Content-Encoding (zlib), or in ClickHouse's own compressed format with
 * zstd (libzstd); and back (a batch spilled at exit, tests).
 */
#include <errno.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "sink/http.h"

/*
 * ClickHouse's compressed format (the body of a decompress=1 request): blocks
 * of a 16-byte checksum (CityHash128 of what follows; the sink asks the server
 * not to check it: http_native_compression_disable_checksumming_on_decompress),
 * a method byte (0x90: zstd), the block's size with this 9-byte header and the
 * data's size (UInt32 little-endian each), the zstd frame.
 */
#define CHZ_HDR 25
#define CHZ_ZSTD 0x90
#define CHZ_CHUNK (32u << 20) /* data a block holds, at most: a batch is one block */
#define CHZ_MAX (64u << 20) /* a block read back, at most */
#define SK_FAST_LEVEL (-5) /* zstd's level for --sink-compress fast's compressed columns */

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A block's header at h: the method, its size with this 9-byte header and the data's. */
static void chz_header(uint8_t *h, size_t z, size_t k)
{
	memset(h, 0, 16);
	h[16] = CHZ_ZSTD;
	put32(h + 17, (uint32_t)(z + 9));
	put32(h + 21, (uint32_t)k);
}

static int chz(ZSTD_CCtx *cc, const uint8_t *in, size_t n, int level, struct nat_buf *out)
{
	int err = 0;

	for (size_t at = 0; !err && at < n; at += CHZ_CHUNK) {
		size_t k = n - at < CHZ_CHUNK ? n - at : CHZ_CHUNK, bound = ZSTD_compressBound(k),
		       z;
		uint8_t *h;

		if (nat_buf_room(out, CHZ_HDR + bound)) {
			err = -ENOMEM;
			break;
		}
		h = out->p + out->len;
		z = ZSTD_compressCCtx(cc, h + CHZ_HDR, bound, in + at, k, level);
		if (ZSTD_isError(z)) {
			err = -ENOMEM;
			break;
		}
		chz_header(h, z, k);
		out->len += CHZ_HDR + z;
	}
	return err;
}

/*
 * in stored as it is in blocks of ClickHouse's format, each a zstd frame of
 * raw blocks (RFC 8878: the frame's magic number, a descriptor saying one
 * segment whose size follows in 4 bytes, then raw blocks of 128 KiB at most,
 * each after its 3-byte header: its size, type 0, and the last one's bit).
 */
#define ZSTD_RAW_MAX (128u << 10)
static int chz_stored(const uint8_t *in, size_t n, struct nat_buf *out)
{
	static const uint8_t frame[5] = { 0x28, 0xb5, 0x2f, 0xfd, 0xa0 };

	for (size_t at = 0; at < n; at += CHZ_CHUNK) {
		size_t k = n - at < CHZ_CHUNK ? n - at : CHZ_CHUNK, z = 9 + k;
		uint8_t *h, *p;

		z += 3 * ((k + ZSTD_RAW_MAX - 1) / ZSTD_RAW_MAX);
		if (nat_buf_room(out, CHZ_HDR + z))
			return -ENOMEM;
		h = out->p + out->len;
		chz_header(h, z, k);
		p = h + CHZ_HDR;
		memcpy(p, frame, sizeof(frame));
		put32(p + 5, (uint32_t)k);
		p += 9;
		for (size_t b = 0; b < k; b += ZSTD_RAW_MAX) {
			uint32_t bs = (uint32_t)(k - b < ZSTD_RAW_MAX ? k - b : ZSTD_RAW_MAX);
			uint32_t bh = bs << 3 | (b + bs == k); /* type 0: raw */

			p[0] = (uint8_t)bh;
			p[1] = (uint8_t)(bh >> 8);
			p[2] = (uint8_t)(bh >> 16);
			memcpy(p + 3, in + at + b, bs);
			p += 3 + bs;
		}
		out->len += CHZ_HDR + z;
	}
	return 0;
}

static int unchz(const uint8_t *in, size_t n, struct nat_buf *out)
{
	for (size_t at = 0; at < n;) {
		uint32_t zs, rs;
		size_t r;

		if (n - at < CHZ_HDR || in[at + 16] != CHZ_ZSTD)
			return -EBADMSG;
		zs = get32(in + at + 17);
		rs = get32(in + at + 21);
		if (zs < 9 || zs - 9 > n - at - CHZ_HDR || rs > CHZ_MAX)
			return -EBADMSG;
		if (nat_buf_room(out, rs))
			return -ENOMEM;
		r = ZSTD_decompress(out->p + out->len, rs, in + at + CHZ_HDR, zs - 9);
		if (ZSTD_isError(r) || r != rs)
			return -EBADMSG;
		out->len += r;
		at += CHZ_HDR + zs - 9;
	}
	return 0;
}

int sk_compress(int enc, void **ctx, const void *in, size_t n, size_t plain, struct nat_buf *out)
{
	if (enc == SK_ENC_ZSTD || enc == SK_ENC_FAST) {
		if (enc == SK_ENC_ZSTD || plain > n)
			plain = n;
		if (!*ctx)
			*ctx = ZSTD_createCCtx();
		if (!*ctx)
			return -ENOMEM;
		/* what is left to compress is the columns a value seldom changes in, long
		 * repeats: a faster level gives up little on them (level 1 splits a column
		 * of one value with zero bytes in it into a sequence a value) */
		return chz(*ctx, in, plain, enc == SK_ENC_FAST ? SK_FAST_LEVEL : 1, out) ?:
			       chz_stored((const uint8_t *)in + plain, n - plain, out);
	}
	if (enc == SK_ENC_GZIP)
		return sk_gzip(in, n, 1, out);
	return nat_buf_room(out, n) ?: (memcpy(out->p + out->len, in, n), out->len += n, 0);
}

void sk_compress_free(void *ctx)
{
	ZSTD_freeCCtx(ctx);
}

int sk_decompress(int enc, const void *in, size_t n, struct nat_buf *out)
{
	if (enc == SK_ENC_ZSTD || enc == SK_ENC_FAST)
		return unchz(in, n, out);
	if (enc == SK_ENC_GZIP)
		return sk_gunzip(in, n, out);
	return nat_buf_room(out, n) ?: (memcpy(out->p + out->len, in, n), out->len += n, 0);
}

int sk_gzip(const void *in, size_t n, int level, struct nat_buf *out)
{
	z_stream zs;
	size_t bound;
	int ret;

	memset(&zs, 0, sizeof(zs));
	/* windowBits 15 + 16: a gzip header and trailer; memLevel 8 is zlib's default */
	if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	bound = deflateBound(&zs, (uLong)n);
	if (nat_buf_room(out, bound)) {
		deflateEnd(&zs);
		return -ENOMEM;
	}
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)n;
	zs.next_out = out->p + out->len;
	zs.avail_out = (uInt)bound;
	ret = deflate(&zs, Z_FINISH);
	if (ret == Z_STREAM_END)
		out->len += zs.total_out;
	deflateEnd(&zs);
	return ret == Z_STREAM_END ? 0 : -ENOMEM;
}

int sk_gunzip(const void *in, size_t n, struct nat_buf *out)
{
	z_stream zs;
	int ret = Z_OK;

	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 15 + 16) != Z_OK)
		return -ENOMEM;
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)n;
	while (ret == Z_OK) {
		if (nat_buf_room(out, n + 4096)) {
			inflateEnd(&zs);
			return -ENOMEM;
		}
		zs.next_out = out->p + out->len;
		zs.avail_out = (uInt)(out->cap - out->len);
		ret = inflate(&zs, Z_NO_FLUSH);
		out->len = out->cap - zs.avail_out;
	}
	inflateEnd(&zs);
	return ret == Z_STREAM_END && !zs.avail_in ? 0 : -EBADMSG;
}
