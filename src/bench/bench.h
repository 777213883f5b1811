/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench: `iotracer bench`, what leaving a tracer on costs, measured under fio
 * (docs/bench.md). The command table's entry point; the parts of the command
 * share src/bench/internal.h, which nothing outside src/bench includes.
 */
#ifndef IT_BENCH_H
#define IT_BENCH_H

/* `iotracer bench ARGS...`: argv[0] is "bench". Returns the exit status. */
int bench_main(int argc, char **argv);

/* bench's table of options (cmdopts.c). */
struct opt_cmd;
const struct opt_cmd *bench_opts(void);

#endif /* IT_BENCH_H */
