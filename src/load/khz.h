/* SPDX-License-Identifier: GPL-2.0 */
/*
 * khz: the kernel's tick rate (CONFIG_HZ), which converts jiffies (such as
 * inode->dirtied_when, bpf/wbfile.bpf.h) to time. The kernel's config file
 * says it; where there is none, two samples of /proc/timer_list do.
 */
#ifndef IT_KHZ_H
#define IT_KHZ_H

/*
 * CONFIG_HZ from a kernel config file (plain or gzip'd, as /proc/config.gz):
 * its value, 0 when the file or the line is not there.
 */
unsigned int khz_from_config(const char *path);
/*
 * The running kernel's HZ: /boot/config-RELEASE, /proc/config.gz, else
 * measured on /proc/timer_list's jiffies against its clock over ~20 ms and
 * rounded to a rate kernels are built with (100, 250, 300, 1000); 0: not known.
 */
unsigned int khz_kernel(void);

#endif /* IT_KHZ_H */
