// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of src/mode/backing.c: synthetic qcow2 headers written to a
 * temporary file (big-endian fields at the offsets of QEMU's qcow2 spec).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "mode/backing.h"
#include "unit.h"

static char dir[] = "/tmp/it_backing.XXXXXX";
static char img[256];

static void put_be(unsigned char *p, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)v;
}

/* A qcow2 header naming `name` as backing file (NULL: none); magic ok or not. */
static void write_img(const char *name, int magic_ok)
{
	unsigned char h[512] = { 'Q', 'F', 'I', 0xfb };
	FILE *f = fopen(img, "w");

	if (!magic_ok)
		h[3] = 0;
	put_be(h + 4, 3, 4);
	if (name) {
		put_be(h + 8, 200, 8);
		put_be(h + 16, strlen(name), 4);
		memcpy(h + 200, name, strlen(name));
	}
	fwrite(h, 1, sizeof(h), f);
	fclose(f);
}

static void test_relative_and_absolute(void)
{
	char out[512], want[512];

	write_img("base.raw", 1);
	ASSERT_EQ(qcow2_backing(img, "/proc/1/root", out, sizeof(out)), 1, "relative found");
	snprintf(want, sizeof(want), "%s/base.raw", dir);
	ASSERT_STREQ(out, want, "taken from the image's directory");
	write_img("/srv/base.raw", 1);
	ASSERT_EQ(qcow2_backing(img, "/proc/1/root", out, sizeof(out)), 1, "absolute found");
	ASSERT_STREQ(out, "/proc/1/root/srv/base.raw", "under the root");
}

static void test_none(void)
{
	char out[64];

	write_img(NULL, 1);
	ASSERT_EQ(qcow2_backing(img, "", out, sizeof(out)), 0, "no backing file");
	write_img("base.raw", 0);
	ASSERT_EQ(qcow2_backing(img, "", out, sizeof(out)), 0, "not qcow2 (a raw image)");
	ASSERT_EQ(qcow2_backing("/nonexistent/x", "", out, sizeof(out)), -ENOENT, "no file");
	write_img("a-name-longer-than-the-output-buffer-of-sixty-four-bytes-.......", 1);
	ASSERT_EQ(qcow2_backing(img, "", out, sizeof(out)), -ENAMETOOLONG, "too long");
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	snprintf(img, sizeof(img), "%s/overlay.qcow2", dir);
	RUN_TEST(test_relative_and_absolute);
	RUN_TEST(test_none);
	unlink(img);
	rmdir(dir);
	return unit_result();
}
