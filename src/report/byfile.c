// SPDX-License-Identifier: GPL-2.0
/*
 * byfile: `iotracer report --by file`: the matching requests summed per file
 * (the file each names: records/fname.h fn_req_key), printed as the top
 * files by bytes, by p99 latency and, with --blame, by blamed wait: the
 * part of their block requests' wait that requests of other cgroups held
 * the device (docs/blame.md), with the cgroup that held it most. Over a
 * server (report --from) the rows come summed: bf_add_sums().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "records/blame.h"
#include "records/fname.h"
#include "records/hist.h"
#include "records/recfmt.h"
#include "records/stages.h"
#include "service/dblame.h"
#include "lib/parse.h"
#include "report/internal.h"

#define BF_HORIZON_NS (10ULL * 1000000000ULL) /* as culprits.c: offline, every record at hand */
#define BF_CAP (1u << 18)
#define BF_CULPRITS 8 /* culprit cgroups kept per file; the rest are summed unnamed */
#define BF_CUL_COL 20 /* the CULPRIT column: a longer path shows its tail */

struct bf_file {
	struct fn_key key;
	uint64_t reqs, bytes;
	struct lhist *lat;
	double blamed; /* others' share of its block requests' wait (--blame) */
	uint64_t cul_id[BF_CULPRITS];
	double cul_ns[BF_CULPRITS];
};

struct rp_byfile {
	struct fn_index *ix; /* the files, numbered: f[i] is file i's row */
	struct bf_file *f;
	size_t cap;
	uint64_t no_file; /* matching requests that name no file */
	struct blame *b; /* --blame's engine; NULL: not asked, or the sums come summed */
	int blame; /* --blame: the blamed wait's table */
	int oom;
};

/* The row of file k, made on its first request; NULL: out of memory. */
static struct bf_file *file_of(struct rp_byfile *b, const struct fn_key *k)
{
	long i = fn_index_of(b->ix, k);
	struct bf_file *n;

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
		n->lat = lhist_new();
	}
	return n->lat ? n : NULL;
}

/* ns of the file's wait held by cgroup id: among its culprits, if there is room. */
static void add_culprit(struct bf_file *f, uint64_t id, double ns)
{
	int k = 0;

	while (k < BF_CULPRITS && f->cul_ns[k] > 0 && f->cul_id[k] != id)
		k++;
	if (k == BF_CULPRITS)
		return; /* in blamed, unnamed */
	f->cul_id[k] = id;
	f->cul_ns[k] += ns;
}

static void on_split(const struct blame_res *res, void *ctx)
{
	struct rp_byfile *b = ctx;
	struct bf_file *f;

	if (!res->r->tag || res->r->tag > fn_index_count(b->ix))
		return;
	f = &b->f[res->r->tag - 1];
	f->blamed += res->others_ns;
	for (int i = 0; i < res->nr_culprits; i++)
		add_culprit(f, res->culprits[i].who.cgroup_id, res->culprits[i].ns);
}

struct rp_byfile *bf_new(int blame)
{
	struct rp_byfile *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->ix = fn_index_new();
	b->blame = blame;
	if (!b->ix ||
	    (blame && !(b->b = blame_new(BLAME_BY_CGROUP, BF_HORIZON_NS, BF_CAP, on_split, b)))) {
		bf_free(b);
		return NULL;
	}
	return b;
}

struct rp_byfile *bf_new_sums(int blame)
{
	struct rp_byfile *b = bf_new(0);

	if (b)
		b->blame = blame;
	return b;
}

void bf_free(struct rp_byfile *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->cap; i++)
		lhist_free(b->f[i].lat);
	free(b->f);
	fn_index_free(b->ix);
	blame_free(b->b);
	free(b);
}

void bf_add(struct rp_byfile *b, const struct rp_req *q)
{
	struct req_view v;
	struct bf_file *f;
	struct fn_key k;

	if (!fn_req_key(q->r, &k)) {
		b->no_file++;
		return;
	}
	f = file_of(b, &k);
	if (!f) {
		b->oom = 1;
		return;
	}
	stages_make_view(q->r, &v);
	f->reqs++;
	f->bytes += v.bytes;
	if (v.end_ns)
		lhist_add(f->lat, stages_lat_of(&v));
}

int bf_add_sums(struct rp_byfile *b, const struct fn_key *k, const struct bf_sums *s)
{
	struct bf_file *f;

	if (!k) {
		b->no_file += s->reqs;
		return 0;
	}
	f = file_of(b, k);
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

void bf_add_blocks(struct rp_byfile *b, const struct corr_req *r, int matched)
{
	struct fn_key rk, k;
	int has = fn_req_key(r, &rk);
	struct blame_in in;

	for (int i = 0; b->b && i < r->nr_blocks; i++) {
		struct bf_file *f = NULL;

		if (matched && fn_blk_key(r->blocks[i], has ? &rk : NULL, &k))
			f = file_of(b, &k);
		dblame_in(&in, r->blocks[i], f != NULL);
		in.tag = f ? (uint64_t)(f - b->f) + 1 : 0;
		if (blame_add(b->b, &in))
			b->oom = 1;
	}
}

/* Orders of the tables: most bytes, highest p99, most blamed wait first. */
static const struct rp_byfile *g_bf;
static int g_by;

static double row_key(const struct bf_file *f, int by)
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

/* The file's name, or its device and inode where the input named none. */
static const char *file_name(const struct fn_key *k, const struct fn_cache *names, char *buf,
			     size_t n)
{
	const struct fn_entry *e = names ? fn_peek(names, k) : NULL;

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
static const char *culprit(const struct bf_file *f, const struct rp_names *nm, char *buf, size_t n)
{
	int top = -1;
	const char *cg;

	for (int k = 0; k < BF_CULPRITS; k++)
		if (f->cul_ns[k] > 0 && (top < 0 || f->cul_ns[k] > f->cul_ns[top]))
			top = k;
	if (top < 0)
		return "-";
	if (!f->cul_id[top])
		return BLAME_NO_TASK; /* a request of no task (the kernel's own) */
	cg = nm && nm->cgroup ? nm->cgroup(nm->ctx, f->cul_id[top]) : NULL;
	if (cg && strlen(cg) > BF_CUL_COL) /* its tail, as top cuts a cgroup */
		snprintf(buf, n, "...%s", cg + strlen(cg) - (BF_CUL_COL - 3));
	else if (cg)
		snprintf(buf, n, "%s", cg);
	else
		snprintf(buf, n, "cgroup-id %llu", (unsigned long long)f->cul_id[top]);
	return buf;
}

static void print_table(const struct rp_byfile *b, FILE *out, const size_t *ix, size_t nr,
			const struct fn_cache *names, const struct rp_names *nm)
{
	char avg[16], p99[16], bl[16], name[RF_FILE_LEN * 2 + 8], cul[512];

	fprintf(out, "%8s %12s %9s %9s%s %s\n", "REQS", "BYTES", "AVG", "P99",
		b->blame ? "    BLAMED CULPRIT             " : "", "FILE");
	for (size_t i = 0; i < nr; i++) {
		const struct bf_file *f = &b->f[ix[i]];

		parse_fmt_duration((uint64_t)lhist_mean(f->lat), avg, sizeof(avg));
		parse_fmt_duration(lhist_percentile(f->lat, 99), p99, sizeof(p99));
		fprintf(out, "%8llu %12llu %9s %9s", (unsigned long long)f->reqs,
			(unsigned long long)f->bytes, f->reqs ? avg : "-", f->reqs ? p99 : "-");
		if (b->blame)
			fprintf(out, " %9s %-*s",
				parse_fmt_duration((uint64_t)f->blamed, bl, sizeof(bl)), BF_CUL_COL,
				culprit(f, nm, cul, sizeof(cul)));
		fprintf(out, " %s\n", file_name(&f->key, names, name, sizeof(name)));
	}
}

int bf_print(struct rp_byfile *b, FILE *out, int top, const struct fn_cache *names,
	     const struct rp_names *nm)
{
	static const char *const what[] = { "bytes", "p99 latency", "blamed wait" };
	size_t *ix, nr = fn_index_count(b->ix);

	if (b->b)
		blame_flush(b->b);
	ix = malloc((nr ? nr : 1) * sizeof(*ix));
	if (!ix)
		return -ENOMEM;
	fprintf(out,
		"\nfiles (--by file): %zu files of the matching requests, %llu requests of "
		"no file%s\n",
		nr, (unsigned long long)b->no_file,
		b->oom ? " (out of memory: some left out)" : "");
	for (int by = 0; by < (b->blame ? 3 : 2); by++) {
		size_t n = 0;

		for (size_t i = 0; i < nr; i++)
			if (row_key(&b->f[i], by) > 0)
				ix[n++] = i;
		g_bf = b;
		g_by = by;
		qsort(ix, n, sizeof(*ix), cmp_rows);
		fprintf(out, "\ntop %zu files by %s%s:\n", n < (size_t)top ? n : (size_t)top,
			what[by],
			by == 2 ? " (held by other cgroups' requests: docs/blame.md)" : "");
		print_table(b, out, ix, n < (size_t)top ? n : (size_t)top, names, nm);
	}
	free(ix);
	return 0;
}
