/* SPDX-License-Identifier: GPL-2.0 */
/*
 * backing: the backing file of a qcow2 image, from its header (an overlay's
 * reads of clusters it does not hold go to that file: host mode traces it as
 * the same disk). libc only.
 */
#ifndef IT_BACKING_H
#define IT_BACKING_H

#include <stddef.h>

/*
 * The backing file named by the qcow2 image at path, as a path to open:
 * an absolute name is prefixed with root (e.g. "/proc/PID/root"), a relative
 * one is taken from path's directory. Returns 1 (out set), 0 (not qcow2, or
 * no backing file), or -errno.
 */
int qcow2_backing(const char *path, const char *root, char *out, size_t len);

#endif /* IT_BACKING_H */
