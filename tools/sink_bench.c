// SPDX-License-Identifier: GPL-2.0
/*
 * sink_bench: what --sink costs and how fast it goes (docs/bench.md, "The sink").
 * Synthetic psync requests (a pread64 with its block request, the shapes of a
 * fio run: times a few µs to ms apart, random 4 KiB offsets, one task and
 * cgroup, four files named as the daemon names them), no BPF:
 *
 *   sink_bench json N          -j: out_request() to /dev/null; CPU ns per request
 *   sink_bench encode N [fast|zstd|gzip]
 *                              the sink's work without a server: rows into Native
 *                              batches of SK_BATCH_ROWS, compressed (--sink-compress,
 *                              fast by default); CPU ns, bytes per request
 *   sink_bench send URL N [PASSWORD-FILE] (SINK_COMPRESS=KIND: --sink-compress KIND)
 *                              through sink_open()/sink_request() to a server: rows per
 *                              second from the first request until the server took the
 *                              last one (the sink's counters), the process's CPU ns
 *                              per request (both threads), retries and drops
 *
 * json and encode are comparable under `valgrind --tool=callgrind` (instructions,
 * exact under load); send needs a quiet machine and a server (tools/clickhouse_local.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "records/cgroup.h"
#include "records/fname.h"
#include "records/output.h"
#include "records/recfmt.h"
#include "service/cli.h"
#include "sink/http.h"
#include "sink/rows.h"
#include "sink/sink.h"

#define CG_ID 4242
#define CG_PATH "/system.slice/fio-bench.service"
#define NR_FILES 4 /* fio's --nrfiles */

static struct fn_cache *g_fn; /* the files' names, as the daemon's cache holds them */

/* The names of the files of make_req(): ino 93 + i on loop0's file system. */
static int files_named(void)
{
	char name[64];

	g_fn = fn_new(64);
	for (int i = 0; g_fn && i < NR_FILES; i++) {
		struct fn_key k = { .ino = 93 + (uint64_t)i, .dev = IT_MKDEV(7, 0) };

		snprintf(name, sizeof(name), "/srv/fio/bench.0.%d", i);
		if (fn_put(g_fn, &k, name, NULL))
			return -1;
	}
	return g_fn ? 0 : -1;
}

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	g_rng ^= g_rng << 13;
	g_rng ^= g_rng >> 7;
	g_rng ^= g_rng << 17;
	return g_rng;
}

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
}

/* Request i of a psync random read run starting at *t (moved on). */
static void make_req(struct rf_req *q, uint64_t i, uint64_t *t)
{
	struct it_syscall_rec *s = &q->sys;
	struct it_block_rec *b = &q->blocks[0];
	uint64_t lat = 4000 + rnd() % 60000, d2c = lat / 2 + rnd() % (lat / 4 + 1);

	memset(q, 0, sizeof(*q));
	q->kind = CORR_SYSCALL;
	q->id = i + 1;
	q->nr_blocks = 1;
	*t += 5000 + rnd() % 100000;
	s->hdr.type = IT_REC_SYSCALL;
	s->hdr.size = sizeof(*s);
	s->task = (struct it_task){ .pid = 3508, .tid = 3508, .cgroup_id = CG_ID, .comm = "fio" };
	s->enter_ns = *t;
	s->exit_ns = *t + lat;
	s->first_q_ns = *t + 1000 + rnd() % 2000;
	s->offset = (rnd() % 262144) * 4096;
	s->bytes = 4096;
	s->ret = 4096;
	s->ino = 93 + i % NR_FILES;
	s->dev = IT_MKDEV(7, 0);
	s->sys = IT_SYS_PREAD64;
	s->op = IT_OP_READ;
	s->flags = IT_F_DIO | IT_F_SCHED_CNT;
	s->nr_bios = 1;
	s->runq_ns = rnd() % 2000;
	s->nr_switches = 1;
	b->hdr.type = IT_REC_BLOCK;
	b->hdr.size = sizeof(*b);
	b->task = s->task;
	b->seq = i;
	b->sector = s->offset / 512;
	b->q_ns = s->first_q_ns;
	b->g_ns = b->q_ns + 200 + rnd() % 300;
	b->d_ns = b->g_ns + 500 + rnd() % 1000;
	b->c_ns = b->d_ns + d2c;
	b->ino = s->ino;
	b->dev = IT_MKDEV(7, 0);
	b->bytes = 4096;
	b->flags = IT_F_HAS_Q | IT_F_HAS_G | IT_F_SYNC;
	b->op = IT_OP_READ;
	b->origin = IT_ORIG_SYSCALL;
}

static const char *cg_name(void *ctx, uint64_t id)
{
	(void)ctx;
	return id == CG_ID ? CG_PATH : NULL;
}

static const char *dev_name(void *ctx, uint32_t dev)
{
	(void)ctx;
	return dev == IT_MKDEV(7, 0) ? "loop0" : NULL;
}

static const char *no_serial(void *ctx, uint32_t dev)
{
	(void)ctx, (void)dev;
	return NULL;
}

static int run_json(uint64_t n)
{
	struct out_devnames dn = { .name = dev_name, .serial = no_serial, .cgroup = cg_name };
	FILE *f = fopen("/dev/null", "w");
	struct it_opts o;
	struct it_out *out;
	struct rf_req q;
	uint64_t t = 1000000000ull, c0;

	cli_defaults(&o);
	o.live = 0;
	out = f ? out_new(cli_out_config(&o, &(struct out_config){ 0 }), NULL, f, 0) : NULL;
	if (!out)
		return 1;
	out_set_devnames(out, &dn);
	out_set_fnames(out, g_fn);
	c0 = cpu_ns();
	for (uint64_t i = 0; i < n; i++) {
		struct corr_req r;

		make_req(&q, i, &t);
		rf_req_view(&q, &r);
		out_request(&r, out);
	}
	out_flush(out);
	printf("json: %llu requests, %.0f CPU ns/request\n", (unsigned long long)n,
	       (double)(cpu_ns() - c0) / (double)n);
	out_free(out);
	fclose(f);
	return 0;
}

static int run_encode(uint64_t n, const char *kind)
{
	int enc = !strcmp(kind, "gzip") ? SK_ENC_GZIP :
		  !strcmp(kind, "zstd") ? SK_ENC_ZSTD :
					  SK_ENC_FAST;
	struct sk_lookup lk = {
		.dev_name = dev_name, .dev_serial = no_serial, .cgroup = cg_name, .fn = g_fn
	};
	struct sk_ident id = { .host = "bench-host",
			       .boot = "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0",
			       .run = 123456789,
			       .clock_off = 1700000000000000000ll };
	struct nat_buf raw = { 0 }, z = { 0 };
	uint64_t t = 1000000000ull, c0, c1 = 0, rawb = 0, zb = 0;
	size_t plain = 0;
	struct sk_rows w;
	struct rf_req q;
	void *zc = NULL;

	if (sk_rows_init(&w, &lk))
		return 1;
	c0 = cpu_ns();
	for (uint64_t i = 0; i < n; i++) {
		struct corr_req r;

		make_req(&q, i, &t);
		rf_req_view(&q, &r);
		sk_rows_put(&w, &id, &r);
		if (w.req.rows == SK_BATCH_ROWS || i == n - 1) {
			uint64_t c = cpu_ns();

			raw.len = z.len = 0;
			if (nat_block_write(&w.req, &raw, &plain) ||
			    sk_compress(enc, &zc, raw.p, raw.len, plain, &z))
				return 1;
			c1 += cpu_ns() - c;
			rawb += raw.len;
			zb += z.len;
			nat_block_reset(&w.req);
			sk_rows_forget(&w);
		}
	}
	sk_compress_free(zc);
	printf("encode: %llu requests, %.0f CPU ns/request (rows %.0f, Native + %s %.0f); "
	       "%.0f bytes/request raw, %.1f compressed\n",
	       (unsigned long long)n, (double)(cpu_ns() - c0) / (double)n,
	       (double)(cpu_ns() - c0 - c1) / (double)n, kind, (double)c1 / (double)n,
	       (double)rawb / (double)n, (double)zb / (double)n);
	sk_rows_free(&w);
	nat_buf_free(&raw);
	nat_buf_free(&z);
	return 0;
}

static int run_send(const char *url, uint64_t n, const char *auth)
{
	struct sink_opts o = { .url = url,
			       .auth = auth,
			       .queue_max = 1ull << 30,
			       .sysfs_root = "/nonexistent",
			       .start_ns = now_ns(CLOCK_MONOTONIC),
			       .compress = getenv("SINK_COMPRESS"),
			       .who = "sink_bench" };
	struct cg_cache *cg = cg_cache_new(NULL);
	uint64_t t = 1000000000ull, t0, c0, dropped = 0, retries = 0;
	struct sink_stats st;
	struct rf_req q;
	struct sink *s;

	if (cg)
		cg_cache_put(cg, CG_ID, CG_PATH);
	s = sink_open(&o, cg, NULL);
	if (!s)
		return 1;
	sink_set_fnames(s, g_fn);
	t0 = now_ns(CLOCK_MONOTONIC);
	c0 = cpu_ns();
	for (uint64_t i = 0; i < n; i++) {
		struct corr_req r;

		make_req(&q, i, &t);
		rf_req_view(&q, &r);
		sink_request(s, &r);
		if (i % 4096 == 4095)
			sink_tick(s, now_ns(CLOCK_MONOTONIC));
	}
	do {
		sink_tick(s, now_ns(CLOCK_MONOTONIC) + SK_BATCH_AGE_NS);
		sink_stats(s, &st);
		if (st.sent < n)
			usleep(1000);
	} while (st.sent < n && !st.dropped[SK_DROP_QUEUE_FULL]);
	t0 = now_ns(CLOCK_MONOTONIC) - t0;
	c0 = cpu_ns() - c0;
	for (int i = 0; i < SK_DROP_NR; i++)
		dropped += st.dropped[i];
	for (int i = 0; i < SK_RETRY_NR; i++)
		retries += st.retries[i];
	printf("send: %llu requests in %.2f s: %.0f rows/s; %.0f CPU ns/request (both threads); "
	       "%llu batches, %.1f bytes/request sent (%s); %llu retries, %llu dropped\n",
	       (unsigned long long)n, (double)t0 / 1e9, (double)n * 1e9 / (double)t0,
	       (double)c0 / (double)n, (unsigned long long)st.batches, (double)st.bytes / (double)n,
	       st.scheme, (unsigned long long)retries, (unsigned long long)dropped);
	sink_free(s);
	cg_cache_free(cg);
	return st.sent == n && !dropped ? 0 : 1;
}

int main(int argc, char **argv)
{
	uint64_t n =
		argc > 2 ? strtoull(argv[argc > 3 && !strcmp(argv[1], "send") ? 3 : 2], NULL, 10) :
			   0;

	if (files_named()) {
		fprintf(stderr, "%s: out of memory\n", argv[0]);
		return 1;
	}
	if (argc >= 3 && !strcmp(argv[1], "json"))
		return run_json(n);
	if (argc >= 3 && !strcmp(argv[1], "encode"))
		return run_encode(n, argc > 3 ? argv[3] : "fast");
	if (argc >= 4 && !strcmp(argv[1], "send"))
		return run_send(argv[2], n, argc > 4 ? argv[4] : NULL);
	fprintf(stderr,
		"usage: %s json N | encode N [fast|zstd|gzip] | send URL N [PASSWORD-FILE]\n",
		argv[0]);
	return 2;
}
