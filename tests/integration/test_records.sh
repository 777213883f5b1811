#!/usr/bin/env bash
# The record path (docs/architecture.md, "The record path"): per-CPU slot buffers, the
# ring buffer fallback, the early wakeup and the end-time merge, under unthrottled
# psync 4k direct reads on a loop device (fio's count is the oracle).
#   small_exact  --ring-size 4K (512 slots a CPU, a 64K ring: the buffers fill and wake
#                the daemon many times a second): every fio IO is a syscall record or a
#                counted ring drop, every block read on loopN (/sys/block stat delta) a
#                block record or a counted drop/miss: nothing lost silently
#   small_joined a block record emitted without its parent (unjoined), or a syscall
#                without its block child, only where a parent or child record was dropped
#                (counted)
#   joined       default buffers: no syscall record dropped, syscall records == fio IOs,
#                none unjoined, and every one carries its block child unless that
#                completion was counted missed/dropped: the merge fed each child before
#                its parent although they were written on different CPUs
#   ring_only    IOTRACER_RING_ONLY=1 (the shared ring alone): syscall records == fio IOs
#   counters     sched from the task counters: every record has sched.switches and
#                sched.runq_ns, no offcpu_ns (no --sched-switch)
# shellcheck disable=SC2016,SC2119 # jq programs in single quotes; optional args
set -u
# RAM-backed (tmpfs) loop device and temp dir: ~100k IOPS, enough to fill the buffers
[[ -d /dev/shm && -w /dev/shm ]] && export TMPDIR=${RECORDS_TMPDIR:-/dev/shm}
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin small_exact small_joined joined ring_only counters
it_require_all

RUNTIME=${RECORDS_RUNTIME:-3}

dev=$(mk_loop 256 fill) || fail_all "cannot create a loop device"
name=$(devname "$dev")
note "device $dev"
wait_quiet "$dev" 5

# run_traced TAG [tracer args...]: unthrottled fio under the tracer; sets IOS, DELTA.
run_traced() {
	local tag=$1 r0 r1
	shift
	start_tracer -d "$name" "$@" || return 1
	r0=$(blk_reads "$dev")
	fio_run "$IT_TMP/fio.$tag.json" --name="$tag" --filename="$dev" --ioengine=psync \
		--direct=1 --rw=randread --bs=4k --runtime="$RUNTIME" --time_based \
		--randrepeat=0 --norandommap
	r1=$(blk_reads "$dev")
	stop_tracer || return 1
	((FIO_RC == 0)) || {
		TRACER_WHY="fio failed (status $FIO_RC)"
		return 1
	}
	tracer_summary || {
		TRACER_WHY="no final summary"
		return 1
	}
	IOS=$(fio_read_ios "$IT_TMP/fio.$tag.json")
	DELTA=$((r1 - r0))
}

# jsums JQ-ARGS... -- EXPR...: the sum over the trace's request objects of each EXPR
# (a number a request; JQ_BLOCKS's `blocks` defined), tab separated: one pass of jq over
# the 200k records (a pass takes seconds: jcount and jblocks make one each)
jsums() {
	local args=() e prog="" i=0
	while (($#)) && [[ $1 != -- ]]; do
		args+=("$1")
		shift
	done
	shift
	for e in "$@"; do
		prog="$prog | .[$i] += (\$r | $e)"
		i=$((i + 1))
	done
	jq -n -r "${args[@]}" "$JQ_BLOCKS reduce (inputs | select(.type == \"request\")) as \$r ([range($i) | 0]; .$prog) | @tsv" "$TRACER_JSON"
}
# one if the request is a syscall record of fio on the device
FIO_SYS='if .kind == "syscall" and .dev == $d and .pid == $p then 1 else 0 end'

if run_traced small --ring-size 4K; then
	read -r nsys nblk alone nosched < <(jsums --arg d "$name" --argjson p "$FIO_PID" -- "$FIO_SYS" \
		'[blocks | select(.dev == $d and .op == "read")] | length' \
		'if .kind == "syscall" and .dev == $d and (.block | length) == 0 and .nr_bios > 0 then 1 else 0 end' \
		'if .kind == "syscall" and (.sched.switches == null or .sched.runq_ns == null or .sched.offcpu_ns != null) then 1 else 0 end')
	read -r dsys dblk unj <<<"$(jq -r '"\(.drops.syscall.ringbuf) \(.drops.block.ringbuf + .drops.block.missed) \(.unjoined)"' "$SUMMARY")"
	note "small: fio $IOS IOs, syscall records $nsys + dropped $dsys; $name reads +$DELTA, block records $nblk + dropped/missed $dblk; unjoined $unj, syscalls without their block $alone"
	check small_exact "syscall $nsys + $dsys != fio $IOS, or block $nblk + $dblk != $DELTA" \
		test $((nsys + dsys)) -eq "$IOS" -a $((nblk + dblk)) -eq "$DELTA"
	# a dropped parent leaves its block unjoined, a dropped block its syscall alone
	check small_joined "unjoined $unj > syscall drops $dsys, or syscalls without their block $alone > block drops $dblk" \
		test "$unj" -le "$dsys" -a "$alone" -le "$dblk"
	check counters "$nosched records without sched counters, or with offcpu_ns" test "$nosched" -eq 0
else
	fail small_exact "$TRACER_WHY"
	fail small_joined "$TRACER_WHY"
	fail counters "$TRACER_WHY"
fi

if run_traced dflt; then
	read -r nsys alone < <(jsums --arg d "$name" --argjson p "$FIO_PID" -- "$FIO_SYS" \
		'if .kind == "syscall" and .dev == $d and (.block | length) == 0 then 1 else 0 end')
	read -r dsys dblk unj <<<"$(jq -r '"\(.drops.syscall.ringbuf) \(.drops.block.ringbuf + .drops.block.missed) \(.unjoined)"' "$SUMMARY")"
	note "default: fio $IOS IOs, syscall records $nsys (dropped $dsys), without their block $alone (block dropped/missed $dblk), unjoined $unj"
	check joined "records $nsys vs fio $IOS, syscall drops $dsys, syscalls without their block $alone > $dblk, unjoined $unj" \
		test "$nsys" -eq "$IOS" -a "$dsys" -eq 0 -a "$alone" -le "$dblk" -a "$unj" -eq 0
else
	fail joined "$TRACER_WHY"
fi

if IOTRACER_RING_ONLY=1 run_traced ring; then
	nsys=$(jsums --arg d "$name" --argjson p "$FIO_PID" -- "$FIO_SYS")
	dsys=$(jq -r '.drops.syscall.ringbuf' "$SUMMARY")
	note "ring only: fio $IOS IOs, syscall records $nsys, dropped $dsys"
	check ring_only "syscall records $nsys (+ dropped $dsys), fio did $IOS" \
		test $((nsys + dsys)) -eq "$IOS" -a "$nsys" -gt 0
else
	fail ring_only "$TRACER_WHY"
fi

it_end
