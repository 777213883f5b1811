/* SPDX-License-Identifier: GPL-2.0 */
/*
 * qemu: what host mode needs to know about a running QEMU, read from /proc
 * and from the ELF file of its executable. No libbpf; libelf for symbols.
 *
 * - uprobe offsets of exported functions, from the ELF dynamic symbol table
 *   (.dynsym) of /proc/PID/exe: works on a stock, stripped QEMU (no debug
 *   symbols, no hard-coded paths).
 * - discovery of qemu-system-* processes.
 * - the disks of a QEMU: its command line (-drive / -blockdev / -device)
 *   gives, per guest-visible serial, the backing file; stat() of that file
 *   (through /proc/PID/root) gives the (dev, ino) the host syscalls will show
 *   and, for a block device, the dev_t the host block layer will show.
 */
#ifndef IT_QEMU_H
#define IT_QEMU_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * File offsets (what a uprobe attaches at) of the named functions in the
 * ELF file path: defined, STT_FUNC (or STT_GNU_IFUNC) symbols of .dynsym,
 * falling back to .symtab when the file has one. offs[i] = 0 when names[i]
 * is not found. Returns the number found, or -errno (not an ELF file, ...)
 * with a one-line reason in why.
 */
int qemu_sym_offsets(const char *path, const char *const *names, int n, uint64_t *offs,
		     char *why, size_t whylen);

/* Up to max pids of running qemu-system-* processes (by /proc/PID/exe basename). */
int qemu_discover(const char *proc_root, pid_t *pids, int max);

#define QEMU_MAX_DISKS 32
struct qemu_disk {
	char serial[21]; /* as the guest sees it; "" when none was given */
	char id[64]; /* drive/node id */
	char device[32]; /* virtio-blk-pci, scsi-hd, nvme, ... ("" if no device uses it) */
	char file[256]; /* backing file as given on the command line */
	char format[16]; /* raw, qcow2, ... ("" = unknown: treated as raw by QEMU's probing) */
	uint32_t dev; /* kernel dev_t (IT_MKDEV) of the filesystem holding file (st_dev) */
	uint64_t ino; /* inode of file */
	uint32_t rdev; /* kernel dev_t of the block device when file is one, else 0 */
	int stat_ok; /* 0 when the file could not be stat()ed */
	uint64_t size; /* bytes the guest sees: a raw image's size (file or block
			  device); 0 = unknown (other formats, or not stat()ed) */
};

/*
 * Parse a QEMU command line (argv as in /proc/PID/cmdline, NUL separated,
 * len bytes) into disks[]: -drive file=..,id=..,format=..,serial=..,if=..,
 * -blockdev driver=file,filename=..,node-name=.. (and format nodes whose
 * file= names such a node), -device X,drive=ID,serial=S. Handles ",," escapes
 * in values. Fills everything but the stat fields. Returns the number of
 * disks or -EINVAL.
 */
int qemu_parse_cmdline(const char *buf, size_t len, struct qemu_disk *disks, int max);

/*
 * qemu_parse_cmdline() of /proc/PID/cmdline (under proc_root), then stat of
 * each file through /proc/PID/root/FILE (its mount namespace). Returns the
 * number of disks or -errno.
 */
int qemu_disks(const char *proc_root, pid_t pid, struct qemu_disk *disks, int max);

/*
 * What names a QEMU's guest on the link (host mode's entitlement, scope.h):
 * its vsock CID (-device vhost-vsock-pci,guest-cid=N; also vhost-vsock-device,
 * -ccw) and its unix socket chardevs (-chardev socket,path=P: the host end of
 * a virtio-serial port the host may dial).
 */
#define QEMU_MAX_SOCKS 4
struct qemu_vm {
	uint32_t cid; /* 0: no vsock device (CIDs 0..2 are never a guest's) */
	int nr_socks;
	char socks[QEMU_MAX_SOCKS][108];
};

/* Parse a command line (as qemu_parse_cmdline()) into vm. 0 or -EINVAL. */
int qemu_parse_vm(const char *buf, size_t len, struct qemu_vm *vm);
/* qemu_parse_vm() of /proc/PID/cmdline under proc_root. 0 or -errno. */
int qemu_vm_info(const char *proc_root, pid_t pid, struct qemu_vm *vm);

#endif /* IT_QEMU_H */
