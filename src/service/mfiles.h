/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mfiles: /metrics per file (--metrics-files K; docs/metrics.md "Per file"):
 * the kernel's block aggregation keyed by file (IT_AGG_FILE) as the
 * iotracer_file_* counters of K files at most, the rest under file="other".
 * A file gets a label when a place is free, it has the most bytes of the
 * files without one and at least 1/(2K) of all the bytes counted so far; a
 * label given stays for the run (its counters start from 0 then, "other"
 * keeps what came before), so every series is a counter and the series are
 * bounded: (K + 1) x ops. Pure.
 */
#ifndef IT_SERVICE_MFILES_H
#define IT_SERVICE_MFILES_H

#include <stdio.h>

#include "records/agg.h"
#include "records/fname.h"

struct mfiles;

/* k: the labelled files at most (1..100). NULL with errno. */
struct mfiles *mfiles_new(int k);
void mfiles_free(struct mfiles *m);
/*
 * The iotracer_file_* families of the aggregation's entries e (names: the
 * files' names; a file without one is labelled "[MAJ:MIN] ino N"). Counts
 * that went back (a re-attach restarts the kernel's) restart the labels'.
 */
void mfiles_write(struct mfiles *m, FILE *f, const struct agg_entry *e, int nr,
		  struct fn_cache *names);

#endif /* IT_SERVICE_MFILES_H */
