// SPDX-License-Identifier: GPL-2.0
/*
 * dblame: --blame in the daemon, for /metrics (dblame.h, docs/blame.md).
 */
#include <stdlib.h>
#include <string.h>

#include "records/blame.h"
#include "records/cgroup.h"
#include "service/dblame.h"
#include "records/stages.h"

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

struct dblame {
	struct blame *b;
	struct cg_cache *cg;
	int depth;
	char *labels[DBL_MAX_LABELS];
	int nr_labels;
	struct dbl_vic *v;
	int nr_v;
	size_t alloc_v;
};

/* The label of a cgroup id: its path cut to depth, interned; DBL_OTHER past the cap. */
static int label_of(struct dblame *d, uint64_t id)
{
	const char *path = cg_path(d->cg, id);
	char cut[4096];

	if (!path)
		return DBL_OTHER;
	cg_truncate(path, d->depth, cut, sizeof(cut));
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

static void on_split(const struct blame_res *res, void *ctx)
{
	struct dblame *d = ctx;
	struct dbl_vic *v = vic_of(d, res->r->dev, label_of(d, res->r->owner.cgroup_id));

	if (!v)
		return;
	v->part[DBL_OWN] += res->own_ns;
	v->part[DBL_UNATTR] += res->unattr_ns;
	v->part[DBL_SELF] += res->self_ns;
	v->part[DBL_OTHERS] += res->others_ns;
	for (int i = 0; i < res->nr_culprits; i++)
		add_culprit(v, label_of(d, res->culprits[i].who.cgroup_id), res->culprits[i].ns);
}

struct dblame *dblame_new(struct cg_cache *cg, int depth)
{
	struct dblame *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->cg = cg;
	d->depth = depth;
	d->b = blame_new(BLAME_BY_CGROUP, DBL_HORIZON_NS, 0, on_split, d);
	if (!d->b) {
		free(d);
		return NULL;
	}
	return d;
}

void dblame_in(struct blame_in *in, const struct it_block_rec *b, int victim)
{
	const struct it_task *t = stages_block_owner(b);

	memset(in, 0, sizeof(*in));
	in->dev = b->dev;
	in->victim = victim;
	in->q_ns = b->q_ns ? b->q_ns : b->i_ns ? b->i_ns : b->d_ns;
	in->d_ns = b->d_ns;
	in->c_ns = b->c_ns;
	in->owner.cgroup_id = t->cgroup_id;
	in->owner.pid = t->pid;
	memcpy(in->owner.comm, t->comm, sizeof(in->owner.comm));
}

void dblame_request(struct dblame *d, const struct corr_req *r)
{
	struct blame_in in;

	for (int i = 0; i < r->nr_blocks; i++) {
		dblame_in(&in, r->blocks[i], 1);
		blame_add(d->b, &in);
	}
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

	blame_tick(d->b, now);
	metrics_family(f, "iotracer_blame_seconds_total", "counter",
		       "Block request wait of the victim cgroup held by the culprit cgroup's requests "
		       "(--blame, docs/blame.md): the first 5 culprits per device and victim, "
		       "the rest as other");
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
	metrics_family(f, "iotracer_blame_wait_seconds_total", "counter",
		       "Block request wait of the victim cgroup by part: own (its own service), "
		       "unattributed, self (its own cgroup's requests), others (--blame)");
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
	metrics_single(f, "iotracer_blame_unsplit_total", "counter",
		       "Block requests whose wait began before the history kept: not split (--blame)",
		       st->truncated);
}

void dblame_free(struct dblame *d)
{
	if (!d)
		return;
	blame_free(d->b);
	for (int i = 0; i < d->nr_labels; i++)
		free(d->labels[i]);
	free(d->v);
	free(d);
}
