// SPDX-License-Identifier: GPL-2.0
/*
 * uhist: log2 histograms from records (see uhist.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "records/hist.h"
#include "records/stages.h"
#include "records/uhist.h"

int uhists_room(struct uhists *h, int n)
{
	struct out_khist *k;
	int cap;

	if (n < h->cap)
		return 1;
	if (n >= UHIST_MAX)
		return 0;
	cap = h->cap ? h->cap * 2 : 16;
	k = realloc(h->v, (size_t)cap * sizeof(*k));
	if (!k)
		return 0;
	h->v = k;
	h->cap = cap;
	return 1;
}

struct it_hist_val *uhists_get(struct uhists *h, const struct it_hist_key *k)
{
	for (int i = h->nr - 1; i >= 0; i--)
		if (!memcmp(&h->v[i].key, k, sizeof(*k)))
			return &h->v[i].val;
	if (!uhists_room(h, h->nr))
		return NULL;
	memset(&h->v[h->nr], 0, sizeof(h->v[0]));
	h->v[h->nr].key = *k;
	return &h->v[h->nr++].val;
}

static struct it_hist_val *uhist_get(struct uhists *h, uint32_t dev, int layer, int op, int kind)
{
	struct it_hist_key k = { .dev = dev, .layer = layer, .op = op, .kind = kind };

	return uhists_get(h, &k);
}

static void uhist_add(struct it_hist_val *v, int stage, uint64_t ns)
{
	struct it_hist *h = &v->st[stage];

	h->slots[ns > 1 ? 63 - __builtin_clzll(ns) : 0]++;
	h->count++;
	h->sum_ns += ns;
}

/*
 * The stack layer's histograms, as bpf/stack.bpf.h keeps them: an upper bio's
 * (returns 1: no block layer histogram), and a partition's request's q2c on
 * its partition.
 */
static int uhists_stack(struct uhists *h, const struct it_block_rec *r)
{
	struct it_hist_val *v;

	if (r->up_dev && r->up_off == IT_STK_PART && !(r->flags & IT_F_UPPER)) {
		v = uhist_get(h, r->up_dev, IT_L_STACK, r->op, IT_HK_PLAIN);
		if (v)
			uhist_add(v, IT_ST_Q2C, r->c_ns - r->q_ns);
	}
	if (!(r->flags & IT_F_UPPER))
		return 0;
	v = uhist_get(h, r->dev, IT_L_STACK, r->op, IT_HK_PLAIN);
	if (!v)
		return 1;
	uhist_add(v, IT_ST_Q2C, r->c_ns - r->q_ns);
	if (r->stk_r_ns >= r->q_ns)
		uhist_add(v, IT_ST_Q2R, r->stk_r_ns - r->q_ns);
	if (r->stk_m_ns && r->stk_m_ns <= r->c_ns)
		uhist_add(v, IT_ST_M2C, r->c_ns - r->stk_m_ns);
	return 1;
}

void uhists_record(struct uhists *h, const void *data, size_t size)
{
	const struct it_hdr *hdr = data;
	struct it_hist_val *v;

	if (size < sizeof(*hdr) || size < it_rec_size(hdr->type))
		return;
	if (hdr->type == IT_REC_SYSCALL) {
		const struct it_syscall_rec *r = data;

		v = uhist_get(h, r->dev, IT_L_SYSCALL, r->op, IT_HK_PLAIN);
		if (!v)
			return;
		uhist_add(v, IT_ST_TOTAL, r->exit_ns - r->enter_ns);
		if (r->flags & IT_F_SCHED_SW)
			uhist_add(v, IT_ST_OFFCPU, r->offcpu_ns);
		if (r->flags & IT_F_SCHED_CNT)
			uhist_add(v, IT_ST_RUNQ, r->runq_ns);
	} else if (hdr->type == IT_REC_URING) {
		const struct it_uring_rec *r = data;

		v = uhist_get(h, r->dev, IT_L_SYSCALL, r->op, IT_HK_URING);
		if (v)
			uhist_add(v, IT_ST_TOTAL, r->complete_ns - r->submit_ns);
	} else if (hdr->type == IT_REC_BLOCK) {
		const struct it_block_rec *r = data;

		if (uhists_stack(h, r))
			return;
		v = uhist_get(h, r->dev, IT_L_BLOCK, r->op, r->up_dev ? IT_HK_MEMBER : IT_HK_PLAIN);
		if (!v)
			return;
		uhist_add(v, IT_ST_Q2C, r->c_ns - r->q_ns);
		if (r->d_ns) {
			uhist_add(v, IT_ST_D2C, r->c_ns - r->d_ns);
			uhist_add(v, IT_ST_Q2D, r->d_ns - r->q_ns);
		}
		if ((r->flags & IT_F_WB) && r->wb.dirty_first_ns && r->wb.dirty_first_ns <= r->q_ns)
			uhist_add(v, IT_ST_DIRTY_AGE, r->q_ns - r->wb.dirty_first_ns);
	}
}

void uhists_aio(struct uhists *h, const struct corr_req *r)
{
	struct it_hist_val *v;

	if (r->kind != CORR_AIO || !r->aio.reaped || r->aio.reap_ns < r->aio.submit_ns)
		return;
	v = uhist_get(h, r->aio.iocb.dev, IT_L_SYSCALL, (int)it_aio_op(r->aio.iocb.opcode),
		      IT_HK_AIO);
	if (v)
		uhist_add(v, IT_ST_TOTAL, r->aio.reap_ns - r->aio.submit_ns);
}

void uhists_request(struct uhists *h, const struct corr_req *r)
{
	for (int i = 0; i < r->nr_blocks; i++)
		uhists_record(h, r->blocks[i], sizeof(*r->blocks[i]));
	if (r->kind == CORR_SYSCALL)
		uhists_record(h, r->sys, sizeof(*r->sys));
	else if (r->kind == CORR_URING)
		uhists_record(h, r->uring, sizeof(*r->uring));
	uhists_aio(h, r);
}

int uhists_add(struct uhists *dst, const struct it_hist_key *k, const struct it_hist_val *val)
{
	struct it_hist_val *d = uhists_get(dst, k);

	if (!d)
		return dst->nr >= UHIST_MAX ? -E2BIG : -ENOMEM;
	for (int st = 0; st < IT_ST_MAX; st++)
		log2h_add(&d->st[st], &val->st[st]);
	return 0;
}

void uhists_merge(struct uhists *dst, const struct uhists *src)
{
	for (int i = 0; i < src->nr; i++)
		uhists_add(dst, &src->v[i].key, &src->v[i].val);
}

void uhists_clear(struct uhists *h)
{
	h->nr = 0;
}

void uhists_free(struct uhists *h)
{
	free(h->v);
	memset(h, 0, sizeof(*h));
}
