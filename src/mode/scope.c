// SPDX-License-Identifier: GPL-2.0
/*
 * scope: a link peer's disks, filters and records on the host (scope.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "iotracer.h"
#include "mode/scope.h"

#define BIT(i) (1ull << (i))

static uint64_t disks_of_vm(const struct scope_host *h, int vm)
{
	uint64_t m = 0;

	for (int i = 0; i < h->nr_disks && i < SCOPE_MAX_DISKS; i++)
		if (h->disks[i].vm == vm)
			m |= BIT(i);
	return m;
}

static uint64_t all_disks(const struct scope_host *h)
{
	int n = h->nr_disks < SCOPE_MAX_DISKS ? h->nr_disks : SCOPE_MAX_DISKS;

	return n == 64 ? ~0ull : BIT(n) - 1;
}

/* The QEMU with a unix chardev at path, or -1. */
static int vm_of_socket(const struct scope_host *h, const char *path)
{
	for (int v = 0; path && *path && v < h->nr_vms; v++)
		for (int s = 0; s < h->vms[v].nr_socks; s++)
			if (!strcmp(h->vms[v].socks[s], path))
				return v;
	return -1;
}

int scope_of(const struct scope_host *h, const struct scope_peer *p, uint64_t *mask, char *why,
	     size_t whylen)
{
	int vm;

	*mask = 0;
	if (p->transport == ADDR_VSOCK) {
		for (vm = 0; vm < h->nr_vms; vm++)
			if (h->vms[vm].cid && h->vms[vm].cid == p->cid)
				break;
		if (vm == h->nr_vms) {
			snprintf(why, whylen, "vsock CID %u is no traced QEMU's guest-cid", p->cid);
			return -EACCES;
		}
		*mask = disks_of_vm(h, vm);
		return 0;
	}
	vm = p->transport == ADDR_UNIX && !p->accepted ? vm_of_socket(h, p->path) : -1;
	*mask = vm >= 0 ? disks_of_vm(h, vm) : all_disks(h);
	return 0;
}

/* Disks of the scope with this serial (there may be several across QEMUs). */
static uint64_t by_serial(const struct scope_host *h, uint64_t scope, const char *s)
{
	uint64_t m = 0;

	if (!s[0])
		return 0;
	for (int i = 0; i < h->nr_disks && i < SCOPE_MAX_DISKS; i++)
		if ((scope & BIT(i)) && !strncmp(h->disks[i].serial, s, LINK_SERIAL_LEN))
			m |= BIT(i);
	return m;
}

int scope_filter(const struct scope_host *h, uint64_t scope, const struct link_filter *f,
		 uint64_t *named)
{
	uint32_t n = f->nr_serials < LINK_FILTER_MAX ? f->nr_serials : LINK_FILTER_MAX;
	int ignored = 0;
	uint64_t m;

	*named = 0;
	if (!n) {
		*named = scope; /* "every disk of mine" */
		return 0;
	}
	for (uint32_t i = 0; i < n; i++) {
		m = by_serial(h, scope, f->serials[i]);
		if (!m)
			ignored++;
		*named |= m;
	}
	return ignored;
}

uint64_t scope_wanted(const struct scope_host *h, const struct scope_claim *c, int n)
{
	uint64_t covered = 0, named = 0;

	for (int i = 0; i < n; i++) {
		if (!c[i].named)
			continue;
		covered |= c[i].scope;
		named |= c[i].named & c[i].scope;
	}
	return all_disks(h) & (~covered | named);
}

/* Non-zero stamps of a chain in order? */
static int ordered(const uint64_t *t, int n)
{
	uint64_t last = 0;

	for (int i = 0; i < n; i++) {
		if (!t[i])
			continue;
		if (t[i] < last)
			return 0;
		last = t[i];
	}
	return 1;
}

static const char *check_times(const struct link_vreq *v)
{
	const uint64_t blk[] = { v->q_ns, v->d_ns, v->c_ns };
	const uint64_t sub_done[] = { v->submit_ns, v->done_ns };
	const uint64_t sys[] = { v->sys_enter_ns, v->sys_exit_ns };

	/*
	 * Only orders the guest's tracer guarantees: the kick is not checked (a
	 * virtqueue_rq that found the ring full kicks, and the request is
	 * submitted again later: its kick then precedes its last submit).
	 */
	if (!ordered(blk, 3))
		return "block times out of order";
	if (!ordered(sub_done, 2))
		return "virtio times out of order";
	if ((v->flags & LINK_VF_HAS_SYS) && !ordered(sys, 2))
		return "syscall times out of order";
	return NULL;
}

/* The bus a guest driver layer comes by (QEMU_BUS_OTHER: unknown, any bus). */
static enum qemu_bus bus_of_layer(uint8_t drv_layer)
{
	switch (drv_layer) {
	case IT_L_VIRTIO:
		return QEMU_BUS_VIRTIO_BLK;
	case IT_L_SCSI:
		return QEMU_BUS_SCSI;
	case IT_L_NVME:
		return QEMU_BUS_NVME;
	default:
		return QEMU_BUS_OTHER;
	}
}

/*
 * Of the disks in m, those a record of this driver layer can be on: a disk
 * on the same bus, or one whose bus is not known (ide-hd: the guest sees it
 * through its SCSI layer). Serials need only be unique per bus.
 */
static uint64_t on_bus(const struct scope_host *h, uint64_t m, uint8_t drv_layer)
{
	enum qemu_bus want = bus_of_layer(drv_layer);
	uint64_t r = 0;

	for (int i = 0; i < h->nr_disks && i < SCOPE_MAX_DISKS; i++)
		if ((m & BIT(i)) && (want == QEMU_BUS_OTHER || h->disks[i].bus == QEMU_BUS_OTHER ||
				     h->disks[i].bus == want))
			r |= BIT(i);
	return r;
}

const char *scope_check_vreq(const struct scope_host *h, uint64_t scope, const struct link_vreq *v,
			     int *disk)
{
	uint64_t m = by_serial(h, scope, v->serial), sectors;
	const char *why;
	int i;

	*disk = -1;
	if (v->op >= IT_OP_MAX)
		return "unknown op";
	if (!v->serial[0])
		return "no disk serial";
	if (!m)
		return by_serial(h, all_disks(h), v->serial) ? "disk of another guest" :
							       "no disk with that serial";
	m = on_bus(h, m, v->drv_layer);
	if (!m)
		return "no disk with that serial on the record's bus";
	i = __builtin_ctzll(m); /* the first one: serials are unique per bus within a scope */
	sectors = h->disks[i].size / 512;
	/* a flush carries no sectors, and its position may be -1 (the kernel's "none") */
	if (h->disks[i].size && v->nr_sectors &&
	    (v->sector > sectors || v->nr_sectors > sectors - v->sector))
		return "sectors beyond the end of the disk";
	why = check_times(v);
	if (!why)
		*disk = i;
	return why;
}
