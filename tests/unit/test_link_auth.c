// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the link's authentication (mode/linkauth.c, link.c's HELLO /
 * AUTH exchange) and of the key file rules (lib/keyfile.c): real links over
 * unix and tcp loopback sockets in this process, and raw peers that play a
 * guest or a host by hand (replayed and reflected AUTHs).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/keyfile.h"
#include "mode/link.h"
#include "mode/linkauth.h"
#include "unit.h"
#include "link_harness.h"

static struct link_key key_of(uint8_t seed)
{
	struct link_key k = { .len = 32 };

	for (size_t i = 0; i < k.len; i++)
		k.bytes[i] = (uint8_t)(seed + i * 7);
	return k;
}

/* Step node n and read fd until a frame of type arrives (link_harness.h raw_frame()). */
static int raw_expect(struct node *n, int fd, uint16_t type, void *out, size_t len)
{
	return raw_frame(n, fd, type, NULL, out, len);
}

/* A guest HELLO with a fixed nonce (what a recorded transcript holds). */
static struct link_hello raw_guest_hello(uint32_t caps)
{
	struct link_hello h = { .version = LINK_VERSION,
				.role = LINK_ROLE_GUEST,
				.caps = caps,
				.session = 0x5eed,
				.next_seq = 1 };

	snprintf(h.name, sizeof(h.name), "raw");
	memset(h.nonce, 0xab, sizeof(h.nonce));
	return h;
}

static int count_logged(const struct node *n, const char *what)
{
	int c = 0;

	for (int i = 0; i < n->nlogs; i++)
		c += strstr(n->logs[i], what) != NULL;
	return c;
}

static void free_nodes(struct node **ns, int n)
{
	for (int i = 0; i < n; i++)
		link_free(ns[i]->l);
}

/* ---- both sides real ---- */

/* The same key on both sides, over unix and tcp: up, authenticated, records through. */
static void test_auth_ok(void)
{
	struct link_key k = key_of(1);
	const char *where[2];
	char unix_at[128], tcp_at[64];
	uint64_t next = 1;

	path_in_tmp(unix_at, sizeof(unix_at), "unix:", "auth-ok.sock");
	snprintf(tcp_at, sizeof(tcp_at), "tcp:127.0.0.1:%d", free_tcp_port());
	where[0] = unix_at;
	where[1] = tcp_at;
	for (int t = 0; t < 2; t++) {
		struct node host = { .key = &k }, g = { .key = &k };
		struct node *all[] = { &host, &g };

		next = 1;
		if (!ASSERT_OK(mk_host(&host, where[t]), where[t]) ||
		    !ASSERT_OK(mk_guest(&g, where[t], 0, "g"), where[t])) {
			free_nodes(all, 2);
			return;
		}
		RUN_UNTIL(all, 2, host.ups == 1 && g.ups == 1, 2000);
		ASSERT_TRUE(first_peer(&host) && first_peer(&host)->authed, "host: guest authed");
		ASSERT_TRUE(first_peer(&g) && first_peer(&g)->authed, "guest: host authed");
		send_recs(&g, &next, 50);
		RUN_UNTIL(all, 2, seen(&host, "g")->count == 50 && stats(&g).outbox_len == 0, 2000);
		ASSERT_TRUE(logged(&host, "authenticated"), "up line says authenticated");
		ASSERT_EQ(stats(&host).refused + stats(&g).refused, 0ULL, "nothing refused");
		free_nodes(all, 2);
	}
}

/*
 * Different keys: neither side comes up. The host refuses the guest's AUTH
 * (it may close before its own AUTH went out: the guest then sees the end of
 * the stream; test_auth_guest_checks_host has the guest judge a host's AUTH).
 */
static void test_auth_wrong_key(void)
{
	struct link_key k1 = key_of(1), k2 = key_of(2);
	struct node host = { .key = &k1 }, g = { .key = &k2 };
	struct node *all[] = { &host, &g };
	char where[128];

	path_in_tmp(where, sizeof(where), "unix:", "auth-wrong.sock");
	if (ASSERT_OK(mk_host(&host, where), "listen") &&
	    ASSERT_OK(mk_guest(&g, where, 0, "g"), "dial")) {
		RUN_UNTIL(all, 2, stats(&host).refused >= 2, 3000);
		ASSERT_EQ(host.ups + g.ups, 0, "nobody up");
		ASSERT_TRUE(logged(&host, "refused: authentication failed"), "host logged it");
		ASSERT_EQ(stats(&host).records_rx, 0ULL, "no record taken");
	}
	free_nodes(all, 2);
}

/* One side has a key, the other none: refused both ways, on unix and on tcp. */
static void test_auth_key_vs_none(void)
{
	struct link_key k = key_of(3);
	char unix_at[128], tcp_at[64];

	path_in_tmp(unix_at, sizeof(unix_at), "unix:", "auth-none.sock");
	snprintf(tcp_at, sizeof(tcp_at), "tcp:127.0.0.1:%d", free_tcp_port());
	for (int keyed_host = 0; keyed_host < 2; keyed_host++) {
		struct node host = { .key = keyed_host ? &k : NULL };
		struct node g = { .key = keyed_host ? NULL : &k };
		struct node *all[] = { &host, &g };
		const char *where = keyed_host ? unix_at : tcp_at;

		if (ASSERT_OK(mk_host(&host, where), where) &&
		    ASSERT_OK(mk_guest(&g, where, 0, "g"), where)) {
			RUN_UNTIL(all, 2, stats(&host).refused >= 1 && stats(&g).refused >= 1,
				  2000);
			ASSERT_EQ(host.ups + g.ups, 0, "nobody up");
			ASSERT_TRUE(logged(keyed_host ? &host : &g, "peer has no link key"),
				    "the keyed side names the missing key");
			ASSERT_TRUE(logged(keyed_host ? &g : &host, "peer wants a link key"),
				    "the keyless side too");
		}
		free_nodes(all, 2);
	}
}

/* ---- raw peers: replay and reflection ---- */

/* A raw guest with the right key gets in; the same bytes again do not. */
static void test_auth_replay(void)
{
	struct link_key k = key_of(4);
	struct node host = { .key = &k };
	struct link_hello gh = raw_guest_hello(LINK_CAP_VREQ | LINK_CAP_AUTH), hh1, hh2, hh3;
	struct link_auth a, host_auth;
	char path[128];
	int fd;

	if (!ASSERT_OK(mk_unix_host(&host, "auth-replay.sock", path, sizeof(path)), "listen"))
		goto out;
	/* a genuine exchange, recorded */
	fd = raw_connect(path);
	ASSERT_EQ(raw_expect(&host, fd, LINK_HELLO, &hh1, sizeof(hh1)), 0, "host HELLO");
	ASSERT_TRUE(hh1.caps & LINK_CAP_AUTH_REQ, "the host requires AUTH");
	raw_send(fd, LINK_HELLO, &gh, sizeof(gh));
	linkauth_mac(&k, LINK_ROLE_GUEST, &gh, &hh1, sizeof(gh), a.mac);
	raw_send(fd, LINK_AUTH, &a, sizeof(a));
	raw_records(fd, 1, 3);
	ASSERT_EQ(raw_wait(&host, fd, 3), 0, "the right AUTH: records acked");
	close(fd);
	/* the recorded HELLO and AUTH on a new connection: another host nonce */
	fd = raw_connect(path);
	ASSERT_EQ(raw_expect(&host, fd, LINK_HELLO, &hh2, sizeof(hh2)), 0, "host HELLO 2");
	ASSERT_TRUE(memcmp(hh1.nonce, hh2.nonce, sizeof(hh1.nonce)), "a fresh host nonce");
	raw_send(fd, LINK_HELLO, &gh, sizeof(gh));
	raw_send(fd, LINK_AUTH, &a, sizeof(a));
	raw_records(fd, 4, 6);
	ASSERT_EQ(raw_wait(&host, fd, 6), 1, "replay: closed");
	close(fd);
	/* the host's own AUTH sent back to it */
	fd = raw_connect(path);
	ASSERT_EQ(raw_expect(&host, fd, LINK_HELLO, &hh3, sizeof(hh3)), 0, "host HELLO 3");
	raw_send(fd, LINK_HELLO, &gh, sizeof(gh));
	ASSERT_EQ(raw_expect(&host, fd, LINK_AUTH, &host_auth, sizeof(host_auth)), 0, "host AUTH");
	raw_send(fd, LINK_AUTH, &host_auth, sizeof(host_auth));
	raw_records(fd, 4, 6);
	ASSERT_EQ(raw_wait(&host, fd, 6), 1, "reflection: closed");
	close(fd);
	ASSERT_EQ(seen(&host, "raw")->count, 3ULL, "only the genuine records delivered");
	ASSERT_EQ(stats(&host).refused, 2ULL, "replay and reflection refused");
	ASSERT_EQ(count_logged(&host, "refused: authentication failed"), 2, "both logged");
out:
	link_free(host.l);
}

/* Accept one connection on listening fd lfd while stepping n. */
static int raw_accept(struct node *n, int lfd)
{
	struct node *ns[] = { n };
	uint64_t dl = mono() + 2 * SEC;
	int fd = -1;

	while (fd < 0 && mono() < dl) {
		step(ns, 1);
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	}
	return fd;
}

/* The guest checks the host too: a raw host with a wrong AUTH is refused, the right one not. */
static void test_auth_guest_checks_host(void)
{
	struct link_key k = key_of(5), wrong = key_of(6);
	struct node g = { .key = &k };
	struct node *gs[] = { &g };
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	struct link_hello gh, hh = {
		.version = LINK_VERSION, .role = LINK_ROLE_HOST, .caps = LINK_CAP_AUTH, .session = 9
	};
	struct link_auth a;
	char where[128];
	int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), fd;

	path_in_tmp(un.sun_path, sizeof(un.sun_path), "", "auth-fakehost.sock");
	path_in_tmp(where, sizeof(where), "unix:", "auth-fakehost.sock");
	if (!ASSERT_OK(bind(lfd, (struct sockaddr *)&un, sizeof(un)) || listen(lfd, 4), "listen") ||
	    !ASSERT_OK(mk_guest(&g, where, 0, "g"), "dial"))
		goto out;
	for (int round = 0; round < 2; round++) {
		fd = raw_accept(&g, lfd);
		if (!ASSERT_TRUE(fd >= 0, "the guest connects"))
			goto out;
		ASSERT_EQ(raw_expect(&g, fd, LINK_HELLO, &gh, sizeof(gh)), 0, "guest HELLO");
		ASSERT_TRUE(gh.caps & LINK_CAP_AUTH_REQ, "a keyed unix guest requires AUTH");
		memset(hh.nonce, round + 1, sizeof(hh.nonce));
		raw_send(fd, LINK_HELLO, &hh, sizeof(hh));
		linkauth_mac(round ? &k : &wrong, LINK_ROLE_HOST, &gh, &hh, sizeof(gh), a.mac);
		raw_send(fd, LINK_AUTH, &a, sizeof(a));
		if (!round) {
			RUN_UNTIL(gs, 1, stats(&g).refused == 1, 2000);
			ASSERT_EQ(g.ups, 0, "wrong host AUTH: not up");
		} else {
			RUN_UNTIL(gs, 1, g.ups == 1, 2000);
			ASSERT_TRUE(first_peer(&g)->authed, "right host AUTH: up, authed");
		}
		close(fd);
	}
out:
	close(lfd);
	link_free(g.l);
}

/* ---- listeners and logs ---- */

static void test_listen_rules(void)
{
	struct link_key k = key_of(7);
	struct node bare = { 0 }, keyed = { .key = &k };
	struct net_addr a;
	char spec[64], path[128], where[128];
	struct stat st;
	int port = free_tcp_port();

	path_in_tmp(where, sizeof(where), "unix:", "mode.sock");
	path_in_tmp(path, sizeof(path), "", "mode.sock");
	if (!ASSERT_TRUE(mk_link(&bare, LINK_ROLE_HOST, 0, "h") &&
				 mk_link(&keyed, LINK_ROLE_HOST, 0, "h"),
			 "links"))
		goto out;
	snprintf(spec, sizeof(spec), "tcp:0.0.0.0:%d", port);
	addr(spec, &a);
	ASSERT_EQ(link_listen(bare.l, &a), -EPERM, "keyless off the loopback: refused");
	ASSERT_OK(link_listen(keyed.l, &a), "with a key: anywhere");
	snprintf(spec, sizeof(spec), "tcp:[::1]:%d", free_tcp_port());
	addr(spec, &a);
	ASSERT_OK(link_listen(bare.l, &a), "keyless on ::1");
	addr(where, &a);
	ASSERT_OK(link_listen(bare.l, &a), "unix");
	ASSERT_OK(stat(path, &st), "socket file");
	ASSERT_EQ(st.st_mode & 0777, 0600u, "unix socket mode 0600");
out:
	link_free(bare.l);
	link_free(keyed.l);
}

/* Refusals: each counted, one log line per period, the rest counted on the next. */
static void test_refusal_log_rate(void)
{
	struct node host = { .log_every_ns = 300 * MS };
	char path[128];
	int fd;

	if (!ASSERT_OK(mk_unix_host(&host, "rate.sock", path, sizeof(path)), "listen"))
		goto out;
	for (int i = 0; i < 5; i++) {
		fd = raw_connect(path);
		raw_hello(fd, LINK_ROLE_GUEST, 0, 100 + i);
		ASSERT_EQ(raw_wait(&host, fd, 0), 1, "refused");
		close(fd);
	}
	ASSERT_EQ(stats(&host).refused, 5ULL, "5 counted");
	ASSERT_EQ(count_logged(&host, "refused:"), 1, "1 line logged");
	usleep(350 * 1000);
	fd = raw_connect(path);
	raw_hello(fd, LINK_ROLE_GUEST, 0, 200);
	ASSERT_EQ(raw_wait(&host, fd, 0), 1, "refused");
	close(fd);
	ASSERT_EQ(count_logged(&host, "refused:"), 2, "a line again after the period");
	ASSERT_TRUE(logged(&host, "(+4 more not logged)"), "with the count left out");
out:
	link_free(host.l);
}

/* ---- key files ---- */

static void test_keyfile_check(void)
{
	struct stat st = { .st_mode = S_IFREG | 0600, .st_uid = 0, .st_size = 32 };
	char why[128] = "";

	ASSERT_OK(keyfile_check(&st, 0, why, sizeof(why)), "0600 root 32 bytes");
	st.st_mode = S_IFREG | 0400;
	ASSERT_OK(keyfile_check(&st, 0, why, sizeof(why)), "0400");
	st.st_mode = S_IFREG | 0640;
	ASSERT_EQ(keyfile_check(&st, 0, why, sizeof(why)), -EPERM, "group read");
	ASSERT_TRUE(strstr(why, "mode 0640") != NULL, "names the mode");
	st.st_mode = S_IFREG | 0604;
	ASSERT_EQ(keyfile_check(&st, 0, why, sizeof(why)), -EPERM, "other read");
	st.st_mode = S_IFREG | 0600;
	st.st_uid = 1000;
	ASSERT_EQ(keyfile_check(&st, 0, why, sizeof(why)), -EPERM, "not root's");
	ASSERT_TRUE(strstr(why, "uid 1000") != NULL, "names the owner");
	st.st_uid = 0;
	st.st_size = 31;
	ASSERT_EQ(keyfile_check(&st, 0, why, sizeof(why)), -EINVAL, "31 bytes");
	st.st_size = KEYFILE_MAX + 1;
	ASSERT_EQ(keyfile_check(&st, 0, why, sizeof(why)), -EINVAL, "too big");
	st.st_size = 32;
	st.st_mode = S_IFDIR | 0700;
	ASSERT_EQ(keyfile_check(&st, 0, why, sizeof(why)), -EINVAL, "a directory");
}

static int write_file(const char *path, size_t n, mode_t mode)
{
	uint8_t b[64];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	ssize_t w;

	for (size_t i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)(i * 13 + 1);
	if (fd < 0)
		return -1;
	w = write(fd, b, n);
	fchmod(fd, mode);
	close(fd);
	return w == (ssize_t)n ? 0 : -1;
}

static void test_keyfile_load(void)
{
	struct link_key k;
	char path[128], link_path[128], why[128];

	path_in_tmp(path, sizeof(path), "", "key");
	path_in_tmp(link_path, sizeof(link_path), "", "key.link");
	if (!ASSERT_OK(write_file(path, 40, 0600), "key file"))
		return;
	if (geteuid() == 0) {
		ASSERT_OK(keyfile_load(path, &k, why, sizeof(why)), "root's 0600 file");
		ASSERT_EQ(k.len, (size_t)40, "all its bytes");
		ASSERT_EQ(k.bytes[39], (uint8_t)(39 * 13 + 1), "its content");
	} else {
		ASSERT_EQ(keyfile_load(path, &k, why, sizeof(why)), -EPERM, "not root's");
	}
	chmod(path, 0644);
	ASSERT_EQ(keyfile_load(path, &k, why, sizeof(why)), -EPERM, "0644 refused");
	ASSERT_EQ(k.len, (size_t)0, "nothing kept");
	ASSERT_EQ(symlink(path, link_path), 0, "symlink");
	ASSERT_TRUE(keyfile_load(link_path, &k, why, sizeof(why)) < 0, "a symlink refused");
	ASSERT_EQ(keyfile_load("/nonexistent/key", &k, why, sizeof(why)), -ENOENT, "missing");
	unlink(link_path);
	unlink(path);
}

int main(void)
{
	mk_tmpdir();
	RUN_TEST(test_auth_ok);
	RUN_TEST(test_auth_wrong_key);
	RUN_TEST(test_auth_key_vs_none);
	RUN_TEST(test_auth_replay);
	RUN_TEST(test_auth_guest_checks_host);
	RUN_TEST(test_listen_rules);
	RUN_TEST(test_refusal_log_rate);
	RUN_TEST(test_keyfile_check);
	RUN_TEST(test_keyfile_load);
	rmdir(tmpdir);
	return unit_result();
}
