// SPDX-License-Identifier: GPL-2.0
/*
 * vjaddr: vjoin's address path and each VM's state (vjoin.h, vjoin_int.h);
 * the clock it reads is kept by vjpath.c, below it.
 *
 * A VM on the uprobe path learns: every guest request QEMU's submit was
 * found for gives a sample (its buffer's GPA, the submit's HVA) to the VM's
 * map (gpamap.h), every joined one a bound on the VM's clock, and the
 * address path is tried beside it on the same request: when it finds what
 * the uprobe path found VJ_READY times in a row, the VM is ready and its
 * caller may take the uprobes away (host mode: hprobe.c).
 *
 * The clock: a host IO starts after its guest kick and ends before its guest
 * interrupt (both real events), so host - guest is at most each joined IO's
 * enter - kick and at least its end - interrupt. Over the VM's recent joined
 * paths (vj_clk_bounds, vjpath.c) these bounds are ~100-150 us apart in the x86 TCG lab,
 * where the ping's uncertainty is 200-650 us: the window they give a
 * request's host IO ends before the next request at the same buffer (a
 * reused buffer, the common case) can have started, which the uprobe path
 * got from the next submit. Tried offline first on a lab run's 2,960 paths
 * (7 disks): 0 wrong, none of the 40 requests without host IO given a
 * neighbour's, where the ping's window gave 37 neighbours a closer fit.
 */
#include <string.h>

#include "iotracer.h"
#include "mode/vjoin_int.h"

#define VJ_RC_UNMAPPED_N 4 /* unmapped addresses in the window: re-check */
#define VJ_RC_RATE_N (VJ_WIN * 3 / 4) /* unjoined of a full window: re-check */
#define VJ_BACKOFF_MIN_NS (10ull * 1000 * 1000 * 1000)
#define VJ_BACKOFF_MAX_NS (600ull * 1000 * 1000 * 1000)
#define VJ_BOUNCE_SCAN 1024 /* newest host IOs searched for a bounce buffer's */

/*
 * Which path w takes: the address path on it, and on the uprobe path too for
 * a request from before the uprobes came back (its submit was never seen)
 * once the VM has a map.
 */
int vj_by_address(struct vjoin *j, const struct vj_wait *w, const struct vj_vm *vm)
{
	uint64_t kick = vj_guest_kick(&w->g), tol = w->unc + VJ_SLACK_NS;

	if (vm->st.mode == VJ_VM_ADDRESS)
		return 1;
	return vm->map.n && kick &&
	       (int64_t)kick + w->off + (int64_t)tol < (int64_t)vm->uprobes_since;
}

void vjoin_disk(struct vjoin *j, int disk, int vm, int raw)
{
	if (disk < 0 || disk >= VJ_MAX_DISKS || vm < 0 || vm >= VJ_MAX_VMS)
		return;
	j->disk_vm[disk] = (int16_t)vm;
	j->disk_raw[disk] = !!raw;
}

void vjoin_set_maps(struct vjoin *j, vj_maps_fn fn, void *ctx)
{
	j->maps = fn;
	j->maps_ctx = ctx;
}

const struct vj_vm_stats *vjoin_vm(const struct vjoin *j, int vm)
{
	return vm >= 0 && vm < VJ_MAX_VMS ? &j->vm[vm].st : NULL;
}

/*
 * A re-check that found the map as it was (join rate only) makes the next
 * one wait twice as long: a disk whose requests have no host IO (a sparse
 * image's reads) does not bring the uprobes back every few seconds.
 */
void vjoin_vm_mode(struct vjoin *j, int vmi, int mode)
{
	struct vj_vm *vm;

	if (vmi < 0 || vmi >= VJ_MAX_VMS)
		return;
	vm = &j->vm[vmi];
	if (mode == VJ_VM_ADDRESS && vm->st.mode != VJ_VM_ADDRESS) {
		if (vm->recheck_reason == VJ_RC_JOIN_RATE && vm->map.gen == vm->gen_at_recheck)
			vm->backoff_ns = vm->backoff_ns ? vm->backoff_ns * 2 : VJ_BACKOFF_MIN_NS;
		else
			vm->backoff_ns = VJ_BACKOFF_MIN_NS;
		if (vm->backoff_ns > VJ_BACKOFF_MAX_NS)
			vm->backoff_ns = VJ_BACKOFF_MAX_NS;
		vm->next_recheck_ns = j->now_ns + vm->backoff_ns;
		vm->recheck_reason = VJ_RC_NONE;
	}
	if (mode == VJ_VM_UPROBES && (vm->st.mode != VJ_VM_UPROBES || !vm->uprobes_since)) {
		vm->recheck_reason = vm->st.recheck;
		vm->gen_at_recheck = vm->map.gen;
		vm->uprobes_since = j->now_ns;
	}
	vm->st.mode = mode;
	vm->st.ready = 0;
	vm->st.recheck = VJ_RC_NONE;
	vm->agree_run = 0;
	vm->win_n = vm->win_next = vm->win_unmapped = vm->win_bad = 0;
}

/* ---- the VM's clock, as vjpath.c keeps it ---- */

/*
 * Where a host IO of w may be on the address path: entered at or after
 * *elo, ended by *xhi (host clock), from the VM's clock bounds. 0 when they
 * cannot tell (vj_clk_bounds): the address path must not guess then.
 */
static int addr_window(struct vj_vm *vm, const struct vj_win *win, uint64_t *elo, uint64_t *xhi)
{
	int64_t lo, hi, t;

	if (!win->kick || !win->irq || !vj_clk_bounds(vm, win->kick, &lo, &hi))
		return 0;
	t = (int64_t)win->kick + lo - (int64_t)VJ_CLK_SLACK_NS;
	*elo = t > 0 ? (uint64_t)t : 0;
	*xhi = (uint64_t)((int64_t)win->irq + hi) + VJ_CLK_SLACK_NS;
	return 1;
}

/* ---- finding host IOs by address ---- */

/*
 * The earliest unused host IO of (disk, op) at buf that entered at or after
 * elo and ended by xhi, of at most max bytes at buf; whole: exactly max
 * bytes for the whole IO from its first buffer.
 */
static struct vj_hent *addr_find(struct vjoin *j, int disk, uint8_t op, uint64_t buf, uint64_t elo,
				 uint64_t xhi, uint64_t max, int whole)
{
	struct vj_hent *e, *next;

	for (e = vj_unused(j, op, buf); e; e = next) { /* oldest first: vjoin_int.h */
		next = vj_unused_next(j, e);
		if (vj_io_end(&e->io) + VJ_CHAIN_SLACK_NS < elo) {
			vj_unlist(j, e); /* no request now looking can claim it */
			continue;
		}
		if (e->io.disk != disk || e->io.op != op || e->io.buf != buf ||
		    e->io.enter_ns < elo || vj_io_end(&e->io) > xhi || !e->io.bytes ||
		    (whole ? e->io.view || e->io.io_bytes != max : e->io.bytes > max))
			continue;
		return e;
	}
	return NULL;
}

/*
 * The host IOs of a guest request whose buffer is at hva: pieces tiling
 * [hva, hva + bytes) (a qcow2 cluster boundary splits one), else one host IO
 * of the whole length from hva (the guest's buffer in several segments, each
 * its own iovec). Returns the bytes they cover.
 */
static uint64_t addr_pieces(struct vjoin *j, int disk, uint8_t op, uint64_t hva, uint64_t bytes,
			    uint64_t elo, uint64_t xhi, struct vj_hent **pc, int *n)
{
	uint64_t covered = 0;
	struct vj_hent *e;

	*n = 0;
	while (covered < bytes && *n < VJ_PIECES) {
		e = addr_find(j, disk, op, hva + covered, elo, xhi, bytes - covered, 0);
		if (!e)
			break;
		pc[(*n)++] = e;
		covered += e->io.bytes;
	}
	if (covered == bytes)
		return covered;
	e = addr_find(j, disk, op, hva, elo, xhi, bytes, 1);
	if (!e)
		return covered;
	*n = 1;
	pc[0] = e;
	return bytes;
}

struct vj_hent *vj_bounce_find(struct vjoin *j, const struct vj_wait *w, uint64_t lo, uint64_t hi,
			       uint64_t hva)
{
	const struct link_vreq *g = &w->g;
	uint64_t bytes = (uint64_t)g->nr_sectors * 512, first;
	struct vj_hent *best = NULL;

	if (w->disk < 0 || w->disk >= VJ_MAX_DISKS || !j->disk_raw[w->disk] || !bytes)
		return NULL;
	first = j->hhead - j->htail > VJ_BOUNCE_SCAN ? j->hhead - VJ_BOUNCE_SCAN : j->htail;
	for (uint64_t i = first; i < j->hhead; i++) {
		struct vj_hent *e = &j->h[i & j->hmask];

		if (e->used || e->io.disk != w->disk || e->io.op != g->op || e->io.view ||
		    e->io.io_offset != g->sector * 512 || e->io.io_bytes != bytes ||
		    e->io.enter_ns < lo || vj_io_end(&e->io) > hi || e->io.buf == hva ||
		    vj_is_guest_ram(j, w->disk, e->io.buf))
			continue;
		if (!best || e->io.enter_ns < best->io.enter_ns)
			best = e;
	}
	return best;
}

int vj_is_guest_ram(struct vjoin *j, int disk, uint64_t buf)
{
	struct vj_vm *vm = vj_vm_of(j, disk);

	return vm && gpamap_is_ram(&vm->map, buf);
}

/* ---- the address path ---- */

/* An address-path outcome into the VM's window; a re-check when they go bad. */
static void addr_outcome(struct vjoin *j, struct vj_vm *vm, int o)
{
	uint8_t *slot = &vm->win[vm->win_next];

	if (vm->win_n == VJ_WIN) { /* the oldest outcome leaves the window */
		vm->win_unmapped -= *slot == VJ_O_UNMAPPED;
		vm->win_bad -= *slot != VJ_O_JOINED;
	} else {
		vm->win_n++;
	}
	*slot = (uint8_t)o;
	vm->win_unmapped += o == VJ_O_UNMAPPED;
	vm->win_bad += o != VJ_O_JOINED;
	vm->win_next = (vm->win_next + 1) % VJ_WIN;
	if (vm->st.recheck)
		return;
	if (vm->win_unmapped >= VJ_RC_UNMAPPED_N)
		vm->st.recheck = VJ_RC_UNMAPPED;
	else if (vm->win_n == VJ_WIN && vm->win_bad >= VJ_RC_RATE_N &&
		 j->now_ns >= vm->next_recheck_ns)
		vm->st.recheck = VJ_RC_JOIN_RATE;
	if (vm->st.recheck)
		vm->st.rechecks[vm->st.recheck]++;
}

/* What the address path made of a guest request (addr_try). */
struct vj_addr {
	int how; /* enum gpamap_how; GPAMAP_NONE also without an address */
	int clock_ok; /* the VM's clock bounds can tell its host IO from a neighbour's */
	uint64_t hva, elo, xhi; /* its buffer in QEMU; its host IO's time window */
	uint64_t got; /* bytes of its buffer the pieces cover */
};

/* The address path's answer for w: its pieces in pc (nothing marked used). */
static void addr_try(struct vjoin *j, struct vj_vm *vm, const struct vj_wait *w,
		     const struct vj_win *win, struct vj_addr *a, struct vj_hent **pc, int *n)
{
	uint64_t bytes = (uint64_t)w->g.nr_sectors * 512;

	memset(a, 0, sizeof(*a));
	*n = 0;
	if (w->g.gpa)
		a->how = gpamap_hva(&vm->map, w->g.gpa, bytes, &a->hva);
	a->clock_ok = addr_window(vm, win, &a->elo, &a->xhi);
	if (a->how != GPAMAP_NONE && a->clock_ok)
		a->got = addr_pieces(j, w->disk, w->g.op, a->hva, bytes, a->elo, a->xhi, pc, n);
}

static int addr_unjoin(const struct link_vreq *g, const struct vj_addr *a, int n)
{
	if (!g->gpa)
		return VJ_UN_NO_ADDRESS;
	if (a->how == GPAMAP_NONE)
		return VJ_UN_UNMAPPED;
	if (!a->clock_ok)
		return VJ_UN_CLOCK;
	if (n)
		return VJ_UN_PARTIAL;
	return a->how == GPAMAP_NEAR ? VJ_UN_UNMAPPED : VJ_UN_NO_HOST_IO;
}

/* The VM's counts of an address-path request, and what its outcome says. */
static void addr_count(struct vjoin *j, struct vj_vm *vm, const struct vj_path *p)
{
	vm->st.no_address += p->unjoin == VJ_UN_NO_ADDRESS && !p->joined;
	vm->st.unmapped += p->unjoin == VJ_UN_UNMAPPED && !p->joined;
	vm->st.clock_stale += p->unjoin == VJ_UN_CLOCK && !p->joined;
	vm->st.addr_joined += p->joined;
	vm->st.addr_unjoined += !p->joined;
	vm->st.bounced += p->joined && p->key == VJ_KEY_OFFSET;
	if (vm->st.mode != VJ_VM_ADDRESS || !p->g->gpa)
		return;
	addr_outcome(j, vm,
		     p->joined			 ? VJ_O_JOINED :
		     p->unjoin == VJ_UN_UNMAPPED ? VJ_O_UNMAPPED :
						   VJ_O_UNJOINED);
}

/*
 * The address path for w: 1 when emitted (joined, or given up when forced or
 * when nothing later can join it). A VM whose clock bounds went stale (no
 * joined path for a while) asks for a re-check: its uprobes come back, the
 * next requests re-anchor the bounds, and w, still waiting, joins then.
 * fallback (the uprobe path found no submit for w): joined by an exact
 * address or nothing is done (0).
 */
static int addr_join(struct vjoin *j, const struct vj_wait *w, int force, int fallback)
{
	struct vj_vm *vm = vj_vm_of(j, w->disk);
	uint64_t bytes = (uint64_t)w->g.nr_sectors * 512;
	struct vj_hent *pc[VJ_PIECES];
	struct vj_path p;
	struct vj_win win;
	struct vj_addr a;
	int n = 0;

	if (!vj_path_init(w, &p, &win) || !vm) {
		if (!force || fallback)
			return 0;
		vj_finish(j, &p, pc, 0, 0, win.hi);
		return 1;
	}
	addr_try(j, vm, w, &win, &a, pc, &n);
	p.joined = a.got == bytes && (!fallback || a.how == GPAMAP_EXACT);
	if (fallback && !p.joined)
		return 0;
	p.hva = a.hva;
	p.key = VJ_KEY_ADDRESS;
	p.unjoin = addr_unjoin(&w->g, &a, n);
	if (!a.clock_ok && vm->st.mode == VJ_VM_ADDRESS && !vm->st.recheck) {
		vm->st.recheck = VJ_RC_CLOCK;
		vm->st.rechecks[VJ_RC_CLOCK]++;
	}
	/* no address, or none the map knows: nothing later can join it */
	force |= !w->g.gpa || a.how == GPAMAP_NONE;
	if (!p.joined && force && a.hva && a.clock_ok && !n) {
		pc[0] = vj_bounce_find(j, w, a.elo, a.xhi, a.hva);
		n = p.joined = pc[0] != NULL;
		p.key = n ? VJ_KEY_OFFSET : p.key;
	}
	if (!p.joined && !force)
		return 0;
	if (p.joined && a.how == GPAMAP_NEAR)
		gpamap_confirm(&vm->map, w->g.gpa, bytes);
	addr_count(j, vm, &p);
	if (!p.joined)
		p.key = VJ_KEY_NONE;
	vj_finish(j, &p, pc, n, 0, win.hi);
	return 1;
}

int vj_addr_join(struct vjoin *j, const struct vj_wait *w, int force)
{
	return addr_join(j, w, force, 0);
}

int vj_addr_fallback(struct vjoin *j, const struct vj_wait *w)
{
	return addr_join(j, w, 0, 1);
}

/* ---- learning on the uprobe path ---- */

static void learn_sample(struct vjoin *j, struct vj_vm *vm, const struct link_vreq *g, uint64_t hva)
{
	uint64_t lo = 0, hi = 0;

	if (!gpamap_is_ram(&vm->map, hva) && j->maps &&
	    j->maps(j->maps_ctx, vm - j->vm, hva, &lo, &hi))
		lo = hi = 0;
	gpamap_add(&vm->map, g->gpa, hva, (uint64_t)g->nr_sectors * 512, lo, hi);
	vm->st.samples = vm->map.samples;
	vm->st.conflicts = vm->map.conflicts;
	vm->st.segments = vm->map.n;
}

void vj_addr_learn(struct vjoin *j, const struct vj_wait *w, uint64_t hva, struct vj_hent *first)
{
	struct vj_vm *vm = vj_vm_of(j, w->disk);
	uint64_t bytes = (uint64_t)w->g.nr_sectors * 512;
	struct vj_hent *pc[VJ_PIECES];
	struct vj_win win;
	struct vj_path q;
	struct vj_addr a;
	int an = 0, aj, agree;

	if (!vm || !w->g.gpa)
		return;
	learn_sample(j, vm, &w->g, hva);
	vj_path_init(w, &q, &win);
	addr_try(j, vm, w, &win, &a, pc, &an);
	if (!a.clock_ok || vm->st.mode != VJ_VM_UPROBES)
		return;
	aj = a.got == bytes;
	agree = a.hva == hva && (first ? aj && pc[0] == first : !aj);
	if (!agree) {
		vm->st.disagree++;
		vm->agree_run = 0;
		return;
	}
	vm->st.agree++;
	if (++vm->agree_run >= VJ_READY && !vm->st.ready) {
		vm->st.ready = 1;
		vm->st.calibrations++;
	}
}
