#!/usr/bin/env bash
# test_fuzz.sh: every libFuzzer target (tests/fuzz/fuzz_*.c) replays its regression
# inputs, then fuzzes for FUZZ_SECONDS (20) from its seeds and the corpus `make fuzz`
# grew; a crash is a FAIL naming the saved input. Needs no root; SKIP when clang's
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
for name in "${names[@]}"; do
	if [[ ! -x $FUZZ_DIR/fuzz_$name ]]; then
		fail "$name" "$FUZZ_DIR/fuzz_$name not built (make fuzz-build; is $name in FUZZ_TARGETS?)"
		continue
	fi
	if ! fuzz_regress "$name"; then
		fail "$name" "$FZ_WHY"
		continue
	fi
	if fuzz_run "$name" "$secs" "$IT_TMP/corpus-$name"; then
		note "$name: $FZ_EXECS executions in $secs s ($FZ_RATE exec/s), $FZ_NEW new inputs"
		pass "$name"
	else
		note "$name: $FZ_EXECS executions before the crash; libFuzzer's output: $FZ_LOG"
		fail "$name" "crash, input saved at ${FZ_ARTIFACT:-?}: $FZ_WHY"
	fi
done
it_end
