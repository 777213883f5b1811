#!/usr/bin/env bash
# SIGHUP re-reads the config file (docs/config.md, "Reload"). The daemon runs with
# --config on loop device A; fio reads A with psync, a known number of IOs each run.
# Oracles: fio's JSON (total_ios) and the daemon's BPF link fds (/proc/PID/fdinfo).
#   inplace_log      a reload adding a pid filter (fio's) and device B logs "changed in place"
#   inplace_links    ... and the daemon holds the same BPF links (ids) before and after
#   inplace_count    fio run 1 (reload in the middle): its read records + drops == its IOs
#   minlat_records   reload min-latency = 1h, fio run 2: no record for it ...
#   minlat_hist      ... while hists syscall/A/read/total == IOs of runs 1 + 2 (+ 3 below)
#   start_once       record-size (read at start only) in the file: said at the SIGHUP that
#                    brings it, not again at the next one with the same value (another key
#                    changed), said again when its value changes (issue 37)
#   bad_alive        a broken file (bad min-latency): the daemon keeps running ...
#   bad_log          ... logs one line FILE:LINE: min-latency: bad value 'abc' ...
#   bad_kept         ... and the old configuration stays: fio run 3 leaves no record
#   reattach_log     layers = syscall,block (dev A,B): logged as "layers changed: re-attached"
#   reattach_count   fio run 4 after it: its read records + drops == its IOs
#   span_goes_on     ring-size = 4M while fio run 5 reads B (200/s): a re-attach under
#                    IO; at least a third of run 5's IOs have a record (tracing goes on) ...
#   span_joined      ... and at most 1 % of its read records lack their block request (the
#                    new load numbers syscalls past the old one's: no block joins an old
#                    one; a few syscalls run while the new load's block hooks attach)
#   lost_family      /metrics (--metrics on a free port) has one loss family,
#                    iotracer_lost_requests_total, with every reason (ringbuf, inflight,
#                    hist per layer, block missed, daemon user) and none of the old three
#   inflight_down    once run 5's IO has ended, iotracer_inflight_requests{layer="block"}
#                    is 0, or each request left in it is a completion of B that a tracefs
#                    witness (lib.sh witness_*) saw in softirq on top of a thread of pid 1,
#                    where no BPF program runs on this machine (docs/hooks.md, "Completions
#                    no program sees"; SKIP when some are left and there is no witness); the
#                    old gauge kept every request in flight at each re-attach for good
#   lost_sum         the final summary's drops.total + lost = the family's sum + the gauge
#                    (the last scrape, once they stopped moving for three metrics rebuilds)
#   exit             SIGTERM -> exit 0 with a final summary
# shellcheck disable=SC2016,SC2119 # jq programs in single quotes; optional args
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin inplace_log inplace_links inplace_count minlat_records minlat_hist start_once bad_alive bad_log \
	bad_kept reattach_log reattach_count span_goes_on span_joined lost_family inflight_down \
	lost_sum exit
it_require_all

NIOS=${RELOAD_IOS:-6000} # per fio run, at 2000/s: 3 s
devA=$(mk_loop 128 fill) || fail_all "cannot create loop device A"
devB=$(mk_loop 64) || fail_all "cannot create loop device B"
A=$(devname "$devA")
B=$(devname "$devB")
CONF=$IT_TMP/iotracer.conf
note "A=$devA B=$devB config $CONF"

# fio_reads NAME [DEV [IOS [RATE]]]: IOS (NIOS) psync 4k random reads of DEV (A) at RATE
# (2000) per second in the background (fio_wait ends it)
fio_reads() {
	fio_start "$IT_TMP/fio.$1.json" --name="$1" --filename="${2:-$devA}" --ioengine=psync \
		--direct=1 --rw=randread --bs=4k --io_size=$((${3:-$NIOS} * 4))k --rate_iops="${4:-2000}" \
		--randrepeat=0 --norandommap
}
# hup_wait PATTERN: SIGHUP the tracer, wait (5 s) for a new stderr line matching PATTERN
hup_wait() {
	local n0 i
	n0=$(wc -l <"$TRACER_ERR")
	kill -HUP "$TRACER_PID"
	for ((i = 0; i < 50; i++)); do
		tail -n +$((n0 + 1)) "$TRACER_ERR" | grep -q -- "$1" && return 0
		sleep 0.1
	done
	note "no '$1' after SIGHUP; stderr: $(tail -n +$((n0 + 1)) "$TRACER_ERR" | tr '\n' ' ')"
	return 1
}
# records PID [DEV]: read syscall records of PID on DEV (A)
records() {
	jcount "$TRACER_JSON" '.kind == "syscall" and .op == "read" and .pid == $p and .dev == $a' \
		--argjson p "$1" --arg a "${2:-$A}"
}
# ios NAME: total_ios of a fio run (0 when it failed)
ios() { jq -r '[.jobs[].read.total_ios] | add // 0' "$IT_TMP/fio.$1.json" 2>/dev/null || echo 0; }

printf '# reload test\ndev = %s\n' "$A" >"$CONF"
PORT=$(free_port) || fail_all "no free port"
start_tracer --config "$CONF" --metrics "127.0.0.1:$PORT" || fail_all "$TRACER_WHY"
links0=$(bpf_fd_ids "$TRACER_PID" | grep '^l' | tr '\n' ' ')

# ---- 1: a filter change in the middle of fio run 1
fio_reads run1
sleep 1
printf 'dev = %s,%s\npid = %s\n' "$A" "$B" "$FIO_PID" >"$CONF"
check inplace_log "no 'reload: changed in place' line" hup_wait "reload: changed in place"
links1=$(bpf_fd_ids "$TRACER_PID" | grep '^l' | tr '\n' ' ')
fio_wait 60
pid1=$FIO_PID
check inplace_links "BPF links before: [$links0], after: [$links1]" test -n "$links0" -a "$links0" = "$links1"

# ---- 2: min-latency 1h: no record, every IO in the histograms
printf 'dev = %s\nmin-latency = 1h\n' "$A" >"$CONF"
hup_wait "reload: changed in place" || true
fio_reads run2
fio_wait 60
pid2=$FIO_PID

# ---- 2b: a start-only key (record-size) is said once per value, not at every SIGHUP
printf 'dev = %s\nmin-latency = 1h\n[record]\nrecord-size = 1M\n' "$A" >"$CONF"
hup_wait "record-size: read at start only" || true
printf 'dev = %s\nmin-latency = 2h\n[record]\nrecord-size = 1M\n' "$A" >"$CONF"
hup_wait "reload: changed in place" || true
s1=$(grep -c "read at start only" "$TRACER_ERR")
printf 'dev = %s\nmin-latency = 2h\n[record]\nrecord-size = 2M\n' "$A" >"$CONF"
hup_wait "record-size: read at start only.*-> 2048K" || true
s2=$(grep -c "read at start only" "$TRACER_ERR")
check start_once "start-only lines: $s1 after two SIGHUPs with record-size 1M (want 1), $s2 after 2M (want 2): $(grep "read at start only" "$TRACER_ERR" | tr '\n' '|')" \
	test "$s1" = 1 -a "$s2" = 2

# ---- 3: a broken file keeps the running configuration
printf 'dev = %s\n# the threshold below is broken\nmin-latency = abc\n' "$A" >"$CONF"
if hup_wait "reload:"; then
	check bad_alive "the daemon died after a broken file" proc_alive "$TRACER_PID"
	line=$(grep "reload:.*min-latency" "$TRACER_ERR" | tail -n 1)
	check bad_log "logged: '$line'" grep -qF -- "$CONF:3: min-latency: bad value 'abc' (expected e.g. 250us, 10ms, 2s)" <<<"$line"
else
	fail bad_alive "no reload line after SIGHUP with a broken file"
	fail bad_log "no reload line after SIGHUP with a broken file"
fi
fio_reads run3
fio_wait 60
pid3=$FIO_PID

# ---- 4: layers: a re-attach, and tracing goes on
printf 'dev = %s,%s\nlayers = syscall,block\n' "$A" "$B" >"$CONF"
check reattach_log "no 'layers changed: re-attached' line" hup_wait "reload: layers changed: re-attached"
fio_reads run4
fio_wait 60
pid4=$FIO_PID

# ---- 5: a re-attach while fio reads B, slowly: its thread has made fewer syscalls than the
# correlator remembers parents (CORR_RECENT), the case where reused numbers would mis-join
fio_reads run5 "$devB" 1200 200
sleep 1
# the witness of B's completions (lib.sh) from before the re-attach to the last scrape
witness_start "$devB" 1024 || note "no witness: $WITNESS_WHY"
c5=$(($(blk_reads "$devA") + $(blk_reads "$devB")))
printf 'dev = %s,%s\nlayers = syscall,block\nring-size = 4M\n' "$A" "$B" >"$CONF"
hup_wait "reload: ring-size changed: re-attached" || true
fio_wait 60
pid5=$FIO_PID
c5=$(($(blk_reads "$devA") + $(blk_reads "$devB") - c5))
# The metrics text is rebuilt once a second from what the daemon has read so far; under
# load the daemon may still be reading the end of run 5. Scrape until the losses and the
# in-flight gauge have stopped moving for three rebuilds in a row (at most 30 s).
SCRAPE=$IT_TMP/scrape.txt
# loss_state FILE: the loss family's sum and the block in-flight gauge of a scrape
loss_state() {
	awk '/^iotracer_lost_requests_total\{/ { s += $2 }
	     $1 == "iotracer_inflight_requests{layer=\"block\"}" { g = $2 }
	     END { printf "%d %s", s, g }' "$1"
}
prev="" same=0
for ((i = 0; i < 120 && same < 12; i++)); do
	curl -s --max-time 5 -o "$SCRAPE" "http://127.0.0.1:$PORT/metrics"
	cur=$(loss_state "$SCRAPE")
	if [[ $cur == "$prev" ]]; then same=$((same + 1)); else same=0; fi
	prev=$cur
	sleep 0.25
done
note "losses and gauge after run 5: $prev ($same unchanged scrapes in a row, $i scrapes)"
wit_soft=-1
if [[ -n ${WITNESS:-} ]] && witness_stop; then
	read -r wit_all wit_soft _ < <(witness_count)
	note "witness of $B: $wit_all completions, $wit_soft in softirq on a thread of pid 1"
else
	note "no witness: $WITNESS_WHY"
fi

if stop_tracer && tracer_summary; then pass exit; else fail exit "${TRACER_WHY:-no final summary}"; fi
[[ -s $TRACER_JSON ]] || fail_all "no JSON output"
drops=$(real_drops "$SUMMARY")
i1=$(ios run1) i2=$(ios run2) i3=$(ios run3) i4=$(ios run4)
n1=$(records "$pid1") n2=$(records "$pid2") n3=$(records "$pid3") n4=$(records "$pid4")
h=$(hist_count "$SUMMARY" syscall "$A" read total)
note "fio IOs $i1 $i2 $i3 $i4; records $n1 $n2 $n3 $n4; drops $drops; hists syscall/$A/read/total ${h:-none}"
check inplace_count "run 1: $n1 records + $drops drops, fio did $i1 IOs" \
	test "$i1" -gt 0 -a $((n1 + drops)) -eq "$i1"
check minlat_records "run 2 under min-latency 1h: $n2 records" test "$i2" -gt 0 -a "$n2" -eq 0
check bad_kept "run 3 after the broken file: $n3 records (min-latency 2h should still hold)" \
	test "$i3" -gt 0 -a "$n3" -eq 0
check minlat_hist "hists syscall/$A/read/total ${h:-none}, fio runs 1-4 did $((i1 + i2 + i3 + i4)) IOs" \
	test "${h:-0}" -eq $((i1 + i2 + i3 + i4))
check reattach_count "run 4 after the re-attach: $n4 records + $drops drops, fio did $i4 IOs" \
	test "$i4" -gt 0 -a $((n4 + drops)) -eq "$i4"
i5=$(ios run5)
n5=$(records "$pid5" "$B")
lone=$(jcount "$TRACER_JSON" '.kind == "syscall" and .op == "read" and .pid == $p and ((.block // []) | length) == 0' \
	--argjson p "$pid5")
orphans=$(jcount "$TRACER_JSON" '.kind == "block" and .pid == $p' --argjson p "$pid5")
note "run 5 across a re-attach: fio $i5 IOs, $n5 read records, $lone without their block request, $orphans block requests alone (the detach window)"
check span_goes_on "run 5: $n5 records of $i5 IOs" test "$i5" -gt 0 -a $((3 * n5)) -ge "$i5"
check span_joined "run 5: $lone of $n5 read records without their block request (> 1 %)" \
	test $((100 * lone)) -le "$n5"

# the losses: one family, every reason; the in-flight gauge comes down
fam=""
for s in 'syscall",reason="ringbuf' 'syscall",reason="inflight' 'syscall",reason="hist' \
	'block",reason="ringbuf' 'block",reason="inflight' 'block",reason="hist' \
	'block",reason="missed' 'daemon",reason="user'; do
	grep -q "^iotracer_lost_requests_total{layer=\"$s\"} [0-9]*$" "$SCRAPE" || fam+="no $s; "
done
old=$(grep -cE '^iotracer_(dropped_records_total|block_unmatched_requests|lost_records_total)' "$SCRAPE")
check lost_family "${fam}old families: $old series" test -z "$fam" -a "$old" -eq 0
read -r family gauge <<<"$(loss_state "$SCRAPE")"
missed=$(awk '$1 == "iotracer_lost_requests_total{layer=\"block\",reason=\"missed\"}" { print $2 }' "$SCRAPE")
note "after run 5 ($c5 completions on A and B): in flight ${gauge:-none}, lost: $family (block missed ${missed:-none})"
why="in flight after the IO ended: ${gauge:-none}, completions witnessed in softirq on a thread of pid 1: $wit_soft"
if [[ -n $gauge ]] && ((gauge > 0 && wit_soft < 0)); then
	skip inflight_down "$why: requests left in flight and no witness to explain them ($WITNESS_WHY)"
else
	check inflight_down "$why (want 0, or each one such a completion)" \
		test -n "$gauge" -a "${gauge:-1}" -le "$((wit_soft > 0 ? wit_soft : 0))"
fi
sum=$(jq -r '.drops.total + .lost' "$SUMMARY")
check lost_sum "summary drops.total + lost = $sum, /metrics lost $family + in flight ${gauge:-none}" \
	test -n "$gauge" -a "$sum" -eq $((family + ${gauge:-0}))
it_end
