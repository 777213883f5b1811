#!/usr/bin/env bash
# Soak: the reference load (psync direct 4k: 12000 random reads + 250 random writes a
# second, two fio processes) on a RAM-backed loop device for SOAK_SECONDS (90 in
# `make test`, 45 with CI=true; the one-hour figures are in docs/testing.md), traced with every layer,
# per-request recording (--record) and /metrics scraped every second.
# Oracles: /proc/PID/status (RssAnon), /proc/PID/fd, fio's JSON, /sys/block/loopN/stat,
# the scrapes themselves (curl's status).
#   rss_flat     RssAnon sampled every second after the first half of the run (at most
#                the first minute): max - min <= 256 KiB (a leak of 12 KiB/s, one byte
#                a request, fails it in 45 s: docs/testing.md)
#   fds_flat     the daemon's open fd count the same in every sample after the first
#   scrapes      every one-second scrape answered 200
#   unreported   from the last scrape (the counters count records: no -m, no --sample):
#                syscall requests + counted drops == fio's IOs, and block requests +
#                lost requests (iotracer_lost_requests_total) + in flight
#                (iotracer_inflight_requests) == the device's completions
#   report       the recording reads back (`iotracer report`, SOAK_SECONDS <= 300 only:
#                longer runs are too many requests to read back in a test)
#   exit         SIGTERM -> exit 0
# shellcheck disable=SC2016 # jq programs in single quotes
set -u
# RAM-backed loop device and temp dir (as test_records.sh): 12k IOPS without the root disk
[[ -d /dev/shm && -w /dev/shm ]] && export TMPDIR=${SOAK_TMPDIR:-/dev/shm}
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin rss_flat fds_flat scrapes unreported report exit
it_require_all curl ss

SECS=${SOAK_SECONDS:-90}
WARM=$((SECS / 2 < 60 ? SECS / 2 : 60))

dev=$(mk_loop 512) || fail_all "cannot create a loop device"
name=$(devname "$dev")
port=$(free_port) || fail_all "no free TCP port"
rec=$IT_TMP/rec

# no -j: an hour of JSON lines would not fit; the counters come from the last scrape
TRACER_JSON_PATH=/dev/null start_tracer -d "$name" --record "$rec" --record-max "${SOAK_RECORD_MAX:-1G}" \
	--metrics "127.0.0.1:$port" || fail_all "$TRACER_WHY"
tpid=$TRACER_PID
r0=$(blk_stat "$dev" 1) w0=$(blk_stat "$dev" 5)
bg_start fio.read fio --thread --output-format=json --output="$IT_TMP/fio.read.json" --name=r \
	--filename="$dev" --ioengine=psync --direct=1 --rw=randread --bs=4k \
	--rate_iops=12000 --runtime="$SECS" --time_based --randrepeat=0 --norandommap
pr=$BG_PID
bg_start fio.write fio --thread --output-format=json --output="$IT_TMP/fio.write.json" --name=w \
	--filename="$dev" --ioengine=psync --direct=1 --rw=randwrite --bs=4k \
	--rate_iops=250 --runtime="$SECS" --time_based --randrepeat=0 --norandommap
pw=$BG_PID

: >"$IT_TMP/samples"
bad_scrapes=0 scrapes=0
t0=$(date +%s)
while (($(date +%s) - t0 < SECS)); do
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/metrics")
	scrapes=$((scrapes + 1))
	[[ $code == 200 ]] || bad_scrapes=$((bad_scrapes + 1))
	el=$(($(date +%s) - t0))
	rss=$(awk '/^RssAnon:/ { print $2 }' "/proc/$tpid/status" 2>/dev/null)
	fds=$(find "/proc/$tpid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
	echo "$el $rss $fds" >>"$IT_TMP/samples"
	sleep 1
done
bg_wait "$pr" 60
bg_wait "$pw" 60
r1=$(blk_stat "$dev" 1) w1=$(blk_stat "$dev" 5)
sleep 2 # two drains: every record in the counters
curl -s --max-time 5 -o "$IT_TMP/last.prom" "http://127.0.0.1:$port/metrics"
if stop_tracer; then pass exit; else fail exit "$TRACER_WHY"; fi

awk -v w="$WARM" '$1 >= w' "$IT_TMP/samples" | sort -u -k1,1n >"$IT_TMP/late"
read -r rmin rmax < <(awk 'NR == 1 { lo = hi = $2 } { if ($2 < lo) lo = $2; if ($2 > hi) hi = $2 } END { print lo, hi }' "$IT_TMP/late")
read -r fmin fmax < <(awk 'NR == 1 { lo = hi = $3 } { if ($3 < lo) lo = $3; if ($3 > hi) hi = $3 } END { print lo, hi }' "$IT_TMP/late")
n=$(wc -l <"$IT_TMP/late")
note "$SECS s, $n samples after ${WARM}s: RssAnon $rmin..$rmax KiB, fds $fmin..$fmax; $scrapes scrapes, $bad_scrapes not 200"
check rss_flat "RssAnon $rmin..$rmax KiB over $n samples" test "$n" -ge 3 -a "$((rmax - rmin))" -le 256
check fds_flat "fds $fmin..$fmax" test "$n" -ge 3 -a "$fmin" = "$fmax"
check scrapes "$bad_scrapes of $scrapes scrapes failed" test "$scrapes" -ge "$((SECS / 2))" -a "$bad_scrapes" -eq 0

ios=$(jq -s '[.[].jobs[] | .read.total_ios + .write.total_ios] | add' "$IT_TMP/fio.read.json" "$IT_TMP/fio.write.json")
devios=$(((r1 - r0) + (w1 - w0)))
# prom_sum REGEX: the sum of the samples whose line matches REGEX
prom_sum() { grep -E "$1" "$IT_TMP/last.prom" | awk '{ s += $NF } END { printf "%d", s }'; }
sys=$(prom_sum "^iotracer_requests_total\{layer=\"syscall\",device=\"$name\"")
blk=$(prom_sum "^iotracer_requests_total\{layer=\"block\",device=\"$name\"")
sd=$(prom_sum '^iotracer_lost_requests_total\{layer="syscall"')
bd=$(prom_sum '^iotracer_lost_requests_total\{layer="block"')
um=$(prom_sum '^iotracer_inflight_requests\{layer="block"')
note "fio $ios IOs, device $devios completions; counters: syscall $sys (+$sd lost), block $blk (+$bd lost, $um in flight)"
check unreported "syscall $sys+$sd vs fio $ios; block $blk+$bd+$um vs device $devios" \
	test "$((sys + sd))" -eq "$ios" -a "$((blk + bd + um))" -eq "$devios" -a "$ios" -gt 0

if ((SECS > 300)); then
	skip report "a ${SECS} s recording is too many requests to read back here"
else
	"$IOTRACER" report -n 0 -d "$name" "$rec" >"$IT_TMP/report.out" 2>"$IT_TMP/report.err"
	rc=$?
	got=$(sed -n 's/^=== final summary after [0-9.]*s: \([0-9]*\) requests.*/\1/p' "$IT_TMP/report.out")
	check report "report exit $rc, $got requests read back, counters $sys" \
		test "$rc" -eq 0 -a "${got:-0}" -ge "$sys"
fi
it_end
