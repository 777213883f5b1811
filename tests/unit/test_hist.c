// SPDX-License-Identifier: GPL-2.0
/* Unit tests for src/records/hist.c. */
#include <math.h>
#include <stdlib.h>

#include "unit.h"
#include "iotracer.h"
#include "records/hist.h"

#define NVALS 100000

/* deterministic test data (unit_rng) */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng_next(void)
{
	return unit_rng(&rng_state);
}

/* uniform in [0, 1) */
static double rng_unit(void)
{
	return (double)(rng_next() >> 11) / 9007199254740992.0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Percentiles in thousandths of a percent, so the oracle rank is exact integer math. */
static const uint64_t pcts_milli[] = { 1,     1000,  10000, 25000, 50000, 75000,
				       90000, 99000, 99900, 99990, 99999 };

/* rank ceil(p/100 * n) of the sorted values, 1-based */
static uint64_t oracle(const uint64_t *sorted, uint64_t n, uint64_t p_milli)
{
	uint64_t rank = (p_milli * n + 99999) / 100000;

	if (rank < 1)
		rank = 1;
	return sorted[rank - 1];
}

/* Check lhist against the sorted copy: percentiles within 1/256, min/max/mean exact. */
static bool check_oracle(const char *what, uint64_t *vals, size_t n)
{
	struct lhist *h = lhist_new();
	unsigned __int128 sum = 0;
	char name[96];
	bool ok = false;
	size_t i;

	if (!ASSERT_TRUE(h, "lhist_new"))
		return false;
	for (i = 0; i < n; i++) {
		if (!ASSERT_OK(lhist_add(h, vals[i]), "lhist_add"))
			goto out;
		sum += vals[i];
	}
	qsort(vals, n, sizeof(vals[0]), cmp_u64);

	snprintf(name, sizeof(name), "%s: count", what);
	if (!ASSERT_EQ(lhist_count(h), n, name))
		goto out;
	snprintf(name, sizeof(name), "%s: min", what);
	if (!ASSERT_EQ(lhist_min(h), vals[0], name))
		goto out;
	snprintf(name, sizeof(name), "%s: max", what);
	if (!ASSERT_EQ(lhist_max(h), vals[n - 1], name))
		goto out;
	snprintf(name, sizeof(name), "%s: p0 = min", what);
	if (!ASSERT_EQ(lhist_percentile(h, 0), vals[0], name))
		goto out;
	snprintf(name, sizeof(name), "%s: p100 = max", what);
	if (!ASSERT_EQ(lhist_percentile(h, 100), vals[n - 1], name))
		goto out;
	snprintf(name, sizeof(name), "%s: mean", what);
	if (!ASSERT_NEAR(lhist_mean(h), (double)sum / (double)n, 1e-9 * (double)sum / (double)n,
			 name))
		goto out;
	if (sum <= UINT64_MAX) {
		snprintf(name, sizeof(name), "%s: sum", what);
		if (!ASSERT_EQ(lhist_sum(h), (uint64_t)sum, name))
			goto out;
	}

	for (i = 0; i < sizeof(pcts_milli) / sizeof(pcts_milli[0]); i++) {
		double p = (double)pcts_milli[i] / 1000.0;
		uint64_t want = oracle(vals, n, pcts_milli[i]);
		uint64_t got = lhist_percentile(h, p);
		double rel = want ? fabs((double)got - (double)want) / (double)want : (double)got;

		snprintf(name, sizeof(name), "%s: p%g got %llu want %llu", what, p,
			 (unsigned long long)got, (unsigned long long)want);
		if (!ASSERT_TRUE(rel <= 1.0 / 256 + 1e-12, name))
			goto out;
		if (want < 128 && !ASSERT_EQ(got, want, name))
			goto out;
	}
	ok = true;
out:
	lhist_free(h);
	return ok;
}

static void test_lhist_oracle(void)
{
	uint64_t *vals = calloc(NVALS, sizeof(*vals));
	size_t i;

	if (!ASSERT_TRUE(vals, "calloc"))
		return;

	/* log-uniform from 1 us to 100 ms: typical latencies */
	for (i = 0; i < NVALS; i++)
		vals[i] = (uint64_t)exp(log(1e3) + rng_unit() * (log(1e8) - log(1e3)));
	if (!check_oracle("log-uniform", vals, NVALS))
		goto out;

	/* uniform 1000..1000999 */
	for (i = 0; i < NVALS; i++)
		vals[i] = 1000 + rng_next() % 1000000;
	if (!check_oracle("uniform", vals, NVALS))
		goto out;

	/* bimodal: page-cache hits around 2 us, device reads around 5 ms, a few outliers */
	for (i = 0; i < NVALS; i++) {
		uint64_t r = rng_next() % 1000;

		if (r < 700)
			vals[i] = 1500 + rng_next() % 1000;
		else if (r < 999)
			vals[i] = 4000000 + rng_next() % 2000000;
		else
			vals[i] = 1000000000ull + rng_next() % 1000000000ull;
	}
	if (!check_oracle("bimodal", vals, NVALS))
		goto out;

	/* small values are exact */
	for (i = 0; i < NVALS; i++)
		vals[i] = rng_next() % 200;
	if (!check_oracle("small", vals, NVALS))
		goto out;

	/* the whole u64 range */
	for (i = 0; i < NVALS; i++)
		vals[i] = rng_next() >> (rng_next() % 64);
	if (!check_oracle("full range", vals, NVALS))
		goto out;

	/*
	 * 1000 values 2 % apart: each in its own bucket, so an off-by-one rank
	 * (e.g. from 99.9 / 100 * 1000 = 999.0000000000001) is caught.
	 */
	for (i = 0; i < 1000; i++)
		vals[i] = (uint64_t)(1000.0 * pow(1.02, (double)i));
	if (!check_oracle("geometric", vals, 1000))
		goto out;

	/* few values: ranks on exact boundaries */
	for (i = 0; i < 10; i++)
		vals[i] = (i + 1) * 1000;
	check_oracle("ten", vals, 10);
out:
	free(vals);
}

static void test_lhist_edges(void)
{
	struct lhist *h = lhist_new();
	uint64_t v;

	if (!ASSERT_TRUE(h, "lhist_new"))
		return;
	ASSERT_EQ(lhist_count(h), 0, "empty count");
	ASSERT_EQ(lhist_min(h), 0, "empty min");
	ASSERT_EQ(lhist_max(h), 0, "empty max");
	ASSERT_EQ(lhist_sum(h), 0, "empty sum");
	ASSERT_NEAR(lhist_mean(h), 0.0, 0.0, "empty mean");
	ASSERT_EQ(lhist_percentile(h, 50), 0, "empty p50");

	ASSERT_OK(lhist_add(h, 0), "add 0");
	ASSERT_EQ(lhist_percentile(h, 50), 0, "0 p50");
	ASSERT_OK(lhist_add(h, UINT64_MAX), "add max");
	ASSERT_OK(lhist_add(h, 1ull << 63), "add 2^63");
	ASSERT_OK(lhist_add(h, 1), "add 1");
	ASSERT_EQ(lhist_min(h), 0, "min");
	ASSERT_EQ(lhist_max(h), UINT64_MAX, "max");
	ASSERT_EQ(lhist_sum(h), UINT64_MAX, "sum saturates");
	ASSERT_NEAR(lhist_mean(h), (18446744073709551615.0 + 9223372036854775808.0 + 1.0) / 4, 1e6,
		    "mean without overflow");
	ASSERT_EQ(lhist_percentile(h, 100), UINT64_MAX, "p100");
	ASSERT_EQ(lhist_percentile(h, 0), 0, "p0");
	ASSERT_EQ(lhist_percentile(h, -5), 0, "p<0");
	ASSERT_EQ(lhist_percentile(h, 500), UINT64_MAX, "p>100");
	ASSERT_EQ(lhist_percentile(h, 25), 0, "p25 -> rank 1");
	ASSERT_EQ(lhist_percentile(h, 50), 1, "p50 -> rank 2");
	v = lhist_percentile(h, 75); /* rank 3: 2^63, top group */
	ASSERT_TRUE(v >= 1ull << 63 && (double)(v - (1ull << 63)) <= 0x1p63 / 256, "p75");
	v = lhist_percentile(h, 99.99); /* rank 4: clamped to max */
	ASSERT_TRUE(v > (1ull << 63) + (1ull << 62), "p99.99 in the last bucket");

	/* one value: every percentile is that value */
	lhist_reset(h);
	ASSERT_OK(lhist_add(h, 123456789), "add");
	ASSERT_EQ(lhist_percentile(h, 1), 123456789, "single p1");
	ASSERT_EQ(lhist_percentile(h, 50), 123456789, "single p50 (clamped)");
	ASSERT_EQ(lhist_percentile(h, 99.9), 123456789, "single p99.9");
	lhist_free(h);
	lhist_free(NULL);
}

static void test_lhist_merge(void)
{
	struct lhist *a = lhist_new(), *b = lhist_new(), *all = lhist_new(), *e = lhist_new();
	double p;
	int i;

	if (!ASSERT_TRUE(a && b && all && e, "lhist_new"))
		goto out;
	for (i = 0; i < 50000; i++) {
		uint64_t v = (uint64_t)exp(rng_unit() * 25.0);

		if (!ASSERT_OK(lhist_add(i % 3 ? a : b, v), "add part") ||
		    !ASSERT_OK(lhist_add(all, v), "add all"))
			goto out;
	}
	ASSERT_OK(lhist_merge(a, e), "merge empty");
	ASSERT_OK(lhist_merge(a, b), "merge");
	ASSERT_EQ(lhist_count(a), lhist_count(all), "count");
	ASSERT_EQ(lhist_min(a), lhist_min(all), "min");
	ASSERT_EQ(lhist_max(a), lhist_max(all), "max");
	ASSERT_EQ(lhist_sum(a), lhist_sum(all), "sum");
	ASSERT_NEAR(lhist_mean(a), lhist_mean(all), 0.0, "mean");
	ASSERT_EQ(lhist_blocks(a), lhist_blocks(all), "blocks");
	for (p = 0; p <= 100; p += 0.5)
		if (!ASSERT_EQ(lhist_percentile(a, p), lhist_percentile(all, p), "percentile"))
			break;

	/* into an empty one */
	ASSERT_OK(lhist_merge(e, all), "merge into empty");
	ASSERT_EQ(lhist_count(e), lhist_count(all), "empty+all count");
	ASSERT_EQ(lhist_min(e), lhist_min(all), "empty+all min");
	ASSERT_EQ(lhist_percentile(e, 99), lhist_percentile(all, 99), "empty+all p99");
out:
	lhist_free(a);
	lhist_free(b);
	lhist_free(all);
	lhist_free(e);
}

static void test_lhist_lazy(void)
{
	struct lhist *h = lhist_new();
	uint64_t v;

	if (!ASSERT_TRUE(h, "lhist_new"))
		return;
	ASSERT_EQ(lhist_blocks(h), 0, "new: no blocks");
	ASSERT_TRUE(lhist_mem_bytes(h) <= 1024, "fixed part <= 1 KB");

	/* 1000..1999 spans [512,1024) and [1024,2048): two blocks */
	for (v = 1000; v < 2000; v++)
		ASSERT_OK(lhist_add(h, v), "add");
	ASSERT_EQ(lhist_blocks(h), 2, "two powers of two");
	ASSERT_OK(lhist_add(h, 5), "add 5");
	ASSERT_EQ(lhist_blocks(h), 3, "exact group");
	ASSERT_OK(lhist_add(h, 100), "add 100");
	ASSERT_EQ(lhist_blocks(h), 3, "same exact group");

	/* 4 us .. 256 us: six powers of two, about 7 KB */
	lhist_reset(h);
	ASSERT_EQ(lhist_blocks(h), 0, "reset frees blocks");
	ASSERT_EQ(lhist_count(h), 0, "reset count");
	ASSERT_EQ(lhist_percentile(h, 50), 0, "reset p50");
	for (v = 4096; v < 262144; v += 7)
		ASSERT_OK(lhist_add(h, v), "add");
	ASSERT_EQ(lhist_blocks(h), 6, "6 blocks");
	ASSERT_TRUE(lhist_mem_bytes(h) <= 7 * 1024 + 1024, "~7 KB");
	ASSERT_EQ(lhist_min(h), 4096, "min after reset");
	lhist_free(h);
}

static void test_log2h_percentile(void)
{
	struct it_hist h;

	memset(&h, 0, sizeof(h));
	ASSERT_EQ(log2h_percentile(&h, 50), 0, "empty");

	h.slots[10] = 100; /* [1024, 2048) */
	ASSERT_EQ(log2h_percentile(&h, 0), 1024, "p0 = low edge");
	ASSERT_EQ(log2h_percentile(&h, 25), 1280, "p25");
	ASSERT_EQ(log2h_percentile(&h, 50), 1536, "p50");
	ASSERT_EQ(log2h_percentile(&h, 99), 2038, "p99: 1024 + 1024 * 0.99 = 2037.76");
	ASSERT_EQ(log2h_percentile(&h, 100), 2048, "p100 = high edge");

	memset(&h, 0, sizeof(h));
	h.slots[0] = 50; /* [0, 2) */
	h.slots[20] = 50; /* [1048576, 2097152) */
	h.count = 12345; /* not used: the slots are the truth */
	ASSERT_EQ(log2h_percentile(&h, 0), 0, "p0");
	ASSERT_EQ(log2h_percentile(&h, 10), 0, "p10: 0 + 2 * 10/50 = 0.4");
	ASSERT_EQ(log2h_percentile(&h, 50), 2, "p50: end of slot 0");
	ASSERT_EQ(log2h_percentile(&h, 75), 1572864, "p75: middle of slot 20");
	ASSERT_EQ(log2h_percentile(&h, 100), 2097152, "p100");

	memset(&h, 0, sizeof(h));
	h.slots[3] = 1; /* [8, 16) */
	h.slots[4] = 2; /* [16, 32) */
	h.slots[6] = 1; /* [64, 128) */
	ASSERT_EQ(log2h_percentile(&h, 20), 14, "rank 0.8 of slot 3: 8 + 8 * 0.8 = 14.4");
	ASSERT_EQ(log2h_percentile(&h, 50), 24, "rank 2: 16 + 16 * 1/2");
	ASSERT_EQ(log2h_percentile(&h, 90), 102, "rank 3.6 skips empty slot 5: 64 + 64 * 0.6");
}

static void test_log2h_print(void)
{
	static const char want[] =
		"block q2c loop0 read\n"
		"                       range : count    distribution\n"
		"       256ns -> 512ns        : 2        |**                                      |\n"
		"       512ns -> 1024ns       : 0        |                                        |\n"
		"         1us -> 2us          : 40       |****************************************|\n"
		"         2us -> 4us          : 10       |**********                              |\n"
		"         4us -> 8us          : 39       |*************************************** |\n";
	struct it_hist h;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	memset(&h, 0, sizeof(h));
	h.slots[8] = 2;
	h.slots[10] = 40;
	h.slots[11] = 10;
	h.slots[12] = 39;
	f = open_memstream(&buf, &len);
	if (!ASSERT_TRUE(f, "open_memstream"))
		return;
	log2h_print(f, &h, "block q2c loop0 read");
	fclose(f);
	ASSERT_STREQ(buf, want, "text");
	free(buf);

	/* large slots print in us, rounded; empty histograms print no rows */
	memset(&h, 0, sizeof(h));
	h.slots[39] = 1;
	f = open_memstream(&buf, &len);
	if (!ASSERT_TRUE(f, "open_memstream"))
		return;
	log2h_print(f, &h, NULL);
	memset(&h, 0, sizeof(h));
	log2h_print(f, &h, "empty");
	fclose(f);
	ASSERT_STREQ(buf,
		     "                       range : count    distribution\n"
		     " 549755814us -> 1099511628us : 1        "
		     "|****************************************|\n"
		     "empty\n"
		     "  (no samples)\n",
		     "top slot and empty");
	free(buf);
}

static void test_log2h_add(void)
{
	struct it_hist a, b;
	unsigned int k;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	for (k = 0; k < IT_HIST_SLOTS; k++) {
		a.slots[k] = k;
		b.slots[k] = 1000 * k + 1;
	}
	a.count = 780;
	a.sum_ns = 5;
	b.count = 780040;
	b.sum_ns = 7;
	log2h_add(&a, &b);
	for (k = 0; k < IT_HIST_SLOTS; k++)
		if (!ASSERT_EQ(a.slots[k], 1001 * k + 1, "slot"))
			return;
	ASSERT_EQ(a.count, 780820, "count");
	ASSERT_EQ(a.sum_ns, 12, "sum_ns");
	ASSERT_EQ(b.slots[3], 3001, "src untouched");
}

int main(void)
{
	RUN_TEST(test_lhist_oracle);
	RUN_TEST(test_lhist_edges);
	RUN_TEST(test_lhist_merge);
	RUN_TEST(test_lhist_lazy);
	RUN_TEST(test_log2h_percentile);
	RUN_TEST(test_log2h_print);
	RUN_TEST(test_log2h_add);
	return unit_result();
}
