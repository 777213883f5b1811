#!/usr/bin/env bash
# Every kind of request obeys -m and --sample and is in the histograms and /metrics:
# one table, one row per kind (syscall: psync, io_uring, aio: libaio, block: the block
# requests of the psync run), direct 4k random reads on a loop device, traced with
# -d loopN twice: once with -m 2^23 ns (8.388608ms: a log2 bucket's edge, so the
# histograms say exactly how many requests were at least that long) and once with
# --sample 4.
# Oracles: fio's JSON (total_ios), /sys/block/loopN/stat (reads completed).
#   KIND_hist    the summary's histogram of the kind (total; block: q2c) counts every
#                request: fio's total_ios (±1 %; block: the reads-completed delta)
#   KIND_metrics /metrics serves the same count for it
#   KIND_minlat  with -m: no record of the kind shorter than 2^23 ns, and as many records
#                as the histogram has requests in its buckets from 2^23 ns up
#   KIND_sample  with --sample 4 (and -c fio: only fio's requests take the counter's
#                turns): records of the kind = a quarter of fio's count (± one per CPU:
#                the BPF side counts per CPU)
# The guest kind (virtio requests streamed by --mode guest) runs in a lab guest only:
# tests/lab (test_lab_modes.sh); it goes through the same BPF block path as "block".
# A missing fio engine or kernel tracepoint is a SKIP, never a PASS.
# shellcheck disable=SC2016 # jq programs in single quotes
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

# kind | fio engine | iodepth | histogram layer | histogram stage
KINDS=(
	"syscall psync 1 syscall total"
	"io_uring io_uring 8 io_uring total"
	"aio libaio 8 aio total"
	"block psync 1 block q2c"
)
CHECKS=(hist metrics minlat sample)
names=()
for row in "${KINDS[@]}"; do
	for c in "${CHECKS[@]}"; do names+=("${row%% *}_$c"); done
done
it_begin "${names[@]}"
it_require_all
require_cmd curl

T=8388608 # 2^23 ns
N=4
IOS=${KINDS_IOS:-2000}
dev=$(mk_loop 128 fill) || fail_all "cannot create a loop device"
name=$(devname "$dev")
note "device $dev"

kind_skip() {
	local c
	for c in "${CHECKS[@]}"; do skip "${1}_$c" "$2"; done
}

# run_fio ENGINE DEPTH OUT: fio's direct random reads, IOS of them. Sets READS (the
# device's reads-completed delta). Returns fio's status.
run_fio() {
	local r0
	wait_quiet "$dev" 5
	r0=$(blk_reads "$dev")
	fio_run "$3" --name="$1" --filename="$dev" --ioengine="$1" --iodepth="$2" --direct=1 \
		--rw=randread --bs=4k --number_ios="$IOS" --size=64M --randrepeat=0 --norandommap
	READS=$(($(blk_reads "$dev") - r0))
}

# records KIND [MIN]: records of KIND in the trace (block: every block record, children
# and standalone), only those shorter than MIN when given.
records() {
	local lat
	if [[ $1 == block ]]; then
		jq -n --argjson m "${2:-1e30}" --arg d "$name" "$JQ_BLOCKS"'
			reduce (inputs | select(.type == "request") | blocks
				| select(.dev == $d and (.q2c_ns // 0) < $m)) as $b (0; . + 1)' "$TRACER_JSON"
		return
	fi
	lat='(.lat_ns // 0)'
	jcount "$TRACER_JSON" ".kind == \$k and $lat < \$m" --arg k "$1" --argjson m "${2:-1e30}"
}

# from_t SUMMARY LAYER STAGE: requests of that histogram in buckets from T up.
from_t() {
	jq -r --arg l "$2" --arg d "$name" --arg st "$3" --argjson t "$T" \
		'[.hists[]? | select(.layer == $l and .dev == $d and .op == "read" and .stage == $st)
		| .buckets[] | select(.lo_ns >= $t) | .count] | add // 0' "$1"
}

# scrape_count PORT LAYER STAGE WANT: the /metrics _count of that histogram once it holds
# 99 % of WANT (the text is rebuilt once a second; at most 10 s), as it last was.
scrape_count() {
	local i v sel
	sel="iotracer_request_duration_seconds_count{layer=\"$2\",device=\"$name\",op=\"read\",stage=\"$3\"}"
	for ((i = 0; i < 20; i++)); do
		v=$(curl -s --max-time 5 "http://127.0.0.1:$1/metrics" | awk -v s="$sel" '$1 == s { print $2 }')
		[[ -n $v ]] && ((v * 100 >= $4 * 99)) && break
		sleep 0.5
	done
	echo "${v:-none}"
}

# run_kind ROW: the -m run (hist, metrics, minlat), then the --sample run.
run_kind() {
	local k=$1 engine=$2 depth=$3 layer=$4 stage=$5 port ios want h m short kept from
	if [[ $engine != psync ]] && ! fio --enghelp="$engine" >/dev/null 2>&1; then
		kind_skip "$k" "fio has no $engine engine"
		return
	fi
	port=$(free_port) || {
		kind_skip "$k" "no free port"
		return
	}
	if ! start_tracer -d "$name" -m "${T}ns" --metrics "127.0.0.1:$port"; then
		kind_skip "$k" "iotracer did not start: $TRACER_WHY"
		return
	fi
	run_fio "$engine" "$depth" "$IT_TMP/fio.$k.m.json"
	want=$IOS
	[[ $k == block ]] && want=$READS
	m=$(scrape_count "$port" "$layer" "$stage" "$want")
	stop_tracer || note "stop: $TRACER_WHY"
	if ((FIO_RC != 0)); then
		if grep -qiE 'not supported|not permitted|not implemented|io_uring_queue_init|io_setup' "$FIO_LOG"; then
			kind_skip "$k" "fio cannot use $engine here: $(tail -c 200 "$FIO_LOG" | tr '\n' ' ')"
		else
			fail_rest "fio $engine failed (status $FIO_RC)"
		fi
		return
	fi
	tracer_summary || {
		for c in hist metrics minlat; do fail "${k}_$c" "no final summary"; done
	}
	ios=$(fio_read_ios "$IT_TMP/fio.$k.m.json")
	want=$ios
	[[ $k == block ]] && want=$READS
	h=$(hist_count "$SUMMARY" "$layer" "$name" read "$stage")
	note "$k: fio $ios reads, $name +$READS; histogram $layer/$stage ${h:-none}, /metrics $m"
	check "${k}_hist" "histogram $layer/$name/read/$stage counts ${h:-none}, want $want (±1 %)" \
		within_pct "${h:-0}" "$want" 1
	check "${k}_metrics" "/metrics $layer/$stage _count $m, the summary's histogram ${h:-none}" \
		test "$m" = "${h:-x}"
	short=$(records "$k" "$T")
	kept=$(records "$k")
	from=$(from_t "$SUMMARY" "$layer" "$stage")
	note "$k: -m ${T}ns: $kept records ($short shorter), histogram has $from from ${T} ns up"
	check "${k}_minlat" "with -m ${T}ns: $short of $kept $k records are shorter; $kept records for $from requests that long" \
		test "$short" -eq 0 -a "$kept" -eq "$from"

	# -c fio: the 1-in-N counter is per CPU and shared by every request the filters
	# keep, so another process's file IO on the machine (a compiler, the runner)
	# shifts which of fio's requests are kept: ~1/N of them, not exactly (a LAB_FULL
	# run beside two builds kept 487 of 2,000 block requests)
	if ! start_tracer -d "$name" -c fio --sample "$N"; then
		fail "${k}_sample" "iotracer did not start: $TRACER_WHY"
		return
	fi
	run_fio "$engine" "$depth" "$IT_TMP/fio.$k.s.json"
	stop_tracer || note "stop: $TRACER_WHY"
	ios=$(fio_read_ios "$IT_TMP/fio.$k.s.json")
	want=$ios
	[[ $k == block ]] && want=$READS
	kept=$(records "$k")
	note "$k: --sample $N: $kept records of $want requests"
	check "${k}_sample" "--sample $N kept $kept $k records of $want (want $((want / N)) ± $(nproc))" \
		awk -v a="$kept" -v w="$want" -v n="$N" -v c="$(nproc)" \
		'BEGIN { d = a - w / n; if (d < 0) d = -d; exit !(w > 0 && d <= c + 1) }'
}

for row in "${KINDS[@]}"; do
	read -r k engine depth layer stage _ <<<"$row"
	if [[ $k == io_uring ]] && ! have_tp io_uring/io_uring_complete; then
		kind_skip "$k" "the kernel has no io_uring_complete tracepoint"
		continue
	fi
	run_kind "$k" "$engine" "$depth" "$layer" "$stage"
done

it_end
