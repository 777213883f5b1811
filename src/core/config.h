/* SPDX-License-Identifier: GPL-2.0 */
/*
 * config: the INI config file (docs/config.md). Keys are the long option
 * names; each section accepts its own list of them; every value goes through
 * the command line's own per-option code (cli_apply).
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
 * The section that accepts long option `name` ("" is the top of the file,
 * before any [section]), or NULL: not a config key (--help, --config, ...).
 */
const char *config_section_of(const char *name);

/* The keys of section i (NULL-terminated), and its name; NULL past the last one. */
const char *const *config_section_keys(int i, const char **name);

#endif /* IT_CONFIG_H */
