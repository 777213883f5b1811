#!/usr/bin/env bash
# Asynchronous IO: fio io_uring (iodepth 32) and libaio (iodepth 16), direct 4k random
# reads on a loop device, each traced with -d loopN.
# Oracles: fio's JSON (total_ios) and /sys/block/loopN/stat.
#   uring_count  kind=io_uring requests of fio's pid == fio total_ios (±1 %)
#   uring_block  ≥ 99 % of them have at least one block[] child on loopN
#   uring_order  every block child: q_ns >= uring.submit_ns and its completion
#                (c_ns, or q_ns + q2c_ns) <= uring.complete_ns
#   uring_hist   hists block/loopN/read/q2c count == reads-completed delta
#   uring_ino    every one carries the inode of the device node fio opened (stat -L)
#   aio_count, aio_block, aio_order, aio_hist, aio_ino: the same for kind=aio
#                (aio.submit_ns / aio.reap_ns)
# A missing fio engine or kernel tracepoint is a SKIP, never a PASS.
# shellcheck disable=SC2016,SC2119 # jq programs in single quotes; optional args
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin uring_count uring_block uring_order uring_hist uring_ino aio_count aio_block aio_order aio_hist aio_ino
it_require_all

RUNTIME=${ASYNC_RUNTIME:-4}
RATE=${ASYNC_RATE:-4000}

dev=$(mk_loop 256 fill) || fail_all "cannot create a loop device"
name=$(devname "$dev")
note "device $dev"

# Block completion time of a block child: c_ns if the daemon gives it, else q_ns + q2c_ns.
JQ_CEND='def cend: (.c_ns // (if .q_ns and .q2c_ns then .q_ns + .q2c_ns else null end));'

# run_engine PREFIX KIND ENGINE IODEPTH OBJECT SUBMIT_FIELD END_FIELD
# (OBJECT: the request's sub-object holding the times, "uring" or "aio")
run_engine() {
	local pfx=$1 kind=$2 engine=$3 depth=$4 obj=$5 sf=$6 ef=$7
	local r0 r1 delta ios n nb bad tot h why ino

	if ! fio --enghelp="$engine" >/dev/null 2>&1; then
		skip_engine "$pfx" "fio has no $engine engine"
		return
	fi
	wait_quiet "$dev" 5
	if ! start_tracer -d "$name"; then
		fail_engine "$pfx" "$TRACER_WHY"
		return
	fi
	r0=$(blk_reads "$dev")
	fio_run "$IT_TMP/fio.$engine.json" --name="$engine" --filename="$dev" --ioengine="$engine" \
		--iodepth="$depth" --direct=1 --rw=randread --bs=4k --runtime="$RUNTIME" --time_based \
		--rate_iops="$RATE" --randrepeat=0 --norandommap
	r1=$(blk_reads "$dev")
	sleep 0.3
	stop_tracer || note "stop: $TRACER_WHY"
	if ((FIO_RC != 0)); then
		why=$(tail -c 300 "$FIO_LOG" | tr '\n' ' ')
		if grep -qiE 'not supported|operation not permitted|function not implemented|io_uring_queue_init|io_setup' "$FIO_LOG"; then
			skip_engine "$pfx" "fio cannot use $engine here: $why"
		else
			fail_engine "$pfx" "fio $engine failed (status $FIO_RC): $why"
		fi
		return
	fi
	if ! tracer_summary; then
		fail_engine "$pfx" "no final summary in the JSON output ($TRACER_WHY)"
		return
	fi
	ios=$(fio_read_ios "$IT_TMP/fio.$engine.json")
	delta=$((r1 - r0))
	note "$engine: fio pid $FIO_PID total_ios $ios; $name reads completed +$delta"

	n=$(jcount "$TRACER_JSON" '.kind == $k and .pid == $p' --arg k "$kind" --argjson p "$FIO_PID")
	note "$engine: kind=$kind requests of pid $FIO_PID: $n"
	if ((n == 0)) && [[ $kind == io_uring ]] &&
		jq -e 'select(.type == "attach" and (.hook | test("io_uring_(submit|complete)")) and .ok == false)' \
			"$TRACER_JSON" >/dev/null 2>&1; then
		skip_engine "$pfx" "iotracer could not attach its io_uring hooks (see the attach report)"
		return
	fi
	check "${pfx}_count" "iotracer saw $n $kind requests, fio completed $ios (not within 1 %)" \
		within_pct "$n" "$ios" 1

	nb=$(jcount "$TRACER_JSON" '.kind == $k and .pid == $p and ([.block[]? | select(.dev == $d)] | length) > 0' \
		--arg k "$kind" --argjson p "$FIO_PID" --arg d "$name")
	note "$engine: $nb of $n requests have a block child on $name"
	check "${pfx}_block" "$nb of $n $kind requests have a block[] child on $name (want >= 99 %)" \
		awk -v a="$nb" -v n="$n" 'BEGIN { exit !(n > 0 && a >= 0.99 * n) }'

	# every block child lies inside its parent's submit..complete/reap window
	read -r tot bad < <(jq -n -r --arg k "$kind" --argjson p "$FIO_PID" --arg o "$obj" --arg sf "$sf" --arg ef "$ef" \
		"$JQ_CEND"'
		reduce (inputs | select(.type == "request" and .kind == $k and .pid == $p)
			| .[$o] as $a | .block[]? | {s: $a[$sf], e: $a[$ef], q: .q_ns, c: cend}) as $x
		([0, 0]; [.[0] + 1, .[1] + (if ($x.s == null or $x.e == null or $x.q == null or $x.c == null
			or $x.q < $x.s or $x.c > $x.e) then 1 else 0 end)])
		| "\(.[0]) \(.[1])"' "$TRACER_JSON")
	note "$engine: $bad of $tot block children outside their request's $sf..$ef window"
	if [[ ${tot:-0} == 0 ]]; then
		fail "${pfx}_order" "no block children to check"
	else
		check "${pfx}_order" "$bad of $tot block children are queued before .$obj.$sf or complete after .$obj.$ef (or lack the times)" \
			test "$bad" -eq 0
	fi

	# the file: the inode of the node fio opened (aio records carried 0 before)
	ino=$(stat -L -c %i "$dev")
	bad=$(jcount "$TRACER_JSON" '.kind == $k and .pid == $p and .ino != $i' \
		--arg k "$kind" --argjson p "$FIO_PID" --argjson i "$ino")
	check "${pfx}_ino" "$bad of $n $kind requests do not carry inode $ino of $dev" \
		test "$bad" -eq 0 -a "$n" -gt 0

	h=$(hist_count "$SUMMARY" block "$name" read q2c)
	check "${pfx}_hist" "hists block/$name/read/q2c count ${h:-none}, /sys/block reads delta $delta (drops: $(jq -c '.drops.block' "$SUMMARY"))" \
		accounted "${h:-x}" "$delta" "$(jq -r '.drops.block.missed // 0' "$SUMMARY")" 32
}
skip_engine() {
	local c
	for c in count block order hist ino; do skip "${1}_$c" "$2"; done
}
fail_engine() {
	local c
	for c in count block order hist ino; do fail "${1}_$c" "$2"; done
}

if ! have_tp io_uring/io_uring_submit_req && ! have_tp io_uring/io_uring_submit_sqe; then
	skip_engine uring "the kernel has no io_uring submit tracepoint"
elif ! have_tp io_uring/io_uring_complete; then
	skip_engine uring "the kernel has no io_uring_complete tracepoint"
elif [[ $(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0) == 2 ]]; then
	skip_engine uring "io_uring is disabled (kernel.io_uring_disabled = 2)"
else
	run_engine uring io_uring io_uring 32 uring submit_ns complete_ns
fi

run_engine aio aio libaio 16 aio submit_ns reap_ns

it_end
