// SPDX-License-Identifier: GPL-2.0
/*
 * link: the guest <-> host protocol (link.h, docs/link.md).
 *
 * Structure (one module in five files sharing link_int.h: a peer's output,
 * linkout.c; its input, linkin.c; framing and the clock estimator,
 * linkframe.c; listeners and dials, linknet.c; here the link itself):
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

const char lk_why_bye[] = "peer said BYE";
const char lk_why_closed[] = "link closed";

static void lk_vlog(struct link *l, int warn, const char *fmt, va_list ap)
{
	void (*fn)(void *ctx, const char *line) = warn && l->cb.warn ? l->cb.warn : l->cb.log;
	char line[320];

	if (!fn || l->freeing)
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	fn(l->cb.ctx, line);
}

__attribute__((format(printf, 2, 3))) void lk_log(struct link *l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	lk_vlog(l, 0, fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 2, 3))) void lk_warn(struct link *l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	lk_vlog(l, 1, fmt, ap);
	va_end(ap);
}

int lk_ep_ctl(struct link *l, struct ep *e, int op, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = e };

	if (epoll_ctl(l->epfd, op, e->fd, &ev) < 0)
		return -errno;
	e->events = events;
	return 0;
}

/* ---- dial ---- */

void lk_dial_retry(struct link *l, struct dial *d, const char *why, int logged)
{
	if (!logged && strcmp(d->last_why, why))
		lk_warn(l, "link: %s: %s (retrying, backoff %llu ms)", d->name, why,
			(unsigned long long)(d->backoff / MS));
	snprintf(d->last_why, sizeof(d->last_why), "%s", why);
	d->peer = NULL;
	d->next_try = l->now + d->backoff;
	d->backoff = d->backoff * 2 > l->o.backoff_max_ns ? l->o.backoff_max_ns : d->backoff * 2;
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
		l->scratch = malloc(REC_RX_MAX * VREQ);
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
			lk_tx_compact(p);
			if (!lk_put_frame(p, LINK_BYE, NULL, 0))
				lk_peer_write(p);
		}
		lk_peer_close(p, lk_why_closed);
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
		lk_peer_close(p, "timeout");
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
				lk_peer_event(container_of(e, struct link_peer, ep), ev[i].events);
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
			lk_peer_flush(p);
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
			lk_peer_arm(p);
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
		lk_peer_flush(p);
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
