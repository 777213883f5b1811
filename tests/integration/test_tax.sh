#!/usr/bin/env bash
# Calls iotracer does not trace leave no trace: a helper (tests/tools/nonfile_io) makes
# N 64-byte write+read pairs on a pipe, a UNIX socket pair and an eventfd, then K
# O_DIRECT preads of the traced loop device. iotracer runs as always-on runs it on a
# host: no -d, no -p (issue 31: the tax on everything else). Three runs: full records
# and always-on (the default per-syscall tracepoints here), full records on the
# raw_syscalls pair (--syscall-hooks raw).
# Oracle: the helper's own calls and the st_dev of its pipe, socket and eventfd.
#   nonfile_no_record    no syscall record of the helper on the pipe's, socket's or
#                        eventfd's device (its loader's reads of libraries are files)
#   nonfile_no_hist      no histogram entry (map key) for the pipe's, socket's or
#                        eventfd's device, in full records and in always-on
#   file_traced          exactly K pread64 records of the helper, 4096 bytes each
#   no_missed            drops.syscall.missed 0 in both runs (nothing entered and
#                        exited unseen; none counted for calls in flight at attach)
#   no_skipped           skipped_runs 0 in every layer of the three runs: the kernel ran
#                        every program it was to run. The per-syscall tracepoints skip a
#                        run while the CPU's bpf_prog_active is held, which a map syscall
#                        preempted there holds (not on a kernel without preemption, as
#                        this host's, which is why the next check is there)
#   no_map_syscalls      the always-on run (its summaries every second, /metrics built
#                        every second) makes no BPF map syscall while the helper runs:
#                        strace of the daemon (its histograms and counters are read from
#                        its mappings)
# shellcheck disable=SC2016 # jq programs in single quotes
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin nonfile_no_record nonfile_no_hist file_traced no_missed no_skipped no_map_syscalls
it_require_all jq strace

HELPER=$IT_ROOT/build/nonfile_io
[[ -x $HELPER ]] || fail_all "$HELPER is not built (make tools)"
N=20000
K=50

dev=$(mk_loop 16 fill) || fail_all "cannot create a loop device"

# run NAME ARGS...: one daemon around one helper run; sets HPID, HOUT, DEVS, HIST_BAD, MISSED
run() {
	local args=("${@:2}") d hb=0 spid=""
	start_tracer "${args[@]}" || fail_all "$TRACER_WHY"
	if [[ $1 == always-on ]]; then
		strace -f -qq -e trace=bpf -o "$IT_TMP/strace.out" -p "$TRACER_PID" 2>/dev/null &
		spid=$!
		_it_register pids "$spid"
		sleep 1 # attached (strace stops each thread once)
	fi
	HOUT=$IT_TMP/helper.$1.out
	"$HELPER" "$dev" "$N" "$K" >"$HOUT" 2>&1 &
	HPID=$!
	wait "$HPID" || fail_all "nonfile_io failed: $(tr '\n' ' ' <"$HOUT")"
	sleep 1.5 # a summary and a /metrics text more
	if [[ -n $spid ]]; then
		kill "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
		_it_unregister pids "$spid"
	fi
	stop_tracer || fail_all "$TRACER_WHY"
	tracer_summary || fail_all "no final summary"
	DEVS=$(awk '/_dev / { print $2 }' "$HOUT" | jq -R . | jq -sc .)
	for d in $(awk '/_dev / { print $2 }' "$HOUT"); do
		hb=$((hb + $(jq --arg d "$d" '[.hists[]? | select(.dev == $d)] | length' "$SUMMARY")))
	done
	HIST_BAD=$hb
	MISSED=$(jq -r '.drops.syscall.missed // 0' "$SUMMARY")
	SKIPPED=$(jq -r '[.skipped_runs[]?] | add // "none"' "$SUMMARY")
	note "$1: helper pid $HPID: $(tr '\n' ' ' <"$HOUT")"
}

# records NAME: the full-record run's counts of the helper into OTHERS_NAME, PREADS_NAME
records() {
	local o p
	o=$(jcount "$TRACER_JSON" '.kind == "syscall" and .pid == $p and (.devno as $d | $devs | index($d))' \
		--argjson p "$HPID" --argjson devs "$DEVS")
	p=$(jcount "$TRACER_JSON" '.kind == "syscall" and .pid == $p and .syscall == "pread64"
		and .bytes == 4096 and .ret == 4096' --argjson p "$HPID")
	printf -v "OTHERS_$1" '%s' "$o"
	printf -v "PREADS_$1" '%s' "$p"
}

run full
records full
hist_full=$HIST_BAD missed_full=$MISSED skipped_full=$SKIPPED
run raw --syscall-hooks raw
records raw
hist_raw=$HIST_BAD missed_raw=$MISSED skipped_raw=$SKIPPED
# always-on as a host runs it, /metrics read every second meanwhile
PORT=$(free_port) || fail_all "no free port"
run always-on --profile always-on --metrics "127.0.0.1:$PORT" -i 1s
check nonfile_no_record "records of the helper on the devices $DEVS: percall $OTHERS_full, raw $OTHERS_raw (3 x $N pairs made)" \
	test "$OTHERS_full" -eq 0 -a "$OTHERS_raw" -eq 0
check nonfile_no_hist "histogram entries for the pipe/socket/eventfd devices: full $hist_full, raw $hist_raw, always-on $HIST_BAD" \
	test "$hist_full" -eq 0 -a "$hist_raw" -eq 0 -a "$HIST_BAD" -eq 0
check file_traced "pread64 records of the helper: percall $PREADS_full, raw $PREADS_raw, $K made" \
	test "$PREADS_full" -eq "$K" -a "$PREADS_raw" -eq "$K"
check no_missed "drops.syscall.missed: full $missed_full, raw $missed_raw, always-on $MISSED" \
	test "$missed_full" -eq 0 -a "$missed_raw" -eq 0 -a "$MISSED" -eq 0
check no_skipped "skipped_runs, all layers: full $skipped_full, raw $skipped_raw, always-on $SKIPPED" \
	test "$skipped_full" = 0 -a "$skipped_raw" = 0 -a "$SKIPPED" = 0
nsys=$(grep -c '^[0-9]* *bpf(' "$IT_TMP/strace.out" 2>/dev/null)
nmap=$(grep -c 'bpf(BPF_MAP_' "$IT_TMP/strace.out" 2>/dev/null)
note "always-on: $nsys bpf() calls while the helper ran, $nmap of them map commands: $(grep -o 'bpf(BPF_[A-Z_]*' "$IT_TMP/strace.out" | sort | uniq -c | tr -s ' \n' ' ')"
check no_map_syscalls "BPF map syscalls of the always-on daemon (summaries and /metrics every second) while the helper ran: $nmap" \
	eval '[[ -s $IT_TMP/strace.out || -f $IT_TMP/strace.out ]] && ((nmap == 0))'

it_end
