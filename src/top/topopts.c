// SPDX-License-Identifier: GPL-2.0
/*
 * topopts: `iotracer top`'s options and keyword tables. See topopts.h.
 */
#include <stddef.h>

#include "lib/opts.h"
#include "service/cli.h"
#include "top/topopts.h"
#include "top/view.h"

static const char *const group_names[TG_NR] = { "process", "cgroup", "container", "pod", "file" };
const char *top_group_kw(int i)
{
	return i >= 0 && i < TG_NR ? group_names[i] : NULL;
}

/* top's own rows; the filters' are the run options' (top_rows). */
static const struct opt_row top_own[] = {
	{ .name = "interval", .key = 'i', .arg = "DUR", .help = "refresh every DUR (default 1s)" },
	{ .name = "batch",
	  .key = 'b',
	  .help = "plain tables, one per interval, no terminal control; at\n"
		  "the end a table of the totals since the start" },
	{ .name = "iterations",
	  .key = 'n',
	  .arg = "N",
	  .help = "stop after N intervals (default: until q or SIGINT)" },
	{ .name = "sort",
	  .key = 's',
	  .arg = "KEY",
	  .kw = tview_sort_kw,
	  .help = "{} (default iops)" },
	{ .name = "cgroups", .key = 'C', .help = "rows per cgroup instead of per process" },
	{ .name = "group",
	  .key = TOP_OPT_GROUP,
	  .arg = "KEY",
	  .kw = top_group_kw,
	  .help = "rows per {}\n"
		  "(default process; cgroup: as -C; container, pod:\n"
		  "docs/cgroups.md, \"Containers and pods\")" },
	{ .name = "rows",
	  .key = 'r',
	  .arg = "N",
	  .help = "at most N rows (default: what fits the terminal; -b: all)" },
	{ .name = "blame",
	  .key = TOP_OPT_BLAME,
	  .help = "columns BLAMED% and CULPRIT: each row's top culprit\n"
		  "(whose requests held the device while the row's waited)\n"
		  "and its share of the row's blamed wait, 1 s late; reads\n"
		  "a record of every block request (docs/blame.md); not\n"
		  "with -p or --cgroup" },
};
static const struct opt_row top_help = { .name = "help",
					 .key = TOP_OPT_HELP,
					 .help = "print this help and exit" };
/* The filters the kernel's aggregation can apply: the run options' rows. */
static const char *const top_filters[] = { "dev", "pid", "cgroup" };
#define TOP_NR_FILTERS (sizeof(top_filters) / sizeof(top_filters[0]))
#define TOP_NR_OWN (sizeof(top_own) / sizeof(top_own[0]))

static struct opt_row top_filter_rows[TOP_NR_FILTERS];
static const struct opt_row *top_rows[TOP_NR_OWN + TOP_NR_FILTERS + 2];

static const struct opt_cmd top_cmd = {
	.prog = "iotracer top",
	.head = "Usage: iotracer top"
		" [options]   live block IO per process and device (docs/top.md)\n"
		"Every interval: IOPS, KB/s, average and p99 latency (queue to completion), the\n"
		"time in the queue (queue to issue) and on the device (issue to completion), per\n"
		"process (or cgroup) x device x op. Counted in the kernel: no per-request records.\n"
		"\n",
	.tail = "Keys: q quit; i b a p u d sort by iops, bytes, avg, p99, queue, device; s next\n"
		"sort key; c rows per cgroup, container, pod, process in turn; f rows per file\n"
		"(again: back).\n"
		"Exit status: 0 success, 1 runtime failure, 2 bad usage.\n",
	.rows = top_rows,
};

const struct opt_cmd *top_opts(void)
{
	size_t n = 0;

	if (top_rows[0])
		return &top_cmd;
	for (size_t i = 0; i < TOP_NR_OWN; i++)
		top_rows[n++] = &top_own[i];
	for (size_t i = 0; i < TOP_NR_FILTERS; i++) {
		top_filter_rows[i] = *cli_row(top_filters[i]);
		top_filter_rows[i].group = NULL;
		top_rows[n++] = &top_filter_rows[i];
	}
	top_rows[n] = &top_help;
	return &top_cmd;
}
