// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of host mode's --blame (src/mode/hblame.c with the daemon's engine,
 * src/blame/dblame.c): VMs named as owners (QEMU -name, the guest's hello,
 * qemu:PID), other processes by cgroup, one VM's threads in two cgroups as one
 * owner; joined paths held until their host IOs' splits are in, then carrying
 * them (several host IOs summed), or written without them after HB_WAIT_NS.
 * The splits are worked out by hand in the comments.
 */
#include <stdlib.h>

#include "lib/jsonw.h"
#include "mode/hblame.h"
#include "records/cgroup.h"
#include "blame/dblame.h"
#include "unit.h"

/* A block request on device 8; stamps from 10 us (a Q of 0 would be "no Q"). */
static struct it_block_rec mk_rec(uint64_t cg, uint32_t pid, uint64_t q, uint64_t d, uint64_t c)
{
	return (struct it_block_rec){ .dev = 8,
				      .task = { .pid = pid, .cgroup_id = cg },
				      .q_ns = 10000 + q,
				      .d_ns = 10000 + d,
				      .c_ns = 10000 + c };
}

static void feed(struct dblame *d, uint64_t id, struct it_block_rec *b)
{
	struct corr_req r = { .kind = CORR_SYSCALL, .id = id, .nr_blocks = 1, .blocks = { b } };

	dblame_request(d, &r);
}

static const char *t_mdev(uint32_t dev, void *ctx)
{
	(void)ctx;
	return dev == 8 ? "sda" : "?";
}

/* What the paths' writer got: each path's guest seq, and its host_blame as JSON. */
struct emitted {
	int n;
	uint64_t seq[8];
	int missing[8];
	char json[8][1024];
};

static struct dblame *t_engine;

static void on_emit(void *ctx, const struct vj_path *p, const struct dblame_rec *blame, int missing)
{
	struct emitted *e = ctx;
	struct jw w;

	if (e->n >= 8)
		return;
	e->seq[e->n] = p->g->seq;
	e->missing[e->n] = missing;
	e->json[e->n][0] = 0;
	if (blame) {
		jw_init(&w);
		jw_obj_begin(&w, NULL);
		dblame_json_rec(t_engine, &w, blame);
		jw_obj_end(&w);
		snprintf(e->json[e->n], sizeof(e->json[0]), "%.*s", (int)jw_len(&w), jw_data(&w));
		jw_free(&w);
	}
	e->n++;
}

static void mk_path(struct vj_path *p, struct link_vreq *g, uint64_t seq, int joined, uint64_t req0,
		    uint64_t req1)
{
	memset(p, 0, sizeof(*p));
	memset(g, 0, sizeof(*g));
	g->seq = seq;
	p->g = g;
	p->joined = joined;
	p->nr_h = joined ? 2 : 0;
	p->hp[0].req = req0;
	p->hp[1].req = req1;
	p->h = p->hp[0];
}

/*
 * QEMUs: 100 "victim" (-name), 200 (no -name, its guest said "aggr"), 300 (neither:
 * qemu:300); pid 400 is no QEMU (cgroup 5, /system.slice/x). On one device:
 *   A  (200) in service [0, 100)          X (400) in service [60, 100)
 *   V  (100, id 21) queued 0, dispatched 100, done 150: its queue [0, 60) held by A
 *      alone (60), [60, 100) by A and X (20 each): aggr 80, /system.slice/x 20; own 50
 *   Q  (300) in service [1000, 1050); V2 (100, id 24) queued 1000, in service
 *      [1050, 1060): qemu:300 50, own 10
 *   V3 (100, cgroup 9: another thread's cgroup) [2000, 2050); V4 (100, cgroup 1, id 26)
 *      queued 2000, in service [2050, 2060): self 50 (the same VM), own 10
 */
static void test_vm_owners(void)
{
	struct cg_cache *cg = cg_cache_new("/nonexistent");
	struct hblame *hb = NULL;
	struct dblame *d = NULL;
	struct emitted em = { 0 };
	struct it_block_rec a, x, v, q, v2, v3, v4;
	struct vj_path p[4];
	struct link_vreq g[4];
	char *txt = NULL;
	size_t n = 0;
	FILE *f = NULL;

	if (!ASSERT_TRUE(cg, "cache"))
		return;
	cg_cache_put(cg, 1, "/machine/victim");
	cg_cache_put(cg, 2, "/machine/aggr");
	cg_cache_put(cg, 5, "/system.slice/x");
	cg_cache_put(cg, 9, "/machine/victim/emulator");
	d = dblame_new(cg, 1, NULL);
	hb = hblame_new(on_emit, &em);
	if (!ASSERT_TRUE(d && hb, "new"))
		goto out;
	t_engine = d;
	hblame_set_vm(hb, 0, 100, "victim");
	hblame_set_vm(hb, 1, 200, "");
	hblame_set_guest(hb, 1, "aggr");
	hblame_set_vm(hb, 2, 300, "");
	ASSERT_STREQ(hblame_vm_name(hb, 100), "victim", "-name first");
	ASSERT_STREQ(hblame_vm_name(hb, 200), "aggr", "then the guest's hello");
	ASSERT_STREQ(hblame_vm_name(hb, 300), "qemu:300", "else qemu:PID");
	ASSERT_TRUE(!hblame_vm_name(hb, 400), "no VM");
	hblame_set_guest(hb, 0, "ignored");
	ASSERT_STREQ(hblame_vm_name(hb, 100), "victim", "-name wins over the hello");
	ASSERT_OK(hblame_attach(hb, d), "attach");

	a = mk_rec(2, 200, 0, 0, 100);
	x = mk_rec(5, 400, 60, 60, 100);
	v = mk_rec(1, 100, 0, 100, 150);
	q = mk_rec(2, 300, 1000, 1000, 1050);
	v2 = mk_rec(1, 100, 1000, 1050, 1060);
	v3 = mk_rec(9, 100, 2000, 2000, 2050);
	v4 = mk_rec(1, 100, 2000, 2050, 2060);
	feed(d, 11, &a);
	feed(d, 12, &x);
	feed(d, 21, &v);
	feed(d, 23, &q);
	feed(d, 24, &v2);
	feed(d, 25, &v3);
	feed(d, 26, &v4);

	/* paths: V's (one host IO seen through two buffers), V2 + V4's, an unjoined one, one never split */
	mk_path(&p[0], &g[0], 1, 1, 21, 21);
	mk_path(&p[1], &g[1], 2, 1, 24, 26);
	mk_path(&p[2], &g[2], 3, 0, 0, 0);
	mk_path(&p[3], &g[3], 4, 1, 99, 0);
	for (int i = 0; i < 4; i++)
		hblame_path(hb, &p[i], 10);
	ASSERT_EQ(em.n, 1, "only the unjoined path at once");
	ASSERT_EQ(em.seq[0], 3u, "the unjoined one");
	ASSERT_STREQ(em.json[0], "", "no blame");
	ASSERT_EQ(em.missing[0], 0, "not missing");
	hblame_tick(hb, 500000000ULL);
	ASSERT_EQ(em.n, 1, "the splits wait for the horizon");

	dblame_tick(d, 2000000000ULL);
	hblame_tick(hb, 2000000000ULL);
	if (!ASSERT_EQ(em.n, 3, "two paths with their blame, the third still waits"))
		goto out;
	ASSERT_EQ(em.seq[1], 1u, "V's path");
	ASSERT_STREQ(em.json[1],
		     "{\"by\":\"vm\",\"requests\":1,\"wait_ns\":150,\"own_ns\":50,"
		     "\"unattributed_ns\":0,\"self_ns\":0,\"others_ns\":100,\"culprits\":["
		     "{\"who\":{\"vm\":\"aggr\",\"pid\":200},\"ns\":80},"
		     "{\"who\":{\"cgroup_id\":5,\"cgroup\":\"/system.slice/x\"},\"ns\":20}]}",
		     "V: the aggressor VM, then the host process by cgroup");
	ASSERT_STREQ(em.json[2],
		     "{\"by\":\"vm\",\"requests\":2,\"wait_ns\":120,\"own_ns\":20,"
		     "\"unattributed_ns\":0,\"self_ns\":50,\"others_ns\":50,\"culprits\":["
		     "{\"who\":{\"vm\":\"qemu:300\",\"pid\":300},\"ns\":50}]}",
		     "V2 + V4: qemu:300, and the VM's own other cgroup as self");
	hblame_tick(hb, 3000000010ULL);
	ASSERT_EQ(em.n, 4, "the last one after HB_WAIT_NS");
	ASSERT_EQ(em.seq[3], 4u, "its seq");
	ASSERT_EQ(em.missing[3], 1, "missing");
	ASSERT_EQ(hblame_stats(hb)->held, 3u, "held");
	ASSERT_EQ(hblame_stats(hb)->with_blame, 2u, "with blame");
	ASSERT_EQ(hblame_stats(hb)->missing, 1u, "missing counted");

	/* /metrics: VMs by name, the host process by its cgroup cut to depth 1 */
	f = open_memstream(&txt, &n);
	if (!ASSERT_TRUE(f, "memstream"))
		goto out;
	dblame_metrics(d, f, 10000000000ULL, t_mdev, NULL);
	fclose(f);
	f = NULL;
	ASSERT_TRUE(strstr(txt, "\niotracer_blame_seconds_total{device=\"sda\",victim=\"victim\","
				"culprit=\"aggr\"} 0.00000008\n"),
		    "victim held by aggr");
	ASSERT_TRUE(strstr(txt, "\niotracer_blame_seconds_total{device=\"sda\",victim=\"victim\","
				"culprit=\"/system.slice\"} 0.00000002\n"),
		    "and by the host process's cgroup");
	ASSERT_TRUE(strstr(txt, "\niotracer_blame_seconds_total{device=\"sda\",victim=\"victim\","
				"culprit=\"qemu:300\"} 0.00000005\n"),
		    "and by qemu:300");
	ASSERT_TRUE(strstr(txt, "\niotracer_blame_seconds_total{device=\"sda\","
				"victim=\"/system.slice\",culprit=\"aggr\"} 0.00000002\n"),
		    "the host process, a victim of aggr");
	ASSERT_TRUE(strstr(txt,
			   "\niotracer_blame_wait_seconds_total{device=\"sda\",victim=\"victim\","
			   "part=\"self\"} 0.00000005\n"),
		    "one VM in two cgroups: self");
	ASSERT_TRUE(!strstr(txt, "/machine"), "no VM named by its cgroup");
out:
	if (f)
		fclose(f);
	free(txt);
	hblame_free(hb);
	dblame_free(d);
	cg_cache_free(cg);
}

/* Before --blame is attached (or without it) every path passes through at once. */
static void test_off(void)
{
	struct emitted em = { 0 };
	struct hblame *hb = hblame_new(on_emit, &em);
	struct vj_path p;
	struct link_vreq g;

	if (!ASSERT_TRUE(hb, "new"))
		return;
	mk_path(&p, &g, 7, 1, 21, 0);
	hblame_path(hb, &p, 0);
	ASSERT_EQ(em.n, 1, "written at once");
	ASSERT_EQ(em.missing[0], 0, "nothing missing");
	ASSERT_EQ(hblame_stats(hb)->held, 0u, "none held");
	hblame_flush(hb);
	hblame_free(hb);
}

/* An engine without cgroup names, and hblame attached to it, writing into em. */
struct fix {
	struct emitted em;
	struct cg_cache *cg;
	struct dblame *d;
	struct hblame *hb;
};

static int fix_new(struct fix *f)
{
	memset(f, 0, sizeof(*f));
	f->cg = cg_cache_new("/nonexistent");
	f->d = f->cg ? dblame_new(f->cg, -1, NULL) : NULL;
	f->hb = hblame_new(on_emit, &f->em);
	t_engine = f->d;
	return ASSERT_TRUE(f->d && f->hb && !hblame_attach(f->hb, f->d), "new");
}

static void fix_free(struct fix *f)
{
	hblame_free(f->hb);
	dblame_free(f->d);
	cg_cache_free(f->cg);
}

/* Many paths held at once (the ring grows), then flushed: order kept, none lost. */
static void test_flush_order(void)
{
	struct fix f;
	struct link_vreq g;
	struct vj_path p;

	if (!fix_new(&f))
		goto out;
	for (uint64_t i = 1; i <= 200; i++) {
		mk_path(&p, &g, i, 1, 1000 + i, 0);
		hblame_path(f.hb, &p, i);
	}
	ASSERT_EQ(f.em.n, 0, "all held");
	hblame_flush(f.hb);
	ASSERT_EQ(hblame_stats(f.hb)->missing, 200u, "all written, counted missing (never fed)");
	ASSERT_EQ(f.em.seq[0], 1u, "first first");
	ASSERT_EQ(f.em.seq[7], 8u, "in order");
out:
	fix_free(&f);
}

/*
 * A host IO with no block request (its record lost, or served without one): nothing
 * to wait for, its path is written at the next tick with requests 0. A split that came
 * before its path was held (a late guest record) is found in the cache.
 */
static void test_no_block_and_early(void)
{
	struct fix f;
	struct corr_req none = { .kind = CORR_SYSCALL, .id = 5 };
	struct it_block_rec v = mk_rec(1, 100, 0, 0, 100);
	struct link_vreq g[2];
	struct vj_path p[2];

	if (!fix_new(&f))
		goto out;
	hblame_set_vm(f.hb, 0, 100, "v");
	dblame_request(f.d, &none);
	feed(f.d, 6, &v);
	dblame_tick(f.d, 2000000000ULL); /* 6 is split before its path comes */
	mk_path(&p[0], &g[0], 1, 1, 5, 0);
	mk_path(&p[1], &g[1], 2, 1, 6, 0);
	hblame_path(f.hb, &p[0], 2000000000ULL);
	hblame_path(f.hb, &p[1], 2000000000ULL);
	hblame_tick(f.hb, 2000000001ULL);
	if (!ASSERT_EQ(f.em.n, 2, "both at once"))
		goto out;
	ASSERT_STREQ(f.em.json[0],
		     "{\"by\":\"vm\",\"requests\":0,\"wait_ns\":0,\"own_ns\":0,"
		     "\"unattributed_ns\":0,\"self_ns\":0,\"others_ns\":0,\"culprits\":[]}",
		     "no block request: requests 0");
	ASSERT_STREQ(f.em.json[1],
		     "{\"by\":\"vm\",\"requests\":1,\"wait_ns\":100,\"own_ns\":100,"
		     "\"unattributed_ns\":0,\"self_ns\":0,\"others_ns\":0,\"culprits\":[]}",
		     "split before the path: from the cache");
	ASSERT_EQ(hblame_stats(f.hb)->missing, 0u, "none missing");
out:
	fix_free(&f);
}

int main(void)
{
	RUN_TEST(test_vm_owners);
	RUN_TEST(test_off);
	RUN_TEST(test_flush_order);
	RUN_TEST(test_no_block_and_early);
	return unit_result();
}
