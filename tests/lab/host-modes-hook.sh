#!/bin/bash
# LAB_HOST_HOOK of tests/lab/test_modes.sh: runs `iotracer --mode host` on the
# lab's QEMU (LAB_QEMU_PID) with the link options in MODES_HOST_LINK (e.g.
# "--listen tcp:127.0.0.1:PORT"; "serial": dial the virtio-serial chardev
# socket, "--link unix:$LAB_SERIAL_SOCK") and MODES_HOST_OPTS (e.g.
# "--qemu-uprobes always"), writing $LAB_OUTDIR/host1.json. When the guest
# prints `LAB-MARK restart-host` on the console, the daemon is SIGKILLed and a
# second one started (host2.json). On TERM (boot.sh ends the hook when the
# guest is done) the running daemon gets SIGTERM and is waited for, so its
# final summary is written.
# MODES_METRICS=PORT: daemon #2 serves --metrics on 127.0.0.1:PORT, scraped into
# $LAB_OUTDIR/metrics2.txt just before its SIGTERM. MODES_HOST2_OPTS: more options of
# daemon #2 (e.g. --qemu-stages).
# MODES_COST=1: the cost comparison (guest-modes.sh LAB_G_COST), on one boot:
#   base       nothing traced;
#   standalone `iotracer -p QEMU -f IMAGE` (standalone.json), started at
#              `LAB-MARK start-standalone` (not with MODES_STANDALONE=0: the
#              guest's LAB_G_STANDALONE=0 has no such phase);
#   uprobe     host mode with --qemu-uprobes always (host0.json), at
#              `LAB-MARK start-uprobe`;
#   address    host mode as daemon #1, at `LAB-MARK start-host`; the guest is
#              told to go on once the daemon said its VM is on the address path.
# The guest waits for a tracer it cannot see by polling its NVMe disk's first
# block, which this hook writes ("GO-standalone", "GO-address") in the image
# QEMU reads with O_DIRECT (cache=none). At each `LAB-MARK cost-*` mark a
# line "MARK NS BUSY TOTAL QEMU_NS DAEMON_NS UPROBE_RUNS" goes to
# $LAB_OUTDIR/cost.txt: the whole system's busy and total jiffies (/proc/stat),
# the CPU time of QEMU's and the running tracer's threads (schedstat, ns), and
# the run counts of the QEMU uprobe programs (bpf_stats, every hit).
set -u
: "${IOTRACER:?}" "${LAB_QEMU_PID:?}" "${LAB_OUTDIR:?}" "${LAB_CONSOLE:?}"
[[ ${MODES_HOST_LINK:?} == serial ]] && MODES_HOST_LINK="--link unix:${LAB_SERIAL_SOCK:?}"
hpid=""
start() { # N [OPTION...]: host daemon N (hostN.json)
	local n=$1 m=()
	shift
	[[ $n == 2 && -n ${MODES_METRICS:-} ]] && m=(--metrics "127.0.0.1:$MODES_METRICS")
	# shellcheck disable=SC2206 # a list of options
	[[ $n == 2 ]] && m+=(${MODES_HOST2_OPTS:-})
	# shellcheck disable=SC2086 # MODES_HOST_LINK and MODES_HOST_OPTS are lists of options
	"$IOTRACER" --mode host --qemu-pid "$LAB_QEMU_PID" $MODES_HOST_LINK ${MODES_HOST_OPTS:-} \
		"$@" -q --no-live "${m[@]}" -j "$LAB_OUTDIR/host$n.json" >"$LAB_OUTDIR/host$n.out" \
		2>"$LAB_OUTDIR/host$n.err" &
	hpid=$!
	echo "$hpid" >"$LAB_OUTDIR/host$n.pid"
}
stop() { # SIGTERM the running tracer and wait for it
	[[ -n $hpid ]] && kill -TERM "$hpid" 2>/dev/null && wait "$hpid"
	hpid=""
}
finish() {
	trap '' TERM INT HUP
	[[ -n ${MODES_METRICS:-} && -f $LAB_OUTDIR/host2.pid ]] &&
		curl -s --max-time 5 "http://127.0.0.1:$MODES_METRICS/metrics" >"$LAB_OUTDIR/metrics2.txt"
	[[ -n $hpid ]] && kill -TERM "$hpid" 2>/dev/null && wait "$hpid"
	echo "rc=$?" >"$LAB_OUTDIR/host.done"
	exit 0
}
trap finish TERM INT HUP
# wait_mark NAME: until the guest printed `LAB-MARK NAME` (ends the hook if QEMU is gone)
wait_mark() {
	while ! grep -q "LAB-MARK $1" "$LAB_CONSOLE" 2>/dev/null; do
		kill -0 "$LAB_QEMU_PID" 2>/dev/null || finish
		sleep 0.05
	done
}
# wait_line FILE TEXT: until FILE has TEXT (the running tracer said it), 60 s at most
wait_line() {
	local i
	for ((i = 0; i < 600; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		kill -0 "$LAB_QEMU_PID" 2>/dev/null || finish
		sleep 0.1
	done
	return 1
}
# go WORD: tell the guest (it polls its NVMe disk's first block)
go() {
	printf '%-16s' "GO-$1" | dd of="${LAB_NVME_IMG:?}" bs=4096 count=1 conv=notrunc,sync \
		oflag=direct status=none
}
# CPU time (ns) of a process's threads
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {print s + 0}'; }
# the run counts of the running tracer's QEMU uprobe programs (its fds name them:
# other tracers may run on this machine)
uprobe_runs() {
	local ids
	[[ -n $hpid ]] || { echo 0; return; }
	ids=$(awk '$1 == "prog_id:" {print $2}' /proc/"$hpid"/fdinfo/* 2>/dev/null | sort -u |
		jq -s -c .)
	bpftool prog show -j 2>/dev/null | jq --argjson ids "${ids:-[]}" '[.[] |
		select((.id as $i | $ids | index($i)) and (.name | test("^qemu_(aio|notify)"))) |
		.run_cnt // 0] | add // 0'
}
snap() { # MARK
	local u n s i io irq sirq st d=0
	read -r _ u n s i io irq sirq st _ </proc/stat
	[[ -n $hpid ]] && d=$(cpu_ns "$hpid")
	echo "$1 $(date +%s%N) $((u + n + s + irq + sirq + st)) $((u + n + s + i + io + irq + sirq + st)) $(cpu_ns "$LAB_QEMU_PID") $d $(uprobe_runs)" >>"$LAB_OUTDIR/cost.txt"
}
marks() { # PHASE: its idle, begin and end marks
	wait_mark "cost-$1-idle"
	snap "cost-$1-idle"
	wait_mark "cost-$1-begin"
	snap "cost-$1-begin"
	wait_mark "cost-$1-end"
	snap "cost-$1-end"
}
if [[ ${MODES_COST:-0} == 1 ]]; then
	marks base
	if [[ ${MODES_STANDALONE:-1} == 1 ]]; then
		wait_mark start-standalone
		"$IOTRACER" -p "$LAB_QEMU_PID" -f "${LAB_VBLK_IMG:?}" -q --no-live \
			-j "$LAB_OUTDIR/standalone.json" >"$LAB_OUTDIR/standalone.out" \
			2>"$LAB_OUTDIR/standalone.err" &
		hpid=$!
		wait_line "$LAB_OUTDIR/standalone.err" " started: "
		go standalone
		marks standalone
		stop
	fi
	wait_mark start-uprobe
	start 0 --qemu-uprobes always
	marks uprobe
	wait_mark start-host
	stop
	start 1
	wait_line "$LAB_OUTDIR/host1.err" ": address path (" || echo "no address path" >>"$LAB_OUTDIR/cost.txt"
	go address
	marks address
else
	start 1
fi
while ! grep -q 'LAB-MARK restart-host' "$LAB_CONSOLE" 2>/dev/null; do
	kill -0 "$LAB_QEMU_PID" 2>/dev/null || finish
	sleep 0.1
done
kill -KILL "$hpid" 2>/dev/null
wait "$hpid" 2>/dev/null
sleep 0.5
start 2
while kill -0 "$LAB_QEMU_PID" 2>/dev/null; do sleep 0.2; done
finish
