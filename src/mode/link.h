/* SPDX-License-Identifier: GPL-2.0 */
/*
 * link: the guest <-> host protocol of iotracer (docs/link.md).
 *
 * One framed, versioned protocol over any stream transport: AF_VSOCK
 * (default), unix sockets, tcp, and a virtio-serial port (a character device
 * in the guest; on the host, QEMU's chardev unix socket). Pure user space,
 * libc and zlib (crc32), never blocks: every fd is non-blocking and driven by one epoll
 * fd (link_epoll_fd()) that the daemon adds to its own epoll loop.
 *
 * Roles: the guest daemon streams finished virtio requests (struct link_vreq)
 * and its filter; the host daemon receives them from several guests at once.
 * Transport direction is independent of role: a host may listen (vsock, tcp,
 * unix) or dial (QEMU's chardev socket); a guest dials (or opens its port).
 *
 * Delivery: at least once. The guest numbers records (seq 1, 2, ...) and keeps
 * each in its outbox until the host acknowledges it (ACK = highest seq the
 * host has made durable, i.e. handed to link_cb.on_records and got 0 back);
 * after a reconnect the unacknowledged ones are sent again, so the host may
 * see a record twice (same session id and seq) but never loses an acknowledged
 * one. A full outbox drops the oldest unacknowledged record and counts it.
 */
#ifndef IT_LINK_H
#define IT_LINK_H

#include <stddef.h>
#include <stdint.h>

#include "lib/addr.h"
#include "lib/keyfile.h"
#include "mode/linkauth.h"

/* ---- wire format (little-endian, packed by construction) ---- */

#define LINK_MAGIC 0x4b4c5449u /* "ITLK" as little-endian bytes */
#define LINK_VERSION 2 /* 2: nonce in HELLO, AUTH (docs/link.md) */
#define LINK_V1_HELLO_LEN 88 /* a version 1 HELLO: refused with its version named */
#define LINK_MAX_PAYLOAD (64u << 10) /* a bigger frame is malformed */
#define LINK_DEFAULT_PORT 7767
#define LINK_SERIAL_LEN 20 /* virtio-blk serial is at most 20 bytes */

enum link_msg {
	LINK_HELLO = 1, /* struct link_hello */
	LINK_PING, /* struct link_ping */
	LINK_PONG, /* struct link_ping, t2/t3 filled */
	LINK_FILTER, /* struct link_filter */
	LINK_RECORDS, /* u32 count, u32 pad, then count struct link_vreq */
	LINK_ACK, /* u64 highest durable seq */
	LINK_HEARTBEAT, /* struct link_heartbeat */
	LINK_BYE, /* empty: orderly close */
	LINK_AUTH, /* struct link_auth: HMAC of both HELLOs (linkauth.h) */
	LINK_MSG_MAX,
};

struct link_frame_hdr {
	uint32_t magic; /* LINK_MAGIC */
	uint16_t version; /* LINK_VERSION */
	uint16_t type; /* enum link_msg */
	uint32_t len; /* payload bytes after this header */
	uint32_t crc; /* crc32 (zlib polynomial) of the payload; 0 for len 0 */
};

enum link_role { LINK_ROLE_GUEST = 1, LINK_ROLE_HOST = 2 };

#define LINK_CAP_VREQ (1u << 0) /* sends/understands link_vreq records */
#define LINK_CAP_FILTER (1u << 1) /* sends/applies filter pushdown */
#define LINK_CAP_ACK (1u << 2) /* acknowledges records */
#define LINK_CAP_AUTH (1u << 3) /* holds a link key: AUTH exchanged when both do */
#define LINK_CAP_AUTH_REQ (1u << 4) /* requires the peer's AUTH on this connection */
/*
 * Records carry the guest buffer's physical address (link_vreq.gpa) and each
 * RECORDS frame says its record size (docs/link.md): a guest sends them so to
 * a host whose HELLO has this cap, the original 144-byte records otherwise;
 * a guest without it (an older iotracer, or one that could not read its
 * buffers' addresses) leaves the host on its QEMU uprobes for that VM.
 */
#define LINK_CAP_GPA (1u << 5)

struct link_hello {
	uint16_t version; /* highest protocol version spoken */
	uint8_t role; /* enum link_role */
	uint8_t pad0;
	uint32_t caps; /* LINK_CAP_* */
	uint64_t session; /* random per daemon start: names the sender */
	uint64_t next_seq; /* guest: seq of its oldest unacknowledged record */
	char name[ADDR_NAME_LEN]; /* hostname / guest name, NUL padded */
	uint8_t nonce[LINKAUTH_NONCE_LEN]; /* fresh per connection (version 2) */
};

struct link_auth {
	uint8_t mac[LINKAUTH_MAC_LEN]; /* linkauth_mac() by the sender's role */
};

struct link_ping {
	uint64_t id;
	uint64_t t1; /* sender's CLOCK_MONOTONIC at send */
	uint64_t t2; /* receiver's clock at receipt (PONG) */
	uint64_t t3; /* receiver's clock at reply (PONG) */
};

#define LINK_FILTER_MAX 16
struct link_filter {
	uint32_t nr_serials;
	uint32_t nr_pids; /* guest pids traced (informative; 0 = all) */
	char serials[LINK_FILTER_MAX][LINK_SERIAL_LEN]; /* disks that matter; 0 = all */
	uint64_t sector_lo[LINK_FILTER_MAX]; /* per serial: sector range [lo, hi) */
	uint64_t sector_hi[LINK_FILTER_MAX]; /* hi 0 = whole disk */
	uint32_t pids[LINK_FILTER_MAX];
};

struct link_heartbeat {
	uint64_t now; /* sender's clock */
	uint64_t sent; /* records sent (guest) / received (host) */
	uint64_t dropped; /* records dropped from the outbox (guest) */
	uint64_t acked; /* highest acknowledged seq */
};

/* One finished guest virtio request, all times in the guest's CLOCK_MONOTONIC. */
struct link_vreq {
	uint64_t seq; /* 1, 2, ... per guest session */
	uint64_t sector; /* 512-byte units, as the guest driver sent it */
	uint32_t nr_sectors;
	uint8_t op; /* enum it_op */
	uint8_t drv_layer; /* the bus: IT_L_VIRTIO (virtio-blk), IT_L_SCSI (scsi-hd
			      on virtio-scsi), IT_L_NVME (QEMU's nvme) */
	uint16_t flags; /* LINK_VF_* */
	char serial[LINK_SERIAL_LEN]; /* NUL padded */
	uint32_t pid, tid; /* guest submitter */
	char comm[16];
	int32_t error;
	uint32_t sys; /* enum it_sys of the parent syscall, or UINT32_MAX */
	uint32_t pad0;
	uint64_t sys_enter_ns, sys_exit_ns; /* 0 when no parent syscall */
	uint64_t q_ns, d_ns, c_ns; /* guest block: queue, issue, complete */
	uint64_t submit_ns, kick_ns, done_ns; /* guest driver: submit, own kick, done */
	/* --- LINK_CAP_GPA: absent from a 144-byte record (read as 0) --- */
	uint64_t gpa; /* physical address of the first data byte (0: not known) */
};
#define LINK_VREQ_V2_LEN 144 /* a record without gpa: RECORDS' size word 0 */
#define LINK_VF_HAS_SYS (1u << 0)
/* Through virtio, but no kick of its own: the notification was suppressed. */
#define LINK_VF_NO_KICK (1u << 1)

/* ---- pure helpers (unit-tested without sockets) ---- */

/* Append one frame to buf (capacity cap). Returns bytes written, -ENOSPC, -EINVAL. */
int link_encode(void *buf, size_t cap, uint16_t type, const void *payload, uint32_t len);

/*
 * Look at the start of a receive buffer. Returns the total frame size (header
 * + payload) when a whole valid frame is there, 0 when more bytes are needed,
 * or a negative errno for a malformed frame (-EPROTO bad magic/version/type,
 * -EMSGSIZE over LINK_MAX_PAYLOAD, -EBADMSG bad crc or payload length wrong
 * for its type); *why then points to a static one-line reason.
 */
int link_decode(const void *buf, size_t len, struct link_frame_hdr *hdr, const void **payload,
		const char **why);
/* "HELLO", "RECORDS", ... ("?" for an unknown type). */
const char *link_msg_name(uint16_t type);

/*
 * NTP-style clock offset between this side (local) and the peer, from ping
 * round trips: offset = ((t2 - t1) + (t3 - t4)) / 2 is peer - local, delay =
 * (t4 - t1) - (t3 - t2). Keeps the minimum-delay sample among the last
 * LINK_CLOCK_WINDOW; uncertainty = that sample's delay / 2.
 */
#define LINK_CLOCK_WINDOW 16
struct link_clock {
	int64_t off[LINK_CLOCK_WINDOW];
	uint64_t delay[LINK_CLOCK_WINDOW];
	uint64_t at[LINK_CLOCK_WINDOW]; /* local t4 of each sample */
	unsigned int n, next;
	uint64_t samples; /* all samples ever added */
};
void link_clock_add(struct link_clock *c, uint64_t t1, uint64_t t2, uint64_t t3, uint64_t t4);
/* Returns 0 and the best estimate, -EAGAIN when no sample yet. */
int link_clock_get(const struct link_clock *c, int64_t *peer_minus_local, uint64_t *uncert_ns);

/* ---- connections ---- */

struct link;
struct link_peer; /* one connection (host: one per guest) */

struct link_peer_info {
	int id; /* small integer, unique within the link while connected */
	char addr[128]; /* printable peer address */
	int hello_done;
	struct link_hello hello; /* the peer's hello */
	struct link_clock clock;
	int has_filter;
	struct link_filter filter; /* the peer's latest filter (host side) */
	uint64_t rx_records, dup_records; /* host: records received; seen twice */
	uint64_t bad_records; /* host: refused by link_cb.check_record */
	uint64_t acked; /* guest: highest seq the host acknowledged */
	/* who the peer is, for link_cb.on_admit (the host's entitlement) */
	enum addr_kind transport; /* of the listener that accepted it / the dial */
	int accepted; /* 1: accepted on a listener; 0: we dialed it */
	uint32_t cid; /* vsock: the peer's CID (getpeername) */
	int loopback; /* tcp: the peer's address is a loopback one */
	int authed; /* its AUTH verified with our key */
};

struct link_cb {
	void *ctx;
	/* a peer finished the hello exchange */
	void (*on_up)(void *ctx, struct link_peer *p);
	/* a peer's connection ended; why: one line */
	void (*on_down)(void *ctx, struct link_peer *p, const char *why);
	/* host: a peer sent (or changed) its filter */
	void (*on_filter)(void *ctx, struct link_peer *p, const struct link_filter *f);
	/*
	 * host: records arrived (seq already deduplicated per session: a record
	 * whose seq the same session delivered before is counted, not passed).
	 * Return 0 once they are durable (written out): they are then acked.
	 */
	int (*on_records)(void *ctx, struct link_peer *p, const struct link_vreq *v, uint32_t n);
	/*
	 * host, optional: a peer passed the hello (and AUTH); return 0 to let it
	 * up, non-zero (reason in why) to refuse it (counted, logged rate-limited).
	 */
	int (*on_admit)(void *ctx, struct link_peer *p, char *why, size_t whylen);
	/*
	 * host, optional: NULL when a new record may be delivered, else why not.
	 * A refused record is counted (bad_records, records_bad), never passed to
	 * on_records, and acknowledged (the guest must not send it again).
	 */
	const char *(*check_record)(void *ctx, struct link_peer *p, const struct link_vreq *v);
	/* optional: log lines ("link: peer 3 (unix:...): up: ...") */
	void (*log)(void *ctx, const char *line);
	/*
	 * optional: the log lines that say something went wrong: a dial failing
	 * ("connect: Connection refused (retrying ...)"), a peer refused or lost, a
	 * bad record ("link: peer 3 (unix:...): closed: bad crc"); NULL: to log
	 */
	void (*warn)(void *ctx, const char *line);
};

struct link_opts {
	enum link_role role;
	const char *name; /* sent in hello; NULL = hostname */
	uint32_t outbox; /* guest: records kept until acked (default 65536) */
	uint64_t ping_ns; /* ping period (default 1 s; 100 ms for the first 8) */
	uint64_t heartbeat_ns; /* default 2 s; a peer silent 3 periods is dropped */
	uint64_t backoff_min_ns, backoff_max_ns; /* reconnect: 100 ms .. 5 s, doubling */
	const struct link_key *key; /* NULL or len 0: no authentication (copied) */
	uint32_t caps; /* LINK_CAP_GPA to say in the HELLO (the others are the link's) */
	uint64_t log_every_ns; /* refusals, bad records: a log line at most this often (1 s) */
};

struct link *link_new(const struct link_opts *o, const struct link_cb *cb);
void link_free(struct link *l); /* closes everything, sends BYE when it can */

/*
 * Accept peers on addr (host). Any number of listeners. 0 or -errno: -EPERM
 * for a tcp address off the loopback on a link without a key. A unix socket
 * file is made mode 0600 before it listens.
 */
int link_listen(struct link *l, const struct net_addr *a);
/* Keep one connection to addr up, reconnecting with backoff. 0 or -errno (bad address only). */
int link_dial(struct link *l, const struct net_addr *a);

/* One fd for the daemon's epoll: readable when link_run() has work. */
int link_epoll_fd(const struct link *l);
/* Do all pending IO, timers (pings, heartbeats, reconnects). Never blocks.
 * now_ns: CLOCK_MONOTONIC (the clock the link's own timestamps use). */
void link_run(struct link *l, uint64_t now_ns);
/* Earliest CLOCK_MONOTONIC time link_run() has timer work (UINT64_MAX: none). */
uint64_t link_next_deadline(const struct link *l);

/* guest: queue records for sending (seq assigned here). Returns the number dropped. */
uint32_t link_send_vreqs(struct link *l, const struct link_vreq *v, uint32_t n);
/* guest: the filter in force; sent now and after every reconnect. */
void link_set_filter(struct link *l, const struct link_filter *f);

/* Iterate peers (connected or connecting); NULL at the end. */
struct link_peer *link_next_peer(struct link *l, struct link_peer *prev);
const struct link_peer_info *link_peer_info(const struct link_peer *p);
/* The caller's own pointer for a peer (NULL until set). */
void link_peer_set_user(struct link_peer *p, void *user);
void *link_peer_user(const struct link_peer *p);

struct link_stats {
	uint64_t frames_rx, frames_tx, bytes_rx, bytes_tx;
	uint64_t connects, disconnects, malformed;
	uint64_t refused; /* peers refused: version, role, key, AUTH, on_admit */
	uint64_t records_bad; /* host: records refused by check_record */
	uint64_t records_sent, records_acked, records_dropped, records_resent; /* guest */
	uint64_t records_rx, records_dup; /* host */
	uint64_t outbox_len; /* guest: records waiting for an ack */
};
void link_get_stats(const struct link *l, struct link_stats *s);

#endif /* IT_LINK_H */
