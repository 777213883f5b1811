/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hostout: what host mode writes: the guest records as received and the
 * joined paths (JSON lines, a --live text line), and its counts with what it
 * shows of them: the summary (a text block, and a host_summary JSON line),
 * the --metrics families of the link and the join (docs/metrics.md), the
 * per-guest session table and the stage histograms of the joined paths. No
 * libbpf: host.c gathers the numbers (uprobe events, BPF run time), this file
 * keeps and prints them. The JSON writers fill w; the caller writes the line.
 */
#ifndef IT_HOSTOUT_H
#define IT_HOSTOUT_H

#include <stdint.h>
#include <stdio.h>

#include "records/hist.h"
#include "iotracer.h"
#include "lib/addr.h"
#include "lib/jsonw.h"
#include "mode/hblame.h"
#include "mode/link.h"
#include "mode/vjoin.h"

#define HOST_MAX_PEERS 16

/* A guest session seen (kept after its link went down). */
struct hpeer {
	uint64_t session;
	char name[ADDR_NAME_LEN];
	int64_t off; /* host - guest */
	uint64_t unc, samples, records;
	uint64_t malformed, filter_ignored;
};

struct hostout {
	uint64_t qemu_ev[IT_QEV_MAX]; /* uprobe events by enum it_qemu_ev */
	uint64_t vreq_rx, host_io;
	uint64_t records_malformed, filter_ignored;
	uint64_t qemu_exited; /* traced QEMUs that exited (their uprobes detached) */
	struct lhist *stage[VJ_STAGES]; /* joined paths' stages, ns (negative: 0) */
	struct hpeer peers[HOST_MAX_PEERS];
	int nr_peers;
};

/* One traced QEMU: which path its guests' requests take, and its probes (hprobe.h). */
struct hostout_vm {
	int pid;
	const char *uprobes; /* why its uprobes are on ("address": they are off) */
	const char *recheck; /* the re-check under way ("none") */
	const struct vj_vm_stats *st;
	uint64_t attaches, detaches; /* of its blk_aio uprobes */
	uint64_t pinned; /* guests without buffer addresses that kept it on uprobes */
};

/* What a summary shows besides the counts above, taken when it is written. */
struct hostout_now {
	const struct vj_stats *st;
	struct link_stats ls;
	uint64_t elapsed_ns; /* since host mode started */
	uint64_t bpf_ns; /* BPF run time of the loaded programs */
	double cpu_pct; /* the daemon's CPU, % of a core */
	const struct hb_stats *blame; /* --blame: joined paths and their host blame; NULL: off */
	const struct hostout_vm *vms;
	int nr_vms;
	/* the uprobe and KVM programs' runs (bpf_stats); runs_known 0: statistics off */
	uint64_t uprobe_runs, kvm_runs;
	int runs_known;
};

/* The stage histograms. 0 or -ENOMEM (hostout_free() then). */
int hostout_init(struct hostout *s);
void hostout_free(struct hostout *s);

/* The entry of a guest session (by its hello's session id), NULL when the table is full. */
struct hpeer *hostout_peer(struct hostout *s, const struct link_peer_info *pi);
/* The clock and record count of a guest session after a batch of n records. */
void hostout_note_peer(struct hostout *s, const struct link_peer_info *pi, int64_t host_minus_guest,
		       uint64_t unc, uint32_t n);

/* A guest record as received (a guest_vreq line: written before it is acknowledged). */
void hostout_json_vreq(struct jw *w, uint64_t session, const struct link_vreq *v);
/*
 * A joined (or given up) path: its line's fields (the caller opens and closes the
 * object: --blame adds "host_blame", host.c); the --live text line.
 */
void hostout_json_path_fields(struct jw *w, const struct vj_path *p);
void hostout_live_path(FILE *f, const struct vj_path *p);

/* A joined path's stages into the histograms (an unjoined path adds nothing). */
void hostout_add_path(struct hostout *s, const struct vj_path *p);

/* Uprobe hits (blk_aio + virtio_notify) per QEMU block IO (blk_aio), 0 without one. */
double hostout_hits(const struct hostout *s);

void hostout_text(FILE *f, const struct hostout *s, const struct hostout_now *n);
/* The host_summary object. */
void hostout_json(struct jw *w, const struct hostout *s, const struct hostout_now *n, int final);
/* --metrics: peers_up guests connected (hello exchanged) and the join's counts. */
void hostout_metrics(FILE *f, uint64_t peers_up, const struct vj_stats *st);

#endif /* IT_HOSTOUT_H */
