// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_stats_hold: BPF run-time statistics on for as long as it runs, by a
 * BPF_ENABLE_STATS fd (never the kernel.bpf_stats_enabled sysctl): they turn
 * off when it exits, is killed, or its parent dies (PR_SET_PDEATHSIG), so a
 * test killed midway cannot leave them on. For the tests that read programs'
 * run_time_ns/run_cnt (tests/lab/test_modes.sh):
 *
 *   bpf_stats_hold &  ...  kill $!
 *
 * Prints "on" once the fd is held, then waits for SIGTERM/SIGINT. Exit 0, or
 * 1 (message on stderr) when the kernel refuses the fd.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

static int enable_stats(void)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.enable_stats.type = BPF_STATS_RUN_TIME;
	return (int)syscall(__NR_bpf, BPF_ENABLE_STATS, &attr, sizeof(attr));
}

int main(void)
{
	sigset_t set;
	int fd, sig;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() == 1) {
		fprintf(stderr, "bpf_stats_hold: no parent to follow\n");
		return 1;
	}
	fd = enable_stats();
	if (fd < 0) {
		fprintf(stderr, "bpf_stats_hold: BPF_ENABLE_STATS: %s\n", strerror(errno));
		return 1;
	}
	printf("on\n");
	fflush(stdout);
	sigwait(&set, &sig);
	close(fd);
	return 0;
}
