/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The filters all hooks share (config.bpf.h: a reload changes them in place):
 * the task filters (never iotracer itself; -p pids, -c comm, --cgroup
 * subtrees) on the current thread, and the -d device list. The -f file filter is a lookup in
 * `files` where the inode is known (syscall enter, io_uring submit, bio queue).
 */
#ifndef IT_FILTER_BPF_H
#define IT_FILTER_BPF_H

#include "config.bpf.h"
#include "maps.bpf.h"
#include "core_fixes.bpf.h"

/*
 * --cgroup: the cgroup v2 directories whose subtrees are traced, two halves
 * of IT_MAX_CGROUPS (cg_cur says which one is in force; a reload fills the
 * other, then flips). The map holds a reference on each cgroup, so a
 * directory removed while traced keeps its slot until the next reload.
 */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 2 * IT_MAX_CGROUPS);
	__type(key, u32);
	__type(value, u32);
} cgroups SEC(".maps");

/*
 * The current task is in (or below) one of the --cgroup directories: the
 * kernel's ancestor check on the task's cgroup v2 (bpf_current_task_under_cgroup,
 * 4.9+, any tracing program), so a slice matches every service below it.
 */
static __always_inline bool it_cgroup_ok(void)
{
	u32 c = cg_cur & 1, n = nr_cgroup_list[c];

	for (u32 i = 0; i < IT_MAX_CGROUPS; i++) {
		if (i >= n)
			return false;
		if (bpf_current_task_under_cgroup(&cgroups, c * IT_MAX_CGROUPS + i) == 1)
			return true;
	}
	return false;
}

/* Task filters on the current thread: self, pid, comm, cgroup. */
static __always_inline bool it_task_ok(void)
{
	u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (tgid == self_tgid)
		return false;
	if (filter_pid && !bpf_map_lookup_elem(&pids, &tgid))
		return false;
	if (filter_comm) {
		char comm[IT_COMM_LEN];

		bpf_get_current_comm(comm, sizeof(comm));
		for (int i = 0; i < IT_COMM_LEN; i++) {
			if (comm[i] != target_comm[i])
				return false;
			if (!comm[i])
				break;
		}
	}
	if (filter_cgroup && !it_cgroup_ok())
		return false;
	return true;
}

/*
 * A global function where it can be (IT_DEV_LISTED_FN, core_fixes.bpf.h): verified
 * once per program. Inlined, its 64-step loop is verified at each call site: the
 * block queue programs' five tripled their verification (0.08 -> 0.30 s here, many
 * times that under TCG); a loop over three devices at once took 52 s.
 */
IT_DEV_LISTED_FN int it_dev_in_list(u32 dev)
{
	u32 c = dev_cur & 1, n = nr_dev_list[c];

	for (u32 i = 0; i < IT_MAX_DEVS; i++) {
		if (i >= n)
			return 0;
		if (dev_list[c][i] == dev)
			return 1;
	}
	return 0;
}

static __always_inline bool it_dev_listed(u32 dev)
{
	return it_dev_in_list(dev);
}

static __always_inline bool it_dev_ok(u32 dev)
{
	return !filter_dev || it_dev_listed(dev);
}

/* A task filter is set: a request whose queue was not seen may be filtered out. */
static __always_inline bool it_task_filtered(void)
{
	return filter_pid || filter_comm || filter_cgroup || filter_file;
}

#endif /* IT_FILTER_BPF_H */
