/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The parts of `iotracer bench` and what they share (private to src/bench).
 *
 *   cmd.c          options -> plan -> run loop -> reports (bench_main)
 *   workload.c     the fio workloads and presets
 *   tracer.c       the tracers: names, their scripts, their command lines
 *   target.c       loop devices, backing files, refusing the wrong device
 *   child.c        spawning, waiting for and stopping child processes; signals
 *   run.c          one measured run
 *   bpfstats.c     BPF program run-time statistics (libbpf)
 *   parse_out.c    fio's JSON and the tracer's final summary
 *   aggregate.c    medians over the runs, the unreported-drops oracles
 *   checks.c       the overhead targets, MET/MISS
 *   report.c       progress lines and the text tables
 *   report_json.c  --json; report_svg.c --svg (svg.c draws)
 *
 * All state of one invocation lives in struct bench, passed down; file-scope
 * mutable state is only what the signal handler needs (child.c).
 */
#ifndef IT_BENCH_INTERNAL_H
#define IT_BENCH_INTERNAL_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "lib/procfs.h"

#ifndef IT_VERSION
#define IT_VERSION "dev"
#endif

#define IT_MKDEV_BENCH(ma, mi) ((uint32_t)(ma) << 20 | (uint32_t)(mi)) /* kernel dev_t */

/* ---------------------------------------------------------------- statistics (aggregate.c) */

struct bstat {
	int n; /* samples (NaN samples are ignored) */
	double med, min, max; /* NaN when n == 0 */
};

/* Median of v[0..n) (NaNs ignored; mean of the two middle values for even n). */
double bench_median(const double *v, int n);
/* Median, min and max of v[0..n), NaNs ignored. */
void bench_stat(const double *v, int n, struct bstat *out);

/* ---------------------------------------------------------------- fio and tracer output (parse_out.c) */

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

/* ---------------------------------------------------------------- workloads (workload.c) */

enum { M_CPU, M_IOPS }; /* what a workload's overhead is read from */
enum { P_REFERENCE = 1, P_MAXRATE = 2, P_LAYERS = 4 };

struct workload {
	int preset;
	const char *name, *desc;
	int ram; /* RAM-backed loop device */
	int metric;
	const char *args; /* fio job options, after the global ones */
	int asked_iops; /* the fio rate_iops of all jobs together; 0: as fast as it goes */
};

#define NR_WLS 7
extern const struct workload bench_wls[NR_WLS];

const char *preset_name(int p);
/* "reference,maxrate" -> P_* mask. 0 or -EINVAL. */
int parse_presets(const char *s, unsigned *mask);
/* Index of a workload by name, -1. */
int find_wl(const char *name);

/* ---------------------------------------------------------------- tracers (tracer.c) */

enum tkind { T_NONE, T_IOT, T_IOT_NOJSON, T_BT_HIST, T_BT_PRINT };

struct tracer {
	enum tkind k;
	char name[64]; /* as given: "iotracer", "iotracer:block", ... */
	char layers[64]; /* iotracer -l value ("" = all) */
	char exe[256]; /* iotracer@PATH: that binary; "" = this one */
	int avail;
	char why[128]; /* when not available */
};

#define MAX_TRACERS 32
#define BENCH_MAX_PROGS 128

/* A BPF program of a tracer with its run statistics (or their deltas over a run). */
struct bench_prog {
	uint32_t id;
	char name[48];
	uint64_t run_time_ns, run_cnt;
};

/* ---------------------------------------------------------------- state */

struct bopts {
	int quick, pairs, bpf_stats, keep, force;
	uint64_t runtime_ns, size;
	unsigned presets;
	const char *target, *json, *svg, *tracers, *tools_dir, *workloads;
};

struct target {
	int ready, failed;
	char dev[256]; /* /dev/loopN (or the user's block device) */
	char name[32]; /* loopN */
	unsigned maj, min;
	int lfd; /* our fd on the loop device (-1: not our loop) */
	char backing[PATH_MAX];
	int created; /* we created the backing file */
	int direct_io;
	char workdir[PATH_MAX]; /* tracer and fio outputs */
	char desc[PATH_MAX + 64];
};

struct run {
	int wl, tr, round, stats;
	int ok;
	char err[256];
	struct fio_res fio;
	double elapsed_s, busy_pct, busy_ns;
	uint64_t tracer_cpu_ns;
	double tracer_cpu_pct;
	int64_t rss_anon_kb, hwm_kb;
	struct tracer_sum sum;
	int nprogs;
	struct bench_prog *progs; /* deltas over the fio run */
	uint64_t bpf_ns, bpf_cnt;
	int64_t blk_ios; /* requests the target device completed during fio (its stat), -1 */
	int sys_progs; /* BPF programs loaded on the system during the run (noise hint) */
	double load1; /* 1-minute load average before the run */
};

struct bench {
	struct bopts o;
	int verbose; /* -v: print every command */
	char exe[PATH_MAX];
	char tools[PATH_MAX];
	char bpftrace[PATH_MAX];
	long user_hz;
	int ncpu;
	struct tracer tr[MAX_TRACERS];
	int ntr;
	int none; /* index of the "none" tracer */
	struct target tg[2]; /* [0] disk, [1] RAM; with --target both name one device */
	int shared_target;
	struct run *runs;
	int nruns, cap;
	int total_planned, done;
	int seq; /* output file numbering of the runs */
	int wl_tr[NR_WLS][MAX_TRACERS]; /* which tracers run on which workload */
	int wl_sel[NR_WLS];
	int interrupted;
};

/* tracer.c */
/* Find or add a tracer by name; -EINVAL for an unknown name, -ENOSPC. */
int tracer_get(struct bench *b, const char *name);
/* Index of a tracer by name, -1. */
int find_tr(const struct bench *b, const char *name);
const char *tracer_kind_name(enum tkind k);
/* iotracer (with or without JSON output): it has a final summary. */
int tracer_is_iot(const struct tracer *t);
/* cmd in PATH (or a path) into out. 0 or -ENOENT. */
int find_in_path(const char *cmd, char *out, size_t n);
/* b->tools: the directory of the bpftrace scripts ("" if not found). */
void find_tools(struct bench *b);
/* Mark the bpftrace tracers unavailable when bpftrace or the scripts are missing. */
void tracers_check_tools(struct bench *b);
/* The tracer's command line into argv (strings in store). Returns argc or -EINVAL. */
int tracer_argv(const struct bench *b, const struct tracer *tr, const struct target *t,
		const char *json, char **argv, char store[][PATH_MAX + 64]);

/* target.c */
/* The target a workload runs on. */
struct target *bench_target(struct bench *b, int ram);
/* Set up the target of a (RAM or disk) workload once. 0, or -errno with err set. */
int target_setup(struct bench *b, int ram, char *err, size_t n);
void targets_cleanup(struct bench *b);
/* Requests a block device completed so far (from its sysfs stat), -1 if unreadable. */
int64_t blk_completed(const char *dev);

/* child.c */
/* SIGINT/SIGTERM/SIGHUP set the stop flag; SIGALRM ends wait_fio(). */
void bench_signals(void);
int bench_stopped(void);
void sleep_ms(int ms);
/* Start argv[0] (PATH lookup) in its own process group, stdout/stderr to files. */
pid_t spawn(char *const argv[], const char *out, const char *err, int verbose);
/* Wait for pid up to timeout_ms (< 0: forever). 0, -ETIMEDOUT or -errno. */
int wait_exit(pid_t pid, int timeout_ms, int *status);
/* Signal the group; wait up to grace_ms; then SIGKILL the group. 0 or -ETIMEDOUT. */
int stop_child(pid_t pid, int sig, int grace_ms, int *status);
/* Blocking wait for fio with a deadline. 0, -EINTR (stopped) or -ETIMEDOUT. */
int wait_fio(pid_t pid, unsigned timeout_s, int *status);
/* The child exited without being waited for by us: forget it. */
void child_forget(pid_t pid);
void kill_all_kids(void);

/* bpfstats.c (libbpf) */
struct bpfstats {
	int fd; /* BPF_ENABLE_STATS fd, -1 */
	int sysctl_old; /* kernel.bpf_stats_enabled before we set it, -1: not set */
};
/* Turn BPF run-time statistics on (an fd, else the sysctl). 0 or -errno. */
int bpfstats_enable(struct bpfstats *s);
void bpfstats_disable(struct bpfstats *s);
/* Program name: the full function name from BTF, else the kernel's 15-char name. */
void bpfstats_prog_name(uint32_t id, char *buf, size_t n);
/* Number of BPF programs loaded on the system (ours and everybody else's). */
int bpfstats_system_progs(void);
/* The BPF programs whose fds pid holds, with their run statistics (names if names). */
int bpfstats_snapshot(pid_t pid, struct bench_prog *out, int max, int names);

/* run.c */
/* One measured run of workload wl with tracer tri into r. 0 or -errno (r->err). */
int run_one(struct bench *b, int wl, int tri, int round, int stats, struct run *r);

/* aggregate.c */
struct agg {
	int wl, tr, pairs, nfail;
	struct bstat iops, ratio, lat_mean, lat_p99, busy, added, tcpu, cpu_ns_io, added_ns_io,
		daemon_ns_io, records, bpf_ns_io, bpf_runs_io;
	int64_t rss_max, hwm_max, drops_total;
	const struct run *stats_run; /* last good BPF statistics run */
	const char *err; /* last error */
};

/* The runs of (wl, tr) summed up into a. */
void aggregate(const struct bench *b, int wl, int tr, struct agg *a);
/*
 * Which oracles an iotracer layer set (-l value, "" = all) can be held to:
 * block: the device's stat (needs the block layer); requests: fio's IO count
 * (needs the syscall layer, which fs and sched pull in).
 */
void unreported_oracles(const char *layers, int *block, int *requests);
/* Records a run lost without counting them, by oracle; -1 when not comparable. */
void run_unreported(const struct bench *b, const struct run *r, int64_t *blk, int64_t *req);

/* checks.c */
struct check {
	char name[128];
	double value, limit;
	int le; /* value <= limit passes (else >=) */
	const char *unit;
	char unjudged[112]; /* why the value cannot be judged (printed, not MET/MISS); "" */
};

#define MAX_CHECKS 16
int collect_checks(const struct bench *b, struct check *c, int max);
int check_ok(const struct check *c);
void print_checks(const struct bench *b, FILE *f);

/* report.c */
void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The progress line of a finished run. */
void report_run(struct bench *b, const struct run *r);
void print_workload(const struct bench *b, int wl, FILE *f);
void print_preset_summary(const struct bench *b, int preset, FILE *f);
void print_cost_table(const struct bench *b, FILE *f);

/* report_json.c, report_svg.c: 0 or -errno */
int write_json(const struct bench *b, const char *path, int complete);
int write_svg(const struct bench *b, const char *path);

#endif /* IT_BENCH_INTERNAL_H */
