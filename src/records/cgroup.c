// SPDX-License-Identifier: GPL-2.0
/*
 * cgroup: cgroup v2 mount, --cgroup arguments and id -> path. See cgroup.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "records/cgroup.h"
#include "lib/clock.h"

#define CGROUP2_SUPER_MAGIC 0x63677270
#define CG_FILEID_KERNFS 0xfe /* the kernel's FILEID_KERNFS: a handle holding the cgroup id */
#define CG_CACHE_MAX (1u << 16) /* entries; past it the cache starts over */
#define CG_RETRY_NS 1000000000ull /* an unknown id is looked up again after this */

static int is_cgroup2(const char *path)
{
	struct statfs sfs;

	return !statfs(path, &sfs) && sfs.f_type == CGROUP2_SUPER_MAGIC;
}

/* The first cgroup2 line of a mounts file. */
static int find_mount(const char *mounts, char *buf, size_t n)
{
	char dev[256], dir[PATH_MAX], type[64];
	FILE *f = fopen(mounts, "re");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (ret && fscanf(f, "%255s %4095s %63s %*[^\n]", dev, dir, type) == 3)
		if (!strcmp(type, "cgroup2") && strlen(dir) < n) {
			memcpy(buf, dir, strlen(dir) + 1);
			ret = 0;
		}
	fclose(f);
	return ret;
}

int cg_mount_point(const char *mounts, const char *run_dir, char *buf, size_t n)
{
	const char *dir = run_dir ? run_dir : "/run/iotracer/cgroup2";

	if (!find_mount(mounts ? mounts : "/proc/self/mounts", buf, n))
		return 0;
	/* no cgroup2 anywhere: mount it ourselves (a hierarchy is mounted at most once per ns) */
	if (strlen(dir) >= n)
		return -ENAMETOOLONG;
	mkdir("/run/iotracer", 0755);
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	if (!is_cgroup2(dir) && mount("cgroup2", dir, "cgroup2", 0, NULL))
		return -errno;
	memcpy(buf, dir, strlen(dir) + 1);
	return 0;
}

/* A real path below mnt to its hierarchy path; -EXDEV: not below mnt. */
static int rel_of(const char *mnt, const char *real, char *rel, size_t n)
{
	size_t len = strlen(mnt);

	while (len > 1 && mnt[len - 1] == '/')
		len--;
	if (strncmp(real, mnt, len) || (real[len] && real[len] != '/'))
		return -EXDEV;
	if (snprintf(rel, n, "%s", real[len] ? real + len : "/") >= (int)n)
		return -ENAMETOOLONG;
	return 0;
}

int cg_resolve(const char *mnt, const char *arg, char *rel, size_t n, char *why, size_t why_n)
{
	char real[PATH_MAX], joined[PATH_MAX];
	struct stat st;
	const char *p = arg;

	if (!is_cgroup2(p) && arg[0] == '/') {
		snprintf(joined, sizeof(joined), "%s%s", mnt, arg);
		p = joined; /* a hierarchy path, as /proc/PID/cgroup writes it */
	}
	if (stat(p, &st) || !S_ISDIR(st.st_mode) || !is_cgroup2(p)) {
		snprintf(why, why_n, "'%s' is not a cgroup v2 directory (cgroup2 is mounted at %s)",
			 arg, mnt);
		return -EINVAL;
	}
	if (!realpath(p, real) || rel_of(mnt, real, rel, n)) {
		snprintf(why, why_n, "'%s' is not below the cgroup2 mount %s", arg, mnt);
		return -EINVAL;
	}
	return 0;
}

int cg_under(const char *rel, const char *prefix)
{
	size_t len = strlen(prefix);

	while (len && prefix[len - 1] == '/')
		len--;
	if (!len)
		return 1; /* the root holds everything */
	return !strncmp(rel, prefix, len) && (rel[len] == '\0' || rel[len] == '/');
}

void cg_truncate(const char *rel, int depth, char *buf, size_t n)
{
	const char *p = rel;
	int d = 0;

	while (*p == '/' && d < depth) {
		const char *next = strchr(p + 1, '/');

		p = next ? next : p + strlen(p);
		d++;
		if (!next)
			break;
	}
	if (p == rel || *rel != '/')
		snprintf(buf, n, "/");
	else
		snprintf(buf, n, "%.*s", (int)(p - rel), rel);
}

/* ---- id -> path ---- */

struct cg_entry {
	uint64_t id; /* 0: free */
	char *path; /* NULL: unknown, look again after retry_ns */
	uint64_t retry_ns;
};

struct cg_cache {
	char mnt[PATH_MAX];
	int mnt_fd;
	struct cg_entry *e;
	size_t cap, nr; /* cap: a power of two */
};

struct cg_cache *cg_cache_new(const char *mnt)
{
	struct cg_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	snprintf(c->mnt, sizeof(c->mnt), "%s", mnt ? mnt : "");
	c->mnt_fd = mnt ? open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	return c;
}

static void clear_entries(struct cg_cache *c)
{
	for (size_t i = 0; i < c->cap; i++)
		free(c->e[i].path);
	free(c->e);
	c->e = NULL;
	c->cap = c->nr = 0;
}

void cg_cache_free(struct cg_cache *c)
{
	if (!c)
		return;
	clear_entries(c);
	if (c->mnt_fd >= 0)
		close(c->mnt_fd);
	free(c);
}

static struct cg_entry *slot_of(struct cg_entry *e, size_t cap, uint64_t id)
{
	size_t i = (id * 0x9e3779b97f4a7c15ull) & (cap - 1);

	while (e[i].id && e[i].id != id)
		i = (i + 1) & (cap - 1);
	return &e[i];
}

static int grow(struct cg_cache *c)
{
	size_t cap = c->cap ? c->cap * 2 : 256;
	struct cg_entry *e = calloc(cap, sizeof(*e));

	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < c->cap; i++)
		if (c->e[i].id)
			*slot_of(e, cap, c->e[i].id) = c->e[i];
	free(c->e);
	c->e = e;
	c->cap = cap;
	return 0;
}

/* id's entry, added (path NULL) when new; NULL: out of memory. */
static struct cg_entry *entry(struct cg_cache *c, uint64_t id)
{
	struct cg_entry *s;

	if (c->nr >= CG_CACHE_MAX)
		clear_entries(c);
	if ((c->nr + 1) * 2 > c->cap && grow(c))
		return NULL;
	s = slot_of(c->e, c->cap, id);
	if (!s->id) {
		s->id = id;
		c->nr++;
	}
	return s;
}

int cg_cache_put(struct cg_cache *c, uint64_t id, const char *path)
{
	struct cg_entry *s = id ? entry(c, id) : NULL;
	char *p = strdup(path);

	if (!s || !p) {
		free(p);
		return -ENOMEM;
	}
	free(s->path);
	s->path = p;
	return 0;
}

/* The kernel's own answer: open the cgroup by its id (a kernfs file handle). */
static int lookup(struct cg_cache *c, uint64_t id, char *rel, size_t n)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = { .fh = { .handle_bytes = sizeof(uint64_t), .handle_type = CG_FILEID_KERNFS } };
	char link[64], real[PATH_MAX];
	ssize_t len;
	int fd, ret = -ENOENT;

	if (c->mnt_fd < 0)
		return -ENOENT;
	memcpy(h.fh.f_handle, &id, sizeof(id));
	fd = open_by_handle_at(c->mnt_fd, &h.fh, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = readlink(link, real, sizeof(real) - 1);
	if (len > 0) {
		real[len] = '\0';
		ret = rel_of(c->mnt, real, rel, n);
	}
	close(fd);
	return ret;
}

const char *cg_path(struct cg_cache *c, uint64_t id)
{
	struct cg_entry *s;
	char rel[CG_PATH_MAX];
	uint64_t now;

	if (!c || !id)
		return NULL;
	s = entry(c, id);
	if (!s || s->path)
		return s ? s->path : NULL;
	now = it_mono_ns();
	if (now < s->retry_ns)
		return NULL;
	if (lookup(c, id, rel, sizeof(rel))) {
		s->retry_ns = now + CG_RETRY_NS;
		return NULL;
	}
	s->path = strdup(rel);
	return s->path;
}
