// SPDX-License-Identifier: GPL-2.0
/*
 * seed_link DIR: seed inputs of fuzz_link (its input format: fuzz_link.c), made
 * with link_encode() so they follow the wire format of the code being fuzzed.
 * Each is a scene byte and a peer's frames: whole sessions of a guest and of a
 * host, records resent after a reconnect, and a few broken streams.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mode/link.h"

#define GUEST_STREAM 0x00 /* scene: the link is a host */
#define HOST_STREAM 0x01 /* scene: the link is a guest */
#define FIX 0x02
#define FAIL_RECORDS 0x04
#define QUEUE_3 (1 << 3)
#define QUEUE_70 (2 << 3)
#define CHUNK_1 (1 << 5)
#define CHUNK_16 (2 << 5)
#define CHUNK_ALL (3 << 5)
#define FILTER 0x80 /* with HOST_STREAM */
#define LISTEN 0x80 /* with GUEST_STREAM */

static unsigned char buf[1 << 16];
static size_t len;

static void begin(unsigned char scene)
{
	buf[0] = scene;
	len = 1;
}

static void frame(uint16_t type, const void *pl, uint32_t n)
{
	int r = link_encode(buf + len, sizeof(buf) - len, type, pl, n);

	if (r < 0) {
		fprintf(stderr, "seed_link: link_encode type %u: %d\n", type, r);
		exit(1);
	}
	len += (size_t)r;
}

static void hello(int role, uint64_t session, uint64_t next_seq)
{
	struct link_hello h = { .version = LINK_VERSION,
				.role = (uint8_t)role,
				.caps = LINK_CAP_VREQ | LINK_CAP_FILTER | LINK_CAP_ACK,
				.session = session,
				.next_seq = next_seq };

	snprintf(h.name, sizeof(h.name), "%s", role == LINK_ROLE_GUEST ? "vm1" : "host");
	frame(LINK_HELLO, &h, sizeof(h));
}

/* A RECORDS frame of n records with seqs first, first + 1, ... */
static void records(uint64_t first, uint32_t n)
{
	static unsigned char pl[8 + 4 * sizeof(struct link_vreq)];
	struct link_vreq v;
	uint32_t i;

	memset(pl, 0, sizeof(pl));
	memcpy(pl, &n, sizeof(n));
	for (i = 0; i < n; i++) {
		memset(&v, 0, sizeof(v));
		v.seq = first + i;
		v.sector = 2048 + 8 * i;
		v.nr_sectors = 8;
		v.op = 1;
		snprintf(v.serial, sizeof(v.serial), "disk0");
		snprintf(v.comm, sizeof(v.comm), "fio");
		v.pid = v.tid = 100;
		v.sys = UINT32_MAX;
		v.q_ns = 1000;
		v.c_ns = 5000;
		memcpy(pl + 8 + i * sizeof(v), &v, sizeof(v));
	}
	frame(LINK_RECORDS, pl, 8 + n * (uint32_t)sizeof(v));
}

static void ping(uint16_t type, uint64_t id)
{
	struct link_ping p = { .id = id,
			       .t1 = 1000,
			       .t2 = type == LINK_PONG ? 1500 : 0,
			       .t3 = type == LINK_PONG ? 1600 : 0 };

	frame(type, &p, sizeof(p));
}

static void misc(void)
{
	struct link_heartbeat hb = { .now = 5000, .sent = 3, .acked = 2 };

	frame(LINK_HEARTBEAT, &hb, sizeof(hb));
}

static void ack(uint64_t seq)
{
	frame(LINK_ACK, &seq, sizeof(seq));
}

static void filter(uint32_t serials)
{
	struct link_filter f = { .nr_serials = serials, .nr_pids = 1, .pids = { 100 } };

	snprintf(f.serials[0], sizeof(f.serials[0]), "disk0");
	f.sector_hi[0] = 1 << 20;
	frame(LINK_FILTER, &f, sizeof(f));
}

static void save(const char *dir, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
}

/* A guest's session as a host sees it: hello, filter, records (one resent), bye. */
static void guest_session(unsigned char scene)
{
	begin(scene);
	hello(LINK_ROLE_GUEST, 42, 1);
	filter(1);
	records(1, 2);
	ping(LINK_PING, 1);
	misc();
	records(2, 3); /* seq 2 again: a resend after a lost ack */
	ping(LINK_PONG, 1);
	frame(LINK_BYE, NULL, 0);
}

/* A host's session as a guest sees it: hello, acks (one beyond what was sent), bye. */
static void host_session(unsigned char scene, uint64_t ack2)
{
	begin(scene);
	hello(LINK_ROLE_HOST, 7, 0);
	ack(2);
	ping(LINK_PING, 1);
	ping(LINK_PONG, 1);
	misc();
	ack(ack2);
	frame(LINK_BYE, NULL, 0);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: seed_link DIR\n");
		return 2;
	}
	guest_session(GUEST_STREAM);
	save(argv[1], "guest-session");
	guest_session(GUEST_STREAM | FIX | CHUNK_1);
	save(argv[1], "guest-session-fix-bytewise");
	guest_session(GUEST_STREAM | FAIL_RECORDS | CHUNK_16);
	save(argv[1], "guest-session-not-durable");
	guest_session(GUEST_STREAM | LISTEN | CHUNK_ALL);
	save(argv[1], "guest-session-accepted");
	host_session(HOST_STREAM | QUEUE_3 | FILTER, 3);
	save(argv[1], "host-session");
	host_session(HOST_STREAM | QUEUE_70 | CHUNK_ALL | FIX, 1000);
	save(argv[1], "host-session-wrap-overack");

	/* broken: frames before the hello, a second hello, a bad filter, a bad crc */
	begin(GUEST_STREAM);
	records(1, 1);
	save(argv[1], "records-before-hello");
	begin(GUEST_STREAM);
	hello(LINK_ROLE_GUEST, 42, 1);
	hello(LINK_ROLE_GUEST, 43, 1);
	save(argv[1], "second-hello");
	begin(GUEST_STREAM);
	hello(LINK_ROLE_GUEST, 42, 1);
	filter(LINK_FILTER_MAX + 1);
	save(argv[1], "filter-too-many");
	begin(HOST_STREAM);
	hello(LINK_ROLE_HOST, 7, 0);
	ack(1);
	buf[len - 1] ^= 1; /* the ack's payload no longer matches its crc */
	save(argv[1], "bad-crc");
	begin(HOST_STREAM | FIX);
	hello(LINK_ROLE_GUEST, 7, 0); /* a guest talking to a guest */
	save(argv[1], "same-role");
	return 0;
}
