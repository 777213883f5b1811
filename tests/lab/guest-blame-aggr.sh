# shellcheck shell=sh
# Guest side of the aggressor A in tests/lab/test_blame_host.sh (busybox sh, no
# iotracer in it). Polls the first 4 KiB of vda (O_DIRECT) until the host wrote
# "GO" there (LAB_G_WAIT s at most), then LAB_G_QD ioload processes write 1 MiB
# blocks sequentially, O_DIRECT, each in its own 7 MiB span from 4 MiB on (queue
# depth LAB_G_QD on the host), for LAB_G_AGG_S seconds of its own clock; prints
# `aggr start|stop UPTIME`.
set -u
wait_s=${LAB_G_WAIT:-120}
agg=${LAB_G_AGG_S:-6}
qd=${LAB_G_QD:-8}
i=0
while [ "$i" -lt $((wait_s * 5)) ]; do
	[ "$(dd if=/dev/vda bs=4096 count=1 iflag=direct 2>/dev/null | tr -d '\0' | head -c 2)" = GO ] && break
	sleep 0.2
	i=$((i + 1))
done
[ "$i" -lt $((wait_s * 5)) ] || { echo "aggr: no GO from the host within $wait_s s"; exit 1; }
echo "aggr start $(cut -d' ' -f1 /proc/uptime)"
pids=""
k=0
while [ "$k" -lt "$qd" ]; do
	ioload -d /dev/vda -n 1000000 -b 1m -m write -o $((4 + k * 7))m -S 7m >/dev/null 2>&1 &
	pids="$pids $!"
	k=$((k + 1))
done
sleep "$agg"
# shellcheck disable=SC2086 # a list of pids
kill -TERM $pids 2>/dev/null
wait
echo "aggr stop $(cut -d' ' -f1 /proc/uptime)"
exit 0
