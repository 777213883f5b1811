/* SPDX-License-Identifier: GPL-2.0 */
/*
 * config: the INI config file (docs/config.md). Keys are the long option
 * names; an option's row in cli.c's table names the section that accepts it;
 * every value goes through the command line's own per-option code (cli_apply).
 */
#ifndef IT_CONFIG_H
#define IT_CONFIG_H

#include <stdio.h>

struct it_opts;

/*
 * Apply the options of the INI file `path` to *o, in file order. Returns
 * CLI_RUN, or CLI_USAGE after one line "iotracer: FILE:LINE: ..." (or
 * "iotracer: FILE: ..." when it cannot be read) to err.
 */
int config_read(const char *path, struct it_opts *o, FILE *err);

#endif /* IT_CONFIG_H */
