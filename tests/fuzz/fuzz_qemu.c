// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_qemu: a QEMU command line as host mode reads it from /proc/PID/cmdline
 * (qemu_parse_cmdline, mode/qemu.c: -drive/-blockdev/-device options, key=value
 * lists with ",," escapes, JSON objects). The input is the cmdline bytes as they
 * are, NUL-separated arguments.
 *
 * Checked besides memory safety: the result is a disk count within max or a
 * negative errno, every string field of a disk is terminated within its array,
 * and a disk always has a backing file.
 */
#include <errno.h>

#include "fuzz.h"
#include "mode/qemu.h"

#define FIELD_OK(d, f) (memchr((d)->f, '\0', sizeof((d)->f)) != NULL)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qemu_disk disks[QEMU_MAX_DISKS];
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
	}
	/* a smaller array takes the first disks */
	if (n > 1)
		FUZZ_CHECK(qemu_parse_cmdline(buf, size, disks, 1) == 1, "max 1 of %d disks", n);
	free(buf);
	return 0;
}
