// SPDX-License-Identifier: GPL-2.0
/*
 * The traced syscalls by number: the BPF side's raw_syscalls programs run
 * for every syscall and look the number up in this table (sys_of_nr in
 * bpf/config.bpf.h). The numbers are this build's architecture's, from the
 * C library's <sys/syscall.h>, never written by hand.
 */
#include <string.h>
#include <sys/syscall.h>

#include "iotracer.h"
#include "load/syscalls.h"

static const struct {
	long nr;
	int sys;
} traced[] = {
	{ SYS_read, IT_SYS_READ },
	{ SYS_write, IT_SYS_WRITE },
	{ SYS_pread64, IT_SYS_PREAD64 },
	{ SYS_pwrite64, IT_SYS_PWRITE64 },
	{ SYS_readv, IT_SYS_READV },
	{ SYS_writev, IT_SYS_WRITEV },
	{ SYS_preadv, IT_SYS_PREADV },
	{ SYS_pwritev, IT_SYS_PWRITEV },
	{ SYS_preadv2, IT_SYS_PREADV2 },
	{ SYS_pwritev2, IT_SYS_PWRITEV2 },
	{ SYS_fsync, IT_SYS_FSYNC },
	{ SYS_fdatasync, IT_SYS_FDATASYNC },
	{ SYS_sync_file_range, IT_SYS_SYNC_FILE_RANGE },
	{ SYS_io_uring_enter, IT_SYS_IO_URING_ENTER },
	{ SYS_io_submit, IT_SYS_IO_SUBMIT },
	{ SYS_io_getevents, IT_SYS_IO_GETEVENTS },
	{ SYS_io_pgetevents, IT_SYS_IO_PGETEVENTS },
};

static int is_aio(int sys)
{
	return sys == IT_SYS_IO_SUBMIT || sys == IT_SYS_IO_GETEVENTS || sys == IT_SYS_IO_PGETEVENTS;
}

_Static_assert(IT_SYS_MAX < 255, "sys_of_nr holds IT_SYS_* + 1 in a byte");

int it_syscalls_table(uint8_t *tab, int aio)
{
	int n = 0;

	memset(tab, 0, IT_SYSNR_MAX);
	for (size_t i = 0; i < sizeof(traced) / sizeof(traced[0]); i++) {
		if (traced[i].nr < 0 || traced[i].nr >= IT_SYSNR_MAX ||
		    (is_aio(traced[i].sys) && !aio))
			continue;
		tab[traced[i].nr] = (uint8_t)(traced[i].sys + 1);
		n++;
	}
	return n;
}
