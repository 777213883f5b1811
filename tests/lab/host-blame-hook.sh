#!/bin/bash
# LAB_HOST_HOOK of tests/lab/test_blame_host.sh (the victim V's boot): finds the
# aggressor A's QEMU (a qemu-system-* whose command line names BH_A_IMG, booted
# by the test beside V), runs `iotracer --mode host --blame` on both QEMUs
# (dialling V's virtio-serial socket) writing $LAB_OUTDIR/host.json, and BH_PRE_S
# seconds after V printed `LAB-MARK load-start` writes "GO" into the first 4 KiB
# of A's image, which A's guest polls. A's pid goes to $LAB_OUTDIR/aggr.pid. On
# TERM (boot.sh ends the hook when V is done) the daemon gets SIGTERM and is
# waited for, so its last lines are written.
set -u
: "${IOTRACER:?}" "${LAB_QEMU_PID:?}" "${LAB_OUTDIR:?}" "${LAB_CONSOLE:?}" "${LAB_SERIAL_SOCK:?}"
: "${BH_A_IMG:?}" "${BH_PRE_S:?}"
hpid=""
finish() {
	trap '' TERM INT HUP
	[[ -n $hpid ]] && kill -TERM "$hpid" 2>/dev/null && wait "$hpid"
	echo "rc=$?" >"$LAB_OUTDIR/host.done"
	exit 0
}
trap finish TERM INT HUP
apid=""
for ((i = 0; i < 300; i++)); do
	for p in $(pgrep -f -- "$BH_A_IMG"); do
		[[ $(readlink "/proc/$p/exe" 2>/dev/null) == *qemu-system-* ]] && apid=$p
	done
	[[ -n $apid ]] && break
	sleep 0.1
done
echo "${apid:-none}" >"$LAB_OUTDIR/aggr.pid"
[[ -n $apid ]] || finish
"$IOTRACER" --mode host --qemu-pid "$LAB_QEMU_PID" --qemu-pid "$apid" --link "unix:$LAB_SERIAL_SOCK" \
	--blame -q --no-live -j "$LAB_OUTDIR/host.json" >"$LAB_OUTDIR/host.out" 2>"$LAB_OUTDIR/host.err" &
hpid=$!
while ! grep -q 'LAB-MARK load-start' "$LAB_CONSOLE" 2>/dev/null; do
	kill -0 "$LAB_QEMU_PID" 2>/dev/null || finish
	sleep 0.05
done
sleep "$BH_PRE_S"
printf 'GO\n' | dd of="$BH_A_IMG" bs=4096 count=1 conv=notrunc,sync oflag=direct 2>"$LAB_OUTDIR/go.err" ||
	printf 'GO\n' | dd of="$BH_A_IMG" bs=4096 count=1 conv=notrunc,sync,fsync 2>>"$LAB_OUTDIR/go.err"
while kill -0 "$LAB_QEMU_PID" 2>/dev/null; do sleep 0.2; done
finish
