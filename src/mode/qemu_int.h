/* SPDX-License-Identifier: GPL-2.0 */
/*
 * qemu internals shared by qemuargs.c (the command line names a backing
 * chain) and qemu.c (the qcow2 headers name the rest of it). Not for other
 * modules: they use qemu.h.
 */
#ifndef IT_QEMU_INT_H
#define IT_QEMU_INT_H

#include "mode/qemu.h"

/* Appends a backing file below d's last one (path "" or a full chain: none). */
void qemu_add_backing(struct qemu_disk *d, const char *path, const char *format);

#endif /* IT_QEMU_INT_H */
