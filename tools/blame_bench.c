// SPDX-License-Identifier: GPL-2.0
/*
 * blame_bench: the split engine's user-space cost per block request
 * (src/records/blame.c), fed a synthetic stream (not part of the iotracer
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
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "records/blame.h"

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

static int feed(struct blame *b, long iops, long n, int qd)
{
	uint64_t gap = 1000000000ULL / (uint64_t)iops, t = 1000000000ULL;

	srand(1);
	for (long i = 0; i < n; i++, t += gap) {
		struct blame_in in = { .dev = 7, .victim = 1 };
		uint64_t svc = gap * (uint64_t)qd / 2 + (uint64_t)rand() % (gap * (uint64_t)qd);

		if (i == 1000)
			svc = 50000000;
		in.q_ns = t;
		in.d_ns = t + 2000;
		in.c_ns = in.d_ns + svc;
		in.owner.cgroup_id = 1 + (uint64_t)(rand() % 3);
		if (blame_add(b, &in))
			return -1;
	}
	blame_flush(b);
	return 0;
}

int main(int argc, char **argv)
{
	long iops = 12000, n = 300000;
	int qd = 4, c;
	const struct blame_stats *st;
	struct blame *b;
	double t0;

	while ((c = getopt(argc, argv, "r:n:q:")) != -1) {
		if (c == 'r')
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
