// SPDX-License-Identifier: GPL-2.0
/*
 * stored: a recording's stored blame (RF_E_BLAME, docs/record.md) joined to
 * its requests. A matched request of a segment that records blame waits here,
 * by id, for its line (written about a second after it): an open-addressing
 * table (linear probing, deletion by backward shift), so only the requests
 * whose line has not come yet are held, 24 bytes each at most half full.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"

#define ST_MIN 1024

struct st_slot {
	uint64_t key; /* id + 1; 0: empty */
	uint64_t cgroup_id;
	uint32_t dev;
	int victim;
};

struct rp_stored {
	struct st_slot *t;
	size_t cap, n; /* cap: a power of 2 */
};

static size_t st_hash(uint64_t k, size_t cap)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k & (cap - 1);
}

struct rp_stored *st_new(void)
{
	struct rp_stored *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->t = calloc(ST_MIN, sizeof(*s->t));
	if (!s->t) {
		free(s);
		return NULL;
	}
	s->cap = ST_MIN;
	return s;
}

static void put_slot(struct rp_stored *s, const struct st_slot *e)
{
	size_t i = st_hash(e->key, s->cap);

	while (s->t[i].key && s->t[i].key != e->key)
		i = (i + 1) & (s->cap - 1);
	if (!s->t[i].key)
		s->n++;
	s->t[i] = *e;
}

static int grow(struct rp_stored *s)
{
	struct st_slot *old = s->t;
	size_t cap = s->cap;
	struct st_slot *t = calloc(2 * cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	s->t = t;
	s->cap = 2 * cap;
	s->n = 0;
	for (size_t i = 0; i < cap; i++)
		if (old[i].key)
			put_slot(s, &old[i]);
	free(old);
	return 0;
}

int st_put(struct rp_stored *s, uint64_t id, uint32_t dev, uint64_t cgroup_id, int victim)
{
	struct st_slot e = { .key = id + 1, .cgroup_id = cgroup_id, .dev = dev, .victim = victim };

	if (!e.key || (2 * (s->n + 1) > s->cap && grow(s)))
		return -ENOMEM; /* id UINT64_MAX: no key for it */
	put_slot(s, &e);
	return 0;
}

int st_take(struct rp_stored *s, uint64_t id, uint32_t *dev, uint64_t *cgroup_id, int *victim)
{
	size_t m = s->cap - 1, i = st_hash(id + 1, s->cap), j;

	while (s->t[i].key && s->t[i].key != id + 1)
		i = (i + 1) & m;
	if (!s->t[i].key)
		return 0;
	*dev = s->t[i].dev;
	*cgroup_id = s->t[i].cgroup_id;
	*victim = s->t[i].victim;
	/* backward shift: pull later entries of the run into the hole if their home allows */
	for (j = (i + 1) & m; s->t[j].key; j = (j + 1) & m) {
		size_t h = st_hash(s->t[j].key, s->cap);

		if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
			s->t[i] = s->t[j];
			i = j;
		}
	}
	memset(&s->t[i], 0, sizeof(s->t[i]));
	s->n--;
	return 1;
}

uint64_t st_count(const struct rp_stored *s)
{
	return s ? s->n : 0;
}

void st_free(struct rp_stored *s)
{
	if (!s)
		return;
	free(s->t);
	free(s);
}
