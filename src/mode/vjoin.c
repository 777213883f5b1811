// SPDX-License-Identifier: GPL-2.0
/*
 * vjoin: guest virtio request + QEMU uprobe events + QEMU's host IO -> one
 * full path on the host clock. See vjoin.h.
 *
 * Host IOs and QEMU submit events live in rings (oldest overwritten first),
 * indexed by a hash of their key whose buckets point at the newest entry;
 * each entry points at the previous one with the same hash. Entries are
 * named by a monotonic index, so a chain stops at the first index that fell
 * off the ring: nothing is ever unlinked. QEMU notify times are kept sorted
 * (they arrive nearly in order) for a binary search.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iotracer.h"
#include "mode/vjoin.h"

#define VJ_DEF_HOST 65536
#define VJ_QEV 16384 /* QEMU submit events kept */
#define VJ_NOTIFY 65536 /* QEMU notify times kept */
#define VJ_SLACK_NS 200000ull /* added to the clock uncertainty on guest/host bounds */
#define VJ_NONE UINT64_MAX
#define VJ_HOST_KEEP 5 /* host IOs wait 5 x hold_ns: guest records may come late */

struct vj_hent {
	struct vj_host_io io;
	uint64_t idx, prev, arrive_ns;
	int used;
};

struct vj_qent {
	uint64_t idx, prev, ts, offset;
	uint8_t op;
};

struct vj_wait {
	struct link_vreq g;
	int peer, disk;
	uint64_t session;
	int64_t off;
	uint64_t unc, arrive_ns;
};

struct vjoin {
	vj_emit_fn fn;
	void *ctx;
	uint64_t hold_ns;
	/* host IOs */
	struct vj_hent *h;
	uint64_t hmask, hhead, htail; /* entries [htail, hhead) */
	uint64_t *hbucket;
	/* QEMU submits */
	struct vj_qent q[VJ_QEV];
	uint64_t qhead;
	uint64_t qbucket[VJ_QEV];
	/* QEMU notifies: sorted, circular [ntail, nhead) */
	uint64_t n[VJ_NOTIFY];
	uint64_t nhead, ntail;
	/* guest requests waiting for their host IO */
	struct vj_wait *w;
	size_t nw, wcap;
	struct vj_stats st;
};

static const char *const stage_names[VJ_STAGES] = {
	[VJ_GUEST_SUBMIT] = "guest_submit",   [VJ_KICK_TO_QEMU] = "kick_to_qemu",
	[VJ_QEMU_TO_HOST] = "qemu_to_host",   [VJ_HOST_SYSCALL] = "host_syscall",
	[VJ_HOST_BLOCK] = "host_block",	      [VJ_HOST_TO_NOTIFY] = "host_to_notify",
	[VJ_NOTIFY_TO_IRQ] = "notify_to_irq", [VJ_GUEST_COMPLETE] = "guest_complete",
	[VJ_GUEST_VIRTIO] = "guest_virtio",   [VJ_QEMU_TOTAL] = "qemu_total",
	[VJ_WORLD_SWITCH] = "world_switch",
};

static const char *const ts_names[VJ_T_MAX] = {
	[VJ_T_G_SYS_ENTER] = "guest_sys_enter", [VJ_T_G_Q] = "guest_block_q",
	[VJ_T_G_D] = "guest_block_d",		[VJ_T_G_KICK] = "guest_kick",
	[VJ_T_Q_SUBMIT] = "qemu_submit",	[VJ_T_H_ENTER] = "host_sys_enter",
	[VJ_T_H_BLK_Q] = "host_block_q",	[VJ_T_H_BLK_C] = "host_block_c",
	[VJ_T_H_EXIT] = "host_sys_exit",	[VJ_T_Q_NOTIFY] = "qemu_notify",
	[VJ_T_G_IRQ] = "guest_irq",		[VJ_T_G_C] = "guest_block_c",
	[VJ_T_G_SYS_EXIT] = "guest_sys_exit",
};

const char *vj_stage_name(int s)
{
	return s >= 0 && s < VJ_STAGES ? stage_names[s] : "?";
}

const char *vj_ts_name(int t)
{
	return t >= 0 && t < VJ_T_MAX ? ts_names[t] : "?";
}

static uint64_t vj_hash(uint64_t a, uint64_t b)
{
	uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	return x ^ (x >> 29);
}

static uint64_t host_key(int disk, uint8_t op, uint64_t offset)
{
	return vj_hash(((uint64_t)(uint32_t)disk << 8) | op, offset);
}

struct vjoin *vjoin_new(vj_emit_fn fn, void *ctx, uint64_t hold_ns, size_t max_host)
{
	struct vjoin *j = calloc(1, sizeof(*j));
	size_t cap = 1;

	if (!j)
		return NULL;
	if (!max_host)
		max_host = VJ_DEF_HOST;
	while (cap < max_host)
		cap <<= 1;
	j->fn = fn;
	j->ctx = ctx;
	j->hold_ns = hold_ns;
	j->hmask = cap - 1;
	j->h = calloc(cap, sizeof(*j->h));
	j->hbucket = malloc(cap * sizeof(*j->hbucket));
	if (!j->h || !j->hbucket) {
		vjoin_free(j);
		errno = ENOMEM;
		return NULL;
	}
	memset(j->hbucket, 0xff, cap * sizeof(*j->hbucket));
	memset(j->qbucket, 0xff, sizeof(j->qbucket));
	return j;
}

void vjoin_free(struct vjoin *j)
{
	if (!j)
		return;
	free(j->h);
	free(j->hbucket);
	free(j->w);
	free(j);
}

const struct vj_stats *vjoin_stats(const struct vjoin *j)
{
	return &j->st;
}

/* ---- host IOs ---- */

static void host_expire_one(struct vjoin *j)
{
	if (!j->h[j->htail & j->hmask].used)
		j->st.host_unjoined++;
	j->htail++;
}

void vjoin_add_host(struct vjoin *j, const struct vj_host_io *io, uint64_t now_ns)
{
	uint64_t b = host_key(io->disk, io->op, io->offset) & j->hmask;
	struct vj_hent *e;

	if (j->hhead - j->htail > j->hmask) {
		host_expire_one(j);
		j->st.evicted++;
	}
	e = &j->h[j->hhead & j->hmask];
	e->io = *io;
	e->idx = j->hhead;
	e->prev = j->hbucket[b];
	e->arrive_ns = now_ns;
	e->used = 0;
	j->hbucket[b] = j->hhead++;
	j->st.host_io++;
}

/* Host IO for g: same key, syscall entered in [lo, hi], closest to want. */
static struct vj_hent *host_find(struct vjoin *j, int disk, const struct link_vreq *g,
				 uint64_t lo, uint64_t hi, uint64_t want)
{
	uint64_t off = g->sector * 512, bytes = (uint64_t)g->nr_sectors * 512;
	uint64_t i = j->hbucket[host_key(disk, g->op, off) & j->hmask];
	struct vj_hent *best = NULL;
	uint64_t best_d = UINT64_MAX;

	for (; i != VJ_NONE && i >= j->htail && i < j->hhead; i = j->h[i & j->hmask].prev) {
		struct vj_hent *e = &j->h[i & j->hmask];
		uint64_t d;

		if (e->idx != i)
			break;
		if (e->used || e->io.disk != disk || e->io.op != g->op || e->io.offset != off ||
		    e->io.bytes != bytes || e->io.enter_ns < lo || e->io.enter_ns > hi)
			continue;
		d = e->io.enter_ns > want ? e->io.enter_ns - want : want - e->io.enter_ns;
		if (d < best_d) {
			best = e;
			best_d = d;
		}
	}
	return best;
}

/* ---- QEMU events ---- */

static void notify_add(struct vjoin *j, uint64_t ts)
{
	uint64_t i;

	if (j->nhead - j->ntail >= VJ_NOTIFY)
		j->ntail++;
	/* insertion from the end: events arrive nearly in time order */
	for (i = j->nhead; i > j->ntail && j->n[(i - 1) % VJ_NOTIFY] > ts; i--)
		j->n[i % VJ_NOTIFY] = j->n[(i - 1) % VJ_NOTIFY];
	j->n[i % VJ_NOTIFY] = ts;
	j->nhead++;
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

void vjoin_add_qemu(struct vjoin *j, uint32_t ev, uint64_t ts_ns, uint64_t offset)
{
	struct vj_qent *e;
	uint64_t b;
	uint8_t op;

	if (ev == IT_QEV_NOTIFY) {
		notify_add(j, ts_ns);
		j->st.qemu_notify++;
		return;
	}
	if (ev != IT_QEV_AIO_READ && ev != IT_QEV_AIO_WRITE)
		return;
	op = ev == IT_QEV_AIO_READ ? IT_OP_READ : IT_OP_WRITE;
	b = vj_hash(op, offset) % VJ_QEV;
	e = &j->q[j->qhead % VJ_QEV];
	e->idx = j->qhead;
	e->prev = j->qbucket[b];
	e->ts = ts_ns;
	e->offset = offset;
	e->op = op;
	j->qbucket[b] = j->qhead++;
	j->st.qemu_submit++;
}

/* Latest QEMU submit of (op, offset) in [lo, hi], or 0. */
static uint64_t submit_find(const struct vjoin *j, uint8_t op, uint64_t offset, uint64_t lo,
			    uint64_t hi)
{
	uint64_t i = j->qbucket[vj_hash(op, offset) % VJ_QEV];
	uint64_t best = 0;

	for (; i != VJ_NONE && i + VJ_QEV > j->qhead && i < j->qhead;
	     i = j->q[i % VJ_QEV].prev) {
		const struct vj_qent *e = &j->q[i % VJ_QEV];

		if (e->idx != i)
			break;
		if (e->op == op && e->offset == offset && e->ts >= lo && e->ts <= hi &&
		    e->ts > best)
			best = e->ts;
	}
	return best;
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
}

static void guest_times(struct vj_path *p, const struct link_vreq *g, int64_t off)
{
	if (g->flags & LINK_VF_HAS_SYS) {
		p->t[VJ_T_G_SYS_ENTER] = to_host(g->sys_enter_ns, off);
		p->t[VJ_T_G_SYS_EXIT] = to_host(g->sys_exit_ns, off);
	}
	p->t[VJ_T_G_Q] = to_host(g->q_ns, off);
	p->t[VJ_T_G_D] = to_host(g->d_ns, off);
	p->t[VJ_T_G_KICK] = to_host(first_nz(g->kick_ns, g->submit_ns, g->d_ns), off);
	p->t[VJ_T_G_IRQ] = to_host(first_nz(g->done_ns, g->c_ns, 0), off);
	p->t[VJ_T_G_C] = to_host(g->c_ns, off);
}

static void host_times(struct vjoin *j, struct vj_path *p, uint64_t lo, uint64_t hi)
{
	const struct vj_host_io *h = &p->h;

	p->t[VJ_T_H_ENTER] = h->enter_ns;
	p->t[VJ_T_H_EXIT] = h->exit_ns;
	p->t[VJ_T_H_BLK_Q] = h->blk_q_ns;
	p->t[VJ_T_H_BLK_C] = h->blk_c_ns;
	p->t[VJ_T_Q_SUBMIT] = submit_find(j, h->op, h->offset, lo, h->enter_ns);
	p->t[VJ_T_Q_NOTIFY] = notify_after(j, h->exit_ns);
	if (p->t[VJ_T_Q_NOTIFY] > hi)
		p->t[VJ_T_Q_NOTIFY] = 0;
	j->st.with_submit += p->t[VJ_T_Q_SUBMIT] != 0;
	j->st.with_notify += p->t[VJ_T_Q_NOTIFY] != 0;
}

/* Try to join w; emit and return 1 when joined (or when force is set). */
static int try_join(struct vjoin *j, const struct vj_wait *w, int force)
{
	struct vj_path p;
	uint64_t lo, hi, tol = w->unc + VJ_SLACK_NS;
	struct vj_hent *e = NULL;

	memset(&p, 0, sizeof(p));
	p.g = &w->g;
	p.peer = w->peer;
	p.session = w->session;
	p.disk = w->disk;
	p.clock_off = w->off;
	p.clock_unc = w->unc;
	guest_times(&p, &w->g, w->off);
	lo = p.t[VJ_T_G_KICK] > tol ? p.t[VJ_T_G_KICK] - tol : 0;
	hi = p.t[VJ_T_G_IRQ] ? p.t[VJ_T_G_IRQ] + tol : UINT64_MAX;
	if (w->disk >= 0 && p.t[VJ_T_G_KICK])
		e = host_find(j, w->disk, &w->g, lo, hi, p.t[VJ_T_G_KICK]);
	if (!e && !force)
		return 0;
	if (e) {
		e->used = 1;
		p.joined = 1;
		p.h = e->io;
		host_times(j, &p, lo, hi);
		j->st.joined++;
	} else {
		j->st.unjoined++;
	}
	fill_stages(&p);
	check_order(&p);
	if (p.joined && !p.order_ok)
		j->st.order_bad++;
	j->fn(&p, j->ctx);
	return 1;
}

void vjoin_add_guest(struct vjoin *j, int peer, uint64_t session, int disk, const struct link_vreq *g, int64_t off,
		     uint64_t unc, uint64_t now_ns)
{
	struct vj_wait w = { .g = *g, .peer = peer, .session = session, .disk = disk, .off = off, .unc = unc,
			     .arrive_ns = now_ns };

	j->st.guest++;
	if (try_join(j, &w, disk < 0))
		return;
	if (j->nw == j->wcap) {
		size_t cap = j->wcap ? j->wcap * 2 : 64;
		struct vj_wait *nwp = realloc(j->w, cap * sizeof(*nwp));

		if (!nwp) {
			try_join(j, &w, 1); /* cannot wait: emit unjoined */
			return;
		}
		j->w = nwp;
		j->wcap = cap;
	}
	j->w[j->nw++] = w;
}

/*
 * Retry the waiting guest requests; emit the ones older than hold_ns. Signed:
 * a record may be stamped a little after the now_ns a caller passes here.
 */
static void retry_waiting(struct vjoin *j, uint64_t now_ns, int force_all)
{
	size_t k = 0;

	for (size_t i = 0; i < j->nw; i++) {
		int old = force_all || (int64_t)(now_ns - j->w[i].arrive_ns) >= (int64_t)j->hold_ns;

		if (!try_join(j, &j->w[i], old))
			j->w[k++] = j->w[i];
	}
	j->nw = k;
}

void vjoin_tick(struct vjoin *j, uint64_t now_ns)
{
	retry_waiting(j, now_ns, 0);
	while (j->htail < j->hhead &&
	       (int64_t)(now_ns - j->h[j->htail & j->hmask].arrive_ns) >=
		       (int64_t)(VJ_HOST_KEEP * j->hold_ns))
		host_expire_one(j);
}

void vjoin_flush(struct vjoin *j)
{
	retry_waiting(j, 0, 1);
}
