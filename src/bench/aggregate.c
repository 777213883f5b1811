// SPDX-License-Identifier: GPL-2.0
/*
 * aggregate: the runs of one (workload, tracer) summed up: medians and
 * min-max over the rounds, each tracer run against the no-tracer run of the
 * same round; and the oracles of the unreported-drops check.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/internal.h"
#include "iotracer.h"
#include "lib/parse.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Copy the non-NaN samples of v, sorted. Returns the count (0 on ENOMEM). */
static int sorted_copy(const double *v, int n, double **out)
{
	double *c;
	int m = 0;

	*out = NULL;
	if (n <= 0)
		return 0;
	c = malloc(n * sizeof(*c));
	if (!c)
		return 0;
	for (int i = 0; i < n; i++)
		if (!isnan(v[i]))
			c[m++] = v[i];
	qsort(c, m, sizeof(*c), cmp_double);
	*out = c;
	return m;
}

static double sorted_median(const double *c, int m)
{
	return m % 2 ? c[m / 2] : (c[m / 2 - 1] + c[m / 2]) / 2;
}

double bench_median(const double *v, int n)
{
	double *c, med = NAN;
	int m = sorted_copy(v, n, &c);

	if (m > 0)
		med = sorted_median(c, m);
	free(c);
	return med;
}

void bench_stat(const double *v, int n, struct bstat *out)
{
	double *c;
	int m = sorted_copy(v, n, &c);

	out->n = m;
	out->med = out->min = out->max = NAN;
	if (m > 0) {
		out->med = sorted_median(c, m);
		out->min = c[0];
		out->max = c[m - 1];
	}
	free(c);
}

/* The good run of (wl, tr, round, stats), NULL. */
static const struct run *find_run(const struct bench *b, int wl, int tr, int round, int stats)
{
	for (int i = 0; i < b->nruns; i++) {
		const struct run *r = &b->runs[i];

		if (r->wl == wl && r->tr == tr && r->round == round && r->stats == stats && r->ok)
			return r;
	}
	return NULL;
}

/* The samples bench_aggregate() takes the median of, in the order of struct agg's bstats. */
enum {
	S_IOPS,
	S_RATIO,
	S_LAT,
	S_P99,
	S_BUSY,
	S_ADDED,
	S_TCPU,
	S_CPU_IO,
	S_ADDED_IO,
	S_DAEMON_IO,
	S_RECORDS,
	S_BPF_IO,
	S_RUNS_IO,
	S_TAX,
	S_TAX_RATIO,
	NR_SAMPLES
};

/* Memory and drops of a tracer run: maxima and a sum over the runs. */
static void agg_tracer_run(const struct bench *b, const struct run *r, struct agg *a)
{
	if (r->rss_anon_kb > a->rss_max)
		a->rss_max = r->rss_anon_kb;
	if (r->hwm_kb > a->hwm_max)
		a->hwm_max = r->hwm_kb;
	if (r->sum.drops >= 0)
		a->drops_total = (a->drops_total < 0 ? 0 : a->drops_total) + r->sum.drops;
	else if (tracer_is_iot(&b->tr[r->tr]))
		a->drops_total = -1;
}

/* Sample k of a measured (not statistics) run r, against base of the same round. */
static void agg_pair(const struct bench *b, const struct run *r, const struct run *base,
		     double *v[], int k)
{
	int tracer = r->tr != b->none, pair = base && tracer;
	double ios = r->fio.ios ? (double)r->fio.ios : NAN;

	v[S_IOPS][k] = r->fio.iops;
	v[S_RATIO][k] = pair ? r->fio.iops / base->fio.iops : NAN;
	v[S_LAT][k] = r->fio.lat_mean_ns;
	v[S_P99][k] = r->fio.lat_p99_ns;
	v[S_BUSY][k] = r->busy_pct;
	v[S_ADDED][k] = pair ? r->busy_pct - base->busy_pct : NAN;
	v[S_TCPU][k] = tracer ? r->tracer_cpu_pct : NAN;
	v[S_CPU_IO][k] = r->busy_ns / ios;
	v[S_ADDED_IO][k] = pair ? r->busy_ns / ios - base->busy_ns / (double)base->fio.ios : NAN;
	v[S_DAEMON_IO][k] = tracer ? r->tracer_cpu_ns / ios : NAN;
	v[S_TAX][k] = r->tax_ns;
	v[S_TAX_RATIO][k] = pair ? r->tax_ns / base->tax_ns : NAN;
	v[S_RECORDS][k] = r->sum.records >= 0  ? (double)r->sum.records :
			  r->sum.requests >= 0 ? (double)r->sum.requests :
						 NAN;
}

void bench_aggregate(const struct bench *b, int wl, int tr, struct agg *a)
{
	struct bstat *out[NR_SAMPLES] = { &a->iops,	    &a->ratio,	   &a->lat_mean,
					  &a->lat_p99,	    &a->busy,	   &a->added,
					  &a->tcpu,	    &a->cpu_ns_io, &a->added_ns_io,
					  &a->daemon_ns_io, &a->records,   &a->bpf_ns_io,
					  &a->bpf_runs_io,  &a->tax_ns,	   &a->tax_ratio };
	int n = b->nruns + 1, k = 0, ks = 0;
	double *v[NR_SAMPLES];

	memset(a, 0, sizeof(*a));
	a->wl = wl;
	a->tr = tr;
	a->rss_max = a->hwm_max = -1;
	for (int i = 0; i < NR_SAMPLES; i++)
		v[i] = calloc(n, sizeof(double));
	for (int i = 0; i < NR_SAMPLES; i++)
		if (!v[i])
			goto out;
	for (int i = 0; i < b->nruns; i++) {
		const struct run *r = &b->runs[i];

		if (r->wl != wl || r->tr != tr)
			continue;
		if (!r->ok) {
			a->nfail++;
			a->err = r->err;
			continue;
		}
		if (r->tr != b->none)
			agg_tracer_run(b, r, a);
		if (r->stats) {
			double ios = r->fio.ios ? (double)r->fio.ios : NAN;

			v[S_BPF_IO][ks] = r->bpf_ns / ios;
			v[S_RUNS_IO][ks++] = r->bpf_cnt / ios;
			a->stats_run = r;
			continue;
		}
		agg_pair(b, r, find_run(b, wl, b->none, r->round, 0), v, k++);
	}
	a->pairs = k;
	for (int i = 0; i < NR_SAMPLES; i++)
		bench_stat(v[i], i == S_BPF_IO || i == S_RUNS_IO ? ks : k, out[i]);
out:
	for (int i = 0; i < NR_SAMPLES; i++)
		free(v[i]);
}

void bench_unreported_oracles(const char *layers, int *block, int *requests)
{
	uint32_t mask = 0;

	if (!layers || !layers[0])
		mask = (1u << IT_L_MAX) - 1;
	else if (parse_layers(layers, &mask))
		mask = 0; /* unknown: compare with nothing */
	/* fs and sched annotate syscalls: the daemon loads the syscall layer with them */
	if (mask & (1u << IT_L_FS | 1u << IT_L_SCHED))
		mask |= 1u << IT_L_SYSCALL;
	*block = !!(mask & 1u << IT_L_BLOCK);
	*requests = !!(mask & 1u << IT_L_SYSCALL);
}

/*
 * Records an iotracer run lost without counting them, against oracles it did
 * not compute: the requests the device completed (its stat) against block
 * records + counted block drops, and fio's IOs against syscall, io_uring and
 * aio records + the other counted drops (iotracer-alwayson, which records only
 * slow requests: against the histograms' counts, which hold every request, and
 * the drops the histograms did not count). A layer set is held only to the
 * oracles its layers see (bench_unreported_oracles()). -1 when a figure is missing.
 */
void bench_run_unreported(const struct bench *b, const struct run *r, int64_t *blk, int64_t *req)
{
	const struct tracer_sum *s = &r->sum;
	int by_block, by_requests, hists = tracer_alwayson(&b->tr[r->tr]);
	/* records only of slow requests: the histograms count them all, ring drops too */
	int64_t nblk = hists ? s->hist_block + s->drops_block - s->ring_block :
			       s->rec_block + s->drops_block;
	int64_t nreq = hists ? s->hist_req + s->drops_other - s->ring_other :
			       s->rec_syscall + s->rec_uring + s->rec_aio + s->drops_other;

	*blk = *req = -1;
	/* drops known: drops_block and drops_other are too; a tax run has no oracle */
	if (!r->ok || s->drops < 0 || bench_wls[r->wl].tax)
		return;
	bench_unreported_oracles(b->tr[r->tr].layers, &by_block, &by_requests);
	if (by_block && r->blk_ios >= 0 && (hists ? s->hist_block : s->rec_block) >= 0) {
		*blk = r->blk_ios - nblk;
		*blk = *blk > 0 ? *blk : 0;
	}
	if (by_requests && (hists ? s->hist_req >= 0 :
				    s->rec_syscall >= 0 && s->rec_uring >= 0 && s->rec_aio >= 0)) {
		*req = (int64_t)r->fio.ios - nreq;
		*req = *req > 0 ? *req : 0;
	}
}
