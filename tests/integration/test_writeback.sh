#!/usr/bin/env bash
# Buffered writes followed to the disk: block writes name the task that dirtied their
# pages (block[].dirty), not the flusher that wrote them (bpf/wb.bpf.h).
# Oracles: each writer's /proc/PID/io write_bytes (the kernel's count of the bytes a task
# dirtied, read while it is still alive), the test's own sleep between the last write and
# the fsync, and the pids of the writers.
#   per_pid_a   two dd writers of 48 and 16 MiB into two files on ext4 on a loop device,
#   per_pid_b   then syncfs: the bytes of block writes on the device whose dirty.pid (or
#               dirty.other_pid) is the writer are within 2 % of its write_bytes
#   owner       those requests are kind block with the dirtier as their top-level pid and
#               comm (the flusher stays in block[].pid)
#   dirty_age   a writer dirties 4 MiB, sleeps 3 s, then fsyncs: every block write of its
#               fsync (block[], and past 16 those written apart) that names a dirtier has
#               dirty.age_ns >= 3 s, and they carry its write_bytes within 2 %
#   hist_age    the summary's block/write hists have stage dirty_age with those requests
#   filter_pid  with -p A, A's writeback is traced (within 2 % of its write_bytes) and none
#               of B's (the flusher's task fails -p: the dirtier passes it)
#   drops       drops.total == 0
#   report_pid  phase 1 was also recorded (--record): `iotracer report -p A` of the recording
#               gives writer a's writeback bytes, as the live JSON did
#   perfetto_wb `iotracer report --perfetto` of that recording: well formed
#               (tests/tools/perfetto_check.jq: "dirtied" flows from write syscalls to block
#               writes), and every block write dirtied by writer a is the end of a "dirtied"
#               flow from one of writer a's write syscalls
#   metrics_wb  phase 1 also serves --metrics: once two scrapes 1.2 s apart agree (no
#               writeback between them), iotracer_writeback_found_bytes_total equals the sum
#               of the records' block[].dirty bytes + other_bytes completed before the first
#               scrape, and the unknown_bytes reasons sum to their unknown_bytes
#   top_owner   `iotracer top -b` while a writer writes 16 MiB buffered, then syncfs: the
#               TOTAL table's write row of the writer's pid (comm dd) has its write_bytes
#               within 2 % (the kernel aggregation counts writeback for the dirtier)
# shellcheck disable=SC2015,SC2016,SC2119,SC2154,SC2317 # a || b fail_all; jq programs in single quotes; fds set by writer_feed (printf -v); checks run via check
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin per_pid_a per_pid_b owner dirty_age hist_age filter_pid drops report_pid perfetto_wb \
	metrics_wb top_owner
it_require_all mkfs.ext4 dd sync mkfifo curl python3

have_tp writeback/writeback_dirty_folio || have_tp writeback/writeback_dirty_page ||
	skip_all "no writeback_dirty_folio/page tracepoint: no dirtier to note"

# dirtied_bytes JSON PID: bytes of the device's block writes whose pages PID dirtied
dirtied_bytes() {
	jq -n --argjson p "$2" --arg d "$name" "$JQ_BLOCKS"'
		reduce (inputs | select(.type == "request") | blocks
			| select(.op == "write" and .dev == $d and .dirty != null) | .dirty) as $w (0;
			. + (if $w.pid == $p then $w.bytes else 0 end)
			  + (if $w.other_pid == $p then $w.other_bytes else 0 end))' "$1"
}

read -r dev mnt < <(mk_loop_fs 256) || true
if [[ -z ${mnt:-} ]] || ! mountpoint -q "$mnt"; then
	fail_all "cannot create/mount ext4 on a loop device"
fi
name=$(devname "$dev")
note "device $dev mounted on $mnt"

# --- phase 1: two writers, then syncfs; phase 2: dirty, sleep 3 s, fsync
PORT=$(free_port) || fail_all "no free port"
start_tracer -d "$name" --record "$IT_TMP/rec" --metrics "127.0.0.1:$PORT" || fail_all "$TRACER_WHY"
writer_start wa "$mnt/a" && apid=$W_PID || fail_all "cannot start writer a"
writer_start wb "$mnt/b" && bpid=$W_PID || fail_all "cannot start writer b"
writer_feed wa "$apid" 48 afd || fail_all "writer a did not write 48 MiB"
writer_feed wb "$bpid" 16 bfd || fail_all "writer b did not write 16 MiB"
awb=$(io_field "$apid" write_bytes) bwb=$(io_field "$bpid" write_bytes)
exec {afd}>&- {bfd}>&-
bg_wait "$apid" 30 || note "writer a exited $BG_RC"
bg_wait "$bpid" 30 || note "writer b exited $BG_RC"
sync -f "$mnt/a"
note "writer a $apid write_bytes $awb, writer b $bpid write_bytes $bwb"

writer_start wc "$mnt/c" conv=fsync && cpid=$W_PID || fail_all "cannot start writer c"
writer_feed wc "$cpid" 4 cfd || fail_all "writer c did not write 4 MiB"
cwb=$(io_field "$cpid" write_bytes)
sleep 3
exec {cfd}>&- # EOF: dd fsyncs its file, 3 s after its last write returned
bg_wait "$cpid" 30 || note "writer c exited $BG_RC"
wait_quiet "$dev" 5
# wb_scrape N: /metrics into $IT_TMP/m.N, its writeback lines only into $IT_TMP/m.N.wb
wb_scrape() {
	curl -s --max-time 5 -o "$IT_TMP/m.$1" "http://127.0.0.1:$PORT/metrics" &&
		grep '^iotracer_writeback_' "$IT_TMP/m.$1" >"$IT_TMP/m.$1.wb"
}
for ((i = 0; i < 5; i++)); do
	wb_scrape a || break
	# after the scrape: text a was made before it, text b after it (1 s at most)
	t_scrape=$(python3 -c 'import time; print(time.monotonic_ns())')
	sleep 1.2
	wb_scrape b || break
	cmp -s "$IT_TMP/m.a.wb" "$IT_TMP/m.b.wb" && [[ -s $IT_TMP/m.a.wb ]] && break
done
stop_tracer || note "${TRACER_WHY:-}"
tracer_summary || fail_all "no final summary in the JSON output"
J=$TRACER_JSON
note "writer c $cpid write_bytes $cwb"

for w in a b; do
	if [[ $w == a ]]; then p=$apid want=$awb; else p=$bpid want=$bwb; fi
	got=$(dirtied_bytes "$J" "$p")
	note "writer $w ($p): block writes naming it $got bytes, write_bytes $want"
	check "per_pid_$w" "block writes dirtied by $p: $got bytes, its write_bytes $want ($(pct_of "$got" "$want") %)" \
		within_pct "$got" "$want" 2
done

nown=$(jcount "$J" '.kind == "block" and .pid == $p and .comm == "dd" and .block[0].dirty.pid == $p and .block[0].pid != $p' \
	--argjson p "$apid")
check owner "$nown kind-block requests owned by writer a ($apid) with the flusher in block[].pid" test "$nown" -gt 0

# the fsync's block[] and, past the 16 it lists, its block requests written apart (parent)
ages=$(jq -rn --argjson p "$cpid" "$JQ_BLOCKS"'[inputs | select(.type == "request")] as $r
	| [$r[] | select(.kind == "syscall" and .pid == $p and .syscall == "fsync") | .id] as $f
	| [$r[] | select((.kind == "syscall" and (.id as $i | $f | index($i)))
		or (.kind == "block" and (.parent.id as $i | $i != null and ($f | index($i)))))
	| blocks | select(.op == "write" and .dirty.pid == $p)
	| {a: .dirty.age_ns, b: .dirty.bytes}] | "\(length) \(map(.a) | min // 0) \(map(.b) | add // 0)"' "$J")
read -r nage minage cbytes <<<"$ages"
note "fsync of writer c: $nage block writes naming it, youngest dirty_age ${minage} ns, $cbytes bytes"
check dirty_age "fsync's block writes: $nage, min dirty.age_ns $minage (want >= 3e9), bytes $cbytes vs write_bytes $cwb" \
	eval '((nage > 0 && minage >= 3000000000)) && within_pct "$cbytes" "$cwb" 2'

hage=$(hist_count "$SUMMARY" block "$name" write dirty_age)
check hist_age "block/$name/write dirty_age histogram count ${hage:-none}" test "${hage:-0}" -ge "$nage" -a "$nage" -gt 0

d=$(real_drops "$SUMMARY")
check drops "records lost (ringbuf+inflight+hist) $d" test "$d" = 0

if "$IOTRACER" report -n 0 --perfetto "$IT_TMP/trace.pf.json" "$IT_TMP/rec" >/dev/null 2>"$IT_TMP/pf.err"; then
	problems=$(jq -r -f "$(dirname "$0")/../tools/perfetto_check.jq" "$IT_TMP/trace.pf.json" 2>&1 | head -3)
	# block writes dirtied by a (the records) vs the ends of flows from a's writes
	nwa=$(jblocks "$J" 'true' '.op == "write" and .dirty.tid == $p' --argjson p "$apid")
	nfa=$(jq --argjson p "$apid" '.traceEvents as $e | ($e | map(select(.ph == "s" and .name == "dirtied"
		and .pid == $p) | .id)) as $ids | [$e[] | select(.ph == "f" and .name == "dirtied"
		and (.id | IN($ids[]))) | "\(.tid) \(.ts)"] | unique | length' "$IT_TMP/trace.pf.json")
	note "perfetto: $nfa block slices with a dirtied flow from writer a, $nwa block writes dirtied by it"
	check perfetto_wb "${problems:-$nfa block slices reached from the writes of writer a, $nwa block writes dirtied by it}" \
		eval '[[ -z $problems ]] && ((nwa > 0 && nfa == nwa))'
else
	fail perfetto_wb "iotracer report --perfetto failed: $(head -c 300 "$IT_TMP/pf.err" | tr '\n' ' ')"
fi

# metric VALUE-SELECTOR: the value of one writeback series of the agreed scrape (empty: none)
metric() { awk -v s="$1" '$1 == s { print $2 }' "$IT_TMP/m.a.wb"; }
mfound=$(metric iotracer_writeback_found_bytes_total)
munk=0
for why in not_noted redirtied many truncated; do
	v=$(metric "iotracer_writeback_unknown_bytes_total{reason=\"$why\"}")
	munk=$((munk + ${v:-0}))
done
read -r rfound runk < <(jq -rn --argjson t "$t_scrape" "$JQ_BLOCKS"'[inputs | select(.type == "request")
	| blocks | select(.dirty != null and .c_ns < $t) | .dirty]
	| [(map((.bytes // 0) + (.other_bytes // 0)) | add // 0), (map(.unknown_bytes) | add // 0)] | @tsv' "$J")
note "metrics: found ${mfound:-none}, unknown $munk bytes; records before the scrape: found $rfound, unknown $runk"
check metrics_wb "iotracer_writeback_found_bytes_total ${mfound:-absent} vs the records' $rfound; unknown by reason $munk vs $runk" \
	eval '[[ -n $mfound ]] && ((mfound == rfound && munk == runk && rfound > 0))'

if "$IOTRACER" report -n 0 -p "$apid" -j "$IT_TMP/report.json" "$IT_TMP/rec" >/dev/null 2>"$IT_TMP/report.err"; then
	rgot=$(dirtied_bytes "$IT_TMP/report.json" "$apid")
	live=$(dirtied_bytes "$J" "$apid")
	check report_pid "report -p $apid of the recording: $rgot bytes dirtied by it, the live JSON $live, write_bytes $awb" \
		eval '((rgot == live)) && within_pct "$rgot" "$awb" 2'
else
	fail report_pid "iotracer report failed: $(head -c 300 "$IT_TMP/report.err" | tr '\n' ' ')"
fi

# --- phase 3: -p A: the dirtier passes the pid filter, the flusher does not
writer_start wd "$mnt/d" && dpid=$W_PID || fail_all "cannot start writer d"
writer_start we "$mnt/e" && epid=$W_PID || fail_all "cannot start writer e"
start_tracer -d "$name" -p "$dpid" || fail_all "$TRACER_WHY"
writer_feed wd "$dpid" 8 dfd || fail_all "writer d did not write 8 MiB"
writer_feed we "$epid" 8 efd || fail_all "writer e did not write 8 MiB"
dwb=$(io_field "$dpid" write_bytes)
exec {dfd}>&- {efd}>&-
bg_wait "$dpid" 30 || note "writer d exited $BG_RC"
bg_wait "$epid" 30 || note "writer e exited $BG_RC"
sync -f "$mnt/d"
wait_quiet "$dev" 5
stop_tracer || note "${TRACER_WHY:-}"
got=$(dirtied_bytes "$TRACER_JSON" "$dpid")
other=$(dirtied_bytes "$TRACER_JSON" "$epid")
check filter_pid "-p $dpid: its block writes $got bytes vs write_bytes $dwb; the other writer's: $other (want 0)" \
	eval 'within_pct "$got" "$dwb" 2 && ((other == 0))'

# --- phase 4: iotracer top, counted in the kernel per (process, device, op)
writer_start wf "$mnt/f" && fpid=$W_PID || fail_all "cannot start writer f"
top_batch_start -i 500ms -d "$name"
writer_feed wf "$fpid" 16 ffd || fail_all "writer f did not write 16 MiB"
fwb=$(io_field "$fpid" write_bytes)
exec {ffd}>&-
bg_wait "$fpid" 30 || note "writer f exited $BG_RC"
sync -f "$mnt/f"
wait_quiet "$dev" 5
sleep 1
kill -INT "$TOP_PID"
bg_wait "$TOP_PID" 20 || note "top exited $BG_RC"
tot=$(grep -A 100 '^TOTAL' "$IT_TMP/top.batch.out")
note "top totals: $(tr '\n' '|' <<<"$tot")"
read -r _ comm _ _ _ _ tbytes < <(awk -v p="$fpid" '$1 == p && $5 == "write"' <<<"$tot")
check top_owner "top's write row of writer $fpid: comm ${comm:-none}, ${tbytes:-no} bytes, write_bytes $fwb" \
	eval '[[ ${comm:-} == dd ]] && within_pct "${tbytes:-0}" "$fwb" 2'

it_end
