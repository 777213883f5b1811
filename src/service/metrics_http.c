// SPDX-License-Identifier: GPL-2.0
/*
 * metrics_http: /metrics from a small HTTP/1.0 server thread of our own. See
 * metrics_http.h.
 *
 * The listening socket is made here (so a bind failure names its errno). One
 * thread serves one connection at a time: a request head within
 * HTTP_HEAD_MS, the answer within HTTP_SEND_MS, and at most HTTP_IDLE_MS
 * without progress either way, so a stuck or slow client delays the next
 * scrape by that much at most; stopping does not wait for it. Signals the
 * daemon takes through its signalfd are blocked in that thread.
 *
 * It replaced libmicrohttpd, which pulled GnuTLS and its libraries into every
 * daemon, --metrics or not: ~0.4 MiB of RssAnon (docs/bench.md, "What the
 * daemon's libraries cost"); the static build had this server already.
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
#include <unistd.h>
#include <netinet/in.h>

#include "service/metrics_http.h"
#include "lib/addr.h"
#include "lib/clock.h"
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
	pthread_t thread;
	int stop_fd; /* an eventfd: written to end the thread */
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

#define HTTP_HEAD_MAX 4096
#define HTTP_HEAD_MS 2000 /* a request head, at most */
#define HTTP_SEND_MS 10000 /* an answer, at most */
#define HTTP_IDLE_MS 2000 /* no progress either way, at most */

/* One connection being served. */
struct conn {
	int fd; /* non-blocking */
	int stop_fd; /* the server's: readable once it stops */
	uint64_t deadline_ns;
};

/* Until c's socket is ready for events: 0, or -1 (past the deadline, idle, stopping). */
static int conn_wait(const struct conn *c, short events)
{
	struct pollfd p[2] = { { .fd = c->fd, .events = events },
			       { .fd = c->stop_fd, .events = POLLIN } };

	for (;;) {
		uint64_t now = it_mono_ns();
		int ms, r;

		if (now >= c->deadline_ns)
			return -1;
		ms = (int)((c->deadline_ns - now + 999999) / 1000000);
		r = poll(p, 2, ms < HTTP_IDLE_MS ? ms : HTTP_IDLE_MS);
		if (r < 0 && errno == EINTR)
			continue;
		return r > 0 && !p[1].revents ? 0 : -1;
	}
}

static int send_all(const struct conn *c, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (conn_wait(c, POLLOUT))
				return -1;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void send_reply(const struct conn *c, int head_only, const char *status, const char *type,
		       const char *body, size_t len)
{
	char hdr[256];
	int n = snprintf(hdr, sizeof(hdr),
			 "HTTP/1.0 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n",
			 status, type, len);

	if (!send_all(c, hdr, (size_t)n) && !head_only)
		send_all(c, body, len);
}

static void send_text(const struct conn *c, int head_only, const char *status, const char *text)
{
	send_reply(c, head_only, status, "text/plain; charset=utf-8", text, strlen(text));
}

/* The request head, up to its blank line, NUL terminated: 0, or -1 (none, too long, slow). */
static int read_head(const struct conn *c, char *buf, size_t cap)
{
	size_t len = 0;

	while (len < cap - 1) {
		ssize_t r = recv(c->fd, buf + len, cap - 1 - len, 0);

		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (conn_wait(c, POLLIN))
				return -1;
			continue;
		}
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

static void serve_one(struct metrics_http *h, int fd)
{
	struct conn c = { .fd = fd,
			  .stop_fd = h->stop_fd,
			  .deadline_ns = it_mono_ns() + HTTP_HEAD_MS * 1000000ull };
	char req[HTTP_HEAD_MAX], method[8], path[256];
	struct snap *s;
	int head;

	if (read_head(&c, req, sizeof(req)) || sscanf(req, "%7s %255s", method, path) != 2)
		return; /* not HTTP, or too slow: drop the connection */
	c.deadline_ns = it_mono_ns() + HTTP_SEND_MS * 1000000ull;
	path[strcspn(path, "?")] = '\0';
	head = !strcmp(method, "HEAD");
	if (!head && strcmp(method, "GET")) {
		send_text(&c, 0, "405 Method Not Allowed", "only GET and HEAD\n");
	} else if (!strcmp(path, "/metrics")) {
		s = snap_get(h);
		if (s)
			send_reply(&c, head, "200 OK", CONTENT_TYPE, s->text, s->len);
		else
			send_text(&c, head, "503 Service Unavailable",
				  "iotracer: starting, no metrics yet\n");
		snap_put(s);
	} else if (!strcmp(path, "/")) {
		send_text(&c, head, "200 OK", "iotracer: metrics at /metrics\n");
	} else {
		send_text(&c, head, "404 Not Found", "not found; metrics at /metrics\n");
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
			int c = accept4(h->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

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
