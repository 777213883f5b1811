// SPDX-License-Identifier: GPL-2.0
/*
 * report: what a person reads. Progress lines with the time on stderr; on
 * stdout one table per workload (each tracer's medians and min-max, where
 * its BPF time goes), one summary table per preset, and the cost per IO.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench/internal.h"
#include "lib/parse.h"

void bench_progress(const char *fmt, ...)
{
	va_list ap;
	char buf[512];
	time_t t = time(NULL);
	struct tm tm;

	localtime_r(&t, &tm);
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "[%02d:%02d:%02d] %s\n", tm.tm_hour, tm.tm_min, tm.tm_sec, buf);
}

void bench_report_run(struct bench *b, const struct run *r)
{
	char tag[128];

	b->done++;
	snprintf(tag, sizeof(tag), "[%d/%d] %s %s%s", b->done, b->total_planned,
		 bench_wls[r->wl].name, b->tr[r->tr].name, r->stats ? " bpf-stats run" : "");
	if (!r->ok) {
		bench_progress("%s round %d: FAILED: %s", tag, r->round + 1, r->err);
		return;
	}
	if (bench_wls[r->wl].tax) {
		bench_progress("%s round %d: %.1f ns/op%s", tag, r->round + 1, r->tax_ns,
			       r->stats ? " (bpf_stats on)" : "");
		return;
	}
	if (r->stats) {
		bench_progress("%s: %.0f IOPS, BPF %.0f ns/IO (%.2f runs/IO)", tag, r->fio.iops,
			       r->fio.ios ? r->bpf_ns / (double)r->fio.ios : NAN,
			       r->fio.ios ? r->bpf_cnt / (double)r->fio.ios : NAN);
		return;
	}
	if (b->tr[r->tr].k == T_NONE)
		bench_progress("%s round %d: %.0f IOPS, busy %.2f %%/core", tag, r->round + 1,
			       r->fio.iops, r->busy_pct);
	else
		bench_progress(
			"%s round %d: %.0f IOPS, busy %.2f %%/core, tracer %.2f %% of a core, RssAnon %" PRId64
			" KiB, records %" PRId64 ", drops %" PRId64 "%s%s%s",
			tag, r->round + 1, r->fio.iops, r->busy_pct, r->tracer_cpu_pct,
			r->rss_anon_kb, r->sum.records >= 0 ? r->sum.records : r->sum.requests,
			r->sum.drops, r->sum.drops_detail[0] ? " (" : "", r->sum.drops_detail,
			r->sum.drops_detail[0] ? ")" : "");
}

static const char *fmt_ns(double ns, char *buf, size_t n)
{
	if (isnan(ns))
		snprintf(buf, n, "-");
	else
		parse_fmt_duration((uint64_t)(ns < 0 ? 0 : ns + 0.5), buf, n);
	return buf;
}

/* v with dec decimals (a sign when sign), "-" for NaN. */
static const char *fmt_num(double v, int dec, int sign, char *buf, size_t n)
{
	if (isnan(v))
		snprintf(buf, n, "-");
	else if (sign)
		snprintf(buf, n, "%+.*f", dec, v);
	else
		snprintf(buf, n, "%.*f", dec, v);
	return buf;
}

static const char *fmt_i64(int64_t v, char *buf, size_t n)
{
	if (v < 0)
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%" PRId64, v);
	return buf;
}

/* The tracer column's width: 22, or the longest name (an iotracer@PATH) when longer. */
static int name_w(const struct bench *b)
{
	int w = 22;

	for (int tr = 0; tr < b->ntr; tr++)
		if ((int)strlen(b->tr[tr].name) > w)
			w = (int)strlen(b->tr[tr].name);
	return w;
}

/* The row of tracer tr in workload wl's table. */
static void print_tracer_row(const struct bench *b, int wl, int tr, FILE *f)
{
	const char *name = b->tr[tr].name;
	char s[16][48], mm[48], add[64];
	int nw = name_w(b);
	struct agg a;

	if (!b->tr[tr].avail) {
		fprintf(f, "%-*s not run: %s\n", nw, name, b->tr[tr].why);
		return;
	}
	bench_aggregate(b, wl, tr, &a);
	if (!a.pairs) {
		fprintf(f, "%-*s no successful run%s%s\n", nw, name, a.err ? ": " : "",
			a.err ? a.err : "");
		return;
	}
	snprintf(mm, sizeof(mm), "[%.0f-%.0f]", a.iops.min, a.iops.max);
	if (tr == b->none)
		snprintf(add, sizeof(add), "-");
	else
		snprintf(add, sizeof(add), "%+.2f [%+.2f..%+.2f]", a.added.med, a.added.min,
			 a.added.max);
	fprintf(f, "%-*s %9.0f %-17s %6s %8s %8s %6.2f %-22s %7s %8s %8s %9s %5s %8s %7s %8s %8s\n",
		nw, name, a.iops.med, mm, fmt_num(a.ratio.med, 3, 0, s[0], 48),
		fmt_ns(a.lat_mean.med, s[1], 48), fmt_ns(a.lat_p99.med, s[2], 48), a.busy.med, add,
		fmt_num(a.tcpu.med, 2, 0, s[3], 48), fmt_i64(a.rss_max, s[4], 48),
		fmt_i64(a.hwm_max, s[5], 48), fmt_num(a.records.med, 0, 0, s[6], 48),
		tr == b->none ? "-" : fmt_i64(a.drops_total, s[7], 48),
		fmt_ns(a.bpf_ns_io.med, s[8], 48), fmt_num(a.bpf_runs_io.med, 2, 0, s[9], 48),
		fmt_ns(a.daemon_ns_io.med, s[10], 48), fmt_ns(a.cpu_ns_io.med, s[11], 48));
	if (a.nfail)
		fprintf(f, "%-*s   (%d run(s) failed: %s)\n", nw, "", a.nfail, a.err ? a.err : "?");
}

/* Where the BPF time of tracer tr goes, from its statistics run. */
static void print_bpf_progs(const struct bench *b, int wl, int tr, FILE *f)
{
	const struct run *r;
	struct agg a;

	bench_aggregate(b, wl, tr, &a);
	r = a.stats_run;
	if (!r || !r->nprogs || !r->fio.ios)
		return;
	fprintf(f, "   BPF programs of %s (bpf_stats run, %" PRIu64 " IOs, %.0f ns/IO in all):\n",
		b->tr[tr].name, r->fio.ios, r->bpf_ns / (double)r->fio.ios);
	fprintf(f, "      %-36s %8s %8s %8s\n", "program", "runs/IO", "ns/run", "ns/IO");
	for (int i = 0; i < r->nprogs; i++) {
		const struct bench_prog *p = &r->progs[i];

		if (!p->run_cnt)
			continue;
		fprintf(f, "      %-36s %8.2f %8.0f %8.1f\n", p->name,
			p->run_cnt / (double)r->fio.ios, p->run_time_ns / (double)p->run_cnt,
			p->run_time_ns / (double)r->fio.ios);
	}
}

/* A tax workload's row: ns per op against the same round's none, BPF runs per op. */
static void print_tax_row(const struct bench *b, int wl, int tr, FILE *f)
{
	char s[6][48], mm[48], ratio[64];
	struct agg a;

	bench_aggregate(b, wl, tr, &a);
	if (!a.pairs) {
		fprintf(f, "%-*s no successful run%s%s\n", name_w(b), b->tr[tr].name,
			a.err ? ": " : "", a.err ? a.err : "");
		return;
	}
	snprintf(mm, sizeof(mm), "[%.0f-%.0f]", a.tax_ns.min, a.tax_ns.max);
	if (tr == b->none)
		snprintf(ratio, sizeof(ratio), "-");
	else
		snprintf(ratio, sizeof(ratio), "%.3f [%.3f..%.3f]", a.tax_ratio.med,
			 a.tax_ratio.min, a.tax_ratio.max);
	fprintf(f, "%-*s %8.1f %-15s %-22s %9s %8s %9s\n", name_w(b), b->tr[tr].name, a.tax_ns.med,
		mm, ratio,
		tr == b->none ? "-" : fmt_num((a.tax_ratio.med - 1) * 100, 1, 1, s[0], 48),
		fmt_num(a.bpf_runs_io.med, 2, 0, s[1], 48),
		fmt_num(a.bpf_ns_io.med, 0, 0, s[2], 48));
}

/*
 * The tax table. The pairs are only as good as the machine is quiet: the
 * runs without a tracer spreading more than 10 % say it was not.
 */
static void print_tax(const struct bench *b, int wl, FILE *f)
{
	struct agg none;

	fprintf(f,
		"   %d round(s) x %.1f s in the bench's process; iotracer without -d; ratio = ns/op "
		"traced / none of the same round\n",
		b->o.pairs, b->o.runtime_ns / 1e9);
	fprintf(f, "%-*s %8s %-15s %-22s %9s %8s %9s\n", name_w(b), "tracer", "ns/op", "[min-max]",
		"ratio [min..max]", "added %", "runs/op", "BPF ns/op");
	for (int tr = 0; tr < b->ntr; tr++)
		if (b->wl_tr[wl][tr] && b->tr[tr].avail)
			print_tax_row(b, wl, tr, f);
	bench_aggregate(b, wl, b->none, &none);
	if (none.pairs > 1 && (none.tax_ns.max - none.tax_ns.min) > 0.1 * none.tax_ns.med)
		fprintf(f,
			"   note: the runs without a tracer spread %.0f %% (> 10 %%): the machine was "
			"not quiet, the ratios are that uncertain\n",
			100 * (none.tax_ns.max - none.tax_ns.min) / none.tax_ns.med);
	for (int tr = 0; tr < b->ntr; tr++)
		if (b->wl_tr[wl][tr] && tr != b->none && b->tr[tr].avail)
			print_bpf_progs(b, wl, tr, f);
}

void bench_print_workload(const struct bench *b, int wl, FILE *f)
{
	const struct workload *w = &bench_wls[wl];
	const struct target *t = &b->tg[b->shared_target ? 0 : w->ram];

	fprintf(f, "\n== %s [%s]: %s\n", w->name, bench_preset_name(w->preset), w->desc);
	if (w->tax) {
		print_tax(b, wl, f);
		fflush(f);
		return;
	}
	fprintf(f,
		"   target %s; %d round(s) x %.1f s; busy = whole system, average %% per core (%d cores); tracer CPU in %% of one core\n",
		t->desc, b->o.pairs, b->o.runtime_ns / 1e9, b->ncpu);
	fprintf(f, "%-*s %9s %-17s %6s %8s %8s %6s %-22s %7s %8s %8s %9s %5s %8s %7s %8s %8s\n",
		name_w(b), "tracer", "IOPS", "[min-max]", "ratio", "lat", "p99", "busy%",
		"added%/core [min..max]", "tracer%", "RssAnon", "VmHWM", "recs/run", "drops",
		"BPF/IO", "runs/IO", "daemon/IO", "CPU/IO");
	for (int tr = 0; tr < b->ntr; tr++)
		if (b->wl_tr[wl][tr])
			print_tracer_row(b, wl, tr, f);
	for (int tr = 0; tr < b->ntr; tr++)
		if (b->wl_tr[wl][tr] && tr != b->none && b->tr[tr].avail)
			print_bpf_progs(b, wl, tr, f);
	fflush(f);
}

/* Does any selected workload of the preset run tracer tr? */
static int preset_uses(const struct bench *b, int preset, int tr)
{
	int used = 0;

	for (int wl = 0; wl < NR_WLS; wl++)
		used |= b->wl_sel[wl] && bench_wls[wl].preset == preset && b->wl_tr[wl][tr];
	return used;
}

/* The cell of (wl, tr) in a preset's summary table. */
static void preset_cell(const struct bench *b, int wl, int tr, int metric, char *cell, size_t n)
{
	struct agg a;

	if (!b->wl_tr[wl][tr]) {
		cell[0] = '\0';
		return;
	}
	if (!b->tr[tr].avail) {
		snprintf(cell, n, "%s", b->tr[tr].cell[0] ? b->tr[tr].cell : "not installed");
		return;
	}
	bench_aggregate(b, wl, tr, &a);
	if (!a.pairs)
		snprintf(cell, n, "failed");
	else if (metric == M_TAX && tr == b->none)
		snprintf(cell, n, "%.0f", a.tax_ns.med);
	else if (metric == M_TAX)
		snprintf(cell, n, "%.0f (%.3f)", a.tax_ns.med, a.tax_ratio.med);
	else if (tr == b->none)
		snprintf(cell, n, metric == M_CPU ? "%.2f" : "%.0f",
			 metric == M_CPU ? a.busy.med : a.iops.med);
	else if (metric == M_CPU)
		snprintf(cell, n, "%.2f (%+.2f)", a.busy.med, a.added.med);
	else
		snprintf(cell, n, "%.0f (%.3f)", a.iops.med, a.ratio.med);
}

/* A preset table's column of tracer tr: 22, or its name's length when longer. */
static int col_w(const struct bench *b, int tr)
{
	int n = (int)strlen(b->tr[tr].name);

	return n > 22 ? n : 22;
}

void bench_print_preset_summary(const struct bench *b, int preset, FILE *f)
{
	int metric = preset == P_REFERENCE ? M_CPU : preset == P_TAX ? M_TAX : M_IOPS, any = 0;
	char cell[64];

	for (int wl = 0; wl < NR_WLS; wl++)
		any |= b->wl_sel[wl] && bench_wls[wl].preset == preset;
	if (!any)
		return;
	if (metric == M_CPU)
		fprintf(f,
			"\n== %s: whole-system CPU busy, average %% per core (%d cores), median of %d pair(s); with (added)\n",
			bench_preset_name(preset), b->ncpu, b->o.pairs);
	else if (metric == M_TAX)
		fprintf(f, "\n== %s: ns per op, median of %d pair(s); with (ratio with/without)\n",
			bench_preset_name(preset), b->o.pairs);
	else
		fprintf(f, "\n== %s: IOPS, median of %d pair(s); with (ratio with/without)\n",
			bench_preset_name(preset), b->o.pairs);
	fprintf(f, "%-14s", "workload");
	for (int tr = 0; tr < b->ntr; tr++)
		if (preset_uses(b, preset, tr))
			fprintf(f, " %*s", col_w(b, tr), b->tr[tr].name);
	fprintf(f, "\n");
	for (int wl = 0; wl < NR_WLS; wl++) {
		if (!b->wl_sel[wl] || bench_wls[wl].preset != preset)
			continue;
		fprintf(f, "%-14s", bench_wls[wl].name);
		for (int tr = 0; tr < b->ntr; tr++) {
			if (!preset_uses(b, preset, tr))
				continue;
			preset_cell(b, wl, tr, metric, cell, sizeof(cell));
			fprintf(f, " %*s", col_w(b, tr), cell);
		}
		fprintf(f, "\n");
	}
}

void bench_print_cost_table(const struct bench *b, FILE *f)
{
	char s[6][48];
	int hdr = 0;

	for (int wl = 0; wl < NR_WLS; wl++) {
		struct agg base;

		if (!b->wl_sel[wl] || bench_wls[wl].tax) /* per op, in the tax tables */
			continue;
		bench_aggregate(b, wl, b->none, &base);
		for (int tr = 0; tr < b->ntr; tr++) {
			struct agg a;

			if (!b->wl_tr[wl][tr] || tr == b->none || !b->tr[tr].avail)
				continue;
			bench_aggregate(b, wl, tr, &a);
			if (!hdr) {
				fprintf(f,
					"\n== cost per IO (fio IOs): BPF run time (bpf_stats runs), tracer process CPU, added whole-system CPU\n");
				fprintf(f, "%-14s %-*s %10s %8s %10s %12s %14s\n", "workload",
					name_w(b), "tracer", "BPF ns/IO", "runs/IO", "daemon/IO",
					"added CPU/IO", "no-tracer CPU/IO");
				hdr = 1;
			}
			fprintf(f, "%-14s %-*s %10s %8s %10s %12s %14s\n", bench_wls[wl].name,
				name_w(b), b->tr[tr].name, fmt_num(a.bpf_ns_io.med, 0, 0, s[0], 48),
				fmt_num(a.bpf_runs_io.med, 2, 0, s[1], 48),
				fmt_num(a.daemon_ns_io.med, 0, 0, s[2], 48),
				fmt_num(a.added_ns_io.med, 0, 1, s[3], 48),
				fmt_num(base.cpu_ns_io.med, 0, 0, s[4], 48));
		}
	}
}
