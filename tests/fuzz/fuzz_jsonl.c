// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_jsonl: the report's JSON-lines reader (jl_read, report/jsonl.c), which takes
 * `iotracer -j` files back, as `iotracer report FILE` does: device and host-mode path
 * callbacks set, each decoded request viewed as a corr_req and spanned, as the
 * summary, the slowest list and the Perfetto view do.
 *
 * Checked besides memory safety: every request handed on has a kind the reader knows
 * and at most CORR_MAX_BLOCKS block records, and the reader's counts are the calls it
 * made (a request counted is a request handed on, a path line likewise).
 */
#include "fuzz.h"
#include "records/corr.h"
#include "records/recfmt.h"
#include "report/jsonl.h"

struct seen {
	uint64_t requests, paths, devs;
};

static void on_dev(void *ctx, uint32_t dev, const char *name, const char *serial)
{
	struct seen *s = ctx;

	(void)dev;
	FUZZ_CHECK(name != NULL, "a device without a name");
	(void)strlen(name);
	if (serial)
		(void)strlen(serial);
	s->devs++;
}

static void on_path(void *ctx, const struct rp_path *g)
{
	struct seen *s = ctx;

	FUZZ_CHECK(memchr(g->serial, '\0', sizeof(g->serial)) != NULL, "serial not terminated");
	s->paths++;
}

static void on_req(void *ctx, const struct rf_req *q)
{
	struct seen *s = ctx;
	struct corr_req r;
	uint64_t start, end;

	FUZZ_CHECK(q->kind >= CORR_SYSCALL && q->kind <= CORR_BLOCK, "kind %d", (int)q->kind);
	FUZZ_CHECK(q->nr_blocks >= 0 && q->nr_blocks <= CORR_MAX_BLOCKS, "%d blocks", q->nr_blocks);
	rf_req_view(q, &r);
	rf_req_span(&r, &start, &end);
	s->requests++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size copy: ASan sees a read past the end */
	char *buf = malloc(size ? size : 1);
	struct seen seen = { 0 };
	struct jl_devs devs = { .fn = on_dev, .path = on_path, .ctx = &seen };
	struct jl_stats st = { 0 };

	FUZZ_SETUP(buf, "malloc");
	memcpy(buf, data, size);
	FUZZ_SETUP(!jl_read(buf, size, &devs, on_req, &seen, &st), "jl_read: no memory");
	FUZZ_CHECK(st.requests == seen.requests, "%llu requests counted, %llu handed on",
		   (unsigned long long)st.requests, (unsigned long long)seen.requests);
	FUZZ_CHECK(st.paths == seen.paths, "%llu paths counted, %llu handed on",
		   (unsigned long long)st.paths, (unsigned long long)seen.paths);
	free(buf);
	return 0;
}
