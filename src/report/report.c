// SPDX-License-Identifier: GPL-2.0
/*
 * report: the driver of `iotracer report` (see report.h, internal.h, docs/record.md):
 * options, the files to read, the filters, and every request to the parts.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "blame/blame.h"
#include "records/cgroup.h"
#include "records/container.h"
#include "records/fname.h"
#include "service/cli.h"
#include "records/output.h"
#include "records/recfmt.h"
#include "records/stages.h"
#include "records/uhist.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/parse.h"
#include "lib/opts.h"
#include "report/jsonl.h"
#include "records/reader.h"
#include "report/internal.h"
#include "report/driver.h"
#include "report/report.h"
#include "report/chsrc.h"

#define RP_MAX_TOP 10000
#define RP_PROG "iotracer report"

/* Long-only options of report's own (codes above every run option's). */
enum {
	RP_OPT_PERFETTO = 1024,
	RP_OPT_HEATMAP,
	RP_OPT_STAGE,
	RP_OPT_CONTAINER,
	RP_OPT_POD,
	RP_OPT_BLAME,
	RP_OPT_BY,
	RP_OPT_FROM,
	RP_OPT_HOST,
	RP_OPT_AUTH,
	RP_OPT_CA,
	RP_OPT_HELP
};

/* report's own rows; the filters' are the run options' (rp_rows). */
/*
 * --by's keyword i, NULL past the last (.kw): bykey's kinds, then blame's keys
 * they lack, but "vm" (host mode's).
 */
static const char *rp_by_kw(int i)
{
	int n = 0;

	for (int k = 0; k <= BK_POD; k++)
		if (n++ == i)
			return bk_kind_name(k);
	for (int b = 0; b < BLAME_BY_VM; b++)
		if (bk_kind_of(blame_by_name(b)) < 0 && n++ == i)
			return blame_by_name(b);
	return NULL;
}

static const struct opt_row rp_own[] = {
	{ .name = "container",
	  .key = RP_OPT_CONTAINER,
	  .arg = "X",
	  .help = "only requests from the container whose id starts with X\n"
		  "(4+ hex digits) or whose name is X (docs/cgroups.md)" },
	{ .name = "pod",
	  .key = RP_OPT_POD,
	  .arg = "X",
	  .help = "only requests from the pod whose UID, name or\nnamespace/name is X" },
	{ .name = "top",
	  .key = 'n',
	  .arg = "N",
	  .group = "Output:",
	  .help = "the N slowest requests (default 10, 0: none, at most 10000)" },
	{ .name = "json",
	  .key = 'j',
	  .arg = "FILE",
	  .help = "the requests as JSON lines, as `iotracer -j` wrote them\n"
		  "(with a recording's stored blame lines; '-' = stdout,\n"
		  "the text then goes to stderr)" },
	{ .name = "perfetto",
	  .key = RP_OPT_PERFETTO,
	  .arg = "FILE",
	  .help = "a Chrome trace-event JSON file for ui.perfetto.dev:\n"
		  "a track per thread and device, stages, flow arrows" },
	{ .name = "heatmap",
	  .key = RP_OPT_HEATMAP,
	  .arg = "FILE",
	  .help = "an SVG latency heatmap per device and op: time in\n"
		  "columns, log2 latency in rows, requests per cell as colour" },
	{ .name = "stage",
	  .key = RP_OPT_STAGE,
	  .arg = "STAGE",
	  .kw = hm_stage_kw,
	  .help = "the heatmap's latency, one of {}:\n"
		  "total (the request's, default), else that stage of its\n"
		  "block requests" },
	{ .name = "blame",
	  .key = RP_OPT_BLAME,
	  .help = "who slowed whom: each matching block request's wait split\n"
		  "over the requests holding its device (docs/blame.md);\n"
		  "a recording made with --blame: its stored lines;\n"
		  "with -j also as \"blame\" JSON lines" },
	{ .name = "by",
	  .key = RP_OPT_BY,
	  .arg = "KEY",
	  .kw = rp_by_kw,
	  .help = "one of {}.\n"
		  "file, cgroup, pod: the top keys by bytes, p99 and (file,\n"
		  "pod, with --blame) blamed wait; with --blame, cgroup (its\n"
		  "default), pid, comm: --blame's victims and culprits" },
	{ .name = "from",
	  .key = RP_OPT_FROM,
	  .arg = "URL",
	  .group = "A fleet's requests in ClickHouse (docs/fleet.md), instead of PATH:",
	  .help = "clickhouse://[USER@]HOST:PORT/DB.TABLE, the table --sink\n"
		  "fills (a Distributed table: the whole fleet)" },
	{ .name = "host",
	  .key = RP_OPT_HOST,
	  .arg = "NAME[,NAME...]",
	  .help = "only requests of these hosts (the daemons' --name)" },
	{ .name = "auth",
	  .key = RP_OPT_AUTH,
	  .arg = "FILE",
	  .help = "the password: FILE's first line (0600)" },
	{ .name = "ca", .key = RP_OPT_CA, .arg = "FILE", .help = "trust this CA for HTTPS (PEM)" },
	{ .name = "help", .key = RP_OPT_HELP, .help = "print this help and exit" },
};
/* The filters, in --help order: the run options' rows (the group heading is report's). */
static const char *const rp_filters[] = { "pid",  "comm",	 "dev",	  "cgroup",
					  "file", "min-latency", "since", "until" };
#define RP_NR_ROWS (sizeof(rp_filters) / sizeof(rp_filters[0]) + sizeof(rp_own) / sizeof(rp_own[0]))

static struct opt_row rp_filter_rows[sizeof(rp_filters) / sizeof(rp_filters[0])];
static const struct opt_row *rp_rows[RP_NR_ROWS + 1];

static const struct opt_cmd rp_cmd = {
	.prog = RP_PROG,
	.head = "Usage: " RP_PROG " [options] PATH...   read a recording back (docs/record.md)\n"
		"       " RP_PROG " [options] --from clickhouse://...   a fleet's (docs/fleet.md)\n"
		"PATH: a segment file written by --record, a directory of them, or a JSON lines\n"
		"file written by -j.\n"
		"Prints the summary of the live daemon (stage percentiles, histograms) and the\n"
		"slowest requests with where their time went.\n",
	.tail = "TIME: a duration before now (30s, 10m, 2h), a date and time with a zone\n"
		"      (2026-11-24T13:25:00Z, 2026-11-24T14:25:00.5+01:00) or without one: local\n"
		"      time (2026-11-24 14:25:00), or seconds since the epoch (1764000000).\n"
		"DUR: a number with a unit ns, us, ms, s, m or h (250us, 10ms, 1.5s); only 0\n"
		"     goes without one. -d and --cgroup name what the recording holds (devices\n"
		"     and cgroups of the host it was made on).\n"
		"Exit status: 0 success, 1 unreadable input or output, 2 bad usage.\n",
	.rows = rp_rows,
	.operands = INT_MAX,
};

const struct opt_cmd *report_opts(void)
{
	size_t n = 0;

	if (rp_rows[0])
		return &rp_cmd;
	for (size_t i = 0; i < sizeof(rp_filters) / sizeof(rp_filters[0]); i++) {
		rp_filter_rows[i] = *cli_row(rp_filters[i]);
		rp_filter_rows[i].group = i ? NULL : "Filters (all given filters must match):";
		rp_rows[n++] = &rp_filter_rows[i];
	}
	for (size_t i = 0; i < sizeof(rp_own) / sizeof(rp_own[0]); i++)
		rp_rows[n++] = &rp_own[i];
	return &rp_cmd;
}

/* ---- option values ---- */

/* CLOCK_REALTIME now, in ns. */
static uint64_t rp_real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * -f: a pattern over the recorded file names (docs/record.md "--file"): a
 * path matches itself and the files below it, a pattern with *, ? or [...]
 * what fnmatch(3) matches. A file or block device of this host also matches by
 * its inode (recordings made before the names were recorded).
 */
static int rp_file(struct rp_opts *o)
{
	char real[PATH_MAX];
	struct stat st;

	if (!o->f.file_path)
		return 0;
	o->file_pat = o->f.file_path;
	o->file_glob = strpbrk(o->file_pat, "*?[") != NULL;
	if (o->file_glob || stat(o->f.file_path, &st))
		return 0;
	if (realpath(o->f.file_path, real)) {
		o->file_real = strdup(real);
		if (!o->file_real) {
			it_err("report: out of memory");
			return 1;
		}
		o->file_pat = o->file_real;
	}
	if (S_ISDIR(st.st_mode))
		return 0;
	o->has_file = 1;
	o->file_bdev = S_ISBLK(st.st_mode);
	o->file_ino = st.st_ino;
	o->file_dev = o->file_bdev ? IT_MKDEV(major(st.st_rdev), minor(st.st_rdev)) :
				     IT_MKDEV(major(st.st_dev), minor(st.st_dev));
	return 0;
}

/* One --host name (a daemon's --name, or its host name). */
static int rp_host(const char *item, void *ctx)
{
	struct rp_opts *o = ctx;

	if (!*item || strlen(item) > 63 || strchr(item, '\'') || strchr(item, '\\')) {
		it_err("report: --host: bad name '%s' (1 to 63 characters)", item);
		return -EINVAL;
	}
	if (o->nr_hosts >= RP_MAX_HOSTS) {
		it_err("report: --host: more than %d hosts", RP_MAX_HOSTS);
		return -E2BIG;
	}
	o->hosts[o->nr_hosts] = strdup(item);
	return o->hosts[o->nr_hosts++] ? 0 : -ENOMEM;
}

static int rp_one(void *ctx, int c, const char *arg)
{
	struct rp_opts *o = ctx;
	struct cli_src src = { .err = stderr, .cmd = "report" };
	char list[128];
	uint64_t v;

	switch (c) {
	case RP_OPT_CONTAINER:
	case RP_OPT_POD:
		if (!*arg || strlen(arg) >= CT_NAME_MAX)
			return opts_bad_value(
				NULL, "report", c == RP_OPT_CONTAINER ? "container" : "pod", arg,
				"%s of 1 to %d characters",
				c == RP_OPT_CONTAINER ? "an id or a name" : "a UID or a name",
				CT_NAME_MAX - 1);
		*(c == RP_OPT_CONTAINER ? &o->container : &o->pod) = arg;
		return 0;
	case 'n':
		if (parse_u64(arg, 0, RP_MAX_TOP, &v))
			return opts_bad_value(NULL, "report", "top", arg, "0 to %d", RP_MAX_TOP);
		o->top = (int)v;
		return 0;
	case 'j':
		o->json_path = arg;
		return 0;
	case RP_OPT_BLAME:
		o->blame = 1;
		return 0;
	case RP_OPT_BY:
		o->bykey = bk_kind_of(arg);
		o->by = blame_by_of(arg);
		if (o->by < 0 && o->bykey < 0)
			return opts_bad_value(NULL, "report", "by", arg, "%s",
					      opts_kw_list(list, sizeof(list), rp_by_kw));
		return 0;
	case RP_OPT_PERFETTO:
		o->perfetto_path = arg;
		return 0;
	case RP_OPT_FROM:
		o->from = arg;
		return 0;
	case RP_OPT_AUTH:
		o->auth = arg;
		return 0;
	case RP_OPT_CA:
		o->ca = arg;
		return 0;
	case RP_OPT_HOST:
		return parse_each(arg, rp_host, o) ? 2 : 0;
	case RP_OPT_HEATMAP:
		o->heatmap_path = arg;
		return 0;
	case RP_OPT_STAGE:
		o->stage = hm_stage_of(arg);
		if (o->stage < 0)
			return opts_bad_value(NULL, "report", "stage", arg, "%s",
					      opts_kw_list(list, sizeof(list), hm_stage_kw));
		return 0;
	}
	return cli_filter(c, arg, &o->f, &src) == CLI_RUN ? 0 : 2;
}

static int rp_parse(int argc, char **argv, struct rp_opts *o)
{
	int ret;

	o->top = 10;
	o->stage = -1;
	o->by = -1;
	o->bykey = -1;
	cli_defaults(&o->f);
	o->f.offline = 1;
	ret = opts_parse(report_opts(), argc, argv, rp_one, o, NULL, NULL);
	if (ret)
		return ret;
	o->paths = argv + optind;
	o->nr_paths = argc - optind;
	if (!o->nr_paths && !o->from) {
		it_err("report: no PATH given (or --from clickhouse://...)");
		fputs("Try '" RP_PROG " --help'.\n", stderr);
		return 2;
	}
	if (o->nr_paths && o->from) {
		it_err("report: --from and PATH: one input at a time");
		return 2;
	}
	if (!o->from && (o->nr_hosts || o->auth || o->ca)) {
		it_err("report: --%s needs --from", o->nr_hosts ? "host" : o->auth ? "auth" : "ca");
		return 2;
	}
	/* --by cgroup: with --blame its grouping (as before --by pod), else the per-key table */
	if (o->blame && o->by >= 0)
		o->bykey = -1;
	else if (o->bykey >= 0)
		o->by = -1;
	if (o->from && o->blame && o->by > BLAME_BY_CGROUP) {
		it_err("report: --from: --blame sums the lines the daemons stored, by cgroup only");
		return 2;
	}
	if (o->by >= 0 && !o->blame) {
		it_err("report: --by %s needs --blame (--by file, cgroup, pod do not)",
		       blame_by_name(o->by));
		return 2;
	}
	if (o->stage >= 0 && !o->heatmap_path) {
		it_err("report: --stage needs --heatmap");
		return 2;
	}
	if (o->f.since_real && o->f.until_real && o->f.since_real >= o->f.until_real) {
		it_err("report: --since is not before --until: no request can match");
		return 2;
	}
	return rp_file(o);
}

/* ---- output ---- */

/* What was read, before the summary. */
/* Requests read: the segments' and the JSON lines'. */
static uint64_t rp_read(const struct report *rp)
{
	return rp->rr.st.requests + rp->jl.requests;
}

/*
 * Nothing matched: say why, the input holding no request or the filter that
 * left none (the first, in rp_matches() order, after which none was left).
 */
/* Some input could not be read: a file skipped, a line or a block that does not decode. */
static int rp_unreadable(const struct report *rp)
{
	return rp->rr.st.bad_segments || rp->rr.st.bad_blocks || rp->jl.bad_lines;
}

static void why_nothing(const struct report *rp)
{
	static const char *const names[RP_F_NR] = {
		[RP_F_MINLAT] = "--min-latency",
		[RP_F_WINDOW] = "--since/--until",
		[RP_F_COMM] = "--comm",
		[RP_F_PID] = "--pid",
		[RP_F_CGROUP] = "--cgroup",
		[RP_F_CONTAINER] = "--container/--pod",
		[RP_F_DEV] = "--dev",
		[RP_F_FILE] = "--file",
	};
	const struct rr_stats *s = &rp->rr.st;
	uint64_t total = rp_read(rp), left = total;

	if (rp->matched)
		return;
	if (!total && rp_unreadable(rp)) {
		/* exit 1 (report_main) */
		it_err("report: no input could be read (%llu lines that do not decode, %llu bad "
		       "blocks, %llu files not read)",
		       (unsigned long long)rp->jl.bad_lines, (unsigned long long)s->bad_blocks,
		       (unsigned long long)s->bad_segments);
		return;
	}
	if (!total) {
		it_warn("report: no request in the input (%llu lines that do not decode, "
			"%llu bad blocks, %llu files not read)",
			(unsigned long long)rp->jl.bad_lines, (unsigned long long)s->bad_blocks,
			(unsigned long long)s->bad_segments);
		return;
	}
	for (int k = 0; k < RP_F_NR; k++) {
		uint64_t before = left;

		left -= rp->failed[k];
		if (left || !rp->failed[k])
			continue;
		it_warn("report: none of the %llu requests read passed %s (%llu passed the filters "
			"before it)",
			(unsigned long long)total, names[k], (unsigned long long)before);
		return;
	}
}

static void print_reading(struct report *rp, FILE *f)
{
	const struct rr_stats *s = &rp->rr.st;
	const struct rf_seg_hdr *h = &rp->rr.seg;
	char when[48];

	if (rp->ch) {
		ch_print_reading(rp, f);
		return;
	}
	if (rp->jl.requests || rp->jl.bad_lines || rp->jl.paths)
		fprintf(f,
			"json lines: %llu requests, %llu joined guest paths, %llu lines that do not "
			"decode\n",
			(unsigned long long)rp->jl.requests, (unsigned long long)rp->jl.paths,
			(unsigned long long)rp->jl.bad_lines);
	if (s->segments || !rp->jl.requests) {
		fprintf(f, "recording: %llu segments", (unsigned long long)s->segments);
		if (s->segments)
			fprintf(f, " from %s (kernel %s, boot %s), started %s", h->host, h->kernel,
				h->boot_id, rp_fmt_real(rp->rec_start_real, when, sizeof(when)));
		fprintf(f, "; %llu blocks, %llu requests\n", (unsigned long long)s->blocks,
			(unsigned long long)s->requests);
	}
	if (s->blames || s->unknown)
		fprintf(f,
			"recording: %llu requests' blame lines (--blame), %llu entries of kinds "
			"this build does not know (skipped)\n",
			(unsigned long long)s->blames, (unsigned long long)s->unknown);
	fprintf(f, "requests: %llu read, %llu matched the filters\n",
		(unsigned long long)rp_read(rp), (unsigned long long)rp->matched);
	if (s->bad_segments || s->bad_blocks || s->torn)
		fprintf(f,
			"recording: skipped %llu bad blocks, %llu torn blocks at a segment's end "
			"(%llu bytes), %llu files not read\n",
			(unsigned long long)s->bad_blocks, (unsigned long long)s->torn,
			(unsigned long long)s->skipped_bytes, (unsigned long long)s->bad_segments);
}

static void print_summary(struct report *rp)
{
	static const uint64_t drops[IT_NR_DROPS];
	static const struct corr_stats corr;
	struct out_summary_in in = {
		.final = 1,
		.elapsed_ns = rp->last_ns > rp->first_ns ? rp->last_ns - rp->first_ns : 0,
		.khists = rp->kh.v,
		.nr_khists = rp->kh.nr,
		.drops = drops,
		.corr = &corr,
	};

	out_summary(rp->out, &in);
}

/*
 * An output file: 0600 like a recording and the daemon's -j (the pids, comms,
 * files and offsets of every process are root's alone; docs/record.md).
 */
static FILE *open_out(const char *opt, const char *path)
{
	int fd = -1;
	FILE *f = NULL;

	if (!strcmp(path, "-"))
		return stdout;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		it_err("report: --%s: cannot open '%s': %s", opt, path, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	return f;
}

/* Set up the sinks; 0, or the exit status. */
static int rp_start(struct report *rp)
{
	struct it_opts io;
	struct out_config oc;
	FILE *text = stdout;

	cli_defaults(&io);
	io.live = 0;
	cli_out_config(&io, &oc);
	rr_init(&rp->rr, rp_on_req, rp);
	rp->rr.blame_fn = rp_on_blame;
	rp->dn = (struct out_devnames){ .name = rp_dev_name_of,
					.serial = rp_dev_serial_of,
					.cgroup = rp_cgroup_of,
					.ctx = rp };
	if (rp->o.json_path) {
		rp->jf = open_out("json", rp->o.json_path);
		if (!rp->jf)
			return 1;
		if (rp->jf == stdout)
			text = stderr;
		rp->jout = out_new(&oc, NULL, rp->jf, 0);
	}
	if (rp->o.perfetto_path) {
		rp->pff = open_out("perfetto", rp->o.perfetto_path);
		rp->pf = rp->pff ? pf_new() : NULL;
		if (!rp->pf)
			return 1;
	}
	if (rp->o.heatmap_path) {
		rp->hmf = open_out("heatmap", rp->o.heatmap_path);
		rp->hm = rp->hmf ? hm_new(rp->o.stage < 0 ? IT_ST_TOTAL : rp->o.stage) : NULL;
		if (!rp->hm)
			return 1;
	}
	if (rp->o.bykey >= 0) {
		struct rp_names nm = { .cgroup = rp_cgroup_of, .pod = rp_pod_of, .ctx = rp };

		/* a server's rows come summed (chkey.c), its blame from the stored lines */
		rp->bykey = rp->ch ? bk_new_sums(rp->o.bykey, rp->o.blame) :
				     bk_new(rp->o.bykey, rp->o.blame, &nm);
		if (!rp->bykey)
			return 1;
	} else if (rp->o.blame) {
		rp->blame = rb_new(rp->o.by < 0 ? BLAME_BY_CGROUP : rp->o.by, rp->blame_stored);
		if (!rp->blame)
			return 1;
	}
	if (rp->blame_segs && (rp->jout || rp->blame_stored)) {
		rp->stored = st_new();
		if (!rp->stored) {
			it_err("report: out of memory");
			return 1;
		}
	}
	rp->out = out_new(&oc, text, NULL, 0);
	rp->slowest = slowest_new(rp->o.top);
	if (!rp->out || !rp->slowest || (rp->o.json_path && !rp->jout)) {
		it_err("report: out of memory");
		return 1;
	}
	out_set_devnames(rp->out, &rp->dn);
	rp->names = ct_names_new(NULL);
	/* the recording's names of containers and files (docs/record.md) */
	rp->rr.names = rp->names;
	rp->rr.fnames = fn_new(RR_MAX_FNAMES);
	if (!rp->rr.fnames) {
		it_err("report: out of memory");
		return 1;
	}
	if (rp->jout) {
		out_set_devnames(rp->jout, &rp->dn);
		out_set_names(rp->jout, rp->names);
		out_set_fnames(rp->jout, rp->rr.fnames);
	}
	if (rp->pf)
		pf_set_names(rp->pf, rp->rr.fnames);
	return 0;
}

/* Write the outputs; 0 or 1. */
static int rp_finish(struct report *rp)
{
	FILE *text = rp->jf == stdout ? stderr : stdout;
	int ret = 0;

	print_reading(rp, text);
	if (!rp->ch)
		why_nothing(rp);
	if (rp->oom)
		it_warn("report: out of memory: some requests' stored blame lines were left out");
	print_summary(rp);
	slowest_print(rp->slowest, text, rp_dev_name_of, rp);
	if (rp->bykey) {
		struct rp_names nm = { .dev = rp_dev_name_of, .cgroup = rp_cgroup_of, .ctx = rp };

		if (bk_print(rp->bykey, text, rp->o.top > 0 ? rp->o.top : 10, rp->rr.fnames, &nm)) {
			it_err("report: --by: out of memory");
			ret = 1;
		}
	}
	if (rp->jout) {
		out_flush(rp->jout);
		if (out_error(rp->jout) || fflush(rp->jf)) {
			it_err("report: --json: cannot write '%s'", rp->o.json_path);
			ret = 1;
		}
	}
	if (rp->blame) {
		struct rp_names nm = { .dev = rp_dev_name_of, .cgroup = rp_cgroup_of, .ctx = rp };

		rb_set_missing(rp->blame, rp->stored_missing + st_count(rp->stored));
		if (rb_print(rp->blame, text, rp->jout && !ret ? rp->jf : NULL, &nm) ||
		    (rp->jf && fflush(rp->jf))) {
			it_err("report: --blame: cannot write its JSON lines to '%s'",
			       rp->o.json_path);
			ret = 1;
		}
	}
	if (rp->pf)
		pf_clock(rp->pf, rp->boot_off_ns);
	if (rp->pf && pf_write(rp->pf, rp->pff, rp_dev_name_of, rp)) {
		it_err("report: --perfetto: cannot write '%s'", rp->o.perfetto_path);
		ret = 1;
	}
	if (rp->pff && fflush(rp->pff))
		ret = 1;
	if (rp->hm && (hm_write(rp->hm, rp->hmf, rp_dev_name_of, rp) || fflush(rp->hmf))) {
		it_err("report: --heatmap: cannot write '%s'", rp->o.heatmap_path);
		ret = 1;
	}
	return ret;
}

static void rp_free(struct report *rp)
{
	out_free(rp->out);
	out_free(rp->jout);
	if (rp->jf && rp->jf != stdout)
		fclose(rp->jf);
	if (rp->pff && rp->pff != stdout)
		fclose(rp->pff);
	pf_free(rp->pf);
	if (rp->hmf && rp->hmf != stdout)
		fclose(rp->hmf);
	hm_free(rp->hm);
	rb_free(rp->blame);
	bk_free(rp->bykey);
	st_free(rp->stored);
	slowest_free(rp->slowest);
	uhists_free(&rp->kh);
	rr_free(&rp->rr);
	ct_names_free(rp->names);
	for (int i = 0; i < rp->nr_files; i++)
		free(rp->files[i]);
	free(rp->files);
	for (int i = 0; i < rp->o.nr_hosts; i++)
		free(rp->o.hosts[i]);
	ch_free(rp->ch);
	cli_free(&rp->o.f);
	free(rp->o.file_real);
}

int report_main(int argc, char **argv)
{
	struct report rp;
	int ret;

	memset(&rp, 0, sizeof(rp));
	ret = rp_parse(argc, argv, &rp.o);
	if (ret) {
		cli_free(&rp.o.f);
		return ret == 1 ? 0 : ret;
	}
	ret = rp.o.from ? ch_open(&rp) : rp_collect(&rp);
	if (ret)
		goto out;
	rp_find_start(&rp);
	/* the server's stored blame lines: by cgroup, as a recording made with --blame */
	rp.blame_stored |= rp.o.from && rp.o.blame;
	rp.boot_off_ns = (int64_t)(rp_real_ns() - it_mono_ns());
	ret = rp_start(&rp);
	if (!ret && rp.ch)
		ret = ch_report(&rp) || (rp.bykey && ch_by_key(&rp));
	for (int i = 0; !ret && i < rp.nr_files; i++)
		if (rp_read_file(&rp, rp.files[i]))
			ret = 1;
	if (!ret)
		ret = rp_finish(&rp);
	/* no request, and what was given could not be read (the man page's exit 1) */
	if (!ret && !rp_read(&rp) && rp_unreadable(&rp))
		ret = 1;
out:
	rp_free(&rp);
	return ret;
}
