#!/usr/bin/env bash
# psync direct 4k random reads on a loop device, traced with -d loopN.
# Oracles: fio's JSON (total_ios, clat p50/p99) and /sys/block/loopN/stat.
#   count       kind=syscall op=read dev=loopN requests of fio's pid == fio total_ios (±1 %)
#   p50, p99    summary stage syscall/loopN/read/total p50/p99 within 10 % of fio clat
#   block_hist  summary hists block/loopN/read/q2c count vs reads-completed delta (accounted)
#   block_recs  block read requests on loopN in the records == reads-completed delta
#   drops       final summary drops.total == 0
#   exit        SIGTERM -> exit 0, JSON lines valid, ends with a final summary
# shellcheck disable=SC2016,SC2119 # jq programs in single quotes; optional args
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin start fio count p50 p99 block_hist block_recs drops exit
it_require_all

RUNTIME=${PSYNC_RUNTIME:-4}
RATE=${PSYNC_RATE:-2000}

# filled (not sparse): reads reach the backing disk, latencies of ~100 us, so a few
# hundred ns of tracing overhead stay well inside the 10 % tolerance
dev=$(mk_loop 256 fill) || fail_all "cannot create a loop device"
name=$(devname "$dev")
note "device $dev"

wait_quiet "$dev" 5
start_tracer -d "$name" || fail_all "$TRACER_WHY"
pass start

r0=$(blk_reads "$dev")
fio_run "$IT_TMP/fio.json" --name=psync --filename="$dev" --ioengine=psync --direct=1 \
	--rw=randread --bs=4k --runtime="$RUNTIME" --time_based --rate_iops="$RATE" \
	--randrepeat=0 --norandommap
r1=$(blk_reads "$dev")
sleep 0.3 # let the daemon drain its ring (it also drains at exit)

if stop_tracer; then tracer_ok=1; else tracer_ok=0; fi
if ((FIO_RC != 0)); then
	fail fio "fio failed (status $FIO_RC): $(tail -c 300 "$FIO_LOG" | tr '\n' ' ')"
	fail_all "fio failed"
fi
pass fio

ios=$(fio_read_ios "$IT_TMP/fio.json")
p50=$(fio_read_pct "$IT_TMP/fio.json" 50.000000)
p99=$(fio_read_pct "$IT_TMP/fio.json" 99.000000)
delta=$((r1 - r0))
note "fio: pid $FIO_PID total_ios $ios clat p50 $p50 p99 $p99; $name reads completed +$delta"

if ((tracer_ok)) && json_lines_ok && tracer_summary; then
	pass exit
else
	fail exit "${TRACER_WHY:-${JSON_WHY:-no final summary in $TRACER_JSON}}"
	tracer_summary || fail_all "no final summary object in the JSON output"
fi

# (a) one syscall record per fio IO
n=$(jcount "$TRACER_JSON" '.kind == "syscall" and .op == "read" and .dev == $d and .pid == $p' \
	--arg d "$name" --argjson p "$FIO_PID")
note "syscall read records of pid $FIO_PID on $name: $n"
check count "iotracer saw $n read syscalls of fio on $name, fio did $ios (not within 1 %)" \
	within_pct "$n" "$ios" 1

# (b) latency percentiles against fio's clat
t50=$(stage_val "$SUMMARY" syscall "$name" read total p50_ns)
t99=$(stage_val "$SUMMARY" syscall "$name" read total p99_ns)
note "iotracer syscall/$name/read/total p50 ${t50:-none} p99 ${t99:-none}"
if [[ -z $t50 ]]; then
	fail p50 "no stages[] entry syscall/$name/read/total in the final summary"
	fail p99 "no stages[] entry syscall/$name/read/total in the final summary"
else
	check p50 "iotracer p50 $t50 ns vs fio clat p50 $p50 ns ($(pct_of "$t50" "$p50") %)" \
		within_pct "$t50" "$p50" 10
	check p99 "iotracer p99 $t99 ns vs fio clat p99 $p99 ns ($(pct_of "$t99" "$p99") %)" \
		within_pct "$t99" "$p99" 10
fi

# (c) block requests against /sys/block/loopN/stat (nothing else reads loopN)
h=$(hist_count "$SUMMARY" block "$name" read q2c)
note "hists block/$name/read/q2c count ${h:-none}"
if [[ -z $h ]]; then
	fail block_hist "no hists[] entry block/$name/read/q2c in the final summary"
else
	m=$(jq -r '.drops.block.missed // 0' "$SUMMARY")
	check block_hist "hists block/$name/read/q2c count $h vs /sys/block/$name/stat reads delta $delta (missed $m)" \
		accounted "$h" "$delta" "$m" 1
fi
b=$(jblocks "$TRACER_JSON" 'true' '.dev == $d and .op == "read"' --arg d "$name")
bf=$(jblocks "$TRACER_JSON" '.pid == $p and .kind == "syscall"' '.dev == $d and .op == "read"' \
	--arg d "$name" --argjson p "$FIO_PID")
note "block read requests on $name in records: $b (as children of fio's syscalls: $bf)"
m=$(jq -r '.drops.block.missed // 0' "$SUMMARY")
check block_recs "records hold $b block read requests on $name ($bf under fio's syscalls), /sys/block delta is $delta (missed $m)" \
	accounted_pair "$b" "$delta" "$bf" "$delta" "$m" 1

# (d) no losses
d=$(real_drops "$SUMMARY")
check drops "records lost (ringbuf+inflight+hist) $d" test "$d" = 0

it_end
