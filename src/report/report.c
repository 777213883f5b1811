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

#include "core/blame.h"
#include "core/cgroup.h"
#include "core/container.h"
#include "core/cli.h"
#include "core/output.h"
#include "core/recfmt.h"
#include "core/stages.h"
#include "core/uhist.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/parse.h"
#include "lib/opts.h"
#include "report/jsonl.h"
#include "report/reader.h"
#include "report/internal.h"
#include "report/report.h"

#define RP_MAX_TOP 10000
#define RP_PROG "iotracer report"

struct rp_opts {
	struct it_opts f; /* the filters (cli_filter, offline): the run options' */
	const char *container, *pod; /* --container, --pod: an id (prefix) or UID, or a name */
	int has_file, file_bdev; /* -f: its inode, or a block device */
	uint64_t file_ino;
	uint32_t file_dev;
	int top;
	const char *json_path, *perfetto_path, *heatmap_path;
	int stage; /* --stage: enum hm_stage; -1 not given */
	int blame, by; /* --blame, --by: enum blame_by; -1 not given */
	char **paths;
	int nr_paths;
};

/* The filters in the order matches() applies them (a request fails at the first it fails). */
enum rp_filter {
	RP_F_MINLAT,
	RP_F_WINDOW,
	RP_F_COMM,
	RP_F_PID,
	RP_F_CGROUP,
	RP_F_CONTAINER, /* --container, --pod */
	RP_F_DEV, /* -d, or -f */
	RP_F_NR,
};

struct report {
	struct rp_opts o;
	struct rr_reader rr;
	struct ct_names *names; /* this host's container and pod names (docs/cgroups.md) */
	struct jl_stats jl; /* JSON lines files */
	struct out_devnames dn;
	struct it_out *out, *jout;
	FILE *jf, *pff, *hmf;
	struct uhists kh;
	struct rp_slowest *slowest;
	struct pf *pf;
	struct hm *hm;
	struct rp_blame *blame;
	char **files; /* segment files, in order */
	int nr_files;
	uint64_t first_ns, last_ns, matched;
	uint64_t failed[RP_F_NR]; /* requests each filter turned away (the first one they failed) */
	uint64_t rec_start_real; /* the oldest segment's open time */
	int64_t boot_off_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC now (JSON lines' --since/--until) */
	int oom;
};

/* Long-only options of report's own (codes above every run option's). */
enum { RP_OPT_PERFETTO = 1024, RP_OPT_HEATMAP, RP_OPT_STAGE, RP_OPT_CONTAINER, RP_OPT_POD,
       RP_OPT_BLAME, RP_OPT_BY, RP_OPT_HELP };

/* report's own rows; the filters' are the run options' (rp_rows). */
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
		  "('-' = stdout, the text then goes to stderr)" },
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
	  .help = "the heatmap's latency: total (the request's, default),\n"
		  "or q2c, q2d, d2c of its block requests" },
	{ .name = "blame",
	  .key = RP_OPT_BLAME,
	  .help = "who slowed whom: each matching block request's wait split\n"
		  "over the requests holding its device (docs/blame.md);\n"
		  "with -j also as \"blame\" JSON lines" },
	{ .name = "by",
	  .key = RP_OPT_BY,
	  .arg = "KEY",
	  .help = "--blame's victims and culprits: cgroup (default), pid, comm" },
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

static void rp_cmd_init(void)
{
	size_t n = 0;

	if (rp_rows[0])
		return;
	for (size_t i = 0; i < sizeof(rp_filters) / sizeof(rp_filters[0]); i++) {
		rp_filter_rows[i] = *cli_row(rp_filters[i]);
		rp_filter_rows[i].group = i ? NULL : "Filters (all given filters must match):";
		rp_rows[n++] = &rp_filter_rows[i];
	}
	for (size_t i = 0; i < sizeof(rp_own) / sizeof(rp_own[0]); i++)
		rp_rows[n++] = &rp_own[i];
}

/* ---- option values ---- */

/* CLOCK_REALTIME now, in ns. */
static uint64_t rp_real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* -f: the file's inode, or the block device (a directory's files cannot be told apart). */
static int rp_file(struct rp_opts *o)
{
	struct stat st;

	if (!o->f.file_path)
		return 0;
	if (stat(o->f.file_path, &st) || S_ISDIR(st.st_mode)) {
		it_err("report: --file: '%s' is a directory: a recording's requests carry inodes, "
		       "not paths (name a file or a block device)",
		       o->f.file_path);
		return 2;
	}
	o->has_file = 1;
	o->file_bdev = S_ISBLK(st.st_mode);
	o->file_ino = st.st_ino;
	o->file_dev = o->file_bdev ? IT_MKDEV(major(st.st_rdev), minor(st.st_rdev)) :
				     IT_MKDEV(major(st.st_dev), minor(st.st_dev));
	return 0;
}

static int rp_one(void *ctx, int c, const char *arg)
{
	struct rp_opts *o = ctx;
	struct cli_src src = { .err = stderr, .cmd = "report" };
	uint64_t v;

	switch (c) {
	case RP_OPT_CONTAINER:
	case RP_OPT_POD:
		if (!*arg || strlen(arg) >= CT_NAME_MAX) {
			it_err("report: --%s: bad %s '%s' (expected %s of 1 to %d characters)",
			       c == RP_OPT_CONTAINER ? "container" : "pod",
			       c == RP_OPT_CONTAINER ? "container" : "pod", arg,
			       c == RP_OPT_CONTAINER ? "an id or a name" : "a UID or a name",
			       CT_NAME_MAX - 1);
			return 2;
		}
		*(c == RP_OPT_CONTAINER ? &o->container : &o->pod) = arg;
		return 0;
	case 'n':
		if (parse_u64(arg, 0, RP_MAX_TOP, &v)) {
			it_err("report: --top: bad count '%s' (expected 0 to 10000)", arg);
			return 2;
		}
		o->top = (int)v;
		return 0;
	case 'j':
		o->json_path = arg;
		return 0;
	case RP_OPT_BLAME:
		o->blame = 1;
		return 0;
	case RP_OPT_BY:
		o->by = blame_by_of(arg);
		if (o->by < 0) {
			it_err("report: --by: bad key '%s' (expected cgroup, pid or comm)", arg);
			return 2;
		}
		return 0;
	case RP_OPT_PERFETTO:
		o->perfetto_path = arg;
		return 0;
	case RP_OPT_HEATMAP:
		o->heatmap_path = arg;
		return 0;
	case RP_OPT_STAGE:
		o->stage = hm_stage_of(arg);
		if (o->stage < 0) {
			it_err("report: --stage: bad stage '%s' (expected total, q2c, q2d or d2c)", arg);
			return 2;
		}
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
	cli_defaults(&o->f);
	o->f.offline = 1;
	rp_cmd_init();
	ret = opts_parse(&rp_cmd, argc, argv, rp_one, o, NULL, NULL);
	if (ret)
		return ret;
	o->paths = argv + optind;
	o->nr_paths = argc - optind;
	if (!o->nr_paths) {
		it_err("report: no PATH given");
		fputs("Try '" RP_PROG " --help'.\n", stderr);
		return 2;
	}
	if (o->by >= 0 && !o->blame) {
		it_err("report: --by needs --blame");
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

/* ---- files ---- */

static int add_file(struct report *rp, const char *path)
{
	char **n = realloc(rp->files, (size_t)(rp->nr_files + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	rp->files = n;
	n[rp->nr_files] = strdup(path);
	if (!n[rp->nr_files])
		return -ENOMEM;
	rp->nr_files++;
	return 0;
}

static int seg_name(const struct dirent *e)
{
	size_t n = strlen(e->d_name), s = strlen(RF_SEG_SUFFIX);

	return n > s && !strcmp(e->d_name + n - s, RF_SEG_SUFFIX);
}

/* A directory: its segment files, by name (by time). */
static int add_dir(struct report *rp, const char *dir)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, seg_name, alphasort), err = 0;
	char p[PATH_MAX];

	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, ents[i]->d_name);
		if (!err)
			err = add_file(rp, p);
		free(ents[i]);
	}
	free(ents);
	return err;
}

static int collect(struct report *rp)
{
	struct stat st;
	int err;

	for (int i = 0; i < rp->o.nr_paths; i++) {
		const char *p = rp->o.paths[i];

		if (stat(p, &st)) {
			it_err("report: cannot access '%s': %s", p, strerror(errno));
			return 2;
		}
		err = S_ISDIR(st.st_mode) ? add_dir(rp, p) : add_file(rp, p);
		if (err) {
			it_err("report: cannot read '%s': %s", p, strerror(-err));
			return 1;
		}
	}
	return 0;
}

/* The oldest open time among the segment headers (for relative --since/--until). */
static void find_start(struct report *rp)
{
	uint8_t b[RF_SEG_HDR_LEN];
	struct rf_seg_hdr h;

	for (int i = 0; i < rp->nr_files; i++) {
		int fd = open(rp->files[i], O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			continue;
		if (read(fd, b, sizeof(b)) == (ssize_t)sizeof(b) &&
		    !rf_seg_hdr_get(b, sizeof(b), &h) &&
		    (!rp->rec_start_real || h.real_ns < rp->rec_start_real))
			rp->rec_start_real = h.real_ns;
		close(fd);
	}
}

/* ---- filters ---- */

static const char *dev_name_of(void *ctx, uint32_t dev)
{
	return rr_dev_name(&((struct report *)ctx)->rr, dev);
}

static const char *dev_serial_of(void *ctx, uint32_t dev)
{
	return rr_dev_serial(&((struct report *)ctx)->rr, dev);
}

static const char *cgroup_of(void *ctx, uint64_t id)
{
	return rr_cgroup_path(&((struct report *)ctx)->rr, id);
}

/* The task's cgroup, as the recording named it, is one of --cgroup or below one. */
static int cgroup_matches(const struct report *rp, const struct it_task *t)
{
	const char *path = rr_cgroup_path(&rp->rr, t->cgroup_id);

	for (int i = 0; path && i < rp->o.f.nr_cgroups; i++)
		if (cg_under(path, rp->o.f.cgroups[i]))
			return 1;
	return 0;
}

/*
 * --container: the id (4 hex digits or more of its start), or the name (this
 * host's, or the one the path holds); --pod: the UID, the name or namespace/name.
 */
static int container_matches(const struct report *rp, const struct it_task *t)
{
	const char *path = rr_cgroup_path(&rp->rr, t->cgroup_id), *c = rp->o.container;
	const char *p = rp->o.pod;
	char nsname[2 * CT_NAME_MAX];
	struct ct_full f;
	size_t n;

	if (!path)
		return 0;
	ct_describe(rp->names, path, &f);
	if (c) {
		n = strlen(c);
		if (!((f.ci.id[0] && n >= 4 && !strncmp(f.ci.id, c, n)) ||
		      (f.container && !strcmp(f.container, c)) ||
		      (f.ci.name[0] && !strcmp(f.ci.name, c))))
			return 0;
	}
	if (p) {
		snprintf(nsname, sizeof(nsname), "%s/%s", f.pod_ns ? f.pod_ns : "",
			 f.pod ? f.pod : "");
		if (!((f.ci.pod_uid[0] && !strcmp(f.ci.pod_uid, p)) ||
		      (f.pod && (!strcmp(f.pod, p) || !strcmp(nsname, p)))))
			return 0;
	}
	return 1;
}

static int dev_matches(const struct report *rp, uint32_t dev)
{
	const char *name = rr_dev_name(&rp->rr, dev);
	char devno[24];

	if (!dev)
		return 0;
	parse_fmt_devno(dev, devno, sizeof(devno));
	for (int i = 0; i < rp->o.f.nr_dev_names; i++)
		if (!strcmp(rp->o.f.dev_names[i], devno) ||
		    (name && !strcmp(rp->o.f.dev_names[i], name)))
			return 1;
	return 0;
}

/* The task, device and inode of the request itself (not of its block requests). */
static const struct it_task *req_task(const struct corr_req *r, uint32_t *dev, uint64_t *ino)
{
	switch (r->kind) {
	case CORR_SYSCALL:
		*dev = r->sys->dev, *ino = r->sys->ino;
		return &r->sys->task;
	case CORR_URING:
		*dev = r->uring->dev, *ino = r->uring->ino;
		return &r->uring->task;
	case CORR_AIO:
		*dev = r->aio.iocb.dev, *ino = 0;
		return &r->aio.task;
	default:
		*dev = r->blocks[0]->dev, *ino = r->blocks[0]->ino;
		return stages_block_owner(r->blocks[0]);
	}
}

static int file_matches(const struct rp_opts *o, uint32_t dev, uint64_t ino)
{
	return o->file_bdev ? dev == o->file_dev : dev == o->file_dev && ino == o->file_ino;
}

/* RP_F_NR when q passes every filter, else the first filter it fails. */
static enum rp_filter matches(const struct report *rp, const struct rp_req *q)
{
	const struct rp_opts *o = &rp->o;
	const struct it_opts *f = &o->f;
	const struct corr_req *r = q->r;
	/* a JSON line's times are CLOCK_MONOTONIC: on this boot's wall clock for the filters */
	int64_t off = q->real_off_ns ? q->real_off_ns : rp->boot_off_ns;
	uint64_t real = q->start_ns + (uint64_t)off, ino;
	uint32_t dev;
	const struct it_task *t = req_task(r, &dev, &ino);
	int ok;

	if (f->min_lat_ns && (q->end_ns < q->start_ns || q->end_ns - q->start_ns < f->min_lat_ns))
		return RP_F_MINLAT;
	if (real < f->since_real || (f->until_real && real >= f->until_real))
		return RP_F_WINDOW;
	if (f->has_comm && strncmp(t->comm, f->comm, IT_COMM_LEN))
		return RP_F_COMM;
	ok = !f->nr_pids;
	for (int i = 0; !ok && i < f->nr_pids; i++)
		ok = t->pid == f->pids[i];
	if (!ok)
		return RP_F_PID;
	if (f->nr_cgroups && !cgroup_matches(rp, t))
		return RP_F_CGROUP;
	if ((o->container || o->pod) && !container_matches(rp, t))
		return RP_F_CONTAINER;
	if (f->nr_dev_names || o->has_file) {
		ok = f->nr_dev_names ? dev_matches(rp, dev) : file_matches(o, dev, ino);
		for (int i = 0; !ok && i < r->nr_blocks; i++)
			ok = f->nr_dev_names ?
				     dev_matches(rp, r->blocks[i]->dev) :
				     o->file_bdev && file_matches(o, r->blocks[i]->dev, 0);
		if (!ok)
			return RP_F_DEV;
	}
	return RP_F_NR;
}

/* ---- every request ---- */

/* --blame: a matching request's block request on dev is a victim when -d names dev. */
static int victim_dev(void *ctx, uint32_t dev)
{
	const struct report *rp = ctx;

	return !rp->o.f.nr_dev_names || dev_matches(rp, dev);
}

/* One request read back; real_off_ns: its clocks' CLOCK_REALTIME - CLOCK_MONOTONIC. */
static void report_req(struct report *rp, const struct rf_req *rq, int64_t real_off_ns)
{
	struct corr_req r;
	struct rp_req q = { .r = &r, .real_off_ns = real_off_ns };
	enum rp_filter f;
	uint64_t ino;

	rf_req_view(rq, &r);
	rf_req_span(&r, &q.start_ns, &q.end_ns);
	f = matches(rp, &q);
	if (rp->blame)
		rb_add(rp->blame, &r, f == RP_F_NR ? victim_dev : NULL, rp);
	if (f != RP_F_NR) {
		rp->failed[f]++;
		return;
	}
	rp->matched++;
	if (!rp->first_ns || q.start_ns < rp->first_ns)
		rp->first_ns = q.start_ns;
	if (q.end_ns > rp->last_ns)
		rp->last_ns = q.end_ns;
	out_request(&r, rp->out);
	if (rp->jout)
		out_request(&r, rp->jout);
	uhists_request(&rp->kh, &r);
	if (rp->slowest)
		slowest_add(rp->slowest, &q);
	if (rp->pf)
		pf_add(rp->pf, &q);
	if (rp->hm) {
		uint32_t dev;

		req_task(&r, &dev, &ino);
		hm_add(rp->hm, &q, dev);
	}
}

static void on_req(void *ctx, const struct rr_reader *rr, const struct rf_req *rq)
{
	report_req(ctx, rq, (int64_t)(rr->seg.real_ns - rr->seg.mono_ns));
}

/* A JSON line has no wall clock: its times stay CLOCK_MONOTONIC (--since from boot). */
static void on_json_req(void *ctx, const struct rf_req *rq)
{
	report_req(ctx, rq, 0);
}

/* A joined host-mode path: drawn in the Perfetto view only. */
static void on_json_path(void *ctx, const struct rp_path *g)
{
	struct report *rp = ctx;

	if (rp->pf)
		pf_add_path(rp->pf, g);
}

static void jl_dev(void *ctx, uint32_t dev, const char *name, const char *serial)
{
	struct rf_dev d = { .dev = dev };

	snprintf(d.name, sizeof(d.name), "%s", name);
	snprintf(d.serial, sizeof(d.serial), "%s", serial ? serial : "");
	rr_note_dev(&((struct report *)ctx)->rr, &d);
}

static void jl_cgroup(void *ctx, uint64_t id, const char *path)
{
	rr_note_cgroup(&((struct report *)ctx)->rr, id, path);
}

/* A file written by -j: its first non-blank byte opens a JSON object. */
static int is_json_lines(const char *b, size_t n)
{
	size_t i = 0;

	while (i < n && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r'))
		i++;
	return i < n && b[i] == '{';
}

/* Read one segment or JSON lines file (mapped). */
static int read_file(struct report *rp, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	struct stat st;
	void *m;

	if (fd < 0 || fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode) || !st.st_size) {
		rp->rr.st.bad_segments++;
		it_warn("report: %s: %s, skipped", path,
			S_ISREG(st.st_mode) ? "empty, not a segment" :
					      "not a regular file: not a segment");
		goto out;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		err = -errno;
		goto out;
	}
	if (is_json_lines(m, (size_t)st.st_size)) {
		struct jl_devs devs = { .fn = jl_dev, .path = on_json_path, .cgroup = jl_cgroup, .ctx = rp };

		err = jl_read(m, (size_t)st.st_size, &devs, on_json_req, rp, &rp->jl);
	} else {
		err = rr_segment(&rp->rr, m, (size_t)st.st_size);
	}
	munmap(m, (size_t)st.st_size);
	if (err == -EBADMSG || err == -EPROTO) {
		it_warn("report: %s: %s, skipped", path,
			err == -EBADMSG ?
				"not an iotracer recording segment" :
				"recorded by an iotracer of another format or ABI version");
		err = 0;
	}
out:
	if (fd >= 0)
		close(fd);
	if (err)
		it_err("report: cannot read '%s': %s", path, strerror(-err));
	return err;
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
 * left none (the first, in matches() order, after which none was left).
 */
static void why_nothing(const struct report *rp)
{
	static const char *const names[RP_F_NR] = {
		[RP_F_MINLAT] = "--min-latency", [RP_F_WINDOW] = "--since/--until",
		[RP_F_COMM] = "--comm",		 [RP_F_PID] = "--pid",
		[RP_F_CGROUP] = "--cgroup",	 [RP_F_CONTAINER] = "--container/--pod",
		[RP_F_DEV] = "--dev",
	};
	const struct rr_stats *s = &rp->rr.st;
	uint64_t total = rp_read(rp), left = total;

	if (rp->matched)
		return;
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
			(unsigned long long)total,
			k == RP_F_DEV && !rp->o.f.nr_dev_names ? "--file" : names[k],
			(unsigned long long)before);
		return;
	}
}

static void print_reading(struct report *rp, FILE *f)
{
	const struct rr_stats *s = &rp->rr.st;
	const struct rf_seg_hdr *h = &rp->rr.seg;
	char when[48];

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
	FILE *text = stdout;

	cli_defaults(&io);
	io.live = 0;
	rr_init(&rp->rr, on_req, rp);
	rp->dn = (struct out_devnames){
		.name = dev_name_of, .serial = dev_serial_of, .cgroup = cgroup_of, .ctx = rp
	};
	if (rp->o.json_path) {
		rp->jf = open_out("json", rp->o.json_path);
		if (!rp->jf)
			return 1;
		if (rp->jf == stdout)
			text = stderr;
		rp->jout = out_new(&io, NULL, rp->jf, 0);
	}
	if (rp->o.perfetto_path) {
		rp->pff = open_out("perfetto", rp->o.perfetto_path);
		rp->pf = rp->pff ? pf_new() : NULL;
		if (!rp->pf)
			return 1;
	}
	if (rp->o.heatmap_path) {
		rp->hmf = open_out("heatmap", rp->o.heatmap_path);
		rp->hm = rp->hmf ? hm_new(rp->o.stage < 0 ? HM_TOTAL : rp->o.stage) : NULL;
		if (!rp->hm)
			return 1;
	}
	if (rp->o.blame) {
		rp->blame = rb_new(rp->o.by < 0 ? BLAME_BY_CGROUP : rp->o.by);
		if (!rp->blame)
			return 1;
	}
	rp->out = out_new(&io, text, NULL, 0);
	rp->slowest = slowest_new(rp->o.top);
	if (!rp->out || !rp->slowest || (rp->o.json_path && !rp->jout)) {
		it_err("report: out of memory");
		return 1;
	}
	out_set_devnames(rp->out, &rp->dn);
	rp->names = ct_names_new(NULL);
	if (rp->jout) {
		out_set_devnames(rp->jout, &rp->dn);
		out_set_names(rp->jout, rp->names);
	}
	return 0;
}

/* Write the outputs; 0 or 1. */
static int rp_finish(struct report *rp)
{
	FILE *text = rp->jf == stdout ? stderr : stdout;
	int ret = 0;

	print_reading(rp, text);
	why_nothing(rp);
	print_summary(rp);
	slowest_print(rp->slowest, text, dev_name_of, rp);
	if (rp->jout) {
		out_flush(rp->jout);
		if (out_error(rp->jout) || fflush(rp->jf)) {
			it_err("report: --json: cannot write '%s'", rp->o.json_path);
			ret = 1;
		}
	}
	if (rp->blame) {
		struct rp_names nm = { .dev = dev_name_of, .cgroup = cgroup_of, .ctx = rp };

		if (rb_print(rp->blame, text, rp->jout && !ret ? rp->jf : NULL, &nm) ||
		    (rp->jf && fflush(rp->jf))) {
			it_err("report: --blame: cannot write its JSON lines to '%s'",
			       rp->o.json_path);
			ret = 1;
		}
	}
	if (rp->pf)
		pf_clock(rp->pf, rp->boot_off_ns);
	if (rp->pf && pf_write(rp->pf, rp->pff, dev_name_of, rp)) {
		it_err("report: --perfetto: cannot write '%s'", rp->o.perfetto_path);
		ret = 1;
	}
	if (rp->pff && fflush(rp->pff))
		ret = 1;
	if (rp->hm && (hm_write(rp->hm, rp->hmf, dev_name_of, rp) || fflush(rp->hmf))) {
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
	slowest_free(rp->slowest);
	uhists_free(&rp->kh);
	rr_free(&rp->rr);
	ct_names_free(rp->names);
	for (int i = 0; i < rp->nr_files; i++)
		free(rp->files[i]);
	free(rp->files);
	cli_free(&rp->o.f);
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
	ret = collect(&rp);
	if (ret)
		goto out;
	find_start(&rp);
	rp.boot_off_ns = (int64_t)(rp_real_ns() - it_mono_ns());
	ret = rp_start(&rp);
	for (int i = 0; !ret && i < rp.nr_files; i++)
		if (read_file(&rp, rp.files[i]))
			ret = 1;
	if (!ret)
		ret = rp_finish(&rp);
out:
	rp_free(&rp);
	return ret;
}
