// SPDX-License-Identifier: GPL-2.0
/*
 * The standalone daemon: load and attach, then one epoll loop over the ring
 * buffer, a signalfd and a timerfd. Records are drained on the timer (the
 * BPF side submits without wakeup) or early when the ring fills; each goes
 * through the correlator to the output sinks.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/abi.h"
#include "lib/clock.h"
#include "iotracer.h"
#include "iotracer.skel.h"
#include "core/cli.h"
#include "core/config.h"
#include "core/corr.h"
#include "core/daemon.h"
#include "core/dblame.h"
#include "core/loader.h"
#include "core/output.h"
#include "core/hist.h"
#include "core/agg.h"
#include "core/blkstale.h"
#include "core/cgroup.h"
#include "core/container.h"
#include "core/metrics.h"
#include "core/metrics_http.h"
#include "core/reload.h"
#include "core/filters.h"
#include "lib/parse.h"
#include "core/recbuf.h"
#include "core/record.h"
#include "core/uhist.h"
#include "lib/log.h"

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
	const struct mode_ops *const *modes; /* by enum it_mode (it_daemon_run) */
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
};

/* recbuf_fn: one record, in end-time order. */
static void on_record(void *ctx, void *data, size_t size)
{
	struct daemon *d = ctx;
	int kern = d->ld.kern_hists;

	/* a reload switched the histograms: this record may be from before */
	if (d->hists_switch_ns && recbuf_end_ns(data, size) < d->hists_switch_ns)
		kern = d->kern_hists_before;
	if (!kern)
		uhists_record(&d->uhists, data, size);
	if (d->m && d->mode->record && d->mode->record(d->m, data, size))
		return;
	if (corr_feed(d->corr, data, size, d->now_ns))
		d->lost++;
}

/* ring buffer callback: records that did not go to a per-CPU buffer */
static int on_ring_record(void *ctx, void *data, size_t size)
{
	struct daemon *d = ctx;

	if (size >= sizeof(struct it_hdr) && ((struct it_hdr *)data)->type == IT_REC_WAKE)
		return 0;
	if (recbuf_spill(&d->recs, data, size))
		d->lost++;
	return 0;
}

/*
 * -m and --sample for a libaio request, which the BPF side cannot apply: its latency is
 * known only once corr joined its io_submit and io_getevents. One never reaped is
 * kept when sampled (how long it took is unknown, and it is worth seeing).
 */
static int aio_kept(struct daemon *d, const struct corr_req *r)
{
	if (d->o->sample > 1 && d->aio_sampled++ % d->o->sample)
		return 0;
	return !r->aio.reaped || r->aio.reap_ns - r->aio.submit_ns >= d->o->min_lat_ns;
}

/* corr_emit_fn: every sink of a finished request. */
static void on_request(const struct corr_req *r, void *ctx)
{
	struct daemon *d = ctx;

	if (r->kind == CORR_AIO) {
		uhists_aio(&d->uhists, r);
		if (!aio_kept(d, r))
			return;
	}
	out_request(r, d->out);
	if (d->blame)
		dblame_request(d->blame, r);
	if (d->rec)
		rec_request(d->rec, r);
	if (d->m && d->mode->request)
		d->mode->request(d->m, r);
}

static void mode_run(struct daemon *d)
{
	if (d->m && d->mode->run)
		d->mode->run(d->m, it_mono_ns());
}

/*
 * Read every record published so far, in end-time order, but those that
 * ended in the last WATERMARK_NS: a record of another CPU that ended before
 * them may still be being written (recbuf.h). final: all of them.
 */
static void drain(struct daemon *d, int final)
{
	d->now_ns = it_mono_ns();
	if (d->rb && ring_buffer__consume(d->rb) < 0)
		d->lost++;
	recbuf_drain(&d->recs, final ? UINT64_MAX : d->now_ns - WATERMARK_NS, on_record, d);
	corr_tick(d->corr, d->now_ns);
	mode_run(d);
}

/* The drop counters of the attached BPF side (without what was carried). */
static void read_drops(struct daemon *d, uint64_t *drops)
{
	uint64_t cnt[IT_NR_COUNTERS];

	agg_percpu_u64(d->ld.skel->maps.drops, drops, IT_NR_DROPS);
	/* Issued but never seen completing (and still in flight, mid-run). */
	agg_percpu_u64(d->ld.skel->maps.counters, cnt, IT_NR_COUNTERS);
	if (cnt[IT_CNT_BLK_ISSUED] > cnt[IT_CNT_BLK_COMPLETED])
		drops[IT_L_BLOCK * IT_DROP_KINDS + IT_DROP_MISSED] =
			cnt[IT_CNT_BLK_ISSUED] - cnt[IT_CNT_BLK_COMPLETED];
}

/* The per-CPU histogram values of one key, summed. */
static void sum_hist(struct it_hist_val *dst, const struct it_hist_val *percpu, int ncpu)
{
	memset(dst, 0, sizeof(*dst));
	for (int c = 0; c < ncpu; c++)
		for (int s = 0; s < IT_ST_MAX; s++)
			log2h_add(&dst->st[s], &percpu[c].st[s]);
}

/* Add the BPF side's histograms (the "hists" map) to dst. */
static void read_khists(struct daemon *d, struct uhists *dst)
{
	int fd = bpf_map__fd(d->ld.skel->maps.hists);
	int ncpu = libbpf_num_possible_cpus();
	struct it_hist_key key, prev;
	struct it_hist_val *vals, one;
	int have_prev = 0;

	if (ncpu <= 0)
		return;
	vals = calloc(ncpu, sizeof(*vals));
	while (vals && !bpf_map_get_next_key(fd, have_prev ? &prev : NULL, &key)) {
		if (!bpf_map_lookup_elem(fd, &key, vals)) {
			sum_hist(&one, vals, ncpu);
			uhists_add(dst, &key, &one);
		}
		prev = key;
		have_prev = 1;
	}
	free(vals);
}

/* Drops so far: the attached BPF side's and those carried over re-attaches. */
static void all_drops(struct daemon *d, uint64_t *drops)
{
	memset(drops, 0, IT_NR_DROPS * sizeof(*drops));
	if (d->ld.skel) /* NULL only after a failed re-attach */
		read_drops(d, drops);
	for (int i = 0; i < IT_NR_DROPS; i++)
		drops[i] += d->carried_drops[i];
}

/* The histograms as of now into d->sum: the BPF side's, those built from records, carried. */
static void current_hists(struct daemon *d)
{
	uhists_clear(&d->sum);
	if (d->ld.skel)
		read_khists(d, &d->sum);
	uhists_merge(&d->sum, &d->uhists);
	uhists_merge(&d->sum, &d->carried);
}

static void summary(struct daemon *d, int final)
{
	uint64_t drops[IT_NR_DROPS], skipped[IT_L_MAX], cnt[IT_NR_COUNTERS];
	struct out_summary_in in = {
		.final = final,
		.elapsed_ns = d->now_ns - d->start_ns,
		.drops = drops,
		.corr = corr_get_stats(d->corr),
		.lost_samples = d->lost,
		.skipped = skipped,
		.counters = cnt,
	};

	memset(skipped, 0, sizeof(skipped));
	memset(cnt, 0, sizeof(cnt));
	if (d->ld.skel) {
		it_loader_skipped(&d->ld, skipped);
		agg_percpu_u64(d->ld.skel->maps.counters, cnt, IT_NR_COUNTERS);
	}
	for (int i = 0; i < IT_NR_COUNTERS; i++)
		cnt[i] += d->carried_counters[i];
	for (int i = 0; i < IT_L_MAX; i++)
		skipped[i] += d->carried_skipped[i];
	all_drops(d, drops);
	current_hists(d);
	in.khists = d->sum.v;
	in.nr_khists = d->sum.nr;
	out_summary(d->out, &in);
	if (d->m && d->mode->summary)
		d->mode->summary(d->m, final);
}

/* ---- --metrics (docs/metrics.md) ---- */

static const char *metrics_dev(uint32_t dev, void *ctx)
{
	const struct daemon *d = ctx;

	return dev ? parse_dev_name_cached(dev, d->o->sysfs_root) : "-";
}

/* The hooks of the attach report, for iotracer_hook_attached (again after a re-attach). */
static int metrics_hooks(struct daemon *d)
{
	free(d->mhooks);
	d->nr_mhooks = 0;
	d->mhooks = calloc(d->ld.nr_hooks ? d->ld.nr_hooks : 1, sizeof(*d->mhooks));
	if (!d->mhooks)
		return -ENOMEM;
	for (int i = 0; i < d->ld.nr_hooks; i++) {
		const struct it_hook_state *h = &d->ld.hooks[i];

		if (it_loader_hook_hidden(&d->ld, i))
			continue;
		d->mhooks[d->nr_mhooks++] = (struct metrics_hook){
			.layer = abi_layer_name(h->layer),
			.hook = h->name,
			.method = it_method_name(h->method),
			.ok = h->ok,
			.state = it_hook_state_of(h),
		};
	}
	return 0;
}

/*
 * The block requests the attached BPF side saw issued and not completing (in flight,
 * for the gauge), and those a detached side left (missed: no side will see them end).
 */
static void blk_inflight_missed(struct daemon *d, uint64_t *inflight, uint64_t *missed)
{
	const int k = IT_L_BLOCK * IT_DROP_KINDS + IT_DROP_MISSED;
	uint64_t cur[IT_NR_DROPS] = { 0 };
	uint64_t cnt[IT_NR_COUNTERS] = { 0 }, ended;

	if (d->ld.skel) {
		read_drops(d, cur);
		agg_percpu_u64(d->ld.skel->maps.counters, cnt, IT_NR_COUNTERS);
	}
	/* ended unseen: found stale by a sweep, or their entry taken by a new bio */
	ended = d->blk_swept + cnt[IT_CNT_BLK_RECYCLED];
	*inflight = cur[k] > ended ? cur[k] - ended : 0;
	*missed = d->carried_drops[k] + (cur[k] < ended ? cur[k] : ended);
}

/*
 * The sweep's age and period: BLK_STALE_NS every SWEEP_NS, or for a test
 * (docs/testing.md) the age IOTRACER_TEST_BLK_STALE says, looked for twice as often.
 */
static void stale_age(struct daemon *d)
{
	const char *env = getenv("IOTRACER_TEST_BLK_STALE");
	uint64_t age;

	d->stale_ns = BLK_STALE_NS;
	d->sweep_ns = SWEEP_NS;
	if (!env)
		return;
	if (parse_duration(env, &age) || age < 2 || age > BLK_STALE_NS) {
		it_warn("IOTRACER_TEST_BLK_STALE: bad duration '%s' (expected up to 120s): ignored",
			env);
		return;
	}
	d->stale_ns = age;
	d->sweep_ns = age / 2 < SWEEP_NS ? age / 2 : SWEEP_NS;
}

/*
 * Every SWEEP_NS: requests issued longer ago than any can be in flight whose
 * completion no program saw (a nested completion with one completion program,
 * docs/hooks.md) leave the in-flight gauge for the lost counter.
 */
static void blk_sweep(struct daemon *d)
{
	long n;

	if (!d->ld.skel || !(d->ld.layers_on & (1u << IT_L_BLOCK)) || d->now_ns < d->next_sweep_ns)
		return;
	d->next_sweep_ns = d->now_ns + d->sweep_ns;
	n = blk_sweep_stale(bpf_map__fd(d->ld.skel->maps.bios), d->now_ns, d->stale_ns,
			    2 * (long)bpf_map__max_entries(d->ld.skel->maps.bios));
	if (n > 0)
		d->blk_swept += n;
}

/*
 * The kernel's block aggregation folded into /metrics rows (*rows malloc'd);
 * 0 rows when it is off or unreadable. A re-attach starts it from zero.
 */
static int metrics_agg(struct daemon *d, struct agg_row **rows)
{
	struct agg_entry *e = NULL;
	int nr = 0, depth = d->o->metrics_cg_depth;

	*rows = NULL;
	if (!d->ld.skel || agg_read(bpf_map__fd(d->ld.skel->maps.agg), &e, &nr) || !nr)
		goto out;
	if (depth >= 0 && !d->cg_labels)
		d->cg_labels = calloc(1, sizeof(*d->cg_labels));
	*rows = calloc(nr, sizeof(**rows));
	if (!*rows || (depth >= 0 && !d->cg_labels)) {
		nr = 0;
		goto out;
	}
	nr = agg_fold(e, nr, d->cg, depth, d->cg_labels, *rows);
out:
	free(e);
	return nr;
}

/*
 * Build the /metrics text and hand it to the server thread, at most every
 * METRICS_NS (force: now). Runs on the event loop; the server only swaps a
 * pointer under its lock, so nothing here waits for a scrape.
 */
static void metrics_tick(struct daemon *d, int force)
{
	uint64_t drops[IT_NR_DROPS];
	struct metrics_proc proc;
	struct agg_row *rows;
	struct metrics_in in = { .drops = drops, .drop_layers = d->ld.layers_on,
				 .lost = d->lost, .hooks = d->mhooks, .nr_hooks = d->nr_mhooks,
				 .dev_name = metrics_dev, .dev_ctx = d };
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (!d->http || (!force && d->now_ns < d->next_metrics_ns))
		return;
	d->next_metrics_ns = d->now_ns + METRICS_NS;
	all_drops(d, drops);
	blk_inflight_missed(d, &in.blk_inflight, &in.blk_missed);
	current_hists(d);
	in.nr_khists = d->sum.nr;
	in.khists = d->sum.v;
	if (!metrics_proc_read("/proc", "self", &proc))
		in.proc = &proc;
	in.nr_agg = metrics_agg(d, &rows);
	in.agg = rows;
	in.agg_cgroups = d->o->metrics_cg_depth >= 0;
	in.ct_labels = d->o->metrics_containers;
	in.names = d->names;
	f = open_memstream(&text, &len);
	if (!f) {
		free(rows);
		return;
	}
	metrics_write(f, &in);
	free(rows);
	if (d->m && d->mode->metrics)
		d->mode->metrics(d->m, f);
	if (d->blame)
		dblame_metrics(d->blame, f, it_mono_ns(), metrics_dev, d);
	if (fclose(f)) {
		free(text); /* keep serving the previous text */
		return;
	}
	metrics_http_publish(d->http, text, len);
}

/* Add (EPOLL_CTL_ADD) or remove (EPOLL_CTL_DEL) the ring buffer's and the mode's fds. */
static int watch_bpf(struct daemon *d, int op)
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

/*
 * A SIGHUP during the load (systemctl reload right after start) would kill
 * the daemon (its default action): hold it until the signalfd reads it.
 */
static void block_hup(void)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
}

static int setup_fds(struct daemon *d)
{
	struct itimerspec its = { .it_interval = { 0, DRAIN_NS }, .it_value = { 0, DRAIN_NS } };
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL))
		return -errno;
	d->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	d->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->sigfd < 0 || d->tfd < 0 || d->epfd < 0)
		return -errno;
	if (timerfd_settime(d->tfd, 0, &its, NULL))
		return -errno;
	ev.data.fd = d->sigfd;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->sigfd, &ev))
		return -errno;
	ev.data.fd = d->tfd;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->tfd, &ev))
		return -errno;
	return watch_bpf(d, EPOLL_CTL_ADD);
}

/* Returns 1 to stop. */
static int on_timer(struct daemon *d)
{
	uint64_t ticks;

	if (read(d->tfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		return 1;
	drain(d, 0);
	blk_sweep(d);
	metrics_tick(d, 0);
	/* bound what a crash could lose to one timer period (--record: to a second) */
	out_flush(d->out);
	if (d->rec)
		rec_tick(d->rec, d->now_ns);
	if (d->o->interval_ns && d->now_ns >= d->next_summary_ns) {
		summary(d, 0);
		d->next_summary_ns += d->o->interval_ns;
	}
	return d->o->duration_ns && d->now_ns - d->start_ns >= d->o->duration_ns;
}

static int daemon_reload(struct daemon *d);

/* The signalfd is readable. Returns 1 to stop (SIGINT, SIGTERM, a failed re-attach). */
static int on_signal(struct daemon *d)
{
	struct signalfd_siginfo si;

	if (read(d->sigfd, &si, sizeof(si)) != sizeof(si))
		return 0;
	if (si.ssi_signo == SIGHUP)
		return daemon_reload(d) < 0;
	return 1;
}

static int loop(struct daemon *d)
{
	struct epoll_event evs[4];
	int stop = 0;

	while (!stop) {
		int n = epoll_wait(d->epfd, evs, 4, -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (int i = 0; i < n && !stop; i++) {
			if (evs[i].data.fd == d->sigfd)
				stop = on_signal(d);
			else if (evs[i].data.fd == d->tfd)
				stop |= on_timer(d);
			else if (evs[i].data.fd == d->mode_fd)
				mode_run(d);
			else
				drain(d, 0); /* woken early: the ring is filling up */
		}
	}
	return 0;
}

/*
 * The start line, even under -q: what a service's journal must show once (version,
 * layers attached, metrics address, recording directory).
 */
static void start_line(struct daemon *d)
{
	char layers[128] = "";
	size_t n = 0;
	int hooks = 0;

	for (int l = 0; l < IT_L_MAX; l++)
		if (d->ld.layers_on & (1u << l))
			n += (size_t)snprintf(layers + n,
					      n < sizeof(layers) ? sizeof(layers) - n : 0, "%s%s",
					      n ? "," : "", abi_layer_name(l));
	for (int i = 0; i < d->ld.nr_hooks; i++)
		hooks += d->ld.hooks[i].ok;
	it_note_always("%s started: layers %s (%d hooks attached); metrics %s%s%s; recording %s",
		       IT_VERSION, layers[0] ? layers : "none", hooks,
		       d->o->metrics_addr ? "http://" : "off", d->o->metrics_addr ? d->o->metrics_addr : "",
		       d->o->metrics_addr ? "/metrics" : "", d->o->record_dir ? d->o->record_dir : "off");
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
static int mode_prepare(const struct daemon *d, struct it_opts *o, FILE *err)
{
	const struct mode_ops *m = mode_of(d, o);

	return m && m->prepare ? m->prepare(o, err) : 0;
}

/* The ring buffer and the per-CPU record buffers of the attached load. */
static int bpf_buffers(struct daemon *d)
{
	void *slots, *pos;
	int ret;

	d->rb = ring_buffer__new(bpf_map__fd(d->ld.skel->maps.events), on_ring_record, d, NULL);
	if (!d->rb) {
		ret = -errno;
		it_err("cannot set up the ring buffer: %s", strerror(errno));
		return ret;
	}
	ret = it_loader_map_slots(&d->ld, &slots, &pos);
	if (ret) {
		it_err("cannot map the record buffers: %s", strerror(-ret));
		return ret;
	}
	recbuf_init(&d->recs, d->ld.ncpu, d->ld.slot_shift, slots, pos);
	return 0;
}

/*
 * Load and attach, and map the record buffers. The disks' serials are read
 * first: a virtio-blk serial read is a GET_ID request to the disk, which would
 * otherwise be traced as iotracer's own.
 */
static int bpf_up(struct daemon *d)
{
	parse_dev_serials_prefetch(d->o->sysfs_root);
	return it_loader_start(&d->ld, d->o, stderr) ?: bpf_buffers(d);
}

/* Report what attached, and start the guest or host mode on it. */
static int bpf_connect(struct daemon *d)
{
	struct mode_env env = { .o = d->o, .ld = &d->ld, .out = d->out, .json = d->json,
				.text = d->text };

	report_attach(d);
	d->mode = mode_of(d, d->o);
	if (d->mode) {
		d->m = d->mode->start(&env);
		if (!d->m)
			return -EINVAL;
	}
	if (d->http && metrics_hooks(d)) {
		it_err("--metrics: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	metrics_tick(d, 1);
	/* Loading parsed the kernel's BTF (MBs, freed since): give the heap back. */
	malloc_trim(0);
	return 0;
}

/* Undo bpf_connect() and bpf_up() (safe on partial ones). */
static void bpf_down(struct daemon *d)
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

static int open_json(struct daemon *d)
{
	const char *path = d->o->json_path;
	int fd;

	d->text = stdout;
	if (!path)
		return 0;
	if (!strcmp(path, "-")) {
		d->json = stdout;
		d->text = stderr;
		return 0;
	}
	/* the requests of every process: the owner's alone, like a recording (record.md) */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	d->json = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!d->json) {
		if (fd >= 0)
			close(fd);
		char who[PATH_MAX + 32];

		it_err("%s: cannot open '%s': %s", cli_where(d->o, "json", who, sizeof(who)), path,
		       strerror(errno));
		return -errno;
	}
	return 0;
}

/* ---- reload (SIGHUP; docs/config.md) ---- */

/* The first line of a captured message, without the "iotracer: " prefix (fallback if none). */
static void first_line(const char *msg, const char *fallback, char *buf, size_t n)
{
	const char *m = msg && *msg ? msg : fallback;

	if (!strncmp(m, "iotracer: ", 10))
		m += 10;
	snprintf(buf, n, "%.*s", (int)strcspn(m, "\n"), m);
}

/*
 * The options again: defaults, the config file, the command line over it,
 * and the mode's prepare. 0, or -EINVAL with the first error line in why.
 */
static int reload_read(struct daemon *d, struct it_opts *n, char *why, size_t len)
{
	char *msg = NULL;
	size_t msg_len = 0;
	FILE *err = open_memstream(&msg, &msg_len);
	int ret = -ENOMEM;

	cli_defaults(n);
	n->sysfs_root = d->o->sysfs_root;
	if (err) {
		ret = config_parse(d->o->argc, d->o->argv, n, err, err) == CLI_RUN ? 0 : -EINVAL;
		if (!ret && mode_prepare(d, n, err))
			ret = -EINVAL;
		fclose(err);
	}
	if (ret)
		first_line(msg, strerror(-ret), why, len);
	free(msg);
	return ret;
}

/* *n becomes the options in force (d->cur stays put: the mode points to it). */
static void reload_adopt(struct daemon *d, struct it_opts *n)
{
	if (d->cur_owned)
		cli_free(&d->cur);
	d->cur = *n;
	d->cur_owned = 1;
	memset(n, 0, sizeof(*n));
	if (d->out)
		out_set_thinning(d->out, d->cur.min_lat_ns, d->cur.sample);
}

/* Filters only: BPF globals and maps, in place, no link touched. 0: *n adopted. */
static int reload_filters(struct daemon *d, struct it_opts *n, const struct reload_plan *p)
{
	int before = d->ld.kern_hists;
	char *msg = NULL, line[512];
	size_t len = 0;
	FILE *err = open_memstream(&msg, &len);
	int ret = err ? it_filters_apply(&d->ld, n, err) : -ENOMEM;

	if (err)
		fclose(err);
	first_line(msg, strerror(-ret), line, sizeof(line));
	if (ret) {
		it_warn("reload: %s; the running configuration stays", line);
	} else {
		if (msg && *msg) /* a warning (--file: only the first N files) */
			it_warn("reload: %s", line);
		if (d->ld.kern_hists != before) {
			d->hists_switch_ns = it_mono_ns();
			d->kern_hists_before = before;
		}
		reload_adopt(d, n);
		if (d->m && d->mode->reload)
			d->mode->reload(d->m);
		it_note("reload: changed in place: %s", p->what[RELOAD_FILTER]);
	}
	free(msg);
	return ret;
}

/* Keep the attached BPF side's histograms, drops and skipped runs for the summaries. */
static void carry_counters(struct daemon *d)
{
	uint64_t drops[IT_NR_DROPS], skipped[IT_L_MAX], cnt[IT_NR_COUNTERS];

	read_drops(d, drops);
	it_loader_skipped(&d->ld, skipped);
	agg_percpu_u64(d->ld.skel->maps.counters, cnt, IT_NR_COUNTERS);
	for (int i = 0; i < IT_NR_COUNTERS; i++)
		d->carried_counters[i] += cnt[i];
	for (int i = 0; i < IT_NR_DROPS; i++)
		d->carried_drops[i] += drops[i];
	for (int i = 0; i < IT_L_MAX; i++)
		d->carried_skipped[i] += skipped[i];
	d->blk_swept = 0; /* in the carried issued - completed, as every missed one */
	read_khists(d, &d->carried);
}

/*
 * Load d->cur's set while the old one still traces, then detach the old one,
 * read what its buffers hold, and attach the new one: tracing pauses for the
 * detach and attach only, not for the load. -EAGAIN: the load failed, the
 * old set is still attached (message in why). Other errors: nothing is.
 */
static int reattach(struct daemon *d, char *why, size_t len)
{
	struct it_loader nld;
	char *msg = NULL;
	size_t msg_len = 0;
	FILE *err = open_memstream(&msg, &msg_len);
	int ret = err ? it_loader_load(&nld, d->o, err) : -ENOMEM;

	if (err)
		fclose(err);
	if (ret) {
		first_line(msg, strerror(-ret), why, len);
		free(msg);
		if (err)
			it_loader_stop(&nld);
		return -EAGAIN;
	}
	free(msg);
	if (d->rb) {
		it_loader_detach(&d->ld);
		drain(d, 1);
		watch_bpf(d, EPOLL_CTL_DEL);
		carry_counters(d);
	}
	bpf_down(d);
	d->ld = nld;
	d->hists_switch_ns = 0;
	ret = it_loader_attach(&d->ld, d->o, stderr);
	if (!ret)
		ret = bpf_buffers(d);
	if (!ret)
		ret = bpf_connect(d);
	if (!ret)
		ret = watch_bpf(d, EPOLL_CTL_ADD);
	return ret;
}

/*
 * A change that needs new programs or buffers. 0: *n adopted; 1: it failed
 * and the previous configuration is attached (still, or again); -errno:
 * nothing is.
 */
static int reload_reattach(struct daemon *d, struct it_opts *n, const struct reload_plan *p)
{
	struct it_opts old = d->cur;
	int old_owned = d->cur_owned, ret;
	char why[512];

	d->cur = *n;
	d->cur_owned = 1;
	memset(n, 0, sizeof(*n));
	ret = reattach(d, why, sizeof(why));
	if (!ret) {
		if (old_owned)
			cli_free(&old);
		it_note("reload: %s changed: re-attached (%s)%s%s", p->names[RELOAD_REATTACH],
			p->what[RELOAD_REATTACH], p->nr[RELOAD_FILTER] ? "; also " : "",
			p->what[RELOAD_FILTER]);
		return 0;
	}
	cli_free(&d->cur);
	d->cur = old;
	d->cur_owned = old_owned;
	if (ret == -EAGAIN) {
		it_warn("reload: %s; the running configuration stays", why);
		return 1;
	}
	it_err("reload: re-attach failed (%s): attaching the previous configuration again",
	       strerror(-ret));
	ret = reattach(d, why, sizeof(why));
	if (ret)
		it_err("reload: cannot attach the previous configuration either (%s): stopping",
		       ret == -EAGAIN ? why : strerror(-ret));
	return ret ? ret : 1;
}

/* SIGHUP. Returns -errno only when the daemon cannot go on (nothing attached). */
static int daemon_reload(struct daemon *d)
{
	const char *file = d->o->config_path ? d->o->config_path : "(no config file)";
	struct reload_plan p;
	struct it_opts n;
	char why[512];
	int ret = 0, adopted = 0;

	if (reload_read(d, &n, why, sizeof(why))) {
		it_warn("reload: %s; the running configuration stays", why);
		cli_free(&n);
		return 0;
	}
	reload_plan(d->o, &n, &p);
	if (p.nr[RELOAD_START])
		it_warn("reload: %s: read at start only, unchanged until a restart",
			p.names[RELOAD_START]);
	if (reload_keep_start_only(d->o, &n)) {
		it_warn("reload: out of memory; the running configuration stays");
		cli_free(&n);
		return 0;
	}
	if (p.nr[RELOAD_REATTACH]) {
		ret = reload_reattach(d, &n, &p);
		adopted = !ret;
		ret = ret < 0 ? ret : 0;
	} else if (p.nr[RELOAD_FILTER]) {
		adopted = !reload_filters(d, &n, &p);
	} else if (p.nr[RELOAD_TIMING]) {
		reload_adopt(d, &n);
		adopted = 1;
	} else if (!p.nr[RELOAD_START]) {
		it_note("reload: %s: nothing changed", file);
	}
	if (adopted && p.nr[RELOAD_TIMING]) {
		/* the summary period starts again from now */
		d->next_summary_ns = it_mono_ns() + d->o->interval_ns;
		it_note("reload: %s", p.what[RELOAD_TIMING]);
	}
	cli_free(&n);
	return ret;
}

/* --record: the rolling recording (docs/record.md). 0 or -EIO (message printed). */
static int open_record(struct daemon *d)
{
	const struct it_opts *o = d->o;
	char who[PATH_MAX + 32];
	struct rec_opts ro = { .dir = o->record_dir, .seg_size = o->record_size,
			       .seg_age_ns = o->record_age_ns, .max_bytes = o->record_max,
			       .level = o->record_level, .sysfs_root = o->sysfs_root,
			       .who = cli_where(o, "record", who, sizeof(who)) };

	if (!o->record_dir)
		return 0;
	d->rec = rec_open(&ro, d->start_ns);
	return d->rec ? 0 : -EIO;
}

/* Cgroup paths for the records (none without a cgroup2 hierarchy: ids only). */
static void open_cgroups(struct daemon *d)
{
	char mnt[CG_PATH_MAX];
	int ret = cg_mount_point(NULL, NULL, mnt, sizeof(mnt));

	if (ret) {
		it_warn("no cgroup2 hierarchy (%s): records carry cgroup ids only", strerror(-ret));
		return;
	}
	d->cg = cg_cache_new(mnt);
	d->names = ct_names_new(NULL);
	if (d->out) {
		out_set_cgroups(d->out, d->cg);
		out_set_names(d->out, d->names);
	}
	if (d->rec)
		rec_set_cgroups(d->rec, d->cg);
}

/* Everything up to the event loop: outputs, BPF, the fds. 0 or -errno (said). */
static int daemon_start(struct daemon *d)
{
	char who[PATH_MAX + 32];
	int ret;

	/*
	 * Loading parses the kernel's BTF (several MB, freed after load). A fixed
	 * mmap threshold keeps such blocks out of the heap, so they go back to
	 * the kernel instead of staying resident in a fragmented heap.
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	if (d->o->metrics_addr) {
		/* before the (slow) load: a port in use fails at once */
		d->http = metrics_http_start(d->o->metrics_addr,
					     cli_where(d->o, "metrics", who, sizeof(who)));
		if (!d->http)
			return -EADDRINUSE;
	}
	ret = bpf_up(d);
	if (!ret)
		ret = open_json(d);
	if (ret)
		return ret;
	d->start_ns = d->now_ns = it_mono_ns();
	d->next_summary_ns = d->start_ns + d->o->interval_ns;
	stale_age(d);
	ret = open_record(d);
	if (ret)
		return ret;
	d->out = out_new(d->o, d->text, d->json, d->start_ns);
	open_cgroups(d);
	d->corr = d->out ? corr_new(on_request, d, HOLD_NS, 0) : NULL;
	d->blame = d->o->blame ? dblame_new(d->cg, d->o->metrics_cg_depth) : NULL;
	if (!d->out || !d->corr || (d->o->blame && !d->blame)) {
		it_err("cannot set up the event loop: %s", strerror(errno));
		return -ENOMEM;
	}
	ret = bpf_connect(d);
	if (ret)
		return ret;
	ret = setup_fds(d);
	if (ret)
		it_err("cannot set up the event loop: %s", strerror(-ret));
	else
		start_line(d);
	return ret;
}

/*
 * After the loop: detach first, so that no record is written after the last
 * drain; then everything still in the buffers, then everything still held,
 * the final summary, and what output was lost. Returns ret, or the loss.
 */
static int daemon_finish(struct daemon *d, int ret)
{
	uint64_t stop_ns = it_mono_ns();

	it_loader_detach(&d->ld);
	drain(d, 1);
	corr_flush(d->corr);
	d->now_ns = stop_ns; /* the run traced until the stop, not until the detach ended */
	summary(d, 1);
	if (d->m)
		d->mode->stop(d->m);
	d->m = NULL;
	if (d->o->verbose && d->ld.skel)
		it_loader_prog_stats(&d->ld, stderr);
	if (out_error(d->out) && !ret) {
		ret = out_error(d->out);
		it_err("output lost: %llu JSON lines (%s)",
		       (unsigned long long)out_json_lost(d->out), strerror(-ret));
	}
	if (d->rec) {
		uint64_t lost = rec_close(d->rec);

		d->rec = NULL;
		if (lost) {
			it_err("--record: %llu requests were not recorded (write errors)",
			       (unsigned long long)lost);
			if (!ret)
				ret = -EIO;
		}
	}
	return ret;
}

static void daemon_free(struct daemon *d)
{
	metrics_http_stop(d->http); /* first: its thread reads nothing of d, but stop serving */
	free(d->mhooks);
	bpf_down(d);
	corr_free(d->corr);
	rec_close(d->rec);
	out_free(d->out);
	dblame_free(d->blame);
	cg_cache_free(d->cg);
	ct_names_free(d->names);
	free(d->cg_labels);
	uhists_free(&d->uhists);
	uhists_free(&d->carried);
	uhists_free(&d->sum);
	if (d->json && d->json != stdout)
		fclose(d->json);
	if (d->epfd >= 0)
		close(d->epfd);
	if (d->sigfd >= 0)
		close(d->sigfd);
	if (d->tfd >= 0)
		close(d->tfd);
	if (d->cur_owned)
		cli_free(&d->cur);
}

int it_daemon_run(const struct it_opts *uo, const struct mode_ops *const modes[])
{
	struct daemon d = { .epfd = -1, .sigfd = -1, .tfd = -1, .mode_fd = -1, .modes = modes };
	int ret;

	d.cur = *uo; /* shallow: the strings stay uo's until a reload */
	d.o = &d.cur;
	block_hup();
	log_set_level(d.o->verbose, 0);
	ret = mode_prepare(&d, &d.cur, stderr);
	if (ret)
		return ret == -EINVAL ? 2 : 1; /* bad input: usage exit status */
	ret = daemon_start(&d);
	if (!ret)
		ret = daemon_finish(&d, loop(&d));
	daemon_free(&d);
	return ret ? 1 : 0;
}
