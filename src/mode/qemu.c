// SPDX-License-Identifier: GPL-2.0
/*
 * qemu: the running QEMUs as /proc shows them: discovery of qemu-system-*
 * processes, and the disks of one (its command line, qemuargs.c, then each
 * file stat()ed in its mount namespace and the qcow2 headers' backing chains).
 * See qemu.h for the interface and docs/qemu.md for the rules.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "iotracer.h"
#include "lib/procfs.h"
#include "mode/qemu.h"
#include "mode/qemu_int.h"

/* ---- discovery ---- */

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

static bool is_qemu_exe(int dirfd, const char *pid)
{
	char link[PATH_MAX + 16], tgt[PATH_MAX];
	const char *base;
	ssize_t len;

	snprintf(link, sizeof(link), "%s/exe", pid);
	len = readlinkat(dirfd, link, tgt, sizeof(tgt) - 1);
	if (len <= 0)
		return false;
	tgt[len] = '\0';
	/* "/usr/bin/qemu-system-x86_64 (deleted)" after an upgrade still counts */
	base = strrchr(tgt, '/');
	base = base ? base + 1 : tgt;
	return !strncmp(base, "qemu-system-", strlen("qemu-system-"));
}

int qemu_discover(const char *proc_root, pid_t *pids, int max)
{
	struct dirent *de;
	pid_t self = getpid();
	DIR *d;
	int nr = 0;

	if (!proc_root || max < 0 || (max && !pids))
		return -EINVAL;
	d = opendir(proc_root);
	if (!d)
		return -errno;
	while (nr < max && (de = readdir(d))) {
		if (!all_digits(de->d_name) || strtol(de->d_name, NULL, 10) == self)
			continue;
		if (is_qemu_exe(dirfd(d), de->d_name))
			pids[nr++] = (pid_t)strtol(de->d_name, NULL, 10);
	}
	closedir(d);
	return nr;
}

/* ---- /proc/PID ---- */

/* The whole file, NUL-terminated like a /proc cmdline should be (the NUL counted). */
static int read_whole(const char *path, char **out, size_t *outlen)
{
	size_t len;
	char *buf = procfs_read_file(path, &len);

	if (!buf)
		return -errno;
	if (len && buf[len - 1])
		len++; /* procfs_read_file() wrote a NUL at buf[len] */
	*out = buf;
	*outlen = len;
	return 0;
}

/* path as QEMU pid sees it: in its mount namespace, relative to its cwd. */
static int qemu_path(char *out, size_t outlen, const char *proc_root, pid_t pid, const char *path)
{
	int n;

	if (path[0] == '/')
		n = snprintf(out, outlen, "%s/%d/root%s", proc_root, (int)pid, path);
	else
		n = snprintf(out, outlen, "%s/%d/cwd/%s", proc_root, (int)pid, path);
	return n < 0 || (size_t)n >= outlen ? -ENAMETOOLONG : 0;
}

/* stat() of one file of a disk into f; its size (a raw image's) in *size. */
static void stat_file(const char *path, struct qemu_file *f, uint64_t *size)
{
	struct stat st;
	int fd;

	if (stat(path, &st))
		return;
	f->stat_ok = 1;
	f->dev = IT_MKDEV(major(st.st_dev), minor(st.st_dev));
	f->ino = st.st_ino;
	if (S_ISBLK(st.st_mode))
		f->rdev = IT_MKDEV(major(st.st_rdev), minor(st.st_rdev));
	if (S_ISREG(st.st_mode))
		*size = (uint64_t)st.st_size;
	else if (S_ISBLK(st.st_mode) && (fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		if (ioctl(fd, BLKGETSIZE64, size))
			*size = 0;
		close(fd);
	}
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const uint8_t *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

#define QCOW2_MAGIC 0x514649fbu /* "QFI\xfb" */
#define QCOW2_EXT_BACKING_FMT 0xe2792acau
#define QCOW2_V2_HDR 72

/* Header extensions (version 3 header_length, or 72 for version 2) up to len. */
static void qcow2_exts(const uint8_t *buf, size_t len, struct qemu_qcow2 *q)
{
	size_t off = q->version >= 3 && len >= 104 ? be32(buf + 100) : QCOW2_V2_HDR;

	while (off >= QCOW2_V2_HDR && off + 8 <= len) {
		uint32_t type = be32(buf + off), elen = be32(buf + off + 4);

		if (!type || elen > len - off - 8)
			return;
		if (type == QCOW2_EXT_BACKING_FMT)
			snprintf(q->backing_fmt, sizeof(q->backing_fmt), "%.*s",
				 (int)(elen < sizeof(q->backing_fmt) ? elen :
								       sizeof(q->backing_fmt) - 1),
				 (const char *)buf + off + 8);
		off += 8 + ((elen + 7ull) & ~7ull);
	}
}

int qemu_qcow2_header(const uint8_t *buf, size_t len, struct qemu_qcow2 *q)
{
	memset(q, 0, sizeof(*q));
	if (!buf || len < QCOW2_V2_HDR || be32(buf) != QCOW2_MAGIC)
		return -EINVAL;
	q->version = be32(buf + 4);
	if (q->version < 2)
		return -EINVAL;
	q->backing_off = be64(buf + 8);
	q->backing_len = be32(buf + 16);
	q->size = be64(buf + 24);
	/* QEMU refuses a name over 1023 bytes: such an image opens nowhere */
	if (!q->backing_off || !q->backing_len || q->backing_len > 1023) {
		q->backing_off = 0;
		q->backing_len = 0;
	}
	qcow2_exts(buf, len, q);
	return 0;
}

/*
 * The qcow2 header of path (as the daemon reaches it): 0 and q filled, its
 * backing file name in name (""), or -errno / -EINVAL (not qcow2).
 */
static int read_qcow2(const char *path, struct qemu_qcow2 *q, char *name, size_t namelen)
{
	uint8_t buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	name[0] = 0;
	if (fd < 0)
		return -errno;
	n = pread(fd, buf, sizeof(buf), 0);
	err = n < 0 ? -errno : qemu_qcow2_header(buf, (size_t)n, q);
	if (!err && q->backing_len && q->backing_len < namelen) {
		n = pread(fd, name, q->backing_len, (off_t)q->backing_off);
		name[n == (ssize_t)q->backing_len ? n : 0] = 0;
	}
	close(fd);
	return err;
}

/*
 * A backing file name relative to its overlay: QEMU reads it from the
 * overlay's directory. 0, or -ENAMETOOLONG (not kept: a cut path is no file).
 */
static int backing_path(char *out, size_t outlen, const char *overlay, const char *name)
{
	const char *slash = strrchr(overlay, '/');
	int n;

	if (name[0] == '/' || !slash)
		n = snprintf(out, outlen, "%s", name);
	else
		n = snprintf(out, outlen, "%.*s/%s", (int)(slash - overlay), overlay, name);
	return n < 0 || (size_t)n >= outlen ? -ENAMETOOLONG : 0;
}

/* Is the file (format fmt: "" = probed) a qcow2 image? Its header into q, backing name into name. */
static int qcow2_of(const char *proc_root, pid_t pid, const char *file, const char *fmt,
		    struct qemu_qcow2 *q, char *name, size_t namelen)
{
	char path[PATH_MAX];

	if ((*fmt && strcmp(fmt, "qcow2")) || qemu_path(path, sizeof(path), proc_root, pid, file))
		return -EINVAL;
	return read_qcow2(path, q, name, namelen);
}

/*
 * A qcow2 image's virtual size is the guest's disk size; the chain below the
 * last file the command line gave comes from the qcow2 headers: while that
 * file is qcow2 (said so, or probed) and names a backing file.
 */
static void qcow2_chain(const char *proc_root, pid_t pid, struct qemu_disk *d)
{
	char name[1024], full[QEMU_FILE_LEN];
	struct qemu_qcow2 q;

	if (!qcow2_of(proc_root, pid, d->file, d->format, &q, name, sizeof(name)))
		d->size = q.size;
	while (!d->backing_fixed && d->nr_backing < QEMU_MAX_BACKING) {
		const struct qemu_file *last = d->nr_backing ? &d->backing[d->nr_backing - 1] :
							       NULL;
		const char *file = last ? last->path : d->file;

		if (qcow2_of(proc_root, pid, file, last ? last->format : d->format, &q, name,
			     sizeof(name)) ||
		    !name[0] || !strncmp(name, "json:", 5) ||
		    backing_path(full, sizeof(full), file, name))
			return;
		qemu_add_backing(d, full, q.backing_fmt);
	}
}

static void stat_disk(const char *proc_root, pid_t pid, struct qemu_disk *d)
{
	char path[PATH_MAX];
	struct qemu_file top = { 0 };
	uint64_t size = 0, bsize;

	if (!qemu_path(path, sizeof(path), proc_root, pid, d->file))
		stat_file(path, &top, &size);
	d->stat_ok = top.stat_ok;
	d->dev = top.dev;
	d->ino = top.ino;
	d->rdev = top.rdev;
	/* a raw image is the guest's disk byte for byte: its size bounds the sectors */
	if (d->stat_ok && !strcmp(d->format, "raw"))
		d->size = size;
	if (d->stat_ok)
		qcow2_chain(proc_root, pid, d);
	for (int i = 0; i < d->nr_backing; i++)
		if (!qemu_path(path, sizeof(path), proc_root, pid, d->backing[i].path))
			stat_file(path, &d->backing[i], &bsize);
}

static int file_is(int stat_ok, uint32_t rdev, uint32_t fdev, uint64_t fino, uint32_t dev,
		   uint64_t ino)
{
	return stat_ok && (rdev ? rdev == dev : fdev == dev && fino == ino);
}

int qemu_disk_has_file(const struct qemu_disk *d, uint32_t dev, uint64_t ino)
{
	const struct qemu_file *f = d->backing;

	if (file_is(d->stat_ok, d->rdev, d->dev, d->ino, dev, ino))
		return 1;
	for (int i = 0; i < d->nr_backing && i < QEMU_MAX_BACKING; i++)
		if (file_is(f[i].stat_ok, f[i].rdev, f[i].dev, f[i].ino, dev, ino))
			return 1;
	return 0;
}

int qemu_disk_file_keys(const struct qemu_disk *d, uint32_t *devs, uint64_t *inos, int max)
{
	int n = 0;

	if (d->stat_ok && n < max) {
		devs[n] = d->dev;
		inos[n++] = d->ino;
	}
	for (int i = 0; i < d->nr_backing && i < QEMU_MAX_BACKING && n < max; i++) {
		if (!d->backing[i].stat_ok)
			continue;
		devs[n] = d->backing[i].dev;
		inos[n++] = d->backing[i].ino;
	}
	return n;
}

/* /proc/PID/cmdline under proc_root into *buf (malloc'd). 0 or -errno. */
static int read_cmdline(const char *proc_root, pid_t pid, char **buf, size_t *len)
{
	char path[PATH_MAX];

	*buf = NULL;
	*len = 0;
	if (!proc_root)
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/%d/cmdline", proc_root, (int)pid);
	return read_whole(path, buf, len);
}

int qemu_vm_info(const char *proc_root, pid_t pid, struct qemu_vm *vm)
{
	char *buf;
	size_t len;
	int err;

	memset(vm, 0, sizeof(*vm));
	err = read_cmdline(proc_root, pid, &buf, &len);
	if (!err)
		err = qemu_parse_vm(buf, len, vm);
	free(buf);
	return err;
}

int qemu_map_of(const char *proc_root, pid_t pid, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	char path[PATH_MAX], *line = NULL;
	unsigned long long a, b;
	int ret = -ENOENT;
	size_t cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/maps", proc_root, (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		if (sscanf(line, "%llx-%llx", &a, &b) != 2 || addr < a || addr >= b)
			continue;
		*lo = a;
		*hi = b;
		ret = 0;
		break;
	}
	free(line);
	fclose(f);
	return ret;
}

int qemu_disks(const char *proc_root, pid_t pid, struct qemu_disk *disks, int max)
{
	char *buf;
	size_t len;
	int i, nr;

	nr = read_cmdline(proc_root, pid, &buf, &len);
	if (nr)
		return nr;
	nr = qemu_parse_cmdline(buf, len, disks, max);
	free(buf);
	for (i = 0; i < nr; i++)
		stat_disk(proc_root, pid, &disks[i]);
	return nr;
}
