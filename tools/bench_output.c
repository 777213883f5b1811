// SPDX-License-Identifier: GPL-2.0
/*
 * bench_output: CPU cost of out_request() per request (not a test). Built by
 * `make tools` with the daemon's flags, linked with the pure modules:
 *
 *   make tools && build/bench_output [-n REQUESTS] [-r REPEATS] [-d FILE]
 *
 * Feeds REQUESTS synthetic CORR_SYSCALL requests (a pread64 with one block
 * child, like fio's psync randread on a loop device) through out_request()
 * with the JSON going to /dev/null, to a file on tmpfs (/dev/shm: the write
 * copies are counted), and without -j (statistics only), and prints ns per
 * request (best and median of REPEATS runs, wall and CPU time).
 *
 * -d FILE: instead, write a deterministic mix of every request kind and field
 * variant (plus attach and summary lines) to FILE, to compare the output of two
 * builds byte for byte.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "service/cli.h"
#include "records/corr.h"
#include "records/output.h"
#include "lib/parse.h"
#include "../tests/unit/rng.h" /* unit_rng() */

#define POOL 4096

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	return unit_rng(&rng);
}

/* A random value of a random bit length: every digit count occurs. */
static uint64_t rnd_mag(void)
{
	unsigned int bits = rnd() % 65;

	return bits ? rnd() >> (64 - bits) : 0;
}

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static struct it_syscall_rec sys_pool[POOL];
static struct it_block_rec blk_pool[POOL];

/* fio psync 4k randread on loop0, one bio per pread64. */
static void make_pool(void)
{
	uint64_t t = 17000000000000ull;

	for (int i = 0; i < POOL; i++) {
		struct it_syscall_rec *s = &sys_pool[i];
		struct it_block_rec *b = &blk_pool[i];
		uint64_t lat = 8000 + rnd() % 40000;

		memset(s, 0, sizeof(*s));
		memset(b, 0, sizeof(*b));
		s->hdr.type = IT_REC_SYSCALL;
		s->hdr.size = sizeof(*s);
		s->task.pid = 123456;
		s->task.tid = 123457;
		s->task.cgroup_id = 4321;
		strcpy(s->task.comm, "fio");
		s->seq = (uint64_t)i + 1;
		s->enter_ns = t;
		s->exit_ns = t + lat;
		s->ret = 4096;
		s->offset = (rnd() % 262144) * 4096;
		s->bytes = 4096;
		s->ino = 12;
		s->dev = IT_MKDEV(7, 0);
		s->sys = IT_SYS_PREAD64;
		s->op = IT_OP_READ;
		s->flags = IT_F_DIO;
		s->nr_bios = 1;
		s->dio_count = 1;
		s->first_q_ns = t + 1500 + rnd() % 500;
		s->vfs_ns = lat - 700;
		s->offcpu_ns = lat - 4000;
		s->offcpu_blocked_ns = lat - 4500;
		s->nr_switches = 1;
		s->waker_tid = 88;
		strcpy(s->waker_comm, "kworker/1:1H");

		b->hdr.type = IT_REC_BLOCK;
		b->hdr.size = sizeof(*b);
		b->task = s->task;
		b->seq = s->seq;
		b->sector = s->offset / 512;
		b->q_ns = s->first_q_ns;
		b->g_ns = b->q_ns + 300;
		b->d_ns = b->g_ns + 900;
		b->c_ns = s->exit_ns - 2000;
		b->ino = 12;
		b->dev = IT_MKDEV(7, 0);
		b->bytes = 4096;
		b->flags = IT_F_HAS_Q | IT_F_HAS_G;
		b->op = IT_OP_READ;
		b->origin = IT_ORIG_SYSCALL;
		t += lat + 1000 + rnd() % 1000;
	}
}

static double run(struct it_opts *o, FILE *json, long n, double *cpu_ns)
{
	struct it_out *out = out_new(cli_out_config(o, &(struct out_config){ 0 }), NULL, json, 0);
	struct corr_req r;
	uint64_t t0, c0, t1, c1;

	if (!out) {
		fprintf(stderr, "out_new failed\n");
		exit(1);
	}
	memset(&r, 0, sizeof(r));
	r.kind = CORR_SYSCALL;
	r.nr_blocks = 1;
	t0 = now_ns(CLOCK_MONOTONIC);
	c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	for (long i = 0; i < n; i++) {
		r.id = (uint64_t)i + 1;
		r.sys = &sys_pool[i % POOL];
		r.blocks[0] = &blk_pool[i % POOL];
		out_request(&r, out);
	}
	if (json)
		fflush(json);
	out_free(out); /* writes whatever it still holds */
	if (json)
		fflush(json);
	t1 = now_ns(CLOCK_MONOTONIC);
	c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	if (json && ferror(json)) {
		fprintf(stderr, "write error\n");
		exit(1);
	}
	*cpu_ns = (double)(c1 - c0) / (double)n;
	return (double)(t1 - t0) / (double)n;
}

static void bench(const char *what, struct it_opts *o, const char *path, long n, int reps)
{
	uint64_t wall[64], cpu[64];
	long bytes = 0;

	for (int k = 0; k < reps; k++) {
		FILE *f = path ? fopen(path, "w") : NULL;
		double c;

		if (path && !f) {
			fprintf(stderr, "%s: %s\n", path, strerror(errno));
			exit(1);
		}
		wall[k] = (uint64_t)(run(o, f, n, &c) * 1000);
		cpu[k] = (uint64_t)(c * 1000);
		if (f) {
			bytes = ftell(f);
			fclose(f);
		}
	}
	qsort(wall, (size_t)reps, sizeof(wall[0]), cmp_u64);
	qsort(cpu, (size_t)reps, sizeof(cpu[0]), cmp_u64);
	printf("%-22s %8.1f %8.1f %8.1f %8.1f %8ld\n", what, wall[0] / 1000.0,
	       wall[reps / 2] / 1000.0, cpu[0] / 1000.0, cpu[reps / 2] / 1000.0,
	       bytes > 0 && n ? bytes / n : 0);
	if (path && strcmp(path, "/dev/null"))
		unlink(path);
}

/* ---- -d: a deterministic mix of every kind, for byte comparison ---- */

static void fill_task(struct it_task *t)
{
	static const char *const comms[] = { "fio", "kworker/u8:2",	"a\"b\\c\t\xff",
					     "",    "0123456789abcdef", "\xc3\xa9t\xc3\xa9" };
	const char *c = comms[rnd() % 6];

	t->pid = (uint32_t)rnd_mag();
	t->tid = (uint32_t)rnd_mag();
	t->cgroup_id = rnd_mag();
	memset(t->comm, 0, sizeof(t->comm));
	memcpy(t->comm, c, strnlen(c, sizeof(t->comm)));
}

static uint32_t rnd_dev(void)
{
	static const uint32_t devs[] = { 0, IT_MKDEV(7, 0), IT_MKDEV(7, 1), IT_MKDEV(4000, 77),
					 IT_MKDEV(8, 16) };

	return devs[rnd() % 5];
}

static void fill_block(struct it_block_rec *b)
{
	memset(b, 0, sizeof(*b));
	fill_task(&b->task);
	b->seq = rnd_mag();
	b->sector = rnd_mag();
	b->q_ns = rnd_mag();
	b->g_ns = rnd() % 2 ? b->q_ns + rnd_mag() % 100000 : 0;
	b->i_ns = rnd() % 2 ? b->q_ns + rnd_mag() % 100000 : 0;
	b->d_ns = rnd() % 3 ? b->q_ns + rnd_mag() % 100000 : 0;
	b->c_ns = rnd() % 5 ? b->q_ns + rnd_mag() : rnd_mag();
	b->ino = rnd_mag();
	b->dev = rnd_dev();
	b->bytes = (uint32_t)rnd_mag();
	b->flags = (uint32_t)rnd() & (IT_F_HAS_Q | IT_F_HAS_G | IT_F_HAS_I);
	b->error = (int32_t)rnd_mag();
	b->nr_merged = (uint16_t)rnd();
	b->op = (uint8_t)(rnd() % 6);
	b->origin = (uint8_t)(rnd() % 5);
}

static int dump(const char *path, long n)
{
	static struct it_syscall_rec s;
	static struct it_uring_rec u;
	static struct it_block_rec b[CORR_MAX_BLOCKS];
	uint64_t drops[IT_NR_DROPS], skipped[IT_L_MAX];
	static struct out_khist kh[2];
	struct out_summary_in in;
	struct corr_stats cs;
	struct it_opts o;
	struct it_out *out;
	struct corr_req r;
	FILE *f = fopen(path, "w"), *text = fopen("/dev/null", "w");

	if (!f || !text)
		return 1;
	cli_defaults(&o);
	o.live = 1; /* the live lines go to /dev/null: they must not disturb the JSON */
	o.quiet = 0;
	out = out_new(cli_out_config(&o, &(struct out_config){ 0 }), text, f, 0);
	out_attach(out, "block", "block_rq_issue", "tp_btf", 1, NULL);
	out_attach(out, "fs", "vfs_read", "fentry", 0, "fentry not permitted (EPERM)");
	memset(&cs, 0, sizeof(cs));
	memset(&in, 0, sizeof(in));
	for (int i = 0; i < IT_NR_DROPS; i++)
		drops[i] = rnd_mag();
	for (int i = 0; i < IT_L_MAX; i++)
		skipped[i] = rnd() % 2 ? rnd_mag() : 0;
	memset(kh, 0, sizeof(kh));
	kh[0].key.dev = IT_MKDEV(7, 0);
	kh[0].key.layer = IT_L_BLOCK;
	kh[0].val.st[IT_ST_Q2C].slots[15] = 1000;
	kh[0].val.st[IT_ST_Q2C].slots[63] = 1;
	kh[0].val.st[IT_ST_Q2C].count = 1001;
	kh[0].val.st[IT_ST_Q2C].sum_ns = rnd_mag();
	kh[1].key.layer = IT_L_SYSCALL;
	kh[1].key.kind = IT_HK_URING;
	kh[1].key.op = IT_OP_WRITE;
	kh[1].val.st[IT_ST_TOTAL].slots[0] = 3;
	kh[1].val.st[IT_ST_TOTAL].count = 3;
	in.khists = kh;
	in.nr_khists = 2;
	in.drops = drops;
	in.skipped = skipped;
	in.corr = &cs;
	in.lost_samples = 3;

	for (long i = 0; i < n; i++) {
		int kind = 1 + (int)(rnd() % 4);

		memset(&r, 0, sizeof(r));
		r.kind = (enum corr_kind)kind;
		r.id = rnd() % 4 ? (uint64_t)i + 1 : rnd_mag();
		r.nr_blocks = (int)(rnd() % 3);
		if (rnd() % 50 == 0)
			r.nr_blocks = CORR_MAX_BLOCKS;
		if (kind == CORR_BLOCK && !r.nr_blocks && rnd() % 2)
			r.nr_blocks = 1;
		for (int k = 0; k < r.nr_blocks; k++) {
			fill_block(&b[k]);
			r.blocks[k] = &b[k];
		}
		r.nr_blocks_apart = rnd() % 10 ? 0 : (int)(rnd() % 100);
		switch (kind) {
		case CORR_SYSCALL:
			memset(&s, 0, sizeof(s));
			fill_task(&s.task);
			s.enter_ns = rnd_mag();
			s.exit_ns = rnd() % 5 ? s.enter_ns + rnd_mag() : rnd_mag();
			s.ret = (int64_t)rnd_mag() * (rnd() % 2 ? -1 : 1);
			if (rnd() % 20 == 0)
				s.ret = INT64_MIN;
			s.offset = rnd_mag();
			s.bytes = rnd_mag();
			s.ino = rnd_mag();
			s.dev = rnd_dev();
			s.sys = (uint16_t)(rnd() % (IT_SYS_MAX + 2));
			s.op = (uint8_t)(rnd() % 7);
			s.flags = (uint32_t)rnd();
			s.nr_bios = (uint32_t)rnd_mag();
			s.cache_miss_pages = (uint32_t)rnd_mag();
			s.first_q_ns = rnd() % 3 ? s.enter_ns + rnd_mag() % 1000000 : 0;
			s.vfs_ns = rnd() % 2 ? rnd_mag() : 0;
			s.offcpu_ns = rnd_mag();
			s.offcpu_blocked_ns = rnd_mag();
			s.nr_switches = (uint32_t)rnd_mag();
			s.waker_tid = rnd() % 2 ? (uint32_t)rnd_mag() : 0;
			memcpy(s.waker_comm, "kworker/1:1Habcdefgh", sizeof(s.waker_comm));
			r.sys = &s;
			break;
		case CORR_URING:
			memset(&u, 0, sizeof(u));
			fill_task(&u.task);
			u.user_data = rnd_mag();
			u.submit_ns = rnd_mag();
			u.complete_ns = rnd() % 5 ? u.submit_ns + rnd_mag() : rnd_mag();
			u.ino = rnd_mag();
			u.res = (int32_t)rnd_mag();
			u.dev = rnd_dev();
			u.opcode = (uint8_t)rnd();
			u.op = (uint8_t)(rnd() % 6);
			r.uring = &u;
			break;
		case CORR_AIO:
			fill_task(&r.aio.task);
			r.aio.seq = rnd_mag();
			r.aio.iocb.iocb = rnd_mag();
			r.aio.iocb.offset = rnd_mag();
			r.aio.iocb.nbytes = rnd_mag();
			r.aio.iocb.dev = rnd_dev();
			r.aio.iocb.opcode = (uint16_t)(rnd() % 10);
			r.aio.submit_ns = rnd_mag();
			r.aio.reaped = (int)(rnd() % 2);
			r.aio.reap_ns = r.aio.reaped ? rnd_mag() : 0;
			r.aio.res = (int64_t)rnd_mag() * (rnd() % 2 ? -1 : 1);
			break;
		default:
			r.parent.valid = (int)(rnd() % 2);
			r.parent.id = rnd_mag();
			r.parent.tid = (uint32_t)rnd_mag();
			r.parent.seq = rnd_mag();
			break;
		}
		out_request(&r, out);
		if (i % 5000 == 4999) {
			in.elapsed_ns = (uint64_t)i;
			cs.records[0] = (uint64_t)i;
			out_summary(out, &in);
		}
	}
	in.final = 1;
	out_summary(out, &in);
	out_free(out);
	cli_free(&o);
	fclose(text);
	return fclose(f) ? 1 : 0;
}

int main(int argc, char **argv)
{
	long n = 1000000;
	int reps = 5, c;
	const char *dump_path = NULL;
	struct it_opts o;
	char shm[64];

	while ((c = getopt(argc, argv, "n:r:d:")) != -1) {
		switch (c) {
		case 'n':
			n = atol(optarg);
			break;
		case 'r':
			reps = atoi(optarg);
			break;
		case 'd':
			dump_path = optarg;
			break;
		default:
			fprintf(stderr, "usage: %s [-n REQUESTS] [-r REPEATS] [-d FILE]\n",
				argv[0]);
			return 2;
		}
	}
	if (dump_path)
		return dump(dump_path, n);
	if (reps < 1 || reps > 64 || n < 1)
		return 2;
	make_pool();
	cli_defaults(&o);
	o.live = 0; /* as the bench runs it: -q --no-live */
	o.quiet = 1;
	snprintf(shm, sizeof(shm), "/dev/shm/bench_output.%d", (int)getpid());
	printf("%ld requests x %d runs; ns per request\n", n, reps);
	printf("%-22s %8s %8s %8s %8s %8s\n", "sink", "wall", "wall-med", "cpu", "cpu-med",
	       "B/req");
	bench("json -> /dev/null", &o, "/dev/null", n, reps);
	bench("json -> /dev/shm file", &o, shm, n, reps);
	bench("no json (stats only)", &o, NULL, n, reps);
	cli_free(&o);
	return 0;
}
