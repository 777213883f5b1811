// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon's SIGHUP (docs/config.md): read the new options, apply the
 * reload plan (reload.c) in place or by a re-attach that carries the
 * counters over, and keep the old set when the new one fails.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "iotracer.h"
#include "iotracer.skel.h"
#include "service/config.h"
#include "service/daemon.h"
#include "service/daemon_int.h"
#include "load/loader.h"
#include "records/metrics.h"
#include "records/output.h"
#include "service/reload.h"
#include "lib/clock.h"
#include "lib/log.h"

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
		if (!ret && daemon_mode_prepare(d, n, err))
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
	struct ld_config c;
	int ret;

	daemon_ld_config(d, n, &c);
	ret = err ? it_loader_filters(&d->ld, &c, err) : -ENOMEM;

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

	daemon_read_drops(d, drops);
	it_loader_skipped(&d->ld, skipped);
	it_loader_counts(&d->ld, NULL, cnt);
	for (int i = 0; i < IT_NR_COUNTERS; i++)
		d->carried_counters[i] += cnt[i];
	for (int i = 0; i < IT_NR_DROPS; i++)
		d->carried_drops[i] += drops[i];
	for (int i = 0; i < IT_L_MAX; i++)
		d->carried_skipped[i] += skipped[i];
	d->blk_swept = 0; /* in the carried issued - completed, as every missed one */
	daemon_read_khists(d, &d->carried);
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
	struct ld_config c;
	int ret;

	daemon_ld_config(d, d->o, &c);
	ret = err ? it_loader_load(&nld, &c, err) : -ENOMEM;

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
		daemon_drain(d, 1);
		daemon_watch_bpf(d, EPOLL_CTL_DEL);
		carry_counters(d);
	}
	daemon_bpf_down(d);
	d->lost += d->recs.spill_lost; /* the new load's recbuf counts from 0 */
	d->ld = nld;
	d->hists_switch_ns = 0;
	ret = it_loader_attach(&d->ld, &c, stderr);
	if (!ret)
		ret = daemon_bpf_buffers(d);
	if (!ret)
		ret = daemon_bpf_connect(d) ?: daemon_metrics_attach(d);
	if (!ret)
		ret = daemon_watch_bpf(d, EPOLL_CTL_ADD);
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
int daemon_reload(struct daemon *d)
{
	const char *file = d->o->config_path ? d->o->config_path : "(no config file)";
	struct reload_plan p;
	struct it_opts n;
	char why[512];
	int ret = 0, adopted = 0, said;

	if (reload_read(d, &n, why, sizeof(why))) {
		it_warn("reload: %s; the running configuration stays", why);
		cli_free(&n);
		return 0;
	}
	reload_plan(d->o, &n, &p);
	/* once per value the file asks for, not at every SIGHUP while it asks the same */
	said = !strcmp(p.what[RELOAD_START], d->start_said);
	if (p.nr[RELOAD_START] && !said)
		it_warn("reload: %s: read at start only, unchanged until a restart (%s)",
			p.names[RELOAD_START], p.what[RELOAD_START]);
	snprintf(d->start_said, sizeof(d->start_said), "%s", p.what[RELOAD_START]);
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
	} else if (!p.nr[RELOAD_START] || said) {
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
