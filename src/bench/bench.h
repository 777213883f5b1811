/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench: `iotracer bench`, what leaving a tracer on costs, measured under fio
 * (docs/bench.md).
 *
 * Runs fio workloads on a loop device in rounds (none, tracer 1, tracer 2, ...)
 * and compares each tracer with the no-tracer run of the same round. Needs
 * root, fio, loop devices; no libbpf (the BPF run-time statistics come from
 * /proc/PID/fdinfo and the raw bpf(2) syscall), so this file is also linked
 * into the unit tests, which exercise the pure helpers declared below.
 */
#ifndef IT_BENCH_H
#define IT_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* `iotracer bench ARGS...`: argv[0] is "bench". Returns the exit status. */
int bench_main(int argc, char **argv);

/* ---------------------------------------------------------------- statistics */

struct bstat {
	int n; /* samples (NaN samples are ignored) */
	double med, min, max; /* NaN when n == 0 */
};

/* Median of v[0..n) (NaNs ignored; mean of the two middle values for even n). */
double bench_median(const double *v, int n);
/* Median, min and max of v[0..n), NaNs ignored. */
void bench_stat(const double *v, int n, struct bstat *out);

/* ---------------------------------------------------------------- CPU accounting */

/* One reading of /proc/stat. */
struct cpu_snap {
	uint64_t idle_ticks; /* idle + iowait of the "cpu" line, USER_HZ ticks */
	int ncpu; /* cpuN lines */
	uint64_t t_ns; /* CLOCK_MONOTONIC when read */
};

/* Parse /proc/stat text (t_ns is left alone). 0 or -EINVAL. */
int bench_parse_proc_stat(const char *text, struct cpu_snap *s);

/*
 * Whole-system busy time between two readings, from idle time only (exact,
 * unlike the user/system tick samples): busy = ncpu * elapsed - Δ(idle+iowait).
 * bench_busy_ns: CPU nanoseconds busy over all CPUs (may be slightly negative
 * from the 1/USER_HZ rounding of idle). bench_busy_pct: the same as an average
 * percentage per core (100 = every core busy all the time), like sar's %.
 */
double bench_busy_ns(const struct cpu_snap *a, const struct cpu_snap *b, long user_hz);
double bench_busy_pct(const struct cpu_snap *a, const struct cpu_snap *b, long user_hz);

/* First field of /proc/PID/task/TID/schedstat: time on CPU in ns. 0 or -EINVAL. */
int bench_parse_schedstat(const char *text, uint64_t *run_ns);
/* Sum of the run time of every thread of pid, from /proc/PID/task/ * /schedstat (ns); 0 if gone. */
uint64_t bench_proc_cpu_ns(pid_t pid);

/* "Key:   1234 kB" line of /proc/PID/status -> 1234. 0, -ENOENT or -EINVAL. */
int bench_parse_status_kb(const char *text, const char *key, uint64_t *kb);

/* ---------------------------------------------------------------- BPF programs */

#define BENCH_MAX_PROGS 128

struct bench_prog {
	uint32_t id;
	char name[48];
	uint64_t run_time_ns, run_cnt;
};

/*
 * /proc/PID/fdinfo/FD text of a BPF program fd -> id and run statistics.
 * Returns 1 if it is a program (prog_id: line), 0 if not, -EINVAL if malformed.
 */
int bench_parse_fdinfo_prog(const char *text, struct bench_prog *p);

/*
 * Name of type type_id in a raw BTF blob (header, types, strings), e.g. the
 * BTF_KIND_FUNC of a program's first func_info: its full function name (the
 * kernel keeps only 15 characters of a program name). 0, -EINVAL, -ENOENT.
 */
int bench_btf_name(const void *btf, size_t len, uint32_t type_id, char *buf, size_t n);

/* ---------------------------------------------------------------- JSON reader */

/* A small JSON DOM, enough for fio's output and iotracer's summary line. */
enum bj_type { BJ_NULL, BJ_BOOL, BJ_NUM, BJ_STR, BJ_ARR, BJ_OBJ };

struct bj {
	enum bj_type t;
	double num; /* BJ_NUM; BJ_BOOL: 0/1 */
	char *str; /* BJ_STR */
	char *key; /* member name inside an object */
	struct bj *child, *next; /* BJ_ARR/BJ_OBJ members, in order */
};

/* Parse one JSON value (surrounding white space allowed). NULL on error. */
struct bj *bj_parse(const char *s, size_t n);
void bj_free(struct bj *v);
/* Member KEY of an object (NULL if v is not an object or has no such member). */
const struct bj *bj_get(const struct bj *v, const char *key);
/* Dotted path "a.b.c" of object members (keys without dots). */
const struct bj *bj_path(const struct bj *v, const char *path);
/* Number at path, or def when absent / not a number. */
double bj_num(const struct bj *v, const char *path, double def);

/* ---------------------------------------------------------------- fio and tracer output */

struct fio_res {
	double iops; /* sum over jobs, read + write */
	uint64_t ios; /* total_ios over jobs, read + write */
	double lat_mean_ns; /* completion latency, mean weighted by IO count */
	double lat_p99_ns; /* p99 of the job direction with the most IOs */
	int jobs;
	uint64_t errors; /* sum of jobs[].error */
};

/* fio --output-format=json text (junk before the first '{' is skipped). 0 or -EINVAL. */
int bench_parse_fio(const char *text, size_t n, struct fio_res *r);

struct tracer_sum {
	int64_t requests, records, drops; /* -1 = unknown */
	/* records and counted drops by layer (-1 = unknown): checked against fio and the kernel */
	int64_t rec_syscall, rec_block, rec_uring, rec_aio, drops_block, drops_other;
	char drops_detail[160]; /* non-zero drop counters: "block.ringbuf=3 ..." */
};

/*
 * The final summary of an iotracer run: the last line of its -j output with
 * "type":"summary" and "final":true, or (text output) the last
 * "=== final summary after ...: N requests, N unjoined, N dropped ===" line.
 * Returns 0 if one was found, -ENOENT if not.
 */
int bench_parse_tracer_summary(const char *text, size_t n, struct tracer_sum *s);

/* ---------------------------------------------------------------- SVG chart */

struct svg_bar {
	const char *group; /* workload: bars with the same group are drawn together */
	const char *label; /* tracer */
	double value, lo, hi; /* median and min-max (lo/hi NaN: no whisker) */
	int color; /* index into the palette */
};

struct svg_panel {
	const char *title; /* e.g. "added CPU, % per core" */
	const struct svg_bar *bars;
	int nbars;
	double limit; /* a target line (NaN: none) */
	const char *limit_label;
};

/*
 * A horizontal bar chart, one panel after the other, as a standalone SVG
 * document (malloc'd, NUL terminated; NULL on ENOMEM). Text is XML-escaped.
 */
char *svg_chart(const char *title, const struct svg_panel *panels, int npanels);

/* XML-escape s into buf (truncated to n, NUL terminated). Returns buf. */
char *svg_escape(const char *s, char *buf, size_t n);

#endif /* IT_BENCH_H */
