// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the pure parts of `iotracer bench`: statistics, CPU
 * accounting, /proc parsers, the JSON reader, fio and summary parsing, BTF
 * names, and the SVG chart (well-formed XML, escaped text).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <linux/btf.h>

#include "bench/bench.h"
#include "unit.h"

#ifndef BTF_INFO_ENC
#define BTF_INFO_ENC(kind, kflag, vlen) ((!!(kflag) << 31) | ((kind) << 24) | ((vlen)&0xffff))
#endif

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

static const char stat_a[] = "cpu  51356 0 19688 171722 990 0 1212 0 0 0\n"
			     "cpu0 23206 0 8694 89927 176 0 527 0 0 0\n"
			     "cpu1 28150 0 10993 81795 814 0 685 0 0 0\n"
			     "intr 1419499 0 0\nctxt 7151576\nbtime 1\n";

static void test_proc_stat(void)
{
	struct cpu_snap a = { 0 }, b = { 0 };
	char buf[512];

	if (!ASSERT_OK(bench_parse_proc_stat(stat_a, &a), "parse"))
		return;
	ASSERT_EQ(a.ncpu, 2, "ncpu");
	ASSERT_EQ(a.idle_ticks, (uint64_t)(171722 + 990), "idle + iowait");
	/* 10 s later: 15 s of idle+iowait over 2 CPUs (1500 ticks at USER_HZ 100) */
	snprintf(buf, sizeof(buf), "cpu  99999 0 99999 %d %d 0 0 0 0 0\ncpu0 1\ncpu1 1\n",
		 171722 + 1400, 990 + 100);
	if (!ASSERT_OK(bench_parse_proc_stat(buf, &b), "parse b"))
		return;
	a.t_ns = 1000000000ull;
	b.t_ns = a.t_ns + 10000000000ull;
	/* user/system ticks are ignored on purpose: only idle time is exact */
	ASSERT_NEAR(bench_busy_ns(&a, &b, 100), 5e9, 1, "busy ns = 2 x 10 s - 15 s");
	ASSERT_NEAR(bench_busy_pct(&a, &b, 100), 25.0, 1e-9, "busy % per core");
	/* idle at USER_HZ 250 */
	ASSERT_NEAR(bench_busy_pct(&a, &b, 250), 100.0 * (20 - 6) / 20, 1e-9, "HZ 250");
	b.t_ns = a.t_ns;
	ASSERT_TRUE(isnan(bench_busy_pct(&a, &b, 100)), "zero elapsed");
	ASSERT_EQ(bench_parse_proc_stat("cpu0 1 2 3 4 5\n", &b), -EINVAL, "no cpu line");
	ASSERT_EQ(bench_parse_proc_stat("cpu  1 2 3\ncpu0 1\n", &b), -EINVAL, "short cpu line");
	ASSERT_EQ(bench_parse_proc_stat("cpu  1 2 3 4 5\n", &b), -EINVAL, "no cpuN lines");
}

static void test_schedstat_status(void)
{
	uint64_t v = 0;
	static const char status[] = "Name:\tiotracer\nVmHWM:\t   23848 kB\nVmRSS:\t  9000 kB\n"
				     "RssAnon:\t    4432 kB\nRssFile:\t 4568 kB\n";

	ASSERT_OK(bench_parse_schedstat("2537738 37611 2\n", &v), "schedstat");
	ASSERT_EQ(v, 2537738ull, "run ns");
	ASSERT_EQ(bench_parse_schedstat("x 1 2", &v), -EINVAL, "junk");
	ASSERT_EQ(bench_parse_schedstat("12x 1 2", &v), -EINVAL, "junk after number");
	ASSERT_OK(bench_parse_status_kb(status, "RssAnon", &v), "RssAnon");
	ASSERT_EQ(v, 4432ull, "RssAnon value");
	ASSERT_OK(bench_parse_status_kb(status, "VmHWM", &v), "VmHWM");
	ASSERT_EQ(v, 23848ull, "VmHWM value");
	ASSERT_EQ(bench_parse_status_kb(status, "RssShmem", &v), -ENOENT, "absent");
	ASSERT_EQ(bench_parse_status_kb(status, "Rss", &v), -ENOENT, "prefix is not a key");
}

static void test_fdinfo(void)
{
	struct bench_prog p = { 0 };
	static const char prog[] = "pos:\t0\nflags:\t02000002\nmnt_id:\t16\nino:\t1057\n"
				   "prog_type:\t26\nprog_jited:\t1\nprog_tag:\t993e808ed1b6e789\n"
				   "memlock:\t4096\nprog_id:\t939\nrun_time_ns:\t123456\n"
				   "run_cnt:\t789\nrecursion_misses:\t0\nverified_insns:\t300\n";
	static const char link[] = "pos:\t0\nflags:\t02000000\nlink_type:\ttracing\n"
				   "link_id:\t12\nprog_tag:\t993e808ed1b6e789\nprog_id:\t939\n";
	static const char map[] = "pos:\t0\nmap_type:\t27\nkey_size:\t0\nmap_id:\t300\n";

	ASSERT_EQ(bench_parse_fdinfo_prog(prog, &p), 1, "program fd");
	ASSERT_EQ(p.id, 939u, "id");
	ASSERT_EQ(p.run_time_ns, 123456ull, "run_time_ns");
	ASSERT_EQ(p.run_cnt, 789ull, "run_cnt");
	ASSERT_EQ(bench_parse_fdinfo_prog(link, &p), 0, "link fd is not a program");
	ASSERT_EQ(bench_parse_fdinfo_prog(map, &p), 0, "map fd");
	ASSERT_EQ(bench_parse_fdinfo_prog("prog_id:\t99999999999\n", &p), -EINVAL, "id range");
}

static void test_json_reader(void)
{
	static const char doc[] =
		" {\"a\": {\"b\": [1, 2.5, -3e2], \"s\": \"x\\\"y\\u00e9\\n\", \"t\": true,"
		" \"f\": false, \"n\": null}, \"e\": {}, \"z\": []} ";
	struct bj *v = bj_parse(doc, strlen(doc));
	const struct bj *arr, *s;

	if (!ASSERT_TRUE(v != NULL, "parse"))
		return;
	arr = bj_path(v, "a.b");
	ASSERT_TRUE(arr && arr->t == BJ_ARR, "array");
	ASSERT_NEAR(arr->child->num, 1, 0, "1");
	ASSERT_NEAR(arr->child->next->num, 2.5, 0, "2.5");
	ASSERT_NEAR(arr->child->next->next->num, -300, 0, "-3e2");
	s = bj_path(v, "a.s");
	ASSERT_TRUE(s && s->t == BJ_STR, "string");
	ASSERT_STREQ(s->str, "x\"y\xc3\xa9\n", "escapes");
	ASSERT_NEAR(bj_num(v, "a.t", -1), -1, 0, "bool is not a number");
	ASSERT_TRUE(bj_path(v, "a.t")->t == BJ_BOOL && bj_path(v, "a.t")->num == 1, "true");
	ASSERT_TRUE(bj_path(v, "a.n")->t == BJ_NULL, "null");
	ASSERT_TRUE(bj_get(v, "e")->t == BJ_OBJ && !bj_get(v, "e")->child, "empty object");
	ASSERT_TRUE(bj_get(v, "z")->t == BJ_ARR && !bj_get(v, "z")->child, "empty array");
	ASSERT_TRUE(bj_path(v, "a.nope") == NULL, "missing");
	ASSERT_NEAR(bj_num(v, "a.nope", 7), 7, 0, "default");
	bj_free(v);

	static const char *const bad[] = { "",		"{",	     "{\"a\":}", "[1,]",
					   "{\"a\" 1}", "[1] x",     "\"abc",	 "tru",
					   "{1:2}",	"[\"\\q\"]", "[-]" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = bj_parse(bad[i], strlen(bad[i]));
		if (!ASSERT_TRUE(v == NULL, bad[i]))
			bj_free(v);
	}
	/* nesting limit */
	char deep[200];
	memset(deep, '[', 100);
	memset(deep + 100, ']', 100);
	v = bj_parse(deep, 200);
	if (!ASSERT_TRUE(v == NULL, "too deep"))
		bj_free(v);
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

/* A BTF blob: [1] int, [2] func_proto, [3] func "handle_block_rq_issue". */
static void test_btf_name(void)
{
	static const char strs[] = "\0int\0handle_block_rq_issue";
	unsigned char blob[256];
	struct btf_header h = { 0 };
	struct btf_type t;
	uint32_t u, off = 0, types_len;
	char name[48];

	memset(blob, 0, sizeof(blob));
	/* types */
	unsigned char *ty = blob + sizeof(h);
	t = (struct btf_type){ .name_off = 1, .info = BTF_INFO_ENC(BTF_KIND_INT, 0, 0), .size = 4 };
	memcpy(ty + off, &t, sizeof(t));
	off += sizeof(t);
	u = 32; /* int encoding */
	memcpy(ty + off, &u, 4);
	off += 4;
	t = (struct btf_type){ .name_off = 0,
			       .info = BTF_INFO_ENC(BTF_KIND_FUNC_PROTO, 0, 1),
			       .type = 1 };
	memcpy(ty + off, &t, sizeof(t));
	off += sizeof(t);
	memset(ty + off, 0, 8); /* one btf_param */
	off += 8;
	t = (struct btf_type){ .name_off = 5,
			       .info = BTF_INFO_ENC(BTF_KIND_FUNC, 0, 0),
			       .type = 2 };
	memcpy(ty + off, &t, sizeof(t));
	off += sizeof(t);
	types_len = off;
	memcpy(ty + off, strs, sizeof(strs));
	h.magic = BTF_MAGIC;
	h.version = BTF_VERSION;
	h.hdr_len = sizeof(h);
	h.type_off = 0;
	h.type_len = types_len;
	h.str_off = types_len;
	h.str_len = sizeof(strs);
	memcpy(blob, &h, sizeof(h));

	size_t len = sizeof(h) + types_len + sizeof(strs);
	if (!ASSERT_OK(bench_btf_name(blob, len, 3, name, sizeof(name)), "func"))
		return;
	ASSERT_STREQ(name, "handle_block_rq_issue", "full name");
	ASSERT_OK(bench_btf_name(blob, len, 1, name, sizeof(name)), "int");
	ASSERT_STREQ(name, "int", "int name");
	ASSERT_OK(bench_btf_name(blob, len, 3, name, 7), "truncated");
	ASSERT_STREQ(name, "handle", "truncated name");
	ASSERT_EQ(bench_btf_name(blob, len, 4, name, sizeof(name)), -ENOENT, "no type 4");
	ASSERT_EQ(bench_btf_name(blob, len - 30, 3, name, sizeof(name)), -EINVAL, "short blob");
	blob[0] = 0;
	ASSERT_EQ(bench_btf_name(blob, len, 3, name, sizeof(name)), -EINVAL, "bad magic");
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
	char *doc = svg_chart("bench <test> & more", p, 2), esc[64];
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

	doc = svg_chart("empty", NULL, 0);
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
	RUN_TEST(test_proc_stat);
	RUN_TEST(test_schedstat_status);
	RUN_TEST(test_fdinfo);
	RUN_TEST(test_json_reader);
	RUN_TEST(test_fio);
	RUN_TEST(test_fio_extremes);
	RUN_TEST(test_tracer_summary);
	RUN_TEST(test_btf_name);
	RUN_TEST(test_svg);
	return unit_result();
}
