/* SPDX-License-Identifier: GPL-2.0 */
/*
 * link internals: one module in five files (link.c, the link: new, run, free,
 * the outbox; linkout.c, a peer's output; linkin.c, a peer's input;
 * linkframe.c, framing and the clock; linknet.c, listeners, dials, serial
 * ports), which call one another through this header. Not for other
 * modules: they use link.h.
 */
#ifndef IT_LINK_INT_H
#define IT_LINK_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "mode/link.h"

#define MS 1000000ULL
#define SEC 1000000000ULL
#define HDR sizeof(struct link_frame_hdr)
#define REC_HDR 8u /* RECORDS payload: u32 count, u32 record size (0: LINK_VREQ_V2_LEN) */
#define VREQ sizeof(struct link_vreq)
#define REC_MAX ((LINK_MAX_PAYLOAD - REC_HDR) / VREQ)
/* Records of one RECORDS frame at most (of the shortest size), as the receiver holds them. */
#define REC_RX_MAX ((LINK_MAX_PAYLOAD - REC_HDR) / LINK_VREQ_V2_LEN)
/* Largest record size a RECORDS frame may say: a newer sender's fields beyond ours are skipped. */
#define REC_SIZE_MAX 4096u
/* The record size a RECORDS payload says (its second word; 0: LINK_VREQ_V2_LEN). */
uint32_t link_rec_size(const void *records_payload);
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
	enum addr_kind kind;
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

/* P_AUTH: the peer's HELLO is in, its AUTH is awaited (both sides have a key) */
enum pstate { P_CONNECTING = 1, P_HELLO, P_AUTH, P_UP, P_DEAD };

/* Control frames due, emitted in this order. */
enum {
	DUE_HELLO = 1 << 0,
	DUE_AUTH = 1 << 1,
	DUE_FILTER = 1 << 2,
	DUE_ACK = 1 << 3,
	DUE_PONG = 1 << 4,
	DUE_PING = 1 << 5,
	DUE_HB = 1 << 6,
};

/* A log line at most every log_every_ns; the ones in between are counted. */
struct ratelog {
	uint64_t next;
	uint64_t suppressed;
};

struct link_peer {
	struct ep ep;
	struct link *l;
	struct link_peer *next;
	struct dial *dial; /* the dial that made it, NULL when accepted */
	enum pstate state;
	int serial; /* character device: read()/write() */
	struct link_peer_info info;
	void *user; /* link_peer_set_user() */
	int quiet; /* refused: its close was logged (rate-limited) already */
	struct link_hello my_hello, peer_hello; /* as sent / received: what AUTH MACs */
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
	struct link_key key; /* len 0: no authentication */
	struct ratelog refuse_log, bad_log;
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

static inline int is_guest(const struct link *l)
{
	return l->o.role == LINK_ROLE_GUEST;
}

static inline const char *role_name(unsigned int role)
{
	return role == LINK_ROLE_GUEST ? "guest" : role == LINK_ROLE_HOST ? "host" : "?";
}

__attribute__((format(printf, 2, 3))) void lk_log(struct link *l, const char *fmt, ...);
/* A log line that says something went wrong (link_cb.warn). */
__attribute__((format(printf, 2, 3))) void lk_warn(struct link *l, const char *fmt, ...);
/* The reasons of an orderly close, logged as lk_log (every other reason: lk_warn). */
extern const char lk_why_bye[], lk_why_closed[];
int lk_ep_ctl(struct link *l, struct ep *e, int op, uint32_t events);
/* A dial's connection failed or ended: retry after its backoff (logged once per reason). */
void lk_dial_retry(struct link *l, struct dial *d, const char *why, int logged);
/* A connection on fd (ss: the accepted peer's address, NULL for a dial). NULL: fd closed. */
struct link_peer *lk_peer_new(struct link *l, int fd, const char *addr, struct dial *d,
			      int connecting, int serial, const struct sockaddr_storage *ss,
			      enum addr_kind kind);

/* A peer's input (linkin.c): epoll events on its socket. */
void lk_peer_event(struct link_peer *p, uint32_t ev);

/* A peer's output (linkout.c) */
/* Close a peer (marked dead, freed at the end of link_run()), telling on_down. */
void lk_peer_close(struct link_peer *p, const char *why);
__attribute__((format(printf, 2, 3))) void lk_peer_closef(struct link_peer *p, const char *fmt,
							  ...);
/*
 * One log line per log_every_ns at most; the count of lines left out since
 * the last one goes at its end. Returns 1 when the line was written.
 */
__attribute__((format(printf, 3, 4))) int lk_limited(struct link *l, struct ratelog *r,
						     const char *fmt, ...);
/* Refuse a peer before it is up: counted, logged rate-limited, closed. */
__attribute__((format(printf, 2, 3))) void lk_refuse(struct link_peer *p, const char *fmt, ...);
void lk_tx_compact(struct link_peer *p);
int lk_put_frame(struct link_peer *p, uint16_t type, const void *pl, uint32_t len);
int lk_auth_required(const struct link_peer *p);
int lk_peer_write(struct link_peer *p);
/* Ask epoll for EPOLLOUT while the tx buffer holds bytes. */
void lk_peer_arm(struct link_peer *p);
/* Encode what is due into the tx buffer and write it while the socket takes it. */
void lk_peer_flush(struct link_peer *p);

/* linknet.c */
void lk_accept(struct link *l, struct listener *ls);
void lk_dial_start(struct link *l, struct dial *d);
/* Close the listeners (unlinking the unix socket files still ours), free the dials. */
void lk_net_free(struct link *l);

#endif /* IT_LINK_INT_H */
