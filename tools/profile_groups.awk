# SPDX-License-Identifier: GPL-2.0
# tools/profile_ref.sh: samples per symbol ("N<TAB>dso [k] sym") grouped by what they are,
# in % of one core (-v ncpu=N: the run covers N cores; default 2).
function cat(s) {
  if (s ~ /pv_native_safe_halt|default_idle|cpuidle/) return "idle";
  if (s ~ /bpf_prog_/) return "BPF programs (bpf_prog_*)";
  if (s ~ /bpf_trace_run|__bpf_trace_|__traceiter_|trace_call_bpf|perf_syscall_|perf_trace_|perf_swevent|syscall_trace_enter|syscall_exit_work|bpf_prog_run|migrate_(dis|en)able/) return "dispatch: tracepoint -> BPF";
  if (s ~ /bpf_task_storage|bpf_local_storage|task_storage/) return "task storage";
  if (s ~ /lookup_nulls_elem_raw|htab_|__htab|bpf_map_|array_map|percpu_array/) return "BPF maps";
  if (s ~ /ringbuf|bpf_ringbuf/) return "ring buffer";
  if (s ~ /rcu_read_(un)?lock/) return "rcu_read_(un)lock";
  if (s ~ /ktime_get|read_tsc|kvm_clock|pvclock/) return "clock reads";
  if (s ~ /iotracer/) return "iotracer daemon (user)";
  return "other";
}
{ split($0, a, "\t"); n = a[1]; s = a[2]; c = cat(s); t[c] += n; tot += n }
END { for (c in t) printf "%-32s %8.3f\n", c, 100.0 * (ncpu ? ncpu : 2) * t[c] / tot }
