// SPDX-License-Identifier: GPL-2.0
/*
 * blame: split each block request's wait over the requests that held its
 * device meanwhile (blame.h, docs/blame.md).
 *
 * Per device the requests are kept sorted by the start of their service (D;
 * a request never dispatched by its completion, it has no service), so the
 * requests overlapping a window [Q, C) are found by a binary search for the
 * last D before C and a walk back while D + the longest service seen > Q.
 * One request is split by a sweep over the ends of the overlapping services
 * clipped to its window: between two consecutive ends the number in service
 * n is constant; the prefix sum P of dt / n over the sweep gives each
 * overlapping request its share as P(its end) - P(its start).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blame/blame.h"
#include "records/stages.h"

struct bl_ent {
	struct blame_in in;
	uint64_t key; /* d_ns, or c_ns when never dispatched */
	int resolved; /* split already, or no victim */
};

struct bl_dev {
	uint32_t dev;
	struct bl_ent *e; /* sorted by key */
	size_t n, alloc;
	size_t cur; /* every entry before it is resolved */
	size_t old; /* every entry before it is past two horizons (<= cur) */
	uint64_t max_svc; /* longest C - D of the entries kept */
	uint64_t resolved_upto; /* largest C of a resolved victim */
	uint64_t floor; /* largest C of an entry let go: history starts there */
};

struct blame {
	enum blame_by by;
	uint64_t horizon;
	size_t cap;
	blame_fn fn;
	void *ctx;
	uint64_t now; /* the stream's time: the largest C fed */
	struct bl_dev *devs;
	int nr_devs;
	struct blame_stats st;
	/* scratch of one split */
	uint64_t *t;
	int *delta;
	double *p;
	size_t scratch;
	size_t *ord, *si, *ei; /* candidates by end; their start's and end's index in t */
	size_t idx_alloc;
	const struct bl_ent **cand;
	size_t cand_alloc;
	struct blame_share *sh;
	size_t sh_alloc;
};

int blame_same(enum blame_by by, const struct blame_owner *a, const struct blame_owner *o)
{
	switch (by) {
	case BLAME_BY_PID:
		return a->pid == o->pid;
	case BLAME_BY_COMM:
		return !strncmp(a->comm, o->comm, IT_COMM_LEN);
	case BLAME_BY_VM:
		return a->pid == o->pid && (a->pid || a->cgroup_id == o->cgroup_id);
	default:
		return a->cgroup_id == o->cgroup_id;
	}
}

static const char *const by_names[] = {
	[BLAME_BY_CGROUP] = "cgroup",
	[BLAME_BY_PID] = "pid",
	[BLAME_BY_COMM] = "comm",
	[BLAME_BY_VM] = "vm",
};

int blame_by_of(const char *name)
{
	/* not "vm": only host mode knows which pids are VMs */
	for (size_t i = 0; i < BLAME_BY_VM; i++)
		if (!strcmp(name, by_names[i]))
			return (int)i;
	return -1;
}

const char *blame_by_name(enum blame_by by)
{
	return by_names[by];
}

int blame_grow(void **p, size_t *alloc, size_t need, size_t size)
{
	size_t a = *alloc ? *alloc : 16;
	void *n;

	if (need <= *alloc)
		return 0;
	while (a < need)
		a *= 2;
	n = realloc(*p, a * size);
	if (!n)
		return -ENOMEM;
	*p = n;
	*alloc = a;
	return 0;
}

struct blame *blame_new(enum blame_by by, uint64_t horizon_ns, size_t cap, blame_fn fn, void *ctx)
{
	struct blame *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->by = by;
	b->horizon = horizon_ns;
	b->cap = cap ? cap : BLAME_DEF_CAP;
	b->fn = fn;
	b->ctx = ctx;
	return b;
}

static struct bl_dev *dev_of(struct blame *b, uint32_t dev)
{
	struct bl_dev *n;

	for (int i = 0; i < b->nr_devs; i++)
		if (b->devs[i].dev == dev)
			return &b->devs[i];
	n = realloc(b->devs, (size_t)(b->nr_devs + 1) * sizeof(*n));
	if (!n)
		return NULL;
	b->devs = n;
	n = &b->devs[b->nr_devs++];
	memset(n, 0, sizeof(*n));
	n->dev = dev;
	return n;
}

static int cmp_share(const void *a, const void *b)
{
	double x = ((const struct blame_share *)a)->ns, y = ((const struct blame_share *)b)->ns;

	return x > y ? -1 : x < y;
}

/* First entry whose key is >= k. */
static size_t key_bound(const struct bl_dev *d, uint64_t k)
{
	size_t lo = 0, hi = d->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->e[mid].key < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Add ns to o's culprit (or self); 0 or -ENOMEM. */
static int charge(struct blame *b, struct blame_res *res, int *nr, const struct blame_owner *o,
		  double ns)
{
	if (blame_same(b->by, &res->r->owner, o)) {
		res->self_ns += ns;
		return 0;
	}
	res->others_ns += ns;
	for (int i = 0; i < *nr; i++)
		if (blame_same(b->by, &b->sh[i].who, o)) {
			b->sh[i].ns += ns;
			return 0;
		}
	if (blame_grow((void **)&b->sh, &b->sh_alloc, (size_t)*nr + 1, sizeof(*b->sh)))
		return -ENOMEM;
	b->sh[*nr].who = *o;
	b->sh[(*nr)++].ns = ns;
	return 0;
}

/* The sweep's arrays for m times; 0 or -ENOMEM. */
static int scratch(struct blame *b, size_t m)
{
	size_t a = b->scratch ? b->scratch : 64;
	void *t, *dl, *p;

	if (m <= b->scratch)
		return 0;
	while (a < m)
		a *= 2;
	t = realloc(b->t, a * sizeof(*b->t));
	if (t)
		b->t = t;
	dl = realloc(b->delta, a * sizeof(*b->delta));
	if (dl)
		b->delta = dl;
	p = realloc(b->p, a * sizeof(*b->p));
	if (p)
		b->p = p;
	if (!t || !dl || !p)
		return -ENOMEM;
	b->scratch = a;
	return 0;
}

/* The candidates' index arrays for nc candidates; 0 or -ENOMEM. */
static int scratch_idx(struct blame *b, size_t nc)
{
	size_t a = b->idx_alloc;

	if (blame_grow((void **)&b->ord, &a, nc, sizeof(*b->ord)))
		return -ENOMEM;
	a = b->idx_alloc;
	if (blame_grow((void **)&b->si, &a, nc, sizeof(*b->si)))
		return -ENOMEM;
	a = b->idx_alloc;
	if (blame_grow((void **)&b->ei, &a, nc, sizeof(*b->ei)))
		return -ENOMEM;
	b->idx_alloc = a;
	return 0;
}

static uint64_t cand_start(const struct blame *b, size_t j, uint64_t q)
{
	return max_u64(b->cand[j]->in.d_ns, q);
}

static uint64_t cand_end(const struct blame *b, size_t j, uint64_t c)
{
	return min_u64(b->cand[j]->in.c_ns, c);
}

/*
 * The sweep's times: q, dd (when dispatched), c and the candidates' clipped
 * starts and ends, merged in order without repeats into b->t; each
 * candidate's start and end index in b->si / b->ei. The candidates come by
 * start already (by D); their ends are nearly in order too (a device mostly
 * completes in dispatch order), so an insertion sort puts them in order.
 * Returns the number of times.
 */
static size_t sweep_times(struct blame *b, size_t nc, uint64_t q, uint64_t dd, uint64_t c)
{
	uint64_t pts[3] = { q, dd ? dd : q, c };
	size_t m = 0, is = 0, ie = 0, ip = 0, j;

	for (j = 0; j < nc; j++) {
		size_t x = j, o = j;

		while (x > 0 && cand_end(b, b->ord[x - 1], c) > cand_end(b, o, c)) {
			b->ord[x] = b->ord[x - 1];
			x--;
		}
		b->ord[x] = o;
	}
	while (is < nc || ie < nc || ip < 3) {
		uint64_t ts = is < nc ? cand_start(b, is, q) : UINT64_MAX;
		uint64_t te = ie < nc ? cand_end(b, b->ord[ie], c) : UINT64_MAX;
		uint64_t tp = ip < 3 ? pts[ip] : UINT64_MAX;
		uint64_t t = min_u64(ts, min_u64(te, tp));

		if (!m || b->t[m - 1] != t)
			b->t[m++] = t;
		if (t == tp)
			ip++;
		else if (t == ts)
			b->si[is++] = m - 1;
		else
			b->ei[b->ord[ie++]] = m - 1;
	}
	return m;
}

/* Split the wait of d->e[i] and hand it over. */
static void split(struct blame *b, struct bl_dev *d, size_t i)
{
	const struct bl_ent *r = &d->e[i];
	uint64_t q = r->in.q_ns, dd = r->in.d_ns, c = r->in.c_ns;
	struct blame_res res = { .r = &r->in };
	size_t nc = 0, m, j;
	int nr = 0, cnt = 0;

	b->st.resolved++;
	if (q < d->floor) {
		b->st.truncated++;
		b->st.resolved--;
		return;
	}
	/* the services overlapping [q, c): keys below c, back while key + max_svc > q */
	for (j = key_bound(d, c); j-- > 0;) {
		const struct bl_ent *o = &d->e[j];

		if (o->key + d->max_svc <= q)
			break;
		if (o == r || !o->in.d_ns || o->in.c_ns <= q)
			continue;
		if (blame_grow((void **)&b->cand, &b->cand_alloc, nc + 1, sizeof(*b->cand)))
			goto oom;
		b->cand[nc++] = o;
	}
	/* by D, as the sweep takes them */
	for (j = 0; j < nc / 2; j++) {
		const struct bl_ent *x = b->cand[j];

		b->cand[j] = b->cand[nc - 1 - j];
		b->cand[nc - 1 - j] = x;
	}
	if (scratch(b, 2 * nc + 3) || scratch_idx(b, nc))
		goto oom;
	m = sweep_times(b, nc, q, dd, c);
	memset(b->delta, 0, m * sizeof(*b->delta));
	for (j = 0; j < nc; j++) {
		b->delta[b->si[j]]++;
		b->delta[b->ei[j]]--;
	}
	b->p[0] = 0;
	for (j = 0; j + 1 < m; j++) {
		int in_svc = dd && b->t[j] >= dd;
		double dt = (double)(b->t[j + 1] - b->t[j]), w;
		int n;

		cnt += b->delta[j];
		n = cnt + in_svc;
		w = n ? dt / n : 0;
		if (!n)
			res.unattr_ns += dt;
		if (in_svc)
			res.own_ns += w;
		b->p[j + 1] = b->p[j] + w;
	}
	for (j = 0; j < nc; j++) {
		double s = b->p[b->ei[j]] - b->p[b->si[j]];

		if (charge(b, &res, &nr, &b->cand[j]->in.owner, s))
			goto oom;
	}
	if (nr > 1)
		qsort(b->sh, (size_t)nr, sizeof(*b->sh), cmp_share);
	res.culprits = b->sh;
	res.nr_culprits = nr;
	d->resolved_upto = max_u64(d->resolved_upto, c);
	b->fn(&res, b->ctx);
	return;
oom:
	/* not split: counted as truncated (nothing guessed) */
	b->st.resolved--;
	b->st.truncated++;
}

static void resolve(struct blame *b, struct bl_dev *d, size_t i, int forced)
{
	struct bl_ent *e = &d->e[i];

	if (e->resolved)
		return;
	e->resolved = 1;
	if (forced)
		b->st.forced++;
	split(b, d, i);
}

static uint64_t svc_of(const struct bl_ent *e)
{
	return e->in.d_ns ? e->in.c_ns - e->in.d_ns : 0;
}

/*
 * Let go of the first k entries (resolved, or resolved now: each split still
 * sees the whole batch, so the floor moves after it). When the longest service
 * left with them, the walk's bound is the longest of those kept.
 */
static void drop_front(struct blame *b, struct bl_dev *d, size_t k)
{
	uint64_t floor = d->floor;
	int max_gone = 0;
	size_t i;

	for (i = 0; i < k; i++)
		resolve(b, d, i, 1);
	for (i = 0; i < k; i++) {
		floor = max_u64(floor, d->e[i].in.c_ns);
		max_gone |= svc_of(&d->e[i]) == d->max_svc;
	}
	d->floor = floor;
	memmove(d->e, d->e + k, (d->n - k) * sizeof(*d->e));
	d->n -= k;
	d->cur = d->cur > k ? d->cur - k : 0;
	d->old = d->old > k ? d->old - k : 0;
	if (!max_gone)
		return;
	d->max_svc = 0;
	for (i = 0; i < d->n; i++)
		d->max_svc = max_u64(d->max_svc, svc_of(&d->e[i]));
}

/* Resolve what the horizon has passed; let go of history older than two horizons. */
static void advance(struct blame *b, struct bl_dev *d)
{
	uint64_t h = b->horizon, now = b->now;
	size_t k;

	for (size_t i = d->cur; i < d->n && d->e[i].key + h <= now; i++)
		if (!d->e[i].resolved && d->e[i].in.c_ns + h <= now)
			resolve(b, d, i, 0);
	while (d->cur < d->n && d->e[d->cur].resolved)
		d->cur++;
	/* the stream's time only grows: the scan goes on from where it stopped */
	for (k = min_u64(d->old, d->cur); k < d->cur && d->e[k].in.c_ns + 2 * h < now; k++)
		;
	d->old = k;
	/* in batches of a quarter: each entry is moved O(1) times */
	if (k && k * 4 >= d->n)
		drop_front(b, d, k);
}

void blame_in_block(struct blame_in *in, const struct it_block_rec *b, int victim)
{
	const struct it_task *t = stages_block_owner(b);

	memset(in, 0, sizeof(*in));
	in->dev = b->dev;
	/* an upper bio (dm, md) waits on its members, which are split on their own devices */
	in->victim = victim && !(b->flags & IT_F_UPPER);
	in->q_ns = b->q_ns ? b->q_ns : b->i_ns ? b->i_ns : b->d_ns;
	in->d_ns = b->d_ns;
	in->c_ns = b->c_ns;
	in->owner.cgroup_id = t->cgroup_id;
	in->owner.pid = t->pid;
	memcpy(in->owner.comm, t->comm, sizeof(in->owner.comm));
}

int blame_add(struct blame *b, const struct blame_in *in)
{
	struct bl_dev *d;
	struct bl_ent e = { .in = *in };
	size_t pos;

	if (!in->c_ns || in->c_ns < in->q_ns ||
	    (in->d_ns && (in->d_ns < in->q_ns || in->d_ns > in->c_ns))) {
		b->st.bad++;
		return 0;
	}
	d = dev_of(b, in->dev);
	if (!d || blame_grow((void **)&d->e, &d->alloc, d->n + 1, sizeof(*d->e)))
		return -ENOMEM;
	b->st.added++;
	e.key = in->d_ns ? in->d_ns : in->c_ns;
	e.resolved = !in->victim;
	if (in->d_ns && in->d_ns < d->resolved_upto)
		b->st.late++;
	if (in->d_ns)
		d->max_svc = max_u64(d->max_svc, in->c_ns - in->d_ns);
	pos = key_bound(d, e.key + 1);
	memmove(d->e + pos + 1, d->e + pos, (d->n - pos) * sizeof(*d->e));
	d->e[pos] = e;
	d->n++;
	if (pos < d->cur)
		d->cur = pos;
	if (pos < d->old)
		d->old = pos;
	if (d->n > b->cap)
		drop_front(b, d, d->n - (b->cap - b->cap / 4));
	b->now = max_u64(b->now, in->c_ns);
	for (int i = 0; i < b->nr_devs; i++)
		advance(b, &b->devs[i]);
	return 0;
}

void blame_tick(struct blame *b, uint64_t now)
{
	b->now = max_u64(b->now, now);
	for (int i = 0; i < b->nr_devs; i++)
		advance(b, &b->devs[i]);
}

void blame_flush(struct blame *b)
{
	for (int i = 0; i < b->nr_devs; i++) {
		struct bl_dev *d = &b->devs[i];

		for (size_t j = d->cur; j < d->n; j++)
			resolve(b, d, j, 0);
		d->cur = d->n;
	}
}

const struct blame_stats *blame_get_stats(const struct blame *b)
{
	return &b->st;
}

uint64_t blame_now(const struct blame *b)
{
	return b->now;
}

void blame_free(struct blame *b)
{
	if (!b)
		return;
	for (int i = 0; i < b->nr_devs; i++)
		free(b->devs[i].e);
	free(b->devs);
	free(b->t);
	free(b->delta);
	free(b->p);
	free(b->cand);
	free(b->ord);
	free(b->si);
	free(b->ei);
	free(b->sh);
	free(b);
}
