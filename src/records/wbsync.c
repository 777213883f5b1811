// SPDX-License-Identifier: GPL-2.0
/* wbsync: the writeback a sync waited for (see wbsync.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "records/wbsync.h"
#include "lib/jsonw.h"

int wbsync_init(struct wbsync *ws)
{
	ws->next = 0;
	ws->ring = calloc(WBSYNC_RING, sizeof(*ws->ring));
	return ws->ring ? 0 : -ENOMEM;
}

void wbsync_free(struct wbsync *ws)
{
	free(ws->ring);
	ws->ring = NULL;
}

/* The file a block write's pages belong to: its file system's dev, else the disk's. */
static uint32_t file_dev(const struct it_block_rec *b)
{
	return (b->flags & IT_F_WB) && b->wb.file_dev ? b->wb.file_dev : b->dev;
}

void wbsync_add(struct wbsync *ws, const struct it_block_rec *b, uint64_t id)
{
	struct wbsync_ent *e;

	if (!ws->ring || b->op != IT_OP_WRITE || !b->ino)
		return;
	e = &ws->ring[ws->next++ % WBSYNC_RING];
	e->id = id;
	e->ino = b->ino;
	e->dev = file_dev(b);
	e->q_ns = b->q_ns;
	e->c_ns = b->c_ns;
	e->bytes = b->bytes;
}

int wbsync_is_sync(const struct it_syscall_rec *s)
{
	return s->sys == IT_SYS_FSYNC || s->sys == IT_SYS_FDATASYNC ||
	       s->sys == IT_SYS_SYNC_FILE_RANGE;
}

void wbsync_match(const struct wbsync *ws, const struct it_syscall_rec *s,
		  struct wbsync_waited *out)
{
	uint64_t i, kept;

	memset(out, 0, sizeof(*out));
	if (!ws->ring || !s->ino)
		return;
	kept = ws->next < WBSYNC_RING ? ws->next : WBSYNC_RING;
	for (i = 0; i < kept; i++) {
		const struct wbsync_ent *e = &ws->ring[(ws->next - 1 - i) % WBSYNC_RING];

		if (e->c_ns < s->enter_ns)
			return; /* completed before the sync began: so did every older one */
		if (e->ino != s->ino || e->dev != s->dev || e->q_ns >= s->enter_ns)
			continue;
		out->n++;
		out->bytes += e->bytes;
		if (out->nr_ids < WBSYNC_MAX_IDS)
			out->ids[out->nr_ids++] = e->id;
	}
	/* every kept entry completed after the sync began: dropped ones may have too */
	out->truncated = ws->next > WBSYNC_RING;
}

void wbsync_json(struct jw *w, const struct wbsync_waited *wt)
{
	jw_obj_begin(w, "waited");
	jw_u64(w, "n", wt->n);
	jw_u64(w, "bytes", wt->bytes);
	jw_arr_begin(w, "ids");
	for (uint32_t i = 0; i < wt->nr_ids; i++)
		jw_u64(w, NULL, wt->ids[i]);
	jw_arr_end(w);
	if (wt->truncated)
		jw_bool(w, "truncated", 1);
	jw_obj_end(w);
}
