#!/usr/bin/env bash
# The lab's decision to boot once more (tests/lab/harness.sh boot_fault, docs/lab.md
# "Faults outside iotracer") on the synthetic console logs of tests/lab/consoles/: each
# NAME.log + NAME.result is a failed boot's console.log and result, NAME.want says
# whether it must be retried (and the words the reason must start with) or must fail.
# The oracle is the hand-written .want, not the code under test. No root, no QEMU.
#   verdicts   every log's verdict (retry or fail) and reason as its .want says
#   reasons    every failed boot's FAIL line names the boot failure (boot_failure)
#   once       retry_boot retries a boot once and counts it; a second retry in a
#              run FAILs the run (retries_verdict)
set -u
lab=$(cd "$(dirname "$0")/../lab" && pwd)
# harness.sh's functions first; lib.sh's protocol helpers (pass/fail/note) override its own
# shellcheck source=tests/lab/harness.sh
. "$lab/harness.sh"
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin verdicts reasons once

n=0
bad=""
nobad=""
for want in "$lab"/consoles/*.want; do
	c=$(basename "$want" .want)
	d=$IT_TMP/$c
	mkdir -p "$d"
	cp "$lab/consoles/$c.log" "$d/console.log"
	cp "$lab/consoles/$c.result" "$d/result"
	read -r verdict words <"$want"
	n=$((n + 1))
	if why=$(boot_fault "$d"); then got=retry; else got=fail; fi
	vnote "$c: $got: $why"
	if [[ $got != "$verdict" || ($got == retry && $why != "$words"*) ]]; then
		bad="$bad $c: want $verdict${words:+ ($words...)}, got $got${why:+ ($why)};"
	fi
	# the FAIL line of a boot names what went wrong, never just "see the console"
	r=$(boot_failure "$d")
	case $c in
	timeout) [[ $r == "guest timed out"* ]] || nobad="$nobad $c: $r;" ;;
	qemu_term) [[ $r == "QEMU killed by SIGTERM"* ]] || nobad="$nobad $c: $r;" ;;
	null_deref | softlockup_bpf | softlockup_loop) [[ $r == *"guest BUG: "* ]] || nobad="$nobad $c: $r;" ;;
	int3_bpf) [[ $r == *"guest Oops: int3"* ]] || nobad="$nobad $c: $r;" ;;
	*) [[ $got == fail || $r == "$why" ]] || nobad="$nobad $c: $r;" ;;
	esac
done
note "$n synthetic consoles"
check verdicts "${bad# }" test -z "$bad" -a "$n" -ge 12
check reasons "${nobad# }" test -z "$nobad"

# once: the first attempt of a retryable boot is retried, its second attempt is not,
# and two retries in one run FAIL it (retries_verdict's line, in a subshell)
d=$IT_TMP/qemu_segv
# shellcheck disable=SC2016 # expanded by the inner bash, which has harness.sh's own helpers
out=$(bash -c '. "$1/harness.sh"
	retry_boot lab_x "$2" 1 && echo "first:yes"
	retry_boot lab_x "$2" 2 || echo "second:no"
	retries_verdict lab_x_retries
	retry_boot lab_y "$2" 1 && retries_verdict lab_y_retries
	echo "failed:$failed"' _ "$lab" "$d" 2>&1)
note "once: $(tr '\n' '|' <<<"$out")"
want=$'# retried: lab_x: QEMU killed by SIGSEGV before the guest was ready (qemu rc 139)\nfirst:yes\nsecond:no\n# boots retried: 1\n# retried: lab_y: QEMU killed by SIGSEGV before the guest was ready (qemu rc 139)\nFAIL lab_y_retries: 2 boots retried for faults outside iotracer (at most 1 per run): the lab or this machine is not healthy\n# boots retried: 2\nfailed:1'
check once "got: $out" test "$out" = "$want"
it_end
