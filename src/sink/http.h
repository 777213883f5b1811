/* SPDX-License-Identifier: GPL-2.0 */
/*
 * http: one connection to ClickHouse's HTTP interface (libcurl, kept alive),
 * for the sink's sender thread and `iotracer report --from`. HTTPS where the
 * server offers it (docs/fleet.md, "TLS"): a clickhouse:// address tries TLS
 * first and falls back to plain HTTP only when the port answers plain HTTP;
 * clickhouses:// never falls back. The password goes in a Basic
 * Authorization header, never in the URL. Built without libcurl (the static
 * build, -DIT_NO_CURL) every call fails with ENOTSUP.
 */
#ifndef IT_SINK_HTTP_H
#define IT_SINK_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "sink/native.h"

/* A clickhouse:// address (docs/fleet.md). */
struct sk_url {
	char user[64]; /* "" : none given (the server's "default") */
	char host[256];
	uint16_t port;
	char db[64], table[64];
	int tls; /* clickhouses://: TLS required */
};

/*
 * Parse "clickhouse[s]://[user@]HOST:PORT/DB.TABLE" (HOST: a name, an IPv4
 * address or [IPv6]; DB and TABLE: letters, digits, '_'). 0, or -EINVAL
 * with the reason in why.
 */
int sk_url_parse(const char *s, struct sk_url *u, char *why, size_t whylen);

/*
 * The password file: its first line (at most 255 bytes, no NUL), from a
 * regular file that only its owner may read or write (0600, 0400: the
 * rules of --link-key, lib/keyfile.h) owned by root or by us. 0, or -errno
 * with a one-line reason in why.
 */
int sk_password_load(const char *path, char *pw, size_t n, char *why, size_t whylen);

struct sk_http_cfg {
	struct sk_url url;
	const char *password; /* NULL: none (the server's user without password) */
	const char *ca_file; /* TLS: trust this CA (PEM); NULL: the system's */
	long timeout_ms; /* a whole request, at most */
	const volatile int *stop; /* set: the request in flight is abandoned */
};

/* What a request got: an HTTP status, or a transport error (status 0). */
struct sk_http_res {
	long status; /* 200: done; 0: no answer (see err) */
	int err; /* 0, or a transport failure: enum sk_http_err */
	int code; /* the server's exception code ("Code: 60"), 0 when none */
	char msg[256]; /* one line: the server's message or the transport's */
};

enum sk_http_err {
	SK_HE_NONE,
	SK_HE_CONNECT, /* refused, unreachable, name not resolved */
	SK_HE_TIMEOUT,
	SK_HE_TLS, /* handshake or certificate */
	SK_HE_IO, /* the connection broke */
	SK_HE_STOPPED, /* cfg.stop was set */
	SK_HE_NOMEM,
	SK_HE_UNSUPPORTED, /* a build without libcurl */
};

struct sk_http;

/* NULL with errno set (ENOTSUP: built without libcurl). */
struct sk_http *sk_http_new(const struct sk_http_cfg *cfg);
void sk_http_free(struct sk_http *h);

/* How a request's body is encoded (--sink-compress). */
enum sk_enc {
	SK_ENC_NONE,
	SK_ENC_GZIP, /* Content-Encoding: gzip */
	SK_ENC_ZSTD, /* ClickHouse's compressed format with zstd (decompress=1) */
	SK_ENC_FAST, /* the same, the columns that change from row to row stored (raw zstd blocks) */
};

/*
 * POST sql to the server with body (encoded as enc says); the answer's body
 * into resp (may be NULL). 0 when the server answered 200.
 */
int sk_http_query(struct sk_http *h, const char *sql, const void *body, size_t len, int enc,
		  struct nat_buf *resp, struct sk_http_res *res);

/*
 * The same for an answer read as it comes: fn(ctx, b, 0) after each piece of
 * a 200's body, b holding what fn left of it so far (it consumes from the
 * front), and fn(ctx, b, 1) at its end; fn's non-zero return stops the
 * transfer (-EBADMSG).
 */
int sk_http_stream(struct sk_http *h, const char *sql,
		   int (*fn)(void *ctx, struct nat_buf *b, int last), void *ctx,
		   struct sk_http_res *res);

/* "https", "http", or "" while no connection has told which. */
const char *sk_http_scheme(const struct sk_http *h);

/* gzip in to out (appended); level 1-9. 0 or -ENOMEM. */
int sk_gzip(const void *in, size_t n, int level, struct nat_buf *out);
/* gunzip in to out (appended). 0, -EBADMSG or -ENOMEM. */
int sk_gunzip(const void *in, size_t n, struct nat_buf *out);
/*
 * in encoded as enc (its fastest level) appended to out, and back. 0, -EBADMSG
 * or -ENOMEM. *ctx: the compressor's state, kept from call to call (NULL the
 * first time; sk_compress_free() it). SK_ENC_FAST stores in from plain on as
 * it is (the Native columns that change from row to row: nat_block_write()).
 */
int sk_compress(int enc, void **ctx, const void *in, size_t n, size_t plain, struct nat_buf *out);
void sk_compress_free(void *ctx);
int sk_decompress(int enc, const void *in, size_t n, struct nat_buf *out);

#endif /* IT_SINK_HTTP_H */
