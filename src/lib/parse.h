/* SPDX-License-Identifier: GPL-2.0 */
/*
 * parse: strict parsers for command line values (durations, sizes, integers,
 * block devices, layer lists) and small formatting helpers.
 *
 * Pure user space (libc only). Every parser returns 0 on success or a negative
 * errno and leaves *out untouched on failure:
 *   -EINVAL  bad syntax (empty, sign, leading space, junk, unknown unit/name)
 *   -ERANGE  well formed but out of range (overflow, below min, above max)
 *   -ENOENT  (devices) no such device
 */
#ifndef IT_PARSE_H
#define IT_PARSE_H

#include <stddef.h>
#include <stdint.h>

/*
 * "250us", "10ms", "12s", "5m", "1h", "100ns"; a plain number is seconds
 * ("1.5"). Fractions are allowed ("1.5ms", ".5s"); the result is truncated to
 * whole nanoseconds. Units are lower case. No sign, no exponent, no spaces.
 */
int parse_duration(const char *s, uint64_t *ns);

/*
 * "4096", "64K", "8M", "1G", "1T": binary units (K = 1024), case-insensitive,
 * with an optional trailing "B" or "iB" ("64KB", "64KiB", "512b"). Integers only.
 */
int parse_size(const char *s, uint64_t *bytes);

/* Decimal integer in [min, max]: no sign, no leading space, no trailing junk. */
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/*
 * fn(item, ctx) for each item of the comma list s ("a,b,c"; an empty item is
 * passed as ""), in order, until one returns non-zero: that value is returned
 * (0 when all took theirs; -ENOMEM).
 */
int parse_each(const char *s, int (*fn)(const char *item, void *ctx), void *ctx);

/*
 * Block device to kernel dev_t (IT_MKDEV encoding, not glibc makedev):
 *   "loop0"      -> <sysfs_root>/class/block/loop0/dev ("7:0")
 *   "/dev/loop0" -> stat(); must be a block device (else -ENOTBLK)
 *   "7:0"        -> taken as is (major < 4096, minor < 2^20), not checked
 * sysfs_root NULL means "/sys". -ENOENT: no such device; -EINVAL: bad syntax;
 * -ENOTBLK: the path exists but is not a block device.
 */
int parse_dev(const char *s, const char *sysfs_root, uint32_t *kdev);

/*
 * A block device's size in 512-byte sectors, from <sysfs_root>/dev/block/MAJ:MIN/size
 * (sysfs_root NULL: "/sys"): 0 for a loop device no file is bound to, or a drive
 * with no medium. 0, or -errno.
 */
int parse_dev_sectors(uint32_t kdev, const char *sysfs_root, uint64_t *sectors);

/*
 * Kernel dev_t -> device name ("loop0"), from the DEVNAME= line of
 * <sysfs_root>/dev/block/MAJ:MIN/uevent, else the basename of the
 * <sysfs_root>/dev/block/MAJ:MIN symlink. When neither exists, writes
 * "MAJ:MIN" and returns -ENOENT. The name is truncated to fit n (n > 0).
 */
int parse_dev_name(uint32_t kdev, const char *sysfs_root, char *buf, size_t n);

/*
 * Cached parse_dev_name() for hot paths (one lookup per record). Returns a
 * pointer into a small static cache (valid until the next call that evicts
 * it: copy it if you keep it); never NULL. Devices without a name give
 * "MAJ:MIN" (remembered for a few seconds, so a device that appears later is
 * found). Not thread safe.
 */
const char *parse_dev_name_cached(uint32_t kdev, const char *sysfs_root);
void parse_dev_cache_clear(void);
/*
 * The disk's serial from <sysfs_root>/dev/block/MAJ:MIN/serial (virtio-blk),
 * .../device/serial (NVMe: the controller's) or .../device/vpd_pg80 (SCSI:
 * the unit serial number page, what QEMU's scsi-hd serial= gives), trailing
 * blanks trimmed; NULL when it has none. Cached.
 */
const char *parse_dev_serial_cached(uint32_t kdev, const char *sysfs_root);
/*
 * Reads the serial of every block device under <sysfs_root>/dev/block into that
 * cache (a disk's serial stays cached as long as fewer than 64 disks have one).
 * Called before attaching: reading a virtio-blk disk's serial makes the driver
 * send the device a GET_ID request, which the tracer would otherwise trace as a
 * request of its own. Returns how many devices have a serial.
 */
int parse_dev_serials_prefetch(const char *sysfs_root);

/*
 * A point in time (report's --since/--until) to CLOCK_REALTIME ns: seconds since the
 * epoch ("1764000000", "1764000000.25"), a duration before now_real ("10m"), or a
 * date and time with a zone ("2026-11-24T13:25:00Z", "...00.5+01:00") or without
 * one (local time; a space for the T). 0 or -EINVAL.
 */
int parse_time(const char *s, uint64_t now_real, uint64_t *real);
/*
 * The serial in a SCSI VPD page 0x80 (4-byte header, then the ASCII serial,
 * length big-endian in bytes 2..3) into out, trailing blanks trimmed, bytes outside
 * printable ASCII as '?'. 1 when a serial was there, else 0 (out "").
 */
int parse_vpd_serial(const uint8_t *page, size_t len, char *out, size_t outlen);

/* "MAJ:MIN" of a kernel dev_t into buf; returns buf. */
char *parse_fmt_devno(uint32_t kdev, char *buf, size_t n);

/*
 * Comma list of layer names (syscall, fs, sched, block, nvme, scsi, virtio,
 * qemu, all; case-insensitive) -> mask of 1u << IT_L_*. "all" sets every bit
 * below IT_L_MAX. Empty lists or items and unknown names give -EINVAL.
 */
int parse_layers(const char *s, uint32_t *mask);

/*
 * Human duration with 3 significant digits: "812ns", "61.2us", "1.20ms",
 * "3.40s" (rounded to nearest; values >= 1000 s print as whole seconds).
 * Returns buf (truncated to n like snprintf).
 */
char *parse_fmt_duration(uint64_t ns, char *buf, size_t n);

#endif /* IT_PARSE_H */
