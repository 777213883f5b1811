// SPDX-License-Identifier: GPL-2.0
/*
 * metrics_http: /metrics over libmicrohttpd. See metrics_http.h.
 *
 * The listening socket is made here (so a bind failure names its errno), then
 * handed to libmicrohttpd, which runs its own polling thread. Signals the
 * daemon takes through its signalfd are blocked in that thread.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <netinet/in.h>

#include "core/metrics_http.h"
#include "lib/addr.h"
#include "lib/log.h"

#ifndef IT_NO_MHD /* the static build (make static) has no libmicrohttpd */

#include <microhttpd.h>

#define HTTP_CONN_LIMIT 16
#define HTTP_TIMEOUT_S 10
#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* A published text, shared by the server and the responses that send it. */
struct snap {
	atomic_int refs;
	size_t len;
	char *text;
};

static void snap_put(struct snap *s)
{
	if (s && atomic_fetch_sub(&s->refs, 1) == 1) {
		free(s->text);
		free(s);
	}
}

struct metrics_http {
	struct MHD_Daemon *mhd;
	int fd;
	pthread_mutex_t lock; /* guards cur: held for a pointer read or swap only */
	struct snap *cur;
};

static struct snap *snap_get(struct metrics_http *h)
{
	struct snap *s;

	pthread_mutex_lock(&h->lock);
	s = h->cur;
	if (s)
		atomic_fetch_add(&s->refs, 1);
	pthread_mutex_unlock(&h->lock);
	return s;
}

/* libmicrohttpd is done with a response's buffer. */
static void snap_release(void *cls)
{
	snap_put(cls);
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int status, const char *text)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply_metrics(struct metrics_http *h, struct MHD_Connection *c)
{
	struct snap *s = snap_get(h);
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (!s)
		return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE,
			     "iotracer: starting, no metrics yet\n");
	r = MHD_create_response_from_buffer_with_free_callback_cls(s->len, s->text, snap_release,
								   s);
	if (!r) {
		snap_put(s);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, CONTENT_TYPE);
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **req_cls)
{
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
	if (*upload_size)
		return MHD_NO; /* a GET with a body: drop the connection */
	if (!strcmp(url, "/metrics"))
		return reply_metrics(cls, c);
	if (!strcmp(url, "/"))
		return reply(c, MHD_HTTP_OK, "iotracer: metrics at /metrics\n");
	return reply(c, MHD_HTTP_NOT_FOUND, "not found; metrics at /metrics\n");
}

/* A listening TCP socket on addr; -errno (message printed). */
static int listen_on(const char *addr)
{
	struct sockaddr_storage ss;
	struct net_addr a;
	socklen_t len;
	char why[128];
	int fd, one = 1, ret;

	if (addr_parse_hostport(addr, &a, why, sizeof(why)) || addr_sockaddr(&a, 1, &ss, &len)) {
		it_err("--metrics: bad address '%s': %s", addr, why);
		return -EINVAL;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 && !a.host[0] && errno == EAFNOSUPPORT) { /* ":PORT" without IPv6 */
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		memset(&ss, 0, sizeof(ss));
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)a.port);
		len = sizeof(*in);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	}
	if (fd < 0) {
		ret = -errno;
		it_err("--metrics: cannot listen on %s: %s", addr, strerror(errno));
		return ret;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 16)) {
		ret = -errno;
		it_err("--metrics: cannot listen on %s: %s", addr, strerror(errno));
		close(fd);
		return ret;
	}
	return fd;
}

struct metrics_http *metrics_http_start(const char *addr)
{
	struct metrics_http *h = calloc(1, sizeof(*h));
	sigset_t all, old;

	if (!h) {
		it_err("--metrics: out of memory");
		return NULL;
	}
	pthread_mutex_init(&h->lock, NULL);
	h->fd = listen_on(addr);
	if (h->fd < 0)
		goto out_free;
	/* the server thread inherits this mask: no signal is delivered to it */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	h->mhd = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ITC, 0, NULL, NULL,
				  on_request, h, MHD_OPTION_LISTEN_SOCKET, h->fd,
				  MHD_OPTION_CONNECTION_LIMIT, (unsigned int)HTTP_CONN_LIMIT,
				  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HTTP_TIMEOUT_S,
				  MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!h->mhd) {
		it_err("--metrics: cannot start the HTTP server on %s", addr);
		close(h->fd);
		goto out_free;
	}
	return h;
out_free:
	pthread_mutex_destroy(&h->lock);
	free(h);
	return NULL;
}

void metrics_http_publish(struct metrics_http *h, char *text, size_t len)
{
	struct snap *s = malloc(sizeof(*s)), *old;

	if (!s) {
		free(text); /* keep serving the previous text */
		return;
	}
	atomic_init(&s->refs, 1);
	s->text = text;
	s->len = len;
	pthread_mutex_lock(&h->lock);
	old = h->cur;
	h->cur = s;
	pthread_mutex_unlock(&h->lock);
	snap_put(old);
}

void metrics_http_stop(struct metrics_http *h)
{
	if (!h)
		return;
	/* quiesce first: the listening socket is then ours to close */
	MHD_quiesce_daemon(h->mhd);
	MHD_stop_daemon(h->mhd); /* joins the thread; responses in flight are freed */
	close(h->fd);
	snap_put(h->cur);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

#else /* IT_NO_MHD */

struct metrics_http *metrics_http_start(const char *addr)
{
	/*
	 * libmicrohttpd links statically only with GnuTLS, whose p11-kit and
	 * libunistring Debian ships without static archives (docs/metrics.md).
	 */
	it_err("--metrics %s: not in the static build (no HTTP server: libmicrohttpd has no "
	       "static link on Debian); use the dynamically linked iotracer",
	       addr);
	return NULL;
}

void metrics_http_publish(struct metrics_http *h, char *text, size_t len)
{
	free(text);
}

void metrics_http_stop(struct metrics_http *h)
{
}

#endif /* IT_NO_MHD */
