// SPDX-License-Identifier: GPL-2.0
/*
 * subopt: a subcommand's getopt loop. See subopt.h.
 */
#include "lib/log.h"
#include "lib/subopt.h"

int subopt_parse(int argc, char **argv, const char *shortopts, const struct option *lo,
		 void (*usage)(FILE *f), int (*one)(void *ctx, int c, const char *arg), void *ctx)
{
	const char *cmd = argv[0];
	int c, ret;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 1;
		}
		if (c == '?' || c == ':') {
			it_err("%s: %s option '%s' (try 'iotracer %s --help')", cmd,
			       c == ':' ? "missing argument to" : "unknown",
			       optind > 0 && optind <= argc ? argv[optind - 1] : "?", cmd);
			return 2;
		}
		ret = one(ctx, c, optarg);
		if (ret)
			return ret;
	}
	return 0;
}
