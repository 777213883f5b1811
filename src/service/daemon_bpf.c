// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon's BPF side, below daemon.c, daemon_reload.c and daemon_metrics.c
 * (they call down here; nothing here calls them): up (load, attach, the record
 * buffers), connect (the attach report, the guest or host mode started on it)
 * and down; the records drained from the buffers into the correlator; the
 * drops, counters and histograms read from the attached side with what earlier
 * attaches carried; the epoll registration of the ring and the mode's fd.
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <bpf/libbpf.h>

#include "lib/abi.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/parse.h"
#include "iotracer.h"
#include "iotracer.skel.h"
#include "load/loader.h"
#include "records/corr.h"
#include "records/output.h"
#include "records/recbuf.h"
#include "records/uhist.h"
#include "service/daemon.h"
#include "service/daemon_int.h"
#include "blame/dblame.h"
#include "service/dnames.h"

/*
 * --blame under -m: the BPF side keeps every block request's record (rodata
 * keep_all_blocks); one that -m would have thinned there (its Q2C below it, the
 * kernel's own test) feeds blame as a culprit and goes no further. 1: taken.
 */
static int blame_thinned(struct daemon *d, const void *data, size_t size)
{
	const struct it_block_rec *b = data;

	if (!d->blame || !d->o->min_lat_ns || size < sizeof(*b) || b->hdr.type != IT_REC_BLOCK ||
	    b->c_ns - b->q_ns >= d->o->min_lat_ns)
		return 0;
	dblame_block(d->blame, b);
	return 1;
}

/* recbuf_fn: one record, in end-time order. */
static void on_record(void *ctx, void *data, size_t size)
{
	struct daemon *d = ctx;
	int kern = d->ld.kern_hists;

	if (d->fnames && dnames_record(d->fnames, data, size))
		return; /* a file's name, before the records that name it (by time) */
	/* a reload switched the histograms: this record may be from before */
	if (d->hists_switch_ns && recbuf_end_ns(data, size) < d->hists_switch_ns)
		kern = d->kern_hists_before;
	if (!kern)
		uhists_record(&d->uhists, data, size);
	if (blame_thinned(d, data, size))
		return;
	if (d->m && d->mode->record && d->mode->record(d->m, data, size))
		return;
	if (corr_feed(d->corr, data, size, d->now_ns))
		d->lost++;
}

/* The mode's periodic work (its epoll fd is readable, or each drain). */
void daemon_mode_run(struct daemon *d)
{
	if (d->m && d->mode->run)
		d->mode->run(d->m, it_mono_ns());
}

/*
 * Read every record published so far, in end-time order, but those that
 * ended in the last WATERMARK_NS: a record of another CPU that ended before
 * them may still be being written (recbuf.h). final: all of them.
 */
void daemon_drain(struct daemon *d, int final)
{
	d->now_ns = it_mono_ns();
	if (d->rb && ring_buffer__consume(d->rb) < 0)
		d->lost++;
	recbuf_drain(&d->recs, final ? UINT64_MAX : d->now_ns - WATERMARK_NS, on_record, d);
	corr_tick(d->corr, d->now_ns);
	if (d->fnames)
		dnames_tick(d->fnames);
	/* records up to the watermark are in: split what their horizon passed (docs/blame.md) */
	if (d->blame && !final)
		dblame_tick(d->blame, d->now_ns - WATERMARK_NS);
	daemon_mode_run(d);
}

/* The drop counters of the attached BPF side (without what was carried). */
void daemon_read_drops(struct daemon *d, uint64_t *drops)
{
	uint64_t cnt[IT_NR_COUNTERS];

	it_loader_counts(&d->ld, drops, cnt);
	/* Issued but never seen completing (and still in flight, mid-run). */
	if (cnt[IT_CNT_BLK_ISSUED] > cnt[IT_CNT_BLK_COMPLETED])
		drops[IT_L_BLOCK * IT_DROP_KINDS + IT_DROP_MISSED] =
			cnt[IT_CNT_BLK_ISSUED] - cnt[IT_CNT_BLK_COMPLETED];
	/* upper bios (dm, md) queued and never seen ending */
	if (cnt[IT_CNT_STK_UPPER] > cnt[IT_CNT_STK_UPPER_DONE])
		drops[IT_L_STACK * IT_DROP_KINDS + IT_DROP_MISSED] =
			cnt[IT_CNT_STK_UPPER] - cnt[IT_CNT_STK_UPPER_DONE];
}

static void add_khist(void *ctx, const struct it_hist_key *key, const struct it_hist_val *val)
{
	uhists_add(ctx, key, val);
}

/* Add the BPF side's histograms (from their mapping: no syscall) to dst. */
void daemon_read_khists(struct daemon *d, struct uhists *dst)
{
	it_loader_hists(&d->ld, add_khist, dst);
}

/* Drops so far: the attached BPF side's and those carried over re-attaches. */
void daemon_all_drops(struct daemon *d, uint64_t *drops)
{
	memset(drops, 0, IT_NR_DROPS * sizeof(*drops));
	if (d->ld.skel) /* NULL only after a failed re-attach */
		daemon_read_drops(d, drops);
	for (int i = 0; i < IT_NR_DROPS; i++)
		drops[i] += d->carried_drops[i];
}

/* The histograms as of now into d->sum: the BPF side's, those built from records, carried. */
void daemon_current_hists(struct daemon *d)
{
	uhists_clear(&d->sum);
	if (d->ld.skel)
		daemon_read_khists(d, &d->sum);
	uhists_merge(&d->sum, &d->uhists);
	uhists_merge(&d->sum, &d->carried);
}

/* The event counters of the run: the attached side's and those a reload detached. */
void daemon_all_counters(struct daemon *d, uint64_t *cnt)
{
	memset(cnt, 0, IT_NR_COUNTERS * sizeof(*cnt));
	if (d->ld.skel)
		it_loader_counts(&d->ld, NULL, cnt);
	for (int i = 0; i < IT_NR_COUNTERS; i++)
		cnt[i] += d->carried_counters[i];
}

/* Add (EPOLL_CTL_ADD) or remove (EPOLL_CTL_DEL) the ring buffer's and the mode's fds. */
int daemon_watch_bpf(struct daemon *d, int op)
{
	struct epoll_event ev = { .events = EPOLLIN };

	ev.data.fd = ring_buffer__epoll_fd(d->rb);
	if (epoll_ctl(d->epfd, op, ev.data.fd, &ev) && op == EPOLL_CTL_ADD)
		return -errno;
	if (op == EPOLL_CTL_ADD)
		d->mode_fd = d->m && d->mode->epoll_fd ? d->mode->epoll_fd(d->m) : -1;
	ev.data.fd = d->mode_fd;
	if (d->mode_fd >= 0 && epoll_ctl(d->epfd, op, d->mode_fd, &ev) && op == EPOLL_CTL_ADD)
		return -errno;
	if (op == EPOLL_CTL_DEL)
		d->mode_fd = -1;
	return 0;
}

static void report_attach(struct daemon *d)
{
	for (int i = 0; i < d->ld.nr_hooks; i++) {
		const struct it_hook_state *h = &d->ld.hooks[i];

		if (it_loader_hook_hidden(&d->ld, i))
			continue;
		out_attach(d->out, abi_layer_name(h->layer), h->name, it_method_name(h->method),
			   it_hook_state_of(h), h->reason);
	}
	if (!d->o->quiet)
		it_loader_report(&d->ld, stderr);
	if (d->json)
		fflush(d->json);
}

static const struct mode_ops *mode_of(const struct daemon *d, const struct it_opts *o)
{
	return o->mode <= IT_MODE_HOST ? d->modes[o->mode] : NULL;
}

/* The mode's adjustments to a copy of the options (host: the QEMU pids). 0 or -errno. */
int daemon_mode_prepare(const struct daemon *d, struct it_opts *o, FILE *err)
{
	const struct mode_ops *m = mode_of(d, o);

	return m && m->prepare ? m->prepare(o, err) : 0;
}

/* What the loader is asked for: o's options, and what the mode wants of the BPF side. */
void daemon_ld_config(const struct daemon *d, const struct it_opts *o, struct ld_config *c)
{
	const struct mode_ops *m = mode_of(d, o);

	cli_ld_config(o, c);
	if (m && m->ld_config)
		m->ld_config(c);
}

/* The ring buffer and the per-CPU record buffers of the attached load. */
int daemon_bpf_buffers(struct daemon *d)
{
	int ret;

	if (d->fnames)
		dnames_attach(d->fnames, d->ld.skel);
	ret = it_loader_records(&d->ld, &d->rb, &d->recs);
	d->recs.note = d->rec_note;
	d->recs.note_ctx = d;
	return ret;
}

/*
 * Load and attach, and map the record buffers. The disks' serials are read
 * first: a virtio-blk serial read is a GET_ID request to the disk, which would
 * otherwise be traced as iotracer's own.
 */
int daemon_bpf_up(struct daemon *d)
{
	struct ld_config c;

	parse_dev_serials_prefetch(d->o->sysfs_root);
	daemon_ld_config(d, d->o, &c);
	return it_loader_start(&d->ld, &c, stderr) ?: daemon_bpf_buffers(d);
}

/*
 * Report what attached, and start the guest or host mode on it. The caller
 * then hands the attach to /metrics (daemon_metrics_attach).
 */
int daemon_bpf_connect(struct daemon *d)
{
	struct mode_env env = {
		.o = d->o, .ld = &d->ld, .out = d->out, .json = d->json, .text = d->text
	};

	report_attach(d);
	d->mode = mode_of(d, d->o);
	if (d->mode) {
		d->m = d->mode->start(&env);
		if (!d->m)
			return -EINVAL;
		if (d->blame && d->mode->blame && d->mode->blame(d->m, d->blame)) {
			it_err("--blame: cannot set up %s mode's owners", d->mode->name);
			return -ENOMEM;
		}
	}
	return 0;
}

/* Undo daemon_bpf_connect() and daemon_bpf_up() (safe on partial ones). */
void daemon_bpf_down(struct daemon *d)
{
	if (d->m)
		d->mode->stop(d->m);
	d->m = NULL;
	ring_buffer__free(d->rb);
	d->rb = NULL;
	recbuf_free(&d->recs);
	memset(&d->recs, 0, sizeof(d->recs)); /* its buffers are unmapped below */
	it_loader_stop(&d->ld);
}
