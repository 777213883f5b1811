// SPDX-License-Identifier: GPL-2.0
/*
 * stages: what a summary's per-stage lines are computed from (see stages.h):
 * a request's derived numbers (its view), and its stage latencies added to
 * log-linear histograms (hist.c) keyed (layer, dev, op, stage), from which
 * output_summary.c's summaries take the percentiles.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "records/hist.h"
#include "records/stages.h"
#include "lib/abi.h"
#include "lib/parse.h"

/* ---- stage statistics ---- */

static unsigned int stage_slot(const char *layer, uint32_t dev, unsigned int op, const char *stage)
{
	uint64_t k = ((uint64_t)(uintptr_t)stage << 16) ^ (uint64_t)(uintptr_t)layer ^
		     ((uint64_t)dev << 32) ^ op;

	/* the set's first way (an even slot); the second is the next one */
	return (unsigned int)((k * 0x9e3779b97f4a7c15ull) >> 40) & (STAGES_CACHE - 2);
}

static int stage_is(const struct stage_stat *s, const char *layer, uint32_t dev, unsigned int op,
		    const char *stage)
{
	return s->layer == layer && s->dev == dev && s->op == op && s->stage == stage;
}

/* stage_get() when the cache does not have it: find or add it. */
static __attribute__((noinline)) struct stage_stat *stage_find(struct stages *out,
							       unsigned int slot, const char *layer,
							       uint32_t dev, unsigned int op,
							       const char *stage)
{
	struct stage_stat *s;

	for (int i = 0; i < out->nr; i++) {
		if (stage_is(&out->st[i], layer, dev, op, stage)) {
			/* the set's newest moves to its second way (stage_get) */
			out->cache[slot + 1] = out->cache[slot];
			out->cache[slot] = i + 1;
			return &out->st[i];
		}
	}
	if (out->nr == out->cap) {
		int cap = out->cap ? out->cap * 2 : 16;
		struct stage_stat *n = realloc(out->st, cap * sizeof(*n));

		if (!n)
			return NULL;
		out->st = n;
		out->cap = cap;
	}
	s = &out->st[out->nr];
	*s = (struct stage_stat){ .layer = layer, .stage = stage, .dev = dev, .op = op };
	s->ival = lhist_new();
	s->total = lhist_new();
	if (!s->ival || !s->total) {
		lhist_free(s->ival);
		lhist_free(s->total);
		return NULL;
	}
	out->cache[slot + 1] = out->cache[slot];
	out->cache[slot] = ++out->nr;
	return s;
}

static inline struct stage_stat *stage_get(struct stages *out, const char *layer, uint32_t dev,
					   unsigned int op, const char *stage)
{
	unsigned int slot = stage_slot(layer, dev, op, stage);
	int i = out->cache[slot] - 1;

	if (i >= 0 && stage_is(&out->st[i], layer, dev, op, stage))
		return &out->st[i];
	i = out->cache[slot + 1] - 1;
	if (i >= 0 && stage_is(&out->st[i], layer, dev, op, stage))
		return &out->st[i];
	return stage_find(out, slot, layer, dev, op, stage);
}

/* Add ns to a stage row; the row (for its bytes), NULL when it could not be kept. */
static struct stage_stat *stage_add(struct stages *out, const char *layer, uint32_t dev,
				    unsigned int op, const char *stage, uint64_t ns)
{
	struct stage_stat *s = stage_get(out, layer, dev, op, stage);

	if (!s || lhist_add(s->ival, ns)) {
		out->error = -ENOMEM;
		return NULL;
	}
	return s;
}

static void tput_add(struct tput *t, uint64_t bytes, uint64_t first, uint64_t last)
{
	if (!t->first_ns || first < t->first_ns)
		t->first_ns = first;
	if (last > t->last_ns)
		t->last_ns = last;
	t->bytes += bytes;
}

/* Bytes of a request whose whole latency went to stage row s (start..end: its span). */
static void stage_bytes(struct stage_stat *s, uint64_t bytes, uint64_t start, uint64_t end)
{
	if (s && start && end >= start)
		tput_add(&s->tp_ival, bytes, start, end);
}

double stages_tput_rate(const struct tput *t)
{
	return t->last_ns > t->first_ns ?
		       (double)t->bytes * 1e9 / (double)(t->last_ns - t->first_ns) :
		       0.0;
}

void stages_fold(struct stages *out)
{
	for (int i = 0; i < out->nr; i++) {
		struct stage_stat *s = &out->st[i];

		if (lhist_merge(s->total, s->ival))
			out->error = -ENOMEM;
		lhist_reset(s->ival);
		if (s->tp_ival.first_ns)
			tput_add(&s->tp_total, s->tp_ival.bytes, s->tp_ival.first_ns,
				 s->tp_ival.last_ns);
		memset(&s->tp_ival, 0, sizeof(s->tp_ival));
	}
}

/* ---- per-request derived numbers ---- */

static void view_blocks(const struct corr_req *r, struct req_view *v)
{
	v->first_q = 0;
	v->last_c = 0;
	for (int i = 0; i < r->nr_blocks; i++) {
		const struct it_block_rec *b = r->blocks[i];

		if (!v->first_q || b->q_ns < v->first_q)
			v->first_q = b->q_ns;
		if (b->c_ns > v->last_c)
			v->last_c = b->c_ns;
	}
}

_Static_assert(CORR_SYSCALL == 1 && CORR_URING == 2 && CORR_AIO == 3 && CORR_BLOCK == 4,
	       "abi_kinds (lib/abi.c) names enum corr_kind by value");

void stages_make_view(const struct corr_req *r, struct req_view *v)
{
	memset(v, 0, sizeof(*v));
	v->kind = abi_name(&abi_kinds, r->kind);
	view_blocks(r, v);
	switch (r->kind) {
	case CORR_SYSCALL:
		v->task = &r->sys->task;
		v->start_ns = r->sys->enter_ns;
		v->end_ns = r->sys->exit_ns;
		v->dev = r->sys->dev;
		v->op = r->sys->op;
		v->offset = r->sys->offset;
		v->bytes = r->sys->bytes;
		v->ino = r->sys->ino;
		v->ret = r->sys->ret;
		break;
	case CORR_URING:
		v->task = &r->uring->task;
		v->start_ns = r->uring->submit_ns;
		v->end_ns = r->uring->complete_ns;
		v->dev = r->uring->dev;
		v->op = r->uring->op;
		v->ino = r->uring->ino;
		v->ret = r->uring->res;
		if (r->nr_blocks) {
			v->offset = corr_blk_offset(r->blocks[0]);
			v->bytes = r->blocks[0]->bytes;
		}
		break;
	case CORR_AIO:
		v->task = &r->aio.task;
		v->start_ns = r->aio.submit_ns;
		v->end_ns = r->aio.reaped ? r->aio.reap_ns : 0;
		v->dev = r->aio.iocb.dev;
		v->op = it_aio_op(r->aio.iocb.opcode);
		v->offset = r->aio.iocb.offset;
		v->bytes = r->aio.iocb.nbytes;
		v->ino = r->aio.iocb.ino;
		v->ret = r->aio.res;
		break;
	case CORR_BLOCK:
	default: {
		const struct it_block_rec *b = r->blocks[0];

		v->task = stages_block_owner(b);
		v->start_ns = b->q_ns;
		v->end_ns = b->c_ns;
		v->dev = b->dev;
		v->op = b->op;
		v->offset = corr_blk_offset(b);
		v->bytes = b->bytes;
		v->ino = b->ino;
		v->ret = b->error;
		break;
	}
	}
}

uint64_t stages_lat_of(const struct req_view *v)
{
	return v->end_ns > v->start_ns ? v->end_ns - v->start_ns : 0;
}

const struct it_task *stages_block_owner(const struct it_block_rec *b)
{
	/* a write of page-cache pages counts for their dirtier, not the flusher */
	return (b->flags & IT_F_WB) && b->wb.dirtier.pid ? &b->wb.dirtier : &b->task;
}

/* ---- statistics per request ---- */

/*
 * An upper bio (dm, md: bpf/stack.bpf.h) in the stack layer's rows: queued
 * .. completed, .. its first remap, its last member's completion ..
 * completed. A partition's request also counts in its partition's q2c.
 */
static int stats_stack(struct stages *out, const struct it_block_rec *b)
{
	if (b->up_dev && b->up_off == IT_STK_PART && !(b->flags & IT_F_UPPER))
		stage_add(out, "stack", b->up_dev, b->op, "q2c", b->c_ns - b->q_ns);
	if (!(b->flags & IT_F_UPPER))
		return 0;
	stage_bytes(stage_add(out, "stack", b->dev, b->op, "q2c", b->c_ns - b->q_ns), b->bytes,
		    b->q_ns, b->c_ns);
	if (b->stk_r_ns >= b->q_ns)
		stage_add(out, "stack", b->dev, b->op, "q2r", b->stk_r_ns - b->q_ns);
	if (b->stk_m_ns && b->stk_m_ns <= b->c_ns)
		stage_add(out, "stack", b->dev, b->op, "m2c", b->c_ns - b->stk_m_ns);
	return 1;
}

static void stats_block(struct stages *out, const struct it_block_rec *b)
{
	if (stats_stack(out, b))
		return;
	if (b->drv_layer && b->drv_submit_ns && b->drv_done_ns >= b->drv_submit_ns) {
		const char *l = abi_layer_name(b->drv_layer);

		stage_add(out, l, b->dev, b->op, "drv", b->drv_done_ns - b->drv_submit_ns);
		/* virtio: kick -> interrupt, the time spent in the hypervisor and device */
		if (b->drv_kick_ns && b->drv_done_ns >= b->drv_kick_ns)
			stage_add(out, l, b->dev, b->op, "kick2irq",
				  b->drv_done_ns - b->drv_kick_ns);
	}
	stage_bytes(stage_add(out, "block", b->dev, b->op, "q2c", b->c_ns - b->q_ns), b->bytes,
		    b->q_ns, b->c_ns);
	if (b->d_ns) {
		stage_add(out, "block", b->dev, b->op, "d2c", b->c_ns - b->d_ns);
		stage_add(out, "block", b->dev, b->op, "q2d", b->d_ns - b->q_ns);
	}
	/* page-cache age: the oldest page's dirtying -> the write queued */
	if ((b->flags & IT_F_WB) && b->wb.dirty_first_ns && b->wb.dirty_first_ns <= b->q_ns)
		stage_add(out, "block", b->dev, b->op, "dirty_age", b->q_ns - b->wb.dirty_first_ns);
}

/* A request's whole latency and its bytes: the "total" row of its kind. */
static void stage_total(struct stages *out, const char *layer, const struct req_view *v)
{
	stage_bytes(stage_add(out, layer, v->dev, v->op, "total", stages_lat_of(v)), v->bytes,
		    v->start_ns, v->end_ns);
}

void stages_request(struct stages *out, const struct corr_req *r, const struct req_view *v)
{
	for (int i = 0; i < r->nr_blocks; i++)
		stats_block(out, r->blocks[i]);
	switch (r->kind) {
	case CORR_SYSCALL:
		stage_total(out, "syscall", v);
		if (r->sys->flags & IT_F_SCHED_SW)
			stage_add(out, "syscall", v->dev, v->op, "offcpu", r->sys->offcpu_ns);
		if (r->sys->flags & IT_F_SCHED_CNT)
			stage_add(out, "syscall", v->dev, v->op, "runq", r->sys->runq_ns);
		break;
	case CORR_URING:
		stage_total(out, "io_uring", v);
		break;
	case CORR_AIO:
		if (r->aio.reaped)
			stage_total(out, "aio", v);
		break;
	default:
		break;
	}
}

/*
 * The name a row's layer or stage has here (rows are found by pointer): these
 * literals, or a driver layer's abi name; NULL when no row can have it.
 */
static const char *stage_name(const char *s)
{
	static const char *const names[] = { "syscall", "io_uring", "aio",    "block",
					     "stack",	"total",    "offcpu", "runq",
					     "q2c",	"d2c",	    "q2d",    "dirty_age",
					     "drv",	"kick2irq", "q2r",    "m2c" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i]))
			return names[i];
	for (unsigned int l = IT_L_NVME; l <= IT_L_VIRTIO; l++)
		if (!strcmp(s, abi_layer_name(l)))
			return abi_layer_name(l);
	return NULL;
}

int stages_add_bucket(struct stages *out, const char *layer, uint32_t dev, unsigned int op,
		      const char *stage, const struct stages_bucket *b)
{
	const char *l = stage_name(layer), *st = stage_name(stage);
	struct stage_stat *s = l && st ? stage_get(out, l, dev, op, st) : NULL;

	if (!l || !st)
		return -EINVAL;
	if (!s || lhist_add_bucket(s->ival, b->v, b->n, b->min, b->max, b->sum)) {
		out->error = -ENOMEM;
		return -ENOMEM;
	}
	if (b->first_ns)
		tput_add(&s->tp_ival, b->bytes, b->first_ns, b->last_ns);
	return 0;
}

void stages_free(struct stages *out)
{
	for (int i = 0; i < out->nr; i++) {
		lhist_free(out->st[i].ival);
		lhist_free(out->st[i].total);
	}
	free(out->st);
	memset(out, 0, sizeof(*out));
}
