// SPDX-License-Identifier: GPL-2.0
/*
 * spill: the sink's spill directory (see sink.h, docs/fleet.md, "Nothing
 * lost"). Requests the queue has no room for are recorded there by the
 * recorder of --record (records/record.c: the same segments, readable by
 * `iotracer report DIR`), in small segments; a closed segment is replayed
 * once the queue has room, and deleted when every batch made of it was
 * sent. The directory's size is bounded by --sink-spill-max (the recorder's
 * own budget, which deletes the oldest segments, is not used: a full spill
 * drops new requests, counted).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "records/recfmt.h"
#include "records/record.h"
#include "lib/log.h"
#include "sink/sink_int.h"

#define SK_SPILL_SEG (1ull << 20) /* a spill segment: replayed in one drain tick */
#define SK_SPILL_AGE_NS (2ull * 1000 * 1000 * 1000)
#define SK_SCAN_NS (1000ull * 1000 * 1000)

int sk_spill_init(struct sk_spill *sp, const char *dir, uint64_t max, uint64_t start_ns,
		  const char *sysfs_root, struct cg_cache *cg, const char *who)
{
	memset(sp, 0, sizeof(*sp));
	sp->dir = strdup(dir);
	sp->max = max;
	sp->start_ns = start_ns;
	sp->sysfs_root = sysfs_root;
	sp->cg = cg;
	sp->who = who;
	sp->rescan = 1;
	return sp->dir ? 0 : -ENOMEM;
}

static int is_seg(const struct dirent *e)
{
	size_t n = strlen(e->d_name), s = strlen(RF_SEG_SUFFIX);

	return n > s && !strcmp(e->d_name + n - s, RF_SEG_SUFFIX);
}

/* Sum of the segments' sizes. */
static uint64_t scan(const struct sk_spill *sp)
{
	struct dirent **ents;
	int n = scandir(sp->dir, &ents, is_seg, alphasort);
	char p[PATH_MAX];
	struct stat st;
	uint64_t total = 0;

	for (int i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "%s/%s", sp->dir, ents[i]->d_name);
		if (!stat(p, &st))
			total += (uint64_t)st.st_size;
		free(ents[i]);
	}
	if (n >= 0)
		free(ents);
	return total;
}

uint64_t sk_spill_used(struct sk_spill *sp, uint64_t now_ns)
{
	if (now_ns >= sp->next_scan_ns) {
		sp->used = scan(sp);
		sp->rc_bytes_at_scan = rec_bytes(sp->rc);
		sp->next_scan_ns = now_ns + SK_SCAN_NS;
	}
	return sp->used + rec_bytes(sp->rc) - sp->rc_bytes_at_scan;
}

/* The recorder, opened at the first request to spill. 0 or a drop reason. */
static int spill_open(struct sk_spill *sp, uint64_t now_ns)
{
	struct rec_opts ro = { .dir = sp->dir,
			       .seg_size = SK_SPILL_SEG,
			       .seg_age_ns = SK_SPILL_AGE_NS,
			       .max_bytes = UINT64_MAX / 2, /* our own budget instead */
			       .sysfs_root = sp->sysfs_root,
			       .blame = 1,
			       .who = sp->who };

	if (sp->rc)
		return 0;
	if (sk_spill_used(sp, now_ns) >= sp->max)
		return SK_DROP_SPILL_FULL;
	/* the run of the segments is the daemon's: its rows keep their (boot, run, id) */
	sp->rc = rec_open(&ro, sp->start_ns);
	if (!sp->rc)
		return SK_DROP_SPILL_ERROR;
	rec_set_cgroups(sp->rc, sp->cg);
	if (sp->fn)
		rec_set_fnames(sp->rc, sp->fn);
	sp->rc_bytes_at_scan = 0;
	sp->lost_seen = sp->blame_seen = 0;
	return 0;
}

/* Room for one more entry: the recorder open and the budget not reached; 0 or a drop reason. */
static int room(struct sk_spill *sp, uint64_t now_ns)
{
	int err = spill_open(sp, now_ns);

	if (err)
		return err;
	return sk_spill_used(sp, now_ns) >= sp->max ? SK_DROP_SPILL_FULL : 0;
}

int sk_spill_request(struct sk_spill *sp, const struct corr_req *r, uint64_t now_ns)
{
	int err = room(sp, now_ns);

	if (!err) {
		rec_request(sp->rc, r);
		rec_tick(sp->rc, now_ns);
	}
	return err;
}

int sk_spill_blame(struct sk_spill *sp, const struct blame_line *l, uint64_t now_ns)
{
	int err = room(sp, now_ns);

	if (!err)
		rec_blame(sp->rc, l);
	return err;
}

uint64_t sk_spill_lost(struct sk_spill *sp, uint64_t *blame)
{
	uint64_t n = rec_lost(sp->rc) - sp->lost_seen, b = rec_blame_lost(sp->rc) - sp->blame_seen;

	sp->lost_seen += n;
	sp->blame_seen += b;
	*blame = b;
	return n;
}

uint64_t sk_spill_close(struct sk_spill *sp, uint64_t *blame)
{
	uint64_t lost;

	*blame = 0;
	if (!sp->rc)
		return 0;
	rec_flush(sp->rc);
	lost = sk_spill_lost(sp, blame);
	sp->used += rec_bytes(sp->rc) - sp->rc_bytes_at_scan;
	rec_close(sp->rc);
	sp->rc = NULL;
	sp->rc_bytes_at_scan = 0;
	sp->rescan = 1;
	return lost;
}

static int listed(const struct sk_spill *sp, const char *path)
{
	for (const struct sk_seg *s = sp->segs; s; s = s->next)
		if (!strcmp(s->path, path))
			return 1;
	return 0;
}

struct sk_seg *sk_spill_next(struct sk_spill *sp)
{
	const char *open = rec_segment(sp->rc);
	struct dirent **ents;
	struct sk_seg *seg = NULL;
	char p[PATH_MAX];
	struct stat st;
	int n;

	if (!sp->rescan)
		return NULL;
	n = scandir(sp->dir, &ents, is_seg, alphasort);
	for (int i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "%s/%s", sp->dir, ents[i]->d_name);
		if (!seg && !(open && !strcmp(open, p)) && !listed(sp, p) && !stat(p, &st)) {
			seg = calloc(1, sizeof(*seg));
			if (seg)
				seg->path = strdup(p);
			if (seg && !seg->path) {
				free(seg);
				seg = NULL;
			}
			if (seg)
				seg->bytes = (uint64_t)st.st_size;
		}
		free(ents[i]);
	}
	if (n >= 0)
		free(ents);
	if (seg) {
		seg->next = sp->segs;
		sp->segs = seg;
	} else if (n >= 0) {
		sp->rescan = 0;
	}
	return seg;
}

void sk_spill_reap(struct sk_spill *sp)
{
	struct sk_seg **pp = &sp->segs;

	while (*pp) {
		struct sk_seg *s = *pp;

		if (!s->read || __atomic_load_n(&s->refs, __ATOMIC_ACQUIRE)) {
			pp = &s->next;
			continue;
		}
		if (unlink(s->path) && errno != ENOENT && !sp->warned) {
			it_warn("%s: cannot delete the replayed %s: %s", sp->who, s->path,
				strerror(errno));
			sp->warned = 1;
		}
		sp->used = sp->used > s->bytes ? sp->used - s->bytes : 0;
		*pp = s->next;
		free(s->path);
		free(s);
	}
}

void sk_spill_free(struct sk_spill *sp)
{
	uint64_t b;

	sk_spill_close(sp, &b);
	while (sp->segs) {
		struct sk_seg *s = sp->segs;

		sp->segs = s->next;
		free(s->path);
		free(s);
	}
	free(sp->dir);
	sp->dir = NULL;
}
