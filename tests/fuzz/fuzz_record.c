// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_record: the --record segment reader (rr_segment, report/reader.c), the
 * one thing `iotracer report` reads that another run wrote (and a crash may have
 * cut). The input is one segment file.
 *
 * Checked besides memory safety: every request the reader hands on was counted,
 * its block count within the format's limit; the bytes it says it skipped are
 * within the input; a refused input decodes nothing.
 */
#include <errno.h>

#include "fuzz.h"
#include "records/reader.h"

static uint64_t seen;

static void on_req(void *ctx, const struct rr_reader *rr, const struct rf_req *q)
{
	seen++;
	FUZZ_CHECK(q->nr_blocks >= 0 && q->nr_blocks <= CORR_MAX_BLOCKS, "nr_blocks %d",
		   q->nr_blocks);
	(void)rr_dev_name(rr, q->sys.dev);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size copy: ASan sees a read past the end */
	uint8_t *buf = malloc(size ? size : 1);
	struct rr_reader rr;
	int ret;

	FUZZ_SETUP(buf, "malloc");
	memcpy(buf, data, size);
	seen = 0;
	rr_init(&rr, on_req, NULL);
	ret = rr_segment(&rr, buf, size);
	FUZZ_CHECK(ret == 0 || ret == -EBADMSG || ret == -EPROTO || ret == -ENOMEM, "ret %d", ret);
	FUZZ_CHECK(seen == rr.st.requests, "%llu requests handed on, %llu counted",
		   (unsigned long long)seen, (unsigned long long)rr.st.requests);
	FUZZ_CHECK(rr.st.skipped_bytes <= size, "skipped %llu of %zu bytes",
		   (unsigned long long)rr.st.skipped_bytes, size);
	FUZZ_CHECK(ret == 0 || !seen, "refused (%d) after %llu requests", ret,
		   (unsigned long long)seen);
	rr_free(&rr);
	free(buf);
	return 0;
}
