/* SPDX-License-Identifier: GPL-2.0 */
/*
 * syscalls: the traced syscalls by number on this build's architecture, the
 * table the raw_syscalls programs look each syscall up in (bpf/config.bpf.h
 * sys_of_nr; the loader fills it before load).
 */
#ifndef IT_SYSCALLS_H
#define IT_SYSCALLS_H

#include <stdint.h>

/*
 * Fill tab[IT_SYSNR_MAX] with the syscalls the raw_syscalls programs trace:
 * tab[nr] = IT_SYS_* + 1, 0 for every other number; the libaio calls only
 * with aio (their exit program is loaded). Returns how many.
 */
int it_syscalls_table(uint8_t *tab, int aio);

#endif
