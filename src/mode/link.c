// SPDX-License-Identifier: GPL-2.0
/*
 * link: the guest <-> host protocol (link.h, docs/link.md).
 *
 * Structure:
 * - pure helpers: frame encode/decode, clock estimator, address parsing;
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
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/vm_sockets.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/clock.h"
#include "mode/link.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "link: the wire format is little-endian and is written as host structs"
#endif

_Static_assert(sizeof(struct link_frame_hdr) == 16, "link_frame_hdr size");
_Static_assert(sizeof(struct link_hello) == 88, "link_hello size");
_Static_assert(sizeof(struct link_ping) == 32, "link_ping size");
_Static_assert(sizeof(struct link_filter) == 648, "link_filter size");
_Static_assert(sizeof(struct link_heartbeat) == 32, "link_heartbeat size");
_Static_assert(sizeof(struct link_vreq) == 144, "link_vreq size");

#define MS 1000000ULL
#define SEC 1000000000ULL
#define HDR sizeof(struct link_frame_hdr)
#define REC_HDR 8u /* RECORDS payload: u32 count, u32 pad */
#define VREQ sizeof(struct link_vreq)
#define REC_MAX ((LINK_MAX_PAYLOAD - REC_HDR) / VREQ)
#define RX_CAP (HDR + LINK_MAX_PAYLOAD)
#define TX_CAP (4 * RX_CAP)
#define TX_CTRL_RESERVE 4096u
#define FAST_PINGS 8
#define FAST_PING_NS (100 * MS)
#define SESS_KEEP 64
#define EVENTS 64
#define READS_PER_RUN 16
#define FLUSH_ROUNDS 8
#define VPORTS "/sys/class/virtio-ports"

#define container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

/* ---- pure helpers ---- */

static const char *const msg_name[LINK_MSG_MAX] = {
	[LINK_HELLO] = "HELLO",		[LINK_PING] = "PING",	    [LINK_PONG] = "PONG",
	[LINK_FILTER] = "FILTER",	[LINK_RECORDS] = "RECORDS", [LINK_ACK] = "ACK",
	[LINK_HEARTBEAT] = "HEARTBEAT", [LINK_BYE] = "BYE",
};

static uint32_t payload_crc(const void *p, uint32_t len)
{
	return len ? (uint32_t)crc32(0L, p, len) : 0;
}

static void put_hdr(void *buf, uint16_t type, uint32_t len, uint32_t crc)
{
	struct link_frame_hdr h = {
		.magic = LINK_MAGIC, .version = LINK_VERSION, .type = type, .len = len, .crc = crc
	};

	memcpy(buf, &h, sizeof(h));
}

int link_encode(void *buf, size_t cap, uint16_t type, const void *payload, uint32_t len)
{
	if (!buf || type < LINK_HELLO || type >= LINK_MSG_MAX || len > LINK_MAX_PAYLOAD ||
	    (len && !payload))
		return -EINVAL;
	if (cap < HDR + len)
		return -ENOSPC;
	if (len)
		memmove((char *)buf + HDR, payload, len);
	put_hdr(buf, type, len, payload_crc((char *)buf + HDR, len));
	return (int)(HDR + len);
}

/* Reason when len is not a valid payload size for type, else NULL. */
static const char *bad_size(uint16_t type, uint32_t len)
{
	static const uint32_t fixed[LINK_MSG_MAX] = {
		[LINK_HELLO] = sizeof(struct link_hello),
		[LINK_PING] = sizeof(struct link_ping),
		[LINK_PONG] = sizeof(struct link_ping),
		[LINK_FILTER] = sizeof(struct link_filter),
		[LINK_ACK] = sizeof(uint64_t),
		[LINK_HEARTBEAT] = sizeof(struct link_heartbeat),
		[LINK_BYE] = 0,
	};

	if (type == LINK_RECORDS)
		return len < REC_HDR || (len - REC_HDR) % VREQ ? "bad RECORDS length" : NULL;
	return len == fixed[type] ? NULL : "bad payload length for its type";
}

static int bad_frame(const char **why, const char *reason, int err)
{
	*why = reason;
	return err;
}

int link_decode(const void *buf, size_t len, struct link_frame_hdr *hdr, const void **payload,
		const char **why)
{
	const char *unused, *reason;
	const uint8_t *pl = (const uint8_t *)buf + HDR;
	struct link_frame_hdr h;
	uint32_t magic, count;

	if (!why)
		why = &unused;
	*why = NULL;
	if (len >= sizeof(magic)) {
		memcpy(&magic, buf, sizeof(magic));
		if (magic != LINK_MAGIC)
			return bad_frame(why, "bad magic", -EPROTO);
	}
	if (len < HDR)
		return 0;
	memcpy(&h, buf, HDR);
	if (!h.version || h.version > LINK_VERSION)
		return bad_frame(why, "bad version", -EPROTO);
	if (!h.type || h.type >= LINK_MSG_MAX)
		return bad_frame(why, "bad type", -EPROTO);
	if (h.len > LINK_MAX_PAYLOAD)
		return bad_frame(why, "frame too big", -EMSGSIZE);
	reason = bad_size(h.type, h.len);
	if (reason)
		return bad_frame(why, reason, -EBADMSG);
	if (len < HDR + h.len)
		return 0;
	if (payload_crc(pl, h.len) != h.crc)
		return bad_frame(why, "bad crc", -EBADMSG);
	if (h.type == LINK_RECORDS) {
		memcpy(&count, pl, sizeof(count));
		if ((uint64_t)count * VREQ != h.len - REC_HDR)
			return bad_frame(why, "record count does not match length", -EBADMSG);
	}
	if (hdr)
		*hdr = h;
	if (payload)
		*payload = pl;
	return (int)(HDR + h.len);
}

void link_clock_add(struct link_clock *c, uint64_t t1, uint64_t t2, uint64_t t3, uint64_t t4)
{
	int64_t a = (int64_t)(t2 - t1), b = (int64_t)(t3 - t4);
	uint64_t rtt = t4 - t1, hold = t3 - t2;

	if (t4 < t1 || t3 < t2)
		return; /* not a round trip: ignored */
	/* (a + b) / 2 without overflowing the sum */
	c->off[c->next] = a / 2 + b / 2 + (a % 2 + b % 2) / 2;
	c->delay[c->next] = rtt > hold ? rtt - hold : 0;
	c->at[c->next] = t4;
	c->next = (c->next + 1) % LINK_CLOCK_WINDOW;
	if (c->n < LINK_CLOCK_WINDOW)
		c->n++;
	c->samples++;
}

int link_clock_get(const struct link_clock *c, int64_t *peer_minus_local, uint64_t *uncert_ns)
{
	unsigned int i, best = 0;

	if (!c->n)
		return -EAGAIN;
	for (i = 1; i < c->n; i++)
		if (c->delay[i] < c->delay[best] ||
		    (c->delay[i] == c->delay[best] && c->at[i] > c->at[best]))
			best = i;
	if (peer_minus_local)
		*peer_minus_local = c->off[best];
	if (uncert_ns)
		*uncert_ns = c->delay[best] / 2;
	return 0;
}

/* ---- state ---- */

enum ep_kind { EP_LISTEN = 1, EP_PEER };

struct ep { /* first member of everything registered in the epoll fd */
	enum ep_kind kind;
	int fd;
	uint32_t events;
};

struct listener {
	struct ep ep;
	struct listener *next;
	char name[128];
	int is_unix;
	char path[108];
	dev_t dev; /* of the socket file we created: unlinked at free if still ours */
	ino_t ino;
};

struct dial {
	struct dial *next;
	struct net_addr addr;
	char name[128];
	struct link_peer *peer; /* NULL while waiting to reconnect */
	uint64_t backoff, next_try;
	char last_why[96]; /* a failure repeated is logged once */
};

struct session {
	uint64_t id, delivered, last_used;
	int refs; /* peers connected under this session */
};

enum pstate { P_CONNECTING = 1, P_HELLO, P_UP, P_DEAD };

/* Control frames due, emitted in this order. */
enum {
	DUE_HELLO = 1 << 0,
	DUE_FILTER = 1 << 1,
	DUE_ACK = 1 << 2,
	DUE_PONG = 1 << 3,
	DUE_PING = 1 << 4,
	DUE_HB = 1 << 5,
};

struct link_peer {
	struct ep ep;
	struct link *l;
	struct link_peer *next;
	struct dial *dial; /* the dial that made it, NULL when accepted */
	enum pstate state;
	int serial; /* character device: read()/write() */
	struct link_peer_info info;
	unsigned int due;
	struct link_ping pong; /* the PONG being answered */
	uint64_t ping_id, pings;
	uint64_t last_rx, next_ping, next_hb;
	uint64_t send_seq; /* guest: next seq to put on this connection */
	int sess; /* host: index in link.sess, -1 before hello */
	uint8_t *rx, *tx;
	size_t rx_len, tx_off, tx_len;
};

struct link {
	struct link_opts o;
	struct link_cb cb;
	int epfd;
	int freeing;
	uint64_t now;
	uint64_t session;
	char name[64];
	int next_id;
	struct listener *lsn;
	struct dial *dials;
	struct link_peer *peers;
	struct link_stats st;
	/* guest */
	struct link_vreq *outbox;
	uint64_t first_seq, next_seq, sent_hi, acked;
	int has_filter;
	struct link_filter filter;
	/* host */
	struct session *sess;
	int nsess, capsess;
	struct link_vreq *scratch; /* aligned copy of a RECORDS payload */
};

static __attribute__((format(printf, 2, 3))) void lg(struct link *l, const char *fmt, ...)
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

static int ep_ctl(struct link *l, struct ep *e, int op, uint32_t events)
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

static void dial_retry(struct link *l, struct dial *d, const char *why, int logged)
{
	if (!logged && strcmp(d->last_why, why))
		lg(l, "link: %s: %s (retrying, backoff %llu ms)", d->name, why,
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
	if (!p->dial || p->info.hello_done)
		lg(l, "link: peer %d (%s): closed: %s", p->info.id, p->info.addr, why);
	if (p->dial && !l->freeing)
		dial_retry(l, p->dial, why, p->info.hello_done);
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

static void fill_hello(struct link *l, struct link_hello *h)
{
	h->version = LINK_VERSION;
	h->role = (uint8_t)l->o.role;
	h->caps = LINK_CAP_VREQ | LINK_CAP_FILTER | LINK_CAP_ACK;
	h->session = l->session;
	h->next_seq = is_guest(l) ? l->first_seq : 0;
	memcpy(h->name, l->name, sizeof(h->name));
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
		struct link_hello h;
		struct link_ping pg;
		struct link_heartbeat hb;
		uint64_t ack;
	} u;

	memset(&u, 0, sizeof(u));
	switch (bit) {
	case DUE_HELLO:
		fill_hello(l, &u.h);
		return put_frame(p, LINK_HELLO, &u.h, sizeof(u.h));
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
	put_hdr(f, LINK_RECORDS, len, payload_crc(pl, len));
	p->tx_len += HDR + len;
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
		ep_ctl(p->l, &p->ep, EPOLL_CTL_MOD, ev);
}

static void peer_flush(struct link_peer *p)
{
	int i;

	for (i = 0; i < FLUSH_ROUNDS && (p->state == P_HELLO || p->state == P_UP); i++) {
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

static struct link_peer *peer_new(struct link *l, int fd, const char *addr, struct dial *d,
				  int connecting, int serial)
{
	struct link_peer *p = calloc(1, sizeof(*p));

	if (p) {
		p->ep.kind = EP_PEER;
		p->ep.fd = fd;
		p->rx = malloc(RX_CAP);
		p->tx = malloc(TX_CAP);
	}
	if (!p || !p->rx || !p->tx || ep_ctl(l, &p->ep, EPOLL_CTL_ADD, EPOLLIN | EPOLLOUT)) {
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

static void on_hello(struct link_peer *p, const void *pl)
{
	struct link *l = p->l;
	struct link_hello h;
	size_t i;

	memcpy(&h, pl, sizeof(h));
	h.name[sizeof(h.name) - 1] = '\0';
	/* the name goes into log lines and JSON: printable ASCII only, never a forged line */
	for (i = 0; h.name[i]; i++)
		if ((unsigned char)h.name[i] < 0x20 || (unsigned char)h.name[i] > 0x7e)
			h.name[i] = '?';
	if (p->state == P_UP) {
		proto_err(p, "second HELLO");
		return;
	}
	if (!h.version || (h.role != LINK_ROLE_GUEST && h.role != LINK_ROLE_HOST) ||
	    h.role == l->o.role) {
		peer_closef(p, "refused: peer speaks version %u as %s, we are %s", h.version,
			    role_name(h.role), role_name(l->o.role));
		return;
	}
	if (!is_guest(l) && (p->sess = session_get(l, h.session)) < 0) {
		peer_close(p, "out of memory");
		return;
	}
	p->info.hello = h;
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
	lg(l, "link: peer %d (%s): up: %s \"%s\" session %016llx version %u", p->info.id,
	   p->info.addr, role_name(h.role), h.name, (unsigned long long)h.session,
	   h.version < LINK_VERSION ? h.version : LINK_VERSION);
	if (l->cb.on_up)
		l->cb.on_up(l->cb.ctx, p);
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

static void on_records(struct link_peer *p, const uint8_t *pl)
{
	struct link *l = p->l;
	struct link_vreq *v = l->scratch;
	uint64_t hi = l->sess[p->sess].delivered;
	uint32_t n, i, start = 0;

	memcpy(&n, pl, sizeof(n));
	memcpy(v, pl + REC_HDR, (size_t)n * VREQ);
	p->info.rx_records += n;
	l->st.records_rx += n;
	for (i = 0; i < n; i++) {
		if (v[i].seq > hi) {
			hi = v[i].seq;
			continue;
		}
		if (deliver(p, v + start, i - start, hi))
			return;
		start = i + 1;
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

	if (h->type != LINK_HELLO && p->state != P_UP) {
		proto_err(p, "%s before HELLO", msg_name[h->type]);
		return;
	}
	/* records and filters go to a host, acks to a guest */
	if ((h->type == LINK_RECORDS || h->type == LINK_FILTER) ? !host :
								  h->type == LINK_ACK && host) {
		proto_err(p, "%s sent to a %s", msg_name[h->type], host ? "host" : "guest");
		return;
	}
	switch (h->type) {
	case LINK_HELLO:
		on_hello(p, pl);
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

/* ---- listeners ---- */

static void set_nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static void lsn_accept(struct link *l, struct listener *ls)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char name[128];
	int i, fd;

	for (i = 0; i < EVENTS; i++) {
		len = sizeof(ss);
		memset(&ss, 0, sizeof(ss));
		fd = accept4(ls->ep.fd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0 && errno == EINTR)
			continue;
		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				lg(l, "link: %s: accept: %s", ls->name, strerror(errno));
			return;
		}
		if (ss.ss_family == AF_INET || ss.ss_family == AF_INET6)
			set_nodelay(fd);
		addr_sockname(&ss, ls->name, name, sizeof(name));
		peer_new(l, fd, name, NULL, 0, 0);
	}
}

/* A unix socket file nobody listens on (connect refused) is stale. */
static int unix_stale(const char *path)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, stale;

	if (lstat(path, &st) || !S_ISSOCK(st.st_mode))
		return 0;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	memcpy(un.sun_path, path, strlen(path) + 1);
	stale = connect(fd, (struct sockaddr *)&un, sizeof(un)) < 0 && errno == ECONNREFUSED;
	close(fd);
	return stale;
}

static int bind_listen(int fd, const struct net_addr *a, const struct sockaddr_storage *ss,
		       socklen_t len)
{
	int one = 1;

	if (a->kind == ADDR_TCP)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)ss, len) < 0) {
		if (errno != EADDRINUSE || a->kind != ADDR_UNIX || !unix_stale(a->path))
			return -errno;
		unlink(a->path);
		if (bind(fd, (const struct sockaddr *)ss, len) < 0)
			return -errno;
	}
	return listen(fd, 64) < 0 ? -errno : 0;
}

int link_listen(struct link *l, const struct net_addr *a)
{
	struct sockaddr_storage ss;
	struct listener *ls;
	struct stat st;
	socklen_t len;
	int fd, err;

	if (a->kind == ADDR_SERIAL)
		return -EOPNOTSUPP;
	err = addr_sockaddr(a, 1, &ss, &len);
	if (err)
		return err;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	ls = calloc(1, sizeof(*ls));
	err = ls ? bind_listen(fd, a, &ss, len) : -ENOMEM;
	if (!err) {
		ls->ep.kind = EP_LISTEN;
		ls->ep.fd = fd;
		err = ep_ctl(l, &ls->ep, EPOLL_CTL_ADD, EPOLLIN);
	}
	if (err) {
		free(ls);
		close(fd);
		return err;
	}
	addr_format(a, ls->name, sizeof(ls->name));
	if (a->kind == ADDR_UNIX && !stat(a->path, &st)) {
		ls->is_unix = 1;
		snprintf(ls->path, sizeof(ls->path), "%s", a->path);
		ls->dev = st.st_dev;
		ls->ino = st.st_ino;
	}
	ls->next = l->lsn;
	l->lsn = ls;
	lg(l, "link: listening on %s", ls->name);
	return 0;
}

/* ---- dialing ---- */

static int read_line(const char *path, char *buf, size_t n)
{
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	r = read(fd, buf, n - 1);
	close(fd);
	if (r < 0)
		return -1;
	buf[r] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* /dev/vportNpM of the virtio-serial port named name. */
static int serial_find(const char *name, char *dev, size_t n)
{
	char path[512], buf[128];
	struct dirent *de;
	DIR *dir = opendir(VPORTS);
	int found = -1;

	if (!dir)
		return -1;
	while (found && (de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), VPORTS "/%s/name", de->d_name);
		if (read_line(path, buf, sizeof(buf)) || strcmp(buf, name))
			continue;
		snprintf(dev, n, "/dev/%s", de->d_name);
		found = 0;
	}
	closedir(dir);
	return found;
}

static int serial_open(const struct net_addr *a, char *why, size_t n)
{
	char dev[300];
	int fd;

	if (a->path[0] == '/') {
		snprintf(dev, sizeof(dev), "%s", a->path);
	} else if (serial_find(a->path, dev, sizeof(dev))) {
		snprintf(why, n, "no virtio-serial port named %s", a->path);
		return -1;
	}
	fd = open(dev, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		snprintf(why, n, "open %.100s: %s", dev, strerror(errno));
	return fd;
}

static int sock_connect(const struct net_addr *a, int *connecting, char *why, size_t n)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd;

	if (addr_sockaddr(a, 0, &ss, &len)) {
		snprintf(why, n, "bad address");
		return -1;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(why, n, "socket: %s", strerror(errno));
		return -1;
	}
	if (a->kind == ADDR_TCP)
		set_nodelay(fd);
	if (!connect(fd, (struct sockaddr *)&ss, len))
		return fd;
	if (errno == EINPROGRESS) {
		*connecting = 1;
		return fd;
	}
	snprintf(why, n, "connect: %s", strerror(errno));
	close(fd);
	return -1;
}

static void dial_start(struct link *l, struct dial *d)
{
	int serial = d->addr.kind == ADDR_SERIAL, connecting = 0, fd;
	char why[160];

	if (serial)
		fd = serial_open(&d->addr, why, sizeof(why));
	else
		fd = sock_connect(&d->addr, &connecting, why, sizeof(why));
	if (fd < 0)
		dial_retry(l, d, why, 0);
	else if (!peer_new(l, fd, d->name, d, connecting, serial))
		dial_retry(l, d, "out of memory", 0);
}

int link_dial(struct link *l, const struct net_addr *a)
{
	struct sockaddr_storage ss;
	struct dial *d, **dp;
	socklen_t len;

	if (a->kind != ADDR_SERIAL && addr_sockaddr(a, 0, &ss, &len))
		return -EINVAL;
	if (a->kind == ADDR_SERIAL && !a->path[0])
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->addr = *a;
	addr_format(a, d->name, sizeof(d->name));
	d->backoff = l->o.backoff_min_ns;
	for (dp = &l->dials; *dp; dp = &(*dp)->next)
		;
	*dp = d;
	dial_start(l, d);
	return 0;
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
	if (l->epfd < 0 || (is_guest(l) ? !l->outbox : !l->scratch)) {
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
	struct listener *ls;
	struct dial *d;
	struct stat st;

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
	while ((ls = l->lsn)) {
		l->lsn = ls->next;
		close(ls->ep.fd);
		if (ls->is_unix && !lstat(ls->path, &st) && st.st_dev == ls->dev &&
		    st.st_ino == ls->ino)
			unlink(ls->path);
		free(ls);
	}
	while ((d = l->dials)) {
		l->dials = d->next;
		free(d);
	}
	if (l->epfd >= 0)
		close(l->epfd);
	free(l->outbox);
	free(l->scratch);
	free(l->sess);
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
				lsn_accept(l, container_of(e, struct listener, ep));
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
			dial_start(l, d);
	for (p = l->peers; p; p = p->next)
		if (p->state == P_HELLO || p->state == P_UP)
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

void link_get_stats(const struct link *l, struct link_stats *s)
{
	*s = l->st;
	s->outbox_len = l->next_seq - l->first_seq;
}
