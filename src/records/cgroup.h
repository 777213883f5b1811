/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgroup: cgroup v2 paths for the daemon (docs/cgroups.md). Where the cgroup2
 * hierarchy is mounted (found in /proc/self/mounts: /sys/fs/cgroup on most
 * hosts, /sys/fs/cgroup/unified on hybrid ones; mounted by us under /run when
 * nowhere), a --cgroup argument resolved to its directory, and the path of a
 * cgroup id as the records carry it, resolved once and cached: a cgroup
 * removed later keeps its last known path.
 *
 * Paths are relative to the hierarchy's root, as /proc/PID/cgroup writes
 * them ("/system.slice/foo.service"; the root is "/"), so that they mean the
 * same on every host whatever the mount point.
 */
#ifndef IT_CORE_CGROUP_H
#define IT_CORE_CGROUP_H

#include <stddef.h>
#include <stdint.h>

#define CG_PATH_MAX 512

/*
 * The cgroup2 mount point into buf: from mounts (a /proc/self/mounts-format
 * file; NULL: /proc/self/mounts), else mounted at run_dir ("/run/iotracer/cgroup2"
 * when NULL). 0 or -errno.
 */
int cg_mount_point(const char *mounts, const char *run_dir, char *buf, size_t n);

/*
 * A --cgroup argument to the hierarchy-relative path of its directory: a
 * directory on cgroup2 (an absolute or relative file system path below
 * mnt), or a hierarchy path ("/system.slice") below mnt. 0, or -EINVAL with
 * why the argument is refused in why (one line).
 */
int cg_resolve(const char *mnt, const char *arg, char *rel, size_t n, char *why, size_t why_n);

/* rel is prefix itself or below it ("/a" is under "/a" and "/", not under "/ab"). */
int cg_under(const char *rel, const char *prefix);

/* The first `depth` components of rel into buf ("/a/b/c", 2 -> "/a/b"; 0 -> "/"). */
void cg_truncate(const char *rel, int depth, char *buf, size_t n);

/* Cache of id -> path (ids are the kernel's cgroup ids, i.e. the directories' inodes). */
struct cg_cache;
struct cg_cache *cg_cache_new(const char *mnt);
void cg_cache_free(struct cg_cache *c);
/* id's path ("/" for the root); NULL: not known (never seen alive). Valid until the next call. */
const char *cg_path(struct cg_cache *c, uint64_t id);
/* Tell the cache id's path (a recording's table; tests). */
int cg_cache_put(struct cg_cache *c, uint64_t id, const char *path);

#endif /* IT_CORE_CGROUP_H */
