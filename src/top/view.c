// SPDX-License-Identifier: GPL-2.0
/*
 * top's view: two snapshots of the kernel's aggregation into rates, sorted,
 * printed as a table. Pure (unit-tested). See top.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/output.h"
#include "lib/parse.h"
#include "top/top.h"

static const char *const sort_names[TV_SORT_MAX] = { "iops", "bytes", "avg", "p99", "queue",
						     "device" };

const char *tview_sort_name(enum tview_sort s)
{
	return (unsigned int)s < TV_SORT_MAX ? sort_names[s] : "?";
}

int tview_sort_of(const char *name)
{
	for (int i = 0; i < TV_SORT_MAX; i++)
		if (!strcmp(name, sort_names[i]))
			return i;
	return -1;
}

static int key_cmp(const void *a, const void *b)
{
	return memcmp(&((const struct agg_entry *)a)->key, &((const struct agg_entry *)b)->key,
		      sizeof(struct it_agg_key));
}

/* a - b, clamped at 0 (b is an earlier snapshot of the same key). */
static void val_sub(struct it_agg_val *d, const struct it_agg_val *a, const struct it_agg_val *b)
{
#define SUB(x) (d->x = a->x > b->x ? a->x - b->x : 0)
	SUB(count);
	SUB(bytes);
	SUB(q2c_ns);
	SUB(q2d_ns);
	SUB(d2c_ns);
	SUB(nr_d);
	for (int k = 0; k < IT_SIZE_SLOTS; k++)
		SUB(size[k]);
	for (int k = 0; k < IT_LAT_SLOTS; k++)
		SUB(lat[k]);
#undef SUB
	memcpy(d->comm, a->comm, sizeof(d->comm));
}

/* A group of entries shown as one row: its key, the interval's sum and the totals. */
struct group {
	struct it_agg_key key;
	struct it_agg_val delta, total;
};

static struct group *group_of(struct group *g, int *n, const struct it_agg_key *k, int by_cgroup)
{
	struct it_agg_key key = *k;

	if (by_cgroup)
		key.tgid = 0;
	for (int i = 0; i < *n; i++)
		if (!memcmp(&g[i].key, &key, sizeof(key)))
			return &g[i];
	memset(&g[*n], 0, sizeof(g[*n]));
	g[*n].key = key;
	return &g[(*n)++];
}

static void fill_row(struct tview_row *r, const struct group *g, uint64_t dt_ns)
{
	const struct it_agg_val *d = &g->delta;
	double dt = dt_ns ? (double)dt_ns / 1e9 : 1.0;

	memset(r, 0, sizeof(*r));
	r->tgid = g->key.tgid;
	r->cgroup_id = g->key.cgroup_id;
	r->dev = g->key.dev;
	r->op = g->key.op;
	memcpy(r->comm, g->total.comm, sizeof(r->comm) - 1);
	r->iops = (double)d->count / dt;
	r->bps = (double)d->bytes / dt;
	r->avg_ns = d->count ? d->q2c_ns / d->count : 0;
	r->p99_ns = agg_lat_quantile(d, 0.99);
	r->queue_ns = d->nr_d ? d->q2d_ns / d->nr_d : 0;
	r->device_ns = d->nr_d ? d->d2c_ns / d->nr_d : 0;
	r->ios = g->total.count;
	r->bytes = g->total.bytes;
}

/* Group the entries (deltas against prev, sorted by key; prev NULL: whole) and make rows. */
static int make_rows(const struct agg_entry *now, int nr, const struct agg_entry *prev,
		     int nr_prev, uint64_t dt_ns, int by_cgroup, struct tview_row **rows)
{
	struct group *g = calloc(nr ? nr : 1, sizeof(*g));
	struct it_agg_val zero, d;
	int ng = 0, n = 0;

	*rows = calloc(nr ? nr : 1, sizeof(**rows));
	if (!g || !*rows) {
		free(g);
		free(*rows);
		*rows = NULL;
		return -ENOMEM;
	}
	memset(&zero, 0, sizeof(zero));
	for (int i = 0; i < nr; i++) {
		const struct agg_entry *p =
			prev ? bsearch(&now[i], prev, nr_prev, sizeof(*prev), key_cmp) : NULL;
		struct group *x = group_of(g, &ng, &now[i].key, by_cgroup);

		val_sub(&d, &now[i].v, p ? &p->v : &zero);
		agg_add(&x->delta, &d);
		agg_add(&x->total, &now[i].v);
	}
	for (int i = 0; i < ng; i++)
		if (g[i].delta.count)
			fill_row(&(*rows)[n++], &g[i], dt_ns);
	free(g);
	return n;
}

void tview_sort_snapshot(struct agg_entry *e, int n)
{
	qsort(e, n, sizeof(*e), key_cmp);
}

int tview_fold(struct agg_entry *e, int n, uint64_t (*fold)(uint64_t id, void *ctx), void *ctx)
{
	int o = 0;

	for (int i = 0; i < n; i++)
		e[i].key.cgroup_id = fold(e[i].key.cgroup_id, ctx);
	tview_sort_snapshot(e, n);
	for (int i = 0; i < n; i++) {
		if (o && !key_cmp(&e[o - 1], &e[i])) {
			agg_add(&e[o - 1].v, &e[i].v); /* the first entry's comm stays */
			continue;
		}
		e[o++] = e[i];
	}
	return o;
}

int tview_rows(const struct agg_entry *now, int nr, const struct agg_entry *prev, int nr_prev,
	       uint64_t dt_ns, int by_cgroup, struct tview_row **rows)
{
	return make_rows(now, nr, prev, prev ? nr_prev : 0, dt_ns, by_cgroup, rows);
}

int tview_totals(const struct agg_entry *now, int nr, uint64_t elapsed_ns, int by_cgroup,
		 struct tview_row **rows)
{
	return make_rows(now, nr, NULL, 0, elapsed_ns, by_cgroup, rows);
}

static double sort_val(const struct tview_row *r, enum tview_sort key)
{
	switch (key) {
	case TV_BYTES:
		return r->bps;
	case TV_AVG:
		return (double)r->avg_ns;
	case TV_P99:
		return (double)r->p99_ns;
	case TV_QUEUE:
		return (double)r->queue_ns;
	case TV_DEVICE:
		return (double)r->device_ns;
	default:
		return r->iops;
	}
}

static enum tview_sort g_key; /* qsort has no context argument */

/* Descending by the key; ties by pid, device, op (a stable order between redraws). */
static int row_cmp(const void *pa, const void *pb)
{
	const struct tview_row *a = pa, *b = pb;
	double x = sort_val(a, g_key), y = sort_val(b, g_key);

	if (x != y)
		return x < y ? 1 : -1;
	if (a->tgid != b->tgid)
		return a->tgid < b->tgid ? -1 : 1;
	if (a->cgroup_id != b->cgroup_id)
		return a->cgroup_id < b->cgroup_id ? -1 : 1;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	return (int)a->op - (int)b->op;
}

void tview_sort(struct tview_row *rows, int n, enum tview_sort key)
{
	g_key = key;
	qsort(rows, n, sizeof(*rows), row_cmp);
}

static void print_head(FILE *f, const struct tview_opts *o)
{
	if (o->ansi)
		fputs("\033[7m", f);
	if (!o->by_cgroup)
		fprintf(f, "%7s %-15s ", "PID", "COMM");
	fprintf(f, "%-8s %-5s %9s %10s %9s %9s %9s %9s %s", "DEV", "OP", "IOPS", "KB/s", "AVG",
		"P99", "QUEUE", "DEVICE", o->group_col ? o->group_col : "CGROUP");
	if (o->ansi)
		fputs("\033[0m", f);
	fputc('\n', f);
}

static void print_row(FILE *f, const struct tview_row *r, const struct tview_opts *o)
{
	char avg[16], p99[16], q[16] = "-", d[16] = "-";
	const char *cg = o->cgroup ? o->cgroup(r->cgroup_id, o->ctx) : NULL;

	parse_fmt_duration(r->avg_ns, avg, sizeof(avg));
	parse_fmt_duration(r->p99_ns, p99, sizeof(p99));
	if (r->queue_ns || r->device_ns) {
		parse_fmt_duration(r->queue_ns, q, sizeof(q));
		parse_fmt_duration(r->device_ns, d, sizeof(d));
	}
	if (!o->by_cgroup)
		fprintf(f, "%7u %-15.15s ", r->tgid, r->comm[0] ? r->comm : "?");
	fprintf(f, "%-8.8s %-5s %9.1f %10.1f %9s %9s %9s %9s %s\n", o->dev_name(r->dev, o->ctx),
		out_op_name(r->op), r->iops, r->bps / 1024.0, avg, p99, q, d, cg ? cg : "-");
}

void tview_print(FILE *f, const char *title, const struct tview_row *rows, int n,
		 const struct tview_opts *o)
{
	int shown = o->max_rows > 0 && o->max_rows < n ? o->max_rows : n;

	if (o->ansi)
		fputs("\033[H\033[2J", f); /* home, clear: a plain redraw */
	fprintf(f, "%s\n", title);
	print_head(f, o);
	for (int i = 0; i < shown; i++)
		print_row(f, &rows[i], o);
	if (shown < n)
		fprintf(f, "... %d more rows\n", n - shown);
}
