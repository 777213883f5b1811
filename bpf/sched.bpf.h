/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sched layer: off-CPU time of a thread while it is inside a traced syscall,
 * and who woke it. Threads outside a traced syscall cost one task-storage
 * lookup per context switch, no clock read.
 */
#ifndef IT_SCHED_BPF_H
#define IT_SCHED_BPF_H

#include "common.bpf.h"

/*
 * sched_switch(preempt, prev, next) gained prev_state as 4th argument in
 * 5.18 (fa2c3254d7cf); before, read prev's state (see core_fixes).
 */
SEC("tp_btf/sched_switch")
int btf_sched_switch(u64 *ctx)
{
	struct task_struct *prev = (void *)ctx[1], *next = (void *)ctx[2];
	struct thread_state *st;
	u64 now = 0;

	st = bpf_task_storage_get(&tstate, prev, 0, 0);
	if (st && st->in_sys) {
		long state = sched_switch_has_state ? (long)ctx[3] : it_task_state(prev);

		now = bpf_ktime_get_ns();
		st->switch_out_ns = now;
		st->out_blocked = state != 0; /* != TASK_RUNNING: it waits */
		st->nr_switches++;
	}
	st = bpf_task_storage_get(&tstate, next, 0, 0);
	if (st && st->in_sys && st->switch_out_ns) {
		u64 d;

		if (!now)
			now = bpf_ktime_get_ns();
		d = now - st->switch_out_ns;
		st->offcpu_ns += d;
		if (st->out_blocked)
			st->offcpu_blocked_ns += d;
		st->switch_out_ns = 0;
	}
	return 0;
}

SEC("tp_btf/sched_wakeup")
int btf_sched_wakeup(u64 *ctx)
{
	struct task_struct *p = (void *)ctx[0];
	struct thread_state *st = bpf_task_storage_get(&tstate, p, 0, 0);

	if (st && st->in_sys) {
		st->waker_tid = (u32)bpf_get_current_pid_tgid();
		bpf_get_current_comm(st->waker_comm, sizeof(st->waker_comm));
	}
	return 0;
}

#endif /* IT_SCHED_BPF_H */
