// SPDX-License-Identifier: GPL-2.0
/*
 * metrics_http: /metrics over libmicrohttpd. See metrics_http.h.
 *
 * The listening socket is made here (so a bind failure names its errno), then
 * handed to libmicrohttpd, which runs its own polling thread. Signals the
 * daemon takes through its signalfd are blocked in that thread.
 *
 * The static build (make static, -DIT_NO_MHD) cannot link libmicrohttpd
 * (Debian has no static archives of GnuTLS's p11-kit and libunistring): it
 * serves the same text from a small HTTP/1.0 server of its own, one
 * connection at a time, each given at most HTTP_IO_TIMEOUT_S per read/write.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <netinet/in.h>

#include "service/metrics_http.h"
#include "lib/addr.h"
#include "lib/log.h"

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
	int fd; /* the listening socket */
	pthread_mutex_t lock; /* guards cur: held for a pointer read or swap only */
	struct snap *cur;
#ifndef IT_NO_MHD
	struct MHD_Daemon *mhd;
#else
	pthread_t thread;
	int stop_fd; /* an eventfd: written to end the thread */
#endif
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

/* A listening TCP socket on addr; -errno (message printed). */
static int listen_on(const char *addr, const char *who)
{
	struct sockaddr_storage ss;
	struct net_addr a;
	socklen_t len;
	char why[128];
	int fd, one = 1, ret;

	if (addr_parse_hostport(addr, &a, why, sizeof(why)) || addr_sockaddr(&a, 1, &ss, &len)) {
		it_err("%s: bad address '%s': %s", who, addr, why);
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
		it_err("%s: cannot listen on %s: %s", who, addr, strerror(errno));
		return ret;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 16)) {
		ret = -errno;
		it_err("%s: cannot listen on %s: %s", who, addr, strerror(errno));
		close(fd);
		return ret;
	}
	return fd;
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

#ifndef IT_NO_MHD

#include <microhttpd.h>

#define HTTP_CONN_LIMIT 16
#define HTTP_TIMEOUT_S 10

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

/* Start libmicrohttpd on the listening socket: 0, or -1 (message printed). */
static int server_start(struct metrics_http *h, const char *addr, const char *who)
{
	h->mhd = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ITC, 0, NULL, NULL,
				  on_request, h, MHD_OPTION_LISTEN_SOCKET, h->fd,
				  MHD_OPTION_CONNECTION_LIMIT, (unsigned int)HTTP_CONN_LIMIT,
				  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HTTP_TIMEOUT_S,
				  MHD_OPTION_END);
	if (!h->mhd) {
		it_err("%s: cannot start the HTTP server on %s", who, addr);
		return -1;
	}
	return 0;
}

static void server_stop(struct metrics_http *h)
{
	/* quiesce first: the listening socket is then ours to close */
	MHD_quiesce_daemon(h->mhd);
	MHD_stop_daemon(h->mhd); /* joins the thread; responses in flight are freed */
}

#else /* IT_NO_MHD: the static build's own server */

#define HTTP_IO_TIMEOUT_S 2
#define HTTP_HEAD_MAX 4096

static int send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void send_reply(int fd, int head_only, const char *status, const char *type,
		       const char *body, size_t len)
{
	char hdr[256];
	int n = snprintf(hdr, sizeof(hdr),
			 "HTTP/1.0 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n",
			 status, type, len);

	if (!send_all(fd, hdr, (size_t)n) && !head_only)
		send_all(fd, body, len);
}

static void send_text(int fd, int head_only, const char *status, const char *text)
{
	send_reply(fd, head_only, status, "text/plain; charset=utf-8", text, strlen(text));
}

/* The request head, up to its blank line, NUL terminated: 0, or -1 (none, too long, slow). */
static int read_head(int fd, char *buf, size_t cap)
{
	size_t len = 0;

	while (len < cap - 1) {
		ssize_t r = recv(fd, buf + len, cap - 1 - len, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		len += (size_t)r;
		buf[len] = '\0';
		if (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n"))
			return 0;
	}
	return -1;
}

static void serve_one(struct metrics_http *h, int c)
{
	struct timeval tv = { .tv_sec = HTTP_IO_TIMEOUT_S };
	char req[HTTP_HEAD_MAX], method[8], path[256];
	struct snap *s;
	int head;

	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (read_head(c, req, sizeof(req)) || sscanf(req, "%7s %255s", method, path) != 2)
		return; /* not HTTP: drop the connection */
	path[strcspn(path, "?")] = '\0';
	head = !strcmp(method, "HEAD");
	if (!head && strcmp(method, "GET")) {
		send_text(c, 0, "405 Method Not Allowed", "only GET and HEAD\n");
	} else if (!strcmp(path, "/metrics")) {
		s = snap_get(h);
		if (s)
			send_reply(c, head, "200 OK", CONTENT_TYPE, s->text, s->len);
		else
			send_text(c, head, "503 Service Unavailable",
				  "iotracer: starting, no metrics yet\n");
		snap_put(s);
	} else if (!strcmp(path, "/")) {
		send_text(c, head, "200 OK", "iotracer: metrics at /metrics\n");
	} else {
		send_text(c, head, "404 Not Found", "not found; metrics at /metrics\n");
	}
}

static void *serve(void *arg)
{
	struct metrics_http *h = arg;
	struct pollfd p[2] = { { .fd = h->fd, .events = POLLIN },
			       { .fd = h->stop_fd, .events = POLLIN } };

	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		if (p[0].revents & POLLIN) {
			int c = accept4(h->fd, NULL, NULL, SOCK_CLOEXEC);

			if (c < 0)
				continue;
			serve_one(h, c);
			shutdown(c, SHUT_WR);
			close(c);
		}
	}
	return NULL;
}

/* Start the server thread (an eventfd stops it): 0, or -1 (message printed). */
static int server_start(struct metrics_http *h, const char *addr, const char *who)
{
	int err;

	h->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (h->stop_fd < 0) {
		it_err("%s %s: eventfd: %s", who, addr, strerror(errno));
		return -1;
	}
	err = pthread_create(&h->thread, NULL, serve, h);
	if (err) {
		it_err("%s %s: cannot start the HTTP thread: %s", who, addr, strerror(err));
		close(h->stop_fd);
		return -1;
	}
	return 0;
}

static void server_stop(struct metrics_http *h)
{
	uint64_t one = 1;

	if (write(h->stop_fd, &one, sizeof(one)) != sizeof(one))
		it_warn("--metrics: cannot stop the HTTP thread: %s", strerror(errno));
	else
		pthread_join(h->thread, NULL);
	close(h->stop_fd);
}

#endif /* IT_NO_MHD */

struct metrics_http *metrics_http_start(const char *addr, const char *who)
{
	struct metrics_http *h = calloc(1, sizeof(*h));
	sigset_t all, old;
	int err;

	if (!h) {
		it_err("%s: out of memory", who);
		return NULL;
	}
	pthread_mutex_init(&h->lock, NULL);
	h->fd = listen_on(addr, who);
	if (h->fd < 0)
		goto out_free;
	/* the server thread inherits this mask: no signal is delivered to it */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = server_start(h, addr, who);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		close(h->fd);
		goto out_free;
	}
	return h;
out_free:
	pthread_mutex_destroy(&h->lock);
	free(h);
	return NULL;
}

void metrics_http_stop(struct metrics_http *h)
{
	if (!h)
		return;
	server_stop(h);
	close(h->fd);
	snap_put(h->cur);
	pthread_mutex_destroy(&h->lock);
	free(h);
}
