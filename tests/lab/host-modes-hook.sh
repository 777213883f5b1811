#!/bin/bash
# LAB_HOST_HOOK of tests/lab/test_modes.sh: runs `iotracer --mode host` on the
# lab's QEMU (LAB_QEMU_PID) with the link options in MODES_HOST_LINK (e.g.
# "--listen tcp:127.0.0.1:PORT"; "serial": dial the virtio-serial chardev
# socket, "--link unix:$LAB_SERIAL_SOCK"), writing
# $LAB_OUTDIR/host1.json. When the guest prints `LAB-MARK restart-host` on
# the console, the daemon is SIGKILLed and a second one started (host2.json).
# On TERM (boot.sh ends the hook when the guest is done) the running daemon
# gets SIGTERM and is waited for, so its final summary is written.
# MODES_METRICS=PORT: daemon #2 serves --metrics on 127.0.0.1:PORT, scraped into
# $LAB_OUTDIR/metrics2.txt just before its SIGTERM.
# MODES_COST=1: the cost measurement (guest-modes.sh LAB_G_COST): daemon #1
# starts only at `LAB-MARK start-host`; at each `LAB-MARK cost-*` mark a line
# "MARK NS BUSY TOTAL QEMU DAEMON" goes to $LAB_OUTDIR/cost.txt: the whole
# system's busy and total jiffies (/proc/stat), QEMU's and the daemon's CPU ticks.
set -u
: "${IOTRACER:?}" "${LAB_QEMU_PID:?}" "${LAB_OUTDIR:?}" "${LAB_CONSOLE:?}"
[[ ${MODES_HOST_LINK:?} == serial ]] && MODES_HOST_LINK="--link unix:${LAB_SERIAL_SOCK:?}"
hpid=""
start() {
	local m=()
	[[ $1 == 2 && -n ${MODES_METRICS:-} ]] && m=(--metrics "127.0.0.1:$MODES_METRICS")
	# shellcheck disable=SC2086 # MODES_HOST_LINK is a list of options
	"$IOTRACER" --mode host --qemu-pid "$LAB_QEMU_PID" $MODES_HOST_LINK -q --no-live "${m[@]}" \
		-j "$LAB_OUTDIR/host$1.json" >"$LAB_OUTDIR/host$1.out" 2>"$LAB_OUTDIR/host$1.err" &
	hpid=$!
	echo "$hpid" >"$LAB_OUTDIR/host$1.pid"
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
snap() { # MARK
	local u n s i io irq sirq st q d=0
	read -r _ u n s i io irq sirq st _ </proc/stat
	q=$(awk '{print $14 + $15}' "/proc/$LAB_QEMU_PID/stat" 2>/dev/null || echo 0)
	[[ -n $hpid ]] && d=$(awk '{print $14 + $15}' "/proc/$hpid/stat" 2>/dev/null || echo 0)
	echo "$1 $(date +%s%N) $((u + n + s + irq + sirq + st)) $((u + n + s + i + io + irq + sirq + st)) $q $d" >>"$LAB_OUTDIR/cost.txt"
}
if [[ ${MODES_COST:-0} == 1 ]]; then
	for m in cost-base-begin cost-base-end; do
		wait_mark $m
		snap $m
	done
	wait_mark start-host
fi
start 1
if [[ ${MODES_COST:-0} == 1 ]]; then
	for m in cost-traced-begin cost-traced-end; do
		wait_mark $m
		snap $m
	done
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
