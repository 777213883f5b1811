// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_qemu: a QEMU command line as host mode reads it from /proc/PID/cmdline
 * (qemu_parse_cmdline, mode/qemuargs.c: -drive/-blockdev/-device options, key=value
 * lists with ",," escapes, JSON objects). The input is the cmdline bytes as they
 * are, NUL-separated arguments.
 *
 * Checked besides memory safety: the result is a disk count within max or a
 * negative errno, every string field of a disk (its backing files' too) is
 * terminated within its array, a disk always has a file, and its backing
 * chain is within QEMU_MAX_BACKING. The same bytes go through the qcow2
 * header reader (qemu_qcow2_header): a backing name it returns lies within
 * the limits QEMU accepts, or is none.
 */
#include <errno.h>

#include "fuzz.h"
#include "mode/qemu.h"

#define FIELD_OK(d, f) (memchr((d)->f, '\0', sizeof((d)->f)) != NULL)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qemu_disk disks[QEMU_MAX_DISKS];
	struct qemu_qcow2 q;
	/* a copy of exactly size bytes: ASan sees a read past the end */
	char *buf = malloc(size ? size : 1);
	int n, i;

	FUZZ_SETUP(buf, "malloc");
	memcpy(buf, data, size);
	memset(disks, 0xa5, sizeof(disks)); /* fields the parser leaves unterminated show */
	n = qemu_parse_cmdline(buf, size, disks, QEMU_MAX_DISKS);
	FUZZ_CHECK(n == -EINVAL || (n >= 0 && n <= QEMU_MAX_DISKS), "returned %d", n);
	for (i = 0; i < n; i++) {
		const struct qemu_disk *d = &disks[i];

		FUZZ_CHECK(FIELD_OK(d, serial) && FIELD_OK(d, id) && FIELD_OK(d, device) &&
				   FIELD_OK(d, file) && FIELD_OK(d, format),
			   "disk %d has an unterminated field", i);
		FUZZ_CHECK(d->file[0], "disk %d (id \"%s\") without a file", i, d->id);
		FUZZ_CHECK(strlen(d->serial) <= 20, "disk %d serial \"%s\" over 20 bytes", i,
			   d->serial);
		FUZZ_CHECK(d->nr_backing >= 0 && d->nr_backing <= QEMU_MAX_BACKING,
			   "disk %d has %d backing files", i, d->nr_backing);
		for (int k = 0; k < d->nr_backing; k++)
			FUZZ_CHECK(FIELD_OK(&d->backing[k], path) &&
					   FIELD_OK(&d->backing[k], format) &&
					   d->backing[k].path[0],
				   "disk %d backing %d unterminated or empty", i, k);
	}
	if (!qemu_qcow2_header(data, size, &q)) {
		FUZZ_CHECK(!q.backing_off || (q.backing_len && q.backing_len <= 1023),
			   "backing name of %u bytes", q.backing_len);
		FUZZ_CHECK(memchr(q.backing_fmt, '\0', sizeof(q.backing_fmt)) != NULL,
			   "backing format unterminated");
	}
	/* a smaller array takes the first disks */
	if (n > 1)
		FUZZ_CHECK(qemu_parse_cmdline(buf, size, disks, 1) == 1, "max 1 of %d disks", n);
	free(buf);
	return 0;
}
