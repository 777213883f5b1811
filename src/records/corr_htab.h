/* SPDX-License-Identifier: GPL-2.0 */
/*
 * corr_htab: the chained hash tables of corr.c (corr.c alone includes it),
 * over corr_link lists, growing with their entries.
 */
#ifndef IT_CORR_HTAB_H
#define IT_CORR_HTAB_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "records/corr_link.h"

#define HTAB_MIN_BUCKETS 64
/*
 * Chained tables: more entries than buckets only makes chains longer. A
 * table starts at HTAB_MIN_BUCKETS and doubles while its entries outnumber
 * its buckets (htab_fit), up to 4096 buckets (64 KB a table): an
 * always-on daemon, whose records are the slow requests only, keeps 1 KB a
 * table rather than 192 KB for three (its RssAnon, docs/bench.md); sizing for
 * max_pending (64 Ki) kept 3 MB resident for nothing.
 */
#define HTAB_MAX_BUCKETS (1u << 12)

struct htab {
	struct corr_link *b;
	size_t mask;
	/* an entry's hash (its key's htab_hash), to move it when the table grows */
	uint64_t (*hash)(const struct corr_link *l);
};

static inline uint64_t htab_hash(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ULL;

	h ^= (b + 0x7f4a7c159e3779b9ULL) * 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 31;
	h *= 0x94d049bb133111ebULL;
	return h ^ (h >> 29);
}

static inline struct corr_link *htab_bucket(const struct htab *t, uint64_t a, uint64_t b)
{
	return &t->b[htab_hash(a, b) & t->mask];
}

static inline int htab_alloc(struct htab *t, size_t nb)
{
	t->b = malloc(nb * sizeof(*t->b));
	if (!t->b)
		return -ENOMEM;
	for (size_t i = 0; i < nb; i++)
		link_init(&t->b[i]);
	t->mask = nb - 1;
	return 0;
}

static inline int htab_init(struct htab *t, uint64_t (*hash)(const struct corr_link *l))
{
	t->hash = hash;
	return htab_alloc(t, HTAB_MIN_BUCKETS);
}

/*
 * Double t when its n entries outnumber its buckets, up to HTAB_MAX_BUCKETS.
 * Entries of one key keep their order (a bucket is moved head first, each
 * entry to its new bucket's tail). Out of memory: t stays as it is.
 */
static inline void htab_fit(struct htab *t, size_t n)
{
	size_t nb = t->mask + 1;
	struct htab grown = { .hash = t->hash };

	if (n <= nb || nb >= HTAB_MAX_BUCKETS || htab_alloc(&grown, 2 * nb))
		return;
	for (size_t i = 0; i < nb; i++) {
		struct corr_link *h = &t->b[i];

		while (!link_empty(h)) {
			struct corr_link *l = h->next;

			link_del(l);
			link_add_tail(&grown.b[grown.hash(l) & grown.mask], l);
		}
	}
	free(t->b);
	*t = grown;
}

#endif /* IT_CORR_HTAB_H */
