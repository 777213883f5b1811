// SPDX-License-Identifier: GPL-2.0
/*
 * mfiles: the per-file /metrics families (see mfiles.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iotracer.h"
#include "lib/abi.h"
#include "records/metrics.h"
#include "service/mfiles.h"

#define MF_NAME_MAX 512 /* a label value (the file's path), cut to its tail past it */

/* Counts of one file (or "other") and op. */
struct mf_val {
	uint64_t count, bytes, q2c_ns;
};

struct mf_label {
	struct fn_key key;
	char name[MF_NAME_MAX];
	struct mf_val base[IT_OP_MAX]; /* the kernel's counts when the label was given */
	struct mf_val now[IT_OP_MAX];
};

struct mfiles {
	struct mf_label *l;
	int nr, k;
};

struct mfiles *mfiles_new(int k)
{
	struct mfiles *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->k = k;
	m->l = calloc((size_t)k, sizeof(*m->l));
	if (!m->l) {
		free(m);
		return NULL;
	}
	return m;
}

void mfiles_free(struct mfiles *m)
{
	if (!m)
		return;
	free(m->l);
	free(m);
}

static void val_add(struct mf_val *d, const struct it_agg_val *v)
{
	d->count += v->count;
	d->bytes += v->bytes;
	d->q2c_ns += v->q2c_ns;
}

static struct mf_label *label_of(struct mfiles *m, const struct fn_key *k)
{
	for (int i = 0; i < m->nr; i++)
		if (m->l[i].key.ino == k->ino && m->l[i].key.dev == k->dev &&
		    m->l[i].key.bdev == k->bdev)
			return &m->l[i];
	return NULL;
}

static struct fn_key key_of(const struct it_agg_key *a)
{
	return (struct fn_key){ .ino = a->ino, .dev = a->file_dev, .bdev = a->file_bdev };
}

static void set_name(struct mf_label *l, struct fn_cache *names)
{
	const struct fn_entry *e = names ? fn_peek(names, &l->key) : NULL;
	size_t n;

	if (!e) {
		snprintf(l->name, sizeof(l->name), "[%u:%u] ino %llu", IT_MAJOR(l->key.dev),
			 IT_MINOR(l->key.dev), (unsigned long long)l->key.ino);
		return;
	}
	n = strlen(e->file);
	snprintf(l->name, sizeof(l->name), "%s",
		 n < sizeof(l->name) ? e->file : e->file + n - (sizeof(l->name) - 1));
}

/* Free places go to the files without a label that did the most bytes. */
static void give_labels(struct mfiles *m, const struct agg_entry *e, int nr, struct fn_cache *names)
{
	struct fn_index *ix;
	uint64_t *bytes, total = 0;
	size_t nf;

	if (m->nr == m->k || !(ix = fn_index_new()))
		return;
	bytes = calloc((size_t)nr + 1, sizeof(*bytes));
	for (int i = 0; bytes && i < nr; i++) {
		struct fn_key k = key_of(&e[i].key);
		long x = k.ino && !label_of(m, &k) ? fn_index_of(ix, &k) : -1;

		total += e[i].v.bytes;
		if (x >= 0)
			bytes[x] += e[i].v.bytes;
	}
	nf = fn_index_count(ix);
	while (bytes && m->nr < m->k) {
		size_t best = nf;

		for (size_t i = 0; i < nf; i++)
			if (bytes[i] && (best == nf || bytes[i] > bytes[best]))
				best = i;
		/* a place only for a file that did a share of the bytes: not any early one */
		if (best == nf || bytes[best] * 2 * (uint64_t)m->k < total)
			break;
		bytes[best] = 0;
		memset(&m->l[m->nr], 0, sizeof(m->l[m->nr]));
		m->l[m->nr].key = *fn_index_key(ix, best);
		set_name(&m->l[m->nr], names);
		for (int i = 0; i < nr; i++) {
			struct fn_key k = key_of(&e[i].key);

			if (k.ino == m->l[m->nr].key.ino && k.dev == m->l[m->nr].key.dev &&
			    k.bdev == m->l[m->nr].key.bdev && e[i].key.op < IT_OP_MAX)
				val_add(&m->l[m->nr].base[e[i].key.op], &e[i].v);
		}
		m->nr++;
	}
	free(bytes);
	fn_index_free(ix);
}

static void write_family(FILE *f, const struct mfiles *m, const struct mf_val *other, int which)
{
	static const char *const names[3] = { "iotracer_file_requests_total",
					      "iotracer_file_bytes_total",
					      "iotracer_file_latency_seconds_total" };
	static const char *const helps[3] = {
		("Finished block requests per file (--metrics-files: the K files given a label, "
		 "the rest 'other') and op; a file's counter starts at its label."),
		"Bytes of finished block requests per file and op.",
		"Queue-to-completion time of the block requests per file and op, summed.",
	};

	metrics_family(f, names[which], "counter", helps[which]);
	for (int i = 0; i <= m->nr; i++) {
		for (int op = 0; op < IT_OP_MAX; op++) {
			const struct mf_val *v = i < m->nr ? &m->l[i].now[op] : &other[op];
			const struct mf_val *b = i < m->nr ? &m->l[i].base[op] : NULL;
			struct metrics_label l[2] = { { "file",
							i < m->nr ? m->l[i].name : "other" },
						      { "op", abi_op_name(op) } };
			uint64_t x = which == 0 ? v->count : which == 1 ? v->bytes : v->q2c_ns;
			uint64_t y = !b		? 0 :
				     which == 0 ? b->count :
				     which == 1 ? b->bytes :
						  b->q2c_ns;
			char s[32];

			if (!v->count && (i < m->nr || !other[op].count))
				continue;
			if (which < 2) {
				metrics_sample_u64(f, names[which], l, 2, x > y ? x - y : 0);
			} else {
				snprintf(s, sizeof(s), "%.9f", (double)(x > y ? x - y : 0) / 1e9);
				metrics_sample(f, names[which], l, 2, s);
			}
		}
	}
}

/* The kernel's counts went back (a re-attach starts them from zero): so do the bases. */
static void restarted(struct mfiles *m)
{
	for (int i = 0; i < m->nr; i++)
		for (int op = 0; op < IT_OP_MAX; op++)
			if (m->l[i].now[op].count < m->l[i].base[op].count) {
				for (int j = 0; j < m->nr; j++)
					memset(m->l[j].base, 0, sizeof(m->l[j].base));
				return;
			}
}

void mfiles_write(struct mfiles *m, FILE *f, const struct agg_entry *e, int nr,
		  struct fn_cache *names)
{
	struct mf_val other[IT_OP_MAX];

	give_labels(m, e, nr, names); /* a new label's counts so far are its base: other's */
	memset(other, 0, sizeof(other));
	for (int i = 0; i < m->nr; i++)
		memset(m->l[i].now, 0, sizeof(m->l[i].now));
	for (int i = 0; i < nr; i++) {
		struct fn_key k = key_of(&e[i].key);
		struct mf_label *l = k.ino ? label_of(m, &k) : NULL;
		uint8_t op = e[i].key.op;

		if (op < IT_OP_MAX)
			val_add(l ? &l->now[op] : &other[op], &e[i].v);
	}
	restarted(m);
	for (int i = 0; i < m->nr; i++)
		for (int op = 0; op < IT_OP_MAX; op++) {
			other[op].count += m->l[i].base[op].count;
			other[op].bytes += m->l[i].base[op].bytes;
			other[op].q2c_ns += m->l[i].base[op].q2c_ns;
		}
	for (int w = 0; w < 3; w++)
		write_family(f, m, other, w);
}
