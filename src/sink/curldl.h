/* SPDX-License-Identifier: GPL-2.0 */
/*
 * curldl: libcurl, loaded with dlopen("libcurl.so.4") the first time the sink
 * or `report --from` needs it, never by a daemon without --sink: its ~25
 * libraries (OpenSSL, GnuTLS, Kerberos, LDAP, nghttp2...) relocated in every
 * process cost ~1.8 MiB of RssAnon (docs/bench.md, "What the daemon's
 * libraries cost"). http.c calls libcurl through sink_curl only; curl's
 * headers give the types and constants at build time. The static build
 * (-DIT_NO_CURL) has no table: sink_curl_load() says it has no HTTP client.
 */
#ifndef IT_SINK_CURLDL_H
#define IT_SINK_CURLDL_H

#include <stddef.h>

#ifndef IT_NO_CURL
#include <curl/curl.h>

/* The libcurl functions http.c calls: curl_NAME as NAME, typed by curl.h. */
struct sink_curl_fns {
	__typeof__(curl_global_init) *global_init;
	__typeof__(curl_easy_init) *easy_init;
	__typeof__(curl_easy_cleanup) *easy_cleanup;
	__typeof__(curl_easy_reset) *easy_reset;
	__typeof__(curl_easy_setopt) *easy_setopt;
	__typeof__(curl_easy_perform) *easy_perform;
	__typeof__(curl_easy_getinfo) *easy_getinfo;
	__typeof__(curl_easy_strerror) *easy_strerror;
	__typeof__(curl_easy_escape) *easy_escape;
	__typeof__(curl_free) *free;
	__typeof__(curl_slist_append) *slist_append;
	__typeof__(curl_slist_free_all) *slist_free_all;
};

/* Set once by a sink_curl_load() that returned 0; read only after one did. */
extern struct sink_curl_fns sink_curl;
#endif

/*
 * Load libcurl, resolve sink_curl and run curl_global_init, once (any thread,
 * any number of calls). 0, or -ELIBACC with the one-line reason in why
 * ("cannot load libcurl.so.4: " and dlerror's text; why may be NULL), or
 * -ENOTSUP in the static build.
 */
int sink_curl_load(char *why, size_t n);

#endif /* IT_SINK_CURLDL_H */
