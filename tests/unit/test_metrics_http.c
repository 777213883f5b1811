// SPDX-License-Identifier: GPL-2.0
/*
 * The /metrics server (src/service/metrics_http.c) on a loopback port, with
 * plain sockets as its clients: what it answers, and that a slow or stuck
 * client neither holds it past its deadlines nor delays its stop.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "unit.h"
#include "lib/clock.h"
#include "service/metrics_http.h"

/* A loopback port nothing listens on now (bound to port 0, then closed). */
static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static struct metrics_http *start(int *port)
{
	char addr[32];

	*port = free_port();
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", *port);
	return *port > 0 ? metrics_http_start(addr, "--metrics") : NULL;
}

/* A connected client socket whose reads give up after timeout_ms; -1 on failure. */
static int dial(int port, int timeout_ms)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { .tv_sec = timeout_ms / 1000, .tv_usec = timeout_ms % 1000 * 1000 };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Everything fd sends until it closes (or the read times out), NUL terminated. */
static size_t read_all(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	ssize_t r;

	while (n < cap - 1 && (r = recv(fd, buf + n, cap - 1 - n, 0)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	return n;
}

/* request sent whole on a new connection; the answer in buf. */
static size_t ask(int port, const char *request, char *buf, size_t cap)
{
	int fd = dial(port, 5000);
	size_t n = 0;

	buf[0] = '\0';
	if (fd < 0)
		return 0;
	if (send(fd, request, strlen(request), MSG_NOSIGNAL) == (ssize_t)strlen(request))
		n = read_all(fd, buf, cap);
	close(fd);
	return n;
}

/* The body of an answer: what follows its blank line ("" if none). */
static const char *body_of(const char *ans)
{
	const char *b = strstr(ans, "\r\n\r\n");

	return b ? b + 4 : "";
}

/* Status lines and bodies, against the text published. */
static void test_http_answers(void)
{
	static const char text[] = "iotracer_up 1\n";
	char ans[4096], *t;
	int port;
	struct metrics_http *h = start(&port);

	if (!ASSERT_TRUE(h, "start"))
		return;
	ask(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", ans, sizeof(ans));
	ASSERT_TRUE(!strncmp(ans, "HTTP/1.0 503 ", 13), "503 before the first text");
	t = strdup(text);
	metrics_http_publish(h, t, strlen(text));
	ask(port, "GET /metrics?x=1 HTTP/1.1\r\nHost: x\r\n\r\n", ans, sizeof(ans));
	ASSERT_TRUE(!strncmp(ans, "HTTP/1.0 200 OK\r\n", 17), "200");
	ASSERT_TRUE(strstr(ans, "\r\nContent-Length: 14\r\n") != NULL, "its length");
	ASSERT_STREQ(body_of(ans), text, "the text published");
	ask(port, "HEAD /metrics HTTP/1.1\r\n\r\n", ans, sizeof(ans));
	ASSERT_TRUE(!strncmp(ans, "HTTP/1.0 200 OK\r\n", 17), "HEAD: 200");
	ASSERT_STREQ(body_of(ans), "", "HEAD: no body");
	ask(port, "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n", ans, sizeof(ans));
	ASSERT_TRUE(!strncmp(ans, "HTTP/1.0 405 ", 13), "POST: 405");
	ask(port, "GET /nope HTTP/1.1\r\n\r\n", ans, sizeof(ans));
	ASSERT_TRUE(!strncmp(ans, "HTTP/1.0 404 ", 13), "404");
	metrics_http_stop(h);
}

struct scrape {
	int port;
	uint64_t ns; /* how long the answer took */
	char ans[512];
};

static void *scrape_main(void *arg)
{
	struct scrape *s = arg;
	uint64_t t0 = it_mono_ns();

	ask(s->port, "GET / HTTP/1.1\r\n\r\n", s->ans, sizeof(s->ans));
	s->ns = it_mono_ns() - t0;
	return NULL;
}

/*
 * A client that sends its head a line every 300 ms, for ever: the server drops it
 * once 2 s passed, and a scrape behind it is answered by then (a timeout per
 * read alone would serve the slow client as long as it keeps sending).
 */
static void test_http_slow_client(void)
{
	struct scrape s = { 0 };
	struct metrics_http *h = start(&s.port);
	uint64_t t0 = it_mono_ns();
	int fd, dropped = 0;
	pthread_t th;
	char c;

	if (!ASSERT_TRUE(h, "start"))
		return;
	fd = dial(s.port, 100);
	if (!ASSERT_TRUE(fd >= 0, "dial") ||
	    !ASSERT_TRUE(send(fd, "GET / HTTP/1.1\r\n", 16, 0) == 16, "the first line")) {
		metrics_http_stop(h);
		return;
	}
	usleep(100 * 1000);
	pthread_create(&th, NULL, scrape_main, &s);
	while (!dropped && it_mono_ns() - t0 < 5000000000ull) {
		usleep(300 * 1000);
		dropped = send(fd, "X-A: b\r\n", 8, MSG_NOSIGNAL) != 8 || recv(fd, &c, 1, 0) == 0;
	}
	pthread_join(th, NULL);
	ASSERT_TRUE(dropped, "the slow client dropped");
	ASSERT_TRUE(!strncmp(s.ans, "HTTP/1.0 200 OK\r\n", 17), "the scrape behind it answered");
	ASSERT_TRUE(s.ns < 3000000000ull, "within the head's 2 s and a margin");
	close(fd);
	metrics_http_stop(h);
}

/* A client connected and silent: stopping the server does not wait for it. */
static void test_http_stop_stuck(void)
{
	int port, fd;
	struct metrics_http *h = start(&port);
	uint64_t t0;

	if (!ASSERT_TRUE(h, "start"))
		return;
	fd = dial(port, 100);
	ASSERT_TRUE(fd >= 0, "dial");
	usleep(100 * 1000); /* the server is in its read of this client */
	t0 = it_mono_ns();
	metrics_http_stop(h);
	ASSERT_TRUE(it_mono_ns() - t0 < 500000000ull, "stopped within 0.5 s");
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	RUN_TEST(test_http_answers);
	RUN_TEST(test_http_slow_client);
	RUN_TEST(test_http_stop_stuck);
	return unit_result();
}
