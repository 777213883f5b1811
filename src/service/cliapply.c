// SPDX-License-Identifier: GPL-2.0
/*
 * cli: one option's value into struct it_opts (cli_apply, cli_filter), each
 * bad value one line naming the option and what was expected (cli_bad_value:
 * opts_bad_msg's one wording; cli_bad for what a parser says is wrong).
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "iotracer.h"
#include "records/cgroup.h"
#include "service/cli.h"
#include "service/cli_int.h"
#include "records/record.h"
#include "sink/http.h"
#include "sink/sink.h"
#include "lib/parse.h"
#include "lib/addr.h"
#include "lib/keyfile.h"
#include "lib/log.h"

/* Long name of an option code ('m' -> "min-latency"), or NULL. */
static const char *cli_optname(int key)
{
	const struct cli_option *r = cli_option_of(key);

	return r ? r->row.name : NULL;
}

/*
 * A bad value: "iotracer: --<opt>: <message>" as one line on the command line,
 * "<opt>: <message>" into src->msg for a config file (its reader adds
 * FILE:LINE). Returns CLI_USAGE.
 */
static __attribute__((format(printf, 3, 4))) int cli_bad(const struct cli_src *src, int opt,
							 const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (src->msg)
		snprintf(src->msg, src->msg_size, "%s: %s", cli_optname(opt), msg);
	else
		it_err_to(src->err, "%s%s--%s: %s", src->cmd ? src->cmd : "", src->cmd ? ": " : "",
			  cli_optname(opt), msg);
	return CLI_USAGE;
}

/*
 * A bad value, in the one wording of every command (opts_bad_msg): "bad value
 * 'ARG' (expected WHAT)", routed as cli_bad's. Returns CLI_USAGE.
 */
static __attribute__((format(printf, 4, 5))) int
cli_bad_value(const struct cli_src *src, int opt, const char *arg, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	opts_bad_vmsg(msg, sizeof(msg), arg, fmt, ap);
	va_end(ap);
	return cli_bad(src, opt, "%s", msg);
}

/*
 * arg's index among the keywords of option opt (its row's .kw, clitab.c), or a
 * bad value listing them (-1).
 */
static int cli_keyword(const struct cli_src *src, int opt, const char *arg)
{
	const char *(*kw)(int i) = cli_option_of(opt)->row.kw;
	char list[256];
	int i = opts_kw_find(kw, arg);

	if (i < 0)
		cli_bad_value(src, opt, arg, "%s", opts_kw_list(list, sizeof(list), kw));
	return i;
}

/* Replace *slot by a copy of s. */
int cli_setstr(char **slot, const char *s)
{
	char *dup = strdup(s);

	if (!dup)
		return -ENOMEM;
	free(*slot);
	*slot = dup;
	return 0;
}

static int cli_add_u32(uint32_t *arr, int *nr, int max, uint32_t v)
{
	int i;

	for (i = 0; i < *nr; i++)
		if (arr[i] == v)
			return 0;
	if (*nr >= max)
		return -E2BIG;
	arr[(*nr)++] = v;
	return 0;
}

/*
 * Walk the comma list in arg and feed each item to one_item(). Empty items
 * are passed through (as ""), so callers reject them.
 */
struct cli_list_ctx {
	int opt;
	const char *arg;
	struct it_opts *o;
	const struct cli_src *src;
	int (*one_item)(int opt, const char *item, const char *arg, struct it_opts *o,
			const struct cli_src *src);
};

/* parse_each() goes on while an item returns 0, which is CLI_RUN. */
static int cli_list_item(const char *item, void *ctx)
{
	struct cli_list_ctx *c = ctx;

	return c->one_item(c->opt, item, c->arg, c->o, c->src);
}

static int cli_list(int opt, const char *arg, struct it_opts *o, const struct cli_src *src,
		    int (*one_item)(int opt, const char *item, const char *arg, struct it_opts *o,
				    const struct cli_src *src))
{
	struct cli_list_ctx c = { opt, arg, o, src, one_item };
	int ret = parse_each(arg, cli_list_item, &c);

	if (ret == -ENOMEM)
		return cli_bad(src, opt, "out of memory");
	return ret ? ret : CLI_RUN;
}

static int cli_pid_item(int opt, const char *item, const char *arg, struct it_opts *o,
			const struct cli_src *src)
{
	uint64_t pid;

	if (parse_u64(item, 1, CLI_MAX_PID, &pid))
		return cli_bad_value(src, opt, arg, "PID[,PID...], each 1..%u, at most %d",
				     CLI_MAX_PID, CLI_MAX_PIDS);
	if (cli_add_u32(o->pids, &o->nr_pids, CLI_MAX_PIDS, (uint32_t)pid))
		return cli_bad(src, opt, "too many pids in '%s' (at most %d)", arg, CLI_MAX_PIDS);
	return CLI_RUN;
}

static int cli_dev_item(int opt, const char *item, const char *arg, struct it_opts *o,
			const struct cli_src *src)
{
	uint32_t kdev;
	int ret;

	if (!*item)
		return cli_bad_value(src, opt, arg, "DEV[,DEV...]");
	if (o->offline) { /* a name or MAJ:MIN of the recording: kept as given */
		if (o->nr_dev_names >= CLI_MAX_DEVS)
			return cli_bad(src, opt, "too many devices in '%s' (at most %d)", arg,
				       CLI_MAX_DEVS);
		o->dev_names[o->nr_dev_names] = strdup(strncmp(item, "/dev/", 5) ? item : item + 5);
		if (!o->dev_names[o->nr_dev_names])
			return cli_bad(src, opt, "out of memory");
		o->nr_dev_names++;
		return CLI_RUN;
	}
	ret = parse_dev(item, o->sysfs_root, &kdev);
	if (ret == -ENOENT || ret == -ENOTBLK)
		return cli_bad(src, opt, "no block device '%s'", item);
	if (ret == -EINVAL)
		return cli_bad_value(src, opt, item, "e.g. loop0, /dev/loop0, 7:0");
	if (ret)
		return cli_bad(src, opt, "cannot resolve device '%s': %s", item, strerror(-ret));
	if (cli_add_u32(o->devs, &o->nr_devs, CLI_MAX_DEVS, kdev))
		return cli_bad(src, opt, "too many devices in '%s' (at most %d)", arg,
			       CLI_MAX_DEVS);
	return CLI_RUN;
}

static int cli_qemu_pid_item(int opt, const char *item, const char *arg, struct it_opts *o,
			     const struct cli_src *src)
{
	uint64_t pid;

	if (parse_u64(item, 1, CLI_MAX_PID, &pid))
		return cli_bad_value(src, opt, arg, "PID[,PID...], each 1..%u", CLI_MAX_PID);
	if (cli_add_u32(o->qemu_pids, &o->nr_qemu_pids, CLI_MAX_QEMU, (uint32_t)pid))
		return cli_bad(src, opt, "too many pids in '%s' (at most %d)", arg, CLI_MAX_QEMU);
	return CLI_RUN;
}

/* A link address, checked now so a typo fails at start (exit 2). */
static int cli_addr(const struct cli_src *src, int opt, const char *arg, char **arr, int *nr)
{
	struct net_addr a;
	char why[128];

	if (addr_parse(arg, &a, why, sizeof(why)))
		return cli_bad(src, opt, "bad address '%s': %s", arg, why);
	if (*nr >= CLI_MAX_LINKS)
		return cli_bad(src, opt, "too many addresses (at most %d)", CLI_MAX_LINKS);
	arr[*nr] = strdup(arg);
	if (!arr[*nr])
		return cli_bad(src, opt, "out of memory");
	(*nr)++;
	return CLI_RUN;
}

/* --metrics: a TCP listening address, checked now (exit 2), bound at start (exit 1). */
static int cli_metrics(const struct cli_src *src, int opt, const char *arg, struct it_opts *o)
{
	struct net_addr a;
	char why[128];

	if (addr_parse_hostport(arg, &a, why, sizeof(why)))
		return cli_bad(src, opt,
			       "bad address '%s': %s (e.g. 127.0.0.1:9477, [::1]:9477, :9477)", arg,
			       why);
	if (cli_setstr(&o->metrics_addr, arg))
		return cli_bad(src, opt, "out of memory");
	return CLI_RUN;
}

/* The key file is read and checked now: a bad one stops us at start (exit 2). */
static int cli_link_key(const struct cli_src *src, int opt, const char *arg, struct it_opts *o)
{
	char why[160];

	if (!o->link_key)
		o->link_key = malloc(sizeof(*o->link_key));
	if (!o->link_key)
		return cli_bad(src, opt, "out of memory");
	if (keyfile_load(arg, o->link_key, why, sizeof(why)))
		return cli_bad(src, opt, "%s: %s", arg, why);
	return CLI_RUN;
}

/*
 * --profile: a named set of option values, applied where it stands (options
 * after it override). always-on is what to leave running (docs/cli.md): every
 * layer's histograms kept in the kernel, per-request records only above
 * IT_ALWAYS_ON_MIN_LAT_NS, no live lines, writeback split per file (the
 * cheap way, --writeback files); full is the default, a record each, and a
 * note per dirtied page.
 */
static int cli_profile(const struct cli_src *src, int opt, const char *arg, struct it_opts *o)
{
	int i = cli_keyword(src, opt, arg); /* always-on, full */
	const char *wb;

	if (i < 0)
		return CLI_USAGE;
	if (i == 0) {
		o->min_lat_ns = IT_ALWAYS_ON_MIN_LAT_NS;
		o->sample = 1;
		o->live = 0;
		wb = "files";
	} else {
		o->min_lat_ns = 0;
		o->sample = 1;
		wb = "pages";
	}
	if (cli_setstr(&o->profile, arg) || cli_setstr(&o->writeback, wb))
		return cli_bad(src, opt, "out of memory");
	return CLI_RUN;
}

static int cli_mode(const struct cli_src *src, int opt, const char *arg, struct it_opts *o)
{
	int i = cli_keyword(src, opt, arg); /* by enum it_mode */

	if (i < 0)
		return CLI_USAGE;
	o->mode = i;
	return CLI_RUN;
}

static int cli_duration(const struct cli_src *src, int opt, const char *arg, int positive,
			uint64_t *ns)
{
	uint64_t v;

	if (parse_duration(arg, &v))
		return cli_bad_value(src, opt, arg, CLI_DUR_HINT);
	/* "-m 10" meant 10 s where 10 ms was likely meant: a number other than 0 takes a unit */
	if (v && !arg[strspn(arg, "0123456789.")])
		return cli_bad_value(
			src, opt, arg,
			"a number with a unit: ns, us, ms, s, m or h, e.g. %sms or %ss", arg, arg);
	if (positive && !v)
		return cli_bad_value(src, opt, arg, "more than 0, e.g. 250us, 10ms, 2s");
	*ns = v;
	return CLI_RUN;
}

/* --cgroup: a cgroup v2 directory now (exit 2), opened again at every (re)load. */
static int cli_cgroup(const struct cli_src *src, int opt, const char *arg, struct it_opts *o)
{
	char mnt[CG_PATH_MAX], rel[CG_PATH_MAX], why[CG_PATH_MAX + 128];
	int ret = cg_mount_point(NULL, NULL, mnt, sizeof(mnt));

	if (o->offline) {
		/*
		 * A recording may come from another host: a cgroup2 directory of this one
		 * becomes its hierarchy path, anything else absolute is taken as one.
		 */
		if (ret || cg_resolve(mnt, arg, rel, sizeof(rel), why, sizeof(why))) {
			if (arg[0] != '/' || strlen(arg) >= CG_PATH_MAX)
				return cli_bad_value(src, opt, arg,
						     "a hierarchy path such as "
						     "/system.slice, or a cgroup2 directory");
			snprintf(rel, sizeof(rel), "%s", arg);
		}
		arg = rel;
	} else if (ret) {
		return cli_bad(src, opt, "no cgroup2 hierarchy: %s", strerror(-ret));
	} else if (cg_resolve(mnt, arg, rel, sizeof(rel), why, sizeof(why))) {
		return cli_bad(src, opt, "%s", why);
	}
	if (o->nr_cgroups >= CLI_MAX_CGROUPS)
		return cli_bad(src, opt, "too many cgroups (at most %d)", CLI_MAX_CGROUPS);
	o->cgroups[o->nr_cgroups] = strdup(arg);
	if (!o->cgroups[o->nr_cgroups])
		return cli_bad(src, opt, "out of memory");
	o->nr_cgroups++;
	return CLI_RUN;
}

/* An existing path; want_dir: must be a directory. */
static int cli_path(const struct cli_src *src, int opt, const char *arg, int want_dir, char **slot)
{
	struct stat st;

	if (!*arg)
		return cli_bad_value(src, opt, arg, "a path");
	if (stat(arg, &st))
		return cli_bad(src, opt, "cannot access '%s': %s", arg, strerror(errno));
	if (want_dir && !S_ISDIR(st.st_mode))
		return cli_bad(src, opt, "not a directory '%s'", arg);
	if (cli_setstr(slot, arg))
		return cli_bad(src, opt, "out of memory");
	return CLI_RUN;
}

static int cli_ring_size(const struct cli_src *src, int opt, const char *arg, uint64_t *size)
{
	uint64_t v;

	if (parse_size(arg, &v) || v < CLI_RING_MIN || v > CLI_RING_MAX || (v & (v - 1)))
		return cli_bad_value(src, opt, arg, "a power of two from 4K to 1G, e.g. 8M");
	*size = v;
	return CLI_RUN;
}

/* --record and its limits. */
static int cli_record(const struct cli_src *src, int c, const char *arg, struct it_opts *o)
{
	uint64_t v;

	switch (c) {
	case CLI_OPT_RECORD:
		if (!*arg)
			return cli_bad_value(src, c, arg, "a directory");
		return cli_setstr(&o->record_dir, arg) ? cli_bad(src, c, "out of memory") : CLI_RUN;
	case CLI_OPT_RECORD_SIZE:
	case CLI_OPT_RECORD_MAX:
		if (parse_size(arg, &v) || v < REC_MIN_SIZE)
			return cli_bad_value(src, c, arg, "at least 64K, e.g. 64M, 1G");
		*(c == CLI_OPT_RECORD_SIZE ? &o->record_size : &o->record_max) = v;
		return CLI_RUN;
	case CLI_OPT_RECORD_LEVEL:
		if (parse_u64(arg, 0, 9, &v))
			return cli_bad_value(src, c, arg, "0 to 9");
		o->record_level = (int)v;
		return CLI_RUN;
	}
	return cli_duration(src, c, arg, 1, &o->record_age_ns); /* CLI_OPT_RECORD_AGE */
}

/* --sink and its options (docs/fleet.md): the address checked here, the files at start. */
static int cli_sink(const struct cli_src *src, int c, const char *arg, struct it_opts *o)
{
	char why[256];
	uint64_t v;
	char **slot = c == CLI_OPT_SINK		 ? &o->sink_url :
		      c == CLI_OPT_SINK_AUTH	 ? &o->sink_auth :
		      c == CLI_OPT_SINK_CA	 ? &o->sink_ca :
		      c == CLI_OPT_SINK_COMPRESS ? &o->sink_compress :
						   &o->sink_spill;
	struct sk_url u;

	switch (c) {
	case CLI_OPT_SINK_TIMEOUT:
		return cli_duration(src, c, arg, 1, &o->sink_timeout_ns);
	case CLI_OPT_SINK_QUEUE:
	case CLI_OPT_SINK_SPILL_MAX:
		if (parse_size(arg, &v) ||
		    v < (c == CLI_OPT_SINK_QUEUE ? SK_MIN_QUEUE : SK_MIN_SPILL_MAX))
			return cli_bad_value(src, c, arg, "at least %s, e.g. 64M",
					     c == CLI_OPT_SINK_QUEUE ? "1M" : "64K");
		*(c == CLI_OPT_SINK_QUEUE ? &o->sink_queue : &o->sink_spill_max) = v;
		return CLI_RUN;
	case CLI_OPT_SINK:
		if (sk_url_parse(arg, &u, why, sizeof(why)))
			return cli_bad(src, c, "%s", why);
		break;
	case CLI_OPT_SINK_COMPRESS:
		if (cli_keyword(src, c, arg) < 0)
			return CLI_USAGE;
		break;
	default:
		if (!*arg)
			return cli_bad_value(src, c, arg, "a %s",
					     c == CLI_OPT_SINK_SPILL ? "directory" : "file name");
	}
	return cli_setstr(slot, arg) ? cli_bad(src, c, "out of memory") : CLI_RUN;
}

/* The host and guest modes' options. */
static int cli_modes(const struct cli_src *src, int c, const char *arg, struct it_opts *o)
{
	switch (c) {
	case CLI_OPT_MODE:
		return cli_mode(src, c, arg, o);
	case CLI_OPT_LINK:
		return cli_addr(src, c, arg, o->links, &o->nr_links);
	case CLI_OPT_LISTEN:
		return cli_addr(src, c, arg, o->listens, &o->nr_listens);
	case CLI_OPT_QEMU_PID:
		return cli_list(c, arg, o, src, cli_qemu_pid_item);
	case CLI_OPT_LINK_KEY:
		return cli_link_key(src, c, arg, o);
	}
	/* CLI_OPT_NAME */
	if (!*arg || strlen(arg) >= ADDR_NAME_LEN)
		return cli_bad_value(src, c, arg, "1 to 63 characters");
	return cli_setstr(&o->name, arg) ? cli_bad(src, c, "out of memory") : CLI_RUN;
}

/* --since, --until: a point in time (parse_time), now. */
static int cli_time(const struct cli_src *src, int c, const char *arg, uint64_t *real)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (parse_time(arg, (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec, real))
		return cli_bad_value(
			src, c, arg,
			"a duration before now like 10m, a date and "
			"time like 2026-11-24T13:25:00Z or, local, 2026-11-24 14:25:00, or "
			"epoch seconds");
	return CLI_RUN;
}

int cli_filter(int c, const char *arg, struct it_opts *o, const struct cli_src *src)
{
	uint32_t mask;
	char list[256];

	switch (c) {
	case 'm':
		return cli_duration(src, c, arg, 0, &o->min_lat_ns);
	case CLI_OPT_SINCE:
		return cli_time(src, c, arg, &o->since_real);
	case CLI_OPT_UNTIL:
		return cli_time(src, c, arg, &o->until_real);
	case 'l':
		if (parse_layers(arg, &mask))
			return cli_bad_value(src, c, arg, "a comma list of %s, all",
					     opts_kw_list(list, sizeof(list),
							  cli_option_of(c)->row.kw));
		o->layers |= mask;
		return CLI_RUN;
	case 'p':
		return cli_list(c, arg, o, src, cli_pid_item);
	case 'c':
		if (!*arg || strlen(arg) >= sizeof(o->comm))
			return cli_bad_value(src, c, arg, "1 to %zu characters",
					     sizeof(o->comm) - 1);
		memset(o->comm, 0, sizeof(o->comm));
		memcpy(o->comm, arg, strlen(arg));
		o->has_comm = 1;
		return CLI_RUN;
	case CLI_OPT_CGROUP:
		return cli_cgroup(src, c, arg, o);
	case 'd':
		return cli_list(c, arg, o, src, cli_dev_item);
	case 'f':
		/* report: a recording's names, maybe of another host: a pattern, not a path here */
		if (o->offline)
			return !*arg ? cli_bad_value(src, c, arg, "a path") :
			       cli_setstr(&o->file_path, arg) ? cli_bad(src, c, "out of memory") :
								CLI_RUN;
		return cli_path(src, c, arg, 0, &o->file_path);
	}
	return cli_bad(src, c, "internal error: option %d is not a filter", c);
}

int cli_apply(int c, const char *arg, struct it_opts *o, FILE *out, const struct cli_src *src)
{
	uint64_t v;

	switch (c) {
	case 'l':
	case 'p':
	case 'c':
	case CLI_OPT_CGROUP:
	case 'd':
	case 'f':
	case 'm':
		return cli_filter(c, arg, o, src);
	case CLI_OPT_RECORD:
	case CLI_OPT_RECORD_SIZE:
	case CLI_OPT_RECORD_MAX:
	case CLI_OPT_RECORD_LEVEL:
	case CLI_OPT_RECORD_AGE:
		return cli_record(src, c, arg, o);
	case CLI_OPT_SINK:
	case CLI_OPT_SINK_AUTH:
	case CLI_OPT_SINK_CA:
	case CLI_OPT_SINK_QUEUE:
	case CLI_OPT_SINK_SPILL:
	case CLI_OPT_SINK_SPILL_MAX:
	case CLI_OPT_SINK_TIMEOUT:
	case CLI_OPT_SINK_COMPRESS:
		return cli_sink(src, c, arg, o);
	case CLI_OPT_MODE:
	case CLI_OPT_LINK:
	case CLI_OPT_LISTEN:
	case CLI_OPT_QEMU_PID:
	case CLI_OPT_LINK_KEY:
	case CLI_OPT_NAME:
		return cli_modes(src, c, arg, o);
	case CLI_OPT_SAMPLE:
		if (parse_u64(arg, 1, UINT64_MAX, &v))
			return cli_bad_value(src, c, arg, "N >= 1: 1 in N");
		o->sample = v;
		return CLI_RUN;
	case 'D':
		return cli_duration(src, c, arg, 1, &o->duration_ns);
	case 'i':
		return cli_duration(src, c, arg, 1, &o->interval_ns);
	case 'j':
		if (!*arg)
			return cli_bad_value(src, c, arg, "a file name, or '-' for stdout");
		return cli_setstr(&o->json_path, arg) ? cli_bad(src, c, "out of memory") : CLI_RUN;
	case CLI_OPT_NO_LIVE:
		o->live = 0;
		return CLI_RUN;
	case CLI_OPT_PROFILE:
		return cli_profile(src, c, arg, o);
	case CLI_OPT_RING_SIZE:
		return cli_ring_size(src, c, arg, &o->ring_size);
	case 'q':
		o->quiet = 1;
		o->live = 0;
		return CLI_RUN;
	case 'v':
		o->verbose++;
		return CLI_RUN;
	case CLI_OPT_SCHED_SWITCH:
		o->sched_switch = 1;
		return CLI_RUN;
	case CLI_OPT_BLOCK_INSERT:
		o->block_insert = 1;
		return CLI_RUN;
	case CLI_OPT_QEMU_UPROBES:
		if (cli_keyword(src, c, arg) < 0)
			return CLI_USAGE;
		return cli_setstr(&o->qemu_uprobes, arg) ? cli_bad(src, c, "out of memory") :
							   CLI_RUN;
	case CLI_OPT_QEMU_STAGES:
		o->qemu_stages = 1;
		return CLI_RUN;
	case CLI_OPT_SYSCALL_HOOKS:
		if (cli_keyword(src, c, arg) < 0)
			return CLI_USAGE;
		return cli_setstr(&o->syscall_hooks, arg) ? cli_bad(src, c, "out of memory") :
							    CLI_RUN;
	case CLI_OPT_WRITEBACK:
		if (cli_keyword(src, c, arg) < 0)
			return CLI_USAGE;
		return cli_setstr(&o->writeback, arg) ? cli_bad(src, c, "out of memory") : CLI_RUN;
	case CLI_OPT_METRICS_CONTAINERS:
		o->metrics_containers = 1;
		return CLI_RUN;
	case CLI_OPT_BLAME:
		o->blame = 1;
		return CLI_RUN;
	case CLI_OPT_METRICS:
		return cli_metrics(src, c, arg, o);
	case CLI_OPT_METRICS_CG_DEPTH:
		if (parse_u64(arg, 0, CLI_MAX_CG_DEPTH, &v))
			return cli_bad_value(src, c, arg, "0 to %d", CLI_MAX_CG_DEPTH);
		o->metrics_cg_depth = (int)v;
		return CLI_RUN;
	case CLI_OPT_FILE_NAMES:
		if (parse_u64(arg, 0, CLI_FILE_NAMES_MAX, &v) || (v && v < CLI_FILE_NAMES_MIN))
			return cli_bad_value(src, c, arg, "0, or %d to %d", CLI_FILE_NAMES_MIN,
					     CLI_FILE_NAMES_MAX);
		o->file_names = (int)v;
		return CLI_RUN;
	case CLI_OPT_METRICS_FILES:
		if (parse_u64(arg, 0, CLI_METRICS_FILES_MAX, &v))
			return cli_bad_value(src, c, arg, "0 to %d", CLI_METRICS_FILES_MAX);
		o->metrics_files = (int)v;
		return CLI_RUN;
	case CLI_OPT_CONFIG:
	case CLI_OPT_NO_CONFIG:
		return CLI_RUN; /* read before the other options (cli_config_file) */
	case CLI_OPT_HELP:
		cli_usage(out);
		return CLI_EXIT_OK;
	case CLI_OPT_VERSION:
		fputs(CLI_PROG " " IT_VERSION "\n", out);
		return CLI_EXIT_OK;
	}
	return cli_bad(src, c, "internal error: option %d not handled", c);
}
