/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scope: which disks a link peer may touch on the host, and what its filters
 * and records may do there (docs/link.md, "Scope"). Pure: the host builds the
 * tables from the QEMU command lines (qemu.h) and the peer's link_peer_info;
 * tests build them by hand.
 *
 * A peer's scope is a bit mask over the host's disks (bit i = disks[i]):
 * - vsock: the disks of the QEMU whose -device vhost-vsock-*,guest-cid= is
 *   the peer's CID (getpeername); no such QEMU: refused.
 * - a unix socket the host dialed that is a QEMU's -chardev socket,path=:
 *   that QEMU's disks (a virtio-serial port of that guest).
 * - any other peer (tcp or unix, authenticated with the host-wide key, or
 *   keyless on a loopback tcp / 0600 unix listener, or dialed by the host):
 *   every disk.
 */
#ifndef IT_SCOPE_H
#define IT_SCOPE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/addr.h"
#include "mode/link.h"
#include "mode/qemu.h"

#define SCOPE_MAX_DISKS 64 /* bits of a scope mask */

struct scope_disk {
	char serial[LINK_SERIAL_LEN + 1]; /* "" never matches */
	int vm; /* index in scope_host.vms of its QEMU */
	uint64_t size; /* bytes; 0 = unknown (the sector bound is not checked) */
	enum qemu_bus bus; /* QEMU_BUS_OTHER: any record's bus is taken */
};

struct scope_host {
	const struct scope_disk *disks;
	int nr_disks; /* at most SCOPE_MAX_DISKS */
	const struct qemu_vm *vms;
	int nr_vms;
};

struct scope_peer {
	enum addr_kind transport;
	int accepted; /* 0: the host dialed it */
	uint32_t cid; /* vsock */
	const char *path; /* unix: the socket path ("" if none) */
};

/* The peer's scope in *mask: 0, or -EACCES with the reason in why. */
int scope_of(const struct scope_host *h, const struct scope_peer *p, uint64_t *mask, char *why,
	     size_t whylen);

/*
 * What a FILTER from a peer with this scope names: *named = the disks of the
 * scope whose serial it lists (the whole scope for a filter without serials);
 * 0 when it names none of them: such a filter changes nothing. Returns the
 * number of serials ignored (outside the scope, or matching no disk).
 */
int scope_filter(const struct scope_host *h, uint64_t scope, const struct link_filter *f,
		 uint64_t *named);

/* One peer's say over the kernel's file filter. named 0: it has none. */
struct scope_claim {
	uint64_t scope, named;
};

/*
 * The disks to trace: a disk no claim with a filter covers is traced; one
 * that such claims cover is traced when any of them names it. So a filter
 * narrows its sender's own disks and never touches another's.
 */
uint64_t scope_wanted(const struct scope_host *h, const struct scope_claim *c, int n);

/*
 * NULL when the record may be delivered, else why not: unknown op, a serial
 * that names no disk of the scope (on the record's bus, its drv_layer, when
 * the disk's bus is known), sectors beyond the disk's end (records
 * with nr_sectors 0, flushes, are not bounded), or time
 * stamps out of order (syscall enter <= exit; block Q <= D <= C; virtio
 * submit <= done; zeros are "not seen" and skipped). *disk: the
 * disk's index when delivered, else -1.
 */
const char *scope_check_vreq(const struct scope_host *h, uint64_t scope, const struct link_vreq *v,
			     int *disk);

#endif /* IT_SCOPE_H */
