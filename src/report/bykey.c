// SPDX-License-Identifier: GPL-2.0
/*
 * bykey: `iotracer report --by file|cgroup|pod`: the matching requests summed
 * per key: the file each names (records/fname.h fn_req_key), the cgroup of its
 * task, or that cgroup's pod ("namespace/name", else its UID, else "(no pod)").
 * Printed as the top keys by bytes, by p99 latency and, with --blame (file,
 * pod), by blamed wait: the part of their block requests' wait that requests
 * of other cgroups held the device (docs/blame.md), with the cgroup that held
 * it most. Over a server (report --from) the rows come summed: bk_add_sums().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blame/blame.h"
#include "records/fname.h"
#include "records/hist.h"
#include "records/recfmt.h"
#include "records/stages.h"
#include "lib/parse.h"
#include "report/internal.h"

#define BK_HORIZON_NS (10ULL * 1000000000ULL) /* as culprits.c: offline, every record at hand */
#define BK_CAP (1u << 18)
#define BK_CULPRITS 8 /* culprit cgroups kept per row; the rest are summed unnamed */
#define BK_CUL_COL 20 /* the CULPRIT column: a longer path shows its tail */

/* A row's key besides a file's: bdev BK_ID a cgroup id, BK_LABEL a label's hash (fn_key's 0, 1: files) */
#define BK_ID 3u
#define BK_LABEL 4u

struct bk_row {
	struct fn_key key;
	char *label; /* its name, given with it (a pod's, a server's); NULL: named at print */
	uint64_t reqs, bytes;
	struct lhist *lat;
	double blamed; /* others' share of its block requests' wait (--blame) */
	uint64_t cul_id[BK_CULPRITS];
	double cul_ns[BK_CULPRITS];
};

struct rp_bykey {
	enum bk_kind kind;
	struct rp_names nm; /* the cgroups' and pods' names (recordings) */
	struct fn_index *ix; /* the keys, numbered: f[i] is key i's row */
	struct bk_row *f;
	size_t cap;
	uint64_t no_file; /* matching requests that name no file (BK_FILE) */
	uint64_t last_id; /* BK_POD: the cgroup of the last request, row last_row + 1 (0: none) */
	size_t last_row;
	struct blame *b; /* --blame's engine; NULL: not asked, or the sums come summed */
	int blame; /* --blame: the blamed wait's table */
	int oom;
};

/* The row of key k, made on its first request (named label); NULL: out of memory. */
static struct bk_row *row_of(struct rp_bykey *b, const struct fn_key *k, const char *label)
{
	long i = fn_index_of(b->ix, k);
	struct bk_row *n;

	if (i < 0)
		return NULL;
	while ((size_t)i >= b->cap) { /* numbered in order: a new file is the next row */
		size_t cap = b->cap ? b->cap * 2 : 64;

		n = realloc(b->f, cap * sizeof(*n));
		if (!n)
			return NULL;
		memset(n + b->cap, 0, (cap - b->cap) * sizeof(*n));
		b->f = n;
		b->cap = cap;
	}
	n = &b->f[i];
	if (!n->lat) {
		n->key = *k;
		n->label = label ? strdup(label) : NULL;
		n->lat = lhist_new();
		if (label && !n->label) {
			lhist_free(n->lat);
			n->lat = NULL;
		}
	}
	return n->lat ? n : NULL;
}

/* FNV-1a: a label's key */
static uint64_t label_hash(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* The row of a request of cgroup id (its key's row for BK_CGROUP, BK_POD); NULL: out of memory. */
static struct bk_row *task_row(struct rp_bykey *b, uint64_t id)
{
	const char *pod;
	struct fn_key k = { .ino = id, .bdev = BK_ID };
	struct bk_row *f;

	if (b->kind == BK_CGROUP)
		return row_of(b, &k, NULL);
	if (b->last_row && b->last_id == id) /* requests come in runs from one cgroup */
		return &b->f[b->last_row - 1];
	pod = id && b->nm.pod ? b->nm.pod(b->nm.ctx, id) : NULL;
	if (!pod)
		pod = BK_NO_POD;
	k = (struct fn_key){ .ino = label_hash(pod),
			     .dev = (uint32_t)strlen(pod),
			     .bdev = BK_LABEL };
	f = row_of(b, &k, pod);
	b->last_id = id;
	b->last_row = f ? (size_t)(f - b->f) + 1 : 0;
	return f;
}

/* The row of a matching request (of cgroup id); NULL: none (no file) or out of memory (said). */
static struct bk_row *req_row(struct rp_bykey *b, const struct corr_req *r, uint64_t id)
{
	struct bk_row *f;
	struct fn_key k;

	if (b->kind == BK_FILE && !fn_req_key(r, &k)) {
		b->no_file++;
		return NULL;
	}
	f = b->kind == BK_FILE ? row_of(b, &k, NULL) : task_row(b, id);
	if (!f)
		b->oom = 1;
	return f;
}

/* ns of the file's wait held by cgroup id: among its culprits, if there is room. */
static void add_culprit(struct bk_row *f, uint64_t id, double ns)
{
	int k = 0;

	while (k < BK_CULPRITS && f->cul_ns[k] > 0 && f->cul_id[k] != id)
		k++;
	if (k == BK_CULPRITS)
		return; /* in blamed, unnamed */
	f->cul_id[k] = id;
	f->cul_ns[k] += ns;
}

static void on_split(const struct blame_res *res, void *ctx)
{
	struct rp_bykey *b = ctx;
	struct bk_row *f;

	if (!res->r->tag || res->r->tag > fn_index_count(b->ix))
		return;
	f = &b->f[res->r->tag - 1];
	f->blamed += res->others_ns;
	for (int i = 0; i < res->nr_culprits; i++)
		add_culprit(f, res->culprits[i].who.cgroup_id, res->culprits[i].ns);
}

static const char
	*const bk_name[] = { [BK_FILE] = "file", [BK_CGROUP] = "cgroup", [BK_POD] = "pod" };

const char *bk_kind_name(int kind)
{
	return bk_name[kind];
}

int bk_kind_of(const char *name)
{
	for (int i = 0; i < (int)(sizeof(bk_name) / sizeof(bk_name[0])); i++)
		if (!strcmp(name, bk_name[i]))
			return i;
	return -1;
}

struct rp_bykey *bk_new(enum bk_kind kind, int blame, const struct rp_names *nm)
{
	struct rp_bykey *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->kind = kind;
	if (nm)
		b->nm = *nm;
	b->ix = fn_index_new();
	b->blame = blame;
	if (!b->ix ||
	    (blame && !(b->b = blame_new(BLAME_BY_CGROUP, BK_HORIZON_NS, BK_CAP, on_split, b)))) {
		bk_free(b);
		return NULL;
	}
	return b;
}

struct rp_bykey *bk_new_sums(enum bk_kind kind, int blame)
{
	struct rp_bykey *b = bk_new(kind, 0, NULL);

	if (b)
		b->blame = blame;
	return b;
}

void bk_free(struct rp_bykey *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->cap; i++) {
		lhist_free(b->f[i].lat);
		free(b->f[i].label);
	}
	free(b->f);
	fn_index_free(b->ix);
	blame_free(b->b);
	free(b);
}

void bk_add(struct rp_bykey *b, const struct rp_req *q, uint64_t cgroup_id)
{
	struct bk_row *f = req_row(b, q->r, cgroup_id);
	struct req_view v;

	if (!f)
		return;
	stages_make_view(q->r, &v);
	f->reqs++;
	f->bytes += v.bytes;
	if (v.end_ns)
		lhist_add(f->lat, stages_lat_of(&v));
}

int bk_add_sums(struct rp_bykey *b, const struct fn_key *k, const char *label,
		const struct bk_sums *s)
{
	struct bk_row *f;

	if (!k) {
		b->no_file += s->reqs;
		return 0;
	}
	f = row_of(b, k, label);
	if (!f ||
	    lhist_add_bucket(f->lat, s->lat_v, s->lat_n, s->lat_min, s->lat_max, s->lat_sum)) {
		b->oom = 1;
		return -ENOMEM;
	}
	f->reqs += s->reqs;
	f->bytes += s->bytes;
	f->blamed += s->blamed;
	if (s->culprit_ns > 0)
		add_culprit(f, s->culprit, s->culprit_ns);
	return 0;
}

void bk_add_blocks(struct rp_bykey *b, const struct corr_req *r, int matched, uint64_t cgroup_id)
{
	struct fn_key rk, k;
	int has = b->b && b->kind == BK_FILE && fn_req_key(r, &rk);
	struct bk_row *own = NULL; /* the request's row (BK_CGROUP, BK_POD): its blocks' */
	struct blame_in in;

	if (b->b && matched && b->kind != BK_FILE && r->nr_blocks &&
	    !(own = task_row(b, cgroup_id)))
		b->oom = 1;
	for (int i = 0; b->b && i < r->nr_blocks; i++) {
		struct bk_row *f = own;

		if (matched && b->kind == BK_FILE && fn_blk_key(r->blocks[i], has ? &rk : NULL, &k))
			f = row_of(b, &k, NULL);
		blame_in_block(&in, r->blocks[i], f != NULL);
		in.tag = f ? (uint64_t)(f - b->f) + 1 : 0;
		if (blame_add(b->b, &in))
			b->oom = 1;
	}
}

/* Orders of the tables: most bytes, highest p99, most blamed wait first. */
static const struct rp_bykey *g_bf;
static int g_by;

static double row_key(const struct bk_row *f, int by)
{
	if (by == 0)
		return (double)f->bytes;
	if (by == 1)
		return (double)lhist_percentile(f->lat, 99);
	return f->blamed;
}

static int cmp_rows(const void *a, const void *b)
{
	double x = row_key(&g_bf->f[*(const size_t *)a], g_by);
	double y = row_key(&g_bf->f[*(const size_t *)b], g_by);

	if (x != y)
		return x > y ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/* The row's name: its label, a cgroup's path, a file's name or its device and inode. */
static const char *row_name(const struct rp_bykey *b, const struct bk_row *f,
			    const struct fn_cache *names, const struct rp_names *nm, char *buf,
			    size_t n)
{
	const struct fn_key *k = &f->key;
	const struct fn_entry *e;
	const char *cg;

	if (f->label)
		return f->label;
	if (b->kind != BK_FILE) {
		cg = k->ino && nm && nm->cgroup ? nm->cgroup(nm->ctx, k->ino) : NULL;
		if (cg)
			return cg;
		if (!k->ino)
			return BLAME_NO_TASK;
		snprintf(buf, n, "cgroup-id %llu", (unsigned long long)k->ino);
		return buf;
	}
	e = names ? fn_peek(names, k) : NULL;

	if (e && e->cfile)
		snprintf(buf, n, "%s (%s)", e->file, e->cfile);
	else if (e)
		snprintf(buf, n, "%s", e->file);
	else
		snprintf(buf, n, "[%u:%u]%s ino %llu", IT_MAJOR(k->dev), IT_MINOR(k->dev),
			 k->bdev ? " node" : "", (unsigned long long)k->ino);
	return buf;
}

/* The cgroup that held the device longest while the file's requests waited. */
static const char *culprit(const struct bk_row *f, const struct rp_names *nm, char *buf, size_t n)
{
	int top = -1;
	const char *cg;

	for (int k = 0; k < BK_CULPRITS; k++)
		if (f->cul_ns[k] > 0 && (top < 0 || f->cul_ns[k] > f->cul_ns[top]))
			top = k;
	if (top < 0)
		return "-";
	if (!f->cul_id[top])
		return BLAME_NO_TASK; /* a request of no task (the kernel's own) */
	cg = nm && nm->cgroup ? nm->cgroup(nm->ctx, f->cul_id[top]) : NULL;
	if (cg && strlen(cg) > BK_CUL_COL) /* its tail, as top cuts a cgroup */
		snprintf(buf, n, "...%s", cg + strlen(cg) - (BK_CUL_COL - 3));
	else if (cg)
		snprintf(buf, n, "%s", cg);
	else
		snprintf(buf, n, "cgroup-id %llu", (unsigned long long)f->cul_id[top]);
	return buf;
}

static const char *const bk_col[] = { [BK_FILE] = "FILE", [BK_CGROUP] = "CGROUP", [BK_POD] = "POD" };

static void print_table(const struct rp_bykey *b, FILE *out, const size_t *ix, size_t nr,
			const struct fn_cache *names, const struct rp_names *nm)
{
	char avg[16], p99[16], bl[16], name[RF_FILE_LEN * 2 + 8], cul[512];

	fprintf(out, "%8s %12s %9s %9s%s %s\n", "REQS", "BYTES", "AVG", "P99",
		b->blame ? "    BLAMED CULPRIT             " : "", bk_col[b->kind]);
	for (size_t i = 0; i < nr; i++) {
		const struct bk_row *f = &b->f[ix[i]];

		parse_fmt_duration((uint64_t)lhist_mean(f->lat), avg, sizeof(avg));
		parse_fmt_duration(lhist_percentile(f->lat, 99), p99, sizeof(p99));
		fprintf(out, "%8llu %12llu %9s %9s", (unsigned long long)f->reqs,
			(unsigned long long)f->bytes, f->reqs ? avg : "-", f->reqs ? p99 : "-");
		if (b->blame)
			fprintf(out, " %9s %-*s",
				parse_fmt_duration((uint64_t)f->blamed, bl, sizeof(bl)), BK_CUL_COL,
				culprit(f, nm, cul, sizeof(cul)));
		fprintf(out, " %s\n", row_name(b, f, names, nm, name, sizeof(name)));
	}
}

int bk_print(struct rp_bykey *b, FILE *out, int top, const struct fn_cache *names,
	     const struct rp_names *nm)
{
	static const char *const what[] = { "bytes", "p99 latency", "blamed wait" };
	size_t *ix, nr = fn_index_count(b->ix);

	if (b->b)
		blame_flush(b->b);
	ix = malloc((nr ? nr : 1) * sizeof(*ix));
	if (!ix)
		return -ENOMEM;
	fprintf(out, "\n%ss (--by %s): %zu %ss of the matching requests", bk_name[b->kind],
		bk_name[b->kind], nr, bk_name[b->kind]);
	if (b->kind == BK_FILE)
		fprintf(out, ", %llu requests of no file", (unsigned long long)b->no_file);
	fprintf(out, "%s\n", b->oom ? " (out of memory: some left out)" : "");
	for (int by = 0; by < (b->blame ? 3 : 2); by++) {
		size_t n = 0;

		for (size_t i = 0; i < nr; i++)
			if (row_key(&b->f[i], by) > 0)
				ix[n++] = i;
		g_bf = b;
		g_by = by;
		qsort(ix, n, sizeof(*ix), cmp_rows);
		fprintf(out, "\ntop %zu %ss by %s%s:\n", n < (size_t)top ? n : (size_t)top,
			bk_name[b->kind], what[by],
			by == 2 ? " (held by other cgroups' requests: docs/blame.md)" : "");
		print_table(b, out, ix, n < (size_t)top ? n : (size_t)top, names, nm);
	}
	free(ix);
	return 0;
}
