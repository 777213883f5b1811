// SPDX-License-Identifier: GPL-2.0
/*
 * bpfstats: BPF program run-time statistics through libbpf. The programs of
 * a tracer are the program fds its process holds (/proc/PID/fdinfo, so other
 * BPF users on the machine are never counted); their run_time_ns/run_cnt
 * grow only while statistics are enabled, here only by a BPF_ENABLE_STATS fd:
 * they turn off when it closes or we die, even by SIGKILL. The
 * kernel.bpf_stats_enabled sysctl is never written (a bench killed between
 * setting and restoring it left it at 1); it is read to refuse a start while
 * statistics are on already (that sysctl, or somebody else's fd). Names come
 * from the program's BTF: the kernel keeps only 15 characters of a program's
 * name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

#include "bench/internal.h"

#define STATS_SYSCTL "/proc/sys/kernel/bpf_stats_enabled"

int bpfstats_check_off(char *why, size_t n)
{
	char *t = procfs_read_file(STATS_SYSCTL, NULL);
	int on;

	if (!t)
		return 0; /* no sysctl: the fd is all there is */
	on = atoi(t);
	free(t);
	if (!on)
		return 0;
	snprintf(why, n,
		 "kernel.bpf_stats_enabled is 1 already (the sysctl, or another process's "
		 "BPF_ENABLE_STATS fd): every BPF program would pay for statistics in the "
		 "baseline runs too; set it to 0 or stop that process, then run again");
	return -1;
}

int bpfstats_enable(struct bpfstats *s)
{
	s->fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (s->fd >= 0)
		return 0;
	s->fd = -1;
	return -errno;
}

void bpfstats_disable(struct bpfstats *s)
{
	if (s->fd >= 0) {
		close(s->fd);
		s->fd = -1;
	}
}

/* The name of type type_id of kernel BTF object btf_id into buf, if it has one. */
static void btf_type_name(uint32_t btf_id, uint32_t type_id, char *buf, size_t n)
{
	struct btf *btf = btf__load_from_kernel_by_id(btf_id);
	const struct btf_type *t;
	const char *name;

	if (!btf)
		return;
	t = btf__type_by_id(btf, type_id);
	name = t ? btf__name_by_offset(btf, t->name_off) : NULL;
	if (name && name[0])
		snprintf(buf, n, "%s", name);
	btf__free(btf);
}

/* The BTF type of the program's first function (its entry point), 0 if none. */
static uint32_t prog_func_type(int fd)
{
	struct bpf_prog_info info;
	struct bpf_func_info fi;
	uint32_t len = sizeof(info);

	memset(&info, 0, sizeof(info));
	memset(&fi, 0, sizeof(fi));
	info.nr_func_info = 1;
	info.func_info_rec_size = sizeof(fi);
	info.func_info = (uintptr_t)&fi;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return fi.type_id;
}

void bpfstats_prog_name(uint32_t id, char *buf, size_t n)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info), type_id;
	int fd;

	snprintf(buf, n, "id%u", id);
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return;
	memset(&info, 0, sizeof(info));
	if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
		if (info.name[0])
			snprintf(buf, n, "%.*s", (int)sizeof(info.name), info.name);
		if (info.btf_id && info.nr_func_info && (type_id = prog_func_type(fd)))
			btf_type_name(info.btf_id, type_id, buf, n);
	}
	close(fd);
}

int bpfstats_system_progs(void)
{
	uint32_t id = 0;
	int n = 0;

	while (n < 100000 && !bpf_prog_get_next_id(id, &id))
		n++;
	return n;
}

int bpfstats_snapshot(pid_t pid, struct bench_prog *out, int max, int names)
{
	struct procfs_prog p[BENCH_MAX_PROGS];
	int n = procfs_progs(pid, p, max < BENCH_MAX_PROGS ? max : BENCH_MAX_PROGS);

	for (int i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		out[i].id = p[i].id;
		out[i].run_time_ns = p[i].run_time_ns;
		out[i].run_cnt = p[i].run_cnt;
		if (names)
			bpfstats_prog_name(out[i].id, out[i].name, sizeof(out[i].name));
	}
	return n;
}
