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

#include "core/cgroup.h"
#include "core/container.h"
#include "core/cli.h"
#include "core/output.h"
#include "core/recfmt.h"
#include "core/uhist.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/parse.h"
#include "lib/subopt.h"
#include "report/jsonl.h"
#include "report/reader.h"
#include "report/internal.h"
#include "report/report.h"

#define RP_MAX_PIDS 64
#define RP_MAX_DEVS 16
#define RP_MAX_CGROUPS 8
#define RP_MAX_TOP 10000
#define RP_PROG "iotracer report"

struct rp_opts {
	uint32_t pids[RP_MAX_PIDS];
	int nr_pids;
	const char *comm;
	char *devs[RP_MAX_DEVS]; /* names or MAJ:MIN as given, /dev/ cut (malloc'd) */
	int nr_devs;
	char cgroups[RP_MAX_CGROUPS][CG_PATH_MAX]; /* hierarchy paths: the subtrees to keep */
	int nr_cgroups;
	const char *container, *pod; /* --container, --pod: an id (prefix) or UID, or a name */
	int has_file, file_bdev;
	uint64_t file_ino;
	uint32_t file_dev;
	uint64_t min_lat_ns;
	const char *since, *until; /* resolved once the recording start is known */
	uint64_t since_real, until_real; /* CLOCK_REALTIME ns; until 0: none */
	int top;
	const char *json_path, *perfetto_path, *heatmap_path;
	char **paths;
	int nr_paths;
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
	struct rp_top *top;
	struct pf *pf;
	struct hm *hm;
	char **files; /* segment files, in order */
	int nr_files;
	uint64_t first_ns, last_ns, matched;
	uint64_t rec_start_real; /* the oldest segment's open time */
	int64_t boot_off_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC now (JSON lines' --since/--until) */
	int oom;
};

static const struct option rp_longopts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "comm", required_argument, NULL, 'c' },
	{ "dev", required_argument, NULL, 'd' },
	{ "cgroup", required_argument, NULL, 'g' },
	{ "container", required_argument, NULL, 'K' },
	{ "pod", required_argument, NULL, 'O' },
	{ "file", required_argument, NULL, 'f' },
	{ "min-latency", required_argument, NULL, 'm' },
	{ "since", required_argument, NULL, 'S' },
	{ "until", required_argument, NULL, 'U' },
	{ "top", required_argument, NULL, 'n' },
	{ "json", required_argument, NULL, 'j' },
	{ "perfetto", required_argument, NULL, 'P' },
	{ "heatmap", required_argument, NULL, 'H' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void rp_usage(FILE *f)
{
	fputs("Usage: " RP_PROG " [options] PATH...   read a recording back (docs/record.md)\n"
	      "PATH: a segment file written by --record, a directory of them, or a JSON lines\n"
	      "file written by -j.\n"
	      "Prints the summary of the live daemon (stage percentiles, histograms) and the\n"
	      "slowest requests with where their time went.\n"
	      "\n"
	      "Filters (all given filters must match):\n"
	      "  -p, --pid PID[,PID...] only these processes (tgid)\n"
	      "  -c, --comm COMM        only threads whose comm is exactly COMM\n"
	      "  -d, --dev DEV[,DEV...] only requests on these devices: loop0, /dev/loop0 or 7:0\n"
	      "      --cgroup PATH      only tasks in this cgroup or below it: a hierarchy path\n"
	      "                         (/system.slice) or a cgroup2 directory here; up to 8\n"
	      "      --container X      only requests from the container whose id starts with X\n"
	      "                         (4+ hex digits) or whose name is X (docs/cgroups.md)\n"
	      "      --pod X            only requests from the pod whose UID, name or\n"
	      "                         namespace/name is X\n"
	      "  -f, --file PATH        only IO on this file (inode) or block device\n"
	      "  -m, --min-latency DUR  only requests at least DUR long\n"
	      "      --since TIME       only requests that started at or after TIME\n"
	      "      --until TIME       only requests that started before TIME\n"
	      "TIME: a duration before now (30s, 10m, 2h), a date and time with a zone\n"
	      "      (2026-11-24T13:25:00Z, 2026-11-24T14:25:00.5+01:00) or without one: local\n"
	      "      time (2026-11-24 14:25:00), or seconds since the epoch (1764000000).\n"
	      "\n"
	      "Output:\n"
	      "  -n, --top N            the N slowest requests (default 10, 0: none, at most 10000)\n"
	      "  -j, --json FILE        the requests as JSON lines, as `iotracer -j` wrote them\n"
	      "                         ('-' = stdout, the text then goes to stderr)\n"
	      "      --perfetto FILE    a Chrome trace-event JSON file for ui.perfetto.dev:\n"
	      "                         a track per thread and device, stages, flow arrows\n"
	      "      --heatmap FILE     an SVG latency heatmap per device: time in columns,\n"
	      "                         log2 latency in rows, requests per cell as colour\n"
	      "      --help             print this help and exit\n"
	      "Exit status: 0 success, 1 unreadable input or output, 2 bad usage.\n",
	      f);
}

/* ---- option values ---- */

/* "iotracer: report: --OPT: MESSAGE"; the usage exit status. */
static IT_PRINTF(2, 3) int bad(int opt, const char *fmt, ...)
{
	const char *name = "?";
	char msg[256];
	va_list ap;

	for (const struct option *lo = rp_longopts; lo->name; lo++)
		if (lo->val == opt)
			name = lo->name;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	it_err("report: --%s: %s", name, msg);
	return 2;
}

static int opt_pid(const char *item, void *ctx)
{
	struct rp_opts *o = ctx;
	uint64_t v;

	if (parse_u64(item, 1, CLI_MAX_PID, &v) || o->nr_pids >= RP_MAX_PIDS)
		return -EINVAL;
	o->pids[o->nr_pids++] = (uint32_t)v;
	return 0;
}

static int opt_dev(const char *item, void *ctx)
{
	struct rp_opts *o = ctx;

	if (!*item || o->nr_devs >= RP_MAX_DEVS)
		return -EINVAL;
	o->devs[o->nr_devs] = strdup(strncmp(item, "/dev/", 5) ? item : item + 5);
	return o->devs[o->nr_devs++] ? 0 : -ENOMEM;
}

/* -p and -d: comma lists (parse_each), like the daemon's. */
static int opt_list(struct rp_opts *o, int c, const char *arg)
{
	if (!parse_each(arg, c == 'p' ? opt_pid : opt_dev, o))
		return 0;
	if (c == 'p')
		return bad(c, "bad pid list '%s' (expected PID[,PID...], at most 64)", arg);
	return bad(c, "bad device list '%s' (expected e.g. loop0, /dev/loop0, 7:0)", arg);
}

static int opt_file(struct rp_opts *o, const char *arg)
{
	struct stat st;

	if (stat(arg, &st))
		return bad('f', "cannot access '%s'", arg);
	o->has_file = 1;
	o->file_bdev = S_ISBLK(st.st_mode);
	o->file_ino = st.st_ino;
	o->file_dev = o->file_bdev ? IT_MKDEV(major(st.st_rdev), minor(st.st_rdev)) :
				     IT_MKDEV(major(st.st_dev), minor(st.st_dev));
	return 0;
}

/*
 * --cgroup: kept as a hierarchy path, matched against the paths the recording
 * announced (it may come from another host): a cgroup2 directory of this host
 * is turned into its hierarchy path, anything else absolute is taken as one.
 */
static int opt_cgroup(struct rp_opts *o, const char *arg)
{
	char mnt[CG_PATH_MAX], why[CG_PATH_MAX + 128];
	char *dst;

	if (o->nr_cgroups >= RP_MAX_CGROUPS)
		return bad('g', "too many cgroups (at most %d)", RP_MAX_CGROUPS);
	dst = o->cgroups[o->nr_cgroups];
	if (cg_mount_point(NULL, NULL, mnt, sizeof(mnt)) ||
	    cg_resolve(mnt, arg, dst, CG_PATH_MAX, why, sizeof(why))) {
		if (arg[0] != '/' || strlen(arg) >= CG_PATH_MAX)
			return bad('g', "bad cgroup '%s' (expected a hierarchy path such as "
					"/system.slice, or a cgroup2 directory)", arg);
		snprintf(dst, CG_PATH_MAX, "%s", arg);
	}
	o->nr_cgroups++;
	return 0;
}

static int rp_one(void *ctx, int c, const char *arg)
{
	struct rp_opts *o = ctx;
	uint64_t v;

	switch (c) {
	case 'p':
	case 'd':
		return opt_list(o, c, arg);
	case 'c':
		if (!*arg || strlen(arg) >= IT_COMM_LEN)
			return bad(c, "bad comm '%s' (expected 1 to 15 characters)", arg);
		o->comm = arg;
		return 0;
	case 'f':
		return opt_file(o, arg);
	case 'g':
		return opt_cgroup(o, arg);
	case 'K':
	case 'O':
		if (!*arg || strlen(arg) >= CT_NAME_MAX)
			return bad(c, "bad %s '%s' (expected %s of 1 to %d characters)",
				   c == 'K' ? "container" : "pod", arg,
				   c == 'K' ? "an id or a name" : "a UID or a name", CT_NAME_MAX - 1);
		*(c == 'K' ? &o->container : &o->pod) = arg;
		return 0;
	case 'm':
		if (parse_duration(arg, &o->min_lat_ns))
			return bad(c, "bad duration '%s' (expected e.g. 250us, 10ms, 2s)", arg);
		return 0;
	case 'S':
		o->since = arg;
		return 0;
	case 'U':
		o->until = arg;
		return 0;
	case 'n':
		if (parse_u64(arg, 0, RP_MAX_TOP, &v))
			return bad(c, "bad count '%s' (expected 0 to 10000)", arg);
		o->top = (int)v;
		return 0;
	case 'j':
		o->json_path = arg;
		return 0;
	case 'P':
		o->perfetto_path = arg;
		return 0;
	case 'H':
		o->heatmap_path = arg;
		return 0;
	}
	return 2;
}

static int rp_parse(int argc, char **argv, struct rp_opts *o)
{
	int ret;

	o->top = 10;
	ret = subopt_parse(argc, argv, ":p:c:d:f:m:n:j:", rp_longopts, rp_usage, rp_one, o);
	if (ret)
		return ret;
	o->paths = argv + optind;
	o->nr_paths = argc - optind;
	if (!o->nr_paths) {
		it_err("report: no PATH given (try '" RP_PROG " --help')");
		return 2;
	}
	return 0;
}

/*
 * A date and time ("2026-11-24T13:25:00Z", "...00.5+01:00", lower case t/z and
 * a space for T too; without a zone: local time) to CLOCK_REALTIME ns.
 */
static int parse_rfc3339(const char *s, uint64_t *ns)
{
	struct tm tm = { 0 };
	const char *p = strptime(s, "%Y-%m-%d", &tm);
	uint64_t frac = 0, scale = 1000000000ull;
	long off = 0;
	time_t t;

	if (!p || (*p != 'T' && *p != 't' && *p != ' '))
		return -EINVAL;
	p = strptime(p + 1, "%H:%M:%S", &tm);
	if (!p)
		return -EINVAL;
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++)
			if (scale > 1) {
				scale /= 10;
				frac += (uint64_t)(*p - '0') * scale;
			}
	}
	if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':') {
		off = ((p[1] - '0') * 10 + (p[2] - '0')) * 3600 +
		      ((p[4] - '0') * 10 + (p[5] - '0')) * 60;
		if (*p == '-')
			off = -off;
	} else if (!*p) {
		tm.tm_isdst = -1; /* no zone: local time, DST as the date has it */
		t = mktime(&tm);
		if (t == (time_t)-1 || t < 0)
			return -EINVAL;
		*ns = (uint64_t)t * 1000000000ull + frac;
		return 0;
	} else if (strcmp(p, "Z") && strcmp(p, "z")) {
		return -EINVAL;
	}
	t = timegm(&tm);
	if (t == (time_t)-1 || t - off < 0)
		return -EINVAL;
	*ns = (uint64_t)(t - off) * 1000000000ull + frac;
	return 0;
}

/* CLOCK_REALTIME now, in ns. */
static uint64_t rp_now_real(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Seconds since the epoch ("1764000000", "1764000000.25"): digits, an optional fraction. */
static int parse_epoch(const char *s, uint64_t *ns)
{
	const char *p = s;

	while (*p >= '0' && *p <= '9')
		p++;
	if (p == s || (*p && *p != '.'))
		return -EINVAL;
	for (const char *f = *p ? p + 1 : p; *f; f++)
		if (*f < '0' || *f > '9')
			return -EINVAL;
	return parse_duration(s, ns); /* a plain number: seconds, fraction and overflow checked */
}

/* --since/--until: seconds since the epoch, a duration before now, or a date and time. */
static int resolve_time(int opt, const char *arg, uint64_t *real)
{
	uint64_t now = rp_now_real(), v;

	if (!parse_epoch(arg, &v)) {
		*real = v;
		return 0;
	}
	if (!parse_duration(arg, &v)) {
		*real = v < now ? now - v : 0;
		return 0;
	}
	if (!parse_rfc3339(arg, &v)) {
		*real = v;
		return 0;
	}
	return bad(opt,
		   "bad time '%s' (expected a duration before now like 10m, a date and time like "
		   "2026-11-24T13:25:00Z or, local, 2026-11-24 14:25:00, or epoch seconds)",
		   arg);
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

	for (int i = 0; path && i < rp->o.nr_cgroups; i++)
		if (cg_under(path, rp->o.cgroups[i]))
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
	for (int i = 0; i < rp->o.nr_devs; i++)
		if (!strcmp(rp->o.devs[i], devno) || (name && !strcmp(rp->o.devs[i], name)))
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
		return &r->blocks[0]->task;
	}
}

static int file_matches(const struct rp_opts *o, uint32_t dev, uint64_t ino)
{
	return o->file_bdev ? dev == o->file_dev : dev == o->file_dev && ino == o->file_ino;
}

static int matches(const struct report *rp, const struct rp_req *q)
{
	const struct rp_opts *o = &rp->o;
	const struct corr_req *r = q->r;
	/* a JSON line's times are CLOCK_MONOTONIC: on this boot's wall clock for the filters */
	int64_t off = q->real_off_ns ? q->real_off_ns : rp->boot_off_ns;
	uint64_t real = q->start_ns + (uint64_t)off, ino;
	uint32_t dev;
	const struct it_task *t = req_task(r, &dev, &ino);
	int ok;

	if (o->min_lat_ns && (q->end_ns < q->start_ns || q->end_ns - q->start_ns < o->min_lat_ns))
		return 0;
	if (real < o->since_real || (o->until_real && real >= o->until_real))
		return 0;
	if (o->comm && strncmp(t->comm, o->comm, IT_COMM_LEN))
		return 0;
	ok = !o->nr_pids;
	for (int i = 0; !ok && i < o->nr_pids; i++)
		ok = t->pid == o->pids[i];
	if (!ok)
		return 0;
	if (o->nr_cgroups && !cgroup_matches(rp, t))
		return 0;
	if ((o->container || o->pod) && !container_matches(rp, t))
		return 0;
	if (o->nr_devs || o->has_file) {
		ok = o->nr_devs ? dev_matches(rp, dev) : file_matches(o, dev, ino);
		for (int i = 0; !ok && i < r->nr_blocks; i++)
			ok = o->nr_devs ? dev_matches(rp, r->blocks[i]->dev) :
					  o->file_bdev && file_matches(o, r->blocks[i]->dev, 0);
		if (!ok)
			return 0;
	}
	return 1;
}

/* ---- every request ---- */

/* One request read back; real_off_ns: its clocks' CLOCK_REALTIME - CLOCK_MONOTONIC. */
static void report_req(struct report *rp, const struct rf_req *rq, int64_t real_off_ns)
{
	struct corr_req r;
	struct rp_req q = { .r = &r, .real_off_ns = real_off_ns };
	uint64_t ino;

	rf_req_view(rq, &r);
	rf_req_span(&r, &q.start_ns, &q.end_ns);
	if (!matches(rp, &q))
		return;
	rp->matched++;
	if (!rp->first_ns || q.start_ns < rp->first_ns)
		rp->first_ns = q.start_ns;
	if (q.end_ns > rp->last_ns)
		rp->last_ns = q.end_ns;
	out_request(&r, rp->out);
	if (rp->jout)
		out_request(&r, rp->jout);
	uhists_request(&rp->kh, &r);
	if (rp->top)
		top_add(rp->top, &q);
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
	if (!st.st_size) {
		rp->rr.st.bad_segments++;
		it_warn("report: %s: empty, not a segment", path);
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
	fprintf(f, "recording: %llu segments", (unsigned long long)s->segments);
	if (s->segments)
		fprintf(f, " from %s (kernel %s, boot %s), started %s", h->host, h->kernel,
			h->boot_id, rp_fmt_real(rp->rec_start_real, when, sizeof(when)));
	fprintf(f, "; %llu blocks, %llu requests, %llu matched the filters\n",
		(unsigned long long)s->blocks, (unsigned long long)s->requests,
		(unsigned long long)rp->matched);
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

static FILE *open_out(const char *opt, const char *path)
{
	FILE *f = !strcmp(path, "-") ? stdout : fopen(path, "w");

	if (!f)
		it_err("report: --%s: cannot open '%s': %s", opt, path, strerror(errno));
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
		rp->hm = rp->hmf ? hm_new() : NULL;
		if (!rp->hm)
			return 1;
	}
	rp->out = out_new(&io, text, NULL, 0);
	rp->top = top_new(rp->o.top);
	if (!rp->out || !rp->top || (rp->o.json_path && !rp->jout)) {
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
	print_summary(rp);
	top_print(rp->top, text, dev_name_of, rp);
	if (rp->jout) {
		out_flush(rp->jout);
		if (out_error(rp->jout) || fflush(rp->jf)) {
			it_err("report: --json: cannot write '%s'", rp->o.json_path);
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
	top_free(rp->top);
	uhists_free(&rp->kh);
	rr_free(&rp->rr);
	ct_names_free(rp->names);
	for (int i = 0; i < rp->nr_files; i++)
		free(rp->files[i]);
	free(rp->files);
	for (int i = 0; i < rp->o.nr_devs; i++)
		free(rp->o.devs[i]);
}

int report_main(int argc, char **argv)
{
	struct report rp;
	int ret;

	memset(&rp, 0, sizeof(rp));
	ret = rp_parse(argc, argv, &rp.o);
	if (ret)
		return ret == 1 ? 0 : ret;
	ret = collect(&rp);
	if (ret)
		goto out;
	find_start(&rp);
	rp.boot_off_ns = (int64_t)(rp_now_real() - it_mono_ns());
	if ((rp.o.since && (ret = resolve_time('S', rp.o.since, &rp.o.since_real))) ||
	    (rp.o.until && (ret = resolve_time('U', rp.o.until, &rp.o.until_real))))
		goto out;
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
