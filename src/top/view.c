// SPDX-License-Identifier: GPL-2.0
/*
 * top's view: two snapshots of the kernel's aggregation into rates, sorted,
 * printed as a table. Pure (unit-tested). See view.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "blame/blame.h"
#include "records/cgroup.h"
#include "records/output.h"
#include "lib/abi.h"
#include "lib/parse.h"
#include "top/view.h"

static const char *const sort_names[TV_SORT_MAX] = { "iops", "bytes", "avg",
						     "p99",  "queue", "device" };

const char *tview_sort_name(enum tview_sort s)
{
	return (unsigned int)s < TV_SORT_MAX ? sort_names[s] : "?";
}

const char *tview_sort_kw(int i)
{
	return i >= 0 && i < TV_SORT_MAX ? sort_names[i] : NULL;
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
static int make_rows(const struct agg_entry *now, int nr, const struct agg_entry *prev, int nr_prev,
		     uint64_t dt_ns, int by_cgroup, struct tview_row **rows)
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

/* The live table's columns, in order (CGROUP, last, takes what is left). */
enum tv_col {
	C_PID,
	C_COMM,
	C_DEV,
	C_OP,
	C_IOPS,
	C_KBS,
	C_AVG,
	C_P99,
	C_QUEUE,
	C_DEVICE,
	C_BLAMED,
	C_CULPRIT,
	C_NR
};

static const struct {
	const char *name;
	int w; /* right-aligned but COMM, DEV, OP */
} tv_cols[C_NR] = {
	[C_PID] = { "PID", 7 },	       [C_COMM] = { "COMM", -15 },
	[C_DEV] = { "DEV", -8 },       [C_OP] = { "OP", -5 },
	[C_IOPS] = { "IOPS", 9 },      [C_KBS] = { "KB/s", 10 },
	[C_AVG] = { "AVG", 9 },	       [C_P99] = { "P99", 9 },
	[C_QUEUE] = { "QUEUE", 9 },    [C_DEVICE] = { "DEVICE", 9 },
	[C_BLAMED] = { "BLAMED%", 7 }, [C_CULPRIT] = { "CULPRIT", -20 },
};

#define TV_COMM_NARROW 10
#define TV_CG_MIN 10 /* a cgroup column narrower than this is left out */
#define TV_CULPRIT_NARROW 12

/* What fits: the columns shown, COMM's width, CGROUP's (-1: none, 0: no limit). */
struct tv_layout {
	int w[C_NR]; /* 0: not shown, else the printf width (negative: left-aligned) */
	int cg_w;
};

static int fixed_width(const struct tv_layout *l)
{
	int sum = 0;

	for (int c = 0; c < C_NR; c++)
		sum += l->w[c] ? abs(l->w[c]) + 1 : 0;
	return sum;
}

/*
 * --blame's columns with no CGROUP still too wide: P99, then AVG dropped, then
 * CULPRIT cut (what is left is what blame is asked for).
 */
static void shed_blame(struct tv_layout *l, int avail)
{
	if (fixed_width(l) > avail)
		l->w[C_P99] = 0;
	if (fixed_width(l) > avail)
		l->w[C_AVG] = 0;
	if (fixed_width(l) > avail)
		l->w[C_CULPRIT] = -TV_CULPRIT_NARROW;
}

/*
 * Rows per cgroup, container or pod: CGROUP is the row's key and stays. What
 * goes before it: QUEUE, DEVICE, then with --blame CULPRIT cut, AVG, P99, then
 * CULPRIT and BLAMED%. step: the next to go; 0 when none is left.
 */
static int shed_for_key(struct tv_layout *l, int step)
{
	static const int order[] = { C_QUEUE, C_DEVICE,	 -C_CULPRIT, C_AVG,
				     C_P99,   C_CULPRIT, C_BLAMED };

	for (; step < (int)(sizeof(order) / sizeof(order[0])); step++) {
		int c = abs(order[step]);

		if (!l->w[c] || (order[step] < 0 && abs(l->w[c]) <= TV_CULPRIT_NARROW))
			continue;
		l->w[c] = order[step] < 0 ? -TV_CULPRIT_NARROW : 0;
		return step + 1;
	}
	return 0;
}

/*
 * The widest layout whose lines fit o->width - 1 columns (the last column of a
 * terminal wraps on some). Per process: QUEUE, DEVICE dropped, then COMM cut,
 * each step only if the cgroup has no TV_CG_MIN columns yet; with none of them,
 * no CGROUP. Per cgroup, container or pod, CGROUP is the key: shed_for_key.
 */
static void layout(const struct tview_opts *o, struct tv_layout *l)
{
	int avail = o->width - 1, step;

	for (int c = 0; c < C_NR; c++)
		l->w[c] = tv_cols[c].w;
	if (o->by_cgroup)
		l->w[C_PID] = l->w[C_COMM] = 0;
	if (!o->blame)
		l->w[C_BLAMED] = l->w[C_CULPRIT] = 0;
	l->cg_w = 0;
	if (o->width <= 0)
		return;
	for (step = 0;; step++) {
		if (avail - fixed_width(l) >= TV_CG_MIN) {
			l->cg_w = avail - fixed_width(l);
			return;
		}
		if (o->by_cgroup) {
			if (!(step = shed_for_key(l, step)))
				break;
			step--;
		} else if (step == 0)
			l->w[C_QUEUE] = 0;
		else if (step == 1)
			l->w[C_DEVICE] = 0;
		else if (step == 2 && l->w[C_COMM])
			l->w[C_COMM] = -TV_COMM_NARROW;
		else
			break;
	}
	/* the key column in what is left, however narrow */
	l->cg_w = o->by_cgroup ? TV_CG_MIN : -1;
	if (o->blame && !o->by_cgroup)
		shed_blame(l, avail);
}

static void print_head(FILE *f, const struct tview_opts *o, const struct tv_layout *l)
{
	char line[256];
	int at = 0;

	for (int c = 0; c < C_NR; c++)
		if (l->w[c])
			at += snprintf(line + at, sizeof(line) - at, "%*s ", l->w[c],
				       tv_cols[c].name);
	if (l->cg_w >= 0)
		snprintf(line + at, sizeof(line) - at, "%s",
			 o->group_col ? o->group_col : "CGROUP");
	else if (at)
		line[at - 1] = '\0';
	if (o->ansi)
		fputs("\033[7m", f);
	fputs(line, f);
	if (o->ansi)
		fputs("\033[0m", f);
	fputc('\n', f);
}

/* s in at most w columns: its tail after "..." when longer (0: whole). */
static const char *tail_of(const char *s, int w)
{
	static char buf[256];
	size_t n = strlen(s);

	if (!w || n <= (size_t)w || w < 4)
		return s;
	snprintf(buf, sizeof(buf), "...%s", s + n - (w - 3));
	return buf;
}

/* The BLAMED% and CULPRIT cells of a row ("-" without a culprit); the name cut to w (0: whole). */
static void blame_cells(const struct tview_row *r, int totals, const struct tview_opts *o,
			char *pct_s, char *name_s, size_t n, int w)
{
	char name[CG_PATH_MAX];
	double pct = 0;

	if (!o->blame(r, totals, name, sizeof(name), &pct, o->ctx)) {
		snprintf(pct_s, n, "-");
		snprintf(name_s, n, "-");
		return;
	}
	snprintf(pct_s, n, "%.1f", pct);
	snprintf(name_s, n, "%s", tail_of(name, w));
}

/*
 * A row of no task: the block requests the kernel issues on its own (the flush
 * machinery's requests without bios), which have no submitter, pid or cgroup.
 * Named BLAME_NO_TASK, as blame names them (docs/top.md).
 */
static bool no_task(const struct tview_row *r)
{
	return !r->tgid && !r->cgroup_id;
}

/* The row's cgroup (or container, pod) label; NULL: unknown. */
static const char *row_cgroup(const struct tview_row *r, const struct tview_opts *o)
{
	if (no_task(r))
		return BLAME_NO_TASK;
	return o->cgroup ? o->cgroup(r->cgroup_id, o->ctx) : NULL;
}

static void print_row(FILE *f, const struct tview_row *r, const struct tview_opts *o,
		      const struct tv_layout *l)
{
	/* every cell but CULPRIT fits 32; CULPRIT and CGROUP are cut to CG_PATH_MAX */
	char v[C_NR][32], culprit[CG_PATH_MAX], line[C_NR * 32 + 2 * CG_PATH_MAX];
	const char *cg = row_cgroup(r, o);
	const char *cell[C_NR];
	int at = 0;

	snprintf(v[C_PID], sizeof(v[0]), no_task(r) ? "-" : "%u", r->tgid);
	snprintf(v[C_COMM], sizeof(v[0]), "%.*s", abs(l->w[C_COMM] ? l->w[C_COMM] : 15),
		 no_task(r) ? BLAME_NO_TASK :
		 r->comm[0] ? r->comm :
			      "?");
	snprintf(v[C_DEV], sizeof(v[0]), "%.8s", o->dev_name(r->dev, o->ctx));
	snprintf(v[C_OP], sizeof(v[0]), "%s", abi_op_name(r->op));
	snprintf(v[C_IOPS], sizeof(v[0]), "%.1f", r->iops);
	snprintf(v[C_KBS], sizeof(v[0]), "%.1f", r->bps / 1024.0);
	parse_fmt_duration(r->avg_ns, v[C_AVG], sizeof(v[0]));
	parse_fmt_duration(r->p99_ns, v[C_P99], sizeof(v[0]));
	strcpy(v[C_QUEUE], "-");
	strcpy(v[C_DEVICE], "-");
	if (r->queue_ns || r->device_ns) {
		parse_fmt_duration(r->queue_ns, v[C_QUEUE], sizeof(v[0]));
		parse_fmt_duration(r->device_ns, v[C_DEVICE], sizeof(v[0]));
	}
	for (int c = 0; c < C_NR; c++)
		cell[c] = v[c];
	cell[C_CULPRIT] = culprit;
	/* a terminal's CULPRIT is cut to its column; -b's is whole (it pushes CGROUP right) */
	if (o->blame)
		blame_cells(r, 0, o, v[C_BLAMED], culprit, sizeof(culprit),
			    o->width > 0 ? abs(l->w[C_CULPRIT]) : 0);
	for (int c = 0; c < C_NR; c++)
		if (l->w[c])
			at += snprintf(line + at, sizeof(line) - at, "%*s ", l->w[c], cell[c]);
	if (l->cg_w >= 0)
		snprintf(line + at, sizeof(line) - at, "%s", tail_of(cg ? cg : "-", l->cg_w));
	else if (at)
		line[at - 1] = '\0';
	fprintf(f, "%s\n", line);
}

/*
 * The title in w columns, cut, not wrapped (a wrapped title would push the table
 * off the screen), and only between its parts (two spaces apart): a part is
 * shown whole or not at all.
 */
static void print_title(FILE *f, const char *title, int w)
{
	int len = (int)strlen(title);

	if (len > w) {
		len = w;
		while (len > 0 && strncmp(title + len, "  ", 2))
			len--;
		if (!len)
			len = w;
	}
	fprintf(f, "%.*s\n", len, title);
}

int tview_fit(int term_rows)
{
	/* title, header, "... N more rows", and the line the cursor ends on */
	return term_rows > 5 ? term_rows - 4 : 1;
}

void tview_print(FILE *f, const char *title, const struct tview_row *rows, int n,
		 const struct tview_opts *o)
{
	int shown = o->max_rows > 0 && o->max_rows < n ? o->max_rows : n;
	struct tv_layout l;

	layout(o, &l);
	if (o->ansi)
		fputs("\033[H\033[2J", f); /* home, clear: a plain redraw */
	print_title(f, title, o->width > 1 ? o->width - 1 : INT_MAX);
	print_head(f, o, &l);
	for (int i = 0; i < shown; i++)
		print_row(f, &rows[i], o, &l);
	if (shown < n)
		fprintf(f, "... %d more row%s\n", n - shown, n - shown == 1 ? "" : "s");
}

/* ---- -b's totals ---- */

enum { T_PID, T_COMM, T_CGROUP, T_DEV, T_OP, T_IOS, T_BYTES, T_BLAMED, T_CULPRIT, T_NR };

static void totals_cells(const struct tview_row *r, const struct tview_opts *o,
			 char v[T_NR][CG_PATH_MAX])
{
	const char *cg = row_cgroup(r, o);

	snprintf(v[T_PID], CG_PATH_MAX, no_task(r) ? "-" : "%u", r->tgid);
	snprintf(v[T_COMM], CG_PATH_MAX, "%s",
		 no_task(r) ? BLAME_NO_TASK :
		 r->comm[0] ? r->comm :
			      "-");
	snprintf(v[T_CGROUP], CG_PATH_MAX, "%s", cg ? cg : "-");
	snprintf(v[T_DEV], CG_PATH_MAX, "%s", o->dev_name(r->dev, o->ctx));
	snprintf(v[T_OP], CG_PATH_MAX, "%s", abi_op_name(r->op));
	snprintf(v[T_IOS], CG_PATH_MAX, "%llu", (unsigned long long)r->ios);
	snprintf(v[T_BYTES], CG_PATH_MAX, "%llu", (unsigned long long)r->bytes);
	if (o->blame)
		blame_cells(r, 1, o, v[T_BLAMED], v[T_CULPRIT], CG_PATH_MAX, 0);
}

/* One line of the totals: cells [first, end) left-aligned in their columns, the last unpadded. */
static void totals_line(FILE *f, char v[T_NR][CG_PATH_MAX], const int *w, int first, int end)
{
	for (int c = first; c + 1 < end; c++)
		fprintf(f, "%-*s ", w[c], v[c]);
	fprintf(f, "%s\n", v[end - 1]);
}

void tview_print_totals(FILE *f, const struct tview_row *rows, int n, const struct tview_opts *o)
{
	const char *head[T_NR] = { "PID", "COMM",  "CGROUP",  "DEV",	"OP",
				   "IOS", "BYTES", "BLAMED%", "CULPRIT" };
	static char v[T_NR][CG_PATH_MAX];
	int w[T_NR], first = o->by_cgroup ? T_CGROUP : T_PID, end = o->blame ? T_NR : T_BLAMED;

	if (o->group_col)
		head[T_CGROUP] = o->group_col; /* CONTAINER, POD */

	for (int c = 0; c < T_NR; c++)
		w[c] = (int)strlen(head[c]);
	for (int i = 0; i < n; i++) {
		totals_cells(&rows[i], o, v);
		for (int c = 0; c < T_NR; c++)
			if ((int)strlen(v[c]) > w[c])
				w[c] = (int)strlen(v[c]);
	}
	for (int c = 0; c < T_NR; c++)
		snprintf(v[c], CG_PATH_MAX, "%s", head[c]);
	totals_line(f, v, w, first, end);
	for (int i = 0; i < n; i++) {
		totals_cells(&rows[i], o, v);
		totals_line(f, v, w, first, end);
	}
}
