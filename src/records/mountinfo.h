/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mountinfo: a mount namespace's mounts as /proc/PID/mountinfo shows them
 * (proc(5)): each mount's id, its file system's device, the root of the file
 * system it shows (a bind mount shows a directory), and where it is mounted,
 * as that namespace sees it. Pure: the parser takes text; mi_read() reads a
 * file. Used to turn a path inside a file system (a name record's,
 * names.bpf.h) into the path a namespace sees (records/fnres.h).
 */
#ifndef IT_RECORDS_MOUNTINFO_H
#define IT_RECORDS_MOUNTINFO_H

#include <stddef.h>
#include <stdint.h>

struct mi_mount {
	uint32_t id; /* mount id (the name records' mnt_id) */
	uint32_t dev; /* its file system's kernel dev_t (IT_MKDEV) */
	const char *root; /* the directory of the file system it shows ("/": all of it) */
	const char *point; /* where it is mounted, in that namespace */
	const char *fstype;
};

struct mi_table {
	struct mi_mount *m;
	int nr;
	char *text; /* the strings the mounts point into */
};

/*
 * Parse mountinfo text (octal escapes such as \040 undone) into t, replacing
 * what it held. Lines that do not parse are skipped and counted in *bad (may be
 * NULL). 0, or -ENOMEM.
 */
int mi_parse(struct mi_table *t, const char *text, size_t len, int *bad);
/* Read and parse a mountinfo file. 0 or -errno. */
int mi_read(struct mi_table *t, const char *path);
void mi_free(struct mi_table *t);

/* The mount with that id; NULL: none. */
const struct mi_mount *mi_by_id(const struct mi_table *t, uint32_t id);
/*
 * A mount of file system dev that shows path (a path inside that file system):
 * the one whose root is the longest prefix of path, the first mounted of those
 * (a later one may be a bind mount of it). NULL: none shows it.
 */
const struct mi_mount *mi_by_dev(const struct mi_table *t, uint32_t dev, const char *path);
/*
 * path (inside m's file system, below m->root) as the namespace sees it: m's
 * mount point and the rest of path below the root, into buf. 0, -ENOENT when
 * path is not below m's root, -ENAMETOOLONG when it does not fit.
 */
int mi_path(const struct mi_mount *m, const char *path, char *buf, size_t n);

#endif /* IT_RECORDS_MOUNTINFO_H */
