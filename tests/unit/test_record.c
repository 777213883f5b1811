// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of --record (records/recfmt.c, records/record.c) and its reader
 * (report/reader.c): synthetic requests written by the recorder into a
 * temporary directory come back field for field; corrupt, torn and
 * mutated segments are skipped and counted, never a crash (ASan/UBSan);
 * rotation, the disk budget and write errors (RLIMIT_FSIZE) behave as
 * documented. The Perfetto writer's output is checked by the format's own
 * rules in tests/tools/perfetto_check.jq (jq), on synthetic requests, and the
 * checker itself is shown to catch each rule broken.
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/jsonw.h"
#include "blame/blame_json.h"
#include "service/cli.h"
#include "records/output.h"
#include "records/recfmt.h"
#include "records/record.h"
#include "report/jsonl.h"
#include "records/reader.h"
#include "report/internal.h"
#include "json_lines.h"
#include "unit.h"

#define NREQ 3000

static char g_tmp[64];

/* ---- synthetic requests ---- */

struct sreq {
	struct rf_req q; /* what was written */
};

static uint64_t g_rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	return unit_rng(&g_rng);
}

static void fill_task(struct it_task *t, uint32_t tid)
{
	t->pid = 1000;
	t->tid = tid;
	t->cgroup_id = 77;
	snprintf(t->comm, sizeof(t->comm), "%s", tid & 1 ? "fio" : "dd");
}

static void fill_block(struct it_block_rec *b, uint64_t q, uint32_t tid, uint64_t seq)
{
	memset(b, 0, sizeof(*b));
	b->hdr.type = IT_REC_BLOCK;
	b->hdr.size = sizeof(*b);
	fill_task(&b->task, tid);
	b->seq = seq;
	b->sector = rnd() % 1000000;
	b->q_ns = q;
	b->g_ns = q + 100 + rnd() % 100;
	b->d_ns = q + 900 + rnd() % 1000;
	b->c_ns = b->d_ns + 10000 + rnd() % 50000;
	b->dev = IT_MKDEV(7, 0);
	b->bytes = 4096;
	b->op = IT_OP_READ;
	b->origin = IT_ORIG_SYSCALL;
	if (rnd() % 3 == 0) {
		b->drv_layer = IT_L_VIRTIO;
		b->drv_submit_ns = b->d_ns + 100;
		b->drv_done_ns = b->c_ns - 100;
	}
	if (rnd() % 4 == 0) { /* a writeback write: who dirtied it, page by page or per file */
		b->op = IT_OP_WRITE;
		b->flags |= IT_F_WB;
		fill_task(&b->wb.dirtier, tid + 7);
		b->wb.bytes = 3072;
		b->wb.other_pid = tid + 8;
		b->wb.other_bytes = 512;
		b->wb.unknown_bytes = 512;
		b->wb.unknown_why = IT_WB_MANY;
		b->wb.dirty_first_ns = q - 5000;
		b->wb.dirty_last_ns = q - 1000;
		b->wb.file_dev = IT_MKDEV(7, 0);
		b->wb.mode =
			(uint8_t)(rnd() % 2 ? IT_WBM_FILE | (rnd() % 2 ? IT_WBM_SHARED : 0) : 0);
	}
}

/* Request i: a mix of kinds, block counts, parents, and a time at base - 1. */
static void make_req(struct rf_req *q, int i, uint64_t t)
{
	memset(q, 0, sizeof(*q));
	q->id = (uint64_t)i + 1;
	q->kind = (enum corr_kind)(i % 4 + 1);
	q->nr_blocks = q->kind == CORR_BLOCK ? 1 : (int)(rnd() % 3);
	for (int k = 0; k < q->nr_blocks; k++)
		fill_block(&q->blocks[k], t + 1000 + k * 10, 2000 + i % 5, (uint64_t)i);
	if (q->kind == CORR_SYSCALL) {
		struct it_syscall_rec *s = &q->sys;

		s->hdr.type = IT_REC_SYSCALL;
		s->hdr.size = sizeof(*s);
		fill_task(&s->task, 2000 + i % 5);
		s->seq = (uint64_t)i;
		s->enter_ns = t;
		s->exit_ns = t + 60000 + rnd() % 1000;
		s->first_q_ns = q->nr_blocks ? t + 1000 : (i % 8 == 0 ? t - 1 : 0);
		s->offset = rnd() % (1ull << 40);
		s->bytes = 4096;
		s->ret = 4096;
		s->dev = IT_MKDEV(7, 0);
		s->sys = IT_SYS_PREAD64;
		s->flags = IT_F_DIO | IT_F_SCHED_CNT;
		s->runq_ns = rnd() % 5000;
	} else if (q->kind == CORR_URING) {
		q->uring.hdr.type = IT_REC_URING;
		q->uring.hdr.size = sizeof(q->uring);
		fill_task(&q->uring.task, 3000);
		q->uring.submit_ns = t;
		q->uring.complete_ns = t + rnd() % 100000;
		q->uring.user_data = rnd() % (1ull << 40);
		q->uring.dev = IT_MKDEV(259, 1);
	} else if (q->kind == CORR_AIO) {
		fill_task(&q->aio.task, 4000);
		q->aio.iocb.iocb = rnd();
		q->aio.iocb.nbytes = 8192;
		q->aio.submit_ns = t;
		q->aio.reap_ns = i % 7 ? t + 5000 : 0;
		q->aio.reaped = i % 7 != 0;
	} else {
		q->parent_valid = i % 2;
		q->parent_id = 5;
		q->parent_tid = 2001;
		q->parent_seq = 9;
	}
	q->nr_blocks_apart = i % 50 == 0 ? 2 : 0;
}

/* ---- reading back ---- */

struct bl_readback {
	const struct blame_line *want;
	int n, max, ok;
};

static void put32le(uint8_t *b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

struct readback {
	struct rf_req *want;
	int n, next, mismatches, first_bad;
};

static void on_req(void *ctx, const struct rr_reader *rr, const struct rf_req *q)
{
	struct readback *rb = ctx;
	struct corr_req r;
	struct rf_req copy;

	/* through the corr_req view and back, as the report does */
	rf_req_view(q, &r);
	rf_req_copy(&copy, &r);
	while (rb->next < rb->n && rb->want[rb->next].id != copy.id)
		rb->next++; /* requests of a skipped block */
	if (rb->next >= rb->n || memcmp(&rb->want[rb->next], &copy, sizeof(copy))) {
		if (!rb->mismatches++) {
			rb->first_bad = (int)copy.id;
			for (size_t k = 0; rb->next < rb->n && k < sizeof(copy); k++)
				if (((uint8_t *)&copy)[k] != ((uint8_t *)&rb->want[rb->next])[k]) {
					UNIT_LOG("id %llu kind %d: first difference at byte %zu\n",
						 (unsigned long long)copy.id, copy.kind, k);
					break;
				}
		}
		return;
	}
	rb->next++;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	uint8_t *b = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET)) {
		b = malloc((size_t)n);
		if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
			free(b);
			b = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return b;
}

/* The segment files of dir, sorted; returns how many (at most max). */
static int list_segments(const char *dir, char paths[][320], int max)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, alphasort), k = 0;

	for (int i = 0; i < n; i++) {
		if (strstr(ents[i]->d_name, RF_SEG_SUFFIX) && k < max)
			snprintf(paths[k++], 320, "%s/%s", dir, ents[i]->d_name);
		free(ents[i]);
	}
	if (n >= 0)
		free(ents);
	return k;
}

static uint64_t g_age_ns = REC_DEF_AGE_NS; /* --record-age of record() */

/* Write reqs[0..n) with the recorder into dir; returns rec_close()'s lost count. */
static uint64_t record(const char *dir, struct rf_req *reqs, int n, uint64_t seg_size, uint64_t max,
		       int level, int tick_every)
{
	struct rec_opts o = { .dir = dir,
			      .seg_size = seg_size,
			      .seg_age_ns = g_age_ns,
			      .max_bytes = max,
			      .sysfs_root = "/nonexistent",
			      .level = level };
	uint64_t now = 1000000000ull;
	struct recorder *rc = rec_open(&o, now);
	struct corr_req r;

	if (!rc)
		return UINT64_MAX;
	for (int i = 0; i < n; i++) {
		rf_req_view(&reqs[i], &r);
		rec_request(rc, &r);
		if (tick_every && i % tick_every == tick_every - 1) {
			now += RF_FLUSH_NS;
			rec_tick(rc, now);
		}
	}
	return rec_close(rc);
}

static struct rf_req *make_reqs(int n)
{
	struct rf_req *reqs = calloc((size_t)n, sizeof(*reqs));
	uint64_t t = 5000000000ull;

	for (int i = 0; reqs && i < n; i++) {
		make_req(&reqs[i], i, t);
		t += 1000 + rnd() % 30000;
	}
	return reqs;
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *fw)
{
	return remove(p);
}

static void mkdir_clean(char *dir, size_t n, const char *name)
{
	snprintf(dir, n, "%s/%s", g_tmp, name);
	nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

/* ---- tests ---- */

static void test_roundtrip(void)
{
	struct rf_req *reqs = make_reqs(NREQ);
	struct readback rb = { .want = reqs, .n = NREQ };
	char dir[128], segs[4][320];
	struct rr_reader rr;
	uint8_t *buf;
	size_t len = 0;

	if (!ASSERT_TRUE(reqs != NULL, "alloc"))
		return;
	for (int level = 0; level <= 1; level++) {
		mkdir_clean(dir, sizeof(dir), "rt");
		rb.next = rb.mismatches = 0;
		if (!ASSERT_EQ(record(dir, reqs, NREQ, REC_DEF_SIZE, REC_DEF_MAX, level, 500), 0,
			       "lost"))
			break;
		if (!ASSERT_EQ(list_segments(dir, segs, 4), 1, "one segment"))
			break;
		buf = slurp(segs[0], &len);
		rr_init(&rr, on_req, &rb);
		ASSERT_OK(rr_segment(&rr, buf, len), "rr_segment");
		ASSERT_EQ(rr.st.requests, NREQ, "requests");
		ASSERT_EQ(rb.mismatches, 0, "decoded == written");
		ASSERT_EQ(rr.st.bad_blocks + rr.st.torn, 0, "no bad blocks");
		ASSERT_TRUE(rr.st.blocks >= NREQ / 500, "a block per tick");
		ASSERT_EQ(rr.seg.abi, IT_ABI_VERSION, "abi");
		ASSERT_STREQ(rr_dev_name(&rr, IT_MKDEV(7, 0)), "7:0", "unnamed device");
		rr_free(&rr);
		free(buf);
	}
	free(reqs);
}

/* A cgroup entry decodes to what was written; a cut one is refused. */
static void test_cgroup_entry(void)
{
	uint8_t buf[RF_CG_MAX];
	const uint8_t *p = buf;
	struct rf_state st;
	struct rf_req *q = calloc(1, sizeof(*q));
	struct rf_dev dev;
	struct rf_cgroup cg;
	uint8_t *end = rf_put_cgroup(buf, 123456789012ull, "/system.slice/db.service");
	int tag = 0;

	memset(&st, 0, sizeof(st));
	if (!ASSERT_TRUE(q != NULL, "alloc"))
		return;
	ASSERT_OK(rf_get_entry(&st, &p, end, &tag, q, &dev, &cg, NULL, NULL), "decode");
	ASSERT_EQ(tag, RF_E_CGROUP, "tag");
	ASSERT_EQ(cg.id, 123456789012ull, "id");
	ASSERT_STREQ(cg.path, "/system.slice/db.service", "path");
	ASSERT_TRUE(p == end, "consumed");
	p = buf;
	ASSERT_EQ(rf_get_entry(&st, &p, end - 1, &tag, q, &dev, &cg, NULL, NULL), -EBADMSG,
		  "cut short");
	free(q);
}

/* The block boundaries of a segment (offsets of block headers). */
static int block_offsets(const uint8_t *b, size_t len, size_t *off, int max)
{
	size_t pos = RF_SEG_HDR_LEN;
	struct rf_blk_hdr h;
	int n = 0;

	while (n < max && !rf_blk_hdr_get(b + pos, len - pos, &h)) {
		off[n++] = pos;
		pos += RF_BLK_HDR_LEN + h.clen;
	}
	return n;
}

static void test_corrupt_and_torn(void)
{
	struct rf_req *reqs = make_reqs(NREQ);
	struct readback rb = { .want = reqs, .n = NREQ };
	char dir[128], segs[2][320];
	size_t len = 0, off[64];
	struct rr_reader rr;
	uint8_t *buf;
	int nb;

	mkdir_clean(dir, sizeof(dir), "bad");
	if (!ASSERT_EQ(record(dir, reqs, NREQ, REC_DEF_SIZE, REC_DEF_MAX, 0, 300), 0, "lost") ||
	    !ASSERT_EQ(list_segments(dir, segs, 2), 1, "one segment"))
		goto out;
	buf = slurp(segs[0], &len);
	nb = block_offsets(buf, len, off, 64);
	if (!ASSERT_TRUE(nb >= 7, "blocks"))
		goto out_buf;
	/* a flipped byte in the payload of block 2, then the file cut in the last block */
	buf[off[2] + RF_BLK_HDR_LEN + 10] ^= 0x5a;
	len = off[nb - 1] + (len - off[nb - 1]) / 2;
	rr_init(&rr, on_req, &rb);
	ASSERT_OK(rr_segment(&rr, buf, len), "rr_segment");
	ASSERT_EQ(rr.st.bad_blocks, 1, "the flipped block");
	ASSERT_EQ(rr.st.torn, 1, "the cut block");
	ASSERT_EQ(rr.st.blocks, nb - 2, "the others");
	ASSERT_EQ(rb.mismatches, 0, "what is read is right");
	ASSERT_TRUE(rr.st.requests < NREQ && rr.st.requests > NREQ / 2, "most requests");
	/* a flipped header byte: the block is skipped, the next one found again */
	buf[off[4] + 5] ^= 0x01;
	rb.next = rb.mismatches = 0;
	rr_free(&rr);
	rr_init(&rr, on_req, &rb);
	ASSERT_OK(rr_segment(&rr, buf, len), "rr_segment 2");
	ASSERT_EQ(rr.st.bad_blocks, 2, "two bad blocks");
	ASSERT_EQ(rr.st.blocks, nb - 3, "the others again");
	ASSERT_EQ(rb.mismatches, 0, "still right");
	/* not a segment */
	ASSERT_EQ(rr_segment(&rr, (const uint8_t *)"{\"type\":\"request\"}\n", 19), -EBADMSG,
		  "json");
	ASSERT_EQ(rr_segment(&rr, buf, 10), -EBADMSG, "short header");
	rr_free(&rr);
out_buf:
	free(buf);
out:
	free(reqs);
}

/* Every part of the report, fed what a mutated segment decodes to. */
struct mut_sinks {
	struct it_out *out;
	struct rp_slowest *top;
	struct pf *pf;
};

static void on_mut(void *ctx, const struct rr_reader *rr, const struct rf_req *rq)
{
	struct mut_sinks *m = ctx;
	struct corr_req r;
	struct rp_req q = { .r = &r };

	rf_req_view(rq, &r);
	rf_req_span(&r, &q.start_ns, &q.end_ns);
	out_request(&r, m->out);
	slowest_add(m->top, &q);
	pf_add(m->pf, &q);
}

static const char *no_dev_name(void *ctx, uint32_t dev)
{
	return NULL;
}

/*
 * Random mutations of a valid segment: counted, never a crash, and what
 * decodes goes through the summary, JSON, top and Perfetto code without a
 * sanitizer report (run under ASan/UBSan).
 */
static void test_mutations(void)
{
	struct rf_req *reqs = make_reqs(400);
	char dir[128], segs[2][320];
	struct mut_sinks sinks = { 0 };
	FILE *devnull = fopen("/dev/null", "w");
	struct rr_reader rr;
	struct it_opts o;
	uint8_t *buf, *m;
	size_t len = 0;

	mkdir_clean(dir, sizeof(dir), "fuzz");
	if (!ASSERT_EQ(record(dir, reqs, 400, REC_DEF_SIZE, REC_DEF_MAX, 1, 40), 0, "lost") ||
	    !ASSERT_EQ(list_segments(dir, segs, 2), 1, "one segment")) {
		free(reqs);
		return;
	}
	buf = slurp(segs[0], &len);
	m = malloc(len);
	cli_defaults(&o);
	o.live = 0;
	o.sysfs_root = "/nonexistent";
	sinks.out =
		devnull ? out_new(cli_out_config(&o, &(struct out_config){ 0 }), NULL, devnull, 0) :
			  NULL;
	sinks.top = slowest_new(5);
	sinks.pf = pf_new();
	for (int round = 0; m && sinks.out && sinks.top && sinks.pf && round < 1000; round++) {
		size_t n = len - (round % 5 == 0 ? rnd() % len : 0);

		memcpy(m, buf, len);
		for (int k = 0; k < 1 + round % 4; k++)
			m[RF_SEG_HDR_LEN + rnd() % (len - RF_SEG_HDR_LEN)] ^=
				(uint8_t)(1 + rnd() % 255);
		rr_init(&rr, on_mut, &sinks);
		rr_segment(&rr, m, n);
		rr_free(&rr);
	}
	ASSERT_TRUE(m && sinks.out && sinks.top && sinks.pf, "alloc");
	if (sinks.top)
		slowest_print(sinks.top, devnull, no_dev_name, NULL);
	if (sinks.pf)
		ASSERT_OK(pf_write(sinks.pf, devnull, no_dev_name, NULL), "pf_write");
	out_free(sinks.out);
	slowest_free(sinks.top);
	pf_free(sinks.pf);
	if (devnull)
		fclose(devnull);
	free(m);
	free(buf);
	free(reqs);
}

static uint64_t dir_size(const char *dir, int *nfiles)
{
	char segs[64][320];
	struct stat st;
	uint64_t sum = 0;

	*nfiles = list_segments(dir, segs, 64);
	for (int i = 0; i < *nfiles; i++)
		if (!stat(segs[i], &st))
			sum += (uint64_t)st.st_size;
	return sum;
}

/* The size of dir's largest segment. */
static uint64_t largest_segment(const char *dir)
{
	char segs[64][320];
	uint64_t max = 0;
	struct stat st;
	int n = list_segments(dir, segs, 64);

	for (int i = 0; i < n; i++)
		if (!stat(segs[i], &st) && (uint64_t)st.st_size > max)
			max = (uint64_t)st.st_size;
	return max;
}

static void test_rotation_budget(void)
{
	int n = 20000, nf;
	struct rf_req *reqs = make_reqs(n);
	char dir[128];
	uint64_t size;

	mkdir_clean(dir, sizeof(dir), "rot");
	/* ~50 bytes a request: ~1 MB in 64K segments, kept to 256K */
	ASSERT_EQ(record(dir, reqs, n, 64 << 10, 256 << 10, 0, 100), 0, "lost");
	size = dir_size(dir, &nf);
	ASSERT_TRUE(nf >= 3 && nf <= 4, "segments kept");
	/* the budget holds, and no segment passes its size (issue 37: 164K for 64K) */
	ASSERT_TRUE(size <= (256 << 10), "within the budget");
	ASSERT_TRUE(largest_segment(dir) <= (64 << 10), "no segment past --record-size");
	/* --record-size 64K --record-max 64K: one segment, never more than 64K on disk */
	mkdir_clean(dir, sizeof(dir), "one");
	ASSERT_EQ(record(dir, reqs, n, 64 << 10, 64 << 10, 0, 100), 0, "lost");
	size = dir_size(dir, &nf);
	ASSERT_TRUE(nf == 1 && size <= (64 << 10), "64K of 64K segments: one, within 64K");
	/* by age: a tick (1 s) every 100 requests, a new segment every 5 s */
	mkdir_clean(dir, sizeof(dir), "age");
	g_age_ns = 5 * RF_FLUSH_NS;
	ASSERT_EQ(record(dir, reqs, 2000, REC_DEF_SIZE, REC_DEF_MAX, 0, 100), 0, "lost");
	g_age_ns = REC_DEF_AGE_NS;
	dir_size(dir, &nf);
	ASSERT_EQ(nf, 4, "20 s in segments of 5 s");
	free(reqs);
}

static void test_write_error(void)
{
	int n = 20000, nf;
	struct rf_req *reqs = make_reqs(n);
	struct rlimit old, lim = { 100 << 10, 100 << 10 };
	char dir[128];
	uint64_t lost;

	mkdir_clean(dir, sizeof(dir), "full");
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	lim.rlim_max = old.rlim_max;
	if (setrlimit(RLIMIT_FSIZE, &lim)) {
		SKIP("setrlimit(RLIMIT_FSIZE): %s", strerror(errno));
		free(reqs);
		return;
	}
	/* segments of 1M never fit under the 100K file size limit: EFBIG, as a full disk */
	lost = record(dir, reqs, n, 1 << 20, 8 << 20, 0, 100);
	setrlimit(RLIMIT_FSIZE, &old);
	ASSERT_TRUE(lost > 0 && lost < (uint64_t)n, "some lost, some written");
	ASSERT_TRUE(dir_size(dir, &nf) <= (100 << 10), "no torn block left");
	free(reqs);
}

/* ---- JSON lines in ---- */

struct jsink {
	struct it_out *out;
	int n;
};

static void on_json(void *ctx, const struct rf_req *q)
{
	struct jsink *j = ctx;
	struct corr_req r;

	rf_req_view(q, &r);
	out_request(&r, j->out);
	j->n++;
}

/* The JSON lines of reqs as out_request() writes them; the caller frees. */
static char *json_of(struct rf_req *reqs, int n, size_t *len)
{
	return json_lines(reqs, n, len, NULL, NULL);
}

/* -j lines decoded and written again: the same bytes (numbers below 2^53). */
static void test_json_lines_in(void)
{
	struct rf_req *reqs = make_reqs(500);
	struct jsink j = { 0 };
	struct jl_stats st = { 0 };
	struct it_opts o;
	char *a, *b = NULL;
	size_t alen = 0, blen = 0;
	FILE *f;

	a = json_of(reqs, 500, &alen);
	f = open_memstream(&b, &blen);
	cli_defaults(&o);
	o.live = 0;
	o.sysfs_root = "/nonexistent";
	j.out = out_new(cli_out_config(&o, &(struct out_config){ 0 }), NULL, f, 0);
	if (!ASSERT_TRUE(a && j.out, "alloc"))
		goto out;
	ASSERT_OK(jl_read(a, alen, &(struct jl_devs){ 0 }, on_json, &j, &st), "jl_read");
	out_free(j.out);
	j.out = NULL;
	fclose(f);
	f = NULL;
	ASSERT_EQ(st.requests, 500, "requests");
	ASSERT_EQ(st.bad_lines, 0, "bad lines");
	ASSERT_EQ(blen, alen, "length");
	ASSERT_TRUE(blen == alen && !memcmp(a, b, alen), "same bytes");
	/* junk and other types: counted or skipped */
	memset(&st, 0, sizeof(st));
	{
		static const char junk[] =
			"{\"type\":\"summary\"}\nnot json\n{\"type\":\"request\",\"kind\":\"x\"}\n";

		jl_read(junk, sizeof(junk) - 1, &(struct jl_devs){ 0 }, on_json, &j, &st);
	}
	ASSERT_EQ(st.requests, 0, "no request");
	ASSERT_EQ(st.bad_lines, 2, "two bad lines");
out:
	out_free(j.out);
	if (f)
		fclose(f);
	free(a);
	free(b);
	free(reqs);
}

/* ---- perfetto ---- */

static const char *g_check; /* path of perfetto_check.jq */

/* Problems perfetto_check.jq finds in path (-1: jq failed). */
static int check_trace(const char *path)
{
	char cmd[512], line[512];
	FILE *p;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "jq -r -f %s %s 2>&1", g_check, path);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p))
		if (n++ == 0)
			UNIT_LOG("perfetto_check %s: %s", path, line);
	return pclose(p) ? -1 : n;
}

static const char *no_name(void *ctx, uint32_t dev)
{
	return dev == IT_MKDEV(7, 0) ? "loop0" : NULL;
}

static void test_perfetto_synthetic(void)
{
	struct rf_req *reqs = make_reqs(2000);
	struct pf *pf = pf_new();
	char path[128];
	FILE *f;

	if (!g_check) {
		SKIP("jq or tests/tools/perfetto_check.jq not found");
		goto out;
	}
	for (int i = 0; pf && i < 2000; i++) {
		struct corr_req r;
		struct rp_req q = { .r = &r };

		rf_req_view(&reqs[i], &r);
		rf_req_span(&r, &q.start_ns, &q.end_ns);
		pf_add(pf, &q);
	}
	snprintf(path, sizeof(path), "%s/trace.json", g_tmp);
	f = fopen(path, "w");
	if (!ASSERT_TRUE(f && pf, "open") || !ASSERT_OK(pf_write(pf, f, no_name, NULL), "pf_write"))
		goto out;
	fclose(f);
	ASSERT_EQ(check_trace(path), 0, "well formed");
out:
	pf_free(pf);
	free(reqs);
}

struct pfsink {
	struct pf *pf;
};

static void pf_req(void *ctx, const struct rf_req *rq)
{
	struct corr_req r;
	struct rp_req q = { .r = &r };

	rf_req_view(rq, &r);
	rf_req_span(&r, &q.start_ns, &q.end_ns);
	pf_add(((struct pfsink *)ctx)->pf, &q);
}

static void pf_path(void *ctx, const struct rp_path *g)
{
	pf_add_path(((struct pfsink *)ctx)->pf, g);
}

/*
 * Host mode: QEMU's host syscalls (request lines) and joined guest paths
 * whose guest times stray across the host's (clock uncertainty): well formed,
 * one flow per path to its host syscall.
 */
static void test_perfetto_host_paths(void)
{
	struct pfsink k = { .pf = pf_new() };
	struct jl_devs devs = { .path = pf_path, .ctx = &k };
	struct jl_stats st = { 0 };
	char *text = NULL, path[128], cmd[512];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	uint64_t t = 9000000000ull;

	if (!g_check) {
		SKIP("jq or tests/tools/perfetto_check.jq not found");
		goto out;
	}
	for (int i = 0; f && i < 200; i++, t += 100000) {
		/* guest kick 30 us after QEMU's submit: the clock offset was off */
		uint64_t skew = i % 3 ? 0 : 30000;

		fprintf(f,
			"{\"type\":\"request\",\"id\":%d,\"kind\":\"syscall\",\"ts_ns\":%llu,"
			"\"pid\":400,\"tid\":%d,\"comm\":\"qemu-system-x86\",\"cgroup_id\":1,"
			"\"syscall\":\"preadv\",\"op\":\"read\",\"ino\":5,\"offset\":0,"
			"\"bytes\":4096,\"ret\":4096,\"lat_ns\":20000,\"block\":[]}\n",
			i + 1, (unsigned long long)(t + 20000), 500 + i % 2);
		fprintf(f,
			"{\"type\":\"path\",\"peer\":1,\"session\":\"0x1\",\"seq\":%d,"
			"\"serial\":\"disk-%d\",\"op\":\"read\",\"offset\":%d,\"bytes\":4096,"
			"\"joined\":true,\"host_tid\":%d,\"t\":{\"guest_sys_enter\":%llu,"
			"\"guest_kick\":%llu,\"qemu_submit\":%llu,\"host_sys_enter\":%llu,"
			"\"host_sys_exit\":%llu,\"qemu_notify\":%llu,\"guest_irq\":%llu,"
			"\"guest_sys_exit\":%llu},\"stages_ns\":{}}\n",
			i, i % 2, i * 4096, 500 + i % 2, (unsigned long long)t,
			(unsigned long long)(t + 5000 + skew), (unsigned long long)(t + 10000),
			(unsigned long long)(t + 20000), (unsigned long long)(t + 40000),
			(unsigned long long)(t + 45000), (unsigned long long)(t + 50000),
			(unsigned long long)(t + 55000));
	}
	if (!ASSERT_TRUE(f && k.pf, "alloc"))
		goto out;
	fclose(f);
	f = NULL;
	ASSERT_OK(jl_read(text, len, &devs, pf_req, &k, &st), "jl_read");
	ASSERT_EQ(st.paths, 200, "paths");
	snprintf(path, sizeof(path), "%s/host.json", g_tmp);
	f = fopen(path, "w");
	if (!ASSERT_TRUE(f != NULL, "open") ||
	    !ASSERT_OK(pf_write(k.pf, f, no_name, NULL), "write"))
		goto out;
	fclose(f);
	f = NULL;
	ASSERT_EQ(check_trace(path), 0, "well formed");
	snprintf(cmd, sizeof(cmd),
		 "test $(jq '[.traceEvents[] | select(.ph == \"f\" and .name == \"host_io\")] | "
		 "length' %s) = 200",
		 path);
	ASSERT_EQ(system(cmd), 0, "a flow per path to its host syscall");
out:
	if (f)
		fclose(f);
	free(text);
	pf_free(k.pf);
}

/* The checker catches each broken rule (else a pass above would prove nothing). */
static void test_perfetto_checker(void)
{
	static const char *const bad[] = {
		/* dur < 0 */
		"{\"traceEvents\":[{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\","
		"\"args\":{\"name\":\"p\"}},{\"ph\":\"M\",\"pid\":1,\"tid\":1,\"name\":\"thread_name\","
		"\"args\":{\"name\":\"t\"}},{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":\"a\",\"ts\":1,"
		"\"dur\":-1}]}",
		/* crossing slices */
		"{\"traceEvents\":[{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\","
		"\"args\":{\"name\":\"p\"}},{\"ph\":\"M\",\"pid\":1,\"tid\":1,\"name\":\"thread_name\","
		"\"args\":{\"name\":\"t\"}},{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":\"a\",\"ts\":1,"
		"\"dur\":2},{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":\"b\",\"ts\":2,\"dur\":2}]}",
		/* a flow start without its end */
		"{\"traceEvents\":[{\"ph\":\"s\",\"pid\":1,\"tid\":1,\"id\":7,\"ts\":1}]}",
		/* no thread_name */
		"{\"traceEvents\":[{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\","
		"\"args\":{\"name\":\"p\"}},{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":\"a\",\"ts\":1,"
		"\"dur\":1}]}",
		/* a flow whose cat is not its slice's (DevTools' engine binds it to nothing) */
		"{\"traceEvents\":[{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\","
		"\"args\":{\"name\":\"p\"}},{\"ph\":\"M\",\"pid\":1,\"tid\":1,\"name\":\"thread_name\","
		"\"args\":{\"name\":\"t\"}},{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":\"a\",\"cat\":\"io\","
		"\"ts\":1,\"dur\":3},{\"ph\":\"s\",\"pid\":1,\"tid\":1,\"id\":7,\"ts\":1,\"cat\":\"flow\"},"
		"{\"ph\":\"f\",\"bp\":\"e\",\"pid\":1,\"tid\":1,\"id\":7,\"ts\":1,\"cat\":\"flow\"}],"
		"\"metadata\":{\"startTime\":\"2026-11-26T11:10:19.520909Z\"}}",
		/* no wall-clock anchor */
		"{\"traceEvents\":[]}",
	};
	static const char good[] =
		"{\"traceEvents\":[{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\","
		"\"args\":{\"name\":\"p\"}},{\"ph\":\"M\",\"pid\":1,\"tid\":1,\"name\":\"thread_name\","
		"\"args\":{\"name\":\"t\"}},{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":\"a\",\"ts\":1,"
		"\"dur\":3},{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":\"b\",\"ts\":2,\"dur\":2},"
		"{\"ph\":\"s\",\"pid\":1,\"tid\":1,\"id\":7,\"ts\":2},{\"ph\":\"f\",\"bp\":\"e\","
		"\"pid\":1,\"tid\":1,\"id\":7,\"ts\":2}],"
		"\"metadata\":{\"startTime\":\"2026-11-26T11:10:19.520909Z\"}}";
	char path[128];

	if (!g_check) {
		SKIP("jq or tests/tools/perfetto_check.jq not found");
		return;
	}
	snprintf(path, sizeof(path), "%s/case.json", g_tmp);
	unit_write_str(path, good);
	ASSERT_EQ(check_trace(path), 0, "good case");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		unit_write_str(path, bad[i]);
		if (!ASSERT_TRUE(check_trace(path) > 0, "bad case caught"))
			UNIT_LOG("case %zu not caught\n", i);
	}
}

/* The sum of every data-count="N" after each occurrence of tag in doc. */
static uint64_t sum_counts(const char *doc, const char *tag)
{
	uint64_t sum = 0;

	for (const char *p = strstr(doc, tag); p; p = strstr(p + 1, tag)) {
		const char *c = strstr(p, "data-count=\"");

		if (c)
			sum += strtoull(c + 12, NULL, 10);
	}
	return sum;
}

/* r: a kind block request of the one block request b (zeroed). */
static void block_req(struct corr_req *r, struct it_block_rec *b)
{
	memset(b, 0, sizeof(*b));
	memset(r, 0, sizeof(*r));
	r->kind = CORR_BLOCK;
	r->blocks[0] = b;
	r->nr_blocks = 1;
}

/*
 * The heatmap of known requests: 2 devices, latencies 1000 ns (row 512ns) and
 * 3 ms (row 2.1ms), 10 s apart, and 4 that never finished; reads and writes on
 * loop0. Every finished one lands in one cell; the panels, one per device and
 * op, hold their share.
 */
static void test_heatmap(void)
{
	struct hm *h = hm_new(IT_ST_TOTAL);
	char *doc = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&doc, &len);
	uint64_t n0r = 0, n0w = 0, n1 = 0;
	char tag[64];
	struct it_block_rec b;
	struct corr_req r;

	if (!ASSERT_TRUE(h && f, "hm_new"))
		goto out;
	block_req(&r, &b);
	for (int i = 0; i < 1000; i++) {
		struct rp_req q = { .r = &r,
				    .start_ns = 5000000000ull + (uint64_t)i * 10000000,
				    .real_off_ns = 1 };
		uint32_t dev = i % 3 ? IT_MKDEV(7, 0) : IT_MKDEV(8, 16);

		b.dev = dev;
		b.op = dev == IT_MKDEV(7, 0) && i % 4 == 1 ? IT_OP_WRITE : IT_OP_READ;
		q.end_ns = q.start_ns + (i % 2 ? 1000 : 3000000);
		if (i % 250 == 7)
			q.end_ns = 0;
		hm_add(h, &q, dev);
		if (q.end_ns)
			*(dev != IT_MKDEV(7, 0) ? &n1 : b.op == IT_OP_WRITE ? &n0w : &n0r) += 1;
	}
	if (!ASSERT_OK(hm_write(h, f, no_name, NULL), "hm_write"))
		goto out;
	fclose(f);
	f = NULL;
	ASSERT_EQ(sum_counts(doc, "<rect class=\"cell\""), n0r + n0w + n1, "cells add up");
	ASSERT_TRUE(strstr(doc, "996 requests (4 unfinished") != NULL, "title counts");
	ASSERT_TRUE(strstr(doc, "IO latency heatmap: total latency") != NULL, "stage named");
	ASSERT_TRUE(strstr(doc, "data-device=\"loop0\" data-count=\"") != NULL, "named panel");
	ASSERT_EQ(sum_counts(doc, "data-device=\"loop0\""), n0r + n0w, "loop0 panels");
	snprintf(tag, sizeof(tag), "data-count=\"%llu\" data-op=\"write\"",
		 (unsigned long long)n0w);
	ASSERT_TRUE(n0w && strstr(doc, tag) != NULL, "one write panel");
	ASSERT_TRUE(strstr(doc, ">loop0 write: ") && strstr(doc, ">loop0 read: "), "panel names");
	ASSERT_EQ(sum_counts(doc, "data-device=\"8:16\""), n1, "8:16 panel");
	ASSERT_TRUE(strstr(doc, ">512ns<") && strstr(doc, ">2.1ms<"), "row labels");
	/* 10 s in at most 120 columns: 100 ms each; ticks in seconds from 0 */
	ASSERT_TRUE(strstr(doc, "100ms per column") != NULL, "column width");
	ASSERT_TRUE(strstr(doc, ">time since the first request (s)<") != NULL, "x axis");
	ASSERT_TRUE(strstr(doc, ">0<") != NULL && !strstr(doc, "+0"), "first tick");
out:
	if (f)
		fclose(f);
	free(doc);
	hm_free(h);
}

/* Legends and empty pictures: each count once, and nothing said of columns of nothing. */
static void test_heatmap_edges(void)
{
	struct hm *h = hm_new(IT_ST_Q2D);
	char *doc = NULL, *p;
	size_t len = 0;
	FILE *f = open_memstream(&doc, &len);
	struct it_block_rec b;
	struct corr_req r;
	int legends = 0;

	if (!ASSERT_TRUE(h && f, "hm_new"))
		goto out;
	block_req(&r, &b);
	b.dev = IT_MKDEV(7, 0);
	/* two requests in one cell, one alone: the busiest cell holds 2 */
	for (int i = 0; i < 3; i++) {
		struct rp_req q = { .r = &r, .start_ns = 1000000000ull, .real_off_ns = 1 };

		b.q_ns = q.start_ns;
		b.d_ns = q.start_ns + 5000;
		b.c_ns = q.start_ns + 9000;
		q.end_ns = b.c_ns;
		if (i == 2)
			q.start_ns += 4000000000ull, b.q_ns += 4000000000ull, b.d_ns = 0;
		hm_add(h, &q, b.dev);
	}
	if (!ASSERT_OK(hm_write(h, f, no_name, NULL), "hm_write"))
		goto out;
	fclose(f);
	f = NULL;
	for (p = strstr(doc, "class=\"legend\""); p; p = strstr(p + 1, "class=\"legend\""))
		legends++;
	ASSERT_EQ(legends, 2, "legend: 1 and 2, each once");
	ASSERT_TRUE(strstr(doc, "IO latency heatmap: q2d") != NULL, "stage named");
	/* the third has no issue stamp: no q2d */
	ASSERT_TRUE(strstr(doc, "2 requests (1 unfinished") != NULL, "title counts");
	ASSERT_EQ(sum_counts(doc, "<rect class=\"cell\""), 2, "cells");
	hm_free(h);
	free(doc);
	doc = NULL;
	h = hm_new(IT_ST_TOTAL);
	f = open_memstream(&doc, &len);
	if (!ASSERT_TRUE(h && f, "hm_new") || !ASSERT_OK(hm_write(h, f, no_name, NULL), "empty"))
		goto out;
	fclose(f);
	f = NULL;
	ASSERT_TRUE(strstr(doc, "no finished request") != NULL, "empty said");
	ASSERT_TRUE(!strstr(doc, "per column") && !strstr(doc, "class=\"cell\""), "no columns");
out:
	if (f)
		fclose(f);
	free(doc);
	hm_free(h);
}

/* ---- the blame entry (RF_E_BLAME) and sized entries ---- */

static void mk_line(struct blame_line *l, uint64_t id, int nr)
{
	memset(l, 0, sizeof(*l));
	l->id = id;
	l->requests = 1 + id % 3;
	l->own_ns = 150000 + id;
	l->unattr_ns = id % 7;
	l->self_ns = id % 2 ? 0 : 4000;
	l->others_ns = 7000000 + 13 * id;
	l->wait_ns = l->own_ns + l->unattr_ns + l->self_ns + l->others_ns;
	l->nr = nr;
	for (int i = 0; i < nr; i++) {
		l->cgroup_id[i] = 4000 + (uint64_t)i + id % 2;
		l->ns[i] = l->others_ns / (uint64_t)(2 << i);
		l->named |= (unsigned int)(id + (uint64_t)i) % 2 << i;
	}
	l->other_ns = nr == BLAME_LINE_TOP ? 1 + id % 1000 : 0;
}

/* A blame entry decodes to what was written (its id against the block's last request id). */
static void test_blame_entry(void)
{
	uint8_t buf[RF_BLAME_MAX + 16], *end;
	struct rf_state st;
	struct rf_req *q = calloc(1, sizeof(*q));
	struct rf_dev dev;
	struct rf_cgroup cg;
	struct blame_line in, out;
	const uint8_t *p;
	int tag = 0;

	if (!ASSERT_TRUE(q != NULL, "alloc"))
		return;
	memset(&st, 0, sizeof(st));
	for (int nr = 0; nr <= BLAME_LINE_TOP; nr++) {
		st.id = 5000 + (uint64_t)nr;
		mk_line(&in, 4990 + (uint64_t)nr * 9, nr);
		end = rf_put_blame(&st, buf, &in);
		ASSERT_TRUE(end - buf <= RF_BLAME_MAX, "within RF_BLAME_MAX");
		p = buf;
		ASSERT_OK(rf_get_entry(&st, &p, end, &tag, q, &dev, &cg, &out, NULL), "decode");
		ASSERT_EQ(tag, RF_E_BLAME, "tag");
		ASSERT_TRUE(p == end, "consumed");
		ASSERT_TRUE(!memcmp(&in, &out, sizeof(in)), "decoded == written");
		/* every cut is refused, never read past */
		for (const uint8_t *cut = buf; cut < end; cut++) {
			p = buf;
			if (!ASSERT_EQ(rf_get_entry(&st, &p, cut, &tag, q, &dev, &cg, &out, NULL),
				       -EBADMSG, "cut short"))
				break;
		}
	}
	/* a named bit past the culprits, and a body longer than its fields: refused */
	{
		uint8_t b2[RF_BLAME_MAX];
		size_t k = 0;

		/* the flags byte: where the encodings of named 0 and 1 differ */
		mk_line(&in, 1, 1);
		in.named = 0;
		end = rf_put_blame(&st, buf, &in);
		in.named = 1;
		rf_put_blame(&st, b2, &in);
		while (buf + k < end && buf[k] == b2[k])
			k++;
		ASSERT_EQ(buf[k], 1, "nr 1, named 0");
		buf[k] = 1 | 4 << 2; /* nr 1, named bit 2 */
		p = buf;
		ASSERT_EQ(rf_get_entry(&st, &p, end, &tag, q, &dev, &cg, &out, NULL), -EBADMSG,
			  "named past nr");
		buf[k] = 1 | 1 << 2;
		p = buf;
		ASSERT_OK(rf_get_entry(&st, &p, end, &tag, q, &dev, &cg, &out, NULL),
			  "named 1 again");
	}
	/* a sized entry of a kind this build does not know: skipped whole, its tag said */
	{
		const uint8_t unk[] = { 9, 3, 0xff, 0xff, 0xff, RF_E_CGROUP };

		p = unk;
		ASSERT_OK(rf_get_entry(&st, &p, unk + sizeof(unk), &tag, q, &dev, &cg, &out, NULL),
			  "unknown kind");
		ASSERT_EQ(tag, 9, "its tag");
		ASSERT_TRUE(p == unk + 5, "skipped its length");
		p = unk;
		ASSERT_EQ(rf_get_entry(&st, &p, unk + 4, &tag, q, &dev, &cg, &out, NULL), -EBADMSG,
			  "unknown kind cut short");
	}
	free(q);
}

static void on_blame(void *ctx, const struct rr_reader *rr, const struct blame_line *l)
{
	struct bl_readback *b = ctx;

	(void)rr;
	if (b->n < b->max && !memcmp(&b->want[b->n], l, sizeof(*l)))
		b->ok++;
	b->n++;
}

static void on_req_count(void *ctx, const struct rr_reader *rr, const struct rf_req *q)
{
	(void)ctx;
	(void)rr;
	(void)q;
}

#define NBL 400

/*
 * The recorder with --blame: every line comes back after its request, the
 * segment says it records blame, the last block holds lines only.
 */
static void test_blame_record(void)
{
	struct rf_req *reqs = make_reqs(NBL);
	struct blame_line *lines = calloc(NBL, sizeof(*lines));
	struct rec_opts o = { .seg_size = REC_DEF_SIZE,
			      .seg_age_ns = REC_DEF_AGE_NS,
			      .max_bytes = REC_DEF_MAX,
			      .sysfs_root = "/nonexistent",
			      .blame = 1 };
	struct bl_readback b = { .want = lines, .max = NBL };
	char dir[128], segs[2][320];
	uint64_t now = 1000000000ull;
	struct recorder *rc;
	struct rr_reader rr;
	struct corr_req r;
	int nl = 0;
	size_t len = 0;
	uint8_t *buf = NULL;

	if (!ASSERT_TRUE(reqs && lines, "alloc"))
		goto out;
	mkdir_clean(dir, sizeof(dir), "blame");
	o.dir = dir;
	rc = rec_open(&o, now);
	if (!ASSERT_TRUE(rc != NULL, "rec_open"))
		goto out;
	for (int i = 0; i < NBL; i++) {
		rf_req_view(&reqs[i], &r);
		rec_request(rc, &r);
		/* the line of the request 5 back (the daemon's horizon) */
		if (i >= 5) {
			mk_line(&lines[nl], reqs[i - 5].id, (i % 4));
			rec_blame(rc, &lines[nl++]);
		}
		if (i % 97 == 96)
			rec_tick(rc, now += RF_FLUSH_NS);
	}
	rec_tick(rc, now += RF_FLUSH_NS);
	for (int i = NBL - 5; i < NBL; i++) {
		mk_line(&lines[nl], reqs[i].id, BLAME_LINE_TOP);
		rec_blame(rc, &lines[nl++]);
	}
	ASSERT_EQ(rec_close(rc), 0, "lost");
	if (!ASSERT_EQ(list_segments(dir, segs, 2), 1, "one segment"))
		goto out;
	buf = slurp(segs[0], &len);
	rr_init(&rr, on_req_count, &b);
	rr.blame_fn = on_blame;
	ASSERT_OK(rr_segment(&rr, buf, len), "rr_segment");
	ASSERT_EQ(rr.seg.format, RF_FORMAT, "format");
	ASSERT_TRUE(rr.seg.flags & RF_SEG_F_BLAME, "the segment says it records blame");
	ASSERT_EQ(rr.st.requests, NBL, "requests");
	ASSERT_EQ(rr.st.blames, NBL, "lines");
	ASSERT_EQ(b.ok, NBL, "lines decoded == written, in order");
	ASSERT_EQ(rr.st.bad_blocks + rr.st.torn + rr.st.unknown, 0, "nothing skipped");
	/* the file cut inside its last block (lines only): torn, the rest read */
	rr_free(&rr);
	memset(&b, 0, sizeof(b));
	b.want = lines;
	b.max = NBL;
	{
		size_t off[64];
		int nb = block_offsets(buf, len, off, 64);

		rr_init(&rr, on_req_count, &b);
		rr.blame_fn = on_blame;
		ASSERT_OK(rr_segment(&rr, buf, off[nb - 1] + RF_BLK_HDR_LEN + 3), "cut");
		ASSERT_EQ(rr.st.torn, 1, "the cut block torn");
		ASSERT_EQ(rr.st.requests, NBL, "every request before it");
		ASSERT_EQ(rr.st.blames, NBL - 5, "the lines before it");
		ASSERT_EQ(b.ok, NBL - 5, "right");
		rr_free(&rr);
	}
out:
	free(buf);
	free(lines);
	free(reqs);
}

/* seg := a header of format fmt, flags, and one block of payload raw. Its length. */
static size_t mk_segment(uint8_t *seg, size_t cap, int fmt, uint32_t flags, const uint8_t *raw,
			 size_t rlen, uint32_t nr_req)
{
	struct rf_seg_hdr h = { .abi = IT_ABI_VERSION, .flags = flags };
	struct rf_blk_hdr bh = { .rlen = (uint32_t)rlen, .nr_req = nr_req };
	uLongf cl = cap - RF_SEG_HDR_LEN - RF_BLK_HDR_LEN;
	uint8_t *z = seg + RF_SEG_HDR_LEN + RF_BLK_HDR_LEN;

	rf_seg_hdr_put(seg, &h);
	seg[8] = (uint8_t)fmt;
	seg[9] = 0;
	put32le(seg + 252, (uint32_t)crc32(0, seg, 252));
	if (compress2(z, &cl, raw, rlen, 0) != Z_OK)
		return 0;
	bh.clen = (uint32_t)cl;
	bh.crc = (uint32_t)crc32(0, z, bh.clen);
	rf_blk_hdr_put(seg + RF_SEG_HDR_LEN, &bh);
	return RF_SEG_HDR_LEN + RF_BLK_HDR_LEN + cl;
}

/*
 * A reader meets an entry kind it does not know: skipped, counted, the block
 * still read; format 1 (before sized entries) still reads; a newer one is refused;
 * a blame entry longer than its block is a bad block.
 */
static void test_blame_unknown_and_formats(void)
{
	struct rf_req *reqs = make_reqs(2);
	uint8_t *raw = malloc(4096), *seg = malloc(8192), *p;
	struct bl_readback b = { 0 };
	struct blame_line l;
	struct rf_state st;
	struct corr_req r;
	struct rr_reader rr;
	size_t n;

	if (!ASSERT_TRUE(reqs && raw && seg, "alloc"))
		goto out;
	memset(&st, 0, sizeof(st));
	rf_req_view(&reqs[0], &r);
	p = rf_put_req(&st, raw, &r);
	*p++ = 0x42; /* a kind from a later build: 5 bytes of it */
	*p++ = 5;
	memset(p, 0x80, 5);
	p += 5;
	mk_line(&l, reqs[0].id, 2);
	b.want = &l;
	b.max = 1;
	p = rf_put_blame(&st, p, &l);
	rf_req_view(&reqs[1], &r);
	p = rf_put_req(&st, p, &r);
	n = mk_segment(seg, 8192, RF_FORMAT, RF_SEG_F_BLAME, raw, (size_t)(p - raw), 2);
	rr_init(&rr, on_req_count, &b);
	rr.blame_fn = on_blame;
	ASSERT_OK(rr_segment(&rr, seg, n), "rr_segment");
	ASSERT_EQ(rr.st.unknown, 1, "the unknown entry counted");
	ASSERT_EQ(rr.st.requests, 2, "both requests");
	ASSERT_EQ(b.ok, 1, "the blame line after it");
	ASSERT_EQ(rr.st.bad_blocks, 0, "no bad block");
	rr_free(&rr);
	/* format 1: read (no flags) */
	n = mk_segment(seg, 8192, 1, 0, raw, (size_t)(p - raw), 2);
	rr_init(&rr, on_req_count, &b);
	ASSERT_OK(rr_segment(&rr, seg, n), "format 1");
	ASSERT_EQ(rr.st.requests, 2, "format 1's requests");
	ASSERT_EQ(rr.seg.flags, 0, "format 1: no flags");
	/* a format from a later build: refused, counted */
	n = mk_segment(seg, 8192, RF_FORMAT + 1, 0, raw, (size_t)(p - raw), 2);
	ASSERT_EQ(rr_segment(&rr, seg, n), -EPROTO, "a later format");
	ASSERT_EQ(rr.st.bad_segments, 1, "counted");
	rr_free(&rr);
	/* a blame entry whose length runs past the payload: the block is bad */
	memset(&st, 0, sizeof(st));
	p = rf_put_blame(&st, raw, &l);
	raw[1] += 40;
	n = mk_segment(seg, 8192, RF_FORMAT, RF_SEG_F_BLAME, raw, (size_t)(p - raw), 0);
	rr_init(&rr, on_req_count, &b);
	ASSERT_OK(rr_segment(&rr, seg, n), "rr_segment");
	ASSERT_EQ(rr.st.bad_blocks + rr.st.torn, 1, "the block skipped");
	ASSERT_EQ(rr.st.blames, 0, "no line from it");
	rr_free(&rr);
out:
	free(seg);
	free(raw);
	free(reqs);
}

/* The line's bytes: the daemon's -j and report -j write them from the same struct. */
static void test_blame_line_json(void)
{
	struct blame_line l = { .id = 8812,
				.requests = 1,
				.wait_ns = 7912004,
				.own_ns = 151220,
				.others_ns = 7760784,
				.nr = 2,
				.cgroup_id = { 4322, 4323 },
				.ns = { 7000000, 760784 },
				.named = 1,
				.other_ns = 3 };
	const char *path[BLAME_LINE_TOP] = { "/aggA", NULL, NULL };
	struct jw j;

	jw_init(&j);
	blame_json_line(&j, &l, path);
	ASSERT_STREQ(jw_data(&j),
		     "{\"type\":\"blame\",\"id\":8812,\"by\":\"cgroup\",\"requests\":1,"
		     "\"wait_ns\":7912004,\"own_ns\":151220,\"unattributed_ns\":0,\"self_ns\":0,"
		     "\"others_ns\":7760784,\"culprits\":[{\"who\":{\"cgroup_id\":4322,"
		     "\"cgroup\":\"/aggA\"},\"ns\":7000000},{\"who\":{\"cgroup_id\":4323},"
		     "\"ns\":760784},{\"other\":true,\"ns\":3}]}",
		     "the line");
	jw_free(&j);
}

/* The report's table of requests waiting for their line, against a plain array. */
static void test_stored_table(void)
{
	enum { N = 5000 };
	struct rp_stored *s = st_new();
	static uint8_t in[N];
	uint64_t cg, count = 0;
	uint32_t dev;
	int victim, bad = 0;

	if (!ASSERT_TRUE(s != NULL, "alloc"))
		return;
	memset(in, 0, sizeof(in));
	for (int k = 0; k < 200000 && !bad; k++) {
		uint64_t id = rnd() % N;

		if (rnd() % 3) {
			if (st_put(s, id, (uint32_t)id * 3, id * 7, (int)(id & 1)))
				bad = 1;
			count += !in[id];
			in[id] = 1;
		} else {
			int got = st_take(s, id, &dev, &cg, &victim);

			if (got != in[id] || (got && (dev != (uint32_t)id * 3 || cg != id * 7 ||
						      victim != (int)(id & 1))))
				bad = 1;
			count -= in[id];
			in[id] = 0;
		}
		if (st_count(s) != count)
			bad = 1;
	}
	ASSERT_EQ(bad, 0, "the table agrees with the array");
	for (uint64_t id = 0; id < N; id++)
		ASSERT_EQ(st_take(s, id, &dev, &cg, &victim), in[id], "the rest");
	ASSERT_EQ(st_count(s), 0, "empty");
	st_free(s);
}

int main(void)
{
	snprintf(g_tmp, sizeof(g_tmp), "/tmp/it_test_record.XXXXXX");
	if (!mkdtemp(g_tmp)) {
		perror("mkdtemp");
		return 1;
	}
	if (!system("jq --version >/dev/null 2>&1")) {
		if (!access("tests/tools/perfetto_check.jq", R_OK))
			g_check = "tests/tools/perfetto_check.jq";
		else if (!access("../../tests/tools/perfetto_check.jq", R_OK))
			g_check = "../../tests/tools/perfetto_check.jq";
	}
	RUN_TEST(test_roundtrip);
	RUN_TEST(test_corrupt_and_torn);
	RUN_TEST(test_cgroup_entry);
	RUN_TEST(test_blame_entry);
	RUN_TEST(test_blame_record);
	RUN_TEST(test_blame_unknown_and_formats);
	RUN_TEST(test_blame_line_json);
	RUN_TEST(test_stored_table);
	RUN_TEST(test_mutations);
	RUN_TEST(test_rotation_budget);
	RUN_TEST(test_write_error);
	RUN_TEST(test_json_lines_in);
	RUN_TEST(test_perfetto_synthetic);
	RUN_TEST(test_perfetto_host_paths);
	RUN_TEST(test_perfetto_checker);
	RUN_TEST(test_heatmap);
	RUN_TEST(test_heatmap_edges);
	nftw(g_tmp, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	return unit_result();
}
