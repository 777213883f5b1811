// SPDX-License-Identifier: GPL-2.0
/*
 * A 32-bit syscall from a 64-bit process, for test_compat.sh: `int $0x80`
 * with number 17, which is pread64 in the x86-64 table and the unimplemented
 * "break" (-ENOSYS) in the i386 one, and the x86-64 argument registers set as
 * for a pread64 of FILE. A tracer that looked the number up in the 64-bit
 * table would record a pread64 that never happened. Then one real pread64 of
 * 4 KiB at offset 0, which it must record.
 *
 * Prints "int80 RET" and "pread64 RET". Exit 0; 3 where this is not x86-64
 * or the kernel has no 32-bit syscalls (ia32_emulation off): the test skips.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void no_ia32(int sig)
{
	(void)sig;
	_exit(3); /* int $0x80 faults without IA32 emulation */
}

int main(int argc, char **argv)
{
	void *buf;
	long ret = -1;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: compat_syscall FILE\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_DIRECT);
	if (fd < 0 || posix_memalign(&buf, 4096, 4096)) {
		perror(argv[1]);
		return 1;
	}
#if defined(__x86_64__)
	signal(SIGSEGV, no_ia32);
	{
		register long r10 __asm__("r10") = 0; /* pread64's pos */

		__asm__ volatile("int $0x80"
				 : "=a"(ret)
				 : "a"(17L), "D"((long)fd), "S"(buf), "d"(4096L), "r"(r10)
				 : "memory", "r8", "r9", "r11", "cc");
	}
	signal(SIGSEGV, SIG_DFL);
#else
	return 3;
#endif
	printf("int80 %ld\n", ret);
	printf("pread64 %zd\n", pread(fd, buf, 4096, 0));
	return 0;
}
