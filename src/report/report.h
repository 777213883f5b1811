/* SPDX-License-Identifier: GPL-2.0 */
/*
 * report: `iotracer report PATH...`, a recording (--record segments) read
 * back into the daemon's summary, the slowest requests, JSON lines and a
 * Perfetto trace (docs/record.md). The command table's entry point; the
 * parts of the command share src/report/internal.h, which nothing outside
 * src/report includes but their unit tests.
 */
#ifndef IT_REPORT_REPORT_H
#define IT_REPORT_REPORT_H

/* `iotracer report ARGS...` (argv[0] is "report"); the exit status. */
int report_main(int argc, char **argv);

/* report's table of options: the run options' filters, then its own. */
struct opt_cmd;
const struct opt_cmd *report_opts(void);

#endif /* IT_REPORT_REPORT_H */
