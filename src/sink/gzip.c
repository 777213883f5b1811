// SPDX-License-Identifier: GPL-2.0
/*
 * gzip: a batch's body, gzip'd for an HTTP Content-Encoding (see http.h), and
 * back (a batch spilled at exit, tests). zlib.
 */
#include <errno.h>
#include <string.h>
#include <zlib.h>

#include "sink/http.h"

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
