# shellcheck shell=sh source-path=SCRIPTDIR
# Guest side of the driver layers test (runs as /lab/run.sh under busybox sh;
# the host side is tests/lab/test_drivers.sh). Needs /lab/guest-lib.sh and /lab/iotracer (a static
# build, passed with LAB_EXTRA).
#
# 1. starts `iotracer -q --no-live -j out.json -d <disks>` (LAB_G_DRV_MODE=guest:
#    with `--mode guest --link serial:lab.0`) in the background and
#    waits until its attach lines are in the JSON (their number unchanged for
#    0.4 s), then LAB_G_DRV_SETTLE seconds more;
# 2. runs ioload randread then randwrite, LAB_G_DRV_COUNT ops of LAB_G_DRV_BS
#    bytes (O_DIRECT, queue depth 1, seed 42) on each disk;
# 3. stops iotracer with SIGTERM (SIGKILL after 30 s);
# 4. sends everything back on the console as one base64 tar.gz
#    (out.json, iotracer.err, ioload.txt, steps.txt):
#      ===DRV-BUNDLE=== <bytes> <md5>
#      <base64 lines>
#      ===DRV-BUNDLE-END===
# Plain lines before the bundle (small, for humans and for the host's
# diagnostics when the bundle is damaged):
#   step NAME UPTIME_S            attached, load_start, load_end, stopped
#   attach_lines N                attach lines seen in the JSON when it attached
#   ioload DISK JSON              one per ioload run (the oracle)
#   iotracer_rc N
# Exit status: 0 when iotracer attached and exited 0 and every ioload run had
# no error; 1 otherwise (the bundle is sent in every case).
set -u
# shellcheck source=guest-lib.sh # /lab/guest-lib.sh in the guest
. /lab/guest-lib.sh
count=${LAB_G_DRV_COUNT:-300}
bs=${LAB_G_DRV_BS:-4096}
disks=${LAB_G_DRV_DISKS:-nvme0n1 sda vda}
settle=${LAB_G_DRV_SETTLE:-1}
guest_init /tmp/drv

devs=$(echo "$disks" | tr ' ' ',')
# LAB_G_DRV_MODE=guest: guest mode, streaming to the host daemon on the
# virtio-serial port (tests/lab/host-modes-hook.sh), the same trace in out.json
mode=""
[ "${LAB_G_DRV_MODE:-}" = guest ] && mode="--mode guest --link serial:lab.0"
step start
# shellcheck disable=SC2086 # mode is a list of options
IOTRACER_PREFER=${LAB_G_PREFER:-} /lab/iotracer $mode -q --no-live -j "$W/out.json" -d "$devs" >"$W/iotracer.out" 2>"$W/iotracer.err" &
pid=$!

attached=""
wait_attached "$pid" "$W/out.json" && attached=1
if [ -n "$attached" ]; then
	step attached
	sleep "$settle"
	step load_start
	for d in $disks; do
		for m in randread randwrite; do
			out=$(ioload -d "/dev/$d" -n "$count" -b "$bs" -m "$m" -s 42 2>&1) || rc=1
			echo "ioload $d $out" | tee -a "$W/ioload.txt"
		done
	done
	step load_end
else
	echo "iotracer did not attach"
	rc=1
fi

# Stop it (a hang must not eat the boot's timeout).
stop_pid "$pid" iotracer
trc=$stop_rc
echo "iotracer_rc $trc"
[ "$trc" -eq 0 ] || rc=1
step stopped
[ -s "$W/iotracer.err" ] && grep -iE 'error|fail|warn|abort|assert' "$W/iotracer.err" | head -n 5

send_bundle "$W" out.json iotracer.err ioload.txt steps.txt
exit "$rc"
