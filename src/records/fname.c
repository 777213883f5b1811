// SPDX-License-Identifier: GPL-2.0
/*
 * fname: the bounded (dev, ino) -> name cache (see fname.h). Entries live in
 * one array that grows up to max; a hash of chains (indices) finds them, a
 * doubly linked list (indices) orders them by use, most recent first.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iotracer.h"
#include "records/corr.h"
#include "records/fname.h"
#include "lib/jsonw.h"

#define FN_NIL UINT32_MAX
#define FN_MIN_CAP 64

struct fn_cache {
	struct fn_hot hot; /* first: fn_get_json() in fname.h reads it */
	struct fn_entry *e;
	uint32_t *bucket; /* nb heads (FN_NIL: empty) */
	size_t cap, nb, max, nr;
	uint32_t head, tail; /* most and least recently used */
	uint32_t free; /* unused entries, chained by hnext */
	uint32_t last; /* the last entry found (requests come in runs of one file) */
	struct fn_stats st;
	struct fn_key missed[FN_MISSES]; /* the newest misses, each once */
	size_t nr_missed;
	void (*evict_fn)(const struct fn_key *k, void *ctx);
	void *evict_ctx;
};

_Static_assert(offsetof(struct fn_cache, hot) == 0, "fn_get_json() reads the cache as its fn_hot");

static size_t key_hash(const struct fn_key *k, size_t nb)
{
	uint64_t h = k->ino * 0x9e3779b97f4a7c15ull ^ ((uint64_t)k->dev << 1 | k->bdev);

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return (size_t)(h & (nb - 1));
}

struct fn_cache *fn_new(size_t max)
{
	struct fn_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->max = max ? max : 1;
	c->head = c->tail = c->free = c->last = FN_NIL;
	return c;
}

/* The JSON members of e's names (fn_get_json), made again at their next use. */
static void entry_json_free(struct fn_cache *c, struct fn_entry *e)
{
	if (!e->json)
		return;
	c->hot.json = NULL;
	c->st.bytes -= e->json_dlen;
	free(e->json);
	e->json = NULL;
	e->json_len = e->json_dlen = 0;
}

static void entry_strings_free(struct fn_cache *c, struct fn_entry *e)
{
	entry_json_free(c, e);
	c->st.bytes -= e->file_len + 1 + (e->cfile ? e->cfile_len + 1 : 0);
	free(e->file);
	free(e->cfile);
	e->file = e->cfile = NULL;
}

void fn_free(struct fn_cache *c)
{
	if (!c)
		return;
	for (uint32_t i = c->head; i != FN_NIL; i = c->e[i].next) {
		free(c->e[i].file);
		free(c->e[i].cfile);
		free(c->e[i].json);
	}
	free(c->e);
	free(c->bucket);
	free(c);
}

void fn_set_evict(struct fn_cache *c, void (*fn)(const struct fn_key *k, void *ctx), void *ctx)
{
	c->evict_fn = fn;
	c->evict_ctx = ctx;
}

static void lru_unlink(struct fn_cache *c, uint32_t i)
{
	struct fn_entry *e = &c->e[i];

	if (e->prev != FN_NIL)
		c->e[e->prev].next = e->next;
	else
		c->head = e->next;
	if (e->next != FN_NIL)
		c->e[e->next].prev = e->prev;
	else
		c->tail = e->prev;
}

static void lru_front(struct fn_cache *c, uint32_t i)
{
	struct fn_entry *e = &c->e[i];

	c->hot.json = NULL; /* another entry first, or the same renamed */
	e->prev = FN_NIL;
	e->next = c->head;
	if (c->head != FN_NIL)
		c->e[c->head].prev = i;
	c->head = i;
	if (c->tail == FN_NIL)
		c->tail = i;
}

static uint32_t find(const struct fn_cache *c, const struct fn_key *k)
{
	if (!c->nb)
		return FN_NIL;
	for (uint32_t i = c->bucket[key_hash(k, c->nb)]; i != FN_NIL; i = c->e[i].hnext)
		if (fn_key_eq(&c->e[i].key, k))
			return i;
	return FN_NIL;
}

/* Take entry i out of its hash chain. */
static void hash_unlink(struct fn_cache *c, uint32_t i)
{
	uint32_t *p = &c->bucket[key_hash(&c->e[i].key, c->nb)];

	while (*p != i)
		p = &c->e[*p].hnext;
	*p = c->e[i].hnext;
}

static void hash_link(struct fn_cache *c, uint32_t i)
{
	size_t h = key_hash(&c->e[i].key, c->nb);

	c->e[i].hnext = c->bucket[h];
	c->bucket[h] = i;
}

/* Forget the least recently used entry (told to evict_fn). */
static void evict_one(struct fn_cache *c)
{
	uint32_t i = c->tail;
	struct fn_entry *e = &c->e[i];

	if (c->evict_fn)
		c->evict_fn(&e->key, c->evict_ctx);
	lru_unlink(c, i);
	hash_unlink(c, i);
	entry_strings_free(c, e);
	e->hnext = c->free;
	c->free = i;
	if (c->last == i)
		c->last = FN_NIL;
	c->nr--;
	c->st.evicted++;
}

/* Twice the entries (up to max), the hash as many buckets, rehashed. 0 or -ENOMEM. */
static int grow(struct fn_cache *c)
{
	size_t cap = c->cap ? c->cap * 2 : FN_MIN_CAP, nb = 1;
	struct fn_entry *e;
	uint32_t *b;

	if (cap > c->max)
		cap = c->max;
	while (nb < cap)
		nb <<= 1;
	e = realloc(c->e, cap * sizeof(*e));
	if (!e)
		return -ENOMEM;
	c->e = e;
	b = malloc(nb * sizeof(*b));
	if (!b)
		return -ENOMEM;
	free(c->bucket);
	c->bucket = b;
	c->nb = nb;
	memset(b, 0xff, nb * sizeof(*b));
	for (uint32_t i = c->head; i != FN_NIL; i = c->e[i].next)
		hash_link(c, i);
	/* the new entries are free */
	for (size_t i = cap; i-- > c->cap;) {
		c->e[i].hnext = c->free;
		c->free = (uint32_t)i;
	}
	c->cap = cap;
	return 0;
}

static int set_strings(struct fn_cache *c, struct fn_entry *e, const char *file, const char *cfile)
{
	char *f = strdup(file), *cf = cfile && *cfile ? strdup(cfile) : NULL;

	if (!f || (cfile && *cfile && !cf)) {
		free(f);
		free(cf);
		return -ENOMEM;
	}
	if (e->file)
		entry_strings_free(c, e);
	e->file = f;
	e->cfile = cf;
	e->file_len = (uint32_t)strlen(f);
	e->cfile_len = cf ? (uint32_t)strlen(cf) : 0;
	c->st.bytes += e->file_len + 1 + (cf ? e->cfile_len + 1 : 0);
	return 0;
}

int fn_put(struct fn_cache *c, const struct fn_key *k, const char *file, const char *cfile)
{
	uint32_t i = find(c, k);

	if (i != FN_NIL) {
		if (set_strings(c, &c->e[i], file, cfile))
			return -ENOMEM;
		lru_unlink(c, i);
		lru_front(c, i);
		c->st.puts++;
		return 0;
	}
	if (c->nr >= c->max)
		evict_one(c);
	if (c->free == FN_NIL && grow(c))
		return -ENOMEM;
	i = c->free;
	c->free = c->e[i].hnext;
	memset(&c->e[i], 0, sizeof(c->e[i]));
	c->e[i].key = *k;
	if (set_strings(c, &c->e[i], file, cfile)) {
		c->e[i].hnext = c->free;
		c->free = i;
		return -ENOMEM;
	}
	hash_link(c, i);
	lru_front(c, i);
	c->nr++;
	c->st.puts++;
	return 0;
}

static void note_miss(struct fn_cache *c, const struct fn_key *k)
{
	for (size_t i = 0; i < c->nr_missed; i++)
		if (fn_key_eq(&c->missed[i], k))
			return;
	if (c->nr_missed == FN_MISSES) /* the oldest goes */
		memmove(c->missed, c->missed + 1, (FN_MISSES - 1) * sizeof(c->missed[0]));
	else
		c->nr_missed++;
	c->missed[c->nr_missed - 1] = *k;
}

size_t fn_take_misses(struct fn_cache *c, struct fn_key *out, size_t max)
{
	size_t n = c->nr_missed < max ? c->nr_missed : max;

	memcpy(out, c->missed + (c->nr_missed - n), n * sizeof(*out));
	c->nr_missed = 0;
	return n;
}

/* fn_get(): k's entry index (FN_NIL: a miss), the entry made the most recently used. */
static inline __attribute__((always_inline)) uint32_t get(struct fn_cache *c,
							  const struct fn_key *k)
{
	uint32_t i = c->last;

	if (i == FN_NIL || !fn_key_eq(&c->e[i].key, k)) {
		i = find(c, k);
		if (i == FN_NIL) {
			c->st.misses++;
			note_miss(c, k);
			return FN_NIL;
		}
		c->last = i;
	}
	c->hot.hits++;
	if (c->head != i) {
		lru_unlink(c, i);
		lru_front(c, i);
	}
	return i;
}

const struct fn_entry *fn_get(struct fn_cache *c, const struct fn_key *k)
{
	uint32_t i = get(c, k);

	return i == FN_NIL ? NULL : &c->e[i];
}

/* e's names as JSON members (fn_get_json): an object's, its braces off. 0 or -ENOMEM. */
static __attribute__((noinline)) int entry_json(struct fn_cache *c, struct fn_entry *e)
{
	char devno[24];
	struct jw w;
	size_t n, d;
	int ret = -ENOMEM;

	snprintf(devno, sizeof(devno), "%u:%u", IT_MAJOR(e->key.dev), IT_MINOR(e->key.dev));
	jw_init(&w);
	jw_obj_begin(&w, NULL);
	jw_str(&w, "file", e->file);
	if (e->cfile)
		jw_str(&w, "container_file", e->cfile);
	n = jw_len(&w) - 1;
	jw_str(&w, "file_devno", devno);
	d = jw_len(&w) - 1;
	/* JW_PAD bytes more: jw_members_pad() copies in blocks of that many */
	if (!jw_error(&w) && (e->json = calloc(1, d + JW_PAD))) {
		memcpy(e->json, jw_data(&w) + 1, d);
		e->json_len = (uint32_t)n;
		e->json_dlen = (uint32_t)d;
		c->st.bytes += d;
		ret = 0;
	}
	jw_free(&w);
	return ret;
}

/* fn_get_json() of a key that is not the hot one (or of none). */
const char *fn_get_json_find(struct fn_cache *c, const struct fn_key *k, size_t *len, size_t *dlen)
{
	uint32_t i = get(c, k);
	struct fn_entry *e;

	if (i == FN_NIL)
		return NULL;
	e = &c->e[i];
	if (!e->json && entry_json(c, e))
		return NULL;
	*len = e->json_len;
	*dlen = e->json_dlen;
	/* the most recently used now, its members made: hot until anything moves */
	c->hot.key = e->key;
	c->hot.json = e->json;
	c->hot.len = e->json_len;
	c->hot.dlen = e->json_dlen;
	return e->json;
}

const struct fn_entry *fn_peek(const struct fn_cache *c, const struct fn_key *k)
{
	uint32_t i = find(c, k);

	return i == FN_NIL ? NULL : &c->e[i];
}

size_t fn_evict(struct fn_cache *c, size_t n)
{
	size_t done = 0;

	while (done < n && c->nr) {
		evict_one(c);
		done++;
	}
	return done;
}

size_t fn_count(const struct fn_cache *c)
{
	return c->nr;
}

size_t fn_max(const struct fn_cache *c)
{
	return c->max;
}

void fn_stats(const struct fn_cache *c, struct fn_stats *st)
{
	*st = c->st;
	st->hits = c->hot.hits;
	st->entries = c->nr;
}

/* ---- fn_index ---- */

struct fn_index {
	struct fn_key *k;
	size_t nr, cap;
	uint32_t *slot; /* number + 1 per slot; 0: empty (open addressing) */
	size_t nb;
};

struct fn_index *fn_index_new(void)
{
	return calloc(1, sizeof(struct fn_index));
}

void fn_index_free(struct fn_index *x)
{
	if (!x)
		return;
	free(x->k);
	free(x->slot);
	free(x);
}

static int index_rehash(struct fn_index *x, size_t nb)
{
	uint32_t *s = calloc(nb, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < x->nr; i++) {
		size_t h = key_hash(&x->k[i], nb);

		while (s[h])
			h = (h + 1) & (nb - 1);
		s[h] = (uint32_t)i + 1;
	}
	free(x->slot);
	x->slot = s;
	x->nb = nb;
	return 0;
}

long fn_index_of(struct fn_index *x, const struct fn_key *k)
{
	size_t h;

	if ((x->nr + 1) * 2 > x->nb && index_rehash(x, x->nb ? x->nb * 2 : 256))
		return -1;
	for (h = key_hash(k, x->nb); x->slot[h]; h = (h + 1) & (x->nb - 1))
		if (fn_key_eq(&x->k[x->slot[h] - 1], k))
			return (long)x->slot[h] - 1;
	if (x->nr == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 64;
		struct fn_key *n = realloc(x->k, cap * sizeof(*n));

		if (!n)
			return -1;
		x->k = n;
		x->cap = cap;
	}
	x->k[x->nr] = *k;
	x->slot[h] = (uint32_t)++x->nr;
	return (long)x->nr - 1;
}

const struct fn_key *fn_index_key(const struct fn_index *x, size_t i)
{
	return &x->k[i];
}

size_t fn_index_count(const struct fn_index *x)
{
	return x->nr;
}
