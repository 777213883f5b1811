// SPDX-License-Identifier: GPL-2.0
/*
 * link: the guest <-> host protocol (link.h, docs/link.md).
 *
 * Structure (framing and the clock estimator: linkframe.c; listeners and
 * dials: linknet.c; the state shared with it: link_int.h):
 * - endpoints registered in one epoll fd, each starting with struct ep:
 *   listeners (accept) and peers (one connection each);
 * - a peer has an rx buffer (one whole frame at most), a bounded tx buffer,
 *   and a bitmask of control frames due (hello, filter, ack, pong, ping,
 *   heartbeat) that are encoded when the tx buffer has room, control first,
 *   records after (records never take the last TX_CTRL_RESERVE bytes);
 * - a dial keeps one peer up, reconnecting with exponential backoff;
 * - guest: an outbox ring of records, seq s in slot (s - 1) % cap, holding
 *   the contiguous range [first_seq, next_seq) of unacknowledged records;
 * - host: a table of sessions (guest session id -> highest seq delivered),
 *   kept across reconnects, least recently used idle entry evicted.
 * A closed peer is only marked dead (its fd closed) and freed at the end of
 * link_run(), so pending epoll events never point to freed memory.
 */
#include <errno.h>
#include <sys/socket.h> /* before linux/vm_sockets.h: older uapi headers need struct sockaddr */
#include <linux/vm_sockets.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <unistd.h>

#include "lib/clock.h"
#include "mode/link_int.h"

__attribute__((format(printf, 2, 3))) void lk_log(struct link *l, const char *fmt, ...)
{
	char line[320];
	va_list ap;

	if (!l->cb.log || l->freeing)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	l->cb.log(l->cb.ctx, line);
}

int lk_ep_ctl(struct link *l, struct ep *e, int op, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = e };

	if (epoll_ctl(l->epfd, op, e->fd, &ev) < 0)
		return -errno;
	e->events = events;
	return 0;
}

static int is_guest(const struct link *l)
{
	return l->o.role == LINK_ROLE_GUEST;
}

static const char *role_name(unsigned int role)
{
	return role == LINK_ROLE_GUEST ? "guest" : role == LINK_ROLE_HOST ? "host" : "?";
}

/* ---- dial ---- */

void lk_dial_retry(struct link *l, struct dial *d, const char *why, int logged)
{
	if (!logged && strcmp(d->last_why, why))
		lk_log(l, "link: %s: %s (retrying, backoff %llu ms)", d->name, why,
		       (unsigned long long)(d->backoff / MS));
	snprintf(d->last_why, sizeof(d->last_why), "%s", why);
	d->peer = NULL;
	d->next_try = l->now + d->backoff;
	d->backoff = d->backoff * 2 > l->o.backoff_max_ns ? l->o.backoff_max_ns : d->backoff * 2;
}

/* ---- peers: close, output ---- */

static void peer_close(struct link_peer *p, const char *why)
{
	struct link *l = p->l;
	int was_up = p->state == P_UP;

	if (p->state == P_DEAD)
		return;
	if (p->state != P_CONNECTING)
		l->st.disconnects++;
	p->state = P_DEAD;
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, p->ep.fd, NULL);
	close(p->ep.fd);
	p->ep.fd = -1;
	if (p->sess >= 0) {
		l->sess[p->sess].refs--;
		l->sess[p->sess].last_used = l->now;
	}
	if (!p->quiet && (!p->dial || p->info.hello_done))
		lk_log(l, "link: peer %d (%s): closed: %s", p->info.id, p->info.addr, why);
	if (p->dial && !l->freeing)
		lk_dial_retry(l, p->dial, why, p->info.hello_done);
	if (was_up && l->cb.on_down && !l->freeing)
		l->cb.on_down(l->cb.ctx, p, why);
}

static __attribute__((format(printf, 2, 3))) void peer_closef(struct link_peer *p, const char *fmt,
							      ...)
{
	char why[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	peer_close(p, why);
}

/*
 * One log line per log_every_ns at most; the count of lines left out since
 * the last one goes at its end. Returns 1 when the line was written.
 */
static __attribute__((format(printf, 3, 4))) int lg_limited(struct link *l, struct ratelog *r,
							    const char *fmt, ...)
{
	char line[256], more[48] = "";
	va_list ap;

	if (l->now < r->next) {
		r->suppressed++;
		return 0;
	}
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (r->suppressed)
		snprintf(more, sizeof(more), " (+%llu more not logged)",
			 (unsigned long long)r->suppressed);
	lk_log(l, "%s%s", line, more);
	r->suppressed = 0;
	r->next = l->now + l->o.log_every_ns;
	return 1;
}

/* Refuse a peer before it is up: counted, logged rate-limited, closed. */
static __attribute__((format(printf, 2, 3))) void refuse(struct link_peer *p, const char *fmt, ...)
{
	struct link *l = p->l;
	char why[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	l->st.refused++;
	if (!p->dial) /* a dial logs each new failure once itself */
		lg_limited(l, &l->refuse_log, "link: peer %d (%s): refused: %s (%llu refused)",
			   p->info.id, p->info.addr, why, (unsigned long long)l->st.refused);
	p->quiet = 1;
	peer_closef(p, "refused: %s", why);
}

#define proto_err(p, fmt, ...)                                         \
	do {                                                           \
		(p)->l->st.malformed++;                                \
		peer_closef(p, "protocol error: " fmt, ##__VA_ARGS__); \
	} while (0)

static void tx_compact(struct link_peer *p)
{
	if (!p->tx_off)
		return;
	memmove(p->tx, p->tx + p->tx_off, p->tx_len - p->tx_off);
	p->tx_len -= p->tx_off;
	p->tx_off = 0;
}

static int put_frame(struct link_peer *p, uint16_t type, const void *pl, uint32_t len)
{
	int r = link_encode(p->tx + p->tx_len, TX_CAP - p->tx_len, type, pl, len);

	if (r < 0)
		return r;
	p->tx_len += (size_t)r;
	p->l->st.frames_tx++;
	return 0;
}

/*
 * With a key, tcp and unix connections must authenticate, except a unix
 * socket the host dialed (QEMU's chardev of a virtio-serial port: the guest
 * end is a serial port, and the socket is the one the host was told to use).
 * vsock and serial peers are named by the hypervisor (CID, port) instead.
 */
static int auth_required(const struct link_peer *p)
{
	enum addr_kind t = p->info.transport;

	return p->l->key.len &&
	       (t == ADDR_TCP || (t == ADDR_UNIX && (p->info.accepted || is_guest(p->l))));
}

static void fill_hello(struct link_peer *p, struct link_hello *h)
{
	struct link *l = p->l;

	memset(h, 0, sizeof(*h));
	h->version = LINK_VERSION;
	h->role = (uint8_t)l->o.role;
	h->caps = LINK_CAP_VREQ | LINK_CAP_FILTER | LINK_CAP_ACK |
		  (l->key.len ? LINK_CAP_AUTH : 0) | (auth_required(p) ? LINK_CAP_AUTH_REQ : 0);
	h->session = l->session;
	h->next_seq = is_guest(l) ? l->first_seq : 0;
	memcpy(h->name, l->name, sizeof(h->name));
	linkauth_nonce(h->nonce);
}

/* Our AUTH: signed as our role over (guest's HELLO, host's HELLO). */
static void fill_auth(struct link_peer *p, struct link_auth *a)
{
	struct link *l = p->l;
	const struct link_hello *g = is_guest(l) ? &p->my_hello : &p->peer_hello;
	const struct link_hello *h = is_guest(l) ? &p->peer_hello : &p->my_hello;

	linkauth_mac(&l->key, (uint8_t)l->o.role, g, h, sizeof(*g), a->mac);
}

static void fill_heartbeat(struct link_peer *p, struct link_heartbeat *hb)
{
	struct link *l = p->l;

	hb->now = it_mono_ns();
	if (is_guest(l)) {
		hb->sent = l->st.records_sent;
		hb->dropped = l->st.records_dropped;
		hb->acked = l->acked;
	} else {
		hb->sent = p->info.rx_records;
		hb->acked = p->sess >= 0 ? l->sess[p->sess].delivered : 0;
	}
}

/* Encode one due control frame. 0 or -ENOSPC. */
static int emit(struct link_peer *p, unsigned int bit)
{
	struct link *l = p->l;
	union {
		struct link_auth a;
		struct link_ping pg;
		struct link_heartbeat hb;
		uint64_t ack;
	} u;

	memset(&u, 0, sizeof(u));
	switch (bit) {
	case DUE_HELLO:
		fill_hello(p, &p->my_hello);
		return put_frame(p, LINK_HELLO, &p->my_hello, sizeof(p->my_hello));
	case DUE_AUTH:
		fill_auth(p, &u.a);
		return put_frame(p, LINK_AUTH, &u.a, sizeof(u.a));
	case DUE_FILTER:
		return put_frame(p, LINK_FILTER, &l->filter, sizeof(l->filter));
	case DUE_ACK:
		u.ack = p->sess >= 0 ? l->sess[p->sess].delivered : 0;
		p->info.acked = u.ack;
		return put_frame(p, LINK_ACK, &u.ack, sizeof(u.ack));
	case DUE_PONG:
		u.pg = p->pong;
		u.pg.t3 = it_mono_ns();
		return put_frame(p, LINK_PONG, &u.pg, sizeof(u.pg));
	case DUE_PING:
		u.pg.id = ++p->ping_id;
		u.pg.t1 = it_mono_ns();
		return put_frame(p, LINK_PING, &u.pg, sizeof(u.pg));
	}
	fill_heartbeat(p, &u.hb);
	return put_frame(p, LINK_HEARTBEAT, &u.hb, sizeof(u.hb));
}

static void fill_ctrl(struct link_peer *p)
{
	unsigned int bit;

	for (bit = DUE_HELLO; bit <= DUE_HB; bit <<= 1) {
		if (!(p->due & bit))
			continue;
		if (emit(p, bit))
			break;
		p->due &= ~bit;
	}
}

/* Copy n outbox records starting at seq into dst (the ring may wrap). */
static void outbox_copy(const struct link *l, uint64_t seq, uint32_t n, void *dst)
{
	uint64_t cap = l->o.outbox, i = (seq - 1) % cap;
	uint64_t first = n < cap - i ? n : cap - i;

	memcpy(dst, &l->outbox[i], first * VREQ);
	memcpy((char *)dst + first * VREQ, l->outbox, (n - first) * VREQ);
}

static int records_pending(const struct link_peer *p)
{
	const struct link *l = p->l;

	return is_guest(l) && p->state == P_UP &&
	       (p->send_seq < l->next_seq && l->first_seq < l->next_seq);
}

/* One RECORDS frame of n records from p->send_seq at the end of tx. */
static void put_records(struct link_peer *p, uint32_t n)
{
	struct link *l = p->l;
	uint8_t *f = p->tx + p->tx_len, *pl = f + HDR;
	uint32_t len = REC_HDR + n * (uint32_t)VREQ, pad = 0;
	uint64_t last = p->send_seq + n - 1;

	memcpy(pl, &n, sizeof(n));
	memcpy(pl + 4, &pad, sizeof(pad));
	outbox_copy(l, p->send_seq, n, pl + REC_HDR);
	/* the payload is in place already: link_encode() only adds the header */
	p->tx_len += (size_t)link_encode(f, TX_CAP - p->tx_len, LINK_RECORDS, pl, len);
	l->st.frames_tx++;
	l->st.records_sent += n;
	if (l->sent_hi >= p->send_seq)
		l->st.records_resent += (l->sent_hi < last ? l->sent_hi : last) - p->send_seq + 1;
	if (last > l->sent_hi)
		l->sent_hi = last;
	p->send_seq = last + 1;
}

static void fill_records(struct link_peer *p)
{
	struct link *l = p->l;
	const size_t overhead = TX_CTRL_RESERVE + HDR + REC_HDR;
	uint64_t n, fit;

	if (!is_guest(l) || p->state != P_UP)
		return;
	if (p->send_seq < l->first_seq)
		p->send_seq = l->first_seq; /* the ones in between were dropped */
	while (p->send_seq < l->next_seq && TX_CAP - p->tx_len >= overhead + VREQ) {
		fit = (TX_CAP - p->tx_len - overhead) / VREQ;
		n = l->next_seq - p->send_seq;
		n = n < REC_MAX ? n : REC_MAX;
		put_records(p, (uint32_t)(n < fit ? n : fit));
	}
}

/* Write as much of tx as the fd takes. -1 when the peer got closed. */
static int peer_write(struct link_peer *p)
{
	ssize_t n;

	while (p->tx_off < p->tx_len) {
		if (p->serial)
			n = write(p->ep.fd, p->tx + p->tx_off, p->tx_len - p->tx_off);
		else
			n = send(p->ep.fd, p->tx + p->tx_off, p->tx_len - p->tx_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n < 0) {
			peer_closef(p, "write: %s", strerror(errno));
			return -1;
		}
		p->tx_off += (size_t)n;
		p->l->st.bytes_tx += (uint64_t)n;
	}
	if (p->tx_off == p->tx_len)
		p->tx_off = p->tx_len = 0;
	return 0;
}

/* Wait for EPOLLOUT only while there is something to write. */
static void peer_arm(struct link_peer *p)
{
	int want = p->state == P_CONNECTING || p->tx_len > p->tx_off || records_pending(p) ||
		   (p->due && p->state != P_DEAD);
	uint32_t ev = EPOLLIN | (want ? EPOLLOUT : 0);

	if (p->state != P_DEAD && ev != p->ep.events)
		lk_ep_ctl(p->l, &p->ep, EPOLL_CTL_MOD, ev);
}

static void peer_flush(struct link_peer *p)
{
	int i;

	for (i = 0; i < FLUSH_ROUNDS && p->state >= P_HELLO && p->state <= P_UP; i++) {
		tx_compact(p);
		fill_ctrl(p);
		fill_records(p);
		if (p->tx_len == p->tx_off || peer_write(p) < 0 || p->tx_len)
			break;
	}
	peer_arm(p);
}

/* ---- peers: creation, input ---- */

static void peer_connected(struct link_peer *p)
{
	p->state = P_HELLO;
	p->l->st.connects++;
	p->last_rx = p->l->now;
	p->due = DUE_HELLO;
	peer_flush(p);
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
		peer_close(p, "out of memory");
		return;
	}
	/* last: what on_admit allocates is freed by on_down, called once the peer is up */
	if (l->cb.on_admit && l->cb.on_admit(l->cb.ctx, p, why, sizeof(why))) {
		refuse(p, "%s", why);
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
		refuse(p, "peer speaks version 1, we need %d (update it)", LINK_VERSION);
		return;
	}
	memcpy(&h, pl, sizeof(h));
	h.name[sizeof(h.name) - 1] = '\0';
	if (h.version < 2 || (h.role != LINK_ROLE_GUEST && h.role != LINK_ROLE_HOST) ||
	    h.role == l->o.role) {
		refuse(p, "peer speaks version %u as %s, we are %s", h.version, role_name(h.role),
		       role_name(l->o.role));
		return;
	}
	peer_key = !!(h.caps & LINK_CAP_AUTH);
	if (auth_required(p) && !peer_key) {
		refuse(p, "peer has no link key (give both sides the same --link-key)");
		return;
	}
	if ((h.caps & LINK_CAP_AUTH_REQ) && !l->key.len) {
		refuse(p, "peer wants a link key, we have none (--link-key)");
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
		refuse(p, "authentication failed (not the same --link-key)");
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
		peer_closef(p, "on_records failed (%d): records %llu..%llu not acknowledged", r,
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
	lg_limited(l, &l->bad_log, "link: peer %d (%s): record seq %llu refused: %s (%llu refused)",
		   p->info.id, p->info.addr, (unsigned long long)v->seq, why,
		   (unsigned long long)l->st.records_bad);
}

static void on_records(struct link_peer *p, const uint8_t *pl)
{
	struct link *l = p->l;
	struct link_vreq *v = l->scratch;
	uint64_t hi = l->sess[p->sess].delivered;
	uint32_t n, i, start = 0;
	const char *why;

	memcpy(&n, pl, sizeof(n));
	memcpy(v, pl + REC_HDR, (size_t)n * VREQ);
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
		peer_close(p, "peer said BYE");
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
			peer_close(p, why);
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
				peer_close(p, "hangup");
			return;
		}
		if (n < 0)
			peer_closef(p, "read: %s", strerror(errno));
		else if (p->rx_len)
			peer_close(p, "truncated frame at end of stream");
		else
			peer_close(p, p->serial ? "host side not connected" : "end of stream");
		return;
	}
}

static void peer_event(struct link_peer *p, uint32_t ev)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (p->state == P_DEAD)
		return;
	if (p->state == P_CONNECTING) {
		if (getsockopt(p->ep.fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
			err = errno;
		if (err)
			peer_closef(p, "connect: %s", strerror(err));
		else
			peer_connected(p);
		return;
	}
	if (ev & (EPOLLIN | EPOLLHUP | EPOLLERR))
		peer_read(p, ev);
	if (p->state != P_DEAD && (ev & EPOLLOUT))
		peer_flush(p);
}

/* ---- the link ---- */

static uint64_t random_u64(void)
{
	uint64_t r = 0;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
		r = it_mono_ns() ^ ((uint64_t)getpid() << 32);
	return r ? r : 1;
}

/* A write to a FIFO-like serial: path must not kill the daemon. */
static void ignore_sigpipe(void)
{
	struct sigaction sa;

	if (!sigaction(SIGPIPE, NULL, &sa) && sa.sa_handler == SIG_DFL) {
		sa.sa_handler = SIG_IGN;
		sigaction(SIGPIPE, &sa, NULL);
	}
}

static void set_defaults(struct link_opts *o)
{
	if (!o->outbox)
		o->outbox = 65536;
	if (!o->ping_ns)
		o->ping_ns = SEC;
	if (!o->heartbeat_ns)
		o->heartbeat_ns = 2 * SEC;
	if (!o->backoff_min_ns)
		o->backoff_min_ns = 100 * MS;
	if (!o->backoff_max_ns)
		o->backoff_max_ns = 5 * SEC;
	if (o->backoff_max_ns < o->backoff_min_ns)
		o->backoff_max_ns = o->backoff_min_ns;
	if (!o->log_every_ns)
		o->log_every_ns = SEC;
}

struct link *link_new(const struct link_opts *o, const struct link_cb *cb)
{
	struct link *l;

	if (!o || (o->role != LINK_ROLE_GUEST && o->role != LINK_ROLE_HOST))
		return NULL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->o = *o;
	set_defaults(&l->o);
	if (o->key && o->key->len)
		l->key = *o->key;
	l->o.key = NULL; /* not kept: our copy is wiped at link_free() */
	if (cb)
		l->cb = *cb;
	if (o->name)
		snprintf(l->name, sizeof(l->name), "%s", o->name);
	else if (gethostname(l->name, sizeof(l->name) - 1))
		snprintf(l->name, sizeof(l->name), "?");
	l->o.name = NULL; /* not kept: the caller's string may go away */
	l->session = random_u64();
	l->first_seq = l->next_seq = 1;
	l->now = it_mono_ns();
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (is_guest(l))
		l->outbox = calloc(l->o.outbox, VREQ);
	else
		l->scratch = malloc(LINK_MAX_PAYLOAD);
	if (l->epfd < 0 || (is_guest(l) ? !l->outbox : !l->scratch) || linkauth_init()) {
		link_free(l);
		return NULL;
	}
	ignore_sigpipe();
	return l;
}

static void reap(struct link *l)
{
	struct link_peer **pp = &l->peers, *p;

	while ((p = *pp)) {
		if (p->state != P_DEAD) {
			pp = &p->next;
			continue;
		}
		*pp = p->next;
		free(p->rx);
		free(p->tx);
		free(p);
	}
}

void link_free(struct link *l)
{
	struct link_peer *p;

	if (!l)
		return;
	l->freeing = 1;
	for (p = l->peers; p; p = p->next) {
		if (p->state == P_UP) {
			tx_compact(p);
			if (!put_frame(p, LINK_BYE, NULL, 0))
				peer_write(p);
		}
		peer_close(p, "link closed");
	}
	reap(l);
	lk_net_free(l);
	if (l->epfd >= 0)
		close(l->epfd);
	free(l->outbox);
	free(l->scratch);
	free(l->sess);
	keyfile_wipe(&l->key);
	free(l);
}

int link_epoll_fd(const struct link *l)
{
	return l->epfd;
}

static void peer_timers(struct link_peer *p, uint64_t now)
{
	uint64_t hb = p->l->o.heartbeat_ns, ping = p->l->o.ping_ns;

	if (now > p->last_rx + 3 * hb) {
		peer_close(p, "timeout");
		return;
	}
	if (p->state != P_UP)
		return;
	if (now >= p->next_ping) {
		p->due |= DUE_PING;
		p->pings++;
		p->next_ping =
			now + (p->pings < FAST_PINGS && ping > FAST_PING_NS ? FAST_PING_NS : ping);
	}
	if (now >= p->next_hb) {
		p->due |= DUE_HB;
		p->next_hb = now + hb;
	}
}

void link_run(struct link *l, uint64_t now_ns)
{
	struct epoll_event ev[EVENTS];
	struct link_peer *p;
	struct ep *e;
	struct dial *d;
	int i, n, round;

	l->now = now_ns;
	for (round = 0; round < FLUSH_ROUNDS; round++) {
		n = epoll_wait(l->epfd, ev, EVENTS, 0);
		for (i = 0; i < n; i++) {
			e = ev[i].data.ptr;
			if (e->kind == EP_LISTEN)
				lk_accept(l, container_of(e, struct listener, ep));
			else
				peer_event(container_of(e, struct link_peer, ep), ev[i].events);
		}
		if (n < EVENTS)
			break;
	}
	for (p = l->peers; p; p = p->next)
		if (p->state != P_DEAD)
			peer_timers(p, now_ns);
	for (d = l->dials; d; d = d->next)
		if (!d->peer && now_ns >= d->next_try)
			lk_dial_start(l, d);
	for (p = l->peers; p; p = p->next)
		if (p->state >= P_HELLO && p->state <= P_UP)
			peer_flush(p);
	reap(l);
}

uint64_t link_next_deadline(const struct link *l)
{
	const struct link_peer *p;
	const struct dial *d;
	uint64_t t = UINT64_MAX;

#define EARLIER(x) (t = (x) < t ? (x) : t)
	for (p = l->peers; p; p = p->next) {
		if (p->state == P_DEAD)
			continue;
		EARLIER(p->last_rx + 3 * l->o.heartbeat_ns + 1);
		if (p->state == P_UP) {
			EARLIER(p->next_ping);
			EARLIER(p->next_hb);
		}
	}
	for (d = l->dials; d; d = d->next)
		if (!d->peer)
			EARLIER(d->next_try);
#undef EARLIER
	return t;
}

uint32_t link_send_vreqs(struct link *l, const struct link_vreq *v, uint32_t n)
{
	uint64_t cap = l->o.outbox;
	struct link_vreq *slot;
	struct link_peer *p;
	uint32_t i, dropped = 0;

	if (!is_guest(l))
		return 0;
	for (i = 0; i < n; i++) {
		if (l->next_seq - l->first_seq == cap) {
			l->first_seq++; /* the oldest unacknowledged one goes */
			dropped++;
		}
		slot = &l->outbox[(l->next_seq - 1) % cap];
		*slot = v[i];
		slot->seq = l->next_seq++;
	}
	l->st.records_dropped += dropped;
	/* written from the next link_run(): EPOLLOUT wakes the daemon for it */
	for (p = l->peers; p; p = p->next)
		if (p->state == P_UP)
			peer_arm(p);
	return dropped;
}

void link_set_filter(struct link *l, const struct link_filter *f)
{
	struct link_peer *p;

	if (!is_guest(l))
		return;
	memset(&l->filter, 0, sizeof(l->filter));
	if (f)
		l->filter = *f;
	l->has_filter = 1;
	for (p = l->peers; p; p = p->next) {
		if (p->state != P_UP)
			continue;
		p->due |= DUE_FILTER;
		peer_flush(p);
	}
}

struct link_peer *link_next_peer(struct link *l, struct link_peer *prev)
{
	struct link_peer *p = prev ? prev->next : l->peers;

	while (p && p->state == P_DEAD)
		p = p->next;
	return p;
}

const struct link_peer_info *link_peer_info(const struct link_peer *p)
{
	return &p->info;
}

void link_peer_set_user(struct link_peer *p, void *user)
{
	p->user = user;
}

void *link_peer_user(const struct link_peer *p)
{
	return p->user;
}

void link_get_stats(const struct link *l, struct link_stats *s)
{
	*s = l->st;
	s->outbox_len = l->next_seq - l->first_seq;
}
