// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of mode/scope.c (which disks a link peer may touch on the host,
 * what its filters and records may do there) with synthetic peers and QEMUs,
 * and end to end over a real link: a host whose admit / check callbacks are
 * the scope module's, as host mode's are.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include "iotracer.h"
#include "mode/link.h"
#include "mode/scope.h"
#include "unit.h"
#include "link_harness.h"

#define GIB (1ull << 30)

/*
 * Two QEMUs: A (vsock CID 3, a chardev socket) with disks vda-a and data,
 * B (CID 4) with vda-b and data: the same serial in both guests.
 */
static const struct qemu_vm vms[2] = {
	{ .cid = 3, .nr_socks = 1, .socks = { "/run/a.sock" } },
	{ .cid = 4 },
};
static const struct scope_disk disks[4] = {
	{ "vda-a", 0, GIB, QEMU_BUS_OTHER },
	{ "data", 0, GIB, QEMU_BUS_OTHER },
	{ "vda-b", 1, GIB, QEMU_BUS_OTHER },
	{ "data", 1, 0, QEMU_BUS_OTHER }, /* size unknown: no bound */
};
static const struct scope_host two = { disks, 4, vms, 2 };

static uint64_t scope_for(const struct scope_peer *p, int *err)
{
	char why[128] = "";
	uint64_t m = 0;

	*err = scope_of(&two, p, &m, why, sizeof(why));
	if (*err)
		UNIT_LOG("# %s\n", why);
	return m;
}

static void test_scope_of_peers(void)
{
	struct scope_peer p = { .transport = ADDR_VSOCK, .accepted = 1, .cid = 3, .path = "" };
	char why[128] = "";
	uint64_t m;
	int err;

	ASSERT_EQ(scope_for(&p, &err), 0x3ULL, "CID 3: QEMU A's disks");
	p.cid = 4;
	ASSERT_EQ(scope_for(&p, &err), 0xcULL, "CID 4: QEMU B's disks");
	p.cid = 5;
	ASSERT_EQ(scope_of(&two, &p, &m, why, sizeof(why)), -EACCES, "CID 5: no QEMU");
	ASSERT_TRUE(strstr(why, "vsock CID 5") != NULL, "the reason names the CID");
	ASSERT_EQ(m, 0ULL, "nothing");
	p.cid = 1; /* a local process over vsock loopback */
	ASSERT_EQ(scope_of(&two, &p, &m, why, sizeof(why)), -EACCES, "CID 1 refused");
	p = (struct scope_peer){ .transport = ADDR_UNIX, .accepted = 0, .path = "/run/a.sock" };
	ASSERT_EQ(scope_for(&p, &err), 0x3ULL, "dialed chardev of A: A's disks");
	p.path = "/run/other.sock";
	ASSERT_EQ(scope_for(&p, &err), 0xfULL, "another dialed socket: every disk");
	p = (struct scope_peer){ .transport = ADDR_UNIX, .accepted = 1, .path = "/run/a.sock" };
	ASSERT_EQ(scope_for(&p, &err), 0xfULL, "accepted unix (root only, or keyed): every disk");
	p = (struct scope_peer){ .transport = ADDR_TCP, .accepted = 1, .path = "" };
	ASSERT_EQ(scope_for(&p, &err), 0xfULL, "tcp (keyed, or loopback): every disk");
}

static struct link_filter filter_of(const char *const *serials, uint32_t n)
{
	struct link_filter f = { .nr_serials = n };

	for (uint32_t i = 0; i < n; i++)
		strncpy(f.serials[i], serials[i], LINK_SERIAL_LEN);
	return f;
}

/* Guests of A and B: neither can blind the other's disks. */
static void test_filter_two_guests(void)
{
	const char *a_own[] = { "vda-a" }, *b_own[] = { "data" };
	const char *a_at_b[] = { "vda-b" }, *a_mixed[] = { "vda-b", "data", "nope" };
	struct link_filter f;
	struct scope_claim c[2] = { { .scope = 0x3 }, { .scope = 0xc } };
	char junk[LINK_FILTER_MAX][LINK_SERIAL_LEN + 1];
	const char *junkp[LINK_FILTER_MAX];
	uint64_t named;

	ASSERT_EQ(scope_wanted(&two, c, 2), 0xfULL, "no filter: every disk traced");
	f = filter_of(a_at_b, 1);
	ASSERT_EQ(scope_filter(&two, c[0].scope, &f, &c[0].named), 1, "B's serial from A: ignored");
	ASSERT_EQ(c[0].named, 0ULL, "it names nothing of A's");
	ASSERT_EQ(scope_wanted(&two, c, 2), 0xfULL, "A cannot switch B's vda-b off");
	f = filter_of(a_mixed, 3);
	ASSERT_EQ(scope_filter(&two, c[0].scope, &f, &c[0].named), 2, "2 of 3 ignored");
	ASSERT_EQ(c[0].named, 0x2ULL, "'data' in A's scope is A's data only");
	ASSERT_EQ(scope_wanted(&two, c, 2), 0xeULL, "A narrows its own disks: vda-a off, B's on");
	f = filter_of(a_own, 1);
	scope_filter(&two, c[0].scope, &f, &c[0].named);
	ASSERT_EQ(scope_wanted(&two, c, 2), 0xdULL, "A: vda-a only; B's untouched");
	for (int i = 0; i < LINK_FILTER_MAX; i++) {
		snprintf(junk[i], sizeof(junk[i]), "junk%02d", i);
		junkp[i] = junk[i];
	}
	f = filter_of(junkp, LINK_FILTER_MAX);
	ASSERT_EQ(scope_filter(&two, c[1].scope, &f, &c[1].named), 16, "16 junk serials ignored");
	ASSERT_EQ(c[1].named, 0ULL, "junk: no say");
	ASSERT_EQ(scope_wanted(&two, c, 2), 0xdULL, "junk changes nothing");
	f = filter_of(b_own, 1);
	scope_filter(&two, c[1].scope, &f, &c[1].named);
	ASSERT_EQ(c[1].named, 0x8ULL, "B's 'data' is B's");
	ASSERT_EQ(scope_wanted(&two, c, 2), 0x9ULL, "each narrowed its own");
	f = (struct link_filter){ .nr_serials = 0 };
	ASSERT_EQ(scope_filter(&two, c[1].scope, &f, &named), 0, "no serials: nothing ignored");
	ASSERT_EQ(named, 0xcULL, "no serials: all of its own disks");
}

static struct link_vreq good_vreq(const char *serial)
{
	struct link_vreq v = { .seq = 1, .sector = 8, .nr_sectors = 8, .op = IT_OP_READ };

	strncpy(v.serial, serial, LINK_SERIAL_LEN);
	v.q_ns = 100, v.d_ns = 200, v.c_ns = 900;
	v.submit_ns = 210, v.kick_ns = 220, v.done_ns = 800;
	v.flags = LINK_VF_HAS_SYS;
	v.sys_enter_ns = 50, v.sys_exit_ns = 1000;
	return v;
}

static void expect_bad(uint64_t scope, const struct link_vreq *v, const char *why_want)
{
	int disk = 7;

	ASSERT_STREQ(scope_check_vreq(&two, scope, v, &disk), why_want, why_want);
	ASSERT_EQ(disk, -1, "no disk for a refused record");
}

/* A time stamp set out of order in a good record, and the reason expected. */
static const struct {
	size_t off;
	uint64_t val;
	const char *why;
} bad_times[] = {
	{ offsetof(struct link_vreq, d_ns), 50, "block times out of order" },
	{ offsetof(struct link_vreq, done_ns), 5, "virtio times out of order" },
	{ offsetof(struct link_vreq, sys_exit_ns), 10, "syscall times out of order" },
};

static void test_check_records(void)
{
	const uint64_t a = 0x3, b = 0xc, end = GIB / 512;
	struct link_vreq v = good_vreq("data");
	int disk = -1;

	ASSERT_TRUE(scope_check_vreq(&two, a, &v, &disk) == NULL, "A's data");
	ASSERT_EQ(disk, 1, "A's 'data' is disk 1");
	ASSERT_TRUE(scope_check_vreq(&two, b, &v, &disk) == NULL, "B's data");
	ASSERT_EQ(disk, 3, "B's 'data' is disk 3");
	v = good_vreq("vda-b");
	expect_bad(a, &v, "disk of another guest");
	v = good_vreq("sdz");
	expect_bad(a, &v, "no disk with that serial");
	v = good_vreq("");
	expect_bad(a, &v, "no disk serial");
	v = good_vreq("vda-a");
	v.op = 86;
	expect_bad(a, &v, "unknown op");
	v = good_vreq("vda-a");
	v.sector = 4400000000000000000ull;
	expect_bad(a, &v, "sectors beyond the end of the disk");
	v.sector = end - 8;
	ASSERT_TRUE(scope_check_vreq(&two, a, &v, &disk) == NULL, "the last 8 sectors");
	v.nr_sectors = 9;
	expect_bad(a, &v, "sectors beyond the end of the disk");
	v.sector = UINT64_MAX - 2; /* no wrap-around */
	v.nr_sectors = 8;
	expect_bad(a, &v, "sectors beyond the end of the disk");
	v.op = IT_OP_SYNC; /* a flush: no sectors, position -1 */
	v.sector = UINT64_MAX;
	v.nr_sectors = 0;
	ASSERT_TRUE(scope_check_vreq(&two, a, &v, &disk) == NULL, "a flush at sector -1");
	v = good_vreq("data");
	v.sector = 4400000000000000000ull;
	ASSERT_TRUE(scope_check_vreq(&two, b, &v, &disk) == NULL, "B's data: size unknown");
	for (size_t i = 0; i < sizeof(bad_times) / sizeof(bad_times[0]); i++) {
		v = good_vreq("vda-a");
		memcpy((char *)&v + bad_times[i].off, &bad_times[i].val, sizeof(uint64_t));
		expect_bad(a, &v, bad_times[i].why);
	}
	v.flags = 0; /* no parent syscall: its stamps are not looked at */
	ASSERT_TRUE(scope_check_vreq(&two, a, &v, &disk) == NULL, "no syscall");
	v = good_vreq("vda-a");
	v.d_ns = v.kick_ns = 0; /* not seen: skipped */
	ASSERT_TRUE(scope_check_vreq(&two, a, &v, &disk) == NULL, "zeros skipped");
	v = good_vreq("vda-a");
	v.kick_ns = 5; /* a kick of an earlier, ring-full attempt: not judged */
	ASSERT_TRUE(scope_check_vreq(&two, a, &v, &disk) == NULL, "kick before the last submit");
}

/*
 * One guest with the same serial on three buses (a virtio-blk, a scsi-hd and
 * an nvme disk) and an ide-hd disk (bus unknown): each record goes to the
 * disk of its own bus (its drv_layer).
 */
static void test_check_bus(void)
{
	static const struct scope_disk bd[4] = {
		{ "same", 0, GIB, QEMU_BUS_VIRTIO_BLK },
		{ "same", 0, GIB, QEMU_BUS_SCSI },
		{ "same", 0, GIB, QEMU_BUS_NVME },
		{ "ide", 0, GIB, QEMU_BUS_OTHER },
	};
	static const struct scope_host h = { bd, 4, vms, 1 };
	struct link_vreq v = good_vreq("same");
	int disk = -1;

	v.drv_layer = IT_L_VIRTIO;
	ASSERT_TRUE(scope_check_vreq(&h, 0xf, &v, &disk) == NULL, "virtio-blk");
	ASSERT_EQ(disk, 0, "virtio-blk disk");
	v.drv_layer = IT_L_SCSI;
	ASSERT_TRUE(scope_check_vreq(&h, 0xf, &v, &disk) == NULL, "scsi");
	ASSERT_EQ(disk, 1, "scsi-hd disk");
	v.drv_layer = IT_L_NVME;
	ASSERT_TRUE(scope_check_vreq(&h, 0xf, &v, &disk) == NULL, "nvme");
	ASSERT_EQ(disk, 2, "nvme disk");
	v.drv_layer = 0; /* a record without a driver layer: the first disk */
	ASSERT_TRUE(scope_check_vreq(&h, 0xf, &v, &disk) == NULL, "no layer");
	ASSERT_EQ(disk, 0, "first with the serial");
	v.drv_layer = IT_L_NVME;
	ASSERT_STREQ(scope_check_vreq(&h, 0x3, &v, &disk),
		     "no disk with that serial on the record's bus", "nvme, no nvme disk in scope");
	ASSERT_EQ(disk, -1, "refused");
	v = good_vreq("ide");
	v.drv_layer = IT_L_SCSI; /* an ide-hd disk: the guest's libata is a SCSI host */
	ASSERT_TRUE(scope_check_vreq(&h, 0xf, &v, &disk) == NULL, "bus unknown: any");
	ASSERT_EQ(disk, 3, "ide disk");
}

/* ---- end to end: a host link whose admit / check are the scope module's ---- */

static const struct scope_disk e2e_disks[3] = { { "disk0", 0, GIB, QEMU_BUS_OTHER },
						{ "disk1", 0, GIB, QEMU_BUS_OTHER },
						{ "disk2", 0, GIB, QEMU_BUS_OTHER } };
static const struct qemu_vm e2e_vm = { .cid = 3 };
static const struct scope_host e2e = { e2e_disks, 3, &e2e_vm, 1 };
static uint64_t e2e_scope;

static int e2e_admit(void *ctx, struct link_peer *p, char *why, size_t whylen)
{
	const struct link_peer_info *pi = link_peer_info(p);
	struct scope_peer sp = {
		.transport = pi->transport, .accepted = pi->accepted, .cid = pi->cid, .path = ""
	};

	link_peer_set_user(p, &e2e_scope);
	return scope_of(&e2e, &sp, &e2e_scope, why, whylen);
}

static const char *e2e_check(void *ctx, struct link_peer *p, const struct link_vreq *v)
{
	const uint64_t *scope = link_peer_user(p);
	int disk;

	return scope_check_vreq(&e2e, *scope, v, &disk);
}

/* A guest's junk filter and malformed records: counted, nothing changed or delivered. */
static void test_end_to_end(void)
{
	struct node host = { .admit = e2e_admit, .check = e2e_check }, g = { 0 };
	struct node *all[] = { &host, &g };
	struct link_filter f = { .nr_serials = LINK_FILTER_MAX };
	struct link_vreq bad[5];
	uint64_t next = 1, named = 1;
	char where[128];

	path_in_tmp(where, sizeof(where), "unix:", "scope.sock");
	if (!ASSERT_OK(mk_host(&host, where), "listen") ||
	    !ASSERT_OK(mk_guest(&g, where, 0, "g"), "dial"))
		goto out;
	for (int i = 0; i < LINK_FILTER_MAX; i++)
		snprintf(f.serials[i], LINK_SERIAL_LEN, "junk%d", i);
	link_set_filter(g.l, &f);
	RUN_UNTIL(all, 2, host.ups == 1 && host.filters == 1, 2000);
	ASSERT_EQ(e2e_scope, 0x7ULL, "a unix guest: every disk");
	ASSERT_EQ(scope_filter(&e2e, e2e_scope, &host.filter, &named), 16, "16 serials ignored");
	ASSERT_EQ(named, 0ULL, "the filter changes nothing");
	send_recs(&g, &next, 10);
	for (int i = 0; i < 5; i++) {
		bad[i] = good_vreq("disk1");
		bad[i].sector = 0;
	}
	bad[0].op = 86;
	bad[1].sector = 4400000000000000000ull;
	strncpy(bad[2].serial, "nodisk", LINK_SERIAL_LEN);
	bad[3].q_ns = 10000;
	bad[4].serial[0] = '\0';
	link_send_vreqs(g.l, bad, 5);
	next += 5;
	send_recs(&g, &next, 10);
	RUN_UNTIL(all, 2, stats(&g).outbox_len == 0 && stats(&host).records_rx == 25, 2000);
	ASSERT_EQ(seen(&host, "g")->count, 20ULL, "the 20 good records delivered");
	ASSERT_EQ(seen(&host, "g")->disorder, 0, "as sent");
	ASSERT_EQ(stats(&host).records_bad, 5ULL, "5 malformed counted");
	ASSERT_EQ(first_peer(&host)->bad_records, 5ULL, "per peer too");
	ASSERT_EQ(stats(&g).records_acked, 25ULL, "all acked: none comes back");
	ASSERT_TRUE(logged(&host, "record seq 11 refused: unknown op"), "logged");
out:
	link_free(g.l);
	link_free(host.l);
}

static int admit_none(void *ctx, struct link_peer *p, char *why, size_t whylen)
{
	snprintf(why, whylen, "vsock CID 9 is no traced QEMU's guest-cid");
	return -EACCES;
}

/*
 * A peer on_admit refuses (host mode: a CID of no QEMU) is counted, logged, never
 * up on the host (a keyless guest thinks it is up from the host's HELLO until the
 * host closes).
 */
static void test_admit_refused(void)
{
	struct node host = { .admit = admit_none }, g = { 0 };
	struct node *all[] = { &host, &g };
	char where[128];
	uint64_t next = 1;

	path_in_tmp(where, sizeof(where), "unix:", "admit.sock");
	if (ASSERT_OK(mk_host(&host, where), "listen") &&
	    ASSERT_OK(mk_guest(&g, where, 0, "g"), "dial")) {
		send_recs(&g, &next, 5);
		RUN_UNTIL(all, 2, stats(&host).refused >= 2, 2000);
		ASSERT_EQ(host.ups, 0, "never up on the host");
		ASSERT_EQ(stats(&host).records_rx, 0ULL, "no record taken");
		ASSERT_EQ(stats(&g).outbox_len, 5ULL, "none acked: the guest keeps them");
		ASSERT_TRUE(logged(&host, "refused: vsock CID 9 is no traced QEMU's guest-cid"),
			    "logged with the reason");
	}
	link_free(g.l);
	link_free(host.l);
}

int main(void)
{
	mk_tmpdir();
	RUN_TEST(test_scope_of_peers);
	RUN_TEST(test_filter_two_guests);
	RUN_TEST(test_check_records);
	RUN_TEST(test_check_bus);
	RUN_TEST(test_end_to_end);
	RUN_TEST(test_admit_refused);
	rmdir(tmpdir);
	return unit_result();
}
