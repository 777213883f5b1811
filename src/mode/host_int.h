/* SPDX-License-Identifier: GPL-2.0 */
/*
 * host mode internals, shared by host.c (the mode: setup, the link's
 * callbacks, the summary) and hostio.c (QEMU's host IO and events into the
 * join). Not for other modules.
 */
#ifndef IT_HOST_INT_H
#define IT_HOST_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/jsonw.h"
#include "mode/hblame.h"
#include "mode/hostout.h"
#include "mode/link.h"
#include "mode/qemu.h"
#include "mode/scope.h"
#include "mode/vjoin.h"
#include "service/cli.h"
#include "service/daemon.h"

struct corr_req;
struct hprobe;

#define HOST_MAX_DISKS 64
#define HOST_HOLD_NS (2ull * 1000 * 1000 * 1000)
#define HOST_NO_CLOCK_UNC (1000ull * 1000 * 1000) /* before the first ping: +- 1 s */

struct hdisk {
	pid_t pid; /* its QEMU */
	struct qemu_disk d;
	int wanted; /* in the kernel file filter */
};

/* A connected guest (link_peer_user): what it may touch, what it asked for. */
struct hconn {
	uint64_t scope; /* scope.h: bit i = disks[i] */
	uint64_t named; /* its filter's disks within the scope; 0 = no say */
	uint32_t pinned; /* no buffer addresses: the VMs it keeps on uprobes (bit = QEMU index) */
};

struct host {
	struct mode_env env;
	struct link *link;
	struct vjoin *vj;
	struct hdisk disks[HOST_MAX_DISKS];
	int nr_disks;
	pid_t qemu[CLI_MAX_QEMU];
	int nr_qemu;
	struct qemu_vm vms[CLI_MAX_QEMU]; /* per QEMU: vsock CID, chardev sockets */
	struct scope_disk sdisks[HOST_MAX_DISKS]; /* disks[] as scope.c sees them */
	struct scope_host scope;
	uint64_t next_qemu_check; /* once a second */
	uint64_t next_filter_note; /* ignored serials: a note per second at most */
	struct hprobe *hp; /* the QEMUs' uprobes, KVM's tracepoints */
	uint64_t start_ns, cpu_start_ns;
	struct hostout sum; /* counts, peers, stages (hostout.h) */
	struct hblame *hb; /* --blame: VM names, paths held for their host blame */
	int blame; /* --blame is on */
	struct dblame *env_blame; /* the daemon's engine (--blame) */
};

/* hostio.c: a record the correlator does not know (1: consumed), a finished request. */
int hostio_record(struct host *h, const void *data, size_t size);
void hostio_request(struct host *h, const struct corr_req *r);

#endif /* IT_HOST_INT_H */
