// SPDX-License-Identifier: GPL-2.0
/*
 * dnames: name records into the name cache, and the BPF map "named" kept to
 * what the cache holds (see dnames.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "iotracer.h"
#include "iotracer.skel.h"
#include "lib/log.h"
#include "service/dnames.h"

struct dnames {
	struct fn_cache *cache;
	struct fnres *res;
	int map_fd; /* "named" of the attached load; -1: none */
	volatile uint32_t *gen; /* its name_gen */
	size_t high, low; /* forget from high down to low entries */
	int forgot; /* deleted from the map since the last bump of name_gen */
	uint64_t forgotten;
	char file[FR_PATH_MAX], cfile[FR_PATH_MAX];
};

/* The key as the BPF side's map has it. */
static void forget(struct dnames *d, const struct fn_key *k)
{
	struct it_file_key bk = { .ino = k->ino, .dev = k->dev, .bdev = k->bdev };

	if (d->map_fd < 0)
		return;
	bpf_map_delete_elem(d->map_fd, &bk); /* absent: named by an earlier load, or not at all */
	d->forgot = 1;
	d->forgotten++;
}

static void on_evict(const struct fn_key *k, void *ctx)
{
	forget(ctx, k);
}

struct dnames *dnames_new(int max)
{
	struct dnames *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->map_fd = -1;
	d->cache = fn_new((size_t)max);
	d->res = fnres_new(NULL);
	if (!d->cache || !d->res) {
		dnames_free(d);
		return NULL;
	}
	d->high = (size_t)max - (size_t)max / 8;
	d->low = (size_t)max - (size_t)max / 4;
	fn_set_evict(d->cache, on_evict, d);
	return d;
}

void dnames_free(struct dnames *d)
{
	if (!d)
		return;
	fn_free(d->cache);
	fnres_free(d->res);
	free(d);
}

void dnames_attach(struct dnames *d, struct iotracer_bpf *skel)
{
	d->map_fd = bpf_map__fd(skel->maps.named);
	d->gen = &skel->bss->name_gen;
}

int dnames_record(struct dnames *d, const void *data, size_t size)
{
	const struct it_hdr *h = data;
	struct fn_key k;

	if (size < sizeof(*h) || h->type != IT_REC_NAME)
		return 0;
	if (fnres_name(d->res, data, size, &k, d->file, d->cfile) == 0 &&
	    fn_put(d->cache, &k, d->file, d->cfile[0] ? d->cfile : NULL))
		it_debug("file names: out of memory for %s", d->file);
	return 1;
}

void dnames_tick(struct dnames *d)
{
	struct fn_key miss[FN_MISSES];
	size_t n = fn_take_misses(d->cache, miss, FN_MISSES);

	for (size_t i = 0; i < n; i++)
		forget(d, &miss[i]);
	if (fn_count(d->cache) > d->high)
		fn_evict(d->cache, fn_count(d->cache) - d->low);
	/* a thread or CPU that named one of them last must look again */
	if (d->forgot && d->gen)
		__atomic_fetch_add(d->gen, 1, __ATOMIC_RELEASE);
	d->forgot = 0;
}

struct fn_cache *dnames_cache(struct dnames *d)
{
	return d ? d->cache : NULL;
}

void dnames_stats(const struct dnames *d, struct dnames_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!d)
		return;
	fn_stats(d->cache, &st->cache);
	fnres_stats(d->res, &st->res);
	st->forgotten = d->forgotten;
}
