// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of src/blame/blame.c: synthetic intervals whose splits are worked
 * out by hand (the comments show the sums), and random ones against a
 * brute-force split that walks every nanosecond.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/jsonw.h"
#include "blame/blame.h"
#include "blame/blame_json.h"
#include "records/cgroup.h"
#include "records/output.h"
#include "records/record.h"
#include "records/reader.h"
#include "service/cli.h"
#include "blame/dblame.h"
#include "report/internal.h"
#include "unit.h"

#define MAXRES 64

struct got {
	int n;
	struct {
		uint64_t tag;
		double own, unattr, self, others;
		int nr;
		struct blame_share sh[8];
	} r[MAXRES];
};

static void on_res(const struct blame_res *res, void *ctx)
{
	struct got *g = ctx;

	if (g->n >= MAXRES)
		return;
	g->r[g->n].tag = res->r->tag;
	g->r[g->n].own = res->own_ns;
	g->r[g->n].unattr = res->unattr_ns;
	g->r[g->n].self = res->self_ns;
	g->r[g->n].others = res->others_ns;
	g->r[g->n].nr = res->nr_culprits;
	for (int i = 0; i < res->nr_culprits && i < 8; i++)
		g->r[g->n].sh[i] = res->culprits[i];
	g->n++;
}

static struct blame_in mk(uint64_t tag, uint32_t dev, uint64_t cg, uint32_t pid, uint64_t q,
			  uint64_t d, uint64_t c, int victim)
{
	struct blame_in in = {
		.dev = dev, .victim = victim, .q_ns = q, .d_ns = d, .c_ns = c, .tag = tag
	};

	in.owner.cgroup_id = cg;
	in.owner.pid = pid;
	snprintf(in.owner.comm, sizeof(in.owner.comm), "p%u", pid);
	return in;
}

/* A blame fed in[0..n) and flushed (NULL: the allocation failed, reported). */
static struct blame *feed(enum blame_by by, uint64_t horizon, const struct blame_in *in, int n,
			  struct got *g)
{
	struct blame *b = blame_new(by, horizon, 0, on_res, g);

	if (!ASSERT_TRUE(b, "new"))
		return NULL;
	for (int i = 0; i < n; i++)
		ASSERT_OK(blame_add(b, &in[i]), "add");
	blame_flush(b);
	return b;
}

/* The one split g holds: own, unattributed, self, others. */
static void parts(const struct got *g, double own, double unattr, double self, double others)
{
	if (!ASSERT_EQ(g->n, 1, "one split"))
		return;
	ASSERT_NEAR(g->r[0].own, own, 1e-9, "own");
	ASSERT_NEAR(g->r[0].unattr, unattr, 1e-9, "unattr");
	ASSERT_NEAR(g->r[0].self, self, 1e-9, "self");
	ASSERT_NEAR(g->r[0].others, others, 1e-9, "others");
}

static int find(const struct got *g, uint64_t tag)
{
	for (int i = 0; i < g->n; i++)
		if (g->r[i].tag == tag)
			return i;
	return -1;
}

/*
 * A [1,101) and B [50,150) in service (cgroup 2, pids 10, 11); V (cgroup 1)
 * queued 20, dispatched 120, done 200.
 * Queue [20,120): [20,50) A alone 30; [50,101) A+B 25.5 each; [101,120) B 19.
 * Service [120,200): [120,150) V+B: own 15, B 15; [150,200) own 50.
 * A 55.5, B 59.5; own 65; 55.5 + 59.5 + 65 = 180 = C - Q.
 */
static void test_queue_and_service(void)
{
	struct blame_in in[] = { mk(1, 8, 2, 10, 0, 1, 101, 1), mk(2, 8, 2, 11, 0, 50, 150, 1),
				 mk(3, 8, 1, 1, 20, 120, 200, 1) };
	struct got g = { 0 };
	struct blame *b = feed(BLAME_BY_PID, 1000, in, 3, &g);
	int v = find(&g, 3);

	if (!b)
		return;
	if (!ASSERT_TRUE(v >= 0, "victim resolved"))
		goto out;
	ASSERT_NEAR(g.r[v].own, 65, 1e-9, "own");
	ASSERT_NEAR(g.r[v].unattr, 0, 1e-9, "unattr");
	ASSERT_NEAR(g.r[v].self, 0, 1e-9, "self");
	ASSERT_NEAR(g.r[v].others, 115, 1e-9, "others");
	ASSERT_EQ(g.r[v].nr, 2, "two culprits");
	ASSERT_EQ(g.r[v].sh[0].who.pid, 11, "B first");
	ASSERT_NEAR(g.r[v].sh[0].ns, 59.5, 1e-9, "B");
	ASSERT_EQ(g.r[v].sh[1].who.pid, 10, "A second");
	ASSERT_NEAR(g.r[v].sh[1].ns, 55.5, 1e-9, "A");
out:
	blame_free(b);
}

/* The same by cgroup: A and B are one culprit, cgroup 2, 115. */
static void test_by_cgroup_merges(void)
{
	struct blame_in in[] = { mk(1, 8, 2, 10, 0, 1, 101, 0), mk(2, 8, 2, 11, 0, 50, 150, 0),
				 mk(3, 8, 1, 1, 20, 120, 200, 1) };
	struct got g = { 0 };
	struct blame *b = feed(BLAME_BY_CGROUP, 1000, in, 3, &g);

	parts(&g, 65, 0, 0, 115);
	ASSERT_EQ(g.r[0].nr, 1, "one culprit");
	ASSERT_EQ(g.r[0].sh[0].who.cgroup_id, 2, "cgroup 2");
	ASSERT_NEAR(g.r[0].sh[0].ns, 115, 1e-9, "115");
	blame_free(b);
}

/*
 * V queued 0, dispatched 40, done 50; O in service [10,20).
 * Queue: [0,10) nothing 10, [10,20) O 10, [20,40) nothing 20: unattributed 30.
 * Service [40,50): own 10.
 */
static void test_unattributed(void)
{
	struct blame_in in[] = { mk(2, 8, 2, 2, 5, 10, 20, 0), mk(1, 8, 1, 1, 0, 40, 50, 1) };
	struct got g = { 0 };

	blame_free(feed(BLAME_BY_CGROUP, 1000, in, 2, &g));
	parts(&g, 10, 30, 0, 10);
}

/*
 * Same cgroup, other pid: V [0: 10, 20), S in service [1,10) and [10,15) beside V.
 * Queue [0,1) nothing 1; [1,10) S 9. Service [10,15) S+V 2.5 each; [15,20) own 5.
 * By cgroup: self 11.5; by pid: culprit pid 2, 11.5.
 */
static void test_self(void)
{
	struct blame_in in[] = { mk(1, 8, 1, 1, 0, 10, 20, 1), mk(2, 8, 1, 2, 1, 1, 15, 0) };

	for (int by = BLAME_BY_CGROUP; by <= BLAME_BY_PID; by++) {
		struct got g = { 0 };

		blame_free(feed(by, 1000, in, 2, &g));
		parts(&g, 7.5, 1, by == BLAME_BY_CGROUP ? 11.5 : 0,
		      by == BLAME_BY_CGROUP ? 0 : 11.5);
	}
}

/* Another device's requests are no culprits. */
static void test_devices_apart(void)
{
	struct blame_in in[] = { mk(2, 9, 2, 2, 0, 1, 20, 0), mk(1, 8, 1, 1, 0, 10, 20, 1) };
	struct got g = { 0 };

	blame_free(feed(BLAME_BY_CGROUP, 1000, in, 2, &g));
	parts(&g, 10, 10, 0, 0);
}

/*
 * Horizon 100. V [0: 10, 20). Within the horizon O [5, 90) arrives: at flush
 * V has queue [0,5) unattr 5, [5,10) O 5, service [10,20) own 5 + O 5.
 * Past it (X [125,130) moved the stream to 130 first), O is late: V was split
 * without it (unattr 10, own 10) and O is counted, not guessed.
 */
static void test_horizon_late(void)
{
	struct blame_in v = mk(1, 8, 1, 1, 0, 10, 20, 1), o = mk(2, 8, 2, 2, 5, 5, 90, 0);
	struct blame_in x = mk(3, 8, 3, 3, 125, 125, 130, 0), o2 = mk(4, 8, 2, 2, 5, 5, 300, 0);
	struct got g = { 0 };
	struct blame *b = blame_new(BLAME_BY_CGROUP, 100, 0, on_res, &g);

	if (!ASSERT_TRUE(b, "new"))
		return;
	blame_add(b, &v);
	blame_add(b, &o);
	ASSERT_EQ(g.n, 0, "not before the horizon");
	blame_flush(b);
	parts(&g, 5, 5, 0, 10);
	ASSERT_EQ(blame_get_stats(b)->late, 0, "none late");
	blame_free(b);

	memset(&g, 0, sizeof(g));
	b = blame_new(BLAME_BY_CGROUP, 100, 0, on_res, &g);
	if (!ASSERT_TRUE(b, "new"))
		return;
	blame_add(b, &v);
	blame_add(b, &x);
	ASSERT_EQ(g.n, 1, "resolved once the stream passed C + horizon");
	blame_add(b, &o2);
	blame_flush(b);
	parts(&g, 10, 10, 0, 0); /* without the late one */
	ASSERT_EQ(blame_get_stats(b)->late, 1, "late");
	blame_free(b);

	/* idle: the stream's time moved by blame_tick() alone */
	memset(&g, 0, sizeof(g));
	b = blame_new(BLAME_BY_CGROUP, 100, 0, on_res, &g);
	if (!ASSERT_TRUE(b, "new"))
		return;
	blame_add(b, &v);
	blame_tick(b, 119);
	ASSERT_EQ(g.n, 0, "not before C + horizon");
	blame_tick(b, 120);
	ASSERT_EQ(g.n, 1, "split by the tick");
	blame_free(b);
}

/*
 * Horizon 10. A [0,5) is resolved and let go once the stream is past 5 + 2 x 10;
 * V queued at 2 (before the history kept) is not split: truncated.
 */
static void test_truncated(void)
{
	struct blame_in a = mk(1, 8, 1, 1, 0, 1, 5, 1), bb = mk(2, 8, 2, 2, 100, 100, 105, 1);
	struct blame_in v = mk(3, 8, 3, 3, 2, 104, 106, 1);
	struct got g = { 0 };
	struct blame *b = blame_new(BLAME_BY_CGROUP, 10, 0, on_res, &g);
	const struct blame_stats *st;

	if (!ASSERT_TRUE(b, "new"))
		return;
	blame_add(b, &a);
	blame_add(b, &bb);
	blame_add(b, &v);
	blame_flush(b);
	st = blame_get_stats(b);
	ASSERT_EQ(st->resolved, 2, "resolved");
	ASSERT_EQ(st->truncated, 1, "truncated");
	ASSERT_EQ(find(&g, 3), -1, "V not split");
	blame_free(b);
}

/* Cap 2: the third request forces the first's split before its horizon. */
static void test_cap(void)
{
	struct got g = { 0 };
	struct blame *b = blame_new(BLAME_BY_CGROUP, 1000000, 2, on_res, &g);

	if (!ASSERT_TRUE(b, "new"))
		return;
	for (uint64_t i = 0; i < 3; i++) {
		struct blame_in in = mk(i + 1, 8, i + 1, 1, i * 10, i * 10 + 1, i * 10 + 5, 1);

		blame_add(b, &in);
	}
	ASSERT_EQ(blame_get_stats(b)->forced, 1, "forced");
	ASSERT_EQ(g.n, 1, "split early");
	blame_flush(b);
	ASSERT_EQ(g.n, 3, "all");
	blame_free(b);
}

static void test_bad_input(void)
{
	struct got g = { 0 };
	struct blame *b = blame_new(BLAME_BY_CGROUP, 10, 0, on_res, &g);
	struct blame_in x = mk(1, 8, 1, 1, 50, 40, 60, 1), y = mk(2, 8, 1, 1, 50, 0, 40, 1);

	if (!ASSERT_TRUE(b, "new"))
		return;
	blame_add(b, &x);
	blame_add(b, &y);
	blame_flush(b);
	ASSERT_EQ(blame_get_stats(b)->bad, 2, "bad");
	ASSERT_EQ(g.n, 0, "none");
	ASSERT_EQ(blame_by_of("comm"), BLAME_BY_COMM, "comm");
	ASSERT_EQ(blame_by_of("vm"), -1, "unknown");
	blame_free(b);
}

/* ---- random intervals against a split that walks every nanosecond ---- */

#define NR_RAND 40
#define T_MAX 400

static void brute(const struct blame_in *in, int n, int r, double *own, double *unattr,
		  double by_pid[8])
{
	const struct blame_in *v = &in[r];

	*own = *unattr = 0;
	memset(by_pid, 0, 8 * sizeof(*by_pid));
	for (uint64_t t = v->q_ns; t < v->c_ns; t++) {
		int k = 0, me = v->d_ns && t >= v->d_ns;

		for (int i = 0; i < n; i++)
			k += i != r && in[i].dev == v->dev && in[i].d_ns && in[i].d_ns <= t &&
			     t < in[i].c_ns;
		if (!k && !me) {
			*unattr += 1;
			continue;
		}
		if (me)
			*own += 1.0 / (k + me);
		for (int i = 0; i < n; i++)
			if (i != r && in[i].dev == v->dev && in[i].d_ns && in[i].d_ns <= t &&
			    t < in[i].c_ns)
				by_pid[in[i].owner.pid] += 1.0 / (k + me);
	}
}

static int by_c(const void *a, const void *b)
{
	uint64_t x = ((const struct blame_in *)a)->c_ns, y = ((const struct blame_in *)b)->c_ns;

	return x < y ? -1 : x > y;
}

static void test_random_vs_brute(void)
{
	struct blame_in in[NR_RAND];
	uint64_t seed = 42;
	int bad = 0;

	for (int round = 0; round < 50 && !bad; round++) {
		struct got g = { 0 };
		struct blame *b = blame_new(BLAME_BY_PID, T_MAX, 0, on_res, &g);

		if (!ASSERT_TRUE(b, "new"))
			return;
		for (int i = 0; i < NR_RAND; i++) {
			uint64_t q = unit_rng(&seed) % T_MAX, d = q + unit_rng(&seed) % 50;
			uint64_t c = d + 1 + unit_rng(&seed) % 60;
			int never = !(unit_rng(&seed) % 10);

			in[i] = mk((uint64_t)i + 1, 8 + (uint32_t)(unit_rng(&seed) % 2), 1,
				   (uint32_t)(unit_rng(&seed) % 8), q, never ? 0 : d, c, 1);
		}
		qsort(in, NR_RAND, sizeof(in[0]), by_c);
		for (int i = 0; i < NR_RAND; i++)
			blame_add(b, &in[i]);
		blame_flush(b);
		ASSERT_EQ(g.n, NR_RAND, "all split");
		for (int i = 0; i < NR_RAND && !bad; i++) {
			int k = find(&g, in[i].tag);
			double own, un, pid[8], self = 0, others = 0;

			if (!ASSERT_TRUE(k >= 0, "found")) {
				bad = 1;
				break;
			}
			brute(in, NR_RAND, i, &own, &un, pid);
			for (int p = 0; p < 8; p++)
				*(p == (int)in[i].owner.pid ? &self : &others) += pid[p];
			bad |= !ASSERT_NEAR(g.r[k].own, own, 1e-6, "own");
			bad |= !ASSERT_NEAR(g.r[k].unattr, un, 1e-6, "unattr");
			bad |= !ASSERT_NEAR(g.r[k].self, self, 1e-6, "self");
			bad |= !ASSERT_NEAR(g.r[k].others, others, 1e-6, "others");
			bad |= !ASSERT_NEAR(own + un + self + others,
					    (double)(in[i].c_ns - in[i].q_ns), 1e-6, "sum");
			for (int s = 0; s < g.r[k].nr && s < 8; s++)
				bad |= !ASSERT_NEAR(g.r[k].sh[s].ns, pid[g.r[k].sh[s].who.pid],
						    1e-6, "culprit");
		}
		blame_free(b);
	}
}

/* ---- report --blame (src/blame/culprits.c): owners and the matrix ---- */

static const char *t_dev(void *ctx, uint32_t dev)
{
	(void)ctx;
	return dev == 8 ? "sda" : "?";
}

static const char *t_cg(void *ctx, uint64_t id)
{
	(void)ctx;
	return id == 1 ? "/v" : id == 2 ? "/a" : id == 3 ? "/" : NULL;
}

static int t_all(void *ctx, uint32_t dev)
{
	(void)ctx;
	(void)dev;
	return 1;
}

static struct it_block_rec mk_rec(uint64_t cg, uint32_t pid, uint64_t q, uint64_t d, uint64_t c)
{
	struct it_block_rec b;

	memset(&b, 0, sizeof(b));
	b.dev = 8;
	b.task.pid = pid;
	b.task.cgroup_id = cg;
	b.q_ns = q;
	b.d_ns = d;
	b.c_ns = c;
	return b;
}

/* A flusher's write of /a's (cgroup 2) dirty pages [1,101), and V's read (cgroup 1). */
struct pair {
	struct it_block_rec wb, v;
	struct corr_req rw, rv;
};

static void mk_pair(struct pair *p)
{
	memset(p, 0, sizeof(*p));
	p->wb = mk_rec(3, 99, 0, 1, 101);
	p->v = mk_rec(1, 10, 50, 101, 151);
	p->wb.flags = IT_F_WB;
	p->wb.wb.dirtier.pid = 20;
	p->wb.wb.dirtier.cgroup_id = 2;
	p->rw = (struct corr_req){ .kind = CORR_BLOCK, .nr_blocks = 1, .blocks = { &p->wb } };
	p->rv = (struct corr_req){ .kind = CORR_BLOCK, .nr_blocks = 1, .blocks = { &p->v } };
}

/*
 * A flusher (pid 99, cgroup /) writes pages that /a's pid 20 dirtied, in service [1,101);
 * V (/v) queued 50, dispatched 101, done 151: its queue [50,101), 51, is blamed on /a (the
 * dirtier), not on /, and its service [101,151), 50, is its own. The JSON line says so.
 */
static void test_report_dirtier(void)
{
	struct pair p;
	struct rp_names nm = { .dev = t_dev, .cgroup = t_cg };
	struct rp_blame *rb = rb_new(BLAME_BY_CGROUP, 0);
	char *txt = NULL, *js = NULL;
	size_t nt = 0, nj = 0;
	FILE *ft = open_memstream(&txt, &nt), *fj = open_memstream(&js, &nj);

	if (!ASSERT_TRUE(rb && ft && fj, "new"))
		goto out;
	mk_pair(&p);
	rb_add(rb, &p.rw, NULL, NULL); /* a culprit only */
	rb_add(rb, &p.rv, t_all, NULL);
	ASSERT_OK(rb_print(rb, ft, fj, &nm), "print");
	fclose(ft);
	fclose(fj);
	ft = fj = NULL;
	ASSERT_TRUE(strstr(js, "\"victim\":{\"cgroup_id\":1,\"cgroup\":\"/v\"},\"requests\":1,"
			       "\"wait_ns\":101,\"own_ns\":50,\"unattributed_ns\":0,\"self_ns\":0,"
			       "\"others_ns\":51,\"culprits\":[{\"who\":{\"cgroup_id\":2,"
			       "\"cgroup\":\"/a\"},\"ns\":51}]}"),
		    "the dirtier is the culprit");
	ASSERT_TRUE(strstr(js, "{\"type\":\"blame_stats\",\"by\":\"cgroup\",\"requests\":2,"
			       "\"split\":1,"),
		    "stats");
	ASSERT_TRUE(strstr(txt, "\nsda /v: 1 requests, wait 0.1us: own service 0.1us, "
				"unattributed 0.0us, self 0.0us, others 0.1us\n"),
		    "text row");
	ASSERT_TRUE(strstr(txt, "\n    /a ") && !strstr(txt, "\n    / "), "text culprit /a, not /");
out:
	if (ft)
		fclose(ft);
	if (fj)
		fclose(fj);
	free(txt);
	free(js);
	rb_free(rb);
}

/*
 * A cache flush without bios (the kernel's own request: no task, cgroup 0) in service
 * [1,101) holds V's queue [50,101): by cgroup, pid and comm alike it is "(no task)",
 * not "cgroup-id 0", "0 ()" or an empty name.
 */
static void test_report_no_task(void)
{
	static const enum blame_by bys[] = { BLAME_BY_CGROUP, BLAME_BY_PID, BLAME_BY_COMM };
	struct rp_names nm = { .dev = t_dev, .cgroup = t_cg };

	for (size_t i = 0; i < sizeof(bys) / sizeof(bys[0]); i++) {
		struct it_block_rec fl = mk_rec(0, 0, 0, 1, 101), v = mk_rec(1, 10, 50, 101, 151);
		struct corr_req rf = { .kind = CORR_BLOCK, .nr_blocks = 1, .blocks = { &fl } };
		struct corr_req rv = { .kind = CORR_BLOCK, .nr_blocks = 1, .blocks = { &v } };
		struct rp_blame *rb = rb_new(bys[i], 0);
		char *txt = NULL;
		size_t nt = 0;
		FILE *ft = open_memstream(&txt, &nt);

		strcpy(v.task.comm, "fio");
		if (ASSERT_TRUE(rb && ft, "new")) {
			rb_add(rb, &rf, NULL, NULL);
			rb_add(rb, &rv, t_all, NULL);
			ASSERT_OK(rb_print(rb, ft, NULL, &nm), "print");
			fclose(ft);
			ft = NULL;
			ASSERT_TRUE(strstr(txt, "\n    (no task) "), "the flush named (no task)");
			ASSERT_TRUE(!strstr(txt, "cgroup-id 0"), "not by its id");
		}
		if (ft)
			fclose(ft);
		free(txt);
		rb_free(rb);
	}
}

/* ---- the daemon's --blame (src/blame/dblame.c): /metrics ---- */

static const char *t_mdev(uint32_t dev, void *ctx)
{
	return t_dev(ctx, dev);
}

/*
 * The same two requests in the daemon, cgroups /v/x (1) and /a/y (2) cut to depth 1:
 * victim /v held 51 ns by /a, own 50 ns; the flusher's request (its cgroup / at depth 1,
 * dirtier /a) is a victim too, held by nothing: own 100 ns. Past 5 culprits: "other".
 */
static void test_daemon_metrics(void)
{
	struct pair p;
	struct cg_cache *cg = cg_cache_new("/nonexistent");
	struct dblame *d = NULL;
	char *txt = NULL;
	size_t n = 0;
	FILE *f = NULL;
	int named = 0;

	if (!ASSERT_TRUE(cg, "cache"))
		return;
	cg_cache_put(cg, 1, "/v/x");
	cg_cache_put(cg, 2, "/a/y");
	cg_cache_put(cg, 3, "/");
	d = dblame_new(cg, 1, NULL);
	f = open_memstream(&txt, &n);
	if (!ASSERT_TRUE(d && f, "new"))
		goto out;
	mk_pair(&p);
	dblame_request(d, &p.rw);
	dblame_request(d, &p.rv);
	/* six other culprits of one more victim request of /v: five named, one "other" */
	for (uint64_t i = 0; i < 6; i++) {
		char path[16];
		static struct it_block_rec o[6];
		struct corr_req ro = { .kind = CORR_BLOCK, .nr_blocks = 1, .blocks = { &o[i] } };

		snprintf(path, sizeof(path), "/c%llu", (unsigned long long)i);
		cg_cache_put(cg, 10 + i, path);
		o[i] = mk_rec(10 + i, 30, 1000, 1000 + i, 1010 + i);
		dblame_request(d, &ro);
	}
	p.v = mk_rec(1, 10, 1000, 1100, 1110);
	dblame_request(d, &p.rv);
	dblame_metrics(d, f, 10000000000ULL, t_mdev, NULL); /* past the 1 s horizon */
	fclose(f);
	f = NULL;
	ASSERT_TRUE(strstr(txt, "\niotracer_blame_seconds_total{device=\"sda\",victim=\"/v\","
				"culprit=\"/a\"} 0.000000051\n"),
		    "v held by /a");
	ASSERT_TRUE(strstr(txt, "\niotracer_blame_wait_seconds_total{device=\"sda\",victim=\"/a\","
				"part=\"own\"} 0.0000001\n"),
		    "the dirtier's request is /a's");
	for (const char *at = txt; (at = strstr(at, "\niotracer_blame_seconds_total{device=\"sda\","
						    "victim=\"/v\",culprit=\""));
	     at++)
		named += !!strncmp(at + 64, "other\"", 6);
	ASSERT_EQ(named, 5, "five named (/a and four of the six)");
	ASSERT_TRUE(strstr(txt, "\niotracer_blame_seconds_total{device=\"sda\",victim=\"/v\","
				"culprit=\"other\"} "),
		    "then other");
	ASSERT_TRUE(strstr(txt, "\niotracer_blame_late_total 0\n"), "late");
out:
	if (f)
		fclose(f);
	free(txt);
	dblame_free(d);
	cg_cache_free(cg);
}

/* ---- the daemon's --blame with -j: a `blame` line per written request ---- */

static void feed_req(struct dblame *d, uint64_t id, struct it_block_rec *b, int n)
{
	struct corr_req r = { .kind = CORR_BLOCK, .id = id, .nr_blocks = n };

	for (int i = 0; i < n; i++)
		r.blocks[i] = &b[i];
	dblame_request(d, &r);
}

/* The JSON written so far (out flushed). */
static const char *json_now(struct it_out *out, FILE *f, char **buf)
{
	out_flush(out);
	fflush(f);
	return *buf ? *buf : "";
}

/* The "type":"blame" lines of a -j text, each with its newline. */
static char *blame_lines_of(const char *js)
{
	char *o = calloc(1, strlen(js) + 1), *q = o;

	for (const char *l = js; o && *l;) {
		const char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l) + 1 : strlen(l);

		if (!strncmp(l, "{\"type\":\"blame\",", 16)) {
			memcpy(q, l, n);
			q += n;
		}
		l += n;
	}
	return o;
}

struct lines_back {
	struct jw j;
	char *o;
	size_t n;
	FILE *f;
};

static void back_req(void *ctx, const struct rr_reader *rr, const struct rf_req *q)
{
	(void)ctx, (void)rr, (void)q;
}

/* A stored line as report -j writes it (paths from the recording's cgroup entries). */
static void back_blame(void *ctx, const struct rr_reader *rr, const struct blame_line *l)
{
	struct lines_back *b = ctx;
	const char *path[BLAME_LINE_TOP] = { NULL };
	char keep[BLAME_LINE_TOP][CG_PATH_MAX];

	for (int i = 0; i < l->nr; i++) {
		const char *p = l->named & (1u << i) ? rr_cgroup_path(rr, l->cgroup_id[i]) : NULL;

		if (p) {
			snprintf(keep[i], sizeof(keep[i]), "%s", p);
			path[i] = keep[i];
		}
	}
	jw_reset(&b->j);
	blame_json_line(&b->j, l, path);
	fprintf(b->f, "%s\n", jw_data(&b->j));
}

/* Every blame entry of the one segment in dir, as JSON lines. */
static char *read_back_lines(const char *dir)
{
	struct lines_back b = { .o = NULL };
	struct rr_reader rr;
	struct dirent *e;
	DIR *dh = opendir(dir);
	char path[512];
	uint8_t *buf = NULL;
	long n = 0;
	FILE *f = NULL;

	while (dh && !f && (e = readdir(dh))) {
		if (!strstr(e->d_name, ".itrec"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		f = fopen(path, "r");
	}
	if (dh)
		closedir(dh);
	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) ||
	    !(buf = malloc((size_t)n)) || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		if (f)
			fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	b.f = open_memstream(&b.o, &b.n);
	jw_init(&b.j);
	rr_init(&rr, back_req, &b);
	rr.blame_fn = back_blame;
	if (b.f && rr_segment(&rr, buf, (size_t)n))
		UNIT_LOG("rr_segment failed\n");
	if (b.f)
		fclose(b.f);
	rr_free(&rr);
	jw_free(&b.j);
	free(buf);
	return b.o;
}

/*
 * Request 2 (/v/x): the flusher's write of /a/y's pages held its queue 51 ns, own 50 ns
 * (test_report_dirtier). Request 3 (/v/x) has two block requests whose queues are held by
 * five cgroups one at a time: c10 40+20, c11 31, c12 29, c13 25, c14 55; its line names
 * c10 60, c14 55, c11 31, then other 54 (c12 + c13); own
 * 10 + 10. Request 4's block request is bad (C < Q): no line, counted. Request 5's queue
 * is held by a block record -m kept out of the records (dblame_block): /a/y, 100 ns.
 */
static void test_daemon_records(void)
{
	struct pair p;
	struct cg_cache *cg = cg_cache_new("/nonexistent");
	struct it_opts o;
	struct it_out *out = NULL;
	struct dblame *d = NULL;
	char *js = NULL;
	size_t nj = 0;
	FILE *fj = open_memstream(&js, &nj);
	struct it_block_rec v3[2], c[6], bad, v5, fast;
	struct rec_opts ro = { .seg_size = 1 << 20,
			       .seg_age_ns = 3600000000000ull,
			       .max_bytes = 1 << 24,
			       .sysfs_root = "/nonexistent",
			       .blame = 1 };
	struct recorder *rc = NULL;
	char dir[64], *back = NULL, *want = NULL;

	cli_defaults(&o);
	o.live = 0;
	if (!ASSERT_TRUE(cg && fj, "cache"))
		goto out;
	out = out_new(cli_out_config(&o, &(struct out_config){ 0 }), NULL, fj, 0);
	d = out ? dblame_new(cg, 1, out) : NULL;
	if (!ASSERT_TRUE(d, "new"))
		goto out;
	snprintf(dir, sizeof(dir), "/tmp/it_test_blame.XXXXXX");
	ro.dir = mkdtemp(dir);
	rc = ro.dir ? rec_open(&ro, 1) : NULL;
	if (!ASSERT_TRUE(rc, "recorder"))
		goto out;
	rec_set_cgroups(rc, cg);
	dblame_set_recorder(d, rc);
	cg_cache_put(cg, 1, "/v/x");
	cg_cache_put(cg, 2, "/a/y");
	cg_cache_put(cg, 3, "/");
	for (uint64_t i = 10; i <= 14; i++) {
		char path[16];

		snprintf(path, sizeof(path), "/c%llu", (unsigned long long)i);
		cg_cache_put(cg, i, path);
	}
	mk_pair(&p);
	p.rw.id = 1;
	p.rv.id = 2;
	dblame_request(d, &p.rw);
	dblame_request(d, &p.rv);
	dblame_tick(d, 1000000000ULL); /* 151 + 1 s not passed */
	ASSERT_TRUE(!strstr(json_now(out, fj, &js), "\"type\":\"blame\""),
		    "not before the horizon");
	c[0] = mk_rec(10, 30, 1000, 1000, 1040);
	c[1] = mk_rec(11, 31, 1000, 1040, 1071);
	c[2] = mk_rec(12, 32, 1000, 1071, 1100);
	c[3] = mk_rec(10, 30, 2000, 2000, 2020);
	c[4] = mk_rec(13, 33, 2000, 2020, 2045);
	c[5] = mk_rec(14, 34, 2000, 2045, 2100);
	for (int i = 0; i < 6; i++)
		feed_req(d, 10 + (uint64_t)i, &c[i], 1);
	v3[0] = mk_rec(1, 10, 1000, 1100, 1110);
	v3[1] = mk_rec(1, 10, 2000, 2100, 2110);
	feed_req(d, 3, v3, 2);
	bad = mk_rec(1, 10, 3000, 0, 2999);
	feed_req(d, 4, &bad, 1);
	fast = mk_rec(2, 20, 3000, 3000, 3100);
	dblame_block(d, &fast);
	v5 = mk_rec(1, 10, 3000, 3100, 3110);
	feed_req(d, 5, &v5, 1);
	dblame_tick(d, 1000000152ULL); /* request 2's horizon only */
	json_now(out, fj, &js);
	ASSERT_TRUE(strstr(js, "{\"type\":\"blame\",\"id\":2,\"by\":\"cgroup\",\"requests\":1,"
			       "\"wait_ns\":101,\"own_ns\":50,\"unattributed_ns\":0,\"self_ns\":0,"
			       "\"others_ns\":51,\"culprits\":[{\"who\":{\"cgroup_id\":2,"
			       "\"cgroup\":\"/a/y\"},\"ns\":51}]}\n"),
		    "request 2: the dirtier");
	ASSERT_TRUE(!strstr(js, "\"id\":3,"), "request 3 waits for its horizon");
	dblame_finish(d);
	json_now(out, fj, &js);
	ASSERT_TRUE(strstr(js, "{\"type\":\"blame\",\"id\":3,\"by\":\"cgroup\",\"requests\":2,"
			       "\"wait_ns\":220,\"own_ns\":20,\"unattributed_ns\":0,\"self_ns\":0,"
			       "\"others_ns\":200,\"culprits\":[{\"who\":{\"cgroup_id\":10,"
			       "\"cgroup\":\"/c10\"},\"ns\":60},{\"who\":{\"cgroup_id\":14,"
			       "\"cgroup\":\"/c14\"},\"ns\":55},{\"who\":{\"cgroup_id\":11,"
			       "\"cgroup\":\"/c11\"},\"ns\":31},{\"other\":true,\"ns\":54}]}\n"),
		    "request 3: two block requests, top 3 and other");
	ASSERT_TRUE(!strstr(js, "\"id\":4,"), "request 4: bad, no line");
	ASSERT_TRUE(strstr(js, "{\"type\":\"blame\",\"id\":5,\"by\":\"cgroup\",\"requests\":1,"
			       "\"wait_ns\":110,\"own_ns\":10,\"unattributed_ns\":0,\"self_ns\":0,"
			       "\"others_ns\":100,\"culprits\":[{\"who\":{\"cgroup_id\":2,"
			       "\"cgroup\":\"/a/y\"},\"ns\":100}]}\n"),
		    "request 5: a thinned block record is a culprit");
	/* lines: 1, 2, the six culprits', 3 and 5; 4 not. Fed: 12 block requests and the bad one */
	ASSERT_TRUE(
		strstr(js,
		       "{\"type\":\"blame_stats\",\"by\":\"cgroup\",\"requests\":12,"
		       "\"split\":12,\"late\":0,\"truncated\":0,\"forced\":0,"
		       "\"partial\":false,\"records\":10,\"records_unsplit\":1,\"records_capped\":0}\n"),
		"stats: one request unsplit");
	/* the recording's lines, read back, are the bytes of the JSON lines */
	rec_close(rc);
	rc = NULL;
	back = read_back_lines(dir);
	want = blame_lines_of(js);
	ASSERT_TRUE(back && want && strstr(want, "\"id\":3,"), "lines");
	ASSERT_STREQ(back ? back : "", want ? want : "-", "recording == -j");
out:
	rec_close(rc);
	if (ro.dir) {
		char cmd[96];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			UNIT_LOG("cannot remove %s\n", dir);
	}
	free(back);
	free(want);
	dblame_free(d);
	out_free(out);
	if (fj)
		fclose(fj);
	free(js);
	cg_cache_free(cg);
}

/*
 * The queue of written requests waiting for their lines is capped (docs/blame.md,
 * "Memory"): the front (device 9) waits for its horizon while DBL_PEND_MAX + 5 more
 * requests (device 8, 1 us apart, within it) arrive: the last 6 get no line, counted;
 * every other one gets its line (the engine's own cap splits device 8's early).
 */
static void test_daemon_capped(void)
{
	struct cg_cache *cg = cg_cache_new("/nonexistent");
	FILE *sink = fopen("/dev/null", "w");
	struct it_block_rec b;
	struct it_opts o;
	struct it_out *out = NULL;
	struct dblame *d = NULL;
	uint64_t written, unsplit, capped;

	cli_defaults(&o);
	o.live = 0;
	out = cg && sink ? out_new(cli_out_config(&o, &(struct out_config){ 0 }), NULL, sink, 0) :
			   NULL;
	d = out ? dblame_new(cg, 1, out) : NULL;
	if (!ASSERT_TRUE(d, "new"))
		goto out;
	b = mk_rec(1, 10, 1000, 1000, 2000);
	b.dev = 9;
	feed_req(d, 1, &b, 1);
	for (uint64_t i = 0; i < DBL_PEND_MAX + 5; i++) {
		b = mk_rec(2 + i % 3, 20, 3000 + i * 1000, 3000 + i * 1000, 3500 + i * 1000);
		feed_req(d, 2 + i, &b, 1);
	}
	dblame_counts(d, &written, &unsplit, &capped);
	ASSERT_EQ(capped, 6, "past the cap: counted");
	dblame_finish(d);
	dblame_counts(d, &written, &unsplit, &capped);
	ASSERT_EQ(written + unsplit, DBL_PEND_MAX,
		  "every request the queue took: a line or counted");
	ASSERT_EQ(unsplit, 0, "all split");
out:
	dblame_free(d);
	out_free(out);
	cg_cache_free(cg);
	if (sink)
		fclose(sink);
}

int main(void)
{
	RUN_TEST(test_queue_and_service);
	RUN_TEST(test_by_cgroup_merges);
	RUN_TEST(test_unattributed);
	RUN_TEST(test_self);
	RUN_TEST(test_devices_apart);
	RUN_TEST(test_horizon_late);
	RUN_TEST(test_truncated);
	RUN_TEST(test_cap);
	RUN_TEST(test_bad_input);
	RUN_TEST(test_random_vs_brute);
	RUN_TEST(test_report_dirtier);
	RUN_TEST(test_report_no_task);
	RUN_TEST(test_daemon_metrics);
	RUN_TEST(test_daemon_records);
	RUN_TEST(test_daemon_capped);
	return unit_result();
}
