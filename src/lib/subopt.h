/* SPDX-License-Identifier: GPL-2.0 */
/*
 * subopt: the getopt loop of a subcommand (`iotracer report`, `iotracer top`):
 * --help (long option code 'h') prints the usage, an unknown option or a
 * missing argument is one error line naming it, every other option goes to
 * one(). Pure user space (getopt and log only).
 */
#ifndef IT_SUBOPT_H
#define IT_SUBOPT_H

#include <getopt.h>
#include <stdio.h>

/*
 * Parse argv (argv[0]: the subcommand, e.g. "top"); shortopts start with ':'.
 * Returns 0 with optind at the first operand, 1 after --help (printed to
 * stdout), 2 after a usage error (printed), or what one() returned when not 0.
 */
int subopt_parse(int argc, char **argv, const char *shortopts, const struct option *lo,
		 void (*usage)(FILE *f), int (*one)(void *ctx, int c, const char *arg), void *ctx);

#endif /* IT_SUBOPT_H */
