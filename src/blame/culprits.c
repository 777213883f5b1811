// SPDX-License-Identifier: GPL-2.0
/*
 * culprits: `iotracer report --blame`: the victim x culprit matrix. See
 * culprits.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blame/blame.h"
#include "blame/blame_json.h"
#include "blame/culprits.h"
#include "lib/jsonw.h"
#include "lib/parse.h"
#include "records/corr.h"

/* Offline every record is at hand: a long horizon only bounds the reordering of a file. */
#define RB_HORIZON_NS (10ULL * 1000000000ULL)
#define RB_CAP (1u << 18)
/* Culprits named per victim; the rest are summed as "other". */
#define RB_TOP 8

struct rb_cul {
	struct blame_owner who;
	double ns;
};

struct rb_victim {
	uint32_t dev;
	struct blame_owner who;
	uint64_t reqs;
	double wait, own, unattr, self, others;
	struct rb_cul *cul;
	int nr_cul;
	size_t alloc;
	int other; /* stored lines: some of others is in their "other" elements */
};

struct rp_blame {
	enum blame_by by;
	struct blame *b;
	struct rb_victim *v;
	int nr_v, last;
	size_t alloc_v;
	int oom;
	int stored; /* the recording's stored lines, not a split of its own */
	uint64_t lines, blocks, missing; /* stored: lines used, their block requests, missing */
};

static struct rb_victim *victim_of(struct rp_blame *rb, uint32_t dev, const struct blame_owner *o)
{
	struct rb_victim *n;

	if (rb->last < rb->nr_v && rb->v[rb->last].dev == dev &&
	    blame_same(rb->by, &rb->v[rb->last].who, o))
		return &rb->v[rb->last];
	for (int i = 0; i < rb->nr_v; i++)
		if (rb->v[i].dev == dev && blame_same(rb->by, &rb->v[i].who, o)) {
			rb->last = i;
			return &rb->v[i];
		}
	if (blame_grow((void **)&rb->v, &rb->alloc_v, (size_t)rb->nr_v + 1, sizeof(*rb->v)))
		return NULL;
	n = &rb->v[rb->nr_v];
	memset(n, 0, sizeof(*n));
	n->dev = dev;
	n->who = *o;
	rb->last = rb->nr_v++;
	return n;
}

static int add_culprit(struct rp_blame *rb, struct rb_victim *v, const struct blame_share *s)
{
	for (int i = 0; i < v->nr_cul; i++)
		if (blame_same(rb->by, &v->cul[i].who, &s->who)) {
			v->cul[i].ns += s->ns;
			return 0;
		}
	if (blame_grow((void **)&v->cul, &v->alloc, (size_t)v->nr_cul + 1, sizeof(*v->cul)))
		return -ENOMEM;
	v->cul[v->nr_cul].who = s->who;
	v->cul[v->nr_cul++].ns = s->ns;
	return 0;
}

static void on_split(const struct blame_res *res, void *ctx)
{
	struct rp_blame *rb = ctx;
	struct rb_victim *v = victim_of(rb, res->r->dev, &res->r->owner);

	if (!v) {
		rb->oom = 1;
		return;
	}
	v->reqs++;
	v->wait += (double)(res->r->c_ns - res->r->q_ns);
	v->own += res->own_ns;
	v->unattr += res->unattr_ns;
	v->self += res->self_ns;
	v->others += res->others_ns;
	for (int i = 0; i < res->nr_culprits; i++)
		if (add_culprit(rb, v, &res->culprits[i]))
			rb->oom = 1;
}

void rb_add_sums(struct rp_blame *rb, uint32_t dev, uint64_t cgroup_id, const struct blame_line *l,
		 uint64_t lines)
{
	struct blame_owner o = { .cgroup_id = cgroup_id };
	struct blame_share s = { .who = { 0 } };
	struct rb_victim *v = victim_of(rb, dev, &o);

	if (!v) {
		rb->oom = 1;
		return;
	}
	rb->lines += lines;
	rb->blocks += l->requests;
	v->reqs += l->requests;
	v->wait += (double)l->wait_ns;
	v->own += (double)l->own_ns;
	v->unattr += (double)l->unattr_ns;
	v->self += (double)l->self_ns;
	v->others += (double)l->others_ns;
	for (int i = 0; i < l->nr && i < BLAME_LINE_TOP; i++) {
		s.who.cgroup_id = l->cgroup_id[i];
		s.ns = (double)l->ns[i];
		if (add_culprit(rb, v, &s))
			rb->oom = 1;
	}
	v->other |= l->other_ns > 0;
}

void rb_add_line(struct rp_blame *rb, uint32_t dev, uint64_t cgroup_id, const struct blame_line *l)
{
	rb_add_sums(rb, dev, cgroup_id, l, 1);
}

void rb_set_missing(struct rp_blame *rb, uint64_t n)
{
	rb->missing = n;
}

struct rp_blame *rb_new(int by, int stored)
{
	struct rp_blame *rb = calloc(1, sizeof(*rb));

	if (!rb)
		return NULL;
	rb->by = (enum blame_by)by;
	rb->stored = stored;
	rb->b = blame_new(rb->by, RB_HORIZON_NS, RB_CAP, on_split, rb);
	if (!rb->b) {
		free(rb);
		return NULL;
	}
	return rb;
}

void rb_add(struct rp_blame *rb, const struct corr_req *r, int (*victim)(void *ctx, uint32_t dev),
	    void *ctx)
{
	struct blame_in in;

	for (int i = 0; !rb->stored && i < r->nr_blocks; i++) {
		blame_in_block(&in, r->blocks[i], victim && victim(ctx, r->blocks[i]->dev));
		if (blame_add(rb->b, &in))
			rb->oom = 1;
	}
}

static int cmp_cul(const void *a, const void *b)
{
	double x = ((const struct rb_cul *)a)->ns, y = ((const struct rb_cul *)b)->ns;

	return x > y ? -1 : x < y;
}

/* Devices in order, then the victims that waited longest first. */
static int cmp_victim(const void *a, const void *b)
{
	const struct rb_victim *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->wait > y->wait ? -1 : x->wait < y->wait;
}

static void finish(struct rp_blame *rb)
{
	blame_flush(rb->b);
	for (int i = 0; i < rb->nr_v; i++)
		if (rb->v[i].nr_cul > 1)
			qsort(rb->v[i].cul, (size_t)rb->v[i].nr_cul, sizeof(*rb->v[i].cul),
			      cmp_cul);
	if (rb->nr_v > 1)
		qsort(rb->v, (size_t)rb->nr_v, sizeof(*rb->v), cmp_victim);
}

/* The owner's name under rb's key. */
static const char *who_name(const struct rp_blame *rb, const struct blame_owner *o,
			    const struct rp_names *nm, char *buf, size_t n)
{
	const char *cg;

	if (blame_owner_none(o)) {
		snprintf(buf, n, "%s", BLAME_NO_TASK);
		return buf;
	}
	switch (rb->by) {
	case BLAME_BY_PID:
		snprintf(buf, n, "%u (%.*s)", o->pid, IT_COMM_LEN, o->comm);
		break;
	case BLAME_BY_COMM:
		snprintf(buf, n, "%.*s", IT_COMM_LEN, o->comm);
		break;
	default:
		cg = nm->cgroup(nm->ctx, o->cgroup_id);
		if (cg)
			snprintf(buf, n, "%s", cg);
		else
			snprintf(buf, n, "cgroup-id %llu", (unsigned long long)o->cgroup_id);
	}
	return buf;
}

/* A duration in s/ms/us for the table. */
static const char *dur(double ns, char *buf, size_t n)
{
	if (ns >= 1e9)
		snprintf(buf, n, "%.2fs", ns / 1e9);
	else if (ns >= 1e6)
		snprintf(buf, n, "%.1fms", ns / 1e6);
	else
		snprintf(buf, n, "%.1fus", ns / 1e3);
	return buf;
}

static double pct(double a, double b)
{
	return b > 0 ? 100.0 * a / b : 0;
}

static void print_text(struct rp_blame *rb, FILE *f, const struct rp_names *nm)
{
	const struct blame_stats *st = blame_get_stats(rb->b);
	char w[256], c[256], d1[32], d2[32], d3[32], d4[32], d5[32];

	fprintf(f,
		"\nblame by %s (docs/blame.md): each victim's block wait Q->C, split over the "
		"requests holding the device; source: %s\n",
		blame_by_name(rb->by), rb->stored ? "stored" : "re-split");
	if (rb->stored)
		fprintf(f,
			"blame: the recording's stored blame (the daemon's split, --record --blame): "
			"%llu requests' lines, %llu block requests; %llu matched requests had none "
			"(unsplit, or lost with the daemon's last second); culprits: each line's "
			"first %d\n",
			(unsigned long long)rb->lines, (unsigned long long)rb->blocks,
			(unsigned long long)rb->missing, BLAME_LINE_TOP);
	else
		fprintf(f,
			"blame: %llu block requests, %llu victims split, %llu late, %llu not split "
			"(history gone), %llu split early (cap)\n",
			(unsigned long long)st->added, (unsigned long long)st->resolved,
			(unsigned long long)st->late, (unsigned long long)st->truncated,
			(unsigned long long)st->forced);
	if (rb->oom)
		fputs("blame: out of memory: the matrix below is partial\n", f);
	for (int i = 0; i < rb->nr_v; i++) {
		const struct rb_victim *v = &rb->v[i];
		double blamed = v->self + v->others, rest = v->others;

		fprintf(f,
			"%s %s: %llu requests, wait %s: own service %s, unattributed %s, "
			"self %s, others %s\n",
			nm->dev(nm->ctx, v->dev), who_name(rb, &v->who, nm, w, sizeof(w)),
			(unsigned long long)v->reqs, dur(v->wait, d1, sizeof(d1)),
			dur(v->own, d2, sizeof(d2)), dur(v->unattr, d3, sizeof(d3)),
			dur(v->self, d4, sizeof(d4)), dur(v->others, d5, sizeof(d5)));
		if (!v->nr_cul)
			continue;
		fprintf(f, "    %-40s %10s %7s %8s\n", "CULPRIT", "BLAMED", "%WAIT", "%BLAMED");
		for (int k = 0; k < v->nr_cul && k < RB_TOP; k++) {
			rest -= v->cul[k].ns;
			fprintf(f, "    %-40s %10s %6.1f%% %7.1f%%\n",
				who_name(rb, &v->cul[k].who, nm, c, sizeof(c)),
				dur(v->cul[k].ns, d1, sizeof(d1)), pct(v->cul[k].ns, v->wait),
				pct(v->cul[k].ns, blamed));
		}
		if (v->nr_cul > RB_TOP || v->other)
			fprintf(f, "    %-40s %10s %6.1f%% %7.1f%%\n", "(other)",
				dur(rest, d1, sizeof(d1)), pct(rest, v->wait), pct(rest, blamed));
	}
}

static void json_who(const struct rp_blame *rb, struct jw *j, const char *key,
		     const struct blame_owner *o, const struct rp_names *nm)
{
	blame_json_owner(j, key, rb->by, o, nm->cgroup(nm->ctx, o->cgroup_id));
}

/* One "blame" JSON line per (device, victim); 0 or -errno. */
static int print_json(struct rp_blame *rb, FILE *f, const struct rp_names *nm)
{
	const struct blame_stats *st = blame_get_stats(rb->b);
	struct jw j;
	char devno[24];
	int err = 0;

	jw_init(&j);
	for (int i = 0; i < rb->nr_v && !err; i++) {
		const struct rb_victim *v = &rb->v[i];
		struct blame_parts parts = { v->wait, v->own, v->unattr, v->self, v->others };
		double rest = v->others;

		jw_reset(&j);
		jw_obj_begin(&j, NULL);
		jw_str(&j, "type", "blame");
		jw_str(&j, "by", blame_by_name(rb->by));
		jw_str(&j, "dev", nm->dev(nm->ctx, v->dev));
		parse_fmt_devno(v->dev, devno, sizeof(devno));
		jw_str(&j, "devno", devno);
		json_who(rb, &j, "victim", &v->who, nm);
		jw_u64(&j, "requests", v->reqs);
		blame_json_parts(&j, &parts);
		jw_arr_begin(&j, "culprits");
		for (int k = 0; k < v->nr_cul && k < RB_TOP; k++) {
			rest -= v->cul[k].ns;
			blame_json_culprit(&j, rb->by, &v->cul[k].who,
					   nm->cgroup(nm->ctx, v->cul[k].who.cgroup_id),
					   v->cul[k].ns);
		}
		if (v->nr_cul > RB_TOP || v->other)
			blame_json_culprit(&j, rb->by, NULL, NULL, rest);
		jw_arr_end(&j);
		jw_obj_end(&j);
		if (jw_error(&j) || fprintf(f, "%s\n", jw_data(&j)) < 0)
			err = -EIO;
	}
	jw_reset(&j);
	jw_obj_begin(&j, NULL);
	jw_str(&j, "type", "blame_stats");
	if (rb->stored) {
		jw_str(&j, "by", blame_by_name(rb->by));
		jw_u64(&j, "requests", rb->blocks);
		jw_bool(&j, "partial", rb->oom);
		jw_u64(&j, "records", rb->lines);
		jw_u64(&j, "records_missing", rb->missing);
	} else {
		blame_json_stats(&j, rb->by, st, rb->oom);
	}
	jw_str(&j, "source", rb->stored ? "stored" : "re-split");
	jw_obj_end(&j);
	if (!err && (jw_error(&j) || fprintf(f, "%s\n", jw_data(&j)) < 0))
		err = -EIO;
	jw_free(&j);
	return err;
}

int rb_print(struct rp_blame *rb, FILE *text, FILE *json, const struct rp_names *nm)
{
	finish(rb);
	print_text(rb, text, nm);
	return json ? print_json(rb, json, nm) : 0;
}

void rb_free(struct rp_blame *rb)
{
	if (!rb)
		return;
	for (int i = 0; i < rb->nr_v; i++)
		free(rb->v[i].cul);
	free(rb->v);
	blame_free(rb->b);
	free(rb);
}
