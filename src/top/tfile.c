// SPDX-License-Identifier: GPL-2.0
/*
 * tfile: top's file rows: the aggregation's file keys into row ids and
 * labels. See tfile.h.
 */
#include <errno.h>
#include <stdio.h>

#include "iotracer.h"
#include "top/tfile.h"
#include "top/view.h"

static uint64_t same(uint64_t id, void *ctx)
{
	(void)ctx;
	return id;
}

int tfile_fold(struct fn_index *ix, struct agg_entry *e, int n, int by_file)
{
	for (int i = 0; i < n; i++) {
		struct it_agg_key *k = &e[i].key;
		struct fn_key f = { .ino = k->ino, .dev = k->file_dev, .bdev = k->file_bdev };
		long x = 0;

		if (by_file && k->ino && (x = fn_index_of(ix, &f)) < 0)
			return -ENOMEM;
		if (by_file) {
			k->cgroup_id = k->ino ? (uint64_t)x + 1 : TFILE_NONE;
			k->tgid = 0;
		}
		k->ino = 0;
		k->file_dev = 0;
		k->file_bdev = 0;
	}
	return tview_fold(e, n, same, NULL);
}

uint64_t tfile_id(struct fn_index *ix, const struct it_block_rec *b)
{
	struct fn_key k;
	long x;

	if (!fn_blk_key(b, NULL, &k))
		return TFILE_NONE;
	x = fn_index_of(ix, &k);
	return x < 0 ? 0 : (uint64_t)x + 1;
}

const char *tfile_label(const struct fn_index *ix, struct fn_cache *names, uint64_t id, char *buf,
			size_t n)
{
	const struct fn_key *k;
	const struct fn_entry *e;

	if (id == TFILE_NONE || !id || id > fn_index_count(ix))
		return "(no file)";
	k = fn_index_key(ix, id - 1);
	e = names ? fn_get(names, k) : NULL;
	if (e)
		return e->file;
	snprintf(buf, n, "[%u:%u] ino %llu", IT_MAJOR(k->dev), IT_MINOR(k->dev),
		 (unsigned long long)k->ino);
	return buf;
}
