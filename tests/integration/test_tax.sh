#!/usr/bin/env bash
# Calls iotracer does not trace leave no trace: a helper (tests/tools/nonfile_io) makes
# N 64-byte write+read pairs on a pipe, a UNIX socket pair and an eventfd, then K
# O_DIRECT preads of the traced loop device. iotracer runs as always-on runs it on a
# host: no -d, no -p (issue 31: the tax on everything else).
# Oracle: the helper's own calls and the st_dev of its pipe, socket and eventfd.
#   nonfile_no_record    no syscall record of the helper on the pipe's, socket's or
#                        eventfd's device (its loader's reads of libraries are files)
#   nonfile_no_hist      no histogram entry (map key) for the pipe's, socket's or
#                        eventfd's device, in full records and in always-on
#   file_traced          exactly K pread64 records of the helper, 4096 bytes each
#   no_missed            drops.syscall.missed 0 in both runs (nothing entered and
#                        exited unseen; none counted for calls in flight at attach)
# shellcheck disable=SC2016 # jq programs in single quotes
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin nonfile_no_record nonfile_no_hist file_traced no_missed
it_require_all jq

HELPER=$IT_ROOT/build/nonfile_io
[[ -x $HELPER ]] || fail_all "$HELPER is not built (make tools)"
N=20000
K=50

dev=$(mk_loop 16 fill) || fail_all "cannot create a loop device"

# run PROFILE: one daemon around one helper run; sets HPID, HOUT, DEVS, HIST_BAD, MISSED
run() {
	local args=() d hb=0
	[[ $1 == full ]] || args=(--profile "$1")
	start_tracer "${args[@]}" || fail_all "$TRACER_WHY"
	HOUT=$IT_TMP/helper.$1.out
	"$HELPER" "$dev" "$N" "$K" >"$HOUT" 2>&1 &
	HPID=$!
	wait "$HPID" || fail_all "nonfile_io failed: $(tr '\n' ' ' <"$HOUT")"
	stop_tracer || fail_all "$TRACER_WHY"
	tracer_summary || fail_all "no final summary"
	DEVS=$(awk '/_dev / { print $2 }' "$HOUT" | jq -R . | jq -sc .)
	for d in $(awk '/_dev / { print $2 }' "$HOUT"); do
		hb=$((hb + $(jq --arg d "$d" '[.hists[]? | select(.dev == $d)] | length' "$SUMMARY")))
	done
	HIST_BAD=$hb
	MISSED=$(jq -r '.drops.syscall.missed // 0' "$SUMMARY")
	note "$1: helper pid $HPID: $(tr '\n' ' ' <"$HOUT")"
}

run full
others=$(jcount "$TRACER_JSON" '.kind == "syscall" and .pid == $p and (.devno as $d | $devs | index($d))' \
	--argjson p "$HPID" --argjson devs "$DEVS")
preads=$(jcount "$TRACER_JSON" '.kind == "syscall" and .pid == $p and .syscall == "pread64"
	and .bytes == 4096 and .ret == 4096' --argjson p "$HPID")
hist_full=$HIST_BAD missed_full=$MISSED
run always-on
check nonfile_no_record "$others records of the helper on the devices $DEVS (3 x $N pairs made)" \
	test "$others" -eq 0
check nonfile_no_hist "histogram entries for the pipe/socket/eventfd devices: full $hist_full, always-on $HIST_BAD" \
	test "$hist_full" -eq 0 -a "$HIST_BAD" -eq 0
check file_traced "$preads pread64 records of the helper, $K made" test "$preads" -eq "$K"
check no_missed "drops.syscall.missed: full $missed_full, always-on $MISSED" \
	test "$missed_full" -eq 0 -a "$MISSED" -eq 0
it_end
