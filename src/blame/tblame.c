// SPDX-License-Identifier: GPL-2.0
/*
 * tblame: the blame sums behind `iotracer top --blame`. See tblame.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blame/tblame.h"

/* A culprit process (in one cgroup) of one victim. */
struct tb_cul {
	struct blame_owner who;
	double ns;
};

/* A victim: a process in a cgroup, on a device, one op; its self and culprits. */
struct tb_vic {
	struct blame_owner who;
	uint64_t file; /* the caller's id of its file (0: none) */
	uint32_t dev;
	uint8_t op;
	double self_ns; /* held by its own process's requests */
	double other_ns; /* culprits past TB_MAX_CUL, unnamed */
	struct tb_cul *cul;
	int nr_cul;
	size_t alloc;
};

struct tb_mat {
	struct tb_vic *v;
	int nr_v, last;
	size_t alloc_v;
};

/* A culprit group's sum while a row is worked out. */
struct tb_sum {
	uint64_t key;
	struct blame_owner who;
	double ns;
};

struct tblame {
	struct blame *b;
	uint64_t *files; /* the file of each tag (a request's op and file): tags index it */
	size_t nr_files, alloc_files;
	struct tb_mat cur, total;
	struct tb_sum *sum; /* tblame_row's scratch */
	size_t alloc_sum;
	uint64_t lost;
};

static int same_task(const struct blame_owner *a, const struct blame_owner *o)
{
	return a->pid == o->pid && a->cgroup_id == o->cgroup_id;
}

/* A block request's tag: its op, and in the bits above its file's place in t->files. */
static uint64_t tag_of(struct tblame *t, uint8_t op, uint64_t file)
{
	size_t i = t->nr_files;

	if (!file)
		return op;
	if (i && t->files[i - 1] == file) /* runs of one file */
		return (uint64_t)i << 8 | op;
	for (i = 0; i < t->nr_files; i++)
		if (t->files[i] == file)
			return (uint64_t)(i + 1) << 8 | op;
	if (blame_grow((void **)&t->files, &t->alloc_files, t->nr_files + 1, sizeof(*t->files)))
		return op; /* counted as no file */
	t->files[t->nr_files++] = file;
	return (uint64_t)t->nr_files << 8 | op;
}

static uint64_t file_of_tag(const struct tblame *t, uint64_t tag)
{
	size_t i = (size_t)(tag >> 8);

	return i && i <= t->nr_files ? t->files[i - 1] : 0;
}

static struct tb_vic *vic_of(const struct tblame *t, struct tb_mat *m, const struct blame_in *r)
{
	uint8_t op = (uint8_t)r->tag;
	uint64_t file = file_of_tag(t, r->tag);
	struct tb_vic *n;

	for (int k = 0; k < m->nr_v; k++) {
		int i = (m->last + k) % m->nr_v; /* the last one first: runs of one victim */

		n = &m->v[i];
		if (n->dev == r->dev && n->op == op && n->file == file &&
		    same_task(&n->who, &r->owner)) {
			m->last = i;
			return n;
		}
	}
	if (blame_grow((void **)&m->v, &m->alloc_v, (size_t)m->nr_v + 1, sizeof(*m->v)))
		return NULL;
	n = &m->v[m->nr_v];
	memset(n, 0, sizeof(*n));
	n->who = r->owner;
	n->file = file;
	n->dev = r->dev;
	n->op = op;
	m->last = m->nr_v++;
	return n;
}

static void add_cul(struct tb_vic *v, const struct blame_share *s)
{
	for (int i = 0; i < v->nr_cul; i++)
		if (same_task(&v->cul[i].who, &s->who)) {
			v->cul[i].ns += s->ns;
			return;
		}
	if (v->nr_cul == TB_MAX_CUL ||
	    blame_grow((void **)&v->cul, &v->alloc, (size_t)v->nr_cul + 1, sizeof(*v->cul))) {
		v->other_ns += s->ns;
		return;
	}
	v->cul[v->nr_cul].who = s->who;
	v->cul[v->nr_cul++].ns = s->ns;
}

static void mat_add(struct tblame *t, struct tb_mat *m, const struct blame_res *res)
{
	struct tb_vic *v = vic_of(t, m, res->r);

	if (!v) {
		t->lost++;
		return;
	}
	v->self_ns += res->self_ns;
	for (int i = 0; i < res->nr_culprits; i++)
		add_cul(v, &res->culprits[i]);
}

static void on_split(const struct blame_res *res, void *ctx)
{
	struct tblame *t = ctx;

	mat_add(t, &t->cur, res);
	mat_add(t, &t->total, res);
}

static void mat_free(struct tb_mat *m)
{
	for (int i = 0; i < m->nr_v; i++)
		free(m->v[i].cul);
	free(m->v);
	memset(m, 0, sizeof(*m));
}

struct tblame *tblame_new(void)
{
	struct tblame *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->b = blame_new(BLAME_BY_PID, BLAME_DEF_HORIZON_NS, 0, on_split, t);
	if (!t->b) {
		free(t);
		return NULL;
	}
	return t;
}

int tblame_block(struct tblame *t, const struct it_block_rec *b, uint64_t file)
{
	struct blame_in in;

	blame_in_block(&in, b, 1);
	in.tag = tag_of(t, b->op, file);
	return blame_add(t->b, &in);
}

void tblame_tick(struct tblame *t, uint64_t now)
{
	blame_tick(t->b, now);
}

void tblame_flush(struct tblame *t)
{
	blame_flush(t->b);
}

void tblame_next(struct tblame *t)
{
	mat_free(&t->cur);
}

/* Add ns to the culprit group key (first owner seen names it). 0 or -ENOMEM. */
static int sum_add(struct tblame *t, int *n, uint64_t key, const struct blame_owner *who, double ns)
{
	for (int i = 0; i < *n; i++)
		if (t->sum[i].key == key) {
			t->sum[i].ns += ns;
			return 0;
		}
	if (blame_grow((void **)&t->sum, &t->alloc_sum, (size_t)*n + 1, sizeof(*t->sum)))
		return -ENOMEM;
	t->sum[*n] = (struct tb_sum){ .key = key, .who = *who, .ns = ns };
	(*n)++;
	return 0;
}

int tblame_row(struct tblame *t, int total, uint64_t key, uint32_t dev, uint8_t op,
	       tblame_group_fn group, void *ctx, struct tblame_top *out)
{
	const struct tb_mat *m = total ? &t->total : &t->cur;
	int n = 0;

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < m->nr_v; i++) {
		const struct tb_vic *v = &m->v[i];

		if (v->dev != dev || v->op != op || group(&v->who, v->file, ctx) != key)
			continue;
		out->blamed_ns += v->self_ns + v->other_ns;
		for (int c = 0; c < v->nr_cul; c++) {
			uint64_t g = group(&v->cul[c].who, 0, ctx);

			out->blamed_ns += v->cul[c].ns;
			/* another process of the row's cgroup (container, pod): self */
			if (g != key && sum_add(t, &n, g, &v->cul[c].who, v->cul[c].ns))
				return -ENOMEM;
		}
	}
	for (int i = 0; i < n; i++)
		if (t->sum[i].ns > out->ns) {
			out->who = t->sum[i].who;
			out->ns = t->sum[i].ns;
			out->found = 1;
		}
	return 0;
}

const struct blame_stats *tblame_stats(const struct tblame *t)
{
	return blame_get_stats(t->b);
}

uint64_t tblame_lost(const struct tblame *t)
{
	return t->lost;
}

void tblame_free(struct tblame *t)
{
	if (!t)
		return;
	blame_free(t->b);
	free(t->files);
	mat_free(&t->cur);
	mat_free(&t->total);
	free(t->sum);
	free(t);
}
