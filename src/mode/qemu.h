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
int qemu_sym_offsets(const char *path, const char *const *names, int n, uint64_t *offs, char *why,
		     size_t whylen);

/* Up to max pids of running qemu-system-* processes (by /proc/PID/exe basename). */
int qemu_discover(const char *proc_root, pid_t *pids, int max);

#define QEMU_MAX_DISKS 32
#define QEMU_MAX_BACKING 4 /* backing files kept below a disk's image */
#define QEMU_FILE_LEN 256

/* The guest-visible bus of a disk, from its -device (or -drive if=). */
enum qemu_bus {
	QEMU_BUS_OTHER = 0, /* ide, usb, ... or no device */
	QEMU_BUS_VIRTIO_BLK, /* virtio-blk-pci/-device/-ccw, if=virtio */
	QEMU_BUS_SCSI, /* scsi-hd, scsi-block, scsi-disk, if=scsi */
	QEMU_BUS_NVME, /* nvme, nvme-ns */
};

/* One file of a disk: its image, or a backing file below it. */
struct qemu_file {
	char path[QEMU_FILE_LEN]; /* as QEMU names it (a backing file: resolved
				     against its overlay's directory) */
	char format[16]; /* raw, qcow2, ... ("" = unknown: QEMU probes it) */
	uint32_t dev; /* kernel dev_t (IT_MKDEV) of the filesystem holding it (st_dev) */
	uint64_t ino; /* its inode */
	uint32_t rdev; /* kernel dev_t of the block device when it is one, else 0 */
	int stat_ok; /* 0 when it could not be stat()ed */
};

struct qemu_disk {
	char serial[21]; /* as the guest sees it; "" when none was given */
	char id[64]; /* drive/node id */
	char device[32]; /* virtio-blk-pci, scsi-hd, nvme, ... ("" if no device uses it) */
	char file[QEMU_FILE_LEN]; /* image as given on the command line */
	char format[16]; /* raw, qcow2, ... ("" = unknown: treated as raw by QEMU's probing) */
	uint32_t dev; /* kernel dev_t (IT_MKDEV) of the filesystem holding file (st_dev) */
	uint64_t ino; /* inode of file */
	uint32_t rdev; /* kernel dev_t of the block device when file is one, else 0 */
	int stat_ok; /* 0 when the file could not be stat()ed */
	uint64_t size; /* bytes the guest sees: a raw image's size (file or block
			  device), a qcow2 image's virtual size; 0 = unknown */
	enum qemu_bus bus;
	/*
	 * The backing chain below file, nearest first (a qcow2 overlay's reads
	 * of clusters it lacks are served by these): from -blockdev backing=
	 * nodes, else (qemu_disks) from each qcow2 header. backing_fixed: the
	 * command line named the chain (or "backing":null): headers not read.
	 */
	int nr_backing;
	int backing_fixed;
	struct qemu_file backing[QEMU_MAX_BACKING];
};

/*
 * Is the file a host syscall record names (its dev and ino as the syscall
 * layer gives them) one of d's files, image or backing file? A block device
 * is named by its device number (the record's dev is i_rdev then, whatever
 * path QEMU opened it by); a regular file by (dev, ino).
 */
int qemu_disk_has_file(const struct qemu_disk *d, uint32_t dev, uint64_t ino);

/*
 * What the kernel's file filter (struct it_file_key: the file's own
 * filesystem and inode, block device nodes too) needs for each of d's files
 * that was stat()ed: devs[i], inos[i] for up to max files, image first.
 * Returns the count.
 */
int qemu_disk_file_keys(const struct qemu_disk *d, uint32_t *devs, uint64_t *inos, int max);

/* qcow2 header fields (big-endian on disk), from its first bytes. */
struct qemu_qcow2 {
	uint32_t version;
	char backing_fmt[16]; /* from the backing format extension; "" = probe */
	uint64_t backing_off; /* the backing file name: offset in the image, 0 = none */
	uint32_t backing_len; /* its length (at most 1023) */
	uint64_t size; /* virtual size, bytes */
};

/* Parse a qcow2 header from buf (len bytes): 0, or -EINVAL when it is none. */
int qemu_qcow2_header(const uint8_t *buf, size_t len, struct qemu_qcow2 *q);

/*
 * Parse a QEMU command line (argv as in /proc/PID/cmdline, NUL separated,
 * len bytes) into disks[]: -drive file=..,id=..,format=..,serial=..,if=..,
 * -blockdev driver=file,filename=..,node-name=.. (and format nodes whose
 * file= names such a node, with their backing= chains), -device
 * X,drive=ID,serial=S (nvme-ns,bus=CTRL: the serial of the nvme CTRL).
 * Handles ",," escapes in values. Fills everything but the stat fields (and
 * the backing files the images' headers name). Returns the number of disks
 * or -EINVAL.
 */
int qemu_parse_cmdline(const char *buf, size_t len, struct qemu_disk *disks, int max);

/*
 * qemu_parse_cmdline() of /proc/PID/cmdline (under proc_root), then stat of
 * each file through /proc/PID/root/FILE (its mount namespace), and for a
 * qcow2 image (format qcow2, or none given and the qcow2 magic) its virtual
 * size and, unless the command line fixed the chain, the backing files its
 * header names, each one's header in turn (QEMU_MAX_BACKING at most).
 * Returns the number of disks or -errno.
 */
int qemu_disks(const char *proc_root, pid_t pid, struct qemu_disk *disks, int max);

/*
 * What names a QEMU's guest on the link (host mode's entitlement, scope.h):
 * its vsock CID (-device vhost-vsock-pci,guest-cid=N; also vhost-vsock-device,
 * -ccw) and its unix socket chardevs (-chardev socket,path=P: the host end of
 * a virtio-serial port the host may dial); and its name (-name NAME or
 * -name guest=NAME,...: what --blame calls the VM in host mode, docs/blame.md).
 */
#define QEMU_MAX_SOCKS 4
#define QEMU_NAME_LEN 64
struct qemu_vm {
	uint32_t cid; /* 0: no vsock device (CIDs 0..2 are never a guest's) */
	char name[QEMU_NAME_LEN]; /* "": no -name (a longer one is cut) */
	int nr_socks;
	char socks[QEMU_MAX_SOCKS][108];
};

/* Parse a command line (as qemu_parse_cmdline()) into vm. 0 or -EINVAL. */
int qemu_parse_vm(const char *buf, size_t len, struct qemu_vm *vm);
/* qemu_parse_vm() of /proc/PID/cmdline under proc_root. 0 or -errno. */
int qemu_vm_info(const char *proc_root, pid_t pid, struct qemu_vm *vm);

/*
 * The mapping of QEMU pid holding addr, from proc_root/PID/maps: [*lo, *hi).
 * Guest RAM is one mapping per RAM block (anonymous, or a memory backend's
 * file): host mode bounds its GPA -> HVA map with it (gpamap.h). 0, -ENOENT
 * when no mapping holds addr, or -errno reading the file.
 */
int qemu_map_of(const char *proc_root, pid_t pid, uint64_t addr, uint64_t *lo, uint64_t *hi);

#endif /* IT_QEMU_H */
