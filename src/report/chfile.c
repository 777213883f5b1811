// SPDX-License-Identifier: GPL-2.0
/*
 * report --from clickhouse:// --by file (docs/fleet.md, "Reports"): the
 * server sums the matching requests per host, file and latency bucket
 * (chsql.c), and with --blame the stored blame lines' others' wait and
 * culprits per victim file; byfile.c's tables print them. A file is its name
 * (the rows' file column) or, unnamed, "[MAJ:MIN] ino N" as byfile names
 * one; over more than one host, "HOST:" before it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "records/fname.h"
#include "report/chsrc.h"
#include "report/driver.h"
#include "report/internal.h"

/* The files of the answer, in its order (host, then name): file i is byfile's key cf_key(i). */
struct cf_file {
	char *host, *name;
};

struct cf_files {
	struct cf_file *v;
	size_t n, cap;
};

/* bdev 2: no record's key (0 or 1), so never a name a row gave */
static struct fn_key cf_key(size_t i)
{
	return (struct fn_key){ .ino = i + 1, .dev = 0, .bdev = 2 };
}

static int cf_cmp(const struct cf_file *a, const char *host, const char *name)
{
	int c = strcmp(a->host, host);

	return c ? c : strcmp(a->name, name);
}

/* File (host, name)'s number; -1: not in the answer. */
static long cf_find(const struct cf_files *fs, const char *host, const char *name)
{
	size_t lo = 0, hi = fs->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cf_cmp(&fs->v[mid], host, name);

		if (!c)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* A new file at the end (the answer is ordered); its label into the report's names. */
static int cf_add(struct report *rp, struct cf_files *fs, const char *host, const char *name,
		  const char *cfile)
{
	struct fn_key k = cf_key(fs->n);
	struct cf_file *e;
	char *label = NULL;
	int err;

	if (fs->n == fs->cap) {
		size_t cap = fs->cap ? fs->cap * 2 : 256;

		e = realloc(fs->v, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		fs->v = e;
		fs->cap = cap;
	}
	e = &fs->v[fs->n];
	e->host = strdup(host);
	e->name = strdup(name);
	if (!e->host || !e->name ||
	    (rp->ch->hosts > 1 && asprintf(&label, "%s:%s", host, name) < 0)) {
		free(e->host);
		free(e->name);
		return -ENOMEM;
	}
	fs->n++;
	err = fn_put(rp->rr.fnames, &k, label ? label : name, cfile[0] ? cfile : NULL);
	free(label);
	return err;
}

static uint64_t num(const char *s)
{
	return strtoull(s, NULL, 10);
}

/* host file container_file ended bucket n bytes min max sum */
static int file_line(struct report *rp, char **f, void *ctx)
{
	struct cf_files *fs = ctx;
	struct bf_sums s = { .reqs = num(f[5]), .bytes = num(f[6]) };
	struct fn_key k;

	if (f[3][0] == '1') {
		s.lat_v = num(f[4]);
		s.lat_n = s.reqs;
		s.lat_min = num(f[7]);
		s.lat_max = num(f[8]);
		s.lat_sum = num(f[9]);
	}
	if (!f[1][0])
		return bf_add_sums(rp->byfile, NULL, &s);
	if (!fs->n || cf_cmp(&fs->v[fs->n - 1], f[0], f[1])) {
		if (fs->n && cf_cmp(&fs->v[fs->n - 1], f[0], f[1]) > 0)
			return -EBADMSG; /* not in the order asked */
		if (cf_add(rp, fs, f[0], f[1], f[2]))
			return -ENOMEM;
	}
	k = cf_key(fs->n - 1);
	return bf_add_sums(rp->byfile, &k, &s);
}

/* host victim_file others_ns: the wait others held, on the file's row */
static int blamed_line(struct report *rp, char **f, void *ctx)
{
	long i = cf_find(ctx, f[0], f[1]);
	struct bf_sums s = { .blamed = (double)num(f[2]) };
	struct fn_key k = cf_key((size_t)i);

	return i < 0 ? 0 : bf_add_sums(rp->byfile, &k, &s);
}

/* host victim_file cgroup_id cgroup ns: a culprit's share of the file's wait */
static int culprit_line(struct report *rp, char **f, void *ctx)
{
	long i = cf_find(ctx, f[0], f[1]);
	struct bf_sums s = { .culprit = num(f[2]), .culprit_ns = (double)num(f[4]) };
	struct fn_key k = cf_key((size_t)i);

	if (i < 0)
		return 0;
	if (f[3][0])
		rp_note_cgroup(rp, s.culprit, f[3]);
	return bf_add_sums(rp->byfile, &k, &s);
}

/* --blame: the stored lines of the matched requests, by their victim's file. */
static int cf_blame(struct report *rp, struct cf_files *fs)
{
	struct ch_src *c = rp->ch;
	struct nat_buf sql = { 0 };
	int ret =
		ch_sqlf(&sql, "SELECT host, victim_file, sum(others_ns) FROM %s", c->blame_from) ||
		ch_blame_where(c, &sql) ||
		ch_sqlf(&sql, " AND victim_file != '' GROUP BY host, victim_file") ||
		ch_each_line(rp, &sql, 3, blamed_line, fs);

	sql.len = 0;
	ret = ret ||
	      ch_sqlf(&sql,
		      "SELECT host, victim_file, cu.cgroup_id, any(cu.cgroup), sum(cu.ns) FROM %s "
		      "ARRAY JOIN culprits AS cu",
		      c->blame_from) ||
	      ch_blame_where(c, &sql) ||
	      ch_sqlf(&sql, " AND victim_file != '' GROUP BY host, victim_file, cu.cgroup_id") ||
	      ch_each_line(rp, &sql, 5, culprit_line, fs);
	nat_buf_free(&sql);
	return ret;
}

int ch_by_file(struct report *rp)
{
	struct ch_src *c = rp->ch;
	struct cf_files fs = { 0 };
	struct nat_buf sql = { 0 };
	int ret = ch_files_sql(c->from, (char *)c->where.p, &sql) ||
		  ch_each_line(rp, &sql, 10, file_line, &fs) || (rp->o.blame && cf_blame(rp, &fs));

	for (size_t i = 0; i < fs.n; i++) {
		free(fs.v[i].host);
		free(fs.v[i].name);
	}
	free(fs.v);
	nat_buf_free(&sql);
	return ret;
}
