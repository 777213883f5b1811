/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hist: latency histograms in user space.
 *
 * lhist_*: a log-linear histogram of u64 values (ns) for near-exact
 * percentiles. Values below 128 are counted exactly; above, each power of two
 * [2^p, 2^(p+1)) is split into 128 equal buckets, so a bucket's midpoint is
 * within 1/256 (0.4 %) of any value in it. The 1 KB array of a power of two is
 * allocated only when a value falls into it: a distribution that spans six
 * powers of two costs about 7 KB (1 KB fixed + 6 blocks).
 *
 * log2h_*: helpers for the in-kernel log2 histograms (struct it_hist, slot k
 * holds [2^k, 2^(k+1)) ns, slot 0 holds 0 and 1).
 *
 * Not thread safe: one writer, or external locking.
 */
#ifndef IT_HIST_H
#define IT_HIST_H

#include <stdint.h>
#include <stdio.h>

#include "iotracer.h"

#define LHIST_SUB_BITS 7
#define LHIST_SUB (1u << LHIST_SUB_BITS) /* buckets per power of two */
#define LHIST_GROUPS (64 - LHIST_SUB_BITS + 1) /* [0,128) exact, then 2^7..2^63 */

struct lhist;

struct lhist *lhist_new(void); /* NULL on ENOMEM */
void lhist_free(struct lhist *h); /* NULL ok */

/* Count one value; -ENOMEM (value not counted) if its block cannot be allocated. */
int lhist_add(struct lhist *h, uint64_t v);

/*
 * n values of v's bucket whose least, greatest and sum are min, max and sum
 * (a server's GROUP BY bucket: docs/fleet.md); -ENOMEM as lhist_add().
 */
int lhist_add_bucket(struct lhist *h, uint64_t v, uint64_t n, uint64_t min, uint64_t max,
		     uint64_t sum);

/* Forget every value and free the bucket blocks (memory follows the current spread). */
void lhist_reset(struct lhist *h);

/*
 * dst += src. All blocks dst needs are allocated first: on -ENOMEM dst still
 * holds its old values (maybe with extra empty blocks).
 */
int lhist_merge(struct lhist *dst, const struct lhist *src);

uint64_t lhist_count(const struct lhist *h);
uint64_t lhist_min(const struct lhist *h); /* exact; 0 when empty */
uint64_t lhist_max(const struct lhist *h); /* exact; 0 when empty */
uint64_t lhist_sum(const struct lhist *h); /* exact, saturates at UINT64_MAX */
double lhist_mean(const struct lhist *h); /* exact sum / count (no overflow); 0 when empty */

/*
 * p in [0, 100]: p <= 0 -> exact min, p >= 100 -> exact max; otherwise the
 * midpoint of the bucket holding rank ceil(p / 100 * count) (1-based, rank of
 * the sorted values), clamped to [min, max]. 0 when empty.
 */
uint64_t lhist_percentile(const struct lhist *h, double p);

/* Debug/accounting: bucket blocks allocated, and bytes used by h. */
unsigned int lhist_blocks(const struct lhist *h);
size_t lhist_mem_bytes(const struct lhist *h);

/*
 * Percentile of a log2 histogram: rank p / 100 * total, linearly interpolated
 * inside its slot [lo, hi) (slot 0 is [0, 2)). p <= 0 gives the low edge of
 * the first non-empty slot, p >= 100 the high edge of the last. Uses the sum of
 * the slots as total (not h->count). 0 when empty.
 */
/* Upper edge of log2 slot k (exclusive), saturating at UINT64_MAX. */
uint64_t log2h_hi(unsigned int k);
uint64_t log2h_percentile(const struct it_hist *h, double p);

/*
 * biolatency-style text: the title line (if non-NULL), a header, then one row
 * per slot from the first to the last non-empty one:
 *        256ns -> 512ns        : 3        |***                                     |
 *          1us -> 2us          : 40       |****************************************|
 * Ranges [lo, hi) are in ns below 1 us (slot <= 9) and in us (rounded)
 * above; bars are 40 '*' wide for the largest slot. An empty histogram prints
 * the title and "  (no samples)".
 */
void log2h_print(FILE *f, const struct it_hist *h, const char *title);

/* dst += src: slots, count and sum_ns. */
void log2h_add(struct it_hist *dst, const struct it_hist *src);

#endif /* IT_HIST_H */
