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
#include "service/cli.h"
#include "service/config.h"
#include "records/corr.h"
#include "service/daemon.h"
#include "service/daemon_int.h"
#include "blame/dblame.h"
#include "service/dnames.h"
#include "service/mfiles.h"
#include "load/loader.h"
#include "records/output.h"
#include "records/hist.h"
#include "records/agg.h"
#include "load/blkstale.h"
#include "records/cgroup.h"
#include "records/container.h"
#include "records/metrics.h"
#include "service/metrics_http.h"
#include "service/reload.h"
#include "lib/parse.h"
#include "records/recbuf.h"
#include "records/record.h"
#include "records/uhist.h"
#include "lib/log.h"
#include "sink/sink.h"

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
	/* recorded before its split can write its blame to the recording */
	if (d->rec)
		rec_request(d->rec, r);
	if (d->blame)
		dblame_request(d->blame, r);
	if (d->sink)
		sink_request(d->sink, r);
	if (d->m && d->mode->request)
		d->mode->request(d->m, r);
}

/* The file names' counts for a summary (NULL: off). */
static const struct out_fnames *fnames_sum(struct daemon *d, struct out_fnames *f)
{
	struct dnames_stats st;

	if (!d->fnames)
		return NULL;
	dnames_stats(d->fnames, &st);
	*f = (struct out_fnames){ .entries = st.cache.entries,
				  .hits = st.cache.hits,
				  .misses = st.cache.misses,
				  .evicted = st.cache.evicted,
				  .forgotten = st.forgotten,
				  .no_mount = st.res.no_mount,
				  .container = st.res.container,
				  .container_gone = st.res.container_gone,
				  .bad = st.res.bad };
	return f;
}

void daemon_summary(struct daemon *d, int final)
{
	uint64_t drops[IT_NR_DROPS], skipped[IT_L_MAX], cnt[IT_NR_COUNTERS];
	struct out_fnames fn;
	struct out_summary_in in = {
		.final = final,
		.elapsed_ns = d->now_ns - d->start_ns,
		.drops = drops,
		.corr = corr_get_stats(d->corr),
		.lost_samples = d->lost + d->recs.spill_lost,
		.skipped = skipped,
		.counters = cnt,
		.fnames = fnames_sum(d, &fn),
	};

	memset(skipped, 0, sizeof(skipped));
	if (d->ld.skel)
		it_loader_skipped(&d->ld, skipped);
	daemon_all_counters(d, cnt);
	for (int i = 0; i < IT_L_MAX; i++)
		skipped[i] += d->carried_skipped[i];
	daemon_all_drops(d, drops);
	daemon_current_hists(d);
	in.khists = d->sum.v;
	in.nr_khists = d->sum.nr;
	out_summary(d->out, &in);
	daemon_sink_summary(d, final);
	if (d->m && d->mode->summary)
		d->mode->summary(d->m, final);
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
	return daemon_watch_bpf(d, EPOLL_CTL_ADD);
}

/* Returns 1 to stop. */
static int on_timer(struct daemon *d)
{
	uint64_t ticks;

	if (read(d->tfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		return 1;
	daemon_drain(d, 0);
	daemon_blk_sweep(d);
	daemon_metrics_tick(d, 0);
	/* bound what a crash could lose to one timer period (--record: to a second) */
	out_flush(d->out);
	if (d->rec)
		rec_tick(d->rec, d->now_ns);
	if (d->sink)
		sink_tick(d->sink, d->now_ns);
	if (d->o->interval_ns && d->now_ns >= d->next_summary_ns) {
		daemon_summary(d, 0);
		d->next_summary_ns += d->o->interval_ns;
	}
	return d->o->duration_ns && d->now_ns - d->start_ns >= d->o->duration_ns;
}

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
				daemon_mode_run(d);
			else
				daemon_drain(d, 0); /* woken early: the ring is filling up */
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
	it_note_always(
		"%s started: layers %s (%d hooks attached); metrics %s%s%s; recording %s%s%s",
		IT_VERSION, layers[0] ? layers : "none", hooks,
		d->o->metrics_addr ? "http://" : "off",
		d->o->metrics_addr ? d->o->metrics_addr : "", d->o->metrics_addr ? "/metrics" : "",
		d->o->record_dir ? d->o->record_dir : "off", d->o->sink_url ? "; sink " : "",
		d->o->sink_url ? d->o->sink_url : "");
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

/* --record: the rolling recording (docs/record.md). 0 or -EIO (message printed). */
static int open_record(struct daemon *d)
{
	const struct it_opts *o = d->o;
	char who[PATH_MAX + 32];
	struct rec_opts ro = { .dir = o->record_dir,
			       .seg_size = o->record_size,
			       .seg_age_ns = o->record_age_ns,
			       .max_bytes = o->record_max,
			       .level = o->record_level,
			       .sysfs_root = o->sysfs_root,
			       /* host mode's blame is by VM: not kept in a recording */
			       .blame = o->blame && o->mode != IT_MODE_HOST,
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
	if (d->rec) {
		rec_set_cgroups(d->rec, d->cg);
		rec_set_ctnames(d->rec, d->names);
	}
}

/*
 * -d devices that hold nothing (size 0): a loop device no file is bound to, a
 * drive without a medium. Traced all the same (losetup may bind one later), but
 * said: no IO reaches them until then.
 */
static void warn_empty_devs(const struct daemon *d)
{
	for (int i = 0; i < d->o->nr_devs; i++) {
		const char *name = parse_dev_name_cached(d->o->devs[i], d->o->sysfs_root);
		uint64_t sectors;

		if (parse_dev_sectors(d->o->devs[i], d->o->sysfs_root, &sectors) || sectors)
			continue;
		it_warn("--dev: %s holds nothing (size 0%s): no IO reaches it until it does", name,
			!strncmp(name, "loop", 4) ?
				": a loop device no file is bound to (losetup)" :
				"");
	}
}

/* Everything up to the event loop: outputs, BPF, the fds. 0 or -errno (said). */
static int daemon_start(struct daemon *d)
{
	char who[PATH_MAX + 32];
	struct out_config oc;
	int ret;

	/*
	 * Loading parses the kernel's BTF (several MB, freed after load). A fixed
	 * mmap threshold keeps such blocks out of the heap, so they go back to
	 * the kernel instead of staying resident in a fragmented heap.
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	warn_empty_devs(d);
	if (d->o->metrics_addr) {
		/* before the (slow) load: a port in use fails at once */
		d->http = metrics_http_start(d->o->metrics_addr,
					     cli_where(d->o, "metrics", who, sizeof(who)));
		if (!d->http)
			return -EADDRINUSE;
	}
	ret = daemon_sink_load(d);
	if (!ret)
		ret = daemon_bpf_up(d);
	if (!ret)
		ret = open_json(d);
	if (ret)
		return ret;
	d->start_ns = d->now_ns = it_mono_ns();
	d->next_summary_ns = d->start_ns + d->o->interval_ns;
	daemon_stale_age(d);
	/* nothing is stale yet: the first sweep (a map syscall) one period in */
	d->next_sweep_ns = d->start_ns + d->sweep_ns;
	ret = open_record(d);
	if (ret)
		return ret;
	d->out = out_new(cli_out_config(d->o, &oc), d->text, d->json, d->start_ns);
	open_cgroups(d);
	if (d->o->file_names > 0 && !(d->fnames = dnames_new(d->o->file_names))) {
		it_err("cannot set up the file names: %s", strerror(errno));
		return -ENOMEM;
	}
	if (d->o->metrics_files > 0 && !(d->mfiles = mfiles_new(d->o->metrics_files))) {
		it_err("cannot set up --metrics-files: %s", strerror(errno));
		return -ENOMEM;
	}
	if (d->fnames) {
		dnames_attach(d->fnames, d->ld.skel);
		if (d->out)
			out_set_fnames(d->out, dnames_cache(d->fnames));
		if (d->rec)
			rec_set_fnames(d->rec, dnames_cache(d->fnames));
	}
	d->corr = d->out ? corr_new(on_request, d, HOLD_NS, 0) : NULL;
	d->blame = d->o->blame ?
			   dblame_new(d->cg, d->o->metrics_cg_depth, d->json ? d->out : NULL) :
			   NULL;
	if (d->blame)
		dblame_set_recorder(d->blame, d->rec);
	if (!d->out || !d->corr || (d->o->blame && !d->blame)) {
		it_err("cannot set up the event loop: %s", strerror(errno));
		return -ENOMEM;
	}
	ret = daemon_sink_open(d, d->fnames ? dnames_cache(d->fnames) : NULL);
	if (ret)
		return ret;
	ret = daemon_bpf_connect(d) ?: daemon_metrics_attach(d);
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
	daemon_drain(d, 1);
	corr_flush(d->corr);
	if (d->blame)
		dblame_finish(d->blame);
	/* what the server does not take now waits in the spill directory: lost only when counted */
	if (daemon_sink_finish(d) && !ret)
		ret = -EIO;
	d->now_ns = stop_ns; /* the run traced until the stop, not until the detach ended */
	daemon_summary(d, 1);
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
		uint64_t lost_blame, lost;

		rec_flush(d->rec); /* its losses counted before the close */
		lost_blame = rec_blame_lost(d->rec);
		lost = rec_close(d->rec);
		d->rec = NULL;
		if (lost)
			it_err("--record: %llu requests were not recorded (write errors)",
			       (unsigned long long)lost);
		if (lost_blame)
			it_err("--record: %llu blame lines were not recorded (write errors)",
			       (unsigned long long)lost_blame);
		if ((lost || lost_blame) && !ret)
			ret = -EIO;
	}
	return ret;
}

static void daemon_free(struct daemon *d)
{
	metrics_http_stop(d->http); /* first: its thread reads nothing of d, but stop serving */
	free(d->mhooks);
	daemon_bpf_down(d);
	corr_free(d->corr);
	rec_close(d->rec);
	out_free(d->out);
	dblame_free(d->blame);
	sink_free(d->sink);
	dnames_free(d->fnames);
	mfiles_free(d->mfiles);
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

int daemon_run(const struct it_opts *uo, const struct mode_ops *const modes[])
{
	struct daemon d = { .epfd = -1,
			    .sigfd = -1,
			    .tfd = -1,
			    .mode_fd = -1,
			    .modes = modes,
			    .rec_note = daemon_cg_note };
	int ret;

	d.cur = *uo; /* shallow: the strings stay uo's until a reload */
	d.o = &d.cur;
	block_hup();
	log_set_level(d.o->verbose, 0);
	ret = daemon_mode_prepare(&d, &d.cur, stderr);
	if (ret)
		return ret == -EINVAL ? 2 : 1; /* bad input: usage exit status */
	ret = daemon_start(&d);
	if (!ret)
		ret = daemon_finish(&d, loop(&d));
	daemon_free(&d);
	return ret ? 1 : 0;
}
