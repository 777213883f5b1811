#!/usr/bin/env bash
# Block request counts, exact: every request the device completes is in iotracer's
# in-kernel histograms, in both profiles, for psync, io_uring QD32 and buffered IO.
# Oracle: /sys/block/loopN/stat deltas (reads, writes and flushes completed) over the
# traced window. Each run is one daemon (-d loopN) around one short fio job.
#   <workload>_<profile>  for every round: hists block/loopN read, write and sync q2c
#                         counts + drops.block.missed == the stat deltas of fields 1, 5
#                         and 16, exactly, no op above its stat, and no drop. A run with
#                         missed > 0 is noted (MISSED ...): see docs/hooks.md, "Completions
#                         no program sees".
# Workloads: psync (QD1 4k randread direct), uring (io_uring QD32 4k randrw direct),
# buffered (4k randrw through the page cache, readahead and writeback, end_fsync).
# Profiles: full (the default) and always-on. BLOCKCOUNT_ROUNDS=N (default 1) repeats
# every run N times; BLOCKCOUNT_RUNTIME (default 1) is fio's runtime in seconds.
# shellcheck disable=SC2016 # jq programs in single quotes
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

WLS=(psync uring buffered)
PROFILES=(full always-on)
checks=(start)
for w in "${WLS[@]}"; do
	for p in "${PROFILES[@]}"; do checks+=("${w}_${p//-/}"); done
done
it_begin "${checks[@]}"
it_require_all fio

ROUNDS=${BLOCKCOUNT_ROUNDS:-1}
RUNTIME=${BLOCKCOUNT_RUNTIME:-1}

# filled: reads reach the backing file (dio), completions come from its disk's interrupts
dev=$(mk_loop 128 fill) || fail_all "cannot create a loop device"
name=$(devname "$dev")
note "device $dev, $ROUNDS round(s) of ${RUNTIME} s per workload and profile"

fio_args() {
	local common=(--name="$1" --filename="$dev" --runtime="$RUNTIME" --time_based
		--bs=4k --randrepeat=0 --norandommap --size=96m)
	case $1 in
	psync) printf '%s\n' "${common[@]}" --ioengine=psync --direct=1 --rw=randread ;;
	uring) printf '%s\n' "${common[@]}" --ioengine=io_uring --iodepth=32 --direct=1 \
		--rw=randrw --rwmixread=80 ;;
	buffered) printf '%s\n' "${common[@]}" --ioengine=psync --direct=0 --rw=randrw \
		--rwmixread=80 --end_fsync=1 --invalidate=1 ;;
	esac
}

# stat fields: reads 1, writes 5, flushes 16 (absent before 5.5: then 0)
stat3() { awk '{ print $1, $5, ($16 == "" ? 0 : $16) }' "/sys/block/$name/stat"; }

# one_run WORKLOAD PROFILE: prints "" on success, else why
one_run() {
	local w=$1 p=$2 args=() s0 s1 hr hw hs m d a
	[[ $p == full ]] || args=(--profile "$p")
	wait_quiet "$dev" 5 >/dev/null
	if ! start_tracer -d "$name" "${args[@]}"; then
		echo "$TRACER_WHY"
		return
	fi
	s0=$(stat3)
	mapfile -t a < <(fio_args "$w")
	fio_run "$IT_TMP/fio.json" "${a[@]}" >/dev/null
	wait_quiet "$dev" 5 >/dev/null # writeback after fio is counted too
	s1=$(stat3)
	if ! stop_tracer || ! tracer_summary; then
		echo "${TRACER_WHY:-no final summary}"
		return
	fi
	((FIO_RC == 0)) || { echo "fio failed ($FIO_RC)"; return; }
	read -r -a a <<<"$s0"
	read -r -a d <<<"$s1"
	hr=$(hist_count "$SUMMARY" block "$name" read q2c)
	hw=$(hist_count "$SUMMARY" block "$name" write q2c)
	hs=$(hist_count "$SUMMARY" block "$name" sync q2c)
	m=$(jq -r '.drops.block.missed // 0' "$SUMMARY")
	local want="$((d[0] - a[0])) $((d[1] - a[1])) $((d[2] - a[2]))"
	local got="${hr:-0} ${hw:-0} ${hs:-0}"
	local drops
	drops=$(real_drops "$SUMMARY")
	# every request is in the histograms or counted as missed: nothing unaccounted
	local sum=$((${hr:-0} + ${hw:-0} + ${hs:-0} + m)) stat=$((d[0] - a[0] + d[1] - a[1] + d[2] - a[2]))
	if [[ $sum != "$stat" || $drops != 0 || ${hr:-0} -gt $((d[0] - a[0])) ||
		${hw:-0} -gt $((d[1] - a[1])) || ${hs:-0} -gt $((d[2] - a[2])) ]]; then
		echo "hists read/write/sync $got + missed $m vs /sys/block $want (drops $drops)"
	elif ((m > 0)); then
		echo "MISSED hists read/write/sync $got vs /sys/block $want: $m completions missed, counted"
	fi
}

pass start
for w in "${WLS[@]}"; do
	for p in "${PROFILES[@]}"; do
		c="${w}_${p//-/}"
		bad=0
		for ((r = 1; r <= ROUNDS; r++)); do
			why=$(one_run "$w" "$p")
			[[ -n $why ]] && note "$c round $r: $why"
			[[ -z $why || $why == MISSED* ]] || bad=$((bad + 1))
		done
		check "$c" "$bad of $ROUNDS runs counted otherwise than /sys/block (see notes)" \
			test "$bad" = 0
	done
done
it_end
