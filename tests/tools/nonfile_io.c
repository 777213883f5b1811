// SPDX-License-Identifier: GPL-2.0
/*
 * nonfile_io FILE N K: N 64-byte write+read pairs on a pipe, on a UNIX socket
 * pair and on an eventfd (8 bytes), then K 4 KiB preads of FILE at offset 0.
 * Prints what it did ("pipe_dev D", "sock_dev D", "eventfd_dev D": the
 * st_dev of each fd, MAJOR:MINOR as iotracer names devices; "preads K"), for
 * test_tax.sh: the calls it made are the oracle.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static void print_dev(const char *what, int fd)
{
	struct stat st;

	if (!fstat(fd, &st))
		printf("%s_dev %u:%u\n", what, major(st.st_dev), minor(st.st_dev));
}

/* n write+read pairs of len bytes: write to w, read back from r. 0 or -1. */
static int pairs(int w, int r, long n, size_t len)
{
	char buf[64] = { 1 };

	for (long i = 0; i < n; i++)
		if (write(w, buf, len) != (ssize_t)len || read(r, buf, len) != (ssize_t)len)
			return -1;
	return 0;
}

int main(int argc, char **argv)
{
	int p[2], s[2], e, f;
	long n, k, done = 0;
	char *buf;

	if (argc != 4)
		return 2;
	n = atol(argv[2]);
	k = atol(argv[3]);
	e = eventfd(0, 0);
	if (pipe(p) || socketpair(AF_UNIX, SOCK_STREAM, 0, s) || e < 0)
		return 1;
	print_dev("pipe", p[0]);
	print_dev("sock", s[0]);
	print_dev("eventfd", e);
	if (pairs(p[1], p[0], n, 64) || pairs(s[1], s[0], n, 64) || pairs(e, e, n, 8))
		return 1;
	printf("pairs %ld\n", n);
	f = open(argv[1], O_RDONLY | O_DIRECT);
	if (f < 0 || posix_memalign((void **)&buf, 4096, 4096))
		return 1;
	for (long i = 0; i < k; i++)
		done += pread(f, buf, 4096, 0) == 4096;
	printf("preads %ld\n", done);
	return done == k ? 0 : 1;
}
