// SPDX-License-Identifier: GPL-2.0
/*
 * link, a peer's input half (link.c's notes on the structure): a new peer,
 * HELLO and AUTH, the host's sessions (dedup by session and seq), RECORDS
 * checked and delivered, ACK and FILTER, frames parsed from the rx buffer.
 */
#include <errno.h>
#include <sys/socket.h> /* before linux/vm_sockets.h: older uapi headers need struct sockaddr */
#include <linux/vm_sockets.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "lib/clock.h"
#include "mode/link_int.h"

#define proto_err(p, fmt, ...)                                            \
	do {                                                              \
		(p)->l->st.malformed++;                                   \
		lk_peer_closef(p, "protocol error: " fmt, ##__VA_ARGS__); \
	} while (0)

/* ---- peers: creation, input ---- */

static void peer_connected(struct link_peer *p)
{
	p->state = P_HELLO;
	p->l->st.connects++;
	p->last_rx = p->l->now;
	p->due = DUE_HELLO;
	lk_peer_flush(p);
}

/* Who the peer is (link_peer_info: transport, CID, loopback), for on_admit. */
static void peer_whois(struct link_peer *p, const struct sockaddr_storage *ss, enum addr_kind kind)
{
	p->info.transport = kind;
	p->info.accepted = !p->dial;
	if (p->dial)
		p->info.cid = p->dial->addr.cid;
	else if (ss && ss->ss_family == AF_VSOCK)
		p->info.cid = ((const struct sockaddr_vm *)ss)->svm_cid;
	p->info.loopback = ss ? addr_peer_is_loopback(ss) : 0;
}

struct link_peer *lk_peer_new(struct link *l, int fd, const char *addr, struct dial *d,
			      int connecting, int serial, const struct sockaddr_storage *ss,
			      enum addr_kind kind)
{
	struct link_peer *p = calloc(1, sizeof(*p));

	if (p) {
		p->ep.kind = EP_PEER;
		p->ep.fd = fd;
		p->rx = malloc(RX_CAP);
		p->tx = malloc(TX_CAP);
	}
	if (!p || !p->rx || !p->tx || lk_ep_ctl(l, &p->ep, EPOLL_CTL_ADD, EPOLLIN | EPOLLOUT)) {
		if (p) {
			free(p->rx);
			free(p->tx);
		}
		free(p);
		close(fd);
		return NULL;
	}
	p->l = l;
	p->dial = d;
	p->serial = serial;
	p->sess = -1;
	p->state = P_CONNECTING;
	p->last_rx = l->now;
	p->info.id = ++l->next_id;
	snprintf(p->info.addr, sizeof(p->info.addr), "%s", addr);
	peer_whois(p, ss, kind);
	p->next = l->peers;
	l->peers = p;
	if (d)
		d->peer = p;
	if (!connecting)
		peer_connected(p);
	return p;
}

static int session_get(struct link *l, uint64_t id)
{
	struct session *s;
	int i, victim = -1;

	for (i = 0; i < l->nsess; i++) {
		if (l->sess[i].id == id)
			goto found;
		if (!l->sess[i].refs &&
		    (victim < 0 || l->sess[i].last_used < l->sess[victim].last_used))
			victim = i;
	}
	if (l->nsess >= SESS_KEEP && victim >= 0) {
		i = victim;
	} else {
		if (l->nsess == l->capsess) {
			s = realloc(l->sess, (size_t)(l->capsess + SESS_KEEP) * sizeof(*s));
			if (!s)
				return -1;
			l->sess = s;
			l->capsess += SESS_KEEP;
		}
		i = l->nsess++;
	}
	memset(&l->sess[i], 0, sizeof(l->sess[i]));
	l->sess[i].id = id;
found:
	l->sess[i].refs++;
	l->sess[i].last_used = l->now;
	return i;
}

/* The peer is who it says (AUTH verified, or no key on either side): admit it. */
static void peer_up(struct link_peer *p)
{
	struct link *l = p->l;
	const struct link_hello *h = &p->peer_hello;
	char why[160] = "not admitted";

	p->info.hello = *h;
	/* the name goes into log lines and JSON: printable ASCII only, never a forged line */
	p->info.hello.name[sizeof(p->info.hello.name) - 1] = '\0';
	for (size_t i = 0; p->info.hello.name[i]; i++)
		if ((unsigned char)p->info.hello.name[i] < 0x20 ||
		    (unsigned char)p->info.hello.name[i] > 0x7e)
			p->info.hello.name[i] = '?';
	if (!is_guest(l) && (p->sess = session_get(l, h->session)) < 0) {
		lk_peer_close(p, "out of memory");
		return;
	}
	/* last: what on_admit allocates is freed by on_down, called once the peer is up */
	if (l->cb.on_admit && l->cb.on_admit(l->cb.ctx, p, why, sizeof(why))) {
		lk_refuse(p, "%s", why);
		if (p->sess >= 0 && !l->sess[p->sess].delivered)
			l->sess[p->sess].last_used = 0; /* evicted first: a refused peer's */
		return;
	}
	p->info.hello_done = 1;
	p->state = P_UP;
	p->next_ping = l->now;
	p->next_hb = l->now + l->o.heartbeat_ns;
	if (!is_guest(l) && l->sess[p->sess].delivered)
		p->due |= DUE_ACK; /* the guest may drop what a former connection delivered */
	if (is_guest(l)) {
		p->send_seq = l->first_seq;
		p->due |= l->has_filter ? DUE_FILTER : 0;
	}
	if (p->dial) {
		p->dial->backoff = l->o.backoff_min_ns;
		p->dial->last_why[0] = '\0';
	}
	lk_log(l, "link: peer %d (%s): up: %s \"%s\" session %016llx version %u%s", p->info.id,
	       p->info.addr, role_name(h->role), p->info.hello.name, (unsigned long long)h->session,
	       h->version < LINK_VERSION ? h->version : LINK_VERSION,
	       p->info.authed ? ", authenticated" : "");
	if (l->cb.on_up)
		l->cb.on_up(l->cb.ctx, p);
}

static void on_hello(struct link_peer *p, const void *pl, uint32_t len)
{
	struct link *l = p->l;
	struct link_hello h;
	int peer_key;

	if (p->state == P_UP || p->state == P_AUTH) {
		proto_err(p, "second HELLO");
		return;
	}
	if (len == LINK_V1_HELLO_LEN) {
		lk_refuse(p, "peer speaks version 1, we need %d (update it)", LINK_VERSION);
		return;
	}
	memcpy(&h, pl, sizeof(h));
	h.name[sizeof(h.name) - 1] = '\0';
	if (h.version < 2 || (h.role != LINK_ROLE_GUEST && h.role != LINK_ROLE_HOST) ||
	    h.role == l->o.role) {
		lk_refuse(p, "peer speaks version %u as %s, we are %s", h.version,
			  role_name(h.role), role_name(l->o.role));
		return;
	}
	peer_key = !!(h.caps & LINK_CAP_AUTH);
	if (lk_auth_required(p) && !peer_key) {
		lk_refuse(p, "peer has no link key (give both sides the same --link-key)");
		return;
	}
	if ((h.caps & LINK_CAP_AUTH_REQ) && !l->key.len) {
		lk_refuse(p, "peer wants a link key, we have none (--link-key)");
		return;
	}
	memcpy(&p->peer_hello, pl, sizeof(p->peer_hello)); /* as sent: AUTH covers these bytes */
	if (!l->key.len || !peer_key) {
		peer_up(p);
		return;
	}
	p->state = P_AUTH;
	p->due |= DUE_AUTH;
}

static void on_auth(struct link_peer *p, const void *pl)
{
	struct link *l = p->l;
	struct link_auth a;
	const struct link_hello *g = is_guest(l) ? &p->my_hello : &p->peer_hello;
	const struct link_hello *h = is_guest(l) ? &p->peer_hello : &p->my_hello;

	memcpy(&a, pl, sizeof(a));
	/* signed as the peer's role: our own AUTH sent back does not verify */
	if (linkauth_verify(&l->key, p->peer_hello.role, g, h, sizeof(*g), a.mac)) {
		lk_refuse(p, "authentication failed (not the same --link-key)");
		return;
	}
	p->info.authed = 1;
	peer_up(p);
}

/* Hand records to on_records; 0 or -1 when the peer got closed. */
static int deliver(struct link_peer *p, const struct link_vreq *v, uint32_t n, uint64_t hi)
{
	struct link *l = p->l;
	int r = 0;

	if (!n)
		return 0;
	if (l->cb.on_records)
		r = l->cb.on_records(l->cb.ctx, p, v, n);
	if (p->state == P_DEAD)
		return -1;
	if (r) {
		/* not durable: no ack; the guest resends them after reconnecting */
		lk_peer_closef(p, "on_records failed (%d): records %llu..%llu not acknowledged", r,
			       (unsigned long long)v[0].seq, (unsigned long long)v[n - 1].seq);
		return -1;
	}
	l->sess[p->sess].delivered = hi;
	p->due |= DUE_ACK;
	return 0;
}

/* A new record check_record refused: counted, logged rate-limited, acked unseen. */
static void bad_record(struct link_peer *p, const struct link_vreq *v, const char *why)
{
	struct link *l = p->l;

	p->info.bad_records++;
	l->st.records_bad++;
	l->sess[p->sess].delivered = v->seq;
	p->due |= DUE_ACK;
	lk_limited(l, &l->bad_log, "link: peer %d (%s): record seq %llu refused: %s (%llu refused)",
		   p->info.id, p->info.addr, (unsigned long long)v->seq, why,
		   (unsigned long long)l->st.records_bad);
}

static void on_records(struct link_peer *p, const uint8_t *pl)
{
	struct link *l = p->l;
	struct link_vreq *v = l->scratch;
	uint64_t hi = l->sess[p->sess].delivered;
	uint32_t n, i, start = 0, size = link_rec_size(pl);
	const char *why;

	memcpy(&n, pl, sizeof(n));
	/* each record as ours: a shorter one's missing fields 0, a longer one's extra skipped */
	for (i = 0; i < n; i++) {
		memset(&v[i], 0, VREQ);
		memcpy(&v[i], pl + REC_HDR + (size_t)i * size, size < VREQ ? size : VREQ);
	}
	p->info.rx_records += n;
	l->st.records_rx += n;
	for (i = 0; i < n; i++) {
		why = NULL;
		if (v[i].seq > hi && l->cb.check_record)
			why = l->cb.check_record(l->cb.ctx, p, &v[i]);
		if (v[i].seq > hi && !why) {
			hi = v[i].seq;
			continue;
		}
		/* a duplicate or a refused record ends the run before it */
		if (deliver(p, v + start, i - start, hi))
			return;
		start = i + 1;
		if (why) {
			bad_record(p, &v[i], why);
			hi = v[i].seq;
			continue;
		}
		p->info.dup_records++;
		l->st.records_dup++;
		p->due |= hi ? DUE_ACK : 0;
	}
	deliver(p, v + start, n - start, hi);
}

static void on_ack(struct link_peer *p, const void *pl)
{
	struct link *l = p->l;
	uint64_t a;

	memcpy(&a, pl, sizeof(a));
	if (a >= l->next_seq)
		a = l->next_seq - 1; /* never assigned: ignore the excess */
	if (a >= l->first_seq) {
		l->st.records_acked += a - l->first_seq + 1;
		l->first_seq = a + 1;
	}
	if (a > p->info.acked)
		p->info.acked = a;
	if (a > l->acked)
		l->acked = a;
}

static void on_filter(struct link_peer *p, const void *pl)
{
	struct link *l = p->l;
	struct link_filter f;

	memcpy(&f, pl, sizeof(f));
	if (f.nr_serials > LINK_FILTER_MAX || f.nr_pids > LINK_FILTER_MAX) {
		proto_err(p, "FILTER with %u serials, %u pids (at most %d)", f.nr_serials,
			  f.nr_pids, LINK_FILTER_MAX);
		return;
	}
	p->info.filter = f;
	p->info.has_filter = 1;
	if (l->cb.on_filter)
		l->cb.on_filter(l->cb.ctx, p, &p->info.filter);
}

static void on_frame(struct link_peer *p, const struct link_frame_hdr *h, const void *pl)
{
	int host = !is_guest(p->l);
	struct link_ping pg;

	if (h->type == LINK_AUTH && p->state != P_AUTH) {
		proto_err(p, "AUTH %s", p->state == P_UP ? "twice" : "before HELLO");
		return;
	}
	if (h->type != LINK_HELLO && h->type != LINK_AUTH && p->state != P_UP) {
		proto_err(p, "%s before %s", link_msg_name(h->type),
			  p->state == P_AUTH ? "AUTH" : "HELLO");
		return;
	}
	/* records and filters go to a host, acks to a guest */
	if ((h->type == LINK_RECORDS || h->type == LINK_FILTER) ? !host :
								  h->type == LINK_ACK && host) {
		proto_err(p, "%s sent to a %s", link_msg_name(h->type), host ? "host" : "guest");
		return;
	}
	switch (h->type) {
	case LINK_HELLO:
		on_hello(p, pl, h->len);
		break;
	case LINK_AUTH:
		on_auth(p, pl);
		break;
	case LINK_PING:
		memcpy(&p->pong, pl, sizeof(p->pong));
		p->pong.t2 = it_mono_ns(); /* receipt: as close to the read as we get */
		p->due |= DUE_PONG;
		break;
	case LINK_PONG:
		memcpy(&pg, pl, sizeof(pg));
		link_clock_add(&p->info.clock, pg.t1, pg.t2, pg.t3, it_mono_ns());
		break;
	case LINK_FILTER:
		on_filter(p, pl);
		break;
	case LINK_RECORDS:
		on_records(p, pl);
		break;
	case LINK_ACK:
		on_ack(p, pl);
		break;
	case LINK_BYE:
		lk_peer_close(p, lk_why_bye);
		break;
	}
}

/* Handle every whole frame in rx. -1 when the peer got closed. */
static int peer_parse(struct link_peer *p)
{
	struct link_frame_hdr h;
	const void *pl;
	const char *why;
	size_t off = 0;
	int r;

	while (p->state != P_DEAD) {
		r = link_decode(p->rx + off, p->rx_len - off, &h, &pl, &why);
		if (!r)
			break;
		if (r < 0) {
			p->l->st.malformed++;
			lk_peer_close(p, why);
			break;
		}
		p->l->st.frames_rx++;
		off += (size_t)r;
		on_frame(p, &h, pl);
	}
	if (p->state == P_DEAD)
		return -1;
	memmove(p->rx, p->rx + off, p->rx_len - off);
	p->rx_len -= off;
	return 0;
}

static void peer_read(struct link_peer *p, uint32_t ev)
{
	ssize_t n;
	int i;

	for (i = 0; i < READS_PER_RUN; i++) {
		n = read(p->ep.fd, p->rx + p->rx_len, RX_CAP - p->rx_len);
		if (n > 0) {
			p->rx_len += (size_t)n;
			p->l->st.bytes_rx += (uint64_t)n;
			p->last_rx = p->l->now;
			if (peer_parse(p))
				return;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (ev & (EPOLLHUP | EPOLLERR))
				lk_peer_close(p, "hangup");
			return;
		}
		if (n < 0)
			lk_peer_closef(p, "read: %s", strerror(errno));
		else if (p->rx_len)
			lk_peer_close(p, "truncated frame at end of stream");
		else
			lk_peer_close(p, p->serial ? "host side not connected" : "end of stream");
		return;
	}
}

void lk_peer_event(struct link_peer *p, uint32_t ev)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (p->state == P_DEAD)
		return;
	if (p->state == P_CONNECTING) {
		if (getsockopt(p->ep.fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
			err = errno;
		if (err)
			lk_peer_closef(p, "connect: %s", strerror(err));
		else
			peer_connected(p);
		return;
	}
	if (ev & (EPOLLIN | EPOLLHUP | EPOLLERR))
		peer_read(p, ev);
	if (p->state != P_DEAD && (ev & EPOLLOUT))
		lk_peer_flush(p);
}
