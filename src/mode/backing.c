// SPDX-License-Identifier: GPL-2.0
/*
 * backing: a qcow2 header's backing file name. The header (docs/interop/
 * qcow2.txt of QEMU) is big endian: magic "QFI\xfb" @0, version @4,
 * backing_file_offset (u64) @8, backing_file_size (u32) @16.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mode/backing.h"

#define QCOW2_NAME_MAX 1023 /* QEMU's limit on the backing file name */

static uint64_t be(const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* out = dir(path) + "/" + name, or root + name when name is absolute. */
static int join_path(const char *path, const char *root, const char *name, char *out, size_t len)
{
	const char *slash = strrchr(path, '/');
	int n;

	if (name[0] == '/')
		n = snprintf(out, len, "%s%s", root ? root : "", name);
	else if (slash)
		n = snprintf(out, len, "%.*s/%s", (int)(slash - path), path, name);
	else
		n = snprintf(out, len, "%s", name);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 1;
}

int qcow2_backing(const char *path, const char *root, char *out, size_t len)
{
	unsigned char h[20];
	char name[QCOW2_NAME_MAX + 1];
	uint64_t off;
	uint32_t size;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (pread(fd, h, sizeof(h), 0) != (ssize_t)sizeof(h) || memcmp(h, "QFI\xfb", 4))
		goto out;
	off = be(h + 8, 8);
	size = (uint32_t)be(h + 16, 4);
	if (!off || !size)
		goto out;
	ret = -EINVAL;
	if (size > QCOW2_NAME_MAX || pread(fd, name, size, (off_t)off) != (ssize_t)size)
		goto out;
	name[size] = 0;
	if (strlen(name) != size)
		goto out;
	ret = join_path(path, root, name, out, len);
out:
	close(fd);
	return ret;
}
