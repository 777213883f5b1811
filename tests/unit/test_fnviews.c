// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of what shows the file names (issue 38): the JSON lines' "file"
 * fields (records/output_json.c), the recording's name entries written with
 * the requests and read back (records/record.c, report/reader.c),
 * `report --by file` (report/bykey.c), top's file rows (top/tfile.c) and the
 * per-file /metrics families (service/mfiles.c). Synthetic requests; the
 * expected values are worked out by hand.
 */
#include <dirent.h>
#include <ftw.h>
#include <stdlib.h>
#include <unistd.h>

#include "records/fname.h"
#include "records/output.h"
#include "records/record.h"
#include "report/internal.h"
#include "records/reader.h"
#include "service/cli.h"
#include "service/mfiles.h"
#include "top/tfile.h"
#include "lib/json.h"
#include "unit.h"

#define DEV IT_MKDEV(7, 3)
#define DISK IT_MKDEV(7, 0)

/* A pread64 of ino on DEV, with one block request of its file (and one of ino 0 beside). */
struct sreq {
	struct it_syscall_rec s;
	struct it_block_rec b;
	struct corr_req r;
};

static void mk(struct sreq *q, uint64_t id, uint64_t ino, uint64_t t, uint64_t lat)
{
	memset(q, 0, sizeof(*q));
	q->s.hdr.type = IT_REC_SYSCALL;
	q->s.hdr.size = sizeof(q->s);
	q->s.task.pid = q->s.task.tid = 100;
	q->s.task.cgroup_id = 1;
	snprintf(q->s.task.comm, sizeof(q->s.task.comm), "fio");
	q->s.sys = IT_SYS_PREAD64;
	q->s.op = IT_OP_READ;
	q->s.dev = DEV;
	q->s.ino = ino;
	q->s.bytes = 4096;
	q->s.enter_ns = t;
	q->s.exit_ns = t + lat;
	q->b.hdr.type = IT_REC_BLOCK;
	q->b.hdr.size = sizeof(q->b);
	q->b.task = q->s.task;
	q->b.dev = DISK;
	q->b.op = IT_OP_READ;
	q->b.bytes = 4096;
	q->b.ino = ino;
	q->b.file_dev = DEV;
	q->b.q_ns = t + 10;
	q->b.d_ns = t + 20;
	q->b.c_ns = t + lat - 10;
	q->r.kind = CORR_SYSCALL;
	q->r.id = id;
	q->r.sys = &q->s;
	q->r.blocks[0] = &q->b;
	q->r.nr_blocks = 1;
}

static struct fn_cache *names(void)
{
	struct fn_cache *c = fn_new(16);
	struct fn_key a = { .ino = 11, .dev = DEV }, b = { .ino = 12, .dev = DEV };

	if (c && (fn_put(c, &a, "/mnt/t/a \"q\".dat", NULL) ||
		  fn_put(c, &b, "/var/lib/x/b.dat", "/data/b.dat"))) {
		fn_free(c);
		return NULL;
	}
	return c;
}

static void test_json_file(void)
{
	struct fn_cache *c = names();
	struct it_opts o;
	struct it_out *out;
	struct sreq q;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json *v;

	if (!ASSERT_TRUE(c && f, "setup"))
		goto out;
	cli_defaults(&o);
	o.live = 0;
	out = out_new(cli_out_config(&o, &(struct out_config){ 0 }), NULL, f, 0);
	out_set_fnames(out, c);
	mk(&q, 1, 12, 1000000, 50000);
	out_request(&q.r, out);
	mk(&q, 2, 99, 2000000, 50000); /* a file of no known name */
	out_request(&q.r, out);
	out_free(out);
	fclose(f);
	f = NULL;
	v = json_parse(buf, strchr(buf, '\n') - buf);
	if (ASSERT_TRUE(v != NULL, "a JSON line")) {
		ASSERT_STREQ(json_path(v, "file")->str, "/var/lib/x/b.dat", "file");
		ASSERT_STREQ(json_path(v, "container_file")->str, "/data/b.dat", "container_file");
		ASSERT_STREQ(json_get(json_get(v, "block")->child, "file")->str, "/var/lib/x/b.dat",
			     "the block request's");
		ASSERT_STREQ(json_get(json_get(v, "block")->child, "file_devno")->str, "7:3",
			     "its file system");
		json_free(v);
	}
	ASSERT_TRUE(strstr(strchr(buf, '\n'), "\"file\"") == NULL, "no name: no field");
	{
		struct fn_stats st;

		fn_stats(c, &st);
		ASSERT_EQ(st.misses, 2, "the unknown file missed (request and block)");
	}
out:
	if (f)
		fclose(f);
	free(buf);
	fn_free(c);
}

static char g_dir[] = "/tmp/it-fnviews-XXXXXX";

static void on_req(void *ctx, const struct rr_reader *rr, const struct rf_req *q)
{
	(*(int *)ctx)++;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = malloc(1 << 20);

	*len = f && b ? fread(b, 1, 1 << 20, f) : 0;
	if (f)
		fclose(f);
	return b;
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *fw)
{
	return remove(p);
}

/* The recorder announces each file's names in a block once; the reader takes them back. */
static void test_recorded(void)
{
	struct rec_opts ro = { .dir = g_dir,
			       .seg_size = REC_DEF_SIZE,
			       .seg_age_ns = REC_DEF_AGE_NS,
			       .max_bytes = REC_DEF_MAX,
			       .sysfs_root = "/nonexistent" };
	struct fn_cache *c = names();
	struct recorder *rc;
	struct rr_reader rr;
	struct sreq q;
	char seg[600];
	struct dirent **ents;
	uint8_t *buf;
	size_t len;
	int n = 0, k;

	if (!ASSERT_TRUE(c != NULL && mkdtemp(g_dir), "setup"))
		goto out;
	rc = rec_open(&ro, 1000000000ull);
	if (!ASSERT_TRUE(rc != NULL, "rec_open"))
		goto out;
	rec_set_fnames(rc, c);
	for (int i = 0; i < 100; i++) {
		mk(&q, (uint64_t)i + 1, i % 2 ? 11 : 12, 5000000000ull + i * 100000ull, 50000);
		rec_request(rc, &q.r);
	}
	ASSERT_EQ(rec_close(rc), 0, "nothing lost");
	k = scandir(g_dir, &ents, NULL, alphasort);
	for (int i = 0; i < k; i++) {
		if (strstr(ents[i]->d_name, RF_SEG_SUFFIX))
			snprintf(seg, sizeof(seg), "%s/%s", g_dir, ents[i]->d_name);
		free(ents[i]);
	}
	if (k >= 0)
		free(ents);
	buf = slurp(seg, &len);
	rr_init(&rr, on_req, &n);
	ASSERT_OK(rr_segment(&rr, buf, len), "rr_segment");
	ASSERT_EQ(n, 100, "requests");
	ASSERT_EQ(rr.st.fnames, 2, "each name once in the block");
	{
		struct fn_key a = { .ino = 11, .dev = DEV }, b = { .ino = 12, .dev = DEV };
		const struct fn_entry *ea = rr.fnames ? fn_peek(rr.fnames, &a) : NULL;
		const struct fn_entry *eb = rr.fnames ? fn_peek(rr.fnames, &b) : NULL;

		ASSERT_TRUE(ea && !strcmp(ea->file, "/mnt/t/a \"q\".dat") && !ea->cfile, "a's");
		ASSERT_TRUE(eb && !strcmp(eb->file, "/var/lib/x/b.dat") && eb->cfile &&
				    !strcmp(eb->cfile, "/data/b.dat"),
			    "b's, with its container's");
	}
	rr_free(&rr);
	free(buf);
out:
	nftw(g_dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	fn_free(c);
}

/* --by file: a's 3 requests of 2 ms, b's 1 of 10 ms; b first by p99, a by bytes. */
static void test_byfile(void)
{
	struct rp_bykey *b = bk_new(BK_FILE, 0, NULL);
	struct fn_cache *c = names();
	struct rp_req rq = { 0 };
	struct sreq q;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	const char *by_bytes, *by_p99;

	if (!ASSERT_TRUE(b && c && f, "setup"))
		goto out;
	for (int i = 0; i < 4; i++) {
		mk(&q, (uint64_t)i + 1, i < 3 ? 11 : 12, 1000000ull * (i + 1),
		   i < 3 ? 2000000 : 10000000);
		rq.r = &q.r;
		bk_add(b, &rq, 0);
	}
	mk(&q, 9, 0, 9000000, 1000);
	rq.r = &q.r;
	bk_add(b, &rq, 0);
	ASSERT_OK(bk_print(b, f, 10, c, NULL), "print");
	fflush(f);
	ASSERT_TRUE(strstr(buf, "2 files of the matching requests, 1 requests of no file") != NULL,
		    "the count line");
	by_bytes = strstr(buf, "by bytes");
	by_p99 = strstr(buf, "by p99");
	ASSERT_TRUE(by_bytes && by_p99, "the tables");
	if (by_bytes && by_p99) {
		ASSERT_TRUE(strstr(by_bytes, "/mnt/t/a") < strstr(by_bytes, "/var/lib/x/b.dat"),
			    "a first by bytes");
		ASSERT_TRUE(strstr(by_p99, "/var/lib/x/b.dat") < strstr(by_p99, "/mnt/t/a"),
			    "b first by p99");
		ASSERT_TRUE(strstr(by_bytes, "       3        12288") != NULL,
			    "a's requests, bytes");
		ASSERT_TRUE(strstr(buf, "/var/lib/x/b.dat (/data/b.dat)") != NULL,
			    "the container's path beside");
	}
out:
	if (f)
		fclose(f);
	free(buf);
	bk_free(b);
	fn_free(c);
}

/* --by pod, --by cgroup: cgroups 5 and 6 in pod ns/a, 7 in none, 0 the kernel's. */
static const char *t_pod(void *ctx, uint64_t id)
{
	(void)ctx;
	return id == 5 || id == 6 ? "ns/a" : NULL;
}

static const char *t_cgroup(void *ctx, uint64_t id)
{
	(void)ctx;
	return id == 5 ? "/kubepods/pod-a/c1" : NULL;
}

/* A line of buf that starts with head and ends with " name" (the first table's). */
static int has_row(const char *buf, const char *head, const char *name)
{
	size_t h = strlen(head), n = strlen(name);

	for (const char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);

		if (len > h + n && !strncmp(l, head, h) && l[len - n - 1] == ' ' &&
		    !strncmp(l + len - n, name, n))
			return 1;
	}
	return 0;
}

static void test_bykey(void)
{
	static const uint64_t cg[] = { 5, 6, 7, 0, 5 };
	struct rp_names nm = { .cgroup = t_cgroup, .pod = t_pod };
	struct rp_req rq = { 0 };
	struct sreq q;

	for (int kind = BK_CGROUP; kind <= BK_POD; kind++) {
		struct rp_bykey *b = bk_new(kind, 0, &nm);
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		if (!ASSERT_TRUE(b && f, "setup")) {
			bk_free(b);
			if (f)
				fclose(f);
			return;
		}
		for (int i = 0; i < 5; i++) {
			mk(&q, (uint64_t)i + 1, 11, 1000000ull * (i + 1), 2000000);
			rq.r = &q.r;
			bk_add(b, &rq, cg[i]);
		}
		ASSERT_OK(bk_print(b, f, 10, NULL, &nm), "print");
		fflush(f);
		if (kind == BK_POD) {
			ASSERT_TRUE(strstr(buf,
					   "pods (--by pod): 2 pods of the matching requests\n"),
				    "pods: the count line");
			ASSERT_TRUE(has_row(buf, "       3        12288 ", "ns/a"),
				    "pod ns/a: cgroups 5, 6's 3 requests");
			ASSERT_TRUE(has_row(buf, "       2         8192 ", "(no pod)"),
				    "(no pod): cgroup 7's and the kernel's");
		} else {
			ASSERT_TRUE(strstr(buf, "cgroups (--by cgroup): 4 cgroups of the matching"),
				    "cgroups: the count line");
			ASSERT_TRUE(has_row(buf, "       2         8192 ", "/kubepods/pod-a/c1") &&
					    has_row(buf, "       1         4096 ", "cgroup-id 6") &&
					    has_row(buf, "       1         4096 ", "cgroup-id 7") &&
					    has_row(buf, "       1         4096 ", "(no task)"),
				    "cgroups named: a path, ids, the kernel's");
		}
		fclose(f);
		free(buf);
		bk_free(b);
	}
}

static struct agg_entry ent(uint32_t tgid, uint64_t ino, uint8_t op, uint64_t count, uint64_t bytes)
{
	struct agg_entry e;

	memset(&e, 0, sizeof(e));
	e.key.tgid = tgid;
	e.key.cgroup_id = 1;
	e.key.dev = DISK;
	e.key.op = op;
	e.key.ino = ino;
	e.key.file_dev = ino ? DEV : 0;
	e.v.count = count;
	e.v.bytes = bytes;
	e.v.q2c_ns = count * 1000;
	return e;
}

/* top: per file, the processes of a file summed; per process, the files summed. */
static void test_tfile(void)
{
	struct fn_index *ix = fn_index_new();
	struct fn_cache *c = names();
	struct agg_entry e[4] = { ent(100, 11, IT_OP_READ, 5, 20480),
				  ent(200, 11, IT_OP_READ, 3, 12288),
				  ent(100, 12, IT_OP_READ, 2, 8192),
				  ent(100, 0, IT_OP_READ, 1, 4096) };
	struct agg_entry p[4];
	char buf[64];
	int n;

	if (!ASSERT_TRUE(ix && c, "setup"))
		goto out;
	memcpy(p, e, sizeof(e));
	n = tfile_fold(ix, p, 4, 1);
	ASSERT_EQ(n, 3, "a, b and no file");
	for (int i = 0; i < n; i++) {
		const char *l = tfile_label(ix, c, p[i].key.cgroup_id, buf, sizeof(buf));

		ASSERT_EQ(p[i].key.tgid, 0, "no process");
		if (!strcmp(l, "/mnt/t/a \"q\".dat"))
			ASSERT_EQ(p[i].v.count, 8, "a's two processes");
		else if (!strcmp(l, "(no file)"))
			ASSERT_EQ(p[i].v.count, 1, "no file");
		else
			ASSERT_STREQ(l, "/var/lib/x/b.dat", "b");
	}
	memcpy(p, e, sizeof(e));
	n = tfile_fold(ix, p, 4, 0);
	ASSERT_EQ(n, 2, "per process: the files summed");
	ASSERT_EQ(p[0].v.count + p[1].v.count, 11, "every request");
out:
	fn_index_free(ix);
	fn_free(c);
}

/* /metrics per file: K = 1; a labelled at 60 % of the bytes, its counter from its label. */
static void test_mfiles(void)
{
	struct mfiles *m = mfiles_new(1);
	struct fn_cache *c = names();
	struct agg_entry e[2] = { ent(100, 11, IT_OP_READ, 6, 6000),
				  ent(100, 12, IT_OP_READ, 4, 4000) };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (!ASSERT_TRUE(m && c, "setup"))
		goto out;
	f = open_memstream(&buf, &len);
	mfiles_write(m, f, e, 2, c);
	fclose(f);
	ASSERT_TRUE(
		strstr(buf,
		       "iotracer_file_bytes_total{file=\"/mnt/t/a \\\"q\\\".dat\",op=\"read\"} 0") !=
			NULL,
		"a labelled, from 0, its label escaped");
	ASSERT_TRUE(strstr(buf, "iotracer_file_bytes_total{file=\"other\",op=\"read\"} 10000") !=
			    NULL,
		    "other: b and a's before its label");
	free(buf);
	buf = NULL;
	e[0].v.bytes = 9000; /* a did 3000 more, b 1000 more */
	e[1].v.bytes = 5000;
	f = open_memstream(&buf, &len);
	mfiles_write(m, f, e, 2, c);
	fclose(f);
	ASSERT_TRUE(
		strstr(buf,
		       "iotracer_file_bytes_total{file=\"/mnt/t/a \\\"q\\\".dat\",op=\"read\"} 3000") !=
			NULL,
		"a's since its label");
	ASSERT_TRUE(strstr(buf, "iotracer_file_bytes_total{file=\"other\",op=\"read\"} 11000") !=
			    NULL,
		    "other only grows");
	ASSERT_TRUE(strstr(buf, "/var/lib/x/b.dat") == NULL, "b never labelled: K = 1");
out:
	free(buf);
	mfiles_free(m);
	fn_free(c);
}

int main(void)
{
	RUN_TEST(test_json_file);
	RUN_TEST(test_recorded);
	RUN_TEST(test_byfile);
	RUN_TEST(test_bykey);
	RUN_TEST(test_tfile);
	RUN_TEST(test_mfiles);
	return unit_result();
}
