/* SPDX-License-Identifier: GPL-2.0 */
/*
 * daemon internals shared by daemon.c (start, the epoll loop, summaries,
 * stop), daemon_reload.c (SIGHUP: apply a reload plan), daemon_metrics.c
 * (the /metrics glue and the block sweep), daemon_sink.c (--sink) and
 * daemon_bpf.c (the BPF side up and down, the records drained, the counters
 * read), in that order: each calls only the ones after it. Not for other
 * modules: they use daemon.h.
 */
#ifndef IT_DAEMON_INT_H
#define IT_DAEMON_INT_H

#include <stdint.h>
#include <stdio.h>

#include "iotracer.h"
#include "service/cli.h"
#include "load/loader.h"
#include "records/recbuf.h"
#include "records/uhist.h"

#define DRAIN_NS (50ull * 1000 * 1000) /* timer period: drain the ring */
#define HOLD_NS (2ull * 1000 * 1000 * 1000) /* how long a block waits for its parent */
#define WATERMARK_NS (2ull * 1000 * 1000) /* records younger than this wait a drain */
#define METRICS_NS (1000ull * 1000 * 1000) /* --metrics: rebuild the text this often */
#define SWEEP_NS (30ull * 1000 * 1000 * 1000) /* look for missed block completions this often */

struct daemon {
	const struct it_opts *o; /* &cur */
	struct it_opts cur; /* in force: the caller's at start, then each reload's */
	int cur_owned; /* cur's strings are ours (after a reload) */
	struct it_loader ld;
	struct ring_buffer *rb;
	struct recbuf recs; /* per-CPU buffers + ring buffer copies, merged */
	struct corr *corr;
	struct it_out *out;
	struct recorder *rec; /* --record, or NULL */
	FILE *json;
	FILE *text; /* human output */
	int epfd, sigfd, tfd;
	uint64_t start_ns, now_ns, next_summary_ns;
	uint64_t lost;
	struct uhists uhists; /* built from records while the BPF side keeps none */
	struct uhists carried; /* the BPF histograms of earlier attaches (reload) */
	struct uhists sum; /* a summary's: the BPF side's + uhists + carried */
	uint64_t carried_drops[IT_NR_DROPS], carried_skipped[IT_L_MAX];
	uint64_t carried_counters[IT_NR_COUNTERS]; /* of the sets a reload detached */
	/* records that ended before hists_switch_ns went by kern_hists_before */
	uint64_t hists_switch_ns;
	int kern_hists_before;
	const struct mode_ops *const *modes; /* by enum it_mode (daemon_run) */
	const struct mode_ops *mode; /* guest/host mode, NULL standalone */
	void *m; /* its state */
	int mode_fd;
	struct metrics_http *http; /* --metrics server, NULL when off */
	struct metrics_hook *mhooks; /* attach status, as reported at the last attach */
	int nr_mhooks;
	uint64_t next_metrics_ns;
	uint64_t next_sweep_ns; /* blk_sweep */
	uint64_t blk_swept; /* requests the attached side's sweeps ended as missed */
	uint64_t stale_ns, sweep_ns; /* blk_sweep: BLK_STALE_NS and SWEEP_NS, but in tests */
	uint64_t aio_sampled; /* libaio requests seen by --sample (aio_kept) */
	struct cg_cache *cg; /* cgroup id -> path (JSON, recordings, /metrics); NULL: none */
	struct ct_names *names; /* container and pod names from the node's files (container.h) */
	struct agg_labels *cg_labels; /* /metrics cgroup label values, kept across scrapes */
	struct dblame *blame; /* --blame: who held the device (docs/blame.md) */
	struct sink *sink; /* --sink: rows to ClickHouse (docs/fleet.md) */
	struct dnames *fnames; /* file names (dnames.h); NULL: --file-names 0 */
	/* the record buffers' note (recbuf.h), set on each attach: daemon_cg_note */
	void (*rec_note)(void *ctx, void *data, size_t len);
	struct mfiles *mfiles; /* --metrics-files (mfiles.h); NULL: off */
	/* reload: the start-only changes last said (reload_plan's what), said once */
	char start_said[1024];
};

/* daemon.c */
void daemon_summary(struct daemon *d, int final);

/* daemon_bpf.c: below the others, calling none of them */
int daemon_bpf_up(struct daemon *d);
int daemon_bpf_buffers(struct daemon *d);
int daemon_bpf_connect(struct daemon *d);
void daemon_bpf_down(struct daemon *d);
int daemon_watch_bpf(struct daemon *d, int op);
int daemon_mode_prepare(const struct daemon *d, struct it_opts *o, FILE *err);
void daemon_ld_config(const struct daemon *d, const struct it_opts *o, struct ld_config *c);
void daemon_mode_run(struct daemon *d);
void daemon_drain(struct daemon *d, int final);
void daemon_read_drops(struct daemon *d, uint64_t *drops);
void daemon_read_khists(struct daemon *d, struct uhists *dst);
void daemon_all_drops(struct daemon *d, uint64_t *drops);
void daemon_all_counters(struct daemon *d, uint64_t *cnt);
void daemon_current_hists(struct daemon *d);

/* daemon_metrics.c */
/* After daemon_bpf_connect: the attach's /metrics hooks and first text. 0 or -ENOMEM. */
int daemon_metrics_attach(struct daemon *d);
void daemon_stale_age(struct daemon *d);
void daemon_blk_sweep(struct daemon *d);
void daemon_metrics_tick(struct daemon *d, int force);
/* recbuf's note (IT_REC_CGROUP): a cgroup's first block request, its /metrics label now. */
void daemon_cg_note(void *ctx, void *data, size_t size);

/* daemon_sink.c */
int daemon_sink_load(struct daemon *d);
/* --sink, with the file names fn (NULL: none) */
struct fn_cache;
int daemon_sink_open(struct daemon *d, struct fn_cache *fn);
int daemon_sink_finish(struct daemon *d);
void daemon_sink_summary(struct daemon *d, int final);
void daemon_sink_metrics(struct daemon *d, FILE *f);

/* daemon_reload.c */
int daemon_reload(struct daemon *d);

#endif /* IT_DAEMON_INT_H */
