// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of src/mode/link.c: framing, clock estimator, addresses, and links
 * over real unix / tcp (/ vsock when the host has it) sockets driven by
 * link_run() within this one process.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h> /* before linux/vm_sockets.h: older uapi headers need struct sockaddr */
#include <linux/vm_sockets.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "mode/link.h"
#include "unit.h"
#include "link_harness.h"

/* ---- framing ---- */

static uint32_t type_len(uint16_t type, uint32_t nrec)
{
	switch (type) {
	case LINK_HELLO:
		return sizeof(struct link_hello);
	case LINK_PING:
	case LINK_PONG:
		return sizeof(struct link_ping);
	case LINK_FILTER:
		return sizeof(struct link_filter);
	case LINK_RECORDS:
		return 8 + nrec * (uint32_t)sizeof(struct link_vreq);
	case LINK_ACK:
		return 8;
	case LINK_HEARTBEAT:
		return sizeof(struct link_heartbeat);
	case LINK_AUTH:
		return sizeof(struct link_auth);
	}
	return 0;
}

/* A valid payload of type in pl (RECORDS: nrec records). */
static uint32_t mk_payload(uint16_t type, uint32_t nrec, uint8_t *pl)
{
	uint32_t len = type_len(type, nrec), i;

	for (i = 0; i < len; i++)
		pl[i] = (uint8_t)(i * 7 + type);
	if (type == LINK_RECORDS) {
		uint32_t size = sizeof(struct link_vreq);

		memcpy(pl, &nrec, 4);
		memcpy(pl + 4, &size, 4);
	}
	return len;
}

static void test_encode_decode_all_types(void)
{
	static uint8_t pl[LINK_MAX_PAYLOAD], buf[2 * (LINK_MAX_PAYLOAD + 16)];
	struct link_frame_hdr h;
	const void *got;
	const char *why;
	uint16_t t;
	uint32_t len;
	int n, n2;

	for (t = LINK_HELLO; t < LINK_MSG_MAX; t++) {
		len = mk_payload(t, 3, pl);
		n = link_encode(buf, sizeof(buf), t, pl, len);
		if (!ASSERT_EQ(n, (int)(HDRSZ + len), "encoded size"))
			return;
		ASSERT_EQ(link_decode(buf, (size_t)n, &h, &got, &why), n, "decoded size");
		ASSERT_EQ(h.magic, LINK_MAGIC, "magic");
		ASSERT_EQ(h.version, LINK_VERSION, "version");
		ASSERT_EQ(h.type, t, "type");
		ASSERT_EQ(h.len, len, "len");
		ASSERT_TRUE(got == buf + HDRSZ, "payload points into the buffer");
		ASSERT_TRUE(!len || !memcmp(got, pl, len), "payload round trip");
		ASSERT_TRUE(len || h.crc == 0, "crc 0 for an empty payload");
	}
	/* two frames back to back: the first decodes alone */
	n = link_encode(buf, sizeof(buf), LINK_ACK, pl, 8);
	n2 = link_encode(buf + n, sizeof(buf) - (size_t)n, LINK_BYE, NULL, 0);
	ASSERT_EQ(link_decode(buf, (size_t)(n + n2), &h, NULL, NULL), n, "first of two");
	ASSERT_EQ(link_decode(buf + n, (size_t)n2, &h, NULL, NULL), n2, "second of two");
	ASSERT_EQ(h.type, LINK_BYE, "second is BYE");
	/* a full-size RECORDS frame */
	len = mk_payload(LINK_RECORDS, (LINK_MAX_PAYLOAD - 8) / sizeof(struct link_vreq), pl);
	n = link_encode(buf, sizeof(buf), LINK_RECORDS, pl, len);
	ASSERT_EQ(link_decode(buf, (size_t)n, &h, NULL, NULL), n, "largest RECORDS frame");
	ASSERT_EQ(link_encode(buf, 10, LINK_ACK, pl, 8), -ENOSPC, "no room");
	ASSERT_EQ(link_encode(buf, sizeof(buf), 0, pl, 8), -EINVAL, "type 0");
	ASSERT_EQ(link_encode(buf, sizeof(buf), LINK_MSG_MAX, pl, 8), -EINVAL, "type max");
	ASSERT_EQ(link_encode(buf, sizeof(buf), LINK_RECORDS, pl, LINK_MAX_PAYLOAD + 1), -EINVAL,
		  "oversized");
}

static void test_decode_truncated(void)
{
	uint8_t pl[1024], buf[2048];
	size_t i;
	int n;

	n = link_encode(buf, sizeof(buf), LINK_HELLO, pl, mk_payload(LINK_HELLO, 0, pl));
	for (i = 0; i < (size_t)n; i++)
		if (!ASSERT_EQ(link_decode(buf, i, NULL, NULL, NULL), 0, "prefix needs more"))
			return;
	ASSERT_EQ(link_decode(buf, (size_t)n, NULL, NULL, NULL), n, "whole");
}

/* Encode an ACK, let mutate spoil it, expect err and why from link_decode. */
static void expect_bad(void (*mutate)(uint8_t *buf, size_t *len), int err, const char *why_want)
{
	uint8_t buf[256];
	uint64_t ack = 5;
	const char *why = NULL;
	size_t len = (size_t)link_encode(buf, sizeof(buf), LINK_ACK, &ack, sizeof(ack));

	mutate(buf, &len);
	ASSERT_EQ(link_decode(buf, len, NULL, NULL, &why), err, why_want);
	ASSERT_STREQ(why, why_want, "reason");
}

static void set_hdr_u16(uint8_t *buf, size_t off, uint16_t v)
{
	memcpy(buf + off, &v, 2);
}

static void set_hdr_u32(uint8_t *buf, size_t off, uint32_t v)
{
	memcpy(buf + off, &v, 4);
}

static void m_magic(uint8_t *b, size_t *len)
{
	b[0] ^= 1;
	*len = 4; /* seen as soon as 4 bytes are there */
}

static void m_version0(uint8_t *b, size_t *len)
{
	set_hdr_u16(b, 4, 0);
}

static void m_version2(uint8_t *b, size_t *len)
{
	set_hdr_u16(b, 4, LINK_VERSION + 1);
}

static void m_type0(uint8_t *b, size_t *len)
{
	set_hdr_u16(b, 6, 0);
}

static void m_typemax(uint8_t *b, size_t *len)
{
	set_hdr_u16(b, 6, LINK_MSG_MAX);
}

static void m_huge(uint8_t *b, size_t *len)
{
	set_hdr_u32(b, 8, 1u << 30);
	*len = HDRSZ; /* judged from the header alone */
}

static void m_crc(uint8_t *b, size_t *len)
{
	b[HDRSZ] ^= 0x80;
}

static void m_acklen(uint8_t *b, size_t *len)
{
	set_hdr_u32(b, 8, 4);
	*len = HDRSZ;
}

static void test_decode_malformed(void)
{
	uint8_t buf[1024], pl[1024];
	const char *why = NULL;
	uint32_t len;
	int n;

	expect_bad(m_magic, -EPROTO, "bad magic");
	expect_bad(m_version0, -EPROTO, "bad version");
	expect_bad(m_version2, -EPROTO, "bad version");
	expect_bad(m_type0, -EPROTO, "bad type");
	expect_bad(m_typemax, -EPROTO, "bad type");
	expect_bad(m_huge, -EMSGSIZE, "frame too big");
	expect_bad(m_crc, -EBADMSG, "bad crc");
	expect_bad(m_acklen, -EBADMSG, "bad payload length for its type");
	/* RECORDS whose count disagrees with its length (crc fixed up) */
	len = mk_payload(LINK_RECORDS, 2, pl);
	set_hdr_u32(pl, 0, 3);
	n = link_encode(buf, sizeof(buf), LINK_RECORDS, pl, len);
	ASSERT_EQ(link_decode(buf, (size_t)n, NULL, NULL, &why), -EBADMSG, "count");
	ASSERT_STREQ(why, "record count does not match length", "count reason");
	n = link_encode(buf, sizeof(buf), LINK_RECORDS, pl, len - 1);
	ASSERT_EQ(link_decode(buf, (size_t)n, NULL, NULL, &why), -EBADMSG, "partial record");
	ASSERT_STREQ(why, "bad RECORDS length", "partial record reason");
	/* record sizes: 0 is version 2's 144; shorter, unaligned or huge ones are malformed */
	set_hdr_u32(pl, 0, 2);
	{
		static const uint32_t bad[] = { 8, 136, 148, 4104 };
		uint32_t sz;

		for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
			set_hdr_u32(pl, 4, bad[k]);
			n = link_encode(buf, sizeof(buf), LINK_RECORDS, pl, 8 + 2 * (bad[k] & ~7u));
			ASSERT_EQ(link_decode(buf, (size_t)n, NULL, NULL, &why), -EBADMSG, "size");
			ASSERT_STREQ(why, "bad record size", "record size reason");
		}
		for (sz = 0; sz <= 160; sz += 16) {
			if (sz && sz < LINK_VREQ_V2_LEN)
				continue;
			set_hdr_u32(pl, 4, sz);
			n = link_encode(buf, sizeof(buf), LINK_RECORDS, pl,
					8 + 2 * (sz ? sz : LINK_VREQ_V2_LEN));
			ASSERT_EQ(link_decode(buf, (size_t)n, NULL, NULL, &why), n, "good size");
		}
	}
}

/* ---- clock ---- */

/* One round trip: peer clock = local + off, forward d1, held hold, back d2. */
static void rt(struct link_clock *c, uint64_t t1, int64_t off, uint64_t d1, uint64_t hold,
	       uint64_t d2)
{
	uint64_t t2 = t1 + d1 + (uint64_t)off;

	link_clock_add(c, t1, t2, t2 + hold, t1 + d1 + hold + d2);
}

static void test_clock(void)
{
	struct link_clock c;
	int64_t off;
	uint64_t unc, t = 1000 * SEC;
	int i;

	memset(&c, 0, sizeof(c));
	ASSERT_EQ(link_clock_get(&c, &off, &unc), -EAGAIN, "no sample yet");
	rt(&c, t, 5 * MS, 1 * MS, 50000, 3 * MS); /* asymmetric: off 4 ms, delay 4 ms */
	ASSERT_OK(link_clock_get(&c, &off, &unc), "one sample");
	ASSERT_EQ(off, (int64_t)(4 * MS), "asymmetric offset");
	ASSERT_EQ(unc, 2 * MS, "uncertainty delay/2");
	rt(&c, t + SEC, 5 * MS, 100000, 50000, 100000); /* symmetric, 200 us */
	rt(&c, t + 2 * SEC, 5 * MS, 4 * MS, 0, 1 * MS); /* asymmetric the other way */
	ASSERT_OK(link_clock_get(&c, &off, &unc), "three samples");
	ASSERT_EQ(off, (int64_t)(5 * MS), "min-delay sample wins");
	ASSERT_EQ(unc, 100000ULL, "its delay/2");
	/* negative offset */
	memset(&c, 0, sizeof(c));
	rt(&c, t, -7 * (int64_t)MS, 1000, 10, 1000);
	link_clock_get(&c, &off, &unc);
	ASSERT_EQ(off, -7 * (int64_t)MS, "negative offset");
	ASSERT_EQ(unc, 1000ULL, "delay 2000");
	/* the window rolls: the good sample leaves after LINK_CLOCK_WINDOW more */
	for (i = 0; i < LINK_CLOCK_WINDOW - 1; i++)
		rt(&c, t + (uint64_t)(i + 1) * SEC, 5 * MS, 2 * MS, 0, 4 * MS);
	link_clock_get(&c, &off, &unc);
	ASSERT_EQ(off, -7 * (int64_t)MS, "still inside the window");
	rt(&c, t + 100 * SEC, 5 * MS, 3 * MS, 0, 5 * MS); /* delay 8 ms: worse */
	link_clock_get(&c, &off, &unc);
	ASSERT_EQ(off, (int64_t)(4 * MS), "rolled out: best of the rest (off 4 ms)");
	ASSERT_EQ(unc, 3 * MS, "delay 6 ms / 2");
	ASSERT_EQ(c.n, (unsigned int)LINK_CLOCK_WINDOW, "window full");
	ASSERT_EQ(c.samples, (uint64_t)LINK_CLOCK_WINDOW + 1, "samples counted");
	link_clock_add(&c, 10, 0, 0, 5); /* t4 < t1: not a round trip */
	ASSERT_EQ(c.samples, (uint64_t)LINK_CLOCK_WINDOW + 1, "bad sample ignored");
}

/* ---- addresses ---- */

static void test_parse_addr(void)
{
	static const struct {
		const char *s, *printed;
		enum addr_kind kind;
		uint32_t cid, port;
	} ok[] = {
		{ "vsock:7767", "vsock:7767", ADDR_VSOCK, VMADDR_CID_ANY, 7767 },
		{ "vsock:3:1234", "vsock:3:1234", ADDR_VSOCK, 3, 1234 },
		{ "vsock:0:5", "vsock:0:5", ADDR_VSOCK, 0, 5 },
		{ "unix:/run/it.sock", "unix:/run/it.sock", ADDR_UNIX, 0, 0 },
		{ "tcp:127.0.0.1:80", "tcp:127.0.0.1:80", ADDR_TCP, 0, 80 },
		{ "tcp:localhost:65535", "tcp:127.0.0.1:65535", ADDR_TCP, 0, 65535 },
		{ "tcp:[::1]:7767", "tcp:[::1]:7767", ADDR_TCP, 0, 7767 },
		{ "tcp:[fe80::1]:1", "tcp:[fe80::1]:1", ADDR_TCP, 0, 1 },
		{ "serial:org.iotracer.0", "serial:org.iotracer.0", ADDR_SERIAL, 0, 0 },
		{ "serial:/dev/vport0p1", "serial:/dev/vport0p1", ADDR_SERIAL, 0, 0 },
	};
	static const struct {
		const char *s, *why;
	} bad[] = {
		{ "", "expected vsock" },
		{ "7767", "expected vsock" },
		{ "udp:1.2.3.4:5", "unknown transport 'udp'" },
		{ "vsock:", "bad port" },
		{ "vsock:0", "bad port" },
		{ "vsock:x:5", "bad CID" },
		{ "vsock:3:99999999999", "bad port" },
		{ "unix:", "empty path" },
		{ "tcp:1.2.3.4", "expected HOST:PORT" },
		{ "tcp:1.2.3.4:0", "bad port" },
		{ "tcp:1.2.3.4:65536", "bad port" },
		{ "tcp:1.2.3.4:8x", "bad port" },
		{ "tcp:example.com:80", "no DNS" },
		{ "tcp:::1:80", "in brackets" },
		{ "tcp:[::1]80", "expected [IPV6]:PORT" },
		{ "tcp::80", "bad host" },
		{ "serial:", "empty path" },
		{ "serial:a/b", "NAME or a /dev/ path" },
		{ "serial:/tmp/x", "NAME or a /dev/ path" },
	};
	char why[160], printed[160], longp[300];
	struct net_addr a;
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		why[0] = '\0';
		if (!ASSERT_OK(addr_parse(ok[i].s, &a, why, sizeof(why)), ok[i].s))
			continue;
		ASSERT_EQ(a.kind, ok[i].kind, ok[i].s);
		ASSERT_EQ(a.port, ok[i].port, ok[i].s);
		if (a.kind == ADDR_VSOCK)
			ASSERT_EQ(a.cid, ok[i].cid, ok[i].s);
		addr_format(&a, printed, sizeof(printed));
		ASSERT_STREQ(printed, ok[i].printed, "printed back");
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		ASSERT_EQ(addr_parse(bad[i].s, &a, why, sizeof(why)), -EINVAL, bad[i].s);
		if (!ASSERT_TRUE(strstr(why, bad[i].why) != NULL, bad[i].s))
			UNIT_LOG("# %s: got reason '%s'\n", bad[i].s, why);
	}
	memset(longp, 'a', sizeof(longp));
	memcpy(longp, "unix:/", 6);
	longp[5 + 108] = '\0'; /* a 108-byte path: one too many for sun_path */
	ASSERT_EQ(addr_parse(longp, &a, why, sizeof(why)), -EINVAL, "long unix path");
	ASSERT_TRUE(strstr(why, "too long") != NULL, "long path reason");
	ASSERT_EQ(addr_parse(NULL, &a, why, sizeof(why)), -EINVAL, "NULL");
}

static void test_unix_end_to_end(void)
{
	struct node host = { 0 }, host2 = { 0 }, g1 = { 0 }, g2 = { 0 };
	struct node *all[] = { &host, &g1, &g2 }, *guests[] = { &g1, &g2 };
	struct node *all2[] = { &host2, &g1, &g2 }, *g1only[] = { &g1 };
	struct link_filter f1 = { .nr_serials = 1 }, f2 = { .nr_serials = 2, .nr_pids = 1 };
	uint64_t next1 = 1, next2 = 1, unc;
	const struct link_peer_info *pi;
	struct guest_seen *s1, *s2;
	struct net_addr a;
	char where[128];
	int64_t off;
	int i;

	path_in_tmp(where, sizeof(where), "unix:", "host.sock");
	if (!ASSERT_OK(mk_host(&host, where), "host listens"))
		return;
	snprintf(f1.serials[0], sizeof(f1.serials[0]), "disk0");
	f2.pids[0] = 42;
	mk_link(&g1, LINK_ROLE_GUEST, 0, "g1");
	link_set_filter(g1.l, &f1); /* before connecting: sent after the hello */
	ASSERT_OK(addr(where, &a), "address");
	ASSERT_OK(link_dial(g1.l, &a), "g1 dials");
	ASSERT_OK(mk_guest(&g2, where, 0, "g2"), "g2 dials");
	RUN_UNTIL(all, 3, host.ups == 2 && g1.ups == 1 && g2.ups == 1, 2000);
	link_set_filter(g2.l, &f2); /* connected: sent now */
	RUN_UNTIL(all, 3, host.filters == 2, 2000);
	ASSERT_EQ(host.filter.nr_serials + 0, 2u, "latest filter is g2's");
	ASSERT_EQ(host.filter.pids[0], 42u, "its pid");

	/* 1000 records each, in order, exactly once, acknowledged */
	for (i = 0; i < 10; i++) {
		send_recs(&g1, &next1, 100);
		send_recs(&g2, &next2, 100);
		step(all, 3);
	}
	s1 = seen(&host, "g1");
	s2 = seen(&host, "g2");
	RUN_UNTIL(all, 3,
		  s1->count == 1000 && s2->count == 1000 && stats(&g1).outbox_len == 0 &&
			  stats(&g2).outbox_len == 0,
		  3000);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(host.s[i].first, 1ULL, "first seq");
		ASSERT_EQ(host.s[i].last, 1000ULL, "last seq");
		ASSERT_EQ(host.s[i].disorder, 0, "in order, right records");
	}
	ASSERT_EQ(stats(&host).records_rx, 2000ULL, "host received");
	ASSERT_EQ(stats(&host).records_dup, 0ULL, "no duplicates");
	ASSERT_EQ(stats(&g1).records_acked, 1000ULL, "g1 acked");
	ASSERT_EQ(stats(&g1).records_resent, 0ULL, "nothing resent");
	pi = first_peer(&g1);
	if (ASSERT_TRUE(pi != NULL, "g1 has its peer")) {
		ASSERT_EQ(pi->acked, 1000ULL, "peer info acked");
		ASSERT_STREQ(pi->hello.name, "h", "host's name");
		ASSERT_OK(link_clock_get(&pi->clock, &off, &unc), "clock estimate");
		ASSERT_TRUE(unc < 50 * MS, "small uncertainty");
		ASSERT_TRUE((uint64_t)llabs(off) <= unc, "same clock: |offset| <= uncertainty");
		UNIT_LOG("# clock: offset %lld ns +- %llu ns over %llu samples\n", (long long)off,
			 (unsigned long long)unc, (unsigned long long)pi->clock.samples);
	}

	/*
	 * g1's connection drops after its records went out, before the ack came
	 * back (g1 jumps 10 s ahead: the host looks silent, timeout). The host
	 * delivers them from the old connection; g1 reconnects and resends them:
	 * duplicates, counted and not delivered.
	 */
	send_recs(&g1, &next1, 300);
	step(g1only, 1);
	g1.skew = 10 * SEC;
	step(g1only, 1);
	ASSERT_EQ(g1.downs, 1, "g1 dropped its connection");
	ASSERT_STREQ(g1.last_down, "timeout", "for a timeout");
	ASSERT_EQ(stats(&g1).outbox_len, 300ULL, "unacked records kept");
	RUN_UNTIL(all, 3, g1.ups == 2 && stats(&g1).outbox_len == 0 && s1->count == 1300, 3000);
	ASSERT_EQ(stats(&host).records_dup, 300ULL, "resent records are duplicates");
	ASSERT_EQ(stats(&g1).records_resent, 300ULL, "g1 resent them");
	ASSERT_EQ(s1->last, 1300ULL, "delivered once");
	ASSERT_EQ(s1->disorder, 0, "still in order");

	/* the host goes away with records in flight; a new host on the same path */
	send_recs(&g1, &next1, 200);
	send_recs(&g2, &next2, 200);
	step(guests, 2);
	link_free(host.l);
	host.l = NULL;
	if (!ASSERT_OK(mk_host(&host2, where), "new host on the same path"))
		goto out;
	s1 = seen(&host2, "g1");
	s2 = seen(&host2, "g2");
	RUN_UNTIL(all2, 3,
		  s1->count == 200 && s2->count == 200 && stats(&g1).outbox_len == 0 &&
			  stats(&g2).outbox_len == 0,
		  5000);
	ASSERT_EQ(s1->first, 1301ULL, "g1 resumes at 1301");
	ASSERT_EQ(s2->first, 1001ULL, "g2 resumes at 1001");
	ASSERT_EQ(stats(&g1).records_resent, 500ULL, "g1 resent the unacked 200");
	ASSERT_EQ(stats(&g2).records_resent, 200ULL, "g2 resent the unacked 200");
	ASSERT_EQ(g2.ups, 2, "g2 reconnected");
	ASSERT_EQ(host2.s[0].disorder + host2.s[1].disorder, 0, "in order");
	ASSERT_EQ(stats(&host2).records_dup, 0ULL, "a new host: nothing to deduplicate");

	/* host2 cannot make records durable: nothing acked, records kept */
	host2.fail_records = 1;
	send_recs(&g2, &next2, 10);
	RUN_UNTIL(all2, 3, logged(&host2, "on_records failed"), 2000);
	ASSERT_EQ(stats(&g2).outbox_len, 10ULL, "not acked, kept");
	host2.fail_records = 0;
	RUN_UNTIL(all2, 3, stats(&g2).outbox_len == 0, 3000);
out:
	link_free(g1.l);
	link_free(g2.l);
	link_free(host.l);
	link_free(host2.l);
}

static void test_host_dedup_and_refusals(void)
{
	struct node host = { 0 };
	char where[128], path[128];
	uint64_t sess = 0x1234;
	int fd;

	path_in_tmp(where, sizeof(where), "unix:", "dedup.sock");
	path_in_tmp(path, sizeof(path), "", "dedup.sock");
	if (!ASSERT_OK(mk_host(&host, where), "listen"))
		return;
	fd = raw_connect(path);
	raw_hello(fd, LINK_ROLE_GUEST, 7, sess); /* a newer guest: our version spoken */
	raw_records(fd, 1, 10);
	ASSERT_EQ(raw_wait(&host, fd, 10), 0, "ack 10");
	close(fd);
	/* same session again: resends 5..10, then 11..15 */
	fd = raw_connect(path);
	raw_hello(fd, LINK_ROLE_GUEST, LINK_VERSION, sess);
	ASSERT_EQ(raw_wait(&host, fd, 10), 0, "a known session is acked at once");
	raw_records(fd, 5, 15);
	ASSERT_EQ(raw_wait(&host, fd, 15), 0, "ack 15");
	ASSERT_EQ(host.nsess, 1, "one guest");
	ASSERT_EQ(seen(&host, "raw")->count, 15ULL, "15 delivered");
	ASSERT_EQ(seen(&host, "raw")->disorder, 0, "in order");
	ASSERT_EQ(stats(&host).records_dup, 6ULL, "5..10 counted as duplicates");
	close(fd);

	fd = raw_connect(path);
	raw_hello(fd, LINK_ROLE_GUEST, 0, 99);
	ASSERT_EQ(raw_wait(&host, fd, 0), 1, "version 0 closed");
	ASSERT_TRUE(logged(&host, "refused: peer speaks version 0"), "version 0 logged");
	close(fd);
	fd = raw_connect(path);
	raw_hello(fd, LINK_ROLE_HOST, LINK_VERSION, 98);
	ASSERT_EQ(raw_wait(&host, fd, 0), 1, "host role closed");
	ASSERT_TRUE(logged(&host, "as host, we are host"), "same role logged");
	close(fd);
	/* a version 1 guest (88-byte HELLO): refused, its version named */
	fd = raw_connect(path);
	{
		uint8_t v1[LINK_V1_HELLO_LEN] = { 1, 0, LINK_ROLE_GUEST };

		raw_send(fd, LINK_HELLO, v1, sizeof(v1));
	}
	ASSERT_EQ(raw_wait(&host, fd, 0), 1, "version 1 closed");
	ASSERT_TRUE(logged(&host, "refused: peer speaks version 1, we need 2"), "v1 logged");
	ASSERT_EQ(stats(&host).refused, 3ULL, "3 refused");
	close(fd);
	link_free(host.l);
}

static void test_garbage_peers(void)
{
	struct node host = { 0 }, g = { 0 };
	struct node *all[] = { &host, &g };
	struct link_frame_hdr big = {
		.magic = LINK_MAGIC, .version = LINK_VERSION, .type = LINK_RECORDS, .len = 1u << 20
	};
	char where[128], path[128], junk[64];
	struct link_ping ping = { 0 };
	uint64_t next = 1;
	int fd[5], i;

	path_in_tmp(where, sizeof(where), "unix:", "garbage.sock");
	path_in_tmp(path, sizeof(path), "", "garbage.sock");
	if (!ASSERT_OK(mk_host(&host, where), "listen") ||
	    !ASSERT_OK(mk_guest(&g, where, 0, "g"), "dial"))
		return;
	RUN_UNTIL(all, 2, g.ups == 1, 2000);
	for (i = 0; i < 5; i++)
		fd[i] = raw_connect(path);
	memset(junk, 'x', sizeof(junk));
	send(fd[0], junk, sizeof(junk), MSG_NOSIGNAL);
	send(fd[1], &big, sizeof(big), MSG_NOSIGNAL);
	raw_send(fd[2], LINK_PING, &ping, sizeof(ping));
	send(fd[3], &big, 8, MSG_NOSIGNAL);
	shutdown(fd[3], SHUT_WR); /* half a header, then end of stream */
	raw_hello(fd[4], LINK_ROLE_GUEST, LINK_VERSION, 77);
	raw_send(fd[4], LINK_ACK, &next, sizeof(next));
	send_recs(&g, &next, 500);
	RUN_UNTIL(all, 2, stats(&host).disconnects >= 5 && seen(&host, "g")->count == 500, 3000);
	ASSERT_TRUE(logged(&host, "closed: bad magic"), "garbage: bad magic");
	ASSERT_TRUE(logged(&host, "closed: frame too big"), "oversized header");
	ASSERT_TRUE(logged(&host, "closed: protocol error: PING before HELLO"), "no hello");
	ASSERT_TRUE(logged(&host, "closed: truncated frame at end of stream"), "truncated");
	ASSERT_TRUE(logged(&host, "closed: protocol error: ACK sent to a host"), "wrong role");
	ASSERT_TRUE(stats(&host).malformed >= 4, "malformed counted");
	ASSERT_EQ(host.ups, 2, "the guest and fd[4] came up");
	ASSERT_EQ(host.downs, 1, "only fd[4] went down");
	ASSERT_EQ(g.downs, 0, "the guest was not disturbed");
	ASSERT_EQ(stats(&g).outbox_len, 0ULL, "its records acked");
	for (i = 0; i < 5; i++) {
		ASSERT_TRUE(closed_by_peer(fd[i]), "closed by the host");
		close(fd[i]);
	}
	link_free(g.l);
	link_free(host.l);
}

static void test_outbox_overflow(void)
{
	struct node host = { 0 }, g = { 0 };
	struct node *all[] = { &host, &g };
	char where[128];
	struct net_addr a;
	uint64_t next = 1;

	path_in_tmp(where, sizeof(where), "unix:", "overflow.sock");
	if (!ASSERT_OK(mk_host(&host, where), "listen") ||
	    !ASSERT_TRUE(mk_link(&g, LINK_ROLE_GUEST, 100, "g") != NULL, "guest"))
		return;
	ASSERT_EQ(send_recs(&g, &next, 250), 150u, "150 dropped");
	ASSERT_EQ(stats(&g).records_dropped, 150ULL, "counted");
	ASSERT_EQ(stats(&g).outbox_len, 100ULL, "outbox full");
	addr(where, &a);
	link_dial(g.l, &a);
	RUN_UNTIL(all, 2, seen(&host, "g")->count == 100 && stats(&g).outbox_len == 0, 2000);
	ASSERT_EQ(seen(&host, "g")->first, 151ULL, "the oldest went");
	ASSERT_EQ(seen(&host, "g")->last, 250ULL, "the newest arrived");
	link_free(g.l);
	link_free(host.l);
}

static void test_unix_stale_socket(void)
{
	struct node h1 = { 0 }, h2 = { 0 };
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	char where[128], path[100];
	struct stat st;
	int fd;

	path_in_tmp(path, sizeof(path), "", "stale.sock");
	path_in_tmp(where, sizeof(where), "unix:", "stale.sock");
	snprintf(un.sun_path, sizeof(un.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	ASSERT_OK(bind(fd, (struct sockaddr *)&un, sizeof(un)), "bind");
	close(fd); /* the file stays, nobody listens */
	ASSERT_OK(mk_host(&h1, where), "stale socket file replaced");
	ASSERT_EQ(mk_host(&h2, where), -EADDRINUSE, "a live one is not");
	link_free(h2.l);
	link_free(h1.l);
	ASSERT_TRUE(stat(path, &st) < 0, "removed at link_free");
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	close(fd);
	memset(&h1, 0, sizeof(h1));
	ASSERT_EQ(mk_host(&h1, where), -EADDRINUSE, "a regular file is left alone");
	ASSERT_OK(stat(path, &st), "still there");
	link_free(h1.l);
	unlink(path);
}

static void test_dial_backoff(void)
{
	struct node g = { 0 };
	struct node *gs[] = { &g };
	char where[128];
	uint64_t t0;

	path_in_tmp(where, sizeof(where), "unix:", "nobody.sock");
	if (!ASSERT_OK(mk_guest(&g, where, 0, "g"), "dial nobody"))
		return;
	t0 = mono();
	ASSERT_TRUE(link_next_deadline(g.l) >= t0 + 50 * MS, "retry after the backoff");
	ASSERT_TRUE(link_next_deadline(g.l) <= t0 + 100 * MS, "first backoff 100 ms");
	RUN_UNTIL(gs, 1, link_next_deadline(g.l) > t0 + 250 * MS, 1000);
	ASSERT_TRUE(link_next_deadline(g.l) <= mono() + 200 * MS, "then 200 ms");
	ASSERT_EQ(g.nlogs, 1, "a repeated failure is logged once");
	ASSERT_EQ(stats(&g).connects, 0ULL, "never connected");
	link_free(g.l);
}

/* No port by that name / no such device: logged, retried, nothing else. */
static void test_serial_missing(void)
{
	struct node g1 = { 0 }, g2 = { 0 };
	struct node *gs[] = { &g1, &g2 };

	if (!ASSERT_OK(mk_guest(&g1, "serial:org.iotracer.nosuchport", 0, "g1"), "by name") ||
	    !ASSERT_OK(mk_guest(&g2, "serial:/dev/it-link-nosuchdev", 0, "g2"), "by path"))
		goto out;
	step(gs, 2);
	ASSERT_TRUE(logged(&g1, "no virtio-serial port named org.iotracer.nosuchport"),
		    "name not found");
	ASSERT_TRUE(logged(&g2, "open /dev/it-link-nosuchdev: No such file"), "device missing");
	ASSERT_TRUE(link_next_deadline(g2.l) != UINT64_MAX, "a retry is scheduled");
	ASSERT_TRUE(link_next_peer(g2.l, NULL) == NULL, "no peer");
out:
	link_free(g1.l);
	link_free(g2.l);
}

/* A host on lwhere, a guest dialing dwhere: 500 records through. */
static void round_trip(const char *lwhere, const char *dwhere)
{
	struct node host = { 0 }, g = { 0 };
	struct node *all[] = { &host, &g };
	uint64_t next = 1;

	if (!ASSERT_OK(mk_host(&host, lwhere), lwhere) ||
	    !ASSERT_OK(mk_guest(&g, dwhere, 0, "g"), dwhere))
		goto out;
	RUN_UNTIL(all, 2, g.ups == 1 && host.ups == 1, 2000);
	send_recs(&g, &next, 500);
	RUN_UNTIL(all, 2, seen(&host, "g")->count == 500 && stats(&g).outbox_len == 0, 2000);
	ASSERT_EQ(seen(&host, "g")->disorder, 0, "in order");
	ASSERT_TRUE(first_peer(&host) && first_peer(&host)->addr[0], "peer address");
	UNIT_LOG("# host sees %s\n", first_peer(&host) ? first_peer(&host)->addr : "-");
out:
	link_free(g.l);
	link_free(host.l);
}

static void test_tcp_loopback(void)
{
	char l[64], d[64];
	int port = free_tcp_port();

	if (!ASSERT_TRUE(port > 0, "a free port"))
		return;
	snprintf(l, sizeof(l), "tcp:127.0.0.1:%d", port);
	snprintf(d, sizeof(d), "tcp:localhost:%d", port);
	round_trip(l, d);
}

/* Can this host talk to itself over vsock (CID 1)? 0, or why not in why. */
static int vsock_probe(unsigned int port, char *why, size_t n)
{
	struct sockaddr_vm vm = { .svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_ANY };
	int lfd = socket(AF_VSOCK, SOCK_STREAM, 0), cfd = -1, err = 0;
	socklen_t len = sizeof(err);
	struct pollfd pfd;

	vm.svm_port = port;
	if (lfd < 0) {
		snprintf(why, n, "socket(AF_VSOCK): %s", strerror(errno));
		return -1;
	}
	if (bind(lfd, (struct sockaddr *)&vm, sizeof(vm)) || listen(lfd, 1)) {
		snprintf(why, n, "bind/listen(AF_VSOCK): %s", strerror(errno));
		goto out;
	}
	cfd = socket(AF_VSOCK, SOCK_STREAM | SOCK_NONBLOCK, 0);
	vm.svm_cid = 1; /* VMADDR_CID_LOCAL */
	if (cfd < 0 || (connect(cfd, (struct sockaddr *)&vm, sizeof(vm)) && errno != EINPROGRESS)) {
		snprintf(why, n, "connect(AF_VSOCK, CID 1): %s", strerror(errno));
		goto out;
	}
	pfd = (struct pollfd){ .fd = cfd, .events = POLLOUT };
	if (poll(&pfd, 1, 300) != 1)
		err = ETIMEDOUT;
	else
		getsockopt(cfd, SOL_SOCKET, SO_ERROR, &err, &len);
	if (err)
		snprintf(why, n, "vsock loopback (CID 1) does not connect: %s", strerror(err));
out:
	if (cfd >= 0)
		close(cfd);
	close(lfd);
	return why[0] ? -1 : 0;
}

static void test_vsock_loopback(void)
{
	unsigned int port = 20000 + (unsigned int)(getpid() % 20000);
	char l[64], d[64], why[128] = "";

	if (vsock_probe(port, why, sizeof(why))) {
		SKIP("%s", why);
		return;
	}
	snprintf(l, sizeof(l), "vsock:%u", port);
	snprintf(d, sizeof(d), "vsock:1:%u", port); /* VMADDR_CID_LOCAL */
	round_trip(l, d);
}

/*
 * LINK_CAP_GPA: a guest sends its records with their buffer address (and
 * the record size in RECORDS) to a host that asked for them, the version 2
 * records otherwise; a host reads version 2 records (size word 0: gpa 0) and
 * longer ones of a newer guest (their extra fields skipped).
 */
static void test_gpa_capability(void)
{
	struct node host = { .caps = LINK_CAP_GPA }, old = { 0 };
	struct node g1 = { .caps = LINK_CAP_GPA }, g2 = { 0 }, g3 = { .caps = LINK_CAP_GPA };
	struct node *all[] = { &host, &old, &g1, &g2, &g3 };
	uint64_t n1 = 1, n2 = 1, n3 = 1;
	const struct link_peer_info *pi;
	char where[128], where_old[128], path[128];
	struct guest_seen *s;
	int fd;

	path_in_tmp(where, sizeof(where), "unix:", "gpa.sock");
	path_in_tmp(where_old, sizeof(where_old), "unix:", "gpa-old.sock");
	path_in_tmp(path, sizeof(path), "", "gpa.sock");
	if (!ASSERT_OK(mk_host(&host, where), "host listens") ||
	    !ASSERT_OK(mk_host(&old, where_old), "old host listens"))
		return;
	ASSERT_OK(mk_guest(&g1, where, 0, "g1"), "g1 dials");
	ASSERT_OK(mk_guest(&g2, where, 0, "g2"), "g2 dials");
	ASSERT_OK(mk_guest(&g3, where_old, 0, "g3"), "g3 dials the old host");
	RUN_UNTIL(all, 5, host.ups == 2 && old.ups == 1 && g1.ups && g2.ups && g3.ups, 2000);
	send_recs(&g1, &n1, 50);
	send_recs(&g2, &n2, 50);
	send_recs(&g3, &n3, 50);
	RUN_UNTIL(all, 5,
		  seen(&host, "g1")->count == 50 && seen(&host, "g2")->count == 50 &&
			  seen(&old, "g3")->count == 50,
		  3000);
	ASSERT_EQ(seen(&host, "g1")->with_gpa, 50ULL, "with the cap on both sides: gpa");
	ASSERT_EQ(seen(&host, "g2")->with_gpa, 50ULL, "asked for by the host: long records");
	ASSERT_EQ(seen(&old, "g3")->with_gpa, 0ULL, "a host without it gets v2 records");
	ASSERT_EQ(seen(&old, "g3")->disorder, 0, "v2 records intact");
	pi = first_peer(&g1);
	ASSERT_TRUE(pi && (pi->hello.caps & LINK_CAP_GPA), "g1 sees the host's cap");
	pi = first_peer(&g3);
	ASSERT_TRUE(pi && !(pi->hello.caps & LINK_CAP_GPA), "g3 sees none");

	/* raw guests: a version 2 one (144-byte records) and a newer one (168 bytes) */
	fd = raw_connect(path);
	raw_hello(fd, LINK_ROLE_GUEST, LINK_VERSION, 0x77);
	raw_records_sized(fd, 1, 10, LINK_VREQ_V2_LEN);
	ASSERT_EQ(raw_wait(&host, fd, 10), 0, "v2 records acked");
	raw_records_sized(fd, 11, 20, 168);
	ASSERT_EQ(raw_wait(&host, fd, 20), 0, "longer records acked");
	s = seen(&host, "raw");
	ASSERT_EQ(s->count, 20ULL, "20 delivered");
	ASSERT_EQ(s->disorder, 0, "both sizes read right");
	ASSERT_EQ(s->with_gpa, 10ULL, "gpa 0 in v2 records, kept in the longer ones");
	close(fd);
	link_free(g1.l);
	link_free(g2.l);
	link_free(g3.l);
	link_free(old.l);
	link_free(host.l);
}

int main(void)
{
	mk_tmpdir();
	RUN_TEST(test_encode_decode_all_types);
	RUN_TEST(test_decode_truncated);
	RUN_TEST(test_decode_malformed);
	RUN_TEST(test_clock);
	RUN_TEST(test_parse_addr);
	RUN_TEST(test_unix_end_to_end);
	RUN_TEST(test_host_dedup_and_refusals);
	RUN_TEST(test_gpa_capability);
	RUN_TEST(test_garbage_peers);
	RUN_TEST(test_outbox_overflow);
	RUN_TEST(test_unix_stale_socket);
	RUN_TEST(test_dial_backoff);
	RUN_TEST(test_serial_missing);
	RUN_TEST(test_tcp_loopback);
	RUN_TEST(test_vsock_loopback);
	rmdir(tmpdir);
	return unit_result();
}
