// SPDX-License-Identifier: GPL-2.0
/*
 * iotracer: follow each IO request from the syscall through the fs, sched
 * and block layers, and say where its latency went.
 */
#include <stdio.h>
#include <string.h>

#include "bench/bench.h"
#include "service/cli.h"
#include "service/config.h"
#include "service/daemon.h"
#include "mode/mode.h"
#include "report/report.h"
#include "top/top.h"

/* Subcommands: `iotracer NAME ARGS...` runs fn(argc - 1, argv + 1). */
static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "bench", bench_main },
	{ "report", report_main },
	{ "top", top_main },
};

/* The modes of the daemon (--mode), by enum it_mode: standalone is the daemon alone. */
static const struct mode_ops *const modes[] = {
	[IT_MODE_STANDALONE] = NULL,
	[IT_MODE_GUEST] = &guest_mode_ops,
	[IT_MODE_HOST] = &host_mode_ops,
};

int main(int argc, char **argv)
{
	struct it_opts o;
	int ret;

	for (size_t i = 0; argc > 1 && i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);

	cli_defaults(&o);
	ret = config_parse(argc, argv, &o, stdout, stderr);
	if (ret == CLI_RUN)
		ret = cli_check_start(&o, stderr);
	if (ret == CLI_RUN)
		ret = daemon_run(&o, modes);
	else if (ret == CLI_EXIT_OK)
		ret = 0;
	cli_free(&o);
	return ret;
}
