/* SPDX-License-Identifier: GPL-2.0 */
/*
 * reload: what a SIGHUP's new options change against the running ones, and
 * how each change is applied (docs/config.md, "Reload"). Pure: the daemon
 * does the applying.
 */
#ifndef IT_RELOAD_H
#define IT_RELOAD_H

#include <stddef.h>

#include "service/cli.h" /* struct it_opts, enum reload_kind: an option's row */

struct reload_plan {
	int nr[RELOAD_NR_KINDS]; /* options changed, per kind */
	/* per kind: "min-latency 0 -> 1.00ms; pid - -> 42" ("" when none changed) */
	char what[RELOAD_NR_KINDS][1024];
	/* the names only, per kind: "min-latency, pid" */
	char names[RELOAD_NR_KINDS][256];
};

/* Compare old and new (both after the mode's prepare) option by option. */
void reload_plan(const struct it_opts *old, const struct it_opts *n, struct reload_plan *p);

/*
 * Give *n the running values of the RELOAD_START options (so the options the
 * daemon keeps say what is in force). 0, -ENOMEM, or -EINVAL when a
 * start-only option's value type is not one keep_opt() copies (test_reload).
 */
int reload_keep_start_only(const struct it_opts *old, struct it_opts *n);

/* The long name of rule i and its kind; NULL past the last one (tests). */
const char *reload_rule(int i, enum reload_kind *kind);

#endif /* IT_RELOAD_H */
