// SPDX-License-Identifier: GPL-2.0
/*
 * vjoin: guest virtio request + QEMU uprobe events + QEMU's host IO -> one
 * full path on the host clock. See vjoin.h.
 *
 * Host IOs (keyed by buffer) and QEMU submit events (keyed by offset and by
 * buffer) live in rings (oldest overwritten first),
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
#include "mode/vjoin_int.h"

static uint64_t qoff_key(uint8_t op, uint64_t offset)
{
	return vj_hash(op | 0x100, offset) % VJ_QEV;
}

static uint64_t qhva_key(uint64_t hva)
{
	return vj_hash(0x200, hva) % VJ_QEV;
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
	j->uhead = malloc(cap * sizeof(*j->uhead));
	j->utail = malloc(cap * sizeof(*j->utail));
	if (!j->h || !j->uhead || !j->utail) {
		vjoin_free(j);
		errno = ENOMEM;
		return NULL;
	}
	memset(j->uhead, 0xff, cap * sizeof(*j->uhead));
	memset(j->utail, 0xff, cap * sizeof(*j->utail));
	memset(j->qb_off, 0xff, sizeof(j->qb_off));
	memset(j->qb_hva, 0xff, sizeof(j->qb_hva));
	memset(j->disk_vm, 0xff, sizeof(j->disk_vm));
	return j;
}

void vjoin_free(struct vjoin *j)
{
	if (!j)
		return;
	free(j->h);
	free(j->uhead);
	free(j->utail);
	free(j->w);
	free(j);
}

const struct vj_stats *vjoin_stats(const struct vjoin *j)
{
	return &j->st;
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

void vjoin_add_qemu(struct vjoin *j, const struct vj_qemu_ev *ev)
{
	struct vj_qent *e;
	uint64_t bo, bh;

	if (ev->ev == IT_QEV_NOTIFY || ev->ev == IT_QEV_KVM_IRQ) {
		notify_add(j, ev->ts_ns);
		j->st.qemu_notify++;
		return;
	}
	if (ev->ev != IT_QEV_AIO_READ && ev->ev != IT_QEV_AIO_WRITE)
		return;
	e = &j->q[j->qhead % VJ_QEV];
	e->idx = j->qhead;
	e->op = ev->ev == IT_QEV_AIO_READ ? IT_OP_READ : IT_OP_WRITE;
	e->ts = ev->ts_ns;
	e->offset = ev->offset;
	e->hva = ev->hva;
	e->bytes = ev->bytes;
	e->niov = ev->niov;
	bo = qoff_key(e->op, e->offset);
	bh = qhva_key(e->hva);
	e->prev_off = j->qb_off[bo];
	e->prev_hva = j->qb_hva[bh];
	j->qb_off[bo] = j->qb_hva[bh] = j->qhead++;
	j->st.qemu_submit++;
}

/* The submit entry of index i, or NULL when it fell off the ring. */
static const struct vj_qent *qent(const struct vjoin *j, uint64_t i)
{
	const struct vj_qent *e;

	if (i == VJ_NONE || i + VJ_QEV <= j->qhead || i >= j->qhead)
		return NULL;
	e = &j->q[i % VJ_QEV];
	return e->idx == i ? e : NULL;
}

/*
 * QEMU's submit of the guest request (op, offset, bytes) in [lo, hi], the one
 * closest to want; *merged when only longer submits at that offset were seen.
 */
static const struct vj_qent *submit_find(const struct vjoin *j, uint8_t op, uint64_t offset,
					 uint64_t bytes, uint64_t lo, uint64_t hi, uint64_t want,
					 int *merged)
{
	const struct vj_qent *e, *best = NULL;
	uint64_t best_d = UINT64_MAX;

	for (e = qent(j, j->qb_off[qoff_key(op, offset)]); e; e = qent(j, e->prev_off)) {
		uint64_t d;

		if (e->ts + VJ_CHAIN_SLACK_NS < lo)
			break;
		if (e->op != op || e->offset != offset || e->ts < lo || e->ts > hi)
			continue;
		if (e->bytes != bytes) {
			*merged |= e->bytes > bytes;
			continue;
		}
		d = e->ts > want ? e->ts - want : want - e->ts;
		if (d < best_d) {
			best = e;
			best_d = d;
		}
	}
	return best;
}

/* Whether a longer submit in [lo, hi] covers (op, offset, bytes): merged by QEMU. */
static int submit_covering(const struct vjoin *j, uint8_t op, uint64_t offset, uint64_t bytes,
			   uint64_t lo, uint64_t hi)
{
	uint64_t first = j->qhead > VJ_QEV ? j->qhead - VJ_QEV : 0;

	for (uint64_t i = first; i < j->qhead; i++) {
		const struct vj_qent *e = &j->q[i % VJ_QEV];

		if (e->op == op && e->ts >= lo && e->ts <= hi && e->offset <= offset &&
		    e->offset + e->bytes >= offset + bytes && e->bytes > bytes)
			return 1;
	}
	return 0;
}

/* The first submit after `after` whose buffer starts at hva (UINT64_MAX: none). */
static uint64_t next_submit_at(const struct vjoin *j, uint64_t hva, uint64_t after)
{
	uint64_t best = UINT64_MAX;

	for (const struct vj_qent *e = qent(j, j->qb_hva[qhva_key(hva)]); e;
	     e = qent(j, e->prev_hva)) {
		if (e->ts + VJ_CHAIN_SLACK_NS < after)
			break;
		if (e->hva == hva && e->ts > after && e->ts < best)
			best = e->ts;
	}
	return best;
}

/* Whether some submit at or before ts had its buffer start at buf. */
static int guest_buffer(const struct vjoin *j, uint64_t buf, uint64_t ts)
{
	for (const struct vj_qent *e = qent(j, j->qb_hva[qhva_key(buf)]); e;
	     e = qent(j, e->prev_hva))
		if (e->hva == buf && e->ts <= ts)
			return 1;
	return 0;
}

/* ---- host IOs ---- */

static void host_expire_one(struct vjoin *j)
{
	struct vj_hent *e = &j->h[j->htail & j->hmask];

	vj_unlist(j, e);
	if (!e->used) {
		int guest = guest_buffer(j, e->io.buf, e->io.enter_ns) ||
			    vj_is_guest_ram(j, e->io.disk, e->io.buf);

		j->st.host_unjoined++;
		j->st.host_unjoin[guest ? VJ_HU_UNCLAIMED : VJ_HU_NOT_GUEST]++;
	}
	j->htail++;
}

static void set_block(struct vj_host_io *io, const struct vj_early *b)
{
	io->blk_q_ns = b->q;
	io->blk_d_ns = b->d;
	io->blk_c_ns = b->c;
	io->blk_dev = b->dev;
}

/*
 * Attach block b to the aio host IOs of its io_submit among the newest
 * entries (from index from on); 1 when it found its IO.
 */
static int aio_block(struct vjoin *j, const struct vj_early *b, uint64_t from)
{
	uint64_t lo = j->hhead - j->htail > VJ_AIO_SCAN ? j->hhead - VJ_AIO_SCAN : j->htail;
	int n = 0, hit = 0;

	lo = lo > from ? lo : from;
	for (uint64_t i = lo; i < j->hhead; i++) {
		const struct vj_host_io *io = &j->h[i & j->hmask].io;

		n += io->kind == VJ_K_AIO && io->tid == b->tid && io->seq == b->seq && !io->view;
	}
	for (uint64_t i = lo; i < j->hhead; i++) {
		struct vj_host_io *io = &j->h[i & j->hmask].io;

		if (io->kind != VJ_K_AIO || io->tid != b->tid || io->seq != b->seq ||
		    io->blk_q_ns || (n > 1 && io->io_offset != b->sector * 512))
			continue;
		set_block(io, b);
		hit = 1;
	}
	return hit;
}

static uint64_t aio_key(uint32_t tid, uint64_t seq)
{
	return vj_hash(tid, seq) | 1; /* never 0: an empty slot */
}

void vjoin_host_block(struct vjoin *j, uint32_t tid, uint64_t seq, uint64_t sector, uint64_t q_ns,
		      uint64_t d_ns, uint64_t c_ns, uint32_t dev)
{
	struct vj_early b = {
		.tid = tid, .dev = dev, .seq = seq, .sector = sector, .q = q_ns, .d = d_ns, .c = c_ns
	};
	uint64_t k = aio_key(tid, seq);

	if (j->aio_seen[k % VJ_AIO_SEEN] != k || !aio_block(j, &b, 0))
		j->early[j->ehead++ % VJ_EARLY] = b;
}

/* The blocks of an aio host IO's io_submit that came before it. */
static void early_blocks(struct vjoin *j, uint64_t idx)
{
	uint64_t lo = j->ehead > VJ_EARLY ? j->ehead - VJ_EARLY : 0;
	const struct vj_host_io *io = &j->h[idx & j->hmask].io;

	for (uint64_t i = lo; i < j->ehead; i++) {
		struct vj_early *b = &j->early[i % VJ_EARLY];

		if (b->tid == io->tid && b->seq == io->seq && aio_block(j, b, idx))
			b->tid = 0;
	}
}

void vjoin_add_host(struct vjoin *j, const struct vj_host_io *io, uint64_t now_ns)
{
	uint64_t b = vj_host_key(io->op, io->buf) & j->hmask;
	struct vj_hent *e;

	if (j->hhead - j->htail > j->hmask) {
		host_expire_one(j);
		j->st.evicted++;
	}
	e = &j->h[j->hhead & j->hmask];
	e->io = *io;
	e->idx = j->hhead;
	e->arrive_ns = now_ns;
	e->used = 0;
	e->listed = 1;
	e->unext = VJ_NONE;
	e->uprev = j->utail[b];
	if (e->uprev == VJ_NONE)
		j->uhead[b] = e->idx;
	else
		j->h[e->uprev & j->hmask].unext = e->idx;
	j->utail[b] = j->hhead++;
	j->st.host_io++;
	if (io->kind == VJ_K_AIO) {
		uint64_t k = aio_key(io->tid, io->seq);

		j->aio_seen[k % VJ_AIO_SEEN] = k;
		if (!io->blk_q_ns)
			early_blocks(j, e->idx);
	}
}

/*
 * The earliest unused host IO of (disk, op) at buffer buf entered in
 * [lo, hi), of at most max bytes at buf; whole: exactly max bytes for the
 * whole IO, from its first buffer (a guest request of several buffers).
 */
static struct vj_hent *host_find(struct vjoin *j, int disk, uint8_t op, uint64_t buf, uint64_t lo,
				 uint64_t hi, uint64_t max, int whole)
{
	struct vj_hent *e, *next;

	for (e = vj_unused(j, op, buf); e; e = next) {
		next = vj_unused_next(j, e);
		if (vj_io_end(&e->io) + VJ_CHAIN_SLACK_NS < lo) {
			vj_unlist(j, e); /* no request now looking can claim it */
			continue;
		}
		if (e->io.disk != disk || e->io.op != op || e->io.buf != buf ||
		    e->io.enter_ns < lo || e->io.enter_ns >= hi || !e->io.bytes ||
		    (whole ? e->io.view || e->io.io_bytes != max : e->io.bytes > max))
			continue;
		return e;
	}
	return NULL;
}

/* ---- paths ---- */

/*
 * The host IOs of QEMU's submit s for guest request g: from s's buffer on,
 * each the earliest at its place after s and before the next submit of the
 * same buffer (which would own it). Returns the bytes they cover.
 */
static uint64_t host_pieces(struct vjoin *j, int disk, const struct link_vreq *g,
			    const struct vj_qent *s, uint64_t hi, struct vj_hent **pc, int *n)
{
	uint64_t bytes = (uint64_t)g->nr_sectors * 512, covered = 0;
	uint64_t lim = next_submit_at(j, s->hva, s->ts);

	lim = lim < hi ? lim : hi;
	*n = 0;
	if (s->niov > 1) {
		/* several guest buffers: only a host IO of the same iovecs, whole */
		struct vj_hent *e = host_find(j, disk, g->op, s->hva, s->ts, lim, bytes, 1);

		if (e)
			pc[(*n)++] = e;
		return e ? bytes : 0;
	}
	while (covered < bytes && *n < VJ_PIECES) {
		struct vj_hent *e =
			host_find(j, disk, g->op, s->hva + covered, s->ts, lim, bytes - covered, 0);

		if (!e)
			break;
		pc[(*n)++] = e;
		covered += e->io.bytes;
	}
	return covered;
}

/* A bounce buffer QEMU used for w instead of its buffer: found by offset (vjaddr.c). */
static int bounce_join(struct vjoin *j, const struct vj_wait *w, struct vj_path *p, uint64_t lo,
		       uint64_t hi, struct vj_hent **pc)
{
	struct vj_hent *e = vj_bounce_find(j, w, lo, hi, p->hva);

	if (!e)
		return 0;
	pc[0] = e;
	p->joined = 1;
	p->key = VJ_KEY_OFFSET;
	return 1;
}

/* The uprobe path: try to join w by QEMU's submit; emit and return 1 when joined (or forced). */
static int try_join(struct vjoin *j, const struct vj_wait *w, int force)
{
	const struct link_vreq *g = &w->g;
	uint64_t bytes = (uint64_t)g->nr_sectors * 512;
	const struct vj_qent *s = NULL;
	struct vj_hent *pc[VJ_PIECES];
	struct vj_vm *vm = vj_vm_of(j, w->disk);
	struct vj_path p;
	struct vj_win win;
	int merged = 0, n = 0;

	if (vm && vj_by_address(j, w, vm))
		return vj_addr_join(j, w, force);
	if (vj_path_init(w, &p, &win)) {
		p.unjoin = VJ_UN_NO_SUBMIT;
		s = submit_find(j, g->op, g->sector * 512, bytes, win.lo, win.hi, p.t[VJ_T_G_KICK],
				&merged);
	}
	if (s && s->hva) {
		uint64_t got = host_pieces(j, w->disk, g, s, win.hi, pc, &n);

		p.hva = s->hva;
		p.joined = got == bytes;
		p.key = VJ_KEY_UPROBE;
		p.unjoin = n ? VJ_UN_PARTIAL : VJ_UN_NO_HOST_IO;
		if (!n && force)
			n = bounce_join(j, w, &p, s->ts, win.hi, pc);
	} else if (!s && vm && vj_addr_fallback(j, w)) {
		return 1; /* QEMU's submit came before the uprobes (a re-check began) */
	} else if (!s && p.t[VJ_T_G_KICK] && w->disk >= 0 &&
		   (merged ||
		    (force && submit_covering(j, g->op, g->sector * 512, bytes, win.lo, win.hi)))) {
		p.unjoin = VJ_UN_MERGED;
	}
	if (!p.joined && !force)
		return 0;
	if (s && s->hva && vm)
		vj_addr_learn(j, w, s->hva, p.joined && p.key == VJ_KEY_UPROBE ? pc[0] : NULL);
	if (!p.joined)
		p.key = VJ_KEY_NONE;
	vj_finish(j, &p, pc, n, s ? s->ts : 0, win.hi);
	return 1;
}

void vjoin_add_guest(struct vjoin *j, int peer, uint64_t session, int disk,
		     const struct link_vreq *g, int64_t off, uint64_t unc, uint64_t now_ns)
{
	struct vj_wait w = { .g = *g,
			     .peer = peer,
			     .session = session,
			     .disk = disk,
			     .off = off,
			     .unc = unc,
			     .arrive_ns = now_ns };

	j->st.guest++;
	j->now_ns = now_ns;
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
	j->now_ns = now_ns;
	retry_waiting(j, now_ns, 0);
	while (j->htail < j->hhead && (int64_t)(now_ns - j->h[j->htail & j->hmask].arrive_ns) >=
					      (int64_t)(VJ_HOST_KEEP * j->hold_ns))
		host_expire_one(j);
}

void vjoin_flush(struct vjoin *j)
{
	retry_waiting(j, 0, 1);
}
