/* SPDX-License-Identifier: GPL-2.0 */
/*
 * procfs: reading /proc (and small files in general): whole-file and tail
 * readers, the system's CPU time from /proc/stat, a process's CPU time,
 * memory and BPF fds. The parsers take text so that tests feed them known
 * inputs; the readers around them return what the kernel shows now.
 */
#ifndef IT_LIB_PROCFS_H
#define IT_LIB_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---------------------------------------------------------------- files */

/* A whole file, NUL terminated; *len (may be NULL) without the NUL. NULL + errno on error. */
char *procfs_read_file(const char *path, size_t *len);
/* The last max bytes of a file, NUL terminated; *len without the NUL. NULL on error. */
char *procfs_read_tail(const char *path, size_t max, size_t *len);
/* Create or truncate path and write data. 0 or -errno. */
int procfs_write_file(const char *path, const char *data, size_t len);

/* ---------------------------------------------------------------- system CPU */

/* One reading of /proc/stat. */
struct procfs_cpu {
	uint64_t idle_ticks; /* idle + iowait of the "cpu" line, USER_HZ ticks */
	int ncpu; /* cpuN lines */
	uint64_t t_ns; /* CLOCK_MONOTONIC when read */
};

/* Parse /proc/stat text (t_ns is left alone). 0 or -EINVAL. */
int procfs_parse_stat(const char *text, struct procfs_cpu *s);
/* Read /proc/stat now (t_ns set). 0 or -errno. */
int procfs_cpu_read(struct procfs_cpu *s);

/*
 * Whole-system busy time between two readings, from idle time only (exact,
 * unlike the user/system tick samples): busy = ncpu * elapsed - Δ(idle+iowait).
 * procfs_busy_ns: CPU nanoseconds busy over all CPUs (may be slightly negative
 * from the 1/USER_HZ rounding of idle). procfs_busy_pct: the same as an average
 * percentage per core (100 = every core busy all the time), like sar's %.
 */
double procfs_busy_ns(const struct procfs_cpu *a, const struct procfs_cpu *b, long user_hz);
double procfs_busy_pct(const struct procfs_cpu *a, const struct procfs_cpu *b, long user_hz);

/* The 1-minute load average of /proc/loadavg (NaN if unreadable). */
double procfs_loadavg1(void);

/* ---------------------------------------------------------------- one process */

/* First field of /proc/PID/task/TID/schedstat: time on CPU in ns. 0 or -EINVAL. */
int procfs_parse_schedstat(const char *text, uint64_t *run_ns);
/* Run time of every thread of pid, summed from /proc/PID/task/ * /schedstat (ns); 0 if gone. */
uint64_t procfs_cpu_ns(pid_t pid);

/* "Key:   1234 kB" line of /proc/PID/status -> 1234. 0, -ENOENT or -EINVAL. */
int procfs_parse_status_kb(const char *text, const char *key, uint64_t *kb);
/* The process (tgid) that thread or process pid belongs to; -ESRCH when there is none. */
int64_t procfs_tgid(pid_t pid);
/* RssAnon and VmHWM of pid in KiB (-1 each when unknown). */
void procfs_mem(pid_t pid, int64_t *rss_anon_kb, int64_t *hwm_kb);

/* A BPF program seen through a process's fd: id and run-time statistics. */
struct procfs_prog {
	uint32_t id;
	uint64_t run_time_ns, run_cnt;
};

/*
 * /proc/PID/fdinfo/FD text of a BPF program fd -> id and run statistics.
 * Returns 1 if it is a program (prog_id: line), 0 if not (a link fd also
 * shows the prog_id it holds), -EINVAL if malformed.
 */
int procfs_parse_fdinfo_prog(const char *text, struct procfs_prog *p);
/* The distinct BPF programs whose fds pid holds (up to max). The count, 0 if gone. */
int procfs_progs(pid_t pid, struct procfs_prog *out, int max);
/* Count pid's BPF program, link and perf-event fds. 0, or -1 if pid is gone. */
int procfs_bpf_fds(pid_t pid, int *progs, int *links, int *perf);

#endif /* IT_LIB_PROCFS_H */
