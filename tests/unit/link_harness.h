/* SPDX-License-Identifier: GPL-2.0 */
/*
 * link_harness.h: live links for the link unit tests (test_link.c,
 * test_link_auth.c): nodes (a struct link and what its callbacks saw), one
 * process driving every link with link_run(), and raw peers that write frames
 * by hand. Include after unit.h.
 */
#ifndef IT_LINK_HARNESS_H
#define IT_LINK_HARNESS_H

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "mode/link.h"

/* not every test file uses every helper */
#pragma GCC diagnostic ignored "-Wunused-function"

#define MS 1000000ULL
#define SEC 1000000000ULL
#define HDRSZ sizeof(struct link_frame_hdr)

static uint64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

/* ---- live links ---- */

#define MAX_SESS 8
struct node {
	struct link *l;
	uint64_t skew; /* added to the clock passed to link_run */
	int ups, downs, filters, fail_records;
	char last_down[160];
	struct link_filter filter;
	struct guest_seen { /* host: per guest name */
		char name[64];
		uint64_t count, first, last;
		uint64_t with_gpa; /* records whose gpa came through (vreq(): seq << 12) */
		int disorder;
	} s[MAX_SESS];
	int nsess;
	char logs[64][200];
	int nlogs;
	/* set before mk_host()/mk_guest(): */
	const struct link_key *key; /* NULL: none */
	uint32_t caps; /* link_opts.caps (LINK_CAP_GPA) */
	uint64_t log_every_ns; /* 0: 1 ns (every refusal logged) */
	int (*admit)(void *ctx, struct link_peer *p, char *why, size_t whylen);
	const char *(*check)(void *ctx, struct link_peer *p, const struct link_vreq *v);
};

static void cb_up(void *ctx, struct link_peer *p)
{
	((struct node *)ctx)->ups++;
}

static void cb_down(void *ctx, struct link_peer *p, const char *why)
{
	struct node *n = ctx;

	n->downs++;
	snprintf(n->last_down, sizeof(n->last_down), "%s", why);
}

static void cb_filter(void *ctx, struct link_peer *p, const struct link_filter *f)
{
	struct node *n = ctx;

	n->filters++;
	n->filter = *f;
}

/* What host n received from the guest named name (created on first use). */
static struct guest_seen *seen(struct node *n, const char *name)
{
	int i;

	for (i = 0; i < n->nsess; i++)
		if (!strcmp(n->s[i].name, name))
			return &n->s[i];
	i = n->nsess < MAX_SESS ? n->nsess++ : MAX_SESS - 1;
	snprintf(n->s[i].name, sizeof(n->s[i].name), "%s", name);
	return &n->s[i];
}

static int cb_records(void *ctx, struct link_peer *p, const struct link_vreq *v, uint32_t cnt)
{
	struct node *n = ctx;
	struct guest_seen *g = seen(n, link_peer_info(p)->hello.name);
	uint32_t k;

	if (n->fail_records)
		return -EIO;
	for (k = 0; k < cnt; k++) {
		if (v[k].seq <= g->last || v[k].sector != v[k].seq * 8)
			g->disorder++;
		g->with_gpa += v[k].gpa == v[k].seq << 12;
		if (!g->count++)
			g->first = v[k].seq;
		g->last = v[k].seq;
	}
	return 0;
}

static void cb_log(void *ctx, const char *line)
{
	struct node *n = ctx;

	UNIT_LOG("# %s\n", line);
	if (n->nlogs < 64)
		snprintf(n->logs[n->nlogs++], sizeof(n->logs[0]), "%s", line);
}

static int logged(const struct node *n, const char *what)
{
	int i;

	for (i = 0; i < n->nlogs; i++)
		if (strstr(n->logs[i], what))
			return 1;
	return 0;
}

static struct link *mk_link(struct node *n, enum link_role role, uint32_t outbox, const char *name)
{
	struct link_opts o = { .role = role,
			       .name = name,
			       .outbox = outbox,
			       .key = n->key,
			       .caps = n->caps,
			       .log_every_ns = n->log_every_ns ? n->log_every_ns : 1 };
	struct link_cb cb = { .ctx = n,
			      .on_up = cb_up,
			      .on_down = cb_down,
			      .on_filter = cb_filter,
			      .on_records = cb_records,
			      .on_admit = n->admit,
			      .check_record = n->check,
			      .log = cb_log };

	n->l = link_new(&o, &cb);
	return n->l;
}

static int addr(const char *s, struct net_addr *a)
{
	char why[128];
	int err = addr_parse(s, a, why, sizeof(why));

	if (err)
		UNIT_LOG("# %s: %s\n", s, why);
	return err;
}

static int mk_host(struct node *n, const char *where)
{
	struct net_addr a;

	if (!mk_link(n, LINK_ROLE_HOST, 0, "h") || addr(where, &a))
		return -1;
	return link_listen(n->l, &a);
}

static int mk_guest(struct node *n, const char *where, uint32_t outbox, const char *name)
{
	struct net_addr a;

	if (!mk_link(n, LINK_ROLE_GUEST, outbox, name) || addr(where, &a))
		return -1;
	return link_dial(n->l, &a);
}

/* One round: every link runs once, then wait up to 1 ms on their epoll fds. */
static void step(struct node **nodes, int n)
{
	struct pollfd pfd[8];
	int i;

	for (i = 0; i < n; i++) {
		link_run(nodes[i]->l, mono() + nodes[i]->skew);
		pfd[i].fd = link_epoll_fd(nodes[i]->l);
		pfd[i].events = POLLIN;
	}
	poll(pfd, (nfds_t)n, 1);
}

#define RUN_UNTIL(nodes, n, cond, ms)                       \
	({                                                  \
		uint64_t dl__ = mono() + (uint64_t)(ms)*MS; \
		while (!(cond) && mono() < dl__)            \
			step(nodes, n);                     \
		ASSERT_TRUE(cond, "in time: " #cond);       \
	})

static struct link_vreq vreq(uint64_t i)
{
	struct link_vreq v;

	memset(&v, 0, sizeof(v));
	v.sector = 0; /* filled by send() from the seq it will get */
	v.nr_sectors = 8;
	v.op = 1;
	snprintf(v.serial, sizeof(v.serial), "disk%llu", (unsigned long long)(i % 3));
	snprintf(v.comm, sizeof(v.comm), "fio");
	v.sys = UINT32_MAX;
	return v;
}

/* Queue n records on a guest whose next seq is *next (sector = seq * 8). */
static uint32_t send_recs(struct node *g, uint64_t *next, uint32_t n)
{
	struct link_vreq v[100];
	uint32_t i, k, dropped = 0;

	for (i = 0; i < n; i += k) {
		for (k = 0; k < 100 && i + k < n; k++) {
			v[k] = vreq(*next);
			v[k].gpa = *next << 12;
			v[k].sector = (*next)++ * 8;
		}
		dropped += link_send_vreqs(g->l, v, k);
	}
	return dropped;
}

static struct link_stats stats(const struct node *n)
{
	struct link_stats s;

	link_get_stats(n->l, &s);
	return s;
}

static const struct link_peer_info *first_peer(struct node *n)
{
	struct link_peer *p = link_next_peer(n->l, NULL);

	return p ? link_peer_info(p) : NULL;
}

static char tmpdir[64];

static void mk_tmpdir(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/it-link.XXXXXX");
	if (!mkdtemp(tmpdir))
		tmpdir[0] = '\0';
}

static void path_in_tmp(char *buf, size_t n, const char *prefix, const char *name)
{
	snprintf(buf, n, "%s%s/%s", prefix, tmpdir, name);
}

/* ---- raw peers ---- */

static int raw_connect(const char *path)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(un.sun_path, sizeof(un.sun_path), "%s", path);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&un, sizeof(un)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int raw_send(int fd, uint16_t type, const void *pl, uint32_t len)
{
	static uint8_t buf[LINK_MAX_PAYLOAD + 16];
	int n = link_encode(buf, sizeof(buf), type, pl, len);

	return n > 0 && send(fd, buf, (size_t)n, MSG_NOSIGNAL) == n ? 0 : -1;
}

static int raw_hello(int fd, uint8_t role, uint16_t version, uint64_t session)
{
	struct link_hello h = {
		.version = version, .role = role, .session = session, .next_seq = 1
	};

	snprintf(h.name, sizeof(h.name), "raw");
	return raw_send(fd, LINK_HELLO, &h, sizeof(h));
}

/*
 * Records from..to in one RECORDS frame, each of size bytes (the size word
 * says it; LINK_VREQ_V2_LEN: the word is 0, as a version 2 guest sends them):
 * our struct cut, or padded with 0xee bytes (a newer guest's fields).
 */
static int raw_records_sized(int fd, uint64_t from, uint64_t to, uint32_t size)
{
	static uint8_t pl[8 + 64 * 256];
	struct link_vreq v;
	uint32_t n = (uint32_t)(to - from + 1), i, word = size == LINK_VREQ_V2_LEN ? 0 : size;

	memcpy(pl, &n, 4);
	memcpy(pl + 4, &word, 4);
	for (i = 0; i < n; i++) {
		v = vreq(from + i);
		v.seq = from + i;
		v.sector = v.seq * 8;
		v.gpa = v.seq << 12;
		memset(pl + 8 + i * size, 0xee, size);
		memcpy(pl + 8 + i * size, &v, size < sizeof(v) ? size : sizeof(v));
	}
	return raw_send(fd, LINK_RECORDS, pl, 8 + n * size);
}

static int raw_records(int fd, uint64_t from, uint64_t to)
{
	return raw_records_sized(fd, from, to, sizeof(struct link_vreq));
}

/*
 * Step node n and read frames from a raw fd (non-blocking) until one of type
 * arrives (and, with match, whose payload starts with *match): its payload
 * goes to out (len bytes at most). 0, 1 at end of stream, -1 on timeout (2 s).
 */
static int raw_frame(struct node *n, int fd, uint16_t type, const uint64_t *match, void *out,
		     size_t len)
{
	static uint8_t buf[1 << 17];
	struct node *ns[] = { n };
	uint64_t dl = mono() + 2 * SEC, head;
	struct link_frame_hdr hd;
	const void *pl;
	size_t have = 0;
	ssize_t r;
	int f;

	fcntl(fd, F_SETFL, O_NONBLOCK);
	while (mono() < dl) {
		step(ns, 1);
		r = read(fd, buf + have, sizeof(buf) - have);
		if (r == 0 || (r < 0 && errno == ECONNRESET))
			return 1;
		have += r > 0 ? (size_t)r : 0;
		while ((f = link_decode(buf, have, &hd, &pl, NULL)) > 0) {
			head = 0;
			memcpy(&head, pl, hd.len < sizeof(head) ? hd.len : sizeof(head));
			if (hd.type == type && (!match || head == *match)) {
				if (out)
					memcpy(out, pl, len < hd.len ? len : hd.len);
				return 0;
			}
			memmove(buf, buf + f, have - (size_t)f);
			have -= (size_t)f;
		}
	}
	return -1;
}

/* Run host h and read fd until an ACK of want_ack (0), end of stream (1) or timeout (-1). */
static int raw_wait(struct node *h, int fd, uint64_t want_ack)
{
	return raw_frame(h, fd, LINK_ACK, &want_ack, NULL, 0);
}

/* A host node listening on unix socket NAME in the test's tmpdir; its path in path. */
static int mk_unix_host(struct node *n, const char *name, char *path, size_t len)
{
	char where[160];

	path_in_tmp(where, sizeof(where), "unix:", name);
	path_in_tmp(path, len, "", name);
	return mk_host(n, where);
}

/* Read what is left: true at end of stream or a reset, false if still open. */
static bool closed_by_peer(int fd)
{
	char buf[4096];
	ssize_t r;

	while ((r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		;
	return r == 0 || errno != EAGAIN;
}

static int free_tcp_port(void)
{
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001) };
	socklen_t len = sizeof(in);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (fd >= 0 && !bind(fd, (struct sockaddr *)&in, sizeof(in)) &&
	    !getsockname(fd, (struct sockaddr *)&in, &len))
		port = ntohs(in.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

#endif /* IT_LINK_HARNESS_H */
