#!/usr/bin/env bash
# shellcheck disable=SC2034 # FZ_* results are read by the caller
# Run iotracer's libFuzzer targets (docs/testing.md, "Fuzzing").
#
#   tests/fuzz/fuzz.sh [NAME...]       each target (default: every tests/fuzz/fuzz_*.c) for
#                                      FUZZ_SECONDS (60), one after the other: its regression
#                                      inputs first, then fuzzing from its corpus
#   tests/fuzz/fuzz.sh --have-runtime  exit 0 when clang's libFuzzer runtime is installed
#
# `make fuzz` builds the targets and runs this. Sourced (tests/integration/test_fuzz.sh),
# it only defines the fuzz_* functions.
#
# Per target NAME (binary build/fuzz/fuzz_NAME):
#   inputs    tests/fuzz/regress/NAME/   regression inputs: each must run clean
#             tests/fuzz/corpus/NAME/    committed seeds
#             build/fuzz/seeds/NAME/     seeds made by the build (link frames, ELF files)
#             build/fuzz/corpus/NAME/    the working corpus: grows from run to run
#   outputs   build/fuzz/crashes/NAME/   crash-*, leak-*, timeout-*, oom-* inputs
#             build/fuzz/logs/NAME.log   libFuzzer's output of the last run
#             build/fuzz/stats.tsv       one line per run (the sums in docs/testing.md)
# A crash ends that target's run (libFuzzer stops at the first one) and the script's exit
# status is 1. Long campaigns on a shared machine: `nice -n 19 make fuzz FUZZ_SECONDS=...`.

FUZZ_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FUZZ_DIR=${FUZZ_DIR:-$FUZZ_ROOT/build/fuzz}
FUZZ_CLANG=${CLANG:-clang}
# per input: a slow one (10 s) or a big one (2 GiB) is a finding too
FUZZ_FLAGS=(-timeout=10 -rss_limit_mb=2048 -print_final_stats=1)

# Targets by their sources: a source without a binary is reported, never skipped.
fuzz_names() {
	local f
	for f in "$FUZZ_ROOT"/tests/fuzz/fuzz_*.c; do
		[[ -e $f ]] || continue
		f=${f##*/fuzz_}
		echo "${f%.c}"
	done
}

fuzz_have_runtime() {
	local rt
	rt=$("$FUZZ_CLANG" -print-file-name="libclang_rt.fuzzer-$(uname -m).a" 2>/dev/null) &&
		[[ -f $rt ]]
}

# fuzz_regress NAME: run every regression input once. 0, or 1 with FZ_WHY.
fuzz_regress() {
	local name=$1 dir=$FUZZ_ROOT/tests/fuzz/regress/$1 log inputs=() last
	FZ_WHY=""
	[[ -d $dir ]] && mapfile -t inputs < <(find "$dir" -type f | sort)
	((${#inputs[@]})) || return 0
	mkdir -p "$FUZZ_DIR/logs"
	log=$FUZZ_DIR/logs/$name.regress.log
	if "$FUZZ_DIR/fuzz_$name" "${inputs[@]}" >"$log" 2>&1; then
		return 0
	fi
	last=$(grep '^Running: ' "$log" | tail -n 1)
	FZ_WHY="regression input ${last#Running: } fails again: $(fuzz_finding "$log") (log: $log)"
	return 1
}

# The line that best says what went wrong in a libFuzzer log: a harness check, a UBSan
# report, a sanitizer's summary (kind and place), libFuzzer's own (timeout, OOM).
fuzz_finding() {
	local re
	for re in '^fuzz: ' 'runtime error: ' '^SUMMARY: [A-Za-z]*Sanitizer' '^==[0-9]+== *ERROR: libFuzzer'; do
		grep -m 1 -E "$re" "$1" && return
	done | sed -e 's/^==[0-9]*== *//' | cut -c 1-240
}

# fuzz_run NAME SECONDS WORKDIR: fuzz for SECONDS with WORKDIR as the corpus that new
# inputs go to (the other corpus dirs are read only). Sets FZ_EXECS, FZ_RATE, FZ_NEW,
# FZ_CORPUS (files in WORKDIR), FZ_LOG; on a crash returns 1 with FZ_ARTIFACT and FZ_WHY.
fuzz_run() {
	local name=$1 secs=$2 work=$3 d dirs=() rc
	FZ_EXECS=0 FZ_RATE=0 FZ_NEW=0 FZ_CORPUS=0 FZ_ARTIFACT="" FZ_WHY=""
	FZ_LOG=$FUZZ_DIR/logs/$name.log
	mkdir -p "$work" "$FUZZ_DIR/crashes/$name" "$FUZZ_DIR/logs"
	for d in "$FUZZ_ROOT/tests/fuzz/corpus/$name" "$FUZZ_DIR/seeds/$name" \
		"$FUZZ_DIR/corpus/$name" "$FUZZ_ROOT/tests/fuzz/regress/$name"; do
		[[ -d $d && $d != "$work" ]] && dirs+=("$d")
	done
	"$FUZZ_DIR/fuzz_$name" "${FUZZ_FLAGS[@]}" -max_total_time="$secs" \
		-artifact_prefix="$FUZZ_DIR/crashes/$name/" "$work" "${dirs[@]}" >"$FZ_LOG" 2>&1
	rc=$?
	# (one value each, even if a second run of the target wrote to the same log)
	FZ_EXECS=$(sed -n 's/^stat::number_of_executed_units: *//p' "$FZ_LOG" | tail -n 1)
	FZ_RATE=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$FZ_LOG" | tail -n 1)
	FZ_NEW=$(sed -n 's/^stat::new_units_added: *//p' "$FZ_LOG" | tail -n 1)
	FZ_CORPUS=$(find "$work" -type f | wc -l)
	: "${FZ_EXECS:=0}" "${FZ_RATE:=0}" "${FZ_NEW:=0}"
	((rc == 0)) && return 0
	FZ_ARTIFACT=$(sed -n 's/.*Test unit written to //p' "$FZ_LOG" | tail -n 1)
	FZ_WHY=$(fuzz_finding "$FZ_LOG")
	[[ -n $FZ_WHY ]] || FZ_WHY="libFuzzer exited with status $rc"
	return 1
}

# One line per run into stats.tsv: date, target, rev, seconds, executions, exec/s, new
# inputs, corpus files, crashes.
fuzz_record() {
	local name=$1 secs=$2 crashes=$3 f=$FUZZ_DIR/stats.tsv rev
	rev=$(git -C "$FUZZ_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
	[[ -f $f ]] || printf 'date\ttarget\trev\tseconds\texecutions\texec_per_s\tnew\tcorpus\tcrashes\n' >"$f"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$name" "$rev" "$secs" \
		"$FZ_EXECS" "$FZ_RATE" "$FZ_NEW" "$FZ_CORPUS" "$crashes" >>"$f"
}

# make fuzz: every target, a summary line each.
fuzz_main() {
	local secs=${FUZZ_SECONDS:-60} names=("$@") name bad=0 crashes
	((${#names[@]})) || mapfile -t names < <(fuzz_names)
	fuzz_have_runtime || {
		echo "fuzz: no libFuzzer runtime for $FUZZ_CLANG (make deps installs libclang-rt-dev)" >&2
		return 1
	}
	for name in "${names[@]}"; do
		if [[ ! -x $FUZZ_DIR/fuzz_$name ]]; then
			echo "fuzz $name: $FUZZ_DIR/fuzz_$name not built (make fuzz-build)"
			bad=1
			continue
		fi
		if ! fuzz_regress "$name"; then
			echo "fuzz $name: $FZ_WHY"
			bad=1
			continue
		fi
		crashes=0
		fuzz_run "$name" "$secs" "$FUZZ_DIR/corpus/$name" || crashes=1
		fuzz_record "$name" "$secs" "$crashes"
		printf 'fuzz %-6s %12s executions in %s s, %7s exec/s, %s crashes, corpus %s files (+%s)\n' \
			"$name" "$FZ_EXECS" "$secs" "$FZ_RATE" "$crashes" "$FZ_CORPUS" "$FZ_NEW"
		if ((crashes)); then
			echo "fuzz $name: crash: $FZ_WHY"
			echo "fuzz $name: input saved at $FZ_ARTIFACT (log: $FZ_LOG)"
			bad=1
		fi
	done
	return "$bad"
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	case ${1:-} in
	--have-runtime) fuzz_have_runtime ;;
	-h | --help) sed -n '3,/^$/s/^# \{0,1\}//p' "$0" ;;
	*) fuzz_main "$@" ;;
	esac
fi
