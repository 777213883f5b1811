// SPDX-License-Identifier: GPL-2.0
/*
 * hblame: host mode's --blame (hblame.h). The splits of the daemon's requests
 * arrive about 1 s after their completion, a joined guest request's path
 * usually well before (its guest record follows its host IO by the guest's
 * drain period): paths wait in a FIFO, splits in a 2-way cache by
 * request id, and each tick writes the paths at the head whose splits are
 * all in, or whose wait (HB_WAIT_NS) is over, without them then (counted).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mode/hblame.h"

struct hb_vm {
	uint32_t pid; /* 0: unused */
	char qemu[HB_NAME_LEN]; /* -name */
	char guest[HB_NAME_LEN]; /* its guest's hello */
	char dflt[32]; /* qemu:PID */
};

struct hb_held {
	struct vj_path p;
	struct link_vreq g; /* p.g points here */
	uint64_t ids[VJ_PIECES]; /* its host IOs' requests, distinct */
	int nr_ids;
	uint64_t since;
};

struct hblame {
	hb_emit_fn emit;
	void *ctx;
	struct dblame *b;
	struct dblame_host host; /* what b calls back */
	struct hb_vm vm[HB_MAX_VMS];
	struct dblame_rec *cache; /* HB_CACHE entries, id 0: empty */
	struct hb_held *q; /* ring of alloc (a power of 2) */
	size_t alloc, head, n;
	struct hb_stats st;
};

_Static_assert((HB_CACHE & (HB_CACHE - 1)) == 0, "HB_CACHE is a power of 2");

struct hblame *hblame_new(hb_emit_fn emit, void *ctx)
{
	struct hblame *hb = calloc(1, sizeof(*hb));

	if (!hb)
		return NULL;
	hb->emit = emit;
	hb->ctx = ctx;
	hb->host = (struct dblame_host){ .vm_name = hblame_vm_name,
					 .on_rec = hblame_on_rec,
					 .ctx = hb };
	return hb;
}

void hblame_free(struct hblame *hb)
{
	if (!hb)
		return;
	if (hb->b)
		dblame_set_host(hb->b, NULL);
	free(hb->cache);
	free(hb->q);
	free(hb);
}

void hblame_set_vm(struct hblame *hb, int vm, uint32_t pid, const char *qemu_name)
{
	struct hb_vm *v;

	if (vm < 0 || vm >= HB_MAX_VMS)
		return;
	v = &hb->vm[vm];
	v->pid = pid;
	snprintf(v->qemu, sizeof(v->qemu), "%s", qemu_name ? qemu_name : "");
	snprintf(v->dflt, sizeof(v->dflt), "qemu:%u", pid);
}

void hblame_set_guest(struct hblame *hb, int vm, const char *guest_name)
{
	if (vm >= 0 && vm < HB_MAX_VMS)
		snprintf(hb->vm[vm].guest, sizeof(hb->vm[vm].guest), "%s", guest_name);
}

const char *hblame_vm_name(void *ctx, uint32_t pid)
{
	const struct hblame *hb = ctx;

	for (int i = 0; pid && i < HB_MAX_VMS; i++) {
		const struct hb_vm *v = &hb->vm[i];

		if (v->pid != pid)
			continue;
		return *v->qemu ? v->qemu : *v->guest ? v->guest : v->dflt;
	}
	return NULL;
}

int hblame_attach(struct hblame *hb, struct dblame *b)
{
	int ret;

	if (!hb->cache && !(hb->cache = calloc(HB_CACHE, sizeof(*hb->cache))))
		return -ENOMEM;
	ret = dblame_set_host(b, &hb->host);
	if (!ret)
		hb->b = b;
	return ret;
}

/* The first of id's two slots (an even one). */
static struct dblame_rec *set_of(const struct hblame *hb, uint64_t id)
{
	return &hb->cache[((id * 0x9E3779B97F4A7C15ull) >> 32) & (HB_CACHE - 2)];
}

/* id's split; an entry of another id when it is not in. */
static const struct dblame_rec *slot_of(const struct hblame *hb, uint64_t id)
{
	const struct dblame_rec *s = set_of(hb, id);

	return s[0].id == id ? &s[0] : &s[1];
}

void hblame_on_rec(void *ctx, const struct dblame_rec *e)
{
	struct hblame *hb = ctx;
	struct dblame_rec *s;

	if (!hb->cache || !e->id)
		return;
	/* the empty slot, else the older split (ids grow with time) */
	s = set_of(hb, e->id);
	s[s[1].id < s[0].id] = *e;
}

static void hold(struct hblame *hb, const struct vj_path *p, const uint64_t *ids, int nr,
		 uint64_t now)
{
	struct hb_held *h;

	if (hb->n == hb->alloc) {
		size_t a = hb->alloc ? 2 * hb->alloc : 64;
		struct hb_held *n = malloc(a * sizeof(*n));

		if (!n) {
			/* no room to wait: written now, its blame counted missing */
			hb->st.missing++;
			hb->emit(hb->ctx, p, NULL, 1);
			return;
		}
		for (size_t i = 0; i < hb->n; i++) {
			n[i] = hb->q[(hb->head + i) & (hb->alloc - 1)];
			n[i].p.g = &n[i].g;
		}
		free(hb->q);
		hb->q = n;
		hb->alloc = a;
		hb->head = 0;
	}
	h = &hb->q[(hb->head + hb->n++) & (hb->alloc - 1)];
	h->p = *p;
	h->g = *p->g;
	h->p.g = &h->g;
	memcpy(h->ids, ids, (size_t)nr * sizeof(*ids));
	h->nr_ids = nr;
	h->since = now;
	hb->st.held++;
}

void hblame_path(struct hblame *hb, const struct vj_path *p, uint64_t now)
{
	uint64_t ids[VJ_PIECES];
	int nr = 0, k;

	for (int i = 0; hb->b && p->joined && i < p->nr_h && i < VJ_PIECES; i++) {
		if (!p->hp[i].req)
			continue;
		for (k = 0; k < nr && ids[k] != p->hp[i].req; k++)
			;
		if (k == nr)
			ids[nr++] = p->hp[i].req;
	}
	if (!nr)
		hb->emit(hb->ctx, p, NULL, 0);
	else
		hold(hb, p, ids, nr, now);
}

static int ready(const struct hblame *hb, const struct hb_held *h)
{
	for (int i = 0; i < h->nr_ids; i++)
		if (slot_of(hb, h->ids[i])->id != h->ids[i])
			return 0;
	return 1;
}

/* h's line: its requests' splits summed, or none (missing) when one is not in. */
static void write_held(struct hblame *hb, const struct hb_held *h)
{
	struct dblame_rec sum = { 0 };
	int missing = 0;

	for (int i = 0; i < h->nr_ids && !missing; i++) {
		const struct dblame_rec *e = slot_of(hb, h->ids[i]);

		missing = e->id != h->ids[i] || e->lost;
		if (!missing)
			dblame_rec_merge(hb->b, &sum, e);
	}
	if (missing)
		hb->st.missing++;
	else
		hb->st.with_blame++;
	hb->emit(hb->ctx, &h->p, missing ? NULL : &sum, missing);
}

static void drain(struct hblame *hb, uint64_t now, int all)
{
	while (hb->n) {
		struct hb_held *h = &hb->q[hb->head];

		if (!all && !ready(hb, h) && now < h->since + HB_WAIT_NS)
			break;
		write_held(hb, h);
		hb->head = (hb->head + 1) & (hb->alloc - 1);
		hb->n--;
	}
}

void hblame_tick(struct hblame *hb, uint64_t now)
{
	drain(hb, now, 0);
}

void hblame_flush(struct hblame *hb)
{
	drain(hb, 0, 1);
}

const struct hb_stats *hblame_stats(const struct hblame *hb)
{
	return &hb->st;
}
