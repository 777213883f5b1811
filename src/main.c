// SPDX-License-Identifier: GPL-2.0
/*
 * iotracer: follow each IO request from the syscall through the fs, sched
 * and block layers, and say where its latency went.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "daemon.h"

int main(int argc, char **argv)
{
	struct it_opts o;
	int ret;

	cli_defaults(&o);
	ret = cli_parse(argc, argv, &o, stdout, stderr);
	if (ret == CLI_RUN)
		ret = it_daemon_run(&o);
	else if (ret == CLI_EXIT_OK)
		ret = 0;
	cli_free(&o);
	return ret;
}
