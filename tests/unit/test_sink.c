// SPDX-License-Identifier: GPL-2.0
/*
 * test_sink: the ClickHouse sink's pure parts (src/sink/, docs/fleet.md): a
 * request into a row and back gives the same -j line (its files' names too); Native blocks read
 * back, and refused when cut or mangled; the clickhouse:// address and the
 * password file's rules; the shipped DDL (deploy/clickhouse/schema.sql) has
 * the columns this build writes; and with no server at all, every request
 * handed to the sink is in its spill directory after sink_finish(), or
 * counted dropped when the spill is full.
 */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/jsonw.h"
#include "records/fname.h"
#include "records/output.h"
#include "records/reader.h"
#include "records/recfmt.h"
#include "service/cli.h"
#include "sink/http.h"
#include "sink/native.h"
#include "sink/rows.h"
#include "sink/schema.h"
#include "sink/sink.h"
#include "json_lines.h"
#include "unit.h"

static uint64_t g_rng = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	return unit_rng(&g_rng);
}

static void fill_task(struct it_task *t, uint32_t tid, uint64_t cg)
{
	t->pid = 1000 + tid % 3;
	t->tid = tid;
	t->cgroup_id = cg;
	snprintf(t->comm, sizeof(t->comm), "%s", tid & 1 ? "fio" : "postgres");
}

/* A block record with every stage, a driver now and then, a page-cache write now and then. */
static void fill_block(struct it_block_rec *b, uint64_t q, uint32_t tid, int i)
{
	memset(b, 0, sizeof(*b));
	b->hdr.type = IT_REC_BLOCK;
	b->hdr.size = sizeof(*b);
	fill_task(&b->task, tid, 77);
	b->sector = i % 11 == 0 ? UINT64_MAX : rnd() % 1000000;
	b->q_ns = q;
	b->flags = IT_F_HAS_Q;
	if (i % 3) {
		b->g_ns = q + 100 + rnd() % 100;
		b->flags |= IT_F_HAS_G;
	}
	if (i % 4 == 1) {
		b->i_ns = q + 400;
		b->flags |= IT_F_HAS_I;
	}
	if (i % 13) /* else never issued */
		b->d_ns = q + 900 + rnd() % 1000;
	b->c_ns = q + 20000 + rnd() % 50000;
	b->dev = IT_MKDEV(7, i % 2);
	b->bytes = 4096 * (1 + i % 4);
	b->ino = 93;
	b->op = i % 5 ? IT_OP_READ : IT_OP_WRITE;
	b->origin = (uint8_t)(i % 4);
	b->nr_merged = (uint16_t)(i % 3);
	b->error = i % 17 == 0 ? -5 : 0;
	if (i % 3 == 0) {
		b->drv_layer = IT_L_VIRTIO;
		b->drv_submit_ns = q + 950;
		b->drv_kick_ns = q + 960;
		b->drv_done_ns = b->c_ns - 100;
		b->drv_qid = 1;
		b->drv_tag = 66;
	}
	if (i % 5 == 0) {
		b->flags |= IT_F_WB;
		fill_task(&b->wb.dirtier, 4242, 78);
		b->wb.blkcg_id = 78;
		b->wb.bytes = 4096;
		b->wb.other_pid = i % 2 ? 77 : 0;
		b->wb.other_bytes = i % 2 ? 8192 : 0;
		b->wb.unknown_bytes = 4096;
		b->wb.unknown_why = IT_WB_NOT_NOTED | IT_WB_MANY;
		b->wb.dirty_first_ns = q - 5000000;
		b->wb.dirty_last_ns = q - 1000;
		b->wb.file_dev = IT_MKDEV(8, 1);
	}
	if (i % 6 == 2) /* a page-cache page's file: its own file system */
		b->file_dev = IT_MKDEV(8, 2);
}

/*
 * A storage stack now and then (bpf/stack.bpf.h): an upper bio of dm-0 and its
 * members, a partition's request, a member whose upper bio was not followed.
 */
static void make_stack(struct rf_req *q, int i)
{
	struct it_block_rec *up = &q->blocks[0], *last = &q->blocks[q->nr_blocks - 1];

	if (i % 10 == 3 && q->nr_blocks >= 2) {
		up->flags |= IT_F_UPPER;
		up->dev = IT_MKDEV(253, 0);
		up->drv_layer = 0;
		up->drv_kick_ns = 0;
		up->stk_r_ns = up->q_ns + 300;
		up->stk_m_ns = i % 20 == 3 ? 0 : up->c_ns - 200; /* none seen, or seen */
		up->stk_pieces = (uint32_t)q->nr_blocks - 1;
		for (int k = 1; k < q->nr_blocks; k++) {
			q->blocks[k].up_dev = IT_MKDEV(253, 0);
			q->blocks[k].up_off = (uint16_t)((k - 1) * 8);
		}
	} else if (i % 10 == 7 && q->nr_blocks >= 1) {
		last->up_dev = IT_MKDEV(259, 3);
		last->up_off = IT_STK_PART;
	} else if (i % 10 == 9 && q->nr_blocks >= 1) {
		last->up_dev = IT_MKDEV(253, 1);
		last->up_off = 16;
		last->flags |= IT_F_STK_LOST;
	}
}

/* Request i of every kind, with the fields a -j line shows by their presence. */
static void make_req(struct rf_req *q, int i, uint64_t t)
{
	memset(q, 0, sizeof(*q));
	q->id = (uint64_t)i + 1;
	q->kind = (enum corr_kind)(i % 4 + 1);
	q->nr_blocks = q->kind == CORR_BLOCK ? 1 + i % 2 : (int)(rnd() % 3);
	for (int k = 0; k < q->nr_blocks; k++)
		fill_block(&q->blocks[k], t + 1000 + (uint64_t)k * 10, 2000 + (uint32_t)i % 5,
			   i + k);
	if (q->kind == CORR_SYSCALL) {
		struct it_syscall_rec *s = &q->sys;

		s->hdr.type = IT_REC_SYSCALL;
		s->hdr.size = sizeof(*s);
		fill_task(&s->task, 2000 + (uint32_t)i % 5, i % 6 ? 77 : 79);
		s->enter_ns = t;
		s->exit_ns = t + 60000 + rnd() % 100000;
		s->first_q_ns = q->nr_blocks ? t + 1000 : 0;
		s->offset = rnd() % (1ull << 40);
		s->bytes = 4096;
		s->ret = i % 9 ? 4096 : -11;
		s->dev = IT_MKDEV(7, 0);
		s->ino = 93;
		s->sys = (uint16_t)(i % IT_SYS_IO_SUBMIT);
		s->op = i % 2 ? IT_OP_READ : IT_OP_WRITE;
		s->flags = IT_F_DIO | (i % 2 ? IT_F_SCHED_CNT : 0) | (i % 3 ? IT_F_SCHED_SW : 0);
		s->nr_bios = (uint32_t)q->nr_blocks;
		s->cache_miss_pages = (uint32_t)(i % 4);
		s->vfs_ns = i % 7 ? 0 : 1234;
		s->nr_switches = 3;
		s->nr_preempt = 1;
		s->runq_ns = rnd() % 5000;
		s->offcpu_ns = 40000;
		s->offcpu_blocked_ns = 39000;
		s->waker_tid = i % 2 ? 77 : 0;
		snprintf(s->waker_comm, sizeof(s->waker_comm), "%s", i % 2 ? "kworker/1:1" : "");
	} else if (q->kind == CORR_URING) {
		q->uring.hdr.type = IT_REC_URING;
		q->uring.hdr.size = sizeof(q->uring);
		fill_task(&q->uring.task, 3000, 77);
		q->uring.submit_ns = t;
		q->uring.complete_ns = t + rnd() % 100000;
		q->uring.user_data = rnd() % (1ull << 40);
		q->uring.opcode = 22;
		q->uring.res = 4096;
		q->uring.dev = IT_MKDEV(259, 1);
		q->uring.ino = 12;
		q->uring.op = IT_OP_READ;
	} else if (q->kind == CORR_AIO) {
		fill_task(&q->aio.task, 4000, 77);
		q->aio.iocb.iocb = rnd();
		q->aio.iocb.nbytes = 8192;
		q->aio.iocb.offset = 4096;
		q->aio.iocb.dev = IT_MKDEV(7, 0);
		q->aio.iocb.opcode = 1;
		if (i % 8 == 6) { /* a block device node's fd */
			q->aio.iocb.ino = 5;
			q->aio.iocb.flags = IT_F_BDEV;
		}
		q->aio.submit_ns = t;
		q->aio.reaped = i % 7 != 0;
		q->aio.reap_ns = q->aio.reaped ? t + 5000 : 0;
		q->aio.res = q->aio.reaped ? 8192 : 0;
	} else {
		q->parent_valid = i % 2;
		q->parent_id = 5;
		q->parent_tid = 2001;
		q->parent_seq = 9;
	}
	q->nr_blocks_apart = i % 50 == 0 ? 2 : 0;
	make_stack(q, i);
}

/* ---- names both sides know ---- */

/* The files' names: some keys named (one with a container's path), the others not. */
static const struct {
	struct fn_key k;
	const char *file, *cfile;
} g_files[] = {
	{ { 93, IT_MKDEV(7, 0), 0 }, "/mnt/a/data.bin", "/data/data.bin" },
	{ { 12, IT_MKDEV(259, 1), 0 }, "/srv/u 'q'.dat", NULL },
	{ { 93, IT_MKDEV(8, 2), 0 }, "/var/log/x.log (deleted)", NULL },
	{ { 5, IT_MKDEV(7, 0), 1 }, "/dev/loop0", NULL },
};

static struct fn_cache *files_named(void)
{
	struct fn_cache *c = fn_new(64);

	for (size_t i = 0; c && i < sizeof(g_files) / sizeof(g_files[0]); i++)
		fn_put(c, &g_files[i].k, g_files[i].file, g_files[i].cfile);
	return c;
}

static const char *cg_name(void *ctx, uint64_t id)
{
	(void)ctx;
	return id == 77 ? "/system.slice/fio.service" :
	       id == 78 ? "/kubepods.slice/kubepods-besteffort.slice/"
			  "kubepods-besteffort-pod1b2c3d4e_5f60_7182_93a4_b5c6d7e8f901.slice" :
			  NULL;
}

static const char *dev_name(void *ctx, uint32_t dev)
{
	(void)ctx;
	return dev == IT_MKDEV(7, 0) ? "loop0" : dev == IT_MKDEV(7, 1) ? "loop1" : NULL;
}

static const char *dev_serial(void *ctx, uint32_t dev)
{
	(void)ctx;
	return dev == IT_MKDEV(7, 1) ? "SER1" : NULL;
}

/* Names read back from rows: what the row said, checked against what was written. */
struct notes {
	int bad;
	int files; /* file names noted */
	struct fn_cache *fn; /* where they go */
};

static void note_file(void *ctx, const struct fn_key *k, const char *file, const char *cfile)
{
	struct notes *n = ctx;
	size_t i = 0;

	while (i < sizeof(g_files) / sizeof(g_files[0]) &&
	       (g_files[i].k.ino != k->ino || g_files[i].k.dev != k->dev ||
		g_files[i].k.bdev != k->bdev))
		i++;
	n->files++;
	if (i == sizeof(g_files) / sizeof(g_files[0]) || strcmp(file, g_files[i].file) ||
	    !cfile != !g_files[i].cfile || (cfile && strcmp(cfile, g_files[i].cfile)))
		n->bad++;
	fn_put(n->fn, k, file, cfile);
}

static void note_dev(void *ctx, uint32_t dev, const char *name, const char *serial)
{
	struct notes *n = ctx;
	const char *want = dev_name(NULL, dev), *ws = dev_serial(NULL, dev);
	char devno[24];

	/* a device with no name: its MAJ:MIN, as the -j line has it */
	snprintf(devno, sizeof(devno), "%u:%u", IT_MAJOR(dev), IT_MINOR(dev));
	if (strcmp(want ? want : devno, name) || (serial && (!ws || strcmp(ws, serial))))
		n->bad++;
}

static void note_cg(void *ctx, uint64_t id, const char *path)
{
	struct notes *n = ctx;

	if (!cg_name(NULL, id) || strcmp(cg_name(NULL, id), path))
		n->bad++;
}

/* The -j lines of n requests, their files named from fn (NULL: none); the caller frees. */
static char *json_of(struct rf_req *reqs, int n, size_t *len, struct fn_cache *fn)
{
	const struct out_devnames dn = {
		.name = dev_name, .serial = dev_serial, .cgroup = cg_name, .ctx = NULL
	};

	return json_lines(reqs, n, len, &dn, fn);
}

static const struct sk_ident g_id = { .host = "node-a",
				      .boot = "bd00072a-1987-4817-a8b8-a5924d5e2899",
				      .run = 123456789,
				      .clock_off = 1700000000000000000ll };

/* n requests into one Native block, their files named from fn; the caller frees buf. */
static int encode(struct rf_req *reqs, int n, struct nat_buf *buf, struct fn_cache *fn)
{
	struct sk_lookup lk = {
		.dev_name = dev_name, .dev_serial = dev_serial, .cgroup = cg_name, .fn = fn
	};
	struct sk_rows w;
	int err = sk_rows_init(&w, &lk);
	size_t changing;

	for (int i = 0; !err && i < n; i++) {
		struct corr_req r;

		rf_req_view(&reqs[i], &r);
		sk_rows_put(&w, &g_id, &r);
	}
	if (!err) /* the changing columns last: the block reads back the same */
		err = w.req.oom ? -ENOMEM : nat_block_write(&w.req, buf, &changing);
	sk_rows_free(&w);
	return err;
}

/* A request into a row and back: the same -j line, the same names, its run. */
static void test_roundtrip(void)
{
	enum { N = 2000 };
	struct rf_req *reqs = calloc(N, sizeof(*reqs)), *back = calloc(N, sizeof(*back));
	struct nat_buf buf = { 0 };
	struct nat_rblock rb = { 0 };
	struct fn_cache *named = files_named();
	struct notes nb = { .fn = fn_new(64) };
	struct sk_notes nt = { .dev = note_dev, .cgroup = note_cg, .file = note_file, .ctx = &nb };
	struct sk_rview v;
	struct sk_ident id;
	char *a = NULL, *b = NULL;
	size_t alen = 0, blen = 0, pos = 0;
	int got = 0, same_id = 1;

	if (!ASSERT_TRUE(reqs && back && named && nb.fn, "alloc"))
		goto out;
	for (int i = 0; i < N; i++)
		make_req(&reqs[i], i, 1000000000ull + (uint64_t)i * 100000);
	if (!ASSERT_OK(encode(reqs, N, &buf, named), "encode") ||
	    !ASSERT_OK(nat_read_block(buf.p, buf.len, &pos, &rb), "read block"))
		goto out;
	ASSERT_EQ(pos, buf.len, "the whole block read");
	ASSERT_EQ(rb.rows, N, "rows");
	sk_rview_init(&v, &rb);
	for (uint64_t i = 0; i < rb.rows; i++) {
		if (sk_rows_get(&v, i, &back[got], &id, &nt))
			continue;
		got++;
		same_id &= !strcmp(id.host, g_id.host) && !strcmp(id.boot, g_id.boot) &&
			   id.run == g_id.run && id.clock_off == g_id.clock_off;
	}
	ASSERT_EQ(got, N, "rows read back as requests");
	ASSERT_TRUE(same_id, "host, boot, run and clock of every row");
	ASSERT_EQ(nb.bad, 0, "names the rows gave");
	ASSERT_TRUE(nb.files > N / 2, "files named by the rows");
	a = json_of(reqs, N, &alen, named);
	b = json_of(back, got, &blen, nb.fn);
	/* the stacks' kinds show up: an upper bio, its members, a partition's, a lost one */
	for (size_t i = 0; i < 4 && a; i++) {
		static const char *const want[] = { "\"role\":\"upper\"", "\"how\":\"remap\"",
						    "\"how\":\"partition\"", "\"how\":\"lost\"" };

		ASSERT_TRUE(strstr(a, want[i]) != NULL, want[i]);
	}
	/* every named key shows up: the test covers each kind of file */
	for (size_t i = 0; a && i < sizeof(g_files) / sizeof(g_files[0]); i++)
		ASSERT_TRUE(strstr(a, g_files[i].file) != NULL, g_files[i].file);
	ASSERT_TRUE(a && b, "json");
	ASSERT_EQ(blen, alen, "json length");
	if (a && b && (alen != blen || memcmp(a, b, alen))) {
		size_t k = 0;

		while (k < alen && k < blen && a[k] == b[k])
			k++;
		while (k && a[k - 1] != '\n')
			k--;
		unit__fail(__FILE__, __LINE__, "lines differ: %.300s | %.300s", a + k, b + k);
	}
out:
	nat_rblock_free(&rb);
	nat_buf_free(&buf);
	fn_free(named);
	fn_free(nb.fn);
	free(a);
	free(b);
	free(reqs);
	free(back);
}

/* The JSON blame line of l, its culprits named by cg_name(). */
static void blame_json_of(const struct blame_line *l, char *buf, size_t n)
{
	const char *names[BLAME_LINE_TOP] = { NULL };
	struct jw j;

	for (int i = 0; i < l->nr && i < BLAME_LINE_TOP; i++)
		names[i] = l->named & (1u << i) ? cg_name(NULL, l->cgroup_id[i]) : NULL;
	jw_init(&j);
	blame_json_line(&j, l, names);
	snprintf(buf, n, "%s", j.err ? "error" : jw_data(&j));
	jw_free(&j);
}

/* A blame line into a row (its victim from its request's row) and back: the same JSON line. */
static void test_blame_rows(void)
{
	struct fn_cache *named = files_named();
	struct sk_lookup lk = {
		.dev_name = dev_name, .dev_serial = dev_serial, .cgroup = cg_name, .fn = named
	};
	struct notes nb = { 0 };
	struct sk_notes nt = { .cgroup = note_cg, .ctx = &nb };
	struct nat_buf buf = { 0 };
	struct nat_rblock rb = { 0 };
	struct blame_line l[20], back;
	struct sk_rows w;
	struct rf_req q;
	char a[1024], b[1024];
	size_t pos = 0;
	int same = 0, vfiles = 0, vbad = 0;

	if (!ASSERT_OK(sk_rows_init(&w, &lk), "init"))
		return;
	for (int i = 0; i < 20; i++) {
		struct corr_req r;

		make_req(&q, i * 4, 1000000000ull + (uint64_t)i * 100000);
		rf_req_view(&q, &r);
		sk_rows_put(&w, &g_id, &r);
		memset(&l[i], 0, sizeof(l[i]));
		l[i] = (struct blame_line){ .id = q.id,
					    .requests = 2,
					    .wait_ns = 90000 + i,
					    .own_ns = 40000,
					    .unattr_ns = 1000,
					    .self_ns = 9000,
					    .others_ns = 40000 - i,
					    .by = BLAME_BY_CGROUP,
					    .nr = i % 4 };
		for (int k = 0; k < l[i].nr; k++) {
			l[i].cgroup_id[k] = k % 2 ? 78 : 77;
			l[i].ns[k] = 10000 + k;
			l[i].named |= (i + k) % 3 ? 1u << k : 0;
		}
		l[i].other_ns = i % 2 ? 555 : 0;
		sk_rows_blame(&w, &g_id, &l[i], 42);
	}
	if (!ASSERT_OK(nat_block_write(&w.blame, &buf, NULL), "write") ||
	    !ASSERT_OK(nat_read_block(buf.p, buf.len, &pos, &rb), "read"))
		goto out;
	ASSERT_EQ(rb.rows, 20, "rows");
	for (int i = 0; i < 20 && i < (int)rb.rows; i++) {
		if (sk_rows_get_blame(&rb, (uint64_t)i, &back, &nt))
			continue;
		blame_json_of(&l[i], a, sizeof(a));
		blame_json_of(&back, b, sizeof(b));
		same += !strcmp(a, b);
		if (strcmp(a, b))
			unit__fail(__FILE__, __LINE__, "line %d: %s | %s", i, a, b);
	}
	ASSERT_EQ(same, 20, "the same lines");
	ASSERT_EQ(nb.bad, 0, "the culprits' paths");
	/* a line's ts is its request's: the victim remembered */
	ASSERT_EQ(nat_get(nat_rcol(&rb, "ts"), 0), 1000000000ull + (uint64_t)g_id.clock_off,
		  "ts: the request's");
	/* the victim's file: its request's (each a syscall on 7:0 ino 93), or none */
	for (uint64_t i = 0; i < rb.rows; i++) {
		sk_rows_str(nat_rcol(&rb, "victim_file"), i, a, sizeof(a));
		vfiles += !strcmp(a, g_files[0].file);
		vbad += a[0] && strcmp(a, g_files[0].file);
	}
	ASSERT_TRUE(vfiles > 0 && !vbad, "victim_file: the victim request's file");
out:
	nat_rblock_free(&rb);
	nat_buf_free(&buf);
	sk_rows_free(&w);
	fn_free(named);
}

/*
 * A block whose values are mostly defaults (put or not: a default is written
 * only when needed): every value read back is the one put, 0 or "" where none
 * was, a column of defaults only is left out, and a value put twice spoils
 * the block (oom) rather than landing in another row.
 */
static void test_native_sparse(void)
{
	static const struct nat_colspec spec[] = {
		{ "a", NAT_U64, 0 },   { "s", NAT_STR, 0 },   { "z", NAT_U32, 0 },
		{ "e.n", NAT_U32, 1 }, { "e.s", NAT_STR, 1 }, { "e.w", NAT_U16, 1 },
	};
	enum { ROWS = 300 };
	struct nat_block b;
	struct nat_buf buf = { 0 };
	struct nat_rblock rb = { 0 };
	size_t pos = 0, changing = 0;
	int bad = 0, nr[NAT_MAX_GROUPS] = { 0 };
	uint64_t el = 0;

	if (!ASSERT_OK(nat_block_init(&b, spec, 6), "init"))
		return;
	for (int r = 0; r < ROWS; r++) {
		char str[16];

		nat_u64(&b, 0, r % 7 == 3 ? 1000u + (uint64_t)r : 0);
		snprintf(str, sizeof(str), "r%d", r);
		nat_str(&b, 1, r > 250 && r % 5 == 0 ? str : "");
		nat_u32(&b, 2, 0);
		nr[1] = r % 4; /* 0 to 3 elements */
		for (int i = 0; i < nr[1]; i++) {
			nat_elem(&b, 1, i);
			nat_u32(&b, 3, i == 2 ? (uint32_t)r : 0);
			nat_str(&b, 4, i == 1 && r % 3 ? "x" : NULL);
			nat_u16(&b, 5, (uint16_t)(r + i));
		}
		nat_row_end(&b, nr);
	}
	ASSERT_TRUE(!b.oom, "no error");
	if (!ASSERT_OK(nat_block_write(&b, &buf, &changing), "write") ||
	    !ASSERT_OK(nat_read_block(buf.p, buf.len, &pos, &rb), "read"))
		goto out;
	ASSERT_EQ(rb.rows, ROWS, "rows");
	ASSERT_TRUE(!nat_rcol(&rb, "z"), "a column of defaults is left out");
	ASSERT_TRUE(changing > 0 && changing <= buf.len, "where the changing columns start");
	for (uint64_t r = 0; r < ROWS; r++) {
		char want[16], got[16];
		uint64_t first, n;

		bad += nat_get(nat_rcol(&rb, "a"), r) != (r % 7 == 3 ? 1000 + r : 0);
		snprintf(want, sizeof(want), "%s", r > 250 && r % 5 == 0 ? "" : "-");
		if (want[0] == '-')
			want[0] = '\0';
		else
			snprintf(want, sizeof(want), "r%llu", (unsigned long long)r);
		sk_rows_str(nat_rcol(&rb, "s"), r, got, sizeof(got));
		bad += strcmp(want, got) != 0;
		if (nat_get_elems(nat_rcol(&rb, "e.w"), r, &first, &n) || n != r % 4) {
			bad++;
			continue;
		}
		for (uint64_t i = 0; i < n; i++, el++) {
			bad += nat_get(nat_rcol(&rb, "e.n"), first + i) != (i == 2 ? r : 0);
			sk_rows_str(nat_rcol(&rb, "e.s"), first + i, got, sizeof(got));
			bad += strcmp(got, i == 1 && r % 3 ? "x" : "") != 0;
			bad += nat_get(nat_rcol(&rb, "e.w"), first + i) != ((r + i) & 0xffff);
		}
	}
	ASSERT_EQ(bad, 0, "values read back");
	ASSERT_EQ(el, b.elems[1], "elements");
	/* a value put twice in one row */
	nat_block_reset(&b);
	nat_u64(&b, 0, 5);
	nat_u64(&b, 0, 6);
	ASSERT_TRUE(b.oom, "a value put twice spoils the block");
out:
	nat_rblock_free(&rb);
	nat_buf_free(&buf);
	nat_block_free(&b);
}

/* A block cut anywhere, or with bytes flipped, is refused or read within its bounds. */
static void test_native_bad(void)
{
	struct rf_req reqs[40];
	struct nat_buf buf = { 0 };
	int refused = 0;

	for (int i = 0; i < 40; i++)
		make_req(&reqs[i], i, 5000000ull);
	if (!ASSERT_OK(encode(reqs, 40, &buf, NULL), "encode"))
		return;
	for (size_t cut = 0; cut < buf.len; cut += 1 + cut / 50) {
		struct nat_rblock rb;
		size_t pos = 0;
		uint8_t *copy = malloc(cut ? cut : 1);

		memcpy(copy, buf.p, cut);
		refused += nat_read_block(copy, cut, &pos, &rb) != 0;
		nat_rblock_free(&rb);
		free(copy);
	}
	ASSERT_TRUE(refused > 0, "cut blocks refused");
	for (int k = 0; k < 500; k++) {
		uint8_t *copy = malloc(buf.len);
		struct nat_rblock rb;
		struct sk_rview v;
		struct rf_req q;
		size_t pos = 0;

		memcpy(copy, buf.p, buf.len);
		for (int f = 0; f < 4; f++)
			copy[rnd() % buf.len] ^= (uint8_t)(1 + rnd() % 255);
		if (!nat_read_block(copy, buf.len, &pos, &rb)) {
			sk_rview_init(&v, &rb);
			for (uint64_t i = 0; i < rb.rows; i++)
				sk_rows_get(&v, i, &q, NULL, NULL);
		}
		nat_rblock_free(&rb);
		free(copy);
	}
	nat_buf_free(&buf);
}

static void test_url(void)
{
	static const char *const bad[] = {
		"http://h:1/a.b",	    "clickhouse://h/a.b",	  "clickhouse://h:0/a.b",
		"clickhouse://h:99999/a.b", "clickhouse://h:80",	  "clickhouse://h:80/ab",
		"clickhouse://h:80/a.b;x",  "clickhouse://u:pw@h:80/a.b", "clickhouse://h:8x/a.b",
		"clickhouse://[::1/a.b",    "clickhouse://h h:80/a.b",	  "clickhouse://:80/a.b",
	};
	struct sk_url u;
	char why[256];

	if (ASSERT_OK(sk_url_parse("clickhouse://writer@db-1.example:8123/iotracer.requests", &u,
				   why, sizeof(why)),
		      "good")) {
		ASSERT_STREQ(u.user, "writer", "user");
		ASSERT_STREQ(u.host, "db-1.example", "host");
		ASSERT_EQ(u.port, 8123, "port");
		ASSERT_STREQ(u.db, "iotracer", "db");
		ASSERT_STREQ(u.table, "requests", "table");
		ASSERT_EQ(u.tls, 0, "tls");
	}
	if (ASSERT_OK(sk_url_parse("clickhouses://[::1]:8443/d.t", &u, why, sizeof(why)), "v6")) {
		ASSERT_STREQ(u.host, "::1", "v6 host");
		ASSERT_EQ(u.tls, 1, "tls");
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		if (!ASSERT_EQ(sk_url_parse(bad[i], &u, why, sizeof(why)), -EINVAL, bad[i]))
			break;
		ASSERT_TRUE(why[0] && !strchr(why, '\n'), "one-line reason");
	}
}

static int write_file(const char *path, const char *s, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		return -1;
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		s = NULL;
	close(fd);
	return s && !chmod(path, mode) ? 0 : -1;
}

static void test_password(void)
{
	char dir[] = "/tmp/test_sink.XXXXXX", p[64], pw[256], why[256];

	if (!ASSERT_TRUE(mkdtemp(dir), "mkdtemp"))
		return;
	snprintf(p, sizeof(p), "%s/pw", dir);
	write_file(p, "s3cret\nsecond line\n", 0600);
	if (ASSERT_OK(sk_password_load(p, pw, sizeof(pw), why, sizeof(why)), "0600"))
		ASSERT_STREQ(pw, "s3cret", "first line");
	write_file(p, "s3cret\r\n", 0400);
	if (ASSERT_OK(sk_password_load(p, pw, sizeof(pw), why, sizeof(why)), "0400, CRLF"))
		ASSERT_STREQ(pw, "s3cret", "CR cut");
	write_file(p, "s3cret\n", 0640);
	ASSERT_EQ(sk_password_load(p, pw, sizeof(pw), why, sizeof(why)), -EPERM, "0640");
	ASSERT_TRUE(strstr(why, "chmod 600") != NULL, "why says chmod");
	ASSERT_STREQ(pw, "", "nothing kept");
	write_file(p, "\n", 0600);
	ASSERT_EQ(sk_password_load(p, pw, sizeof(pw), why, sizeof(why)), -EINVAL, "empty");
	ASSERT_EQ(sk_password_load("/nonexistent/pw", pw, sizeof(pw), why, sizeof(why)), -ENOENT,
		  "missing");
	unlink(p);
	rmdir(dir);
}

/*
 * deploy/clickhouse/schema.sql as a server's DESCRIBE would give it: each
 * column's name and type, Nested(...) members as NAME.member Array(type).
 */
static size_t ddl_describe(const char *sql, const char *table, char *out, size_t n)
{
	char head[128], nested[64] = "";
	const char *p = strstr(sql, (snprintf(head, sizeof(head), "iotracer.%s\n", table), head));
	size_t len = 0;

	if (!p)
		return 0;
	p = strchr(p, '(') + 1;
	while (*p && strncmp(p, "\n)", 2)) {
		char name[64], type[64];
		const char *eol = strchr(p, '\n');

		if (!eol)
			break;
		if (sscanf(p, " %63s Nested(", name) == 1 && strstr(p, "Nested(") &&
		    strstr(p, "Nested(") < eol) {
			snprintf(nested, sizeof(nested), "%s", name);
		} else if (sscanf(p, " %63s %63[A-Za-z0-9()]", name, type) == 2 && name[0] != ')') {
			len += (size_t)snprintf(out + len, n - len,
						nested[0] ? "%s.%s\tArray(%s)\t\t\n" :
							    "%s%s\t%s\t\t\n",
						nested, name, type);
		} else if (strchr(p, ')') && strchr(p, ')') < eol) {
			nested[0] = '\0';
		}
		p = eol + 1;
	}
	return len;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t n = 0;

	if (!f)
		return NULL;
	if (getdelim(&buf, &n, '\0', f) < 0) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* The shipped DDL has every column this build writes, of its type. */
static void test_schema_ddl(void)
{
	char *sql = slurp("deploy/clickhouse/schema.sql"), d[16384], why[256];
	size_t n;

	if (!sql) {
		SKIP("deploy/clickhouse/schema.sql not found (run from the repository's root)");
		return;
	}
	n = ddl_describe(sql, "requests", d, sizeof(d));
	ASSERT_TRUE(n > 0, "requests table");
	if (!ASSERT_OK(sk_schema_check(sk_req_spec, SK_R_NR, d, n, why, sizeof(why)), why))
		goto out;
	n = ddl_describe(sql, "requests_blame", d, sizeof(d));
	ASSERT_OK(sk_schema_check(sk_blame_spec, SK_B_NR, d, n, why, sizeof(why)), why);
	/* a column of another type, and one missing: said */
	ASSERT_EQ(sk_schema_check(sk_req_spec, SK_R_NR, "host\tString\nts\tUInt32\n", 19, why,
				  sizeof(why)),
		  -EPROTO, "mismatch");
	ASSERT_TRUE(strstr(why, "boot") || strstr(why, "ts"), "names the column");
out:
	free(sql);
}

static void test_gzip(void)
{
	struct nat_buf z = { 0 }, back = { 0 };
	char in[5000];

	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (char)(i % 7 ? 'a' + i % 5 : rnd());
	if (ASSERT_OK(sk_gzip(in, sizeof(in), 1, &z), "gzip") &&
	    ASSERT_OK(sk_gunzip(z.p, z.len, &back), "gunzip")) {
		ASSERT_EQ(back.len, sizeof(in), "length");
		ASSERT_TRUE(back.len == sizeof(in) && !memcmp(back.p, in, sizeof(in)), "same");
		ASSERT_TRUE(z.p[0] == 0x1f && z.p[1] == 0x8b, "a gzip member");
	}
	ASSERT_EQ(sk_gunzip(in, sizeof(in), &back), -EBADMSG, "not gzip");
	nat_buf_free(&z);
	nat_buf_free(&back);
}

/*
 * The zstd frames of ClickHouse's blocks in z, walked by RFC 8878's layout:
 * each block one frame ending where the block does, its raw blocks 128 KiB at
 * most, the last block's bit on the last one only. The bytes its raw blocks
 * hold, or -1 for a frame out of the format.
 */
static long long raw_bytes(const uint8_t *z, size_t len)
{
	static const size_t fcs[4] = { 0, 2, 4, 8 };
	long long raw = 0;

	for (size_t at = 0; at + 25 <= len;) {
		uint32_t zs = (uint32_t)z[at + 17] | (uint32_t)z[at + 18] << 8 |
			      (uint32_t)z[at + 19] << 16 | (uint32_t)z[at + 20] << 24;
		size_t p = at + 25, end = at + 16 + zs, last = 0;
		uint8_t fhd;

		if (z[at + 16] != 0x90 || zs < 9 || end > len || end - p < 6 ||
		    memcmp(z + p, "\x28\xb5\x2f\xfd", 4))
			return -1;
		fhd = z[p + 4];
		p += 5 + !((fhd >> 5) & 1) + fcs[fhd >> 6] + (!fcs[fhd >> 6] && (fhd >> 5) & 1) +
		     (fhd & 3 ? 1u << ((fhd & 3) - 1) : 0);
		while (!last && p + 3 <= end) {
			uint32_t h = (uint32_t)z[p] | (uint32_t)z[p + 1] << 8 |
				     (uint32_t)z[p + 2] << 16;
			uint32_t type = (h >> 1) & 3, size = h >> 3;

			last = h & 1;
			p += 3;
			if (type == 0 && size > (128u << 10))
				return -1;
			raw += type == 0 ? size : 0;
			p += type == 1 ? 1 : size;
		}
		if (!last || p != end)
			return -1;
		at = end;
	}
	return raw;
}

/*
 * --sink-compress fast: the part before plain compressed, the rest stored in
 * zstd frames of raw blocks (128 KiB each at most, a ClickHouse block 32 MiB at
 * most); libzstd's own decoder (sk_decompress) gives the bytes back, and the
 * stored part costs its bytes and a few headers. zstd: all of it compressed.
 */
static void test_fast(void)
{
	size_t n = (32u << 20) + (300u << 10), plain = 1u << 20;
	uint8_t *in = malloc(n);
	struct nat_buf z = { 0 }, back = { 0 };
	void *ctx = NULL;

	if (!ASSERT_TRUE(in != NULL, "alloc"))
		return;
	for (size_t i = 0; i < n; i++) /* compressible, then changing bytes */
		in[i] = i < plain ? (uint8_t)(i % 64 < 60 ? 0 : i >> 6) : (uint8_t)rnd();
	if (ASSERT_OK(sk_compress(SK_ENC_FAST, &ctx, in, n, plain, &z), "fast") &&
	    ASSERT_OK(sk_decompress(SK_ENC_FAST, z.p, z.len, &back), "back")) {
		ASSERT_TRUE(back.len == n && !memcmp(back.p, in, n), "the same bytes");
		/* the stored part as it is, beside a compressed part 4 times smaller at least */
		ASSERT_TRUE(z.len > n - plain && z.len < n - plain + plain / 4, "stored");
		ASSERT_TRUE(raw_bytes(z.p, z.len) >= (long long)(n - plain), "raw blocks");
	}
	z.len = back.len = 0;
	if (ASSERT_OK(sk_compress(SK_ENC_ZSTD, &ctx, in, plain + 4096, plain, &z), "zstd") &&
	    ASSERT_OK(sk_decompress(SK_ENC_ZSTD, z.p, z.len, &back), "zstd back"))
		ASSERT_TRUE(back.len == plain + 4096 && !memcmp(back.p, in, back.len), "zstd same");
	z.len = back.len = 0;
	/* nothing to store, and nothing to compress */
	ASSERT_OK(sk_compress(SK_ENC_FAST, &ctx, in, 1000, 1000, &z), "fast, none stored");
	ASSERT_OK(sk_compress(SK_ENC_FAST, &ctx, in + plain, 1000, 0, &z), "fast, all stored");
	if (ASSERT_OK(sk_decompress(SK_ENC_FAST, z.p, z.len, &back), "both back"))
		ASSERT_TRUE(back.len == 2000 && !memcmp(back.p, in, 1000) &&
				    !memcmp(back.p + 1000, in + plain, 1000),
			    "both the same");
	sk_compress_free(ctx);
	nat_buf_free(&z);
	nat_buf_free(&back);
	free(in);
}

/* ---- no server: nothing lost ---- */

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *fw)
{
	(void)sb, (void)flag, (void)fw;
	return remove(p);
}

static void count_req(void *ctx, const struct rr_reader *rr, const struct rf_req *q)
{
	(void)rr, (void)q;
	(*(uint64_t *)ctx)++;
}

/* Requests in the segments of dir. */
static uint64_t spilled_in(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	uint64_t n = 0;

	while (d && (e = readdir(d))) {
		char p[512];
		struct stat st;
		struct rr_reader rr;
		int fd;
		void *m;

		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		fd = open(p, O_RDONLY);
		if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || !st.st_size) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		rr_init(&rr, count_req, &n);
		if (m != MAP_FAILED) {
			rr_segment(&rr, m, (size_t)st.st_size);
			munmap(m, (size_t)st.st_size);
		}
		rr_free(&rr);
		close(fd);
	}
	if (d)
		closedir(d);
	return n;
}

/* n requests to a sink whose server never answers; its stats after sink_finish(). */
static int run_sink(const char *spill, uint64_t spill_max, int n, struct sink_stats *st)
{
	struct sink_opts o = {
		/* port 1: refused at once */
		.url = "clickhouse://127.0.0.1:1/iotracer.requests",
		.spill_dir = spill,
		.spill_max = spill_max,
		.queue_max = SK_MIN_QUEUE,
		.sysfs_root = "/nonexistent",
		.start_ns = 42,
		.retry_max_ns = 20000000,
		.timeout_ms = 500,
	};
	struct rf_req q;
	struct sink *s = sink_open(&o, NULL, NULL);

	if (!s)
		return -1;
	for (int i = 0; i < n; i++) {
		struct corr_req r;

		make_req(&q, i, 1000000000ull + (uint64_t)i * 1000);
		rf_req_view(&q, &r);
		sink_request(s, &r);
		if (i % 2000 == 0)
			sink_tick(s, 1000000000ull + (uint64_t)i * 1000000);
	}
	sink_finish(s);
	sink_stats(s, st);
	sink_free(s);
	return 0;
}

/* Every request is in the spill directory after sink_finish(): queued, spilled or left. */
static void test_spill_all(void)
{
	char dir[] = "/tmp/test_sink.XXXXXX", spill[64];
	struct sink_stats st;
	enum { N = 12000 };
	uint64_t dropped = 0;

	if (!ASSERT_TRUE(mkdtemp(dir), "mkdtemp"))
		return;
	snprintf(spill, sizeof(spill), "%s/spill", dir);
	if (!ASSERT_OK(run_sink(spill, 1ull << 30, N, &st), "sink"))
		goto out;
	for (int i = 0; i < SK_DROP_NR; i++)
		dropped += st.dropped[i];
	ASSERT_EQ(st.rows, N, "handed");
	ASSERT_EQ(dropped, 0, "dropped");
	ASSERT_EQ(st.sent, 0, "sent");
	ASSERT_EQ(st.spilled, st.rows, "spilled: in the queue, or left at exit");
	ASSERT_EQ(spilled_in(spill), st.rows, "requests in the spill segments");
	ASSERT_TRUE(st.retries[SK_RETRY_CONNECT] > 0, "connect retries counted");
out:
	nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

/* A spill directory that is full: the requests it cannot take are counted, none silently lost. */
static void test_spill_full(void)
{
	char dir[] = "/tmp/test_sink.XXXXXX", spill[64];
	struct sink_stats st;
	enum { N = 40000 };

	if (!ASSERT_TRUE(mkdtemp(dir), "mkdtemp"))
		return;
	snprintf(spill, sizeof(spill), "%s/spill", dir);
	if (!ASSERT_OK(run_sink(spill, SK_MIN_SPILL_MAX, N, &st), "sink"))
		goto out;
	ASSERT_TRUE(st.dropped[SK_DROP_SPILL_FULL] > 0, "spill_full drops");
	ASSERT_EQ(st.spilled + st.dropped[SK_DROP_SPILL_FULL], st.rows, "spilled + dropped");
	ASSERT_EQ(spilled_in(spill), st.spilled, "requests in the spill segments");
out:
	nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
	RUN_TEST(test_roundtrip);
	RUN_TEST(test_blame_rows);
	RUN_TEST(test_native_sparse);
	RUN_TEST(test_native_bad);
	RUN_TEST(test_url);
	RUN_TEST(test_password);
	RUN_TEST(test_schema_ddl);
	RUN_TEST(test_gzip);
	RUN_TEST(test_fast);
	RUN_TEST(test_spill_all);
	RUN_TEST(test_spill_full);
	return unit_result();
}
