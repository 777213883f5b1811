#!/usr/bin/env bash
# test_fuzz.sh: every libFuzzer target (tests/fuzz/fuzz_*.c) replays its regression
# inputs, then fuzzes for FUZZ_SECONDS (20) from its seeds and the corpus `make fuzz`
# grew; a crash is a FAIL naming the saved input. FUZZ_JOBS (default: the number of
# CPUs) targets run at once, each on a CPU of its own for its FUZZ_SECONDS. Needs no root; SKIP when clang's
# libFuzzer runtime is missing. Built by `make test` (make fuzz-build). docs/testing.md,
# "Fuzzing".
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/fuzz/fuzz.sh
. "$IT_ROOT/tests/fuzz/fuzz.sh"

mapfile -t names < <(fuzz_names)
it_begin "${names[@]}"
((${#names[@]})) || fail_all "no tests/fuzz/fuzz_*.c"
fuzz_have_runtime || skip_all "no libFuzzer runtime for $FUZZ_CLANG (make deps installs libclang-rt-dev)"

secs=${FUZZ_SECONDS:-20}
# one target a CPU at a time: each still fuzzes $secs s on a core of its own
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}

# fuzz_one NAME: its regression inputs, then $secs s of fuzzing; prints "note TEXT",
# then "pass" or "fail WHY" (run in the background, reported in name order below)
fuzz_one() {
	local name=$1
	if [[ ! -x $FUZZ_DIR/fuzz_$name ]]; then
		echo "fail $FUZZ_DIR/fuzz_$name not built (make fuzz-build; is $name in FUZZ_TARGETS?)"
	elif ! fuzz_regress "$name"; then
		echo "fail $FZ_WHY"
	elif fuzz_run "$name" "$secs" "$IT_TMP/corpus-$name"; then
		echo "note $name: $FZ_EXECS executions in $secs s ($FZ_RATE exec/s), $FZ_NEW new inputs"
		echo pass
	else
		echo "note $name: $FZ_EXECS executions before the crash; libFuzzer's output: $FZ_LOG"
		echo "fail crash, input saved at ${FZ_ARTIFACT:-?}: $FZ_WHY"
	fi
}

running=0 fpids=()
for name in "${names[@]}"; do
	fuzz_one "$name" >"$IT_TMP/result.$name" 2>&1 &
	_it_register pids "$!"
	fpids+=("$!")
	if ((++running >= jobs)); then
		wait -n
		running=$((running - 1))
	fi
done
wait "${fpids[@]}"
for p in "${fpids[@]}"; do _it_unregister pids "$p"; done
for name in "${names[@]}"; do
	while read -r verdict why; do
		case $verdict in
		note) note "$why" ;;
		pass) pass "$name" ;;
		fail) fail "$name" "$why" ;;
		*) note "$name: $verdict $why" ;;
		esac
	done <"$IT_TMP/result.$name"
done
it_end
