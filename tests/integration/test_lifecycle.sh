#!/usr/bin/env bash
# Daemon lifecycle and command line errors.
# Oracles: /proc/PID/fdinfo (the BPF links and programs iotracer holds), bpftool (which
# links and programs exist system-wide), exit statuses,
# stderr, the JSON file.
#   term_exit     SIGTERM -> exit status 0 within 20 s
#   term_summary  the JSON file's last line is the final summary ("final": true)
#   term_links    after it exited, none of its BPF links or programs remain
#   kill_links    SIGKILL -> its links and programs are gone within 2 s (fd-owned links)
#   duration      -D 2s: exits 0 by itself, final summary with elapsed_ns of about 2 s
#   unbound_dev   -d on a loop device no file is bound to (losetup -f): runs (exit 0) and
#                 says so in one warning naming it (it started silently; issue 37)
#   cli_badlat    --min-latency 10xs: exit 2, one stderr line naming --min-latency
#   cli_baddev    --dev nosuchdev: exit 2, one stderr line naming the option or the value
#   cli_nopid     -p PID of a process that exited (a reaped child): exit 2, one stderr
#                 line naming --pid and the pid
#   cli_bareunit  -m 10 (a number without a unit): exit 2, one line naming the units
#   cli_badopt    an unknown option: exit 2
#   cli_help      --help: exit 0, the usage text lists --min-latency
#   nonroot       as uid 65534 (setpriv): exit 1 and a message that mentions root
# shellcheck disable=SC2016,SC2119 # jq programs in single quotes; optional args
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin term_exit term_summary term_links kill_links duration unbound_dev cli_badlat cli_baddev \
	cli_nopid cli_bareunit cli_badopt cli_help nonroot
require_root
require_cmd jq timeout
require_iotracer
HAVE_BPFTOOL=1
command -v bpftool >/dev/null 2>&1 || HAVE_BPFTOOL=0

# is_final LINE: LINE is the final summary object
# shellcheck disable=SC2317 # called through check
is_final() { jq -e 'select(.type == "summary" and .final == true)' <<<"$1" >/dev/null 2>&1; }

# ------------------------------------------------------------------ SIGTERM
if ! start_tracer; then
	fail term_exit "$TRACER_WHY"
	fail term_summary "$TRACER_WHY"
	fail term_links "$TRACER_WHY"
else
	ids=$(bpf_fd_ids "$TRACER_PID")
	note "iotracer $TRACER_PID owns $(grep -c '^l' <<<"$ids") links and $(grep -c '^p' <<<"$ids") programs"
	t0=$(date +%s%N)
	if stop_tracer TERM; then pass term_exit; else fail term_exit "$TRACER_WHY"; fi
	note "SIGTERM to exit: $((($(date +%s%N) - t0) / 1000000)) ms (polled every 0.1 s)"
	last=$(tail -n 1 "$TRACER_JSON")
	check term_summary "last JSON line is not a final summary: $(head -c 200 <<<"$last")" \
		is_final "$last"
	if ((!HAVE_BPFTOOL)); then
		skip term_links "bpftool not installed"
	elif [[ -z $ids ]]; then
		fail term_links "/proc/PID/fdinfo showed no BPF link or program held by iotracer pid $TRACER_PID while it ran"
	else
		left=$(bpf_ids_alive "$ids")
		check term_links "still present after exit: $left" test -z "$left"
	fi
fi

# ------------------------------------------------------------------ SIGKILL
if ((!HAVE_BPFTOOL)); then
	skip kill_links "bpftool not installed"
elif ! start_tracer; then
	fail kill_links "$TRACER_WHY"
else
	ids=$(bpf_fd_ids "$TRACER_PID")
	kill -KILL "$TRACER_PID"
	wait "$TRACER_PID" 2>/dev/null
	_it_unregister pids "$TRACER_PID"
	left=x
	for ((i = 0; i < 20; i++)); do
		left=$(bpf_ids_alive "$ids")
		[[ -z $left ]] && break
		sleep 0.1
	done
	if [[ -z $ids ]]; then
		fail kill_links "/proc/PID/fdinfo showed no BPF link or program held by iotracer pid $TRACER_PID"
	else
		check kill_links "still present 2 s after SIGKILL: $left" test -z "$left"
	fi
fi

# ------------------------------------------------------------------ --duration
js=$IT_TMP/duration.json
t0=$(date +%s%N)
timeout -k 5 30 "$IOTRACER" -D 2s -q -j "$js" >"$IT_TMP/duration.out" 2>"$IT_TMP/duration.err" </dev/null
rc=$?
t1=$(date +%s%N)
el=$(jq -r 'select(.type == "summary" and .final == true) | .elapsed_ns' "$js" 2>/dev/null | tail -n 1)
note "-D 2s: exit $rc after $(((t1 - t0) / 1000000)) ms, final elapsed_ns ${el:-none}"
check duration "-D 2s: exit status $rc (124 = did not stop by itself), final summary elapsed_ns ${el:-none} (want 1.9e9..4e9)" \
	awk -v rc="$rc" -v e="${el:-0}" 'BEGIN { exit !(rc == 0 && e >= 1.9e9 && e <= 4e9) }'

# ------------------------------------------------------------------ an unbound loop device
# losetup -f: the first loop device no file is bound to (size 0). Another test may bind it
# meanwhile: then its size is no longer 0 after the run, and the run says nothing of it.
unbound_run() {
	UB=$(losetup -f 2>/dev/null) && UB=$(devname "$UB") || return 1
	[[ $(cat "/sys/block/$UB/size" 2>/dev/null) == 0 ]] || return 1
	timeout -k 5 30 "$IOTRACER" -d "$UB" -D 1s -q --no-live >/dev/null 2>"$IT_TMP/unbound.err" </dev/null
	UB_RC=$?
	[[ $(cat "/sys/block/$UB/size" 2>/dev/null) == 0 ]]
}
if unbound_run || unbound_run; then
	w=$(grep -c -- "warning: --dev: $UB holds nothing.*no file is bound" "$IT_TMP/unbound.err")
	note "-d $UB (unbound): exit $UB_RC, stderr: $(head -c 300 "$IT_TMP/unbound.err" | tr '\n' '|')"
	check unbound_dev "-d $UB (no file bound): exit $UB_RC, warnings naming it: $w (want 0 and 1)" \
		test "$UB_RC" = 0 -a "$w" = 1
else
	skip unbound_dev "no loop device stayed unbound for the run (losetup -f: ${UB:-none})"
fi

# ------------------------------------------------------------------ command line errors
# cli NAME EXPECTED_RC GREP_ERE ARGS...: run iotracer ARGS, expect the exit status and
# exactly one stderr line matching GREP_ERE (GREP_ERE "" = no stderr requirement).
cli() {
	local name=$1 want=$2 re=$3 rc lines
	shift 3
	timeout -k 5 20 "$IOTRACER" "$@" >"$IT_TMP/$name.out" 2>"$IT_TMP/$name.err" </dev/null
	rc=$?
	lines=$(grep -c '' "$IT_TMP/$name.err")
	note "iotracer $*: exit $rc, stderr: $(head -c 200 "$IT_TMP/$name.err" | tr '\n' '|')"
	if ((rc != want)); then
		fail "$name" "iotracer $* exited $rc, want $want"
	elif [[ -n $re ]] && ! { ((lines == 1)) && grep -qE -- "$re" "$IT_TMP/$name.err"; }; then
		fail "$name" "iotracer $*: want one stderr line matching '$re', got $lines: $(head -c 200 "$IT_TMP/$name.err" | tr '\n' '|')"
	else
		pass "$name"
	fi
}
cli cli_badlat 2 '--min-latency' --min-latency 10xs -D 1s
cli cli_baddev 2 '--dev|nosuchdev' --dev nosuchdev -D 1s
true &
gone=$!
wait "$gone"
cli cli_nopid 2 "--pid.*$gone" -p "$gone" -D 1s
cli cli_bareunit 2 "--min-latency: bad value '10' \\(expected a number with a unit: ns, us, ms, s, m or h, e\\.g\\. 10ms or 10s\\)$" -m 10 -D 1s
cli cli_badopt 2 '' --no-such-option -D 1s
timeout -k 5 20 "$IOTRACER" --help >"$IT_TMP/help.out" 2>&1 </dev/null
rc=$?
check cli_help "--help: exit $rc, or the usage text does not list --min-latency" \
	test "$rc" -eq 0 -a "$(grep -c -- '--min-latency' "$IT_TMP/help.out")" -gt 0

# ------------------------------------------------------------------ not root
if ! command -v setpriv >/dev/null 2>&1; then
	skip nonroot "setpriv not installed"
else
	# a copy nobody can execute (the repo or the temp dir may not be reachable)
	pub=$(mktemp -d "${TMPDIR:-/tmp}/iotracer-it-pub.XXXXXX")
	chmod 755 "$pub"
	cp "$IOTRACER" "$pub/iotracer"
	chmod 755 "$pub/iotracer"
	(cd / && timeout -k 5 20 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$pub/iotracer" -D 1s >"$IT_TMP/nonroot.out" 2>"$IT_TMP/nonroot.err" </dev/null)
	rc=$?
	rm -rf "$pub"
	msg=$(head -c 300 "$IT_TMP/nonroot.err" | tr '\n' '|')
	note "as uid 65534: exit $rc, stderr: $msg"
	check nonroot "as uid 65534: exit $rc (want 1), stderr: $msg" \
		test "$rc" -eq 1 -a "$(grep -ci root "$IT_TMP/nonroot.err")" -gt 0
fi

it_end
