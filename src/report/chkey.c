// SPDX-License-Identifier: GPL-2.0
/*
 * report --from clickhouse:// --by file|cgroup|pod (docs/fleet.md, "Reports"):
 * the server sums the matching requests per host, key and latency bucket
 * (chsql.c), and with --blame the stored blame lines' others' wait and
 * culprits per victim key; bykey.c's tables print them. A file is its name
 * (the rows' file column) or, unnamed, "[MAJ:MIN] ino N" as bykey names one;
 * a cgroup its path, a pod "namespace/name" or its UID (chsql.c); over more
 * than one host, "HOST:" before it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "records/fname.h"
#include "report/chsrc.h"
#include "report/driver.h"
#include "report/internal.h"

/* The keys of the answer, in its order (host, then name): key i is bykey's ck_key(i). */
struct ck_file {
	char *host, *name;
	char *label; /* "HOST:name" over more than one host, else NULL */
};

struct ck_files {
	struct ck_file *v;
	size_t n, cap;
};

/* bdev 2: no record's key (0 or 1), so never a name a row gave */
static struct fn_key ck_key(size_t i)
{
	return (struct fn_key){ .ino = i + 1, .dev = 0, .bdev = 2 };
}

static int ck_cmp(const struct ck_file *a, const char *host, const char *name)
{
	int c = strcmp(a->host, host);

	return c ? c : strcmp(a->name, name);
}

/* File (host, name)'s number; -1: not in the answer. */
static long ck_find(const struct ck_files *fs, const char *host, const char *name)
{
	size_t lo = 0, hi = fs->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = ck_cmp(&fs->v[mid], host, name);

		if (!c)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* A new key at the end (the answer is ordered); a file's label into the report's names. */
static int ck_add(struct report *rp, struct ck_files *fs, const char *host, const char *name,
		  const char *cfile)
{
	struct fn_key k = ck_key(fs->n);
	struct ck_file *e;
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
	e->label = label;
	fs->n++;
	if (rp->o.bykey != BK_FILE)
		return 0; /* named by its row's label */
	err = fn_put(rp->rr.fnames, &k, label ? label : name, cfile[0] ? cfile : NULL);
	return err;
}

/* A cgroup's or pod's row's name (a file's: in the report's names). */
static const char *ck_label(const struct ck_file *e)
{
	return e->label ? e->label : e->name;
}

static uint64_t num(const char *s)
{
	return strtoull(s, NULL, 10);
}

/* host file container_file ended bucket n bytes min max sum */
static int file_line(struct report *rp, char **f, void *ctx)
{
	struct ck_files *fs = ctx;
	struct bk_sums s = { .reqs = num(f[5]), .bytes = num(f[6]) };
	struct fn_key k;

	if (f[3][0] == '1') {
		s.lat_v = num(f[4]);
		s.lat_n = s.reqs;
		s.lat_min = num(f[7]);
		s.lat_max = num(f[8]);
		s.lat_sum = num(f[9]);
	}
	if (!f[1][0] && rp->o.bykey == BK_FILE)
		return bk_add_sums(rp->bykey, NULL, NULL, &s);
	if (!fs->n || ck_cmp(&fs->v[fs->n - 1], f[0], f[1])) {
		if (fs->n && ck_cmp(&fs->v[fs->n - 1], f[0], f[1]) > 0)
			return -EBADMSG; /* not in the order asked */
		if (ck_add(rp, fs, f[0], f[1], f[2]))
			return -ENOMEM;
	}
	k = ck_key(fs->n - 1);
	return bk_add_sums(rp->bykey, &k, ck_label(&fs->v[fs->n - 1]), &s);
}

/* host victim_file others_ns: the wait others held, on the file's row */
static int blamed_line(struct report *rp, char **f, void *ctx)
{
	long i = ck_find(ctx, f[0], f[1]);
	struct bk_sums s = { .blamed = (double)num(f[2]) };
	struct fn_key k = ck_key((size_t)i);

	return i < 0 ? 0 : bk_add_sums(rp->bykey, &k, NULL, &s);
}

/* host victim_file cgroup_id cgroup ns: a culprit's share of the file's wait */
static int culprit_line(struct report *rp, char **f, void *ctx)
{
	long i = ck_find(ctx, f[0], f[1]);
	struct bk_sums s = { .culprit = num(f[2]), .culprit_ns = (double)num(f[4]) };
	struct fn_key k = ck_key((size_t)i);

	if (i < 0)
		return 0;
	if (f[3][0])
		rp_note_cgroup(rp, s.culprit, f[3]);
	return bk_add_sums(rp->bykey, &k, NULL, &s);
}

/*
 * --blame: the stored lines of the matched requests, by their victim's key
 * (a pod's name: the lines carry no UID, so an unnamed pod's rows get none).
 */
static int ck_blame(struct report *rp, struct ck_files *fs)
{
	struct ch_src *c = rp->ch;
	struct nat_buf sql = { 0 };
	const char *vk = ch_victim_key(rp->o.bykey);
	int ret =
		ch_sqlf(&sql, "SELECT host, %s AS vk, sum(others_ns) FROM %s", vk, c->blame_from) ||
		ch_blame_where(c, &sql) || ch_sqlf(&sql, " AND (%s) != '' GROUP BY host, vk", vk) ||
		ch_each_line(rp, &sql, 3, blamed_line, fs);

	sql.len = 0;
	ret = ret ||
	      ch_sqlf(&sql,
		      "SELECT host, %s AS vk, cu.cgroup_id, any(cu.cgroup), sum(cu.ns) FROM %s "
		      "ARRAY JOIN culprits AS cu",
		      vk, c->blame_from) ||
	      ch_blame_where(c, &sql) ||
	      ch_sqlf(&sql, " AND (%s) != '' GROUP BY host, vk, cu.cgroup_id", vk) ||
	      ch_each_line(rp, &sql, 5, culprit_line, fs);
	nat_buf_free(&sql);
	return ret;
}

int ch_by_key(struct report *rp)
{
	struct ch_src *c = rp->ch;
	struct ck_files fs = { 0 };
	struct nat_buf sql = { 0 };
	int ret = ch_keys_sql(rp->o.bykey, c->from, (char *)c->where.p, &sql) ||
		  ch_each_line(rp, &sql, 10, file_line, &fs) || (rp->o.blame && ck_blame(rp, &fs));

	for (size_t i = 0; i < fs.n; i++) {
		free(fs.v[i].host);
		free(fs.v[i].name);
		free(fs.v[i].label);
	}
	free(fs.v);
	nat_buf_free(&sql);
	return ret;
}
