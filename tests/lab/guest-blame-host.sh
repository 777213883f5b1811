# shellcheck shell=sh source-path=SCRIPTDIR
# Guest side of the victim V in tests/lab/test_blame_host.sh (runs as /lab/run.sh
# under busybox sh; needs /lab/iotracer and /lab/guest-lib.sh via LAB_EXTRA).
# A guest daemon (`--mode guest -d vda`) linked to the host daemon over the
# virtio-serial port; once the link is up, `LAB-MARK load-start` and 4k random
# reads on vda, QD 1, O_DIRECT (ioload runs of 100 at LAB_G_RATE/s) for LAB_G_DUR
# seconds of its own clock; `LAB-MARK load-end`; the daemon stopped (its records
# flushed to the host). Prints `ioload {json}` per run and `guest_rc N`.
set -u
# shellcheck source=guest-lib.sh # /lab/guest-lib.sh in the guest
. /lab/guest-lib.sh
guest_init /tmp/bh
dur=${LAB_G_DUR:-24}
rate=${LAB_G_RATE:-150}
# not -q: its link lines ("link: peer N (...): up: ...") on stderr say when the host is there
/lab/iotracer --mode guest --link serial:lab.0 -d vda --no-live -i 1s \
	-j "$W/g.json" >"$W/g.out" 2>"$W/g.err" &
gpid=$!
wait_attached "$gpid" "$W/g.json" || rc=1
i=0
while ! grep -q '): up: ' "$W/g.err" 2>/dev/null && [ "$i" -lt 450 ]; do
	sleep 0.2
	i=$((i + 1))
done
[ "$i" -lt 450 ] || { echo "the link did not come up within 90 s"; rc=1; }
step load_start
echo "LAB-MARK load-start"
t0=$(cut -d. -f1 /proc/uptime)
seed=1
while [ $(($(cut -d. -f1 /proc/uptime) - t0)) -lt "$dur" ]; do
	out=$(ioload -d /dev/vda -n 100 -b 4096 -m randread -s "$seed" -r "$rate" 2>&1) || rc=1
	echo "ioload $out"
	seed=$((seed + 1))
done
step load_end
echo "LAB-MARK load-end"
sleep 2 # > one drain tick of the guest daemon: its records sent
stop_pid "$gpid" "guest daemon"
echo "guest_rc $stop_rc"
tail -n 3 "$W/g.err"
exit "$rc"
