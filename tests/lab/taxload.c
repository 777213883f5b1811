// SPDX-License-Identifier: GPL-2.0
// taxload: what every other syscall of a traced host pays, for the QEMU lab
// guest (tests/lab/test_fileio.sh). One thread, one loop of N rounds:
//
//   taxload -m syscall -n N   getppid()                        1 call per round
//   taxload -m pipe -n N      64-byte write + read on a pipe   2 calls per round
//   taxload -m socket -n N    the same on a UNIX socketpair    2 calls per round
//   taxload -m eventfd -n N   8-byte write + read on an eventfd 2 calls per round
//   taxload -m file -n N -f PATH
//                             64-byte pwrite + pread at offset 0 of PATH
//                             (created, truncated): 2 calls per round;
//                             with -y an fsync after the pwrite: 3 calls
//   taxload -m aio -n N -f PATH
//                             libaio without the library: io_submit of one
//                             64-byte pread iocb at offset 0 of PATH (64 bytes
//                             written first), then io_getevents for it: 2 calls
//   -c                        also the run counts of every BPF program loaded
//                             (kernel.bpf_stats_enabled must be 1) right before
//                             and after the loop, in this process (no exec, no
//                             output in between)
//
// A loop prints one JSON line:
//   {"mode":"pipe","rounds":N,"calls":2N,"errors":0,"elapsed_ns":T,"ns_per_call":T/2N,
//    "min_ns_per_call":M}
// M: the loop runs in 50 batches of N/50 rounds; M is the fastest batch's ns per
// call, the cost without the interruptions a shared (or emulated) machine adds.
// errors: calls that did not transfer their bytes (the loop stops at the
// first). -c prints first, per program loaded before and after, `runs MODE ID
// NAME RUNS_IN_THE_LOOP`, then `progs MODE N_BEFORE N_AFTER`.
// Exit 0 when no call failed, 1 otherwise, 2 on usage or setup errors.
//
// Build: gcc -static -O2 -Wall -o taxload taxload.c
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define BATCHES 50

static void usage(void)
{
	fprintf(stderr,
		"usage: taxload -m syscall|pipe|socket|eventfd|file|aio -n ROUNDS [-f PATH] [-c] [-y]\n");
	exit(2);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/* The loaded BPF programs' ids, names and run counts. */
#define MAX_PROGS 1024
struct prog_runs {
	uint32_t id;
	char name[BPF_OBJ_NAME_LEN];
	uint64_t runs;
};

static int run_counts(struct prog_runs *p)
{
	union bpf_attr a;
	uint32_t id = 0;
	int n = 0;

	while (n < MAX_PROGS) {
		struct bpf_prog_info info;
		int fd;

		memset(&a, 0, sizeof(a));
		a.start_id = id;
		if (sys_bpf(BPF_PROG_GET_NEXT_ID, &a))
			break;
		id = a.next_id;
		memset(&a, 0, sizeof(a));
		a.prog_id = id;
		fd = sys_bpf(BPF_PROG_GET_FD_BY_ID, &a);
		if (fd < 0)
			continue; /* gone meanwhile */
		memset(&info, 0, sizeof(info));
		memset(&a, 0, sizeof(a));
		a.info.bpf_fd = fd;
		a.info.info_len = sizeof(info);
		a.info.info = (uint64_t)(uintptr_t)&info;
		if (!sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a)) {
			p[n].id = id;
			memcpy(p[n].name, info.name, sizeof(p[n].name));
			p[n].runs = info.run_cnt;
			n++;
		}
		close(fd);
	}
	if (n < MAX_PROGS && errno != ENOENT) {
		fprintf(stderr, "taxload: BPF_PROG_GET_NEXT_ID: %s\n", strerror(errno));
		return -1;
	}
	return n;
}

static struct prog_runs before[MAX_PROGS], after[MAX_PROGS];

int main(int argc, char **argv)
{
	const char *mode = NULL, *path = NULL;
	long rounds = 0, errors = 0, per = 2;
	int kind = 0; /* 0 pipe/socket, 1 eventfd, 2 file, 3 syscall, 4 aio */
	aio_context_t ctx = 0;
	struct iocb cb, *cbs[1] = { &cb };
	struct io_event ev;
	char buf[64] = { 1 };
	int fds[2], c;
	uint64_t t0, t, tb, best = UINT64_MAX;
	long batch;

	int counts = 0, nb = 0, na = 0, sync = 0;

	while ((c = getopt(argc, argv, "m:n:f:cy")) != -1) {
		switch (c) {
		case 'm':
			mode = optarg;
			break;
		case 'n':
			rounds = strtol(optarg, NULL, 0);
			break;
		case 'f':
			path = optarg;
			break;
		case 'c':
			counts = 1;
			break;
		case 'y':
			sync = 1;
			break;
		default:
			usage();
		}
	}
	if (!mode || rounds <= 0)
		usage();
	if (!strcmp(mode, "pipe")) {
		if (pipe(fds))
			goto setup;
	} else if (!strcmp(mode, "socket")) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds))
			goto setup;
	} else if (!strcmp(mode, "eventfd")) {
		kind = 1;
		fds[0] = fds[1] = eventfd(0, 0);
		if (fds[0] < 0)
			goto setup;
	} else if (!strcmp(mode, "file")) {
		if (!path)
			usage();
		kind = 2;
		per += sync;
		fds[0] = fds[1] = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fds[0] < 0)
			goto setup;
	} else if (!strcmp(mode, "aio")) {
		if (!path)
			usage();
		kind = 4;
		fds[0] = open(path, O_RDWR | O_CREAT, 0600);
		if (fds[0] < 0 || pwrite(fds[0], buf, sizeof(buf), 0) != sizeof(buf) ||
		    syscall(SYS_io_setup, 1, &ctx))
			goto setup;
		memset(&cb, 0, sizeof(cb));
		cb.aio_fildes = fds[0];
		cb.aio_lio_opcode = IOCB_CMD_PREAD;
		cb.aio_buf = (uint64_t)(uintptr_t)buf;
		cb.aio_nbytes = sizeof(buf);
	} else if (!strcmp(mode, "syscall")) {
		per = 1;
		kind = 3;
	} else {
		usage();
	}
	batch = rounds / BATCHES ? rounds / BATCHES : 1;
	if (counts && (nb = run_counts(before)) < 0)
		return 2;
	t0 = now_ns();
	tb = t0;
	for (long i = 0; i < rounds && !errors; i++) {
		if (i && i % batch == 0) {
			uint64_t tn = now_ns();

			if (tn - tb < best)
				best = tn - tb;
			tb = tn;
		}
		if (kind == 3) {
			syscall(SYS_getppid); /* not the C library's: always a syscall */
		} else if (kind == 4) {
			errors += syscall(SYS_io_submit, ctx, 1, cbs) != 1;
			errors += syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL) != 1 ||
				  ev.res != sizeof(buf);
		} else if (kind == 1) {
			uint64_t v = 1;

			errors += write(fds[1], &v, 8) != 8;
			errors += read(fds[0], &v, 8) != 8;
		} else if (kind == 2) {
			errors += pwrite(fds[1], buf, sizeof(buf), 0) != sizeof(buf);
			if (sync)
				errors += fsync(fds[1]) != 0;
			errors += pread(fds[0], buf, sizeof(buf), 0) != sizeof(buf);
		} else {
			errors += write(fds[1], buf, sizeof(buf)) != sizeof(buf);
			errors += read(fds[0], buf, sizeof(buf)) != sizeof(buf);
		}
	}
	t = now_ns() - t0;
	if (best == UINT64_MAX) /* fewer rounds than batches */
		best = t * batch / rounds;
	if (counts && (na = run_counts(after)) < 0)
		return 2;
	/* a program of both snapshots: its runs in the loop (output after both) */
	for (int i = 0; i < na; i++)
		for (int j = 0; j < nb; j++)
			if (after[i].id == before[j].id)
				printf("runs %s %u %s %llu\n", mode, after[i].id, after[i].name,
				       (unsigned long long)(after[i].runs - before[j].runs));
	if (counts)
		printf("progs %s %d %d\n", mode, nb, na);
	printf("{\"mode\":\"%s\",\"rounds\":%ld,\"calls\":%ld,\"errors\":%ld,\"elapsed_ns\":%llu,"
	       "\"ns_per_call\":%.1f,\"min_ns_per_call\":%.1f}\n",
	       mode, rounds, rounds * per, errors, (unsigned long long)t,
	       (double)t / (rounds * per), (double)best / (batch * per));
	return errors ? 1 : 0;
setup:
	fprintf(stderr, "taxload: %s setup: %s\n", mode, strerror(errno));
	return 2;
}
