// SPDX-License-Identifier: GPL-2.0
/*
 * vjpath: what every joined path gets, below vjoin.c (the tables, the uprobe
 * path) and vjaddr.c (the address path), which both call down here and are
 * never called from here: the host IOs' unused lists, a guest request's path
 * begun (its guest times, its window) and finished (its host IOs taken, its
 * host and QEMU times, stages and order checked, handed to the caller), and
 * each VM's clock the joined paths bound (vjaddr.c reads it for its window).
 *
 * The clock: a host IO starts after its guest kick and ends before its guest
 * interrupt (both real events), so host - guest is at most each joined IO's
 * enter - kick and at least its end - interrupt (vjaddr.c, "The clock").
 */
#include <string.h>

#include "iotracer.h"
#include "mode/vjoin_int.h"

#define VJ_CLK_MIN 8 /* joined paths before the bounds are used */
#define VJ_DRIFT_PPM 25 /* a guest clock's rate against the host's, at most */
#define VJ_CLK_FRESH_NS 4000000000ull /* older paths (guest time) say nothing of the clock now */
#define VJ_CLK_WIDE 1000000 /* bounds wider than this (ns): something is off, do not guess */
#define VJ_HIST_SLOT_NS 100000000ull /* a history slot: 100 ms of guest time */
#define VJ_RATE_SPAN_NS 5000000000ull /* history a drift fit needs */
#define VJ_RATE_MAX 200e-6 /* the drift searched: +- 200 ppm */

uint64_t vj_hash(uint64_t a, uint64_t b)
{
	uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	return x ^ (x >> 29);
}

uint64_t vj_host_key(uint8_t op, uint64_t buf)
{
	return vj_hash(op, buf);
}

/* First notify at or after ts, or 0. */
static uint64_t notify_after(const struct vjoin *j, uint64_t ts)
{
	uint64_t lo = j->ntail, hi = j->nhead;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (j->n[mid % VJ_NOTIFY] < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < j->nhead ? j->n[lo % VJ_NOTIFY] : 0;
}

struct vj_hent *vj_unused(struct vjoin *j, uint8_t op, uint64_t buf)
{
	uint64_t i = j->uhead[vj_host_key(op, buf) & j->hmask];

	return i == VJ_NONE ? NULL : &j->h[i & j->hmask];
}

struct vj_hent *vj_unused_next(struct vjoin *j, const struct vj_hent *e)
{
	return e->unext == VJ_NONE ? NULL : &j->h[e->unext & j->hmask];
}

void vj_unlist(struct vjoin *j, struct vj_hent *e)
{
	uint64_t b = vj_host_key(e->io.op, e->io.buf) & j->hmask;

	if (!e->listed)
		return;
	if (e->uprev == VJ_NONE)
		j->uhead[b] = e->unext;
	else
		j->h[e->uprev & j->hmask].unext = e->unext;
	if (e->unext == VJ_NONE)
		j->utail[b] = e->uprev;
	else
		j->h[e->unext & j->hmask].uprev = e->uprev;
	e->listed = 0;
}

/* ---- the VM's clock ---- */

struct vj_vm *vj_vm_of(struct vjoin *j, int disk)
{
	if (disk < 0 || disk >= VJ_MAX_DISKS || j->disk_vm[disk] < 0)
		return NULL;
	return &j->vm[j->disk_vm[disk]];
}

static void ring_push(struct vj_clks *r, struct vj_clk c)
{
	r->s[r->next] = c;
	r->next = (r->next + 1) % r->cap;
	if (r->n < r->cap)
		r->n++;
}

static struct vj_clk *ring_last(const struct vj_clks *r)
{
	return r->n ? &r->s[(r->next + r->cap - 1) % r->cap] : NULL;
}

static void clk_add(struct vj_vm *vm, int64_t a, int64_t b, uint64_t t)
{
	struct vj_clk c = { .a = a, .b = b, .t = t }, *last;

	if (!vm->clk.cap) {
		vm->clk = (struct vj_clks){ .cap = VJ_CLK, .s = vm->clk_s };
		vm->hist = (struct vj_clks){ .cap = VJ_HIST, .s = vm->hist_s };
	}
	ring_push(&vm->clk, c);
	vm->st.clk_n = vm->clk.n;
	/* the history: a new slot, or a tighter bound in the current one (at the slot's
	 * first time: the drift within 100 ms, 2.5 us, is the slack's) */
	last = ring_last(&vm->hist);
	if (!last || t / VJ_HIST_SLOT_NS != last->t / VJ_HIST_SLOT_NS) {
		ring_push(&vm->hist, c);
		return;
	}
	last->a = a < last->a ? a : last->a;
	last->b = b > last->b ? b : last->b;
}

/*
 * How much room the history leaves host - guest if it drifts at r (ns per
 * ns): min over slots of (a - r t) less max of (b - r t). A concave function
 * of r: its top is the rate the slots agree on best, and r is possible where
 * it is >= 0.
 */
static double hist_room(const struct vj_vm *vm, double r)
{
	double lo = -1e300, hi = 1e300;
	uint64_t t0 = ring_last(&vm->hist)->t;

	for (unsigned int i = 0; i < vm->hist.n; i++) {
		const struct vj_clk *c = &vm->hist.s[i];
		double dt = (double)(int64_t)(c->t - t0);
		double a = (double)c->a - r * dt, b = (double)c->b - r * dt;

		hi = a < hi ? a : hi;
		lo = b > lo ? b : lo;
	}
	return hi - lo;
}

/*
 * The guest clock's drift, fitted to the history when it spans VJ_RATE_SPAN
 * or more (ternary search of hist_room's top over +- VJ_RATE_MAX, then the
 * edges where it stays >= 0: the rate's uncertainty). Refitted when the
 * history grew. rate_ok 0: too short a history, or no rate fits it.
 */
static void clk_rate(struct vj_vm *vm)
{
	uint64_t stamp = vm->hist.next + (uint64_t)vm->hist.n * VJ_HIST, first, last;
	double lo = -VJ_RATE_MAX, hi = VJ_RATE_MAX, best, a, b;

	if (stamp == vm->rate_hist)
		return;
	vm->rate_hist = stamp;
	vm->rate_ok = 0;
	if (vm->hist.n < 4)
		return;
	first = vm->hist.s[vm->hist.n < VJ_HIST ? 0 : vm->hist.next].t;
	last = ring_last(&vm->hist)->t;
	if (last - first < VJ_RATE_SPAN_NS)
		return;
	for (int i = 0; i < 60; i++) {
		double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;

		if (hist_room(vm, m1) < hist_room(vm, m2))
			lo = m1;
		else
			hi = m2;
	}
	best = (lo + hi) / 2;
	if (hist_room(vm, best) < 0)
		return;
	for (a = best, b = VJ_RATE_MAX, lo = 0; lo < 50; lo++) { /* the upper edge */
		double m = (a + b) / 2;

		*(hist_room(vm, m) >= 0 ? &a : &b) = m;
	}
	vm->rate_half = a - best;
	for (a = best, b = -VJ_RATE_MAX, lo = 0; lo < 50; lo++) { /* the lower edge */
		double m = (a + b) / 2;

		*(hist_room(vm, m) >= 0 ? &a : &b) = m;
	}
	vm->rate_half = vm->rate_half > best - a ? vm->rate_half : best - a;
	vm->rate = best;
	vm->rate_ok = 1;
}

/*
 * Bounds at guest time t carried from the history over a pause: each slot's
 * moved by the fitted rate, widened by the rate's uncertainty over the time
 * since it (and VJ_DRIFT_PPM's part over the last slot's own span, nothing
 * more: the fit covers the rest). 1 when they agree.
 */
static int clk_carried(struct vj_vm *vm, uint64_t t, int64_t *lo, int64_t *hi)
{
	clk_rate(vm);
	if (!vm->rate_ok)
		return 0;
	*lo = INT64_MIN;
	*hi = INT64_MAX;
	for (unsigned int i = 0; i < vm->hist.n; i++) {
		const struct vj_clk *c = &vm->hist.s[i];
		double dt = (double)(int64_t)(t - c->t);
		int64_t mv = (int64_t)(vm->rate * dt);
		int64_t w =
			(int64_t)(vm->rate_half * (dt < 0 ? -dt : dt)) + (int64_t)VJ_CLK_SLACK_NS;

		*lo = c->b + mv - w > *lo ? c->b + mv - w : *lo;
		*hi = c->a + mv + w < *hi ? c->a + mv + w : *hi;
	}
	return *hi >= *lo && *hi - *lo <= (int64_t)VJ_CLK_WIDE;
}

/*
 * The VM's host - guest bounds at guest time t: those of its joined paths
 * within VJ_CLK_FRESH_NS of t (4 s: 100 us of drift at most), each widened by the drift
 * since (VJ_DRIFT_PPM
 * of the guest time between them: a TCG guest's clock runs ~10 ppm off the
 * host's, 300 us over a 32 s pause in the lab), the tightest of them. Their
 * width is the intrinsic least latencies (kick -> host IO start, host IO end
 * -> guest interrupt: ~100-150 us in the x86 TCG lab, ~200 us on arm64), not
 * the clock's. 1 when there are VJ_CLK_MIN such paths and the bounds agree;
 * 0 when not (an idle VM's bounds are stale).
 */
int vj_clk_bounds(struct vj_vm *vm, uint64_t t, int64_t *lo, int64_t *hi)
{
	const struct vj_clk *c = vm->clk.s, *end = c + vm->clk.n;
	int64_t l = INT64_MIN, h = INT64_MAX;
	unsigned int used = 0;

	/* in locals: stores through lo and hi might alias the ring (reloaded every round) */
	for (; c < end; c++) {
		uint64_t age = t > c->t ? t - c->t : c->t - t;
		int64_t d = (int64_t)(age / 1000000 * VJ_DRIFT_PPM);

		if (age > VJ_CLK_FRESH_NS)
			continue;
		used++;
		l = c->b - d > l ? c->b - d : l;
		h = c->a + d < h ? c->a + d : h;
	}
	*lo = l;
	*hi = h;
	if (used < VJ_CLK_MIN && clk_carried(vm, t, lo, hi))
		used = VJ_CLK_MIN; /* a pause: the history carried over it */
	if (used) {
		vm->st.clk_lo = *lo;
		vm->st.clk_hi = *hi;
	}
	return used >= VJ_CLK_MIN && *hi >= *lo && *hi - *lo <= (int64_t)VJ_CLK_WIDE;
}

/* A joined path bounds its VM's clock (vj_finish). */
void vj_clock_note(struct vjoin *j, const struct vj_path *p)
{
	struct vj_vm *vm = vj_vm_of(j, p->disk);
	uint64_t enter = p->t[VJ_T_H_ENTER], end = p->t[VJ_T_H_EXIT] ? p->t[VJ_T_H_EXIT] : enter;
	uint64_t kick = vj_guest_kick(p->g), irq = vj_guest_irq(p->g);

	if (!vm || p->key == VJ_KEY_OFFSET || !enter || !kick || !irq)
		return;
	clk_add(vm, (int64_t)(enter - kick), (int64_t)(end - irq), kick);
}

/* ---- paths ---- */

static uint64_t to_host(uint64_t guest_ns, int64_t off)
{
	return guest_ns ? (uint64_t)((int64_t)guest_ns + off) : 0;
}

static uint64_t first_nz(uint64_t a, uint64_t b, uint64_t c)
{
	return a ? a : b ? b : c;
}

/*
 * The guest's kick, or when it has none (a suppressed notification) its
 * stand-in: the driver submit, never before the issue D (a submit stamp from
 * an earlier attempt, or one a stalled vCPU took long before D, is not when
 * the device could have been told).
 */
uint64_t vj_guest_kick(const struct link_vreq *g)
{
	if (g->kick_ns)
		return g->kick_ns;
	return g->submit_ns > g->d_ns ? g->submit_ns : g->d_ns;
}

uint64_t vj_guest_irq(const struct link_vreq *g)
{
	return first_nz(g->done_ns, g->c_ns, 0);
}

uint64_t vj_io_end(const struct vj_host_io *io)
{
	return first_nz(io->exit_ns, io->blk_c_ns, io->enter_ns);
}

static int64_t span(const uint64_t *t, int from, int to)
{
	if (!t[from] || !t[to])
		return INT64_MIN;
	return (int64_t)(t[to] - t[from]);
}

static int is_guest_ts(int k)
{
	return k <= VJ_T_G_KICK || k >= VJ_T_G_IRQ;
}

/*
 * Every seen timestamp must not precede the previous seen one; across the
 * guest/host boundary by more than the clock uncertainty (+ slack).
 */
static void check_order(struct vj_path *p)
{
	int last = -1;

	p->order_ok = 1;
	p->bad_pair = -1;
	for (int k = 0; k < VJ_T_MAX; k++) {
		uint64_t tol = 0;

		if (!p->t[k])
			continue;
		if (last >= 0 && is_guest_ts(last) != is_guest_ts(k))
			tol = p->clock_unc + VJ_SLACK_NS;
		if (last >= 0 && p->t[k] + tol < p->t[last]) {
			p->order_ok = 0;
			p->bad_pair = k;
			return;
		}
		last = k;
	}
}

static void fill_stages(struct vj_path *p)
{
	const uint64_t *t = p->t;
	int64_t gv, qt;

	p->stage[VJ_GUEST_SUBMIT] = span(t, VJ_T_G_SYS_ENTER, VJ_T_G_KICK);
	p->stage[VJ_KICK_TO_QEMU] = span(t, VJ_T_G_KICK, VJ_T_Q_SUBMIT);
	p->stage[VJ_QEMU_TO_HOST] = span(t, VJ_T_Q_SUBMIT, VJ_T_H_ENTER);
	p->stage[VJ_HOST_SYSCALL] = span(t, VJ_T_H_ENTER, VJ_T_H_EXIT);
	p->stage[VJ_HOST_BLOCK] = span(t, VJ_T_H_BLK_Q, VJ_T_H_BLK_C);
	p->stage[VJ_HOST_TO_NOTIFY] = span(t, VJ_T_H_EXIT, VJ_T_Q_NOTIFY);
	p->stage[VJ_NOTIFY_TO_IRQ] = span(t, VJ_T_Q_NOTIFY, VJ_T_G_IRQ);
	p->stage[VJ_GUEST_COMPLETE] = span(t, VJ_T_G_IRQ, VJ_T_G_SYS_EXIT);
	gv = p->stage[VJ_GUEST_VIRTIO] = span(t, VJ_T_G_KICK, VJ_T_G_IRQ);
	qt = p->stage[VJ_QEMU_TOTAL] = span(t, VJ_T_Q_SUBMIT, VJ_T_Q_NOTIFY);
	p->stage[VJ_WORLD_SWITCH] = gv == INT64_MIN || qt == INT64_MIN ? INT64_MIN : gv - qt;
	p->stage[VJ_KICK_TO_HOST] = span(t, VJ_T_G_KICK, VJ_T_H_ENTER);
}

static void guest_times(struct vj_path *p, const struct link_vreq *g, int64_t off)
{
	if (g->flags & LINK_VF_HAS_SYS) {
		p->t[VJ_T_G_SYS_ENTER] = to_host(g->sys_enter_ns, off);
		p->t[VJ_T_G_SYS_EXIT] = to_host(g->sys_exit_ns, off);
	}
	p->t[VJ_T_G_Q] = to_host(g->q_ns, off);
	p->t[VJ_T_G_D] = to_host(g->d_ns, off);
	p->t[VJ_T_G_KICK] = to_host(vj_guest_kick(g), off);
	p->t[VJ_T_G_IRQ] = to_host(first_nz(g->done_ns, g->c_ns, 0), off);
	p->t[VJ_T_G_C] = to_host(g->c_ns, off);
}

static void host_times(struct vjoin *j, struct vj_path *p, uint64_t submit_ts, uint64_t hi)
{
	uint64_t done = 0, blk_c = 0;

	for (int i = 0; i < p->nr_h; i++) {
		const struct vj_host_io *h = &p->hp[i];
		uint64_t end = h->exit_ns ? h->exit_ns : h->blk_c_ns;

		done = end > done ? end : done;
		blk_c = h->blk_c_ns > blk_c ? h->blk_c_ns : blk_c;
	}
	p->t[VJ_T_Q_SUBMIT] = submit_ts;
	p->t[VJ_T_H_ENTER] = p->h.enter_ns;
	p->t[VJ_T_H_BLK_Q] = p->h.blk_q_ns;
	p->t[VJ_T_H_BLK_C] = p->h.blk_q_ns ? blk_c : 0;
	p->t[VJ_T_H_EXIT] = done;
	p->t[VJ_T_Q_NOTIFY] = notify_after(j, done > p->h.enter_ns ? done : p->h.enter_ns);
	if (p->t[VJ_T_Q_NOTIFY] > hi)
		p->t[VJ_T_Q_NOTIFY] = 0;
	j->st.with_submit += submit_ts != 0;
	j->st.with_notify += p->t[VJ_T_Q_NOTIFY] != 0;
}

int vj_path_init(const struct vj_wait *w, struct vj_path *p, struct vj_win *win)
{
	const struct link_vreq *g = &w->g;
	uint64_t tol = w->unc + VJ_SLACK_NS;

	memset(p, 0, sizeof(*p));
	p->g = g;
	p->peer = w->peer;
	p->session = w->session;
	p->disk = w->disk;
	p->clock_off = w->off;
	p->clock_unc = w->unc;
	p->unjoin = VJ_UN_NO_DISK;
	guest_times(p, g, w->off);
	win->lo = p->t[VJ_T_G_KICK] > tol ? p->t[VJ_T_G_KICK] - tol : 0;
	win->hi = p->t[VJ_T_G_IRQ] ? p->t[VJ_T_G_IRQ] + tol : UINT64_MAX;
	win->kick = vj_guest_kick(g);
	win->irq = vj_guest_irq(g);
	return w->disk >= 0 && p->t[VJ_T_G_KICK];
}

void vj_finish(struct vjoin *j, struct vj_path *p, struct vj_hent **pc, int n, uint64_t submit_ts,
	       uint64_t hi)
{
	if (p->joined) {
		for (int i = 0; i < n; i++) {
			pc[i]->used = 1;
			vj_unlist(j, pc[i]);
			p->hp[i] = pc[i]->io;
		}
		p->nr_h = n;
		p->h = p->hp[0];
		host_times(j, p, submit_ts, hi);
		j->st.joined++;
		j->st.split += n > 1;
		j->st.by_key[p->key]++;
		vj_clock_note(j, p);
	} else {
		j->st.unjoined++;
		j->st.unjoin[p->unjoin]++;
	}
	fill_stages(p);
	check_order(p);
	if (p->joined && !p->order_ok)
		j->st.order_bad++;
	j->fn(p, j->ctx);
}
