#!/usr/bin/env bash
# iotracer test runner.
#
#   tests/run.sh --unit BIN...             run unit test binaries (timeout 60 s each)
#   tests/run.sh --integration [SCRIPT...] run tests/integration/test_*.sh (or the given
#                                          scripts; a bare name like `psync` works too)
#   tests/run.sh --all BIN...              unit binaries, then every integration script
#
# Every test program prints `PASS <name>`, `FAIL <name>: <why>` or `SKIP <name>: <why>`
# lines; everything else it prints is passed through. The runner counts those lines
# over all programs. A program that exits non-zero without printing a FAIL line
# (crash, sanitizer abort, timeout) counts as one failure named after the program; so
# does a program that prints no PASS/FAIL/SKIP line at all.
# A lab boot retried for a fault outside iotracer prints a `# retried: NAME: REASON`
# note (tests/lab/harness.sh); the runner counts them, and more than one in a run is
# itself a failure (FAIL run.sh.retries).
# Before the totals, `# slowest: NAME N s, ...` (the five longest programs) and `# took N s`.
# The last line is `N passed, N failed, N skipped, N retried`; exit status 1 if anything
# failed.
#
# Environment: UNIT_TIMEOUT (default 60), IT_TIMEOUT (per integration script, 300;
# 900 with LAB_FULL=1: test_lab_modes then boots 5.10 and the arm64 guest too).
set -u

here=$(cd "$(dirname "$0")" && pwd)
UNIT_TIMEOUT=${UNIT_TIMEOUT:-60}
if [[ ${LAB_FULL:-0} == 1 ]]; then
	IT_TIMEOUT=${IT_TIMEOUT:-900}
else
	IT_TIMEOUT=${IT_TIMEOUT:-300}
fi
npass=0
nfail=0
nskip=0
nretried=0
times=()
interrupted=0
cur_pid=""
trap on_signal INT TERM

usage() {
	echo "usage: $0 --unit BIN... | --integration [SCRIPT...] | --all BIN..." >&2
	exit 2
}

# run_prog NAME TIMEOUT CMD...: run one test program, echo its output, count its lines.
# timeout(1) puts the program in its own process group; on expiry, and when we are
# interrupted (we forward SIGTERM to timeout), the whole group gets SIGTERM, so a
# script's foreground command dies too and its cleanup trap runs at once. SIGKILL
# follows 30 s later if anything is still there.
run_prog() {
	local name=$1 tmo=$2 out rc p f s tpid tailpid t0=$SECONDS
	shift 2
	out=$(mktemp "${TMPDIR:-/tmp}/iotracer-run.XXXXXX") || {
		echo "FAIL $name: mktemp failed"
		nfail=$((nfail + 1))
		return
	}
	echo "=== $name"
	timeout -k 30 "$tmo" "$@" >"$out" 2>&1 </dev/null &
	tpid=$!
	cur_pid=$tpid
	# echo the output as it comes; tail ignores SIGINT so a Ctrl-C loses nothing
	(
		trap '' INT
		exec tail -n +1 -s 0.2 -f --pid="$tpid" "$out"
	) &
	tailpid=$!
	while :; do
		wait "$tpid"
		rc=$?
		# wait returns > 128 when a trapped signal interrupted it: wait again
		kill -0 "$tpid" 2>/dev/null || break
	done
	cur_pid=""
	wait "$tailpid"
	p=$(grep -cE '^PASS[[:space:]]' "$out")
	f=$(grep -cE '^FAIL[[:space:]]' "$out")
	s=$(grep -cE '^SKIP[[:space:]]' "$out")
	nretried=$((nretried + $(grep -cE '^# retried: ' "$out")))
	rm -f "$out"
	echo "# $name took $((SECONDS - t0)) s"
	times+=("$((SECONDS - t0)) $name")
	npass=$((npass + p))
	nfail=$((nfail + f))
	nskip=$((nskip + s))
	if ((rc != 0 && f == 0)); then
		case $rc in
		124) echo "FAIL $name: timed out after ${tmo}s" ;;
		137) echo "FAIL $name: killed (SIGKILL) after timing out" ;;
		126 | 127) echo "FAIL $name: cannot execute (exit status $rc)" ;;
		*) echo "FAIL $name: exited with status $rc without reporting a failure" ;;
		esac
		nfail=$((nfail + 1))
	elif ((p + f + s == 0)); then
		echo "FAIL $name: printed no PASS/FAIL/SKIP line (exit status $rc)"
		nfail=$((nfail + 1))
	fi
}

on_signal() {
	interrupted=1
	[[ -n $cur_pid ]] && kill -TERM "$cur_pid" 2>/dev/null
}

run_unit() {
	local b
	for b in "$@"; do
		((interrupted)) && break
		if [[ ! -x $b ]]; then
			echo "FAIL $(basename "$b"): unit test binary $b missing or not executable"
			nfail=$((nfail + 1))
			continue
		fi
		run_prog "$(basename "$b")" "$UNIT_TIMEOUT" "$b"
	done
}

run_integration() {
	local scripts=() s
	if (($# == 0)); then
		for s in "$here"/integration/test_*.sh; do
			[[ -e $s ]] && scripts+=("$s")
		done
	else
		for s in "$@"; do
			if [[ -f $s ]]; then
				scripts+=("$s")
			elif [[ -f $here/integration/test_$s.sh ]]; then
				scripts+=("$here/integration/test_$s.sh")
			elif [[ -f $here/integration/$s ]]; then
				scripts+=("$here/integration/$s")
			else
				echo "FAIL $s: no such integration test"
				nfail=$((nfail + 1))
			fi
		done
	fi
	for s in "${scripts[@]}"; do
		((interrupted)) && break
		run_prog "$(basename "$s" .sh)" "$IT_TIMEOUT" bash "$s"
	done
}

(($# >= 1)) || usage
mode=$1
shift
start=$(date +%s)
case $mode in
--unit) run_unit "$@" ;;
--integration) run_integration "$@" ;;
--all)
	run_unit "$@"
	run_integration
	;;
-h | --help) usage ;;
*) usage ;;
esac
if ((interrupted)); then
	echo "FAIL run.sh: interrupted, remaining tests not run"
	nfail=$((nfail + 1))
fi
if ((nretried > 1)); then
	echo "FAIL run.sh.retries: $nretried lab boots retried for faults outside iotracer (at most 1 per run; see the '# retried:' lines)"
	nfail=$((nfail + 1))
fi
((${#times[@]})) && printf '%s\n' "${times[@]}" | sort -rn | head -n 5 |
	awk '{ s = s (NR > 1 ? ", " : "") $2 " " $1 " s" } END { print "# slowest: " s }'
echo "# took $(($(date +%s) - start)) s"
echo "$npass passed, $nfail failed, $nskip skipped, $nretried retried"
((nfail == 0))
