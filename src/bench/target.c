// SPDX-License-Identifier: GPL-2.0
/*
 * target: where fio runs. By default a loop device over a filled backing
 * file of our own (on the root disk's file system, or on tmpfs for the
 * RAM-backed workloads), unlinked once attached so nothing is left behind;
 * with --target, the user's block device or file, after refusing anything
 * that looks in use (mounted, the root disk, swap, held by dm/md, or holding
 * a file system unless --force).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/loop.h>

#include "bench/internal.h"
#include "lib/parse.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

struct target *bench_target(struct bench *b, int ram)
{
	return &b->tg[b->shared_target ? 0 : ram];
}

static int on_tmpfs(const char *path)
{
	struct statfs sf;

	return !statfs(path, &sf) && sf.f_type == TMPFS_MAGIC;
}

/* maj:min of the whole disk a device belongs to (itself if not a partition). */
static void disk_of(unsigned maj, unsigned min, unsigned *dmaj, unsigned *dmin)
{
	char p[96], real[PATH_MAX], f[PATH_MAX + 32];
	char *t;

	*dmaj = maj;
	*dmin = min;
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u", maj, min);
	if (!realpath(p, real))
		return;
	snprintf(f, sizeof(f), "%s/partition", real);
	if (access(f, F_OK))
		return;
	char *slash = strrchr(real, '/');
	if (!slash)
		return;
	*slash = '\0';
	snprintf(f, sizeof(f), "%s/dev", real);
	t = procfs_read_file(f, NULL);
	if (t && sscanf(t, "%u:%u", dmaj, dmin) != 2) {
		*dmaj = maj;
		*dmin = min;
	}
	free(t);
}

/* Is maj:min the root file system's device or its whole disk? */
static int is_root_disk(unsigned maj, unsigned min, unsigned dmaj, unsigned dmin)
{
	unsigned rmaj, rmin;
	struct stat st;

	if (stat("/", &st))
		return 0;
	disk_of(major(st.st_dev), minor(st.st_dev), &rmaj, &rmin);
	return (rmaj == dmaj && rmin == dmin) ||
	       (major(st.st_dev) == maj && minor(st.st_dev) == min);
}

/* A mount of maj:min or of one of its partitions, into why. */
static int is_mounted(unsigned maj, unsigned min, char *why, size_t n)
{
	char *t = procfs_read_file("/proc/self/mountinfo", NULL);
	int found = 0;

	for (char *l = t; l && *l && !found;) {
		unsigned mmaj, mmin, pmaj, pmin;
		char mnt[512];

		if (sscanf(l, "%*u %*u %u:%u %*s %511s", &mmaj, &mmin, mnt) == 3) {
			disk_of(mmaj, mmin, &pmaj, &pmin);
			if ((mmaj == maj && mmin == min) || (pmaj == maj && pmin == min)) {
				snprintf(why, n, "%u:%u is mounted (%.200s)", mmaj, mmin, mnt);
				found = 1;
			}
		}
		l = strchr(l, '\n');
		if (l)
			l++;
	}
	free(t);
	return found;
}

/* Is maj:min a swap device of /proc/swaps? */
static int is_swap(unsigned maj, unsigned min, char *why, size_t n)
{
	char *t = procfs_read_file("/proc/swaps", NULL);
	int found = 0;

	for (char *l = t ? strchr(t, '\n') : NULL; l && *++l && !found;) {
		char dev[256];
		struct stat st;

		if (sscanf(l, "%255s", dev) == 1 && !stat(dev, &st) && S_ISBLK(st.st_mode) &&
		    major(st.st_rdev) == maj && minor(st.st_rdev) == min) {
			snprintf(why, n, "%.200s is in use as swap", dev);
			found = 1;
		}
		l = strchr(l, '\n');
	}
	free(t);
	return found;
}

/* Does another device (dm, md, bcache) hold maj:min? */
static int is_held(unsigned maj, unsigned min)
{
	char p[96];
	struct dirent *e;
	int held = 0;
	DIR *d;

	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/holders", maj, min);
	d = opendir(p);
	if (!d)
		return 0;
	while ((e = readdir(d)))
		held |= e->d_name[0] != '.';
	closedir(d);
	return held;
}

/* Refuse a block device that is mounted, holds a mounted partition, is (on) the root disk, swap, or held by dm/md. */
static int check_device(unsigned maj, unsigned min, char *why, size_t n)
{
	unsigned dmaj, dmin;

	disk_of(maj, min, &dmaj, &dmin);
	if (is_root_disk(maj, min, dmaj, dmin)) {
		snprintf(why, n, "%u:%u is the root disk (or on it)", maj, min);
		return -EBUSY;
	}
	if (is_mounted(maj, min, why, n) || is_swap(maj, min, why, n))
		return -EBUSY;
	if (is_held(maj, min)) {
		snprintf(why, n, "%u:%u is held by another device (dm/md/bcache)", maj, min);
		return -EBUSY;
	}
	return 0;
}

/* Refuse data that looks like a file system, swap, LVM/LUKS or a partition table. */
static int check_signature(int fd, char *why, size_t n)
{
	static unsigned char buf[69632];
	ssize_t r = pread(fd, buf, sizeof(buf), 0);

	if (r < 0)
		return 0;
	if (r > 1081 && buf[1080] == 0x53 && buf[1081] == 0xef)
		snprintf(why, n, "it holds an ext2/3/4 file system");
	else if (r > 4 && !memcmp(buf, "XFSB", 4))
		snprintf(why, n, "it holds an XFS file system");
	else if (r > 65608 && !memcmp(buf + 65600, "_BHRfS_M", 8))
		snprintf(why, n, "it holds a btrfs file system");
	else if (r > 4096 && !memcmp(buf + 4086, "SWAPSPACE2", 10))
		snprintf(why, n, "it holds a swap area");
	else if (r > 6 && !memcmp(buf, "LUKS\xba\xbe", 6))
		snprintf(why, n, "it holds a LUKS volume");
	else if (r > 520 && !memcmp(buf + 512, "LABELONE", 8))
		snprintf(why, n, "it holds an LVM physical volume");
	else if (r > 511 && buf[510] == 0x55 && buf[511] == 0xaa)
		snprintf(why, n, "it has a partition table or boot sector");
	else
		return 0;
	return -EEXIST;
}

/* Write size bytes of a pattern into a new file (O_DIRECT when possible). */
static int fill_file(const char *path, uint64_t size)
{
	const size_t chunk = 1 << 20;
	void *buf;
	int fd, ret = 0;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_DIRECT, 0600);
	if (fd < 0 && errno == EINVAL)
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (posix_memalign(&buf, 4096, chunk)) {
		close(fd);
		return -ENOMEM;
	}
	memset(buf, 0x5a, chunk);
	for (uint64_t off = 0; off < size && !bench_stopped(); off += chunk) {
		size_t l = size - off < chunk ? size - off : chunk;
		ssize_t w = pwrite(fd, buf, l, off);

		if (w != (ssize_t)l) {
			ret = w < 0 ? -errno : -EIO;
			break;
		}
	}
	free(buf);
	if (!ret && bench_stopped())
		ret = -EINTR;
	if (close(fd) && !ret)
		ret = -errno;
	return ret;
}

/* A loop device over backing (autoclear: it goes away when our fd closes). */
static int loop_attach(struct target *t)
{
	int ffd, ctl, ret = -EBUSY;
	struct stat st;

	ffd = open(t->backing, O_RDWR | O_CLOEXEC);
	if (ffd < 0)
		return -errno;
	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0) {
		ret = -errno;
		close(ffd);
		return ret;
	}
	t->direct_io = !on_tmpfs(t->backing);
	for (int tries = 0; tries < 20; tries++) {
		struct loop_config cfg;
		int nr = ioctl(ctl, LOOP_CTL_GET_FREE), lfd;

		if (nr < 0) {
			ret = -errno;
			break;
		}
		snprintf(t->dev, sizeof(t->dev), "/dev/loop%d", nr);
		lfd = open(t->dev, O_RDWR | O_CLOEXEC);
		if (lfd < 0) {
			ret = -errno;
			bench_sleep_ms(50);
			continue;
		}
		memset(&cfg, 0, sizeof(cfg));
		cfg.fd = ffd;
		cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR | (t->direct_io ? LO_FLAGS_DIRECT_IO : 0);
		snprintf((char *)cfg.info.lo_file_name, LO_NAME_SIZE, "%.*s", LO_NAME_SIZE - 1,
			 t->backing);
		if (!ioctl(lfd, LOOP_CONFIGURE, &cfg)) {
			t->lfd = lfd;
			ret = 0;
			break;
		}
		ret = -errno;
		close(lfd);
		if (ret == -EINVAL && t->direct_io) {
			t->direct_io = 0; /* the backing fs cannot do direct IO */
			continue;
		}
		if (ret != -EBUSY)
			break;
	}
	close(ctl);
	close(ffd);
	if (ret)
		return ret;
	fstat(t->lfd, &st);
	t->maj = major(st.st_rdev);
	t->min = minor(st.st_rdev);
	snprintf(t->name, sizeof(t->name), "%s", t->dev + 5);
	return 0;
}

static void loop_detach(struct target *t)
{
	if (t->lfd < 0)
		return;
	ioctl(t->lfd, LOOP_CLR_FD, 0);
	close(t->lfd);
	t->lfd = -1;
}

static void rm_tree_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char p[PATH_MAX + 256];

		if (e->d_name[0] == '.' &&
		    (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

/* -EEXIST when path holds data we must not overwrite (unless --force), -errno if unreadable. */
static int check_path_signature(const struct bench *b, const char *path, char *why, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = b->o.force ? 0 : check_signature(fd, why, n);
	close(fd);
	return ret;
}

/* --target a block device: checked, then used as it is. */
static int target_user_device(struct bench *b, struct target *t, const struct stat *st, char *err,
			      size_t n)
{
	char why[256];
	int ret;

	if ((ret = check_device(major(st->st_rdev), minor(st->st_rdev), why, sizeof(why)))) {
		snprintf(err, n, "refusing %.200s: %.200s", b->o.target, why);
		return ret;
	}
	ret = check_path_signature(b, b->o.target, why, sizeof(why));
	if (ret == -EEXIST) {
		snprintf(
			err, n,
			"refusing %.200s: %.200s (bench writes to the target; --force to overwrite)",
			b->o.target, why);
		return ret;
	}
	if (ret) {
		snprintf(err, n, "%s: %s", b->o.target, strerror(-ret));
		return ret;
	}
	snprintf(t->dev, sizeof(t->dev), "%s", b->o.target);
	t->maj = major(st->st_rdev);
	t->min = minor(st->st_rdev);
	if (parse_dev_name(IT_MKDEV(t->maj, t->min), NULL, t->name, sizeof(t->name)))
		snprintf(t->name, sizeof(t->name), "%u:%u", t->maj, t->min);
	snprintf(t->desc, sizeof(t->desc), "%s (%u:%u, user device)", b->o.target, t->maj, t->min);
	return 0;
}

/* Create and fill the backing file t->backing. */
static int target_fill(struct bench *b, struct target *t, char *err, size_t n)
{
	int ret = fill_file(t->backing, b->o.size);

	if (ret) {
		snprintf(err, n, "cannot create %s: %s", t->backing, strerror(-ret));
		unlink(t->backing);
		return ret;
	}
	t->created = 1;
	return 0;
}

/* --target a file: created when missing, else checked like a device. */
static int target_user_file(struct bench *b, struct target *t, char *err, size_t n)
{
	struct stat st;
	char why[256];
	int ret;

	snprintf(t->backing, sizeof(t->backing), "%s", b->o.target);
	if (stat(b->o.target, &st)) {
		bench_progress("creating %s (%" PRIu64 " MiB)", t->backing, b->o.size >> 20);
		return target_fill(b, t, err, n);
	}
	ret = check_path_signature(b, b->o.target, why, sizeof(why));
	if (ret == -EEXIST) {
		snprintf(err, n, "refusing %.200s: %.200s (--force to overwrite)", b->o.target,
			 why);
		return ret;
	}
	if (st.st_size < (off_t)(64 << 20)) {
		snprintf(err, n, "%s: smaller than 64 MiB", b->o.target);
		return -EINVAL;
	}
	return 0;
}

/* Our own backing file in the work directory. */
static int target_own_file(struct bench *b, struct target *t, int ram, const char *base, char *err,
			   size_t n)
{
	char wd[PATH_MAX];

	memcpy(wd, t->workdir, sizeof(wd));
	if (snprintf(t->backing, sizeof(t->backing), "%s/loop.img", wd) >=
	    (int)sizeof(t->backing)) {
		snprintf(err, n, "path too long");
		return -ENAMETOOLONG;
	}
	bench_progress("creating a %" PRIu64 " MiB backing file in %s (%s)", b->o.size >> 20, base,
		       ram ? "tmpfs, RAM" : "the root disk's file system");
	return target_fill(b, t, err, n);
}

/* A loop device over t->backing, described in t->desc. */
static int target_loop(struct bench *b, struct target *t, char *err, size_t n)
{
	char desc[sizeof(t->desc)];
	int ret = loop_attach(t);

	if (ret) {
		snprintf(err, n, "cannot set up a loop device over %s: %s", t->backing,
			 strerror(-ret));
		if (t->created)
			unlink(t->backing);
		return ret;
	}
	/* the loop device keeps the file open: remove its name now, nothing is left behind */
	if (t->created && !b->o.target)
		unlink(t->backing);
	snprintf(desc, sizeof(desc), "%.255s over %.3800s%s (%" PRIu64 " MiB, %s, direct-io %s)",
		 t->dev, t->backing, t->created && !b->o.target ? " (unlinked)" : "",
		 b->o.size >> 20, on_tmpfs(t->workdir) ? "tmpfs/RAM" : "disk",
		 t->direct_io ? "on" : "off");
	memcpy(t->desc, desc, sizeof(desc));
	bench_progress("target: %s", t->desc);
	return 0;
}

/* The target, its work directory first; a failure is not retried. */
int bench_target_setup(struct bench *b, int ram, char *err, size_t n)
{
	struct target *t = bench_target(b, ram);
	const char *base = ram && !b->o.target ? "/dev/shm" : "/var/tmp";
	struct stat st;
	int ret;

	if (t->ready)
		return 0;
	if (t->failed) {
		snprintf(err, n, "target setup failed before");
		return -EIO;
	}
	t->failed = 1;
	t->lfd = -1;
	snprintf(t->workdir, sizeof(t->workdir), "%s/iotracer-bench.XXXXXX", base);
	if (!mkdtemp(t->workdir)) {
		ret = -errno;
		snprintf(err, n, "mkdtemp %s: %s", t->workdir, strerror(-ret));
		t->workdir[0] = '\0';
		return ret;
	}
	if (b->o.target && !stat(b->o.target, &st) && S_ISBLK(st.st_mode)) {
		ret = target_user_device(b, t, &st, err, n);
	} else if (b->o.target && !stat(b->o.target, &st) && !S_ISREG(st.st_mode)) {
		snprintf(err, n, "%s: not a block device or regular file", b->o.target);
		ret = -EINVAL;
	} else {
		ret = b->o.target ? target_user_file(b, t, err, n) :
				    target_own_file(b, t, ram, base, err, n);
		if (!ret)
			ret = target_loop(b, t, err, n);
	}
	if (ret)
		return ret;
	t->ready = 1;
	t->failed = 0;
	return 0;
}

void bench_targets_cleanup(struct bench *b)
{
	for (int i = 0; i < 2; i++) {
		struct target *t = &b->tg[i];

		if (!t->ready && !t->failed)
			continue;
		loop_detach(t);
		if (t->created && b->o.target && i == 0)
			unlink(t->backing);
		if (t->workdir[0] && !b->o.keep)
			rm_tree_files(t->workdir);
		else if (t->workdir[0])
			bench_progress("kept %s", t->workdir);
		t->ready = t->failed = 0;
		if (b->shared_target)
			break;
	}
}

/*
 * Requests a block device completed so far, from /sys/class/block/NAME/stat:
 * reads + writes + discards + flushes (fields 1, 5, 12 and 16; the last two
 * since 4.18 and 5.5). -1 if unreadable.
 */
int64_t bench_blk_completed(const char *dev)
{
	const char *name = strrchr(dev, '/');
	char path[PATH_MAX], *txt, *p, *end;
	unsigned long long f[16] = { 0 };
	int n = 0;

	snprintf(path, sizeof(path), "/sys/class/block/%s/stat", name ? name + 1 : dev);
	txt = procfs_read_file(path, NULL);
	if (!txt)
		return -1;
	for (p = txt; n < 16; n++, p = end) {
		f[n] = strtoull(p, &end, 10);
		if (end == p)
			break;
	}
	free(txt);
	return n >= 5 ? (int64_t)(f[0] + f[4] + f[11] + f[15]) : -1;
}
