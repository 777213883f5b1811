#!/usr/bin/env bash
# `iotracer bench --quick`: one short pair (none, iotracer, bpftrace-hist if installed) on
# its own loop device, then checks of the JSON (fields, IOPS > 0, overhead recomputed
# from the raw pairs), the SVG, the cleanup, and the refusals (root disk, mounted device).
. "$(dirname "$0")/lib.sh"

it_begin runs json_fields iops_positive overhead_from_pairs tracer_figures unreported bpf_stats \
	svg_wellformed table cleanup refuse_root_disk refuse_mounted bad_usage stats_on_refused
it_require_all

# BPF statistics already on (the sysctl, or somebody's stats fd): the bench refuses to
# start, naming it; every other check needs them off (they are not ours to turn off)
if [[ $(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null) == 1 ]]; then
	rc=0
	out=$(timeout 60 "$IOTRACER" bench --quick --tracers none 2>&1 >/dev/null) || rc=$?
	check stats_on_refused "with kernel.bpf_stats_enabled=1: exit $rc, said: $out" \
		grep -q 'bpf_stats_enabled is 1 already' <<<"$out"
	skip_all "kernel.bpf_stats_enabled is 1 (set outside this test): the bench refuses to start"
fi
skip stats_on_refused "kernel.bpf_stats_enabled is 0 here: the refusal is not exercised"

OUT=$IT_TMP/bench.json
SVG=$IT_TMP/bench.svg
TXT=$IT_TMP/bench.txt
ERR=$IT_TMP/bench.err

loops_before=$(losetup -a 2>/dev/null | grep -c 'iotracer-bench\.')

# ---------------------------------------------------------------- the quick run
note "iotracer bench --quick (about 30 s)"
rc=0
timeout -k 10 150 "$IOTRACER" bench --quick --preset reference \
	--tracers none,iotracer,bpftrace-hist --json "$OUT" --svg "$SVG" >"$TXT" 2>"$ERR" || rc=$?
if ((rc == 0)); then
	pass runs
else
	fail runs "exit status $rc: $(tail -n 3 "$ERR" | tr '\n' ' ')"
fi

if ! jq -e . "$OUT" >/dev/null 2>&1; then
	fail_all "no JSON document in $OUT"
fi

# ---------------------------------------------------------------- JSON fields
# shellcheck disable=SC2016 # jq program text
missing=$(jq -r '
	def need($o; $ks): $ks[] as $k | select($o | has($k) | not) | $k;
	[ need(.; ["type","version","complete","host","config","targets","workloads","tracers","runs","results","checks"]),
	  (.runs[] | need(.; ["workload","preset","tracer","round","bpf_stats","ok","iops","ios","lat_mean_ns","lat_p99_ns","elapsed_s","busy_pct","busy_cpu_ns"]) | "runs." + .),
	  (.results[] | select(.available) | need(.; ["workload","tracer","pairs","iops","lat_mean_ns","lat_p99_ns","busy_pct","cpu_ns_per_io"]) | "results." + .),
	  (.results[] | select(.available and .tracer != "none") | need(.; ["iops_ratio","added_busy_pct","tracer_cpu_pct","daemon_cpu_ns_per_io","bpf_ns_per_io","rss_anon_kb_max","vmhwm_kb_max"]) | "results." + .),
	  (.host | need(.; ["ncpu","user_hz","kernel"]) | "host." + .)
	] | unique | join(",")' "$OUT" 2>&1)
if [[ -z $missing ]] && jq -e '.type == "iotracer-bench" and .complete == true and (.runs | length) >= 3' "$OUT" >/dev/null; then
	pass json_fields
else
	fail json_fields "missing: ${missing:-none}; type/complete/runs: $(jq -c '[.type, .complete, (.runs|length)]' "$OUT")"
fi

# ---------------------------------------------------------------- IOPS > 0 for each run
bad=$(jq -r '[.runs[] | select((.ok != true) or ((.iops // 0) <= 0) or ((.ios // 0) <= 0))
	| "\(.workload)/\(.tracer)/r\(.round)\(if .bpf_stats then "/stats" else "" end): ok=\(.ok) iops=\(.iops) \(.error // "")"] | join("; ")' "$OUT")
if [[ -z $bad ]]; then
	pass iops_positive
else
	fail iops_positive "$bad"
fi

# ---------------------------------------------------------------- overhead = f(pairs)
# Recompute every ratio and added busy % from the raw runs of the same round. The JSON
# numbers have 6 significant digits: busy % (< 100) is exact to 5e-4, so a difference
# of two to 1e-3; a ratio of two IOPS to 1e-5 relative.
# shellcheck disable=SC2016
bad=$(jq -r '
	def median: sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
	. as $d
	| [ .results[] | select(.available and .tracer != "none" and .pairs > 0) as $r
	    | [ $d.runs[] | select(.workload == $r.workload and .tracer == $r.tracer and (.bpf_stats | not) and .ok) ] as $with
	    | [ $with[] as $w | ($d.runs[] | select(.workload == $w.workload and .tracer == "none" and .round == $w.round and (.bpf_stats | not) and .ok)) as $b
	        | { ratio: ($w.iops / $b.iops), added: ($w.busy_pct - $b.busy_pct) } ] as $pairs
	    | ($pairs | map(.ratio) | median) as $ratio
	    | ($pairs | map(.added) | median) as $added
	    | select(($pairs | length) == 0
	        or (($r.iops_ratio.median - $ratio) | fabs) > 2e-5 * (1 + ($ratio | fabs))
	        or (($r.added_busy_pct.median - $added) | fabs) > 2e-3)
	    | "\($r.workload)/\($r.tracer): ratio \($r.iops_ratio.median) vs \($ratio), added \($r.added_busy_pct.median) vs \($added), pairs \($pairs | length)" ]
	| join("; ")' "$OUT" 2>&1)
n_with=$(jq '[.results[] | select(.available and .tracer != "none" and .pairs > 0)] | length' "$OUT")
if [[ -z $bad ]] && ((n_with >= 1)); then
	pass overhead_from_pairs
else
	fail overhead_from_pairs "${bad:-no tracer result with pairs}"
fi

# ---------------------------------------------------------------- tracer figures
# iotracer: memory from /proc, records from its final summary (every request recorded).
# shellcheck disable=SC2016
bad=$(jq -r '[.runs[] | select(.tracer == "iotracer" and .ok)
	| select((.rss_anon_kb // 0) <= 0 or (.vmhwm_kb // 0) < (.rss_anon_kb // 0) or (.records // 0) <= 0
		or (.drops == null) or (.tracer_cpu_ns // 0) <= 0 or (.requests // 0) < (.ios * 0.5))
	| "r\(.round): rss=\(.rss_anon_kb) hwm=\(.vmhwm_kb) records=\(.records) requests=\(.requests) ios=\(.ios) drops=\(.drops) cpu=\(.tracer_cpu_ns)"] | join("; ")' "$OUT")
n=$(jq '[.runs[] | select(.tracer == "iotracer" and .ok)] | length' "$OUT")
if [[ -z $bad ]] && ((n >= 1)); then
	pass tracer_figures
else
	fail tracer_figures "${bad:-no successful iotracer run}"
fi

# ---------------------------------------------------------------- nothing lost uncounted
# The device's own stat (blk_ios) saw every fio IO (direct 4k random: one request each);
# iotracer's records + counted drops cover both it and fio's IO count.
# shellcheck disable=SC2016
bad=$(jq -r '[.runs[] | select(.tracer == "iotracer" and .ok)
	| select(.blk_ios == null or .blk_ios < .ios or .unreported_block != 0 or .unreported_requests != 0)
	| "r\(.round)\(if .bpf_stats then "/stats" else "" end): ios=\(.ios) blk_ios=\(.blk_ios) unreported block=\(.unreported_block) requests=\(.unreported_requests) drops=\(.drops)"] | join("; ")' "$OUT")
n=$(jq '[.runs[] | select(.tracer == "iotracer" and .ok)] | length' "$OUT")
if [[ -z $bad ]] && ((n >= 1)); then
	pass unreported
else
	fail unreported "${bad:-no successful iotracer run}"
fi

# ---------------------------------------------------------------- BPF statistics run
# The iotracer programs ran at least once per IO (syscall + block hooks) and took time.
v=$(jq -r '[.results[] | select(.tracer == "iotracer")][0] | "\(.bpf_ns_per_io.median) \(.bpf_runs_per_io.median) \(.bpf_progs | length)"' "$OUT")
read -r ns runs nprogs <<<"$v"
if awk -v n="$ns" -v r="$runs" 'BEGIN { exit !(n > 0 && r >= 1) }' && ((nprogs > 0)); then
	pass bpf_stats
	note "iotracer: $ns ns/IO in BPF over $runs program runs/IO ($nprogs programs)"
	if jq -e '.results[] | select(.tracer == "bpftrace-hist" and .available)' "$OUT" >/dev/null; then
		note "bpftrace-hist: $(jq -r '.results[] | select(.tracer == "bpftrace-hist") | .bpf_ns_per_io.median' "$OUT") ns/IO in BPF"
	fi
else
	fail bpf_stats "bpf ns/IO=$ns runs/IO=$runs programs=$nprogs"
fi

# ---------------------------------------------------------------- SVG
if [[ ! -s $SVG ]]; then
	fail svg_wellformed "no SVG written"
elif command -v xmllint >/dev/null 2>&1; then
	if why=$(xmllint --noout "$SVG" 2>&1) && grep -q '<svg ' "$SVG" && grep -q '<rect ' "$SVG"; then
		pass svg_wellformed
	else
		fail svg_wellformed "xmllint: $(head -c 300 <<<"$why")"
	fi
elif grep -q '<svg ' "$SVG" && tail -n 1 "$SVG" | grep -q '</svg>'; then
	pass svg_wellformed
else
	fail svg_wellformed "no <svg ...> ... </svg>"
fi

# ---------------------------------------------------------------- the table
if grep -q '^== ref-rand \[reference\]' "$TXT" && grep -qE '^iotracer +[0-9]+' "$TXT" &&
	grep -q '^== reference: whole-system CPU busy' "$TXT"; then
	pass table
else
	fail table "table not found on stdout: $(head -c 300 "$TXT" | tr '\n' ' ')"
fi

# ---------------------------------------------------------------- cleanup
sleep 0.5
loops_after=$(losetup -a 2>/dev/null | grep -c 'iotracer-bench\.')
left=$(find /var/tmp /dev/shm -maxdepth 1 -name 'iotracer-bench.*' -newer "$IT_TMP/.pids" 2>/dev/null)
if ((loops_after <= loops_before)) && [[ -z $left ]]; then
	pass cleanup
else
	fail cleanup "loop devices left: $((loops_after - loops_before)); dirs left: $left"
fi

# ---------------------------------------------------------------- refusals
# Read-only workloads (maxrate: randread), so nothing could be written even on a bug.
root_dev=$(findmnt -n -o SOURCE / 2>/dev/null)
if [[ -b $root_dev ]]; then
	rc=0
	out=$(timeout 60 "$IOTRACER" bench --quick --preset maxrate --tracers none --target "$root_dev" 2>&1 >/dev/null) || rc=$?
	if ((rc != 0)) && grep -q 'refusing' <<<"$out"; then
		pass refuse_root_disk
	else
		fail refuse_root_disk "status $rc: $(head -c 300 <<<"$out")"
	fi
else
	skip refuse_root_disk "root file system is not on a block device ($root_dev)"
fi

if command -v mkfs.ext4 >/dev/null 2>&1 && read -r fsdev _ < <(mk_loop_fs 64); then
	rc=0
	out=$(timeout 60 "$IOTRACER" bench --quick --preset maxrate --tracers none --target "$fsdev" 2>&1 >/dev/null) || rc=$?
	if ((rc != 0)) && grep -q 'refusing.*mounted' <<<"$out"; then
		pass refuse_mounted
	else
		fail refuse_mounted "status $rc: $(head -c 300 <<<"$out")"
	fi
else
	skip refuse_mounted "cannot make a mounted loop device"
fi

rc=0
out=$("$IOTRACER" bench --pairs 0 2>&1) || rc=$?
rc2=0
"$IOTRACER" bench --tracers none,perf >/dev/null 2>&1 || rc2=$?
# a workload named outside --preset, or no such workload: refused, named (not left out)
rc3=0
out3=$("$IOTRACER" bench --preset reference --workloads ref-12r1w,max-uring 2>&1) || rc3=$?
rc4=0
out4=$("$IOTRACER" bench --workloads ref-12r1w,max-urin 2>&1) || rc4=$?
if ((rc == 2 && rc2 == 2 && rc3 == 2 && rc4 == 2)) && grep -q -- '--pairs' <<<"$out" &&
	grep -q "'max-uring' is in the maxrate preset" <<<"$out3" && grep -q "'max-urin'" <<<"$out4"; then
	pass bad_usage
else
	fail bad_usage "--pairs 0: status $rc ($out); unknown tracer: status $rc2; max-uring outside --preset: status $rc3 ($out3); unknown workload: status $rc4 ($out4)"
fi

it_end
