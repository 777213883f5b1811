// SPDX-License-Identifier: GPL-2.0
/*
 * http: ClickHouse's HTTP interface through libcurl (see http.h), which
 * curldl.c loads at the first sk_http_new(): every call goes through sink_curl.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sink/http.h"

#ifdef IT_NO_CURL

struct sk_http *sk_http_new(const struct sk_http_cfg *cfg)
{
	(void)cfg;
	errno = ENOTSUP;
	return NULL;
}

void sk_http_free(struct sk_http *h)
{
	(void)h;
}

int sk_http_query(struct sk_http *h, const char *sql, const void *body, size_t len, int enc,
		  struct nat_buf *resp, struct sk_http_res *res)
{
	memset(res, 0, sizeof(*res));
	res->err = SK_HE_UNSUPPORTED;
	snprintf(res->msg, sizeof(res->msg), "this build has no HTTP client (static: no libcurl)");
	return -ENOTSUP;
}

int sk_http_stream(struct sk_http *h, const char *sql,
		   int (*fn)(void *ctx, struct nat_buf *b, int last), void *ctx,
		   struct sk_http_res *res)
{
	return sk_http_query(h, sql, NULL, 0, 0, NULL, res);
}

const char *sk_http_scheme(const struct sk_http *h)
{
	return "";
}

#else

#include "sink/curldl.h"

enum { SCHEME_UNKNOWN, SCHEME_HTTPS, SCHEME_HTTP };

struct sk_http {
	struct sk_http_cfg cfg;
	char password[256];
	CURL *c;
	int scheme;
};

struct sk_http *sk_http_new(const struct sk_http_cfg *cfg)
{
	struct sk_http *h;

	if (sink_curl_load(NULL, 0)) {
		errno = ELIBACC;
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->cfg = *cfg;
	if (cfg->password)
		snprintf(h->password, sizeof(h->password), "%s", cfg->password);
	h->cfg.password = NULL; /* ours: h->password */
	h->scheme = cfg->url.tls ? SCHEME_HTTPS : SCHEME_UNKNOWN;
	h->c = sink_curl.easy_init();
	if (!h->c) {
		free(h);
		errno = ENOMEM;
		return NULL;
	}
	return h;
}

void sk_http_free(struct sk_http *h)
{
	if (!h)
		return;
	sink_curl.easy_cleanup(h->c);
	memset(h->password, 0, sizeof(h->password));
	free(h);
}

const char *sk_http_scheme(const struct sk_http *h)
{
	return h->scheme == SCHEME_HTTPS ? "https" : h->scheme == SCHEME_HTTP ? "http" : "";
}

/* Where an answer's body goes: a buffer, handed to fn after each piece of a 200's body. */
struct body {
	struct nat_buf *b;
	int (*fn)(void *ctx, struct nat_buf *b, int last);
	void *ctx;
	CURL *c;
	int failed; /* fn said stop */
};

static size_t on_body(char *p, size_t size, size_t n, void *ctx)
{
	struct body *w = ctx;
	long status = 0;

	if (!w->b)
		return size * n;
	if (nat_buf_room(w->b, size * n))
		return 0; /* curl: a write error */
	memcpy(w->b->p + w->b->len, p, size * n);
	w->b->len += size * n;
	if (w->fn && !sink_curl.easy_getinfo(w->c, CURLINFO_RESPONSE_CODE, &status) &&
	    status == 200 && w->fn(w->ctx, w->b, 0)) {
		w->failed = 1;
		return 0;
	}
	return size * n;
}

static int on_progress(void *ctx, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	const struct sk_http *h = ctx;

	return h->cfg.stop && *h->cfg.stop;
}

/*
 * The URL of sql under scheme; NULL on ENOMEM. A body in ClickHouse's own
 * compressed format says so (decompress=1), with its checksum left unchecked
 * (compress.c writes none).
 */
static char *make_url(struct sk_http *h, int scheme, const char *sql, int enc)
{
	char *q = sql ? sink_curl.easy_escape(h->c, sql, 0) : NULL;
	const struct sk_url *u = &h->cfg.url;
	int v6 = strchr(u->host, ':') != NULL;
	size_t n = strlen(u->host) + (q ? strlen(q) : 0) + 160;
	char *url = malloc(n);

	if (url)
		snprintf(url, n, "%s://%s%s%s:%u/%s%s%s", scheme == SCHEME_HTTP ? "http" : "https",
			 v6 ? "[" : "", u->host, v6 ? "]" : "", u->port, q ? "?query=" : "ping",
			 q ? q : "",
			 enc == SK_ENC_ZSTD || enc == SK_ENC_FAST ?
				 "&decompress=1&"
				 "http_native_compression_disable_checksumming_on_"
				 "decompress=1" :
				 "");
	sink_curl.free(q);
	return url;
}

static int classify(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
		return SK_HE_CONNECT;
	case CURLE_OPERATION_TIMEDOUT:
		return SK_HE_TIMEOUT;
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CERTPROBLEM:
		return SK_HE_TLS;
	case CURLE_ABORTED_BY_CALLBACK:
		return SK_HE_STOPPED;
	case CURLE_OUT_OF_MEMORY:
		return SK_HE_NOMEM;
	default:
		return SK_HE_IO;
	}
}

/* The server's "Code: N, e.displayText() = ..." (the body from mark) into res: its first line. */
static void server_msg(const struct nat_buf *b, size_t mark, struct sk_http_res *res)
{
	const char *s = b->len > mark ? (const char *)b->p + mark : "";
	size_t n = b->len > mark ? b->len - mark : 0, line = 0;
	const char *code = n ? memmem(s, n, "Code: ", 6) : NULL;

	while (line < n && s[line] != '\n')
		line++;
	res->code = code ? atoi(code + 6) : 0;
	snprintf(res->msg, sizeof(res->msg), "HTTP %ld: %.*s", res->status,
		 (int)(line < 200 ? line : 200), s);
}

static void set_common(struct sk_http *h, const char *url, struct body *resp, char *errbuf)
{
	CURL *c = h->c;

	sink_curl.easy_reset(c);
	sink_curl.easy_setopt(c, CURLOPT_URL, url);
	sink_curl.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	sink_curl.easy_setopt(c, CURLOPT_TIMEOUT_MS, h->cfg.timeout_ms);
	sink_curl.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
			      h->cfg.timeout_ms < 5000 ? h->cfg.timeout_ms : 5000L);
	sink_curl.easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	sink_curl.easy_setopt(c, CURLOPT_WRITEDATA, resp);
	sink_curl.easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	sink_curl.easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	sink_curl.easy_setopt(c, CURLOPT_XFERINFODATA, h);
	sink_curl.easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	sink_curl.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	sink_curl.easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
	if (h->cfg.ca_file)
		sink_curl.easy_setopt(c, CURLOPT_CAINFO, h->cfg.ca_file);
	if (h->cfg.url.user[0] || h->password[0]) {
		sink_curl.easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		sink_curl.easy_setopt(c, CURLOPT_USERNAME,
				      h->cfg.url.user[0] ? h->cfg.url.user : "default");
		sink_curl.easy_setopt(c, CURLOPT_PASSWORD, h->password);
	}
}

/* One request under scheme; the curl result, the status in res. */
static CURLcode perform(struct sk_http *h, int scheme, const char *sql, const void *body,
			size_t len, int enc, struct body *resp, struct sk_http_res *res)
{
	char errbuf[CURL_ERROR_SIZE] = "", *url;
	struct curl_slist *hdr = NULL;
	CURLcode rc;

	/* a query of no data: in the body (a report's WHERE may be longer than a URL may be) */
	if (sql && !body && !len) {
		body = sql;
		len = strlen(sql);
		sql = "";
	}
	url = make_url(h, scheme, sql, enc);
	if (!url)
		return CURLE_OUT_OF_MEMORY;
	resp->c = h->c;
	set_common(h, url, resp, errbuf);
	if (sql) {
		hdr = sink_curl.slist_append(hdr, "Content-Type: application/octet-stream");
		if (enc == SK_ENC_GZIP)
			hdr = sink_curl.slist_append(hdr, "Content-Encoding: gzip");
		sink_curl.easy_setopt(h->c, CURLOPT_HTTPHEADER, hdr);
		sink_curl.easy_setopt(h->c, CURLOPT_POST, 1L);
		sink_curl.easy_setopt(h->c, CURLOPT_POSTFIELDS, body ? body : "");
		sink_curl.easy_setopt(h->c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	}
	rc = sink_curl.easy_perform(h->c);
	res->status = 0;
	if (rc == CURLE_OK)
		sink_curl.easy_getinfo(h->c, CURLINFO_RESPONSE_CODE, &res->status);
	else
		snprintf(res->msg, sizeof(res->msg), "%s",
			 errbuf[0] ? errbuf : sink_curl.easy_strerror(rc));
	sink_curl.slist_free_all(hdr);
	free(url);
	return rc;
}

/*
 * clickhouse:// before the first answer: does the port answer plain HTTP (GET
 * /ping, any status)? Then it offers no TLS, and plain HTTP it is for this run; a TLS port
 * fails the plain request at once (a plain port may never answer a TLS hello:
 * it waits for the end of a request line). CURLE_COULDNT_CONNECT and the like:
 * nothing answers, the scheme stays unknown. Returns the probe's curl result.
 */
static CURLcode probe(struct sk_http *h, struct sk_http_res *res)
{
	struct nat_buf b = { 0 };
	struct body w = { .b = &b };
	CURLcode rc = perform(h, SCHEME_HTTP, NULL, NULL, 0, 0, &w, res);

	/* any HTTP answer, whatever its status: the port speaks plain HTTP */
	if (rc == CURLE_OK)
		h->scheme = SCHEME_HTTP;
	else if (rc == CURLE_GOT_NOTHING || rc == CURLE_RECV_ERROR ||
		 rc == CURLE_WEIRD_SERVER_REPLY || rc == CURLE_SEND_ERROR)
		h->scheme = SCHEME_HTTPS;
	nat_buf_free(&b);
	return rc;
}

static int query(struct sk_http *h, const char *sql, const void *body, size_t len, int enc,
		 struct body *w, struct sk_http_res *res)
{
	size_t mark = w->b->len;
	CURLcode rc = CURLE_OK;

	memset(res, 0, sizeof(*res));
	if (h->scheme == SCHEME_UNKNOWN)
		rc = probe(h, res);
	if (h->scheme != SCHEME_UNKNOWN)
		rc = perform(h, h->scheme, sql, body, len, enc, w, res);
	if (rc == CURLE_WRITE_ERROR && w->failed) {
		snprintf(res->msg, sizeof(res->msg), "the answer could not be read");
		res->err = SK_HE_IO;
		return -EBADMSG;
	}
	if (rc != CURLE_OK) {
		res->err = classify(rc);
		return -EIO;
	}
	if (res->status == 200)
		return 0;
	server_msg(w->b, mark, res);
	return -EIO;
}

int sk_http_query(struct sk_http *h, const char *sql, const void *body, size_t len, int enc,
		  struct nat_buf *resp, struct sk_http_res *res)
{
	struct nat_buf tmp = { 0 };
	struct body w = { .b = resp ? resp : &tmp };
	int err = query(h, sql, body, len, enc, &w, res);

	nat_buf_free(&tmp);
	return err;
}

int sk_http_stream(struct sk_http *h, const char *sql,
		   int (*fn)(void *ctx, struct nat_buf *b, int last), void *ctx,
		   struct sk_http_res *res)
{
	struct nat_buf b = { 0 };
	struct body w = { .b = &b, .fn = fn, .ctx = ctx };
	int err = query(h, sql, NULL, 0, 0, &w, res);

	if (!err && fn(ctx, &b, 1)) {
		snprintf(res->msg, sizeof(res->msg), "the answer could not be read");
		err = -EBADMSG;
	}
	nat_buf_free(&b);
	return err;
}

#endif /* IT_NO_CURL */
