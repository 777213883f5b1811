// SPDX-License-Identifier: GPL-2.0
/*
 * Guest mode: the standalone daemon inside a VM, plus a link to the host
 * daemon. Every finished block request that went through virtio-blk, SCSI
 * (virtio-scsi) or NVMe becomes one struct link_vreq (vreq.h: op, sector,
 * length, disk serial, bus and the guest's stage times) sent to the host, which joins it to QEMU's handling and the host IO.
 * The filter in force (the serials of the --dev disks) goes to the host too,
 * so the host traces only those disks' images in its kernel. Each record
 * also carries its buffer's guest-physical address (guestgpa.h), which lets
 * the host join it without uprobes in QEMU (LINK_CAP_GPA, docs/modes.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "iotracer.h"
#include "service/cli.h"
#include "records/corr.h"
#include "lib/jsonw.h"
#include "mode/guestgpa.h"
#include "load/loader.h"
#include "mode/link.h"
#include "lib/clock.h"
#include "mode/mode.h"
#include "mode/vreq.h"
#include "lib/parse.h"
#include "lib/log.h"

#define GUEST_DEFAULT_LINK "vsock:2:7767"

#define GUEST_VDEV 16

struct guest {
	struct mode_env env;
	struct link *link;
	uint64_t vreqs, dropped;
	struct vreq_stats st;
	uint64_t vmemmap; /* the kernel's vmemmap base (guestgpa.h); 0: records carry no address */
	uint64_t no_gpa; /* reads and writes streamed without an address */
	struct {
		uint32_t dev;
		int virtio;
	} vdev[GUEST_VDEV]; /* dev_on_virtio()'s answers */
	int nr_vdev;
};

static void guest_log(void *ctx, const char *line)
{
	struct guest *g = ctx;

	if (!g->env.o->quiet)
		it_note("%s", line);
}

/* The link's trouble (the host refusing it, a dial failing): said under -q too. */
static void guest_warn(void *ctx, const char *line)
{
	it_warn("%s", line);
}

static void guest_filter(struct guest *g)
{
	struct link_filter f;
	const struct it_opts *o = g->env.o;

	memset(&f, 0, sizeof(f));
	for (int i = 0; i < o->nr_devs && f.nr_serials < LINK_FILTER_MAX; i++) {
		const char *s = parse_dev_serial_cached(o->devs[i], o->sysfs_root);

		/* all 20 bytes may be used, as in the records (vreq.c) */
		if (s)
			memcpy(f.serials[f.nr_serials++], s, strnlen(s, LINK_SERIAL_LEN));
	}
	/*
	 * A filter that cannot name every disk would make the host stop tracing
	 * the ones left out: name none (= all of this guest's disks) instead.
	 */
	if (o->nr_devs > LINK_FILTER_MAX) {
		it_warn("-d names %d disks, a filter holds %d: the host traces all of this guest's disks",
			o->nr_devs, LINK_FILTER_MAX);
		f.nr_serials = 0;
	}
	for (int i = 0; i < o->nr_pids && f.nr_pids < LINK_FILTER_MAX; i++)
		f.pids[f.nr_pids++] = o->pids[i];
	link_set_filter(g->link, &f);
}

/* mode_ops.reload: the filter changed in place; the host hears of it at once. */
static void guest_reload(void *m)
{
	guest_filter(m);
}

static void *guest_start(const struct mode_env *env)
{
	const struct it_opts *o = env->o;
	struct link_opts lo = { .role = LINK_ROLE_GUEST, .name = o->name, .key = o->link_key };
	struct link_cb cb = { .log = guest_log, .warn = guest_warn };
	const char *spec = o->nr_links ? o->links[0] : GUEST_DEFAULT_LINK;
	struct guest *g = calloc(1, sizeof(*g));
	struct net_addr a;
	char why[128];
	int ret;

	if (!g)
		return NULL;
	g->env = *env;
	cb.ctx = g;
	/* tests only (docs/testing.md): a guest as an older iotracer was, without addresses */
	if (getenv("IOTRACER_TEST_NO_GPA")) {
		ret = -ENOTSUP;
		snprintf(why, sizeof(why), "IOTRACER_TEST_NO_GPA is set");
	} else {
		ret = guestgpa_measure(env->ld, &g->vmemmap, why, sizeof(why));
	}
	if (ret)
		it_warn("guest mode: no buffer addresses (%s): the host keeps its QEMU uprobes for "
			"this VM",
			why);
	else
		lo.caps |= LINK_CAP_GPA;
	if (addr_parse(spec, &a, why, sizeof(why))) {
		it_err("--link: bad address '%s': %s", spec, why);
		goto fail;
	}
	g->link = link_new(&lo, &cb);
	if (!g->link) {
		it_err("cannot set up the link: %s", strerror(errno));
		goto fail;
	}
	ret = link_dial(g->link, &a);
	if (ret) {
		it_err("--link %s: %s", spec, strerror(-ret));
		goto fail;
	}
	guest_filter(g);
	if (!o->quiet)
		it_note("guest mode: streaming disk requests to %s", spec);
	return g;
fail:
	link_free(g->link);
	free(g);
	return NULL;
}

static int guest_epoll_fd(void *m)
{
	struct guest *g = m;

	return link_epoll_fd(g->link);
}

static void guest_run(void *m, uint64_t now_ns)
{
	struct guest *g = m;

	guestgpa_keep(g->env.ld, g->vmemmap); /* a reload loaded a new skeleton */
	link_run(g->link, now_ns);
}

/*
 * Is the disk reached through virtio (virtio-blk, or a SCSI disk under a
 * virtio-scsi host: its sysfs path holds a virtioN device)? Such a request
 * kicks; one without its own kick had its notification suppressed.
 */
static int dev_on_virtio(struct guest *g, uint32_t dev)
{
	char path[256], tgt[512];
	ssize_t n;
	int i;

	for (i = 0; i < g->nr_vdev; i++)
		if (g->vdev[i].dev == dev)
			return g->vdev[i].virtio;
	snprintf(path, sizeof(path), "%s/dev/block/%u:%u", g->env.o->sysfs_root ?: "/sys",
		 IT_MAJOR(dev), IT_MINOR(dev));
	n = readlink(path, tgt, sizeof(tgt) - 1);
	tgt[n > 0 ? n : 0] = 0;
	if (g->nr_vdev < GUEST_VDEV) {
		g->vdev[g->nr_vdev].dev = dev;
		g->vdev[g->nr_vdev++].virtio = strstr(tgt, "/virtio") != NULL;
	}
	return strstr(tgt, "/virtio") != NULL;
}

static void guest_request(void *m, const struct corr_req *r)
{
	struct guest *g = m;
	struct link_vreq v[CORR_MAX_BLOCKS];
	uint32_t n = 0;

	for (int i = 0; i < r->nr_blocks; i++) {
		const struct it_block_rec *b = r->blocks[i];

		if (!vreq_layer_streamed(b->drv_layer))
			continue;
		if (!vreq_fill(&v[n], r, b, parse_dev_serial_cached(b->dev, g->env.o->sysfs_root),
			       dev_on_virtio(g, b->dev), &g->st))
			continue;
		g->no_gpa += !v[n].gpa && (v[n].op == IT_OP_READ || v[n].op == IT_OP_WRITE);
		n++;
	}
	if (!n)
		return;
	g->vreqs += n;
	g->dropped += link_send_vreqs(g->link, v, n);
}

/*
 * Give the link up to 2 s to deliver and get acks for what is waiting, so a
 * clean stop (SIGTERM) loses nothing the host could still take.
 */
static void guest_drain(struct guest *g)
{
	struct link_stats s;

	for (int i = 0; i < 200; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		link_run(g->link, it_mono_ns());
		link_get_stats(g->link, &s);
		if (!s.outbox_len)
			break;
		nanosleep(&ts, NULL);
	}
}

static void guest_summary(void *m, int final)
{
	struct guest *g = m;
	struct link_stats s;
	struct link_peer *p = link_next_peer(g->link, NULL);
	const struct link_peer_info *pi = p ? link_peer_info(p) : NULL;
	int64_t off = 0;
	uint64_t unc = 0;
	int have_clock = pi && !link_clock_get(&pi->clock, &off, &unc);

	if (final)
		guest_drain(g);
	link_get_stats(g->link, &s);
	fprintf(g->env.text,
		"link: %s, guest requests %llu (virtio-blk %llu, scsi %llu, nvme %llu; kick "
		"suppressed %llu), sent %llu, acked %llu, resent %llu, dropped %llu, waiting %llu",
		pi && pi->hello_done ? "up" : "down", (unsigned long long)g->vreqs,
		(unsigned long long)g->st.by_layer[0], (unsigned long long)g->st.by_layer[1],
		(unsigned long long)g->st.by_layer[2], (unsigned long long)g->st.kick_suppressed,
		(unsigned long long)s.records_sent, (unsigned long long)s.records_acked,
		(unsigned long long)s.records_resent, (unsigned long long)s.records_dropped,
		(unsigned long long)s.outbox_len);
	if (have_clock)
		fprintf(g->env.text, ", host clock %+lld ns +- %llu", (long long)off,
			(unsigned long long)unc);
	fputc('\n', g->env.text);
	if (g->env.json) {
		struct jw w;

		jw_init(&w);
		jw_obj_begin(&w, NULL);
		jw_str(&w, "type", "link");
		jw_str(&w, "mode", "guest");
		jw_bool(&w, "final", final);
		jw_bool(&w, "up", pi && pi->hello_done);
		jw_u64(&w, "virtio_requests", g->vreqs);
		jw_u64(&w, "sent", s.records_sent);
		jw_u64(&w, "acked", s.records_acked);
		jw_u64(&w, "resent", s.records_resent);
		jw_u64(&w, "dropped", s.records_dropped);
		jw_u64(&w, "waiting", s.outbox_len);
		jw_u64(&w, "no_serial", g->st.no_serial);
		jw_u64(&w, "virtio_blk", g->st.by_layer[0]);
		jw_u64(&w, "scsi", g->st.by_layer[1]);
		jw_u64(&w, "nvme", g->st.by_layer[2]);
		jw_u64(&w, "kick_suppressed", g->st.kick_suppressed);
		jw_u64(&w, "kick_stale", g->st.kick_stale);
		jw_bool(&w, "gpa", g->vmemmap != 0);
		jw_u64(&w, "no_gpa", g->no_gpa);
		jw_u64(&w, "connects", s.connects);
		jw_u64(&w, "malformed", s.malformed);
		if (have_clock) {
			jw_i64(&w, "clock_offset_ns", off);
			jw_u64(&w, "clock_uncert_ns", unc);
		}
		jw_obj_end(&w);
		fwrite(jw_data(&w), 1, jw_len(&w), g->env.json);
		fputc('\n', g->env.json);
		fflush(g->env.json);
		jw_free(&w);
	}
}

static void guest_stop(void *m)
{
	struct guest *g = m;

	link_free(g->link);
	free(g);
}

/* mode_ops.ld_config: the vmemmap measure's programs (guestgpa.c attaches them). */
static void guest_ld_config(struct ld_config *c)
{
	c->mode_progs = LD_PROGS_GUEST;
}

const struct mode_ops guest_mode_ops = {
	.name = "guest",
	.ld_config = guest_ld_config,
	.start = guest_start,
	.epoll_fd = guest_epoll_fd,
	.request = guest_request,
	.run = guest_run,
	.reload = guest_reload,
	.summary = guest_summary,
	.stop = guest_stop,
};
