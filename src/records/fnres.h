/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fnres: a name record of the BPF side (struct it_name_rec, bpf/names.bpf.h:
 * a file's dentry names up to its file system's root, and the mount it was
 * reached through) into the paths user space shows (docs/json.md "file"):
 *
 *   - the host's: the mount's point in this (the daemon's) mount namespace
 *     and the path below the mount's root (/proc/self/mountinfo: the mount by
 *     its id, else a mount of the file system that shows the path: a file
 *     named from its inode, or reached through a mount of another namespace);
 *   - a container's, when the task that reached the file is in another mount
 *     namespace: the same through that namespace's mounts (/proc/PID/mountinfo
 *     of that task, or of another task of that namespace when it is gone),
 *     when it differs from the host's.
 *
 * Markers: " (deleted)" after a file unlinked while open; "/[...]" where a
 * path too long or too deep for the record was cut (the part near the root is
 * what is missing); a file no directory holds (memfd_create's) is its own
 * name ("memfd:NAME"); "[MAJ:MIN]/path" when no mount of this namespace shows
 * its file system (unmounted since, or a private mount of another namespace).
 * Mount tables are read again when a lookup misses and the table changed
 * (poll(2) on mountinfo), at most every FR_REREAD_NS otherwise.
 */
#ifndef IT_RECORDS_FNRES_H
#define IT_RECORDS_FNRES_H

#include <stddef.h>
#include <stdint.h>

#include "records/fname.h"

#define FR_PATH_MAX 8192 /* a path the resolver writes, with its NUL */
#define FR_CUT "[...]" /* where a cut path's missing part was */

struct fnres_stats {
	uint64_t names; /* records resolved */
	uint64_t bad; /* records that did not decode */
	uint64_t no_mount; /* no mount of this namespace shows the file system: "[MAJ:MIN]" */
	uint64_t container; /* with a container's path */
	uint64_t container_gone; /* another namespace's, whose task was gone (no container path) */
	uint64_t reads; /* mountinfo files read */
	uint64_t scans; /* /proc looked through for a task of a namespace (its own one gone) */
};

struct fnres;

/* proc: where /proc is ("/proc"; tests: a directory of their own). NULL with errno. */
struct fnres *fnres_new(const char *proc);
void fnres_free(struct fnres *r);
/*
 * A name record of len bytes into its key and paths (file: the host's;
 * cfile: the container's, "" when none), each of FR_PATH_MAX bytes. 0, or
 * -EINVAL for a record that does not decode (counted).
 */
int fnres_name(struct fnres *r, const void *rec, size_t len, struct fn_key *k, char *file,
	       char *cfile);
void fnres_stats(const struct fnres *r, struct fnres_stats *st);

/*
 * The path of a name record's components alone (no mount): "/a/b/c" from the
 * file system's root, with the markers above. 0 or -EINVAL.
 */
int fnres_rel(const void *rec, size_t len, char *buf, size_t n);

#endif /* IT_RECORDS_FNRES_H */
