/* SPDX-License-Identifier: GPL-2.0 */
/*
 * top's view (view.c, pure, unit-tested): two snapshots of the kernel's aggregation
 * (records/agg.h) into rates per process (or cgroup) x device x op, sorted, printed as
 * the table. The driver (top.c) reads the map and the terminal.
 */
#ifndef IT_TOP_VIEW_H
#define IT_TOP_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "records/agg.h"

enum tview_sort { TV_IOPS = 0, TV_BYTES, TV_AVG, TV_P99, TV_QUEUE, TV_DEVICE, TV_SORT_MAX };

/* One row of the table: a process (or cgroup) on a device, one op, over the last interval. */
struct tview_row {
	uint32_t tgid; /* 0 in cgroup rows */
	uint64_t cgroup_id;
	uint32_t dev;
	uint8_t op;
	char comm[16];
	double iops, bps; /* per second over the interval */
	uint64_t avg_ns, p99_ns, queue_ns, device_ns; /* of the interval's requests */
	uint64_t ios, bytes; /* since the start */
};

struct tview_opts {
	int by_cgroup; /* rows per cgroup, not per process */
	enum tview_sort sort;
	int max_rows; /* rows printed at most (0: all) */
	int width; /* terminal columns: columns dropped or cut so no line wraps (0: no limit) */
	int ansi; /* clear the screen first, invert the header */
	const char *(*dev_name)(uint32_t dev, void *ctx);
	const char *(*cgroup)(uint64_t id, void *ctx); /* NULL result: unknown */
	void *ctx;
	const char *group_col; /* the last column's title; NULL: "CGROUP" */
	/*
	 * --blame: the row's top culprit's name (into name) and its share of the
	 * row's blamed wait in % (docs/top.md "Blame"); over the interval, or the run
	 * (totals). 0: no culprit ("-"). NULL: no BLAMED% and CULPRIT columns.
	 */
	int (*blame)(const struct tview_row *r, int totals, char *name, size_t n, double *pct,
		     void *ctx);
};

/*
 * Rows per container or pod: each entry's cgroup id becomes fold's (the id of
 * one cgroup standing for all of its container's or pod's), entries that then
 * share a key are summed; sorted as tview_sort_snapshot. Returns the new count.
 */
int tview_fold(struct agg_entry *e, int n, uint64_t (*fold)(uint64_t id, void *ctx), void *ctx);

/* Sort a snapshot by key: tview_rows wants prev sorted. */
void tview_sort_snapshot(struct agg_entry *e, int n);
/*
 * Rows from two snapshots (map entries, summed over CPUs) dt_ns apart: each
 * key of now with its delta since prev (sorted by tview_sort_snapshot; a key
 * new in now counts whole; prev NULL: every key counts whole).
 * Only rows that did IO in the interval. by_cgroup folds the processes of a
 * cgroup. *rows malloc'd; returns the number or -ENOMEM.
 */
int tview_rows(const struct agg_entry *now, int nr, const struct agg_entry *prev, int nr_prev,
	       uint64_t dt_ns, int by_cgroup, struct tview_row **rows);
/* Rows since the start (the totals of now; iops/bps over elapsed_ns); for -b's last table. */
int tview_totals(const struct agg_entry *now, int nr, uint64_t elapsed_ns, int by_cgroup,
		 struct tview_row **rows);
void tview_sort(struct tview_row *rows, int n, enum tview_sort key);
/*
 * The header line and the table. title: the first line (time, interval, keys).
 * With o->width the columns narrow terminals need least go first (QUEUE, DEVICE,
 * then COMM is cut to 10 and CGROUP, kept while 10 columns are left, to its tail;
 * with --blame's columns still too wide, P99, AVG, then CULPRIT is cut to 12).
 */
void tview_print(FILE *f, const char *title, const struct tview_row *rows, int n,
		 const struct tview_opts *o);
/* max_rows for a terminal of term_rows lines: the title, header and cut line stay on it. */
int tview_fit(int term_rows);
/* -b's totals table (IOS, BYTES since the start), columns aligned; per cgroup no PID, COMM. */
void tview_print_totals(FILE *f, const struct tview_row *rows, int n, const struct tview_opts *o);
/* "iops", "bytes", ... and back; -1: unknown. */
const char *tview_sort_name(enum tview_sort s);
int tview_sort_of(const char *name);
/* -s's keyword i, NULL past the last (an opt_row's .kw). */
const char *tview_sort_kw(int i);

#endif /* IT_TOP_VIEW_H */
