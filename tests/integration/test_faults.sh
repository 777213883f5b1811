#!/usr/bin/env bash
# Faults: a full file system under -j, the traced loop device detached mid-run, two
# iotracer instances at once.
# Oracles: fio's JSON (IO counts), /sys/block/loopN/stat, the file's own lines, exit
# statuses, stderr.
#   json_full      -j on a 1 MiB tmpfs under 5000 fio IOs: tracing goes on, one warning,
#                  exit status 1, the final text summary says how many lines were lost,
#                  and whole request lines in the file + lost == requests + the summary
#   json_full_req  the daemon still counted every fio IO (text summary == fio's IOs)
#   loop_detach    losetup -d while fio reads it: the daemon keeps running, every fio IO
#                  is a record, SIGTERM -> exit 0
#   two_both       two instances at once, both -d loopN: each has one syscall record per
#                  fio IO (records + counted drops == fio's IOs, exactly)
#   two_blocks     each instance's block records + counted drops + counted misses ==
#                  the device's completed reads, exactly (the block.missed residue, a
#                  completion the kernel did not deliver, is noted)
# shellcheck disable=SC2016 # jq programs in single quotes
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin json_full json_full_req loop_detach two_both two_blocks
it_require_all mount umount

# syscall_recs JSON: syscall read records of fio on the device.
syscall_recs() {
	jcount "$1" '.kind == "syscall" and .op == "read" and .dev == $d and .pid == $p' \
		--arg d "$name" --argjson p "$FIO_PID"
}
fio_reads() {
	fio_run "$IT_TMP/fio.$1.json" --name="$1" --filename="$dev" --ioengine=psync --direct=1 \
		--rw=randread --bs=4k --number_ios="$2" --size=32M --randrepeat=0 --norandommap
}

dev=$(mk_loop 64 fill) || fail_all "cannot create a loop device"
name=$(devname "$dev")

# ---------------------------------------------------------------- json_full
full=$IT_TMP/full
mkdir -p "$full" && mount -t tmpfs -o size=1m tmpfs "$full" || fail_all "cannot mount a tmpfs"
_it_register mounts "$full"
"$IOTRACER" -q --no-live -d "$name" -j "$full/t.json" >"$IT_TMP/full.out" 2>"$IT_TMP/full.err" &
pid=$!
_it_register pids "$pid"
sleep 2
fio_reads full 5000
sleep 0.3
alive=0
proc_alive "$pid" && alive=1
kill -TERM "$pid"
wait "$pid"
rc=$?
_it_unregister pids "$pid"
ios=$(fio_read_ios "$IT_TMP/fio.full.json")
lost=$(sed -n 's/^  output lost: \([0-9]*\) JSON lines.*/\1/p' "$IT_TMP/full.out")
reqs=$(sed -n 's/^=== final summary after [0-9.]*s: \([0-9]*\) requests.*/\1/p' "$IT_TMP/full.out")
inlines=$(jq -R 'fromjson? | select(.type == "request" or .type == "summary") | .type' "$full/t.json" | wc -l)
warns=$(grep -c 'warning: --json: write failed' "$IT_TMP/full.err")
note "json_full: exit $rc, alive at the end $alive, $warns warning(s), requests $reqs, lost $lost, whole lines $inlines, fio $ios"
if ((rc != 1 || alive != 1 || warns != 1)); then
	fail json_full "exit $rc (want 1), alive $alive, warnings $warns (want 1): $(head -c 300 "$IT_TMP/full.err" | tr '\n' ' ')"
else
	check json_full "lines $inlines + lost $lost != requests $reqs + 1 summary" \
		test -n "$lost" -a -n "$reqs" -a "$((inlines + lost))" -eq "$((reqs + 1))"
fi
check json_full_req "text summary requests $reqs, fio $ios" test -n "$reqs" -a "$reqs" = "$ios"

# ---------------------------------------------------------------- loop_detach
dev2=$(mk_loop 64 fill) || fail_all "cannot create a second loop device"
name2=$(devname "$dev2")
if ! start_tracer -d "$name2"; then
	fail loop_detach "$TRACER_WHY"
else
	fio_start "$IT_TMP/fio.detach.json" --name=detach --filename="$dev2" --ioengine=psync \
		--direct=1 --rw=randread --bs=4k --runtime=3 --time_based --rate_iops=1000 --size=32M
	sleep 1
	losetup -d "$dev2" # busy: the kernel drops it when fio closes it
	_it_unregister loops "$dev2"
	fio_wait 60
	sleep 1.5
	alive=0
	proc_alive "$TRACER_PID" && alive=1
	stop_tracer
	ios=$(fio_read_ios "$IT_TMP/fio.detach.json")
	n=$(jcount "$TRACER_JSON" '.kind == "syscall" and .op == "read" and .dev == $d and .pid == $p' \
		--arg d "$name2" --argjson p "$FIO_PID")
	note "loop_detach: fio $ios IOs, $n records, alive $alive, exit $TRACER_RC"
	check loop_detach "alive $alive, exit $TRACER_RC, records $n, fio $ios" \
		test "$alive" -eq 1 -a "$TRACER_RC" = 0 -a "$n" -eq "$ios" -a "$ios" -gt 0
fi

# ---------------------------------------------------------------- two instances
start_tracer -d "$name" || fail_all "first instance: $TRACER_WHY"
json1=$TRACER_JSON pid1=$TRACER_PID
start_tracer -d "$name" || fail_all "second instance: $TRACER_WHY"
json2=$TRACER_JSON pid2=$TRACER_PID
wait_quiet "$dev" 3
r0=$(blk_reads "$dev")
fio_reads two 8000
r1=$(blk_reads "$dev")
sleep 0.3
TRACER_PID=$pid1 TRACER_JSON=$json1 stop_tracer
TRACER_PID=$pid2 TRACER_JSON=$json2 stop_tracer
ios=$(fio_read_ios "$IT_TMP/fio.two.json")
delta=$((r1 - r0))
bad="" detail=""
for j in "$json1" "$json2"; do
	tracer_summary "$j" || { bad+=" no summary in $j"; continue; }
	n=$(syscall_recs "$j")
	d=$(jq -r '.drops.syscall.ringbuf + .drops.syscall.inflight' "$SUMMARY")
	b=$(jblocks "$j" '.dev == $d' '.dev == $d and .op == "read"' --arg d "$name")
	m=$(jq -r '.drops.block.missed' "$SUMMARY")
	bd=$(jq -r '.drops.block.ringbuf + .drops.block.inflight' "$SUMMARY")
	detail+=" [records $n drops $d; block $b missed $m dropped $bd]"
	((n + d == ios)) || bad+=" syscall $n+$d != $ios;"
	((b + bd + m == delta)) || bad+=" block $b+$bd+$m missed != $delta;"
done
note "two instances: fio $ios IOs, device reads +$delta:$detail"
check two_both "$bad $detail" test -z "$(grep -o 'syscall[^;]*;' <<<"$bad")$(grep -o 'no summary.*' <<<"$bad")"
check two_blocks "$bad $detail" test -z "$bad"
it_end
