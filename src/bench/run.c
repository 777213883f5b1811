// SPDX-License-Identifier: GPL-2.0
/*
 * run: one measured run. Start the tracer and wait until it has attached;
 * read the counters (system CPU, the tracer's CPU and BPF programs, the
 * device's stat); run fio (or a tax workload's loop); read them again; stop
 * the tracer (its final summary); turn the outputs into a struct run.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/internal.h"

#define MAX_ARGS 64
#define RUN_PATH (PATH_MAX + 64)

/* One run in the making: its files, children and counters before/after fio. */
struct run_ctx {
	struct bench *b;
	const struct workload *w;
	const struct tracer *tr;
	struct target *t;
	struct run *r;
	char fio_json[RUN_PATH], fio_out[RUN_PATH], tr_out[RUN_PATH], tr_err[RUN_PATH],
		tr_json[RUN_PATH];
	char runtime[32], filename[sizeof(((struct target *)0)->dev) + 16], out_opt[PATH_MAX + 80];
	char *fargv[MAX_ARGS], *wargs;
	pid_t tpid;
	int port; /* iotracer-scrape: its --metrics port */
	pid_t scraper; /* iotracer-scrape: the child that scrapes it while fio runs */
	struct bpfstats stats;
	struct bench_prog p0[BENCH_MAX_PROGS], p1[BENCH_MAX_PROGS];
	int n0, n1;
	struct procfs_cpu s0, s1;
	uint64_t c0, c1;
};

/* Why the run failed, into r->err (cut to its size). Returns -1. */
static __attribute__((format(printf, 2, 3))) int run_fail(struct run *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	return -1;
}

static void run_init(struct run *r, int wl, int tri, int round, int stats)
{
	memset(r, 0, sizeof(*r));
	r->wl = wl;
	r->tr = tri;
	r->round = round;
	r->stats = stats;
	r->rss_anon_kb = r->hwm_kb = r->blk_ios = -1;
	r->sum.requests = r->sum.records = r->sum.drops = -1;
	r->busy_pct = r->busy_ns = r->tracer_cpu_pct = r->tax_ns = NAN;
	r->fio.lat_mean_ns = r->fio.lat_p99_ns = NAN;
}

/* Split a space-separated option string into argv (words are pointers into s). */
static int split_args(char *s, char **argv, int max)
{
	int n = 0;

	for (char *tok = strtok(s, " "); tok && n < max - 1; tok = strtok(NULL, " "))
		argv[n++] = tok;
	argv[n] = NULL;
	return n;
}

/* The output files of this run in the target's work directory, and fio's argv. */
static int run_prepare(struct run_ctx *c)
{
	const char *wd = c->t->workdir;
	int seq = ++c->b->seq, fa = 0;

	snprintf(c->fio_json, RUN_PATH, "%s/fio.%d.json", wd, seq);
	snprintf(c->fio_out, RUN_PATH, "%s/fio.%d.out", wd, seq);
	snprintf(c->tr_out, RUN_PATH, "%s/tracer.%d.out", wd, seq);
	snprintf(c->tr_err, RUN_PATH, "%s/tracer.%d.err", wd, seq);
	snprintf(c->tr_json, RUN_PATH, "%s/tracer.%d.json", wd, seq);
	if (c->w->tax)
		return 0; /* no fio */
	/* fio: global options, then the workload's jobs */
	snprintf(c->out_opt, sizeof(c->out_opt), "--output=%s", c->fio_json);
	snprintf(c->filename, sizeof(c->filename), "--filename=%s", c->t->dev);
	snprintf(c->runtime, sizeof(c->runtime), "--runtime=%" PRIu64 "ms",
		 c->b->o.runtime_ns / 1000000);
	c->fargv[fa++] = "fio";
	c->fargv[fa++] = "--output-format=json";
	c->fargv[fa++] = c->out_opt;
	c->fargv[fa++] = c->filename;
	c->fargv[fa++] = "--time_based";
	c->fargv[fa++] = c->runtime;
	c->fargv[fa++] = "--norandommap";
	c->fargv[fa++] = "--randrepeat=0";
	c->wargs = strdup(c->w->args);
	if (!c->wargs)
		return -ENOMEM;
	split_args(c->wargs, c->fargv + fa, MAX_ARGS - fa);
	return 0;
}

/* The last bytes of a file on one line (newlines as spaces). */
static void tail_of(const char *path, char *buf, size_t n)
{
	size_t len;
	char *t = procfs_read_tail(path, n - 1, &len);

	buf[0] = '\0';
	if (!t)
		return;
	for (size_t i = 0; i < len; i++)
		if (t[i] == '\n' || t[i] == '\r')
			t[i] = ' ';
	snprintf(buf, n, "%s", t);
	free(t);
}

/*
 * Wait until the tracer has loaded and attached: its BPF program fds exist
 * and the number of its program/link/perf-event fds has not changed for
 * 600 ms. -ECHILD if it exited, -ETIMEDOUT.
 */
static int wait_attached(pid_t pid, int timeout_ms)
{
	long last = -1;
	int stable = 0;

	for (int waited = 0; waited < timeout_ms && !bench_stopped(); waited += 100) {
		int progs, links, perf, st;
		long sig;

		if (waitpid(pid, &st, WNOHANG) == pid) {
			bench_child_forget(pid);
			return -ECHILD;
		}
		if (procfs_bpf_fds(pid, &progs, &links, &perf))
			return -ECHILD;
		sig = progs * 1000000L + links * 1000L + perf;
		if (progs > 0 && sig == last) {
			if (++stable >= 6)
				return 0;
		} else {
			stable = 0;
		}
		last = sig;
		bench_sleep_ms(100);
	}
	return bench_stopped() ? -EINTR : -ETIMEDOUT;
}

/* Start the tracer and wait until it has attached. 0 or -1 (r->err). */
static int tracer_start(struct run_ctx *c)
{
	char store[4][PATH_MAX + 64], *targv[MAX_ARGS], tail[200];
	struct run *r = c->r;
	int ret;

	if ((c->tr->k == T_IOT_SCRAPE || tracer_alwayson(c->tr)) &&
	    !(c->port = scrape_free_port())) {
		run_fail(r, "no free loopback port for --metrics");
		return -1;
	}
	if (tracer_argv(c->b, c->tr, c->t, c->tr_json, c->port, !!c->w->tax, targv, store) < 0) {
		run_fail(r, "bad tracer");
		return -1;
	}
	if (tracer_env(c->tr))
		putenv((char *)tracer_env(c->tr));
	c->tpid = bench_spawn(targv, c->tr_out, c->tr_err, c->b->verbose);
	if (tracer_env(c->tr))
		unsetenv("IOTRACER_EMPTY_PROGS");
	if (c->tpid < 0) {
		run_fail(r, "cannot start %s: %s", c->tr->name, strerror(-c->tpid));
		c->tpid = 0;
		return -1;
	}
	ret = wait_attached(c->tpid, 60000);
	if (ret) {
		tail_of(c->tr_err, tail, sizeof(tail));
		run_fail(r, "%s %s: %s", c->tr->name,
			 ret == -ECHILD ? "exited before attaching" : "did not attach", tail);
		return -1;
	}
	if (c->port && (c->scraper = scrape_start(c->port)) < 0) {
		run_fail(r, "cannot start the scraper: %s", strerror(-c->scraper));
		c->scraper = 0;
		return -1;
	}
	bench_sleep_ms(200);
	return 0;
}

/* The counters before the workload: the tracer's, the system's, the device's. */
static void counters_begin(struct run_ctx *c, int64_t *blk0)
{
	if (c->tpid) {
		c->n0 = bpfstats_snapshot(c->tpid, c->p0, BENCH_MAX_PROGS, 1);
		c->c0 = procfs_cpu_ns(c->tpid);
	}
	c->r->sys_progs = bpfstats_system_progs();
	c->r->load1 = procfs_loadavg1();
	*blk0 = bench_blk_completed(c->t->dev);
	procfs_cpu_read(&c->s0);
}

/* The same counters after it; the scraper stopped, statistics off. */
static void counters_end(struct run_ctx *c, int64_t blk0)
{
	struct run *r = c->r;
	int64_t blk1;

	procfs_cpu_read(&c->s1);
	scrape_stop(c->scraper);
	c->scraper = 0;
	blk1 = bench_blk_completed(c->t->dev);
	r->blk_ios = blk0 >= 0 && blk1 >= blk0 ? blk1 - blk0 : -1;
	if (c->tpid) {
		c->c1 = procfs_cpu_ns(c->tpid);
		c->n1 = bpfstats_snapshot(c->tpid, c->p1, BENCH_MAX_PROGS, 0);
		procfs_mem(c->tpid, &r->rss_anon_kb, &r->hwm_kb);
	}
	bpfstats_disable(&c->stats);
}

/*
 * A tax workload between the counters: its ops stand for fio's IOs (per-op
 * figures: BPF runs and time, CPU). 0 or -1 (r->err).
 */
static int run_tax(struct run_ctx *c)
{
	struct run *r = c->r;
	uint64_t ops, ns;
	int64_t blk0;
	int ret;

	counters_begin(c, &blk0);
	ret = tax_run(c->w->tax, c->b->o.runtime_ns, &ops, &ns);
	counters_end(c, blk0);
	if (ret)
		return run_fail(r, "%s: %s", c->w->name, strerror(-ret));
	if (!ops || bench_stopped())
		return run_fail(r, "%s interrupted", c->w->name);
	r->fio.ios = ops;
	r->fio.iops = ops / (ns / 1e9);
	r->fio.jobs = 1;
	r->tax_ns = (double)ns / ops;
	return 0;
}

/* The counters before fio, fio, the counters after. 0 or -1 (r->err). */
static int run_fio(struct run_ctx *c)
{
	struct run *r = c->r;
	int64_t blk0;
	int ret, st = 0;
	pid_t fpid;
	char tail[200];

	counters_begin(c, &blk0);
	fpid = bench_spawn(c->fargv, c->fio_out, c->fio_out, c->b->verbose);
	if (fpid < 0) {
		counters_end(c, blk0);
		run_fail(r, "cannot start fio: %s", strerror(-fpid));
		return -1;
	}
	ret = bench_wait_fio(fpid, (unsigned)(c->b->o.runtime_ns / 1000000000ull) + 90, &st);
	counters_end(c, blk0);
	if (ret) {
		run_fail(r, "fio %s", ret == -EINTR ? "interrupted" : "timed out");
		return -1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		tail_of(c->fio_out, tail, sizeof(tail));
		run_fail(r, "fio failed (status 0x%x): %s", st, tail);
		return -1;
	}
	return 0;
}

/* Stop the tracer: bpftrace and biolatency print their maps on SIGINT; iotracer ends on SIGTERM. */
static int tracer_stop(struct run_ctx *c)
{
	int bt = c->tr->k == T_BT_HIST || c->tr->k == T_BT_PRINT || c->tr->k == T_BIOLAT;
	int tst = 0, ret;
	char tail[200];

	ret = bench_stop_child(c->tpid, bt ? SIGINT : SIGTERM, 30000, &tst);
	c->tpid = 0;
	if (ret || !WIFEXITED(tst) || WEXITSTATUS(tst)) {
		tail_of(c->tr_err, tail, sizeof(tail));
		run_fail(c->r, "%s did not exit cleanly (status 0x%x): %s", c->tr->name, tst, tail);
		return -1;
	}
	return 0;
}

/* fio's figures (a tax run has its own), 0 or -1 (r->err). */
static int fio_results(struct run_ctx *c)
{
	struct run *r = c->r;
	size_t len;
	char *txt;
	int bad;

	if (c->w->tax)
		return 0;
	txt = procfs_read_file(c->fio_json, &len);
	bad = !txt || bench_parse_fio(txt, len, &r->fio) || !r->fio.jobs;
	free(txt);
	if (bad)
		return run_fail(r, "cannot parse fio's JSON output");
	if (r->fio.errors)
		return run_fail(r, "fio reported %" PRIu64 " job errors", r->fio.errors);
	return 0;
}

/* fio's figures, the CPU figures, the tracer's final summary. 0 or -1 (r->err). */
static int run_results(struct run_ctx *c)
{
	struct run *r = c->r;
	size_t len;
	char *txt;
	int bad;

	if (fio_results(c))
		return -1;
	r->elapsed_s = (c->s1.t_ns - c->s0.t_ns) / 1e9;
	r->busy_ns = procfs_busy_ns(&c->s0, &c->s1, c->b->user_hz);
	r->busy_pct = procfs_busy_pct(&c->s0, &c->s1, c->b->user_hz);
	if (c->tr->k != T_NONE) {
		r->tracer_cpu_ns = c->c1 >= c->c0 ? c->c1 - c->c0 : 0;
		r->tracer_cpu_pct = 100.0 * r->tracer_cpu_ns / (double)(c->s1.t_ns - c->s0.t_ns);
	}
	if (!tracer_is_iot(c->tr))
		return 0;
	txt = procfs_read_tail(c->tr->k != T_IOT_NOJSON ? c->tr_json : c->tr_out, 8 << 20, &len);
	bad = !txt || bench_parse_tracer_summary(txt, len, &r->sum);
	free(txt);
	if (bad) {
		run_fail(r, "no final summary in %s's output", c->tr->name);
		return -1;
	}
	return 0;
}

/* The BPF programs' run statistics over the fio run: after minus before. */
static void prog_deltas(struct run_ctx *c)
{
	struct run *r = c->r;

	if (c->n1 <= 0)
		return;
	r->progs = calloc(c->n1, sizeof(*r->progs));
	for (int i = 0; r->progs && i < c->n1; i++) {
		struct bench_prog *d = &r->progs[r->nprogs++];

		*d = c->p1[i];
		d->run_time_ns = d->run_cnt = 0;
		for (int j = 0; j < c->n0; j++)
			if (c->p0[j].id == c->p1[i].id) {
				snprintf(d->name, sizeof(d->name), "%s", c->p0[j].name);
				d->run_time_ns = c->p1[i].run_time_ns - c->p0[j].run_time_ns;
				d->run_cnt = c->p1[i].run_cnt - c->p0[j].run_cnt;
			}
		if (!d->name[0])
			bpfstats_prog_name(d->id, d->name, sizeof(d->name));
		r->bpf_ns += d->run_time_ns;
		r->bpf_cnt += d->run_cnt;
	}
}

/* Statistics on (stats runs), fio, the tracer stopped, the results. 0 or -1. */
static int run_measure(struct run_ctx *c)
{
	if (c->r->stats && bpfstats_enable(&c->stats)) {
		run_fail(c->r, "cannot enable BPF run-time statistics (BPF_ENABLE_STATS)");
		return -1;
	}
	if ((c->w->tax ? run_tax(c) : run_fio(c)) || (c->tpid && tracer_stop(c)) || run_results(c))
		return -1;
	if (c->r->stats)
		prog_deltas(c);
	return 0;
}

static void run_cleanup(struct run_ctx *c)
{
	bpfstats_disable(&c->stats);
	scrape_stop(c->scraper);
	if (c->tpid)
		bench_stop_child(c->tpid, SIGTERM, 10000, NULL);
	free(c->wargs);
	if (!c->b->o.keep) {
		unlink(c->fio_json);
		unlink(c->fio_out);
		unlink(c->tr_out);
		unlink(c->tr_err);
		unlink(c->tr_json);
	}
}

int bench_run_one(struct bench *b, int wl, int tri, int round, int stats, struct run *r)
{
	struct run_ctx *c;
	char err[1024];
	int ret;

	run_init(r, wl, tri, round, stats);
	ret = bench_target_setup(b, bench_wls[wl].ram, err, sizeof(err));
	if (ret) {
		run_fail(r, "%.250s", err);
		return ret;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		run_fail(r, "out of memory");
		return -ENOMEM;
	}
	c->b = b;
	c->w = &bench_wls[wl];
	c->tr = &b->tr[tri];
	c->t = bench_target(b, c->w->ram);
	c->r = r;
	c->stats.fd = -1;
	if (run_prepare(c)) {
		ret = -ENOMEM;
		goto out;
	}
	if ((c->tr->k == T_NONE || !tracer_start(c)) && !run_measure(c))
		r->ok = 1;
	ret = r->ok ? 0 : -EIO;
out:
	run_cleanup(c);
	free(c);
	return ret;
}
