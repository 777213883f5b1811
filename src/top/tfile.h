/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tfile: `iotracer top`'s rows per file (`--group file`, the `f` key;
 * docs/top.md "Per file"). The kernel's aggregation is keyed by file as
 * well (IT_AGG_FILE); each file gets a row id here (its number in an
 * fn_index, + 1), which takes the cgroup id's place in the rows, so the view
 * prints and sorts them as it does cgroups; under the other groupings the
 * file is dropped from the keys and the entries summed. Pure.
 */
#ifndef IT_TOP_TFILE_H
#define IT_TOP_TFILE_H

#include <stddef.h>
#include <stdint.h>

#include "records/agg.h"
#include "records/fname.h"

/* The row id of the requests that name no file. */
#define TFILE_NONE UINT64_MAX

/*
 * The entries' keys for a grouping (by_file: a file's row id in cgroup_id,
 * no process; else no file), summed by key and sorted (tview_fold). The new
 * count, or -ENOMEM.
 */
int tfile_fold(struct fn_index *ix, struct agg_entry *e, int n, int by_file);
/* The row id of the file of block request b (TFILE_NONE: none; 0: out of memory). */
uint64_t tfile_id(struct fn_index *ix, const struct it_block_rec *b);
/* A file row's label: its name (names: the cache; NULL: none), else its device and inode. */
const char *tfile_label(const struct fn_index *ix, struct fn_cache *names, uint64_t id, char *buf,
			size_t n);

#endif /* IT_TOP_TFILE_H */
