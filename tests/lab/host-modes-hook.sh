#!/bin/bash
# LAB_HOST_HOOK of tests/lab/test_modes.sh: runs `iotracer --mode host` on the
# lab's QEMU (LAB_QEMU_PID) with the link options in MODES_HOST_LINK (e.g.
# "--listen tcp:127.0.0.1:PORT"; "serial": dial the virtio-serial chardev
# socket, "--link unix:$LAB_SERIAL_SOCK"), writing
# $LAB_OUTDIR/host1.json. When the guest prints `LAB-MARK restart-host` on
# the console, the daemon is SIGKILLed and a second one started (host2.json).
# On TERM (boot.sh ends the hook when the guest is done) the running daemon
# gets SIGTERM and is waited for, so its final summary is written.
set -u
: "${IOTRACER:?}" "${LAB_QEMU_PID:?}" "${LAB_OUTDIR:?}" "${LAB_CONSOLE:?}"
[[ ${MODES_HOST_LINK:?} == serial ]] && MODES_HOST_LINK="--link unix:${LAB_SERIAL_SOCK:?}"
hpid=""
start() {
	# shellcheck disable=SC2086 # MODES_HOST_LINK is a list of options
	"$IOTRACER" --mode host --qemu-pid "$LAB_QEMU_PID" $MODES_HOST_LINK -q --no-live \
		-j "$LAB_OUTDIR/host$1.json" >"$LAB_OUTDIR/host$1.out" 2>"$LAB_OUTDIR/host$1.err" &
	hpid=$!
	echo "$hpid" >"$LAB_OUTDIR/host$1.pid"
}
finish() {
	trap '' TERM INT HUP
	[[ -n $hpid ]] && kill -TERM "$hpid" 2>/dev/null && wait "$hpid"
	echo "rc=$?" >"$LAB_OUTDIR/host.done"
	exit 0
}
trap finish TERM INT HUP
start 1
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
