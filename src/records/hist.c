// SPDX-License-Identifier: GPL-2.0
/*
 * hist: log-linear histograms and log2 histogram helpers. See hist.h.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "records/hist.h"

struct lhist {
	uint64_t *blk[LHIST_GROUPS]; /* LHIST_SUB counters each, or NULL */
	uint64_t gcount[LHIST_GROUPS]; /* values per group, to skip groups fast */
	uint64_t count;
	uint64_t min, max;
	uint64_t sum_lo, sum_hi; /* 128-bit exact sum */
	unsigned int nblocks;
};

/*
 * Group 0 holds [0, 128) with one value per bucket. Group g >= 1 holds the
 * values whose top bit is p = g + 6, in buckets of width 2^(g - 1).
 */
static inline unsigned int lhist_group(uint64_t v)
{
	if (v < LHIST_SUB)
		return 0;
	return (unsigned int)(63 - __builtin_clzll(v)) - (LHIST_SUB_BITS - 1);
}

static inline unsigned int lhist_sub(uint64_t v, unsigned int g)
{
	if (!g)
		return (unsigned int)v;
	return (unsigned int)(v >> (g - 1)) - LHIST_SUB;
}

static inline uint64_t lhist_bucket_lo(unsigned int g, unsigned int sub)
{
	if (!g)
		return sub;
	return (uint64_t)(LHIST_SUB + sub) << (g - 1);
}

static inline uint64_t lhist_bucket_mid(unsigned int g, unsigned int sub)
{
	if (!g)
		return sub;
	return lhist_bucket_lo(g, sub) + ((1ull << (g - 1)) >> 1);
}

struct lhist *lhist_new(void)
{
	struct lhist *h = calloc(1, sizeof(*h));

	if (h)
		h->min = UINT64_MAX;
	return h;
}

static void lhist_free_blocks(struct lhist *h)
{
	unsigned int g;

	for (g = 0; g < LHIST_GROUPS; g++) {
		free(h->blk[g]);
		h->blk[g] = NULL;
	}
	h->nblocks = 0;
}

void lhist_free(struct lhist *h)
{
	if (!h)
		return;
	lhist_free_blocks(h);
	free(h);
}

void lhist_reset(struct lhist *h)
{
	lhist_free_blocks(h);
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

static int lhist_ensure(struct lhist *h, unsigned int g)
{
	if (h->blk[g])
		return 0;
	h->blk[g] = calloc(LHIST_SUB, sizeof(uint64_t));
	if (!h->blk[g])
		return -ENOMEM;
	h->nblocks++;
	return 0;
}

static void lhist_sum_add(struct lhist *h, uint64_t lo, uint64_t hi)
{
	uint64_t old = h->sum_lo;

	h->sum_lo += lo;
	h->sum_hi += hi + (h->sum_lo < old);
}

int lhist_add(struct lhist *h, uint64_t v)
{
	unsigned int g = lhist_group(v);

	if (lhist_ensure(h, g))
		return -ENOMEM;
	h->blk[g][lhist_sub(v, g)]++;
	h->gcount[g]++;
	h->count++;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	lhist_sum_add(h, v, 0);
	return 0;
}

int lhist_add_bucket(struct lhist *h, uint64_t v, uint64_t n, uint64_t min, uint64_t max,
		     uint64_t sum)
{
	unsigned int g = lhist_group(v);

	if (!n)
		return 0;
	if (lhist_ensure(h, g))
		return -ENOMEM;
	h->blk[g][lhist_sub(v, g)] += n;
	h->gcount[g] += n;
	h->count += n;
	if (min < h->min)
		h->min = min;
	if (max > h->max)
		h->max = max;
	lhist_sum_add(h, sum, 0);
	return 0;
}

int lhist_merge(struct lhist *dst, const struct lhist *src)
{
	unsigned int g, i;

	if (!src->count)
		return 0;
	for (g = 0; g < LHIST_GROUPS; g++)
		if (src->gcount[g] && lhist_ensure(dst, g))
			return -ENOMEM;
	for (g = 0; g < LHIST_GROUPS; g++) {
		if (!src->gcount[g])
			continue;
		for (i = 0; i < LHIST_SUB; i++)
			dst->blk[g][i] += src->blk[g][i];
		dst->gcount[g] += src->gcount[g];
	}
	dst->count += src->count;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	lhist_sum_add(dst, src->sum_lo, src->sum_hi);
	return 0;
}

uint64_t lhist_count(const struct lhist *h)
{
	return h->count;
}

uint64_t lhist_min(const struct lhist *h)
{
	return h->count ? h->min : 0;
}

uint64_t lhist_max(const struct lhist *h)
{
	return h->max;
}

uint64_t lhist_sum(const struct lhist *h)
{
	return h->sum_hi ? UINT64_MAX : h->sum_lo;
}

double lhist_mean(const struct lhist *h)
{
	if (!h->count)
		return 0.0;
	return (ldexp((double)h->sum_hi, 64) + (double)h->sum_lo) / (double)h->count;
}

/* 1-based rank ceil(p / 100 * count), in [1, count]. */
static uint64_t lhist_rank(double p, uint64_t count)
{
	double x = p / 100.0 * (double)count;

	/*
	 * p / 100 is inexact in binary: 99.9 / 100 * 100000 is 99900.00000000001.
	 * Shave a relative 1e-12 so exact ranks are not pushed to the next value.
	 */
	x -= x * 1e-12;
	if (!(x > 1.0))
		return 1;
	if (x >= (double)count)
		return count;
	return (uint64_t)ceil(x);
}

uint64_t lhist_percentile(const struct lhist *h, double p)
{
	uint64_t rank, cum = 0, v = 0;
	unsigned int g, i;

	if (!h->count)
		return 0;
	if (!(p > 0.0))
		return h->min;
	if (p >= 100.0)
		return h->max;

	rank = lhist_rank(p, h->count);
	for (g = 0; g < LHIST_GROUPS; g++) {
		if (cum + h->gcount[g] < rank) {
			cum += h->gcount[g];
			continue;
		}
		for (i = 0; i < LHIST_SUB; i++) {
			cum += h->blk[g][i];
			if (cum >= rank) {
				v = lhist_bucket_mid(g, i);
				goto found;
			}
		}
	}
	v = h->max; /* not reached: the groups add up to count */
found:
	if (v < h->min)
		v = h->min;
	if (v > h->max)
		v = h->max;
	return v;
}

unsigned int lhist_blocks(const struct lhist *h)
{
	return h->nblocks;
}

size_t lhist_mem_bytes(const struct lhist *h)
{
	return sizeof(*h) + (size_t)h->nblocks * LHIST_SUB * sizeof(uint64_t);
}

/* --- in-kernel log2 histograms ----------------------------------------- */

static inline uint64_t log2h_lo(unsigned int k)
{
	return k ? 1ull << k : 0;
}

/* Upper edge of slot k; the last slot (k = 63) ends at UINT64_MAX. */
uint64_t log2h_hi(unsigned int k)
{
	return k >= 63 ? UINT64_MAX : 1ull << (k + 1);
}

/* First and last non-empty slot (-1 when empty), their sum and largest count. */
static void log2h_span(const struct it_hist *h, int *first, int *last, uint64_t *total,
		       uint64_t *peak)
{
	*first = *last = -1;
	*total = *peak = 0;
	for (unsigned int k = 0; k < IT_HIST_SLOTS; k++) {
		if (!h->slots[k])
			continue;
		if (*first < 0)
			*first = (int)k;
		*last = (int)k;
		*total += h->slots[k];
		if (h->slots[k] > *peak)
			*peak = h->slots[k];
	}
}

uint64_t log2h_percentile(const struct it_hist *h, double p)
{
	uint64_t total, peak, cum = 0;
	int first, last;
	double rank, v;
	unsigned int k;

	log2h_span(h, &first, &last, &total, &peak);
	if (!total)
		return 0;
	if (!(p > 0.0))
		return log2h_lo((unsigned int)first);
	if (p >= 100.0)
		return log2h_hi((unsigned int)last);

	rank = p / 100.0 * (double)total;
	for (k = (unsigned int)first; k <= (unsigned int)last; k++) {
		if (!h->slots[k] || (double)(cum + h->slots[k]) < rank) {
			cum += h->slots[k];
			continue;
		}
		v = (double)log2h_lo(k) + (double)(log2h_hi(k) - log2h_lo(k)) *
						  (rank - (double)cum) / (double)h->slots[k];
		return (uint64_t)llround(v);
	}
	return log2h_hi((unsigned int)last); /* rounding put rank past the total */
}

/* A slot edge as "512ns" (below 1 us) or "33us" (rounded). */
static void log2h_edge(char *buf, size_t n, uint64_t ns, int in_ns)
{
	if (in_ns)
		snprintf(buf, n, "%lluns", (unsigned long long)ns);
	else
		snprintf(buf, n, "%lluus", (unsigned long long)((ns + 500) / 1000));
}

#define LOG2H_BAR 40

void log2h_print(FILE *f, const struct it_hist *h, const char *title)
{
	char lo[24], hi[24], bar[LOG2H_BAR + 1];
	uint64_t peak, total;
	int first, last;
	unsigned int k, stars;

	if (title)
		fprintf(f, "%s\n", title);
	log2h_span(h, &first, &last, &total, &peak);
	if (first < 0) {
		fputs("  (no samples)\n", f);
		return;
	}

	fprintf(f, "%28s : %-8s %s\n", "range", "count", "distribution");
	for (k = (unsigned int)first; k <= (unsigned int)last; k++) {
		int in_ns = log2h_hi(k) <= 1024;

		log2h_edge(lo, sizeof(lo), log2h_lo(k), in_ns);
		log2h_edge(hi, sizeof(hi), log2h_hi(k), in_ns);
		stars = (unsigned int)((double)h->slots[k] * LOG2H_BAR / (double)peak);
		memset(bar, '*', stars);
		bar[stars] = '\0';
		fprintf(f, "%12s -> %-12s : %-8llu |%-*s|\n", lo, hi,
			(unsigned long long)h->slots[k], LOG2H_BAR, bar);
	}
}

void log2h_add(struct it_hist *dst, const struct it_hist *src)
{
	unsigned int k;

	for (k = 0; k < IT_HIST_SLOTS; k++)
		dst->slots[k] += src->slots[k];
	dst->count += src->count;
	dst->sum_ns += src->sum_ns;
}
