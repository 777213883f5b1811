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

/*
 * The run options as the daemon takes them: the config file the command line
 * names (cli_config_file), then the command line over it (cli_parse), into
 * *o (from cli_defaults()). cli_parse()'s results; out/err NULL mean
 * stdout/stderr. Call cli_free() whatever it returns.
 */
int config_parse(int argc, char **argv, struct it_opts *o, FILE *out, FILE *err);

#endif /* IT_CONFIG_H */
