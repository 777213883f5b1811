// SPDX-License-Identifier: GPL-2.0
/*
 * link, a peer's output half (link.c's notes on the structure): closing a
 * peer, the rate-limited log, the control frames due (hello, auth, filter,
 * ack, pong, ping, heartbeat) and the outbox's records encoded into the tx
 * buffer, written when the socket takes them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/clock.h"
#include "mode/link_int.h"

/* ---- peers: close, output ---- */

void lk_peer_close(struct link_peer *p, const char *why)
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
	if (!p->quiet && (!p->dial || p->info.hello_done)) {
		if (why == lk_why_bye || why == lk_why_closed)
			lk_log(l, "link: peer %d (%s): closed: %s", p->info.id, p->info.addr, why);
		else
			lk_warn(l, "link: peer %d (%s): closed: %s", p->info.id, p->info.addr, why);
	}
	if (p->dial && !l->freeing)
		lk_dial_retry(l, p->dial, why, p->info.hello_done);
	if (was_up && l->cb.on_down && !l->freeing)
		l->cb.on_down(l->cb.ctx, p, why);
}

__attribute__((format(printf, 2, 3))) void lk_peer_closef(struct link_peer *p, const char *fmt, ...)
{
	char why[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	lk_peer_close(p, why);
}

/*
 * One log line per log_every_ns at most; the count of lines left out since
 * the last one goes at its end. Returns 1 when the line was written.
 */
__attribute__((format(printf, 3, 4))) int lk_limited(struct link *l, struct ratelog *r,
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
	lk_warn(l, "%s%s", line, more);
	r->suppressed = 0;
	r->next = l->now + l->o.log_every_ns;
	return 1;
}

/* Refuse a peer before it is up: counted, logged rate-limited, closed. */
__attribute__((format(printf, 2, 3))) void lk_refuse(struct link_peer *p, const char *fmt, ...)
{
	struct link *l = p->l;
	char why[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	l->st.refused++;
	if (!p->dial) /* a dial logs each new failure once itself */
		lk_limited(l, &l->refuse_log, "link: peer %d (%s): refused: %s (%llu refused)",
			   p->info.id, p->info.addr, why, (unsigned long long)l->st.refused);
	p->quiet = 1;
	lk_peer_closef(p, "refused: %s", why);
}

void lk_tx_compact(struct link_peer *p)
{
	if (!p->tx_off)
		return;
	memmove(p->tx, p->tx + p->tx_off, p->tx_len - p->tx_off);
	p->tx_len -= p->tx_off;
	p->tx_off = 0;
}

int lk_put_frame(struct link_peer *p, uint16_t type, const void *pl, uint32_t len)
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
int lk_auth_required(const struct link_peer *p)
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
	h->caps = LINK_CAP_VREQ | LINK_CAP_FILTER | LINK_CAP_ACK | (l->o.caps & LINK_CAP_GPA) |
		  (l->key.len ? LINK_CAP_AUTH : 0) | (lk_auth_required(p) ? LINK_CAP_AUTH_REQ : 0);
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
		return lk_put_frame(p, LINK_HELLO, &p->my_hello, sizeof(p->my_hello));
	case DUE_AUTH:
		fill_auth(p, &u.a);
		return lk_put_frame(p, LINK_AUTH, &u.a, sizeof(u.a));
	case DUE_FILTER:
		return lk_put_frame(p, LINK_FILTER, &l->filter, sizeof(l->filter));
	case DUE_ACK:
		u.ack = p->sess >= 0 ? l->sess[p->sess].delivered : 0;
		p->info.acked = u.ack;
		return lk_put_frame(p, LINK_ACK, &u.ack, sizeof(u.ack));
	case DUE_PONG:
		u.pg = p->pong;
		u.pg.t3 = it_mono_ns();
		return lk_put_frame(p, LINK_PONG, &u.pg, sizeof(u.pg));
	case DUE_PING:
		u.pg.id = ++p->ping_id;
		u.pg.t1 = it_mono_ns();
		return lk_put_frame(p, LINK_PING, &u.pg, sizeof(u.pg));
	}
	fill_heartbeat(p, &u.hb);
	return lk_put_frame(p, LINK_HEARTBEAT, &u.hb, sizeof(u.hb));
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

/*
 * Copy n outbox records starting at seq into dst (the ring may wrap), size
 * bytes of each: all of it, or the 144 bytes a peer without LINK_CAP_GPA reads.
 */
static void outbox_copy(const struct link *l, uint64_t seq, uint32_t n, uint8_t *dst, uint32_t size)
{
	uint64_t cap = l->o.outbox, i = (seq - 1) % cap;
	uint64_t first = n < cap - i ? n : cap - i;

	if (size == VREQ) {
		memcpy(dst, &l->outbox[i], first * VREQ);
		memcpy(dst + first * VREQ, l->outbox, (n - first) * VREQ);
		return;
	}
	for (uint64_t k = 0; k < n; k++)
		memcpy(dst + k * size, &l->outbox[(i + k) % cap], size);
}

/* The record size a peer reads: ours when its HELLO has LINK_CAP_GPA, else v2's. */
static uint32_t peer_rec_size(const struct link_peer *p)
{
	return (p->peer_hello.caps & LINK_CAP_GPA) ? (uint32_t)VREQ : LINK_VREQ_V2_LEN;
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
	uint32_t size = peer_rec_size(p), len = REC_HDR + n * size;
	uint32_t word = size == LINK_VREQ_V2_LEN ? 0 : size; /* 0: what a v2 peer reads */
	uint64_t last = p->send_seq + n - 1;

	memcpy(pl, &n, sizeof(n));
	memcpy(pl + 4, &word, sizeof(word));
	outbox_copy(l, p->send_seq, n, pl + REC_HDR, size);
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
int lk_peer_write(struct link_peer *p)
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
			lk_peer_closef(p, "write: %s", strerror(errno));
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
void lk_peer_arm(struct link_peer *p)
{
	int want = p->state == P_CONNECTING || p->tx_len > p->tx_off || records_pending(p) ||
		   (p->due && p->state != P_DEAD);
	uint32_t ev = EPOLLIN | (want ? EPOLLOUT : 0);

	if (p->state != P_DEAD && ev != p->ep.events)
		lk_ep_ctl(p->l, &p->ep, EPOLL_CTL_MOD, ev);
}

void lk_peer_flush(struct link_peer *p)
{
	int i;

	for (i = 0; i < FLUSH_ROUNDS && p->state >= P_HELLO && p->state <= P_UP; i++) {
		lk_tx_compact(p);
		fill_ctrl(p);
		fill_records(p);
		if (p->tx_len == p->tx_off || lk_peer_write(p) < 0 || p->tx_len)
			break;
	}
	lk_peer_arm(p);
}
