#!/usr/bin/env bash
# Record filters. Two loop devices A and B, plus an ext4 on a third.
# Oracles: the device names, pids and comms the test chose, dd's exact IO counts,
# fio's total_ios/clat, file inodes (`stat -c %i`) and /sys/block stat deltas.
#   dev_only        -d A while fio reads A and B at once: no request or summary entry names B
#   dev_count       ... and fio's read syscalls on A are all there (fio job A total_ios ±1 %)
#   aio_other_dev   ... then fio libaio (QD8, 2000 reads) on B alone: the summary's
#                   records.aio is 0 (io_submit and io_getevents of an untraced device are
#                   filtered in the kernel, like the other syscalls; issue 37)
#   pid_only        -p P1 while dd P1 and dd P2 read A: every request has pid P1
#   pid_count       ... and P1's read syscalls on A == its 2000 reads
#   comm_only       -c itcommdd (a copy of dd) next to a plain dd: every request has that comm
#   comm_count      ... and its read syscalls == its 2000 reads
#   cgroup_only     --cgroup G while a dd inside cgroup G and a dd outside read A: every
#                   request has G's id (the inode of G) — SKIP without a cgroup2 mount
#   cgroup_count    ... and the inside dd's read syscalls == its 2000 reads
#   file_only       -f F1 on ext4 while F1 and F2 are read and written: no request or block
#                   child carries F2's inode; every syscall request is on F1; kind=block
#                   records (writeback) are on F1's filesystem or carry F1's inode (the
#                   loop device's IO to its backing file holds F1's pages)
#   file_count      ... and F1's direct read syscalls == its 1024 reads
#   sample_records  --sample 10: fio's read syscall records are 5..20 % of its total_ios,
#                   and the final summary says so ("sample": 10, "min_latency_ns": 0)
#   sample_hist     ... while hists syscall/A/read/total counts all of them (±1 %)
#   minlat_records  --min-latency P (P = fio clat p90 of the sample run): every record's
#                   lat_ns >= P and fewer than half of fio's IOs have a record, and the
#                   final summary says so ("min_latency_ns": P, "sample": 1)
#   minlat_hist     ... while hists syscall/A/read/total counts all of them (±1 %)
# shellcheck disable=SC2016,SC2119 # jq programs in single quotes; optional args
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin dev_only dev_count aio_other_dev pid_only pid_count comm_only comm_count cgroup_only cgroup_count \
	file_only file_count \
	sample_records sample_hist minlat_records minlat_hist
it_require_all dd mkfs.ext4 stat

RUNTIME=${FILTERS_RUNTIME:-3}
NDD=2000

devA=$(mk_loop 128 fill) || fail_all "cannot create loop device A"
devB=$(mk_loop 128 fill) || fail_all "cannot create loop device B"
A=$(devname "$devA")
B=$(devname "$devB")
note "A=$devA B=$devB"

# stop the tracer; on failure report CHECKS as FAIL and return 1
stop_or_fail() {
	local c
	if stop_tracer && tracer_summary; then return 0; fi
	for c in "$@"; do fail "$c" "${TRACER_WHY:-no final summary in the JSON output}"; done
	return 1
}
# ------------------------------------------------------------------ -d
phase_dev() {
	local b0 b1 b2 ios n nb ns na
	if ! start_tracer -d "$A"; then
		fail dev_only "$TRACER_WHY"
		fail dev_count "$TRACER_WHY"
		fail aio_other_dev "$TRACER_WHY"
		return
	fi
	b0=$(blk_reads "$devB")
	fio_run "$IT_TMP/fio.dev.json" --ioengine=psync --direct=1 --rw=randread --bs=4k \
		--runtime="$RUNTIME" --time_based --rate_iops=1000 \
		--name=ja --filename="$devA" --name=jb --filename="$devB"
	b1=$(blk_reads "$devB")
	# libaio on B alone: its io_submit and io_getevents records must stay in the kernel
	fio --output-format=json --output="$IT_TMP/fio.aio.json" --name=jaio --filename="$devB" \
		--ioengine=libaio --iodepth=8 --direct=1 --rw=randread --bs=4k --number_ios=2000 \
		--size=64m --randrepeat=0 >/dev/null 2>&1 || note "fio libaio on $B failed"
	b2=$(blk_reads "$devB")
	stop_or_fail dev_only dev_count aio_other_dev || return
	na=$(jq -r '.records.aio' "$SUMMARY")
	check aio_other_dev "-d $A, fio libaio on $B ($((b2 - b1)) reads): records.aio $na, requests $(jq -r .requests "$SUMMARY") (want records.aio 0)" \
		test "$na" = 0 -a "$((b2 - b1))" -ge 2000
	if ((FIO_RC != 0)); then
		fail dev_only "fio failed ($FIO_RC)"
		fail dev_count "fio failed ($FIO_RC)"
		return
	fi
	ios=$(jq -r '[.jobs[] | select(.jobname == "ja") | .read.total_ios] | add' "$IT_TMP/fio.dev.json")
	n=$(jcount "$TRACER_JSON" '.kind == "syscall" and .op == "read" and .pid == $p and .dev == $a' \
		--argjson p "$FIO_PID" --arg a "$A")
	nb=$(jq -c 'select(.type == "request")' "$TRACER_JSON" | grep -cF "\"$B\"")
	ns=$(jq -r --arg b "$B" '[(.stages[]?, .hists[]?) | select(.dev == $b)] | length' "$SUMMARY")
	note "-d $A: $n read syscalls of fio on $A (fio job A: $ios); requests naming $B: $nb; summary entries for $B: $ns; $B reads +$((b1 - b0))"
	if ((b1 - b0 == 0)); then
		fail dev_only "fio did no IO on $B: the check would prove nothing"
	else
		check dev_only "$nb requests and $ns summary entries name $B although only $A is traced" \
			test "$nb" -eq 0 -a "$ns" -eq 0
	fi
	check dev_count "$n read syscalls of fio on $A traced, fio job A did $ios (not within 1 %)" \
		within_pct "$n" "$ios" 1
}

# ------------------------------------------------------------------ -p
phase_pid() {
	local p1 p2 r0 r1 n other
	gated_start dd1 "$IT_TMP/go.pid" dd if="$devA" of=/dev/null bs=4k count="$NDD" iflag=direct status=none
	p1=$BG_PID
	gated_start dd2 "$IT_TMP/go.pid" dd if="$devA" of=/dev/null bs=4k count="$NDD" skip=8192 iflag=direct status=none
	p2=$BG_PID
	if ! start_tracer -p "$p1"; then
		fail pid_only "$TRACER_WHY"
		fail pid_count "$TRACER_WHY"
		return
	fi
	r0=$(blk_reads "$devA")
	touch "$IT_TMP/go.pid"
	bg_wait "$p1" 60
	bg_wait "$p2" 60
	r1=$(blk_reads "$devA")
	sleep 0.3
	stop_or_fail pid_only pid_count || return
	n=$(jcount "$TRACER_JSON" '.kind == "syscall" and .op == "read" and .pid == $p and .dev == $a' \
		--argjson p "$p1" --arg a "$A")
	other=$(jq -r 'select(.type == "request" and .pid != $p) | "\(.kind):\(.pid)/\(.comm)@\(.dev)"' --argjson p "$p1" "$TRACER_JSON" |
		sort | uniq -c | sort -rn | head -5 | tr '\n' ' ')
	note "-p $p1: $n read syscalls of $p1 on $A; other pids in records: ${other:-none}; $A reads +$((r1 - r0)) (both dd)"
	if ((r1 - r0 < 2 * NDD)); then
		fail pid_only "the two dd did only $((r1 - r0)) reads on $A, expected $((2 * NDD))"
	else
		check pid_only "requests of other processes traced with -p $p1 (count kind:pid/comm@dev): $other" \
			test -z "$other"
	fi
	check pid_count "$n read syscalls of pid $p1 on $A traced, dd did $NDD" test "$n" -eq "$NDD"
}

# ------------------------------------------------------------------ --cgroup
phase_cgroup() {
	local p1 p2 cgid n other
	if ! mk_cgroup; then
		skip cgroup_only "no cgroup2 mount on this machine"
		skip cgroup_count "no cgroup2 mount on this machine"
		return
	fi
	cgid=$(stat -c %i "$CGROUP_DIR")
	gated_start dd1 "$IT_TMP/go.cg" dd if="$devA" of=/dev/null bs=4k count="$NDD" iflag=direct status=none
	p1=$BG_PID
	echo "$p1" >"$CGROUP_DIR/cgroup.procs"
	gated_start dd2 "$IT_TMP/go.cg" dd if="$devA" of=/dev/null bs=4k count="$NDD" skip=8192 iflag=direct status=none
	p2=$BG_PID
	if ! start_tracer --cgroup "$CGROUP_DIR"; then
		fail cgroup_only "$TRACER_WHY"
		fail cgroup_count "$TRACER_WHY"
		return
	fi
	touch "$IT_TMP/go.cg"
	bg_wait "$p1" 60
	bg_wait "$p2" 60
	sleep 0.3
	stop_or_fail cgroup_only cgroup_count || return
	n=$(jcount "$TRACER_JSON" '.kind == "syscall" and .op == "read" and .pid == $p and .dev == $a' \
		--argjson p "$p1" --arg a "$A")
	other=$(jq -r 'select(.type == "request" and .cgroup_id != $g) | "\(.kind):\(.pid)/\(.comm)@\(.dev)"' \
		--argjson g "$cgid" "$TRACER_JSON" | sort | uniq -c | sort -rn | head -5 | tr '\n' ' ')
	note "--cgroup $CGROUP_DIR (id $cgid): $n read syscalls of $p1; requests outside it: ${other:-none}"
	check cgroup_only "requests outside cgroup $cgid traced: $other" test -z "$other"
	check cgroup_count "$n read syscalls of the dd in the cgroup traced, it did $NDD" test "$n" -eq "$NDD"
}

# ------------------------------------------------------------------ -c
phase_comm() {
	local comm=itcommdd p1 p2 n other
	cp "$(command -v dd)" "$IT_TMP/$comm" || {
		fail comm_only "cannot copy dd"
		fail comm_count "cannot copy dd"
		return
	}
	if ! start_tracer -c "$comm"; then
		fail comm_only "$TRACER_WHY"
		fail comm_count "$TRACER_WHY"
		return
	fi
	# started after the tracer: the comm filter needs no pid
	bg_start c1 "$IT_TMP/$comm" if="$devA" of=/dev/null bs=4k count="$NDD" iflag=direct status=none
	p1=$BG_PID
	bg_start c2 dd if="$devA" of=/dev/null bs=4k count="$NDD" skip=8192 iflag=direct status=none
	p2=$BG_PID
	bg_wait "$p1" 60
	bg_wait "$p2" 60
	sleep 0.3
	stop_or_fail comm_only comm_count || return
	n=$(jcount "$TRACER_JSON" '.kind == "syscall" and .op == "read" and .comm == $c and .dev == $a' \
		--arg c "$comm" --arg a "$A")
	other=$(jq -r 'select(.type == "request" and .comm != $c) | "\(.kind):\(.pid)/\(.comm)@\(.dev)"' --arg c "$comm" "$TRACER_JSON" |
		sort | uniq -c | sort -rn | head -5 | tr '\n' ' ')
	note "-c $comm: $n read syscalls of $comm (pid $p1) on $A; plain dd is $p2; other comms: ${other:-none}"
	check comm_only "requests of other comms traced with -c $comm (count kind:pid/comm@dev): $other" test -z "$other"
	check comm_count "$n read syscalls of $comm on $A traced, it did $NDD" test "$n" -eq "$NDD"
}

# ------------------------------------------------------------------ -f
phase_file() {
	local dev mnt fsn i1 i2 p1 p2 w1 w2 n bad nf2 nsys offdev
	read -r dev mnt < <(mk_loop_fs 128) || true
	if [[ -z ${mnt:-} ]] || ! mountpoint -q "$mnt"; then
		fail file_only "cannot create/mount ext4 on a loop device"
		fail file_count "cannot create/mount ext4 on a loop device"
		return
	fi
	fsn=$(devname "$dev")
	dd if=/dev/urandom of="$mnt/f1" bs=1M count=4 conv=fsync status=none
	dd if=/dev/urandom of="$mnt/f2" bs=1M count=4 conv=fsync status=none
	i1=$(stat -c %i "$mnt/f1")
	i2=$(stat -c %i "$mnt/f2")
	drop_caches
	wait_quiet "$dev" 5
	if ! start_tracer -f "$mnt/f1"; then
		fail file_only "$TRACER_WHY"
		fail file_count "$TRACER_WHY"
		return
	fi
	bg_start f1 dd if="$mnt/f1" of=/dev/null bs=4k count=1024 iflag=direct status=none
	p1=$BG_PID
	bg_start f2 dd if="$mnt/f2" of=/dev/null bs=4k count=1024 iflag=direct status=none
	p2=$BG_PID
	bg_wait "$p1" 60
	bg_wait "$p2" 60
	# buffered rewrites of both files, with fsync
	bg_start w1 dd if=/dev/zero of="$mnt/f1" bs=64k count=16 conv=notrunc,fsync status=none
	w1=$BG_PID
	bg_start w2 dd if=/dev/zero of="$mnt/f2" bs=64k count=16 conv=notrunc,fsync status=none
	w2=$BG_PID
	bg_wait "$w1" 60
	bg_wait "$w2" 60
	sleep 0.3
	stop_or_fail file_only file_count || return
	n=$(jcount "$TRACER_JSON" '.kind == "syscall" and .op == "read" and .pid == $p and .ino == $i' \
		--argjson p "$p1" --argjson i "$i1")
	nf2=$(jq -n --argjson i "$i2" --arg d "$fsn" "$JQ_BLOCKS"'
		reduce (inputs | select(.type == "request") | . as $r
			| select((.ino == $i and (.dev == $d or .dev == null)) or
				any(blocks; .ino == $i and .dev == $d))) as $x (0; . + 1)' "$TRACER_JSON")
	nsys=$(jcount "$TRACER_JSON" '.kind != "block"')
	bad=$(jcount "$TRACER_JSON" '.kind != "block" and .ino != $i' --argjson i "$i1")
	# kind=block records (writeback, journal) must be on f1's filesystem, or carry f1's
	# pages (the loop device's own IO to its backing file, on the disk below, holds them)
	offdev=$(jq -r 'select(.type == "request" and .kind == "block" and .dev != $d and .ino != $i)
		| "\(.pid)/\(.comm)@\(.dev)/ino=\(.ino)"' \
		--arg d "$fsn" --argjson i "$i1" "$TRACER_JSON" | sort | uniq -c | sort -rn | head -5 | tr '\n' ' ')
	note "-f f1 (ino $i1; f2 is ino $i2): $n direct reads of f1 by $p1; $nsys non-block requests, $bad not on f1; $nf2 mention f2's inode; kind=block off $fsn: ${offdev:-none}"
	check file_only "$nf2 requests carry f2's inode $i2; $bad of $nsys syscall/async requests are not on f1 (ino $i1); kind=block records neither on $fsn nor with f1's inode: ${offdev:-none}" \
		test "$nf2" -eq 0 -a "$bad" -eq 0 -a -z "$offdev"
	check file_count "$n read syscalls of pid $p1 on f1 traced, dd did 1024" test "$n" -eq 1024
	umount "$mnt" 2>/dev/null
}

# ------------------------------------------------------------------ --sample / --min-latency
# run_sampled PREFIX TRACER-ARGS...: fio psync on A under the tracer; sets S_IOS S_N S_H
run_sampled() {
	local pfx=$1
	shift
	S_IOS="" S_N="" S_H="" S_SAID=""
	if ! start_tracer -d "$A" "$@"; then
		fail "${pfx}_records" "$TRACER_WHY"
		fail "${pfx}_hist" "$TRACER_WHY"
		return 1
	fi
	fio_run "$IT_TMP/fio.$pfx.json" --name="$pfx" --filename="$devA" --ioengine=psync --direct=1 \
		--rw=randread --bs=4k --runtime="$RUNTIME" --time_based --rate_iops=2000 \
		--randrepeat=0 --norandommap
	sleep 0.3
	stop_or_fail "${pfx}_records" "${pfx}_hist" || return 1
	if ((FIO_RC != 0)); then
		fail "${pfx}_records" "fio failed ($FIO_RC)"
		fail "${pfx}_hist" "fio failed ($FIO_RC)"
		return 1
	fi
	S_IOS=$(fio_read_ios "$IT_TMP/fio.$pfx.json")
	S_N=$(jcount "$TRACER_JSON" '.kind == "syscall" and .op == "read" and .pid == $p' --argjson p "$FIO_PID")
	S_H=$(hist_count "$SUMMARY" syscall "$A" read total)
	S_SAID=$(jq -r '"\(.min_latency_ns) \(.sample)"' "$SUMMARY" 2>/dev/null)
	note "$pfx ($*): fio total_ios $S_IOS, records $S_N, hists syscall/$A/read/total ${S_H:-none}"
}

phase_sample() {
	run_sampled sample --sample 10 || return
	check sample_records "--sample 10 kept $S_N records of $S_IOS IOs ($(pct_of "$S_N" "$S_IOS") %, want 5..20 %); summary min_latency_ns, sample: ${S_SAID:-none} (want 0 10)" \
		awk -v n="$S_N" -v t="$S_IOS" -v said="$S_SAID" 'BEGIN { exit !(t > 0 && n >= 0.05 * t && n <= 0.2 * t && said == "0 10") }'
	check sample_hist "hists syscall/$A/read/total count ${S_H:-none}, fio did $S_IOS (not within 1 %)" \
		within_pct "${S_H:-0}" "$S_IOS" 1
	P90=$(jq -r '.jobs[0].read.clat_ns.percentile["90.000000"]' "$IT_TMP/fio.sample.json")
}

phase_minlat() {
	local thr=${P90:-}
	is_int "$thr" && ((thr > 0)) || thr=200000
	run_sampled minlat --min-latency "${thr}ns" || return
	local short
	short=$(jcount "$TRACER_JSON" '.kind == "syscall" and .lat_ns < $t' --argjson t "$thr")
	check minlat_records "--min-latency ${thr}ns: $S_N records of $S_IOS IOs, $short of them shorter than the threshold; summary min_latency_ns, sample: ${S_SAID:-none} (want $thr 1)" \
		awk -v n="$S_N" -v t="$S_IOS" -v s="$short" -v said="$S_SAID" -v want="$thr 1" 'BEGIN { exit !(s == 0 && n < 0.5 * t && said == want) }'
	check minlat_hist "hists syscall/$A/read/total count ${S_H:-none}, fio did $S_IOS (not within 1 %)" \
		within_pct "${S_H:-0}" "$S_IOS" 1
}

phase_dev
phase_pid
phase_cgroup
phase_comm
phase_file
phase_sample
phase_minlat

it_end
