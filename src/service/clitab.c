// SPDX-License-Identifier: GPL-2.0
/*
 * cli's table of options (see cli.h and docs/cli.md): the rows, in --help
 * order, and what is read from them: getopt's tables, --help, an option by
 * index, name or code. Below cli.c and cliapply.c, which call it; it calls
 * neither.
 */
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "iotracer.h"
#include "lib/abi.h"
#include "records/record.h"
#include "service/cli.h"
#include "service/cli_int.h"
#include "sink/sink.h"

/*
 * The keyword options' values, the tables cli_apply() parses them with (by the
 * row's .kw): their --help lists and "expected" lists come from here too.
 */
static const char *const cli_compress_names[] = { "fast", "zstd", "gzip" };
static const char *const cli_uprobes_names[] = { "auto", "always" };
static const char *const cli_syscall_hooks_names[] = { "auto", "raw", "percall" };
static const char *const cli_writeback_names[] = { "files", "pages", "off" };
static const char *const cli_profile_names[] = { "always-on", "full" };
/* by enum it_mode */
static const char *const cli_mode_names[] = { "standalone", "guest", "host" };
OPTS_KW_TABLE(cli_kw_compress, cli_compress_names)
OPTS_KW_TABLE(cli_kw_uprobes, cli_uprobes_names)
OPTS_KW_TABLE(cli_kw_syscall_hooks, cli_syscall_hooks_names)
OPTS_KW_TABLE(cli_kw_writeback, cli_writeback_names)
OPTS_KW_TABLE(cli_kw_profile, cli_profile_names)
OPTS_KW_TABLE(cli_kw_mode, cli_mode_names)

/* -l's layers: abi's names, from its first (what parse_layers takes, with "all"). */
static const char *cli_kw_layers(int i)
{
	return i >= 0 && (unsigned int)i < abi_layers.n - abi_layers.first ?
		       abi_layers.names[abi_layers.first + (unsigned int)i] :
		       NULL;
}

#define F(field) .off = offsetof(struct it_opts, field)
#define LIST(field, count) F(field), .nr = offsetof(struct it_opts, count)

/*
 * The run options, in --help order. A new option is a row here and its case
 * in cli_apply() (cliapply.c; plus a CLI_OPT_* code in cli_int.h when it has no short letter); the
 * rest (getopt, --help, config sections, reload rules) is read from the row.
 */
/* One option a few lines, as before .row (clang-format puts a field a line). */
/* clang-format off */
static const struct cli_option cli_opts[] = {
	{ .row.name = "layers", .row.key = 'l', .row.arg = "LIST", .section = "",
	  .reload = RELOAD_REATTACH, .val = CLI_V_LAYERS, F(layers),
	  .row.group = "Filters (all given filters must match):",
	  .row.kw = cli_kw_layers,
	  .row.help = "layers to trace (default: all that attach), a comma\n"
		      "list of {} or all" },
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
	  .row.help = "only IO on this file or block device, or on the files\n"
		      "below this directory (report: or whose recorded name\n"
		      "matches PATH as a pattern: *, ?, [...])" },
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
	  .unset = "auto", .row.kw = cli_kw_syscall_hooks,
	  .row.help = "the syscall layer's hooks, one of {}:\n"
		      "auto (default: the file systems' read/write paths where\n"
		      "fentry or kprobes work, so other syscalls run no program;\n"
		      "else percall, or raw where tracefs lacks it), raw (one\n"
		      "raw_syscalls pair every syscall runs, exact) or percall\n"
		      "(a tracepoint pair per traced syscall;\n"
		      "skipped runs counted; docs/hooks.md, \"The tax\")" },
	{ .row.name = "writeback", .row.key = CLI_OPT_WRITEBACK, .row.arg = "MODE", .section = "",
	  .reload = RELOAD_REATTACH, .val = CLI_V_STR, F(writeback), .unset = "pages",
	  .row.kw = cli_kw_writeback,
	  .row.help = "who dirtied a block write's pages ({}):\n"
		      "files (the bytes each process dirtied in each file, from\n"
		      "its write calls; a request split over its file's\n"
		      "dirtiers), pages (a note per dirtied page: exact inside a\n"
		      "file, dearer) or off.\n"
		      "Default: files with --profile always-on, else pages" },
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
	  .row.kw = cli_kw_profile,
	  .row.help = "one of {}. always-on: histograms of every\n"
		      "request in the kernel, records only of requests >= 10ms,\n"
		      "no live lines (what is cheap enough to leave on); full: a\n"
		      "record per request (the default). Later options\n"
		      "override it" },
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
	/* the sink, its sender thread and spill are set up at start (docs/fleet.md) */
	{ .row.name = "sink", .row.key = CLI_OPT_SINK, .row.arg = "URL", .section = "sink",
	  .reload = RELOAD_START, .val = CLI_V_STR, F(sink_url),
	  .row.help = "also send every request to a ClickHouse table:\n"
		      "clickhouse://[USER@]HOST:PORT/DB.TABLE (HTTPS when the server\n"
		      "offers it; clickhouses:// requires it). Not in the static\n"
		      "build (docs/fleet.md)" },
	{ .row.name = "sink-auth", .row.key = CLI_OPT_SINK_AUTH, .row.arg = "FILE",
	  .section = "sink", .reload = RELOAD_START, .val = CLI_V_STR, F(sink_auth),
	  .row.help = "the password: FILE's first line (mode 0600, never on the\n"
		      "command line)" },
	{ .row.name = "sink-ca", .row.key = CLI_OPT_SINK_CA, .row.arg = "FILE", .section = "sink",
	  .reload = RELOAD_START, .val = CLI_V_STR, F(sink_ca),
	  .row.help = "trust this CA (PEM) for the server's certificate\n"
		      "(default: the system's)" },
	{ .row.name = "sink-queue", .row.key = CLI_OPT_SINK_QUEUE, .row.arg = "SIZE",
	  .section = "sink", .reload = RELOAD_START, .val = CLI_V_SIZE, F(sink_queue),
	  .row.help = "memory for rows the server has not taken yet (default 64M);\n"
		      "past it, rows go to the spill directory" },
	{ .row.name = "sink-spill", .row.key = CLI_OPT_SINK_SPILL, .row.arg = "DIR",
	  .section = "sink", .reload = RELOAD_START, .val = CLI_V_STR, F(sink_spill),
	  .unset = "/var/lib/iotracer/sink",
	  .row.help = "spill directory, --record's format, replayed when the server\n"
		      "is back (default /var/lib/iotracer/sink; none: drop, counted)" },
	{ .row.name = "sink-spill-max", .row.key = CLI_OPT_SINK_SPILL_MAX, .row.arg = "SIZE",
	  .section = "sink", .reload = RELOAD_START, .val = CLI_V_SIZE, F(sink_spill_max),
	  .row.help = "spill directory size, at most (default 1G; past it new rows\n"
		      "are dropped, counted)" },
	{ .row.name = "sink-compress", .row.key = CLI_OPT_SINK_COMPRESS, .row.arg = "KIND",
	  .section = "sink", .reload = RELOAD_START, .val = CLI_V_STR, F(sink_compress),
	  .unset = "fast", .row.kw = cli_kw_compress,
	  .row.help = "one of {}. fast, the default:\n"
		      "ClickHouse's own compressed format, zstd for the columns\n"
		      "that compress, the times, offsets and ids stored (~180\n"
		      "bytes a row); zstd: every column (~35 bytes a row, ~1.7x\n"
		      "the daemon's instructions); gzip: HTTP Content-Encoding" },
	{ .row.name = "sink-timeout", .row.key = CLI_OPT_SINK_TIMEOUT, .row.arg = "DUR",
	  .section = "sink", .reload = RELOAD_START, .val = CLI_V_DUR, F(sink_timeout_ns),
	  .row.help = "a request to the server, at most (default 10s; then sent\n"
		      "again, counted)" },
	{ .row.name = "no-live", .row.key = CLI_OPT_NO_LIVE, .section = "", .reload = RELOAD_START,
	  .val = CLI_V_NOT_FLAG, F(live),
	  .row.help = "no live per-request lines (summaries only)" },
	{ .row.name = "ring-size", .row.key = CLI_OPT_RING_SIZE, .row.arg = "SIZE", .section = "",
	  .reload = RELOAD_REATTACH, .val = CLI_V_SIZE, F(ring_size),
	  .row.help = "record buffer memory, a power of two from 4K to 1G (default 8M)" },
	{ .row.name = "file-names", .row.key = CLI_OPT_FILE_NAMES, .row.arg = "N", .section = "",
	  .reload = RELOAD_REATTACH, .val = CLI_V_INT, F(file_names),
	  .row.help = "name the files of the records: the paths of N files at most\n"
		      "are kept, the least used forgotten (default 8192, 16 to\n"
		      "1048576; 0: no names, dev and inode only; docs/json.md)" },
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
	{ .row.name = "metrics-files", .row.key = CLI_OPT_METRICS_FILES, .row.arg = "K",
	  .section = "metrics", .reload = RELOAD_START, .val = CLI_V_INT, F(metrics_files),
	  .row.help = "/metrics: per-file series of the K files with the most\n"
		      "bytes, the rest as file=\"other\" (0 to 100; default 0:\n"
		      "none; docs/metrics.md)" },
	{ .row.name = "blame", .row.key = CLI_OPT_BLAME, .section = "metrics",
	  .reload = RELOAD_START, .val = CLI_V_FLAG, F(blame),
	  .row.help = "/metrics: who slowed whom, blamed seconds per device,\n"
		      "victim and culprit cgroup (--mode host: VM); with -j a\n"
		      "blame line per written request (host mode: on each\n"
		      "joined guest request), with --record the same in the\n"
		      "recording (docs/blame.md). Not with --sample" },
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
	  .row.kw = cli_kw_mode,
	  .row.help = "one of {}. standalone (default),\n"
		      "guest (inside a VM: stream virtio requests to the host)\n"
		      "or host (trace QEMU, join guests)" },
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
	{ .row.name = "qemu-uprobes", .row.key = CLI_OPT_QEMU_UPROBES, .row.arg = "WHEN",
	  .section = "link", .reload = RELOAD_REATTACH, .val = CLI_V_STR, F(qemu_uprobes),
	  .unset = "auto", .row.kw = cli_kw_uprobes,
	  .row.help = "host: one of {}. auto (default: QEMU's uprobes\n"
		      "only until a VM's guest-physical buffer addresses map to\n"
		      "QEMU's, and to re-check; guests that send none keep them)\n"
		      "or always (every guest IO: 1-2 uprobe hits, QEMU's submit\n"
		      "stamp)" },
	{ .row.name = "qemu-stages", .row.key = CLI_OPT_QEMU_STAGES, .section = "link",
	  .reload = RELOAD_REATTACH, .val = CLI_V_FLAG, F(qemu_stages),
	  .row.help = "host: keep the virtio_notify uprobe for the notify\n"
		      "stages where KVM's interrupt tracepoints give none (TCG):\n"
		      "about one uprobe hit per completion batch" },
	{ .row.name = "name", .row.key = CLI_OPT_NAME, .row.arg = "NAME", .section = "link",
	  .reload = RELOAD_REATTACH, .val = CLI_V_STR, F(name),
	  .row.help = "this side's name in the link hello and the host column of\n"
		      "--sink's rows (default: hostname)" },
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

_Static_assert(CLI_NR_OPTS <= CLI_MAX_OPTS, "struct it_opts.from_line is too small");

const struct opt_cmd *cli_table(void)
{
	cli_cmd_init();
	return &cli_cmd;
}

int cli_getopt(int argc, char **argv)
{
	cli_cmd_init();
	return getopt_long(argc, argv, cli_shortopts, cli_longopts, NULL);
}

int cli_option_index(const struct cli_option *r)
{
	return (int)(r - cli_opts);
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
const struct cli_option *cli_option_of(int key)
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
