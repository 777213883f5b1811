// SPDX-License-Identifier: GPL-2.0
/*
 * curldl: libcurl through dlopen (see curldl.h).
 */
#include <errno.h>
#include <stdio.h>

#include "sink/curldl.h"

#ifdef IT_NO_CURL

int sink_curl_load(char *why, size_t n)
{
	if (why)
		snprintf(why, n,
			 "this build has no HTTP client: the static build leaves libcurl "
			 "out (docs/fleet.md)");
	return -ENOTSUP;
}

#else

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#define CURL_SONAME "libcurl.so.4"

struct sink_curl_fns sink_curl;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_err[256]; /* "": loaded */

#define OFF(f) offsetof(struct sink_curl_fns, f)
/* Each of sink_curl's functions: its symbol, its field. */
static const struct {
	const char *sym;
	size_t off;
} fns[] = {
	{ "curl_global_init", OFF(global_init) },   { "curl_easy_init", OFF(easy_init) },
	{ "curl_easy_cleanup", OFF(easy_cleanup) }, { "curl_easy_reset", OFF(easy_reset) },
	{ "curl_easy_setopt", OFF(easy_setopt) },   { "curl_easy_perform", OFF(easy_perform) },
	{ "curl_easy_getinfo", OFF(easy_getinfo) }, { "curl_easy_strerror", OFF(easy_strerror) },
	{ "curl_easy_escape", OFF(easy_escape) },   { "curl_free", OFF(free) },
	{ "curl_slist_append", OFF(slist_append) }, { "curl_slist_free_all", OFF(slist_free_all) },
};
#undef OFF
_Static_assert(sizeof(fns) / sizeof(fns[0]) * sizeof(void (*)(void)) ==
		       sizeof(struct sink_curl_fns),
	       "a function of sink_curl without its symbol");

/* Every function of fns from the library h into t: 0, or -1 with the reason in load_err. */
static int resolve(void *h, struct sink_curl_fns *t)
{
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		void *p;

		dlerror();
		p = dlsym(h, fns[i].sym);
		if (!p) {
			const char *e = dlerror();

			snprintf(load_err, sizeof(load_err), "cannot load %s: %s", CURL_SONAME,
				 e ? e : fns[i].sym);
			return -1;
		}
		memcpy((char *)t + fns[i].off, &p, sizeof(p));
	}
	return 0;
}

/*
 * Never closed: libcurl and OpenSSL keep per-process state and threads' keys
 * that an unload would leave dangling.
 */
static void load(void)
{
	struct sink_curl_fns t;
	void *h = dlopen(CURL_SONAME, RTLD_NOW | RTLD_LOCAL);
	CURLcode rc;

	if (!h) {
		const char *e = dlerror();

		snprintf(load_err, sizeof(load_err), "cannot load %s: %s", CURL_SONAME,
			 e ? e : "unknown error");
		return;
	}
	if (resolve(h, &t))
		return;
	rc = t.global_init(CURL_GLOBAL_DEFAULT);
	if (rc != CURLE_OK) {
		snprintf(load_err, sizeof(load_err), "cannot load %s: curl_global_init: %s",
			 CURL_SONAME, t.easy_strerror(rc));
		return;
	}
	sink_curl = t;
}

int sink_curl_load(char *why, size_t n)
{
	pthread_once(&load_once, load);
	if (!load_err[0])
		return 0;
	if (why)
		snprintf(why, n, "%s", load_err);
	return -ELIBACC;
}

#endif /* IT_NO_CURL */
