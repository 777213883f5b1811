// SPDX-License-Identifier: GPL-2.0
/*
 * report_json: --json FILE, every raw sample and the aggregates in one
 * document (docs/bench.md, "JSON"): host, config, targets, workloads,
 * tracers, runs, results, checks.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "bench/internal.h"
#include "lib/jsonw.h"

static void jw_bstat(struct jw *w, const char *key, const struct bstat *s)
{
	jw_obj_begin(w, key);
	jw_double(w, "median", s->med);
	jw_double(w, "min", s->min);
	jw_double(w, "max", s->max);
	jw_i64(w, "n", s->n);
	jw_obj_end(w);
}

static void jw_i64_or_null(struct jw *w, const char *key, int64_t v)
{
	if (v < 0)
		jw_null(w, key);
	else
		jw_i64(w, key, v);
}

static void json_host_config(struct jw *w, const struct bench *b)
{
	struct utsname u;

	jw_obj_begin(w, "host");
	if (!uname(&u)) {
		jw_str(w, "kernel", u.release);
		jw_str(w, "machine", u.machine);
	}
	jw_i64(w, "ncpu", b->ncpu);
	jw_i64(w, "user_hz", b->user_hz);
	jw_obj_end(w);

	jw_obj_begin(w, "config");
	jw_bool(w, "quick", b->o.quick);
	jw_i64(w, "pairs", b->o.pairs);
	jw_double(w, "runtime_s", b->o.runtime_ns / 1e9);
	jw_u64(w, "size_bytes", b->o.size);
	jw_str(w, "target", b->o.target);
	jw_bool(w, "bpf_stats_runs", b->o.bpf_stats);
	jw_arr_begin(w, "presets");
	for (int p = P_REFERENCE; p <= P_TAX; p <<= 1)
		if (b->o.presets & p)
			jw_str(w, NULL, bench_preset_name(p));
	jw_arr_end(w);
	jw_obj_end(w);
}

/* The devices fio ran on, the workloads and the tracers. */
static void json_setup(struct jw *w, const struct bench *b)
{
	jw_arr_begin(w, "targets");
	for (int i = 0; i < (b->shared_target ? 1 : 2); i++) {
		const struct target *t = &b->tg[i];

		if (!t->dev[0])
			continue;
		jw_obj_begin(w, NULL);
		jw_str(w, "kind", b->shared_target ? "user" : i ? "ram" : "disk");
		jw_str(w, "dev", t->dev);
		jw_str(w, "backing", t->backing[0] ? t->backing : NULL);
		jw_bool(w, "direct_io", t->direct_io);
		jw_str(w, "desc", t->desc);
		jw_obj_end(w);
	}
	jw_arr_end(w);

	jw_arr_begin(w, "workloads");
	for (int wl = 0; wl < NR_WLS; wl++) {
		const struct workload *x = &bench_wls[wl];

		if (!b->wl_sel[wl])
			continue;
		jw_obj_begin(w, NULL);
		jw_str(w, "name", x->name);
		jw_str(w, "preset", bench_preset_name(x->preset));
		jw_str(w, "desc", x->desc);
		jw_str(w, "metric",
		       x->metric == M_CPU ? "cpu" :
		       x->metric == M_TAX ? "ns_per_op" :
					    "iops");
		jw_bool(w, "ram", x->ram);
		jw_str(w, "fio_args", x->args);
		jw_obj_end(w);
	}
	jw_arr_end(w);

	jw_arr_begin(w, "tracers");
	for (int tr = 0; tr < b->ntr; tr++) {
		const struct tracer *t = &b->tr[tr];

		jw_obj_begin(w, NULL);
		jw_str(w, "name", t->name);
		jw_str(w, "kind", tracer_kind_name(t->k));
		jw_str(w, "layers", t->layers[0] ? t->layers : "all");
		jw_bool(w, "available", t->avail);
		if (!t->avail)
			jw_str(w, "why", t->why);
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

/* What the tracer of a run reported, and what it cost. */
static void json_run_tracer(struct jw *w, const struct bench *b, const struct run *r)
{
	const struct tracer *t = &b->tr[r->tr];

	if (tracer_is_iot(t)) {
		int64_t ub, ur;

		bench_run_unreported(b, r, &ub, &ur);
		jw_i64_or_null(w, "unreported_block", ub);
		jw_i64_or_null(w, "unreported_requests", ur);
	}
	if (t->k == T_NONE)
		return;
	jw_u64(w, "tracer_cpu_ns", r->tracer_cpu_ns);
	jw_double(w, "tracer_cpu_pct", r->tracer_cpu_pct);
	jw_i64_or_null(w, "rss_anon_kb", r->rss_anon_kb);
	jw_i64_or_null(w, "vmhwm_kb", r->hwm_kb);
	jw_i64_or_null(w, "requests", r->sum.requests);
	jw_i64_or_null(w, "records", r->sum.records);
	jw_i64_or_null(w, "drops", r->sum.drops);
	if (r->sum.drops_detail[0])
		jw_str(w, "drops_detail", r->sum.drops_detail);
}

/* The BPF programs of a statistics run, raw deltas. */
static void json_run_progs(struct jw *w, const struct run *r)
{
	jw_u64(w, "bpf_run_time_ns", r->bpf_ns);
	jw_u64(w, "bpf_run_cnt", r->bpf_cnt);
	jw_arr_begin(w, "progs");
	for (int k = 0; k < r->nprogs; k++) {
		jw_obj_begin(w, NULL);
		jw_u64(w, "id", r->progs[k].id);
		jw_str(w, "name", r->progs[k].name);
		jw_u64(w, "run_time_ns", r->progs[k].run_time_ns);
		jw_u64(w, "run_cnt", r->progs[k].run_cnt);
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

static void json_run(struct jw *w, const struct bench *b, const struct run *r)
{
	jw_obj_begin(w, NULL);
	jw_str(w, "workload", bench_wls[r->wl].name);
	jw_str(w, "preset", bench_preset_name(bench_wls[r->wl].preset));
	jw_str(w, "tracer", b->tr[r->tr].name);
	jw_i64(w, "round", r->round);
	jw_bool(w, "bpf_stats", r->stats);
	jw_bool(w, "ok", r->ok);
	if (!r->ok)
		jw_str(w, "error", r->err);
	jw_double(w, "iops", r->fio.iops);
	jw_u64(w, "ios", r->fio.ios);
	jw_i64(w, "fio_jobs", r->fio.jobs);
	jw_double(w, "lat_mean_ns", r->fio.lat_mean_ns);
	jw_double(w, "lat_p99_ns", r->fio.lat_p99_ns);
	jw_double(w, "elapsed_s", r->elapsed_s);
	jw_double(w, "busy_pct", r->busy_pct);
	jw_double(w, "busy_cpu_ns", r->busy_ns);
	jw_i64(w, "system_bpf_progs", r->sys_progs);
	jw_double(w, "loadavg1_before", r->load1);
	jw_i64_or_null(w, "blk_ios", r->blk_ios);
	if (bench_wls[r->wl].tax)
		jw_double(w, "ns_per_op", r->tax_ns);
	json_run_tracer(w, b, r);
	if (r->stats)
		json_run_progs(w, r);
	jw_obj_end(w);
}

/* Per program of the statistics run: runs, ns per run and per IO. */
static void json_bpf_progs(struct jw *w, const struct run *r)
{
	jw_arr_begin(w, "bpf_progs");
	for (int k = 0; k < r->nprogs; k++) {
		const struct bench_prog *p = &r->progs[k];

		jw_obj_begin(w, NULL);
		jw_str(w, "name", p->name);
		jw_double(w, "runs_per_io", p->run_cnt / (double)r->fio.ios);
		jw_double(w, "ns_per_run", p->run_cnt ? p->run_time_ns / (double)p->run_cnt : NAN);
		jw_double(w, "ns_per_io", p->run_time_ns / (double)r->fio.ios);
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

/* The aggregate of a tracer against the runs without one. */
static void json_result_tracer(struct jw *w, const struct agg *a)
{
	if (bench_wls[a->wl].tax)
		jw_bstat(w, "ns_per_op_ratio", &a->tax_ratio);
	jw_bstat(w, "iops_ratio", &a->ratio);
	jw_bstat(w, "added_busy_pct", &a->added);
	jw_bstat(w, "added_cpu_ns_per_io", &a->added_ns_io);
	jw_bstat(w, "tracer_cpu_pct", &a->tcpu);
	jw_bstat(w, "daemon_cpu_ns_per_io", &a->daemon_ns_io);
	jw_bstat(w, "records_per_run", &a->records);
	jw_i64_or_null(w, "drops_total", a->drops_total);
	jw_i64_or_null(w, "rss_anon_kb_max", a->rss_max);
	jw_i64_or_null(w, "vmhwm_kb_max", a->hwm_max);
	jw_bstat(w, "bpf_ns_per_io", &a->bpf_ns_io);
	jw_bstat(w, "bpf_runs_per_io", &a->bpf_runs_io);
	if (a->stats_run && a->stats_run->fio.ios)
		json_bpf_progs(w, a->stats_run);
}

static void json_result(struct jw *w, const struct bench *b, int wl, int tr)
{
	struct agg a;

	bench_aggregate(b, wl, tr, &a);
	jw_obj_begin(w, NULL);
	jw_str(w, "workload", bench_wls[wl].name);
	jw_str(w, "preset", bench_preset_name(bench_wls[wl].preset));
	jw_str(w, "tracer", b->tr[tr].name);
	jw_bool(w, "available", b->tr[tr].avail);
	jw_i64(w, "pairs", a.pairs);
	jw_i64(w, "failed_runs", a.nfail);
	jw_bstat(w, "iops", &a.iops);
	jw_bstat(w, "lat_mean_ns", &a.lat_mean);
	jw_bstat(w, "lat_p99_ns", &a.lat_p99);
	jw_bstat(w, "busy_pct", &a.busy);
	jw_bstat(w, "cpu_ns_per_io", &a.cpu_ns_io);
	if (bench_wls[wl].tax)
		jw_bstat(w, "ns_per_op", &a.tax_ns);
	if (tr != b->none)
		json_result_tracer(w, &a);
	jw_obj_end(w);
}

static void json_checks(struct jw *w, const struct bench *b)
{
	struct check c[MAX_CHECKS];
	int nc = bench_collect_checks(b, c, MAX_CHECKS);

	jw_arr_begin(w, "checks");
	for (int i = 0; i < nc; i++) {
		jw_obj_begin(w, NULL);
		jw_str(w, "name", c[i].name);
		jw_double(w, "value", c[i].value);
		jw_str(w, "op", c[i].le ? "<=" : ">=");
		jw_double(w, "limit", c[i].limit);
		jw_str(w, "unit", c[i].unit);
		if (c[i].unjudged[0])
			jw_str(w, "unjudged", c[i].unjudged);
		else
			jw_bool(w, "met", bench_check_ok(&c[i]));
		if (c[i].pairs) {
			/* the pairs' range: a verdict whose range spans the limit may flip */
			jw_obj_begin(w, "noise");
			jw_u64(w, "pairs", (uint64_t)c[i].pairs);
			jw_double(w, "min", c[i].lo);
			jw_double(w, "max", c[i].hi);
			jw_bool(w, "may_flip", bench_check_noisy(&c[i]));
			jw_obj_end(w);
		}
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

/* The document, newline terminated (jsonw never ends with one), into path. */
static int json_write_out(struct jw *w, const char *path)
{
	size_t len = jw_len(w);
	char *buf;
	int ret;

	if (jw_error(w))
		return -ENOMEM;
	buf = malloc(len + 1);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, jw_data(w), len);
	buf[len] = '\n';
	ret = procfs_write_file(path, buf, len + 1);
	free(buf);
	return ret;
}

int bench_write_json(const struct bench *b, const char *path, int complete)
{
	struct jw w;
	int ret;

	jw_init(&w);
	jw_obj_begin(&w, NULL);
	jw_str(&w, "type", "iotracer-bench");
	jw_u64(&w, "format", 1);
	jw_str(&w, "version", IT_VERSION);
	jw_bool(&w, "complete", complete);
	json_host_config(&w, b);
	json_setup(&w, b);
	jw_arr_begin(&w, "runs");
	for (int i = 0; i < b->nruns; i++)
		json_run(&w, b, &b->runs[i]);
	jw_arr_end(&w);
	jw_arr_begin(&w, "results");
	for (int wl = 0; wl < NR_WLS; wl++)
		for (int tr = 0; b->wl_sel[wl] && tr < b->ntr; tr++)
			if (b->wl_tr[wl][tr])
				json_result(&w, b, wl, tr);
	jw_arr_end(&w);
	json_checks(&w, b);
	jw_obj_end(&w);
	ret = json_write_out(&w, path);
	jw_free(&w);
	return ret;
}
