// SPDX-License-Identifier: GPL-2.0
/*
 * The standalone daemon: load and attach, then one epoll loop over the ring
 * buffer, a signalfd and a timerfd. Records are drained on the timer (the
 * BPF side submits without wakeup) or early when the ring fills; each goes
 * through the correlator to the output sinks.
 */
#include <errno.h>
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

#include "lib/clock.h"
#include "iotracer.h"
#include "iotracer.skel.h"
#include "core/cli.h"
#include "core/corr.h"
#include "core/daemon.h"
#include "core/loader.h"
#include "core/output.h"
#include "core/hist.h"
#include "core/metrics.h"
#include "core/metrics_http.h"
#include "lib/parse.h"
#include "mode/mode.h"
#include "core/recbuf.h"
#include "core/record.h"
#include "core/uhist.h"
#include "lib/log.h"

#define DRAIN_NS (50ull * 1000 * 1000) /* timer period: drain the ring */
#define HOLD_NS (2ull * 1000 * 1000 * 1000) /* how long a block waits for its parent */
#define WATERMARK_NS (2ull * 1000 * 1000) /* records younger than this wait a drain */
#define METRICS_NS (1000ull * 1000 * 1000) /* --metrics: rebuild the text this often */

struct daemon {
	const struct it_opts *o;
	struct it_loader ld;
	struct ring_buffer *rb;
	struct recbuf recs; /* per-CPU buffers + ring buffer copies, merged */
	struct corr *corr;
	struct it_out *out;
	struct recorder *rec; /* --record, or NULL */
	FILE *json;
	int epfd, sigfd, tfd;
	uint64_t start_ns, now_ns, next_summary_ns;
	uint64_t lost;
	/*
	 * the summary's log2 histograms: read from the kernel (ld.kern_hists), or
	 * built here from the records (kh.nr of them)
	 */
	struct uhists kh;
	const struct mode_ops *mode; /* guest/host mode, NULL standalone */
	void *m; /* its state */
	int mode_fd;
	struct metrics_http *http; /* --metrics server, NULL when off */
	struct metrics_hook *mhooks; /* attach status, as reported at start */
	int nr_mhooks;
	uint64_t next_metrics_ns;
};

/* recbuf_fn: one record, in end-time order. */
static void on_record(void *ctx, void *data, size_t size)
{
	struct daemon *d = ctx;

	if (!d->ld.kern_hists)
		uhists_record(&d->kh, data, size);
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

/* corr_emit_fn: every sink of a finished request. */
static void on_request(const struct corr_req *r, void *ctx)
{
	struct daemon *d = ctx;

	out_request(r, d->out);
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
	if (ring_buffer__consume(d->rb) < 0)
		d->lost++;
	recbuf_drain(&d->recs, final ? UINT64_MAX : d->now_ns - WATERMARK_NS, on_record, d);
	corr_tick(d->corr, d->now_ns);
	mode_run(d);
}

/* Sum a per-CPU array map of u64 counters into out[0..n). */
static void read_percpu_u64(const struct bpf_map *map, uint64_t *out, uint32_t n)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *vals = calloc(ncpu > 0 ? ncpu : 1, sizeof(uint64_t));

	memset(out, 0, n * sizeof(*out));
	for (uint32_t i = 0; vals && ncpu > 0 && i < n; i++) {
		if (bpf_map__lookup_elem(map, &i, sizeof(i), vals, ncpu * sizeof(uint64_t), 0))
			continue;
		for (int c = 0; c < ncpu; c++)
			out[i] += vals[c];
	}
	free(vals);
}

static void read_drops(struct daemon *d, uint64_t *drops)
{
	uint64_t cnt[IT_NR_COUNTERS];

	read_percpu_u64(d->ld.skel->maps.drops, drops, IT_NR_DROPS);
	/* Issued but never seen completing (and still in flight, mid-run). */
	read_percpu_u64(d->ld.skel->maps.counters, cnt, IT_NR_COUNTERS);
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

static int read_khists(struct daemon *d)
{
	int fd = bpf_map__fd(d->ld.skel->maps.hists), n = 0;
	int ncpu = libbpf_num_possible_cpus();
	struct it_hist_key key, prev;
	struct it_hist_val *vals;
	int have_prev = 0;

	if (ncpu <= 0)
		return 0;
	vals = calloc(ncpu, sizeof(*vals));
	while (vals && uhists_room(&d->kh, n) &&
	       !bpf_map_get_next_key(fd, have_prev ? &prev : NULL, &key)) {
		if (!bpf_map_lookup_elem(fd, &key, vals)) {
			d->kh.v[n].key = key;
			sum_hist(&d->kh.v[n].val, vals, ncpu);
			n++;
		}
		prev = key;
		have_prev = 1;
	}
	free(vals);
	return n;
}

/* The histograms as of now: the kernel's (read again), or the ones built from records. */
static int current_khists(struct daemon *d)
{
	return d->ld.kern_hists ? read_khists(d) : d->kh.nr;
}

static void summary(struct daemon *d, int final)
{
	uint64_t drops[IT_NR_DROPS], skipped[IT_L_MAX];
	struct out_summary_in in = {
		.final = final,
		.elapsed_ns = d->now_ns - d->start_ns,
		.drops = drops,
		.corr = corr_get_stats(d->corr),
		.lost_samples = d->lost,
		.skipped = skipped,
	};

	it_loader_skipped(&d->ld, skipped);
	read_drops(d, drops);
	in.nr_khists = current_khists(d);
	in.khists = d->kh.v; /* after read_khists(), which may move it */
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

/* The hooks of the attach report, for iotracer_hook_attached. */
static int metrics_hooks(struct daemon *d)
{
	d->mhooks = calloc(d->ld.nr_hooks ? d->ld.nr_hooks : 1, sizeof(*d->mhooks));
	if (!d->mhooks)
		return -ENOMEM;
	for (int i = 0; i < d->ld.nr_hooks; i++) {
		const struct it_hook_state *h = &d->ld.hooks[i];

		if (it_loader_hook_hidden(&d->ld, i))
			continue;
		d->mhooks[d->nr_mhooks++] = (struct metrics_hook){
			.layer = parse_layer_name(h->layer),
			.hook = h->name,
			.method = it_method_name(h->method),
			.ok = h->ok,
		};
	}
	return 0;
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
	struct metrics_in in = { .drops = drops, .drop_layers = d->ld.layers_on,
				 .lost = d->lost, .hooks = d->mhooks, .nr_hooks = d->nr_mhooks,
				 .dev_name = metrics_dev, .dev_ctx = d };
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (!d->http || (!force && d->now_ns < d->next_metrics_ns))
		return;
	d->next_metrics_ns = d->now_ns + METRICS_NS;
	read_drops(d, drops);
	in.blk_unmatched = drops[IT_L_BLOCK * IT_DROP_KINDS + IT_DROP_MISSED];
	in.nr_khists = current_khists(d);
	in.khists = d->kh.v;
	if (!metrics_proc_read("/proc", "self", &proc))
		in.proc = &proc;
	f = open_memstream(&text, &len);
	if (!f)
		return;
	metrics_write(f, &in);
	if (d->m && d->mode->metrics)
		d->mode->metrics(d->m, f);
	if (fclose(f)) {
		free(text); /* keep serving the previous text */
		return;
	}
	metrics_http_publish(d->http, text, len);
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
	ev.data.fd = ring_buffer__epoll_fd(d->rb);
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
		return -errno;
	d->mode_fd = d->m && d->mode->epoll_fd ? d->mode->epoll_fd(d->m) : -1;
	ev.data.fd = d->mode_fd;
	if (d->mode_fd >= 0 && epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->mode_fd, &ev))
		return -errno;
	return 0;
}

/* Returns 1 to stop. */
static int on_timer(struct daemon *d)
{
	uint64_t ticks;

	if (read(d->tfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		return 1;
	drain(d, 0);
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
		for (int i = 0; i < n; i++) {
			if (evs[i].data.fd == d->sigfd) {
				struct signalfd_siginfo si;

				if (read(d->sigfd, &si, sizeof(si)) == sizeof(si) &&
				    si.ssi_signo != SIGHUP)
					stop = 1;
			} else if (evs[i].data.fd == d->tfd) {
				stop |= on_timer(d);
			} else if (evs[i].data.fd == d->mode_fd) {
				mode_run(d);
			} else {
				drain(d, 0); /* woken early: the ring is filling up */
			}
		}
	}
	return 0;
}

static void report_attach(struct daemon *d)
{
	for (int i = 0; i < d->ld.nr_hooks; i++) {
		const struct it_hook_state *h = &d->ld.hooks[i];

		if (it_loader_hook_hidden(&d->ld, i))
			continue;
		out_attach(d->out, parse_layer_name(h->layer), h->name, it_method_name(h->method),
			   h->ok, h->reason);
	}
	if (!d->o->quiet)
		it_loader_report(&d->ld, stderr);
	if (d->json)
		fflush(d->json);
}

static const struct mode_ops *mode_of(const struct it_opts *o)
{
	if (o->mode == IT_MODE_GUEST)
		return &guest_mode_ops;
	if (o->mode == IT_MODE_HOST)
		return &host_mode_ops;
	return NULL;
}

int it_daemon_run(const struct it_opts *uo)
{
	struct daemon d = { .epfd = -1, .sigfd = -1, .tfd = -1, .mode_fd = -1 };
	struct it_opts mo = *uo; /* shallow: the strings stay uo's */
	const struct it_opts *o = &mo;
	FILE *text = stdout;
	void *slots, *pos;
	int ret;

	d.o = o;
	log_set_level(o->verbose, 0);
	d.mode = mode_of(uo);
	if (d.mode && d.mode->prepare) {
		ret = d.mode->prepare(&mo, stderr);
		if (ret)
			return ret == -EINVAL ? 2 : 1; /* bad input: usage exit status */
	}

	/*
	 * Loading parses the kernel's BTF (several MB, freed after load). A fixed
	 * mmap threshold keeps such blocks out of the heap, so they go back to
	 * the kernel instead of staying resident in a fragmented heap.
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	if (o->metrics_addr) {
		/* before the (slow) load: a port in use fails at once */
		d.http = metrics_http_start(o->metrics_addr);
		if (!d.http) {
			ret = -EADDRINUSE;
			goto out;
		}
	}
	ret = it_loader_start(&d.ld, o, stderr);
	if (ret)
		goto out;
	if (o->json_path) {
		if (!strcmp(o->json_path, "-")) {
			d.json = stdout;
			text = stderr;
		} else {
			d.json = fopen(o->json_path, "w");
			if (!d.json) {
				ret = -errno;
				it_err("--json: cannot open '%s': %s",
					o->json_path, strerror(errno));
				goto out;
			}
		}
	}
	d.start_ns = d.now_ns = it_mono_ns();
	d.next_summary_ns = d.start_ns + o->interval_ns;
	if (o->record_dir) {
		struct rec_opts ro = { .dir = o->record_dir, .seg_size = o->record_size,
				       .seg_age_ns = o->record_age_ns, .max_bytes = o->record_max,
				       .level = o->record_level,
				       .sysfs_root = o->sysfs_root };

		d.rec = rec_open(&ro, d.start_ns);
		if (!d.rec) {
			ret = -EIO;
			goto out;
		}
	}
	d.out = out_new(o, text, d.json, d.start_ns);
	d.corr = d.out ? corr_new(on_request, &d, HOLD_NS, 0) : NULL;
	d.rb = ring_buffer__new(bpf_map__fd(d.ld.skel->maps.events), on_ring_record, &d, NULL);
	ret = it_loader_map_slots(&d.ld, &slots, &pos);
	if (ret) {
		it_err("cannot map the record buffers: %s", strerror(-ret));
		goto out;
	}
	recbuf_init(&d.recs, d.ld.ncpu, d.ld.slot_shift, slots, pos);
	if (!d.out || !d.corr || !d.rb) {
		ret = -ENOMEM;
		it_err("cannot set up the event loop: %s", strerror(errno));
		goto out;
	}
	report_attach(&d);
	if (d.mode) {
		struct mode_env env = { .o = o, .ld = &d.ld, .out = d.out, .json = d.json,
					.text = text };

		d.m = d.mode->start(&env);
		if (!d.m) {
			ret = -EINVAL;
			goto out;
		}
	}
	if (d.http) {
		ret = metrics_hooks(&d);
		if (ret) {
			it_err("--metrics: %s", strerror(-ret));
			goto out;
		}
		metrics_tick(&d, 1);
	}
	/* Loading parsed the kernel's BTF (MBs, freed since): give the heap back. */
	malloc_trim(0);
	ret = setup_fds(&d);
	if (ret) {
		it_err("cannot set up the event loop: %s", strerror(-ret));
		goto out;
	}
	ret = loop(&d);
	/*
	 * Detach first, so that no record is written after the last drain; then
	 * everything still in the buffers, then everything still held.
	 */
	it_loader_detach(&d.ld);
	drain(&d, 1);
	corr_flush(d.corr);
	summary(&d, 1);
	if (d.m)
		d.mode->stop(d.m);
	d.m = NULL;
	if (o->verbose)
		it_loader_prog_stats(&d.ld, stderr);
	if (out_error(d.out) && !ret) {
		ret = out_error(d.out);
		it_err("output lost: %llu JSON lines (%s)",
		       (unsigned long long)out_json_lost(d.out), strerror(-ret));
	}
	if (d.rec) {
		uint64_t lost = rec_close(d.rec);

		d.rec = NULL;
		if (lost) {
			it_err("--record: %llu requests were not recorded (write errors)",
			       (unsigned long long)lost);
			if (!ret)
				ret = -EIO;
		}
	}
out:
	metrics_http_stop(d.http); /* first: its thread reads nothing of d, but stop serving */
	free(d.mhooks);
	if (d.m)
		d.mode->stop(d.m);
	ring_buffer__free(d.rb);
	recbuf_free(&d.recs);
	corr_free(d.corr);
	rec_close(d.rec);
	out_free(d.out);
	uhists_free(&d.kh);
	if (d.json && d.json != stdout)
		fclose(d.json);
	if (d.epfd >= 0)
		close(d.epfd);
	if (d.sigfd >= 0)
		close(d.sigfd);
	if (d.tfd >= 0)
		close(d.tfd);
	it_loader_stop(&d.ld);
	return ret ? 1 : 0;
}
