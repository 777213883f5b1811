// SPDX-License-Identifier: GPL-2.0
/* hset: a growable set of log2 histograms by key. See hset.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/hist.h"
#include "core/hset.h"

/* Room for one more entry (no 13 MB up front: a few keys in practice). */
static int hset_room(struct hset *s)
{
	struct out_khist *v;
	int cap;

	if (s->n < s->cap)
		return 0;
	if (s->n >= HSET_MAX)
		return -E2BIG;
	cap = s->cap ? s->cap * 2 : 16;
	v = realloc(s->v, (size_t)cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->v = v;
	s->cap = cap;
	return 0;
}

struct it_hist_val *hset_get(struct hset *s, const struct it_hist_key *k)
{
	for (int i = s->n - 1; i >= 0; i--)
		if (!memcmp(&s->v[i].key, k, sizeof(*k)))
			return &s->v[i].val;
	if (hset_room(s))
		return NULL;
	memset(&s->v[s->n], 0, sizeof(s->v[0]));
	s->v[s->n].key = *k;
	return &s->v[s->n++].val;
}

int hset_add(struct hset *dst, const struct it_hist_key *k, const struct it_hist_val *val)
{
	struct it_hist_val *d = hset_get(dst, k);

	if (!d)
		return dst->n >= HSET_MAX ? -E2BIG : -ENOMEM;
	for (int st = 0; st < IT_ST_MAX; st++)
		log2h_add(&d->st[st], &val->st[st]);
	return 0;
}

void hset_merge(struct hset *dst, const struct hset *src)
{
	for (int i = 0; i < src->n; i++)
		hset_add(dst, &src->v[i].key, &src->v[i].val);
}

void hset_clear(struct hset *s)
{
	s->n = 0;
}

void hset_free(struct hset *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static struct it_hist_val *hset_at(struct hset *s, uint32_t dev, int layer, int op, int kind)
{
	struct it_hist_key k = { .dev = dev, .layer = layer, .op = op, .kind = kind };

	return hset_get(s, &k);
}

static void hset_count(struct it_hist_val *v, int stage, uint64_t ns)
{
	struct it_hist *h = &v->st[stage];

	h->slots[ns > 1 ? 63 - __builtin_clzll(ns) : 0]++;
	h->count++;
	h->sum_ns += ns;
}

void hset_record(struct hset *s, const void *data, size_t size)
{
	const struct it_hdr *hdr = data;
	struct it_hist_val *v;

	if (size < sizeof(*hdr))
		return;
	if (hdr->type == IT_REC_SYSCALL && size >= sizeof(struct it_syscall_rec)) {
		const struct it_syscall_rec *r = data;

		v = hset_at(s, r->dev, IT_L_SYSCALL, r->op, IT_HK_PLAIN);
		if (!v)
			return;
		hset_count(v, IT_ST_TOTAL, r->exit_ns - r->enter_ns);
		if (r->flags & IT_F_SCHED_SW)
			hset_count(v, IT_ST_OFFCPU, r->offcpu_ns);
		if (r->flags & IT_F_SCHED_CNT)
			hset_count(v, IT_ST_RUNQ, r->runq_ns);
	} else if (hdr->type == IT_REC_URING && size >= sizeof(struct it_uring_rec)) {
		const struct it_uring_rec *r = data;

		v = hset_at(s, r->dev, IT_L_SYSCALL, r->op, IT_HK_URING);
		if (v)
			hset_count(v, IT_ST_TOTAL, r->complete_ns - r->submit_ns);
	} else if (hdr->type == IT_REC_BLOCK && size >= sizeof(struct it_block_rec)) {
		const struct it_block_rec *r = data;

		v = hset_at(s, r->dev, IT_L_BLOCK, r->op, IT_HK_PLAIN);
		if (!v)
			return;
		hset_count(v, IT_ST_Q2C, r->c_ns - r->q_ns);
		if (r->d_ns) {
			hset_count(v, IT_ST_D2C, r->c_ns - r->d_ns);
			hset_count(v, IT_ST_Q2D, r->d_ns - r->q_ns);
		}
	}
}
