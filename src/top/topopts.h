/* SPDX-License-Identifier: GPL-2.0 */
/*
 * topopts: `iotracer top`'s table of options (lib/opts.h rows) and its keyword
 * tables, pure (no libbpf): top.c parses with them, the unit tests read them.
 */
#ifndef IT_TOP_TOPOPTS_H
#define IT_TOP_TOPOPTS_H

struct opt_cmd;

/* Long-only options of top's own (codes above every run option's). */
enum { TOP_OPT_HELP = 1024, TOP_OPT_GROUP, TOP_OPT_BLAME };

/* --group's keys, by top_group_kw. */
enum top_group { TG_PROCESS, TG_CGROUP, TG_CONTAINER, TG_POD, TG_FILE, TG_NR };

/* --group's keyword of enum top_group i, NULL past the last (an opt_row's .kw). */
const char *top_group_kw(int i);

/* top's options: its own rows, then the run options' filters top applies, then --help. */
const struct opt_cmd *top_opts(void);

#endif /* IT_TOP_TOPOPTS_H */
