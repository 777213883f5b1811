// SPDX-License-Identifier: GPL-2.0
/* Unit tests for src/lib/parse.c. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "unit.h"
#include "iotracer.h"
#include "lib/abi.h"
#include "lib/parse.h"

#define NS_US 1000ull
#define NS_MS 1000000ull
#define NS_S 1000000000ull

static void test_parse_duration_good(void)
{
	static const struct {
		const char *in;
		uint64_t ns;
	} cases[] = {
		{ "250us", 250 * NS_US },
		{ "10ms", 10 * NS_MS },
		{ "12s", 12 * NS_S },
		{ "5m", 300 * NS_S },
		{ "1h", 3600 * NS_S },
		{ "100ns", 100 },
		{ "0", 0 },
		{ "0ns", 0 },
		{ "1.5", 1500 * NS_MS },
		{ "1.5ms", 1500 * NS_US },
		{ ".5s", 500 * NS_MS },
		{ "0.25us", 250 },
		{ "1.0000000001s", NS_S }, /* 0.1 ns truncates */
		{ "2.000000001", 2 * NS_S + 1 },
		{ "007ms", 7 * NS_MS },
		{ "18446744073709551615ns", UINT64_MAX },
		{ "18446744073.709551615s", UINT64_MAX },
		{ "5124095h", 5124095ull * 3600 * NS_S },
	};
	char name[64];
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(name, sizeof(name), "parse_duration('%s')", cases[i].in);
		v = 12345;
		if (!ASSERT_OK(parse_duration(cases[i].in, &v), name))
			return;
		if (!ASSERT_EQ(v, cases[i].ns, name))
			return;
	}
}

static void test_parse_duration_bad(void)
{
	static const struct {
		const char *in;
		int err;
	} cases[] = {
		{ "", -EINVAL },
		{ "10xs", -EINVAL },
		{ "-1s", -EINVAL },
		{ "+1s", -EINVAL },
		{ " 1s", -EINVAL },
		{ "1s ", -EINVAL },
		{ "1 s", -EINVAL },
		{ "1e999", -EINVAL },
		{ "1e3", -EINVAL },
		{ "s", -EINVAL },
		{ ".", -EINVAL },
		{ "1.", -EINVAL },
		{ "1.s", -EINVAL },
		{ "1..5s", -EINVAL },
		{ "1.5.5s", -EINVAL },
		{ "10MS", -EINVAL },
		{ "1sec", -EINVAL },
		{ "0x10", -EINVAL },
		{ "nan", -EINVAL },
		{ "inf", -EINVAL },
		{ "18446744073709551616ns", -ERANGE },
		{ "18446744073709551616", -ERANGE },
		{ "18446744074s", -ERANGE },
		{ "18446744073.709551616s", -ERANGE },
		{ "5124096h", -ERANGE },
		{ "99999999999999999999999999999h", -ERANGE },
	};
	char name[64];
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(name, sizeof(name), "parse_duration('%s')", cases[i].in);
		v = 12345;
		if (!ASSERT_EQ(parse_duration(cases[i].in, &v), cases[i].err, name))
			return;
		if (!ASSERT_EQ(v, 12345, "output untouched on error"))
			return;
	}
	ASSERT_EQ(parse_duration(NULL, &v), -EINVAL, "NULL");
}

static void test_parse_size(void)
{
	static const struct {
		const char *in;
		int err;
		uint64_t bytes;
	} cases[] = {
		{ "4096", 0, 4096 },
		{ "0", 0, 0 },
		{ "64K", 0, 64 << 10 },
		{ "64k", 0, 64 << 10 },
		{ "64KB", 0, 64 << 10 },
		{ "64kb", 0, 64 << 10 },
		{ "64KiB", 0, 64 << 10 },
		{ "8M", 0, 8 << 20 },
		{ "8m", 0, 8 << 20 },
		{ "1G", 0, 1ull << 30 },
		{ "2T", 0, 2ull << 40 },
		{ "512B", 0, 512 },
		{ "16777215T", 0, 16777215ull << 40 },
		{ "18446744073709551615", 0, UINT64_MAX },
		{ "", -EINVAL, 0 },
		{ "K", -EINVAL, 0 },
		{ "-1K", -EINVAL, 0 },
		{ " 1K", -EINVAL, 0 },
		{ "1.5M", -EINVAL, 0 },
		{ "1X", -EINVAL, 0 },
		{ "1KBB", -EINVAL, 0 },
		{ "1Ki", -EINVAL, 0 },
		{ "1iB", -EINVAL, 0 },
		{ "1K ", -EINVAL, 0 },
		{ "16777216T", -ERANGE, 0 },
		{ "18446744073709551616", -ERANGE, 0 },
	};
	char name[64];
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(name, sizeof(name), "parse_size('%s')", cases[i].in);
		v = 777;
		if (!ASSERT_EQ(parse_size(cases[i].in, &v), cases[i].err, name))
			return;
		if (!ASSERT_EQ(v, cases[i].err ? 777 : cases[i].bytes, name))
			return;
	}
}

static void test_parse_u64(void)
{
	uint64_t v = 0;

	ASSERT_OK(parse_u64("0", 0, 10, &v), "0");
	ASSERT_EQ(v, 0, "0 value");
	ASSERT_OK(parse_u64("4194304", 1, 4194304, &v), "max pid");
	ASSERT_EQ(v, 4194304, "max pid value");
	ASSERT_OK(parse_u64("18446744073709551615", 0, UINT64_MAX, &v), "u64 max");
	ASSERT_EQ(v, UINT64_MAX, "u64 max value");
	ASSERT_OK(parse_u64("0010", 0, 100, &v), "leading zeros are decimal");
	ASSERT_EQ(v, 10, "leading zeros value");

	v = 5;
	ASSERT_EQ(parse_u64("4194305", 1, 4194304, &v), -ERANGE, "above max");
	ASSERT_EQ(parse_u64("0", 1, 10, &v), -ERANGE, "below min");
	ASSERT_EQ(parse_u64("18446744073709551616", 0, UINT64_MAX, &v), -ERANGE, "overflow");
	ASSERT_EQ(parse_u64("", 0, 10, &v), -EINVAL, "empty");
	ASSERT_EQ(parse_u64(NULL, 0, 10, &v), -EINVAL, "NULL");
	ASSERT_EQ(parse_u64("-1", 0, UINT64_MAX, &v), -EINVAL, "negative");
	ASSERT_EQ(parse_u64("+1", 0, 10, &v), -EINVAL, "plus sign");
	ASSERT_EQ(parse_u64(" 1", 0, 10, &v), -EINVAL, "leading space");
	ASSERT_EQ(parse_u64("1 ", 0, 10, &v), -EINVAL, "trailing space");
	ASSERT_EQ(parse_u64("1x", 0, 10, &v), -EINVAL, "junk");
	ASSERT_EQ(parse_u64("0x1", 0, 10, &v), -EINVAL, "hex");
	ASSERT_EQ(v, 5, "untouched on error");
}

static void test_parse_layers(void)
{
	uint32_t m = 0;
	const uint32_t all = (1u << IT_L_MAX) - 1;

	ASSERT_OK(parse_layers("syscall", &m), "syscall");
	ASSERT_EQ(m, 1u << IT_L_SYSCALL, "syscall mask");
	ASSERT_OK(parse_layers("syscall,fs,sched,block", &m), "four");
	ASSERT_EQ(m,
		  (1u << IT_L_SYSCALL) | (1u << IT_L_FS) | (1u << IT_L_SCHED) | (1u << IT_L_BLOCK),
		  "four mask");
	ASSERT_OK(parse_layers("nvme,scsi,virtio,qemu", &m), "devices");
	ASSERT_EQ(m,
		  (1u << IT_L_NVME) | (1u << IT_L_SCSI) | (1u << IT_L_VIRTIO) | (1u << IT_L_QEMU),
		  "devices mask");
	ASSERT_OK(parse_layers("all", &m), "all");
	ASSERT_EQ(m, all, "all mask");
	ASSERT_OK(parse_layers("block,all", &m), "block,all");
	ASSERT_EQ(m, all, "block,all mask");
	ASSERT_OK(parse_layers("Block,FS", &m), "case");
	ASSERT_EQ(m, (1u << IT_L_BLOCK) | (1u << IT_L_FS), "case mask");
	ASSERT_OK(parse_layers("fs,fs", &m), "dup");
	ASSERT_EQ(m, 1u << IT_L_FS, "dup mask");

	m = 99;
	ASSERT_EQ(parse_layers("", &m), -EINVAL, "empty");
	ASSERT_EQ(parse_layers(NULL, &m), -EINVAL, "NULL");
	ASSERT_EQ(parse_layers("foo", &m), -EINVAL, "unknown");
	ASSERT_EQ(parse_layers("syscall,foo", &m), -EINVAL, "unknown 2nd");
	ASSERT_EQ(parse_layers("syscall,", &m), -EINVAL, "trailing comma");
	ASSERT_EQ(parse_layers(",syscall", &m), -EINVAL, "leading comma");
	ASSERT_EQ(parse_layers("syscall,,fs", &m), -EINVAL, "empty item");
	ASSERT_EQ(parse_layers("sys", &m), -EINVAL, "prefix");
	ASSERT_EQ(parse_layers("syscalls", &m), -EINVAL, "longer");
	ASSERT_EQ(parse_layers(" fs", &m), -EINVAL, "space");
	ASSERT_EQ(m, 99, "untouched");

	ASSERT_STREQ(abi_layer_name(IT_L_SYSCALL), "syscall", "name syscall");
	ASSERT_STREQ(abi_layer_name(IT_L_FS), "fs", "name fs");
	ASSERT_STREQ(abi_layer_name(IT_L_SCHED), "sched", "name sched");
	ASSERT_STREQ(abi_layer_name(IT_L_BLOCK), "block", "name block");
	ASSERT_STREQ(abi_layer_name(IT_L_NVME), "nvme", "name nvme");
	ASSERT_STREQ(abi_layer_name(IT_L_SCSI), "scsi", "name scsi");
	ASSERT_STREQ(abi_layer_name(IT_L_VIRTIO), "virtio", "name virtio");
	ASSERT_STREQ(abi_layer_name(IT_L_QEMU), "qemu", "name qemu");
	ASSERT_STREQ(abi_layer_name(IT_L_MAX), "unknown", "name max");
	ASSERT_STREQ(abi_layer_name(-1), "unknown", "name -1");
}

/* --- fake sysfs -------------------------------------------------------- */

static char sysroot[64];

static int write_file(const char *dir, const char *rel, const char *data)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	return unit_write_str(path, data);
}

static int mkdirs(const char *dir, const char *rel)
{
	char path[PATH_MAX];
	char *p;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (p = path + strlen(dir) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

static int symlink_at(const char *dir, const char *target, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	return symlink(target, path) ? -errno : 0;
}

/*
 * <root>/class/block/{loop0,nvme0n1,bad}/dev, <root>/dev/block/7:0/uevent
 * (DEVNAME=loop0), <root>/dev/block/259:0 -> a link without uevent, and
 * <root>/dev/block/8:0 with a uevent lacking DEVNAME.
 */
static int make_sysfs(void)
{
	static const struct {
		char kind; /* 'd' directory, 'f' file, 'l' symlink */
		const char *rel, *data;
	} steps[] = {
		{ 'd', "class/block/loop0", NULL },
		{ 'f', "class/block/loop0/dev", "7:0\n" },
		{ 'd', "class/block/nvme0n1", NULL },
		{ 'f', "class/block/nvme0n1/dev", "259:0\n" },
		{ 'd', "class/block/bad", NULL },
		{ 'f', "class/block/bad/dev", "garbage\n" },
		{ 'd', "dev/block/7:0", NULL },
		{ 'f', "dev/block/7:0/uevent", "MAJOR=7\nMINOR=0\nDEVNAME=loop0\nDEVTYPE=disk\n" },
		{ 'd', "devices/virtual/nvme/nvme0n1", NULL },
		{ 'l', "dev/block/259:0", "../../devices/virtual/nvme/nvme0n1" },
		{ 'd', "dev/block/8:0", NULL },
		{ 'f', "dev/block/8:0/uevent", "MAJOR=8\nMINOR=0\nDEVNAME=\n" },
	};
	size_t i;
	int err = 0;

	strcpy(sysroot, "/tmp/it_sysfs.XXXXXX");
	if (!mkdtemp(sysroot))
		return -errno;
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]) && !err; i++) {
		if (steps[i].kind == 'd')
			err = mkdirs(sysroot, steps[i].rel);
		else if (steps[i].kind == 'f')
			err = write_file(sysroot, steps[i].rel, steps[i].data);
		else
			err = symlink_at(sysroot, steps[i].data, steps[i].rel);
	}
	return err;
}

static void rm_sysfs(void)
{
	char cmd[PATH_MAX];

	if (!sysroot[0] || strncmp(sysroot, "/tmp/it_sysfs.", 14))
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sysroot);
	if (system(cmd))
		UNIT_LOG("cannot remove %s\n", sysroot);
	sysroot[0] = '\0';
}

static void test_parse_dev(void)
{
	uint32_t d = 0;

	if (!ASSERT_OK(make_sysfs(), "make fake sysfs"))
		goto out;

	ASSERT_OK(parse_dev("loop0", sysroot, &d), "loop0");
	ASSERT_EQ(d, IT_MKDEV(7, 0), "loop0 dev");
	ASSERT_EQ(d, (7u << 20) | 0, "kernel encoding");
	ASSERT_OK(parse_dev("nvme0n1", sysroot, &d), "nvme0n1");
	ASSERT_EQ(d, IT_MKDEV(259, 0), "nvme0n1 dev");
	ASSERT_OK(parse_dev("7:0", sysroot, &d), "7:0");
	ASSERT_EQ(d, IT_MKDEV(7, 0), "7:0 dev");
	ASSERT_OK(parse_dev("259:1048575", sysroot, &d), "max minor");
	ASSERT_EQ(d, IT_MKDEV(259, 1048575), "max minor dev");
	ASSERT_OK(parse_dev("4095:3", NULL, &d), "max major");
	ASSERT_EQ(d, IT_MKDEV(4095, 3), "max major dev");

	d = 42;
	ASSERT_EQ(parse_dev("nosuch", sysroot, &d), -ENOENT, "nosuch");
	ASSERT_EQ(parse_dev("bad", sysroot, &d), -EIO, "bad sysfs content");
	ASSERT_EQ(parse_dev("", sysroot, &d), -EINVAL, "empty");
	ASSERT_EQ(parse_dev("..", sysroot, &d), -EINVAL, "dotdot");
	ASSERT_EQ(parse_dev("a/b", sysroot, &d), -EINVAL, "slash");
	ASSERT_EQ(parse_dev("7:", sysroot, &d), -EINVAL, "7:");
	ASSERT_EQ(parse_dev(":0", sysroot, &d), -EINVAL, ":0");
	ASSERT_EQ(parse_dev("7:x", sysroot, &d), -EINVAL, "7:x");
	ASSERT_EQ(parse_dev("7:0:1", sysroot, &d), -EINVAL, "7:0:1");
	ASSERT_EQ(parse_dev("-7:0", sysroot, &d), -EINVAL, "-7:0");
	ASSERT_EQ(parse_dev("4096:0", sysroot, &d), -EINVAL, "major too big");
	ASSERT_EQ(parse_dev("7:1048576", sysroot, &d), -EINVAL, "minor too big");
	ASSERT_EQ(parse_dev("/dev/null", sysroot, &d), -ENOTBLK, "char dev");
	ASSERT_EQ(parse_dev("/tmp", sysroot, &d), -ENOTBLK, "directory");
	ASSERT_EQ(parse_dev("/nonexistent/loop0", sysroot, &d), -ENOENT, "no path");
	ASSERT_EQ(d, 42, "untouched");
out:
	rm_sysfs();
}

/* A real block device node, when the machine has one we may stat. */
static void test_parse_dev_node(void)
{
	static const char *const nodes[] = { "/dev/loop0", "/dev/sda", "/dev/vda", "/dev/nvme0n1",
					     "/dev/xvda" };
	struct stat st;
	uint32_t d = 0;
	size_t i;

	for (i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
		if (stat(nodes[i], &st) || !S_ISBLK(st.st_mode))
			continue;
		if (!ASSERT_OK(parse_dev(nodes[i], NULL, &d), nodes[i]))
			return;
		ASSERT_EQ(d, IT_MKDEV(major(st.st_rdev), minor(st.st_rdev)), "st_rdev");
		ASSERT_EQ(IT_MAJOR(d), major(st.st_rdev), "major");
		ASSERT_EQ(IT_MINOR(d), minor(st.st_rdev), "minor");
		return;
	}
	SKIP("no block device node in /dev");
}

static void test_parse_dev_name(void)
{
	char buf[32];
	const char *p;

	if (!ASSERT_OK(make_sysfs(), "make fake sysfs"))
		goto out;

	ASSERT_OK(parse_dev_name(IT_MKDEV(7, 0), sysroot, buf, sizeof(buf)), "7:0");
	ASSERT_STREQ(buf, "loop0", "uevent DEVNAME");
	ASSERT_OK(parse_dev_name(IT_MKDEV(259, 0), sysroot, buf, sizeof(buf)), "259:0");
	ASSERT_STREQ(buf, "nvme0n1", "symlink basename");
	ASSERT_EQ(parse_dev_name(IT_MKDEV(8, 0), sysroot, buf, sizeof(buf)), -ENOENT,
		  "empty DEVNAME, no link");
	ASSERT_STREQ(buf, "8:0", "8:0 fallback");
	ASSERT_EQ(parse_dev_name(IT_MKDEV(253, 7), sysroot, buf, sizeof(buf)), -ENOENT, "absent");
	ASSERT_STREQ(buf, "253:7", "absent fallback");
	ASSERT_OK(parse_dev_name(IT_MKDEV(7, 0), sysroot, buf, 4), "truncated");
	ASSERT_STREQ(buf, "loo", "truncated name");
	ASSERT_EQ(parse_dev_name(IT_MKDEV(7, 0), sysroot, buf, 0), -EINVAL, "n = 0");

	parse_fmt_devno(IT_MKDEV(259, 1048575), buf, sizeof(buf));
	ASSERT_STREQ(buf, "259:1048575", "fmt_devno");

	/* round trip: name -> dev -> name */
	{
		uint32_t d;

		ASSERT_OK(parse_dev("loop0", sysroot, &d), "loop0");
		ASSERT_OK(parse_dev_name(d, sysroot, buf, sizeof(buf)), "back");
		ASSERT_STREQ(buf, "loop0", "round trip");
	}

	/* cache */
	parse_dev_cache_clear();
	p = parse_dev_name_cached(IT_MKDEV(7, 0), sysroot);
	ASSERT_STREQ(p, "loop0", "cached loop0");
	p = parse_dev_name_cached(IT_MKDEV(259, 0), sysroot);
	ASSERT_STREQ(p, "nvme0n1", "cached nvme0n1");
	p = parse_dev_name_cached(IT_MKDEV(9, 9), sysroot);
	ASSERT_STREQ(p, "9:9", "cached absent");
	/* a different root drops the cache */
	p = parse_dev_name_cached(IT_MKDEV(7, 0), "/nonexistent-root");
	ASSERT_STREQ(p, "7:0", "other root: cache dropped");
	p = parse_dev_name_cached(IT_MKDEV(7, 0), sysroot);
	ASSERT_STREQ(p, "loop0", "back to the fake root");
	/* a cached positive entry is served without touching sysfs again */
	{
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/dev/block/7:0/uevent", sysroot);
		ASSERT_OK(unlink(path), "unlink uevent");
		p = parse_dev_name_cached(IT_MKDEV(7, 0), sysroot);
		ASSERT_STREQ(p, "loop0", "served from cache");
		parse_dev_cache_clear();
		p = parse_dev_name_cached(IT_MKDEV(7, 0), sysroot);
		ASSERT_STREQ(p, "7:0", "cleared cache rereads sysfs");
	}
	parse_dev_cache_clear();
out:
	rm_sysfs();
}

static void test_parse_fmt_duration(void)
{
	static const struct {
		uint64_t ns;
		const char *out;
	} cases[] = {
		{ 0, "0ns" },
		{ 1, "1ns" },
		{ 812, "812ns" },
		{ 999, "999ns" },
		{ 1000, "1.00us" },
		{ 1234, "1.23us" },
		{ 1235, "1.24us" }, /* half up */
		{ 9994, "9.99us" },
		{ 9995, "10.0us" },
		{ 61234, "61.2us" },
		{ 99949, "99.9us" },
		{ 99950, "100us" },
		{ 999499, "999us" },
		{ 999500, "1.00ms" },
		{ 1200000, "1.20ms" },
		{ 12345678, "12.3ms" },
		{ 123456789, "123ms" },
		{ 999500000, "1.00s" },
		{ 3400000000ull, "3.40s" },
		{ 59999999999ull, "60.0s" },
		{ 999499999999ull, "999s" },
		{ 999500000000ull, "1000s" },
		{ 3600000000000ull, "3600s" },
		{ UINT64_MAX, "18446744074s" },
	};
	char buf[32], name[64];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(name, sizeof(name), "fmt(%llu)", (unsigned long long)cases[i].ns);
		ASSERT_TRUE(parse_fmt_duration(cases[i].ns, buf, sizeof(buf)) == buf, name);
		if (!ASSERT_STREQ(buf, cases[i].out, name))
			return;
	}
	parse_fmt_duration(1200000, buf, 4);
	ASSERT_STREQ(buf, "1.2", "truncated");
}

/* A SCSI VPD page 0x80 as a disk answers it: header, then the ASCII serial. */
static void test_parse_vpd_serial(void)
{
#define VPD(...) (const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ })
	const struct {
		const uint8_t *page;
		size_t len, outlen;
		int ret;
		const char *out, *name;
	} cases[] = {
		{ VPD(0, 0x80, 0, 8, 'l', 'a', 'b', 's', 'c', 's', 'i', '0'), 64, 1, "labscsi0",
		  "qemu" },
		{ VPD(0, 0x80, 0, 6, 'A', 'B', ' ', 'C', ' ', ' '), 64, 1, "AB C",
		  "trailing blanks" },
		{ VPD(0, 0x80, 0, 3, ' ', ' ', ' '), 64, 0, "", "blank is none" },
		{ VPD(0, 0x83, 0, 2, 'x', 'y'), 64, 0, "", "page 0x83" },
		{ VPD(0, 0x80, 0), 64, 0, "", "short header" },
		/* a length past the buffer reads what is there; a NUL ends the serial */
		{ VPD(0, 0x80, 1, 0, 's', 'n', '1'), 64, 1, "sn1", "length past the end" },
		{ VPD(0, 0x80, 0, 4, 's', 0, 'z', 'z'), 64, 1, "s", "cut at NUL" },
		{ VPD(0, 0x80, 0, 3, 'a', '\n', 'b'), 64, 1, "a?b", "control bytes replaced" },
		{ VPD(0, 0x80, 0, 8, 'l', 'a', 'b', 's', 'c', 's', 'i', '0'), 4, 1, "lab",
		  "small out" },
	};
#undef VPD
	char out[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ASSERT_EQ(parse_vpd_serial(cases[i].page, cases[i].len, out, cases[i].outlen),
			  cases[i].ret, cases[i].name);
		ASSERT_STREQ(out, cases[i].out, cases[i].name);
	}
}

/* Serials of the three buses QEMU emulates, from a fake sysfs. */
static void test_parse_dev_serial(void)
{
	static const uint8_t vpd[] = { 0x00, 0x80, 0x00, 0x08, 'l', 'a',
				       'b',  's',  'c',	 's',  'i', '0' };
	static const char *const dirs[] = { "dev",
					    "dev/block",
					    "dev/block/252:16",
					    "dev/block/259:16",
					    "dev/block/259:16/device",
					    "dev/block/8:16",
					    "dev/block/8:16/device",
					    "dev/block/8:32",
					    "dev/block/8:32/device" };
	char root[] = "/tmp/it_serial_XXXXXX", path[PATH_MAX];
	size_t i;

	if (!ASSERT_TRUE(mkdtemp(root), "mkdtemp"))
		return;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
		mkdir(path, 0755);
	}
	snprintf(path, sizeof(path), "%s/dev/block/252:16/serial", root);
	ASSERT_OK(unit_write(path, "labvblk0\n", 9), "virtio-blk serial");
	/* NVMe: the controller's, space padded to 20 bytes */
	snprintf(path, sizeof(path), "%s/dev/block/259:16/device/serial", root);
	ASSERT_OK(unit_write(path, "labnvme0            \n", 21), "nvme serial");
	snprintf(path, sizeof(path), "%s/dev/block/8:16/device/vpd_pg80", root);
	ASSERT_OK(unit_write(path, vpd, sizeof(vpd)), "scsi vpd_pg80");
	/* a SCSI disk without serial= has no page 0x80 */

	ASSERT_STREQ(parse_dev_serial_cached(IT_MKDEV(252, 16), root), "labvblk0", "virtio-blk");
	ASSERT_STREQ(parse_dev_serial_cached(IT_MKDEV(259, 16), root), "labnvme0", "nvme");
	ASSERT_STREQ(parse_dev_serial_cached(IT_MKDEV(8, 16), root), "labscsi0", "scsi");
	ASSERT_TRUE(parse_dev_serial_cached(IT_MKDEV(8, 32), root) == NULL, "scsi, no serial");
	/* cached: served after the file is gone */
	snprintf(path, sizeof(path), "%s/dev/block/8:16/device/vpd_pg80", root);
	unlink(path);
	ASSERT_STREQ(parse_dev_serial_cached(IT_MKDEV(8, 16), root), "labscsi0", "cached");

	snprintf(path, sizeof(path), "rm -rf '%s'", root);
	if (system(path))
		UNIT_LOG("cannot remove %s\n", root);
}

/*
 * The serials read before attaching (parse_dev_serials_prefetch): every disk with one,
 * then served from the cache without reading sysfs again, even after lookups of more
 * devices without a serial than the cache holds.
 */
static void test_parse_dev_serials_prefetch(void)
{
	char root[] = "/tmp/it_serialpf_XXXXXX", path[PATH_MAX];
	int i;

	if (!ASSERT_TRUE(mkdtemp(root), "mkdtemp"))
		return;
	snprintf(path, sizeof(path), "%s/dev", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/dev/block", root);
	mkdir(path, 0755);
	for (i = 0; i < 80; i++) { /* loop devices: no serial */
		snprintf(path, sizeof(path), "%s/dev/block/7:%d", root, i);
		mkdir(path, 0755);
	}
	snprintf(path, sizeof(path), "%s/dev/block/253:0", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/dev/block/253:0/serial", root);
	ASSERT_OK(unit_write(path, "pfvblk0\n", 8), "virtio-blk serial");
	snprintf(path, sizeof(path), "%s/dev/block/253:16", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/dev/block/253:16/serial", root);
	ASSERT_OK(unit_write(path, "pfvblk1\n", 8), "virtio-blk serial");
	snprintf(path, sizeof(path), "%s/dev/block/not-a-dev", root);
	mkdir(path, 0755);

	ASSERT_EQ(parse_dev_serials_prefetch(root), 2, "two disks with a serial");
	/* gone from sysfs: a read now would find nothing */
	snprintf(path, sizeof(path), "%s/dev/block/253:0/serial", root);
	unlink(path);
	snprintf(path, sizeof(path), "%s/dev/block/253:16/serial", root);
	unlink(path);
	for (i = 0; i < 80; i++)
		ASSERT_TRUE(parse_dev_serial_cached(IT_MKDEV(7, 100 + i), root) == NULL,
			    "no serial");
	ASSERT_STREQ(parse_dev_serial_cached(IT_MKDEV(253, 0), root), "pfvblk0", "prefetched");
	ASSERT_STREQ(parse_dev_serial_cached(IT_MKDEV(253, 16), root), "pfvblk1", "prefetched");
	ASSERT_EQ(parse_dev_serials_prefetch("/nonexistent"), 0, "no sysfs");

	snprintf(path, sizeof(path), "rm -rf '%s'", root);
	if (system(path))
		UNIT_LOG("cannot remove %s\n", root);
}

int main(void)
{
	RUN_TEST(test_parse_duration_good);
	RUN_TEST(test_parse_duration_bad);
	RUN_TEST(test_parse_size);
	RUN_TEST(test_parse_u64);
	RUN_TEST(test_parse_layers);
	RUN_TEST(test_parse_dev);
	RUN_TEST(test_parse_dev_node);
	RUN_TEST(test_parse_dev_name);
	RUN_TEST(test_parse_fmt_duration);
	RUN_TEST(test_parse_vpd_serial);
	RUN_TEST(test_parse_dev_serial);
	RUN_TEST(test_parse_dev_serials_prefetch);
	return unit_result();
}
