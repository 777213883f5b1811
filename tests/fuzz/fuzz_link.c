// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_link: a peer's byte stream, delivered through a real unix socket into a
 * struct link (mode/link.c) the way a daemon runs it: the frame decoder
 * (link_decode), the receive buffer's reassembly, the hello/records/ack state
 * machine, record deduplication, timers. Only the public API is used.
 *
 * Input: byte 0 sets the scene, the rest is what the peer sends.
 *   bit 0     0: the link is a host (the stream is a guest's), 1: a guest (a host's)
 *   bit 1     frames are made well-formed first (magic, version, crc set, length
 *             clamped to what is left): the stream gets past the decoder's checks
 *   bit 2     host: on_records fails (records not durable: closed, never acked)
 *   bits 3-4  guest: records queued before the stream: 0, 3, 70 (the outbox of 64
 *             wraps and drops), 200
 *   bits 5-6  the stream goes out 200, 1, 16 or all bytes per link_run() (at least
 *             1/48 of it)
 *   bit 7     host: the link listens and accepts us (else it dials, as to a QEMU
 *             chardev); guest: a filter is set (sent after the hello)
 * A link dials our listener; a listening host link gets its own socket file.
 * Simulated time advances 50 ms per link_run() (pings, heartbeats, timeouts).
 *
 * Checked besides memory safety: the host never hands a record twice or out of
 * order (seq strictly increasing per session); the guest's outbox never holds more
 * than its capacity nor acks more than it queued, and loses no record uncounted;
 * on_up/on_down come in pairs; the next deadline after link_run() is in the future
 * (else a daemon's loop spins); log lines are one line of printable text (a peer's
 * bytes must not forge log lines); no fd is leaked.
 */
#include <errno.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <zlib.h>

#include "fuzz.h"
#include "mode/linkauth.h"
#include "lib/clock.h"
#include "mode/link.h"

#define OUTBOX 64
#define STEP_NS 50000000ull
#define MAX_ROUNDS 48 /* chunks grow so that a stream takes at most this many link_run()s */
#define TAIL_ROUNDS 16 /* link_run() calls after the whole stream is out */

static char dir[64]; /* temp dir of the sockets (tmpfs when there is one: cheap binds) */
static struct net_addr lsn_addr, our_addr; /* a listening link's address; ours */
static int our_lsn = -1; /* where a dialing link connects to: we accept and play the peer */
static int base_fd; /* lowest free fd when this input began */

struct scene {
	int guest, fix, fail_records, queued, chunk, filter, listen;
	uint64_t last_seq; /* host: highest seq handed to on_records */
	int ups, downs;
};

static void cleanup(void)
{
	close(our_lsn);
	unlink(our_addr.path);
	rmdir(dir);
}

static int listen_unix(const char *path)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	FUZZ_SETUP(fd >= 0, "socket");
	snprintf(un.sun_path, sizeof(un.sun_path), "%s", path);
	FUZZ_SETUP(!bind(fd, (struct sockaddr *)&un, sizeof(un)) && !listen(fd, 16), "bind");
	return fd;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char why[128];

	snprintf(dir, sizeof(dir), "/dev/shm/it_fuzz_link.XXXXXX");
	if (!mkdtemp(dir)) {
		snprintf(dir, sizeof(dir), "/tmp/it_fuzz_link.XXXXXX");
		FUZZ_SETUP(mkdtemp(dir), "mkdtemp");
	}
	snprintf(why, sizeof(why), "unix:%s/link", dir);
	FUZZ_SETUP(!addr_parse(why, &lsn_addr, why, sizeof(why)), "addr_parse");
	snprintf(why, sizeof(why), "unix:%s/peer", dir);
	FUZZ_SETUP(!addr_parse(why, &our_addr, why, sizeof(why)), "addr_parse");
	our_lsn = listen_unix(our_addr.path);
	atexit(cleanup);
	/* libsodium may keep /dev/urandom open from its first use on: not a leak */
	FUZZ_SETUP(!linkauth_init(), "linkauth_init");
	return 0;
}

/* ---- callbacks: the promises of link.h ---- */

static int on_records(void *ctx, struct link_peer *p, const struct link_vreq *v, uint32_t n)
{
	struct scene *sc = ctx;
	uint32_t i;

	FUZZ_CHECK(n > 0, "on_records with no record");
	for (i = 0; i < n; i++) {
		FUZZ_CHECK(v[i].seq > sc->last_seq, "record seq %llu handed after seq %llu",
			   (unsigned long long)v[i].seq, (unsigned long long)sc->last_seq);
		sc->last_seq = v[i].seq;
	}
	return sc->fail_records ? -EIO : 0;
}

static void on_up(void *ctx, struct link_peer *p)
{
	struct scene *sc = ctx;

	FUZZ_CHECK(link_peer_info(p)->hello_done, "on_up before the hello");
	sc->ups++;
}

/* The clock estimate of a peer that goes: a sane offset and uncertainty, if any. */
static void on_down(void *ctx, struct link_peer *p, const char *why)
{
	const struct link_peer_info *pi = link_peer_info(p);
	struct scene *sc = ctx;
	int64_t off;
	uint64_t unc;

	FUZZ_CHECK(++sc->downs <= sc->ups, "on_down of a peer that was never up (%s)", why);
	FUZZ_CHECK(why && *why && !strchr(why, '\n'), "on_down reason \"%s\"", why ? why : "");
	if (!link_clock_get(&pi->clock, &off, &unc))
		FUZZ_CHECK(pi->clock.samples > 0, "an estimate from no sample");
}

static void on_log(void *ctx, const char *line)
{
	const unsigned char *c;

	for (c = (const unsigned char *)line; *c; c++)
		FUZZ_CHECK(*c >= 0x20 && *c != 0x7f, "control byte 0x%02x in log line \"%s\"", *c,
			   line);
}

/* ---- the stream ---- */

/* Make every frame of s[0..n) well-formed, lengths clamped to what is left. */
static void fix_frames(uint8_t *s, size_t n)
{
	struct link_frame_hdr h;
	size_t off = 0;

	while (n - off >= sizeof(h)) {
		memcpy(&h, s + off, sizeof(h));
		h.magic = LINK_MAGIC;
		h.version = LINK_VERSION;
		if (h.len > n - off - sizeof(h))
			h.len = (uint32_t)(n - off - sizeof(h));
		h.crc = h.len ? (uint32_t)crc32(0L, s + off + sizeof(h), h.len) : 0;
		memcpy(s + off, &h, sizeof(h));
		off += sizeof(h) + h.len;
	}
}

static struct link *scene_link(struct scene *sc)
{
	static const struct link_filter filter = { .nr_serials = 1,
						   .serials = { "fuzzdisk" },
						   .sector_hi = { 1 << 20 } };
	struct link_cb cb = { .ctx = sc,
			      .on_up = on_up,
			      .on_down = on_down,
			      .on_records = on_records,
			      .log = on_log };
	struct link_opts o = { .role = sc->guest ? LINK_ROLE_GUEST : LINK_ROLE_HOST,
			       .name = "fuzz",
			       .outbox = OUTBOX };
	struct link_vreq v[200];
	struct link *l = link_new(&o, &cb);
	int i;

	FUZZ_SETUP(l, "link_new");
	if (sc->listen) {
		FUZZ_SETUP(!link_listen(l, &lsn_addr), "link_listen");
		return l;
	}
	memset(v, 0, (size_t)sc->queued * sizeof(v[0]));
	for (i = 0; i < sc->queued; i++)
		v[i].sector = (uint64_t)i * 8;
	link_send_vreqs(l, v, (uint32_t)sc->queued); /* a host ignores them */
	if (sc->filter)
		link_set_filter(l, &filter);
	FUZZ_SETUP(!link_dial(l, &our_addr), "link_dial");
	return l;
}

/* Our end of the connection: we accept the link's dial, or dial its listener. */
static int scene_connect(const struct scene *sc)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	int fd;

	if (!sc->listen) {
		fd = accept4(our_lsn, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		FUZZ_SETUP(fd >= 0, "accept (the link did not dial)");
		return fd;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	FUZZ_SETUP(fd >= 0, "socket");
	snprintf(un.sun_path, sizeof(un.sun_path), "%s", lsn_addr.path);
	FUZZ_SETUP(!connect(fd, (struct sockaddr *)&un, sizeof(un)), "connect");
	return fd;
}

static void drain(int fd)
{
	char buf[16384];

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

/*
 * Send s[0..n) chunk bytes per round (more when the stream is long: the cost of an
 * input stays bounded), then EOF; run the link until its peer is gone.
 */
static void play(struct link *l, int fd, const struct scene *sc, const uint8_t *s, size_t n)
{
	size_t chunk = n / MAX_ROUNDS + 1 > (size_t)sc->chunk ? n / MAX_ROUNDS + 1 : sc->chunk;
	size_t off = 0, rounds = MAX_ROUNDS + TAIL_ROUNDS;
	uint64_t now = it_mono_ns();
	ssize_t w;
	int shut = 0;

	while (rounds--) {
		if (off < n) {
			w = send(fd, s + off, n - off < chunk ? n - off : chunk,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
			if (w > 0)
				off += (size_t)w;
			else if (w < 0 && errno != EAGAIN && errno != EINTR)
				off = n; /* the link closed its end */
		}
		if (off == n && !shut)
			shut = !shutdown(fd, SHUT_WR);
		link_run(l, now);
		/* timer work already due would make a daemon's epoll loop spin */
		FUZZ_CHECK(link_next_deadline(l) > now, "next deadline %llu, now %llu",
			   (unsigned long long)link_next_deadline(l), (unsigned long long)now);
		now += STEP_NS;
		drain(fd);
		if (shut && !link_next_peer(l, NULL))
			break;
	}
}

static void check_guest(const struct link *l, const struct scene *sc)
{
	struct link_stats st;

	link_get_stats(l, &st);
	FUZZ_CHECK(st.outbox_len <= OUTBOX, "outbox holds %llu records (capacity %d)",
		   (unsigned long long)st.outbox_len, OUTBOX);
	FUZZ_CHECK(st.records_acked <= (uint64_t)sc->queued, "%llu records acked, %d queued",
		   (unsigned long long)st.records_acked, sc->queued);
	FUZZ_CHECK(st.records_dropped + st.records_acked + st.outbox_len == (uint64_t)sc->queued,
		   "dropped %llu + acked %llu + waiting %llu != queued %d",
		   (unsigned long long)st.records_dropped, (unsigned long long)st.records_acked,
		   (unsigned long long)st.outbox_len, sc->queued);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int queued[] = { 0, 3, 70, 200 }, chunk[] = { 200, 1, 16, 1 << 30 };
	struct scene sc = { 0 };
	struct link *l;
	uint8_t *s;
	int fd;

	if (!size)
		return 0;
	/* libFuzzer opens fds of its own between inputs (its symbolizer's pipes) */
	base_fd = dup(0);
	close(base_fd);
	sc.guest = data[0] & 1;
	sc.fix = data[0] >> 1 & 1;
	sc.fail_records = data[0] >> 2 & 1;
	sc.queued = queued[data[0] >> 3 & 3];
	sc.chunk = chunk[data[0] >> 5 & 3];
	sc.filter = sc.guest && data[0] >> 7;
	sc.listen = !sc.guest && data[0] >> 7;
	s = malloc(size);
	FUZZ_SETUP(s, "malloc");
	memcpy(s, data + 1, size - 1);
	if (sc.fix)
		fix_frames(s, size - 1);

	l = scene_link(&sc);
	fd = scene_connect(&sc);
	play(l, fd, &sc, s, size - 1);
	if (sc.guest)
		check_guest(l, &sc);
	link_free(l);
	close(fd);
	/* a link redials after its peer went: those connections wait in our backlog */
	while ((fd = accept4(our_lsn, NULL, NULL, SOCK_CLOEXEC)) >= 0)
		close(fd);
	free(s);
	fd = dup(0);
	close(fd);
	if (fd != base_fd) {
		char p[64], what[256] = "?";
		ssize_t n;

		snprintf(p, sizeof(p), "/proc/self/fd/%d", base_fd);
		n = readlink(p, what, sizeof(what) - 1);
		what[n > 0 ? n : 0] = '\0';
		FUZZ_CHECK(0, "fd leaked: lowest free fd %d, was %d (fd %d is %s)", fd, base_fd,
			   base_fd, what);
	}
	return 0;
}
