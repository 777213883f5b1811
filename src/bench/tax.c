// SPDX-License-Identifier: GPL-2.0
/*
 * tax: the workloads of the tax preset. What a tracer costs the calls it
 * does not trace — every other syscall of the host, pipe and socket reads
 * and writes — is invisible to fio; these loops make only such calls, in the
 * bench's own process, and time them.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench/internal.h"
#include "lib/clock.h"

#define TAX_BATCH 2000 /* ops between two looks at the clock */
#define TAX_MSG 64

/* One batch of ops on fds (a pipe or socket pair: write to [1], read from [0]). */
static int tax_batch(int kind, const int fds[2])
{
	char buf[TAX_MSG] = { 0 };

	for (int i = 0; i < TAX_BATCH; i++) {
		if (kind == TAX_SYSCALL) {
			syscall(SYS_getppid); /* not glibc's getppid(): never cached */
			continue;
		}
		if (write(fds[1], buf, sizeof(buf)) != sizeof(buf) ||
		    read(fds[0], buf, sizeof(buf)) != sizeof(buf))
			return -errno ?: -EIO;
	}
	return 0;
}

int tax_run(int kind, uint64_t runtime_ns, uint64_t *ops, uint64_t *ns)
{
	int fds[2] = { -1, -1 }, ret = 0;
	uint64_t t0, now;

	*ops = *ns = 0;
	if (kind == TAX_PIPE && pipe(fds))
		return -errno;
	if (kind == TAX_SOCKET && socketpair(AF_UNIX, SOCK_STREAM, 0, fds))
		return -errno;
	t0 = now = it_mono_ns();
	while (!ret && now - t0 < runtime_ns && !bench_stopped()) {
		ret = tax_batch(kind, fds);
		*ops += TAX_BATCH;
		now = it_mono_ns();
	}
	*ns = now - t0;
	if (fds[0] >= 0) {
		close(fds[0]);
		close(fds[1]);
	}
	return ret;
}
