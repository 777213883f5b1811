/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sched layer, exact variant (--sched-switch): off-CPU time of a thread while
 * it is inside a traced syscall, and who woke it. The default variant has no
 * hook: it reads the task's own switch counters and run_delay at syscall
 * enter and exit (it_sched_read, syscall.bpf.h). These hooks fire for every
 * context switch and wakeup of the machine: kernel threads (the idle task, kworkers: no mm, never in a
 * traced syscall) cost one load each; other threads outside a traced syscall
 * one task-storage lookup, no clock read.
 */
#ifndef IT_SCHED_BPF_H
#define IT_SCHED_BPF_H

#include "maps.bpf.h"
#include "core_fixes.bpf.h"

/* The state of a user thread with a traced syscall in flight, or NULL. */
static __always_inline struct thread_state *it_sched_state(struct task_struct *t)
{
	struct thread_state *st;

	if (!t->mm)
		return NULL;
	st = it_state_of(t);
	return st && st->in_sys ? st : NULL;
}

SEC("tp_btf/sched_switch")
int btf_sched_switch(u64 *ctx)
{
	struct task_struct *prev = (void *)ctx[1], *next = (void *)ctx[2];
	struct thread_state *st;
	u64 now = 0;

	st = it_sched_state(prev);
	if (st) {
		long state = IT_SWITCH_PREV_STATE(ctx, prev);

		now = bpf_ktime_get_ns();
		st->switch_out_ns = now;
		st->out_blocked = state != 0; /* != TASK_RUNNING: it waits */
	}
	st = it_sched_state(next);
	if (st && st->switch_out_ns) {
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
	struct thread_state *st = it_sched_state((void *)ctx[0]);

	if (st) {
		st->waker_tid = (u32)bpf_get_current_pid_tgid();
		bpf_get_current_comm(st->waker_comm, sizeof(st->waker_comm));
	}
	return 0;
}

#endif /* IT_SCHED_BPF_H */
