/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The filters all hooks share (config.bpf.h: a reload changes them in place):
 * the task filters (never iotracer itself; -p pids, -c comm, cgroup) on the
 * current thread, and the -d device list. The -f file filter is a lookup in
 * `files` where the inode is known (syscall enter, io_uring submit, bio queue).
 */
#ifndef IT_FILTER_BPF_H
#define IT_FILTER_BPF_H

#include "config.bpf.h"
#include "maps.bpf.h"

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
	if (filter_cgroup && bpf_get_current_cgroup_id() != target_cgroup)
		return false;
	return true;
}

static __always_inline bool it_dev_listed(u32 dev)
{
	u32 c = dev_cur & 1, n = nr_dev_list[c];

	for (u32 i = 0; i < IT_MAX_DEVS; i++) {
		if (i >= n)
			return false;
		if (dev_list[c][i] == dev)
			return true;
	}
	return false;
}

static __always_inline bool it_dev_ok(u32 dev)
{
	return !filter_dev || it_dev_listed(dev);
}

#endif /* IT_FILTER_BPF_H */
