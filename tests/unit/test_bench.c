// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the pure parts of `iotracer bench`: statistics, fio and
 * summary parsing, tracer names, which oracles a layer set is held to (the
 * unreported-drops check), and the SVG chart (well-formed XML, escaped text).
 * The /proc parsers are in test_procfs.c, the JSON reader in test_json.c.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/internal.h"
#include "bench/svg.h"
#include "unit.h"

static void test_median(void)
{
	double odd[] = { 5, 1, 3 }, even[] = { 4, 1, 3, 2 }, withnan[] = { NAN, 7, NAN, 1 };
	double one[] = { 42 };

	ASSERT_NEAR(bench_median(odd, 3), 3, 1e-12, "odd");
	ASSERT_NEAR(bench_median(even, 4), 2.5, 1e-12, "even");
	ASSERT_NEAR(bench_median(withnan, 4), 4, 1e-12, "NaNs ignored");
	ASSERT_NEAR(bench_median(one, 1), 42, 1e-12, "one");
	ASSERT_TRUE(isnan(bench_median(odd, 0)), "empty is NaN");
	ASSERT_NEAR(odd[0], 5, 0, "input not modified");
}

static void test_stat(void)
{
	double v[] = { 10, -2, 7, NAN, 3 };
	struct bstat s;

	bench_stat(v, 5, &s);
	ASSERT_EQ(s.n, 4, "n");
	ASSERT_NEAR(s.med, 5, 1e-12, "median");
	ASSERT_NEAR(s.min, -2, 0, "min");
	ASSERT_NEAR(s.max, 10, 0, "max");
	bench_stat(v, 0, &s);
	ASSERT_EQ(s.n, 0, "empty n");
	ASSERT_TRUE(isnan(s.med) && isnan(s.min) && isnan(s.max), "empty NaN");
}

static const char fio_json[] =
	"note: some text fio printed\n"
	"{\"fio version\":\"fio-3.33\",\"jobs\":[\n"
	" {\"jobname\":\"randread\",\"error\":0,\n"
	"  \"read\":{\"io_bytes\":491520000,\"total_ios\":120000,\"iops\":12000.5,\n"
	"          \"clat_ns\":{\"mean\":50000.0,\"percentile\":{\"50.000000\":48000,\"99.000000\":90112}}},\n"
	"  \"write\":{\"total_ios\":0,\"iops\":0.0,\"clat_ns\":{\"mean\":0.0}}},\n"
	" {\"jobname\":\"randwrite\",\"error\":0,\n"
	"  \"read\":{\"total_ios\":0,\"iops\":0.0,\"clat_ns\":{\"mean\":0.0}},\n"
	"  \"write\":{\"total_ios\":2500,\"iops\":250.0,\n"
	"           \"clat_ns\":{\"mean\":100000.0,\"percentile\":{\"99.000000\":400000}}}}\n"
	"]}\n";

static void test_fio(void)
{
	struct fio_res r;

	if (!ASSERT_OK(bench_parse_fio(fio_json, strlen(fio_json), &r), "parse"))
		return;
	ASSERT_EQ(r.jobs, 2, "jobs");
	ASSERT_NEAR(r.iops, 12250.5, 1e-9, "iops summed over jobs and directions");
	ASSERT_EQ(r.ios, 122500ull, "ios");
	ASSERT_NEAR(r.lat_mean_ns, (50000.0 * 120000 + 100000.0 * 2500) / 122500, 1e-6,
		    "mean weighted by IOs");
	ASSERT_NEAR(r.lat_p99_ns, 90112, 0, "p99 of the busiest direction");
	ASSERT_EQ(r.errors, 0ull, "errors");
	ASSERT_EQ(bench_parse_fio("no json", 7, &r), -EINVAL, "no JSON");
	ASSERT_EQ(bench_parse_fio("{\"jobs\":[]}", 11, &r), -EINVAL, "no jobs");
}

/* Numbers beyond the counters' range saturate (the cast was UB: found by fuzz_json). */
static void test_fio_extremes(void)
{
	static const char fio[] = "{\"jobs\":[{\"error\":-5,\"read\":{\"total_ios\":1e308},"
				  "\"write\":{\"total_ios\":-1e30}}]}";
	static const char sum[] = "{\"type\":\"summary\",\"final\":true,\"requests\":-1e300,"
				  "\"records\":{\"a\":9e18,\"b\":9e18},\"drops\":{\"total\":1e19}}";
	struct tracer_sum s;
	struct fio_res r;

	if (ASSERT_OK(bench_parse_fio(fio, strlen(fio), &r), "fio")) {
		ASSERT_EQ(r.ios, UINT64_MAX, "ios");
		ASSERT_EQ(r.errors, 0ull, "negative errors");
	}
	if (!ASSERT_OK(bench_parse_tracer_summary(sum, strlen(sum), &s), "summary"))
		return;
	ASSERT_EQ(s.requests, INT64_MIN, "requests");
	ASSERT_EQ(s.records, INT64_MAX, "records");
	ASSERT_EQ(s.drops, INT64_MAX, "drops");
}

static void test_tracer_summary(void)
{
	struct tracer_sum s;
	static const char jl[] =
		"{\"type\":\"attach\",\"layer\":\"block\",\"ok\":true}\n"
		"{\"type\":\"request\",\"id\":1}\n"
		"{\"type\":\"summary\",\"final\":false,\"requests\":5,\"records\":{\"syscall\":5},"
		"\"drops\":{\"total\":0}}\n"
		"{\"type\":\"summary\",\"final\":true,\"elapsed_ns\":1,\"records\":{\"syscall\":1200,"
		"\"block\":1300,\"io_uring\":0,\"aio\":0},\"requests\":1200,\"unjoined\":0,"
		"\"drops\":{\"total\":3,\"syscall\":{\"ringbuf\":0,\"inflight\":1,\"hist\":0},"
		"\"block\":{\"ringbuf\":2,\"inflight\":0,\"hist\":0}},\"stages\":[]}\n";
	static const char txt[] =
		"LAYER DEV\n"
		"\n=== final summary after 4.3s: 58801 requests, 0 unjoined, 7 dropped ===\n"
		"block loop4 read q2c\n";

	if (!ASSERT_OK(bench_parse_tracer_summary(jl, strlen(jl), &s), "json lines"))
		return;
	ASSERT_EQ(s.requests, 1200, "requests");
	ASSERT_EQ(s.records, 2500, "records summed over layers");
	ASSERT_EQ(s.drops, 3, "drops.total");
	ASSERT_STREQ(s.drops_detail, "syscall.inflight=1 block.ringbuf=2", "drop detail");
	ASSERT_EQ(s.rec_syscall, 1200, "syscall records");
	ASSERT_EQ(s.rec_block, 1300, "block records");
	ASSERT_EQ(s.rec_uring, 0, "io_uring records");
	ASSERT_EQ(s.drops_block, 2, "block drops");
	ASSERT_EQ(s.drops_other, 1, "other drops");
	/* a tail that starts in the middle of a line still finds the final line */
	ASSERT_OK(bench_parse_tracer_summary(jl + 10, strlen(jl) - 10, &s), "partial tail");
	if (!ASSERT_OK(bench_parse_tracer_summary(txt, strlen(txt), &s), "text"))
		return;
	ASSERT_EQ(s.requests, 58801, "text requests");
	ASSERT_EQ(s.drops, 7, "text drops");
	ASSERT_EQ(s.records, -1, "text: records unknown");
	ASSERT_EQ(s.rec_block, -1, "text: block records unknown");
	ASSERT_EQ(bench_parse_tracer_summary("nothing\n", 8, &s), -ENOENT, "none");
}

/* Tracer names: kinds, layer sets (+ for ,), unknown names refused, found again. */
static void test_tracer_names(void)
{
	static struct bench b;

	memset(&b, 0, sizeof(b));
	ASSERT_EQ(tracer_get(&b, "none"), 0, "none");
	ASSERT_EQ(tracer_get(&b, "iotracer:syscall+block"), 1, "layers");
	ASSERT_STREQ(b.tr[1].layers, "syscall,block", "-l value");
	ASSERT_EQ(b.tr[1].k, T_IOT, "kind");
	ASSERT_EQ(tracer_get(&b, "iotracer-nojson"), 2, "nojson");
	ASSERT_EQ(tracer_get(&b, "bpftrace-hist"), 3, "bpftrace-hist");
	ASSERT_EQ(tracer_get(&b, "iotracer:syscall+block"), 1, "found again");
	ASSERT_EQ(tracer_get(&b, "perf"), -EINVAL, "unknown tracer");
	ASSERT_EQ(tracer_get(&b, "iotracer:disk"), -EINVAL, "unknown layer");
	ASSERT_EQ(tracer_get(&b, "bpftrace-hist:block"), -EINVAL, "layers of a bpftrace peer");
	ASSERT_EQ(tracer_get(&b, "iotracer@/nonexistent/iotracer"), -EINVAL, "PATH not there");
	ASSERT_EQ(b.ntr, 4, "only good names added");
	ASSERT_STREQ(tracer_kind_name(b.tr[2].k), "iotracer-nojson", "kind name");
	ASSERT_EQ(tracer_find(&b, "bpftrace-hist"), 3, "find_tr");
	ASSERT_EQ(tracer_find(&b, "bpftrace-print"), -1, "find_tr absent");
}

/*
 * The unreported-drops check compares the device's stat with block records
 * only when the block layer is traced, and fio's IO count with syscall
 * records only when the syscall layer is (fs and sched pull it in).
 */
static void test_unreported_oracles(void)
{
	static const struct {
		const char *layers;
		int block, requests;
	} c[] = {
		{ "", 1, 1 },
		{ "all", 1, 1 },
		{ "block", 1, 0 },
		{ "syscall", 0, 1 },
		{ "fs", 0, 1 },
		{ "sched", 0, 1 },
		{ "syscall,block", 1, 1 },
		{ "nvme", 0, 0 },
		{ "fs,nvme,block", 1, 1 },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int blk = -1, req = -1;

		bench_unreported_oracles(c[i].layers, &blk, &req);
		ASSERT_EQ(blk, c[i].block, c[i].layers);
		ASSERT_EQ(req, c[i].requests, c[i].layers);
	}
}

/* A final summary with these records and counted drops (no io_uring, no aio). */
static struct tracer_sum sum_of(int64_t syscall, int64_t block, int64_t drops_block,
				int64_t drops_other)
{
	return (struct tracer_sum){ .requests = syscall,
				    .records = syscall + block,
				    .drops = drops_block + drops_other,
				    .rec_syscall = syscall,
				    .rec_block = block,
				    .drops_block = drops_block,
				    .drops_other = drops_other };
}

/*
 * iotracer:block and iotracer:syscall side by side, as in the run whose check
 * reported 784,621 unreported drops. Each layer set reports 0 records for the
 * layer it does not trace: compared with the other oracle, every IO looked lost.
 */
static void test_run_unreported(void)
{
	static struct bench b;
	struct run r = { 0 };
	int64_t blk, req;

	memset(&b, 0, sizeof(b));
	tracer_get(&b, "none");
	tracer_get(&b, "iotracer:block");
	tracer_get(&b, "iotracer:syscall");
	tracer_get(&b, "iotracer");
	r.ok = 1;
	r.fio.ios = 784621;
	r.blk_ios = 784625;
	r.sum = sum_of(0, 784620, 3, 0);
	r.tr = 1; /* block alone */
	bench_run_unreported(&b, &r, &blk, &req);
	ASSERT_EQ(blk, 2, "block: stat - records - counted drops");
	ASSERT_EQ(req, -1, "block: fio's IOs n/a");

	r.sum = sum_of(784621, 0, 0, 0);
	r.tr = 2; /* syscall alone */
	bench_run_unreported(&b, &r, &blk, &req);
	ASSERT_EQ(blk, -1, "syscall: device stat n/a");
	ASSERT_EQ(req, 0, "syscall: every fio IO recorded");

	r.sum.rec_block = 784625;
	r.sum.records = 784621 + 784625;
	r.tr = 3; /* all layers: both oracles */
	bench_run_unreported(&b, &r, &blk, &req);
	ASSERT_EQ(blk, 0, "all: stat");
	ASSERT_EQ(req, 0, "all: fio");
	r.sum.drops = -1;
	bench_run_unreported(&b, &r, &blk, &req);
	ASSERT_TRUE(blk == -1 && req == -1, "no summary: nothing compared");
}

/*
 * The tax workloads: each loop really makes its calls for the time asked
 * (the clock is the oracle), and a tracer's ns/op is held to the run without
 * one of the same round.
 */
static void test_tax(void)
{
	static struct bench b;
	uint64_t ops, ns;
	unsigned mask;
	struct agg a;

	for (int k = TAX_SYSCALL; k <= TAX_SOCKET; k++) {
		ASSERT_EQ(tax_run(k, 20000000, &ops, &ns), 0, "tax loop");
		ASSERT_TRUE(ops >= 2000 && ns >= 20000000, "ops made for the time asked");
	}
	ASSERT_EQ(bench_parse_presets("tax", &mask), 0, "tax preset");
	ASSERT_EQ(mask, P_TAX, "tax mask");
	ASSERT_EQ(bench_parse_presets("all", &mask), 0, "all");
	ASSERT_TRUE(mask & P_TAX, "all has tax");
	ASSERT_TRUE(bench_wls[bench_find_wl("tax-pipe")].tax == TAX_PIPE, "tax-pipe");

	memset(&b, 0, sizeof(b));
	b.none = tracer_get(&b, "none");
	tracer_get(&b, "iotracer-empty");
	ASSERT_STREQ(tracer_env(&b.tr[1]), "IOTRACER_EMPTY_PROGS=1", "empty: its env");
	ASSERT_TRUE(tracer_alwayson(&b.tr[1]), "empty: always-on's hooks");
	b.runs = calloc(4, sizeof(*b.runs));
	b.nruns = 4;
	for (int i = 0; i < 4; i++) {
		b.runs[i].wl = bench_find_wl("tax-pipe");
		b.runs[i].tr = i & 1;
		b.runs[i].round = i / 2;
		b.runs[i].ok = 1;
		b.runs[i].sum.drops = 0;
	}
	b.runs[0].tax_ns = 800; /* round 0: none 800, traced 1000 */
	b.runs[1].tax_ns = 1000;
	b.runs[2].tax_ns = 1000; /* round 1: none 1000, traced 1500 */
	b.runs[3].tax_ns = 1500;
	bench_aggregate(&b, bench_find_wl("tax-pipe"), 1, &a);
	ASSERT_EQ(a.pairs, 2, "two pairs");
	ASSERT_TRUE(fabs(a.tax_ratio.min - 1.25) < 1e-9 && fabs(a.tax_ratio.max - 1.5) < 1e-9,
		    "each round against its own none");
	ASSERT_TRUE(fabs(a.tax_ns.med - 1250) < 1e-9, "median ns/op");
	free(b.runs);
}

/* run k of b: workload wl, tracer tr, round; fio IOPS iops, drops */
static void mk_run(struct bench *b, int k, int wl, int tr, int round, double iops, int64_t drops)
{
	struct run *r = &b->runs[k];

	memset(r, 0, sizeof(*r));
	r->wl = wl;
	r->tr = tr;
	r->round = round;
	r->ok = 1;
	r->fio.iops = iops;
	r->fio.ios = (uint64_t)iops;
	r->sum.drops = drops;
	r->sum.records = r->sum.requests = -1;
	r->rss_anon_kb = 1000;
	r->tax_ns = 1000;
}

/*
 * The targets (issue 37): a verdict whose pairs range across its limit says so (it flipped
 * between back-to-back runs with no note); the drops of a tax run, whose iotracer traces the
 * whole machine, are not the bench's.
 */
static void test_checks(void)
{
	static struct bench b;
	struct check c[MAX_CHECKS];
	int wl = bench_find_wl("max-psync"), tax = bench_find_wl("tax-pipe"), n, noisy = -1,
	    drops = -1;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	memset(&b, 0, sizeof(b));
	b.none = tracer_get(&b, "none");
	tracer_get(&b, "iotracer");
	tracer_get(&b, "iotracer-alwayson");
	for (int t = 0; t < 3; t++)
		b.tr[t].avail = 1;
	b.wl_sel[wl] = b.wl_sel[tax] = 1;
	b.wl_tr[wl][0] = b.wl_tr[wl][1] = 1;
	b.wl_tr[tax][0] = b.wl_tr[tax][2] = 1;
	b.o.pairs = 3;
	b.runs = calloc(10, sizeof(*b.runs));
	b.nruns = 10;
	/* ratios 0.93, 0.96, 0.97: median 0.96 meets 0.95, the range spans it */
	mk_run(&b, 0, wl, 0, 0, 1000, 0);
	mk_run(&b, 1, wl, 1, 0, 930, 0);
	mk_run(&b, 2, wl, 0, 1, 1000, 0);
	mk_run(&b, 3, wl, 1, 1, 960, 0);
	mk_run(&b, 4, wl, 0, 2, 1000, 0);
	mk_run(&b, 5, wl, 1, 2, 970, 0);
	/* a tax round whose always-on iotracer counted 500 drops of other processes' IO */
	mk_run(&b, 6, tax, 0, 0, 0, 0);
	mk_run(&b, 7, tax, 2, 0, 0, 500);
	mk_run(&b, 8, tax, 0, 1, 0, 0);
	mk_run(&b, 9, tax, 2, 1, 0, 0);
	n = bench_collect_checks(&b, c, MAX_CHECKS);
	for (int i = 0; i < n; i++) {
		if (strstr(c[i].name, "max rate psync"))
			noisy = i;
		if (strstr(c[i].name, "iotracer drops"))
			drops = i;
	}
	if (!ASSERT_TRUE(noisy >= 0 && drops >= 0, "the checks"))
		goto out;
	ASSERT_TRUE(bench_check_ok(&c[noisy]) && bench_check_noisy(&c[noisy]), "met, and may flip");
	ASSERT_EQ(c[noisy].pairs, 3, "over 3 pairs");
	ASSERT_TRUE(fabs(c[noisy].lo - 0.93) < 1e-9 && fabs(c[noisy].hi - 0.97) < 1e-9, "range");
	ASSERT_TRUE(c[drops].value == 0 && bench_check_ok(&c[drops]),
		    "the tax run's drops left out");
	f = open_memstream(&text, &len);
	if (!ASSERT_TRUE(f != NULL, "memstream"))
		goto out;
	bench_print_checks(&b, f);
	fclose(f);
	ASSERT_TRUE(strstr(text, "noise: its 3 pairs ranged 0.930..0.970, across the limit") !=
			    NULL,
		    "the noise note printed");
out:
	free(text);
	free(b.runs);
}

/*
 * The tables (issue 37): an iotracer@PATH name longer than the column keeps the columns
 * aligned; a floor tracer not built names its make target.
 */
static void test_tables(void)
{
	static struct bench b;
	int wl = bench_find_wl("tax-pipe");
	char *text = NULL, *l1, *l2;
	size_t len = 0;
	FILE *f;

	memset(&b, 0, sizeof(b));
	b.none = tracer_get(&b, "none");
	tracer_get(&b, "floor-raw");
	b.ntr = 3;
	b.tr[2] = b.tr[0];
	snprintf(b.tr[2].name, sizeof(b.tr[2].name), "iotracer@/opt/a/very/long/path/to/it-blame");
	b.tr[2].k = T_IOT;
	b.tr[0].avail = b.tr[2].avail = 1;
	tracer_check_tools(&b); /* no build/tax_floor next to an empty exe path */
	b.wl_sel[wl] = 1;
	b.wl_tr[wl][0] = b.wl_tr[wl][1] = b.wl_tr[wl][2] = 1;
	b.o.pairs = 1;
	b.runs = calloc(2, sizeof(*b.runs));
	b.nruns = 2;
	mk_run(&b, 0, wl, 0, 0, 0, 0);
	mk_run(&b, 1, wl, 2, 0, 0, 0);
	b.runs[1].tax_ns = 1500;
	f = open_memstream(&text, &len);
	if (!ASSERT_TRUE(f != NULL, "memstream"))
		goto out;
	bench_print_preset_summary(&b, P_TAX, f);
	fclose(f);
	ASSERT_TRUE(strstr(text, "not built: make tools") != NULL, "the make target named");
	/* header and row: the long name's column ends where its cell does */
	l1 = strstr(text, "\nworkload");
	l2 = l1 ? strstr(l1 + 1, "\ntax-pipe") : NULL;
	ASSERT_TRUE(l1 && l2 && strchr(l1 + 1, '\n') - l1 == strchr(l2 + 1, '\n') - l2,
		    "header and row of the same width");
out:
	free(text);
	free(b.runs);
}

/*
 * A small XML well-formedness check: balanced tags, quoted attributes,
 * entities only &amp; &lt; &gt; &quot; &apos;, one root element.
 */
static const char *xml_check(const char *s)
{
	char stack[64][32];
	int depth = 0, roots = 0;

	if (strncmp(s, "<?xml ", 6))
		return "no XML declaration";
	s = strstr(s, "?>");
	if (!s)
		return "unterminated declaration";
	s += 2;
	while (*s) {
		if (*s == '&') {
			static const char *const ents[] = { "&amp;", "&lt;", "&gt;", "&quot;",
							    "&apos;" };
			int ok = 0;

			for (int i = 0; i < 5; i++)
				ok |= !strncmp(s, ents[i], strlen(ents[i]));
			if (!ok)
				return "bad entity";
			s++;
			continue;
		}
		if (*s == '>')
			return "stray '>'";
		if (*s != '<') {
			if (!depth && *s != '\n' && *s != ' ')
				return "text outside the root";
			s++;
			continue;
		}
		if (s[1] == '/') {
			size_t l = strcspn(s + 2, ">");

			if (!depth)
				return "close without open";
			depth--;
			if (strlen(stack[depth]) != l || strncmp(s + 2, stack[depth], l))
				return "mismatched close tag";
			s += 2 + l;
			if (*s != '>')
				return "unterminated close tag";
			s++;
			continue;
		}
		/* open tag: name, attributes name="value", optional '/' */
		size_t l = strcspn(s + 1, " />\n");
		char name[32];
		int selfclose = 0;

		if (!l || l >= sizeof(name))
			return "bad tag name";
		memcpy(name, s + 1, l);
		name[l] = '\0';
		s += 1 + l;
		for (;;) {
			while (*s == ' ' || *s == '\n')
				s++;
			if (*s == '/' && s[1] == '>') {
				selfclose = 1;
				s += 2;
				break;
			}
			if (*s == '>') {
				s++;
				break;
			}
			size_t al = strcspn(s, "=");
			if (!al || s[al] != '=' || s[al + 1] != '"')
				return "bad attribute";
			s += al + 2;
			while (*s && *s != '"') {
				if (*s == '<')
					return "'<' in attribute";
				s++;
			}
			if (!*s)
				return "unterminated attribute";
			s++;
		}
		if (!depth)
			roots++;
		if (!selfclose) {
			if (depth >= 64)
				return "too deep";
			snprintf(stack[depth++], sizeof(stack[0]), "%s", name);
		}
	}
	if (depth)
		return "unclosed element";
	if (roots != 1)
		return "not exactly one root element";
	return NULL;
}

static void test_svg(void)
{
	struct svg_bar cpu[] = {
		{ "ref-rand", "iotracer", 0.3, 0.1, 0.6, 1 },
		{ "ref-rand", "bpftrace <print> & \"co\"", 2.5, 2.0, 4.1, 4 },
		{ "ref-seq", "iotracer", -0.2, -0.4, 0.1, 1 },
	};
	struct svg_bar iops[] = {
		{ "max-psync", "iotracer", 4.0, NAN, NAN, 1 },
		{ "max-psync", "nothing", NAN, NAN, NAN, 2 },
	};
	struct svg_panel p[] = {
		{ "added CPU, % per core", cpu, 3, 0.5, "target 0.5 %" },
		{ "IOPS lost, %", iops, 2, NAN, NULL },
	};
	char *doc = bench_svg_chart("bench <test> & more", p, 2), esc[64];
	const char *why;

	if (!ASSERT_TRUE(doc != NULL, "chart"))
		return;
	why = xml_check(doc);
	ASSERT_TRUE(why == NULL, why ? why : "well-formed");
	ASSERT_TRUE(strstr(doc, "<svg xmlns=\"http://www.w3.org/2000/svg\"") != NULL, "svg root");
	ASSERT_TRUE(strstr(doc, "bpftrace &lt;print&gt; &amp; &quot;co&quot;") != NULL,
		    "escaped label");
	ASSERT_TRUE(strstr(doc, "bench &lt;test&gt; &amp; more") != NULL, "escaped title");
	ASSERT_TRUE(strstr(doc, "stroke-dasharray") != NULL, "target line");
	ASSERT_TRUE(strstr(doc, ">n/a<") != NULL, "missing value shown as n/a");
	ASSERT_TRUE(strstr(doc, "nan") == NULL && strstr(doc, "inf") == NULL,
		    "no NaN/inf coordinates");
	ASSERT_TRUE(strlen(doc) > 10 && !strcmp(doc + strlen(doc) - 7, "</svg>\n"),
		    "ends with </svg>");
	free(doc);

	doc = bench_svg_chart("empty", NULL, 0);
	ASSERT_TRUE(doc && !xml_check(doc), "empty chart well-formed");
	free(doc);

	ASSERT_STREQ(svg_escape("a<b>&\"'\x01", esc, sizeof(esc)), "a&lt;b&gt;&amp;&quot;&apos; ",
		     "escape");
	ASSERT_STREQ(svg_escape("&&&&", esc, 10), "&amp;", "escape truncates on entity boundary");
}

int main(void)
{
	RUN_TEST(test_median);
	RUN_TEST(test_stat);
	RUN_TEST(test_fio);
	RUN_TEST(test_fio_extremes);
	RUN_TEST(test_tracer_summary);
	RUN_TEST(test_tracer_names);
	RUN_TEST(test_unreported_oracles);
	RUN_TEST(test_run_unreported);
	RUN_TEST(test_tax);
	RUN_TEST(test_svg);
	RUN_TEST(test_checks);
	RUN_TEST(test_tables);
	return unit_result();
}
