// SPDX-License-Identifier: GPL-2.0
/*
 * cli: command line of the run mode. See cli.h and docs/cli.md.
 */
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "iotracer.h"
#include "core/cgroup.h"
#include "core/cli.h"
#include "core/record.h"
#include "lib/parse.h"
#include "lib/addr.h"
#include "lib/keyfile.h"
#include "lib/log.h"
#include "lib/procfs.h"

#define CLI_PROG "iotracer"
#define CLI_DUR_HINT "(expected e.g. 250us, 10ms, 2s)"

enum {
	CLI_OPT_CGROUP = 256,
	CLI_OPT_SAMPLE,
	CLI_OPT_NO_LIVE,
	CLI_OPT_PROFILE,
	CLI_OPT_RING_SIZE,
	CLI_OPT_HELP,
	CLI_OPT_VERSION,
	CLI_OPT_MODE,
	CLI_OPT_LINK,
	CLI_OPT_LISTEN,
	CLI_OPT_QEMU_PID,
	CLI_OPT_NAME,
	CLI_OPT_SCHED_SWITCH,
	CLI_OPT_BLOCK_INSERT,
	CLI_OPT_SYSCALL_HOOKS,
	CLI_OPT_METRICS,
	CLI_OPT_METRICS_CG_DEPTH,
	CLI_OPT_METRICS_CONTAINERS,
	CLI_OPT_BLAME,
	CLI_OPT_LINK_KEY,
	CLI_OPT_RECORD,
	CLI_OPT_RECORD_SIZE,
	CLI_OPT_RECORD_AGE,
	CLI_OPT_RECORD_MAX,
	CLI_OPT_RECORD_LEVEL,
	CLI_OPT_CONFIG,
	CLI_OPT_NO_CONFIG,
	CLI_OPT_SINCE, /* report's, not run options: cli_time_opts */
	CLI_OPT_UNTIL,
};

#define F(field) .off = offsetof(struct it_opts, field)
#define LIST(field, count) F(field), .nr = offsetof(struct it_opts, count)

/*
 * The run options, in --help order. A new option is a row here and its case
 * in cli_apply() (plus a CLI_OPT_* code when it has no short letter); the
 * rest (getopt, --help, config sections, reload rules) is read from the row.
 */
/* clang-format off: one option a few lines, as before .row (clang-format puts a field a line) */
static const struct cli_option cli_opts[] = {
	{ .row.name = "layers", .row.key = 'l', .row.arg = "LIST", .section = "",
	  .reload = RELOAD_REATTACH, .val = CLI_V_LAYERS, F(layers),
	  .row.group = "Filters (all given filters must match):",
	  .row.help = "layers to trace, comma list of syscall,fs,sched,block,\n"
		      "nvme,scsi,virtio,qemu or all (default: all that attach)" },
	{ .row.name = "pid", .row.key = 'p', .row.arg = "PID[,PID...]", .section = "",
	  .reload = RELOAD_FILTER, .val = CLI_V_U32S, LIST(pids, nr_pids),
	  .row.help = "only these processes (tgid), up to 64" },
	{ .row.name = "comm", .row.key = 'c', .row.arg = "COMM", .section = "",
	  .reload = RELOAD_FILTER, .val = CLI_V_COMM, F(comm),
	  .row.help = "only threads whose comm is exactly COMM (<= 15 chars)" },
	{ .row.name = "cgroup", .row.key = CLI_OPT_CGROUP, .row.arg = "PATH", .section = "",
	  .reload = RELOAD_FILTER, .val = CLI_V_STRS, LIST(cgroups, nr_cgroups),
	  .row.help = "only tasks in this cgroup v2 directory or below it: a\n"
		      "directory or a hierarchy path (/system.slice); up to 8" },
	{ .row.name = "dev", .row.key = 'd', .row.arg = "DEV[,DEV...]", .section = "",
	  .reload = RELOAD_FILTER, .val = CLI_V_DEVS, LIST(devs, nr_devs),
	  .row.help = "only these block devices: loop0, /dev/loop0 or 7:0, up to 64" },
	{ .row.name = "file", .row.key = 'f', .row.arg = "PATH", .section = "",
	  .reload = RELOAD_FILTER, .val = CLI_V_STR, F(file_path),
	  .row.help = "only IO on this file or block device, or (not report) on\n"
		      "the files below this directory" },
	{ .row.name = "sched-switch", .row.key = CLI_OPT_SCHED_SWITCH, .section = "",
	  .reload = RELOAD_REATTACH, .val = CLI_V_FLAG, F(sched_switch),
	  .row.help = "sched layer: also hook every context switch and wakeup for\n"
		      "off-CPU time and the waker (default: the task's own\n"
		      "switch and run-queue counters, no hook; docs/hooks.md)" },
	{ .row.name = "block-insert", .row.key = CLI_OPT_BLOCK_INSERT, .section = "",
	  .reload = RELOAD_REATTACH, .val = CLI_V_FLAG, F(block_insert),
	  .row.help = "block layer: also hook request insert, splitting the time\n"
		      "from allocation to issue at the scheduler (g2i, i2d;\n"
		      "default: one g2d stage, one program run less per request)" },
	{ .row.name = "syscall-hooks", .row.key = CLI_OPT_SYSCALL_HOOKS, .row.arg = "KIND",
	  .section = "", .reload = RELOAD_REATTACH, .val = CLI_V_STR, F(syscall_hooks),
	  .unset = "auto",
	  .row.help = "the syscall layer's hooks: auto (default: the file systems'\n"
		      "read/write paths where fentry or kprobes work, so other\n"
		      "syscalls run no program; else raw), raw (one raw_syscalls\n"
		      "pair every syscall runs, exact) or percall (a tracepoint\n"
		      "pair per traced syscall; skipped runs counted;\n"
		      "docs/hooks.md, \"The tax\")" },
	{ .row.name = "min-latency", .row.key = 'm', .row.arg = "DUR", .section = "",
	  .reload = RELOAD_FILTER, .val = CLI_V_DUR, F(min_lat_ns),
	  .row.group = "Records and output:",
	  .row.help = "records only of requests at least DUR long (10ms; a bare\n"
		      "number other than 0 is refused)" },
	{ .row.name = "sample", .row.key = CLI_OPT_SAMPLE, .row.arg = "N", .section = "",
	  .reload = RELOAD_FILTER, .val = CLI_V_U64, F(sample),
	  .row.help = "per-request records for 1 in N requests (default 1: all)" },
	/* its values are in the other fields, each reloaded by its own row */
	{ .row.name = "profile", .row.key = CLI_OPT_PROFILE, .row.arg = "NAME", .section = "",
	  .reload = RELOAD_FILTER, .val = CLI_V_STR, F(profile), .unset = "full",
	  .row.help = "always-on: histograms of every request in the kernel,\n"
		      "records only of requests >= 10ms, no live lines (what\n"
		      "is cheap enough to leave on); full: a record per\n"
		      "request (the default). Later options override it" },
	{ .row.name = "duration", .row.key = 'D', .row.arg = "DUR", .section = "",
	  .reload = RELOAD_TIMING, .val = CLI_V_DUR, F(duration_ns),
	  .row.help = "stop after DUR (default: run until SIGINT/SIGTERM)" },
	{ .row.name = "interval", .row.key = 'i', .row.arg = "DUR", .section = "",
	  .reload = RELOAD_TIMING, .val = CLI_V_DUR, F(interval_ns),
	  .row.help = "print a summary every DUR (default: final summary only)" },
	{ .row.name = "json", .row.key = 'j', .row.arg = "FILE", .section = "",
	  .reload = RELOAD_START, .val = CLI_V_STR, F(json_path),
	  .row.help = "write JSON lines to FILE ('-' = stdout, text goes to stderr)" },
	/* the recorder is opened at start */
	{ .row.name = "record", .row.key = CLI_OPT_RECORD, .row.arg = "DIR", .section = "record",
	  .reload = RELOAD_START, .val = CLI_V_STR, F(record_dir),
	  .row.help = "also record every request into compressed segment files in\n"
		      "DIR, read back with '" CLI_PROG " report DIR' (docs/record.md)" },
	{ .row.name = "record-size", .row.key = CLI_OPT_RECORD_SIZE, .row.arg = "SIZE",
	  .section = "record", .reload = RELOAD_START, .val = CLI_V_SIZE, F(record_size),
	  .row.help = "start a new segment at SIZE (default 64M, at least 64K)" },
	{ .row.name = "record-age", .row.key = CLI_OPT_RECORD_AGE, .row.arg = "DUR",
	  .section = "record", .reload = RELOAD_START, .val = CLI_V_DUR, F(record_age_ns),
	  .row.help = "start a new segment after DUR (default 1h)" },
	{ .row.name = "record-max", .row.key = CLI_OPT_RECORD_MAX, .row.arg = "SIZE",
	  .section = "record", .reload = RELOAD_START, .val = CLI_V_SIZE, F(record_max),
	  .row.help = "delete the oldest segments of DIR to stay within SIZE\n"
		      "(default 1G, at least --record-size)" },
	{ .row.name = "record-level", .row.key = CLI_OPT_RECORD_LEVEL, .row.arg = "N",
	  .section = "record", .reload = RELOAD_START, .val = CLI_V_INT, F(record_level),
	  .row.help = "zlib level of the blocks, 0 to 9 (default 0: stored, the\n"
		      "delta coding alone; 1: ~28% smaller, ~0.8 us more a request)" },
	{ .row.name = "no-live", .row.key = CLI_OPT_NO_LIVE, .section = "", .reload = RELOAD_START,
	  .val = CLI_V_NOT_FLAG, F(live),
	  .row.help = "no live per-request lines (summaries only)" },
	{ .row.name = "ring-size", .row.key = CLI_OPT_RING_SIZE, .row.arg = "SIZE", .section = "",
	  .reload = RELOAD_REATTACH, .val = CLI_V_SIZE, F(ring_size),
	  .row.help = "record buffer memory, a power of two from 4K to 1G (default 8M)" },
	/* the server is bound at start */
	{ .row.name = "metrics", .row.key = CLI_OPT_METRICS, .row.arg = "ADDR",
	  .section = "metrics", .reload = RELOAD_START, .val = CLI_V_STR, F(metrics_addr),
	  .row.help = "serve Prometheus metrics on http://ADDR/metrics; ADDR is\n"
		      "IP:PORT, [IPV6]:PORT or :PORT (every address; docs/metrics.md)" },
	{ .row.name = "metrics-cgroup-depth", .row.key = CLI_OPT_METRICS_CG_DEPTH, .row.arg = "N",
	  .section = "metrics", .reload = RELOAD_START, .val = CLI_V_INT, F(metrics_cg_depth),
	  .row.help = "/metrics: per-cgroup series, the cgroups taken N levels\n"
		      "below the root (0: the root only; 0 to 16; docs/metrics.md)" },
	{ .row.name = "metrics-containers", .row.key = CLI_OPT_METRICS_CONTAINERS,
	  .section = "metrics", .reload = RELOAD_START, .val = CLI_V_FLAG, F(metrics_containers),
	  .row.help = "/metrics: container, pod and namespace labels on the\n"
		      "per-cgroup series (docs/metrics.md)" },
	{ .row.name = "blame", .row.key = CLI_OPT_BLAME, .section = "metrics",
	  .reload = RELOAD_START, .val = CLI_V_FLAG, F(blame),
	  .row.help = "/metrics: who slowed whom, blamed seconds per device,\n"
		      "victim and culprit cgroup (docs/blame.md)" },
	{ .row.name = "quiet", .row.key = 'q', .section = "", .reload = RELOAD_START,
	  .val = CLI_V_FLAG, F(quiet),
	  .row.help = "no attach report and no live lines: summaries only" },
	{ .row.name = "verbose", .row.key = 'v', .section = "", .reload = RELOAD_START,
	  .val = CLI_V_COUNT, F(verbose),
	  .row.help = "libbpf debug output and per-hook details (repeatable)" },
	{ .row.name = "config", .row.key = CLI_OPT_CONFIG, .row.arg = "FILE",
	  .row.help = "read options from FILE first (INI; docs/config.md); none is\n"
		      "read without it (the service's unit passes\n"
		      CLI_CONFIG_DEFAULT ")" },
	{ .row.name = "no-config", .row.key = CLI_OPT_NO_CONFIG,
	  .row.help = "read no config file (the default; for scripts)" },
	{ .row.name = "help", .row.key = CLI_OPT_HELP, .row.help = "print this help and exit" },
	{ .row.name = "version", .row.key = CLI_OPT_VERSION,
	  .row.help = "print the version and exit" },
	{ .row.name = "mode", .row.key = CLI_OPT_MODE, .row.arg = "MODE", .section = "link",
	  .reload = RELOAD_REATTACH, .val = CLI_V_MODE, F(mode),
	  .row.group = "Host and guest modes (docs/modes.md):",
	  .row.help = "standalone (default), guest (inside a VM: stream virtio\n"
		      "requests to the host) or host (trace QEMU, join guests)" },
	{ .row.name = "link", .row.key = CLI_OPT_LINK, .row.arg = "ADDR", .section = "link",
	  .reload = RELOAD_REATTACH, .val = CLI_V_STRS, LIST(links, nr_links),
	  .row.help = "dial ADDR (repeatable, up to 8); guest default vsock:2:7767" },
	{ .row.name = "listen", .row.key = CLI_OPT_LISTEN, .row.arg = "ADDR", .section = "link",
	  .reload = RELOAD_REATTACH, .val = CLI_V_STRS, LIST(listens, nr_listens),
	  .row.help = "host: accept guests on ADDR (repeatable, up to 8);\n"
		      "host default vsock:7767 when no --link/--listen is given" },
	{ .row.name = "qemu-pid", .row.key = CLI_OPT_QEMU_PID, .row.arg = "PID[,PID...]",
	  .section = "link", .reload = RELOAD_REATTACH, .val = CLI_V_U32S,
	  LIST(qemu_pids, nr_qemu_pids),
	  .row.help = "host: the QEMU processes (default: every qemu-system-*)" },
	{ .row.name = "name", .row.key = CLI_OPT_NAME, .row.arg = "NAME", .section = "link",
	  .reload = RELOAD_REATTACH, .val = CLI_V_STR, F(name),
	  .row.help = "this side's name in the link hello (default: hostname)" },
	{ .row.name = "link-key", .row.key = CLI_OPT_LINK_KEY, .row.arg = "FILE", .section = "link",
	  .reload = RELOAD_REATTACH, .val = CLI_V_KEY, F(link_key),
	  .row.help = "shared key (>= 32 random bytes, root's, mode 0600): tcp and\n"
		      "unix links authenticate both ways (HMAC-SHA256); without\n"
		      "it a tcp --listen must be on the loopback" },
};

/* Filters only a recording can use (`report`): rows of no run option. */
static const struct cli_option cli_time_opts[] = {
	{ .row.name = "since", .row.key = CLI_OPT_SINCE, .row.arg = "TIME",
	  .row.help = "only requests that started at or after TIME" },
	{ .row.name = "until", .row.key = CLI_OPT_UNTIL, .row.arg = "TIME",
	  .row.help = "only requests that started before TIME" },
};
/* clang-format on */

#undef F
#undef LIST

#define CLI_NR_OPTS ((int)(sizeof(cli_opts) / sizeof(cli_opts[0])))

/* The rows as opts.h sees them (cli_cmd_init). */
static const struct opt_row *cli_rows[CLI_NR_OPTS + 1];
/* getopt's view of the table, filled once (cli_cmd_init). */
static struct option cli_longopts[CLI_NR_OPTS + 1];
/* Leading ':' : report a missing argument as ':' rather than '?'. */
static char cli_shortopts[1 + 2 * CLI_NR_OPTS + 1];

static const struct opt_cmd cli_cmd = {
	.prog = CLI_PROG,
	.head = "Usage: " CLI_PROG " [options]        trace block and file IO of this machine\n"
		"       " CLI_PROG " --help | --version\n",
	.tail = "ADDR: vsock:PORT, vsock:CID:PORT, unix:PATH, tcp:HOST:PORT, serial:NAME|/dev/PATH\n"
		"\n"
		"DUR: a number with a unit ns, us, ms, s, m or h (250us, 10ms, 1.5s, 5m); only 0\n"
		"     goes without one. SIZE: bytes with optional K, M or G (8M).\n"
		"Histograms always count every request, whatever -m and --sample say.\n"
		"Command-line options override the config file's; SIGHUP re-reads it.\n"
		"Exit status: 0 success, 1 runtime failure, 2 bad usage.\n",
	.rows = cli_rows,
};

static void cli_cmd_init(void)
{
	if (cli_rows[0])
		return;
	for (int i = 0; i < CLI_NR_OPTS; i++)
		cli_rows[i] = &cli_opts[i].row;
	opts_tables(&cli_cmd, cli_longopts, cli_shortopts);
}

const struct cli_option *cli_option(int i)
{
	return i >= 0 && i < CLI_NR_OPTS ? &cli_opts[i] : NULL;
}

const struct cli_option *cli_option_named(const char *name)
{
	for (int i = 0; i < CLI_NR_OPTS; i++)
		if (!strcmp(cli_opts[i].row.name, name))
			return &cli_opts[i];
	return NULL;
}

/* The row of option code `key`, or NULL. */
static const struct cli_option *cli_option_of(int key)
{
	for (int i = 0; i < CLI_NR_OPTS; i++)
		if (cli_opts[i].row.key == key)
			return &cli_opts[i];
	for (size_t i = 0; i < sizeof(cli_time_opts) / sizeof(cli_time_opts[0]); i++)
		if (cli_time_opts[i].row.key == key)
			return &cli_time_opts[i];
	return NULL;
}

const struct opt_row *cli_row(const char *name)
{
	const struct cli_option *r = cli_option_named(name);

	for (size_t i = 0; !r && i < sizeof(cli_time_opts) / sizeof(cli_time_opts[0]); i++)
		if (!strcmp(cli_time_opts[i].row.name, name))
			r = &cli_time_opts[i];
	return r ? &r->row : NULL;
}

void cli_usage(FILE *f)
{
	cli_cmd_init();
	opts_usage(&cli_cmd, f);
}

void cli_defaults(struct it_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->live = 1;
	o->sample = 1;
	o->ring_size = CLI_RING_DEFAULT;
	o->sysfs_root = "/sys";
	o->metrics_cg_depth = -1;
	o->record_size = REC_DEF_SIZE;
	o->record_age_ns = REC_DEF_AGE_NS;
	o->record_max = REC_DEF_MAX;
}

static void cli_free_strs(char **arr, int *nr)
{
	for (int i = 0; i < *nr; i++) {
		free(arr[i]);
		arr[i] = NULL;
	}
	*nr = 0;
}

void cli_free(struct it_opts *o)
{
	cli_free_strs(o->cgroups, &o->nr_cgroups);
	cli_free_strs(o->dev_names, &o->nr_dev_names);
	free(o->file_path);
	o->file_path = NULL;
	free(o->json_path);
	o->json_path = NULL;
	free(o->record_dir);
	o->record_dir = NULL;
	cli_free_strs(o->links, &o->nr_links);
	cli_free_strs(o->listens, &o->nr_listens);
	free(o->name);
	o->name = NULL;
	free(o->profile);
	o->profile = NULL;
	free(o->syscall_hooks);
	o->syscall_hooks = NULL;
	free(o->metrics_addr);
	o->metrics_addr = NULL;
	if (o->link_key)
		keyfile_wipe(o->link_key);
	free(o->link_key);
	o->link_key = NULL;
	free(o->config_path);
	o->config_path = NULL;
}

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

/* Replace *slot by a copy of s. */
static int cli_setstr(char **slot, const char *s)
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
		return cli_bad(src, opt,
			       "bad pid list '%s' (expected PID[,PID...], each 1..%u, at most %d)",
			       arg, CLI_MAX_PID, CLI_MAX_PIDS);
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
		return cli_bad(src, opt, "bad device list '%s' (expected DEV[,DEV...])", arg);
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
		return cli_bad(src, opt, "bad device '%s' (expected e.g. loop0, /dev/loop0, 7:0)",
			       item);
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
		return cli_bad(src, opt, "bad pid list '%s' (expected PID[,PID...], each 1..%u)",
			       arg, CLI_MAX_PID);
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
			       "bad address '%s': %s (e.g. 127.0.0.1:9477, [::1]:9477, :9477)",
			       arg, why);
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
 * IT_ALWAYS_ON_MIN_LAT_NS, no live lines; full is the default, a record each.
 */
static int cli_profile(const struct cli_src *src, int opt, const char *arg, struct it_opts *o)
{
	if (!strcmp(arg, "always-on")) {
		o->min_lat_ns = IT_ALWAYS_ON_MIN_LAT_NS;
		o->sample = 1;
		o->live = 0;
	} else if (!strcmp(arg, "full")) {
		o->min_lat_ns = 0;
		o->sample = 1;
	} else {
		return cli_bad(src, opt, "bad profile '%s' (expected always-on or full)", arg);
	}
	return cli_setstr(&o->profile, arg) ? cli_bad(src, opt, "out of memory") : CLI_RUN;
}

static int cli_mode(const struct cli_src *src, int opt, const char *arg, struct it_opts *o)
{
	static const char *const names[] = { "standalone", "guest", "host" };

	for (int i = 0; i < 3; i++) {
		if (!strcmp(arg, names[i])) {
			o->mode = i;
			return CLI_RUN;
		}
	}
	return cli_bad(src, opt, "bad mode '%s' (expected standalone, guest or host)", arg);
}

static int cli_duration(const struct cli_src *src, int opt, const char *arg, int positive,
			uint64_t *ns)
{
	uint64_t v;

	if (parse_duration(arg, &v))
		return cli_bad(src, opt, "bad duration '%s' " CLI_DUR_HINT, arg);
	/* "-m 10" meant 10 s where 10 ms was likely meant: a number other than 0 takes a unit */
	if (v && !arg[strspn(arg, "0123456789.")])
		return cli_bad(src, opt,
			       "bad duration '%s': a number needs a unit: ns, us, ms, s, m or h "
			       "(e.g. %sms or %ss)",
			       arg, arg, arg);
	if (positive && !v)
		return cli_bad(src, opt, "bad duration '%s' (must be > 0, e.g. 250us, 10ms, 2s)",
			       arg);
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
				return cli_bad(src, opt,
					       "bad cgroup '%s' (expected a hierarchy path such as "
					       "/system.slice, or a cgroup2 directory)",
					       arg);
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
		return cli_bad(src, opt, "bad path '' (empty)");
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
		return cli_bad(src, opt,
			       "bad size '%s' (expected a power of two from 4K to 1G, e.g. 8M)",
			       arg);
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
			return cli_bad(src, c, "bad directory '' (empty)");
		return cli_setstr(&o->record_dir, arg) ? cli_bad(src, c, "out of memory") : CLI_RUN;
	case CLI_OPT_RECORD_SIZE:
	case CLI_OPT_RECORD_MAX:
		if (parse_size(arg, &v) || v < REC_MIN_SIZE)
			return cli_bad(src, c, "bad size '%s' (expected at least 64K, e.g. 64M, 1G)",
				       arg);
		*(c == CLI_OPT_RECORD_SIZE ? &o->record_size : &o->record_max) = v;
		return CLI_RUN;
	case CLI_OPT_RECORD_LEVEL:
		if (parse_u64(arg, 0, 9, &v))
			return cli_bad(src, c, "bad level '%s' (expected 0 to 9)", arg);
		o->record_level = (int)v;
		return CLI_RUN;
	}
	return cli_duration(src, c, arg, 1, &o->record_age_ns); /* CLI_OPT_RECORD_AGE */
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
		return cli_bad(src, c, "bad name '%s' (expected 1 to 63 characters)", arg);
	return cli_setstr(&o->name, arg) ? cli_bad(src, c, "out of memory") : CLI_RUN;
}

/* --since, --until: a point in time (parse_time), now. */
static int cli_time(const struct cli_src *src, int c, const char *arg, uint64_t *real)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (parse_time(arg, (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec, real))
		return cli_bad(src, c,
			       "bad time '%s' (expected a duration before now like 10m, a date and "
			       "time like 2026-11-24T13:25:00Z or, local, 2026-11-24 14:25:00, or "
			       "epoch seconds)",
			       arg);
	return CLI_RUN;
}

int cli_filter(int c, const char *arg, struct it_opts *o, const struct cli_src *src)
{
	uint32_t mask;

	switch (c) {
	case 'm':
		return cli_duration(src, c, arg, 0, &o->min_lat_ns);
	case CLI_OPT_SINCE:
		return cli_time(src, c, arg, &o->since_real);
	case CLI_OPT_UNTIL:
		return cli_time(src, c, arg, &o->until_real);
	case 'l':
		if (parse_layers(arg, &mask))
			return cli_bad(src, c,
				       "bad layer list '%s' (expected a comma list of syscall, fs, "
				       "sched, block, nvme, scsi, virtio, qemu, all)",
				       arg);
		o->layers |= mask;
		return CLI_RUN;
	case 'p':
		return cli_list(c, arg, o, src, cli_pid_item);
	case 'c':
		if (!*arg || strlen(arg) >= sizeof(o->comm))
			return cli_bad(src, c, "bad comm '%s' (expected 1 to %zu characters)", arg,
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
	case CLI_OPT_RECORD: case CLI_OPT_RECORD_SIZE: case CLI_OPT_RECORD_MAX:
	case CLI_OPT_RECORD_LEVEL: case CLI_OPT_RECORD_AGE:
		return cli_record(src, c, arg, o);
	case CLI_OPT_MODE: case CLI_OPT_LINK: case CLI_OPT_LISTEN: case CLI_OPT_QEMU_PID:
	case CLI_OPT_LINK_KEY: case CLI_OPT_NAME:
		return cli_modes(src, c, arg, o);
	case CLI_OPT_SAMPLE:
		if (parse_u64(arg, 1, UINT64_MAX, &v))
			return cli_bad(src, c, "bad sample rate '%s' (expected N >= 1: 1 in N)",
				       arg);
		o->sample = v;
		return CLI_RUN;
	case 'D':
		return cli_duration(src, c, arg, 1, &o->duration_ns);
	case 'i':
		return cli_duration(src, c, arg, 1, &o->interval_ns);
	case 'j':
		if (!*arg)
			return cli_bad(src, c, "bad file name '' (empty; use '-' for stdout)");
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
	case CLI_OPT_SYSCALL_HOOKS:
		if (strcmp(arg, "auto") && strcmp(arg, "percall") && strcmp(arg, "raw"))
			return cli_bad(src, c, "bad syscall hooks '%s' (expected auto, raw or percall)",
				       arg);
		return cli_setstr(&o->syscall_hooks, arg) ? cli_bad(src, c, "out of memory") : CLI_RUN;
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
			return cli_bad(src, c, "bad depth '%s' (expected 0 to %d)", arg,
				       CLI_MAX_CG_DEPTH);
		o->metrics_cg_depth = (int)v;
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

/* Without a key, anyone who reaches a tcp listener could feed us: loopback only. */
static int cli_check_listen(const struct it_opts *o, FILE *err)
{
	struct net_addr a;
	char why[128];

	for (int i = 0; !o->link_key && i < o->nr_listens; i++) {
		if (addr_parse(o->listens[i], &a, why, sizeof(why)) || a.kind != ADDR_TCP ||
		    addr_is_loopback(&a))
			continue;
		it_err_to(err, "--listen %s: a tcp listener off the loopback needs --link-key",
			  o->listens[i]);
		return CLI_USAGE;
	}
	return CLI_RUN;
}

/*
 * Host mode joins each guest request to QEMU's host IO by that IO's records:
 * -m and --sample (the always-on profile's -m too) would leave the host IOs
 * unrecorded and the guests' requests unjoined (no_host_io), with nothing
 * dropped or said (seen: a lab run's host daemon #2 under -m 10ms).
 */
static int cli_check_host_thinning(const struct it_opts *o, FILE *err)
{
	char who[PATH_MAX + 32];
	const char *name = o->min_lat_ns ? "min-latency" : "sample";

	if (o->mode != IT_MODE_HOST || (!o->min_lat_ns && o->sample <= 1))
		return CLI_RUN;
	/* the profile's -m, not one given after it */
	if (o->profile && !strcmp(o->profile, "always-on") &&
	    o->min_lat_ns == IT_ALWAYS_ON_MIN_LAT_NS)
		name = "profile";
	it_err_to(err,
		  "%s: --mode host needs a record of every QEMU IO to join the guests' "
		  "requests (thin the guest's records instead)",
		  cli_where(o, name, who, sizeof(who)));
	return CLI_USAGE;
}

/* The cgroup label of /metrics is nothing without the server. */
static int cli_check_metrics(const struct it_opts *o, FILE *err)
{
	char who[PATH_MAX + 32];

	if (o->metrics_addr || o->metrics_cg_depth < 0)
		return CLI_RUN;
	it_err_to(err, "%s needs --metrics",
		  cli_where(o, "metrics-cgroup-depth", who, sizeof(who)));
	return CLI_USAGE;
}

/* Options that only make sense in one mode. */
static int cli_check_mode(const struct it_opts *o, FILE *err)
{
	const char *bad = NULL;

	if (o->mode != IT_MODE_HOST && o->nr_qemu_pids)
		bad = "--qemu-pid needs --mode host";
	else if (o->mode != IT_MODE_HOST && o->nr_listens)
		bad = "--listen needs --mode host";
	else if (o->mode == IT_MODE_STANDALONE && o->nr_links)
		bad = "--link needs --mode guest or --mode host";
	else if (o->mode == IT_MODE_GUEST && o->nr_links > 1)
		bad = "--mode guest takes one --link";
	else if (o->mode == IT_MODE_STANDALONE && o->link_key)
		bad = "--link-key needs --mode guest or --mode host";
	else if (o->record_max < o->record_size)
		bad = "--record-max: must be at least --record-size";
	else if (o->metrics_containers && o->metrics_cg_depth < 0)
		bad = "--metrics-containers: labels the per-cgroup series: needs --metrics-cgroup-depth";
	else if (o->blame && o->metrics_cg_depth < 0)
		bad = "--blame: its series are per cgroup: needs --metrics-cgroup-depth";
	else if (o->blame && (o->min_lat_ns || o->sample > 1))
		bad = "--blame needs a record of every block request: not with --min-latency, "
		      "--sample or --profile always-on";
	if (!bad)
		return cli_check_host_thinning(o, err) ?: cli_check_listen(o, err);
	it_err_to(err, "%s", bad);
	return CLI_USAGE;
}

/*
 * An option that accumulates (its value type says), given on the command
 * line, replaces what the config file said (the first time it is seen there).
 */
static void cli_forget(const struct cli_option *r, struct it_opts *o)
{
	void *field = (char *)o + r->off;
	int *nr = (int *)((char *)o + r->nr);

	switch (r->val) {
	case CLI_V_LAYERS:
		*(uint32_t *)field = 0;
		break;
	case CLI_V_COUNT:
		*(int *)field = 0;
		break;
	case CLI_V_U32S:
	case CLI_V_DEVS:
		*nr = 0;
		break;
	case CLI_V_STRS:
		cli_free_strs(field, nr);
		break;
	default:
		break;
	}
}

/*
 * A first getopt pass looks for --config, --no-config, --help and --version
 * only (cli_parse reports errors). No file for --help/--version.
 */
int cli_config_file(int argc, char **argv, struct it_opts *o, FILE *err, const char **file)
{
	const char *path = NULL;
	int c, no_config = 0, info = 0;

	*file = NULL;
	cli_cmd_init();
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, cli_shortopts, cli_longopts, NULL)) != -1) {
		if (c == CLI_OPT_CONFIG)
			path = optarg;
		else if (c == CLI_OPT_NO_CONFIG)
			no_config = 1;
		else if (c == CLI_OPT_HELP || c == CLI_OPT_VERSION)
			info = 1;
	}
	if (info)
		return CLI_RUN;
	if (path && no_config) {
		it_err_to(err, "--config and --no-config exclude each other");
		return CLI_USAGE;
	}
	if (!path || no_config)
		return CLI_RUN;
	if (cli_setstr(&o->config_path, path)) {
		it_err_to(err, "--config: out of memory");
		return CLI_USAGE;
	}
	*file = o->config_path;
	return CLI_RUN;
}

int cli_parse(int argc, char **argv, struct it_opts *o, FILE *out, FILE *err)
{
	unsigned char seen[CLI_NR_OPTS] = { 0 };
	const struct cli_option *r;
	struct cli_src src;
	int c, ret;

	if (!out)
		out = stdout;
	if (!err)
		err = stderr;
	src = (struct cli_src){ .err = err };
	o->argc = argc;
	o->argv = argv;
	cli_cmd_init();
	optind = 0; /* full re-initialisation of glibc getopt */
	opterr = 0;
	while ((c = getopt_long(argc, argv, cli_shortopts, cli_longopts, NULL)) != -1) {
		if (c == '?' || c == ':') {
			ret = opts_getopt_error(&cli_cmd, c, argc, argv, err);
		} else {
			r = cli_option_of(c);
			if (r && !seen[r - cli_opts]++)
				cli_forget(r, o);
			if (r)
				o->from_line[r - cli_opts] = 0; /* the command line's now */
			ret = cli_apply(c, optarg, o, out, &src);
		}
		if (ret != CLI_RUN)
			goto out;
	}
	if (optind < argc) {
		ret = opts_unexpected(&cli_cmd, argv[optind], err);
	} else {
		ret = cli_check_mode(o, err) ?: cli_check_metrics(o, err);
	}
out:
	fflush(out);
	fflush(err);
	return ret;
}

int cli_check_start(const struct it_opts *o, FILE *err)
{
	char who[PATH_MAX + 32];

	for (int i = 0; i < o->nr_pids; i++) {
		int64_t tgid = procfs_tgid((pid_t)o->pids[i]);

		if (tgid < 0) {
			it_err_to(err, "%s: no process %u", cli_where(o, "pid", who, sizeof(who)),
				  o->pids[i]);
			return CLI_USAGE;
		}
		if ((uint64_t)tgid != o->pids[i]) {
			it_err_to(err, "%s: %u is a thread of process %lld: -p takes process ids",
				  cli_where(o, "pid", who, sizeof(who)), o->pids[i], (long long)tgid);
			return CLI_USAGE;
		}
	}
	return CLI_RUN;
}

_Static_assert(CLI_NR_OPTS <= CLI_MAX_OPTS, "struct it_opts.from_line is too small");

void cli_set_line(struct it_opts *o, int key, unsigned int line)
{
	const struct cli_option *r = cli_option_of(key);

	if (r)
		o->from_line[r - cli_opts] = line;
}

const char *cli_where(const struct it_opts *o, const char *name, char *buf, size_t n)
{
	const struct cli_option *r = cli_option_named(name);
	unsigned int line = r ? o->from_line[r - cli_opts] : 0;

	if (!r)
		snprintf(buf, n, "--%s", name);
	else if (line && o->config_path)
		snprintf(buf, n, "%s:%u: %s", o->config_path, line, r->row.name);
	else
		snprintf(buf, n, "--%s", r->row.name);
	return buf;
}
