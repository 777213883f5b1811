#!/usr/bin/env bash
# --record and `iotracer report` on a loop device, traced with -d loopN -j FILE --record DIR.
# Oracles: fio (IO count; its per-IO latency log with epoch times for the SIGKILL case),
# the live daemon's own -j lines and final summary (the recording must give the same),
# and the Trace Event Format rules (tests/tools/perfetto_check.jq).
#   modes      under umask 022: the recording's directory 0750, every segment 0600, the -j
#              file 0600 (pids, comms, inodes and offsets of every process: root's alone)
#   report_modes  under umask 022: report's --json and --perfetto files 0600, the same
#   count      report -p FIO_PID: syscall read requests on loopN == fio's IO count
#   summary    report's stage table (COUNT P50 P90 P99 MAX) == the live final summary's
#   hists      report's log2 histograms == the live final summary's
#   json       report --json of the recording == the live -j request lines (same set)
#   filters    -c fio: fio's IO count; -m 1ms: the live lines with lat_ns >= 1 ms;
#              --until T and --since T split the requests, T with a zone (Z, +00:00),
#              local (TZ=Pacific/Chatham, no zone) and epoch seconds alike; relative T is
#              before now: --since 1h holds every request, --until 1h none
#   jsonin     report of the live -j file: the same stage rows, and its --json the same lines
#   size       the recording is >= 8x smaller than the live JSON lines of the same requests
#   perfetto   report --perfetto: well formed, a request slice per fio IO
#   engine     the same trace in Chrome DevTools' trace engine (npm, run by node): it draws
#              one flow per request -> block link of the report's JSON lines, and its
#              startTime is within 10 s after the first segment's open time (its name)
#   sigkill    daemon killed -9 during fio: the report reads back every IO fio completed
#              more than 1.5 s before the kill
#   enospc     --record on a nearly full filesystem: tracing goes on (every IO in the -j
#              lines), one warning, exit status 1 naming the lost requests
#   corrupt    flipped bytes in the first block and a cut tail: skipped and counted, the rest read
# shellcheck disable=SC2016 # jq programs in single quotes
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin start modes report_modes count summary hists json filters jsonin size perfetto engine sigkill corrupt enospc
it_require_all

NIOS=${RECORD_IOS:-6000}
RATE=${RECORD_RATE:-2000}
here=$(cd "$(dirname "$0")" && pwd)
CHECK=$here/../tools/perfetto_check.jq

umask 022 # the modes check: start_tracer runs under the test's umask
record_paced_reads rec "$NIOS" "$RATE"
pass start
ios=$(fio_read_ios "$IT_TMP/fio.json")
fio1=$FIO_PID
note "fio pid $FIO_PID: $ios reads"

# modes (start_tracer runs under the test's umask: make it the usual one for this check)
modes=$(stat -c '%n %a' "$rec" "$rec"/* "$TRACER_JSON" | sed "s|$IT_TMP/||" | tr '\n' ' ')
bad=$(stat -c '%a' "$rec"/* "$TRACER_JSON" | grep -vc '^600$')
check modes "umask $(umask): $modes (want rec 750, files 600)" \
	test "$(stat -c %a "$rec")" = 750 -a "$bad" -eq 0

# count: the recording's syscall reads of fio on loopN
"$IOTRACER" report -p "$FIO_PID" -d "$name" --json "$IT_TMP/fio_only.json" "$rec" \
	>"$IT_TMP/report_p.txt" 2>"$IT_TMP/report_p.err" || fail_all "report failed: $(head -c 300 "$IT_TMP/report_p.err")"
n=$(jq -s --arg d "$name" '[.[] | select(.kind == "syscall" and .op == "read" and .dev == $d)] | length' \
	"$IT_TMP/fio_only.json")
check count "report -p $FIO_PID: $n syscall reads on $name, fio did $ios" test "$n" = "$ios"

# summary and hists: the report of the whole recording against the daemon's final summary
"$IOTRACER" report --json "$IT_TMP/report.json" --perfetto "$IT_TMP/trace.json" "$rec" \
	>"$IT_TMP/report.txt" 2>"$IT_TMP/report.err" || fail_all "report failed: $(head -c 300 "$IT_TMP/report.err")"
modes=$(stat -c '%n %a' "$IT_TMP/report.json" "$IT_TMP/trace.json" | sed "s|$IT_TMP/||" | tr '\n' ' ')
bad=$(stat -c '%a' "$IT_TMP/report.json" "$IT_TMP/trace.json" | grep -vc '^600$')
check report_modes "umask $(umask): $modes (want 600)" test "$bad" -eq 0
corrupt_ok() { grep -q 'skipped 1 bad blocks, 1 torn' <<<"$1" && (($2 > 0 && $2 < $3)); }
rows() { grep -E '^(syscall|block|io_uring|aio) +[^ ]+ +[^ ]+ +[^ ]+ +[0-9]+ ' "$1" | sort; }
hists() { sed -n '/(all requests)$/,/^$/p' "$1" | grep -v '^$'; }
rows "$TRACER_OUT" >"$IT_TMP/live.rows"
rows "$IT_TMP/report.txt" >"$IT_TMP/report.rows"
note "live: $(grep "syscall  *$name  *read  *total" "$IT_TMP/live.rows" | tr -s ' ')"
if [[ -s $IT_TMP/live.rows ]] && cmp -s "$IT_TMP/live.rows" "$IT_TMP/report.rows"; then
	pass summary
else
	fail summary "stage rows differ: $(diff "$IT_TMP/live.rows" "$IT_TMP/report.rows" | head -4 | tr '\n' '|')"
fi
hists "$TRACER_OUT" >"$IT_TMP/live.hists"
hists "$IT_TMP/report.txt" >"$IT_TMP/report.hists"
if [[ -s $IT_TMP/live.hists ]] && cmp -s "$IT_TMP/live.hists" "$IT_TMP/report.hists"; then
	pass hists
else
	fail hists "histograms differ: $(diff "$IT_TMP/live.hists" "$IT_TMP/report.hists" | head -4 | tr '\n' '|')"
fi

# json: the same request lines, byte for byte
grep '^{"type":"request"' "$TRACER_JSON" | sort >"$IT_TMP/live.req"
sort "$IT_TMP/report.json" >"$IT_TMP/report.req"
nl=$(wc -l <"$IT_TMP/live.req")
if ((nl > 0)) && cmp -s "$IT_TMP/live.req" "$IT_TMP/report.req"; then
	pass json
else
	fail json "$nl live request lines, $(wc -l <"$IT_TMP/report.req") from the report; first difference: $(diff "$IT_TMP/live.req" "$IT_TMP/report.req" | head -2 | cut -c1-200 | tr '\n' '|')"
fi

# filters, against the live lines and fio
rcount() { "$IOTRACER" report -n 0 --json - "$@" "$rec" 2>/dev/null | wc -l; }
nc=$(rcount -c fio)
nm=$(rcount -m 1ms)
jm=$(jcount "$TRACER_JSON" '(.lat_ns // 0) >= 1000000')
start=$(sed -n 's/.*started \([^;]*\);.*/\1/p' "$IT_TMP/report.txt")
# 3.5 s after the start: inside fio's run (the tracer attaches in ~1.5 s, fio runs 3 s)
t_ns=$(($(date -u -d "$start" +%s%N) + 3500000000))
t_abs=$(date -u -d "@$((t_ns / 1000000000))" +%Y-%m-%dT%H:%M:%S).$(printf '%09d' $((t_ns % 1000000000)))
t_epoch=$((t_ns / 1000000000)).$(printf '%09d' $((t_ns % 1000000000)))
t_local=$(TZ=Pacific/Chatham date -d "@$((t_ns / 1000000000))" '+%Y-%m-%d %H:%M:%S').$(printf '%09d' $((t_ns % 1000000000)))
n_before=$(rcount --until "$t_epoch")
n_after=$(rcount --since "$t_epoch")
a_before=$(rcount --until "${t_abs}Z")
a_after=$(rcount --since "${t_abs}+00:00")
l_before=$(TZ=Pacific/Chatham rcount --until "$t_local")
l_after=$(TZ=Pacific/Chatham rcount --since "$t_local")
r_since=$(rcount --since 1h)
r_until=$(rcount --until 1h)
note "-c fio $nc, -m 1ms $nm (live lines $jm), start $start: before/after epoch $t_epoch $n_before/$n_after, ${t_abs}Z $a_before/$a_after, local $t_local (Chatham) $l_before/$l_after; --since 1h $r_since, --until 1h $r_until"
filters_ok() {
	((nc == ios && nm == jm && n_before > 0 && n_after > 0 && n_before + n_after == nl)) &&
		((a_before == n_before && a_after == n_after && l_before == n_before && l_after == n_after)) &&
		((r_since == nl && r_until == 0))
}
check filters "-c fio $nc (want $ios), -m 1ms $nm (want $jm), split $n_before + $n_after (want $nl; zone: $a_before + $a_after, local: $l_before + $l_after), --since 1h $r_since (want $nl), --until 1h $r_until (want 0)" \
	filters_ok

# jsonin: the -j file as the report's input
"$IOTRACER" report -n 0 --json "$IT_TMP/rejson.json" "$TRACER_JSON" >"$IT_TMP/report_j.txt" 2>&1
rows "$IT_TMP/report_j.txt" >"$IT_TMP/report_j.rows"
if [[ -s $IT_TMP/live.rows ]] && cmp -s "$IT_TMP/live.rows" "$IT_TMP/report_j.rows" &&
	sort "$IT_TMP/rejson.json" | cmp -s - "$IT_TMP/live.req"; then
	pass jsonin
else
	fail jsonin "report of $TRACER_JSON: rows $(diff "$IT_TMP/live.rows" "$IT_TMP/report_j.rows" | head -3 | tr '\n' '|'), lines $(sort "$IT_TMP/rejson.json" | diff - "$IT_TMP/live.req" | head -2 | cut -c1-150 | tr '\n' '|')"
fi

# size
jbytes=$(wc -c <"$IT_TMP/live.req")
rbytes=$(cat "$rec"/*.itrec | wc -c)
note "JSON request lines $jbytes bytes, recording $rbytes bytes ($(awk -v a="$jbytes" -v b="$rbytes" 'BEGIN { printf "%.1f", a / b }')x)"
check size "recording $rbytes bytes vs JSON lines $jbytes bytes: not 8x smaller" \
	test $((rbytes * 8)) -le "$jbytes"

# perfetto
problems=$(jq -r -f "$CHECK" "$IT_TMP/trace.json" 2>&1 | head -3)
slices=$(jq --argjson p "$FIO_PID" '[.traceEvents[] | select(.ph == "X" and .cat == "io" and .pid == $p)] | length' "$IT_TMP/trace.json")
if [[ -z $problems ]] && ((slices == ios)); then
	pass perfetto
else
	fail perfetto "${problems:-$slices request slices of fio, fio did $ios IOs}"
fi

# engine: Chrome DevTools' trace engine, pinned, fetched once into build/ (test tooling)
ENGINE_VER=0.0.65
engine_dir=$IT_ROOT/build/npm/trace_engine-$ENGINE_VER
engine=$engine_dir/node_modules/@paulirish/trace_engine
if [[ ! -f $engine/models/trace/trace.js ]] && command -v npm >/dev/null; then
	mkdir -p "$engine_dir" &&
		timeout 300 npm install --prefix "$engine_dir" --no-audit --no-fund \
			"@paulirish/trace_engine@$ENGINE_VER" >"$IT_TMP/npm.log" 2>&1
fi
if ! command -v node >/dev/null; then
	skip engine "node is not installed (make deps-test installs nodejs)"
elif [[ ! -f $engine/models/trace/trace.js ]]; then
	skip engine "npm could not fetch @paulirish/trace_engine@$ENGINE_VER: $(tail -c 200 "$IT_TMP/npm.log" 2>/dev/null | tr '\n' ' ')"
else
	links=$(jq -s '[.[] | select(.type == "request" and .kind != "block") | (.block // []) | length] | add // 0' \
		"$IT_TMP/report.json")
	got=$(node "$here/../tools/trace_engine_flows.mjs" "$engine" "$IT_TMP/trace.json" 2>"$IT_TMP/engine.err")
	flows=$(jq -r '.flows' <<<"$got" 2>/dev/null)
	t0=$(date -u -d "$(jq -r '.startTime' <<<"$got" 2>/dev/null)" +%s 2>/dev/null)
	seg=$(find "$rec" -name 'iotracer-*.itrec' -printf '%f\n' | sort | head -1 |
		sed -E 's/^iotracer-(....)(..)(..)T(..)(..)(..).*/\1-\2-\3T\4:\5:\6Z/')
	s0=$(date -u -d "$seg" +%s 2>/dev/null)
	note "engine: $got; $links request->block links; first segment opened $seg"
	check engine "engine drew ${flows:-?} flows of $links links, startTime ${t0:-?} vs segment ${s0:-?} s: $(head -c 200 "$IT_TMP/engine.err")" \
		test "${flows:-x}" = "$links" -a "$links" -gt 0 -a -n "$t0" -a -n "$s0" -a \
		"${t0:-0}" -ge "${s0:-1}" -a "${t0:-0}" -le "$((${s0:-0} + 10))"
fi

# sigkill: kill -9 the daemon 3 s into a 5 s fio run
rec2=$IT_TMP/rec2
start_tracer -d "$name" --record "$rec2" || fail_all "$TRACER_WHY"
fio_start "$IT_TMP/fio2.json" --name=kill --filename="$dev" --ioengine=psync --direct=1 \
	--rw=randread --bs=4k --runtime=5 --time_based --rate_iops="$RATE" --randrepeat=0 \
	--norandommap --write_lat_log="$IT_TMP/lat" --log_avg_msec=0 --log_unix_epoch=1
sleep 3
kill_ms=$(($(date +%s%N) / 1000000))
kill -KILL "$TRACER_PID"
wait "$TRACER_PID" 2>/dev/null
_it_unregister pids "$TRACER_PID"
fio_wait 60 || fail_all "fio failed (status $FIO_RC)"
lat=$(ls "$IT_TMP"/lat_clat.*.log 2>/dev/null | head -1)
want=$(awk -F, -v k="$kill_ms" '$1 + 0 < k - 1500 { n++ } END { print n + 0 }' "$lat")
"$IOTRACER" report -n 0 -p "$FIO_PID" --json "$IT_TMP/kill.json" "$rec2" >"$IT_TMP/kill.txt" 2>&1
got=$(jq -s '[.[] | select(.kind == "syscall")] | length' "$IT_TMP/kill.json")
note "fio IOs completed > 1.5 s before the kill: $want; read back: $got"
check sigkill "read back $got of fio's IOs, $want completed more than 1.5 s before the kill" \
	test "$want" -gt 0 -a "$got" -ge "$want"

# corrupt: flipped bytes in the first block of the first recording (~4 blocks of ~1 s) and
# its tail cut mid-block
seg=$(ls "$rec"/*.itrec | head -1)
size=$(stat -c %s "$seg")
# 300: in the first block's zlib stream (256-byte segment header, 40-byte block header)
printf '\xff\xff\xff\xff' | dd of="$seg" bs=1 seek=300 conv=notrunc status=none
truncate -s $((size - 200)) "$seg"
if "$IOTRACER" report -n 0 -p "$fio1" --json "$IT_TMP/bad.json" "$rec" >"$IT_TMP/bad.txt" 2>&1; then
	bad=$(jq -s 'length' "$IT_TMP/bad.json")
	line=$(grep '^recording: skipped' "$IT_TMP/bad.txt")
	note "after the damage: $bad of $ios requests; $line"
	check corrupt "expected 1 bad and 1 torn block counted, and the other blocks read: $line, $bad of $ios" \
		corrupt_ok "$line" "$bad" "$ios"
else
	fail corrupt "report failed on a damaged segment: $(head -c 300 "$IT_TMP/bad.txt")"
fi

# enospc: a 16 MB ext4 filled up but for ~80 KB: the first block or so fits, then ENOSPC
read -r fsdev mnt < <(mk_loop_fs 16) || fail_rest "cannot make a filesystem"
# no blocks reserved for root (the daemon runs as root and would write into them)
tune2fs -r 0 "$fsdev" >/dev/null 2>&1 || fail_rest "tune2fs -r 0 failed"
avail=$(df -B1 --output=avail "$mnt" | tail -1 | tr -d ' ')
fallocate -l $((avail - 80 * 1024)) "$mnt/fill" || fail_rest "cannot fill $mnt"
note "filesystem $fsdev at $mnt: $(df -B1 --output=avail "$mnt" | tail -1 | tr -d ' ') bytes free"
start_tracer -d "$name" --record "$mnt/rec" || fail_all "$TRACER_WHY"
fio_run "$IT_TMP/fio3.json" --name=full --filename="$dev" --ioengine=psync --direct=1 \
	--rw=randread --bs=4k --number_ios="$NIOS" --rate_iops="$RATE" --randrepeat=0 \
	--norandommap --size=120M
sleep 0.3
stop_tracer
ios3=$(fio_read_ios "$IT_TMP/fio3.json")
live3=$(jcount "$TRACER_JSON" '.kind == "syscall" and .pid == $p' --argjson p "$FIO_PID")
warns=$(grep -c 'warning: --record: cannot write' "$TRACER_ERR")
lost=$(sed -n 's/.*--record: \([0-9]*\) requests were not recorded.*/\1/p' "$TRACER_ERR")
"$IOTRACER" report -n 0 -p "$FIO_PID" --json "$IT_TMP/full.json" "$mnt/rec" >/dev/null 2>&1
kept=$(jq -s 'length' "$IT_TMP/full.json")
note "exit $TRACER_RC, $warns warning(s), lost ${lost:-?}, recorded $kept, -j lines $live3 of $ios3 IOs"
enospc_ok() {
	[[ $TRACER_RC == 1 && $warns == 1 && $live3 == "$ios3" && -n $lost ]] &&
		((lost > 0 && kept + lost >= ios3 && kept < ios3))
}
check enospc "exit $TRACER_RC (want 1), $warns warnings (want 1), lost ${lost:-none}, recorded $kept, -j lines $live3 of $ios3" \
	enospc_ok

it_end
