// SPDX-License-Identifier: GPL-2.0
/*
 * link framing: frame encode/decode and the clock estimator of the link
 * protocol (link.h, docs/link.md). Pure: no sockets, no state.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <zlib.h>

#include "mode/link_int.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "link: the wire format is little-endian and is written as host structs"
#endif

_Static_assert(sizeof(struct link_frame_hdr) == 16, "link_frame_hdr size");
_Static_assert(sizeof(struct link_hello) == 120, "link_hello size");
_Static_assert(sizeof(struct link_auth) == 32, "link_auth size");
_Static_assert(sizeof(struct link_ping) == 32, "link_ping size");
_Static_assert(sizeof(struct link_filter) == 648, "link_filter size");
_Static_assert(sizeof(struct link_heartbeat) == 32, "link_heartbeat size");
_Static_assert(sizeof(struct link_vreq) == 152, "link_vreq size");
_Static_assert(offsetof(struct link_vreq, gpa) == LINK_VREQ_V2_LEN, "gpa follows the v2 record");

static const char *const msg_name[LINK_MSG_MAX] = {
	[LINK_HELLO] = "HELLO",		[LINK_PING] = "PING",	    [LINK_PONG] = "PONG",
	[LINK_FILTER] = "FILTER",	[LINK_RECORDS] = "RECORDS", [LINK_ACK] = "ACK",
	[LINK_HEARTBEAT] = "HEARTBEAT", [LINK_BYE] = "BYE",	    [LINK_AUTH] = "AUTH",
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

uint32_t link_rec_size(const void *records_payload)
{
	uint32_t size;

	memcpy(&size, (const char *)records_payload + 4, sizeof(size));
	return size ? size : LINK_VREQ_V2_LEN;
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
		[LINK_AUTH] = sizeof(struct link_auth),
	};

	if (type == LINK_HELLO && len == LINK_V1_HELLO_LEN)
		return NULL; /* refused by on_hello, naming the version */
	if (type == LINK_RECORDS) /* every record size is a multiple of 8 */
		return len < REC_HDR || (len - REC_HDR) % 8 ? "bad RECORDS length" : NULL;
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
	uint32_t magic, count, size;

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
		size = link_rec_size(pl);
		if (size < LINK_VREQ_V2_LEN || size > REC_SIZE_MAX || size % 8)
			return bad_frame(why, "bad record size", -EBADMSG);
		if ((uint64_t)count * size != h.len - REC_HDR)
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

const char *link_msg_name(uint16_t type)
{
	return type && type < LINK_MSG_MAX ? msg_name[type] : "?";
}
