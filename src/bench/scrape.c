// SPDX-License-Identifier: GPL-2.0
/*
 * scrape: what a Prometheus costs the traced IO. The tracer "iotracer-scrape"
 * is iotracer with -j and --metrics on a loopback port of its own; while fio
 * runs, a child of the bench GETs /metrics once a second, as a Prometheus
 * with a 1 s scrape interval would (one connection per scrape, the whole body
 * read). The daemon's HTTP thread is part of its process CPU; the scraper's
 * own CPU is the system's, like a Prometheus on the host.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench/internal.h"

/* A loopback TCP port nobody listens on now (the kernel's pick). 0 on failure. */
int scrape_free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = 0;

	if (fd < 0)
		return 0;
	if (!bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

/* One GET /metrics, the body read to the end. 0 or -errno. */
static int scrape_once(int port)
{
	static const char req[] = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char buf[16384];
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), ret = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    write(fd, req, sizeof(req) - 1) != (ssize_t)(sizeof(req) - 1))
		ret = -errno;
	while (!ret && (n = read(fd, buf, sizeof(buf))) > 0)
		;
	close(fd);
	return ret;
}

static void scrape_loop(void *arg)
{
	int port = *(int *)arg;

	for (;;) {
		scrape_once(port);
		bench_sleep_ms(1000);
	}
}

pid_t scrape_start(int port)
{
	static int p;

	p = port;
	return bench_spawn_fn(scrape_loop, &p);
}

void scrape_stop(pid_t pid)
{
	if (pid > 0)
		bench_stop_child(pid, SIGTERM, 2000, NULL);
}
