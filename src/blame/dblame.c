// SPDX-License-Identifier: GPL-2.0
/*
 * dblame: --blame in the daemon, for /metrics and the records' `blame` lines
 * (dblame.h, docs/blame.md).
 *
 * A written request's block requests go to the engine tagged with the request's
 * place in a queue (struct dbl_pend, 32 bytes, tag = its sequence number + 1).
 * Its sums (struct dblame_rec, ~400 bytes: parts and culprits) are taken from a
 * pool at its first split and given back when its line is written: its block
 * requests split together, a horizon after they completed, so few sums are open
 * at once while the queue holds a horizon of requests (at 150k IOPS, ~160k). The
 * queue is in feed order; its front leaves once written, or once the engine's
 * time has passed the latest completion of its block requests + the horizon with
 * a split still missing (a block request too late for the history kept, or a bad
 * one): then it is counted unsplit, never written half. At DBL_PEND_MAX entries a
 * new request gets no line (counted: capped).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blame/blame.h"
#include "blame/blame_json.h"
#include "records/cgroup.h"
#include "records/output.h"
#include "records/record.h"
#include "lib/log.h"
#include "blame/dblame.h"

#define DBL_HORIZON_NS BLAME_DEF_HORIZON_NS
#define DBL_OTHER (-1)

enum { DBL_OWN, DBL_UNATTR, DBL_SELF, DBL_OTHERS, DBL_NR_PARTS };

static const char *const part_names[DBL_NR_PARTS] = { "own", "unattributed", "self", "others" };

struct dbl_vic {
	uint32_t dev;
	int victim; /* label index or DBL_OTHER */
	double part[DBL_NR_PARTS];
	int cul[DBL_TOP];
	double cul_ns[DBL_TOP];
	int nr_cul;
	double other_ns; /* culprits past the first DBL_TOP */
};

/* A written request waiting for its block requests' splits. */
struct dbl_pend {
	uint64_t id; /* the request's */
	uint64_t c_max; /* the latest completion of its block requests */
	uint32_t blocks, left; /* its block requests; those not split yet */
	int32_t acc; /* its sums in the pool; -1: none yet */
	uint8_t lost; /* one will never be split: no line */
	uint8_t done; /* written or counted */
};

struct dblame {
	struct blame *b;
	struct cg_cache *cg;
	int depth;
	char *labels[DBL_MAX_LABELS];
	int nr_labels;
	struct dbl_vic *v;
	int nr_v;
	size_t alloc_v;
	int oom; /* a split missed the metrics' sums */
	struct it_out *out; /* the records' JSON lines; NULL: none */
	enum blame_by by; /* BLAME_BY_CGROUP, or BLAME_BY_VM (host mode) */
	const struct dblame_host *host; /* host mode's hooks; NULL: none */
	struct recorder *rec; /* --record: the lines go to the recording too; NULL: not */
	void (*line_fn)(void *ctx, const struct blame_line *l); /* --sink: each line too */
	void *line_ctx;
	struct dbl_pend *rq; /* ring of alloc_rq (a power of 2) entries */
	size_t alloc_rq, head, n;
	uint64_t head_seq; /* sequence number of rq[head] */
	struct dblame_rec *acc; /* the pool of open sums */
	int32_t *acc_free; /* its free entries (a stack of nr_free) */
	size_t alloc_acc, nr_free;
	uint64_t written, unsplit, capped;
};

/* A VM's name (host mode: owner.pid is its QEMU's); NULL: not a VM. */
static const char *vm_name(const struct dblame *d, const struct blame_owner *o)
{
	return d->by == BLAME_BY_VM && o->pid && d->host ? d->host->vm_name(d->host->ctx, o->pid) :
							   NULL;
}

const char *dblame_owner_name(const struct dblame *d, const struct blame_owner *o)
{
	const char *vm = vm_name(d, o);

	return vm ? vm : cg_path(d->cg, o->cgroup_id);
}

/*
 * The label of an owner: a VM's name, or its cgroup's path cut to depth (the
 * whole path without a depth), interned; DBL_OTHER past the cap.
 */
static int label_of(struct dblame *d, const struct blame_owner *o)
{
	const char *path = vm_name(d, o);
	char cut[4096];

	if (path)
		snprintf(cut, sizeof(cut), "%s", path);
	else if (!(path = cg_path(d->cg, o->cgroup_id)))
		return DBL_OTHER;
	else if (d->depth >= 0)
		cg_truncate(path, d->depth, cut, sizeof(cut));
	else
		snprintf(cut, sizeof(cut), "%s", path);
	for (int i = 0; i < d->nr_labels; i++)
		if (!strcmp(d->labels[i], cut))
			return i;
	if (d->nr_labels == DBL_MAX_LABELS)
		return DBL_OTHER;
	d->labels[d->nr_labels] = strdup(cut);
	return d->labels[d->nr_labels] ? d->nr_labels++ : DBL_OTHER;
}

static struct dbl_vic *vic_of(struct dblame *d, uint32_t dev, int victim)
{
	struct dbl_vic *n;

	for (int i = 0; i < d->nr_v; i++)
		if (d->v[i].dev == dev && d->v[i].victim == victim)
			return &d->v[i];
	if (blame_grow((void **)&d->v, &d->alloc_v, (size_t)d->nr_v + 1, sizeof(*d->v)))
		return NULL;
	n = &d->v[d->nr_v++];
	memset(n, 0, sizeof(*n));
	n->dev = dev;
	n->victim = victim;
	return n;
}

static void add_culprit(struct dbl_vic *v, int label, double ns)
{
	for (int i = 0; i < v->nr_cul; i++)
		if (v->cul[i] == label) {
			v->cul_ns[i] += ns;
			return;
		}
	if (label == DBL_OTHER || v->nr_cul == DBL_TOP) {
		v->other_ns += ns;
		return;
	}
	v->cul[v->nr_cul] = label;
	v->cul_ns[v->nr_cul++] = ns;
}

/* The entry of a tag; NULL: none (no line wanted, or left the queue). */
static struct dbl_pend *rec_of(struct dblame *d, uint64_t tag)
{
	uint64_t i = tag - 1 - d->head_seq;

	if (!tag || tag - 1 < d->head_seq || i >= d->n)
		return NULL;
	return &d->rq[(d->head + i) & (d->alloc_rq - 1)];
}

static int cmp_ns_desc(double x, double y)
{
	return x > y ? -1 : x < y;
}

/* a few entries: insertion sort, largest first */
static void rec_sort(struct dblame_rec *e)
{
	for (int i = 1; i < e->nr; i++)
		for (int k = i; k > 0 && cmp_ns_desc(e->ns[k], e->ns[k - 1]) < 0; k--) {
			struct blame_owner w = e->who[k];
			double ns = e->ns[k];

			e->who[k] = e->who[k - 1];
			e->ns[k] = e->ns[k - 1];
			e->who[k - 1] = w;
			e->ns[k - 1] = ns;
		}
}

/* A line's culprit names, kept past the next cg_path() call. */
struct rec_names {
	const char *name[BLAME_LINE_TOP];
	char keep[BLAME_LINE_TOP][CG_PATH_MAX];
};

/* e as the integers its line carries, and its culprits' names (VM or cgroup path). */
static void rec_line(const struct dblame *d, const struct dblame_rec *e, struct blame_line *l,
		     struct rec_names *nm)
{
	double rest = e->p.others;

	_Static_assert(DBL_REC_TOP == BLAME_LINE_TOP, "a record's culprits");
	memset(l, 0, sizeof(*l));
	l->id = e->id;
	l->by = d->by;
	l->requests = (uint64_t)e->blocks;
	l->wait_ns = blame_json_ns(e->p.wait);
	l->own_ns = blame_json_ns(e->p.own);
	l->unattr_ns = blame_json_ns(e->p.unattr);
	l->self_ns = blame_json_ns(e->p.self);
	l->others_ns = blame_json_ns(e->p.others);
	for (int i = 0; i < e->nr && i < DBL_REC_TOP; i++) {
		const char *n = dblame_owner_name(d, &e->who[i]);

		rest -= e->ns[i];
		l->cgroup_id[i] = e->who[i].cgroup_id;
		l->pid[i] = d->by == BLAME_BY_VM ? e->who[i].pid : 0;
		l->ns[i] = blame_json_ns(e->ns[i]);
		nm->name[i] = NULL;
		if (n) {
			snprintf(nm->keep[i], sizeof(nm->keep[i]), "%s", n);
			nm->name[i] = nm->keep[i];
			l->named |= 1u << i;
		}
		l->nr++;
	}
	l->other_ns = rest >= 0.5 ? blame_json_ns(rest) : 0;
}

void dblame_json_rec(const struct dblame *d, struct jw *j, const struct dblame_rec *e)
{
	struct blame_line l;
	struct rec_names nm;

	rec_line(d, e, &l, &nm);
	blame_json_line_fields(j, &l, nm.name);
}

/*
 * e's line: its parts and its first DBL_REC_TOP culprits, the rest as other; to
 * -j, and to the recording under BLAME_BY_CGROUP (a recording keeps cgroup
 * owners, so the line read back is the bytes written here).
 */
static void rec_write(struct dblame *d, const struct dblame_rec *e)
{
	struct blame_line l;
	struct rec_names nm;
	struct jw *j;
	size_t mark;

	rec_line(d, e, &l, &nm);
	if (d->rec && d->by == BLAME_BY_CGROUP)
		rec_blame(d->rec, &l);
	if (d->line_fn)
		d->line_fn(d->line_ctx, &l);
	j = d->out ? out_json_begin(d->out, &mark) : NULL;
	if (!j)
		return;
	blame_json_line(j, &l, nm.name);
	out_json_end(d->out, mark);
}

/* p's sums, from the pool at its first split; NULL: no memory (p is then lost). */
static struct dblame_rec *acc_of(struct dblame *d, struct dbl_pend *p)
{
	struct dblame_rec *e;

	if (p->acc < 0) {
		if (!d->nr_free) {
			size_t a = d->alloc_acc ? 2 * d->alloc_acc : 64, old = d->alloc_acc;
			struct dblame_rec *n = realloc(d->acc, a * sizeof(*n));
			int32_t *f = n ? realloc(d->acc_free, a * sizeof(*f)) : NULL;

			if (n)
				d->acc = n;
			if (!f || a > INT32_MAX)
				return NULL;
			d->acc_free = f;
			d->alloc_acc = a;
			for (size_t i = a; i > old; i--)
				d->acc_free[d->nr_free++] = (int32_t)(i - 1);
		}
		p->acc = d->acc_free[--d->nr_free];
		e = &d->acc[p->acc];
		memset(e, 0, sizeof(*e));
	}
	return &d->acc[p->acc];
}

/* Every split of p is in (or one never will be): its line, or counted; its sums back. */
static void rec_done(struct dblame *d, struct dbl_pend *p)
{
	struct dblame_rec none = { 0 }, *e = p->acc >= 0 ? &d->acc[p->acc] : &none;

	p->done = 1;
	e->id = p->id;
	e->c_max = p->c_max;
	e->blocks = (int)p->blocks;
	e->left = (int)p->left;
	e->lost = p->lost || p->acc < 0;
	e->done = 1;
	if (!e->lost)
		rec_sort(e);
	if (d->host && d->host->on_rec)
		d->host->on_rec(d->host->ctx, e);
	if (p->acc >= 0)
		d->acc_free[d->nr_free++] = p->acc;
	p->acc = -1;
	if (e->lost) {
		d->unsplit++;
		return;
	}
	if (!d->out && !(d->rec && d->by == BLAME_BY_CGROUP) && !d->line_fn)
		return;
	rec_write(d, e);
	d->written++;
}

/* n culprits' shares added to e's by owner: the first DBL_REC_KEEP owners, the rest stay in others */
static void rec_add(const struct dblame *d, struct dblame_rec *e, const struct blame_share *c,
		    int n)
{
	int k;

	for (int i = 0; i < n; i++) {
		for (k = 0; k < e->nr; k++)
			if (blame_same(d->by, &e->who[k], &c[i].who))
				break;
		if (k == e->nr && e->nr == DBL_REC_KEEP)
			continue;
		if (k == e->nr) {
			e->who[e->nr] = c[i].who;
			e->ns[e->nr++] = 0;
		}
		e->ns[k] += c[i].ns;
	}
}

static void rec_sum(const struct dblame *d, struct dblame_rec *e, const struct blame_res *res)
{
	e->p.wait += (double)(res->r->c_ns - res->r->q_ns);
	e->p.own += res->own_ns;
	e->p.unattr += res->unattr_ns;
	e->p.self += res->self_ns;
	e->p.others += res->others_ns;
	rec_add(d, e, res->culprits, res->nr_culprits);
}

static void rec_split(struct dblame *d, struct dbl_pend *p, const struct blame_res *res)
{
	struct dblame_rec *e = acc_of(d, p);

	if (!e) {
		d->oom = 1;
		p->lost = 1;
	} else {
		rec_sum(d, e, res);
	}
	if (!--p->left)
		rec_done(d, p);
}

void dblame_rec_merge(const struct dblame *d, struct dblame_rec *dst, const struct dblame_rec *src)
{
	struct blame_share sh[DBL_REC_KEEP];

	dst->blocks += src->blocks;
	dst->lost |= src->lost;
	dst->p.wait += src->p.wait;
	dst->p.own += src->p.own;
	dst->p.unattr += src->p.unattr;
	dst->p.self += src->p.self;
	dst->p.others += src->p.others;
	for (int i = 0; i < src->nr; i++)
		sh[i] = (struct blame_share){ .who = src->who[i], .ns = src->ns[i] };
	rec_add(d, dst, sh, src->nr);
	rec_sort(dst);
}

/* Let the front go while written, or past its horizon with a split missing. */
static void rec_expire(struct dblame *d, uint64_t now)
{
	while (d->n) {
		struct dbl_pend *e = &d->rq[d->head];

		if (!e->done) {
			if (e->c_max + DBL_HORIZON_NS > now)
				break;
			e->lost = 1;
			rec_done(d, e);
		}
		d->head = (d->head + 1) & (d->alloc_rq - 1);
		d->head_seq++;
		d->n--;
	}
}

/*
 * A new entry at the queue's end for r; its tag, or 0 (the queue at DBL_PEND_MAX:
 * counted capped; no memory: counted unsplit).
 */
static uint64_t rec_push(struct dblame *d, const struct corr_req *r)
{
	struct dbl_pend *e;

	if (d->n == DBL_PEND_MAX) {
		d->capped++;
		return 0;
	}
	if (d->n == d->alloc_rq) {
		size_t a = d->alloc_rq ? 2 * d->alloc_rq : 64;
		struct dbl_pend *n = malloc(a * sizeof(*n));

		if (!n) {
			d->unsplit++;
			return 0;
		}
		for (size_t i = 0; i < d->n; i++)
			n[i] = d->rq[(d->head + i) & (d->alloc_rq - 1)];
		free(d->rq);
		d->rq = n;
		d->alloc_rq = a;
		d->head = 0;
	}
	e = &d->rq[(d->head + d->n) & (d->alloc_rq - 1)];
	memset(e, 0, sizeof(*e));
	e->id = r->id;
	e->blocks = e->left = (uint32_t)r->nr_blocks;
	e->acc = -1;
	/* an upper bio (dm, md) is no victim (blame_in_block): it is never split */
	for (int i = 0; i < r->nr_blocks; i++)
		e->left -= !!(r->blocks[i]->flags & IT_F_UPPER);
	return d->head_seq + d->n++ + 1;
}

static void on_split(const struct blame_res *res, void *ctx)
{
	struct dblame *d = ctx;
	struct dbl_vic *v = vic_of(d, res->r->dev, label_of(d, &res->r->owner));
	struct dbl_pend *e = rec_of(d, res->r->tag);

	if (e)
		rec_split(d, e, res);
	if (!v) {
		d->oom = 1;
		return;
	}
	v->part[DBL_OWN] += res->own_ns;
	v->part[DBL_UNATTR] += res->unattr_ns;
	v->part[DBL_SELF] += res->self_ns;
	v->part[DBL_OTHERS] += res->others_ns;
	for (int i = 0; i < res->nr_culprits; i++)
		add_culprit(v, label_of(d, &res->culprits[i].who), res->culprits[i].ns);
}

struct dblame *dblame_new(struct cg_cache *cg, int depth, struct it_out *out)
{
	struct dblame *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->cg = cg;
	d->depth = depth; /* < 0: whole paths (label_of) */
	d->out = out;
	d->by = BLAME_BY_CGROUP;
	d->b = blame_new(d->by, DBL_HORIZON_NS, 0, on_split, d);
	if (!d->b) {
		free(d);
		return NULL;
	}
	return d;
}

void dblame_set_recorder(struct dblame *d, struct recorder *rc)
{
	d->rec = rc;
}

void dblame_set_line_fn(struct dblame *d, void (*fn)(void *ctx, const struct blame_line *l),
			void *ctx)
{
	d->line_fn = fn;
	d->line_ctx = ctx;
}

int dblame_set_host(struct dblame *d, const struct dblame_host *host)
{
	struct blame *b;

	if (d->by == BLAME_BY_VM || !host) {
		/* host mode started again (a reload), or stopped */
		d->host = host;
		return 0;
	}
	if (blame_get_stats(d->b)->added)
		return -EBUSY;
	b = blame_new(BLAME_BY_VM, DBL_HORIZON_NS, 0, on_split, d);
	if (!b)
		return -ENOMEM;
	blame_free(d->b);
	d->b = b;
	d->by = BLAME_BY_VM;
	d->host = host;
	return 0;
}

/* Host mode: a request of no VM is owned by its cgroup (blame.h, BLAME_BY_VM). */
static void vm_owner(const struct dblame *d, struct blame_in *in)
{
	if (d->by == BLAME_BY_VM && !vm_name(d, &in->owner))
		in->owner.pid = 0;
}

void dblame_request(struct dblame *d, const struct corr_req *r)
{
	const struct blame_stats *st = blame_get_stats(d->b);
	int lines = d->out || d->rec || d->line_fn || (d->host && d->host->on_rec);
	uint64_t tag = lines && r->nr_blocks ? rec_push(d, r) : 0;
	struct blame_in in;
	struct dbl_pend *e;

	if (!r->nr_blocks && d->host && d->host->on_rec) {
		/* no block request: nothing to wait for (host mode's path says requests 0) */
		struct dblame_rec none = { .id = r->id, .done = 1 };

		d->host->on_rec(d->host->ctx, &none);
	}
	for (int i = 0; i < r->nr_blocks; i++) {
		uint64_t bad = st->bad;

		if (r->blocks[i]->flags & IT_F_UPPER)
			continue; /* never in service, its members are split on their devices */
		blame_in_block(&in, r->blocks[i], 1);
		vm_owner(d, &in);
		in.tag = tag;
		e = rec_of(d, tag);
		if (e && in.c_ns > e->c_max)
			e->c_max = in.c_ns;
		if (blame_add(d->b, &in) || st->bad != bad) {
			d->oom |= st->bad == bad;
			/* never split: the request's line will not be written */
			e = rec_of(d, tag);
			if (e) {
				e->lost = 1;
				if (!--e->left)
					rec_done(d, e);
			}
		}
	}
	/* a request of upper bios alone (its members not recorded) waits for no split */
	e = rec_of(d, tag);
	if (e && !e->left && !e->done)
		rec_done(d, e);
	rec_expire(d, blame_now(d->b));
}

void dblame_block(struct dblame *d, const struct it_block_rec *b)
{
	struct blame_in in;

	blame_in_block(&in, b, 1);
	vm_owner(d, &in);
	if (blame_add(d->b, &in))
		d->oom = 1;
	rec_expire(d, blame_now(d->b));
}

void dblame_tick(struct dblame *d, uint64_t now)
{
	blame_tick(d->b, now);
	rec_expire(d, blame_now(d->b));
}

void dblame_finish(struct dblame *d)
{
	struct jw *j;
	size_t mark;

	blame_flush(d->b);
	rec_expire(d, UINT64_MAX);
	if (d->unsplit && (d->out || d->rec || d->line_fn))
		it_warn("--blame: %llu written requests got no blame line: a block request of "
			"theirs was never split (blame_stats.records_unsplit, docs/blame.md)",
			(unsigned long long)d->unsplit);
	if (d->capped && (d->out || d->rec))
		it_warn("--blame: %llu written requests got no blame line: %d were waiting for "
			"their splits already (blame_stats.records_capped, docs/blame.md)",
			(unsigned long long)d->capped, DBL_PEND_MAX);
	if (!d->out)
		return;
	j = out_json_begin(d->out, &mark);
	if (!j)
		return;
	jw_obj_begin(j, NULL);
	jw_str(j, "type", "blame_stats");
	blame_json_stats(j, d->by, blame_get_stats(d->b), d->oom);
	jw_u64(j, "records", d->written);
	jw_u64(j, "records_unsplit", d->unsplit);
	jw_u64(j, "records_capped", d->capped);
	jw_obj_end(j);
	out_json_end(d->out, mark);
}

static const char *label_name(const struct dblame *d, int label)
{
	return label == DBL_OTHER ? "other" : d->labels[label];
}

static void sample_ns(FILE *f, const char *name, const struct metrics_label *l, int nr, double ns)
{
	char buf[48];

	metrics_sample(f, name, l, nr, metrics_fmt_seconds((uint64_t)(ns + 0.5), buf, sizeof(buf)));
}

void dblame_metrics(struct dblame *d, FILE *f, uint64_t now, metrics_dev_fn dev_name, void *ctx)
{
	const struct blame_stats *st = blame_get_stats(d->b);
	struct metrics_label l[4];

	dblame_tick(d, now);
	metrics_family(
		f, "iotracer_blame_seconds_total", "counter",
		"Block request wait of the victim cgroup held by the culprit cgroup's requests "
		"(host mode: VMs by name; --blame, docs/blame.md): the first 5 culprits per "
		"device and victim, the rest as other");
	for (int i = 0; i < d->nr_v; i++) {
		const struct dbl_vic *v = &d->v[i];

		l[0] = (struct metrics_label){ "device", dev_name(v->dev, ctx) };
		l[1] = (struct metrics_label){ "victim", label_name(d, v->victim) };
		l[2].name = "culprit";
		for (int k = 0; k < v->nr_cul; k++) {
			l[2].value = label_name(d, v->cul[k]);
			sample_ns(f, "iotracer_blame_seconds_total", l, 3, v->cul_ns[k]);
		}
		if (v->other_ns > 0 || v->nr_cul == DBL_TOP) {
			l[2].value = "other";
			sample_ns(f, "iotracer_blame_seconds_total", l, 3, v->other_ns);
		}
	}
	metrics_family(
		f, "iotracer_blame_wait_seconds_total", "counter",
		"Block request wait of the victim cgroup (host mode: VM) by part: own (its own "
		"service), unattributed, self (its own requests), others (--blame)");
	for (int i = 0; i < d->nr_v; i++) {
		l[0] = (struct metrics_label){ "device", dev_name(d->v[i].dev, ctx) };
		l[1] = (struct metrics_label){ "victim", label_name(d, d->v[i].victim) };
		l[2].name = "part";
		for (int p = 0; p < DBL_NR_PARTS; p++) {
			l[2].value = part_names[p];
			sample_ns(f, "iotracer_blame_wait_seconds_total", l, 3, d->v[i].part[p]);
		}
	}
	metrics_single(f, "iotracer_blame_late_total", "counter",
		       "Block requests that completed after a request they overlapped was split "
		       "(their share of its wait is missing; --blame)",
		       st->late);
	metrics_single(
		f, "iotracer_blame_unsplit_total", "counter",
		"Block requests whose wait began before the history kept: not split (--blame)",
		st->truncated);
}

void dblame_counts(const struct dblame *d, uint64_t *written, uint64_t *unsplit, uint64_t *capped)
{
	*written = d->written;
	*unsplit = d->unsplit;
	*capped = d->capped;
}

void dblame_free(struct dblame *d)
{
	if (!d)
		return;
	blame_free(d->b);
	for (int i = 0; i < d->nr_labels; i++)
		free(d->labels[i]);
	free(d->v);
	free(d->rq);
	free(d->acc);
	free(d->acc_free);
	free(d);
}
