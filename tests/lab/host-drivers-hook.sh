#!/bin/bash
# LAB_HOST_HOOK of tests/lab/test_drivers.sh for its SERIES+guest runs: runs
# `iotracer --mode host` on the lab's QEMU (LAB_QEMU_PID), dialing the
# virtio-serial chardev socket the guest daemon streams on, writing
# $LAB_OUTDIR/host.json (guest_vreq lines: what the guest sent, as the host
# took it) and host.err. On TERM (boot.sh ends the hook when the guest is
# done) the daemon gets SIGTERM and is waited for (its final summary).
set -u
: "${IOTRACER:?}" "${LAB_QEMU_PID:?}" "${LAB_OUTDIR:?}" "${LAB_SERIAL_SOCK:?}"
hpid=""
finish() {
	trap '' TERM INT HUP
	[[ -n $hpid ]] && kill -TERM "$hpid" 2>/dev/null && wait "$hpid"
	echo "rc=$?" >"$LAB_OUTDIR/host.done"
	exit 0
}
trap finish TERM INT HUP
"$IOTRACER" --mode host --qemu-pid "$LAB_QEMU_PID" --link "unix:$LAB_SERIAL_SOCK" -q --no-live \
	-j "$LAB_OUTDIR/host.json" >"$LAB_OUTDIR/host.out" 2>"$LAB_OUTDIR/host.err" &
hpid=$!
while kill -0 "$LAB_QEMU_PID" 2>/dev/null; do sleep 0.2; done
finish
