// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for src/service/reload.c (what a SIGHUP changes, and how) and
 * src/records/uhist.c as a set (the histograms the daemon keeps across a reload).
 */
#include <stdlib.h>

#include "unit.h"
#include "iotracer.h"
#include "service/cli.h"
#include "service/config.h"
#include "records/uhist.h"
#include "service/reload.h"

/* The reload rules are the options that can be in a config file, in table order. */
static void test_reload_every_key_has_a_rule(void)
{
	const struct cli_option *r;
	enum reload_kind kind;
	const char *name;
	int n = 0;

	for (int i = 0; (r = cli_option(i)); i++) {
		if (!r->section)
			continue;
		name = reload_rule(n++, &kind);
		if (!ASSERT_TRUE(name && !strcmp(name, r->row.name), r->row.name) ||
		    !ASSERT_EQ(kind, r->reload, r->row.name))
			return;
	}
	ASSERT_TRUE(reload_rule(n, &kind) == NULL, "no other rule");
}

static void opts_pair(struct it_opts *a, struct it_opts *b)
{
	cli_defaults(a);
	cli_defaults(b);
}

static void test_reload_plan_kinds(void)
{
	struct it_opts a, b;
	struct reload_plan p;

	opts_pair(&a, &b);
	reload_plan(&a, &b, &p);
	for (int k = 0; k < RELOAD_NR_KINDS; k++)
		ASSERT_EQ(p.nr[k], 0, "same options: nothing changes");

	b.pids[b.nr_pids++] = 42;
	b.min_lat_ns = 1000000;
	reload_plan(&a, &b, &p);
	ASSERT_EQ(p.nr[RELOAD_FILTER], 2, "two filters");
	ASSERT_STREQ(p.what[RELOAD_FILTER], "pid - -> 42; min-latency 0 -> 1.00ms", "what");
	ASSERT_STREQ(p.names[RELOAD_FILTER], "pid, min-latency", "names");
	ASSERT_EQ(p.nr[RELOAD_REATTACH], 0, "no re-attach");

	b.layers = (1u << IT_L_SYSCALL) | (1u << IT_L_BLOCK);
	b.interval_ns = 2000000000ull;
	b.live = 0;
	reload_plan(&a, &b, &p);
	ASSERT_STREQ(p.what[RELOAD_REATTACH], "layers all -> syscall,block", "layers");
	ASSERT_STREQ(p.names[RELOAD_TIMING], "interval", "interval");
	ASSERT_STREQ(p.what[RELOAD_START], "no-live no -> yes", "no-live");

	/* a device list in another order is a (harmless) in-place change, a ring size a re-attach */
	opts_pair(&a, &b);
	a.devs[a.nr_devs++] = IT_MKDEV(7, 0);
	a.devs[a.nr_devs++] = IT_MKDEV(7, 1);
	b.devs[b.nr_devs++] = IT_MKDEV(7, 1);
	b.devs[b.nr_devs++] = IT_MKDEV(7, 0);
	b.ring_size = 1u << 20;
	reload_plan(&a, &b, &p);
	ASSERT_STREQ(p.what[RELOAD_FILTER], "dev 7:0,7:1 -> 7:1,7:0", "devs");
	ASSERT_STREQ(p.what[RELOAD_REATTACH], "ring-size 8192K -> 1024K", "ring");
}

static void test_reload_keep_start_only(void)
{
	struct it_opts a, b;
	struct reload_plan p;
	const struct cli_option *r;
	int nr_start = 0;

	opts_pair(&a, &b);
	a.json_path = strdup("/tmp/a.json");
	a.quiet = 1;
	a.live = 0;
	b.json_path = strdup("/tmp/b.json");
	b.verbose = 2;
	ASSERT_OK(reload_keep_start_only(&a, &b), "keep");
	ASSERT_STREQ(b.json_path, "/tmp/a.json", "json kept");
	ASSERT_EQ(b.quiet, 1, "quiet kept");
	ASSERT_EQ(b.live, 0, "live kept");
	ASSERT_EQ(b.verbose, 0, "verbose kept");
	cli_free(&a);
	cli_free(&b);

	/* every start-only option differs, then is kept: none is left out of the keeping */
	for (int i = 0; (r = cli_option(i)); i++)
		nr_start += r->section && r->reload == RELOAD_START;
	opts_pair(&a, &b);
	a.json_path = strdup("/tmp/a.json");
	a.metrics_addr = strdup(":9477");
	a.record_dir = strdup("/tmp/rec");
	a.record_size = 1u << 20;
	a.record_age_ns = 60ull * 1000000000;
	a.record_max = 2ull << 30;
	a.record_level = 1;
	a.metrics_cg_depth = 2;
	a.metrics_containers = 1;
	a.metrics_files = 5;
	a.blame = 1;
	a.live = 0;
	a.quiet = 1;
	a.verbose = 3;
	reload_plan(&a, &b, &p);
	ASSERT_EQ(p.nr[RELOAD_START], nr_start, "every start-only option set differs");
	ASSERT_OK(reload_keep_start_only(&a, &b), "keep all");
	reload_plan(&a, &b, &p);
	ASSERT_EQ(p.nr[RELOAD_START], 0, "all kept");
	ASSERT_STREQ(p.names[RELOAD_START], "", "none differs");
	cli_free(&a);
	cli_free(&b);
}

/* Records counted in user space, then merged with "kernel" entries: the sums add up. */
static void test_uhists_set(void)
{
	struct it_syscall_rec r = { .hdr = { .type = IT_REC_SYSCALL, .size = sizeof(r) } };
	struct it_block_rec b = { .hdr = { .type = IT_REC_BLOCK, .size = sizeof(b) } };
	struct uhists u = { 0 }, k = { 0 }, sum = { 0 };
	struct it_hist_key key = { .dev = 7, .layer = IT_L_SYSCALL, .op = 0, .kind = IT_HK_PLAIN };
	struct it_hist_val *v;

	r.dev = 7;
	r.op = 0;
	r.enter_ns = 1000;
	r.exit_ns = 5000; /* 4000 ns: slot 11 */
	b.dev = 7;
	b.q_ns = 100;
	b.d_ns = 200;
	b.c_ns = 1124;
	for (int i = 0; i < 3; i++)
		uhists_record(&u, &r, sizeof(r));
	uhists_record(&u, &b, sizeof(b));
	uhists_record(&u, &r, sizeof(r.hdr)); /* too short: ignored */
	ASSERT_EQ(u.nr, 2, "two keys");
	v = uhists_get(&k, &key);
	if (!ASSERT_TRUE(v != NULL, "get"))
		goto out;
	v->st[IT_ST_TOTAL].count = 5;
	v->st[IT_ST_TOTAL].slots[11] = 5;
	uhists_merge(&sum, &u);
	uhists_merge(&sum, &k);
	v = uhists_get(&sum, &key);
	ASSERT_EQ(sum.nr, 2, "merged keys");
	ASSERT_EQ(v->st[IT_ST_TOTAL].count, 8, "3 records + 5 kernel");
	ASSERT_EQ(v->st[IT_ST_TOTAL].slots[11], 8, "slot");
	ASSERT_EQ(v->st[IT_ST_TOTAL].sum_ns, 12000, "sum of the records");
	uhists_clear(&sum);
	ASSERT_EQ(sum.nr, 0, "cleared");
out:
	uhists_free(&u);
	uhists_free(&k);
	uhists_free(&sum);
}

int main(void)
{
	RUN_TEST(test_reload_every_key_has_a_rule);
	RUN_TEST(test_reload_plan_kinds);
	RUN_TEST(test_reload_keep_start_only);
	RUN_TEST(test_uhists_set);
	return unit_result();
}
