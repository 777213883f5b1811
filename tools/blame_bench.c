// SPDX-License-Identifier: GPL-2.0
/*
 * blame_bench: the split engine's user-space cost per block request
 * (src/blame/blame.c), fed a synthetic stream (not part of the iotracer
 * binary; docs/blame.md, "The horizon, late and truncated requests").
 *
 *   make build/blame_bench
 *   build/blame_bench [-r IOPS] [-n REQUESTS] [-q DEPTH]
 *
 * Requests arrive every 1/IOPS s on one device, each queued 2 us before its
 * dispatch, in service for DEPTH/2 to 3 DEPTH/2 arrival gaps (so about DEPTH
 * are in service at once), owned by one of 3 cgroups; request 1000 is a 50 ms
 * one (a cache flush), which bounds how far back the engine walks while it is
 * kept. Horizon and cap are the daemon's (1 s, 65 536). Prints ns per request
 * (wall clock of blame_add + blame_flush) and the engine's counters.
 *
 *   build/blame_bench -l [-r IOPS] [-n REQUESTS] [-q DEPTH]
 *
 * -l: the daemon's --blame with -j (src/blame/dblame.c: each request's
 * `blame` line, written to /dev/null) fed the same stream, one block request per
 * request, its clock ticked every 50 ms of stream time as the daemon's drain
 * does; also prints the process's peak RssAnon (sampled at each tick) and the
 * lines written, unsplit and capped (docs/blame.md, "Memory").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "blame/blame.h"
#include "records/cgroup.h"
#include "records/output.h"
#include "service/cli.h"
#include "blame/dblame.h"

static unsigned long long nr_split;

static void on_split(const struct blame_res *res, void *ctx)
{
	(void)res;
	(void)ctx;
	nr_split++;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

struct synth_req {
	uint64_t q, d, c, cg;
};

/* Request i of the stream, arriving at t: its Q, D, C and owner (see the top). */
static struct synth_req synth(long i, uint64_t t, uint64_t gap, int qd)
{
	uint64_t svc = gap * (uint64_t)qd / 2 + (uint64_t)rand() % (gap * (uint64_t)qd);
	struct synth_req s = { .q = t, .d = t + 2000 };

	if (i == 1000)
		svc = 50000000;
	s.c = s.d + svc;
	s.cg = 1 + (uint64_t)(rand() % 3);
	return s;
}

static int feed(struct blame *b, long iops, long n, int qd)
{
	uint64_t gap = 1000000000ULL / (uint64_t)iops, t = 1000000000ULL;

	srand(1);
	for (long i = 0; i < n; i++, t += gap) {
		struct blame_in in = { .dev = 7, .victim = 1 };

		struct synth_req sr = synth(i, t, gap, qd);

		in.q_ns = sr.q;
		in.d_ns = sr.d;
		in.c_ns = sr.c;
		in.owner.cgroup_id = sr.cg;
		if (blame_add(b, &in))
			return -1;
	}
	blame_flush(b);
	return 0;
}

/* RssAnon of this process, kB (0: unknown). */
static long rss_anon_kb(void)
{
	char line[128];
	long kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "RssAnon: %ld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* -l: the same stream through the daemon's dblame, with lines; its peak RssAnon. */
static int feed_lines(long iops, long n, int qd)
{
	uint64_t gap = 1000000000ULL / (uint64_t)iops, t = 1000000000ULL, next_tick = t;
	FILE *sink = fopen("/dev/null", "w");
	struct it_block_rec blk;
	struct corr_req r;
	struct it_opts o;
	struct it_out *out;
	struct dblame *d;
	struct cg_cache *cg;
	uint64_t written, unsplit, capped;
	long peak = 0, kb;
	double t0;

	cli_defaults(&o);
	o.live = 0;
	out = sink ? out_new(cli_out_config(&o, &(struct out_config){ 0 }), NULL, sink, 0) : NULL;
	cg = cg_cache_new("/nonexistent");
	d = out && cg ? dblame_new(cg, -1, out) : NULL;
	if (!d)
		return -1;
	srand(1);
	memset(&r, 0, sizeof(r));
	memset(&blk, 0, sizeof(blk));
	r.kind = CORR_BLOCK;
	r.blocks[0] = &blk;
	r.nr_blocks = 1;
	blk.dev = 7;
	t0 = now_s();
	for (long i = 0; i < n; i++, t += gap) {
		struct synth_req sr = synth(i, t, gap, qd);

		blk.q_ns = sr.q;
		blk.d_ns = sr.d;
		blk.c_ns = sr.c;
		blk.task.cgroup_id = sr.cg;
		blk.task.pid = (uint32_t)sr.cg;
		r.id = (uint64_t)i + 1;
		dblame_request(d, &r);
		if (t >= next_tick) {
			/* the daemon's drain: every 50 ms, records up to 2 ms old */
			dblame_tick(d, t - 2000000);
			next_tick = t + 50000000;
			kb = rss_anon_kb();
			peak = kb > peak ? kb : peak;
		}
	}
	dblame_finish(d);
	dblame_counts(d, &written, &unsplit, &capped);
	printf("lines: %ld IOPS, depth %d, %ld requests: %.0f ns per request, peak RssAnon %ld kB; "
	       "lines written %llu, unsplit %llu, capped %llu\n",
	       iops, qd, n, (now_s() - t0) * 1e9 / (double)n, peak, (unsigned long long)written,
	       (unsigned long long)unsplit, (unsigned long long)capped);
	dblame_free(d);
	out_free(out);
	cg_cache_free(cg);
	fclose(sink);
	return 0;
}

int main(int argc, char **argv)
{
	long iops = 12000, n = 300000;
	int qd = 4, c, lines = 0;
	const struct blame_stats *st;
	struct blame *b;
	double t0;

	while ((c = getopt(argc, argv, "lr:n:q:")) != -1) {
		if (c == 'l')
			lines = 1;
		else if (c == 'r')
			iops = atol(optarg);
		else if (c == 'n')
			n = atol(optarg);
		else if (c == 'q')
			qd = atoi(optarg);
		else
			return 2;
	}
	if (iops < 1 || iops > 1000000000 || n < 1 || qd < 1) {
		it_err("blame_bench: -r, -n and -q take positive numbers (-r at most 1e9)");
		return 2;
	}
	if (lines) {
		if (feed_lines(iops, n, qd)) {
			it_err("blame_bench: out of memory");
			return 1;
		}
		return 0;
	}
	b = blame_new(BLAME_BY_CGROUP, BLAME_DEF_HORIZON_NS, 0, on_split, NULL);
	if (!b)
		return 1;
	t0 = now_s();
	if (feed(b, iops, n, qd)) {
		it_err("blame_bench: out of memory");
		return 1;
	}
	st = blame_get_stats(b);
	printf("%ld IOPS, depth %d, %ld requests: %.0f ns per request; split %llu, forced %llu, "
	       "truncated %llu, late %llu\n",
	       iops, qd, n, (now_s() - t0) * 1e9 / (double)n, nr_split,
	       (unsigned long long)st->forced, (unsigned long long)st->truncated,
	       (unsigned long long)st->late);
	blame_free(b);
	return 0;
}
