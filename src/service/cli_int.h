/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cli internals shared by cli.c (getopt, the checks), cliapply.c (one
 * option's value into struct it_opts) and clitab.c (the table of options),
 * in that order: each calls only the ones after it. Not for other modules:
 * they use cli.h.
 */
#ifndef IT_CLI_INT_H
#define IT_CLI_INT_H

#include "service/cli.h"

#define CLI_PROG "iotracer"
#define CLI_DUR_HINT "e.g. 250us, 10ms, 2s"

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
	CLI_OPT_WRITEBACK,
	CLI_OPT_METRICS,
	CLI_OPT_METRICS_CG_DEPTH,
	CLI_OPT_METRICS_CONTAINERS,
	CLI_OPT_BLAME,
	CLI_OPT_LINK_KEY,
	CLI_OPT_QEMU_UPROBES,
	CLI_OPT_QEMU_STAGES,
	CLI_OPT_RECORD,
	CLI_OPT_RECORD_SIZE,
	CLI_OPT_RECORD_AGE,
	CLI_OPT_RECORD_MAX,
	CLI_OPT_RECORD_LEVEL,
	CLI_OPT_SINK,
	CLI_OPT_SINK_AUTH,
	CLI_OPT_SINK_CA,
	CLI_OPT_SINK_QUEUE,
	CLI_OPT_SINK_SPILL,
	CLI_OPT_SINK_SPILL_MAX,
	CLI_OPT_SINK_TIMEOUT,
	CLI_OPT_SINK_COMPRESS,
	CLI_OPT_FILE_NAMES,
	CLI_OPT_METRICS_FILES,
	CLI_OPT_CONFIG,
	CLI_OPT_NO_CONFIG,
	CLI_OPT_SINCE, /* report's, not run options: cli_time_opts */
	CLI_OPT_UNTIL,
};

/* clitab.c: the table of options, below cli.c and cliapply.c */
/* The row of option code `key`, or NULL. */
const struct cli_option *cli_option_of(int key);
/* getopt_long() over the run options (optind, opterr, optarg as getopt's). */
int cli_getopt(int argc, char **argv);
/* r's index in the table: its slot in struct it_opts.from_line. */
int cli_option_index(const struct cli_option *r);

/* cliapply.c: below cli.c */
/* Replace *slot by a copy of s. */
int cli_setstr(char **slot, const char *s);

#endif /* IT_CLI_INT_H */
