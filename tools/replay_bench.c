// SPDX-License-Identifier: GPL-2.0
/*
 * replay_bench: the daemon's user-space work per traced request, replayed
 * from synthetic ring buffer records (not part of the iotracer binary).
 *
 *   make replay-bench
 *   build/replay_bench [-n REQUESTS] [-o FILE] [-t THREADS] [-r DIR [-z LEVEL]]
 *   valgrind --tool=callgrind --toggle-collect=replay_drain \
 *       --callgrind-out-file=/tmp/replay.cg build/replay_bench -n 200000
 *   callgrind_annotate /tmp/replay.cg | head -40
 *
 * What the daemon does per record with `iotracer -q --no-live -j FILE -d 7:0`
 * (src/service/daemon_bpf.c): libbpf's ring callback on_record() -> corr_feed() -> the
 * corr emit callback on_request() (daemon.c) -> out_request() (statistics, JSON line into
 * the batch, fwrite of full batches), then on every 50 ms drain corr_tick()
 * and out_flush(). The options go through config_parse() and the JSON file is
 * opened with fopen() as the daemon does.
 *
 * The records are those of fio psync 4 KiB random direct reads on loop0
 * (7:0): one pread64 syscall record and one block record (origin SYSCALL,
 * the same tid and seq, completed before the syscall returned, so it comes
 * first in the ring) per request, THREADS fio threads interleaved, timestamps
 * of a machine up for hours, ~40 k IOPS. They are laid out as in the BPF
 * ring (8-byte header, 8-byte aligned), one drain period at a time; only
 * replay_drain() is the daemon's work (the callgrind toggle above), building
 * the records is not. Device names come from a private fake sysfs (7:0 ->
 * loop0), so the output does not depend on the machine: the JSON written to
 * FILE (default /tmp/replay_bench.json) is the same bytes on every run, to
 * compare two builds with cmp.
 *
 * -r DIR: the daemon's --record DIR (and -z: --record-level) instead of -j (with -o too: both), the
 * recorder fed from the emit callback and ticked on every drain as in
 * daemon.c; prints the bytes per request on disk.
 *
 * Prints CPU and wall ns per request of the replay_drain() calls (noisy on
 * a shared machine: count instructions with callgrind instead).
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "service/cli.h"
#include "service/config.h"
#include "records/corr.h"
#include "iotracer.h"
#include "records/output.h"
#include "records/record.h"
#include "../tests/unit/rng.h" /* unit_rng() */

#define DRAIN_NS (50ull * 1000 * 1000) /* daemon.c: timer period */
#define HOLD_NS (2ull * 1000 * 1000 * 1000) /* daemon.c: block waits for its parent */
#define GAP_NS 25000 /* mean time between requests: 40 k IOPS */
#define MAX_THREADS 64

/* The BPF ring's sample header (len, page offset), then the record, 8-aligned. */
struct ring_hdr {
	uint32_t len;
	uint32_t pg_off;
};

#define RING_REC_SPACE(sz) ((sizeof(struct ring_hdr) + (sz) + 7) & ~(size_t)7)

struct replay {
	struct corr *corr;
	struct it_out *out;
	struct recorder *rec; /* -r */
	uint64_t now_ns;
	uint64_t lost;
};

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	return unit_rng(&rng);
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- what daemon.c and daemon_bpf.c do ---- */

/* daemon.c on_request(): the corr emit callback (no guest/host mode). */
static void on_request(const struct corr_req *r, void *ctx)
{
	struct replay *d = ctx;

	out_request(r, d->out);
	if (d->rec)
		rec_request(d->rec, r);
}

/* daemon_bpf.c on_record(): libbpf's ring buffer callback. */
static int on_record(void *ctx, void *data, size_t size)
{
	struct replay *d = ctx;

	if (corr_feed(d->corr, data, size, d->now_ns))
		d->lost++;
	return 0;
}

/*
 * One timer tick of daemon.c: consume the ring (libbpf walks the samples and
 * calls on_record), corr_tick(), out_flush(). noinline: the callgrind toggle.
 */
static __attribute__((noinline)) void replay_drain(struct replay *d, char *ring, size_t len,
						   uint64_t now_ns)
{
	size_t pos = 0;

	d->now_ns = now_ns;
	while (pos < len) {
		struct ring_hdr *h = (struct ring_hdr *)(ring + pos);

		on_record(d, h + 1, h->len);
		pos += RING_REC_SPACE(h->len);
	}
	corr_tick(d->corr, d->now_ns);
	out_flush(d->out);
	if (d->rec)
		rec_tick(d->rec, d->now_ns);
}

/* ---- the records ---- */

struct thread {
	uint32_t tid;
	uint64_t seq;
};

static char *ring_put(char *p, const void *rec, size_t sz)
{
	struct ring_hdr h = { .len = (uint32_t)sz };

	memcpy(p, &h, sizeof(h));
	memcpy(p + sizeof(h), rec, sz);
	return p + RING_REC_SPACE(sz);
}

/* Records of one pread64 that entered at *t, at p; returns the end. */
static char *make_request(char *p, struct thread *th, uint64_t enter_ns)
{
	struct it_syscall_rec s;
	struct it_block_rec b;
	uint64_t q = enter_ns + 1200 + rnd() % 800;
	uint64_t d_ns = q + 900 + rnd() % 1500;
	uint64_t c = d_ns + 8000 + rnd() % 60000;
	uint64_t exit_ns = c + 1500 + rnd() % 2000;

	memset(&s, 0, sizeof(s));
	memset(&b, 0, sizeof(b));
	th->seq++;
	s.hdr.type = IT_REC_SYSCALL;
	s.hdr.size = sizeof(s);
	s.hdr.cpu = th->tid & 1;
	s.task.pid = 48211;
	s.task.tid = th->tid;
	s.task.cgroup_id = 7351;
	memcpy(s.task.comm, "fio", 4);
	s.seq = th->seq;
	s.enter_ns = enter_ns;
	s.exit_ns = exit_ns;
	s.ret = 4096;
	s.offset = (rnd() % 262144) * 4096; /* 1 GiB file */
	s.bytes = 4096;
	s.ino = 13;
	s.dev = IT_MKDEV(7, 0);
	s.sys = IT_SYS_PREAD64;
	s.op = IT_OP_READ;
	s.flags = IT_F_DIO | IT_F_BDEV | IT_F_SAMPLED;
	s.nr_bios = 1;
	s.dio_count = 1;
	s.first_q_ns = q;
	s.offcpu_ns = c - q + 600 + rnd() % 400;
	s.offcpu_blocked_ns = s.offcpu_ns - 300 - rnd() % 200;
	s.nr_switches = 1 + (rnd() % 8 == 0);
	s.waker_tid = 97;
	memcpy(s.waker_comm, "kworker/1:1H", 13);

	b.hdr.type = IT_REC_BLOCK;
	b.hdr.size = sizeof(b);
	b.hdr.cpu = s.hdr.cpu;
	b.task = s.task;
	b.seq = s.seq;
	b.sector = s.offset / 512;
	b.q_ns = q;
	b.g_ns = q + 150 + rnd() % 200;
	b.d_ns = d_ns;
	b.c_ns = c;
	b.ino = 13;
	b.dev = IT_MKDEV(7, 0);
	b.bytes = 4096;
	b.flags = IT_F_HAS_Q | IT_F_HAS_G | IT_F_SYNC | IT_F_SAMPLED;
	b.op = IT_OP_READ;
	b.origin = IT_ORIG_SYSCALL;

	/* the completion comes before the syscall exit: its record is first */
	p = ring_put(p, &b, sizeof(b));
	return ring_put(p, &s, sizeof(s));
}

/* ---- fake sysfs: 7:0 -> loop0 ---- */

static char g_tmp[64];

static int write_file(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(s, f);
	return fclose(f);
}

static int make_sysfs(char *root, size_t n)
{
	static const char *const dirs[] = { "sys", "sys/dev", "sys/dev/block",
					    "sys/dev/block/7:0" };
	char p[256];

	snprintf(g_tmp, sizeof(g_tmp), "/tmp/replay_bench.XXXXXX");
	if (!mkdtemp(g_tmp))
		return -1;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", g_tmp, dirs[i]);
		if (mkdir(p, 0755))
			return -1;
	}
	snprintf(p, sizeof(p), "%s/sys/dev/block/7:0/uevent", g_tmp);
	snprintf(root, n, "%s/sys", g_tmp);
	return write_file(p, "MAJOR=7\nMINOR=0\nDEVNAME=loop0\nDEVTYPE=disk\n");
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *fw)
{
	return remove(path);
}

/* Bytes of the files in dir (the --record segments). */
static uint64_t dir_bytes(const char *dir)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	uint64_t sum = 0;
	char p[512];
	struct stat st;

	while (dp && (e = readdir(dp))) {
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (!stat(p, &st) && S_ISREG(st.st_mode))
			sum += (uint64_t)st.st_size;
	}
	if (dp)
		closedir(dp);
	return sum;
}

/* ---- main ---- */

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [-n REQUESTS] [-o FILE] [-t THREADS] [-r DIR [-z LEVEL]]\n",
		argv0);
}

int main(int argc, char **argv)
{
	long n = 200000, done = 0, nthreads = 1;
	const char *path = "/tmp/replay_bench.json", *rec_dir = NULL;
	const char *rec_level = "0";
	int json_given = 0;
	struct thread threads[MAX_THREADS];
	uint64_t t = 21600ull * 1000000000ull + 123456789; /* up for 6 hours */
	uint64_t cpu = 0, wall = 0, drain_end;
	struct replay d = { 0 };
	char sysfs[128], *ring;
	size_t ring_cap;
	struct it_opts o;
	FILE *json = NULL;
	char *args[16];
	int c, ret, na = 0;

	while ((c = getopt(argc, argv, "n:o:t:r:z:")) != -1) {
		switch (c) {
		case 'n':
			n = atol(optarg);
			break;
		case 'o':
			path = optarg;
			json_given = 1;
			break;
		case 'r':
			rec_dir = optarg;
			break;
		case 'z':
			rec_level = optarg;
			break;
		case 't':
			nthreads = atol(optarg);
			break;
		default:
			usage(argv[0]);
			return 2;
		}
	}
	if (n < 1 || nthreads < 1 || nthreads > MAX_THREADS || optind != argc) {
		usage(argv[0]);
		return 2;
	}
	if (make_sysfs(sysfs, sizeof(sysfs))) {
		fprintf(stderr, "cannot make a fake sysfs in /tmp: %s\n", strerror(errno));
		return 1;
	}

	/*
	 * the always-on command line of the bench: -q --no-live -j FILE -d DEV;
	 * with -r: --record DIR instead of -j FILE (both with -o too)
	 */
	cli_defaults(&o);
	o.sysfs_root = sysfs;
	args[na++] = "iotracer", args[na++] = "-q", args[na++] = "--no-live";
	if (!rec_dir || json_given)
		args[na++] = "-j", args[na++] = (char *)path;
	if (rec_dir) {
		args[na++] = "--record", args[na++] = (char *)rec_dir;
		args[na++] = "--record-level", args[na++] = (char *)rec_level;
	}
	args[na++] = "-d", args[na++] = "7:0";
	ret = config_parse(na, args, &o, stdout, stderr);
	if (ret != CLI_RUN) {
		fprintf(stderr, "config_parse: %d\n", ret);
		return 1;
	}
	if (o.json_path) {
		json = fopen(o.json_path, "w");
		if (!json) {
			fprintf(stderr, "%s: %s\n", o.json_path, strerror(errno));
			return 1;
		}
	}
	if (o.record_dir) {
		struct rec_opts ro = { .dir = o.record_dir,
				       .seg_size = o.record_size,
				       .seg_age_ns = o.record_age_ns,
				       .max_bytes = o.record_max,
				       .level = o.record_level,
				       .sysfs_root = o.sysfs_root };

		d.rec = rec_open(&ro, t);
		if (!d.rec)
			return 1;
	}
	d.out = out_new(cli_out_config(&o, &(struct out_config){ 0 }), stdout, json, t);
	d.corr = d.out ? corr_new(on_request, &d, HOLD_NS, 0) : NULL;
	/* one drain period of records, with room to spare */
	ring_cap = (DRAIN_NS / (GAP_NS / 2) + 16) * (RING_REC_SPACE(sizeof(struct it_syscall_rec)) +
						     RING_REC_SPACE(sizeof(struct it_block_rec)));
	ring = malloc(ring_cap);
	if (!d.corr || !ring) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	for (long i = 0; i < nthreads; i++)
		threads[i] = (struct thread){ .tid = 48211 + (uint32_t)i, .seq = 1000 };

	drain_end = t + DRAIN_NS;
	while (done < n) {
		char *p = ring;
		uint64_t c0, w0;

		/* the requests that finished in this drain period (QD1 per thread) */
		while (done < n && t < drain_end) {
			p = make_request(p, &threads[done % nthreads], t);
			t += GAP_NS / 2 + rnd() % GAP_NS;
			done++;
		}
		c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
		w0 = clock_ns(CLOCK_MONOTONIC);
		replay_drain(&d, ring, (size_t)(p - ring), drain_end);
		cpu += clock_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
		wall += clock_ns(CLOCK_MONOTONIC) - w0;
		drain_end += DRAIN_NS;
	}
	corr_flush(d.corr);
	out_free(d.out); /* writes what it still holds */
	if (d.rec) {
		uint64_t c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);

		/* the last block's compression and write are the daemon's work too */
		d.lost += rec_close(d.rec);
		cpu += clock_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
	}
	corr_free(d.corr);
	free(ring);
	ret = json ? fclose(json) : 0;
	nftw(g_tmp, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	if (ret || d.lost) {
		fprintf(stderr, "write error or %llu records refused\n",
			(unsigned long long)d.lost);
		return 1;
	}
	if (rec_dir)
		printf("--record %s: %.1f bytes per request on disk\n", rec_dir,
		       (double)dir_bytes(rec_dir) / (double)n);
	printf("%ld requests (%ld records): %.1f ns CPU, %.1f ns wall per request -> %s\n", n,
	       2 * n, (double)cpu / (double)n, (double)wall / (double)n, json ? path : rec_dir);
	cli_free(&o);
	return 0;
}
