// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon's /metrics glue (docs/metrics.md): the attach status, the
 * kernel's aggregation and the counters handed to metrics.c once a second;
 * and the sweep of block requests whose completion no program saw, which
 * feeds its in-flight gauge.
 */

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "iotracer.h"
#include "iotracer.skel.h"
#include "records/agg.h"
#include "load/blkstale.h"
#include "service/daemon.h"
#include "service/daemon_int.h"
#include "blame/dblame.h"
#include "load/aggmap.h"
#include "load/loader.h"
#include "service/dnames.h"
#include "records/metrics.h"
#include "service/mfiles.h"
#include "service/metrics_http.h"
#include "lib/abi.h"
#include "lib/clock.h"
#include "lib/parse.h"
#include "lib/log.h"

static const char *metrics_dev(uint32_t dev, void *ctx)
{
	const struct daemon *d = ctx;

	return dev ? parse_dev_name_cached(dev, d->o->sysfs_root) : "-";
}

/* The hooks of the attach report, for iotracer_hook_attached (again after a re-attach). */
static int daemon_metrics_hooks(struct daemon *d)
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
 * drops and cnt are the run's (all_drops, all_counters): the attached side's are
 * those less what earlier attaches carried, so the maps are read once a tick.
 */
static void blk_inflight_missed(const struct daemon *d, const uint64_t *drops, const uint64_t *cnt,
				uint64_t *inflight, uint64_t *missed)
{
	const int k = IT_L_BLOCK * IT_DROP_KINDS + IT_DROP_MISSED;
	uint64_t cur = drops[k] - d->carried_drops[k], ended;

	/* ended unseen: found stale by a sweep, or their entry taken by a new bio */
	ended = d->blk_swept + cnt[IT_CNT_BLK_RECYCLED] - d->carried_counters[IT_CNT_BLK_RECYCLED];
	*inflight = cur > ended ? cur - ended : 0;
	*missed = d->carried_drops[k] + (cur < ended ? cur : ended);
}

/*
 * The sweep's age and period: BLK_STALE_NS every SWEEP_NS, or for a test
 * (docs/testing.md) the age IOTRACER_TEST_BLK_STALE says, looked for twice as often.
 */
void daemon_stale_age(struct daemon *d)
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
void daemon_blk_sweep(struct daemon *d)
{
	long n;

	if (!d->ld.skel || !(d->ld.layers_on & (1u << IT_L_BLOCK)) || d->now_ns < d->next_sweep_ns)
		return;
	d->next_sweep_ns = d->now_ns + d->sweep_ns;
	n = ld_blk_sweep_stale(bpf_map__fd(d->ld.skel->maps.bios), d->now_ns, d->stale_ns,
			       2 * (long)bpf_map__max_entries(d->ld.skel->maps.bios));
	if (n > 0)
		d->blk_swept += n;
}

/* The cgroup label values, kept across rebuilds (NULL: no memory). */
static struct agg_labels *cg_labels(struct daemon *d)
{
	if (!d->cg_labels && (d->cg_labels = calloc(1, sizeof(*d->cg_labels)))) {
		d->cg_labels->names = d->names;
		d->cg_labels->ct_on = d->o->metrics_containers;
	}
	return d->cg_labels;
}

/*
 * The BPF side's note of a cgroup's first block request (bpf/agg.bpf.h), which
 * wakes the daemon: its label and container names from the cgroup as it is now.
 * By the next rebuild a container that did its IO and exited may be gone, and
 * its name with it.
 */
void daemon_cg_note(void *ctx, void *data, size_t size)
{
	const struct it_cgroup_rec *r = data;
	struct daemon *d = ctx;

	if (size >= sizeof(*r) && d->cg && d->o->metrics_cg_depth >= 0 && cg_labels(d))
		agg_label(r->cgroup_id, d->cg, d->o->metrics_cg_depth, d->cg_labels);
}

/*
 * The kernel's block aggregation folded into /metrics rows (*rows malloc'd);
 * 0 rows when it is off or unreadable. A re-attach starts it from zero.
 */
static int metrics_agg(struct daemon *d, struct agg_row **rows, FILE *files)
{
	struct agg_entry *e = NULL;
	int nr = 0, depth = d->o->metrics_cg_depth;

	*rows = NULL;
	if (!d->ld.skel || it_loader_agg(&d->ld, &e, &nr) || !nr)
		goto out;
	/* --metrics-files: the per-file families, from the same entries */
	if (d->mfiles && files)
		mfiles_write(d->mfiles, files, e, nr, dnames_cache(d->fnames));
	*rows = calloc(nr, sizeof(**rows));
	if (!*rows || (depth >= 0 && !cg_labels(d))) {
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
void daemon_metrics_tick(struct daemon *d, int force)
{
	uint64_t drops[IT_NR_DROPS], cnt[IT_NR_COUNTERS];
	struct metrics_proc proc;
	struct agg_row *rows;
	struct metrics_in in = { .drops = drops,
				 .drop_layers = d->ld.layers_on,
				 .counters = cnt,
				 .lost = d->lost + d->recs.spill_lost,
				 .hooks = d->mhooks,
				 .nr_hooks = d->nr_mhooks,
				 .dev_name = metrics_dev,
				 .dev_ctx = d };
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (!d->http || (!force && d->now_ns < d->next_metrics_ns))
		return;
	d->next_metrics_ns = d->now_ns + METRICS_NS;
	daemon_all_drops(d, drops);
	daemon_all_counters(d, cnt);
	blk_inflight_missed(d, drops, cnt, &in.blk_inflight, &in.blk_missed);
	daemon_current_hists(d);
	in.nr_khists = d->sum.nr;
	in.khists = d->sum.v;
	if (!metrics_proc_read("/proc", "self", &proc))
		in.proc = &proc;
	f = open_memstream(&text, &len);
	if (!f)
		return;
	/* the per-file families first: written from the entries before they are folded */
	in.nr_agg = metrics_agg(d, &rows, f);
	in.agg = rows;
	in.agg_cgroups = d->o->metrics_cg_depth >= 0;
	in.ct_labels = d->o->metrics_containers;
	in.names = d->names;
	metrics_write(f, &in);
	free(rows);
	if (d->m && d->mode->metrics)
		d->mode->metrics(d->m, f);
	if (d->blame)
		dblame_metrics(d->blame, f, it_mono_ns(), metrics_dev, d);
	daemon_sink_metrics(d, f);
	if (fclose(f)) {
		free(text); /* keep serving the previous text */
		return;
	}
	metrics_http_publish(d->http, text, len);
}

/*
 * The last of an attach (after daemon_bpf_connect): the attach report's
 * hooks for /metrics and its first text. Loading parsed the kernel's BTF
 * (MBs, freed since): the heap goes back to the kernel.
 */
int daemon_metrics_attach(struct daemon *d)
{
	if (d->http && daemon_metrics_hooks(d)) {
		it_err("--metrics: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	daemon_metrics_tick(d, 1);
	malloc_trim(0);
	return 0;
}
